/* test_synthetic.h: a synthetic subspace built from closed-form fields, with no eigen-solver
 * and no LAPACK (exponential skinning weights and polynomial vibration modes, Gram-Schmidt in
 * the mass metric, x-striped clusters, samples on the bottom face), so a model built on it has
 * the same bits on every machine and with any number of BLAS threads: the input of the golden
 * rollout hash (test_golden.c) and of tests/bench/bench_sim.c. */
#ifndef MODALLOCO_TEST_SYNTHETIC_H
#define MODALLOCO_TEST_SYNTHETIC_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "fem.h"
#include "mesh.h"
#include "subspace.h"

static inline double poly(const double *x,
                          int j) { /* 1, x, y, z, x², y², z², xy, yz, zx, x³, ... */
    double a = x[0], b = x[1], c = x[2];
    switch (j) {
    case 0:
        return 1;
    case 1:
        return a;
    case 2:
        return b;
    case 3:
        return c;
    case 4:
        return a * a;
    case 5:
        return b * b;
    case 6:
        return c * c;
    case 7:
        return a * b;
    case 8:
        return b * c;
    case 9:
        return c * a;
    default:
        /* a^(1 + j%3) (b + 0.5)^(j%2) cos(cj), by products and detmath.h: the same bits on
         * every machine */
        return a * (j % 3 ? a : 1) * (j % 3 == 2 ? a : 1) * (j % 2 ? b + 0.5 : 1) * mlc_cos(c * j);
    }
}

/* Gram-Schmidt in the metric diag(mass) over n entries, ncol columns. */
static inline void orthonormalize(double *V, int n, int ncol, const double *mass) {
    for (int j = 0; j < ncol; j++) {
        double *v = V + (size_t)n * j;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < j; i++) {
                const double *u = V + (size_t)n * i;
                double d = 0;
                for (int k = 0; k < n; k++)
                    d += u[k] * mass[k] * v[k];
                for (int k = 0; k < n; k++)
                    v[k] -= d * u[k];
            }
        double nn = 0;
        for (int k = 0; k < n; k++)
            nn += v[k] * mass[k] * v[k];
        for (int k = 0; k < n; k++)
            v[k] /= sqrt(nn);
    }
}

/* Synthetic subspace of the given sizes on a voxel box (samples on the bottom face). */
static inline void synthetic_subspace(const mlc_mesh *mesh, const mlc_fem *fem, int w, int m,
                                      int ncp, int ns, mlc_subspace *out) {
    int nv = mesh->nv, nt = mesh->nt;
    mlc_subspace sub;
    memset(&sub, 0, sizeof sub);
    sub.nv = nv, sub.nt = nt, sub.w = w, sub.m = m;
    sub.W = malloc(sizeof(double) * nv * w);
    for (int j = 0; j < w; j++)
        for (int i = 0; i < nv; i++) { /* polynomials would make W_b X̃_c products collide */
            const double *x = mesh->X + 3 * i;
            sub.W[i + nv * j] = j == 0 ? 1
                                       : mlc_exp(0.6 * j * x[0] - 0.4 * (j % 3) * x[1] +
                                                 0.3 * ((j % 2) ? 1 : -1) * x[2]);
        }
    orthonormalize(sub.W, nv, w, fem->vmass);
    sub.D = malloc(sizeof(double) * 3 * nv * m);
    double *m3 = malloc(sizeof(double) * 3 * nv);
    for (int i = 0; i < 3 * nv; i++)
        m3[i] = fem->vmass[i / 3];
    for (int j = 0; j < m; j++)
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++)
                sub.D[3 * nv * j + 3 * i + k] = poly(mesh->X + 3 * i, 4 + (j + k) % 8) * (k + 1);
    orthonormalize(sub.D, 3 * nv, m, m3);
    sub.grad_max = malloc(sizeof(double) * m);
    for (int j = 0; j < m; j++) { /* max_e ‖∇(D_j)_e‖_F, for realistic amplitudes */
        sub.grad_max[j] = 0;
        for (int e = 0; e < nt; e++) {
            double Y[9] = {0}, f = 0;
            for (int a = 0; a < 4; a++)
                for (int l = 0; l < 3; l++)
                    for (int k = 0; k < 3; k++)
                        Y[l + 3 * k] += sub.D[3 * nv * j + 3 * mesh->T[4 * e + a] + l] *
                                        fem->grad[12 * e + 3 * a + k];
            for (int k = 0; k < 9; k++)
                f += Y[k] * Y[k];
            if (sqrt(f) > sub.grad_max[j]) sub.grad_max[j] = sqrt(f);
        }
    }
    sub.cluster = malloc(sizeof(int) * nt);
    sub.acluster = calloc(nt, sizeof(int));
    sub.ncp = ncp, sub.nca = 1;
    for (int e = 0; e < nt; e++)
        sub.cluster[e] = e % ncp; /* sizes only matter */
    sub.ns = ns;
    sub.samples = malloc(sizeof(int) * ns);
    int nbot = 0, got = 0; /* spread over the bottom face, so the body rests on them */
    for (int i = 0; i < nv; i++)
        nbot += mesh->X[3 * i + 1] == 0;
    for (int i = 0, b = 0; i < nv && got < ns; i++)
        if (mesh->X[3 * i + 1] == 0 && b++ % (nbot / ns) == (nbot / ns) / 2) sub.samples[got++] = i;
    for (int i = 0; got < ns; i++)
        sub.samples[got++] = i;
    free(m3);
    *out = sub;
}

static inline void free_synthetic(mlc_subspace *sub) {
    free(sub->W), free(sub->D), free(sub->grad_max), free(sub->cluster), free(sub->acluster);
    free(sub->samples);
}

#endif
