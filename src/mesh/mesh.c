/* mesh.c: validation and repair shared by every reader, boundary extraction, the preparation
 * transform (docs/method.md §1), statistics and checksums. File formats live in mesh_read.c
 * (dispatch), mesh_tet.c, mesh_surface.c and mesh_lexer.c. */
#include "mesh.h"
#include "internal/mesh_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mlc_mesh_free(mlc_mesh *mesh) {
    if (!mesh) return;
    mlc_free(mesh->X);
    mlc_free(mesh->T);
    mlc_free(mesh->F);
    mlc_free(mesh->tet_tag);
    memset(mesh, 0, sizeof *mesh);
}

static double signed_volume6(const double *X, const int *t) {
    const double *a = X + 3 * t[0], *b = X + 3 * t[1], *c = X + 3 * t[2], *d = X + 3 * t[3];
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
        w[k] = d[k] - a[k];
    }
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
           u[2] * (v[0] * w[1] - v[1] * w[0]);
}

static void bbox(const mlc_mesh *m, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; k++)
        lo[k] = hi[k] = m->nv > 0 ? m->X[k] : 0.0;
    for (int i = 0; i < m->nv; i++)
        for (int k = 0; k < 3; k++) {
            double x = m->X[3 * i + k];
            if (x < lo[k]) lo[k] = x;
            if (x > hi[k]) hi[k] = x;
        }
}

/* ---- Boundary extraction ---------------------------------------------------------------- */
typedef struct face_rec {
    int key[3]; /* sorted vertex indices */
    int v[3];   /* outward winding */
    int tet;    /* the tet it bounds */
} face_rec;

static int face_cmp(const void *pa, const void *pb) {
    const face_rec *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
    return 0;
}

/* Faces of a positively oriented tet (a,b,c,d), each wound so its normal points out of it. */
static const int tet_faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

/* 0 when the face's winding v is a rotation of its sorted key, 1 when it is the reverse. */
static int face_parity(const face_rec *r) {
    for (int k = 0; k < 3; k++)
        if (r->v[k] == r->key[0]) return r->v[(k + 1) % 3] != r->key[1];
    return 0;
}

/* Sort the faces by key: a counting sort by the smallest vertex, then each bucket (a vertex's
 * faces, a few dozen) by insertion on the other two. Faces with distinct keys end in key
 * order, as a comparison sort puts them; where keys repeat (a face inside the mesh) only the
 * key is used. O(nfaces + nv) where qsort took a tenth of a second on a 60k-tet mesh. */
static mlc_status sort_faces(face_rec **fp, size_t nfaces, int nv) {
    face_rec *f = *fp, *out = mlc_malloc((nfaces ? nfaces : 1) * sizeof *out);
    size_t *start = mlc_calloc((size_t)nv + 1, sizeof *start);
    if (!out || !start) {
        mlc_free(out);
        mlc_free(start);
        return MLC_ENOMEM;
    }
    for (size_t i = 0; i < nfaces; i++)
        start[f[i].key[0] + 1]++;
    for (int a = 0; a < nv; a++)
        start[a + 1] += start[a];
    for (size_t i = 0; i < nfaces; i++)
        out[start[f[i].key[0]]++] = f[i];
    for (size_t lo = 0, a = 0; a < (size_t)nv; a++) { /* start[a] is now bucket a's end */
        size_t hi = start[a];
        for (size_t i = lo + 1; i < hi; i++) {
            face_rec r = out[i];
            size_t j = i;
            while (j > lo && face_cmp(out + j - 1, &r) > 0) {
                out[j] = out[j - 1];
                j--;
            }
            out[j] = r;
        }
        lo = hi;
    }
    mlc_free(start);
    mlc_free(f);
    *fp = out;
    return MLC_OK;
}

/* Most part sizes a hinge error lists. */
#define MLC_HINGE_PARTS_SHOWN 4

