/* polar.c: proper rotation nearest to a 3×3 matrix, via the quaternion eigenproblem.
 *
 * For a unit quaternion q = (w, x, y, z), every entry of R(q) is a quadratic form in q, hence
 * tr(R(q)ᵀ A) = qᵀ K q with the symmetric 4×4 matrix K(A) below (Horn 1987, Davenport's
 * q-method). Maximizing over unit q is a symmetric eigenproblem whose top eigenvector gives the
 * maximizer of tr(Rᵀ A) over SO(3): exactly the rotation factor U diag(1,1,det UVᵀ) Vᵀ of the
 * SVD (docs/method.md §5), including the reflected case det A < 0, with no special-casing.
 *
 * Everything happens in the warm basis: with p ↦ q0 ⊗ p the matrix becomes S = K(R0ᵀ A), whose
 * top eigenvector is close to e0 when the warm start q0 is close to the answer (the
 * local-global solver changes A a little between iterations).
 *
 * Fast path (warm): write the top eigenvector as (1, x). The eigen-equations give
 * x = (λI − T)⁻¹ s and the secular equation f(λ) = λ − S00 − sᵀ(λI − T)⁻¹ s = 0 (s = S[1:4,0],
 * T = S[1:4,1:4]). On (λmax(T), ∞) f is increasing and concave with f' = 1 + ‖x‖², so Newton
 * started at the Rayleigh quotient S00 (≤ the top eigenvalue) climbs monotonically and
 * quadratically to it: 1–3 solves of a 3×3 system. The solve itself certifies the answer: λI − T
 * positive definite means λ > λmax(T) ≥ the second eigenvalue of S (interlacing), so λ is the
 * largest. This replaced a row-0 Jacobi sweep that converged only linearly (about 20 rotations a
 * call in the simulator).
 *
 * Fallback (cold start, tiny spectral gap, or a warm start too far away for λI − T to be
 * definite): cyclic Jacobi on S, which always converges (repeated or zero eigenvalues
 * included), then one Newton polish from its answer.
 *
 * Accuracy (tests/test_polar.c): with signed singular values s1 ≥ s2 ≥ |s3| of A (s3 carries
 * det A's sign), the top eigenvalue of K is separated by 2(s2 + s3), and R agrees with the exact
 * rotation factor to a few ε·κ, κ = σ1/(s2 + s3), the conditioning of the problem itself
 * (measured: ≤ 9 ε κ against an extended-precision reference, where LAPACK's SVD reaches
 * 66 ε κ); when κ is huge (rank one, or a reflection with σ2 ≈ σ3) R is not unique and
 * tr(Rᵀ A) is optimal to a few ε‖A‖. No tolerance above rounding level is left: the Newton
 * solve is applied even when the warm start is already within rounding of the answer (an
 * earlier shortcut kept q when row 0 of S was below 1e-14‖K‖, and Jacobi stopped at 1e-14‖K‖,
 * which left errors up to ~200 ε κ, e.g. 2e-14 on near-rotations).
 */
#include "internal/polar.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* R(q) for a quaternion (Q[0..3] = w, x, y, z) of any non-zero norm into R[0..8]: every
 * entry is a quadratic form over ‖q‖², so one division (s = 2/‖q‖²) normalizes it, with no
 * square root. A macro so that the vectorized lane loop below expands it in place: GCC does not
 * inline a default-target function into target("avx2") code, and the call per lane cost a
 * fifth of an optimize run. */
#define QUAT_TO_MATRIX(Q, R)                                                                       \
    do {                                                                                           \
        double w_ = (Q)[0], x_ = (Q)[1], y_ = (Q)[2], z_ = (Q)[3];                                 \
        double s_ = 2 / (w_ * w_ + x_ * x_ + y_ * y_ + z_ * z_);                                   \
        double xs_ = x_ * s_, ys_ = y_ * s_, zs_ = z_ * s_;                                        \
        double wx_ = w_ * xs_, wy_ = w_ * ys_, wz_ = w_ * zs_, xx_ = x_ * xs_, xy_ = x_ * ys_;     \
        double xz_ = x_ * zs_, yy_ = y_ * ys_, yz_ = y_ * zs_, zz_ = z_ * zs_;                     \
        (R)[0] = 1 - (yy_ + zz_);                                                                  \
        (R)[1] = xy_ + wz_;                                                                        \
        (R)[2] = xz_ - wy_;                                                                        \
        (R)[3] = xy_ - wz_;                                                                        \
        (R)[4] = 1 - (xx_ + zz_);                                                                  \
        (R)[5] = yz_ + wx_;                                                                        \
        (R)[6] = xz_ + wy_;                                                                        \
        (R)[7] = yz_ - wx_;                                                                        \
        (R)[8] = 1 - (xx_ + yy_);                                                                  \
    } while (0)

void mlc_quat_to_matrix(const double q[4], double R[9]) {
    QUAT_TO_MATRIX(q, R);
}

/* One Jacobi rotation zeroing S[p][r] (Numerical Recipes convention: the smaller angle),
 * S ← Jᵀ S J, V ← V J. */
