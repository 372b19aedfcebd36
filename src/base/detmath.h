/* detmath.h: the elementary functions of the rollout and the optimizer, computed here from
 * IEEE-754 double additions, multiplications and divisions only, so that their results, and
 * every rollout, optimizer run and J built on them, are the same bits on every x86-64 machine,
 * with or without FMA, and under valgrind.
 *
 * Why not libm: the C library picks its own code path per CPU at load time (glibc has FMA and
 * AVX2 variants of sin, cos, exp, log, pow, atan2), and the paths differ in the last bit, so a
 * seed's gait used to depend on the machine. sqrt, fabs, floor, frexp and ldexp stay with the C
 * library: IEEE 754 makes them exact (correctly rounded), so they cannot differ.
 *
 * The code must be compiled without contraction of a*b + c into an FMA (-ffp-contract=off, set
 * for every module in CMakeLists.txt): a fused and an unfused evaluation round differently.
 *
 * Accuracy, as tests/test_detmath.c asserts: the largest distance, in representable doubles,
 * from the C library's result over a million arguments per range (the C library is itself
 * within about 0.5 ulp of the exact value):
 *   mlc_sin, mlc_cos  |x| ≤ 2^20 (Cody–Waite reduction by π/2 in three parts): 1 ulp; beyond,
 *                     the reduction would lose bits and the C library is called instead (no
 *                     caller comes near: actuation phases and angles are below 10^4);
 *   mlc_exp           the whole range (+∞ above 709.78, 0 below −745.13): 1 ulp;
 *   mlc_log           every positive double, subnormals included: 1 ulp;
 *   mlc_atan2         every pair: 2 ulp (the quadrant sums with π round twice).
 * Special values follow C99 Annex F for NaN, ±∞ and ±0 where the callers can meet them. */
#ifndef MODALLOCO_DETMATH_H
#define MODALLOCO_DETMATH_H

double mlc_sin(double x);
double mlc_cos(double x);
/* y[i] = mlc_sin(x[i]) for i < n, the same bits, faster for many arguments (AVX2 where the
 * process runs the AVX2 kernels, cpu.h). x and y may be the same array. */
void mlc_sin_n(const double *x, double *y, int n);
double mlc_exp(double x);
double mlc_log(double x);
double mlc_atan2(double y, double x);
/* √(x² + y²) without undue overflow or underflow: max·√(1 + (min/max)²), within 2 ulp. */
double mlc_hypot(double x, double y);

#endif
