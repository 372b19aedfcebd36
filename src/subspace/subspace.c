/* subspace.c: the precomputation of docs/method.md §3–5.
 *
 *  1. Skinning eigenmodes (§3; 000 App. A Eq. 20; 002 §4): L W = M_s W Λ with the unit-μ scalar
 *     Laplacian L and M_s = vmass, the w smallest pairs. Column 0 (λ₀ = 0) is then set exactly
 *     to the constant 1/√(Σ M_s) so that the rest state is reproduced exactly.
 *  2. Vibration modes (§4; Eq. 4): H D = M D Λ with the linear-elasticity Hessian for μ = 1,
 *     λ = 2μν/(1−2ν), M = vmass per DOF. The 6 rigid modes are built analytically and deflated
 *     from the Lanczos solve; the check that there are exactly 6 (|λ| < 1e-6·λ₇, λ₇ clearly
 *     elastic) stays; the next m (or the listed indices) are kept. The solved pairs are
 *     checked (residuals, M-orthonormality) and solved again with other shifts when they
 *     fail (vibration_solve; docs/method.md "The vibration solve checks itself").
 *  3. Amplitude limits (App. H Eq. 78): grad_max[i] = max_e ‖∇(D_i)_e‖_F.
 *  4. Passive and actuation clusters (§5) and contact samples (§6) via clusters.c.
 */
#include "subspace.h"

#include <cholmod.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "budget.h"
#include "clusters.h"
#include "internal/eigen.h"
#include "internal/local_modes.h"
#include "internal/subspace_internal.h"

void mlc_subspace_free(mlc_subspace *s) {
    if (!s) return;
    mlc_free(s->W);
    mlc_free(s->skin_eval);
    mlc_free(s->D);
    mlc_free(s->vib_eval);
    mlc_free(s->mode_index);
    mlc_free(s->mode_region);
    mlc_free(s->vib_frac);
    mlc_free(s->grad_max);
    mlc_free(s->cluster);
    mlc_free(s->acluster);
    mlc_free(s->samples);
    memset(s, 0, sizeof *s);
}

/* ‖∇(D_i)_e‖_F: the strain of tet e under unit amplitude of the mode with DOFs Di. Shared by
 * grad_max and mlc_subspace_mode_strains so that both are the same numbers bit for bit. */
static double mode_tet_strain(const mlc_mesh *mesh, const mlc_fem *fem, const double *Di, int e) {
    double F[9], f2 = 0;
    mlc_fem_deformation_gradient(mesh, fem, e, Di, F);
    for (int q = 0; q < 9; q++)
        f2 += F[q] * F[q];
    return sqrt(f2);
}

void mlc_subspace_mode_strains(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *s,
                               int threads, double *out) {
    const size_t n = 3 * (size_t)s->nv;
    int two = 0;
#ifdef _OPENMP
    two = threads != 1 && s->nt >= 4096 && omp_get_num_procs() > 1;
#else
    (void)threads;
#endif
#pragma omp parallel for schedule(static) num_threads(2) if (two)
    for (int e = 0; e < s->nt; e++)
        for (int i = 0; i < s->m; i++)
            out[(size_t)e * s->m + i] = mode_tet_strain(mesh, fem, s->D + (size_t)i * n, e);
}

/* Number of non-rigid modes the settings need (m, or max(mode_list)+1). */
static int modes_needed(const mlc_subspace_settings *st) {
    if (st->nlist <= 0) return st->m;
    int need = 0;
    for (int i = 0; i < st->nlist; i++)
        need = MLC_MAX(need, st->mode_list[i] + 1);
    return need;
}

/* Regions of the local modes (0 without local modes). */
static int local_regions(const mlc_subspace_settings *st) {
    if (st->local_modes <= 0) return 0;
    return st->tet_region ? st->nregions : 1;
}

static mlc_status validate(const mlc_mesh *mesh, const mlc_subspace_settings *st, mlc_err *err) {
    int nv = mesh->nv;
    if (st->local_modes < 0 || st->local_modes > 64)
        return mlc_errf(err, MLC_EINVAL, "actuation.local_modes = %d: must be in 0..64 (0 = off)",
                        st->local_modes);
    if (st->local_modes > 0) {
        if (!(st->localization >= 0) || !isfinite(st->localization))
            return mlc_errf(err, MLC_EINVAL,
                            "actuation.localization = %g: must be a finite number >= 0 (a "
                            "multiple of the first Laplacian eigenvalue; 0 = no localization)",
                            st->localization);
        if (st->tet_region && st->nregions < 1)
            return mlc_errf(err, MLC_EINVAL, "region labels: %d regions; need at least 1",
                            st->nregions);
        int global = st->nlist > 0 ? st->nlist : st->m;
        long total = global + (long)st->local_modes * local_regions(st);
        if (total > 64)
            return mlc_errf(err, MLC_EINVAL,
                            "actuation.local_modes = %d × %d regions + %d global modes = %ld "
                            "actuation modes; at most 64: lower actuation.local_modes or "
                            "actuation.modes",
                            st->local_modes, local_regions(st), global, total);
        if (6 + st->local_modes >= 3 * nv)
            return mlc_errf(err, MLC_EINVAL,
                            "actuation.local_modes = %d: the mesh has only %d vertices; use "
                            "fewer modes",
                            st->local_modes, nv);
    }
    if (st->w < 1 || st->w > 32)
        return mlc_errf(err, MLC_EINVAL, "subspace.skinning_modes = %d: must be in 1..32", st->w);
    if (st->w >= nv)
        return mlc_errf(err, MLC_EINVAL,
                        "subspace.skinning_modes = %d: the mesh has only %d vertices; use fewer "
                        "modes or a finer mesh",
                        st->w, nv);
    if (!(st->poisson > -1.0 && st->poisson < 0.5))
        return mlc_errf(err, MLC_EINVAL,
                        "material.poisson_modes = %g: must be in (-1, 0.5) for a stable "
                        "isotropic material",
                        st->poisson);
    if (st->nlist > 0) {
        if (!st->mode_list) return mlc_errf(err, MLC_EINVAL, "actuation.mode_list: NULL list");
        if (st->nlist > 64)
            return mlc_errf(err, MLC_EINVAL, "actuation.mode_list has %d entries: at most 64",
                            st->nlist);
        for (int i = 0; i < st->nlist; i++)
            if (st->mode_list[i] < 0)
                return mlc_errf(err, MLC_EINVAL,
                                "actuation.mode_list[%d] = %d: mode indices start at 0 (the "
                                "first non-rigid mode)",
                                i, st->mode_list[i]);
        int need = modes_needed(st);
        if (need > 1024 || 6 + need >= 3 * nv)
            return mlc_errf(err, MLC_EINVAL,
                            "actuation.mode_list: index %d is too large for a mesh with %d "
                            "vertices (%d DOFs, 6 of them rigid)",
                            need - 1, nv, 3 * nv);
    } else {
        if (st->m < (st->local_modes > 0 ? 0 : 1) || st->m > 64)
            return mlc_errf(err, MLC_EINVAL, "actuation.modes = %d: must be in %d..64", st->m,
                            st->local_modes > 0 ? 0 : 1);
        if (6 + st->m >= 3 * nv)
            return mlc_errf(err, MLC_EINVAL,
                            "actuation.modes = %d: the mesh has only %d vertices (%d DOFs, 6 of "
                            "them rigid); use fewer modes",
                            st->m, nv, 3 * nv);
    }
    if (st->contact_samples < 1)
        return mlc_errf(err, MLC_EINVAL, "subspace.contact_samples = %d: must be >= 1",
                        st->contact_samples);
    if (!(st->contact_spacing >= 0 && st->contact_spacing <= 1))
        return mlc_errf(err, MLC_EINVAL, "subspace.contact_spacing = %g: must be in [0, 1]",
                        st->contact_spacing);
    if (st->passive_clusters < 1)
        return mlc_errf(err, MLC_EINVAL, "subspace.passive_clusters = %d: must be >= 1",
                        st->passive_clusters);
    if (st->actuation_clusters < 1)
        return mlc_errf(err, MLC_EINVAL, "subspace.actuation_clusters = %d: must be >= 1",
                        st->actuation_clusters);
    return MLC_OK;
}

