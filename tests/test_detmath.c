/* test_detmath.c: the project's own sin, cos, exp, log and atan2 (detmath.h) against the C
 * library over the ranges they serve: the largest distance in representable doubles between the
 * two, over a million arguments each (uniform in the range, plus log-uniform magnitudes), and
 * the special values. The C library is itself within about half an ulp of the exact value, so a
 * distance of one ulp bounds ours by about 1.5 ulp of the truth. */
#include "test_util.h"

#include <float.h>

#include "base.h"
#include "detmath.h"
#include "fma_exact.h"

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

/* mlc_sin_n gives mlc_sin's bits for every argument, wherever it sits in a vector of four (the
 * AVX2 copy) or the tail: the actuation's phases, magnitudes across the fast range and outside
 * it, tiny arguments, signed zeros, ±∞ and NaN mixed into vectors of ordinary ones. */
static void sin_n_is_mlc_sin_bits(void **state) {
    (void)state;
    enum { N = 4099 };
    static double x[N], y[N];
    mlc_rng rng;
    mlc_rng_seed(&rng, 777);
    const double special[] = {0.0, -0.0,     0x1p-30,   -0x1p-28, 0x1p20,  0x1.0000000000001p20,
                              1e6, INFINITY, -INFINITY, NAN,      0x1p-27, -0x1p-27};
    const int nspecial = (int)(sizeof special / sizeof *special);
    long mismatches = 0;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < N; i++) {
            double u = mlc_rng_uniform(&rng);
            switch (round % 4) {
            case 0:
                x[i] = 2 * MLC_PI * (u * 30.0 / 0.2 + 0.3);
                break; /* actuation phases */
            case 1:
                x[i] = -1e4 + 2e4 * u;
                break;
            case 2:
                x[i] = (u < 0.5 ? -1 : 1) * exp(log(1e-9) + u * (log(0x1p20) - log(1e-9)));
                break;
            default:
                x[i] = mlc_rng_normal(&rng) * 10;
                break;
            }
            if (round % 5 == 4 && i % 97 == 0) x[i] = special[(i / 97) % nspecial];
        }
        int n = N - round % 7; /* tails of 0-3 lanes */
        mlc_sin_n(x, y, n);
        for (int i = 0; i < n; i++) {
            double want = mlc_sin(x[i]);
            mismatches += memcmp(&want, &y[i], sizeof want) != 0 && !(isnan(want) && isnan(y[i]));
        }
    }
    print_message("    %ld mismatches\n", mismatches);
    assert_int_equal(mismatches, 0);
    /* In place, as the actuation calls it. */
    for (int i = 0; i < 64; i++)
        x[i] = 0.37 * i - 5;
    memcpy(y, x, 64 * sizeof *x);
    mlc_sin_n(y, y, 64);
    for (int i = 0; i < 64; i++)
        assert_true(y[i] == mlc_sin(x[i]));
}

/* Whether two doubles are the same bits (any NaN matches any NaN). Under valgrind (.ci/run sets
 * MLC_VALGRIND=1) the reference fma() runs on valgrind's emulation of the FMA instruction,
 * which gives +0 for some exact zeros that IEEE 754 (and the CPU) make −0, e.g. fma(+0, −1, −0):
 * zeros then compare by value. */
static int same_bits(double x, double y) {
    static int lax_zeros = -1;
    if (lax_zeros < 0) lax_zeros = getenv("MLC_VALGRIND") != NULL;
    if (lax_zeros && x == 0 && y == 0) return 1;
    return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y));
}

/* mlc_fma_exact2 gives the C library's fma() bits (IEEE 754's fused multiply-add, rounded once:
 * the FMA instruction on this machine, a correctly rounded software fma elsewhere) on both
 * lanes: random magnitudes over the whole range the emulation handles itself and beyond it
 * (the fallback); products cancelled by c to a few bits; integer operands whose exact sums sit
 * on halfway points between doubles (ties to even, where rounding twice goes wrong); signed
 * zeros, subnormals, ±∞ and NaN. */
