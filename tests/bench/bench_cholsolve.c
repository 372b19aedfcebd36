/* bench_cholsolve.c: the full-space reference's sparse solve (cholesky_solve.h) on a mesh's
 * system matrix, serial against split, in interleaved rounds.
 *
 *   bench_cholsolve MESH [--threads T] [--solves N] [--rounds R] [--cold]
 *
 * The matrix is the reference's pattern, M/h² + (μ+γ) L with the default h, μ, γ and unit
 * density, factored as the reference does (simplicial LLᵀ after nested dissection). Per
 * round, N solves with three right-hand sides on 1 thread, then on T (default 2); printed: the
 * split (the top's columns, and the estimate's entries: on one thread, the largest thread's
 * share of the top's shared steps, its subtrees), then the median
 * microseconds a solve of each and their ratio, and whether the answers are the same bits. It
 * also prints how much of the factor lies in runs of nested patterns (swept as one) and the
 * steps of the split's forward sweep over the top (cholesky_solve.h). --cold writes a 64 MB
 * buffer before each solve (untimed), so that the factor comes from memory, as in the
 * reference, whose tet pass runs between its solves.
 * Run it alone on the machine: the split's gain is a ratio of two timings. */
#include <cholmod.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fem.h"
#include "internal/cholesky_solve.h"
#include "mesh.h"
#include "sim.h"
#include "testing/sim_testing.h"

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* With --cold: a buffer larger than the caches, written between solves (untimed) so that each
 * solve reads the factor from memory, as in the reference, where the tet pass runs between. */
static double *cold_buf;
static size_t cold_len;