/* part[nt]: union-find of tets that share a triangle. The vertex check (count_components) has
 * made the mesh one body; when it is still several face-connected parts, they meet only at
 * vertices or edges, where they turn freely: the elasticity then has more than the six rigid
 * zero modes, and the vibration eigen-solve fails on them. Name a vertex where two parts meet
 * and the parts' sizes. */
static mlc_status check_hinges(const mlc_mesh *m, int *part, const char *source, mlc_err *err) {
    int nparts = 0;
    for (int e = 0; e < m->nt; e++)
        nparts += mlc_uf_find(part, e) == e;
    if (nparts <= 1) return MLC_OK;
    int *owner = mlc_malloc((size_t)m->nv * sizeof *owner); /* a part each vertex belongs to */
    int *size = mlc_calloc((size_t)m->nt, sizeof *size);    /* tets per part, by root */
    if (!owner || !size) {
        mlc_free(owner);
        mlc_free(size);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory checking the mesh's parts", source);
    }
    for (int i = 0; i < m->nv; i++)
        owner[i] = -1;
    int joint = -1;
    for (int e = 0; e < m->nt; e++) {
        int r = mlc_uf_find(part, e);
        size[r]++;
        for (int k = 0; k < 4; k++) {
            int v = m->T[4 * e + k];
            if (owner[v] < 0)
                owner[v] = r;
            else if (owner[v] != r && joint < 0)
                joint = v;
        }
    }
    /* The largest parts' sizes, largest first. */
    int shown[MLC_HINGE_PARTS_SHOWN] = {0};
    for (int e = 0; e < m->nt; e++) {
        if (size[e] == 0) continue;
        int s = size[e];
        for (int i = 0; i < MLC_HINGE_PARTS_SHOWN; i++)
            if (s > shown[i]) {
                int t = shown[i];
                shown[i] = s;
                s = t;
            }
    }
    char sizes[96] = "";
    size_t used = 0;
    for (int i = 0; i < MLC_HINGE_PARTS_SHOWN && i < nparts && used < sizeof sizes; i++)
        used +=
            (size_t)snprintf(sizes + used, sizeof sizes - used, "%s%d", i ? ", " : "", shown[i]);
    if (nparts > MLC_HINGE_PARTS_SHOWN && used < sizeof sizes)
        snprintf(sizes + used, sizeof sizes - used, ", ...");
    const double *x = m->X + 3 * (joint >= 0 ? joint : 0);
    mlc_free(owner);
    mlc_free(size);
    return mlc_errf(err, MLC_EINVAL,
                    "%s: the mesh is %d parts (%s tets) that share no triangle; they meet only at "
                    "vertices or edges (one at (%.6g, %.6g, %.6g) in the file's units), where "
                    "they would turn freely, and the body has no stiffness there; join the parts "
                    "by faces (thicken the joint, or re-mesh the surface, e.g. with tetgen)",
                    source, nparts, sizes, x[0], x[1], x[2]);
}

