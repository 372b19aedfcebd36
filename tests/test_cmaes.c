/* test_cmaes.c: the CMA-ES against pycma 4.4.0 (pycma 4.4.0's constants constants, §11 reference
 * numbers), bound handling, termination, IPOP, determinism and checkpoints.
 *
 * Statistical tests use 11 seeds and compare the median evaluations to f < 1e-8 with pycma's
 * (different RNG, so only statistics can agree). Tests that take more than a few seconds run
 * only with MLC_SLOW_TESTS=1 (CI sets it); they are reported as skipped otherwise. */
#include "test_util.h"

#include <stdio.h>

#include "cmaes.h"

#define NSEEDS 11

static int slow_tests(void) {
    const char *v = getenv("MLC_SLOW_TESTS");
    return v && v[0] && strcmp(v, "0") != 0;
}

/* ---- test functions (as cma.ff) ---- */
static double f_sphere(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i];
    return s;
}
static double f_elli(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += pow(1e6, n > 1 ? (double)i / (n - 1) : 0.0) * x[i] * x[i];
    return s;
}
static double f_rosen(const double *x, int n) {
    double s = 0;
    for (int i = 0; i + 1 < n; i++) {
        double a = x[i] * x[i] - x[i + 1], b = 1 - x[i];
        s += 100 * a * a + b * b;
    }
    return s;
}
static double f_rastrigin(const double *x, int n) {
    double s = 10.0 * n;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i] - 10 * cos(2 * MLC_PI * x[i]);
    return s;
}
/* §11.4 boundary functions: c_i = -0.2 (even i), 0.3 (odd i). */
static double bc(int i) {
    return i % 2 ? 0.3 : -0.2;
}
static double f_sphere_in(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (x[i] - 0.3) * (x[i] - 0.3);
    return s;
}
static double f_sphere_bd(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (x[i] - bc(i)) * (x[i] - bc(i));
    return s;
}
static double f_elli_bd(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += pow(1e6, (double)i / (n - 1)) * (x[i] - bc(i)) * (x[i] - bc(i));
    return s;
}
static double fopt_bd(int n, int elli) {
    double s = 0;
    for (int i = 0; i < n; i += 2)
        s += (elli ? pow(1e6, (double)i / (n - 1)) : 1.0) * 0.04;
    return s;
}

typedef double (*objfn)(const double *, int);

/* Run to termination; returns the evaluations, *fbest the best f. */
static long run_es(mlc_cmaes *es, objfn f, double *fbest) {
    int n = mlc_cmaes_dim(es);
    double *fv = NULL;
    int cap = 0;
    while (!mlc_cmaes_stop(es, NULL)) {
        const double *X = mlc_cmaes_ask(es);
        assert_non_null(X);
        int lam = mlc_cmaes_lambda(es);
        if (lam > cap) {
            free(fv);
            cap = lam;
            fv = malloc((size_t)cap * sizeof *fv);
        }
        for (int k = 0; k < lam; k++)
            fv[k] = f(X + (size_t)k * n, n);
        assert_int_equal(mlc_cmaes_tell(es, fv), MLC_OK);
    }
    free(fv);
    if (fbest) *fbest = mlc_cmaes_best_f(es);
    return mlc_cmaes_evaluations(es);
}

