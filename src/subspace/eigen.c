/* eigen.c: smallest eigenpairs of K x = λ M x, M diagonal (docs/method.md §3–4; 000 Eq. 4 and 20).
 *
 * Shift-invert (ARPACK mode 3): with OP = (K − σM)⁻¹ M, the M-symmetric Lanczos process finds
 * the largest θ = 1/(λ − σ), i.e. the λ nearest σ; dseupd back-transforms λ = σ + 1/θ. With
 * σ < 0 below the (PSD) spectrum the nearest are the smallest, including the rigid/constant
 * null modes, and K − σM is SPD so one CHOLMOD Cholesky factor serves every application.
 * Tiny problems use dense LAPACKE_dsygvd (see eigen.h).
 *
 * Phases: check → shift and factor → Lanczos loop → extract → sort/normalize/sign → cleanup.
 *
 * Threads: two solves may run at once (the skinning and vibration problems, subspace.c). Two
 * library phases keep global state and take turns, each under its own lock: the METIS ordering
 * (critical section mlc_metis: METIS's random generator is global, and two orderings at once
 * gave other permutations, so eigenvectors 1e-14 away) and the ARPACK loop (mlc_arpack: dsaupd
 * keeps its reverse-communication state in Fortran SAVE variables). The numeric factorization
 * and the triangular solves keep their state in the caller's cholmod_common and factor, and
 * BLAS runs on one thread (the CLI pins OpenBLAS to one), so one problem's factorization runs
 * beside the other's Lanczos loop with the same bits as one after the other. What also
 * overlaps is the assembly, the symbolic analysis with a given ordering and the callers' own
 * work (clusters, samples).
 */
#include "internal/eigen.h"

#include "budget.h"
#include "internal/super_factor.h"
#include "internal/super_solve.h"

#include <arpack.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Fixed seed of the start vector: ARPACK's own random start (info = 0) depends on an internal
 * generator state that persists across calls, which would make a second solve differ. */
#define EIGEN_START_SEED 0x6d6c63656967ULL
#define EIGEN_MAXITER 3000
/* Relative accuracy of the Ritz values θ = 1/(λ − σ). Machine precision (tol = 0) roughly triples
 * the solves (132 against 46 on a 47k-DOF mesh) for no visible gain: 1e-12 gives eigenvalues to
 * ~1e-12 relative and M-orthonormality to rounding. */
#define EIGEN_TOL 1e-12

double mlc_eigen_default_shift(const cholmod_sparse *K, const double *mass) {
    size_t n = K ? K->ncol : 0;
    if (n == 0 || !mass) return -1e-3;
    const int *Ap = K->p, *Ai = K->i, *Anz = K->nz;
    const double *Ax = K->x;
    double sd = 0, sm = 0;
    for (size_t j = 0; j < n; j++) {
        int end = K->packed ? Ap[j + 1] : Ap[j] + Anz[j];
        for (int p = Ap[j]; p < end; p++)
            if ((size_t)Ai[p] == j) sd += Ax[p];
        sm += mass[j];
    }
    if (!(sd > 0) || !(sm > 0)) return -1e-3;
    return -1e-2 * (sd / sm) * pow((double)n, -2.0 / 3.0);
}

const char *mlc_eigen_ordering_name(int ord) {
    switch (ord) {
    case CHOLMOD_NATURAL:
        return "natural";
    case CHOLMOD_GIVEN:
        return "given";
    case CHOLMOD_AMD:
        return "amd";
    case CHOLMOD_METIS:
        return "metis";
    case CHOLMOD_NESDIS:
        return "nesdis";
    case CHOLMOD_COLAMD:
        return "colamd";
    case CHOLMOD_POSTORDERED:
        return "postordered";
    default:
        return "unknown";
    }
}

/* Sort ascending (ties by original position: insertion sort is stable), scale to xᵀMx = 1 and
 * make the entry of largest magnitude positive (first such entry on ties). `tmp` has n. */
static void finish_pairs(int n, int nev, const double *mass, double *evals, double *evecs,
                         double *tmp) {
    for (int a = 1; a < nev; a++) {
        double lam = evals[a];
        memcpy(tmp, evecs + (size_t)a * n, (size_t)n * sizeof(double));
        int b = a - 1;
        while (b >= 0 && evals[b] > lam) {
            evals[b + 1] = evals[b];
            memcpy(evecs + (size_t)(b + 1) * n, evecs + (size_t)b * n, (size_t)n * sizeof(double));
            b--;
        }
        evals[b + 1] = lam;
        memcpy(evecs + (size_t)(b + 1) * n, tmp, (size_t)n * sizeof(double));
    }
    for (int a = 0; a < nev; a++) {
        double *x = evecs + (size_t)a * n;
        double nrm = 0, big = -1;
        int ib = 0;
        for (int i = 0; i < n; i++) {
            nrm += mass[i] * x[i] * x[i];
            if (fabs(x[i]) > big) big = fabs(x[i]), ib = i;
        }
        double s = 1.0 / sqrt(nrm);
        if (x[ib] < 0) s = -s;
        for (int i = 0; i < n; i++)
            x[i] *= s;
    }
}