/* The skinning problem's ordering settings: nested dissection (METIS) alone; saved[2] keeps
 * cc's own for restore_methods. skinning_ordering must use exactly these to get the same
 * permutation. */
static void metis_only(cholmod_common *cc, int saved[2]) {
    saved[0] = cc->nmethods, saved[1] = cc->method[0].ordering;
    cc->nmethods = 1;
    cc->method[0].ordering = CHOLMOD_METIS;
}

static void restore_methods(cholmod_common *cc, const int saved[2]) {
    cc->nmethods = saved[0];
    cc->method[0].ordering = saved[1];
}

/* A shift for the Laplacian tied to its spectrum, as probe_shift is for the Hessian: −1e-3 ×
 * the smallest Rayleigh quotient of the three coordinate functions made M-orthogonal to the
 * constant (each bounds λ₁ from above). 0 when it cannot be formed. */
static double laplacian_probe_shift(const mlc_mesh *mesh, cholmod_sparse *L, const double *mass,
                                    cholmod_common *cc) {
    int nv = mesh->nv;
    cholmod_dense *U = cholmod_zeros((size_t)nv, 1, CHOLMOD_REAL, cc);
    cholmod_dense *LU = cholmod_zeros((size_t)nv, 1, CHOLMOD_REAL, cc);
    double best = HUGE_VAL, one[2] = {1, 0}, zero[2] = {0, 0};
    for (int b = 0; U && LU && b < 3; b++) {
        double *u = U->x, c = 0, msum = 0;
        for (int i = 0; i < nv; i++)
            c += mass[i] * mesh->X[3 * i + b], msum += mass[i];
        for (int i = 0; i < nv; i++)
            u[i] = mesh->X[3 * i + b] - c / msum;
        if (!cholmod_sdmult(L, 0, one, zero, U, LU, cc)) break;
        double num = 0, den = 0;
        for (int i = 0; i < nv; i++)
            num += u[i] * ((const double *)LU->x)[i], den += u[i] * mass[i] * u[i];
        if (den > 0 && num > 0) best = fmin(best, num / den);
    }
    cholmod_free_dense(&U, cc);
    cholmod_free_dense(&LU, cc);
    return isfinite(best) ? -1e-3 * best : 0;
}

/* Step 1: skinning eigenmodes (stiffness: per-tet scale or NULL; mass: per vertex). The pairs
 * are checked as the vibration modes' (vibration_solve); when they fail, or the first shift is
 * refused, the solve is repeated once with laplacian_probe_shift's shift. given: NULL (METIS
 * orders the Laplacian here and the ordering goes to vperm, *have_perm = 1) or the ordering
 * skinning_ordering computed for it (the same permutation; vperm is then not written). */
static mlc_status skinning_modes(const mlc_mesh *mesh, const mlc_fem *fem, int w,
                                 const double *stiffness, const double *mass, double first_shift,
                                 const int *given, mlc_subspace *out, int *vperm, int *have_perm,
                                 cholmod_common *cc, mlc_err *err) {
    int nv = fem->nv;
    double msum = 0;
    for (int i = 0; i < nv; i++)
        msum += mass[i];
    double c0 = 1.0 / sqrt(msum);
    if (w == 1) { /* nothing to solve: the constant weight alone */
        for (int i = 0; i < nv; i++)
            out->W[i] = c0;
        out->skin_eval[0] = 0;
        return MLC_OK;
    }
    cholmod_sparse *L = mlc_fem_laplacian(mesh, fem, stiffness, cc);
    if (!L) return mlc_errf(err, MLC_ENOMEM, "subspace: out of memory assembling the Laplacian");
    mlc_eigen_info info;
    mlc_err e2 = {0};
    /* Nested dissection (METIS) straight away: on tet meshes CHOLMOD's default tries AMD first
     * and then switches to METIS anyway (AMD's fill is 1.5-2.5× higher), so the AMD pass is
     * wasted time. The vertex ordering it returns is reused for the vibration problem (it
     * depends on the pattern only, so on no shift). */
    int saved[2];
    metis_only(cc, saved);
    double shifts[2] = {first_shift != 0 ? first_shift : mlc_eigen_default_shift(L, mass), 0};
    char what[160] = "";
    mlc_eigen_check chk = {0};
    mlc_status st = MLC_OK;
    for (int a = 0; a < 2; a++) {
        if (a == 1 && !((shifts[1] = laplacian_probe_shift(mesh, L, mass, cc)) < 0)) break;
        const mlc_eigen_problem pb = {
            .K = L, .mass = mass, .nev = w, .sigma = shifts[a], .perm = given};
        st = mlc_eigen_solve_ordered(&pb, given ? NULL : vperm, out->skin_eval, out->W, &info, cc,
                                     &e2);
        out->skin_solves += info.solves;
        if (st == MLC_ENOMEM || st == MLC_EINVAL) break;
        if (st == MLC_OK) {
            st = mlc_eigen_check_pairs(L, mass, w, out->skin_eval, out->W, NULL, 0, &chk, cc);
            if (st == MLC_ENOMEM) break;
            if (st == MLC_OK) {
                out->skin_attempts = a + 1;
                out->t_skin_analyze = info.t_analyze;
                out->t_skin_factor = info.t_factor - info.t_analyze;
                out->t_skin_iterate = info.t_iterate;
                out->skin_factor_nnz = info.factor_nnz;
                out->skin_shift = shifts[a];
                if (a > 0)
                    snprintf(out->skin_note, sizeof out->skin_note, "shift %.3g: %s", shifts[0],
                             what);
                break;
            }
            snprintf(what, sizeof what,
                     "relative residual %.1e of mode %d, M-orthogonality error %.1e", chk.residual,
                     chk.residual_at, chk.orthogonality);
            snprintf(e2.msg, sizeof e2.msg,
                     "the eigensolver failed on this mesh (shift %.3g: %s; shift %.3g: %s; the "
                     "check allows %.0e); the mesh passed its checks (one connected body), so "
                     "this is a numerical failure, not a defect of the mesh: re-mesh with a "
                     "milder size grading (e.g. tetgen -pq1.414 with one volume bound -a)",
                     shifts[0], a == 0 ? what : out->skin_note, shifts[1],
                     a == 0 ? "not tried" : what, MLC_EIGEN_CHECK_TOL);
            st = MLC_ENOCONV;
        } else {
            snprintf(what, sizeof what, "%.150s", e2.msg);
            char *cut = strchr(what, ';');
            if (cut) *cut = 0;
        }
        if (a == 0) snprintf(out->skin_note, sizeof out->skin_note, "%s", what);
    }
    restore_methods(cc, saved);
    *have_perm = st == MLC_OK && !info.dense && !given;
    cholmod_free_sparse(&L, cc);
    if (st != MLC_OK)
        return mlc_errf(err, st, "skinning eigenmodes (subspace.skinning_modes = %d): %s", w,
                        e2.msg);
    /* A connected mesh has exactly one zero eigenvalue; a second one means a part that moves
     * freely (mesh not connected through faces/edges the FEM couples). */
    if (!(fabs(out->skin_eval[0]) < 1e-6 * out->skin_eval[1]))
        return mlc_errf(err, MLC_ENUMERIC,
                        "skinning eigenmodes: expected one zero eigenvalue, got %.3g and %.3g; "
                        "the mesh may be disconnected or have hanging parts (check it with "
                        "`modalloco info`)",
                        out->skin_eval[0], out->skin_eval[1]);
    /* Exact constant column (docs/method.md §3: the rest state must be reproduced exactly). */
    for (int i = 0; i < nv; i++)
        out->W[i] = c0;
    out->skin_eval[0] = 0;
    return MLC_OK;
}

