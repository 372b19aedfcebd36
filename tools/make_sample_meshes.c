/* make_sample_meshes.c: generates the bundled voxel characters data/quadruped.mesh (the demo and
 * test mesh), data/critter.mesh (a larger benchmark creature), data/octopod.mesh (eight legs,
 * each leg its own region) and data/octopus.mesh.gz (the paper's octopus size, one region per
 * tentacle) as MEDIT .mesh files, the octopus gzip-compressed.
 *
 *   make_sample_meshes OUTDIR      (writes all four into OUTDIR)
 *   make_sample_meshes OUTDIR RES  (only the octopus, RES voxels per mantle radius)
 *
 * Shapes are occupancy grids turned into tets by mlc_mesh_from_voxels (6 Kuhn tets per voxel),
 * so the output is deterministic and the same on every machine. Frame: y up, +x forward (the
 * head is at +x), feet flat on y = 0, centred at x = z = 0. Each mesh must be one connected
 * component; mlc_mesh_from_voxels refuses anything else.
 *
 * The critter is built from ellipsoids and boxes; before meshing, pinched edges and corners
 * (voxels meeting only along an edge or at a corner, and the matching notches) are filled, so
 * the boundary surface is a closed manifold (a pinch would be non-manifold in Blender and would
 * concentrate strain in the simulation).
 *
 * A character may label its voxels (grid.lab): every tet of a voxel gets the voxel's label as
 * its MEDIT reference, the body regions of regions.h. Unlabelled characters write reference 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mesh.h"
#include "output.h"

/* ---- occupancy grid ------------------------------------------------------------------------ */

typedef struct grid {
    int nx, ny, nz;
    int mirror_z;       /* shape symmetric under k -> nz-1-k: repairs are mirrored too */
    unsigned char *occ; /* occ[i + nx*(j + ny*k)] */
    unsigned char *lab; /* per-voxel region label (same layout), or NULL: all 0 */
    int added;          /* voxels make_manifold filled */
} grid;

static int grid_init(grid *g, int nx, int ny, int nz) {
    g->nx = nx, g->ny = ny, g->nz = nz;
    g->mirror_z = 0;
    g->lab = NULL;
    g->added = 0;
    g->occ = mlc_calloc((size_t)nx * ny * nz, 1);
    return g->occ != NULL;
}

static int in_grid(const grid *g, int i, int j, int k) {
    return i >= 0 && j >= 0 && k >= 0 && i < g->nx && j < g->ny && k < g->nz;
}

static unsigned char *cell(grid *g, int i, int j, int k) {
    return g->occ + i + (size_t)g->nx * (j + (size_t)g->ny * k);
}

static int filled(grid *g, int i, int j, int k) {
    return in_grid(g, i, j, k) && *cell(g, i, j, k);
}

/* Fill the half-open voxel box [i0,i1) × [j0,j1) × [k0,k1) (clipped to the grid). */
static void fill_box(grid *g, int i0, int i1, int j0, int j1, int k0, int k1) {
    for (int k = k0; k < k1; k++)
        for (int j = j0; j < j1; j++)
            for (int i = i0; i < i1; i++)
                if (in_grid(g, i, j, k)) *cell(g, i, j, k) = 1;
}

/* Fill every voxel whose centre lies in the ellipsoid with centre c and semi-axes r (voxel
 * units). */
static void fill_ellipsoid(grid *g, const double c[3], const double r[3]) {
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j < g->ny; j++)
            for (int i = 0; i < g->nx; i++) {
                double x = (i + 0.5 - c[0]) / r[0], y = (j + 0.5 - c[1]) / r[1],
                       z = (k + 0.5 - c[2]) / r[2];
                if (x * x + y * y + z * z <= 1.0) *cell(g, i, j, k) = 1;
            }
}

/* Label the face-connected pieces of the window corners whose bit in `set` is 1 (corner b =
 * offset (b&1, b>>1&1, b>>2&1); corners differing in one bit share a face). comp[b] = piece or
 * -1. Returns the number of pieces. */
