/* bench_local_modes.c: precompute time of localized actuation modes (local_modes.h) against the
 * global path: K regions × m_r local modes against K·m_r global modes (default 8 × 2 against
 * 16), one run each, with the localization of the local modes.
 *
 *   bench_local_modes MESH [--regions K] [--per M_R] [--c C]
 *
 * Regions are K slabs of equal tet count along the longest axis of the prepared mesh (by tet
 * centroid). Everything else is the program's default precompute (w = 5, 10 passive clusters,
 * 64 contact samples). Set OPENBLAS_NUM_THREADS=1; timings on a shared machine are noisy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fem.h"
#include "mesh.h"
#include "subspace.h"

static const double *g_key;
static int cmp_idx(const void *a, const void *b) {
    double x = g_key[*(const int *)a], y = g_key[*(const int *)b];
    return (x > y) - (x < y) ? (x > y) - (x < y) : *(const int *)a - *(const int *)b;
}

/* CPU seconds of this process (user + system): on a shared machine the wall time also counts
 * waiting for a core. */
static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static int run(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace_settings *st,
               mlc_subspace *sub, double *total, double *cpu) {
    mlc_err err = {0};
    double t0 = mlc_now(), c0 = cpu_seconds();
    if (mlc_subspace_compute(mesh, fem, st, sub, &err) != MLC_OK) {
        fprintf(stderr, "bench_local_modes: %s\n", err.msg);
        return 1;
    }
    *total = mlc_now() - t0;
    *cpu = cpu_seconds() - c0;
    return 0;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int K = 8, per = 2;
    double c = 30; /* the default of actuation.localization */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--regions") && i + 1 < argc)
            K = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--per") && i + 1 < argc)
            per = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--c") && i + 1 < argc)
            c = atof(argv[++i]);
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            fprintf(stderr, "usage: %s MESH [--regions K] [--per M_R] [--c C]\n", argv[0]);
            return 2;
        }
    }
    if (!path || K < 1 || per < 1 || K * per > 64) {
        fprintf(stderr, "%s: give a mesh, 1 <= regions × per <= 64\n", argv[0]);
        return 2;
    }
    mlc_mesh mesh = {0};
    mlc_fem fem = {0};
    mlc_err err = {0};
    if (mlc_mesh_read(path, &mesh, NULL, &err) != MLC_OK) {
        fprintf(stderr, "bench_local_modes: %s\n", err.msg);
        return 1;
    }
    mlc_mesh_apply_transform(&mesh, mlc_mesh_prepare_transform(&mesh, NULL, 1, 2.0));
    if (mlc_fem_init(&fem, &mesh, &err) != MLC_OK) {
        fprintf(stderr, "bench_local_modes: %s\n", err.msg);
        return 1;
    }
    /* K slabs of equal tet count along the longest axis. */
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int i = 0; i < mesh.nv; i++)
        for (int k = 0; k < 3; k++) {
            double x = mesh.X[3 * i + k];
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    int ax = 0;
    for (int k = 1; k < 3; k++)
        if (hi[k] - lo[k] > hi[ax] - lo[ax]) ax = k;
    double *key = malloc((size_t)mesh.nt * sizeof(double));
    int *idx = malloc((size_t)mesh.nt * sizeof(int)),
        *label = malloc((size_t)mesh.nt * sizeof(int));
    for (int e = 0; e < mesh.nt; e++) {
        key[e] = 0;
        for (int a = 0; a < 4; a++)
            key[e] += 0.25 * mesh.X[3 * mesh.T[4 * e + a] + ax];
        idx[e] = e;
    }
    g_key = key;
    qsort(idx, (size_t)mesh.nt, sizeof(int), cmp_idx);
    for (int j = 0; j < mesh.nt; j++)
        label[idx[j]] = (int)((long)j * K / mesh.nt);

    mlc_subspace_settings st = {0};
    st.w = 5;
    st.poisson = 0.25;
    st.passive_clusters = 10;
    st.actuation_clusters = 1;
    st.contact_samples = 64;
    st.contact_band = 0.01;
    st.seed = 1;
    printf("mesh: %s, %d vertices, %d tets; %d slabs along axis %d × %d local modes against %d "
           "global modes, c = %g\n",
           path, mesh.nv, mesh.nt, K, ax, per, K * per, c);
    fflush(stdout);
    mlc_subspace g = {0}, l = {0};
    double tg = 0, tl = 0, cg = 0, cl = 0;
    st.m = K * per;
    if (run(&mesh, &fem, &st, &g, &tg, &cg)) return 1;
    printf("global: precompute %.2f s wall, %.2f s CPU (vibration modes %.2f s wall, %d solves)\n",
           tg, cg, g.t_vibration, g.vib_solves);
    fflush(stdout);
    st.m = 0;
    st.local_modes = per;
    st.localization = c;
    st.tet_region = label;
    st.nregions = K;
    if (run(&mesh, &fem, &st, &l, &tl, &cl)) return 1;
    double fmax = 0, fsum = 0;
    for (int i = 0; i < l.m; i++) {
        fmax = l.vib_frac[i] > fmax ? l.vib_frac[i] : fmax;
        fsum += l.vib_frac[i];
    }
    printf("local:  precompute %.2f s wall, %.2f s CPU (vibration modes %.2f s wall, of which "
           "local %.2f s, %d solves)\n",
           tl, cl, l.t_vibration, l.t_local, l.vib_solves);
    printf("local:  of which numeric factorizations %.2f s wall (one per region), Lanczos "
           "and the rest %.2f s\n",
           l.t_local_factor, l.t_local - l.t_local_factor);
    printf("outside fraction: mean %.3f, max %.3f; Löwdin: Gram min %.4f, largest change %.4f\n",
           fsum / l.m, fmax, l.local_gram_min, l.local_spread_max);
    printf("ratio local/global: precompute %.2f× wall, %.2f× CPU; vibration modes %.2f× wall\n",
           tl / tg, cl / cg, l.t_vibration / g.t_vibration);
    mlc_subspace_free(&g);
    mlc_subspace_free(&l);
    mlc_fem_free(&fem);
    mlc_mesh_free(&mesh);
    free(key), free(idx), free(label);
    return 0;
}
