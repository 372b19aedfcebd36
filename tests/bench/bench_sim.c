/* bench_sim.c: per-step cost of the reduced simulator (METHOD.md §11 estimate: ~0.2 Mflop a
 * step at the Bat settings). Times 300-step rollouts of an actuated voxel body resting on the
 * ground (contacts active), reports the median µs/step over runs, one thread. The subspace is
 * synthetic (exponential weights, polynomial displacement fields, M-orthonormalized): the cost of a
 * step depends only on the sizes (w, m, |C_p|, |C_a|, |I|, iterations), not on the values.
 * Run with OPENBLAS_NUM_THREADS=1. Usage: bench_sim [runs] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modalloco/fem.h"
#include "modalloco/sim.h"
#include "modalloco/subspace.h"

static double poly(const double *x, int j) { /* 1, x, y, z, x², y², z², xy, yz, zx, x³, ... */
    double a = x[0], b = x[1], c = x[2];
    switch (j) {
    case 0: return 1;
    case 1: return a;
    case 2: return b;
    case 3: return c;
    case 4: return a * a;
    case 5: return b * b;
    case 6: return c * c;
    case 7: return a * b;
    case 8: return b * c;
    case 9: return c * a;
    default: return pow(a, 1 + j % 3) * pow(b + 0.5, j % 2) * cos(c * j);
    }
}

/* Gram-Schmidt in the metric diag(mass) over n entries, ncol columns. */
static void orthonormalize(double *V, int n, int ncol, const double *mass) {
    for (int j = 0; j < ncol; j++) {
        double *v = V + (size_t)n * j;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < j; i++) {
                const double *u = V + (size_t)n * i;
                double d = 0;
                for (int k = 0; k < n; k++) d += u[k] * mass[k] * v[k];
                for (int k = 0; k < n; k++) v[k] -= d * u[k];
            }
        double nn = 0;
        for (int k = 0; k < n; k++) nn += v[k] * mass[k] * v[k];
        for (int k = 0; k < n; k++) v[k] /= sqrt(nn);
    }
}

