/* polar.h: robust rotation extraction for 3×3 matrices (docs/method.md §5, Eq. 12–13, 72).
 *
 * mlc_polar returns the proper rotation R ∈ SO(3) that maximizes tr(Rᵀ A), i.e. the rotation
 * factor U diag(1, 1, det(UVᵀ)) Vᵀ of A = U Σ Vᵀ (the determinant fix of docs/method.md §5), for
 * any A: singular, reflected (det A < 0) or zero. Method: with R = R(q) for a unit quaternion,
 * tr(Rᵀ A) = qᵀ K(A) q for a symmetric 4×4 K (Horn/Davenport), so q is the eigenvector of the
 * largest eigenvalue of K. Warm start: the problem is solved in the orthonormal basis whose
 * first column is the previous quaternion, where Newton's method on the secular equation of the
 * top eigenpair converges quadratically (typically 2 steps of a 3×3 solve in the simulator) and
 * certifies that the eigenvalue found is the largest; cold starts and near-degenerate cases
 * (rank one) fall back to cyclic Jacobi. Matrices are column-major (A[i + 3j] = A_ij).
 * Accuracy: within a few ε·σ1/(σ2 + det(A)·σ3) (Frobenius) of the exact rotation factor, the
 * problem's own conditioning, from any warm start; where that ratio is huge (rank one, or a
 * reflection with σ2 ≈ σ3) R is not unique and tr(Rᵀ A) is optimal to a few ε‖A‖_F.
 * Allocation-free, reentrant, about 0.05–0.1 µs warm.
 */
#ifndef MODALLOCO_POLAR_H
#define MODALLOCO_POLAR_H

#include <stddef.h>

/* Rotation of A (3×3) into R (3×3). q (4 values, w x y z) is the warm start on entry (any
 * non-zero quaternion; (1,0,0,0) = cold) and the unit quaternion of R on exit. When A = 0
 * every rotation is optimal and the warm start is kept. Returns the work done: the number of
 * Newton steps (warm path), or of Jacobi sweeps plus one (fallback path); 0 for A = 0. */
int mlc_polar(const double A[9], double q[4], double R[9]);

/* n independent problems at once: A is n×9 (problem i at A + 9i), q n×4 and R n×9 likewise;
 * work (n values) receives each problem's return value of mlc_polar, or may be NULL. The
 * problems advance side by side (four to a vector on AVX2, blocks of up to sixteen lanes on
 * the baseline), which overlaps their division chains; results are bit-identical to n calls
 * of mlc_polar. Returns the total work. */
int mlc_polar_n(int n, const double *A, double *q, double *R, int *work);

/* The same, lane by lane (structure of arrays, no transposes for callers that keep their
 * problems that way): A_kj of problem p at A[(3k + j)·lda + p] (the nine entries in row-major
 * order, each a row of problems), q_k (w x y z) at q[k·ldq + p], R_kj at R[(3k + j)·ldr + p].
 * Every row must have room for n rounded up to a multiple of 4: the padding lanes are read and
 * written as scratch. Bit-identical to n calls of mlc_polar; work as for mlc_polar_n. */
int mlc_polar_lanes(int n, const double *A, size_t lda, double *q, size_t ldq, double *R,
                    size_t ldr, int *work);

/* Rotation matrix (column-major) of a non-zero quaternion (normalized inside). */
void mlc_quat_to_matrix(const double q[4], double R[9]);

#endif
