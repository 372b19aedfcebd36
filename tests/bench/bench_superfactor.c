/* bench_superfactor.c: the vibration problem's numeric factorization (super_factor.h) on a
 * mesh, CHOLMOD's serial cholmod_factorize against the split, in interleaved rounds.
 *
 *   bench_superfactor MESH [--threads T] [--rounds R]
 *
 * The matrix is the precompute's K − σM: the linear-elasticity Hessian at rest (μ = 1, λ = 4,
 * the default Poisson ratio 0.4), the lumped mass and the default shift, ordered by METIS,
 * supernodal. Printed: the factor's size and flops, the split (threads, subtrees, the
 * estimate's critical path against the serial flops), then per round the seconds of each and,
 * at the end, the medians, their ratio and whether every factor had CHOLMOD's bits. The plan
 * (the descendant lists' walk and the split's search) is timed apart. Run it alone on the
 * machine: the gain is a ratio of two timings. */
#include <cholmod.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fem.h"
#include "internal/eigen.h"
#include "internal/super_factor.h"
#include "mesh.h"

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int threads = 2, rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else
            path = NULL, i = argc;
    }
    if (!path || threads < 2 || rounds < 1 || rounds > 99) {
        fprintf(stderr, "usage: %s MESH [--threads T>=2] [--rounds R<100]\n", argv[0]);
        return 2;
    }
    mlc_mesh mesh = {0};
    mlc_fem fem = {0};
    mlc_err err = {0};
    if (mlc_mesh_read(path, &mesh, NULL, &err) != MLC_OK ||
        mlc_fem_init(&fem, &mesh, &err) != MLC_OK) {
        fprintf(stderr, "bench_superfactor: %s\n", err.msg);
        return 1;
    }
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    const int n = 3 * mesh.nv;
    double *mass = malloc(sizeof(double) * (size_t)n);
    cholmod_sparse *A = mlc_fem_elasticity_hessian(&mesh, &fem, 1.0, 4.0, &cc);
    if (!mass || !A) {
        fprintf(stderr, "bench_superfactor: out of memory for the Hessian\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        mass[i] = fem.vmass[i / 3];
    const double sigma = mlc_eigen_default_shift(A, mass);
    const int *Ap = A->p, *Ai = A->i;
    double *Ax = A->x;
    for (int j = 0; j < n; j++)
        for (int p = Ap[j]; p < Ap[j + 1]; p++)
            if (Ai[p] == j) Ax[p] -= sigma * mass[j];
    cc.supernodal = CHOLMOD_SUPERNODAL;
    cc.nmethods = 1;
    cc.method[0].ordering = CHOLMOD_METIS;
    cholmod_factor *S = cholmod_analyze(A, &cc);
    if (!S) {
        fprintf(stderr, "bench_superfactor: analysis failed (CHOLMOD status %d)\n", cc.status);
        return 1;
    }
    double t0 = omp_get_wtime();
    mlc_superfactor sf;
    if (mlc_superfactor_plan(&sf, S, threads, 0, &err) != MLC_OK) {
        fprintf(stderr, "bench_superfactor: %s\n", err.msg);
        return 1;
    }
    const double t_plan = omp_get_wtime() - t0;
    printf("%s: %d vertices, %d tets, n = %d, %d supernodes, nnz(L) %.3g, %.3g flops\n", path,
           mesh.nv, mesh.nt, n, (int)S->nsuper, cc.lnz, sf.serial_flops);
    printf("split for %d threads: bins %d, %d subtrees, %d updates, critical path %.3f of the "
           "serial flops; plan %.3f s\n",
           threads, sf.bins, sf.nranges, sf.upd_ptr ? sf.upd_ptr[sf.nsuper] : 0,
           sf.split_flops / sf.serial_flops, t_plan);
    double ts[99], tp[99];
    int same = 1;
    for (int r = 0; r < rounds; r++) {
        cholmod_factor *L1 = cholmod_copy_factor(S, &cc), *L2 = cholmod_copy_factor(S, &cc);
        if (!L1 || !L2) return 1;
        /* CHOLMOD's own loops open teams of 4 (CHOLMOD_OMP_NUM_THREADS) to clear and map each
         * supernode; in the precompute it runs inside a branch of a parallel region, where
         * those teams are inactive: so here too */
        const int levels = omp_get_max_active_levels();
        omp_set_max_active_levels(0);
        t0 = omp_get_wtime();
        const int ok1 = cholmod_factorize(A, L1, &cc) && cc.status == CHOLMOD_OK;
        ts[r] = omp_get_wtime() - t0;
        omp_set_max_active_levels(levels);
        t0 = omp_get_wtime();
        const int ok2 = mlc_superfactor_factorize(&sf, A, L2, &cc);
        tp[r] = omp_get_wtime() - t0;
        if (!ok1 || !ok2) {
            fprintf(stderr, "bench_superfactor: factorization failed (%d, %d)\n", ok1, ok2);
            return 1;
        }
        same &= memcmp(L1->x, L2->x, sizeof(double) * (size_t)((int *)L1->px)[L1->nsuper]) == 0;
        printf("round %d: serial %.3f s, split %.3f s\n", r + 1, ts[r], tp[r]);
        cholmod_free_factor(&L1, &cc), cholmod_free_factor(&L2, &cc);
    }
    const double ms = median(ts, rounds), mp = median(tp, rounds);
    printf("median: serial %.3f s, split %.3f s, ratio %.3f; the same bits: %s\n", ms, mp, mp / ms,
           same ? "yes" : "NO");
    mlc_superfactor_destroy(&sf);
    cholmod_free_factor(&S, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
    free(mass);
    mlc_fem_free(&fem);
    mlc_mesh_free(&mesh);
    return same ? 0 : 1;
}