/* λ_ref of the localization weight: the first non-zero eigenvalue of the unit-μ scalar
 * Laplacian, the skinning λ₁ when there are at least 2 skinning modes, else solved here. */
static mlc_status laplacian_lambda1(const mlc_mesh *mesh, const mlc_fem *fem,
                                    const mlc_subspace *out, double *lam, cholmod_common *cc,
                                    mlc_err *err) {
    if (out->w >= 2) {
        *lam = out->skin_eval[1];
        return MLC_OK;
    }
    cholmod_sparse *L = mlc_fem_laplacian(mesh, fem, NULL, cc);
    double ev[2], *X = mlc_malloc(2 * (size_t)fem->nv * sizeof(double));
    if (!L || !X) {
        cholmod_free_sparse(&L, cc);
        mlc_free(X);
        return mlc_errf(err, MLC_ENOMEM, "local modes: out of memory (Laplacian)");
    }
    mlc_err e2 = {0};
    mlc_status s = mlc_eigen_solve(L, fem->vmass, 2, mlc_eigen_default_shift(L, fem->vmass), ev, X,
                                   NULL, cc, &e2);
    cholmod_free_sparse(&L, cc);
    mlc_free(X);
    if (s != MLC_OK)
        return mlc_errf(err, s, "local modes: the Laplacian eigenvalue of the weight: %s", e2.msg);
    *lam = ev[1];
    return MLC_OK;
}

/* Step 2b: m_r localized modes per region after the mg global ones (local_modes.h). Z: the 6
 * rigid modes. */
static mlc_status local_vibration_modes(const mlc_mesh *mesh, const mlc_fem *fem,
                                        const mlc_subspace_settings *st, mlc_subspace *out,
                                        cholmod_sparse *H, const double *mass, double sigma,
                                        const int *perm3, const double *Z, int mg,
                                        cholmod_common *cc, mlc_err *err) {
    int n = 3 * fem->nv, nr = local_regions(st), mr = st->local_modes, q = nr * mr;
    double lam1 = 0;
    mlc_status s = laplacian_lambda1(mesh, fem, out, &lam1, cc, err);
    if (s != MLC_OK) return s;
    double weight = st->localization * lam1;
    mlc_local_modes_report rep;
    /* Two threads hold two factors (local_modes.h): only when both fit under the bound. */
    mlc_budget_estimate e1, e2;
    double fbytes = out->vib_factor_nnz > 0 ? out->vib_factor_nnz * 12.0 : 0;
    mlc_budget_precompute(fem->nv, fem->nt, st->w, 6 + mg + q, fbytes, out->vib_factor_nnz, &e1);
    mlc_budget_precompute(fem->nv, fem->nt, st->w, 6 + mg + q, 2 * e1.factor, 0, &e2);
    int threads = st->max_memory > 0 && e2.total > st->max_memory ? 1 : st->threads;
    const mlc_local_modes_def def = {.H = H,
                                     .mass3 = mass,
                                     .mesh = mesh,
                                     .fem = fem,
                                     .tet_region = st->tet_region,
                                     .tet_mass_scale = st->tet_mass_scale,
                                     .nregions = nr,
                                     .per_region = mr,
                                     .weight = weight,
                                     .sigma = sigma,
                                     .perm = perm3,
                                     .Z = Z,
                                     .threads = threads};
    s = mlc_local_modes_compute(&def, out->vib_eval + mg, out->D + (size_t)n * mg, &rep, cc, err);
    if (s != MLC_OK) return s;
    /* Global and local modes are not orthogonalized against each other (docs/method.md), but
     * they must be independent: a region that is the whole body repeats the global modes. */
    if (mg > 0) {
        double gmin = mlc_local_gram_min(n, mg + q, mass, out->D);
        if (!(gmin > 1e-6))
            return mlc_errf(err, MLC_EINVAL,
                            "actuation.local_modes with actuation.modes = %d: the local modes "
                            "repeat the global ones (smallest Gram eigenvalue %.2g; %s); drop "
                            "actuation.modes or raise actuation.localization",
                            mg, gmin,
                            nr == 1 ? "one region is the whole body" : "regions too large");
    }
    out->nregions = nr;
    out->local_weight = weight;
    out->local_gram_min = rep.gram_min;
    for (int j = 0; j < q; j++)
        out->local_spread_max = fmax(out->local_spread_max, rep.spread[j]);
    out->vib_solves += rep.solves;
    out->t_local_factor = rep.t_factor;
    int base = 0; /* local indices count on after the largest global one */
    for (int i = 0; i < mg; i++)
        base = MLC_MAX(base, out->mode_index[i] + 1);
    for (int j = 0; j < q; j++) {
        int i = mg + j;
        out->mode_index[i] = base + j;
        out->mode_region[i] = j / mr;
        out->vib_frac[i] = rep.fraction[j];
        double gmax = 0;
        for (int e = 0; e < fem->nt; e++)
            gmax = fmax(gmax, mode_tet_strain(mesh, fem, out->D + (size_t)i * n, e));
        out->grad_max[i] = gmax;
    }
    return MLC_OK;
}

/* The 6 rigid modes are known: translations and rotations about the centroid,
 * M-orthonormalized into evecs[0..5]. Lanczos then runs on their M-orthogonal complement
 * (deflation): a 6-fold zero eigenvalue is a cluster single-vector Lanczos can under-count
 * (seen: the 37k-tet cat with m = 3 found only 5), and the basis gets 6 vectors shorter. */
