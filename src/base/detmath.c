/* detmath.c: sin, cos, exp, log and atan2 from IEEE double arithmetic (detmath.h).
 *
 * Each function reduces its argument to a small interval with exactly representable pieces of
 * the constant involved (π/2 or ln 2 split so that k·piece is exact) and evaluates a Taylor
 * series there, long enough that the first omitted term is below 2^−56 of the result. The
 * series coefficients are 1/n! and 1/(2n+1); the tables of atan(j/8) and the splits of π/2 and
 * ln 2 are those numbers rounded to double (hi) plus the rounded remainder (lo), computed with
 * 60-digit decimal arithmetic. */
#include "detmath.h"

#include <math.h>

#include "cpu.h"

/* π/2 = PIO2_1 + PIO2_2 + PIO2_3: the first two hold 33 bits, so k·PIO2_1 and k·PIO2_2 are
 * exact for |k| < 2^20. */
static const double PIO2_1 = 0x1.921fb54400000p+0;
static const double PIO2_2 = 0x1.0b4611a600000p-34;
static const double PIO2_3 = 0x1.3198a2e037073p-69;
static const double TWO_OVER_PI = 0x1.45f306dc9c883p-1;
static const double PIO2_HI = 0x1.921fb54442d18p+0, PIO2_LO = 0x1.1a62633145c07p-54;
static const double PI_HI = 0x1.921fb54442d18p+1, PI_LO = 0x1.1a62633145c07p-53;
/* ln 2 = LN2_HI + LN2_LO, LN2_HI with 42 bits: k·LN2_HI is exact for |k| < 2^11. */
static const double LN2_HI = 0x1.62e42fefa3800p-1, LN2_LO = 0x1.ef35793c76730p-45;
static const double INV_LN2 = 0x1.71547652b82fep+0;

/* sin(r + lo) for |r| ≤ π/4 + ε and |lo| ≪ ulp(r): r + (lo + r³ S(r²)), S the Taylor series
 * of (sin r − r)/r³ through r^17/17!. */
static double sin_kernel(double r, double lo) {
    double z = r * r;
    double s =
        -1.0 / 6 +
        z * (1.0 / 120 +
             z * (-1.0 / 5040 +
                  z * (1.0 / 362880 +
                       z * (-1.0 / 39916800 +
                            z * (1.0 / 6227020800.0 +
                                 z * (-1.0 / 1307674368000.0 + z * (1.0 / 355687428096000.0)))))));
    return r + (lo + r * z * s);
}

/* cos(r + lo): w = 1 − r²/2 rounded, plus what the rounding dropped, plus r⁴ C(r²) (Taylor
 * through r^18/18!) and the first-order term of lo. */
static double cos_kernel(double r, double lo) {
    double z = r * r, hz = 0.5 * z, w = 1.0 - hz;
    double c =
        1.0 / 24 +
        z * (-1.0 / 720 +
             z * (1.0 / 40320 +
                  z * (-1.0 / 3628800 +
                       z * (1.0 / 479001600.0 +
                            z * (-1.0 / 87178291200.0 + z * (1.0 / 20922789888000.0 +
                                                             z * (-1.0 / 6402373705728000.0)))))));
    return w + (((1.0 - w) - hz) + (z * z * c - r * lo));
}

/* x = k·π/2 + r + lo; returns k mod 4. Valid for |x| ≤ 2^20. */
static int reduce_pio2(double x, double *r, double *lo) {
    double k = floor(x * TWO_OVER_PI + 0.5);
    double y = x - k * PIO2_1; /* exact: k·PIO2_1 is exact and close to x */
    double t = k * PIO2_2;     /* exact */
    double h = y - t; /* y − t = h + e exactly (two-sum: |t| may exceed |y| when r is small) */
    double bv = h - y, av = h - bv;
    double e = (y - av) + (-t - bv);
    double l = e - k * PIO2_3; /* up to 2^−49 for large k: renormalize so |lo| ≤ ulp(r)/2 */
    *r = h + l;
    *lo = l - (*r - h);
    return (int)((long long)k & 3);
}

#define TRIG_MAX 0x1p20

