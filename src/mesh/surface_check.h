/* surface_check.h: what is wrong with a triangle surface before it is tetrahedralized.
 *
 * tetgen needs a closed, manifold surface without zero-area triangles, and the method needs one
 * body. When that fails tetgen aborts without a word, or exits 0 having made no tets, so the
 * surface readers (mesh_surface.c) run this check first and name the defect themselves.
 *
 * Topology is taken from positions, not indices: vertices at exactly the same position count
 * as one (tetgen merges them too, and STL or seam-split exports repeat them). Vertex numbers in
 * the result are input indices, the smallest index at that position. */
#ifndef MODALLOCO_SURFACE_CHECK_H
#define MODALLOCO_SURFACE_CHECK_H

#include "base.h"

/* How many of the largest components have their size recorded. */
#define MLC_SURFACE_CHECK_PARTS 4

typedef struct mlc_surface_check {
    /* Edges of exactly one triangle: the surface is open (a hole or a missing face). */
    int boundary_edges;
    int boundary_vertex; /* a vertex on one of them; -1 when there are none */
    /* Edges of three or more triangles: the surface is not a manifold there. */
    int nonmanifold_edges;
    int nonmanifold_edge[2]; /* one of them, as two vertices; -1 -1 when there are none */
    int nonmanifold_count;   /* triangles sharing that example edge */
    /* Triangles of zero area: three corners on a line, or two at the same position. */
    int degenerate;
    int degenerate_triangle; /* index into F of one of them; -1 when there are none */
    /* Connected components: triangles are connected when they share a vertex. */
    int components;
    int component_sizes[MLC_SURFACE_CHECK_PARTS]; /* triangles in the largest, descending, 0 pad */
    /* Edges of two triangles that run along it in the same direction: the neighbours disagree
     * on which side is out. Not a defect for tetgen (it ignores orientation); reported only. */
    int misoriented_edges;
} mlc_surface_check;

/* 1 when the surface has none of the defects that stop tetgen or the method (open, non-manifold,
 * degenerate, several components); misoriented edges do not count. */
int mlc_surface_check_ok(const mlc_surface_check *c);

/* Check the surface of nv vertices V (3×nv, xyz interleaved, finite) and nf triangles F (3×nf,
 * 0-based indices in 0..nv-1; a triangle that repeats an index is degenerate). A triangle has
 * zero area when |(b−a)×(c−a)| <= 1e-12 × (its longest edge)², a bound far below any triangle
 * a modeller makes on purpose and far above rounding in the cross product of collinear points.
 * Cost O((nv + nf) log(nv + nf)) time, O(nv + nf) scratch memory. MLC_ENOMEM only (out is then
 * zeroed); MLC_EINVAL for negative counts or an index out of range (callers check these first). */
mlc_status mlc_surface_check_compute(int nv, const double *V, int nf, const int *F,
                                     mlc_surface_check *out);

/* Weld equal positions: map[i] (caller's buffer of nv ints) = the smallest index of a vertex at
 * exactly V[i]'s position, so map[map[i]] == map[i]. O(nv log nv). MLC_ENOMEM only. */
mlc_status mlc_surface_weld_map(int nv, const double *V, int *map);

#endif
