/* test_eigen.c: the ARPACK shift-invert eigensolver against dense LAPACKE_dsygvd, its
 * normalization, sign and determinism conventions, the dense fallback, and error paths. */
#include <lapacke.h>

#include "eigen.h"
#include "fem.h"
#include "test_util.h"

typedef struct problem {
    mlc_mesh mesh;
    mlc_fem fem;
    cholmod_common cc;
    cholmod_sparse *K;
    double *mass;
    int n;
} problem;

/* kind 0: scalar Laplacian; kind 1: elasticity Hessian (μ = 1, λ = 1) with per-DOF mass. */
static void problem_make(problem *p, int kind, int quadruped, double mu) {
    memset(p, 0, sizeof *p);
    if (quadruped)
        test_quadruped_mesh(0.1, &p->mesh);
    else
        test_box_mesh(5, 3, 2, 0.3, &p->mesh);
    assert_int_equal(mlc_fem_init(&p->fem, &p->mesh, NULL), MLC_OK);
    cholmod_start(&p->cc);
    p->cc.print = 0;
    int nv = p->mesh.nv;
    if (kind == 0) {
        p->n = nv;
        p->K = mlc_fem_laplacian(&p->mesh, &p->fem, NULL, &p->cc);
        p->mass = malloc(nv * sizeof(double));
        memcpy(p->mass, p->fem.vmass, nv * sizeof(double));
    } else {
        p->n = 3 * nv;
        p->K = mlc_fem_elasticity_hessian(&p->mesh, &p->fem, mu, 1.0, &p->cc);
        p->mass = malloc(3 * nv * sizeof(double));
        for (int i = 0; i < 3 * nv; i++)
            p->mass[i] = p->fem.vmass[i / 3];
    }
    assert_non_null(p->K);
}

static void problem_free(problem *p) {
    cholmod_free_sparse(&p->K, &p->cc);
    cholmod_finish(&p->cc);
    free(p->mass);
    mlc_fem_free(&p->fem);
    mlc_mesh_free(&p->mesh);
}

/* Reference: dense generalized solve of the full spectrum. */
static void dense_reference(const problem *p, double *w, double *Z) {
    int n = p->n;
    double *B = calloc((size_t)n * n, sizeof(double));
    memset(Z, 0, (size_t)n * n * sizeof(double));
    const int *Ap = p->K->p, *Ai = p->K->i;
    const double *Ax = p->K->x;
    for (int j = 0; j < n; j++) {
        for (int q = Ap[j]; q < Ap[j + 1]; q++) {
            Z[Ai[q] + (size_t)j * n] = Ax[q];
            Z[j + (size_t)Ai[q] * n] = Ax[q];
        }
        B[j + (size_t)j * n] = p->mass[j];
    }
    assert_int_equal(LAPACKE_dsygvd(LAPACK_COL_MAJOR, 1, 'V', 'U', n, Z, n, B, n, w), 0);
    free(B);
}

static double mdot(const double *m, const double *x, const double *y, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += m[i] * x[i] * y[i];
    return s;
}

/* Eigenvalues to 1e-8 relative (absolute 1e-12·λ_nev for the null ones), every vector
 * inside the reference eigenspace of its (possibly repeated) eigenvalue, M-orthonormal, sign
 * convention. */
static void check_against_dense(const problem *p, int nev, const double *ev, const double *X) {
    int n = p->n;
    double *w = malloc(n * sizeof(double)), *Z = malloc((size_t)n * n * sizeof(double));
    dense_reference(p, w, Z);
    /* Null eigenvalues are compared absolutely, to 1e-12 of the largest one asked for. */
    double floor_ = 1e-4 * w[nev - 1];
    for (int a = 0; a < nev; a++)
        assert_rel(ev[a], w[a], 1e-8, floor_);
    for (int a = 0; a < nev; a++) {
        const double *x = X + (size_t)a * n;
        /* Eigenspace of w[a]: reference eigenvalues within 1e-6 relative (or both ≈ 0). */
        double proj = 0;
        for (int b = 0; b < n; b++) {
            double tolb = 1e-6 * fmax(fabs(w[a]), w[nev - 1] * 1e-6);
            if (fabs(w[b] - w[a]) > tolb) continue;
            double d = mdot(p->mass, x, Z + (size_t)b * n, n);
            proj += d * d;
        }
        assert_near(proj, 1.0, 1e-8);
        for (int b = 0; b < nev; b++)
            assert_near(mdot(p->mass, x, X + (size_t)b * n, n), a == b ? 1.0 : 0.0, 1e-10);
        /* Largest |entry| positive, first such index. */
        int ib = 0;
        for (int i = 1; i < n; i++)
            if (fabs(x[i]) > fabs(x[ib])) ib = i;
        assert_true(x[ib] > 0);
    }
    for (int a = 1; a < nev; a++)
        assert_true(ev[a] >= ev[a - 1]);
    free(w);
    free(Z);
}

