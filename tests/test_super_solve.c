/* test_super_solve.c: solves with a supernodal factor split over subtrees (super_solve.h) give
 * cholmod_solve2's bits for any thread count, also nested in a parallel region and after a
 * refactorization, and the split is a real one. The matrix has the vibration Hessian's shape
 * (test_grid_hessian.h). */
#include <cholmod.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>

#include "internal/super_solve.h"
#include "test_grid_hessian.h"
#include "test_util.h"

static cholmod_factor *supernodal_factor(cholmod_sparse *A, cholmod_common *cc) {
    cc->supernodal = CHOLMOD_SUPERNODAL;
    cholmod_factor *L = cholmod_analyze(A, cc);
    assert_non_null(L);
    assert_true(cholmod_factorize(A, L, cc));
    assert_true(L->is_super);
    return L;
}

/* x = A⁻¹ b by cholmod_solve2, the reference bits. */
static void cholmod_reference(cholmod_factor *L, const double *b, double *x, cholmod_common *cc) {
    cholmod_dense B = {0}, *X = NULL, *Y = NULL, *E = NULL;
    B.nrow = B.nzmax = B.d = GN, B.ncol = 1, B.x = (double *)(uintptr_t)b, B.xtype = CHOLMOD_REAL;
    B.dtype = CHOLMOD_DOUBLE;
    assert_true(cholmod_solve2(CHOLMOD_A, L, &B, NULL, &X, NULL, &Y, &E, cc));
    memcpy(x, X->x, sizeof(double) * GN);
    cholmod_free_dense(&X, cc), cholmod_free_dense(&Y, cc), cholmod_free_dense(&E, cc);
}

static void random_rhs(double *b, unsigned seed) {
    mlc_rng rng;
    mlc_rng_seed(&rng, seed);
    for (int i = 0; i < GN; i++)
        b[i] = mlc_rng_normal(&rng);
}

static void split_solves_should_give_cholmods_bits(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_hessian(1e-3, &cc);
    cholmod_factor *L = supernodal_factor(A, &cc);
    double *b = malloc(sizeof(double) * GN), *x0 = malloc(sizeof(double) * GN),
           *x = malloc(sizeof(double) * GN);
    const int threads[] = {2, 3, 4, 7};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        mlc_supersolve ss;
        mlc_err err;
        assert_int_equal(mlc_supersolve_plan(&ss, L, threads[t], 0, &err), MLC_OK);
        assert_int_equal(ss.bins, threads[t]);
        if (threads[t] == 2) {
            /* a real split: a critical path under a serial solve's, most entries in ranges */
            assert_true(ss.split_entries < 0.9 * ss.serial_entries);
            const int *Lpx = L->px;
            double in_ranges = 0;
            for (int r = 0; r < ss.nranges; r++)
                in_ranges += Lpx[ss.ranges[2 * r + 1] + 1] - Lpx[ss.ranges[2 * r]];
            assert_true(in_ranges > 0.6 * Lpx[ss.nsuper]);
            /* every supernode in the top or in exactly one range, of the thread it says */
            int *seen = calloc((size_t)ss.nsuper, sizeof(int));
            for (int bin = 0; bin < ss.bins; bin++)
                for (int r = ss.bin_ptr[bin]; r < ss.bin_ptr[bin + 1]; r++)
                    for (int s = ss.ranges[2 * r]; s <= ss.ranges[2 * r + 1]; s++) {
                        seen[s]++;
                        assert_int_equal(ss.owner[s], bin);
                    }
            int top = 0;
            for (int s = 0; s < ss.nsuper; s++) {
                assert_int_equal(seen[s], ss.owner[s] < 0 ? 0 : 1);
                top += ss.owner[s] < 0;
            }
            assert_true(top > 0 && top < ss.nsuper / 4);
            /* both kinds of subtree supernodes: ones at the start, which update the top's rows
             * in their turn (row_end = n), and ones that repeat their product for them */
            int direct = 0, repeated = 0;
            for (int s = 0; s < ss.nsuper; s++) {
                direct += ss.owner[s] >= 0 && ss.row_end[s] == GN;
                repeated += ss.repeat[s];
            }
            assert_true(direct > 0 && repeated > 0);
            free(seen);
        }
        for (unsigned seed = 1; seed <= 3; seed++) {
            random_rhs(b, seed);
            cholmod_reference(L, b, x0, &cc);
            memset(x, 0, sizeof(double) * GN);
            assert_int_equal(mlc_supersolve_solve(&ss, L, b, x), 1);
            assert_memory_equal(x0, x, sizeof(double) * GN);
        }
        /* in place, as the Lanczos loop may call it */
        memcpy(x, b, sizeof(double) * GN);
        assert_int_equal(mlc_supersolve_solve(&ss, L, x, x), 1);
        assert_memory_equal(x0, x, sizeof(double) * GN);
        mlc_supersolve_destroy(&ss);
    }
    /* the answer solves the system: ‖A x − b‖ small against ‖b‖ */
    double one[2] = {1, 0}, zero[2] = {0, 0}, r2 = 0, b2 = 0;
    cholmod_dense X = {0}, *R;
    X.nrow = X.nzmax = X.d = GN, X.ncol = 1, X.x = x0, X.xtype = CHOLMOD_REAL;
    X.dtype = CHOLMOD_DOUBLE;
    R = cholmod_zeros(GN, 1, CHOLMOD_REAL, &cc);
    assert_true(cholmod_sdmult(A, 0, one, zero, &X, R, &cc));
    for (int i = 0; i < GN; i++) {
        const double d = ((double *)R->x)[i] - b[i];
        r2 += d * d, b2 += b[i] * b[i];
    }
    assert_true(sqrt(r2) < 1e-8 * sqrt(b2));
    cholmod_free_dense(&R, &cc);
    free(b), free(x0), free(x);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
}