static mlc_cmaes *make_es(int n, int lambda, const double *x0, double sigma0, uint64_t seed) {
    mlc_cmaes_settings s;
    mlc_cmaes_settings_default(&s, n);
    s.lambda = lambda;
    s.x0 = x0;
    s.sigma0 = sigma0;
    s.seed = seed;
    mlc_cmaes *es = NULL;
    mlc_err err;
    if (mlc_cmaes_create(&s, &es, &err) != MLC_OK) fail_msg("create: %s", err.msg);
    return es;
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- constants ---------------------------------------------------------------------------- */
typedef struct {
    int n, lambda, mu;
    double mueff, cs, damps, cc, c1, cmu, sum_w, sum_wneg, gap;
    int maxiter, tolstag;
} ref_consts;

/* Rows with lambda = 0 are pycma 4.4.0's constants's table (pycma 4.4.0); the lambda = 16 rows
 * other than N = 10 are not in that table: they come from a separate Python transcription of the
 * same formulas, which reproduces every table row. */
static const ref_consts REF[] = {
    {2, 0, 3, 2.028611, 0.573173, 1.573173, 0.624555, 0.1548154, 0.08559278, -1.207324, -2.207324,
     0.208, 1620, 146},
    {10, 0, 5, 3.167299, 0.319614, 1.319614, 0.294990, 0.01528382, 0.02355178, -0.648946, -1.648946,
     0.2575, 7775, 389},
    {10, 16, 8, 4.840915, 0.383440, 1.383440, 0.299575, 0.01509082, 0.04430888, -0.340582,
     -1.340582, 0.1684, 6437, 297},
    {20, 0, 6, 3.729459, 0.214350, 1.214350, 0.171767, 0.00437235, 0.00921656, -0.474402, -1.474402,
     0.3679, 22118, 788},
    {40, 0, 7, 4.540915, 0.137585, 1.137585, 0.093009, 0.00116943, 0.00340522, -0.343424, -1.343424,
     0.5465, 71552, 1779},
    {100, 0, 8, 5.096189, 0.065647, 1.065647, 0.038913, 0.00019480, 0.00068064, -0.286206,
     -1.286206, 1.1423, 377121, 5713},
    {2, 16, 8, 4.840915, 0.695150, 1.958161, 0.592243, 0.12713819, 0.31644360, 0.120826, -0.879174,
     0.1127, 1037, 117},
    {20, 16, 8, 4.840915, 0.245714, 1.245714, 0.173257, 0.00436176, 0.01349104, -0.323308,
     -1.323308, 0.2801, 19937, 659},
    {40, 16, 8, 4.840915, 0.142993, 1.142993, 0.093147, 0.00116923, 0.00372842, -0.313599,
     -1.313599, 0.5104, 69437, 1681},
    {100, 16, 8, 4.840915, 0.063435, 1.063435, 0.038891, 0.00019481, 0.00063359, -0.307465,
     -1.307465, 1.2071, 397937, 6350},
};

static void constants_should_match_pycma_table(void **state) {
    (void)state;
    for (size_t r = 0; r < sizeof REF / sizeof REF[0]; r++) {
        const ref_consts *t = &REF[r];
        double x0[100] = {0};
        mlc_cmaes *es = make_es(t->n, t->lambda, x0, 0.1, 1);
        mlc_cmaes_constants c;
        mlc_cmaes_get_constants(es, &c);
        int lam = t->lambda ? t->lambda : 4 + (int)floor(3 * log(t->n));
        assert_int_equal(c.lambda, lam);
        assert_int_equal(c.mu, t->mu);
        assert_near(c.mueff, t->mueff, 1e-6);
        assert_near(c.cs, t->cs, 1e-6);
        assert_near(c.damps, t->damps, 1e-6);
        assert_near(c.cc, t->cc, 1e-6);
        assert_near(c.c1, t->c1, 1e-6);
        assert_near(c.cmu, t->cmu, 1e-6);
        assert_near(c.sum_w, t->sum_w, 1e-6);
        assert_near(c.sum_wneg, t->sum_wneg, 1e-6);
        assert_near(c.eigen_gap, t->gap, 1e-3);
        assert_int_equal(c.maxiter, t->maxiter);
        assert_int_equal(c.tolstagnation, t->tolstag);
        /* Weight structure: mu positive summing to 1, decreasing throughout. */
        double sp = 0, sn = 0;
        for (int i = 0; i < c.lambda; i++) {
            if (i < c.mu) {
                assert_true(c.weights[i] > 0);
                sp += c.weights[i];
            } else {
                assert_true(c.weights[i] <= 0);
                sn += c.weights[i];
            }
            if (i) assert_true(c.weights[i] < c.weights[i - 1]);
        }
        assert_near(sp, 1.0, 1e-14);
        assert_near(sn, t->sum_wneg, 1e-6);
        /* chiN: exact for n <= 6, pycma's expansion otherwise. */
        double N = t->n;
        double chi = t->n <= 6 ? sqrt(2.0) * tgamma((N + 1) / 2) / tgamma(N / 2)
                               : sqrt(N) * (1 - 1 / (4 * N) + 1 / (26 * N * N));
        assert_near(c.chiN, chi, 1e-12);
        mlc_cmaes_destroy(es);
    }
    /* Full weight vectors for N = 10 (pycma 4.4.0's constants, 5 decimals). */
    static const double w10[10] = {0.45627,  0.27075,  0.16223,  0.08523,  0.02551,
                                   -0.08001, -0.22176, -0.34455, -0.45286, -0.54975};
    static const double w16[16] = {0.32844,  0.22206,  0.15983,  0.11568,  0.08144,  0.05345,
                                   0.02980,  0.00930,  -0.02600, -0.07394, -0.11730, -0.15688,
                                   -0.19330, -0.22701, -0.25840, -0.28776};
    double x0[10] = {0};
    mlc_cmaes *es = make_es(10, 0, x0, 0.1, 1);
    mlc_cmaes_constants c;
    mlc_cmaes_get_constants(es, &c);
    for (int i = 0; i < 10; i++)
        assert_near(c.weights[i], w10[i], 6e-6);
    mlc_cmaes_destroy(es);
    es = make_es(10, 16, x0, 0.1, 1);
    mlc_cmaes_get_constants(es, &c);
    for (int i = 0; i < 16; i++)
        assert_near(c.weights[i], w16[i], 6e-6);
    mlc_cmaes_destroy(es);
}

/* ---- statistics vs §11.1-11.2 ---------------------------------------------------------- */
typedef struct {
    const char *name;
    objfn f;
    int n, lambda;
    long ref_median;
} perf_case;

/* Evaluations to f <= 1e-8 over NSEEDS seeds from x0 = 0.1, sigma0 0.1 (population lambda,
 * 0 = default; the first `diagonal` generations diagonal), sorted; every seed must reach the
 * target. */
static void evals_to_target(const char *name, objfn f, int n, int lambda, int diagonal,
                            long ev[NSEEDS]) {
    double x0[64];
    for (int i = 0; i < n; i++)
        x0[i] = 0.1;
    for (int s = 0; s < NSEEDS; s++) {
        mlc_cmaes_settings st;
        mlc_cmaes_settings_default(&st, n);
        st.lambda = lambda;
        st.x0 = x0;
        st.sigma0 = 0.1;
        st.seed = (uint64_t)s + 1;
        st.ftarget = 1e-8;
        st.diagonal = diagonal;
        mlc_cmaes *es = NULL;
        assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
        double fb;
        ev[s] = run_es(es, f, &fb);
        const char *why;
        mlc_cmaes_stop(es, &why);
        if (!(fb <= 1e-8))
            fail_msg("%s n=%d diagonal %d seed %d: f = %g, stopped by %s", name, n, diagonal, s + 1,
                     fb, why);
        mlc_cmaes_destroy(es);
    }
    qsort(ev, NSEEDS, sizeof ev[0], cmp_long);
}

static void check_perf(const perf_case *pc) {
    long ev[NSEEDS];
    evals_to_target(pc->name, pc->f, pc->n, pc->lambda, 0, ev);
    long med = ev[NSEEDS / 2];
    print_message("%-7s n=%-3d lambda=%-3d median evals %6ld (pycma %6ld, ratio %.3f), "
                  "min %ld max %ld\n",
                  pc->name, pc->n, pc->lambda, med, pc->ref_median, (double)med / pc->ref_median,
                  ev[0], ev[NSEEDS - 1]);
    assert_true(fabs((double)med / pc->ref_median - 1.0) <= 0.15);
}

static void perf_cases(const perf_case *cases, size_t count) {
    for (size_t i = 0; i < count; i++)
        check_perf(&cases[i]);
}

static void default_popsize_should_match_pycma_evaluations(void **state) {
    (void)state;
    static const perf_case cases[] = {
        {"sphere", f_sphere, 10, 0, 1070}, {"sphere", f_sphere, 20, 0, 2028},
        {"elli", f_elli, 10, 0, 3720},     {"elli", f_elli, 20, 0, 12000},
        {"rosen", f_rosen, 10, 0, 4730},   {"rosen", f_rosen, 20, 0, 15732},
    };
    perf_cases(cases, sizeof cases / sizeof cases[0]);
}

static void popsize16_should_match_pycma_evaluations(void **state) {
    (void)state;
    static const perf_case cases[] = {
        {"sphere", f_sphere, 10, 16, 1328}, {"sphere", f_sphere, 20, 16, 2368},
        {"elli", f_elli, 10, 16, 3856},     {"elli", f_elli, 20, 16, 12384},
        {"rosen", f_rosen, 10, 16, 5440},   {"rosen", f_rosen, 20, 16, 17024},
    };
    perf_cases(cases, sizeof cases / sizeof cases[0]);
}

static void dim40_should_match_pycma_evaluations(void **state) {
    (void)state;
    if (!slow_tests()) skip();
    static const perf_case cases[] = {
        {"sphere", f_sphere, 40, 0, 3810},
        {"elli", f_elli, 40, 0, 46995},
    };
    perf_cases(cases, sizeof cases / sizeof cases[0]);
}

/* ---- IPOP on Rastrigin (§11.3) ------------------------------------------------------------ */
/* Hansen & Kern's convention (CMAES.md §11.3): x0 uniform in [1, 5]^10 from seed 1000 + s,
 * sigma0 2, 9 restarts, target 1e-8. Returns the evaluations spent. */
static long rastrigin10_restarts(int s, int bipop, double *fb, int *restarts) {
    enum { N = 10 };
    mlc_rng r;
    mlc_rng_seed(&r, 1000 + (uint64_t)s);
    double x0[N];
    for (int i = 0; i < N; i++)
        x0[i] = 1 + 4 * mlc_rng_uniform(&r);
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, N);
    st.x0 = x0;
    st.sigma0 = 2;
    st.seed = (uint64_t)s + 1;
    st.ftarget = 1e-8;
    st.restarts = 9;
    st.bipop = bipop;
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    long ev = run_es(es, f_rastrigin, fb);
    *restarts = mlc_cmaes_restarts_done(es);
    mlc_cmaes_destroy(es);
    return ev;
}