/* Dense fallback: K (symmetric storage mirrored) and diag(M) to dsygvd. */
static mlc_status solve_dense(const cholmod_sparse *K, const double *mass, int nev, double *evals,
                              double *evecs, mlc_eigen_info *info, mlc_err *err) {
    int n = (int)K->ncol;
    double t0 = mlc_now();
    double *A = mlc_calloc((size_t)n * n, sizeof(double));
    double *B = mlc_calloc((size_t)n * n, sizeof(double));
    double *w = mlc_malloc((size_t)n * sizeof(double));
    mlc_status st = MLC_OK;
    if (!A || !B || !w) {
        st = mlc_errf(err, MLC_ENOMEM, "eigen: out of memory for a dense %d×%d problem", n, n);
        goto done;
    }
    const int *Ap = K->p, *Ai = K->i, *Anz = K->nz;
    const double *Ax = K->x;
    for (int j = 0; j < n; j++) {
        int end = K->packed ? Ap[j + 1] : Ap[j] + Anz[j];
        for (int p = Ap[j]; p < end; p++) {
            int i = Ai[p];
            /* CHOLMOD ignores entries in the unstored triangle; so do we. */
            if ((K->stype > 0 && i > j) || (K->stype < 0 && i < j)) continue;
            A[i + (size_t)j * n] = Ax[p];
            A[j + (size_t)i * n] = Ax[p];
        }
        B[j + (size_t)j * n] = mass[j];
    }
    lapack_int linfo = LAPACKE_dsygvd(LAPACK_COL_MAJOR, 1, 'V', 'U', n, A, n, B, n, w);
    if (linfo > n) {
        st = mlc_errf(err, MLC_ENOTSPD,
                      "eigen (dense dsygvd): the mass matrix is not positive definite "
                      "(leading minor %d); every vertex needs positive lumped mass",
                      (int)(linfo - n));
        goto done;
    }
    if (linfo != 0) {
        st = mlc_errf(err, linfo > 0 ? MLC_ENOCONV : MLC_EINVAL,
                      "eigen (dense dsygvd): LAPACK info %d (%s)", (int)linfo,
                      linfo > 0 ? "the tridiagonal QR iteration did not converge"
                                : "invalid argument, a bug");
        goto done;
    }
    memcpy(evals, w, (size_t)nev * sizeof(double));
    memcpy(evecs, A, (size_t)n * nev * sizeof(double));
    finish_pairs(n, nev, mass, evals, evecs, w);
    if (info) {
        info->dense = 1;
        info->nconv = nev;
        strcpy(info->ordering, "dense");
        info->t_iterate = mlc_now() - t0;
    }
done:
    mlc_free(A);
    mlc_free(B);
    mlc_free(w);
    return st;
}

mlc_status mlc_eigen_solve(cholmod_sparse *K, const double *mass, int nev, double sigma,
                           double *evals, double *evecs, mlc_eigen_info *info, cholmod_common *cc,
                           mlc_err *err) {
    const mlc_eigen_problem pb = {.K = K, .mass = mass, .nev = nev, .sigma = sigma};
    return mlc_eigen_solve_ordered(&pb, NULL, evals, evecs, info, cc, err);
}

/* x ← x − Z (Zᵀ M x): M-orthogonal projection onto the complement of the M-orthonormal n×nz
 * basis Z (two passes, so rounding leaves no component of Z behind). */
void mlc_eigen_deflate(double *x, const double *Z, int nz, const double *mass, int n) {
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < nz; j++) {
            const double *zj = Z + (size_t)n * j;
            double d = 0;
            for (int i = 0; i < n; i++)
                d += zj[i] * mass[i] * x[i];
            for (int i = 0; i < n; i++)
                x[i] -= d * zj[i];
        }
}

cholmod_factor *mlc_eigen_analyze(cholmod_sparse *A, const int *perm, cholmod_common *cc) {
    if (!perm) {
        cholmod_factor *L; /* METIS keeps its random generator in global state */
#pragma omp critical(mlc_metis)
        L = cholmod_analyze(A, cc);
        return L;
    }
    /* A given ordering (e.g. a vertex ordering expanded to 3×3 blocks): use it as is, with the
     * caller's other settings (postordering) untouched. */
    size_t n = A->ncol;
    int nm = cc->nmethods, ord = cc->method[0].ordering;
    int *pcopy = mlc_malloc(n * sizeof(int)); /* CHOLMOD's API is not const */
    if (!pcopy) {
        cc->status = CHOLMOD_OUT_OF_MEMORY;
        return NULL;
    }
    memcpy(pcopy, perm, n * sizeof(int));
    cc->nmethods = 1;
    cc->method[0].ordering = CHOLMOD_GIVEN;
    cholmod_factor *L = cholmod_analyze_p(A, pcopy, NULL, 0, cc);
    cc->nmethods = nm;
    cc->method[0].ordering = ord;
    mlc_free(pcopy);
    return L;
}

