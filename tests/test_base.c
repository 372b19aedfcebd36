/* test_base.c: the small helpers of base.h: median, finite check, path joining, file existence
 * and small text files; and dense.h's plain Cholesky factorization against LAPACK. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "test_util.h"

#include "base.h"
#include "dense.h"
#include "stop_signal.h"

static void median_odd_even_in_place(void **state) {
    (void)state;
    double v[5] = {3, -1, 7, 2, 2}, work[5];
    assert_true(mlc_median(v, 5, work) == 2.0);
    assert_true(v[0] == 3 && v[2] == 7); /* v untouched */
    assert_true(mlc_median(v, 4, work) == 2.5);
    assert_true(mlc_median(v, 1, work) == 3.0);
    assert_true(mlc_median(v, 5, v) == 2.0); /* in place: v sorted */
    for (int i = 0; i + 1 < 5; i++)
        assert_true(v[i] <= v[i + 1]);
}

static void edit_distance_should_count_single_edits(void **state) {
    (void)state;
    assert_int_equal(mlc_edit_distance("kitten", "sitting"), 3); /* 2 substitutions, 1 insert */
    assert_int_equal(mlc_edit_distance("sitting", "kitten"), 3);
    assert_int_equal(mlc_edit_distance("", "abc"), 3);
    assert_int_equal(mlc_edit_distance("optimze", "optimize"), 1);
    assert_int_equal(mlc_edit_distance("--thread", "--threads"), 1);
    assert_int_equal(mlc_edit_distance("same", "same"), 0);
    char longer[200];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    assert_true(mlc_edit_distance(longer, "a") > 1000); /* too long to be near anything */
}

static void all_finite_sees_nan_and_inf(void **state) {
    (void)state;
    double v[4] = {1, -0.0, 1e308, -1e-300};
    assert_true(mlc_all_finite(v, 4));
    assert_true(mlc_all_finite(v, 0));
    v[2] = NAN;
    assert_false(mlc_all_finite(v, 4));
    v[2] = -INFINITY;
    assert_false(mlc_all_finite(v, 4));
    assert_true(mlc_all_finite(v, 2));
    /* Every length up to 13 and every position of one bad value (the partial sums and the
     * tail), and +∞ and −∞ in different partial sums. */
    double w[13];
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int n = 1; n <= 13; n++)
        for (int at = 0; at < n; at++)
            for (int b = 0; b < 3; b++) {
                for (int i = 0; i < n; i++)
                    w[i] = (i % 3 - 1) * 1e300 + i;
                assert_true(mlc_all_finite(w, (size_t)n));
                w[at] = bad[b];
                assert_false(mlc_all_finite(w, (size_t)n));
                if (at + 1 < n) {
                    w[at + 1] = -w[at];
                    assert_false(mlc_all_finite(w, (size_t)n));
                }
            }
}

static void path_join_and_files(void **state) {
    (void)state;
    char buf[16];
    assert_int_equal(mlc_path_join(buf, sizeof buf, "dir", "name"), 1);
    assert_string_equal(buf, "dir/name");
    assert_int_equal(mlc_path_join(buf, 8, "dir", "name"), 0); /* truncated */
    assert_string_equal(buf, "dir/nam");
    char *p = mlc_path_join_alloc("a/b", "c.txt");
    assert_string_equal(p, "a/b/c.txt");
    mlc_free(p);

    char dir[] = "/tmp/mlc_test_base_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    mlc_path_join(path, sizeof path, dir, "t.txt");
    assert_false(mlc_file_exists(path));
    assert_null(mlc_file_read_text(path));
    FILE *f = fopen(path, "w");
    fputs("hello\n", f);
    fclose(f);
    assert_true(mlc_file_exists(path));
    assert_true(mlc_file_exists(dir));
    char *text = mlc_file_read_text(path);
    assert_string_equal(text, "hello\n");
    mlc_free(text);
    assert_null(mlc_file_read_text(dir)); /* not a regular file */
    unlink(path);
    rmdir(dir);
}

/* A = B Bᵀ + n I for a random B: positive definite, condition number of order n. */
static void random_spd(mlc_rng *rng, int n, double *A) {
    double *B = mlc_malloc(sizeof(double) * (size_t)n * n);
    for (int i = 0; i < n * n; i++)
        B[i] = mlc_rng_normal(rng);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double v = i == j ? n : 0;
            for (int k = 0; k < n; k++)
                v += B[i + n * k] * B[j + n * k];
            A[i + (size_t)n * j] = v;
        }
    mlc_free(B);
}

/* The model's factorization (sim_model.c): the factor agrees with LAPACK's dpotrf to rounding,
 * the multi-column solve leaves a residual at rounding level and gives each column the bits of
 * its own one-column solve, and the upper triangle is left alone. */