/* As the precompute calls it: inside one section of a two-thread region (nested), and after a
 * refactorization of another matrix with the same pattern, the plan kept. */
static void nested_and_refactorized_solves_should_give_cholmods_bits(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_hessian(1e-3, &cc), *A2 = grid_hessian(0.5, &cc);
    cholmod_factor *L = supernodal_factor(A, &cc);
    mlc_supersolve ss;
    mlc_err err;
    assert_int_equal(mlc_supersolve_plan(&ss, L, 2, 0, &err), MLC_OK);
    assert_int_equal(ss.bins, 2);
    assert_true(cholmod_factorize(A2, L, &cc));
    double *b = malloc(sizeof(double) * GN), *x0 = malloc(sizeof(double) * GN),
           *x = malloc(sizeof(double) * GN);
    random_rhs(b, 11);
    cholmod_reference(L, b, x0, &cc);
    int solved = 0;
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        solved = mlc_supersolve_solve(&ss, L, b, x);
#pragma omp section
        {
            volatile double busy = 0; /* the other branch's work */
            for (int i = 0; i < 1000000; i++)
                busy += 1e-9 * i;
        }
    }
    assert_int_equal(solved, 1);
    assert_memory_equal(x0, x, sizeof(double) * GN);
    free(b), free(x0), free(x);
    mlc_supersolve_destroy(&ss);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_free_sparse(&A2, &cc);
    cholmod_finish(&cc);
}

/* No split where it cannot pay or is not asked for: one thread, a small factor (under the
 * entry limit), a simplicial factor. Those solves stay CHOLMOD's (solve returns 0). */
static void plans_should_fall_back_to_cholmod(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_hessian(1e-3, &cc);
    cholmod_factor *L = supernodal_factor(A, &cc);
    mlc_supersolve ss;
    mlc_err err;
    double *b = calloc(GN, sizeof(double));
    assert_int_equal(mlc_supersolve_plan(&ss, L, 1, 0, &err), MLC_OK);
    assert_int_equal(ss.bins, 1);
    assert_int_equal(mlc_supersolve_solve(&ss, L, b, b), 0);
    mlc_supersolve_destroy(&ss);
    assert_int_equal(mlc_supersolve_plan(&ss, L, 2, 1e12, &err), MLC_OK);
    assert_int_equal(ss.bins, 1);
    mlc_supersolve_destroy(&ss);
    cholmod_free_factor(&L, &cc);
    cc.supernodal = CHOLMOD_SIMPLICIAL;
    L = cholmod_analyze(A, &cc);
    assert_true(cholmod_factorize(A, L, &cc));
    assert_int_equal(mlc_supersolve_plan(&ss, L, 2, 0, &err), MLC_OK);
    assert_int_equal(ss.bins, 1);
    mlc_supersolve_destroy(&ss);
    free(b);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_solves_should_give_cholmods_bits),
        cmocka_unit_test(nested_and_refactorized_solves_should_give_cholmods_bits),
        cmocka_unit_test(plans_should_fall_back_to_cholmod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