/* Seconds of `solves` solves of b into x. */
static double time_solves(mlc_cholsolve *cs, const double *b, double *x, int solves) {
    double t = 0;
    for (int i = 0; i < solves; i++) {
        if (cold_buf)
            for (size_t k = 0; k < cold_len; k += 8)
                cold_buf[k] += 1;
        const double t0 = omp_get_wtime();
        mlc_cholsolve_solve3(cs, b, x);
        t += omp_get_wtime() - t0;
    }
    return t;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int threads = 2, solves = 400, rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--solves") && i + 1 < argc)
            solves = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cold"))
            cold_len = (size_t)64 << 17; /* 64 MB of doubles */
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else
            path = NULL, i = argc;
    }
    if (!path || threads < 2 || solves < 1 || rounds < 1 || rounds > 99) {
        fprintf(stderr, "usage: %s MESH [--threads T>=2] [--solves N] [--rounds R<100] [--cold]\n",
                argv[0]);
        return 2;
    }
    if (cold_len && !(cold_buf = calloc(cold_len, sizeof(double)))) return 1;
    mlc_mesh mesh = {0};
    mlc_fem fem = {0};
    mlc_err err = {0};
    if (mlc_mesh_read(path, &mesh, NULL, &err) != MLC_OK) {
        fprintf(stderr, "bench_cholsolve: %s\n", err.msg);
        return 1;
    }
    mlc_mesh_apply_transform(&mesh, mlc_mesh_prepare_transform(&mesh, NULL, 1, 2.0));
    if (mlc_fem_init(&fem, &mesh, &err) != MLC_OK) {
        fprintf(stderr, "bench_cholsolve: %s\n", err.msg);
        return 1;
    }
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    cholmod_sparse *A = mlc_fem_laplacian(&mesh, &fem, NULL, &cc);
    if (!A) {
        fprintf(stderr, "bench_cholsolve: out of memory for the Laplacian\n");
        return 1;
    }
    const int *Ap = A->p, *Ai = A->i;
    double *Ax = A->x;
    const double ih2 = 1.0 / (set.dt * set.dt), k = set.mu + set.gamma;
    for (int j = 0; j < mesh.nv; j++)
        for (int p = Ap[j]; p < Ap[j + 1]; p++)
            Ax[p] = k * Ax[p] + (Ai[p] == j ? ih2 * set.density * fem.vmass[j] : 0);
    cc.supernodal = CHOLMOD_SIMPLICIAL;
    cc.final_ll = 1;
    cc.nmethods = 1;
    cc.method[0].ordering = CHOLMOD_NESDIS;
    cholmod_factor *L = cholmod_analyze(A, &cc);
    if (!L && cc.status == CHOLMOD_NOT_INSTALLED) {
        cc.status = CHOLMOD_OK;
        cc.method[0].ordering = CHOLMOD_AMD;
        L = cholmod_analyze(A, &cc);
    }
    if (!L || !cholmod_factorize(A, L, &cc) || cc.status != CHOLMOD_OK) {
        fprintf(stderr, "bench_cholsolve: factorization failed (CHOLMOD status %d)\n", cc.status);
        return 1;
    }
    mlc_cholsolve serial, split;
    if (mlc_cholsolve_create(&serial, L, &err) != MLC_OK ||
        mlc_cholsolve_create(&split, L, &err) != MLC_OK) {
        fprintf(stderr, "bench_cholsolve: %s\n", err.msg);
        return 1;
    }
    if (mlc_cholsolve_set_threads(&split, threads, &err) != MLC_OK) {
        fprintf(stderr, "bench_cholsolve: %s\n", err.msg);
        return 1;
    }
    const int n = mesh.nv;
    double *b = malloc(sizeof(double) * 3 * (size_t)n),
           *x1 = malloc(sizeof(double) * 3 * (size_t)n),
           *xt = malloc(sizeof(double) * 3 * (size_t)n);
    if (!b || !x1 || !xt) return 1;
    for (int i = 0; i < 3 * n; i++) /* a smooth load, every coordinate non-zero */
        b[i] = 1.0 + 0.5 * (double)(i % 7) - 0.1 * (double)(i % 3);
    printf("%s: %d vertices, %d tets, factor %.0f entries below the diagonal\n", path, n, mesh.nt,
           (double)serial.lp[n]);
    long in_runs = 0, runs = 0;
    for (int j = 0; j < n; j++) {
        if (serial.sn_end[j] > serial.sn_first[j]) in_runs += serial.lp[j + 1] - serial.lp[j];
        runs += serial.sn_end[j] == j && serial.sn_first[j] < j;
    }
    printf("runs of nested patterns: %ld of two or more columns, holding %.0f%% of the entries\n",
           runs, 100.0 * (double)in_runs / (double)(serial.lp[n] > 0 ? serial.lp[n] : 1));
    printf("split for %d threads: bins %d, top %d columns, estimate: one thread %.0f, shared "
           "%.0f, subtrees %.0f\n",
           threads, split.bins, split.ntop, split.top_work, split.shared_work, split.bin_work);
    int kinds[3] = {0};
    for (int s = 0; s < split.nsteps; s++)
        kinds[split.steps[3 * s]]++;
    printf("the top's forward steps: %d on one thread, %d shared by rows, %d wide runs shared by "
           "panels\n",
           kinds[MLC_CHOLSOLVE_STEP_SERIAL], kinds[MLC_CHOLSOLVE_STEP_SHARED],
           kinds[MLC_CHOLSOLVE_STEP_WIDE]);
    double t1[99], tt[99];
    for (int r = 0; r < rounds; r++) {
        t1[r] = time_solves(&serial, b, x1, solves) / solves * 1e6;
        tt[r] = time_solves(&split, b, xt, solves) / solves * 1e6;
    }
    const int same = memcmp(x1, xt, sizeof(double) * 3 * (size_t)n) == 0;
    const double m1 = median(t1, rounds), mt = median(tt, rounds);
    printf("median of %d rounds of %d solves: 1 thread %.1f us, %d threads %.1f us, ratio %.2f; "
           "%s\n",
           rounds, solves, m1, threads, mt, m1 / mt, same ? "the same bits" : "DIFFERENT bits");
    free(b), free(x1), free(xt);
    mlc_cholsolve_destroy(&serial);
    mlc_cholsolve_destroy(&split);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
    mlc_fem_free(&fem);
    mlc_mesh_free(&mesh);
    return same ? 0 : 1;
}