static mlc_status rigid_modes(const mlc_mesh *mesh, const double *vm, const double *mass,
                              cholmod_sparse *H, double *evecs, double *evals, cholmod_common *cc,
                              mlc_err *err) {
    int nv = mesh->nv, n = 3 * nv;
    double c[3] = {0, 0, 0}, msum = 0;
    for (int i = 0; i < nv; i++) {
        for (int k = 0; k < 3; k++)
            c[k] += vm[i] * mesh->X[3 * i + k];
        msum += vm[i];
    }
    for (int k = 0; k < 3; k++)
        c[k] /= msum;
    for (int j = 0; j < 6; j++) {
        double *z = evecs + (size_t)n * j;
        for (int i = 0; i < nv; i++) {
            double d[3] = {mesh->X[3 * i] - c[0], mesh->X[3 * i + 1] - c[1],
                           mesh->X[3 * i + 2] - c[2]};
            for (int k = 0; k < 3; k++)
                z[3 * i + k] = j < 3 ? (k == j) : 0;
            if (j >= 3) { /* e_a × d */
                int a = j - 3, b1 = (a + 1) % 3, b2 = (a + 2) % 3;
                z[3 * i + b2] = d[b1];
                z[3 * i + b1] = -d[b2];
            }
        }
        for (int pass = 0; pass < 2; pass++) {
            for (int l = 0; l < j; l++) {
                const double *zl = evecs + (size_t)n * l;
                double dd = 0;
                for (int i = 0; i < n; i++)
                    dd += zl[i] * mass[i] * z[i];
                for (int i = 0; i < n; i++)
                    z[i] -= dd * zl[i];
            }
            double nn = 0;
            for (int i = 0; i < n; i++)
                nn += z[i] * mass[i] * z[i];
            for (int i = 0; i < n; i++)
                z[i] /= sqrt(nn);
        }
    }
    /* Their Rayleigh quotients zᵀ H z stand in for the rigid eigenvalues (≈ 0). */
    cholmod_dense Zd = {0};
    Zd.nrow = (size_t)n, Zd.ncol = 6, Zd.nzmax = (size_t)n * 6, Zd.d = (size_t)n;
    Zd.x = evecs, Zd.xtype = CHOLMOD_REAL, Zd.dtype = CHOLMOD_DOUBLE;
    cholmod_dense *HZ = cholmod_zeros((size_t)n, 6, CHOLMOD_REAL, cc);
    double one[2] = {1, 0}, zero[2] = {0, 0};
    if (!HZ || !cholmod_sdmult(H, 0, one, zero, &Zd, HZ, cc)) {
        cholmod_free_dense(&HZ, cc);
        return mlc_errf(err, MLC_ENOMEM, "vibration modes: out of memory (%d DOFs)", n);
    }
    for (int j = 0; j < 6; j++) {
        double q = 0;
        for (int i = 0; i < n; i++)
            q += evecs[(size_t)n * j + i] * ((double *)HZ->x)[(size_t)n * j + i];
        evals[j] = q;
    }
    cholmod_free_dense(&HZ, cc);
    return MLC_OK;
}

/* A shift tied to the spectrum itself: −1e-3 × the smallest Rayleigh quotient of nine smooth
 * motions, (X_b − c_b)² along axis a, made M-orthogonal to the rigid modes Z (n×6). Each
 * quotient bounds the first elastic eigenvalue from above, and a bending body is close to
 * such a field, so the shift lands below the elastic spectrum and near it whatever the units,
 * the element sizes or their grading. 0 when it cannot be formed. */
static double probe_shift(const mlc_mesh *mesh, cholmod_sparse *H, const double *mass,
                          const double *Z, cholmod_common *cc) {
    int nv = mesh->nv, n = 3 * nv;
    cholmod_dense *U = cholmod_zeros((size_t)n, 1, CHOLMOD_REAL, cc);
    cholmod_dense *HU = cholmod_zeros((size_t)n, 1, CHOLMOD_REAL, cc);
    double best = HUGE_VAL, c[3] = {0, 0, 0}, msum = 0;
    for (int i = 0; i < nv; i++) {
        for (int k = 0; k < 3; k++)
            c[k] += mass[3 * i] * mesh->X[3 * i + k];
        msum += mass[3 * i];
    }
    for (int k = 0; k < 3; k++)
        c[k] /= msum;
    double one[2] = {1, 0}, zero[2] = {0, 0};
    for (int f = 0; U && HU && f < 9; f++) {
        int a = f / 3, b = f % 3;
        double *u = U->x;
        memset(u, 0, (size_t)n * sizeof(double));
        for (int i = 0; i < nv; i++) {
            double d = mesh->X[3 * i + b] - c[b];
            u[3 * i + a] = d * d;
        }
        mlc_eigen_deflate(u, Z, 6, mass, n);
        if (!cholmod_sdmult(H, 0, one, zero, U, HU, cc)) break;
        double num = 0, den = 0;
        for (int i = 0; i < n; i++) {
            num += u[i] * ((const double *)HU->x)[i];
            den += u[i] * mass[i] * u[i];
        }
        if (den > 0 && num > 0) best = fmin(best, num / den);
    }
    cholmod_free_dense(&U, cc);
    cholmod_free_dense(&HU, cc);
    return isfinite(best) ? -1e-3 * best : 0;
}

/* Threads for the vibration solves (eigen.h): `threads`, 0 meaning the machine's cores. */
static int solve_threads(const mlc_subspace_settings *st) {
#ifdef _OPENMP
    return st->threads > 0 ? st->threads : omp_get_num_procs();
#else
    (void)st;
    return 1;
#endif
}

/* Attempt 1 of vibration_solve: the symbolic analysis first, so that the factor's exact size
 * is held against the memory bound (budget.h) before the numeric factorization allocates it,
 * then the solve on that analysis. mlc_eigen_solve_shared analyzes nothing more and does
 * mlc_eigen_solve_ordered's arithmetic (the analysis reads only the pattern, which K and
 * K − σM share), so the results are the same bits. */
static mlc_status first_vibration_solve(const mlc_mesh *mesh, cholmod_sparse *H, const double *mass,
                                        int need, const int *perm3, double sigma,
                                        const mlc_subspace_settings *st, double *evecs,
                                        double *evals, mlc_eigen_info *info, cholmod_common *cc,
                                        mlc_err *err) {
    int n = 3 * mesh->nv;
    /* the rigid modes, evecs' first 6 columns, deflated */
    const mlc_eigen_problem pb = {.K = H,
                                  .mass = mass,
                                  .nev = need,
                                  .sigma = sigma,
                                  .perm = perm3,
                                  .Z = evecs,
                                  .nz = 6,
                                  .threads = solve_threads(st)};
    if (mlc_eigen_is_dense(n, need, 6))
        return mlc_eigen_solve_ordered(&pb, NULL, evals + 6, evecs + (size_t)n * 6, info, cc, err);
    double t0 = mlc_now();
    cholmod_factor *L = mlc_eigen_analyze(H, perm3, cc);
    if (!L)
        return mlc_errf(err, cc->status == CHOLMOD_OUT_OF_MEMORY ? MLC_ENOMEM : MLC_ENUMERIC,
                        "CHOLMOD analysis of the Hessian (n = %d) failed, status %d%s", n,
                        cc->status,
                        cc->status == CHOLMOD_OUT_OF_MEMORY
                            ? " (out of memory): use a coarser tetrahedralization (mesh.min_tets)"
                            : "");
    double t_an = mlc_now() - t0;
    int sel = cc->selected >= 0 && cc->selected <= CHOLMOD_MAXMETHODS ? cc->selected : 0;
    const char *ord = perm3 ? "given" : mlc_eigen_ordering_name(cc->method[sel].ordering);
    mlc_budget_estimate e;
    const double factor_bytes =
        mlc_budget_factor_bytes(L, cc) + mlc_budget_split_factor_bytes(L, solve_threads(st));
    mlc_budget_precompute(mesh->nv, mesh->nt, st->w, 6 + need, factor_bytes, cc->lnz, &e);
    mlc_status s = mlc_budget_check(&e, st->max_memory, n, err);
    if (s == MLC_OK)
        s = mlc_eigen_solve_shared(&pb, &L, evals + 6, evecs + (size_t)n * 6, info, cc, err);
    if (s == MLC_OK) {
        snprintf(info->ordering, sizeof info->ordering, "%s", ord);
        info->t_analyze += t_an;
        info->t_factor += t_an;
    }
    cholmod_free_factor(&L, cc);
    return s;
}