/* The arguments' contract (eigen.h) apart from the deflation basis. */
static mlc_status check_problem(const cholmod_sparse *K, const double *mass, int nev, double sigma,
                                const double *evals, const double *evecs, const cholmod_common *cc,
                                mlc_err *err) {
    if (!K || !mass || !evals || !evecs || !cc)
        return mlc_errf(err, MLC_EINVAL, "eigen: NULL argument");
    if (K->nrow != K->ncol || K->stype == 0 || K->xtype != CHOLMOD_REAL ||
        K->itype != CHOLMOD_INT || K->ncol > (size_t)(1 << 30))
        return mlc_errf(err, MLC_EINVAL,
                        "eigen: K must be a square real int-indexed CHOLMOD matrix in symmetric "
                        "storage (stype != 0)");
    int n = (int)K->ncol;
    if (nev < 1 || nev >= n)
        return mlc_errf(err, MLC_EINVAL,
                        "eigen: asked for %d eigenpairs of a %d×%d problem "
                        "(need 1 <= nev < n)",
                        nev, n, n);
    if (!isfinite(sigma)) return mlc_errf(err, MLC_EINVAL, "eigen: shift is not finite");
    for (int i = 0; i < n; i++)
        if (!(mass[i] > 0) || !isfinite(mass[i]))
            return mlc_errf(err, MLC_EINVAL,
                            "eigen: mass entry %d is %g; every DOF needs a positive mass (a "
                            "vertex not used by any tet?)",
                            i, mass[i]);
    return MLC_OK;
}

/* Dense path with deflation: the nz smallest pairs stand for span Z; the next nev are returned. */
static mlc_status solve_dense_deflated(cholmod_sparse *K, const double *mass, int nev, int nz,
                                       double *evals, double *evecs, mlc_eigen_info *info,
                                       mlc_err *err) {
    /* Dense is exact, so no degeneracy problem: Z spans K's null space by contract. */
    int n = (int)K->ncol;
    double *ev = mlc_malloc((size_t)(nev + nz) * sizeof(double));
    double *X = mlc_malloc((size_t)n * (nev + nz) * sizeof(double));
    mlc_status st = ev && X ? solve_dense(K, mass, nev + nz, ev, X, info, err)
                            : mlc_errf(err, MLC_ENOMEM, "eigen: out of memory (n = %d)", n);
    if (st == MLC_OK) {
        memcpy(evals, ev + nz, (size_t)nev * sizeof(double));
        memcpy(evecs, X + (size_t)n * nz, (size_t)n * nev * sizeof(double));
    }
    mlc_free(ev);
    mlc_free(X);
    return st;
}

/* *Aout = K − σM (a new matrix the caller frees, also on failure). */
static mlc_status shifted_copy(cholmod_sparse *K, const double *mass, double sigma,
                               cholmod_sparse **Aout, cholmod_common *cc, mlc_err *err) {
    int n = (int)K->ncol;
    cholmod_sparse *A = *Aout = cholmod_copy_sparse(K, cc);
    if (!A)
        return mlc_errf(err, MLC_ENOMEM, "eigen: out of memory copying K (CHOLMOD status %d)",
                        cc->status);
    int *Ap = A->p, *Ai = A->i, *Anz = A->nz;
    double *Ax = A->x;
    for (int j = 0; j < n; j++) {
        int end = A->packed ? Ap[j + 1] : Ap[j] + Anz[j], found = 0;
        for (int p = Ap[j]; p < end; p++)
            if (Ai[p] == j) {
                Ax[p] -= sigma * mass[j];
                found = 1;
                break;
            }
        if (!found)
            return mlc_errf(err, MLC_EINVAL,
                            "eigen: K has no stored diagonal entry in column %d (a DOF not "
                            "coupled to any element?)",
                            j);
    }
    return MLC_OK;
}

int mlc_eigen_is_dense(int n, int nev, int nz) {
    return n < 3 * (nev + nz) + 20;
}

mlc_status mlc_eigen_ordering(cholmod_sparse *K, const double *mass, double sigma, int *perm_out,
                              double *factor_bytes, cholmod_common *cc, mlc_err *err) {
    cholmod_sparse *A = NULL;
    mlc_status st = shifted_copy(K, mass, sigma, &A, cc, err);
    cholmod_factor *L = st == MLC_OK ? mlc_eigen_analyze(A, NULL, cc) : NULL;
    if (st == MLC_OK && !L)
        st = mlc_errf(err, cc->status == CHOLMOD_OUT_OF_MEMORY ? MLC_ENOMEM : MLC_ENUMERIC,
                      "eigen: CHOLMOD analyze of K - sigma*M (n = %d) failed, status %d",
                      (int)K->ncol, cc->status);
    if (L) memcpy(perm_out, L->Perm, K->ncol * sizeof(int));
    if (L && factor_bytes) *factor_bytes = mlc_budget_factor_bytes(L, cc);
    cholmod_free_factor(&L, cc);
    cholmod_free_sparse(&A, cc);
    return st;
}

/* cholmod_factorize on the calling thread alone. CHOLMOD's supernodal factorization opens
 * teams of CHOLMOD_OMP_NUM_THREADS (4, fixed when it was built) to clear and fill each supernode
 * and to add each update: called outside a parallel region (`parallel.threads` 1, local modes
 * on one thread) that put 4 threads on a 2-core machine, against the thread count the user set,
 * and took the koala's factorization 4.7 s instead of 2.8 s. Inside a region they are inactive
 * already. Those loops only assign and subtract entry by entry, so the bits do not change. The
 * setting is the calling thread's own (OpenMP's max-active-levels is a per-task ICV). */
