/* dense.c: the damped dense Cholesky factorization and its solve (dense.h). */
#include "dense.h"

#include <math.h>
#include <string.h>

#include "cpu.h"

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

/* A_ij −= Σ_{k ∈ [kb, ke)} L_jk L_ik for the columns j ∈ [jb, je) and their rows i ∈ [r, n),
 * r = max(j, r0, rmin), each entry's terms by ascending k (every k < j): one column of the
 * factor at a time, its entries read once for all the columns. */
static void update_columns(double *A, size_t ld, int n, int jb, int je, int kb, int ke, int r0,
                           int rmin) {
    for (int k = kb; k < ke; k++) {
        const double *Lk = A + ld * (size_t)k;
        for (int j = MLC_DENSE_MAX(jb, k + 1); j < je; j++) {
            double *Lj = A + ld * (size_t)j;
            const double l = Lk[j];
            for (int i = MLC_DENSE_MAX(MLC_DENSE_MAX(j, r0), rmin); i < n; i++)
                Lj[i] -= l * Lk[i];
        }
    }
}

typedef double v2d __attribute__((vector_size(16)));

/* Rows and columns of the factor packed together for update_block (on the stack). */
enum { KC = 128, XR = 8, YC = MLC_DENSE_BLOCK };

/* Four columns (packed: y[kk·YC + c]) of four rows (packed: x[kk·XR + r]) over kn columns of
 * the factor: the sixteen entries at E (column c at E + ld·c) stay in registers while kk runs,
 * two lanes of separate multiplies and subtractions in kk's order (update_columns' order). */
static inline void update_tile(double *E, size_t ld, const double *x, const double *y, int kn) {
    v2d acc[4][2];
    for (int c = 0; c < 4; c++)
        memcpy(acc[c], E + ld * (size_t)c, sizeof acc[c]);
    for (int kk = 0; kk < kn; kk++) {
        v2d xv[2];
        memcpy(xv, x + (size_t)kk * XR, sizeof xv);
        const double *yk = y + (size_t)kk * YC;
        for (int c = 0; c < 4; c++) {
            const v2d yc = {yk[c], yk[c]};
            acc[c][0] = acc[c][0] - yc * xv[0];
            acc[c][1] = acc[c][1] - yc * xv[1];
        }
    }
    for (int c = 0; c < 4; c++)
        memcpy(E + ld * (size_t)c, acc[c], sizeof acc[c]);
}

#ifdef MLC_HAVE_AVX2_CLONES
typedef double v4d __attribute__((vector_size(32)));

/* update_tile four lanes wide (AVX2 without FMA: the same multiplies and subtractions, the same
 * bits), chosen by mlc__cpu_use_avx2 as the simulators' kernels are. */
__attribute__((target("avx2"))) static void update_tile_avx2(double *E, size_t ld, const double *x,
                                                             const double *y, int kn) {
    v4d acc[4];
    for (int c = 0; c < 4; c++)
        memcpy(&acc[c], E + ld * (size_t)c, sizeof acc[c]);
    for (int kk = 0; kk < kn; kk++) {
        v4d xv;
        memcpy(&xv, x + (size_t)kk * XR, sizeof xv);
        const double *yk = y + (size_t)kk * YC;
        for (int c = 0; c < 4; c++) {
            const v4d yc = {yk[c], yk[c], yk[c], yk[c]};
            acc[c] = acc[c] - yc * xv;
        }
    }
    for (int c = 0; c < 4; c++)
        memcpy(E + ld * (size_t)c, &acc[c], sizeof acc[c]);
}
#endif

/* update_columns over [kb, ke) with ke ≤ jb (the columns left of the block, at most
 * MLC_DENSE_BLOCK of them): the rows every column of the block updates, in groups of XR rows
 * and four columns, each earlier column's entries packed once for the whole group (the factor's
 * columns lie ld apart, so reading them k after k from the matrix costs a cache line, often a
 * page, for each value); the other rows (the block's first rows, the last rows, the columns
 * past a multiple of four) one column at a time. Each entry is updated by exactly one of them,
 * its terms by ascending k. */
static void update_block(double *A, size_t ld, int n, int jb, int je, int kb, int ke, int r0) {
    const int rc = MLC_DENSE_MAX(je - 1, r0), nt = rc + (n - rc) / XR * XR;
    const int g4 = jb + (je - jb) / 4 * 4;
    if (ke - kb < 8 || nt <= rc || g4 == jb) {
        update_columns(A, ld, n, jb, je, kb, ke, r0, 0);
        return;
    }
    update_columns(A, ld, rc, jb, je, kb, ke, r0, 0);  /* rows above rc */
    update_columns(A, ld, n, jb, je, kb, ke, r0, nt);  /* the last rows */
    update_columns(A, ld, nt, g4, je, kb, ke, r0, rc); /* columns past the groups of four */
    void (*tile)(double *, size_t, const double *, const double *, int) = update_tile;
#ifdef MLC_HAVE_AVX2_CLONES
    if (mlc__cpu_use_avx2()) tile = update_tile_avx2;
#endif
    double x[KC * XR], y[KC * YC];
    for (int kc = kb; kc < ke; kc += KC) {
        const int kn = MLC_DENSE_MIN(KC, ke - kc);
        for (int kk = 0; kk < kn; kk++)
            memcpy(y + (size_t)kk * YC, A + ld * (size_t)(kc + kk) + jb,
                   sizeof(double) * (size_t)(g4 - jb));
        for (int i = rc; i < nt; i += XR) {
            for (int kk = 0; kk < kn; kk++)
                memcpy(x + (size_t)kk * XR, A + ld * (size_t)(kc + kk) + i, sizeof(double) * XR);
            for (int g = jb; g < g4; g += 4)
                for (int h = 0; h < XR; h += 4)
                    tile(A + ld * (size_t)g + i + h, ld, x + h, y + (g - jb), kn);
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
            update_columns(A, ld, n, j, j + 1, jb, j, r0, 0); /* the block's own columns */
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