static void laplacian_modes_should_match_dense_solver(void **state) {
    (void)state;
    problem p;
    problem_make(&p, 0, 0, 1.0);
    int nev = 8;
    assert_true(p.n >= 3 * nev + 20); /* the ARPACK path, not the fallback */
    double *ev = malloc(nev * sizeof(double)), *X = malloc((size_t)p.n * nev * sizeof(double));
    mlc_eigen_info info;
    mlc_err err = {0};
    double sigma = mlc_eigen_default_shift(p.K, p.mass);
    assert_true(sigma < 0);
    mlc_status s = mlc_eigen_solve(p.K, p.mass, nev, sigma, ev, X, &info, &p.cc, &err);
    if (s != MLC_OK) fail_msg("%s", err.msg);
    assert_int_equal(info.dense, 0);
    assert_true(info.solves > 0);
    assert_true(info.nconv >= nev);
    assert_true(strcmp(info.ordering, "unknown") != 0 && info.ordering[0] != '\0');
    assert_near(ev[0], 0.0, 1e-10 * ev[1]);
    check_against_dense(&p, nev, ev, X);
    free(ev);
    free(X);
    problem_free(&p);
}

static void elasticity_modes_should_match_dense_and_be_deterministic(void **state) {
    (void)state;
    problem p;
    problem_make(&p, 1, 1, 1.0);
    int nev = 16;
    double *ev = malloc(nev * sizeof(double)), *X = malloc((size_t)p.n * nev * sizeof(double));
    double *ev2 = malloc(nev * sizeof(double)), *X2 = malloc((size_t)p.n * nev * sizeof(double));
    mlc_eigen_info info;
    mlc_err err = {0};
    double sigma = mlc_eigen_default_shift(p.K, p.mass);
    long live = mlc_alloc_live();
    mlc_status s = mlc_eigen_solve(p.K, p.mass, nev, sigma, ev, X, &info, &p.cc, &err);
    if (s != MLC_OK) fail_msg("%s", err.msg);
    assert_int_equal(mlc_alloc_live(), live);
    assert_int_equal(info.dense, 0);
    check_against_dense(&p, nev, ev, X);
    /* 6 rigid modes, far below the first elastic one. */
    for (int a = 0; a < 6; a++)
        assert_true(fabs(ev[a]) < 1e-9 * ev[6]);
    assert_int_equal(mlc_eigen_solve(p.K, p.mass, nev, sigma, ev2, X2, NULL, &p.cc, &err), MLC_OK);
    assert_memory_equal(ev, ev2, nev * sizeof(double));
    assert_memory_equal(X, X2, (size_t)p.n * nev * sizeof(double));
    free(ev);
    free(X);
    free(ev2);
    free(X2);
    problem_free(&p);
}

/* mlc_eigen_check_pairs passes the solver's pairs and catches a wrong one: an eigenvalue off
 * by 0.1%, a vector that is not an eigenvector, a vector with a rigid component. */
