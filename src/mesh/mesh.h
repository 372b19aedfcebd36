/* mesh.h: tetrahedral meshes: reading every supported format, validation and repair,
 * boundary extraction, statistics and the preparation transform of docs/method.md §1.
 *
 * Ownership: an mlc_mesh owns all its arrays (allocated with mlc_malloc); mlc_mesh_free
 * releases them and re-zeroes the struct. A zeroed mlc_mesh is a valid empty mesh.
 */
#ifndef MODALLOCO_MESH_H
#define MODALLOCO_MESH_H

#include "base.h"
#include "surface_check.h"

typedef struct mlc_mesh {
    int nv;       /* number of vertices (after dropping unreferenced ones) */
    int nt;       /* number of tets */
    int nf;       /* number of boundary triangles */
    double *X;    /* 3×nv column-major rest positions (x0 y0 z0 x1 ...), metres after prepare */
    int *T;       /* 4×nt vertex indices, every tet positively oriented: det[b-a,c-a,d-a] > 0 */
    int *F;       /* 3×nf boundary triangles (vertex indices), wound outward (right-hand rule) */
    int *tet_tag; /* nt per-tet labels the file carries (MEDIT tetrahedron references, Gmsh
                   * physical tags, TetGen region attributes), or NULL when it carries none
                   * (surfaces, voxels, a TetGen .ele without attributes); kept in step with T
                   * through repair (tets are never reordered) */
} mlc_mesh;

/* What reading and repairing did; filled by mlc_mesh_read. */
typedef struct mlc_mesh_report {
    char format[16];      /* "medit", "tetgen", "gmsh2", "gmsh4", "off", "obj", "stl", "ply" */
    int tetrahedralized;  /* 1 when the input was a surface run through tetgen */
    int flipped_tets;     /* tets with negative orientation that were flipped */
    int dropped_vertices; /* unreferenced vertices that were removed */
    int components;       /* connected components (tet face/vertex connectivity); 1 if valid */
    double min_volume_threshold; /* threshold used for the zero-volume check (absolute, m^3) */
    /* Surfaces only (tetrahedralized == 1): */
    int dropped_triangles;     /* triangles with a repeated vertex index, dropped before tetgen */
    int surface_checked;       /* 1 when `surface` holds the check of the input surface */
    mlc_surface_check surface; /* what surface_check.h found (no defect when the read succeeded;
                                * misoriented_edges may be nonzero) */
} mlc_mesh_report;

/* Transform of mesh preparation: x_prepared = scale * R x_input + translate, where R (3×3,
 * row-major: R[3*i + j] is row i, column j) is the proper rotation (det +1) that turns the
 * mesh's up axis (mesh.up) to +y; R is the identity for the default "+y". */
typedef struct mlc_transform {
    double rotate[9]; /* R, row-major */
    double scale;     /* uniform, > 0 (1 without normalization) */
    double translate[3];
} mlc_transform;

/* Read a tet mesh (MEDIT .mesh, TetGen .node/.ele (path may name either, or the stem),
 * Gmsh .msh 2.2 ASCII/binary and 4.1 ASCII) or a surface (.off, .obj, .stl ASCII/binary,
 * .ply ASCII/binary) which is tetrahedralized by running the `tetgen` program (-pYq1.414).
 * Any of these may be gzip-compressed, named NAME.EXT.gz (a TetGen pair: foo.ele.gz reads
 * foo.node.gz, or foo.node when only that exists); a damaged .gz is MLC_EPARSE.
 * Validates and repairs: rejects NaN/Inf coordinates, out-of-range indices, repeated vertices
 * in a tet, zero-volume tets, several connected components, malformed/truncated files
 * (MLC_EPARSE or MLC_EINVAL with file, line and fix in err); flips inverted tets and drops
 * unreferenced vertices (reported). Extracts the boundary (outward). `report` may be NULL. */
mlc_status mlc_mesh_read(const char *path, mlc_mesh *mesh, mlc_mesh_report *report, mlc_err *err);
/* The same; a surface's tetrahedralization is also kept in the file `tets_cache` (NULL or ""
 * for none) and restored from it when the same surface is read with the same tetgen again,
 * with the same bits (tetgen_cache.c). Other formats ignore it. */
mlc_status mlc_mesh_read_cached(const char *path, const char *tets_cache, mlc_mesh *mesh,
                                mlc_mesh_report *report, mlc_err *err);
/* mlc_mesh_read_cached with a finer tetrahedralization of a surface: min_tets > 0 gives tetgen
 * the volume bound -a (enclosed volume / min_tets), so the mesh has at least min_tets tets
 * (about 1.2-1.5 times as many: the quality bound refines further); 0 = no bound, as
 * mlc_mesh_read_cached. Tet meshes ignore it. */