static void ipop_should_solve_rastrigin10(void **state) {
    (void)state;
    if (!slow_tests()) skip();
    long ev[NSEEDS];
    for (int s = 0; s < NSEEDS; s++) {
        double fb;
        int restarts;
        ev[s] = rastrigin10_restarts(s, 0, &fb, &restarts);
        if (!(fb <= 1e-8))
            fail_msg("rastrigin seed %d: f = %g after %d restarts", s + 1, fb, restarts);
    }
    qsort(ev, NSEEDS, sizeof ev[0], cmp_long);
    print_message("ipop rastrigin10: median evals %ld (pycma 53704), min %ld max %ld\n",
                  ev[NSEEDS / 2], ev[0], ev[NSEEDS - 1]);
    /* pycma's 53,704 is the median of its 11 seeds. Over 41 seeds this implementation's median
     * is 84,593 with the C library's math and 85,929 with its own (detmath.h): the same
     * distribution, whose 11-seed median ranges widely (53,969 and 86,726 for the two streams).
     * pycma's fmin2 also draws a fresh x0 for every restart, ours restarts from the same x0.
     * Every seed must be solved (above) and the median stay within twice pycma's. */
    assert_true(ev[NSEEDS / 2] <= 2.0 * 53704);
}

static void ipop_should_double_population_and_keep_best(void **state) {
    (void)state;
    double x0[4] = {3, 3, 3, 3};
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, 4);
    st.x0 = x0;
    st.sigma0 = 1;
    st.seed = 5;
    st.restarts = 2;
    st.maxiter = 30; /* each run ends on maxiter */
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    /* lambda0 = 4 + 3 ln 4 = 8.16 -> 8, 16, 32 (floor of the unrounded doubling). */
    const int lams[3] = {8, 16, 32};
    double fb_prev = INFINITY;
    for (int run = 0; run < 3; run++) {
        for (int g = 0; g < 30; g++) {
            const double *X = mlc_cmaes_ask(es);
            assert_non_null(X);
            assert_int_equal(mlc_cmaes_restarts_done(es), run);
            int lam = mlc_cmaes_lambda(es);
            assert_int_equal(lam, lams[run]);
            double f[1024];
            for (int k = 0; k < lam; k++)
                f[k] = f_rastrigin(X + 4 * k, 4);
            assert_int_equal(mlc_cmaes_tell(es, f), MLC_OK);
            assert_true(mlc_cmaes_best_f(es) <= fb_prev);
            fb_prev = mlc_cmaes_best_f(es);
            /* the run's own evaluations; a restart is pending only once it has ended */
            assert_int_equal(mlc_cmaes_run_evaluations(es), (long)(g + 1) * lams[run]);
            assert_int_equal(mlc_cmaes_restart_pending(es), g == 29 && run < 2);
        }
        assert_string_equal(mlc_cmaes_run_stop_reason(es), "maxiter");
        assert_int_equal(mlc_cmaes_stop(es, NULL), run == 2);
    }
    const char *why;
    assert_true(mlc_cmaes_stop(es, &why));
    assert_string_equal(why, "maxiter");
    assert_null(mlc_cmaes_ask(es));
    assert_int_equal(mlc_cmaes_evaluations(es), 30L * (8 + 16 + 32));
    assert_int_equal(mlc_cmaes_generation(es), 90);
    mlc_cmaes_destroy(es);
}

/* ---- bounds (§11.4, paper budget) ------------------------------------------------------ */
static void bounded_run(objfn f, int n, double fopt, uint64_t seed, double *err_out,
                        long *evals_to_target) {
    double x0[20], lo[20], hi[20];
    for (int i = 0; i < n; i++)
        x0[i] = 0.5, lo[i] = 0, hi[i] = 1;
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, n);
    st.lambda = 16;
    st.max_generations = 200;
    st.x0 = x0;
    st.sigma0 = 0.25;
    st.lower = lo;
    st.upper = hi;
    st.seed = seed;
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    double fv[16];
    *evals_to_target = -1;
    while (!mlc_cmaes_stop(es, NULL)) {
        const double *X = mlc_cmaes_ask(es);
        for (int k = 0; k < 16; k++) {
            for (int i = 0; i < n; i++) {
                assert_true(X[k * n + i] >= 0.0);
                assert_true(X[k * n + i] <= 1.0);
            }
            fv[k] = f(X + k * n, n);
        }
        mlc_cmaes_tell(es, fv);
        if (*evals_to_target < 0 && mlc_cmaes_best_f(es) - fopt < 1e-8)
            *evals_to_target = mlc_cmaes_evaluations(es);
        const double *m = mlc_cmaes_mean(es);
        for (int i = 0; i < n; i++)
            assert_true(m[i] >= 0.0 && m[i] <= 1.0);
    }
    const double *xb = mlc_cmaes_best_x(es);
    for (int i = 0; i < n; i++)
        assert_true(xb[i] >= 0.0 && xb[i] <= 1.0);
    assert_near(f(xb, n), mlc_cmaes_best_f(es), 0.0);
    *err_out = mlc_cmaes_best_f(es) - fopt;
    mlc_cmaes_destroy(es);
}

static void bounded_paper_budget_should_reach_pycma_quality(void **state) {
    (void)state;
    struct {
        const char *name;
        objfn f;
        int n, elli, boundary;
        long ref_evals;    /* pycma median evals to 1e-8, 0 = not reached */
        double max_median; /* bound on the median final f - fopt when not reached */
    } cases[] = {
        {"sphere-inside", f_sphere_in, 10, 0, 0, 1520, 0},
        {"sphere-inside", f_sphere_in, 20, 0, 0, 2640, 0},
        {"sphere-boundary", f_sphere_bd, 10, 0, 1, 1712, 0},
        {"sphere-boundary", f_sphere_bd, 20, 0, 1, 2960, 0},
        {"elli-boundary", f_elli_bd, 10, 1, 1, 0, 2e-3}, /* pycma median 1.3e-3 */
        {"elli-boundary", f_elli_bd, 20, 1, 1, 0, 60.0}, /* pycma median 5.1e1 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double errs[NSEEDS];
        long ev[NSEEDS];
        int ok = 0;
        double fopt = cases[c].boundary ? fopt_bd(cases[c].n, cases[c].elli) : 0.0;
        for (int s = 0; s < NSEEDS; s++) {
            bounded_run(cases[c].f, cases[c].n, fopt, (uint64_t)s + 1, &errs[s], &ev[s]);
            assert_true(errs[s] >= -1e-12); /* never better than the optimum: in bounds */
            ok += errs[s] < 1e-8;
        }
        qsort(errs, NSEEDS, sizeof errs[0], cmp_dbl);
        qsort(ev, NSEEDS, sizeof ev[0], cmp_long);
        print_message("%-15s n=%-2d success %2d/11, median evals %5ld (pycma %ld), f-fopt "
                      "q25 %.2g median %.2g q75 %.2g max %.2g\n",
                      cases[c].name, cases[c].n, ok, ev[NSEEDS / 2], cases[c].ref_evals, errs[2],
                      errs[5], errs[8], errs[10]);
        if (cases[c].ref_evals) {
            assert_int_equal(ok, NSEEDS);
            assert_true(ev[NSEEDS / 2] <= 1.15 * cases[c].ref_evals);
        } else {
            assert_true(errs[NSEEDS / 2] <= cases[c].max_median);
        }
    }
}