static void check_should_catch_a_wrong_eigenpair(void **state) {
    (void)state;
    problem p;
    problem_make(&p, 1, 1, 1.0);
    int n = p.n, nev = 16;
    double *ev = malloc(nev * sizeof(double)), *X = malloc((size_t)n * nev * sizeof(double));
    mlc_err err = {0};
    double sigma = mlc_eigen_default_shift(p.K, p.mass);
    if (mlc_eigen_solve(p.K, p.mass, nev, sigma, ev, X, NULL, &p.cc, &err) != MLC_OK)
        fail_msg("%s", err.msg);
    /* The elastic pairs (6..15) against the rigid ones (0..5) as Z. */
    double *E = ev + 6, *V = X + (size_t)n * 6, *Z = X;
    int ne = nev - 6;
    mlc_eigen_check c;
    long live = mlc_alloc_live();
    assert_int_equal(mlc_eigen_check_pairs(p.K, p.mass, ne, E, V, Z, 6, &c, &p.cc), MLC_OK);
    assert_int_equal(mlc_alloc_live(), live);
    assert_true(c.residual < 1e-9 && c.orthogonality < 1e-9);
    /* An eigenvalue off by 0.1%. */
    E[3] *= 1.001;
    assert_int_equal(mlc_eigen_check_pairs(p.K, p.mass, ne, E, V, Z, 6, &c, &p.cc), MLC_ENUMERIC);
    assert_int_equal(c.residual_at, 3);
    assert_true(c.residual > MLC_EIGEN_CHECK_TOL);
    E[3] /= 1.001;
    /* Two eigenvectors mixed (still M-orthonormal): neither is an eigenvector. */
    double *x = V + (size_t)n * 4, *y = V + (size_t)n * 5, h = sqrt(0.5);
    for (int i = 0; i < n; i++) {
        double a = x[i], b = y[i];
        x[i] = h * (a + b), y[i] = h * (a - b);
    }
    assert_int_equal(mlc_eigen_check_pairs(p.K, p.mass, ne, E, V, Z, 6, &c, &p.cc), MLC_ENUMERIC);
    assert_true(c.residual_at == 4 || c.residual_at == 5);
    for (int i = 0; i < n; i++) {
        double a = x[i], b = y[i];
        x[i] = h * (a + b), y[i] = h * (a - b);
    }
    assert_int_equal(mlc_eigen_check_pairs(p.K, p.mass, ne, E, V, Z, 6, &c, &p.cc), MLC_OK);
    /* A rigid motion mixed into a mode: the residual barely moves (K z = 0), M-orthogonality
     * to Z does not hold. */
    for (int i = 0; i < n; i++)
        V[(size_t)n * 2 + i] += 1e-3 * Z[(size_t)n * 1 + i];
    assert_int_equal(mlc_eigen_check_pairs(p.K, p.mass, ne, E, V, Z, 6, &c, &p.cc), MLC_ENUMERIC);
    assert_int_equal(c.orthogonality_at, 2);
    assert_true(c.orthogonality > MLC_EIGEN_CHECK_TOL);
    free(ev);
    free(X);
    problem_free(&p);
}

static void small_problem_should_use_dense_fallback(void **state) {
    (void)state;
    problem p;
    memset(&p, 0, sizeof p);
    test_box_mesh(2, 1, 1, 0.5, &p.mesh);
    assert_int_equal(mlc_fem_init(&p.fem, &p.mesh, NULL), MLC_OK);
    cholmod_start(&p.cc);
    p.n = p.mesh.nv; /* 12 */
    p.K = mlc_fem_laplacian(&p.mesh, &p.fem, NULL, &p.cc);
    p.mass = malloc(p.n * sizeof(double));
    memcpy(p.mass, p.fem.vmass, p.n * sizeof(double));
    int nev = 4;
    double ev[4], *X = malloc((size_t)p.n * nev * sizeof(double));
    mlc_eigen_info info;
    assert_int_equal(mlc_eigen_solve(p.K, p.mass, nev, -1e-3, ev, X, &info, &p.cc, NULL), MLC_OK);
    assert_int_equal(info.dense, 1);
    assert_string_equal(info.ordering, "dense");
    check_against_dense(&p, nev, ev, X);
    free(X);
    problem_free(&p);
}

static void bad_inputs_should_fail_with_a_reason(void **state) {
    (void)state;
    problem p;
    problem_make(&p, 1, 0, -1.0); /* μ = −1: K is indefinite */
    int nev = 8;
    double *ev = malloc(nev * sizeof(double)), *X = malloc((size_t)p.n * nev * sizeof(double));
    mlc_err err = {0};
    long live = mlc_alloc_live();
    assert_int_equal(mlc_eigen_solve(p.K, p.mass, nev, -1e-3, ev, X, NULL, &p.cc, &err),
                     MLC_ENOTSPD);
    assert_non_null(strstr(err.msg, "not positive definite"));
    assert_int_equal(mlc_alloc_live(), live);
    assert_int_equal(mlc_eigen_solve(p.K, p.mass, p.n, -1e-3, ev, X, NULL, &p.cc, &err),
                     MLC_EINVAL);
    assert_int_equal(mlc_eigen_solve(p.K, p.mass, 0, -1e-3, ev, X, NULL, &p.cc, &err), MLC_EINVAL);
    p.mass[5] = 0;
    assert_int_equal(mlc_eigen_solve(p.K, p.mass, nev, -1e-3, ev, X, NULL, &p.cc, &err),
                     MLC_EINVAL);
    assert_non_null(strstr(err.msg, "mass entry 5"));
    free(ev);
    free(X);
    problem_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(laplacian_modes_should_match_dense_solver),
        cmocka_unit_test(elasticity_modes_should_match_dense_and_be_deterministic),
        cmocka_unit_test(check_should_catch_a_wrong_eigenpair),
        cmocka_unit_test(small_problem_should_use_dense_fallback),
        cmocka_unit_test(bad_inputs_should_fail_with_a_reason),
    };
    return cmocka_run_group_tests_name("eigen", tests, NULL, NULL);
}