static int window_pieces(int set, int comp[8]) {
    int n = 0;
    for (int b = 0; b < 8; b++)
        comp[b] = -1;
    for (int b = 0; b < 8; b++) {
        if (!(set >> b & 1) || comp[b] >= 0) continue;
        int stack[8], top = 0;
        stack[top++] = b;
        comp[b] = n;
        while (top) {
            int c = stack[--top];
            for (int a = 0; a < 3; a++) {
                int o = c ^ (1 << a);
                if ((set >> o & 1) && comp[o] < 0) comp[o] = n, stack[top++] = o;
            }
        }
        n++;
    }
    return n;
}

/* Make the voxel surface a manifold. The boundary around a grid vertex is a single disk exactly
 * when, in the 2×2×2 window of voxels around it, the filled voxels are face-connected and so
 * are the empty ones. Where the filled ones are split (voxels meeting only at an edge or a
 * corner), fill the empty face-neighbour of piece 0 that is lowest (smallest y, then z, then x,
 * so bridges go to the belly and feet); where the empty ones are split, fill the smaller empty
 * piece (a notch). Cells outside the grid count as empty and are never filled. With
 * g->mirror_z the mirror image of every filled cell is filled too. Repeats until no
 * window changes; only adds voxels, so it terminates. Returns the number of voxels added. */
static int make_manifold(grid *g) {
    int added = 0, changed = 1;
    while (changed) {
        changed = 0;
        for (int k = -1; k < g->nz; k++)
            for (int j = -1; j < g->ny; j++)
                for (int i = -1; i < g->nx; i++) {
                    int occ = 0, inside = 0;
                    for (int b = 0; b < 8; b++) {
                        int x = i + (b & 1), y = j + (b >> 1 & 1), z = k + (b >> 2 & 1);
                        if (in_grid(g, x, y, z)) inside |= 1 << b;
                        if (filled(g, x, y, z)) occ |= 1 << b;
                    }
                    if (!occ) continue;
                    int comp[8], fill = 0; /* bit set of corners to fill */
                    if (window_pieces(occ, comp) >= 2) {
                        int best = -1, bkey = 99;
                        for (int b = 0; b < 8; b++) {
                            if (comp[b] != 0) continue;
                            for (int a = 0; a < 3; a++) {
                                int o = b ^ (1 << a);
                                if ((occ >> o & 1) || !(inside >> o & 1)) continue;
                                int key = ((o >> 1 & 1) << 2) | ((o >> 2 & 1) << 1) | (o & 1);
                                if (key < bkey) bkey = key, best = o;
                            }
                        }
                        if (best >= 0) fill = 1 << best;
                    } else if (window_pieces(~occ & 0xff, comp) >= 2) {
                        int size[8] = {0}, small = 0;
                        for (int b = 0; b < 8; b++)
                            if (comp[b] >= 0) size[comp[b]]++;
                        for (int p = 1; p < 8; p++)
                            if (size[p] && size[p] < size[small]) small = p;
                        for (int b = 0; b < 8; b++)
                            if (comp[b] == small) fill |= 1 << b;
                        if (fill & ~inside) fill = 0; /* would need a cell outside the grid */
                    }
                    for (int b = 0; b < 8; b++) {
                        if (!(fill >> b & 1)) continue;
                        int x = i + (b & 1), y = j + (b >> 1 & 1), z = k + (b >> 2 & 1);
                        *cell(g, x, y, z) = 1;
                        added++;
                        changed = 1;
                        /* Keep a left-right symmetric creature symmetric, so it can walk
                         * straight: repair the mirror image of the window as well. */
                        if (g->mirror_z && !*cell(g, x, y, g->nz - 1 - z)) {
                            *cell(g, x, y, g->nz - 1 - z) = 1;
                            added++;
                        }
                    }
                }
    }
    g->added += added;
    return added;
}

/* ---- the characters ------------------------------------------------------------------------ */

/* Quadruped, 10 × 8 × 4 voxels: a 8×3×4 body on four 2×3×1 legs (a third of the height, flat
 * feet on the ground) and a 3×3×2 head raised in front. 136 voxels = 816 tets. */