/* The global vibration solve (need pairs after the 6 rigid modes in evecs[0..5]), checked and,
 * when the check fails, solved again. The check (eigen.h): each pair's residual against the
 * wanted spectrum's scale and the M-orthonormality of the pairs and to the rigid modes.
 * Shift-invert returns λ = σ + 1/θ: with σ far below the elastic spectrum every wanted θ is
 * close to 1/|σ|, ARPACK's relative tolerance on θ no longer pins λ down, and the "converged"
 * pairs can be anything down to 0 (the default shift of mlc_eigen_default_shift comes from
 * the mean diagonal, an estimate made for evenly sized elements). Attempts:
 *  1. the default shift and ordering: every mesh that passes here gets the same bits as before;
 *  2. the shift of probe_shift, CHOLMOD's own ordering, a Lanczos basis twice as wide;
 *  3. that shift × 1e-2 (deflation keeps K − σM usable that close to singular), the given
 *     ordering, the wide basis.
 * tol: the limit of both measures. *sigma: in, the default shift; out, the one that worked. Fills
 * out->vib_solves, vib_attempts, vib_residual, vib_orthogonality, vib_shift, vib_ordering. */
static mlc_status vibration_solve(const mlc_mesh *mesh, const mlc_subspace_settings *st,
                                  cholmod_sparse *H, const double *mass, int need, const int *perm3,
                                  double tol, double *sigma, double *evecs, double *evals,
                                  mlc_subspace *out, cholmod_common *cc, mlc_err *err) {
    int n = 3 * mesh->nv, wide = 2 * MLC_MAX(2 * need + 1, 20);
    double shifts[3] = {*sigma, 0, 0};
    char what[3][160] = {"", "", ""};
    mlc_eigen_check chk = {0};
    int tried = 0;
    for (int a = 0; a < 3; a++) {
        if (a == 1) {
            shifts[1] = probe_shift(mesh, H, mass, evecs, cc);
            shifts[2] = 1e-2 * shifts[1];
        }
        if (a > 0 && !(shifts[a] < 0)) continue; /* no probe shift */
        tried++;
        mlc_eigen_info info;
        mlc_err e2 = {0};
        const mlc_eigen_problem wide_pb = {.K = H,
                                           .mass = mass,
                                           .nev = need,
                                           .sigma = shifts[a],
                                           .perm = a == 1 ? NULL : perm3,
                                           .Z = evecs,
                                           .nz = 6,
                                           .ncv = wide,
                                           .threads = solve_threads(st)};
        mlc_status s = a == 0 ? first_vibration_solve(mesh, H, mass, need, perm3, shifts[0], st,
                                                      evecs, evals, &info, cc, &e2)
                              : mlc_eigen_solve_ordered(&wide_pb, NULL, evals + 6,
                                                        evecs + (size_t)n * 6, &info, cc, &e2);
        out->vib_solves += info.solves;
        if (s == MLC_ENOMEM || s == MLC_EINVAL)
            return mlc_errf(err, s, "vibration modes (actuation.modes): %s", e2.msg);
        if (s == MLC_OK) {
            s = mlc_eigen_check_pairs(H, mass, need, evals + 6, evecs + (size_t)n * 6, evecs, 6,
                                      &chk, cc);
            if (s == MLC_ENOMEM)
                return mlc_errf(err, s, "vibration modes: out of memory checking the modes");
            if (chk.residual <= tol && chk.orthogonality <= tol) {
                out->vib_attempts = a + 1;
                out->t_vib_analyze = info.t_analyze;
                out->t_vib_factor = info.t_factor - info.t_analyze;
                out->t_vib_iterate = info.t_iterate;
                out->vib_solve_threads = info.solve_threads;
                out->vib_factor_threads = info.factor_threads;
                out->vib_factor_nnz = info.factor_nnz;
                out->vib_residual = chk.residual;
                out->vib_orthogonality = chk.orthogonality;
                out->vib_shift = shifts[a];
                snprintf(out->vib_ordering, sizeof out->vib_ordering, "%s", info.ordering);
                if (a > 0)
                    snprintf(out->vib_note, sizeof out->vib_note, "shift %.3g: %s", shifts[0],
                             what[0]);
                *sigma = shifts[a];
                return MLC_OK;
            }
            snprintf(what[a], sizeof what[a],
                     "relative residual %.1e of mode %d, M-orthogonality error %.1e", chk.residual,
                     chk.residual_at, chk.orthogonality);
        } else {
            /* Keep ARPACK's or CHOLMOD's words short: up to their advice. */
            snprintf(what[a], sizeof what[a], "%.150s", e2.msg);
            char *cut = strchr(what[a], ';');
            if (cut) *cut = 0;
        }
    }
    return mlc_errf(err, MLC_ENOCONV,
                    "vibration modes: the eigensolver failed on this mesh, %d attempts (shift "
                    "%.3g: %s; shift %.3g: %s; shift %.3g: %s; the check allows %.0e); the mesh "
                    "passed its checks (one connected body), so this is a numerical failure, "
                    "not a defect of the mesh: re-mesh with a milder size grading (e.g. tetgen "
                    "-pq1.414 with one volume bound -a), or ask for fewer modes "
                    "(actuation.modes)",
                    tried, shifts[0], what[0], shifts[1], what[1][0] ? what[1] : "not tried",
                    shifts[2], what[2][0] ? what[2] : "not tried", tol);
}

/* The vertex ordering as one thread hands it to another (compute_parallel): `state` 0 while
 * it is computed, then 1; `vperm` the ordering or NULL (none: each problem orders itself);
 * `refused` when the memory bound stopped the work. */
typedef struct ordering_handoff {
    atomic_int state;
    const int *vperm;
    int refused;
} ordering_handoff;

static void order_publish(ordering_handoff *h, const int *vperm, int refused) {
    h->vperm = vperm, h->refused = refused;
    atomic_store_explicit(&h->state, 1, memory_order_release);
}

/* Waits for the ordering (polling every half millisecond: it takes about a second where this
 * pays) and returns it (NULL: none, or refused). */
