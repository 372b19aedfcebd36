/* dense.c: the damped dense Cholesky factorization and its solve (dense.h). */
#include "dense.h"

#include <math.h>

/* Left-looking update of column j: rows j..n−1 less the factor's columns 0..j−1, in
 * ascending order of the column. */
static inline void subtract_left_columns(double *A, size_t ld, int n, int j) {
    double *Lj = A + ld * (size_t)j;
    for (int k = 0; k < j; k++) {
        const double *Lk = A + ld * (size_t)k;
        double l = Lk[j];
        for (int i = j; i < n; i++)
            Lj[i] -= l * Lk[i];
    }
}

void mlc_dense_cholesky(double *A, size_t ld, int n, double eps) {
    mlc_dense_cholesky_from(A, ld, n, 0, eps);
}

void mlc_dense_cholesky_from(double *A, size_t ld, int n, int j0, double eps) {
    for (int j = j0; j < n; j++) {
        double *Lj = A + ld * (size_t)j;
        subtract_left_columns(A, ld, n, j);
        double ipiv = 1 / (Lj[j] > eps ? sqrt(Lj[j]) : sqrt(eps));
        Lj[j] = ipiv;
        for (int i = j + 1; i < n; i++)
            Lj[i] *= ipiv;
    }
}

int mlc_dense_cholesky_spd(double *A, size_t ld, int n) {
    for (int j = 0; j < n; j++) {
        double *Lj = A + ld * (size_t)j;
        subtract_left_columns(A, ld, n, j);
        if (!(Lj[j] > 0)) return j + 1; /* NaN included */
        double d = sqrt(Lj[j]);
        Lj[j] = d;
        for (int i = j + 1; i < n; i++)
            Lj[i] /= d;
    }
    return 0;
}

void mlc_dense_cholesky_spd_solve(const double *L, size_t ld, int n, double *B, size_t ldb,
                                  int nrhs) {
    for (int r = 0; r < nrhs; r++) {
        double *x = B + ldb * (size_t)r;
        for (int j = 0; j < n; j++) {
            const double *col = L + ld * (size_t)j;
            double xj = x[j] / col[j];
            x[j] = xj;
            for (int i = j + 1; i < n; i++)
                x[i] -= col[i] * xj;
        }
        for (int j = n - 1; j >= 0; j--) {
            const double *col = L + ld * (size_t)j;
            double s = x[j];
            for (int i = j + 1; i < n; i++)
                s -= col[i] * x[i];
            x[j] = s / col[j];
        }
    }
}