static double bench(const mlc_mesh *mesh, const mlc_fem *fem, int w, int m, int ncp, int ns,
                    int runs, double *precompute) {
    int nv = mesh->nv, nt = mesh->nt;
    mlc_subspace sub;
    memset(&sub, 0, sizeof sub);
    sub.nv = nv, sub.nt = nt, sub.w = w, sub.m = m;
    sub.W = malloc(sizeof(double) * nv * w);
    for (int j = 0; j < w; j++)
        for (int i = 0; i < nv; i++) { /* polynomials would make W_b X̃_c products collide */
            const double *x = mesh->X + 3 * i;
            sub.W[i + nv * j] = j == 0 ? 1 : exp(0.6 * j * x[0] - 0.4 * (j % 3) * x[1] + 0.3 * ((j % 2) ? 1 : -1) * x[2]);
        }
    orthonormalize(sub.W, nv, w, fem->vmass);
    sub.D = malloc(sizeof(double) * 3 * nv * m);
    double *m3 = malloc(sizeof(double) * 3 * nv);
    for (int i = 0; i < 3 * nv; i++) m3[i] = fem->vmass[i / 3];
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
            for (int k = 0; k < 9; k++) f += Y[k] * Y[k];
            if (sqrt(f) > sub.grad_max[j]) sub.grad_max[j] = sqrt(f);
        }
    }
    sub.cluster = malloc(sizeof(int) * nt);
    sub.acluster = calloc(nt, sizeof(int));
    sub.ncp = ncp, sub.nca = 1;
    for (int e = 0; e < nt; e++) sub.cluster[e] = e % ncp; /* sizes only matter */
    sub.ns = ns;
    sub.samples = malloc(sizeof(int) * ns);
    int nbot = 0, got = 0; /* spread over the bottom face, so the body rests on them */
    for (int i = 0; i < nv; i++) nbot += mesh->X[3 * i + 1] == 0;
    for (int i = 0, b = 0; i < nv && got < ns; i++)
        if (mesh->X[3 * i + 1] == 0 && b++ % (nbot / ns) == (nbot / ns) / 2) sub.samples[got++] = i;
    for (int i = 0; got < ns; i++) sub.samples[got++] = i;

    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    mlc_model *model;
    mlc_err err;
    double t0 = mlc_now();
    if (mlc_model_create(mesh, fem, &sub, &set, &model, &err) != MLC_OK) {
        fprintf(stderr, "model: %s\n", err.msg);
        exit(1);
    }
    *precompute = mlc_now() - t0;
    mlc_rollout *ro;
    mlc_rollout_create(model, &ro);
    double A[64], T[64], th[64];
    /* Half the default amplitude limit (p = 0.3) on every sinusoid. */
    for (int i = 0; i < m * 2; i++)
        A[i] = 0.15 / sub.grad_max[i / 2] / 2, T[i] = 0.2 + 0.05 * (i % 9), th[i] = 0.1 * i;
    mlc_actuation act = {m, 2, A, T, th};
    double *per = malloc(sizeof(double) * runs);
    int contacts = 0;
    for (int r = 0; r < runs; r++) {
        mlc_rollout_reset(ro);
        double ts = mlc_now();
        for (int s = 0; s < 300; s++) {
            mlc_rollout_step(ro, &act);
            contacts += mlc_rollout_contacts(ro);
        }
        per[r] = (mlc_now() - ts) / 300 * 1e6;
    }
    for (int i = 1; i < runs; i++) /* insertion sort for the median */
        for (int j = i; j > 0 && per[j] < per[j - 1]; j--) {
            double tmp = per[j];
            per[j] = per[j - 1], per[j - 1] = tmp;
        }
    double med = per[runs / 2];
    if (contacts == 0) fprintf(stderr, "warning: no contacts were active\n");
    free(per), free(m3), free(sub.W), free(sub.D), free(sub.grad_max), free(sub.cluster);
    free(sub.acluster), free(sub.samples);
    mlc_rollout_destroy(ro);
    mlc_model_destroy(model);
    return med;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    if (runs < 1) runs = 1;
    enum { NX = 20, NY = 8, NZ = 10 };
    static unsigned char occ[NX * NY * NZ];
    memset(occ, 1, sizeof occ);
    double origin[3] = {-1, 0, -0.5};
    mlc_mesh mesh = {0};
    mlc_fem fem = {0};
    mlc_err err;
    if (mlc_mesh_from_voxels(NX, NY, NZ, occ, 0.1, origin, &mesh, &err) != MLC_OK ||
        mlc_fem_init(&fem, &mesh, &err) != MLC_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("mesh: %d vertices, %d tets; 300-step rollouts, median of %d runs, 10 iterations\n",
           mesh.nv, mesh.nt, runs);
    printf("%-44s %10s %12s\n", "configuration", "us/step", "precompute s");
    struct { int w, m, ncp, ns; const char *name; } cfg[] = {
        {5, 3, 10, 20, "Bat: w=5 (r=60) m=3 k=2 |Cp|=10 |I|=20"},
        {6, 3, 10, 20, "r=72"},
        {7, 3, 10, 20, "r=84"},
        {5, 3, 5, 20, "r=60 |Cp|=5"},
        {5, 3, 20, 20, "r=60 |Cp|=20"},
        {5, 10, 10, 20, "r=60 m=10 (default m)"},
        {7, 16, 20, 40, "r=84 m=16 |Cp|=20 |I|=40 (octopus-like)"},
    };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        double pre;
        double us = bench(&mesh, &fem, cfg[c].w, cfg[c].m, cfg[c].ncp, cfg[c].ns, runs, &pre);
        printf("%-44s %10.2f %12.3f\n", cfg[c].name, us, pre);
    }
    mlc_fem_free(&fem);
    mlc_mesh_free(&mesh);
    return 0;
}