static const int *order_wait(ordering_handoff *h) {
    while (!atomic_load_explicit(&h->state, memory_order_acquire)) {
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    return h->vperm;
}

/* Step 2–3: vibration modes and their gradient maxima. The vertex ordering is `vperm` (NULL:
 * CHOLMOD orders), or, with `order` set, the one handed over there once it is ready (the
 * Hessian and the rigid modes do not need it and are computed meanwhile). */
static mlc_status vibration_modes(const mlc_mesh *mesh, const mlc_fem *fem,
                                  const mlc_subspace_settings *st, mlc_subspace *out,
                                  const int *vperm, ordering_handoff *order, cholmod_common *cc,
                                  mlc_err *err) {
    int nv = fem->nv, n = 3 * nv;
    int need = modes_needed(st), nev = 6 + need;
    double nu = st->poisson, lambda = 2.0 * nu / (1.0 - 2.0 * nu);
    mlc_status s = MLC_OK;
    double *mass = mlc_malloc((size_t)n * sizeof(double));
    double *evals = mlc_malloc((size_t)nev * sizeof(double));
    double *evecs = mlc_malloc((size_t)n * nev * sizeof(double));
    int *perm3 = vperm ? mlc_malloc((size_t)n * sizeof(int)) : NULL;
    cholmod_sparse *H = NULL;
    if (!mass || !evals || !evecs || (vperm && !perm3)) {
        s = mlc_errf(err, MLC_ENOMEM, "vibration modes: out of memory (%d DOFs × %d modes)", n,
                     nev);
        goto done;
    }
    const double *vm = st->vertex_mass ? st->vertex_mass : fem->vmass;
    for (int i = 0; i < nv; i++)
        mass[3 * i] = mass[3 * i + 1] = mass[3 * i + 2] = vm[i];
    H = mlc_fem_elasticity_hessian_scaled(mesh, fem, 1.0, lambda, st->tet_stiffness, cc);
    if (!H) {
        s = mlc_errf(err, MLC_ENOMEM, "vibration modes: out of memory assembling the Hessian");
        goto done;
    }
    if ((s = rigid_modes(mesh, vm, mass, H, evecs, evals, cc, err)) != MLC_OK) goto done;
    double sigma = st->first_shift != 0 ? st->first_shift : mlc_eigen_default_shift(H, mass);
    /* Everything above runs beside the vertex ordering (compute_parallel); from here on it is
     * needed, or the work was refused. */
    if (order && (vperm = order_wait(order)) == NULL && order->refused) goto done;
    if (vperm && !perm3 && !(perm3 = mlc_malloc((size_t)n * sizeof(int)))) {
        s = mlc_errf(err, MLC_ENOMEM, "vibration modes: out of memory (%d DOFs)", n);
        goto done;
    }
    /* The vertex ordering expanded to 3×3 blocks (DOF 3i+k ↦ 3·perm[i]+k): the same fill as
     * ordering the 3n graph (measured: nnz(L) within 0.5%, flops within 2%) at about a quarter
     * of the ordering time. */
    if (vperm)
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++)
                perm3[3 * i + k] = 3 * vperm[i] + k;
    int mg = st->nlist > 0 ? st->nlist : st->m; /* global modes kept */
    if (need == 0) {                            /* local modes only: no global solve */
        memcpy(out->rigid_eval, evals, sizeof out->rigid_eval);
        snprintf(out->ordering, sizeof out->ordering, "%s", vperm ? "metis-vertex" : "cholmod");
        goto local;
    }
    s = vibration_solve(mesh, st, H, mass, need, perm3,
                        st->check_tol > 0 ? st->check_tol : MLC_EIGEN_CHECK_TOL, &sigma, evecs,
                        evals, out, cc, err);
    if (s != MLC_OK) goto done;
    snprintf(out->ordering, sizeof out->ordering, "%s",
             vperm && out->vib_attempts != 2 ? "metis-vertex" : out->vib_ordering);
    /* Exactly 6 rigid modes: |λ| < 1e-6·λ₇, and λ₇ itself clearly elastic. */
    int k = 0;
    for (int i = 0; i < nev; i++)
        if (fabs(evals[i]) < 1e-6 * evals[6]) k++;
    /* λ₇ elastic: not ≈ 0 against the largest computed one, nor against the default shift (σ
     * is about 1e-2 of the first elastic eigenvalue by construction), which also covers m = 1;
     * the default one also when the solve used another. */
    int seventh_elastic = evals[6] > 1e-6 * evals[nev - 1] &&
                          evals[6] > 1e-4 * fabs(mlc_eigen_default_shift(H, mass));
    if (k != 6 || !seventh_elastic) {
        if (!seventh_elastic) { /* λ₇ ≈ 0 itself: count against the largest computed one */
            k = 0;
            for (int i = 0; i < nev; i++)
                if (fabs(evals[i]) < 1e-6 * fabs(evals[nev - 1])) k++;
        }
        /* The pairs passed their check (vibration_solve): these zero eigenvalues are the
         * mesh's, not the solver's. A disconnected mesh never gets here (mlc_mesh_read refuses
         * it); parts that share only a vertex or an edge with the rest do. */
        s = mlc_errf(err, MLC_ENUMERIC,
                     "vibration modes: expected 6 rigid modes, found %s%d (eigenvalues %.3g, "
                     "%.3g, ..., %.3g; the solve passed its residual check, relative residual "
                     "%.1e): parts of the mesh are joined to the rest only at a vertex or along "
                     "an edge and move freely; join them through faces or remove them",
                     k == nev ? "at least " : "", k, evals[0], evals[6], evals[nev - 1],
                     out->vib_residual);
        goto done;
    }
    memcpy(out->rigid_eval, evals, sizeof out->rigid_eval);
    for (int i = 0; i < mg; i++) {
        int idx = st->nlist > 0 ? st->mode_list[i] : i;
        out->mode_index[i] = idx;
        out->mode_region[i] = -1;
        out->vib_frac[i] = 0;
        out->vib_eval[i] = evals[6 + idx];
        memcpy(out->D + (size_t)i * n, evecs + (size_t)(6 + idx) * n, (size_t)n * sizeof(double));
        double gmax = 0;
        for (int e = 0; e < fem->nt; e++)
            gmax = fmax(gmax, mode_tet_strain(mesh, fem, out->D + (size_t)i * n, e));
        out->grad_max[i] = gmax;
    }
local:
    if (st->local_modes > 0) {
        double t0 = mlc_now();
        s = local_vibration_modes(mesh, fem, st, out, H, mass, sigma, perm3, evecs, mg, cc, err);
        out->t_local = mlc_now() - t0;
    }
done:
    cholmod_free_sparse(&H, cc);
    mlc_free(mass);
    mlc_free(evals);
    mlc_free(evecs);
    mlc_free(perm3);
    return s;
}

mlc_status mlc_subspace_skinning_modes(const mlc_mesh *mesh, const mlc_fem *fem, int w,
                                       const double *stiffness, const double *mass, double *W,
                                       double *eval, mlc_err *err) {
    if (w < 1 || w >= mesh->nv)
        return mlc_errf(err, MLC_EINVAL, "skinning modes: %d modes for %d vertices", w, mesh->nv);
    mlc_subspace tmp = {0};
    tmp.W = W, tmp.skin_eval = eval;
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    int *vperm = mlc_malloc((size_t)mesh->nv * sizeof(int)), have_perm = 0;
    mlc_status s = vperm ? skinning_modes(mesh, fem, w, stiffness, mass ? mass : fem->vmass, 0,
                                          NULL, &tmp, vperm, &have_perm, &cc, err)
                         : mlc_errf(err, MLC_ENOMEM, "skinning modes: out of memory");
    mlc_free(vperm);
    cholmod_finish(&cc);
    return s;
}

