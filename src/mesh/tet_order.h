/* tet_order.h: an order of a mesh's tets by position, for loops over the tets that should
 * touch nearby vertices one after another.
 *
 * Meshes come in the order their generator left them (tetgen's is close to random in space),
 * so a loop that adds each tet's terms to its four vertices writes all over the vertex arrays.
 * Sorted along a Morton (Z-order) curve through their centroids, consecutive tets lie close
 * together: a run of a few thousand tets touches about as many vertices as it owns, plus its
 * border (the bundled spot: 59,477 tets over 15,741 vertices; 14 runs of 4,096 tets each
 * touch 11.5k–12.3k vertices in the file's order and 2.2k–2.5k in this one).
 */
#ifndef MODALLOCO_TET_ORDER_H
#define MODALLOCO_TET_ORDER_H

#include "mesh.h"

/* order[i] = the tet that comes i-th (nt entries, caller-owned): ascending Morton code of the
 * centroid on a 2^20 grid per axis over the centroids' bounding box, ties by tet index. The
 * same order on every machine (integer keys from exact comparisons). MLC_ENOMEM on allocation
 * failure (order then unchanged). */
mlc_status mlc_tet_spatial_order(const mlc_mesh *mesh, int *order, mlc_err *err);

#endif