static int build_quadruped(grid *g) {
    if (!grid_init(g, 10, 8, 4)) return 0;
    fill_box(g, 0, 8, 3, 6, 0, 4); /* body */
    fill_box(g, 0, 2, 0, 3, 0, 1); /* rear legs */
    fill_box(g, 0, 2, 0, 3, 3, 4);
    fill_box(g, 6, 8, 0, 3, 0, 1); /* front legs */
    fill_box(g, 6, 8, 0, 3, 3, 4);
    fill_box(g, 7, 10, 5, 8, 1, 3); /* head, overlapping the body's front top edge */
    return 1;
}

/* Six-legged lizard, 64 × 16 × 30 voxels: an ellipsoidal body, a head at +x, a tapering tail
 * at -x, and three pairs of legs, each a sideways upper leg, a vertical lower leg and a flat
 * foot. Legs lift the body 5 voxels off the ground (about a third of the height). */
static int build_critter(grid *g) {
    if (!grid_init(g, 64, 16, 30)) return 0;
    g->mirror_z = 1; /* everything below is symmetric about the midplane z = 15 */
    const double zc = 15.0;
    double body_c[3] = {36, 9.5, zc}, body_r[3] = {15, 4.5, 6.5};
    fill_ellipsoid(g, body_c, body_r);
    double head_c[3] = {54, 11, zc}, head_r[3] = {6, 3.5, 4.5};
    fill_ellipsoid(g, head_c, head_r);
    /* Tail: circular cross-sections shrinking linearly from the body to the tip. */
    for (int i = 0; i < 26; i++) {
        double r = 1.2 + 2.8 * i / 25.0, cy = 8.5 + 0.06 * (25 - i);
        for (int k = 0; k < g->nz; k++)
            for (int j = 0; j < g->ny; j++) {
                double y = j + 0.5 - cy, z = k + 0.5 - zc;
                if (y * y + z * z <= r * r) *cell(g, i, j, k) = 1;
            }
    }
    static const int leg_x[3] = {26, 36, 46};
    for (int l = 0; l < 3; l++) {
        int x0 = leg_x[l] - 1, x1 = leg_x[l] + 2; /* 3 voxels wide */
        for (int side = -1; side <= 1; side += 2) {
            /* Voxel z ranges mirrored about the midplane zc = 15. */
            int zin = side < 0 ? 6 : 19, zout = side < 0 ? 11 : 24; /* upper leg: 5 out */
            int fin = side < 0 ? 4 : 23, fout = side < 0 ? 7 : 26;  /* lower leg: 3 wide */
            fill_box(g, x0, x1, 6, 9, zin, zout);                   /* upper leg */
            fill_box(g, x0, x1, 0, 9, fin, fout);                   /* lower leg */
            fill_box(g, x0 - 1, x1 + 1, 0, 1, fin - (side < 0), fout + (side > 0)); /* foot */
        }
    }
    return 1;
}

/* Octopod, 11 × 5 × 8 voxels: an 11×2×4 body held 3 voxels up by eight legs, four on each
 * side, each a 2-voxel-wide arm reaching 2 voxels out sideways and a 3-voxel column down to
 * the ground. Labels: body 0, legs 1..4 on the -z side and 5..8 on the +z side, from -x to +x.
 * 168 voxels = 1008 tets. */
static int build_octopod(grid *g) {
    if (!grid_init(g, 11, 5, 8)) return 0;
    if (!(g->lab = mlc_calloc((size_t)11 * 5 * 8, 1))) return 0;
    fill_box(g, 0, 11, 3, 5, 2, 6); /* body, label 0 */
    for (int side = 0; side < 2; side++)
        for (int l = 0; l < 4; l++) {
            int i0 = 3 * l, label = 1 + l + 4 * side;
            int a0 = side ? 6 : 0, col = side ? 7 : 0;   /* arm k range [a0, a0 + 2), column k */
            fill_box(g, i0, i0 + 2, 3, 4, a0, a0 + 2);   /* arm */
            fill_box(g, i0, i0 + 2, 0, 3, col, col + 1); /* column */
            for (int k = a0; k < a0 + 2; k++)
                for (int i = i0; i < i0 + 2; i++) {
                    g->lab[i + 11 * (3 + 5 * k)] = (unsigned char)label;
                    for (int j = 0; j < 3 && k == col; j++)
                        g->lab[i + 11 * (j + 5 * k)] = (unsigned char)label;
                }
        }
    return 1;
}