/* A CHOLMOD workspace that never prints: errors come back through status. */
static void start_quiet(cholmod_common *cc) {
    cholmod_start(cc);
    cc->print = 0;
}

/* Step 4: passive and actuation clusters (k-means++ seeded by settings->seed). */
static mlc_status clusters(const mlc_mesh *mesh, const mlc_fem *fem,
                           const mlc_subspace_settings *settings, mlc_subspace *out, mlc_err *err) {
    double t0 = mlc_now();
    int w = settings->w, nt = mesh->nt;
    mlc_status s =
        mlc_clusters_passive(mesh, fem, out->W, w, out->skin_eval, settings->passive_clusters,
                             settings->seed, out->cluster, &out->ncp, err);
    if (s != MLC_OK) return s;
    if (settings->actuation_clusters == 1) {
        memset(out->acluster, 0, (size_t)nt * sizeof(int));
        out->nca = 1;
    } else {
        s = mlc_clusters_passive(mesh, fem, out->W, w, out->skin_eval, settings->actuation_clusters,
                                 settings->seed + 1, out->acluster, &out->nca, err);
        if (s != MLC_OK) return s;
    }
    out->cluster_seed = settings->seed;
    out->cluster_seed_known = 1;
    out->t_clusters = mlc_now() - t0;
    return MLC_OK;
}

mlc_status mlc_subspace_recluster(const mlc_mesh *mesh, const mlc_fem *fem,
                                  const mlc_subspace_settings *settings, mlc_subspace *s,
                                  mlc_err *err) {
    if (!mesh || !fem || !settings || !s || s->nt != mesh->nt || s->nv != mesh->nv ||
        s->w != settings->w)
        return mlc_errf(err, MLC_EINVAL, "subspace: reclustering a subspace of another mesh");
    return clusters(mesh, fem, settings, s, err);
}

/* Room for the contact samples: the count, or what the cover may add up to. */
static int samples_capacity(const mlc_subspace_settings *st) {
    return st->contact_spacing > 0 && st->contact_band > 0
               ? MLC_MAX(st->contact_samples, MLC_CONTACT_SAMPLES_MAX)
               : st->contact_samples;
}

/* Step 4–5: the clusters, then the contact samples. */
static mlc_status clusters_and_samples(const mlc_mesh *mesh, const mlc_fem *fem,
                                       const mlc_subspace_settings *settings, mlc_subspace *out,
                                       mlc_err *err) {
    mlc_status s = clusters(mesh, fem, settings, out, err);
    if (s != MLC_OK) return s;
    double t0 = mlc_now();
    s = mlc_contact_samples_cover(mesh, settings->contact_samples, settings->contact_band,
                                  settings->contact_spacing, samples_capacity(settings),
                                  out->samples, &out->ns, NULL, err);
    out->t_samples = mlc_now() - t0;
    return s;
}

/* The steps in order on one thread: the vibration problem reuses the skinning problem's vertex
 * ordering. */
static mlc_status compute_sequential(const mlc_mesh *mesh, const mlc_fem *fem,
                                     const mlc_subspace_settings *settings, mlc_subspace *out,
                                     mlc_err *err) {
    int nv = mesh->nv;
    cholmod_common cc;
    start_quiet(&cc);
    int *vperm = mlc_malloc((size_t)nv * sizeof(int)), have_perm = 0;
    if (!vperm) {
        cholmod_finish(&cc);
        return mlc_errf(err, MLC_ENOMEM, "subspace: out of memory (%d vertices)", nv);
    }
    double t0 = mlc_now();
    mlc_status s = skinning_modes(mesh, fem, settings->w, settings->tet_stiffness,
                                  settings->vertex_mass ? settings->vertex_mass : fem->vmass,
                                  settings->first_shift, NULL, out, vperm, &have_perm, &cc, err);
    out->t_skinning = mlc_now() - t0;
    if (s == MLC_OK) {
        t0 = mlc_now();
        s = vibration_modes(mesh, fem, settings, out, have_perm ? vperm : NULL, NULL, &cc, err);
        out->t_vibration = mlc_now() - t0;
    }
    mlc_free(vperm);
    cholmod_finish(&cc);
    return s == MLC_OK ? clusters_and_samples(mesh, fem, settings, out, err) : s;
}

/* The vertex ordering skinning_modes gets from its solve (have = 0 where it solves densely or
 * not at all), computed on its own: the same Laplacian, shift and analysis, so the same
 * permutation, for the vibration problem to start before the skinning modes are done. */
static mlc_status skinning_ordering(const mlc_mesh *mesh, const mlc_fem *fem, int w,
                                    const double *stiffness, const double *mass, int *vperm,
                                    int *have, double *factor_bytes, cholmod_common *cc,
                                    mlc_err *err) {
    *have = 0;
    if (w == 1 || mlc_eigen_is_dense(fem->nv, w, 0)) return MLC_OK;
    cholmod_sparse *L = mlc_fem_laplacian(mesh, fem, stiffness, cc);
    if (!L) return mlc_errf(err, MLC_ENOMEM, "subspace: out of memory assembling the Laplacian");
    int saved[2];
    metis_only(cc, saved); /* as skinning_modes */
    mlc_status s =
        mlc_eigen_ordering(L, mass, mlc_eigen_default_shift(L, mass), vperm, factor_bytes, cc, err);
    restore_methods(cc, saved);
    cholmod_free_sparse(&L, cc);
    *have = s == MLC_OK;
    return s;
}

/* Two branches at once, each with its own CHOLMOD workspace: the skinning modes, clusters and
 * samples on one thread; the vibration modes on the other (its factorization is most of the
 * precompute on large meshes). The vertex ordering both use (skinning_ordering: the
 * permutation the skinning solve would find itself) is computed first on the skinning thread,
 * while the vibration thread assembles its Hessian and rigid modes, which do not need it; the
 * memory bound is then held against the factor's size before either factorization starts.
 * Each branch does exactly the sequential steps' arithmetic, so the results are the same bits;
 * an error is the one the sequential order would report first. */
