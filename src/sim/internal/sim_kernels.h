/* sim_kernels.h: the step's small dense kernels, written once for a vector of VL doubles and
 * included by sim_step.c once per code path (VL = 4 for the AVX2 path, VL = 2 for the SSE2
 * baseline, which has only sixteen 16-byte registers: a 32-byte vector type there is split
 * through the stack and cost 6× the time). Before inclusion define:
 *   KNAME(f)  the name of kernel f on this path;  KATTR  its attributes (target ISA);
 *   VL        lanes per vector (2 or 4);          VD     the vector type (vector_size 8·VL);
 *   KSPLAT(x) a VD of x in every lane;            KFMA(a, b, c)  a·b + c per lane, rounded once.
 * It undefines them at its end.
 *
 * Register-blocked kernels. Two shapes cover the step:
 *   rows: o_k[c] = Σ_i z_k[i] M[c + ld·i]   (cluster maps F_c, H_c; sample positions)
 *   cols: b_k[i] = src_k[i] + Σ_t C[k·ldc + t·ldt] M[i + ldm·col_t]   (rotation terms; contact
 *         correction; src = b accumulates in place, another src saves copying it first)
 * The contiguous dimension (c, resp. i) is split into chunks of three vectors (then two, then
 * one) whose partial sums stay in registers over the whole reduction. Every output is the same
 * sequence of operations, in the same order, whatever VL and the chunking: in "rows" the first
 * term is a product, each later term a fused multiply-add onto the sum; in "cols" every term is
 * one onto src. A fused multiply-add rounds once, so it has the same bits on every path (the
 * FMA instruction, or fma_exact.h's emulation where the CPU has none) and in a plain loop of
 * fma() calls: the results are bit-identical across paths. Nothing else is fused (ISO C mode
 * keeps contraction off). Why fused: on CPUs that multiply and add on the same ports (Intel's)
 * the kernels are bound by those ports, and an FMA is one operation where a product and a sum
 * were two (the step 10% faster there; 2–5% on AMD's, whose separate pipes already did both at
 * once). The contiguous lengths must be multiples of 4 (layouts are padded). */

#define KLD(p) (*(const VD *)(const void *)(p))
#define KST(p, v) (*(VD *)(void *)(p) = (v))

