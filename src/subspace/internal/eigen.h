/* eigen.h: the smallest eigenpairs of a sparse generalized problem K x = λ M x with symmetric
 * positive semi-definite K and diagonal (lumped) positive M (docs/method.md §3–4).
 *
 * The one routine of the project that owns the ARPACK reverse-communication loop: implicitly
 * restarted Lanczos (dsaupd/dseupd) in shift-invert mode 3 with bmat = "G" and which = "LM",
 * the operator (K − σM)⁻¹ M applied through one CHOLMOD Cholesky factor of K − σM. Small
 * problems (n < 3·nev + 20) go to dense LAPACKE_dsygvd instead, where ARPACK would need
 * ncv close to n anyway and the dense solve is both faster and exact.
 *
 * Results are deterministic: a fixed start vector, eigenpairs sorted ascending, xᵀ M x = 1,
 * and the sign of each vector fixed so that its entry of largest magnitude is positive (ties:
 * smallest index).
 */
#ifndef MODALLOCO_EIGEN_H
#define MODALLOCO_EIGEN_H

#include <cholmod.h>

#include "base.h"

/* What the solver did (diagnostics only). */
typedef struct mlc_eigen_info {
    int dense;          /* 1 when the dense LAPACKE_dsygvd fallback was used */
    int solves;         /* applications of (K − σM)⁻¹ (0 for dense) */
    int iterations;     /* ARPACK Lanczos restart iterations (iparam[2] on exit) */
    int nconv;          /* converged Ritz values reported by ARPACK */
    int ncv;            /* Lanczos basis size used */
    int solve_threads;  /* threads of each solve (1: CHOLMOD's own; super_solve.h) */
    int factor_threads; /* threads of the factorization (1: CHOLMOD's own; super_factor.h) */
    double sigma;       /* shift used */
    double factor_nnz;  /* nonzeros of the Cholesky factor (cc->lnz), 0 for dense */
    double t_analyze;   /* seconds in cholmod_analyze (fill-reducing ordering, symbolic) */
    double t_factor;    /* seconds in cholmod_analyze + cholmod_factorize */
    double t_iterate;   /* seconds in the ARPACK loop and dseupd (or in dsygvd) */
    char ordering[16];  /* fill-reducing ordering CHOLMOD selected: "amd", "metis", "nesdis",
                           "natural", "given", "colamd", "postordered"; "dense" for dsygvd */
} mlc_eigen_info;

/* Default shift for a singular, positive semi-definite K: σ = −1e-2 · s · n^(−2/3) with
 * s = mean(diag K) / mean(M). s estimates the top of the spectrum (~ stiffness / (ρ h²)) and
 * n^(−2/3) ≈ (h / L)² brings it to the order of the first non-zero eigenvalue (~ stiffness /
 * (ρ L²)), so K − σM is SPD with a margin while σ stays small against the wanted eigenvalues
 * (shift-invert convergence depends on (λ_k − σ)/(λ_{nev+1} − σ)). Returns −1e-3 for an empty or
 * zero matrix. `mass` has K->nrow entries. */
double mlc_eigen_default_shift(const cholmod_sparse *K, const double *mass);

/* Solve K x = λ M x for the `nev` eigenvalues nearest σ; with σ below the spectrum (σ < 0 for
 * a PSD K) these are the nev smallest.
 *  K:     n×n CHOLMOD sparse, real, symmetric storage (stype ≠ 0, e.g. the upper triangle
 *         from mlc_fem_*), every diagonal entry stored. Not modified (non-const only because
 *         the CHOLMOD API is not const-correct).
 *  mass:  n positive diagonal entries of M.
 *  nev:   1 <= nev < n.
 *  sigma: shift, must make K − σM positive definite (see mlc_eigen_default_shift).
 *  evals: out, nev eigenvalues ascending.  evecs: out, n×nev column-major, M-orthonormal.
 *  info:  out (may be NULL).  cc: a started cholmod_common (its ordering settings are used).
 * Errors: MLC_EINVAL (bad arguments), MLC_ENOTSPD (K − σM not positive definite: K indefinite,
 * e.g. inverted elements, or σ not below the spectrum), MLC_ENOCONV (ARPACK did not converge
 * or ran out of shifts), MLC_ENUMERIC (ARPACK/LAPACK internal failure), MLC_ENOMEM. */