static void jacobi_rotate(double S[4][4], double V[4][4], int p, int r) {
    double apq = S[p][r];
    double theta = (S[r][r] - S[p][p]) / (2 * apq);
    double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
    double cs = 1 / sqrt(t * t + 1), sn = t * cs;
    for (int k = 0; k < 4; k++) {
        double skp = S[k][p], skq = S[k][r];
        S[k][p] = cs * skp - sn * skq;
        S[k][r] = sn * skp + cs * skq;
    }
    for (int k = 0; k < 4; k++) {
        double spk = S[p][k], sqk = S[r][k];
        S[p][k] = cs * spk - sn * sqk;
        S[r][k] = sn * spk + cs * sqk;
    }
    S[p][r] = S[r][p] = 0;
    for (int k = 0; k < 4; k++) {
        double vkp = V[k][p], vkq = V[k][r];
        V[k][p] = cs * vkp - sn * vkq;
        V[k][r] = sn * vkp + cs * vkq;
    }
}

/* K(A) with tr(R(q)ᵀ A) = qᵀ K q, A_ij = A[i + 3j]. Diagonal: coefficients of w², x², y², z²;
 * off-diagonal: half the coefficients of the cross terms of Σ_ij A_ij R_ij(q). */
static void build_K(const double A[9], double K[4][4]) {
    double a00 = A[0], a10 = A[1], a20 = A[2], a01 = A[3], a11 = A[4], a21 = A[5], a02 = A[6],
           a12 = A[7], a22 = A[8];
    K[0][0] = a00 + a11 + a22;
    K[1][1] = a00 - a11 - a22;
    K[2][2] = -a00 + a11 - a22;
    K[3][3] = -a00 - a11 + a22;
    K[0][1] = K[1][0] = a21 - a12;
    K[0][2] = K[2][0] = a02 - a20;
    K[0][3] = K[3][0] = a10 - a01;
    K[1][2] = K[2][1] = a01 + a10;
    K[1][3] = K[3][1] = a02 + a20;
    K[2][3] = K[3][2] = a12 + a21;
}

/* S = K(R(q)ᵀ A): the quaternion matrix in the basis L(q) whose first column is q (with
 * p ↦ q ⊗ p, tr(R(q⊗p)ᵀ A) = tr(R(p)ᵀ R(q)ᵀ A); 27 multiplications instead of L(q)ᵀ K L(q)).
 * q is unit. */
