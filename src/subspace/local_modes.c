/* local_modes.c: localized vibration modes per region (local_modes.h; docs/method.md
 * "Localized actuation modes").
 *
 * Phases: check the labels → per region: outside mass, K + w M_out (a copy of K with its
 * diagonal raised), shift-invert solve on the shared factor → Löwdin M-orthonormalization of
 * the union → localization report.
 */
#include "internal/local_modes.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "internal/eigen.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void mlc_local_outside_mass(const mlc_mesh *mesh, const mlc_fem *fem, const int *tet_region,
                            const double *tet_mass_scale, int r, double *out3) {
    memset(out3, 0, 3 * (size_t)mesh->nv * sizeof(double));
    if (!tet_region) return;
    for (int e = 0; e < mesh->nt; e++) {
        if (tet_region[e] == r) continue;
        double q = 0.25 * fem->vol[e] * (tet_mass_scale ? tet_mass_scale[e] : 1.0);
        for (int a = 0; a < 4; a++) {
            int v = mesh->T[4 * e + a];
            for (int k = 0; k < 3; k++)
                out3[3 * (size_t)v + k] += q;
        }
    }
}

/* √(φᵀ M_out φ / φᵀ M φ) for one mode of n DOFs. */
static double mlc_local_fraction(const double *phi, const double *mout3, const double *mass3,
                                 int n) {
    double out = 0, all = 0;
    for (int i = 0; i < n; i++) {
        out += mout3[i] * phi[i] * phi[i];
        all += mass3[i] * phi[i] * phi[i];
    }
    return all > 0 ? sqrt(out / all) : 0;
}

/* G = ΦᵀMΦ (q×q, column-major, both halves) for Φ n×q. */
static void gram(int n, int q, const double *mass3, const double *Phi, double *G) {
    for (int a = 0; a < q; a++)
        for (int b = 0; b <= a; b++) {
            const double *x = Phi + (size_t)n * a, *y = Phi + (size_t)n * b;
            double d = 0;
            for (int i = 0; i < n; i++)
                d += x[i] * mass3[i] * y[i];
            G[a + (size_t)b * q] = G[b + (size_t)a * q] = d;
        }
}

double mlc_local_gram_min(int n, int q, const double *mass3, const double *Phi) {
    double *G = mlc_malloc((size_t)q * q * sizeof(double));
    double *g = mlc_malloc((size_t)q * sizeof(double));
    double r = -1;
    if (G && g) {
        gram(n, q, mass3, Phi, G);
        if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', q, G, q, g) == 0) r = g[0];
    }
    mlc_free(G);
    mlc_free(g);
    return r;
}

/* Φ ← Φ G^(−1/2) with G = ΦᵀMΦ (n×q): the M-orthonormal set nearest to Φ. Records G's smallest
 * eigenvalue and ‖φ_after − φ_before‖_M per column. */
