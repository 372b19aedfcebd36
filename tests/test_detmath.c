/* test_detmath.c: the project's own sin, cos, exp, log and atan2 (detmath.h) against the C
 * library over the ranges they serve: the largest distance in representable doubles between the
 * two, over a million arguments each (uniform in the range, plus log-uniform magnitudes), and
 * the special values. The C library is itself within about half an ulp of the exact value, so a
 * distance of one ulp bounds ours by about 1.5 ulp of the truth. */
#include "test_util.h"

#include "base.h"
#include "detmath.h"

#define SAMPLES 1000000

/* Distance in representable doubles (both finite and close, of either sign). */
static double ulp_distance(double a, double b) {
    if (a == b) return 0;
    int64_t ia, ib;
    memcpy(&ia, &a, 8), memcpy(&ib, &b, 8);
    if (ia < 0) ia = INT64_MIN - ia;
    if (ib < 0) ib = INT64_MIN - ib;
    int64_t d = ia > ib ? ia - ib : ib - ia; /* the two are close: no overflow */
    return (double)d;
}

typedef double (*fn1)(double);

static double worst1(fn1 ours, fn1 libm, double lo, double hi, int log_uniform) {
    mlc_rng rng;
    mlc_rng_seed(&rng, 12345);
    double worst = 0, at = 0;
    for (int i = 0; i < SAMPLES; i++) {
        double u = mlc_rng_uniform(&rng);
        double x = log_uniform ? exp(log(lo) + u * (log(hi) - log(lo))) : lo + u * (hi - lo);
        double d = ulp_distance(ours(x), libm(x));
        if (d > worst) worst = d, at = x;
    }
    print_message("    worst %g ulp at x = %.17g\n", worst, at);
    return worst;
}

static void sin_and_cos_within_one_ulp(void **state) {
    (void)state;
    assert_true(worst1(mlc_sin, sin, -10.0, 10.0, 0) <= 1);
    assert_true(worst1(mlc_cos, cos, -10.0, 10.0, 0) <= 1);
    assert_true(worst1(mlc_sin, sin, 1e-10, 0x1p20, 1) <= 1);
    assert_true(worst1(mlc_cos, cos, 1e-10, 0x1p20, 1) <= 1);
    assert_true(mlc_sin(0.0) == 0 && !signbit(mlc_sin(0.0)) && signbit(mlc_sin(-0.0)));
    assert_true(mlc_cos(0.0) == 1);
    assert_true(isnan(mlc_sin(INFINITY)) && isnan(mlc_cos(NAN)));
}

static void exp_within_one_ulp(void **state) {
    (void)state;
    assert_true(worst1(mlc_exp, exp, -745.0, 709.7, 0) <= 1);
    assert_true(worst1(mlc_exp, exp, -1.0, 1.0, 0) <= 1);
    assert_true(worst1(mlc_exp, exp, 1e-300, 700, 1) <= 1);
    assert_true(mlc_exp(0.0) == 1 && mlc_exp(710) == HUGE_VAL && mlc_exp(-746) == 0);
    assert_true(isnan(mlc_exp(NAN)) && mlc_exp(-INFINITY) == 0);
}

static double log_neg(double x) {
    return log(x);
}

static void log_within_one_ulp(void **state) {
    (void)state;
    assert_true(worst1(mlc_log, log_neg, 0.5, 2.0, 0) <= 1);
    assert_true(worst1(mlc_log, log, 1e-320, 1e308, 1) <= 1);
    assert_true(mlc_log(1.0) == 0 && mlc_log(0.0) == -HUGE_VAL && isnan(mlc_log(-1.0)));
    assert_true(mlc_log(INFINITY) == HUGE_VAL);
}

static void atan2_within_two_ulp(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 777);
    double worst = 0;
    for (int i = 0; i < SAMPLES; i++) {
        double y = 2 * mlc_rng_uniform(&rng) - 1, x = 2 * mlc_rng_uniform(&rng) - 1;
        if (i % 2) y *= exp(40 * (mlc_rng_uniform(&rng) - 0.5));
        worst = fmax(worst, ulp_distance(mlc_atan2(y, x), atan2(y, x)));
    }
    print_message("    atan2: worst %g ulp\n", worst);
    assert_true(worst <= 2);
    const double v[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            assert_true(ulp_distance(mlc_atan2(v[i], v[j]), atan2(v[i], v[j])) <= 1);
}

static void hypot_within_two_ulp(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 99);
    double worst = 0;
    for (int i = 0; i < SAMPLES; i++) {
        double x = (2 * mlc_rng_uniform(&rng) - 1) * exp(60 * (mlc_rng_uniform(&rng) - 0.5));
        double y = (2 * mlc_rng_uniform(&rng) - 1) * exp(60 * (mlc_rng_uniform(&rng) - 0.5));
        worst = fmax(worst, ulp_distance(mlc_hypot(x, y), hypot(x, y)));
    }
    print_message("    hypot: worst %g ulp\n", worst);
    assert_true(worst <= 2);
    assert_true(mlc_hypot(0, 0) == 0 && mlc_hypot(-HUGE_VAL, 1) == HUGE_VAL);
    assert_true(mlc_hypot(1e300, 1e300) > 1e300 && mlc_hypot(1e-300, 1e-300) > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sin_and_cos_within_one_ulp), cmocka_unit_test(exp_within_one_ulp),
        cmocka_unit_test(log_within_one_ulp),         cmocka_unit_test(atan2_within_two_ulp),
        cmocka_unit_test(hypot_within_two_ulp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
