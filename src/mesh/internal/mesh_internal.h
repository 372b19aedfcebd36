/* mesh_internal.h: the mesh readers' entry points, called by the dispatch (mesh_read.c), and the
 * finalization every reader (voxel.c too) ends in: the
 * tetrahedral formats (mesh_tet.c) and the surfaces (mesh_surface.c). Each fills m->X, m->T
 * only; the dispatch finalizes. Not part of the public API. */
#ifndef MODALLOCO_MESH_INTERNAL_H
#define MODALLOCO_MESH_INTERNAL_H

#include "mesh.h"

#include <stddef.h>

/* Validate and repair a mesh whose X and T (nv, nt) are filled but whose F is not: checks
 * coordinates are finite, indices in range, no repeated vertex in a tet, no zero-volume tet
 * (|V_e| <= 1e-12 × bbox-extent³ is an error naming the tet), flips inverted tets, drops
 * unreferenced vertices, requires one connected component, and extracts the outward boundary
 * into F/nf. `source` names the file in messages. `report` may be NULL. Every reader ends here. */
mlc_status mlc_mesh_finalize(mlc_mesh *mesh, const char *source, mlc_mesh_report *report,
                             mlc_err *err);

/* Parse a MEDIT .mesh held in buf[0..size) (path for messages) into m->X, m->T. Does not
 * finalize. */
mlc_status mlc__medit_read(const char *path, const char *buf, size_t size, mlc_mesh *m,
                           mlc_err *err);

/* Parse a Gmsh .msh (2.2 ASCII or binary, 4.1 ASCII) held in buf[0..size) into m->X, m->T and
 * write "gmsh2" or "gmsh4" to format. Does not finalize. */
mlc_status mlc__gmsh_read(const char *path, const char *buf, size_t size, mlc_mesh *m,
                          char format[16], mlc_err *err);

/* Read a TetGen .node/.ele pair into m->X, m->T (0-based; firstnumber detected from the first
 * data row of .node). Does not finalize. On failure m is freed. The surface reader reads tetgen's
 * output through it too. */
mlc_status mlc__tetgen_read(const char *node_path, const char *ele_path, mlc_mesh *m, mlc_err *err);

/* Read a surface (`fmt` is "off", "obj", "stl" or "ply"), check it (surface_check.h: MLC_EINVAL
 * with one line per defect) and tetrahedralize it with tetgen into m->X, m->T. Does not
 * finalize. Fills report->surface, surface_checked and dropped_triangles when the surface was
 * read (report may be NULL). min_tets > 0 bounds the tet volume (mlc_mesh_read_sized). On
 * failure m is freed. */
mlc_status mlc__surface_read(const char *path, const char *fmt, const char *tets_cache,
                             int min_tets, mlc_mesh *m, mlc_mesh_report *report, mlc_err *err);

/* The tetrahedralization cache (tetgen_cache.c). The key of the surface file tetgen is given
 * (off_path), the program and its switches; 0 when it cannot be computed. get restores the
 * .node/.ele pair of a file `cache` made for `key` into node_out/ele_out and returns 1, or 0
 * for any miss; put keeps the pair tetgen just wrote (best effort, atomic). */
uint64_t mlc__tetgen_cache_key(const char *off_path, const char *prog, const char *switches);
int mlc__tetgen_cache_get(const char *cache, uint64_t key, const char *node_out,
                          const char *ele_out);
void mlc__tetgen_cache_put(const char *cache, uint64_t key, const char *node, const char *ele);

#endif