double mlc_sin(double x) {
    if (!(fabs(x) <= TRIG_MAX)) return isnan(x) || isinf(x) ? x - x : sin(x);
    if (fabs(x) < 0x1p-27) return x; /* x − x³/6 rounds to x */
    double r, lo;
    switch (reduce_pio2(x, &r, &lo)) {
    case 0:
        return sin_kernel(r, lo);
    case 1:
        return cos_kernel(r, lo);
    case 2:
        return -sin_kernel(r, lo);
    default:
        return -cos_kernel(r, lo);
    }
}

/* ---- mlc_sin_n: many sines, four at a time on AVX2 ------------------------------------------
 * The AVX2 copy runs mlc_sin's operations on four lanes at once: the same reduction, both
 * kernels for every lane (no branch on the quadrant, which the actuation's phases make hard to
 * predict), and a select and a sign flip by the quadrant, so each lane is mlc_sin's bits. A
 * vector with a lane outside the fast range (|x| < 2^-27, |x| > 2^20, NaN, ±∞) takes mlc_sin
 * itself. */
static void sin_n_base(const double *x, double *y, int n) {
    for (int i = 0; i < n; i++)
        y[i] = mlc_sin(x[i]);
}
static void (*sin_n_sel)(const double *, double *, int) = sin_n_base;

#ifdef MLC_HAVE_AVX2_CLONES
typedef double v4d __attribute__((vector_size(32), aligned(8)));
typedef long long v4l __attribute__((vector_size(32)));
typedef int v4i __attribute__((vector_size(16)));
#define V4(c) ((v4d){(c), (c), (c), (c)})

__attribute__((target("avx2"))) static void sin_n_avx2(const double *x, double *y, int n);

/* The last 1-3 arguments: a vector padded with 1.0 (whose sines are dropped), so a short call,
 * such as the 6 terms of 3 modes × 2 sinusoids, stays off the scalar branches. */
__attribute__((target("avx2"))) static void sin_n_tail(const double *x, double *y, int n) {
    double xin[4] = {1.0, 1.0, 1.0, 1.0}, yout[4];
    for (int i = 0; i < n; i++)
        xin[i] = x[i];
    sin_n_avx2(xin, yout, 4);
    for (int i = 0; i < n; i++)
        y[i] = yout[i];
}

__attribute__((target("avx2"))) static void sin_n_avx2(const double *x, double *y, int n) {
    const v4l absmask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                         0x7fffffffffffffffLL};
    const v4l signbit = ~absmask;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        v4d xv = *(const v4d *)(const void *)(x + i);
        v4d ax = (v4d)((v4l)xv & absmask);
        v4l fast = (ax <= V4(TRIG_MAX)) & (ax >= V4(0x1p-27));
        if (!(fast[0] & fast[1] & fast[2] & fast[3])) {
            sin_n_base(x + i, y + i, 4);
            continue;
        }
        /* reduce_pio2 */
        v4d k = __builtin_ia32_roundpd256(xv * V4(TWO_OVER_PI) + V4(0.5), 0x9); /* floor */
        v4d yy = xv - k * V4(PIO2_1), t = k * V4(PIO2_2), h = yy - t;
        v4d bv = h - yy, av = h - bv;
        v4d e = (yy - av) + (-t - bv);
        v4d l = e - k * V4(PIO2_3), r = h + l, lo = l - (r - h);
        v4i q = __builtin_ia32_cvttpd2dq256(k); /* exact: |k| < 2^20 */
        v4l q64 = __builtin_convertvector(q, v4l);
        /* sin_kernel and cos_kernel */
        v4d z = r * r;
        v4d sp =
            V4(-1.0 / 6) +
            z * (V4(1.0 / 120) +
                 z * (V4(-1.0 / 5040) +
                      z * (V4(1.0 / 362880) + z * (V4(-1.0 / 39916800) +
                                                   z * (V4(1.0 / 6227020800.0) +
                                                        z * (V4(-1.0 / 1307674368000.0) +
                                                             z * V4(1.0 / 355687428096000.0)))))));
        v4d sv = r + (lo + r * z * sp);
        v4d hz = V4(0.5) * z, w = V4(1.0) - hz;
        v4d cp =
            V4(1.0 / 24) +
            z * (V4(-1.0 / 720) +
                 z * (V4(1.0 / 40320) + z * (V4(-1.0 / 3628800) +
                                             z * (V4(1.0 / 479001600.0) +
                                                  z * (V4(-1.0 / 87178291200.0) +
                                                       z * (V4(1.0 / 20922789888000.0) +
                                                            z * V4(-1.0 / 6402373705728000.0)))))));
        v4d cv = w + (((V4(1.0) - w) - hz) + (z * z * cp - r * lo));
        v4l odd = (q64 & 1) != 0, neg = (q64 & 2) != 0;
        v4l v = ((v4l)cv & odd) | ((v4l)sv & ~odd);
        *(v4d *)(void *)(y + i) = (v4d)(v ^ (neg & signbit));
    }
    if (i < n) sin_n_tail(x + i, y + i, n - i);
}
#undef V4

