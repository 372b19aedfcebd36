/* fma_exact.h: a·b + c rounded once (a fused multiply-add) on two lanes, from IEEE-754
 * additions and multiplications only, for code paths that must give the bits of an FMA
 * instruction on a CPU that may not have one (the step's baseline kernels, sim_step.c).
 *
 * Why not fma() from the C library: glibc computes it with the FMA instruction where the CPU
 * has one, but through a call per element (the baseline step 7× slower than unfused), and
 * without the instruction in software that switches rounding modes (13 ms a step, 650×).
 *
 * The method (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
 * algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008):
 *   uh + ul = a·b exactly (Dekker's product, Veltkamp's splitting by 2^27 + 1);
 *   th + tl = c + uh exactly (Knuth's two-sum);
 *   v = tl + ul rounded to odd (round to nearest, then, when inexact and the result's last
 *       bit is even, one step towards the exact sum);
 *   result = th + v rounded to nearest,
 * which equals a·b + c rounded to nearest for a precision of at least 5 bits when nothing
 * underflows or overflows. A lane whose inputs are not all finite and, unless zero, of
 * magnitude in [2^-400, 2^500), takes the C library's fma() instead (exact as well), as does
 * an exact result of 0, whose sign the sum uh + c gives (then a·b = −c is representable, so
 * uh = a·b). tests/test_detmath.c compares it with the FMA instruction over millions of
 * inputs, halfway cases included.
 *
 * Must be compiled without contraction (-ffp-contract=off, CMakeLists.txt). */
#ifndef MODALLOCO_FMA_EXACT_H
#define MODALLOCO_FMA_EXACT_H

#include <math.h>

typedef double mlc_fma_v2d __attribute__((vector_size(16), aligned(8)));
typedef long long mlc_fma_v2l __attribute__((vector_size(16)));
typedef unsigned long long mlc_fma_v2u __attribute__((vector_size(16)));

/* The high half of Veltkamp's splitting: 26 significant bits, a − hi exact in 27. */
static inline mlc_fma_v2d mlc__fma_split_hi(mlc_fma_v2d a) {
    mlc_fma_v2d t = a * 134217729.0; /* 2^27 + 1 */
    return t - (t - a);
}

/* a·b + c, rounded once, per lane. */
static inline mlc_fma_v2d mlc_fma_exact2(mlc_fma_v2d a, mlc_fma_v2d b, mlc_fma_v2d c) {
    const mlc_fma_v2d big = {0x1p500, 0x1p500}, small = {0x1p-400, 0x1p-400}, zero = {0, 0};
    const mlc_fma_v2l absmask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    mlc_fma_v2d aa = (mlc_fma_v2d)((mlc_fma_v2l)a & absmask);
    mlc_fma_v2d ab = (mlc_fma_v2d)((mlc_fma_v2l)b & absmask);
    mlc_fma_v2d ac = (mlc_fma_v2d)((mlc_fma_v2l)c & absmask);
    /* in range: finite, below 2^500, and zero or at least 2^-400 (NaN fails every test) */
    mlc_fma_v2l ok = (aa < big) & (ab < big) & (ac < big) & ((aa >= small) | (aa == zero)) &
                     ((ab >= small) | (ab == zero)) & ((ac >= small) | (ac == zero));
    /* uh + ul = a·b (Dekker) */
    mlc_fma_v2d ah = mlc__fma_split_hi(a), al = a - ah;
    mlc_fma_v2d bh = mlc__fma_split_hi(b), bl = b - bh;
    mlc_fma_v2d uh = a * b;
    mlc_fma_v2d ul = (((ah * bh - uh) + ah * bl) + al * bh) + al * bl;
    /* th + tl = c + uh */
    mlc_fma_v2d th = c + uh, bv = th - c;
    mlc_fma_v2d tl = (c - (th - bv)) + (uh - bv);
    /* v = tl + ul rounded to odd: s rounded to nearest, e its exact error */
    mlc_fma_v2d s = tl + ul, sv = s - tl;
    mlc_fma_v2d e = (tl - (s - sv)) + (ul - sv);
    /* when e ≠ 0 and s's last bit is even, one step towards e: bits + 1 (the magnitude up)
     * when e has s's sign, else bits − 1. Masks from bit operations and a logical shift:
     * SSE2 has no 64-bit compare. */
    mlc_fma_v2l sb = (mlc_fma_v2l)s;
    mlc_fma_v2l even = (sb & 1) - 1; /* all ones when even */
    mlc_fma_v2l inexact = (mlc_fma_v2l)(e != zero);
    mlc_fma_v2l flip = (mlc_fma_v2l)((mlc_fma_v2u)(sb ^ (mlc_fma_v2l)e) >> 63); /* signs differ */
    sb += even & inexact & (1 - 2 * flip);
    mlc_fma_v2d r = th + (mlc_fma_v2d)sb;
    mlc_fma_v2l zr = r == zero;
    if (__builtin_expect(!(ok[0] & ok[1]) || (zr[0] | zr[1]), 0)) {
        for (int l = 0; l < 2; l++)
            r[l] = zr[l] && ok[l] ? uh[l] + c[l] : !ok[l] ? fma(a[l], b[l], c[l]) : r[l];
    }
    return r;
}

#endif
