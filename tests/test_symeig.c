/* test_symeig.c: mlc_symeig (CMA-ES's symmetric eigensolver) against LAPACKE_dsyev on random
 * symmetric matrices of sizes 1..60: eigenvalues, eigenvectors up to sign (where the gap to the
 * neighbouring eigenvalues makes them well defined), the residual |A v - λ v| and the
 * orthonormality of V; plus diagonal, repeated-eigenvalue and zero matrices. */
#include <lapacke.h>

#include "test_util.h"

#include "base.h"
#include "symeig.h"

static double frob(int n, const double *A) {
    double s = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        s += A[i] * A[i];
    return sqrt(s);
}

/* Residual max_j |A v_j - λ_j v_j| / |A|_F and orthonormality max |VᵀV - I|. */
static void check_decomposition(int n, const double *A, const double *V, const double *d) {
    double na = fmax(frob(n, A), 1e-300), worst_res = 0, worst_orth = 0;
    for (int j = 0; j < n; j++) {
        const double *v = V + (size_t)j * n;
        double r2 = 0;
        for (int i = 0; i < n; i++) {
            double av = 0;
            for (int k = 0; k < n; k++)
                av += A[i + (size_t)k * n] * v[k];
            r2 += (av - d[j] * v[i]) * (av - d[j] * v[i]);
        }
        worst_res = fmax(worst_res, sqrt(r2) / na);
        for (int k = 0; k <= j; k++) {
            double dot = 0;
            for (int i = 0; i < n; i++)
                dot += v[i] * V[i + (size_t)k * n];
            worst_orth = fmax(worst_orth, fabs(dot - (k == j)));
        }
    }
    if (!(worst_res <= 1e-13 * n)) fail_msg("n = %d: residual %.3g", n, worst_res);
    if (!(worst_orth <= 1e-13 * n)) fail_msg("n = %d: |VᵀV - I| = %.3g", n, worst_orth);
    for (int j = 0; j + 1 < n; j++)
        assert_true(d[j] <= d[j + 1]);
}

/* Decompose A with both solvers and compare. */
static void compare_with_dsyev(int n, const double *A) {
    double *V = malloc(sizeof(double) * n * n), *d = malloc(sizeof(double) * n);
    double *W = malloc(sizeof(double) * n * n), *dl = malloc(sizeof(double) * n);
    double *work = malloc(sizeof(double) * 2 * n);
    assert_int_equal(mlc_symeig(n, A, V, d, work), 0);
    check_decomposition(n, A, V, d);

    memcpy(W, A, sizeof(double) * n * n);
    assert_int_equal(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', n, W, n, dl), 0);
    double scale = fmax(fabs(dl[0]), fabs(dl[n - 1]));
    for (int j = 0; j < n; j++) {
        assert_near(d[j], dl[j], 1e-13 * n * scale);
        /* An eigenvector is defined up to sign; its error grows like eps |A| / gap. */
        double gap = INFINITY;
        if (j > 0) gap = fmin(gap, dl[j] - dl[j - 1]);
        if (j + 1 < n) gap = fmin(gap, dl[j + 1] - dl[j]);
        if (!(gap > 1e-6 * scale)) continue;
        const double *v = V + (size_t)j * n, *w = W + (size_t)j * n;
        double dot = 0;
        for (int i = 0; i < n; i++)
            dot += v[i] * w[i];
        double sgn = dot < 0 ? -1.0 : 1.0, tol = 1e-13 * n * scale / gap + 1e-14;
        for (int i = 0; i < n; i++)
            assert_near(v[i], sgn * w[i], tol);
    }
    free(V), free(d), free(W), free(dl), free(work);
}

static void random_symmetric(mlc_rng *rng, int n, double *A) {
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++)
            A[i + (size_t)j * n] = A[j + (size_t)i * n] = 2.0 * mlc_rng_uniform(rng) - 1.0;
}

static void random_matrices_match_dsyev(void **state) {
    (void)state;
    static const int sizes[] = {1, 2, 3, 4, 5, 7, 10, 16, 25, 40, 60};
    mlc_rng rng;
    mlc_rng_seed(&rng, 2024);
    double *A = malloc(sizeof(double) * 60 * 60);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int rep = 0; rep < 5; rep++) {
            int n = sizes[s];
            random_symmetric(&rng, n, A);
            compare_with_dsyev(n, A);
        }
    free(A);
}

/* Covariance-like matrices, as CMA-ES gives it: SPD with a condition number up to 1e12. */
static void ill_conditioned_spd_match_dsyev(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    for (int n = 2; n <= 60; n += 11) {
        double *Q = malloc(sizeof(double) * n * n), *A = calloc((size_t)n * n, sizeof(double));
        double *d = malloc(sizeof(double) * n), *work = malloc(sizeof(double) * 2 * n);
        random_symmetric(&rng, n, A);
        assert_int_equal(mlc_symeig(n, A, Q, d, work), 0); /* a random orthogonal Q */
        memset(A, 0, sizeof(double) * n * n);
        for (int k = 0; k < n; k++) {
            double lam = pow(1e12, (double)k / (n - 1));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++)
                    A[i + (size_t)j * n] += lam * Q[i + (size_t)k * n] * Q[j + (size_t)k * n];
        }
        for (int j = 0; j < n; j++) /* exactly symmetric */
            for (int i = j + 1; i < n; i++)
                A[j + (size_t)i * n] = A[i + (size_t)j * n];
        compare_with_dsyev(n, A);
        free(Q), free(A), free(d), free(work);
    }
}

static void special_matrices(void **state) {
    (void)state;
    enum { N = 6 };
    double A[N * N] = {0}, V[N * N], d[N], work[2 * N];
    /* Zero: eigenvalues 0, V orthonormal. */
    assert_int_equal(mlc_symeig(N, A, V, d, work), 0);
    check_decomposition(N, A, V, d);
    for (int i = 0; i < N; i++)
        assert_true(d[i] == 0.0);
    /* Diagonal, unsorted: sorted eigenvalues, unit vectors. */
    static const double diag[N] = {3, -1, 7, 0.5, 2, -4};
    for (int i = 0; i < N; i++)
        A[i + i * N] = diag[i];
    assert_int_equal(mlc_symeig(N, A, V, d, work), 0);
    check_decomposition(N, A, V, d);
    compare_with_dsyev(N, A);
    /* Identity plus a rank-one term: an eigenvalue repeated N - 1 times. */
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            A[i + j * N] = (i == j) + 0.5;
    assert_int_equal(mlc_symeig(N, A, V, d, work), 0);
    check_decomposition(N, A, V, d);
    compare_with_dsyev(N, A);
    for (int i = 0; i + 1 < N; i++)
        assert_near(d[i], 1.0, 1e-14);
    assert_near(d[N - 1], 1.0 + 0.5 * N, 1e-13);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_matrices_match_dsyev),
        cmocka_unit_test(ill_conditioned_spd_match_dsyev),
        cmocka_unit_test(special_matrices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