static void cholesky_spd_matches_lapack(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    for (int n = 1; n <= 80; n += (n < 8 ? 1 : 9)) {
        size_t nn = (size_t)n * n;
        double *A = mlc_malloc(sizeof(double) * nn), *L = mlc_malloc(sizeof(double) * nn);
        double *Ll = mlc_malloc(sizeof(double) * nn);
        double *X = mlc_malloc(sizeof(double) * (size_t)n * 3),
               *x1 = mlc_malloc(sizeof(double) * n);
        random_spd(&rng, n, A);
        for (size_t i = 0; i < nn; i++)
            L[i] = Ll[i] = A[i];
        for (int j = 0; j < n; j++)
            for (int i = 0; i < j; i++)
                L[i + (size_t)n * j] = -7; /* the strict upper triangle must stay */
        assert_int_equal(mlc_dense_cholesky_spd(L, (size_t)n, n), 0);
        assert_int_equal(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, Ll, n), 0);
        double lmax = 0, dmax = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                if (i < j) {
                    assert_true(L[i + (size_t)n * j] == -7);
                    continue;
                }
                lmax = fmax(lmax, fabs(Ll[i + (size_t)n * j]));
                dmax = fmax(dmax, fabs(L[i + (size_t)n * j] - Ll[i + (size_t)n * j]));
            }
        assert_true(dmax <= 1e-13 * lmax);
        for (int i = 0; i < 3 * n; i++)
            X[i] = mlc_rng_normal(&rng);
        double B[3 * 80];
        memcpy(B, X, sizeof(double) * 3 * (size_t)n);
        memcpy(x1, X + n, sizeof(double) * (size_t)n);
        mlc_dense_cholesky_spd_solve(L, (size_t)n, n, X, (size_t)n, 3);
        mlc_dense_cholesky_spd_solve(L, (size_t)n, n, x1, (size_t)n, 1);
        assert_memory_equal(x1, X + n, sizeof(double) * (size_t)n);
        for (int r = 0; r < 3; r++) {
            double res = 0, bn = 0;
            for (int i = 0; i < n; i++) {
                double v = -B[i + n * r];
                for (int k = 0; k < n; k++)
                    v += A[i + (size_t)n * k] * X[k + n * r];
                res = fmax(res, fabs(v));
                bn = fmax(bn, fabs(B[i + n * r]));
            }
            assert_true(res <= 1e-12 * bn * n);
        }
        mlc_free(A), mlc_free(L), mlc_free(Ll), mlc_free(X), mlc_free(x1);
    }
}

/* Not positive definite: the column of the first non-positive pivot, plus one. */
static void cholesky_spd_names_the_failing_pivot(void **state) {
    (void)state;
    enum { N = 6 };
    double A[N * N];
    for (int bad = 0; bad < N; bad++) {
        memset(A, 0, sizeof A);
        for (int i = 0; i < N; i++)
            A[i + N * i] = 2;
        for (int i = 0; i + 1 < N; i++) /* a tridiagonal coupling that keeps it definite */
            A[i + 1 + N * i] = A[i + N * (i + 1)] = -0.5;
        /* column 0: −1; later ones 0.1 − 0.25/d < 0, every earlier pivot d being ≤ 2 */
        A[bad + N * bad] = bad == 0 ? -1.0 : 0.1;
        assert_int_equal(mlc_dense_cholesky_spd(A, N, N), bad + 1);
    }
    double Anan[4] = {1, NAN, NAN, 1};
    assert_int_equal(mlc_dense_cholesky_spd(Anan, 2, 2), 2);
}

/* The damped factorization column by column (mlc_dense_cholesky's loop, written out here): the
 * reference whose bits the blocked paths must give. */
static void cholesky_by_columns(double *A, size_t ld, int n, double eps) {
    for (int j = 0; j < n; j++) {
        double *Lj = A + ld * (size_t)j;
        for (int k = 0; k < j; k++) {
            const double *Lk = A + ld * (size_t)k;
            const double l = Lk[j];
            for (int i = j; i < n; i++)
                Lj[i] -= l * Lk[i];
        }
        double ipiv = 1 / (Lj[j] > eps ? sqrt(Lj[j]) : sqrt(eps));
        Lj[j] = ipiv;
        for (int i = j + 1; i < n; i++)
            Lj[i] *= ipiv;
    }
}

/* The contact solver's factorizations, blocked from MLC_DENSE_BLOCKED_FROM columns on: the
 * whole factor, the factor from column j0 on (leading columns complete) and the factor around a
 * kept p×p block (rows appended to the kept columns) give the bits of the column-by-column loop
 * for sizes on both sides of the switch and blocks cut anywhere, in a leading dimension larger
 * than n; and the factor is LAPACK's dpotrf to rounding (with reciprocal pivots). */
