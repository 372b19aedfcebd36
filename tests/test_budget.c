/* test_budget.c: the precompute's memory estimate (budget.h). No timing and no measured RSS:
 * the estimate must grow with the problem, cover the arrays whose sizes are known exactly (the
 * mesh, the operators, the results), and its factor size from CHOLMOD's analysis must cover
 * what the numeric factorization then allocates (CHOLMOD's own count of its memory in use). */
#include "budget.h"
#include "fem.h"
#include "internal/super_factor.h"
#include "test_util.h"

#include <cholmod.h>
#include <unistd.h>

/* Box meshes of growing size: the estimate grows in every argument. */
static void estimate_should_grow_with_the_problem(void **state) {
    (void)state;
    mlc_budget_estimate prev, e;
    mlc_budget_precompute(100, 400, 5, 10, 0, 0, &prev);
    for (int nv = 200; nv <= 2000000; nv *= 2) {
        mlc_budget_precompute(nv, 5 * nv, 5, 10, 0, 0, &e);
        assert_true(e.total > prev.total);
        assert_true(e.factor > prev.factor && e.factor_nnz > prev.factor_nnz);
        prev = e;
    }
    mlc_budget_estimate a, b;
    mlc_budget_precompute(50000, 250000, 5, 10, 0, 0, &a);
    mlc_budget_precompute(50000, 300000, 5, 10, 0, 0, &b); /* more tets */
    assert_true(b.total > a.total);
    mlc_budget_precompute(50000, 250000, 8, 10, 0, 0, &b); /* more skinning modes */
    assert_true(b.total > a.total);
    mlc_budget_precompute(50000, 250000, 5, 20, 0, 0, &b); /* more vibration modes */
    assert_true(b.total > a.total);
    mlc_budget_precompute(50000, 250000, 5, 10, 2 * a.factor, 1, &b); /* a larger factor */
    assert_true(b.total > a.total && b.factor_analyzed && !a.factor_analyzed);
    assert_near(a.total, a.mesh + a.operators + a.factor + a.lanczos + a.outputs, 1e-6 * a.total);
}

/* On a real mesh: the parts are at least the arrays they stand for, and the analyzed factor's
 * bytes cover what CHOLMOD allocates in the numeric factorization of the Hessian. */
static void estimate_should_cover_the_known_arrays_and_the_factor(void **state) {
    (void)state;
    mlc_mesh mesh = {0};
    mlc_fem fem = {0};
    mlc_err err;
    test_box_mesh(10, 8, 6, 0.1, &mesh);
    assert_int_equal(mlc_fem_init(&fem, &mesh, &err), MLC_OK);
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    cholmod_sparse *H = mlc_fem_elasticity_hessian(&mesh, &fem, 1.0, 1.0, &cc);
    cholmod_sparse *Lap = mlc_fem_laplacian(&mesh, &fem, NULL, &cc);
    assert_non_null(H);
    assert_non_null(Lap);
    int nv = mesh.nv, nt = mesh.nt, w = 5, nvib = 10;
    double nnzH = (double)cholmod_nnz(H, &cc), nnzLap = (double)cholmod_nnz(Lap, &cc);
    /* Make the Hessian definite (as K − σM is) and factorize it supernodally. */
    for (int j = 0; j < 3 * nv; j++)
        for (int p = ((int *)H->p)[j]; p < ((int *)H->p)[j + 1]; p++)
            if (((int *)H->i)[p] == j) ((double *)H->x)[p] += 1.0;
    cc.supernodal = CHOLMOD_SUPERNODAL;
    cholmod_factor *L = cholmod_analyze(H, &cc);
    assert_non_null(L);
    double lnz = cc.lnz, bytes = mlc_budget_factor_bytes(L, &cc);
    assert_true(bytes >= 8.0 * lnz);
    /* the split factorization's workspace beyond CHOLMOD's (super_factor.h): one thread's more
     * update block and maps per thread past the first */
    mlc_superfactor sf;
    assert_int_equal(mlc_superfactor_plan(&sf, L, 3, 0, &err), MLC_OK);
    assert_int_equal(sf.bins, 3);
    assert_true(mlc_budget_split_factor_bytes(L, 3) >=
                (sf.bins - 1) * (8.0 * (double)sf.csize + 4.0 * sf.n + 4.0 * sf.max_rows));
    assert_near(mlc_budget_split_factor_bytes(L, 1), 0, 0);
    mlc_superfactor_destroy(&sf);
    size_t before = cc.memory_inuse;
    assert_true(cholmod_factorize(H, L, &cc));
    assert_int_equal(cc.status, CHOLMOD_OK);
    assert_true(bytes >= (double)(cc.memory_inuse - before));

    mlc_budget_estimate e;
    mlc_budget_precompute(nv, nt, w, nvib, bytes, lnz, &e);
    assert_true(e.factor >= bytes);
    assert_near(e.factor_nnz, lnz, 0);
    assert_true(e.mesh >= 24.0 * nv + 16.0 * nt + 8.0 * nt + 96.0 * nt); /* X, T, vol, grad */
    assert_true(e.operators >= 12.0 * (2 * nnzH + nnzLap));              /* H, K − σM, L */
    assert_true(e.lanczos >= 8.0 * 3 * nv * (2 * nvib + 1));             /* basis ≥ 2nev+1 */
    assert_true(e.outputs >= 8.0 * nv * w + 8.0 * 3 * nv * nvib);        /* W, D */
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&H, &cc);
    cholmod_free_sparse(&Lap, &cc);
    cholmod_finish(&cc);
    mlc_fem_free(&fem);
    mlc_mesh_free(&mesh);
}