__attribute__((constructor)) static void sin_n_select(void) {
    if (mlc__cpu_use_avx2()) sin_n_sel = sin_n_avx2;
}
#endif

void mlc_sin_n(const double *x, double *y, int n) {
    sin_n_sel(x, y, n);
}

double mlc_cos(double x) {
    if (!(fabs(x) <= TRIG_MAX)) return isnan(x) || isinf(x) ? x - x : cos(x);
    if (fabs(x) < 0x1p-28) return 1.0;
    double r, lo;
    switch (reduce_pio2(x, &r, &lo)) {
    case 0:
        return cos_kernel(r, lo);
    case 1:
        return -sin_kernel(r, lo);
    case 2:
        return -cos_kernel(r, lo);
    default:
        return sin_kernel(r, lo);
    }
}

double mlc_exp(double x) {
    if (isnan(x)) return x;
    if (x > 709.782712893384) return INFINITY;
    if (x < -745.1332191019412) return 0.0;
    if (fabs(x) < 0x1p-54) return 1.0 + x;
    /* x = k ln 2 + r, |r| ≤ ln2/2: hi − lo with k·LN2_HI exact. */
    double k = floor(x * INV_LN2 + 0.5);
    double hi = x - k * LN2_HI, lo = k * LN2_LO, r = hi - lo;
    /* e^r − 1 − r = r² P(r), P the Taylor series through r^15/15!. */
    double p =
        1.0 / 2 +
        r * (1.0 / 6 +
             r * (1.0 / 24 +
                  r * (1.0 / 120 +
                       r * (1.0 / 720 +
                            r * (1.0 / 5040 +
                                 r * (1.0 / 40320 +
                                      r * (1.0 / 362880 +
                                           r * (1.0 / 3628800 +
                                                r * (1.0 / 39916800 +
                                                     r * (1.0 / 479001600.0 +
                                                          r * (1.0 / 6227020800.0 +
                                                               r * (1.0 / 87178291200.0 +
                                                                    r * (1.0 /
                                                                         1307674368000.0)))))))))))));
    double e = 1.0 + (hi + ((r * r * p) - lo));
    int ki = (int)k;
    /* 2^k·e in two factors so that neither overflows nor goes subnormal early. */
    if (ki > 1000) return ldexp(ldexp(e, ki - 1000), 1000);
    if (ki < -1000) return ldexp(ldexp(e, ki + 1000), -1000);
    return ldexp(e, ki);
}