static mlc_status lowdin(int n, int q, const double *mass3, double *Phi, double *gram_min,
                         double *spread, mlc_err *err) {
    double *G = mlc_malloc((size_t)q * q * sizeof(double));
    double *g = mlc_malloc((size_t)q * sizeof(double));
    double *S = mlc_malloc((size_t)q * q * sizeof(double));
    double *P = mlc_malloc((size_t)n * q * sizeof(double));
    mlc_status st = MLC_OK;
    if (!G || !g || !S || !P) {
        st = mlc_errf(err, MLC_ENOMEM, "local modes: out of memory (%d DOFs × %d modes)", n, q);
        goto done;
    }
    gram(n, q, mass3, Phi, G);
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', q, G, q, g) != 0) {
        st = mlc_errf(err, MLC_ENUMERIC,
                      "local modes: LAPACK dsyev failed on the %d×%d Gram matrix", q, q);
        goto done;
    }
    *gram_min = g[0];
    if (!(g[0] > 1e-8)) {
        st = mlc_errf(err, MLC_EINVAL,
                      "local modes: the regions' modes are linearly dependent (smallest Gram "
                      "eigenvalue %.3g): raise actuation.localization or ask for fewer "
                      "actuation.local_modes",
                      g[0]);
        goto done;
    }
    /* S = U diag(g^(-1/2)) Uᵀ; G now holds U. */
    for (int a = 0; a < q; a++)
        for (int b = 0; b < q; b++) {
            double s = 0;
            for (int c = 0; c < q; c++)
                s += G[a + (size_t)c * q] * G[b + (size_t)c * q] / sqrt(g[c]);
            S[a + (size_t)b * q] = s;
        }
    for (int b = 0; b < q; b++) {
        double *pb = P + (size_t)n * b;
        memset(pb, 0, (size_t)n * sizeof(double));
        for (int a = 0; a < q; a++) {
            const double *x = Phi + (size_t)n * a;
            double s = S[a + (size_t)b * q];
            for (int i = 0; i < n; i++)
                pb[i] += s * x[i];
        }
        const double *old = Phi + (size_t)n * b;
        double d2 = 0;
        for (int i = 0; i < n; i++)
            d2 += mass3[i] * (pb[i] - old[i]) * (pb[i] - old[i]);
        spread[b] = sqrt(d2);
    }
    memcpy(Phi, P, (size_t)n * q * sizeof(double));
done:
    mlc_free(G);
    mlc_free(g);
    mlc_free(S);
    mlc_free(P);
    return st;
}

/* Region r's operator K + w M_out(r) into *Aout (a new matrix: K's pattern, every diagonal
 * entry stored, diagonal raised); *penalized: whether the penalty is there (tets outside R and
 * w > 0), *outside: whether R has tets outside it at all. mout: n scratch. */
static mlc_status region_matrix(cholmod_sparse *H, const mlc_mesh *mesh, const mlc_fem *fem,
                                const int *tet_region, const double *tet_mass_scale, int r,
                                double weight, double *mout, cholmod_sparse **Aout, int *penalized,
                                int *outside, cholmod_common *cc, mlc_err *err) {
    int n = 3 * mesh->nv;
    mlc_local_outside_mass(mesh, fem, tet_region, tet_mass_scale, r, mout);
    *outside = 0;
    for (int i = 0; i < n && !*outside; i++)
        *outside = mout[i] > 0;
    *penalized = *outside && weight > 0;
    cholmod_sparse *A = *Aout = cholmod_copy_sparse(H, cc);
    if (!A) return mlc_errf(err, MLC_ENOMEM, "out of memory copying the Hessian");
    if (*penalized) {
        const int *Ap = A->p, *Ai = A->i, *Anz = A->nz;
        double *Ax = A->x;
        for (int j = 0; j < n; j++) {
            int end = A->packed ? Ap[j + 1] : Ap[j] + Anz[j];
            for (int p = Ap[j]; p < end; p++)
                if (Ai[p] == j) {
                    Ax[p] += weight * mout[j];
                    break;
                }
        }
    }
    return MLC_OK;
}

/* The a-posteriori bounds √(λ/w) of a region's m_r pairs (1 without penalty but with tets
 * outside, 0 for the whole body). */
static void region_bounds(const double *ev, int per_region, int penalized, int outside,
                          double weight, double *bound) {
    for (int j = 0; j < per_region; j++)
        bound[j] = penalized ? sqrt(fmax(ev[j], 0) / weight) : (outside ? 1.0 : 0.0);
}

/* Region r's m_r modes into ev/X; L: the shared factor slot (K's pattern); mout: n scratch;
 * bound: m_r a-posteriori bounds √(λ/w). */