static int factorize_serial(cholmod_sparse *A, cholmod_factor *L, cholmod_common *cc) {
#ifdef _OPENMP
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(0);
#endif
    const int ok = cholmod_factorize(A, L, cc);
#ifdef _OPENMP
    omp_set_max_active_levels(levels);
#endif
    return ok;
}

/* *Aout = K − σM and *Lout its factor (new, or taken from a filled `shared` slot), checked SPD. */
static mlc_status shift_and_factor(cholmod_sparse *K, const double *mass, double sigma,
                                   const int *perm, int *perm_out, cholmod_factor **shared,
                                   int threads, mlc_eigen_info *info, cholmod_common *cc,
                                   cholmod_sparse **Aout, cholmod_factor **Lout, mlc_err *err) {
    /* The caller frees A and frees L or hands it back to `shared`, also on failure. */
    int n = (int)K->ncol;
    int reused = 0;
    double t0 = mlc_now();
    mlc_status st = shifted_copy(K, mass, sigma, Aout, cc, err);
    if (st != MLC_OK) return st;
    cholmod_sparse *A = *Aout;
    cholmod_factor *L;
    if (shared && *shared) {
        /* The symbolic analysis of an earlier matrix with the same pattern: refactorize. */
        L = *shared;
        *shared = NULL;
        reused = 1;
    } else {
        L = mlc_eigen_analyze(A, perm, cc);
    }
    *Lout = L;
    if (info) info->t_analyze = mlc_now() - t0;
    if (!L && cc->status == CHOLMOD_OUT_OF_MEMORY)
        return mlc_errf(err, MLC_ENOMEM,
                        "eigen: out of memory in the fill-reducing ordering of K - sigma*M (n = "
                        "%d unknowns, %.3g million stored nonzeros); use a coarser "
                        "tetrahedralization (mesh.min_tets) or a coarser tet mesh",
                        n, (double)cholmod_nnz(A, cc) / 1e6);
    if (!L)
        return mlc_errf(err, MLC_ENUMERIC,
                        "eigen: CHOLMOD analyze of K - sigma*M (n = %d) failed, status %d", n,
                        cc->status);
    if (info) {
        int sel = cc->selected >= 0 && cc->selected < CHOLMOD_MAXMETHODS + 1 ? cc->selected : 0;
        snprintf(info->ordering, sizeof info->ordering, "%s",
                 reused ? "shared"
                 : perm ? "given"
                        : mlc_eigen_ordering_name(cc->method[sel].ordering));
    }
    if (perm_out) memcpy(perm_out, L->Perm, (size_t)n * sizeof(int));
    /* State in cc and L only: no lock (see the top). Split over `threads` where the factor is
     * large enough to pay, with cholmod_factorize's bits (super_factor.h); CHOLMOD's own
     * otherwise, and where the split stops (a pivot not positive: CHOLMOD then says where). */
    mlc_superfactor split;
    mlc_err plan_err = {0};
    if (mlc_superfactor_plan(&split, L, threads, MLC_SUPERFACTOR_MIN_FLOPS, &plan_err) != MLC_OK)
        split.bins = 1; /* no memory for the plan: CHOLMOD's own, the same bits */
    int ok = mlc_superfactor_factorize(&split, A, L, cc);
    if (info) info->factor_threads = ok ? split.bins : 1;
    mlc_superfactor_destroy(&split);
    if (!ok) ok = factorize_serial(A, L, cc);
    /* Small problems get a simplicial LDLᵀ factor, which CHOLMOD completes for indefinite
     * matrices without reporting NOT_POSDEF; shift-invert would then silently return the
     * eigenvalues nearest σ of an indefinite K, not the smallest. Check the pivots. */
    if (ok && cc->status == CHOLMOD_OK && !L->is_super && !L->is_ll) {
        const int *Lp = L->p;
        const double *Lx = L->x;
        for (int j = 0; j < n; j++)
            if (!(Lx[Lp[j]] > 0)) {
                cc->status = CHOLMOD_NOT_POSDEF;
                L->minor = (size_t)j;
                break;
            }
    }
    if (cc->status == CHOLMOD_NOT_POSDEF)
        return mlc_errf(err, MLC_ENOTSPD,
                        "eigen: factorizing K - sigma*M (sigma = %.3g, n = %d) failed: not "
                        "positive definite at column %d; K is indefinite (inverted or degenerate "
                        "elements, negative material parameters) or the shift is not below the "
                        "spectrum; `modalloco info` shows the smallest tet volume and dihedral "
                        "angle",
                        sigma, n, (int)L->minor);
    if ((!ok || cc->status < CHOLMOD_OK) && cc->status == CHOLMOD_OUT_OF_MEMORY) {
        /* The symbolic analysis knows what the numeric factor needed: say it. */
        char need[32];
        mlc_budget_format(mlc_budget_factor_bytes(L, cc), need, sizeof need);
        return mlc_errf(err, MLC_ENOMEM,
                        "eigen: out of memory in the Cholesky factorization of K - sigma*M (n = "
                        "%d unknowns; the factor alone needs %s, %.3g million nonzeros); use a "
                        "coarser tetrahedralization (mesh.min_tets) or a coarser tet mesh, or a "
                        "machine with more memory; --max-memory SIZE states the memory there is, "
                        "so that this is refused before the work starts",
                        n, need, cc->lnz / 1e6);
    }
    if (!ok || cc->status < CHOLMOD_OK)
        return mlc_errf(err, MLC_ENUMERIC,
                        "eigen: CHOLMOD factorization of K - sigma*M (n = %d) failed, status %d", n,
                        cc->status);
    if (info) {
        info->factor_nnz = cc->lnz;
        info->t_factor = mlc_now() - t0;
    }
    return MLC_OK;
}