KATTR static void KNAME(rows3)(const double *restrict z, int n4, const double *restrict M,
                               size_t ld, int nc, double *restrict o, size_t ldo) {
    const double *z0 = z, *z1 = z + n4, *z2 = z + 2 * n4;
    int c = 0;
    for (; c + 3 * VL <= nc; c += 3 * VL) { /* 9 accumulators, 3 loads, 3 scalars */
        VD g0 = KLD(M + c), g1 = KLD(M + c + VL), g2 = KLD(M + c + 2 * VL);
        double a0 = z0[0], a1 = z1[0], a2 = z2[0];
        VD f00 = a0 * g0, f01 = a0 * g1, f02 = a0 * g2, f10 = a1 * g0, f11 = a1 * g1, f12 = a1 * g2,
           f20 = a2 * g0, f21 = a2 * g1, f22 = a2 * g2;
        for (int i = 1; i < n4; i++) {
            const double *row = M + ld * (size_t)i + c;
            g0 = KLD(row), g1 = KLD(row + VL), g2 = KLD(row + 2 * VL);
            double s0 = z0[i], s1 = z1[i], s2 = z2[i];
            f00 = KFMA(KSPLAT(s0), g0, f00), f01 = KFMA(KSPLAT(s0), g1, f01),
            f02 = KFMA(KSPLAT(s0), g2, f02);
            f10 = KFMA(KSPLAT(s1), g0, f10), f11 = KFMA(KSPLAT(s1), g1, f11),
            f12 = KFMA(KSPLAT(s1), g2, f12);
            f20 = KFMA(KSPLAT(s2), g0, f20), f21 = KFMA(KSPLAT(s2), g1, f21),
            f22 = KFMA(KSPLAT(s2), g2, f22);
        }
        KST(o + c, f00), KST(o + c + VL, f01), KST(o + c + 2 * VL, f02);
        KST(o + ldo + c, f10), KST(o + ldo + c + VL, f11), KST(o + ldo + c + 2 * VL, f12);
        KST(o + 2 * ldo + c, f20), KST(o + 2 * ldo + c + VL, f21);
        KST(o + 2 * ldo + c + 2 * VL, f22);
    }
    for (; c + 2 * VL <= nc; c += 2 * VL) {
        VD g0 = KLD(M + c), g1 = KLD(M + c + VL);
        double a0 = z0[0], a1 = z1[0], a2 = z2[0];
        VD f00 = a0 * g0, f01 = a0 * g1, f10 = a1 * g0, f11 = a1 * g1, f20 = a2 * g0, f21 = a2 * g1;
        for (int i = 1; i < n4; i++) {
            const double *row = M + ld * (size_t)i + c;
            g0 = KLD(row), g1 = KLD(row + VL);
            double s0 = z0[i], s1 = z1[i], s2 = z2[i];
            f00 = KFMA(KSPLAT(s0), g0, f00), f01 = KFMA(KSPLAT(s0), g1, f01),
            f10 = KFMA(KSPLAT(s1), g0, f10), f11 = KFMA(KSPLAT(s1), g1, f11),
            f20 = KFMA(KSPLAT(s2), g0, f20), f21 = KFMA(KSPLAT(s2), g1, f21);
        }
        KST(o + c, f00), KST(o + c + VL, f01), KST(o + ldo + c, f10), KST(o + ldo + c + VL, f11);
        KST(o + 2 * ldo + c, f20), KST(o + 2 * ldo + c + VL, f21);
    }
    for (; c < nc; c += VL) {
        VD g0 = KLD(M + c);
        VD f0 = z0[0] * g0, f1 = z1[0] * g0, f2 = z2[0] * g0;
        for (int i = 1; i < n4; i++) {
            g0 = KLD(M + ld * (size_t)i + c);
            f0 = KFMA(KSPLAT(z0[i]), g0, f0), f1 = KFMA(KSPLAT(z1[i]), g0, f1),
            f2 = KFMA(KSPLAT(z2[i]), g0, f2);
        }
        KST(o + c, f0), KST(o + ldo + c, f1), KST(o + 2 * ldo + c, f2);
    }
}

/* rows for one block: o[c] = Σ_i z[i] M[c + ld·i] (same operation order as rows3). */
KATTR static void KNAME(rows1)(const double *restrict z, int n4, const double *restrict M,
                               size_t ld, int nc, double *restrict o) {
    int c = 0;
    for (; c + 3 * VL <= nc; c += 3 * VL) {
        VD g0 = KLD(M + c), g1 = KLD(M + c + VL), g2 = KLD(M + c + 2 * VL);
        double a0 = z[0];
        VD f0 = a0 * g0, f1 = a0 * g1, f2 = a0 * g2;
        for (int i = 1; i < n4; i++) {
            const double *row = M + ld * (size_t)i + c;
            double s0 = z[i];
            f0 = KFMA(KSPLAT(s0), KLD(row), f0), f1 = KFMA(KSPLAT(s0), KLD(row + VL), f1),
            f2 = KFMA(KSPLAT(s0), KLD(row + 2 * VL), f2);
        }
        KST(o + c, f0), KST(o + c + VL, f1), KST(o + c + 2 * VL, f2);
    }
    for (; c < nc; c += VL) {
        VD f0 = z[0] * KLD(M + c);
        for (int i = 1; i < n4; i++)
            f0 = KFMA(KSPLAT(z[i]), KLD(M + ld * (size_t)i + c), f0);
        KST(o + c, f0);
    }
}