static mlc_status solve_region(cholmod_sparse *H, const double *mass3, const mlc_mesh *mesh,
                               const mlc_fem *fem, const int *tet_region,
                               const double *tet_mass_scale, int r, int per_region, double weight,
                               double sigma, const double *Z, cholmod_factor **L, double *ev,
                               double *X, double *mout, double *bound, mlc_eigen_info *info,
                               cholmod_common *cc, mlc_err *err) {
    cholmod_sparse *A = NULL;
    int penalized = 0, outside = 0;
    mlc_status st = region_matrix(H, mesh, fem, tet_region, tet_mass_scale, r, weight, mout, &A,
                                  &penalized, &outside, cc, err);
    /* K itself (no penalty) keeps its rigid null space: deflate it as the global solve does,
     * which makes one region with w = 0 the global path exactly. */
    if (st == MLC_OK) {
        const mlc_eigen_problem pb = {.K = A,
                                      .mass = mass3,
                                      .nev = per_region,
                                      .sigma = sigma,
                                      .Z = penalized ? NULL : Z,
                                      .nz = penalized ? 0 : 6};
        st = mlc_eigen_solve_shared(&pb, L, ev, X, info, cc, err);
    }
    cholmod_free_sparse(&A, cc);
    if (st == MLC_OK) region_bounds(ev, per_region, penalized, outside, weight, bound);
    return st;
}

/* One region in flight in the two-thread pipeline: its operator and factor slot. */
typedef struct region_job {
    cholmod_sparse *A;
    cholmod_factor *L;
    int penalized, outside;
    mlc_status st;
    mlc_err err;
    mlc_eigen_info info;
} region_job;

/* The regions on two threads: while one thread runs region r's Lanczos loop (ARPACK, one at a
 * time in a process), the other builds and factorizes region r + 1's operator into a second
 * factor with the same analysis. Each region gets the arithmetic of solve_region (the same
 * bits), for twice the factor memory. L0: the analyzed factor; regions' results as in
 * mlc_local_modes_compute. Returns the first failing region's status (its index in *failed). */
static mlc_status regions_pipelined(cholmod_sparse *H, const double *mass3, const mlc_mesh *mesh,
                                    const mlc_fem *fem, const int *tet_region,
                                    const double *tet_mass_scale, int nregions, int per_region,
                                    double weight, double sigma, const double *Z,
                                    cholmod_factor *L0, double *evals, double *evecs,
                                    mlc_local_modes_report *rep, int *failed, cholmod_common *cc,
                                    mlc_err *err) {
    int n = 3 * mesh->nv;
    cholmod_common cc2; /* the factorizing thread's own workspace */
    cholmod_start(&cc2);
    cc2.print = 0;
    region_job job[2];
    memset(job, 0, sizeof job);
    job[0].L = L0;
    job[1].L = cholmod_copy_factor(L0, cc);
    double *mout2 = mlc_malloc((size_t)n * sizeof(double));
    mlc_status st = MLC_OK;
    *failed = 0;
    if (!job[1].L || !mout2) {
        st = mlc_errf(err, MLC_ENOMEM, "out of memory for a second factor (n = %d)", n);
        goto done;
    }
    /* Region r's operator and factor (j = its job slot); scratch: its own outside mass. */
#define PREPARE(r, j, cmn, scratch)                                                                \
    do {                                                                                           \
        region_job *q = &job[j];                                                                   \
        q->st = region_matrix(H, mesh, fem, tet_region, tet_mass_scale, (r), weight, (scratch),    \
                              &q->A, &q->penalized, &q->outside, (cmn), &q->err);                  \
        if (q->st == MLC_OK)                                                                       \
            q->st = mlc_eigen_factor(q->A, mass3, sigma, q->L, &q->info, (cmn), &q->err);          \
    } while (0)
    PREPARE(0, 0, cc, mout2);
    for (int r = 0; r < nregions && st == MLC_OK; r++) {
        region_job *cur = &job[r % 2];
#pragma omp parallel sections num_threads(2)
        {
#pragma omp section
            {
                const mlc_eigen_problem pb = {.K = cur->A,
                                              .mass = mass3,
                                              .nev = per_region,
                                              .sigma = sigma,
                                              .Z = cur->penalized ? NULL : Z,
                                              .nz = cur->penalized ? 0 : 6};
                if (cur->st == MLC_OK)
                    cur->st = mlc_eigen_solve_factored(&pb, cur->L, evals + (size_t)r * per_region,
                                                       evecs + (size_t)n * r * per_region,
                                                       &cur->info, cc, &cur->err);
            }
#pragma omp section
            {
                if (r + 1 < nregions) PREPARE(r + 1, (r + 1) % 2, &cc2, mout2);
            }
        }
        if (cur->st != MLC_OK) {
            st = cur->st, *failed = r;
            if (err) *err = cur->err;
            break;
        }
        region_bounds(evals + (size_t)r * per_region, per_region, cur->penalized, cur->outside,
                      weight, rep->bound + r * per_region);
        rep->solves += cur->info.solves;
        rep->t_factor += cur->info.t_factor;
        rep->t_iterate += cur->info.t_iterate;
        cholmod_free_sparse(&cur->A, cc);
    }
#undef PREPARE
done:
    for (int j = 0; j < 2; j++)
        cholmod_free_sparse(&job[j].A, j ? &cc2 : cc);
    cholmod_free_factor(&job[1].L, cc);
    mlc_free(mout2);
    cholmod_finish(&cc2);
    return st;
}