/* ARPACK's state and workspace for n unknowns, nev wanted pairs and ncv Lanczos vectors. */
typedef struct {
    int n, nev, ncv, lworkl;
    double *resid, *V, *workd, *workl, *d;
    a_int *select; /* dseupd reads it as workspace even with howmny = "A": must be initialized */
    a_int info, iparam[11], ipntr[14];
} arpack_work;

/* The Lanczos workspace for n unknowns and nev pairs, ncv = max(ncv, 2 nev + 1, 20) (at most
 * n) basis vectors; arpack_free releases it (also after a failed arpack_alloc). */
static mlc_status arpack_alloc(arpack_work *w, int n, int nev, int ncv, mlc_err *err) {
    w->n = n;
    w->nev = nev;
    w->ncv = MLC_MIN(n, MLC_MAX(ncv, MLC_MAX(2 * nev + 1, 20)));
    w->lworkl = w->ncv * (w->ncv + 8);
    w->resid = mlc_malloc((size_t)n * sizeof(double));
    w->V = mlc_malloc((size_t)n * w->ncv * sizeof(double));
    w->workd = mlc_malloc(3 * (size_t)n * sizeof(double));
    w->workl = mlc_malloc((size_t)w->lworkl * sizeof(double));
    w->d = mlc_malloc((size_t)w->ncv * sizeof(double));
    w->select = mlc_calloc((size_t)w->ncv, sizeof(a_int));
    if (!w->resid || !w->V || !w->workd || !w->workl || !w->d || !w->select)
        return mlc_errf(err, MLC_ENOMEM, "eigen: out of memory for the Lanczos basis (%d×%d)", n,
                        w->ncv);
    return MLC_OK;
}

static void arpack_free(arpack_work *w) {
    mlc_free(w->resid);
    mlc_free(w->V);
    mlc_free(w->workd);
    mlc_free(w->workl);
    mlc_free(w->d);
    mlc_free(w->select);
}

/* Lanczos loop: seeded, deflated start vector, then dsaupd with y = (K − σM)⁻¹ M x from L. */
static mlc_status arpack_iterate(arpack_work *w, cholmod_factor *L, const double *mass,
                                 const double *Z, int nz, int threads, mlc_eigen_info *info,
                                 cholmod_common *cc, mlc_err *err) {
    int n = w->n;
    /* The solves split over `threads` threads where the factor is large enough to pay: the
     * same bits as cholmod_solve2's (super_solve.h). */
    mlc_supersolve split;
    mlc_err plan_err = {0};
    if (mlc_supersolve_plan(&split, L, threads, MLC_SUPERSOLVE_MIN_ENTRIES, &plan_err) != MLC_OK)
        split.bins = 1; /* no memory for the split: CHOLMOD's own solves, the same bits */
    if (info) info->solve_threads = split.bins;
    mlc_status st = MLC_OK;
    double *workd = w->workd;
    mlc_rng rng;
    mlc_rng_seed(&rng, EIGEN_START_SEED);
    for (int i = 0; i < n; i++)
        w->resid[i] = 2.0 * mlc_rng_uniform(&rng) - 1.0;
    mlc_eigen_deflate(w->resid, Z, nz, mass, n);
    a_int ido = 0;
    w->info = 1;                  /* use resid as the start vector */
    w->iparam[0] = 1;             /* exact shifts */
    w->iparam[2] = EIGEN_MAXITER; /* max restarts */
    w->iparam[3] = 1;             /* block size (must be 1) */
    w->iparam[6] = 3;             /* mode 3: shift-invert, generalized */
    cholmod_dense B = {0};        /* header over ARPACK's workd: no copy into CHOLMOD memory */
    B.nrow = (size_t)n;
    B.ncol = 1;
    B.nzmax = (size_t)n;
    B.d = (size_t)n;
    B.xtype = CHOLMOD_REAL;
    B.dtype = CHOLMOD_DOUBLE;
    cholmod_dense *X = NULL, *Y = NULL, *E = NULL;
    int solves = 0;
    for (;;) {
        dsaupd_c(&ido, "G", n, "LM", w->nev, EIGEN_TOL, w->resid, w->ncv, w->V, n, w->iparam,
                 w->ipntr, workd, w->workl, w->lworkl, &w->info);
        /* 1-based offsets */
        double *x = workd + w->ipntr[0] - 1, *y = workd + w->ipntr[1] - 1;
        if (ido == -1 || ido == 1) {
            /* y = (K − σM)⁻¹ M x; for ido = 1, M x is already at ipntr[2]. */
            double *bx = workd + w->ipntr[2] - 1;
            if (ido == -1) {
                for (int i = 0; i < n; i++)
                    y[i] = mass[i] * x[i];
                bx = y;
            }
            B.x = bx;
            if (!mlc_supersolve_solve(&split, L, bx, y)) {
                if (!cholmod_solve2(CHOLMOD_A, L, &B, NULL, &X, NULL, &Y, &E, cc)) {
                    st = mlc_errf(err, MLC_ENUMERIC, "eigen: CHOLMOD solve failed, status %d",
                                  cc->status);
                    break;
                }
                memcpy(y, X->x, (size_t)n * sizeof(double));
            }
            /* OP restricted to the M-orthogonal complement of Z: (K − σM)⁻¹M maps Z onto
             * itself (K Z = 0), so the projection keeps OP M-symmetric there and Lanczos never
             * sees the (degenerate) deflated eigenvalues. */
            mlc_eigen_deflate(y, Z, nz, mass, n);
            solves++;
        } else if (ido == 2) {
            for (int i = 0; i < n; i++)
                y[i] = mass[i] * x[i];
        } else {
            break;
        }
    }
    if (st == MLC_OK && info) {
        info->solves = solves;
        info->iterations = w->iparam[2];
        info->nconv = w->iparam[4];
    }
    cholmod_free_dense(&X, cc);
    cholmod_free_dense(&Y, cc);
    cholmod_free_dense(&E, cc);
    mlc_supersolve_destroy(&split);
    return st;
}