/* Octopus: a rounded mantle raised above the ground and eight tentacles radiating from under
 * it, tapering, curving down to the ground and lying on it over their outer half, so the body
 * rests on the tentacles. Lengths below are in units of the mantle's horizontal radius; `res`
 * is voxels per unit (9.85 gives the bundled mesh: 8,108 voxels, 48,648 tets, near the
 * paper's 48,514-tet octopus; smaller values give coarser copies of the same shape). */
enum { OCTO_ARMS = 8, OCTO_SAMPLES = 160 };
static const double octo_mantle_c = 1.5, octo_mantle_r[3] = {1.0, 1.15, 1.0};
/* Tentacle centreline over the distance rho from the axis: from rho0 (inside the mantle, centre
 * at height y0) down to the ground at rho1, then flat to the tip at rho2; the tube radius shrinks
 * linearly from r0 to r2 and the centre is one radius up wherever it lies on the ground. */
static const double arm_rho0 = 0.55, arm_y0 = 0.9, arm_rho1 = 1.9, arm_rho2 = 3.3;
static const double arm_r0 = 0.34, arm_r2 = 0.11;

typedef struct octo_arm {
    double c[OCTO_SAMPLES][3], r[OCTO_SAMPLES];
} octo_arm;

/* Tentacle a points along the angle (a + 0.5)·45° from +x towards +z, so the shape is symmetric
 * about both vertical midplanes and no tentacle lies on the walking axis. */
static void octo_arms(octo_arm arm[OCTO_ARMS]) {
    for (int a = 0; a < OCTO_ARMS; a++) {
        double th = (a + 0.5) * 0.78539816339744831, cx = cos(th), cz = sin(th);
        for (int i = 0; i < OCTO_SAMPLES; i++) {
            double rho = arm_rho0 + (arm_rho2 - arm_rho0) * i / (OCTO_SAMPLES - 1.0);
            double r = arm_r0 + (arm_r2 - arm_r0) * (rho - arm_rho0) / (arm_rho2 - arm_rho0);
            /* Parabolic descent, level where it meets the ground: no kink at rho1. */
            double q = rho < arm_rho1 ? (arm_rho1 - rho) / (arm_rho1 - arm_rho0) : 0.0;
            arm[a].c[i][0] = rho * cx;
            arm[a].c[i][1] = r + (arm_y0 - arm_r0) * q * q;
            arm[a].c[i][2] = rho * cz;
            arm[a].r[i] = r;
        }
    }
}

/* How far p lies outside tentacle a (negative inside): the tube is the union of balls along its
 * centreline, sampled finer than a tenth of the tip radius. */
static double octo_arm_depth(const octo_arm *arm, const double p[3]) {
    double best = 1e300;
    for (int i = 0; i < OCTO_SAMPLES; i++) {
        double dx = p[0] - arm->c[i][0], dy = p[1] - arm->c[i][1], dz = p[2] - arm->c[i][2];
        double d = sqrt(dx * dx + dy * dy + dz * dz) - arm->r[i];
        best = d < best ? d : best;
    }
    return best;
}

static int octo_in_mantle(const double p[3]) {
    double x = p[0] / octo_mantle_r[0], y = (p[1] - octo_mantle_c) / octo_mantle_r[1],
           z = p[2] / octo_mantle_r[2];
    return x * x + y * y + z * z <= 1.0;
}

/* Labels as the octopod's: 1..4 the tentacles on the -z side and 5..8 those on the +z side,
 * each side from -x to +x. Tentacles 4..7 point to -z with x rising; 0..3 to +z with x falling. */
static unsigned char octo_label(int a) {
    return (unsigned char)(a >= 4 ? a - 3 : 8 - a);
}

