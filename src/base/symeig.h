/* symeig.h: eigendecomposition of a small dense symmetric matrix for CMA-ES (its only user):
 * Householder reduction to tridiagonal form, backward accumulation of Q, implicit symmetric QR
 * steps with Wilkinson shifts. It is kept instead of LAPACKE_dsyev because a seed's optimizer
 * run is fixed to its bits: another solver would round differently and change the gaits.
 * tests/test_symeig.c checks it against LAPACKE_dsyev. */
#ifndef MODALLOCO_SYMEIG_H
#define MODALLOCO_SYMEIG_H

/* Symmetric eigendecomposition of the n x n column-major A (lower triangle read): on return
 * V (n x n, not aliasing A) holds the orthonormal eigenvectors in columns and d (n) the
 * eigenvalues in ascending order; A is not modified. All loops run down columns (contiguous).
 * work: 2n doubles. Returns 0, or -1 if the QR iteration did not converge (V and d are then
 * unspecified). */
int mlc_symeig(int n, const double *A, double *V, double *d, double *work);

#endif
