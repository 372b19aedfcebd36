/* test_polish.c: the gradient polish (polish.h) on smooth test functions: it improves a
 * quadratic and Rosenbrock from given points, never returns a worse point than it started
 * from, stays in the box, and is a pure function of the values it is given. */
#include "test_util.h"

#include "polish.h"

typedef struct fn_ctx {
    int kind; /* 0 quadratic, 1 Rosenbrock, 2 rough (a step function), 3 NaN everywhere */
    int n;
    long calls, points;
    double lo[8], hi[8]; /* every scored point must lie in the box */
} fn_ctx;

static double fn_value(const fn_ctx *c, const double *x) {
    switch (c->kind) {
    case 0: { /* minimum at (0.3, 2.5, -0.7, 0.1): the second coordinate beyond the box */
        const double m[4] = {0.3, 2.5, -0.7, 0.1}, w[4] = {1, 3, 0.5, 10};
        double f = 0;
        for (int i = 0; i < c->n; i++)
            f += w[i] * (x[i] - m[i]) * (x[i] - m[i]);
        return f;
    }
    case 1:
        return 100 * (x[1] - x[0] * x[0]) * (x[1] - x[0] * x[0]) + (1 - x[0]) * (1 - x[0]);
    case 2:
        return floor(4 * x[0]) + floor(4 * x[1]);
    default:
        return NAN;
    }
}

static void fn_eval(void *user, const double *X, int npts, double *f) {
    fn_ctx *c = user;
    c->calls++;
    c->points += npts;
    for (int q = 0; q < npts; q++) {
        const double *x = X + (size_t)q * c->n;
        for (int i = 0; i < c->n; i++) {
            assert_true(x[i] >= c->lo[i]);
            assert_true(x[i] <= c->hi[i]);
        }
        f[q] = fn_value(c, x);
    }
}

static void polish_should_improve_a_quadratic_and_respect_the_box(void **state) {
    (void)state;
    fn_ctx c = {.kind = 0, .n = 4, .lo = {-1, -1, -1, -1}, .hi = {1, 1, 1, 1}};
    const double x0[4] = {-0.8, 0.0, 0.6, 0.9};
    double x[4], trail[41 * 4];
    int nt = 0;
    mlc_polish_report rep;
    assert_int_equal(mlc_polish_run(&(mlc_polish_def){4, c.lo, c.hi, 40, fn_eval, &c}, x0, NAN, x,
                                    trail, &nt, &rep, NULL),
                     MLC_OK);
    double f0 = fn_value(&c, x0), f1 = fn_value(&c, x);
    assert_true(rep.f_before == f0);
    assert_true(rep.f_after == f1);
    assert_true(f1 < 6.75 + 0.05); /* the box minimum: 3 (1 − 2.5)² */
    /* The unconstrained minimum of coordinate 1 (2.5) lies outside: it ends at the bound. */
    assert_true(x[1] == 1.0);
    assert_near(x[0], 0.3, 0.05);
    assert_near(x[3], 0.1, 0.05);
    assert_true(rep.evaluations == c.points);
    /* The trail starts at x0 and ends at the result, each point better than the last. */
    assert_true(nt == rep.accepted + 1);
    assert_memory_equal(trail, x0, sizeof x0);
    assert_memory_equal(trail + 4 * (nt - 1), x, sizeof x);
    for (int k = 1; k < nt; k++)
        assert_true(fn_value(&c, trail + 4 * k) < fn_value(&c, trail + 4 * (k - 1)));
    print_message("quadratic: f %.4g -> %.4g in %d steps, %ld points\n", f0, f1, rep.steps,
                  rep.evaluations);
}

static void polish_should_improve_rosenbrock_deterministically(void **state) {
    (void)state;
    fn_ctx c = {.kind = 1, .n = 2, .lo = {-2, -2}, .hi = {2, 2}};
    const double x0[2] = {-1.2, 1.0};
    double x[2], x2[2];
    mlc_polish_report rep, rep2;
    assert_int_equal(mlc_polish_run(&(mlc_polish_def){2, c.lo, c.hi, 30, fn_eval, &c}, x0, NAN, x,
                                    NULL, NULL, &rep, NULL),
                     MLC_OK);
    assert_true(rep.f_after < rep.f_before);
    assert_true(rep.f_after < 0.5 * rep.f_before);
    assert_true(fn_value(&c, x) == rep.f_after);
    /* Same values, same bits. */
    assert_int_equal(mlc_polish_run(&(mlc_polish_def){2, c.lo, c.hi, 30, fn_eval, &c}, x0, NAN, x2,
                                    NULL, NULL, &rep2, NULL),
                     MLC_OK);
    assert_memory_equal(x, x2, sizeof x);
    print_message("Rosenbrock: f %.4g -> %.4g\n", rep.f_before, rep.f_after);
}

static void polish_should_never_return_a_worse_point(void **state) {
    (void)state;
    double x[2];
    mlc_polish_report rep;
    /* At the minimum of a quadratic in the box: nothing to gain, x0 back bit for bit. */
    fn_ctx q = {.kind = 0, .n = 2, .lo = {-1, 2.4}, .hi = {1, 2.6}};
    const double m[2] = {0.3, 2.5};
    assert_int_equal(mlc_polish_run(&(mlc_polish_def){2, q.lo, q.hi, 10, fn_eval, &q}, m, NAN, x,
                                    NULL, NULL, &rep, NULL),
                     MLC_OK);
    assert_memory_equal(x, m, sizeof m);
    assert_true(rep.f_after == rep.f_before);
    /* A step function: zero differences inside a plateau, no step taken. */
    fn_ctx r = {.kind = 2, .n = 2, .lo = {0, 0}, .hi = {1, 1}};
    const double p[2] = {0.6, 0.6};
    assert_int_equal(mlc_polish_run(&(mlc_polish_def){2, r.lo, r.hi, 10, fn_eval, &r}, p, NAN, x,
                                    NULL, NULL, &rep, NULL),
                     MLC_OK);
    assert_true(rep.f_after <= rep.f_before);
    assert_true(fn_value(&r, x) <= fn_value(&r, p));
    /* NaN everywhere: the start stays, whatever f0 was said to be. */
    fn_ctx n = {.kind = 3, .n = 2, .lo = {0, 0}, .hi = {1, 1}};
    assert_int_equal(mlc_polish_run(&(mlc_polish_def){2, n.lo, n.hi, 5, fn_eval, &n}, p, 0.5, x,
                                    NULL, NULL, &rep, NULL),
                     MLC_OK);
    assert_memory_equal(x, p, sizeof p);
    assert_true(rep.f_after == 0.5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(polish_should_improve_a_quadratic_and_respect_the_box),
        cmocka_unit_test(polish_should_improve_rosenbrock_deterministically),
        cmocka_unit_test(polish_should_never_return_a_worse_point),
    };
    return cmocka_run_group_tests_name("polish", tests, NULL, NULL);
}
