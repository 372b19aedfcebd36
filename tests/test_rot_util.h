/* test_rot_util.h: 3×3 helpers for the rotation tests (column-major, M[i + 3j] = M_ij) and the
 * reference rotation factor from LAPACK's SVD. */
#ifndef MODALLOCO_TEST_ROT_UTIL_H
#define MODALLOCO_TEST_ROT_UTIL_H

#include <lapacke.h>

#include "test_util.h"

static inline void mat3_mul(const double *X, const double *Y, double *Z) { /* Z = X Y */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Z[i + 3 * j] = X[i] * Y[3 * j] + X[i + 3] * Y[3 * j + 1] + X[i + 6] * Y[3 * j + 2];
}

static inline double mat3_det(const double *M) {
    return M[0] * (M[4] * M[8] - M[7] * M[5]) - M[3] * (M[1] * M[8] - M[7] * M[2]) +
           M[6] * (M[1] * M[5] - M[4] * M[2]);
}

/* Rotation factor R = U diag(1, 1, d) Vᵀ of A = U Σ Vᵀ (d = det UVᵀ) and, if s is not NULL,
 * the signed singular values (σ1, σ2, d σ3). */
static inline void svd_rotation(const double A[9], double R[9], double *s) {
    double Ac[9], U[9], Vt[9], sv[3], sup[2];
    memcpy(Ac, A, sizeof Ac);
    if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'A', 'A', 3, 3, Ac, 3, sv, U, 3, Vt, 3, sup) != 0)
        fail_msg("dgesvd failed");
    double d = mat3_det(U) * mat3_det(Vt) < 0 ? -1 : 1;
    for (int i = 0; i < 3; i++)
        U[i + 6] *= d;
    mat3_mul(U, Vt, R);
    if (s) s[0] = sv[0], s[1] = sv[1], s[2] = d * sv[2];
}

#endif