static int build_octopus(grid *g, double res) {
    double half = arm_rho2 + arm_r2 + 1.0 / res; /* a voxel of margin around the tips */
    int n = 2 * (int)ceil(half * res), ny = (int)ceil((octo_mantle_c + octo_mantle_r[1]) * res);
    if (!grid_init(g, n, ny, n)) return 0;
    if (!(g->lab = mlc_calloc((size_t)n * ny * n, 1))) return 0;
    g->mirror_z = 1;
    octo_arm *arm = mlc_malloc(OCTO_ARMS * sizeof *arm);
    if (!arm) return 0;
    octo_arms(arm);
    /* Voxel centre (i, j, k) in units, with the grid centred on the vertical axis. */
#define OCTO_CENTRE(p, i, j, k)                                                                    \
    double p[3] = {((i) + 0.5 - 0.5 * n) / res, ((j) + 0.5) / res, ((k) + 0.5 - 0.5 * n) / res }
    for (int k = 0; k < n; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < n; i++) {
                OCTO_CENTRE(p, i, j, k);
                int in = octo_in_mantle(p);
                for (int a = 0; a < OCTO_ARMS && !in; a++)
                    in = octo_arm_depth(&arm[a], p) <= 0;
                if (in) *cell(g, i, j, k) = 1;
            }
    make_manifold(g);
    /* Label after the repair, so the voxels it added belong to the nearest part too. */
    for (int k = 0; k < n; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < n; i++) {
                if (!*cell(g, i, j, k)) continue;
                OCTO_CENTRE(p, i, j, k);
                unsigned char label = 0;
                if (!octo_in_mantle(p)) {
                    double best = 1e300;
                    for (int a = 0; a < OCTO_ARMS; a++) {
                        double d = octo_arm_depth(&arm[a], p);
                        if (d < best) best = d, label = octo_label(a);
                    }
                }
                g->lab[cell(g, i, j, k) - g->occ] = label;
            }
#undef OCTO_CENTRE
    mlc_free(arm);
    return 1;
}

/* ---- output ---------------------------------------------------------------------------------- */

/* Write m (g meshed by mlc_mesh_from_voxels: 6 tets per filled voxel, voxels in scan order) as
 * MEDIT text to fp. */
static int print_medit(FILE *fp, const mlc_mesh *m, const grid *g, const char *what) {
    int *tl = mlc_calloc((size_t)m->nt + 1, sizeof(int)); /* each tet's voxel label */
    if (!tl) return 0;
    if (g->lab)
        for (size_t v = 0, e = 0; v < (size_t)g->nx * g->ny * g->nz; v++)
            for (int p = 0; g->occ[v] && p < 6 && e < (size_t)m->nt; p++)
                tl[e++] = g->lab[v];
    /* No version or date in the file: regenerating must reproduce it byte for byte. */
    fprintf(fp, "# %s: generated by tools/make_sample_meshes.c\n", what);
    fprintf(fp, "MeshVersionFormatted 2\nDimension 3\n\nVertices\n%d\n", m->nv);
    for (int i = 0; i < m->nv; i++)
        fprintf(fp, "%.10g %.10g %.10g 0\n", m->X[3 * i], m->X[3 * i + 1], m->X[3 * i + 2]);
    fprintf(fp, "\nTetrahedra\n%d\n", m->nt);
    for (int e = 0; e < m->nt; e++)
        fprintf(fp, "%d %d %d %d %d\n", m->T[4 * e] + 1, m->T[4 * e + 1] + 1, m->T[4 * e + 2] + 1,
                m->T[4 * e + 3] + 1, tl[e]);
    fputs("\nEnd\n", fp);
    mlc_free(tl);
    return 1;
}

/* Compress text[0..n) into one gzip member on fp. zlib's gzip header carries no name and a zero
 * time, so the same text gives the same bytes on every run. */
static int put_gzip(FILE *fp, const char *text, size_t n) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    unsigned char out[1 << 16];
    int zs = Z_OK;
    z.next_in = (unsigned char *)(size_t)text; /* deflate does not write its input */
    z.avail_in = (uInt)n;                      /* the meshes are far below 4 GiB */
    while (zs == Z_OK) {
        z.next_out = out;
        z.avail_out = sizeof out;
        zs = deflate(&z, Z_FINISH);
        fwrite(out, 1, sizeof out - z.avail_out, fp);
    }
    deflateEnd(&z);
    return zs == Z_STREAM_END;
}

