/* tet_order.c: tets sorted along a Morton curve through their centroids (tet_order.h). */
#include "tet_order.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct keyed {
    uint64_t key;
    int tet;
} keyed;

static int by_key(const void *a, const void *b) {
    const keyed *u = a, *v = b;
    if (u->key != v->key) return u->key < v->key ? -1 : 1;
    return (u->tet > v->tet) - (u->tet < v->tet);
}

/* The 20 low bits of v spread to every third bit (bit i to bit 3i). */
static uint64_t spread3(uint64_t v) {
    v &= 0xFFFFF;
    v = (v | v << 32) & 0x001F00000000FFFFull;
    v = (v | v << 16) & 0x001F0000FF0000FFull;
    v = (v | v << 8) & 0x100F00F00F00F00Full;
    v = (v | v << 4) & 0x10C30C30C30C30C3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

static void centroid(const mlc_mesh *mesh, int e, double c[3]) {
    const int *t = mesh->T + 4 * (size_t)e;
    for (int k = 0; k < 3; k++)
        c[k] = 0.25 * (mesh->X[3 * (size_t)t[0] + k] + mesh->X[3 * (size_t)t[1] + k] +
                       mesh->X[3 * (size_t)t[2] + k] + mesh->X[3 * (size_t)t[3] + k]);
}

mlc_status mlc_tet_spatial_order(const mlc_mesh *mesh, int *order, mlc_err *err) {
    const int nt = mesh->nt;
    if (nt <= 0) return MLC_OK;
    keyed *k = mlc_malloc(sizeof *k * (size_t)nt);
    if (!k) return mlc_errf(err, MLC_ENOMEM, "tet order: out of memory (%d tets)", nt);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int e = 0; e < nt; e++) {
        double c[3];
        centroid(mesh, e, c);
        for (int a = 0; a < 3; a++)
            lo[a] = fmin(lo[a], c[a]), hi[a] = fmax(hi[a], c[a]);
    }
    const double cells = 1048575.0; /* 2^20 − 1 */
    for (int e = 0; e < nt; e++) {
        double c[3];
        centroid(mesh, e, c);
        uint64_t key = 0;
        for (int a = 0; a < 3; a++) {
            const double span = hi[a] - lo[a];
            double u = span > 0 ? (c[a] - lo[a]) / span * cells : 0;
            if (!(u >= 0)) u = 0; /* also a NaN centroid */
            if (u > cells) u = cells;
            key |= spread3((uint64_t)u) << (2 - a);
        }
        k[e].key = key, k[e].tet = e;
    }
    qsort(k, (size_t)nt, sizeof *k, by_key);
    for (int i = 0; i < nt; i++)
        order[i] = k[i].tet;
    mlc_free(k);
    return MLC_OK;
}