KATTR static void KNAME(cols3)(double *b, const double *src, int n4, const double *restrict M,
                               size_t ldm, const int *restrict idx, int nt,
                               const double *restrict Cm, size_t ldc, size_t ldt) {
    double *b0 = b, *b1 = b + n4, *b2 = b + 2 * n4;
    const double *a0 = src, *a1 = src + n4, *a2 = src + 2 * n4; /* b = src + ...; src may be b */
    const double *C0 = Cm, *C1 = Cm + ldc, *C2 = Cm + 2 * ldc;  /* term t at ·[ldt·t] */
    int i = 0;
    for (; i + 3 * VL <= n4; i += 3 * VL) {
        VD f00 = KLD(a0 + i), f01 = KLD(a0 + i + VL), f02 = KLD(a0 + i + 2 * VL);
        VD f10 = KLD(a1 + i), f11 = KLD(a1 + i + VL), f12 = KLD(a1 + i + 2 * VL);
        VD f20 = KLD(a2 + i), f21 = KLD(a2 + i + VL), f22 = KLD(a2 + i + 2 * VL);
        for (int t = 0; t < nt; t++) {
            const double *g = M + ldm * (size_t)(idx ? idx[t] : t) + i;
            VD g0 = KLD(g), g1 = KLD(g + VL), g2 = KLD(g + 2 * VL);
            double c0 = C0[ldt * t], c1 = C1[ldt * t], c2 = C2[ldt * t];
            f00 = KFMA(KSPLAT(c0), g0, f00), f01 = KFMA(KSPLAT(c0), g1, f01),
            f02 = KFMA(KSPLAT(c0), g2, f02);
            f10 = KFMA(KSPLAT(c1), g0, f10), f11 = KFMA(KSPLAT(c1), g1, f11),
            f12 = KFMA(KSPLAT(c1), g2, f12);
            f20 = KFMA(KSPLAT(c2), g0, f20), f21 = KFMA(KSPLAT(c2), g1, f21),
            f22 = KFMA(KSPLAT(c2), g2, f22);
        }
        KST(b0 + i, f00), KST(b0 + i + VL, f01), KST(b0 + i + 2 * VL, f02);
        KST(b1 + i, f10), KST(b1 + i + VL, f11), KST(b1 + i + 2 * VL, f12);
        KST(b2 + i, f20), KST(b2 + i + VL, f21), KST(b2 + i + 2 * VL, f22);
    }
    for (; i + 2 * VL <= n4; i += 2 * VL) {
        VD f00 = KLD(a0 + i), f01 = KLD(a0 + i + VL), f10 = KLD(a1 + i), f11 = KLD(a1 + i + VL);
        VD f20 = KLD(a2 + i), f21 = KLD(a2 + i + VL);
        for (int t = 0; t < nt; t++) {
            const double *g = M + ldm * (size_t)(idx ? idx[t] : t) + i;
            VD g0 = KLD(g), g1 = KLD(g + VL);
            double c0 = C0[ldt * t], c1 = C1[ldt * t], c2 = C2[ldt * t];
            f00 = KFMA(KSPLAT(c0), g0, f00), f01 = KFMA(KSPLAT(c0), g1, f01),
            f10 = KFMA(KSPLAT(c1), g0, f10), f11 = KFMA(KSPLAT(c1), g1, f11),
            f20 = KFMA(KSPLAT(c2), g0, f20), f21 = KFMA(KSPLAT(c2), g1, f21);
        }
        KST(b0 + i, f00), KST(b0 + i + VL, f01), KST(b1 + i, f10), KST(b1 + i + VL, f11);
        KST(b2 + i, f20), KST(b2 + i + VL, f21);
    }
    for (; i < n4; i += VL) {
        VD f0 = KLD(a0 + i), f1 = KLD(a1 + i), f2 = KLD(a2 + i);
        for (int t = 0; t < nt; t++) {
            VD g0 = KLD(M + ldm * (size_t)(idx ? idx[t] : t) + i);
            f0 = KFMA(KSPLAT(C0[ldt * t]), g0, f0), f1 = KFMA(KSPLAT(C1[ldt * t]), g0, f1),
            f2 = KFMA(KSPLAT(C2[ldt * t]), g0, f2);
        }
        KST(b0 + i, f0), KST(b1 + i, f1), KST(b2 + i, f2);
    }
}

/* C[3c + j] = sc[c] P_j[c] for c < nc (P_j = P + j·ldp; nc a multiple of 4): the rotation
 * coefficients of the right-hand side, three rows of the polar output scaled per lane and
 * interleaved. Whole vectors of lanes, the products elementwise (the bits of the scalar
 * loop), then shuffled into place. */