double mlc_log(double x) {
    if (isnan(x) || x == HUGE_VAL) return x;
    if (x < 0) return NAN;
    if (x == 0) return -INFINITY;
    int k;
    double m = frexp(x, &k); /* x = m 2^k, m ∈ [1/2, 1), exact for subnormals too */
    if (m < 0x1.6a09e667f3bcdp-1) m *= 2, k--; /* m ∈ [√2/2, √2) */
    /* log(1 + f) = f − (f²/2 − s (f²/2 + R)), s = f/(2 + f), R = Σ_{n≥1} 2 s^{2n}/(2n + 1)
     * (log(1+f) = 2 atanh s, and 2s = f − s f). */
    double f = m - 1.0; /* exact */
    double s = f / (2.0 + f), z = s * s, hfsq = 0.5 * f * f;
    double R =
        z *
        (2.0 / 3 +
         z * (2.0 / 5 +
              z * (2.0 / 7 +
                   z * (2.0 / 9 + z * (2.0 / 11 +
                                       z * (2.0 / 13 +
                                            z * (2.0 / 15 +
                                                 z * (2.0 / 17 +
                                                      z * (2.0 / 19 +
                                                           z * (2.0 / 21 + z * (2.0 / 23)))))))))));
    double dk = k;
    return dk * LN2_HI + (f - (hfsq - (s * (hfsq + R) + dk * LN2_LO)));
}

/* atan(j/8), j = 0..8, as hi + lo. */
static const double ATAN_J8[9][2] = {
    {0.0, 0.0},
    {0x1.fd5ba9aac2f6ep-4, -0x1.cd37686760c17p-59},
    {0x1.f5b75f92c80ddp-3, 0x1.8ab6e3cf7afbdp-57},
    {0x1.6f61941e4def1p-2, -0x1.c63aae6f6e918p-56},
    {0x1.dac670561bb4fp-2, 0x1.a2b7f222f65e2p-56},
    {0x1.1e00babdefeb4p-1, -0x1.928df287a668fp-58},
    {0x1.4978fa3269ee1p-1, 0x1.2419a87f2a458p-56},
    {0x1.700a7c5784634p-1, -0x1.8c34d25aadef6p-56},
    {0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55},
};

/* atan(t) for t ∈ [0, 1] as hi + lo (not yet summed): atan(j/8) + atan(u),
 * u = (t − j/8)/(1 + t j/8), |u| ≤ 1/16, atan u by its series through u^17/17. */
static void atan01(double t, double *hi, double *lo) {
    int j = (int)floor(8.0 * t + 0.5);
    double c = j / 8.0;
    double u = (t - c) / (1.0 + t * c); /* t − c exact (Sterbenz) */
    double z = u * u;
    double q = -1.0 / 3 +
               z * (1.0 / 5 +
                    z * (-1.0 / 7 +
                         z * (1.0 / 9 + z * (-1.0 / 11 +
                                             z * (1.0 / 13 + z * (-1.0 / 15 + z * (1.0 / 17)))))));
    *hi = ATAN_J8[j][0];
    *lo = ATAN_J8[j][1] + (u + u * z * q);
}

double mlc_atan2(double y, double x) {
    if (isnan(x) || isnan(y)) return x + y;
    double ax = fabs(x), ay = fabs(y), a;
    if (ay == 0) {
        a = signbit(x) ? PI_HI : 0.0; /* atan2(±0, x): ±0 for x ≥ +0, ±π for x ≤ −0 */
        return signbit(y) ? -a : a;
    }
    if (isinf(ax) && isinf(ay)) {
        a = signbit(x) ? 3 * PIO2_HI / 2 : PIO2_HI / 2;
    } else if (ay <= ax) { /* angle of (ax, ay) in [0, π/4] */
        double hi, lo;
        atan01(ay / ax, &hi, &lo);
        if (signbit(x))
            a = (PI_HI - hi) + (PI_LO - lo);
        else
            a = hi + lo;
    } else { /* in (π/4, π/2]: π/2 − atan(ax/ay) */
        double hi, lo;
        atan01(ax / ay, &hi, &lo);
        if (signbit(x))
            a = (PIO2_HI + hi) + (PIO2_LO + lo);
        else
            a = (PIO2_HI - hi) + (PIO2_LO - lo);
    }
    return signbit(y) ? -a : a;
}

double mlc_hypot(double x, double y) {
    double a = fabs(x), b = fabs(y);
    if (isinf(a) || isinf(b)) return HUGE_VAL;
    if (isnan(a) || isnan(b)) return a + b;
    double hi = a > b ? a : b, lo = a > b ? b : a;
    if (hi == 0) return 0.0;
    double q = lo / hi;
    return hi * sqrt(1.0 + q * q);
}
