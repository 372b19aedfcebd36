/* test_golden.c: golden determinism hashes. A rollout of the reduced simulator (contact,
 * actuation, the objective) from a fixed synthetic subspace, and a CMA-ES run on the Rosenbrock
 * function, each hashed over the exact bits of every state, every candidate and the result,
 * against values recorded when this test was written.
 *
 * The rollout and the optimizer use the project's own elementary functions (detmath.h) and are
 * compiled without FMA contraction; the step's dense kernels fuse their multiply-adds
 * explicitly, with the FMA instruction or its exact emulation (fma_exact.h). So these hashes
 * hold on any x86-64 machine, with or without FMA and AVX2 (MLC_NO_AVX2=1; MLC_NO_FMA=1, run by
 * ctest as test_golden_emulated_fma), with glibc's CPU variants masked and under valgrind
 * (.ci/run).
 * The subspace is synthetic (test_synthetic.h: no eigen-solver), and the model factors its
 * 4w×4w matrix with the project's own Cholesky (dense.h), not LAPACK's: OpenBLAS picks its
 * kernels by CPU model, and on a CPU it did not know (a newer Xeon, which it ran with generic
 * kernels) LAPACK's factor changed this hash. ctest runs this test a second time with
 * OpenBLAS's generic kernels forced (test_golden_generic_blas, OPENBLAS_CORETYPE=Prescott).
 *
 * A change of any recorded value is a change of results: say which and why in the commit that
 * updates it (print the new values with MLC_GOLDEN_PRINT=1). */
#include "test_util.h"

#include "cmaes.h"
#include "objective.h"
#include "sim.h"
#include "test_synthetic.h"

#define ROLLOUT_HASH 0xe38d3ab135e6cb71ULL
#define CMAES_HASH 0x4ea150da77f44035ULL

static int printing(void) {
    const char *p = getenv("MLC_GOLDEN_PRINT");
    return p && *p == '1';
}

static mlc_status hash_frame(void *user, int frame, double time, const double *z,
                             const double com[3], const double forward[3], int contacts) {
    MLC_UNUSED(frame), MLC_UNUSED(time), MLC_UNUSED(contacts), MLC_UNUSED(z);
    uint64_t *h = user;
    *h = mlc_hash64(*h, com, 3 * sizeof(double));
    *h = mlc_hash64(*h, forward, 3 * sizeof(double));
    return MLC_OK;
}

static void rollout_should_match_its_golden_hash(void **state) {
    (void)state;
    enum { NX = 8, NY = 4, NZ = 5, W = 3, M = 4, K = 2 };
    static unsigned char occ[NX * NY * NZ];
    memset(occ, 1, sizeof occ);
    const double origin[3] = {0, 0, 0};
    mlc_mesh mesh = {0};
    mlc_fem fem = {0};
    mlc_subspace sub;
    mlc_err err;
    assert_int_equal(mlc_mesh_from_voxels(NX, NY, NZ, occ, 0.1, origin, &mesh, &err), MLC_OK);
    assert_int_equal(mlc_fem_init(&fem, &mesh, &err), MLC_OK);
    synthetic_subspace(&mesh, &fem, W, M, 6, 16, &sub);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = 150;
    mlc_model *model;
    mlc_rollout *ro;
    assert_int_equal(mlc_model_create(&mesh, &fem, &sub, &set, &model, &err), MLC_OK);
    assert_int_equal(mlc_rollout_create(model, &ro), MLC_OK);
    double A[M * K], T[M * K], th[M * K];
    for (int i = 0; i < M * K; i++) { /* every mode, two sinusoids, fixed parameters */
        A[i] = (0.3 - 0.03 * i) / sub.grad_max[i / K];
        T[i] = 0.2 + 0.05 * i;
        th[i] = 0.125 * i;
    }
    mlc_actuation act = {M, K, A, T, th};
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.upright = 1, obj.effort = 0.01, obj.vibration = 1e-4, obj.work_penalty = 1e-3;
    for (int i = 0; i < M; i++)
        obj.a_max[i] = 0.3 / sub.grad_max[i];
    mlc_rollout_result res;
    uint64_t h = 0;
    assert_int_equal(mlc_rollout_run(ro, &act, &obj, hash_frame, &h, &res), MLC_OK);
    h = mlc_hash64(h, mlc_rollout_state(ro), sizeof(double) * (size_t)mlc_model_dim(model));
    h = mlc_hash64(h, &res.J, sizeof res.J);
    h = mlc_hash64(h, &res.J_align, sizeof res.J_align);
    h = mlc_hash64(h, &res.J_effort, sizeof res.J_effort);
    if (printing())
        print_message("rollout: J = %.17g, hash 0x%016llxULL\n", res.J, (unsigned long long)h);
    assert_int_equal(res.failed, 0);
    assert_true(h == ROLLOUT_HASH);
    mlc_rollout_destroy(ro);
    mlc_model_destroy(model);
    free_synthetic(&sub);
    mlc_fem_free(&fem);
    mlc_mesh_free(&mesh);
}

static double rosenbrock(const double *x, int n) {
    double f = 0;
    for (int i = 0; i + 1 < n; i++)
        f += 100 * (x[i + 1] - x[i] * x[i]) * (x[i + 1] - x[i] * x[i]) + (1 - x[i]) * (1 - x[i]);
    return f;
}

static void cmaes_should_match_its_golden_hash(void **state) {
    (void)state;
    enum { N = 8 };
    double x0[N], lo[N], hi[N];
    for (int i = 0; i < N; i++)
        x0[i] = -0.5, lo[i] = -3, hi[i] = 3;
    mlc_cmaes_settings s;
    mlc_cmaes_settings_default(&s, N);
    s.x0 = x0, s.sigma0 = 0.5, s.lower = lo, s.upper = hi, s.seed = 2024;
    s.max_generations = 600, s.restarts = 1;
    mlc_cmaes *es;
    mlc_err err;
    assert_int_equal(mlc_cmaes_create(&s, &es, &err), MLC_OK);
    uint64_t h = 0;
    double f[64];
    while (!mlc_cmaes_stop(es, NULL)) {
        const double *X = mlc_cmaes_ask(es);
        int lam = mlc_cmaes_lambda(es);
        assert_true(lam <= 64);
        h = mlc_hash64(h, X, sizeof(double) * (size_t)lam * N);
        for (int j = 0; j < lam; j++)
            f[j] = rosenbrock(X + (size_t)j * N, N);
        assert_int_equal(mlc_cmaes_tell(es, f), MLC_OK);
    }
    double best = mlc_cmaes_best_f(es), sigma = mlc_cmaes_sigma(es);
    h = mlc_hash64(h, mlc_cmaes_best_x(es), sizeof(double) * N);
    h = mlc_hash64(h, &best, sizeof best);
    h = mlc_hash64(h, &sigma, sizeof sigma);
    if (printing())
        print_message("cmaes: best f = %.17g, hash 0x%016llxULL\n", best, (unsigned long long)h);
    assert_true(best < 1e-3);
    assert_true(h == CMAES_HASH);
    mlc_cmaes_destroy(es);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rollout_should_match_its_golden_hash),
        cmocka_unit_test(cmaes_should_match_its_golden_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