KATTR static void KNAME(scale_interleave3)(double *restrict C, const double *restrict P, size_t ldp,
                                           const double *restrict sc, int nc) {
    const double *P0 = P, *P1 = P + ldp, *P2 = P + 2 * ldp;
    for (int c = 0; c < nc; c += VL) {
        VD s = KLD(sc + c);
        VD p0 = s * KLD(P0 + c), p1 = s * KLD(P1 + c), p2 = s * KLD(P2 + c);
        double *o = C + 3 * (size_t)c;
#if VL == 4
        typedef long long mlc_i4 __attribute__((vector_size(32)));
        VD t0 = __builtin_shuffle(p0, p1, (mlc_i4){0, 4, 0, 1});
        VD t1 = __builtin_shuffle(p1, p2, (mlc_i4){1, 5, 0, 2});
        VD t2 = __builtin_shuffle(p2, p0, (mlc_i4){2, 7, 0, 3});
        KST(o, __builtin_shuffle(t0, p2, (mlc_i4){0, 1, 4, 3}));     /* p0₀ p1₀ p2₀ p0₁ */
        KST(o + 4, __builtin_shuffle(t1, p0, (mlc_i4){0, 1, 6, 3})); /* p1₁ p2₁ p0₂ p1₂ */
        KST(o + 8, __builtin_shuffle(t2, p1, (mlc_i4){0, 1, 7, 3})); /* p2₂ p0₃ p1₃ p2₃ */
#else /* element stores: the baseline copy is also built by clang (the fuzzers) */
        o[0] = p0[0], o[1] = p1[0], o[2] = p2[0], o[3] = p0[1], o[4] = p1[1], o[5] = p2[1];
#endif
    }
}

/* L Lᵀ y = Y for the three blocks at once: Y[4a + k] holds block k of sample a (lane 3 is
 * padding), so every update is 4/VL vector operations; each lane does exactly the scalar
 * substitution (the diagonal of L holds reciprocal pivots). */
KATTR static void KNAME(contact_solve)(const double *restrict Gm, int ns, int na,
                                       double *restrict Y) {
#if VL == 4
    /* forward: L w = Y, row by row (row a subtracts its terms in the order c = 0, 1, ..., as
     * the column-by-column form did, but keeps the partial sum in a register) */
    for (int a = 0; a < na; a++) {
        const double *restrict row = Gm + a;
        VD s = KLD(Y + 4 * a);
        for (int c = 0; c < a; c++)
            s -= row[(size_t)ns * c] * KLD(Y + 4 * c);
        KST(Y + 4 * a, s * row[(size_t)ns * a]);
    }
    for (int c = na - 1; c >= 0; c--) { /* backward: Lᵀ y = w */
        const double *restrict col = Gm + (size_t)ns * c;
        VD s = KLD(Y + 4 * c);
        for (int a = c + 1; a < na; a++)
            s -= col[a] * KLD(Y + 4 * a);
        KST(Y + 4 * c, s * col[c]);
    }
#else /* lanes 0–1 in one vector, lane 2 as a scalar (lane 3 is padding, left alone) */
    for (int c = 0; c < na; c++) {
        const double *restrict col = Gm + (size_t)ns * c;
        double d = col[c];
        VD w = KLD(Y + 4 * c) * d;
        double w2 = Y[4 * c + 2] * d;
        KST(Y + 4 * c, w);
        Y[4 * c + 2] = w2;
        for (int a = c + 1; a < na; a++) {
            double l = col[a];
            KST(Y + 4 * a, KLD(Y + 4 * a) - l * w);
            Y[4 * a + 2] -= l * w2;
        }
    }
    for (int c = na - 1; c >= 0; c--) {
        const double *restrict col = Gm + (size_t)ns * c;
        VD s = KLD(Y + 4 * c);
        double s2 = Y[4 * c + 2];
        for (int a = c + 1; a < na; a++) {
            double l = col[a];
            s -= l * KLD(Y + 4 * a);
            s2 -= l * Y[4 * a + 2];
        }
        KST(Y + 4 * c, s * col[c]);
        Y[4 * c + 2] = s2 * col[c];
    }
#endif
}

#undef KLD
#undef KST
#undef KNAME /* the parameters: the next copy defines its own */
#undef KATTR
#undef VL
#undef VD
#undef KSPLAT
#undef KFMA
