/* dense.c: the damped dense Cholesky factorization and its solve (dense.h). */
#include "dense.h"

#include <math.h>

void mlc_dense_cholesky(double *A, size_t ld, int n, double eps) {
    mlc_dense_cholesky_from(A, ld, n, 0, eps);
}

void mlc_dense_cholesky_from(double *A, size_t ld, int n, int j0, double eps) {
    for (int j = j0; j < n; j++) {
        double *Lj = A + ld * (size_t)j;
        for (int k = 0; k < j; k++) {
            const double *Lk = A + ld * (size_t)k;
            double l = Lk[j];
            for (int i = j; i < n; i++)
                Lj[i] -= l * Lk[i];
        }
        double ipiv = 1 / (Lj[j] > eps ? sqrt(Lj[j]) : sqrt(eps));
        Lj[j] = ipiv;
        for (int i = j + 1; i < n; i++)
            Lj[i] *= ipiv;
    }
}