/* Write m as MEDIT to path, gzip-compressed when the name ends in ".gz". */
static mlc_status write_medit(const char *path, const mlc_mesh *m, const grid *g, const char *what,
                              mlc_err *err) {
    size_t len = strlen(path);
    int gz = len > 3 && strcmp(path + len - 3, ".gz") == 0;
    char *text = NULL;
    size_t n = 0;
    FILE *mem = gz ? open_memstream(&text, &n) : NULL;
    if (gz && !mem) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    mlc_afile af;
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) {
        if (mem) fclose(mem);
        free(text);
        return s;
    }
    int ok = print_medit(gz ? mem : af.fp, m, g, what);
    if (gz) ok = fclose(mem) == 0 && ok && put_gzip(af.fp, text, n);
    free(text); /* open_memstream's buffer comes from malloc */
    if (!ok) {
        mlc_afile_abort(&af);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    }
    return mlc_afile_commit(&af, err);
}

/* Mesh grid g with voxel edge h, centred at x = z = 0 with the feet on y = 0, and write it as
 * DIR/NAME.mesh, or NAME.mesh.gz when gz. */
static int emit(const char *dir, const char *name, grid *g, double h, int gz) {
    make_manifold(g);
    double origin[3] = {-0.5 * h * g->nx, 0.0, -0.5 * h * g->nz};
    mlc_mesh m = {0};
    mlc_err err;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.mesh%s", dir, name, gz ? ".gz" : "");
    mlc_status s = mlc_mesh_from_voxels(g->nx, g->ny, g->nz, g->occ, h, origin, &m, &err);
    if (s == MLC_OK) s = write_medit(path, &m, g, name, &err);
    if (s != MLC_OK) {
        fprintf(stderr, "make_sample_meshes: %s: %s\n", name, err.msg);
        mlc_mesh_free(&m);
        return 0;
    }
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int i = 0; i < m.nv; i++)
        for (int k = 0; k < 3; k++) {
            double x = m.X[3 * i + k];
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    printf("%s: %d vertices, %d tets, %d boundary triangles, %d voxels (%d added for a manifold "
           "surface), "
           "extent %.3g x %.3g x %.3g\n",
           path, m.nv, m.nt, m.nf, m.nt / 6, g->added, hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
    mlc_mesh_free(&m);
    return 1;
}

/* Voxels per unit of the bundled octopus, and its unit in metres (the mantle's radius): the
 * mesh is about 1 m across. */
#define OCTO_RES 9.85
#define OCTO_UNIT 0.15

int main(int argc, char **argv) {
    /* With a resolution, only the octopus, at that many voxels per mantle radius (tests use a
     * coarse one). */
    double res = argc == 3 ? atof(argv[2]) : OCTO_RES;
    if ((argc != 2 && argc != 3) || !(res >= 2 && res <= 40)) {
        fprintf(stderr, "usage: make_sample_meshes OUTDIR [OCTOPUS_RESOLUTION (2..40)]\n");
        return 2;
    }
    mlc_err err;
    if (mlc_mkdir_p(argv[1], &err) != MLC_OK) {
        fprintf(stderr, "make_sample_meshes: %s\n", err.msg);
        return 1;
    }
    grid q = {0}, c = {0}, o = {0}, p = {0};
    int ok = argc == 3 || (build_quadruped(&q) && emit(argv[1], "quadruped", &q, 0.1, 0) &&
                           build_critter(&c) && emit(argv[1], "critter", &c, 0.025, 0) &&
                           build_octopod(&o) && emit(argv[1], "octopod", &o, 0.1, 0));
    ok = ok && build_octopus(&p, res) && emit(argv[1], "octopus", &p, OCTO_UNIT / res, 1);
    grid *all[4] = {&q, &c, &o, &p};
    for (int i = 0; i < 4; i++) {
        mlc_free(all[i]->occ);
        mlc_free(all[i]->lab);
    }
    return ok ? 0 : 1;
}