static void warm_matrix(const double A[9], const double q[4], double S[4][4]) {
    double R0[9], B[9];
    mlc_quat_to_matrix(q, R0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            B[i + 3 * j] =
                R0[3 * i] * A[3 * j] + R0[3 * i + 1] * A[3 * j + 1] + R0[3 * i + 2] * A[3 * j + 2];
    build_K(B, S);
}

/* Fast path (file header): Newton on the secular equation in the basis of the unit warm start
 * q. On success q becomes the answer (first coordinate positive in the warm basis, so it stays
 * in the warm start's hemisphere) and the number of solves is returned; 0 means "not certified"
 * (λI − T not safely definite, or no convergence) and q is left unchanged. scale = ‖K‖_F.
 * Even when row 0 of S is at rounding level (a warm restart from an answer) the step is
 * taken: x = (λI − T)⁻¹ s is then rounding-sized itself, and skipping it would freeze errors of
 * size ‖s‖/gap. */
static int newton_top(double S[4][4], double scale, double q[4]) {
    const double s1 = S[0][1], s2 = S[0][2], s3 = S[0][3];
    /* A pivot of λI − T below this means a top gap under ~1e-9‖K‖: the eigenvector is then
     * ill-conditioned and the cyclic Jacobi decides. ftol: |f| is evaluated to a few ε‖K‖,
     * and the error of λ enters x only multiplied by ‖x‖/gap. */
    const double piv_min = 1e-9 * scale, ftol = 1e-15 * scale;
    double lam = S[0][0];
    for (int it = 1; it <= 12; it++) {
        /* M = λI − T by its adjugate (Cramer): one division, and the cofactors are independent
         * (short dependency chains), where an LDLᵀ needs three divisions in sequence. Definite
         * iff the leading minors m11, c33, det are positive; the LDLᵀ pivots m11, c33/m11 and
         * det/c33 must clear piv_min. */
        double m11 = lam - S[1][1], m22 = lam - S[2][2], m33 = lam - S[3][3];
        double m12 = -S[1][2], m13 = -S[1][3], m23 = -S[2][3];
        double c11 = m22 * m33 - m23 * m23, c33 = m11 * m22 - m12 * m12;
        double c12 = m13 * m23 - m12 * m33, c13 = m12 * m23 - m13 * m22;
        double c22 = m11 * m33 - m13 * m13, c23 = m12 * m13 - m11 * m23;
        double det = m11 * c11 + m12 * c12 + m13 * c13;
        if (!(m11 > piv_min) || !(c33 > piv_min * m11) || !(det > piv_min * c33)) return 0;
        double id = 1 / det;
        double x1 = (c11 * s1 + c12 * s2 + c13 * s3) * id;
        double x2 = (c12 * s1 + c22 * s2 + c23 * s3) * id;
        double x3 = (c13 * s1 + c23 * s2 + c33 * s3) * id;
        double xx = x1 * x1 + x2 * x2 + x3 * x3;
        double f = lam - S[0][0] - (s1 * x1 + s2 * x2 + s3 * x3);
        if (fabs(f) <= ftol * (1 + xx)) {
            /* q ← L(q) (1, x) / ‖(1, x)‖ */
            double a = q[0], b = q[1], c = q[2], d = q[3];
            double in = 1 / sqrt(1 + xx);
            double p0 = in, p1 = x1 * in, p2 = x2 * in, p3 = x3 * in;
            q[0] = a * p0 - b * p1 - c * p2 - d * p3;
            q[1] = b * p0 + a * p1 - d * p2 + c * p3;
            q[2] = c * p0 + d * p1 + a * p2 - b * p3;
            q[3] = d * p0 - c * p1 + b * p2 + a * p3;
            return it;
        }
        lam -= f / (1 + xx); /* f < 0 left of the root: λ increases monotonically */
    }
    return 0;
}

/* Fallback: cyclic Jacobi on S (warm basis of the unit q), largest diagonal entry. Writes the
 * eigenvector into q (hemisphere of the warm start) and returns the number of sweeps. */
static int jacobi_top(double S[4][4], double scale, double q[4]) {
    double a = q[0], b = q[1], c = q[2], d = q[3];
    double V[4][4] = {{a, -b, -c, -d}, {b, a, -d, c}, {c, d, a, -b}, {d, -c, b, a}};
    /* Sweep until the off-diagonal entries are below rounding level. Near convergence the
     * rotations are tiny and the entries they leave are rounding errors of themselves, not of
     * ‖K‖, so this costs about one sweep more than a 1e-14‖K‖ cut-off; it matters where the
     * Newton polish cannot certify (top gap < 1e-9‖K‖), whose optimal value tr(Rᵀ A) would
     * otherwise be off by (cut-off)²/gap. */
    double thresh = 1e-17 * scale;
    int sweep = 0;
    for (int it = 0; it < 30; it++) {
        int rotated = 0;
        sweep++;
        for (int p = 0; p < 3; p++)
            for (int r = p + 1; r < 4; r++)
                if (fabs(S[p][r]) > thresh) rotated = 1, jacobi_rotate(S, V, p, r);
        if (!rotated) break;
    }
    int best = 0;
    for (int j = 1; j < 4; j++)
        if (S[j][j] > S[best][best]) best = j;
    double qq[4] = {V[0][best], V[1][best], V[2][best], V[3][best]};
    /* Keep the hemisphere of the warm start so the quaternion varies continuously. */
    double dot = qq[0] * a + qq[1] * b + qq[2] * c + qq[3] * d;
    double nq = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
    double sgn = (dot < 0 ? -1.0 : 1.0) / nq;
    for (int k = 0; k < 4; k++)
        q[k] = sgn * qq[k];
    return sweep;
}

int mlc_polar(const double A[9], double q[4], double R[9]) {
    double nA2 = 0;
    for (int i = 0; i < 9; i++)
        nA2 += A[i] * A[i];
    double qn2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (!(qn2 > 0) || !isfinite(qn2)) {
        q[0] = 1, q[1] = q[2] = q[3] = 0;
    } else if (fabs(qn2 - 1) > 1e-13) {
        /* A quaternion returned by the previous call is unit to rounding and is used as is
         * (saves a square root on the critical path); anything else is normalized. */
        double iq = 1 / sqrt(qn2);
        for (int k = 0; k < 4; k++)
            q[k] *= iq;
    }
    if (!(nA2 > 0) || !isfinite(nA2)) {
        /* A = 0 (every rotation optimal) or non-finite input: keep the warm start. */
        mlc_quat_to_matrix(q, R);
        return 0;
    }
    double scale = 2 * sqrt(nA2); /* ‖K‖_F = 2‖A‖_F for this K */
    double S[4][4];
    warm_matrix(A, q, S);
    int n = newton_top(S, scale, q);
    if (n == 0) {
        n = jacobi_top(S, scale, q);
        /* Polish from the Jacobi answer: Newton removes what is left of the Jacobi error and
         * certifies the eigenvalue (a warm restart from the result then returns the same
         * rotation to rounding). */
        double qj[4] = {q[0], q[1], q[2], q[3]}, nj = 0;
        for (int k = 0; k < 4; k++)
            nj += qj[k] * qj[k];
        for (int k = 0; k < 4; k++)
            qj[k] /= sqrt(nj);
        warm_matrix(A, qj, S);
        if (newton_top(S, scale, qj) > 0)
            for (int k = 0; k < 4; k++)
                q[k] = qj[k];
        n++;
    }
    mlc_quat_to_matrix(q, R);
    return n;
}

/* ---- batched: problems side by side, lane by lane ---------------------------------------
 * The warm path of mlc_polar is a chain of dependent divisions and a square root (about 300
 * cycles of latency for ~700 instructions), so one call at a time leaves the core mostly idle.
 * Here PL problems (a block) advance together, stage by stage, in loops over the lanes: the
 * lanes' chains overlap and the lane loops vectorize (the lane state logic is branch-free
 * selects). Storage is lane by lane (structure of arrays), so the loops load whole vectors.
 * Every lane performs exactly the operations of mlc_polar in the same order, so the results are
 * bit-identical to separate calls; a lane that leaves the warm path (cold start, tiny gap, no
 * convergence) is finished by mlc_polar itself. Blocks are 8 lanes, the last 4 to 16 (the
 * baseline's; the AVX2 path below takes one vector of 4 at a time). */
#define PLMAX 16

/* Two implementations of the lanes: these blocks (the SSE2 baseline, and every machine
 * without the AVX2 copy) and, on AVX2, one vector of four lanes at a time held in registers
 * (polar_vector4 below), chosen once at load by mlc__cpu_use_avx2, the same decision as the
 * step kernels' (cpu.h: MLC_NO_AVX2=1 in the environment forces the baseline;
 * building with -DMLC_NO_KERNEL_CLONES drops the AVX2 copy). Elementwise lane operations only,
 * in the same order, no FMA, so the two give identical bits. */

/* The lane loops vectorize only when GCC may evaluate the comparisons and square roots of
 * every lane unconditionally: no errno from sqrt (its arguments are ≥ 0 or NaN here) and no
 * trapping-math restriction. Neither option changes any computed value (both are about
 * errno and floating-point exception flags), so the lanes stay bit-identical to mlc_polar.
 * Nor does the third: it keeps GCC from splitting the lane loops' zero fills and copies into
 * memset/memcpy calls, which it inlined as `rep stos`, whose start-up cost on a dozen lanes
 * was about a tenth of the block's time on the AMD machines measured. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-math-errno", "no-trapping-math", "no-tree-loop-distribute-patterns")
#endif

/* Lane square roots (PL a multiple of 4): on x86-64 the packed square root instructions, which
 * round exactly like sqrt (IEEE); a plain sqrt loop would stay scalar, since GCC keeps its errno
 * branch. */
#if defined(__GNUC__) && defined(__x86_64__)
typedef double mlc_p2d __attribute__((vector_size(16), aligned(8)));
static inline __attribute__((always_inline)) void sqrt_lanes2(int PL, double *o, const double *x) {
    for (int l = 0; l < PL; l += 2)
        *(mlc_p2d *)(void *)(o + l) =
            __builtin_ia32_sqrtpd(*(const mlc_p2d *)(const void *)(x + l));
}
#else
static inline void sqrt_lanes2(int PL, double *o, const double *x) {
    for (int l = 0; l < PL; l++)
        o[l] = sqrt(x[l]);
}
#endif

/* A lane off the warm path (state 3): mlc_polar from the lane's A (Ap, as mlc_polar takes it)
 * and q; its q and R into the lane's column (q, R at the lane, strides ldq, ldr). */
static int lane_fallback(const double Ap[9], double qp[4], double *q, size_t ldq, double *R,
                         size_t ldr) {
    double Rp[9];
    int nw = mlc_polar(Ap, qp, Rp);
    for (int k = 0; k < 4; k++)
        q[k * ldq] = qp[k];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            R[(3 * k + j) * ldr] = Rp[k + 3 * j];
    return nw;
}

/* One block of PL lanes (PL a constant after inlining; nl ≤ PL used). Lanes nl..PL−1 of every
 * row are read and written as scratch. A_kj of lane l at A[(3k + j)·lda + l], q_k at
 * q[k·ldq + l], R_kj at R[(3k + j)·ldr + l].
 * Lane state: 0 on the Newton path, 1 finished (q final), 2 converged (apply x to q),
 * 3 fallback to mlc_polar. */
static inline __attribute__((always_inline)) int
polar_block(const int PL, int nl, const double *restrict A, size_t lda, double *restrict q,
            size_t ldq, double *restrict R, size_t ldr, int *restrict work) {
    double a[9][PLMAX], qw[4][PLMAX], scale[PLMAX];
    long state[PLMAX], n[PLMAX];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            for (int l = 0; l < PL; l++)
                a[k + 3 * j][l] = A[(3 * k + j) * lda + l];
    for (int k = 0; k < 4; k++)
        for (int l = 0; l < PL; l++)
            qw[k][l] = q[k * ldq + l];
    /* Prelude (mlc_polar): norms, warm start check, A = 0. fabs(qn2 − 1) ≤ 1e-13 also rules
     * out qn2 ≤ 0 and non-finite qn2; 0 < nA2 ≤ DBL_MAX is "positive and finite". */
    double nA2v[PLMAX];
    for (int l = 0; l < PL; l++)
        nA2v[l] = 0;
    for (int i = 0; i < 9; i++)
        for (int l = 0; l < PL; l++)
            nA2v[l] += a[i][l] * a[i][l];
    for (int l = 0; l < PL; l++) {
        double nA2 = nA2v[l];
        double qn2 =
            qw[0][l] * qw[0][l] + qw[1][l] * qw[1][l] + qw[2][l] * qw[2][l] + qw[3][l] * qw[3][l];
        /* not warm: not a previous answer, mlc_polar decides (3); A = 0: keep q, 0 work (1) */
        long warm = -(long)(fabs(qn2 - 1) <= 1e-13);
        long nz = -(long)((nA2 > 0) & (nA2 <= DBL_MAX));
        state[l] = (warm & ~nz & 1) | (~warm & 3);
        n[l] = 0;
    }
    /* Square roots in loops of their own (sqrt_lanes2 above). */
    sqrt_lanes2(PL, scale, nA2v);
    for (int l = 0; l < PL; l++)
        scale[l] = 2 * scale[l];
    /* warm_matrix: S = K(R(q)ᵀ A), lane by lane. */
    double S00[PLMAX], S11[PLMAX], S22[PLMAX], S33[PLMAX], S01[PLMAX], S02[PLMAX], S03[PLMAX],
        S12[PLMAX], S13[PLMAX], S23[PLMAX];
    for (int l = 0; l < PL; l++) {
        const double qlane[4] = {qw[0][l], qw[1][l], qw[2][l], qw[3][l]};
        double R0[9];
        QUAT_TO_MATRIX(qlane, R0);
        double B[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                B[i + 3 * j] = R0[3 * i] * a[3 * j][l] + R0[3 * i + 1] * a[3 * j + 1][l] +
                               R0[3 * i + 2] * a[3 * j + 2][l];
        double a00 = B[0], a10 = B[1], a20 = B[2], a01 = B[3], a11 = B[4], a21 = B[5], a02 = B[6],
               a12 = B[7], a22 = B[8];
        S00[l] = a00 + a11 + a22;
        S11[l] = a00 - a11 - a22;
        S22[l] = -a00 + a11 - a22;
        S33[l] = -a00 - a11 + a22;
        S01[l] = a21 - a12;
        S02[l] = a02 - a20;
        S03[l] = a10 - a01;
        S12[l] = a01 + a10;
        S13[l] = a02 + a20;
        S23[l] = a12 + a21;
    }
    /* newton_top, all lanes in step; a lane's state changes exactly where newton_top returns. */
    double lam[PLMAX], X1[PLMAX], X2[PLMAX], X3[PLMAX], XX[PLMAX];
    for (int l = 0; l < PL; l++)
        lam[l] = S00[l], X1[l] = X2[l] = X3[l] = XX[l] = 0;
    for (int it = 1; it <= 12; it++) {
        long active = 0;
        for (int l = 0; l < PL; l++)
            active |= state[l] == 0;
        if (!active) break;
        for (int l = 0; l < PL; l++) {
            double s1 = S01[l], s2 = S02[l], s3 = S03[l], la = lam[l];
            double m11 = la - S11[l], m22 = la - S22[l], m33 = la - S33[l];
            double m12 = -S12[l], m13 = -S13[l], m23 = -S23[l];
            double c11 = m22 * m33 - m23 * m23, c33 = m11 * m22 - m12 * m12;
            double c12 = m13 * m23 - m12 * m33, c13 = m12 * m23 - m13 * m22;
            double c22 = m11 * m33 - m13 * m13, c23 = m12 * m13 - m11 * m23;
            double det = m11 * c11 + m12 * c12 + m13 * c13;
            double id = 1 / det;
            double x1 = (c11 * s1 + c12 * s2 + c13 * s3) * id;
            double x2 = (c12 * s1 + c22 * s2 + c23 * s3) * id;
            double x3 = (c13 * s1 + c23 * s2 + c33 * s3) * id;
            double xx = x1 * x1 + x2 * x2 + x3 * x3;
            double f = la - S00[l] - (s1 * x1 + s2 * x2 + s3 * x3);
            const double piv_min = 1e-9 * scale[l], ftol = 1e-15 * scale[l];
            /* Branch-free lane logic (masks 0 / −1) so the loop vectorizes; the outcome per
             * lane is newton_top's: fail → 3, converged → 2. */
            long run = -(long)(state[l] == 0);
            long fail = -(long)(!(m11 > piv_min) | !(c33 > piv_min * m11) | !(det > piv_min * c33));
            long conv = -(long)(fabs(f) <= ftol * (1 + xx));
            long stnew = (fail & 3) | (~fail & conv & 2);
            state[l] = (run & stnew) | (~run & state[l]);
            long done = run & ~fail & conv;
            n[l] = (done & it) | (~done & n[l]);
            long climb = run & ~fail & ~conv;
            /* x of every lane, unconditionally: a lane that converged keeps its λ, so the
             * later iterations recompute its x bit for bit; for the others x is not read. (A
             * select `X[l] = take ? x : X[l]` is made a masked store by GCC, which AMD cores run
             * slowly and cannot forward to the next load.) */
            X1[l] = x1, X2[l] = x2, X3[l] = x3, XX[l] = xx;
            double step = f / (1 + xx); /* f < 0 left of the root: λ increases monotonically */
            lam[l] = la - (climb ? step : 0.0); /* la − 0 is la, ±0 and NaN included */
        }
    }
    /* q ← L(q) (1, x) / ‖(1, x)‖ for converged lanes, then R(q). Lanes still at 0 after 12
     * steps did not converge: mlc_polar decides. */
    double rt[PLMAX], qn[4][PLMAX];
    for (int l = 0; l < PL; l++)
        rt[l] = 1 + XX[l];
    sqrt_lanes2(PL, rt, rt);
    for (int l = 0; l < PL; l++) {
        state[l] |= -(long)(state[l] == 0) & 3;
        double a0 = qw[0][l], b = qw[1][l], c = qw[2][l], d = qw[3][l];
        double in = 1 / rt[l];
        double p0 = in, p1 = X1[l] * in, p2 = X2[l] * in, p3 = X3[l] * in;
        double n0 = a0 * p0 - b * p1 - c * p2 - d * p3;
        double n1 = b * p0 + a0 * p1 - d * p2 + c * p3;
        double n2 = c * p0 + d * p1 + a0 * p2 - b * p3;
        double n3 = d * p0 - c * p1 + b * p2 + a0 * p3;
        long upd = state[l] == 2; /* into qn, not back into qw: no masked store (above) */
        qn[0][l] = upd ? n0 : a0;
        qn[1][l] = upd ? n1 : b;
        qn[2][l] = upd ? n2 : c;
        qn[3][l] = upd ? n3 : d;
    }
    double Rl[9][PLMAX];
    for (int l = 0; l < PL; l++) {
        double w = qn[0][l], x = qn[1][l], y = qn[2][l], z = qn[3][l];
        double s = 2 / (w * w + x * x + y * y + z * z);
        double xs = x * s, ys = y * s, zs = z * s;
        double wx = w * xs, wy = w * ys, wz = w * zs, xx = x * xs, xy = x * ys, xz = x * zs;
        double yy = y * ys, yz = y * zs, zz = z * zs;
        Rl[0][l] = 1 - (yy + zz);
        Rl[1][l] = xy + wz;
        Rl[2][l] = xz - wy;
        Rl[3][l] = xy - wz;
        Rl[4][l] = 1 - (xx + zz);
        Rl[5][l] = yz + wx;
        Rl[6][l] = xz + wy;
        Rl[7][l] = yz - wx;
        Rl[8][l] = 1 - (xx + yy);
    }
    /* Fallback lanes keep their inputs until mlc_polar overwrites them below. */
    long any3 = 0;
    for (int l = 0; l < PL; l++)
        any3 |= l < nl && state[l] == 3;
    double A3[9][PLMAX];
    if (any3)
        for (int i = 0; i < 9; i++)
            for (int l = 0; l < PL; l++)
                A3[i][l] = a[i][l];
    for (int k = 0; k < 4; k++)
        for (int l = 0; l < PL; l++)
            q[k * ldq + l] = qn[k][l];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            for (int l = 0; l < PL; l++)
                R[(3 * k + j) * ldr + l] = Rl[k + 3 * j][l];
    int total = 0;
    for (int l = 0; l < nl; l++) {
        int nw = (int)n[l];
        if (state[l] == 3) {
            double Ap[9], qp[4];
            for (int i = 0; i < 9; i++)
                Ap[i] = A3[i][l];
            for (int k = 0; k < 4; k++)
                qp[k] = qn[k][l]; /* unchanged for state 3 */
            nw = lane_fallback(Ap, qp, q + l, ldq, R + l, ldr);
        }
        if (work) work[l] = nw;
        total += nw;
    }
    return total;
}

/* All problems: blocks of 8 lanes, then blocks of 4 (the arrays have ld ≥ n rounded up to 4). */
static int polar_lanes_base(int n, const double *A, size_t lda, double *q, size_t ldq, double *R,
                            size_t ldr, int *work) {
    int total = 0, b = 0;
    for (; n - b > 16; b += 8)
        total += polar_block(8, 8, A + b, lda, q + b, ldq, R + b, ldr, work ? work + b : NULL);
    int nl = n - b, *wb = work ? work + b : NULL; /* the last ≤ 16 in one block */
    A += b, q += b, R += b;
    if (nl > 12) return total + polar_block(16, nl, A, lda, q, ldq, R, ldr, wb);
    if (nl > 8) return total + polar_block(12, nl, A, lda, q, ldq, R, ldr, wb);
    if (nl > 4) return total + polar_block(8, nl, A, lda, q, ldq, R, ldr, wb);
    if (nl > 0) return total + polar_block(4, nl, A, lda, q, ldq, R, ldr, wb);
    return total;
}

typedef int (*polar_lanes_fn)(int, const double *, size_t, double *, size_t, double *, size_t,
                              int *);
static polar_lanes_fn polar_lanes_sel = polar_lanes_base;
#ifdef MLC_HAVE_AVX2_CLONES
/* The AVX2 copy: polar_block's stages for one vector of four lanes at a time, its values in
 * registers from the load of A to the store of R, where the block's stages passed each value
 * through an array of lanes; and each vector stops its Newton steps when its own lanes are
 * done. Every lane performs polar_block's operations in the same order (elementwise IEEE
 * operations on vectors; selects by mask), so the results are its bits. Lanes n.. of the last
 * vector are scratch, as in a block. */
typedef double v4d __attribute__((vector_size(32), aligned(8)));
typedef long long v4l __attribute__((vector_size(32)));
#define V4(x) ((v4d){(x), (x), (x), (x)})
#define PICK(m, a, b) ((v4d)(((v4l)(a) & (m)) | ((v4l)(b) & ~(m)))) /* m ? a : b */
#define LD4(p) (*(const v4d *)(const void *)(p))
#define ST4(p, v) (*(v4d *)(void *)(p) = (v))

/* R(q) of four lanes (QUAT_TO_MATRIX's operations), R[k + 3j] the vector of R_kj. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
quat_rows4(v4d w, v4d x, v4d y, v4d z, v4d R[9]) {
    v4d s = V4(2.0) / (w * w + x * x + y * y + z * z);
    v4d xs = x * s, ys = y * s, zs = z * s;
    v4d wx = w * xs, wy = w * ys, wz = w * zs, xx = x * xs, xy = x * ys, xz = x * zs;
    v4d yy = y * ys, yz = y * zs, zz = z * zs;
    R[0] = V4(1.0) - (yy + zz), R[1] = xy + wz, R[2] = xz - wy;
    R[3] = xy - wz, R[4] = V4(1.0) - (xx + zz), R[5] = yz + wx;
    R[6] = xz + wy, R[7] = yz - wx, R[8] = V4(1.0) - (xx + yy);
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) int
polar_vector4(int nl, const double *restrict A, size_t lda, double *restrict q, size_t ldq,
              double *restrict R, size_t ldr, int *restrict work) {
    v4d a[9], qw[4];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            a[k + 3 * j] = LD4(A + (3 * k + j) * lda);
    for (int k = 0; k < 4; k++)
        qw[k] = LD4(q + k * ldq);
    v4d nA2 = V4(0.0);
    for (int i = 0; i < 9; i++)
        nA2 += a[i] * a[i];
    const v4l absmask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                         0x7fffffffffffffffLL};
    v4d qn2 = qw[0] * qw[0] + qw[1] * qw[1] + qw[2] * qw[2] + qw[3] * qw[3];
    v4l warm = (v4d)((v4l)(qn2 - V4(1.0)) & absmask) <= V4(1e-13);
    v4l nz = (nA2 > V4(0.0)) & (nA2 <= V4(DBL_MAX));
    v4l state = (warm & ~nz & 1) | (~warm & 3), n = {0, 0, 0, 0};
    v4d scale = V4(2.0) * __builtin_ia32_sqrtpd256(nA2);
    /* S = K(R(q)ᵀ A) */
    v4d R0[9];
    quat_rows4(qw[0], qw[1], qw[2], qw[3], R0);
    v4d B[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            B[i + 3 * j] =
                R0[3 * i] * a[3 * j] + R0[3 * i + 1] * a[3 * j + 1] + R0[3 * i + 2] * a[3 * j + 2];
    const v4d a00 = B[0], a10 = B[1], a20 = B[2], a01 = B[3], a11 = B[4], a21 = B[5], a02 = B[6],
              a12 = B[7], a22 = B[8];
    const v4d S00 = a00 + a11 + a22, S11 = a00 - a11 - a22, S22 = -a00 + a11 - a22,
              S33 = -a00 - a11 + a22, S01 = a21 - a12, S02 = a02 - a20, S03 = a10 - a01,
              S12 = a01 + a10, S13 = a02 + a20, S23 = a12 + a21;
    /* Newton steps while a lane of this vector is on the path (polar_block's loop) */
    v4d lam = S00, X1 = V4(0.0), X2 = V4(0.0), X3 = V4(0.0), XX = V4(0.0);
    const v4d piv_min = V4(1e-9) * scale, ftol = V4(1e-15) * scale;
    for (long long it = 1; it <= 12; it++) {
        v4l run = state == 0;
        if (!(run[0] | run[1] | run[2] | run[3])) break;
        const v4d s1 = S01, s2 = S02, s3 = S03, la = lam;
        v4d m11 = la - S11, m22 = la - S22, m33 = la - S33;
        v4d m12 = -S12, m13 = -S13, m23 = -S23;
        v4d c11 = m22 * m33 - m23 * m23, c33 = m11 * m22 - m12 * m12;
        v4d c12 = m13 * m23 - m12 * m33, c13 = m12 * m23 - m13 * m22;
        v4d c22 = m11 * m33 - m13 * m13, c23 = m12 * m13 - m11 * m23;
        v4d det = m11 * c11 + m12 * c12 + m13 * c13;
        v4d id = V4(1.0) / det;
        v4d x1 = (c11 * s1 + c12 * s2 + c13 * s3) * id;
        v4d x2 = (c12 * s1 + c22 * s2 + c23 * s3) * id;
        v4d x3 = (c13 * s1 + c23 * s2 + c33 * s3) * id;
        v4d xx = x1 * x1 + x2 * x2 + x3 * x3;
        v4d f = la - S00 - (s1 * x1 + s2 * x2 + s3 * x3);
        v4l fail = ~(m11 > piv_min) | ~(c33 > piv_min * m11) | ~(det > piv_min * c33);
        v4l conv = (v4d)((v4l)f & absmask) <= ftol * (V4(1.0) + xx);
        v4l stnew = (fail & 3) | (~fail & conv & 2);
        state = (run & stnew) | (~run & state);
        v4l done = run & ~fail & conv;
        n = (done & it) | (~done & n);
        v4l climb = run & ~fail & ~conv;
        X1 = x1, X2 = x2, X3 = x3, XX = xx; /* a converged lane recomputes its own */
        v4d step = f / (V4(1.0) + xx);
        lam = la - PICK(climb, step, V4(0.0));
    }
    /* q ← L(q) (1, x) / ‖(1, x)‖ for converged lanes, then R(q) */
    v4d rt = __builtin_ia32_sqrtpd256(V4(1.0) + XX);
    state |= (state == 0) & 3;
    const v4d a0 = qw[0], b = qw[1], c = qw[2], d = qw[3];
    v4d in = V4(1.0) / rt;
    v4d p0 = in, p1 = X1 * in, p2 = X2 * in, p3 = X3 * in;
    v4d n0 = a0 * p0 - b * p1 - c * p2 - d * p3;
    v4d n1 = b * p0 + a0 * p1 - d * p2 + c * p3;
    v4d n2 = c * p0 + d * p1 + a0 * p2 - b * p3;
    v4d n3 = d * p0 - c * p1 + b * p2 + a0 * p3;
    v4l upd = state == 2;
    v4d qn[4] = {PICK(upd, n0, a0), PICK(upd, n1, b), PICK(upd, n2, c), PICK(upd, n3, d)};
    v4d Rl[9];
    quat_rows4(qn[0], qn[1], qn[2], qn[3], Rl);
    for (int k = 0; k < 4; k++)
        ST4(q + k * ldq, qn[k]);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            ST4(R + (3 * k + j) * ldr, Rl[k + 3 * j]);
    int total = 0;
    for (int l = 0; l < nl; l++) {
        int nw = (int)n[l];
        if (state[l] == 3) { /* off the warm path: mlc_polar decides, from the inputs */
            double Ap[9], qp[4];
            for (int i = 0; i < 9; i++)
                Ap[i] = a[i][l];
            for (int k = 0; k < 4; k++)
                qp[k] = qw[k][l];
            nw = lane_fallback(Ap, qp, q + l, ldq, R + l, ldr);
        }
        if (work) work[l] = nw;
        total += nw;
    }
    return total;
}
#undef V4
#undef PICK
#undef LD4
#undef ST4

__attribute__((target("avx2"))) static int polar_lanes_avx2(int n, const double *A, size_t lda,
                                                            double *q, size_t ldq, double *R,
                                                            size_t ldr, int *work) {
    int total = 0;
    for (int b = 0; b < n; b += 4)
        total += polar_vector4(n - b < 4 ? n - b : 4, A + b, lda, q + b, ldq, R + b, ldr,
                               work ? work + b : NULL);
    return total;
}
__attribute__((constructor)) static void polar_select(void) {
    if (mlc__cpu_use_avx2()) polar_lanes_sel = polar_lanes_avx2;
}
#endif

int mlc_polar_lanes(int n, const double *A, size_t lda, double *q, size_t ldq, double *R,
                    size_t ldr, int *work) {
    return polar_lanes_sel(n, A, lda, q, ldq, R, ldr, work);
}

/* The array-of-problems form: eight problems at a time through lane-major scratch (padding
 * lanes repeat the first problem; their results are dropped). */
int mlc_polar_n(int n, const double *A, double *q, double *R, int *work) {
    int total = 0;
    for (int b = 0; b < n; b += PLMAX) {
        int nl = n - b < PLMAX ? n - b : PLMAX;
        double At[9 * PLMAX], qt[4 * PLMAX], Rt[9 * PLMAX];
        for (int l = 0; l < PLMAX; l++) {
            int p = b + (l < nl ? l : 0);
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++)
                    At[(3 * k + j) * PLMAX + l] = A[9 * p + k + 3 * j];
            for (int k = 0; k < 4; k++)
                qt[k * PLMAX + l] = q[4 * p + k];
        }
        total += polar_lanes_sel(nl, At, PLMAX, qt, PLMAX, Rt, PLMAX, work ? work + b : NULL);
        for (int l = 0; l < nl; l++) {
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++)
                    R[9 * (b + l) + k + 3 * j] = Rt[(3 * k + j) * PLMAX + l];
            for (int k = 0; k < 4; k++)
                q[4 * (b + l) + k] = qt[k * PLMAX + l];
        }
    }
    return total;
}