static mlc_status extract_boundary(mlc_mesh *m, const char *source, mlc_err *err) {
    size_t nfaces = 4 * (size_t)m->nt;
    face_rec *f = mlc_malloc((nfaces ? nfaces : 1) * sizeof *f);
    if (!f) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory extracting the boundary", source);
    for (int e = 0; e < m->nt; e++)
        for (int j = 0; j < 4; j++) {
            face_rec *r = f + 4 * (size_t)e + j;
            for (int k = 0; k < 3; k++)
                r->v[k] = r->key[k] = m->T[4 * e + tet_faces[j][k]];
            mlc_sort3(r->key);
            r->tet = e;
        }
    if (sort_faces(&f, nfaces, m->nv) != MLC_OK) {
        mlc_free(f);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory extracting the boundary", source);
    }
    int *part = mlc_malloc(((size_t)m->nt + 1) * sizeof *part); /* union-find over tets */
    if (!part) {
        mlc_free(f);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory extracting the boundary", source);
    }
    for (int e = 0; e < m->nt; e++)
        part[e] = e;
    size_t nb = 0;
    for (size_t i = 0; i < nfaces;) {
        size_t j = i + 1;
        while (j < nfaces && face_cmp(f + i, f + j) == 0)
            j++;
        if (j - i > 2) {
            int a = f[i].key[0], b = f[i].key[1], c = f[i].key[2];
            mlc_free(f);
            mlc_free(part);
            return mlc_errf(err, MLC_EINVAL,
                            "%s: the triangle (%d, %d, %d) is shared by more than two tets; the "
                            "mesh is not a valid tetrahedralization (re-mesh it, e.g. with tetgen)",
                            source, a, b, c);
        }
        if (j - i == 1) f[nb++] = f[i];
        if (j - i == 2 && face_parity(f + i) == face_parity(f + i + 1)) {
            /* Both tets are positively oriented by now, so a triangle inside the body appears
             * once in each winding; the same winding twice puts both tets on one side of it. */
            int a = f[i].key[0], b = f[i].key[1], c = f[i].key[2];
            int t0 = MLC_MIN(f[i].tet, f[i + 1].tet), t1 = MLC_MAX(f[i].tet, f[i + 1].tet);
            mlc_free(f);
            mlc_free(part);
            return mlc_errf(err, MLC_EINVAL,
                            "%s: tets %d and %d lie on the same side of their shared triangle "
                            "(%d, %d, %d), so they overlap (a duplicated or folded tet); the mesh "
                            "is not a valid tetrahedralization (re-mesh it, e.g. with tetgen)",
                            source, t0, t1, a, b, c);
        }
        if (j - i == 2) {
            int r0 = mlc_uf_find(part, f[i].tet), r1 = mlc_uf_find(part, f[i + 1].tet);
            if (r0 != r1) part[r1] = r0;
        }
        i = j;
    }
    if (nb < 4) { /* a bounded body has at least a tet's four faces on its boundary */
        mlc_free(f);
        mlc_free(part);
        return mlc_errf(err, MLC_EINVAL,
                        "%s: the tets leave %zu triangles on the boundary, where a body has at "
                        "least 4; the tets overlap (re-mesh it, e.g. with tetgen)",
                        source, nb);
    }
    mlc_status hinge = check_hinges(m, part, source, err);
    mlc_free(part);
    if (hinge != MLC_OK) {
        mlc_free(f);
        return hinge;
    }
    mlc_free(m->F);
    m->F = mlc_malloc((nb ? nb : 1) * 3 * sizeof(int));
    if (!m->F) {
        mlc_free(f);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory extracting the boundary", source);
    }
    for (size_t i = 0; i < nb; i++)
        for (int k = 0; k < 3; k++)
            m->F[3 * i + k] = f[i].v[k];
    m->nf = (int)nb;
    mlc_free(f);
    return MLC_OK;
}

/* ---- Connected components (union-find over vertices of each tet) ------------------------- */
static int count_components(const mlc_mesh *m, int *parent) {
    for (int i = 0; i < m->nv; i++)
        parent[i] = i;
    for (int e = 0; e < m->nt; e++) {
        int r0 = mlc_uf_find(parent, m->T[4 * e]);
        for (int k = 1; k < 4; k++) {
            int r = mlc_uf_find(parent, m->T[4 * e + k]);
            if (r != r0) parent[r] = r0;
        }
    }
    int n = 0;
    for (int i = 0; i < m->nv; i++)
        n += mlc_uf_find(parent, i) == i;
    return n;
}