/* dsaupd's final info as a status (ARPACK's codes in words). */
static mlc_status arpack_status(const arpack_work *w, double sigma, mlc_err *err) {
    int n = w->n, nev = w->nev, ncv = w->ncv;
    if (w->info == 1)
        return mlc_errf(err, MLC_ENOCONV,
                        "eigen: ARPACK did not converge after %d iterations; %d of %d eigenpairs "
                        "converged (n = %d, ncv = %d, sigma = %.3g): the spectrum may be clustered "
                        "or the shift too far from the wanted eigenvalues; ask for fewer modes "
                        "(actuation.modes, subspace.skinning_modes) or re-mesh the body",
                        (int)w->iparam[2], (int)w->iparam[4], nev, n, ncv, sigma);
    if (w->info == 3)
        return mlc_errf(err, MLC_ENOCONV,
                        "eigen: ARPACK could not apply shifts during a restart (info 3, n = %d, "
                        "ncv = %d): the Lanczos basis is too small for %d eigenpairs",
                        n, ncv, nev);
    if (w->info == -9999)
        return mlc_errf(err, MLC_ENUMERIC,
                        "eigen: ARPACK could not build a Lanczos factorization (info -9999, "
                        "n = %d): the operator may be singular or the start vector degenerate",
                        n);
    if (w->info != 0)
        return mlc_errf(err, MLC_ENUMERIC,
                        "eigen: dsaupd returned info %d (an invalid argument: a bug in eigen.c; "
                        "n = %d, nev = %d, ncv = %d)",
                        (int)w->info, n, nev, ncv);
    return MLC_OK;
}

/* dseupd: the converged pairs λ = σ + 1/θ into evals/evecs, sorted, M-normalized and signed. */
static mlc_status arpack_extract(arpack_work *w, double sigma, const double *mass, double *evals,
                                 double *evecs, mlc_err *err) {
    int n = w->n, nev = w->nev;
    a_int ierr = 0;
    dseupd_c(1, "A", w->select, w->d, evecs, n, sigma, "G", n, "LM", nev, EIGEN_TOL, w->resid,
             w->ncv, w->V, n, w->iparam, w->ipntr, w->workd, w->workl, w->lworkl, &ierr);
    if (ierr != 0)
        return mlc_errf(err, ierr == -14 ? MLC_ENOCONV : MLC_ENUMERIC,
                        "eigen: dseupd returned info %d (%s; n = %d, nev = %d)", (int)ierr,
                        ierr == -14 ? "no Ritz value converged to sufficient accuracy"
                                    : "internal LAPACK failure or invalid argument",
                        n, nev);
    if (w->iparam[4] < nev)
        return mlc_errf(err, MLC_ENOCONV,
                        "eigen: only %d of %d eigenpairs converged (n = %d, %d iterations); ask "
                        "for fewer modes (actuation.modes, subspace.skinning_modes) or re-mesh "
                        "the body",
                        (int)w->iparam[4], nev, n, (int)w->iparam[2]);
    memcpy(evals, w->d, (size_t)nev * sizeof(double));
    finish_pairs(n, nev, mass, evals, evecs, w->resid);
    return MLC_OK;
}

/* The solver behind mlc_eigen_solve_ordered and mlc_eigen_solve_shared: `shared` NULL (analyze,
 * factor, free) or the caller's factor slot (see eigen.h). */