static void bounds_should_map_wild_samples_into_the_box(void **state) {
    (void)state;
    /* Huge sigma, mixed one- and two-sided bounds: every candidate feasible, and the
     * unbounded coordinate untouched by the transform. */
    double x0[4] = {0.0, 5.0, -1.0, 7.0};
    double lo[4] = {-1.0, 5.0, -INFINITY, -INFINITY};
    double hi[4] = {1.0, INFINITY, -1.0, INFINITY};
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, 4);
    st.x0 = x0;
    st.sigma0 = 1e3;
    st.lower = lo;
    st.upper = hi;
    st.maxstd_boundrange = 0; /* keep sigma huge */
    st.tolfacupx = 0;
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    /* The mean starts at x0 exactly up to rounding even on a bound. */
    const double *m = mlc_cmaes_mean(es);
    for (int i = 0; i < 4; i++)
        assert_near(m[i], x0[i], 1e-12);
    for (int g = 0; g < 20; g++) {
        const double *X = mlc_cmaes_ask(es);
        int lam = mlc_cmaes_lambda(es);
        double f[16];
        for (int k = 0; k < lam; k++) {
            const double *x = X + 4 * k;
            assert_true(x[0] >= -1.0 && x[0] <= 1.0);
            assert_true(x[1] >= 5.0);
            assert_true(x[2] <= -1.0);
            assert_true(isfinite(x[3]));
            f[k] = x[3] * x[3];
        }
        mlc_cmaes_tell(es, f);
    }
    mlc_cmaes_destroy(es);
}

/* ---- determinism, checkpoints --------------------------------------------------------- */
/* Hash of every candidate and the final state of a run of `gens` generations on rosen with
 * bounds (or until stop). If `save_at` >= 0 the object is saved after that many tells (and,
 * when `mid_ask`, after the following ask), destroyed, and reloaded. */
static int traced_bipop;    /* traced_run's restarts are BIPOP's (with a stall trigger) */
static int traced_diagonal; /* traced_run's diagonal phase (generations) */

static uint64_t traced_run(uint64_t seed, int gens, int save_at, int mid_ask, int restarts) {
    enum { N = 6 };
    double x0[N], lo[N], hi[N];
    for (int i = 0; i < N; i++)
        x0[i] = 0.5, lo[i] = -2, hi[i] = 2;
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, N);
    st.x0 = x0;
    st.sigma0 = 0.5;
    st.lower = lo;
    st.upper = hi;
    st.seed = seed;
    st.restarts = restarts;
    if (restarts) st.maxiter = 25;
    st.bipop = traced_bipop;
    if (traced_bipop) st.stall_generations = 12;
    st.diagonal = traced_diagonal;
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    uint64_t h = MLC_HASH_INIT;
    double f[1024]; /* lambda grows to 75 in IPOP's third restart, up to 150 with BIPOP */
    for (int g = 0; g < gens && !mlc_cmaes_stop(es, NULL); g++) {
        if (g == save_at && !mid_ask) {
            unsigned char *buf;
            size_t len;
            assert_int_equal(mlc_cmaes_save(es, &buf, &len), MLC_OK);
            mlc_cmaes_destroy(es);
            mlc_err err;
            if (mlc_cmaes_load(buf, len, &es, &err) != MLC_OK) fail_msg("load: %s", err.msg);
            mlc_free(buf);
        }
        const double *X = mlc_cmaes_ask(es);
        int lam = mlc_cmaes_lambda(es);
        if (g == save_at && mid_ask) {
            unsigned char *buf;
            size_t len;
            assert_int_equal(mlc_cmaes_save(es, &buf, &len), MLC_OK);
            mlc_cmaes_destroy(es);
            assert_int_equal(mlc_cmaes_load(buf, len, &es, NULL), MLC_OK);
            mlc_free(buf);
            X = mlc_cmaes_ask(es); /* same candidates, no new sampling */
        }
        h = mlc_hash64(h, X, sizeof(double) * N * (size_t)lam);
        for (int k = 0; k < lam; k++)
            f[k] = f_rosen(X + N * k, N);
        assert_int_equal(mlc_cmaes_tell(es, f), MLC_OK);
    }
    double s = mlc_cmaes_sigma(es), fb = mlc_cmaes_best_f(es);
    long ev = mlc_cmaes_evaluations(es);
    h = mlc_hash64(h, &s, sizeof s);
    h = mlc_hash64(h, &fb, sizeof fb);
    h = mlc_hash64(h, &ev, sizeof ev);
    h = mlc_hash64(h, mlc_cmaes_mean(es), sizeof(double) * N);
    h = mlc_hash64(h, mlc_cmaes_best_x(es), sizeof(double) * N);
    mlc_cmaes_destroy(es);
    return h;
}

static void same_seed_should_give_bit_identical_runs(void **state) {
    (void)state;
    assert_true(traced_run(3, 150, -1, 0, 0) == traced_run(3, 150, -1, 0, 0));
    assert_true(traced_run(3, 150, -1, 0, 0) != traced_run(4, 150, -1, 0, 0));
}

static void resume_should_continue_bit_identically(void **state) {
    (void)state;
    uint64_t ref = traced_run(9, 150, -1, 0, 0);
    assert_true(traced_run(9, 150, 0, 0, 0) == ref);
    assert_true(traced_run(9, 150, 1, 0, 0) == ref);
    assert_true(traced_run(9, 150, 37, 0, 0) == ref);
    assert_true(traced_run(9, 150, 37, 1, 0) == ref);
    /* Across IPOP restarts (maxiter 25 per run): save in the second and third run, and right
     * when a restart is pending. */
    uint64_t ref2 = traced_run(2, 140, -1, 0, 3);
    assert_true(ref2 != traced_run(2, 140, -1, 0, 0));
    assert_true(traced_run(2, 140, 25, 0, 3) == ref2);
    assert_true(traced_run(2, 140, 60, 1, 3) == ref2);
    assert_true(traced_run(2, 140, 90, 0, 3) == ref2); /* fourth run */
}

/* BIPOP draws its small runs' populations and step sizes from the object's generator: a
 * checkpoint in a small run, in a large one or with a restart pending continues exactly. */
static void bipop_resume_should_continue_bit_identically(void **state) {
    (void)state;
    traced_bipop = 1;
    uint64_t ref = traced_run(2, 160, -1, 0, 8);
    for (int at = 10; at < 160; at += 13) {
        if (traced_run(2, 160, at, at % 2, 8) != ref) fail_msg("bipop resume at %d differs", at);
    }
    traced_bipop = 0;
    assert_true(ref != traced_run(2, 160, -1, 0, 8));
}

/* One run per restart: its population, first sigma, regime and evaluations. */
typedef struct run_log {
    int lambda, small;
    double sigma;
    long evals, small_before, large_before;
} run_log;

/* The BIPOP schedule (CMAES.md §7): a small run whenever the small runs have spent fewer
 * evaluations than the large ones, with lambda between lambda0 and the last large run's
 * lambda / 2 * incpopsize^..., sigma0 10^(-2u) in [sigma0/100, sigma0], at most half the large
 * runs' evaluations; large runs double the population. */