mlc_status mlc_mesh_finalize(mlc_mesh *m, const char *source, mlc_mesh_report *report,
                             mlc_err *err) {
    mlc_mesh_report local;
    if (!report) report = &local;
    report->flipped_tets = report->dropped_vertices = 0;
    report->components = 0;
    if (!source) source = "mesh";
    if (m->nv < 4 || m->nt < 1)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: the mesh has %d vertices and %d tets; at least 4 "
                        "vertices and 1 tet are needed",
                        source, m->nv, m->nt);
    for (int i = 0; i < 3 * m->nv; i++)
        if (!isfinite(m->X[i]))
            return mlc_errf(err, MLC_EINVAL,
                            "%s: vertex %d has a non-finite coordinate (NaN or "
                            "Inf); fix the file",
                            source, i / 3);
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * e;
        for (int k = 0; k < 4; k++) {
            if (t[k] < 0 || t[k] >= m->nv)
                return mlc_errf(err, MLC_EINVAL,
                                "%s: tet %d refers to vertex %d, but vertices "
                                "are numbered 0..%d",
                                source, e, t[k], m->nv - 1);
            for (int j = 0; j < k; j++)
                if (t[j] == t[k])
                    return mlc_errf(err, MLC_EINVAL,
                                    "%s: tet %d uses vertex %d twice; remove "
                                    "the degenerate tet",
                                    source, e, t[k]);
        }
    }
    /* Zero-volume threshold relative to the bounding box, so it is unit-independent. */
    double lo[3], hi[3];
    bbox(m, lo, hi);
    double ext = MLC_MAX(hi[0] - lo[0], MLC_MAX(hi[1] - lo[1], hi[2] - lo[2]));
    double thr = 1e-12 * ext * ext * ext;
    report->min_volume_threshold = thr;
    for (int e = 0; e < m->nt; e++) {
        int *t = m->T + 4 * e;
        double v6 = signed_volume6(m->X, t);
        if (fabs(v6) / 6.0 <= thr)
            return mlc_errf(err, MLC_EINVAL,
                            "%s: tet %d (vertices %d %d %d %d) has volume %.3g, "
                            "at or below the threshold %.3g (1e-12 × largest extent³); remove or "
                            "re-mesh it",
                            source, e, t[0], t[1], t[2], t[3], fabs(v6) / 6.0, thr);
        if (v6 < 0) {
            int tmp = t[2];
            t[2] = t[3];
            t[3] = tmp;
            report->flipped_tets++;
        }
    }
    /* Drop unreferenced vertices, keeping the order of the rest. */
    int *map = mlc_malloc((size_t)m->nv * sizeof(int));
    if (!map) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", source);
    for (int i = 0; i < m->nv; i++)
        map[i] = -1;
    for (int i = 0; i < 4 * m->nt; i++)
        map[m->T[i]] = 0;
    int nv = 0;
    for (int i = 0; i < m->nv; i++)
        if (map[i] == 0) {
            map[i] = nv;
            for (int k = 0; k < 3; k++)
                m->X[3 * nv + k] = m->X[3 * i + k];
            nv++;
        }
    report->dropped_vertices = m->nv - nv;
    for (int i = 0; i < 4 * m->nt; i++)
        m->T[i] = map[m->T[i]];
    m->nv = nv;
    int nc = count_components(m, map);
    mlc_free(map);
    report->components = nc;
    if (nc != 1)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: the mesh has %d connected components; the method "
                        "needs one body (keep the largest component or join the parts)",
                        source, nc);
    return extract_boundary(m, source, err);
}

static double dot3(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* ---- Transform ------------------------------------------------------------------------- */
void mlc_mesh_up_rotation(const double up[3], double R[9]) {
    static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, eye, sizeof eye);
    double n = sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
    if (!(n > 0) || !isfinite(n)) return;
    double u[3] = {up[0] / n, up[1] / n, up[2] / n};
    /* Axis k = u × ŷ / |u × ŷ| = (−u_z, 0, u_x) / s, angle θ with cos θ = u_y, sin θ = s:
     * R = cos θ I + sin θ [k]× + (1 − cos θ) k kᵀ (Rodrigues). Taking s from the components,
     * not from 1 − u_y², keeps R orthogonal to round-off even next to −y, and for a coordinate
     * axis every term is exact (c = 0, s = 1), so the named axes give signed permutations. */
    double s = sqrt(u[0] * u[0] + u[2] * u[2]);
    if (s == 0) {
        if (u[1] < 0) { /* antiparallel: a half turn about +x */
            R[4] = -1;
            R[8] = -1;
        }
        return;
    }
    double k[3] = {-u[2] / s, 0.0, u[0] / s}, c = u[1], omc = 1 - u[1];
    double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            /* + 0.0 turns a −0 entry into +0, so printed matrices read cleanly */
            R[3 * i + j] = (i == j ? c : 0.0) + s * K[3 * i + j] + omc * k[i] * k[j] + 0.0;
}