mlc_status mlc_local_modes_compute(const mlc_local_modes_def *def, double *evals, double *evecs,
                                   mlc_local_modes_report *report, cholmod_common *cc,
                                   mlc_err *err) {
    if (!def) return mlc_errf(err, MLC_EINVAL, "local modes: NULL argument");
    cholmod_sparse *H = def->H;
    const double *mass3 = def->mass3, *tet_mass_scale = def->tet_mass_scale, *Z = def->Z;
    const mlc_mesh *mesh = def->mesh;
    const mlc_fem *fem = def->fem;
    const int *tet_region = def->tet_region, *perm = def->perm;
    int nregions = def->nregions;
    const int per_region = def->per_region, threads = def->threads;
    const double weight = def->weight, sigma = def->sigma;
    mlc_local_modes_report rep;
    memset(&rep, 0, sizeof rep);
    if (!H || !mass3 || !mesh || !fem || !Z || !evals || !evecs || !cc)
        return mlc_errf(err, MLC_EINVAL, "local modes: NULL argument");
    int nv = mesh->nv, nt = mesh->nt, n = 3 * nv;
    if ((int)H->ncol != n)
        return mlc_errf(err, MLC_EINVAL, "local modes: the Hessian is %d×%d, the mesh has %d DOFs",
                        (int)H->ncol, (int)H->ncol, n);
    if (!tet_region) nregions = 1;
    if (nregions < 1)
        return mlc_errf(err, MLC_EINVAL, "local modes: %d regions; need at least 1", nregions);
    if (per_region < 1 || (long)per_region * nregions > MLC_LOCAL_MAX_MODES)
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.local_modes = %d with %d regions gives %ld modes; at most %d "
                        "actuation modes in all: use fewer local modes per region",
                        per_region, nregions, (long)per_region * nregions, MLC_LOCAL_MAX_MODES);
    if (!(weight >= 0) || !isfinite(weight))
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.localization = %g: the localization weight must be finite and "
                        ">= 0",
                        weight);
    if (weight == 0 && nregions > 1)
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.localization = 0 with %d regions: every region would get the "
                        "same global modes; set actuation.localization > 0",
                        nregions);
    if (6 + per_region >= n)
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.local_modes = %d: the mesh has only %d vertices (%d DOFs)",
                        per_region, nv, n);
    int *count = mlc_calloc((size_t)nregions, sizeof(int));
    if (!count) return mlc_errf(err, MLC_ENOMEM, "local modes: out of memory");
    for (int e = 0; tet_region && e < nt; e++) {
        if (tet_region[e] < 0 || tet_region[e] >= nregions) {
            int bad = tet_region[e];
            mlc_free(count);
            return mlc_errf(err, MLC_EINVAL,
                            "region labels: tet %d has label %d; labels must be 0..%d (one per "
                            "region)",
                            e, bad, nregions - 1);
        }
        count[tet_region[e]]++;
    }
    for (int r = 0; tet_region && r < nregions; r++)
        if (count[r] == 0) {
            mlc_free(count);
            return mlc_errf(err, MLC_EINVAL,
                            "region labels: region %d has no tets; number the regions 0..%d "
                            "without gaps",
                            r, nregions - 1);
        }
    mlc_free(count);

    /* One symbolic analysis of K's pattern, then every region only refactorizes it. The
     * regions run one after the other: ARPACK keeps its reverse-communication state in static
     * (Fortran SAVE) variables, so two Lanczos runs cannot share a process's threads. */
    mlc_status st = MLC_OK;
    double *mout = mlc_malloc((size_t)n * sizeof(double));
    cholmod_factor *L = NULL;
    if (!mout) {
        st = mlc_errf(err, MLC_ENOMEM, "local modes: out of memory (%d DOFs)", n);
        goto done;
    }
    L = mlc_eigen_analyze(H, perm, cc);
    if (!L) {
        st = mlc_errf(err, cc->status == CHOLMOD_OUT_OF_MEMORY ? MLC_ENOMEM : MLC_ENUMERIC,
                      "local modes: CHOLMOD analysis of the Hessian (n = %d) failed, status %d", n,
                      cc->status);
        goto done;
    }
    rep.weight = weight;
    int two = 0; /* the pipeline needs two threads, two regions and sparse solves */
