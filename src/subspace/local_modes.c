/* local_modes.c: localized vibration modes per region (local_modes.h; docs/method.md
 * "Localized actuation modes").
 *
 * Phases: check the labels → per region: outside mass, K + w M_out (a copy of K with its
 * diagonal raised), shift-invert solve on the shared factor → Löwdin M-orthonormalization of
 * the union → localization report.
 */
#include "local_modes.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "eigen.h"

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

/* Region r's m_r modes into ev/X; L: the shared factor slot (K's pattern); mout: n scratch;
 * bound: m_r a-posteriori bounds √(λ/w). */
static mlc_status solve_region(cholmod_sparse *H, const double *mass3, const mlc_mesh *mesh,
                               const mlc_fem *fem, const int *tet_region,
                               const double *tet_mass_scale, int r, int per_region, double weight,
                               double sigma, const double *Z, cholmod_factor **L, double *ev,
                               double *X, double *mout, double *bound, mlc_eigen_info *info,
                               cholmod_common *cc, mlc_err *err) {
    int n = 3 * mesh->nv;
    mlc_local_outside_mass(mesh, fem, tet_region, tet_mass_scale, r, mout);
    int outside = 0;
    for (int i = 0; i < n && !outside; i++)
        outside = mout[i] > 0;
    int penalized = outside && weight > 0;
    /* K + w M_out: K's pattern (every diagonal entry is stored), diagonal raised. */
    cholmod_sparse *A = cholmod_copy_sparse(H, cc);
    if (!A) return mlc_errf(err, MLC_ENOMEM, "out of memory copying the Hessian");
    if (penalized) {
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
    /* K itself (no penalty) keeps its rigid null space: deflate it as the global solve does,
     * which makes one region with w = 0 the global path exactly. */
    mlc_status st = mlc_eigen_solve_shared(A, mass3, per_region, sigma, NULL, penalized ? NULL : Z,
                                           penalized ? 0 : 6, L, ev, X, info, cc, err);
    cholmod_free_sparse(&A, cc);
    for (int j = 0; st == MLC_OK && j < per_region; j++)
        bound[j] = penalized ? sqrt(fmax(ev[j], 0) / weight) : (outside ? 1.0 : 0.0);
    return st;
}

mlc_status mlc_local_modes_compute(cholmod_sparse *H, const double *mass3, const mlc_mesh *mesh,
                                   const mlc_fem *fem, const int *tet_region,
                                   const double *tet_mass_scale, int nregions, int per_region,
                                   double weight, double sigma, const int *perm, const double *Z,
                                   double *evals, double *evecs, mlc_local_modes_report *report,
                                   cholmod_common *cc, mlc_err *err) {
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
    for (int r = 0; r < nregions; r++) {
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