int mlc_transform_is_unrotated(const mlc_transform *tf) {
    for (int i = 0; i < 9; i++)
        if (tf->rotate[i] != (i % 4 == 0 ? 1.0 : 0.0)) return 0;
    return 1;
}

static void rotate3(const double R[9], const double *x, double *y) {
    for (int i = 0; i < 3; i++)
        y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

mlc_transform mlc_mesh_prepare_transform(const mlc_mesh *m, const double up[3], int normalize,
                                         double extent) {
    static const double plus_y[3] = {0, 1, 0};
    mlc_transform tf;
    mlc_mesh_up_rotation(up ? up : plus_y, tf.rotate);
    double lo[3], hi[3];
    if (mlc_transform_is_unrotated(&tf)) {
        bbox(m, lo, hi);
    } else {
        for (int k = 0; k < 3; k++)
            lo[k] = HUGE_VAL, hi[k] = -HUGE_VAL;
        if (m->nv == 0) lo[0] = lo[1] = lo[2] = hi[0] = hi[1] = hi[2] = 0;
        for (int i = 0; i < m->nv; i++) {
            double y[3];
            rotate3(tf.rotate, m->X + 3 * i, y);
            for (int k = 0; k < 3; k++) {
                if (y[k] < lo[k]) lo[k] = y[k];
                if (y[k] > hi[k]) hi[k] = y[k];
            }
        }
    }
    double ext = MLC_MAX(hi[0] - lo[0], MLC_MAX(hi[1] - lo[1], hi[2] - lo[2]));
    tf.scale = (normalize && ext > 0) ? extent / ext : 1.0;
    tf.translate[0] = -tf.scale * 0.5 * (lo[0] + hi[0]);
    tf.translate[1] = -tf.scale * lo[1];
    tf.translate[2] = -tf.scale * 0.5 * (lo[2] + hi[2]);
    return tf;
}

void mlc_mesh_apply_transform(mlc_mesh *m, mlc_transform tf) {
    /* Skipping the identity keeps "+y" bit-identical to earlier versions (1·x + 0·y + 0·z can
     * turn a −0 coordinate into +0), and with it their checksums and cache keys. */
    int rotated = !mlc_transform_is_unrotated(&tf);
    for (int i = 0; i < m->nv; i++) {
        double *x = m->X + 3 * i, y[3];
        if (rotated) {
            rotate3(tf.rotate, x, y);
            memcpy(x, y, sizeof y);
        }
        for (int k = 0; k < 3; k++)
            x[k] = tf.scale * x[k] + tf.translate[k];
    }
}

/* Convex hull of n 2D points (x y interleaved, sorted in place), counter-clockwise into hull
 * (capacity n + 1); returns its vertex count (Andrew's monotone chain). */
static int cmp_xy(const void *pa, const void *pb) {
    const double *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}
static double turn(const double *o, const double *a, const double *b) {
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}
static int convex_hull(double *p, int n, double *hull) {
    if (n < 3) {
        memcpy(hull, p, 2 * (size_t)n * sizeof *p);
        return n;
    }
    qsort(p, (size_t)n, 2 * sizeof *p, cmp_xy);
    int k = 0;
    for (int i = 0; i < n; i++) { /* lower chain */
        while (k >= 2 && turn(hull + 2 * (k - 2), hull + 2 * (k - 1), p + 2 * i) <= 0)
            k--;
        memcpy(hull + 2 * k++, p + 2 * i, 2 * sizeof *p);
    }
    for (int i = n - 2, lo = k + 1; i >= 0; i--) { /* upper chain */
        while (k >= lo && turn(hull + 2 * (k - 2), hull + 2 * (k - 1), p + 2 * i) <= 0)
            k--;
        memcpy(hull + 2 * k++, p + 2 * i, 2 * sizeof *p);
    }
    return k - 1; /* the last point repeats the first */
}

mlc_status mlc_mesh_support_compute(const mlc_mesh *m, const double up[3], double band,
                                    mlc_mesh_support *out) {
    memset(out, 0, sizeof *out);
    double n = sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
    if (!(n > 0) || m->nv == 0) return MLC_OK;
    double u[3] = {up[0] / n, up[1] / n, up[2] / n};
    /* Ground-plane basis e1, e2 with (e1, e2, û) right-handed. */
    double e1[3] = {0, 0, 0}, e2[3];
    e1[fabs(u[0]) < 0.6 ? 0 : 2] = 1;
    double d = e1[0] * u[0] + e1[1] * u[1] + e1[2] * u[2];
    for (int k = 0; k < 3; k++)
        e1[k] -= d * u[k];
    double l1 = sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    for (int k = 0; k < 3; k++)
        e1[k] /= l1;
    cross(u, e1, e2);
    double lo[3], hi[3];
    bbox(m, lo, hi);
    double ext = MLC_MAX(hi[0] - lo[0], MLC_MAX(hi[1] - lo[1], hi[2] - lo[2]));
    double h_min = HUGE_VAL;
    for (int i = 0; i < m->nv; i++)
        h_min = MLC_MIN(h_min, dot3(m->X + 3 * i, u));
    double limit = h_min + band * ext;

    double *pts = mlc_malloc(2 * (size_t)m->nv * sizeof *pts);
    double *hull = mlc_malloc(2 * ((size_t)m->nv + 1) * sizeof *hull);
    if (!pts || !hull) {
        mlc_free(pts);
        mlc_free(hull);
        return MLC_ENOMEM;
    }
    int np = 0;
    for (int i = 0; i < m->nv; i++) {
        const double *x = m->X + 3 * i;
        if (dot3(x, u) > limit) continue;
        pts[2 * np] = dot3(x, e1);
        pts[2 * np + 1] = dot3(x, e2);
        np++;
    }
    int nh = convex_hull(pts, np, hull);
    /* Centre of mass: tet centroids weighted by volume. */
    double com[3] = {0, 0, 0}, vol = 0;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * e;
        double v = signed_volume6(m->X, t);
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 3; k++)
                com[k] += 0.25 * v * m->X[3 * t[q] + k];
        vol += v;
    }
    double g[2] = {vol > 0 ? dot3(com, e1) / vol : 0, vol > 0 ? dot3(com, e2) / vol : 0};
    out->margin = HUGE_VAL;
    for (int i = 0; i < nh; i++) {
        const double *a = hull + 2 * i, *b = hull + 2 * ((i + 1) % nh);
        out->polygon += 0.5 * (a[0] * b[1] - a[1] * b[0]);
        double ex = b[0] - a[0], ey = b[1] - a[1], el = sqrt(ex * ex + ey * ey);
        /* counter-clockwise: the inside is to the left of every edge */
        if (el > 0) out->margin = MLC_MIN(out->margin, turn(a, b, g) / el);
    }
    if (nh < 3) { /* a point or a segment: the body balances on an edge at best */
        out->margin = 0;
        for (int i = 0; i < nh; i++)
            out->margin = MLC_MIN(out->margin, -hypot(hull[2 * i] - g[0], hull[2 * i + 1] - g[1]));
    }
    mlc_free(pts);
    mlc_free(hull);
    return MLC_OK;
}

