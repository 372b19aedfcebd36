/* dense.c: the damped dense Cholesky factorization and its solve (dense.h). */
#include "dense.h"

#include <math.h>

#define MLC_DENSE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MLC_DENSE_MIN(a, b) ((a) < (b) ? (a) : (b))

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

/* A_ij −= Σ_{k ∈ [kb, ke)} L_jk L_ik for the columns j ∈ [jb, je) and their rows i from
 * max(j, r0) on, each entry's terms by ascending k (every k < j): the left-looking update of
 * a block of columns, each column k of the factor read once for the block. */
static void update_block(double *A, size_t ld, int n, int jb, int je, int kb, int ke, int r0) {
    for (int k = kb; k < ke; k++) {
        const double *Lk = A + ld * (size_t)k;
        for (int j = MLC_DENSE_MAX(jb, k + 1); j < je; j++) {
            double *Lj = A + ld * (size_t)j;
            const double l = Lk[j];
            for (int i = MLC_DENSE_MAX(j, r0); i < n; i++)
                Lj[i] -= l * Lk[i];
        }
    }
}

/* Columns j0..n−1 of the factor in their rows from max(j, r0) on. Columns left of r0 are a
 * kept factor's (right for their rows above r0, the matrix's entries below), so their rows
 * from r0 on are completed and scaled by their kept reciprocal pivots; columns from r0 on
 * (all of them with r0 = 0) are factored. Each entry gets the operations of the
 * column-by-column loop in its order (its terms by ascending k, then its pivot's scaling), so
 * the bits are those of that loop; blocks of MLC_DENSE_BLOCK columns read each earlier column
 * once a block instead of once a column, which on large contact sets (hundreds of forces under
 * a body lying flat) is most of the time. */
static void cholesky_blocked(double *A, size_t ld, int n, int j0, int r0, double eps) {
    for (int jb = j0; jb < n; jb += MLC_DENSE_BLOCK) {
        const int je = MLC_DENSE_MIN(n, jb + MLC_DENSE_BLOCK);
        update_block(A, ld, n, jb, je, 0, jb, r0); /* the columns left of the block */
        for (int j = jb; j < je; j++) {
            double *Lj = A + ld * (size_t)j;
            update_block(A, ld, n, j, j + 1, jb, j, r0); /* the block's own columns */
            if (j < r0) { /* a kept column: its new rows times the kept reciprocal pivot */
                for (int i = r0; i < n; i++)
                    Lj[i] *= Lj[j];
                continue;
            }
            double ipiv = 1 / (Lj[j] > eps ? sqrt(Lj[j]) : sqrt(eps));
            Lj[j] = ipiv;
            for (int i = j + 1; i < n; i++)
                Lj[i] *= ipiv;
        }
    }
}

void mlc_dense_cholesky_from(double *A, size_t ld, int n, int j0, double eps) {
    if (n - j0 >= MLC_DENSE_BLOCKED_FROM) {
        cholesky_blocked(A, ld, n, j0, 0, eps);
        return;
    }
    for (int j = j0; j < n; j++) {
        double *Lj = A + ld * (size_t)j;
        subtract_left_columns(A, ld, n, j);
        double ipiv = 1 / (Lj[j] > eps ? sqrt(Lj[j]) : sqrt(eps));
        Lj[j] = ipiv;
        for (int i = j + 1; i < n; i++)
            Lj[i] *= ipiv;
    }
}

/* The rows p..n−1 of the kept columns 0..p−1, column by column (as the blocked path). */
static void rows_simple(double *A, size_t ld, int n, int p) {
    for (int j = 0; j < p; j++) {
        double *Lj = A + ld * (size_t)j;
        for (int k = 0; k < j; k++) {
            const double *Lk = A + ld * (size_t)k;
            const double l = Lk[j];
            for (int i = p; i < n; i++)
                Lj[i] -= l * Lk[i];
        }
        for (int i = p; i < n; i++)
            Lj[i] *= Lj[j];
    }
}

void mlc_dense_cholesky_rows(double *A, size_t ld, int n, int p, double eps) {
    if (n - p < MLC_DENSE_BLOCKED_FROM && p < MLC_DENSE_BLOCKED_FROM) {
        rows_simple(A, ld, n, p);
        mlc_dense_cholesky_from(A, ld, n, p, eps);
        return;
    }
    cholesky_blocked(A, ld, n, 0, p, eps);
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