/* Lanczos loop, status, extract. */
static mlc_status arpack_run(arpack_work *w, cholmod_factor *L, double sigma, const double *mass,
                             const double *Z, int nz, int threads, double *evals, double *evecs,
                             mlc_eigen_info *info, cholmod_common *cc, mlc_err *err) {
    mlc_status st = arpack_iterate(w, L, mass, Z, nz, threads, info, cc, err);
    if (st == MLC_OK) st = arpack_status(w, sigma, err);
    if (st == MLC_OK) st = arpack_extract(w, sigma, mass, evals, evecs, err);
    return st;
}

static mlc_status solve_impl(const mlc_eigen_problem *pb, int *perm_out, cholmod_factor **shared,
                             double *evals, double *evecs, mlc_eigen_info *info, cholmod_common *cc,
                             mlc_err *err) {
    cholmod_sparse *K = pb->K;
    const double *mass = pb->mass, *Z = pb->Z;
    const int nev = pb->nev, ncv = pb->ncv, *perm = pb->perm;
    const double sigma = pb->sigma;
    int nz = pb->nz;
    /* ---- check ------------------------------------------------------------------------ */
    if (info) memset(info, 0, sizeof *info);
    mlc_status st = check_problem(K, mass, nev, sigma, evals, evecs, cc, err);
    if (st != MLC_OK) return st;
    int n = (int)K->ncol;
    if (info) info->sigma = sigma;
    if (!Z) nz = 0;
    if (nz < 0 || nev + nz >= n)
        return mlc_errf(err, MLC_EINVAL,
                        "eigen: %d eigenpairs and %d deflated vectors do not fit "
                        "a %d×%d problem",
                        nev, nz, n, n);
    if (mlc_eigen_is_dense(n, nev, nz)) {
        if (nz == 0) return solve_dense(K, mass, nev, evals, evecs, info, err);
        return solve_dense_deflated(K, mass, nev, nz, evals, evecs, info, err);
    }

    /* ---- shift and factor ------------------------------------------------------------- */
    cholmod_sparse *A = NULL;
    cholmod_factor *L = NULL;
    arpack_work w = {0};
    if ((st = arpack_alloc(&w, n, nev, ncv, err)) != MLC_OK) goto done;
    st = shift_and_factor(K, mass, sigma, perm, perm_out, shared, pb->threads, info, cc, &A, &L,
                          err);
    if (st != MLC_OK) goto done;
    if (info) info->ncv = w.ncv;

    /* ---- Lanczos loop, extract, sort/normalize/sign ----------------------------------- */
    double t0 = mlc_now();
#pragma omp critical(mlc_arpack) /* ARPACK keeps its state in Fortran SAVE variables */
    st = arpack_run(&w, L, sigma, mass, Z, nz, pb->threads, evals, evecs, info, cc, err);
    if (st != MLC_OK) goto done;
    if (info) info->t_iterate = mlc_now() - t0;

done:
    /* ---- cleanup ---------------------------------------------------------------------- */
    if (shared && !*shared)
        *shared = L; /* the caller's now, numeric or symbolic */
    else
        cholmod_free_factor(&L, cc);
    cholmod_free_sparse(&A, cc);
    arpack_free(&w);
    return st;
}

mlc_status mlc_eigen_factor(cholmod_sparse *K, const double *mass, double sigma, cholmod_factor *L,
                            mlc_eigen_info *info, cholmod_common *cc, mlc_err *err) {
    if (info) memset(info, 0, sizeof *info);
    if (!K || !L || L->n != K->ncol)
        return mlc_errf(err, MLC_EINVAL, "eigen: factor of another size");
    cholmod_sparse *A = NULL;
    cholmod_factor *slot = L, *Lout = NULL; /* refactorize into L (shift_and_factor's slot) */
    mlc_status st =
        shift_and_factor(K, mass, sigma, NULL, NULL, &slot, 1, info, cc, &A, &Lout, err);
    cholmod_free_sparse(&A, cc);
    return st;
}

mlc_status mlc_eigen_solve_factored(const mlc_eigen_problem *pb, cholmod_factor *L, double *evals,
                                    double *evecs, mlc_eigen_info *info, cholmod_common *cc,
                                    mlc_err *err) {
    cholmod_sparse *K = pb->K;
    const double *mass = pb->mass, *Z = pb->Z;
    const int nev = pb->nev;
    const double sigma = pb->sigma;
    int nz = pb->nz;
    double t_factor = info ? info->t_factor : 0, factor_nnz = info ? info->factor_nnz : 0;
    if (info) memset(info, 0, sizeof *info);
    mlc_status st = check_problem(K, mass, nev, sigma, evals, evecs, cc, err);
    if (st != MLC_OK) return st;
    int n = (int)K->ncol;
    if (!Z) nz = 0;
    if (nz < 0 || nev + nz >= n || mlc_eigen_is_dense(n, nev, nz) || !L || (int)L->n != n)
        return mlc_errf(err, MLC_EINVAL,
                        "eigen: a factored solve needs a sparse problem and its factor (n = %d, "
                        "nev = %d, nz = %d)",
                        n, nev, nz);
    arpack_work w = {0};
    if ((st = arpack_alloc(&w, n, nev, 0, err)) == MLC_OK) { /* as solve_impl's default ncv */
        if (info) {
            info->sigma = sigma, info->ncv = w.ncv, info->t_factor = t_factor;
            info->factor_nnz = factor_nnz;
            snprintf(info->ordering, sizeof info->ordering, "shared");
        }
        double t0 = mlc_now();
#pragma omp critical(mlc_arpack) /* ARPACK keeps its state in Fortran SAVE variables */
        st = arpack_run(&w, L, sigma, mass, Z, nz, pb->threads, evals, evecs, info, cc, err);
        if (st == MLC_OK && info) info->t_iterate = mlc_now() - t0;
    }
    arpack_free(&w);
    return st;
}

