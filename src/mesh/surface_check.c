/* surface_check.c: topology and degeneracy checks of a triangle surface (surface_check.h).
 *
 * Everything is done by sorting, so hostile sizes cost O(n log n) and no hashing worst case:
 * vertices are sorted by position to weld equal ones, the 3·nf edges are sorted by their
 * (welded) endpoints so each run of equal keys is one edge and its length is the number of
 * triangles on it, and components come from a union-find over welded vertices. */
#include "surface_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int mlc_surface_check_ok(const mlc_surface_check *c) {
    return c->boundary_edges == 0 && c->nonmanifold_edges == 0 && c->degenerate == 0 &&
           c->components <= 1;
}

/* ---- Welding equal positions ------------------------------------------------------------ */
typedef struct vkey {
    double x[3];
    int id;
} vkey;

static int vkey_same(const vkey *a, const vkey *b) {
    return a->x[0] == b->x[0] && a->x[1] == b->x[1] && a->x[2] == b->x[2];
}

static int vkey_cmp(const void *pa, const void *pb) {
    const vkey *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->x[k] != b->x[k]) return a->x[k] < b->x[k] ? -1 : 1;
    /* Ties by id make the group's first record its smallest index, whatever qsort does. */
    return (a->id > b->id) - (a->id < b->id);
}

mlc_status mlc_surface_weld_map(int nv, const double *V, int *map) {
    if (nv <= 0) return MLC_OK;
    vkey *r = mlc_malloc((size_t)nv * sizeof *r);
    if (!r) return MLC_ENOMEM;
    for (int i = 0; i < nv; i++) {
        memcpy(r[i].x, V + 3 * (size_t)i, sizeof r[i].x);
        r[i].id = i;
    }
    qsort(r, (size_t)nv, sizeof *r, vkey_cmp);
    int rep = 0;
    for (int i = 0; i < nv; i++) {
        if (i == 0 || !vkey_same(r + i - 1, r + i)) rep = r[i].id;
        map[r[i].id] = rep;
    }
    mlc_free(r);
    return MLC_OK;
}

/* ---- Edges -------------------------------------------------------------------------------- */
typedef struct ekey {
    int a, b; /* welded endpoints, a < b */
    int fwd;  /* 1 when the triangle runs a → b */
} ekey;

static int ekey_cmp(const void *pa, const void *pb) {
    const ekey *x = pa, *y = pb;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    return (x->fwd > y->fwd) - (x->fwd < y->fwd);
}

/* Zero area relative to the triangle's own size (see the header). */
static int zero_area(const double *a, const double *b, const double *c) {
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++)
        u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = c[k] - b[k];
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    double l2 = 0, s;
    s = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    l2 = MLC_MAX(l2, s);
    s = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    l2 = MLC_MAX(l2, s);
    s = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    l2 = MLC_MAX(l2, s);
    return sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) <= 1e-12 * l2;
}

/* Keep the MLC_SURFACE_CHECK_PARTS largest sizes, descending. */
static void keep_largest(int sizes[MLC_SURFACE_CHECK_PARTS], int n) {
    for (int i = 0; i < MLC_SURFACE_CHECK_PARTS; i++) {
        if (n > sizes[i]) {
            int t = sizes[i];
            sizes[i] = n;
            n = t;
        }
    }
}

mlc_status mlc_surface_check_compute(int nv, const double *V, int nf, const int *F,
                                     mlc_surface_check *out) {
    memset(out, 0, sizeof *out);
    out->boundary_vertex = out->degenerate_triangle = -1;
    out->nonmanifold_edge[0] = out->nonmanifold_edge[1] = -1;
    if (nv < 0 || nf < 0) return MLC_EINVAL;
    for (size_t i = 0; i < 3 * (size_t)nf; i++)
        if (F[i] < 0 || F[i] >= nv) return MLC_EINVAL;
    if (nf == 0) return MLC_OK;

    int *map = mlc_malloc((size_t)nv * sizeof *map);
    int *count = mlc_calloc((size_t)nv, sizeof *count);
    ekey *e = mlc_malloc(3 * (size_t)nf * sizeof *e);
    mlc_status st = MLC_OK;
    if (!map || !count || !e || mlc_surface_weld_map(nv, V, map) != MLC_OK) {
        st = MLC_ENOMEM;
        memset(out, 0, sizeof *out);
        goto done;
    }

    /* Degenerate triangles, and the edges. A zero-area triangle with three distinct corners
     * still closes the surface (a needle fills the gap between its neighbours' edges), so its
     * edges count; one with two corners at the same position has no edge there to count. */
    size_t ne = 0;
    for (int t = 0; t < nf; t++) {
        const int *f = F + 3 * (size_t)t;
        int w[3] = {map[f[0]], map[f[1]], map[f[2]]};
        int repeated = w[0] == w[1] || w[1] == w[2] || w[0] == w[2];
        if (repeated || zero_area(V + 3 * (size_t)w[0], V + 3 * (size_t)w[1], V + 3 * (size_t)w[2]))
            if (out->degenerate++ == 0) out->degenerate_triangle = t;
        if (repeated) continue;
        for (int k = 0; k < 3; k++) {
            int p = w[k], q = w[(k + 1) % 3];
            e[ne].a = MLC_MIN(p, q);
            e[ne].b = MLC_MAX(p, q);
            e[ne].fwd = p < q;
            ne++;
        }
    }
    qsort(e, ne, sizeof *e, ekey_cmp);
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && e[j].a == e[i].a && e[j].b == e[i].b)
            j++;
        size_t n = j - i;
        if (n == 1) {
            if (out->boundary_edges++ == 0) out->boundary_vertex = e[i].a;
        } else if (n > 2) {
            if (out->nonmanifold_edges++ == 0) {
                out->nonmanifold_edge[0] = e[i].a;
                out->nonmanifold_edge[1] = e[i].b;
                out->nonmanifold_count = (int)MLC_MIN(n, (size_t)0x7fffffff);
            }
        } else if (e[i].fwd == e[i + 1].fwd) {
            out->misoriented_edges++;
        }
        i = j;
    }

    /* Components over all triangles, degenerate ones included: they still tie their corners
     * together in the file, and a part made only of slivers is a part. `map` becomes the
     * union-find forest as it is: each vertex points at the smallest index at its position,
     * which points at itself. */
    for (int t = 0; t < nf; t++) {
        const int *f = F + 3 * (size_t)t;
        int a = mlc_uf_find(map, f[0]);
        mlc_uf_union(map, a, f[1]);
        mlc_uf_union(map, a, f[2]);
    }
    for (int t = 0; t < nf; t++)
        count[mlc_uf_find(map, F[3 * (size_t)t])]++;
    for (int i = 0; i < nv; i++) {
        if (count[i] == 0) continue;
        out->components++;
        keep_largest(out->component_sizes, count[i]);
    }
done:
    mlc_free(map);
    mlc_free(count);
    mlc_free(e);
    return st;
}