#ifdef _OPENMP
    two = threads != 1 && nregions > 1 && omp_get_num_procs() > 1 &&
          !mlc_eigen_is_dense(n, per_region, 0) && !mlc_eigen_is_dense(n, per_region, 6);
#else
    (void)threads;
#endif
    if (two) {
        int failed = 0;
        mlc_err e2 = {0};
        st =
            regions_pipelined(H, mass3, mesh, fem, tet_region, tet_mass_scale, nregions, per_region,
                              weight, sigma, Z, L, evals, evecs, &rep, &failed, cc, &e2);
        if (st != MLC_OK) {
            st = mlc_errf(err, st, "local modes of region %d (actuation.local_modes = %d): %s",
                          failed, per_region, e2.msg);
            goto done;
        }
    }
    for (int r = 0; !two && r < nregions; r++) {
        mlc_eigen_info info;
        mlc_err e2 = {0};
        st = solve_region(H, mass3, mesh, fem, tet_region, tet_mass_scale, r, per_region, weight,
                          sigma, Z, &L, evals + (size_t)r * per_region,
                          evecs + (size_t)n * r * per_region, mout, rep.bound + r * per_region,
                          &info, cc, &e2);
        if (st != MLC_OK) {
            st = mlc_errf(err, st, "local modes of region %d (actuation.local_modes = %d): %s", r,
                          per_region, e2.msg);
            goto done;
        }
        rep.solves += info.solves;
        rep.t_factor += info.t_factor;
        rep.t_iterate += info.t_iterate;
    }
    int q = nregions * per_region;
    rep.gram_min = 1;
    if (nregions > 1) {
        st = lowdin(n, q, mass3, evecs, &rep.gram_min, rep.spread, err);
        if (st != MLC_OK) goto done;
    }
    for (int r = 0; r < nregions; r++) {
        mlc_local_outside_mass(mesh, fem, tet_region, tet_mass_scale, r, mout);
        for (int j = 0; j < per_region; j++) {
            int i = r * per_region + j;
            rep.fraction[i] = mlc_local_fraction(evecs + (size_t)n * i, mout, mass3, n);
        }
    }
done:
    if (L) cholmod_free_factor(&L, cc);
    mlc_free(mout);
    if (report) *report = rep;
    return st;
}