mlc_status mlc_eigen_solve_ordered(const mlc_eigen_problem *pb, int *perm_out, double *evals,
                                   double *evecs, mlc_eigen_info *info, cholmod_common *cc,
                                   mlc_err *err) {
    return solve_impl(pb, perm_out, NULL, evals, evecs, info, cc, err);
}

mlc_status mlc_eigen_solve_shared(const mlc_eigen_problem *pb, cholmod_factor **shared,
                                  double *evals, double *evecs, mlc_eigen_info *info,
                                  cholmod_common *cc, mlc_err *err) {
    if (!shared) return mlc_errf(err, MLC_EINVAL, "eigen: NULL factor slot");
    if (*shared && pb->K && (*shared)->n != pb->K->ncol)
        return mlc_errf(err, MLC_EINVAL, "eigen: shared factor is %d×%d, the matrix %d×%d",
                        (int)(*shared)->n, (int)(*shared)->n, (int)pb->K->ncol, (int)pb->K->ncol);
    return solve_impl(pb, NULL, shared, evals, evecs, info, cc, err);
}

/* ---- Checking computed pairs ------------------------------------------------------------ */

/* x ↦ ‖x‖ in the norm of M⁻¹ (r: a residual) or of M (x: a vector). */
static double norm_minv(const double *r, const double *mass, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += r[i] * r[i] / mass[i];
    return sqrt(s);
}

static double dot_m(const double *x, const double *y, const double *mass, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * mass[i] * y[i];
    return s;
}

mlc_status mlc_eigen_check_pairs(cholmod_sparse *K, const double *mass, int nev,
                                 const double *evals, const double *evecs, const double *Z, int nz,
                                 mlc_eigen_check *out, cholmod_common *cc) {
    memset(out, 0, sizeof *out);
    out->residual_at = out->orthogonality_at = -1;
    int n = (int)K->ncol;
    if (nev < 1) return MLC_OK;
    /* The scale of the wanted spectrum: the largest |λ| computed, so that a zero eigenvalue
     * (rigid motion, hanging part) is measured against its neighbours, not against itself. */
    double scale = 0;
    for (int j = 0; j < nev; j++)
        scale = fmax(scale, fabs(evals[j]));
    cholmod_dense *R = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, cc);
    if (!R) return MLC_ENOMEM;
    double *r = R->x;
    cholmod_dense X = {0};
    X.nrow = (size_t)n, X.ncol = 1, X.nzmax = (size_t)n, X.d = (size_t)n;
    X.xtype = CHOLMOD_REAL, X.dtype = CHOLMOD_DOUBLE;
    double one[2] = {1, 0}, zero[2] = {0, 0};
    mlc_status st = MLC_OK;
    for (int j = 0; j < nev && st == MLC_OK; j++) {
        const double *x = evecs + (size_t)n * j;
        X.x = (double *)(uintptr_t)x; /* read only: cholmod_dense has no const view */
        if (!cholmod_sdmult(K, 0, one, zero, &X, R, cc)) {
            st = MLC_ENOMEM;
            break;
        }
        for (int i = 0; i < n; i++)
            r[i] -= evals[j] * mass[i] * x[i];
        double xm = sqrt(dot_m(x, x, mass, n));
        double ref = fmax(fabs(evals[j]), scale) * xm;
        double rel = ref > 0 ? norm_minv(r, mass, n) / ref : HUGE_VAL;
        if (!(rel <= out->residual)) out->residual = rel, out->residual_at = j;
        /* M-orthonormality: against Z, itself, and its neighbours in the spectrum (where
         * Lanczos loses orthogonality first; the whole Gram matrix costs nev² dot products). */
        /* A pair at λ ≈ 0 may be any null vector, Z's included (a hinge's zero mode found
         * by the dense path beside the rigid ones): Z is checked against the others only. */
        for (int k = 0; k < nz && fabs(evals[j]) > 1e-6 * scale; k++) {
            double d = fabs(dot_m(Z + (size_t)n * k, x, mass, n));
            if (!(d <= out->orthogonality)) out->orthogonality = d, out->orthogonality_at = j;
        }
        for (int k = MLC_MAX(0, j - 8); k <= j; k++) {
            double d = fabs(dot_m(evecs + (size_t)n * k, x, mass, n) - (k == j));
            if (!(d <= out->orthogonality)) out->orthogonality = d, out->orthogonality_at = j;
        }
    }
    cholmod_free_dense(&R, cc);
    if (st != MLC_OK) return st;
    return out->residual <= MLC_EIGEN_CHECK_TOL && out->orthogonality <= MLC_EIGEN_CHECK_TOL
               ? MLC_OK
               : MLC_ENUMERIC;
}