static void bipop_should_interleave_small_runs_by_budget(void **state) {
    (void)state;
    enum { N = 4, RUNS = 64 };
    double x0[N] = {3, 3, 3, 3};
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, N);
    st.x0 = x0;
    st.sigma0 = 1;
    st.seed = 5;
    st.restarts = 3; /* large ones: small runs come on top */
    st.bipop = 1;
    st.maxiter = 30;
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    run_log rl[RUNS];
    memset(rl, 0, sizeof rl);
    long es_small = 0, es_large = 0;
    int nrun = 0;
    double *f = malloc(4096 * sizeof *f);
    while (!mlc_cmaes_stop(es, NULL)) {
        const double *X = mlc_cmaes_ask(es);
        int r = mlc_cmaes_restarts_done(es), lam = mlc_cmaes_lambda(es);
        assert_true(r < RUNS);
        if (r == nrun) { /* a new run */
            rl[r].lambda = lam;
            rl[r].small = mlc_cmaes_run_is_small(es);
            rl[r].sigma = mlc_cmaes_sigma(es);
            rl[r].small_before = es_small;
            rl[r].large_before = es_large;
            nrun++;
        }
        for (int k = 0; k < lam; k++)
            f[k] = f_rastrigin(X + (size_t)k * N, N);
        assert_int_equal(mlc_cmaes_tell(es, f), MLC_OK);
        rl[r].evals += lam;
        *(rl[r].small ? &es_small : &es_large) += lam;
    }
    free(f);
    int nsmall = 0, nlarge = 0, large_lam = 0;
    for (int r = 0; r < nrun; r++) {
        const run_log *l = &rl[r];
        print_message("bipop run %d: %s lambda %d sigma0 %.4g evals %ld\n", r,
                      l->small ? "small" : "large", l->lambda, l->sigma, l->evals);
        assert_int_equal(l->small, r > 0 && l->small_before < l->large_before);
        if (l->small) {
            nsmall++;
            assert_true(l->lambda >= 8 && l->lambda <= large_lam);
            assert_true(l->sigma >= 0.01 && l->sigma <= 1);
            assert_true(l->evals <= l->large_before / 2 + l->lambda);
        } else {
            assert_int_equal(l->lambda, (int)floor((4 + 3 * log(4.0)) * (1 << nlarge)));
            assert_true(l->sigma == 1);
            large_lam = l->lambda;
            nlarge++;
        }
    }
    assert_int_equal(nlarge, 4);
    assert_true(nsmall >= 3);
    assert_false(rl[nrun - 1].small); /* everything ends with the last large run */
    mlc_cmaes_destroy(es);
}

static double f_rastrigin_box(const double *x, int n) {
    /* Rastrigin on [-3, 7]^n seen through the box [0,1]^n: the optimum at x = 0.3, x0 = 0.5 on
     * a local optimum's slope (y = 2). */
    double y[64];
    for (int i = 0; i < n; i++)
        y[i] = 10 * x[i] - 3;
    return f_rastrigin(y, n);
}

/* The paper-like budget (popsize 16, 3,200 evaluations, [0,1]^n, sigma0 0.25) in 5-D, where one
 * run settles in a local optimum well within the budget: IPOP restarts on the collapse and
 * stall triggers (optimize's defaults) reach better Rastrigin values than one run; the budget is
 * never exceeded. (In 10-D one run still improves at 3,200 evaluations and restarts do not
 * help.) */
static void stall_restarts_should_improve_a_multimodal_function_in_a_budget(void **state) {
    (void)state;
    enum { N = 5, SEEDS = 9 };
    double x0[N], lo[N], hi[N];
    for (int i = 0; i < N; i++)
        x0[i] = 0.5, lo[i] = 0, hi[i] = 1;
    double fin[2][SEEDS];
    int better = 0;
    for (int mode = 0; mode < 3; mode++) {
        for (int s = 0; s < SEEDS; s++) {
            mlc_cmaes_settings st;
            mlc_cmaes_settings_default(&st, N);
            st.x0 = x0, st.lower = lo, st.upper = hi;
            st.lambda = 16;
            st.sigma0 = 0.25;
            st.seed = (uint64_t)s + 1;
            st.early_stop = 0;
            st.max_evaluations = 3200;
            if (mode > 0) {
                st.restarts = 8;
                st.bipop = mode == 2;
                st.collapse_std = 0.005;
                st.stall_generations = 80;
            }
            mlc_cmaes *es = NULL;
            assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
            /* As optimize's loop: a generation starts only when it fits in the budget. */
            double f[1024];
            while (!mlc_cmaes_stop(es, NULL)) {
                const double *X = mlc_cmaes_ask(es);
                int lam = mlc_cmaes_lambda(es);
                if (mlc_cmaes_evaluations(es) + lam > 3200) break;
                assert_true(lam <= 1024);
                for (int k = 0; k < lam; k++)
                    f[k] = f_rastrigin_box(X + (size_t)k * N, N);
                assert_int_equal(mlc_cmaes_tell(es, f), MLC_OK);
            }
            double fb = mlc_cmaes_best_f(es);
            assert_true(mlc_cmaes_evaluations(es) <= 3200);
            if (mode > 0) assert_true(mlc_cmaes_restarts_done(es) >= 1);
            fin[mode > 0][s] = fb;
            if (mode == 1 && fb < fin[0][s]) better++;
            mlc_cmaes_destroy(es);
        }
        double sorted[SEEDS];
        memcpy(sorted, fin[mode > 0], sizeof sorted);
        qsort(sorted, SEEDS, sizeof sorted[0], cmp_dbl);
        print_message("rastrigin box %d-D, 3200 evals, %s: median f %.4g (min %.4g max %.4g)\n", N,
                      mode == 0   ? "no restarts"
                      : mode == 1 ? "ipop"
                                  : "bipop",
                      sorted[SEEDS / 2], sorted[0], sorted[SEEDS - 1]);
        /* BIPOP's small runs restart at x0 with a small sigma, made for random starting points:
         * from the same x0 in this budget they are not better than one run (printed only). */
        if (mode != 1) continue;
        double base[SEEDS];
        memcpy(base, fin[0], sizeof base);
        qsort(base, SEEDS, sizeof base[0], cmp_dbl);
        assert_true(sorted[SEEDS / 2] < base[SEEDS / 2]);
    }
    print_message("ipop restarts better than one run for %d of %d seeds\n", better, SEEDS);
    assert_true(better > SEEDS / 2);
}

/* Hansen & Kern's convention (CMAES.md §11.3): pycma's BIPOP, restarts=9, solves all 11 seeds
 * with a median of 83702 evaluations, drawing a fresh x0 for each run; here every run starts
 * from the same x0, which leaves BIPOP's small runs less to find (hence the loose factor). */
static void bipop_should_solve_rastrigin10(void **state) {
    (void)state;
    if (!slow_tests()) skip();
    long ev[NSEEDS];
    int solved = 0;
    for (int s = 0; s < NSEEDS; s++) {
        double fb;
        int restarts;
        ev[s] = rastrigin10_restarts(s, 1, &fb, &restarts);
        if (fb <= 1e-8)
            solved++;
        else
            ev[s] = 100000000; /* unsolved: ranks last */
    }
    qsort(ev, NSEEDS, sizeof ev[0], cmp_long);
    print_message("bipop rastrigin10: %d/%d solved, median evals %ld (pycma 11/11, 83702), "
                  "min %ld\n",
                  solved, NSEEDS, ev[NSEEDS / 2], ev[0]);
    assert_true(solved >= 8);
    assert_true(ev[NSEEDS / 2] <= 2 * 83702);
}