/* ---- Statistics ------------------------------------------------------------------------- */

void mlc_mesh_compute_stats(const mlc_mesh *m, mlc_mesh_stats *s) {
    memset(s, 0, sizeof *s);
    bbox(m, s->bbox_min, s->bbox_max);
    s->min_tet_volume = HUGE_VAL;
    s->max_tet_volume = 0;
    s->min_dihedral_deg = 180;
    s->max_dihedral_deg = 0;
    /* Edges (i,j) of a tet and the opposite edge (k,l): the dihedral angle at edge (i,j) is the
     * angle between the two faces (i,j,k) and (i,j,l). */
    static const int edges[6][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2},
                                    {1, 2, 0, 3}, {1, 3, 0, 2}, {2, 3, 0, 1}};
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * e;
        double v = fabs(signed_volume6(m->X, t)) / 6.0;
        s->volume += v;
        if (v < s->min_tet_volume) s->min_tet_volume = v;
        if (v > s->max_tet_volume) s->max_tet_volume = v;
        for (int q = 0; q < 6; q++) {
            const double *a = m->X + 3 * t[edges[q][0]], *b = m->X + 3 * t[edges[q][1]];
            const double *c = m->X + 3 * t[edges[q][2]], *d = m->X + 3 * t[edges[q][3]];
            double ab[3], ac[3], ad[3], n1[3], n2[3];
            for (int k = 0; k < 3; k++) {
                ab[k] = b[k] - a[k];
                ac[k] = c[k] - a[k];
                ad[k] = d[k] - a[k];
            }
            cross(ab, ac, n1);
            cross(ab, ad, n2);
            double l1 = sqrt(n1[0] * n1[0] + n1[1] * n1[1] + n1[2] * n1[2]);
            double l2 = sqrt(n2[0] * n2[0] + n2[1] * n2[1] + n2[2] * n2[2]);
            if (l1 == 0 || l2 == 0) continue;
            double cs = (n1[0] * n2[0] + n1[1] * n2[1] + n1[2] * n2[2]) / (l1 * l2);
            cs = cs > 1 ? 1 : cs < -1 ? -1 : cs;
            double ang = acos(cs) * 180.0 / MLC_PI;
            if (ang < s->min_dihedral_deg) s->min_dihedral_deg = ang;
            if (ang > s->max_dihedral_deg) s->max_dihedral_deg = ang;
        }
    }
    if (m->nt == 0) s->min_tet_volume = 0;
}

