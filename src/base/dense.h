/* dense.h: small dense linear algebra the simulators share: the damped Cholesky factorization
 * of the contact systems (sim_step.c's equality model, contact.c's active sets, fullspace.c),
 * and the plain one of the reduced model's system matrix (sim_model.c).
 *
 * Matrices are column-major with leading dimension ld ≥ n; only the lower triangle is read or
 * written. The factor keeps the reciprocal pivots on its diagonal, so the solves multiply
 * instead of dividing (the simulators' solves are written for that layout). */
#ifndef MODALLOCO_DENSE_H
#define MODALLOCO_DENSE_H

#include <stddef.h>

/* In place: the lower triangle of A (n×n, positive definite up to rounding, any damping εI
 * already added by the caller) becomes L of A = L Lᵀ, with 1/L_jj on the diagonal. A pivot
 * that rounding made ≤ eps is replaced by √eps, so the factor stays usable. Left-looking by
 * columns: the bits do not depend on how the caller filled A. */
void mlc_dense_cholesky(double *A, size_t ld, int n, double eps);
/* The same from column j0 on: columns 0..j0-1 of A already hold the factor in all rows 0..n-1
 * (a factor of a matrix whose leading j0 columns did not change, with rows appended), columns
 * j0.. the matrix's lower triangle. The bits are those of the whole factorization. */
void mlc_dense_cholesky_from(double *A, size_t ld, int n, int j0, double eps);
/* The factor of a matrix whose leading p×p block did not change: columns 0..p−1 hold the kept
 * factor in rows 0..p−1 and the matrix's entries below, columns p.. the matrix's lower
 * triangle. The bits are those of the whole factorization (each entry's operations in the
 * order of mlc_dense_cholesky's loop). */
void mlc_dense_cholesky_rows(double *A, size_t ld, int n, int p, double eps);
/* From this many columns to factor on, the factorizations above work by blocks of
 * MLC_DENSE_BLOCK columns (the same bits, each earlier column read once a block). */
#define MLC_DENSE_BLOCKED_FROM 48
#define MLC_DENSE_BLOCK 16
/* x ← (L Lᵀ)⁻¹ x for a factor of mlc_dense_cholesky (n values). Both substitutions are
 * short scalar sums (row a subtracts its terms by ascending column, the order a column-by-column
 * update would follow: the same bits), with no vector set-up to pay on the handful of values
 * the contact solves pass many times a step. Inline, so their AVX2 copy inlines it too. */
static inline __attribute__((always_inline)) void
mlc_dense_cholesky_solve(const double *L, size_t ld, int n, double *x) {
    /* The commonest contact sets, 2 to 4 forces, in straight-line code: each value the
     * loops' operations in their order (the forward pass's y, then the backward pass). */
    if (n >= 2 && n <= 4) {
        const double *L0 = L, *L1 = L + ld, *L2 = L + 2 * ld, *L3 = L + 3 * ld;
        double x0 = x[0] * L0[0];
        double x1 = (x[1] - L0[1] * x0) * L1[1];
        if (n == 2) {
            x1 = x1 * L1[1];
            x[0] = (x0 - L0[1] * x1) * L0[0], x[1] = x1;
            return;
        }
        double x2 = ((x[2] - L0[2] * x0) - L1[2] * x1) * L2[2];
        if (n == 3) {
            x2 = x2 * L2[2];
            x1 = (x1 - L1[2] * x2) * L1[1];
            x[0] = ((x0 - L0[1] * x1) - L0[2] * x2) * L0[0], x[1] = x1, x[2] = x2;
            return;
        }
        double x3 = (((x[3] - L0[3] * x0) - L1[3] * x1) - L2[3] * x2) * L3[3];
        x3 = x3 * L3[3];
        x2 = (x2 - L2[3] * x3) * L2[2];
        x1 = ((x1 - L1[2] * x2) - L1[3] * x3) * L1[1];
        x[0] = (((x0 - L0[1] * x1) - L0[2] * x2) - L0[3] * x3) * L0[0];
        x[1] = x1, x[2] = x2, x[3] = x3;
        return;
    }
    for (int a = 0; a < n; a++) {
        const double *row = L + a;
        double v = x[a];
        for (int c = 0; c < a; c++)
            v -= row[ld * (size_t)c] * x[c];
        x[a] = v * row[ld * (size_t)a];
    }
    for (int j = n - 1; j >= 0; j--) {
        const double *Lj = L + ld * (size_t)j;
        double v = x[j];
        for (int i = j + 1; i < n; i++)
            v -= Lj[i] * x[i];
        x[j] = v * Lj[j];
    }
}

/* The plain factorization of the reduced model's precomputation: the lower triangle of A
 * (n×n) becomes L of A = L Lᵀ with L_jj itself on the diagonal; the strict upper triangle is
 * not touched. Returns 0, or j + 1 when the pivot of column j is not positive (A is not
 * positive definite; A is then partly overwritten). Written here rather than taken from
 * LAPACK's dpotrf so that the model, hence every rollout, has the same bits on every machine:
 * OpenBLAS picks its kernels by CPU model (and falls back to generic ones on models it does
 * not know), and those kernels sum in different orders. Left-looking by columns, as above. */
int mlc_dense_cholesky_spd(double *A, size_t ld, int n);
/* B ← (L Lᵀ)⁻¹ B for a factor of mlc_dense_cholesky_spd: nrhs columns of n values, column j at
 * B + j·ldb. Forward substitution by columns, back substitution by rows (the bits of the
 * simulator's own solve, sim_step.c). */
void mlc_dense_cholesky_spd_solve(const double *L, size_t ld, int n, double *B, size_t ldb,
                                  int nrhs);

#endif