static void corrupt_checkpoints_should_be_rejected(void **state) {
    (void)state;
    double x0[5] = {1, 2, 3, 4, 5};
    mlc_cmaes *es = make_es(5, 0, x0, 0.3, 11);
    double f[16];
    for (int g = 0; g < 12; g++) {
        const double *X = mlc_cmaes_ask(es);
        for (int k = 0; k < mlc_cmaes_lambda(es); k++)
            f[k] = f_sphere(X + 5 * k, 5);
        mlc_cmaes_tell(es, f);
    }
    unsigned char *buf;
    size_t len;
    assert_int_equal(mlc_cmaes_save(es, &buf, &len), MLC_OK);
    mlc_cmaes *es2 = NULL;
    mlc_err err;
    long live = mlc_alloc_live();
    /* Every truncation. */
    for (size_t l = 0; l < len; l++) {
        assert_int_equal(mlc_cmaes_load(buf, l, &es2, &err), MLC_EPARSE);
        assert_null(es2);
    }
    /* Every single-byte flip. */
    unsigned char *cp = malloc(len + 16);
    for (size_t i = 0; i < len; i++) {
        memcpy(cp, buf, len);
        cp[i] ^= 0x5a;
        assert_int_equal(mlc_cmaes_load(cp, len, &es2, &err), MLC_EPARSE);
    }
    /* Trailing garbage. */
    memcpy(cp, buf, len);
    memset(cp + len, 0, 16);
    assert_int_equal(mlc_cmaes_load(cp, len + 16, &es2, &err), MLC_EPARSE);
    /* A forged checkpoint (valid checksum) with absurd sizes or values. The settings start
     * after magic(8) + 3 u32: n is the first int, lambda the second; sigma (run state) is
     * found by value. */
    size_t off_n = 8 + 12;
    int bad_ints[] = {0, -1, 1 << 30};
    for (size_t b = 0; b < 3; b++) {
        memcpy(cp, buf, len);
        memcpy(cp + off_n, &bad_ints[b], sizeof(int));
        uint64_t h = mlc_hash64(MLC_HASH_INIT, cp, len - 8);
        memcpy(cp + len - 8, &h, 8);
        assert_int_equal(mlc_cmaes_load(cp, len, &es2, &err), MLC_EPARSE);
        memcpy(cp, buf, len);
        memcpy(cp + off_n + sizeof(int), &bad_ints[b], sizeof(int)); /* lambda */
        h = mlc_hash64(MLC_HASH_INIT, cp, len - 8);
        memcpy(cp + len - 8, &h, 8);
        if (bad_ints[b] != 0) assert_int_equal(mlc_cmaes_load(cp, len, &es2, &err), MLC_EPARSE);
    }
    double sig = mlc_cmaes_sigma(es), nan_ = NAN;
    size_t pos = 0;
    for (size_t i = off_n; i + 8 <= len; i++)
        if (memcmp(buf + i, &sig, 8) == 0) pos = i;
    assert_true(pos > 0);
    memcpy(cp, buf, len);
    memcpy(cp + pos, &nan_, 8);
    uint64_t h = mlc_hash64(MLC_HASH_INIT, cp, len - 8);
    memcpy(cp + len - 8, &h, 8);
    assert_int_equal(mlc_cmaes_load(cp, len, &es2, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "checkpoint"));
    assert_int_equal(mlc_alloc_live(), live); /* nothing leaked on the failure paths */
    /* The intact buffer still loads. */
    assert_int_equal(mlc_cmaes_load(buf, len, &es2, &err), MLC_OK);
    assert_near(mlc_cmaes_sigma(es2), sig, 0.0);
    free(cp);
    mlc_free(buf);
    mlc_cmaes_destroy(es2);
    mlc_cmaes_destroy(es);
}

/* ---- robustness and API contract ------------------------------------------------------ */
static void nan_values_should_rank_worst(void **state) {
    (void)state;
    /* NaN outside the ball |x| < 1.5: the run still converges; best f is never NaN. */
    double x0[5] = {0.5, 0.5, 0.5, 0.5, 0.5};
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, 5);
    st.x0 = x0;
    st.sigma0 = 1.0;
    st.seed = 1;
    st.ftarget = 1e-10;
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    double f[16];
    int nans = 0;
    while (!mlc_cmaes_stop(es, NULL)) {
        const double *X = mlc_cmaes_ask(es);
        for (int k = 0; k < mlc_cmaes_lambda(es); k++) {
            double v = f_sphere(X + 5 * k, 5);
            f[k] = v > 2.25 ? (double)NAN : v;
            nans += isnan(f[k]);
        }
        mlc_cmaes_tell(es, f);
        assert_false(isnan(mlc_cmaes_best_f(es)));
    }
    const char *why;
    mlc_cmaes_stop(es, &why);
    assert_string_equal(why, "ftarget");
    assert_true(nans > 0);
    mlc_cmaes_destroy(es);
    /* All NaN: stops on flat fitness after two generations, best f stays +inf at x0. */
    es = make_es(3, 0, x0, 1.0, 1);
    int g = 0;
    while (!mlc_cmaes_stop(es, NULL)) {
        mlc_cmaes_ask(es);
        for (int k = 0; k < mlc_cmaes_lambda(es); k++)
            f[k] = NAN;
        mlc_cmaes_tell(es, f);
        g++;
    }
    mlc_cmaes_stop(es, &why);
    assert_string_equal(why, "tolflatfitness");
    assert_int_equal(g, 2);
    assert_true(isinf(mlc_cmaes_best_f(es)));
    assert_near(mlc_cmaes_best_x(es)[0], 0.5, 0.0);
    mlc_cmaes_destroy(es);
}

/* ---- ties and early stops ------------------------------------------------------------ */
/* A plateau: f = 0 on the whole box [0,1]^4 except the ball |x - c| < 0.15 around
 * c = (0.85, ...), where f = |x - c|^2 - 0.0225 < 0; the secondary value |x - c| says which
 * point of the plateau is closer to the well (as -align_min says which tumbling rollout was
 * closer to walking). From x0 = (0.2, ...) with sigma0 = 0.05 no first sample reaches it. */
#define PLATEAU_N 4
static double plateau(const double *x, double *dist) {
    double d2 = 0;
    for (int i = 0; i < PLATEAU_N; i++)
        d2 += (x[i] - 0.85) * (x[i] - 0.85);
    *dist = sqrt(d2);
    return d2 < 0.0225 ? d2 - 0.0225 : 0.0;
}

/* Run the plateau; returns the best f, and the generations done in *gens. */
static double run_plateau(int early_stop, int use_tie, uint64_t seed, int *gens, const char **why) {
    double x0[PLATEAU_N], lo[PLATEAU_N], hi[PLATEAU_N], f[64], t[64];
    for (int i = 0; i < PLATEAU_N; i++)
        x0[i] = 0.2, lo[i] = 0.0, hi[i] = 1.0;
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, PLATEAU_N);
    st.x0 = x0;
    st.lower = lo;
    st.upper = hi;
    st.sigma0 = 0.05;
    st.seed = seed;
    st.max_generations = 150;
    st.early_stop = early_stop;
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    *gens = 0;
    while (!mlc_cmaes_stop(es, NULL)) {
        const double *X = mlc_cmaes_ask(es);
        for (int k = 0; k < mlc_cmaes_lambda(es); k++)
            f[k] = plateau(X + PLATEAU_N * k, &t[k]);
        assert_int_equal(mlc_cmaes_tell_ties(es, f, use_tie ? t : NULL), MLC_OK);
        (*gens)++;
    }
    mlc_cmaes_stop(es, why);
    double best = mlc_cmaes_best_f(es);
    mlc_cmaes_destroy(es);
    return best;
}