mlc_status mlc_eigen_solve(cholmod_sparse *K, const double *mass, int nev, double sigma,
                           double *evals, double *evecs, mlc_eigen_info *info, cholmod_common *cc,
                           mlc_err *err);

/* A problem for the solves below beyond mlc_eigen_solve: K, mass, nev and sigma as there, and
 *  perm:  NULL (CHOLMOD chooses, as mlc_eigen_solve), or n entries used as given
 *         (cholmod_analyze_p with CHOLMOD_GIVEN; postordering as set in cc). A vertex ordering
 *         expanded to 3×3 blocks serves a 3-DOF-per-vertex problem at a fraction of the cost
 *         of ordering the larger graph.
 *  Z, nz: NULL/0, or an M-orthonormal n×nz basis of null vectors of K (K Z = 0, e.g. the 6
 *         rigid modes of an elasticity Hessian) to project out: the nev pairs returned are then
 *         the smallest of K restricted to the M-orthogonal complement of Z. A degenerate null
 *         space is otherwise hard for single-vector Lanczos (it can miss copies of a repeated
 *         eigenvalue), and deflation shortens the Krylov basis. Dense path: the nz smallest
 *         pairs are dropped instead.
 *  ncv:   a Lanczos basis of at least ncv vectors (0 or less: the default max(2·nev + 1, 20)).
 *         A wider basis separates a clustered spectrum in fewer restarts, at ncv·n doubles of
 *         memory; results differ from the default basis's in the last digits only.
 *  threads: the factorization and the solves split over this many threads (super_factor.h,
 *         super_solve.h) when the factor is large enough to pay; 0 or 1: CHOLMOD's serial
 *         factorization and solve. The same bits for any count.
 * Everything it points to is borrowed for the call (K is not modified). */
typedef struct mlc_eigen_problem {
    cholmod_sparse *K;
    const double *mass;
    int nev;
    double sigma;
    const int *perm;
    const double *Z;
    int nz;
    int ncv;
    int threads;
} mlc_eigen_problem;

/* mlc_eigen_solve of the problem `pb` (its ordering, deflation and basis width).
 *  perm_out: NULL, or n entries that receive the ordering the factor used (L->Perm), e.g. to
 *            reuse it for a second problem on the same mesh. Not written by the dense path
 *            (info->dense = 1).
 * Everything else as mlc_eigen_solve. */
mlc_status mlc_eigen_solve_ordered(const mlc_eigen_problem *pb, int *perm_out, double *evals,
                                   double *evecs, mlc_eigen_info *info, cholmod_common *cc,
                                   mlc_err *err);

/* The symbolic analysis (fill-reducing ordering, supernodes) of a symmetric matrix's pattern as
 * mlc_eigen_solve_ordered does it: `perm` NULL (CHOLMOD chooses) or n entries used as given.
 * Returns NULL on failure (cc->status says why). The factor can seed mlc_eigen_solve_shared,
 * also as copies (cholmod_copy_factor) for solves on several threads. */
cholmod_factor *mlc_eigen_analyze(cholmod_sparse *A, const int *perm, cholmod_common *cc);

/* CHOLMOD's name of a fill-reducing ordering (CHOLMOD_AMD → "amd", CHOLMOD_GIVEN → "given"). */
const char *mlc_eigen_ordering_name(int ord);

/* Whether a problem of n unknowns, nev pairs and nz deflated vectors is solved densely
 * (LAPACK) rather than by shift-invert Lanczos: then there is no factor and no ordering. */
int mlc_eigen_is_dense(int n, int nev, int nz);

/* The fill-reducing ordering (L->Perm, n entries into perm_out) that mlc_eigen_solve_ordered
 * with perm = NULL would use for K − σM under cc's ordering settings: the same matrix and the
 * same analysis, so the same permutation, without the factorization. Lets a second problem on
 * the same mesh start before the first is solved. factor_bytes (may be NULL): the numeric
 * factor's size from the analysis (mlc_budget_factor_bytes). Errors as mlc_eigen_solve's
 * analysis. */
mlc_status mlc_eigen_ordering(cholmod_sparse *K, const double *mass, double sigma, int *perm_out,
                              double *factor_bytes, cholmod_common *cc, mlc_err *err);