static void fma_exact2_is_fma_bits(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 2024);
    long mismatches = 0, ties = 0, n = 0;
    for (int i = 0; i < 1500000; i++) {
        mlc_fma_v2d a, b, c;
        for (int l = 0; l < 2; l++) {
            double u = mlc_rng_uniform(&rng), sa = u < 0.5 ? -1 : 1;
            double sb = mlc_rng_uniform(&rng) < 0.5 ? -1 : 1;
            double sc = mlc_rng_uniform(&rng) < 0.5 ? -1 : 1;
            double ma = 1 + mlc_rng_uniform(&rng), mb = 1 + mlc_rng_uniform(&rng);
            double mc = 1 + mlc_rng_uniform(&rng);
            switch (i % 5) {
            case 0: /* log-uniform magnitudes, some outside the emulated range */
                a[l] = sa * ldexp(ma, (int)(mlc_rng_uniform(&rng) * 1200) - 600);
                b[l] = sb * ldexp(mb, (int)(mlc_rng_uniform(&rng) * 1200) - 600);
                c[l] = sc * ldexp(mc, (int)(mlc_rng_uniform(&rng) * 1400) - 700);
                break;
            case 1: /* the step's magnitudes: c close to −a·b, a few to 60 bits cancelled */
                a[l] = sa * ldexp(ma, (int)(mlc_rng_uniform(&rng) * 40) - 20);
                b[l] = sb * ldexp(mb, (int)(mlc_rng_uniform(&rng) * 40) - 20);
                c[l] = -(a[l] * b[l]) *
                       (1 + ldexp(mlc_rng_uniform(&rng) - 0.5, -(int)(mlc_rng_uniform(&rng) * 60)));
                break;
            case 2: { /* a·b ≈ half an ulp of c: c + uh is a tie, which ul decides (the step
                       * that rounds to odd) */
                int e = (int)(mlc_rng_uniform(&rng) * 40) - 20;
                a[l] = sa * ma;
                b[l] = sb * ldexp(1 / ma, e - 53);
                c[l] = sc * ldexp(floor(ldexp(mc, 52)), e - 52);
                break;
            }
            default: { /* integers: a·b of 54–56 bits, c of up to 56, so the exact sum often
                        * has one bit past the 53 kept, at the half */
                double ia = floor(ldexp(ma, 26)) + 1, ib = floor(ldexp(mb, 27 + i % 3));
                double ic = floor(ldexp(mc, 52)) * ldexp(1, (int)(mlc_rng_uniform(&rng) * 5));
                int e = (int)(mlc_rng_uniform(&rng) * 200) - 100;
                a[l] = sa * ldexp(ia, e), b[l] = sb * ib, c[l] = sc * ldexp(ic, e);
                break;
            }
            }
        }
        mlc_fma_v2d r = mlc_fma_exact2(a, b, c);
        for (int l = 0; l < 2; l++, n++) {
            double want = fma(a[l], b[l], c[l]);
            if (!same_bits(want, r[l]) && mismatches < 8)
                print_message("    case %d: fma(%a, %a, %a) = %a, emulated %a\n", i % 5, a[l], b[l],
                              c[l], want, r[l]);
            mismatches += !same_bits(want, r[l]);
            /* a tie: rounding a·b and then adding c lands off the fused result */
            ties += i % 5 >= 2 && a[l] * b[l] + c[l] != want;
        }
    }
    const double sp[] = {
        0.0,      -0.0,       1.0,     -1.0,    3.0,     0x1p-1074, 0x1p-1022,
        0x1p-401, 0x1.8p-380, 0x1p499, 0x1p500, DBL_MAX, INFINITY,  -INFINITY,
        NAN,      -5.0,       15.0,    -15.0,   1e-310,  0.1,       0x1.fffffffffffffp-1,
        1e300,    -1e-300};
    const int ns = (int)(sizeof sp / sizeof *sp);
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < ns; j++)
            for (int k = 0; k < ns; k++) {
                mlc_fma_v2d r =
                    mlc_fma_exact2((mlc_fma_v2d){sp[i], 1.5}, (mlc_fma_v2d){sp[j], sp[k]},
                                   (mlc_fma_v2d){sp[k], sp[i]});
                if (!same_bits(fma(sp[i], sp[j], sp[k]), r[0]) && mismatches < 8)
                    print_message("    fma(%a, %a, %a) = %a, emulated %a\n", sp[i], sp[j], sp[k],
                                  fma(sp[i], sp[j], sp[k]), r[0]);
                mismatches += !same_bits(fma(sp[i], sp[j], sp[k]), r[0]);
                mismatches += !same_bits(fma(1.5, sp[k], sp[i]), r[1]);
                n += 2;
            }
    print_message(
        "    %ld lanes, %ld where one rounding matters at a tie-prone sum, %ld mismatches\n", n,
        ties, mismatches);
    assert_true(ties > 10000); /* the halfway cases were reached */
    assert_int_equal(mismatches, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sin_and_cos_within_one_ulp), cmocka_unit_test(exp_within_one_ulp),
        cmocka_unit_test(log_within_one_ulp),         cmocka_unit_test(atan2_within_two_ulp),
        cmocka_unit_test(hypot_within_two_ulp),       cmocka_unit_test(sin_n_is_mlc_sin_bits),
        cmocka_unit_test(fma_exact2_is_fma_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