static void flat_generations_should_not_end_the_run_and_ties_should_move_it(void **state) {
    (void)state;
    int gens, found_tie = 0, found_plain = 0;
    const char *why;
    for (int s = 1; s <= 5; s++) {
        /* pycma's behaviour (early stops on): flat generations end the run at once. */
        double b = run_plateau(1, 0, (uint64_t)s, &gens, &why);
        assert_true(!strcmp(why, "tolfun") || !strcmp(why, "tolflatfitness"));
        assert_true(gens <= 2);
        assert_true(b == 0.0);
        /* Early stops off: all 150 generations run, flat or not. */
        b = run_plateau(0, 0, (uint64_t)s, &gens, &why);
        assert_string_equal(why, "max_generations");
        assert_int_equal(gens, 150);
        found_plain += b < 0;
        /* With the tie-breaker the plateau is ranked, and the search walks into the well. */
        b = run_plateau(0, 1, (uint64_t)s, &gens, &why);
        assert_int_equal(gens, 150);
        found_tie += b < -0.02; /* near the bottom, -0.0225 */
    }
    assert_int_equal(found_tie, 5);
    /* Without it, ranking by candidate index is a random walk at a shrinking step size. */
    assert_true(found_plain < found_tie);
}

static void ties_should_rank_lexicographically_and_pick_the_best_ever(void **state) {
    (void)state;
    /* One generation: equal f, the secondary value decides; f still decides first. */
    double x0[2] = {0, 0};
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, 2);
    st.x0 = x0;
    st.sigma0 = 1.0;
    st.lambda = 6;
    st.seed = 3;
    st.early_stop = 0; /* all-equal generations would end the run */
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    const double *X = mlc_cmaes_ask(es);
    double keep[12];
    memcpy(keep, X, sizeof keep);
    double f[6] = {0, 0, 0, 0, 0, 1}, t[6] = {5, 4, NAN, 1, 3, -100};
    assert_int_equal(mlc_cmaes_tell_ties(es, f, t), MLC_OK);
    assert_true(mlc_cmaes_best_f(es) == 0.0);
    assert_true(mlc_cmaes_best_tie(es) == 1.0);
    assert_true(mlc_cmaes_best_x(es)[0] == keep[6] && mlc_cmaes_best_x(es)[1] == keep[7]);
    /* A later tie in f with a better secondary value becomes the best-ever; a worse one not. */
    X = mlc_cmaes_ask(es);
    memcpy(keep, X, sizeof keep);
    double f2[6] = {0, 0, 0, 0, 0, 0}, t2[6] = {2, 2, 0.5, 2, 2, 2};
    assert_int_equal(mlc_cmaes_tell_ties(es, f2, t2), MLC_OK);
    assert_true(mlc_cmaes_best_tie(es) == 0.5);
    assert_true(mlc_cmaes_best_x(es)[0] == keep[4]);
    /* The tie-breaker state survives a checkpoint: equal continuation. */
    unsigned char *buf = NULL;
    size_t len = 0;
    assert_int_equal(mlc_cmaes_save(es, &buf, &len), MLC_OK);
    mlc_cmaes *es2 = NULL;
    assert_int_equal(mlc_cmaes_load(buf, len, &es2, NULL), MLC_OK);
    assert_true(mlc_cmaes_best_tie(es2) == 0.5);
    const double *A = mlc_cmaes_ask(es), *B = mlc_cmaes_ask(es2);
    assert_memory_equal(A, B, 12 * sizeof(double));
    /* Another format version is named as such. */
    uint32_t v = 1;
    memcpy(buf + 8, &v, sizeof v);
    mlc_err err;
    mlc_cmaes *es3 = NULL;
    assert_int_equal(mlc_cmaes_load(buf, len, &es3, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "format version 1"));
    mlc_free(buf);
    mlc_cmaes_destroy(es2);
    mlc_cmaes_destroy(es);
}

static void early_stops_should_only_happen_when_enabled(void **state) {
    (void)state;
    /* Sphere in 3-D converges within a few hundred generations; pycma's criteria end it
     * there (tolfun/tolx family). With early_stop = 0 the run goes on to its budget, the
     * state staying finite (no criterion, no breakdown). */
    double x0[3] = {1, 1, 1}, f[16];
    for (int early = 1; early >= 0; early--) {
        mlc_cmaes_settings st;
        mlc_cmaes_settings_default(&st, 3);
        st.x0 = x0;
        st.sigma0 = 0.5;
        st.seed = 2;
        st.max_generations = 2000;
        st.early_stop = early;
        mlc_cmaes *es = NULL;
        assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
        while (!mlc_cmaes_stop(es, NULL)) {
            const double *X = mlc_cmaes_ask(es);
            for (int k = 0; k < mlc_cmaes_lambda(es); k++)
                f[k] = f_sphere(X + 3 * k, 3);
            mlc_cmaes_tell(es, f);
        }
        const char *why;
        mlc_cmaes_stop(es, &why);
        if (early) {
            assert_true(mlc_cmaes_generation(es) < 2000);
            assert_true(strcmp(why, "max_generations") != 0);
        } else {
            assert_int_equal(mlc_cmaes_generation(es), 2000);
            assert_string_equal(why, "max_generations");
            assert_true(mlc_cmaes_best_f(es) < 1e-20);
        }
        mlc_cmaes_destroy(es);
    }
}

static void budget_and_call_order_should_be_enforced(void **state) {
    (void)state;
    double x0[3] = {1, 1, 1}, f[16];
    mlc_cmaes_settings st;
    mlc_cmaes_settings_default(&st, 3);
    st.x0 = x0;
    st.sigma0 = 0.5;
    st.max_generations = 7;
    st.restarts = 3; /* a budget ends everything, restarts or not */
    mlc_cmaes *es = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, NULL), MLC_OK);
    assert_int_equal(mlc_cmaes_tell(es, f), MLC_EINVAL); /* no ask yet */
    const double *X1 = mlc_cmaes_ask(es);
    double first = X1[0];
    assert_true(mlc_cmaes_ask(es) == X1 && X1[0] == first); /* ask twice: same population */
    long allocs = mlc_alloc_count();
    int g = 0;
    for (;;) {
        const double *X = mlc_cmaes_ask(es);
        for (int k = 0; k < mlc_cmaes_lambda(es); k++)
            f[k] = f_sphere(X + 3 * k, 3);
        mlc_cmaes_tell(es, f);
        g++;
        if (mlc_cmaes_stop(es, NULL)) break;
    }
    assert_int_equal(mlc_alloc_count(), allocs); /* generations do not allocate */
    const char *why;
    assert_true(mlc_cmaes_stop(es, &why));
    assert_string_equal(why, "max_generations");
    assert_int_equal(g, 7);
    assert_int_equal(mlc_cmaes_generation(es), 7);
    assert_int_equal(mlc_cmaes_restarts_done(es), 0);
    assert_null(mlc_cmaes_ask(es));
    mlc_cmaes_destroy(es);
}