/* mlc_eigen_solve_ordered (without perm_out) for a family of matrices with one sparsity pattern,
 * e.g. K plus different diagonal penalties (local_modes.h): the fill-reducing ordering and symbolic
 * analysis are done once and every later matrix is only refactorized.
 *  shared: the caller's factor slot. *shared = NULL on the first call: the matrix is analyzed
 *          (with pb->perm) and the factor is left in *shared, also
 *          on failure once it exists. Later calls with *shared set skip cholmod_analyze and
 *          refactorize into it (the matrix must have the same pattern; pb->perm is
 *          then unused). The caller frees it with cholmod_free_factor. The dense path (small n)
 *          leaves *shared untouched. info->ordering is "shared" for a refactorization.
 * Everything else, including the results bit for bit, as mlc_eigen_solve_ordered. */
mlc_status mlc_eigen_solve_shared(const mlc_eigen_problem *pb, cholmod_factor **shared,
                                  double *evals, double *evecs, mlc_eigen_info *info,
                                  cholmod_common *cc, mlc_err *err);

/* mlc_eigen_solve_shared in two steps, so that one matrix's factorization can run beside
 * another's Lanczos loop (local_modes.c): mlc_eigen_factor refactorizes K − σM into L, a factor
 * analyzed for K's pattern (mlc_eigen_analyze; the caller's, kept), and fills info's
 * t_analyze, t_factor, factor_nnz; mlc_eigen_solve_factored then runs the Lanczos loop on it
 * (keeping info's t_factor and factor_nnz). Together the same arithmetic, so the same bits, as
 * mlc_eigen_solve_shared with *shared = L (pb->perm and pb->ncv unused: L is analyzed and the
 * basis is the default). The problem must be sparse (not
 * mlc_eigen_is_dense): else MLC_EINVAL. Errors otherwise as mlc_eigen_solve_ordered. The two
 * may run on two threads at once with two cholmod_commons and two factors (eigen.c: Threads). */
mlc_status mlc_eigen_factor(cholmod_sparse *K, const double *mass, double sigma, cholmod_factor *L,
                            mlc_eigen_info *info, cholmod_common *cc, mlc_err *err);
mlc_status mlc_eigen_solve_factored(const mlc_eigen_problem *pb, cholmod_factor *L, double *evals,
                                    double *evecs, mlc_eigen_info *info, cholmod_common *cc,
                                    mlc_err *err);

/* x ← x − Z (Zᵀ M x), twice: the M-orthogonal projection of x (n) onto the complement of the
 * M-orthonormal n×nz basis Z, as the solver deflates its Lanczos vectors. */
void mlc_eigen_deflate(double *x, const double *Z, int nz, const double *mass, int n);

/* How well computed pairs solve K x = λ M x (mlc_eigen_check_pairs). */
typedef struct mlc_eigen_check {
    double residual; /* worst ‖K x − λ M x‖_{M⁻¹} / (max(|λ|, λ_s) ‖x‖_M), λ_s the
                        largest |λ| of the set: the residual of the symmetric standard
                        form M^(-1/2) K M^(-1/2) relative to the wanted spectrum's scale, so
                        independent of units and of how the mesh is graded */
    int residual_at; /* its pair (0-based), −1 if none */
    double orthogonality; /* worst |xᵢᵀ M xⱼ − δᵢⱼ| over each pair with itself, its 8 lower
                             neighbours and (unless |λ| <= 1e-6 λ_s: a null vector may be
                             any) the columns of Z */
    int orthogonality_at; /* its pair, −1 if none */
} mlc_eigen_check;

/* The limit of both measures. Healthy solves give 1e-16 to 1e-10 (a shift 1e6 times too far
 * below the spectrum still gives 1e-8); a vector paired with an eigenvalue off by a fraction
 * δ gives δ·|λ|/λ_s, a vector that is not an eigenvector about 1. */
#define MLC_EIGEN_CHECK_TOL 1e-6

/* Check nev pairs (evals ascending or not, evecs n×nev) of K x = λ M x, and their
 * M-orthogonality to the n×nz basis Z (NULL/0: none). Fills *out; returns MLC_OK when both
 * measures are within MLC_EIGEN_CHECK_TOL, MLC_ENUMERIC when not, MLC_ENOMEM. Cost: nev
 * products with K and about 10·nev + nz·nev dot products of length n. */
mlc_status mlc_eigen_check_pairs(cholmod_sparse *K, const double *mass, int nev,
                                 const double *evals, const double *evecs, const double *Z, int nz,
                                 mlc_eigen_check *out, cholmod_common *cc);

#endif