mlc_status mlc_mesh_read_sized(const char *path, const char *tets_cache, int min_tets,
                               mlc_mesh *mesh, mlc_mesh_report *report, mlc_err *err);

void mlc_mesh_free(mlc_mesh *mesh);

/* Build a tet mesh from an occupancy grid of nx×ny×nz voxels of edge h (occ[i + nx*(j + ny*k)]
 * nonzero = filled; voxel (i,j,k) spans [i,i+1]h × [j,j+1]h × [k,k+1]h + origin), each voxel
 * split into 6 tets by the conforming Freudenthal (Kuhn) split along its main diagonal.
 * Finalizes the mesh (boundary, components check). */
mlc_status mlc_mesh_from_voxels(int nx, int ny, int nz, const unsigned char *occ, double h,
                                const double origin[3], mlc_mesh *mesh, mlc_err *err);

/* The proper rotation R (3×3, row-major) that turns the direction `up` (nonzero, any length)
 * into +y, about the axis up × ŷ: the smallest such rotation. Up along -y has no unique
 * smallest rotation; it gets the half turn about +x, (x, y, z) → (x, −y, −z). A coordinate
 * axis gives an exact signed permutation, e.g. up = +z: (x, y, z) → (x, z, −y), and up = +x:
 * (x, y, z) → (−y, x, z). A zero or non-finite `up` gives the identity (config validation
 * rejects those). */
void mlc_mesh_up_rotation(const double up[3], double R[9]);

/* Transform that preparation applies (docs/method.md §1): rotate `up` (NULL = +y) to +y, then
 * centre the rotated bounding box at x = z = 0, min y = 0, and, when `normalize` is nonzero,
 * scale uniformly so the largest extent is `extent`. With normalize == 0 the scale is 1 but the
 * translation still puts the mesh on the ground. The mesh is not modified. */
mlc_transform mlc_mesh_prepare_transform(const mlc_mesh *mesh, const double up[3], int normalize,
                                         double extent);
/* Apply a transform in place: X ← scale R X + translate. A rotation keeps every tet positively
 * oriented and every boundary face wound outward, so T and F stay valid. With R the identity
 * the rotation is skipped, so "+y" results are bit-identical to a transform without one. */
void mlc_mesh_apply_transform(mlc_mesh *mesh, mlc_transform tf);
/* 1 when tf's rotation is exactly the identity. */
int mlc_transform_is_unrotated(const mlc_transform *tf);

/* Statistics for `modalloco info`. */
typedef struct mlc_mesh_stats {
    double volume; /* total volume */
    double bbox_min[3], bbox_max[3];
    double min_tet_volume, max_tet_volume;
    double min_dihedral_deg; /* smallest dihedral angle over all tets, degrees */
    double max_dihedral_deg;
} mlc_mesh_stats;
void mlc_mesh_compute_stats(const mlc_mesh *mesh, mlc_mesh_stats *stats);

/* Checksum of the mesh contents (nv, nt, X bytes, T) for cache keys and params.json. */
uint64_t mlc_mesh_checksum(const mlc_mesh *mesh);
/* Checksum of an input mesh together with the rotation preparation gives it (params.json,
 * `info`): mlc_mesh_checksum(mesh), with tf's rotation hashed in when it is not the identity,
 * so the same file with another mesh.up has another checksum while "+y" keeps the plain one.
 * Scale and translation are left out: they follow from the rotated mesh and the settings. */
uint64_t mlc_mesh_oriented_checksum(const mlc_mesh *mesh, const mlc_transform *tf);

/* How the mesh would rest on a ground below it with `up` (nonzero) pointing up, for guessing a
 * mesh's up axis (`info`). The contact region is the vertices within `band` × (largest
 * bounding-box extent) of the lowest vertex along û. Lengths are in input units. */
typedef struct mlc_mesh_support {
    double polygon; /* area of the support polygon: the convex hull of the contact region's
                     * vertices, projected on the ground plane */
    double margin;  /* signed distance from the centre of mass (uniform density), projected on
                     * the ground plane, to the support polygon's edge: > 0 inside, where the
                     * body stands; < 0 outside, where it tips over */
} mlc_mesh_support;
/* Fill *out for the direction `up`. Cost O(nv log nv + nt). MLC_ENOMEM only. */
mlc_status mlc_mesh_support_compute(const mlc_mesh *mesh, const double up[3], double band,
                                    mlc_mesh_support *out);

/* Compact boundary surface for output: `*sv` (length *nsv, owned, mlc_free) lists the vertex
 * indices used by boundary faces in ascending order; `*sf` (3×nf, owned) are the faces
 * re-indexed into sv. Used by surface.obj / animation.pc2 writers. */
mlc_status mlc_mesh_surface(const mlc_mesh *mesh, int *nsv, int **sv, int **sf);

#endif