static void invalid_settings_should_be_rejected(void **state) {
    (void)state;
    double x0[2] = {0.5, 2.0}, lo[2] = {0, 0}, hi[2] = {1, 1};
    mlc_cmaes_settings st;
    mlc_cmaes *es = NULL;
    mlc_err err;
    mlc_cmaes_settings_default(&st, 2);
    st.x0 = x0;
    st.sigma0 = 0.1;
    st.lower = lo;
    st.upper = hi;
    assert_int_equal(mlc_cmaes_create(&st, &es, &err), MLC_EINVAL); /* x0[1] outside */
    assert_non_null(strstr(err.msg, "x0[1]"));
    x0[1] = 0.5;
    hi[0] = 0;
    assert_int_equal(mlc_cmaes_create(&st, &es, &err), MLC_EINVAL); /* lower == upper */
    hi[0] = 1;
    st.sigma0 = 0;
    assert_int_equal(mlc_cmaes_create(&st, &es, &err), MLC_EINVAL);
    st.sigma0 = 0.1;
    st.lambda = 1;
    assert_int_equal(mlc_cmaes_create(&st, &es, &err), MLC_EINVAL);
    st.lambda = 0;
    st.n = 0;
    assert_int_equal(mlc_cmaes_create(&st, &es, &err), MLC_EINVAL);
    st.n = 2;
    st.x0 = NULL;
    assert_int_equal(mlc_cmaes_create(&st, &es, &err), MLC_EINVAL);
    st.x0 = x0;
    assert_int_equal(mlc_cmaes_create(&st, &es, &err), MLC_OK);
    mlc_cmaes_destroy(es);
    /* Allocation failure at every point of create is reported, not crashed on. */
    for (long k = 1; k < 40; k++) {
        mlc_alloc_fail_after(k);
        mlc_status s = mlc_cmaes_create(&st, &es, &err);
        mlc_alloc_fail_after(0);
        assert_true(s == MLC_OK || s == MLC_ENOMEM);
        mlc_cmaes_destroy(es);
        es = NULL;
    }
}

/* A rotated ellipsoid exercises the eigensolver with a full covariance: CMA-ES needs the same
 * effort as on the axis-parallel one (rotation invariance). */
static double rot[10 * 10];
static double f_rot_elli(const double *x, int n) {
    double y[10];
    for (int i = 0; i < n; i++) {
        y[i] = 0;
        for (int j = 0; j < n; j++)
            y[i] += rot[i * n + j] * x[j];
    }
    return f_elli(y, n);
}

/* rot: a random orthogonal N × N matrix (Gram-Schmidt on normal samples of seed 77). */
static void make_rotation(void) {
    enum { N = 10 };
    mlc_rng r;
    mlc_rng_seed(&r, 77);
    for (int i = 0; i < N * N; i++)
        rot[i] = mlc_rng_normal(&r);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < i; j++) {
            double d = 0;
            for (int k = 0; k < N; k++)
                d += rot[i * N + k] * rot[j * N + k];
            for (int k = 0; k < N; k++)
                rot[i * N + k] -= d * rot[j * N + k];
        }
        double nn = 0;
        for (int k = 0; k < N; k++)
            nn += rot[i * N + k] * rot[i * N + k];
        for (int k = 0; k < N; k++)
            rot[i * N + k] /= sqrt(nn);
    }
}

static void rotated_ellipsoid_should_be_solved_like_the_separable_one(void **state) {
    (void)state;
    enum { N = 10 };
    make_rotation();
    perf_case pc = {"rotelli", f_rot_elli, N, 0, 3720};
    check_perf(&pc);
}

/* ---- the diagonal phase (sep-CMA-ES, Ros & Hansen 2008; pycma's CMA_diagonal) ------------ */
/* Median evaluations to f <= 1e-8 (evals_to_target) with the first `diagonal` generations of
 * the run diagonal. */
static long median_evals(objfn f, int n, int diagonal) {
    long ev[NSEEDS];
    evals_to_target("diagonal", f, n, 0, diagonal, ev);
    return ev[NSEEDS / 2];
}

/* On a separable problem the diagonal learns the scaling (n + 2)/3 times faster (7.3 at
 * n = 20), so the ill-conditioned ellipsoid, whose cost is learning its 1e6 scaling, must take
 * well under half the evaluations of the full update (measured: 0.36 of them), and the sphere,
 * with nothing to learn, no more. On the rotated ellipsoid a diagonal phase of 60 generations
 * must not cost the full update its result: the run continues from the learned diagonal and
 * solves it about as fast as the full one. */
static void diagonal_phase_should_solve_separable_problems_faster(void **state) {
    (void)state;
    long full = median_evals(f_elli, 20, 0), sep = median_evals(f_elli, 20, 1000000);
    print_message("elli n=20: full %ld, diagonal %ld evaluations (ratio %.2f)\n", full, sep,
                  (double)sep / full);
    assert_true(sep * 2 < full);
    long sph_full = median_evals(f_sphere, 20, 0), sph_sep = median_evals(f_sphere, 20, 1000000);
    print_message("sphere n=20: full %ld, diagonal %ld\n", sph_full, sph_sep);
    assert_true(sph_sep < sph_full * 1.15); /* nothing to learn: no slower than full */
    enum { N = 10 };
    make_rotation();
    long rot_full = median_evals(f_rot_elli, N, 0), rot_phase = median_evals(f_rot_elli, N, 60);
    print_message("rotated elli n=10: full %ld, 60 diagonal generations first %ld\n", rot_full,
                  rot_phase);
    assert_true(rot_phase < rot_full * 1.3);
}

/* A checkpoint inside the diagonal phase, at its last generation and after it continues
 * bit-identically, and the phase changes the run. */
static void diagonal_resume_should_continue_bit_identically(void **state) {
    (void)state;
    traced_diagonal = 20;
    uint64_t ref = traced_run(9, 60, -1, 0, 0);
    assert_true(traced_run(9, 60, 7, 0, 0) == ref);
    assert_true(traced_run(9, 60, 19, 1, 0) == ref);
    assert_true(traced_run(9, 60, 20, 0, 0) == ref);
    assert_true(traced_run(9, 60, 33, 1, 0) == ref);
    /* restarts start a new diagonal phase: across runs too */
    uint64_t ref2 = traced_run(2, 140, -1, 0, 3);
    assert_true(traced_run(2, 140, 30, 1, 3) == ref2);
    traced_diagonal = 0;
    assert_true(ref != traced_run(9, 60, -1, 0, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constants_should_match_pycma_table),
        cmocka_unit_test(default_popsize_should_match_pycma_evaluations),
        cmocka_unit_test(popsize16_should_match_pycma_evaluations),
        cmocka_unit_test(dim40_should_match_pycma_evaluations),
        cmocka_unit_test(rotated_ellipsoid_should_be_solved_like_the_separable_one),
        cmocka_unit_test(diagonal_phase_should_solve_separable_problems_faster),
        cmocka_unit_test(diagonal_resume_should_continue_bit_identically),
        cmocka_unit_test(ipop_should_solve_rastrigin10),
        cmocka_unit_test(ipop_should_double_population_and_keep_best),
        cmocka_unit_test(bipop_should_interleave_small_runs_by_budget),
        cmocka_unit_test(bipop_should_solve_rastrigin10),
        cmocka_unit_test(stall_restarts_should_improve_a_multimodal_function_in_a_budget),
        cmocka_unit_test(bipop_resume_should_continue_bit_identically),
        cmocka_unit_test(bounded_paper_budget_should_reach_pycma_quality),
        cmocka_unit_test(bounds_should_map_wild_samples_into_the_box),
        cmocka_unit_test(same_seed_should_give_bit_identical_runs),
        cmocka_unit_test(resume_should_continue_bit_identically),
        cmocka_unit_test(corrupt_checkpoints_should_be_rejected),
        cmocka_unit_test(nan_values_should_rank_worst),
        cmocka_unit_test(flat_generations_should_not_end_the_run_and_ties_should_move_it),
        cmocka_unit_test(ties_should_rank_lexicographically_and_pick_the_best_ever),
        cmocka_unit_test(early_stops_should_only_happen_when_enabled),
        cmocka_unit_test(budget_and_call_order_should_be_enforced),
        cmocka_unit_test(invalid_settings_should_be_rejected),
    };
    return cmocka_run_group_tests_name("cmaes", tests, NULL, NULL);
}