/* Over the bound: MLC_EINVAL naming the estimate, the bound and the fixes; no bound: OK. */
static void check_should_name_the_estimate_the_bound_and_the_fixes(void **state) {
    (void)state;
    mlc_budget_estimate e;
    mlc_budget_precompute(100000, 500000, 5, 10, 0, 0, &e);
    mlc_err err = {0};
    assert_int_equal(mlc_budget_check(&e, 0, 300000, &err), MLC_OK);
    assert_int_equal(mlc_budget_check(&e, e.total * 1.01, 300000, &err), MLC_OK);
    assert_int_equal(mlc_budget_check(&e, 1024.0 * 1024, 300000, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "more than the memory bound of 1.00 MB"));
    assert_non_null(strstr(err.msg, "n = 300000 DOFs"));
    assert_non_null(strstr(err.msg, "mesh.min_tets"));
    assert_non_null(strstr(err.msg, "--max-memory"));
}

static void sizes_should_parse_in_binary_units(void **state) {
    (void)state;
    double b = 0;
    mlc_err err;
    assert_int_equal(mlc_budget_parse("8G", &b, &err), MLC_OK);
    assert_near(b, 8.0 * 1024 * 1024 * 1024, 0);
    assert_int_equal(mlc_budget_parse("512m", &b, &err), MLC_OK);
    assert_near(b, 512.0 * 1024 * 1024, 0);
    assert_int_equal(mlc_budget_parse("1.5GB", &b, &err), MLC_OK);
    assert_near(b, 1.5 * 1024 * 1024 * 1024, 0);
    assert_int_equal(mlc_budget_parse("300000000", &b, &err), MLC_OK);
    assert_near(b, 3e8, 0);
    const char *bad[] = {"", "G", "abc", "-1G", "0", "5X", "1G2", "8GiB", "100", "2000T", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b = -1;
        assert_int_equal(mlc_budget_parse(bad[i], &b, &err), MLC_EINVAL);
        assert_near(b, -1, 0); /* untouched */
        assert_non_null(strstr(err.msg, "--max-memory"));
    }
    char text[32];
    mlc_budget_format(1.5 * 1024 * 1024 * 1024, text, sizeof text);
    assert_string_equal(text, "1.50 GB");
    mlc_budget_format(340.0 * 1024 * 1024, text, sizeof text);
    assert_string_equal(text, "340 MB");
}

/* The default bound is 80% of a limit that is at most the physical memory. */
static void default_bound_should_be_below_the_physical_memory(void **state) {
    (void)state;
    char what[128];
    double d = mlc_budget_default(what, sizeof what);
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    assert_true(d > 0 && d <= 0.8 * phys * (1 + 1e-12));
    assert_non_null(strstr(what, "80% of"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(estimate_should_grow_with_the_problem),
        cmocka_unit_test(estimate_should_cover_the_known_arrays_and_the_factor),
        cmocka_unit_test(check_should_name_the_estimate_the_bound_and_the_fixes),
        cmocka_unit_test(sizes_should_parse_in_binary_units),
        cmocka_unit_test(default_bound_should_be_below_the_physical_memory),
    };
    return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