static mlc_status compute_parallel(const mlc_mesh *mesh, const mlc_fem *fem,
                                   const mlc_subspace_settings *settings, mlc_subspace *out,
                                   mlc_err *err) {
    int nv = mesh->nv;
    const double *mass = settings->vertex_mass ? settings->vertex_mass : fem->vmass;
    int *vperm = mlc_malloc((size_t)nv * sizeof(int)), *vperm_skin = mlc_malloc(sizeof(int) * nv);
    mlc_status s_skin = MLC_OK, s_vib = MLC_OK, s_rest = MLC_OK, s_bound = MLC_OK;
    mlc_err e_skin = {0}, e_vib = {0}, e_rest = {0}, e_bound = {0};
    if (!vperm || !vperm_skin) {
        mlc_free(vperm);
        mlc_free(vperm_skin);
        return mlc_errf(err, MLC_ENOMEM, "subspace: out of memory (%d vertices)", nv);
    }
    ordering_handoff order;
    atomic_init(&order.state, 0);
    order.vperm = NULL, order.refused = 0;
    double t0 = mlc_now();
    /* Not `sections`: the vibration branch waits for the ordering the other one publishes, so
     * a team of one thread (a thread limit, a nested region) must run the skinning branch
     * first, which the order of sections does not promise. */
#pragma omp parallel num_threads(2)
    {
#ifdef _OPENMP
        const int nth = omp_get_num_threads(), id = omp_get_thread_num();
#else
        const int nth = 1, id = 0;
#endif
        if (id == 0) {
            /* A failed ordering is not reported here: each branch then orders on its own and
             * reports what the sequential steps would. */
            int have = 0;
            double lap_bytes = 0, lap_nnz = 0;
            {
                cholmod_common cc;
                start_quiet(&cc);
                mlc_err e0 = {0};
                if (skinning_ordering(mesh, fem, settings->w, settings->tet_stiffness, mass, vperm,
                                      &have, &lap_bytes, &cc, &e0) != MLC_OK)
                    have = 0;
                lap_nnz = cc.lnz; /* of that analysis */
                cholmod_finish(&cc);
            }
            out->t_vib_order = mlc_now() - t0;
            /* The Laplacian's analysis already tells the vibration factor's size: the ordering
             * expanded to 3×3 blocks gives 9 times the scalar factor's entries (koala: 83.0M
             * predicted, 82.7M found; spot at 1.0M tets: 683.8M and 683.4M). Refuse now,
             * before either factorization starts. */
            if (have && lap_bytes > 0) {
                mlc_budget_estimate e;
                mlc_budget_precompute(nv, mesh->nt, settings->w, 6 + modes_needed(settings),
                                      9 * lap_bytes, 9 * lap_nnz, &e);
                s_bound = mlc_budget_check(&e, settings->max_memory, 3 * nv, &e_bound);
            }
            const int *given = have ? vperm : NULL;
            order_publish(&order, s_bound == MLC_OK ? given : NULL, s_bound != MLC_OK);
            if (s_bound == MLC_OK) {
                cholmod_common cc;
                start_quiet(&cc);
                int have_skin = 0;
                double t1 = mlc_now();
                s_skin = skinning_modes(mesh, fem, settings->w, settings->tet_stiffness, mass,
                                        settings->first_shift, given, out, vperm_skin, &have_skin,
                                        &cc, &e_skin);
                out->t_skinning = mlc_now() - t1 + out->t_vib_order;
                cholmod_finish(&cc);
                if (s_skin == MLC_OK)
                    s_rest = clusters_and_samples(mesh, fem, settings, out, &e_rest);
            }
        }
        if (id == 1 || nth == 1) {
            cholmod_common cc;
            start_quiet(&cc);
            s_vib = vibration_modes(mesh, fem, settings, out, NULL, &order, &cc, &e_vib);
            out->t_vibration = mlc_now() - t0;
            cholmod_finish(&cc);
        }
    }
    mlc_free(vperm);
    mlc_free(vperm_skin);
    const mlc_err *e = s_bound != MLC_OK  ? &e_bound
                       : s_skin != MLC_OK ? &e_skin
                       : s_vib != MLC_OK  ? &e_vib
                                          : &e_rest;
    mlc_status s = s_bound != MLC_OK  ? s_bound
                   : s_skin != MLC_OK ? s_skin
                   : s_vib != MLC_OK  ? s_vib
                                      : s_rest;
    if (s != MLC_OK && err) *err = *e;
    return s;
}

mlc_status mlc_subspace_compute(const mlc_mesh *mesh, const mlc_fem *fem,
                                const mlc_subspace_settings *settings, mlc_subspace *out,
                                mlc_err *err) {
    memset(out, 0, sizeof *out);
    if (!mesh || !fem || !settings) return mlc_errf(err, MLC_EINVAL, "subspace: NULL argument");
    if (fem->nv != mesh->nv || fem->nt != mesh->nt || mesh->nv <= 0)
        return mlc_errf(err, MLC_EINVAL,
                        "subspace: FEM data (%d vertices, %d tets) does not "
                        "match the mesh (%d, %d)",
                        fem->nv, fem->nt, mesh->nv, mesh->nt);
    mlc_status s = validate(mesh, settings, err);
    if (s != MLC_OK) return s;
    /* The memory bound, from the mesh sizes, before anything big is allocated (the exact
     * factor size is checked again after the symbolic analysis, first_vibration_solve). */
    mlc_budget_estimate est;
    mlc_budget_precompute(mesh->nv, mesh->nt, settings->w, 6 + modes_needed(settings), 0, 0, &est);
    if ((s = mlc_budget_check(&est, settings->max_memory, 3 * mesh->nv, err)) != MLC_OK) return s;

    int nv = mesh->nv, nt = mesh->nt, w = settings->w;
    int m = (settings->nlist > 0 ? settings->nlist : settings->m) +
            settings->local_modes * local_regions(settings);
    out->nv = nv;
    out->nt = nt;
    out->w = w;
    out->m = m;
    out->W = mlc_malloc((size_t)nv * w * sizeof(double));
    out->skin_eval = mlc_malloc((size_t)w * sizeof(double));
    out->D = mlc_malloc(3 * (size_t)nv * m * sizeof(double));
    out->vib_eval = mlc_malloc((size_t)m * sizeof(double));
    out->mode_index = mlc_malloc((size_t)m * sizeof(int));
    out->mode_region = mlc_malloc((size_t)m * sizeof(int));
    out->vib_frac = mlc_malloc((size_t)m * sizeof(double));
    out->grad_max = mlc_malloc((size_t)m * sizeof(double));
    out->cluster = mlc_malloc((size_t)nt * sizeof(int));
    out->acluster = mlc_malloc((size_t)nt * sizeof(int));
    out->samples = mlc_malloc((size_t)samples_capacity(settings) * sizeof(int));
    if (!out->W || !out->skin_eval || !out->D || !out->vib_eval || !out->mode_index ||
        !out->mode_region || !out->vib_frac || !out->grad_max || !out->cluster || !out->acluster ||
        !out->samples) {
        mlc_subspace_free(out);
        return mlc_errf(err, MLC_ENOMEM, "subspace: out of memory (%d vertices)", nv);
    }

    /* Local modes read the skinning λ₁ (laplacian_lambda1): those runs stay in order. */
    int par = 0;
#ifdef _OPENMP
    par = settings->threads != 1 && omp_get_num_procs() > 1 && settings->local_modes == 0;
#endif
    s = par ? compute_parallel(mesh, fem, settings, out, err)
            : compute_sequential(mesh, fem, settings, out, err);
    if (s != MLC_OK) mlc_subspace_free(out);
    return s;
}

int mlc_subspace_amplitude_limits(const mlc_subspace *sub, double p, double *a_max) {
    int n = MLC_MIN(sub->m, MLC_SUBSPACE_MAX_ACTUATED);
    for (int i = 0; i < n; i++)
        a_max[i] = p / sub->grad_max[i];
    return n;
}