uint64_t mlc_mesh_checksum(const mlc_mesh *m) {
    uint64_t h = MLC_HASH_INIT;
    h = mlc_hash64(h, &m->nv, sizeof m->nv);
    h = mlc_hash64(h, &m->nt, sizeof m->nt);
    if (m->X) h = mlc_hash64(h, m->X, 3 * (size_t)m->nv * sizeof(double));
    if (m->T) h = mlc_hash64(h, m->T, 4 * (size_t)m->nt * sizeof(int));
    return h;
}

uint64_t mlc_mesh_oriented_checksum(const mlc_mesh *m, const mlc_transform *tf) {
    uint64_t h = mlc_mesh_checksum(m);
    if (!mlc_transform_is_unrotated(tf)) h = mlc_hash64(h, tf->rotate, sizeof tf->rotate);
    return h;
}

mlc_status mlc_mesh_surface(const mlc_mesh *m, int *nsv, int **sv, int **sf) {
    *nsv = 0;
    *sv = *sf = NULL;
    int *map = mlc_malloc((size_t)(m->nv ? m->nv : 1) * sizeof(int));
    int *faces = mlc_malloc((size_t)(m->nf ? m->nf : 1) * 3 * sizeof(int));
    if (!map || !faces) goto fail;
    for (int i = 0; i < m->nv; i++)
        map[i] = -1;
    for (int i = 0; i < 3 * m->nf; i++)
        map[m->F[i]] = 0;
    int n = 0;
    for (int i = 0; i < m->nv; i++)
        if (map[i] == 0) map[i] = n++;
    int *verts = mlc_malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!verts) goto fail;
    for (int i = 0; i < m->nv; i++)
        if (map[i] >= 0) verts[map[i]] = i;
    for (int i = 0; i < 3 * m->nf; i++)
        faces[i] = map[m->F[i]];
    mlc_free(map);
    *nsv = n;
    *sv = verts;
    *sf = faces;
    return MLC_OK;
fail:
    mlc_free(map);
    mlc_free(faces);
    return MLC_ENOMEM;
}
