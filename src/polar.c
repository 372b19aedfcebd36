/* polar.c: proper rotation nearest to a 3×3 matrix, via the quaternion eigenproblem.
 *
 * For a unit quaternion q = (w, x, y, z), every entry of R(q) is a quadratic form in q, hence
 * tr(R(q)ᵀ A) = qᵀ K q with the symmetric 4×4 matrix K(A) below (Horn 1987, Davenport's
 * q-method). Maximizing over unit q is a symmetric eigenproblem whose top eigenvector gives the
 * maximizer of tr(Rᵀ A) over SO(3): exactly the rotation factor U diag(1,1,det UVᵀ) Vᵀ of the
 * SVD (METHOD.md §5), including the reflected case det A < 0, with no special-casing.
 *
 * Cyclic Jacobi always converges (no failure mode for repeated or zero eigenvalues). Warm start:
 * the quaternion left-multiplication matrix L(q0) is orthogonal with first column q0, so
 * S = L(q0)ᵀ K L(q0) = K(R0ᵀ A) is already nearly diagonal in its first row when q0 is close to the answer
 * (the local-global solver changes A little between iterations), and Jacobi then finishes in
 * one or two sweeps with few rotations.
 */
#include "modalloco/polar.h"

#include <math.h>

void mlc_quat_to_matrix(const double qin[4], double R[9]) {
    double n = sqrt(qin[0] * qin[0] + qin[1] * qin[1] + qin[2] * qin[2] + qin[3] * qin[3]);
    double w = qin[0] / n, x = qin[1] / n, y = qin[2] / n, z = qin[3] / n;
    R[0] = 1 - 2 * (y * y + z * z);
    R[1] = 2 * (x * y + w * z);
    R[2] = 2 * (x * z - w * y);
    R[3] = 2 * (x * y - w * z);
    R[4] = 1 - 2 * (x * x + z * z);
    R[5] = 2 * (y * z + w * x);
    R[6] = 2 * (x * z + w * y);
    R[7] = 2 * (y * z - w * x);
    R[8] = 1 - 2 * (x * x + y * y);
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

int mlc_polar(const double A[9], double q[4], double R[9]) {
    double nA2 = 0;
    for (int i = 0; i < 9; i++) nA2 += A[i] * A[i];
    double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(qn > 0) || !isfinite(qn)) {
        q[0] = 1, q[1] = q[2] = q[3] = 0, qn = 1;
    }
    double a = q[0] / qn, b = q[1] / qn, c = q[2] / qn, d = q[3] / qn;
    q[0] = a, q[1] = b, q[2] = c, q[3] = d;
    if (!(nA2 > 0) || !isfinite(nA2)) {
        /* A = 0 (every rotation optimal) or non-finite input: keep the warm start. */
        mlc_quat_to_matrix(q, R);
        return 0;
    }
    /* Work in the warm basis: with p ↦ q0 ⊗ p, tr(R(q0⊗p)ᵀ A) = tr(R(p)ᵀ R0ᵀ A), so the
     * matrix in that basis is S = K(R0ᵀ A) (27 multiplications instead of L(q0)ᵀ K L(q0)). */
    double R0[9], B[9];
    mlc_quat_to_matrix(q, R0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            B[i + 3 * j] = R0[3 * i] * A[3 * j] + R0[3 * i + 1] * A[3 * j + 1] +
                           R0[3 * i + 2] * A[3 * j + 2];
    double S[4][4];
    build_K(B, S);
    /* ‖K‖_F = 2‖A‖_F for this K. */
    double nrm2 = 4 * nA2;
    double V[4][4] = {{a, -b, -c, -d}, {b, a, -d, c}, {c, d, a, -b}, {d, -c, b, a}};

    /* Off-diagonal entries below 1e-14‖K‖ are rounding noise of the basis change; the
     * eigenvector error they leave is about that over the spectral gap. */
    double thresh = 1e-14 * sqrt(nrm2);
    /* Phase 1 (warm): rotate only the pairs (0, r) until row 0 is zero, so S00 is an
     * eigenvalue with eigenvector V[:, 0]; accept it when it is provably the largest.
     * Near the answer this costs a few rotations instead of diagonalizing the whole matrix. */
    int sweep = 0, done = 0;
    for (int ph1 = 0; ph1 < 6; ph1++) {
        int rotated = 0;
        sweep++;
        for (int r = 1; r < 4; r++)
            if (fabs(S[0][r]) > thresh) rotated = 1, jacobi_rotate(S, V, 0, r);
        if (!rotated) {
            /* S00 is the largest eigenvalue iff M = S00·I − S[1:4,1:4] is positive definite
             * (Sylvester: leading minors > 0); otherwise fall through to phase 2. */
            double m11 = S[0][0] - S[1][1], m22 = S[0][0] - S[2][2], m33 = S[0][0] - S[3][3];
            double m12 = -S[1][2], m13 = -S[1][3], m23 = -S[2][3];
            double d2 = m11 * m22 - m12 * m12;
            double d3 = m11 * (m22 * m33 - m23 * m23) - m12 * (m12 * m33 - m23 * m13) +
                        m13 * (m12 * m23 - m22 * m13);
            done = m11 > 0 && d2 > 0 && d3 > 0;
            break;
        }
    }
    /* Phase 2 (cold or ambiguous): full cyclic Jacobi, then the largest diagonal entry. */
    int best = 0;
    if (!done) {
        for (int it = 0; it < 30; it++) {
            int rotated = 0;
            sweep++;
            for (int p = 0; p < 3; p++)
                for (int r = p + 1; r < 4; r++)
                    if (fabs(S[p][r]) > thresh) rotated = 1, jacobi_rotate(S, V, p, r);
            if (!rotated) break;
        }
        for (int j = 1; j < 4; j++)
            if (S[j][j] > S[best][best]) best = j;
    }
    double qq[4] = {V[0][best], V[1][best], V[2][best], V[3][best]};
    /* Keep the hemisphere of the warm start so the quaternion varies continuously. */
    double dot = qq[0] * a + qq[1] * b + qq[2] * c + qq[3] * d;
    double nq = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
    double sgn = (dot < 0 ? -1.0 : 1.0) / nq;
    for (int k = 0; k < 4; k++) q[k] = sgn * qq[k];
    mlc_quat_to_matrix(q, R);
    return sweep;
}