static void blocked_cholesky_should_give_the_bits_of_the_column_loop(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 11);
    const int sizes[] = {5, 47, 48, 49, 64, 130, 301};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        const int n = sizes[t];
        const size_t ld = (size_t)n + 3, nn = ld * (size_t)n;
        double *A = mlc_malloc(sizeof(double) * (size_t)n * n),
               *ref = mlc_calloc(nn, sizeof(double));
        double *L = mlc_calloc(nn, sizeof(double)),
               *Ll = mlc_malloc(sizeof(double) * (size_t)n * n);
        random_spd(&rng, n, A);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                ref[i + ld * j] = A[i + (size_t)n * j];
        cholesky_by_columns(ref, ld, n, 1e-300);
        memcpy(L, ref, sizeof(double) * nn); /* whole: from the matrix */
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++)
                L[i + ld * j] = A[i + (size_t)n * j];
        mlc_dense_cholesky(L, ld, n, 1e-300);
        assert_memory_equal(L, ref, sizeof(double) * nn);
        const int cuts[] = {1, n / 3, n / 2 + 1, n - 1};
        for (int c = 0; c < 4; c++) {
            const int p = cuts[c];
            /* from p: columns < p complete, the rest the matrix's */
            memcpy(L, ref, sizeof(double) * nn);
            for (int j = p; j < n; j++)
                for (int i = j; i < n; i++)
                    L[i + ld * j] = A[i + (size_t)n * j];
            mlc_dense_cholesky_from(L, ld, n, p, 1e-300);
            assert_memory_equal(L, ref, sizeof(double) * nn);
            /* around a kept p×p block: rows from p on are the matrix's in every column */
            memcpy(L, ref, sizeof(double) * nn);
            for (int j = 0; j < n; j++)
                for (int i = j < p ? p : j; i < n; i++)
                    L[i + ld * j] = A[i + (size_t)n * j];
            mlc_dense_cholesky_rows(L, ld, n, p, 1e-300);
            assert_memory_equal(L, ref, sizeof(double) * nn);
        }
        memcpy(Ll, A, sizeof(double) * (size_t)n * n);
        assert_int_equal(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, Ll, n), 0);
        double worst = 0;
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) {
                const double mine = i == j ? 1 / L[i + ld * j] : L[i + ld * j];
                worst =
                    fmax(worst, fabs(mine - Ll[i + (size_t)n * j]) / fabs(Ll[j + (size_t)n * j]));
            }
        assert_true(worst < 1e-12);
        mlc_free(A), mlc_free(ref), mlc_free(L), mlc_free(Ll);
    }
}

/* A loop's stop signals: SIGINT and SIGTERM land in the flag (the process goes on), the flag
 * starts clear at each catch, and release puts back the handler that was there before. */
static volatile sig_atomic_t previous_handler_ran;
static void previous_handler(int sig) {
    previous_handler_ran = sig;
}
static void stop_signals_caught_and_handlers_restored(void **state) {
    (void)state;
    struct sigaction mine, old;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = previous_handler;
    sigemptyset(&mine.sa_mask);
    sigaction(SIGTERM, &mine, &old);
    mlc_stop_signals saved;
    mlc_stop_signals_catch(&saved);
    assert_int_equal(mlc_stop_signal(), 0);
    raise(SIGTERM);
    assert_int_equal(mlc_stop_signal(), SIGTERM);
    raise(SIGINT);
    assert_int_equal(mlc_stop_signal(), SIGINT);
    assert_int_equal(previous_handler_ran, 0);
    mlc_stop_signals_release(&saved);
    assert_int_equal(mlc_stop_signal(), SIGINT); /* the loop can still ask after release */
    mlc_stop_signals_catch(&saved);
    assert_int_equal(mlc_stop_signal(), 0); /* a new loop starts clear */
    mlc_stop_signals_release(&saved);
    raise(SIGTERM);
    assert_int_equal(previous_handler_ran, SIGTERM);
    sigaction(SIGTERM, &old, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_odd_even_in_place),
        cmocka_unit_test(all_finite_sees_nan_and_inf),
        cmocka_unit_test(edit_distance_should_count_single_edits),
        cmocka_unit_test(path_join_and_files),
        cmocka_unit_test(cholesky_spd_matches_lapack),
        cmocka_unit_test(cholesky_spd_names_the_failing_pivot),
        cmocka_unit_test(blocked_cholesky_should_give_the_bits_of_the_column_loop),
        cmocka_unit_test(stop_signals_caught_and_handlers_restored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
