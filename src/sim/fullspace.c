/* fullspace.c: the full-space reference simulator (the reduced-versus-full comparison that runs it
 * beside the reduced one is rollout_run.c)
 * (docs/method.md §5–7; 000 Eq. 9–16, 25/45 and App. E with the signs of docs/method.md §6).
 *
 * The reduced simulator (sim_model.c, sim_step.c) minimizes the backward-Euler incremental
 * potential over x = B z. This file minimizes the same potential over every vertex position,
 *   (1/2h²)‖x − q‖²_M − xᵀMg + ½Σ_e μV‖F_e − R_e‖² + ½Σ_e γV‖F_e − Ω_{c(e)} Y_e(ā)‖²,
 * by the same local-global iterations, so that B → I recovers it (Galerkin: the reduced global
 * step Bᵀ Q B z = Bᵀ b is this global step projected, and the local steps see the same F_e):
 *  - local: R_e = polar(F_e) per tet (the ARAP reference; or per passive cluster,
 *    R_c = polar(Σ_{e∈c} V F_e), to isolate the skinning error), Ω_c = polar(H_c) with
 *    H_c = Σ_{e∈c} γV F_e Y_eᵀ per actuation cluster (Eq. 12–13), Y_e = I + Σ_i a_i ∇(D_i)_e;
 *  - global: Q x = b with Q = M/h² + (μ+γ) Σ_e V G_eᵀG_e (per coordinate, Eq. 15–16 with
 *    B = I) and b = M q/h² + M g + Σ_e V G_eᵀ (μ R_e + γ Ω_c Y_e)ᵀ, where G_e (3×4) holds the
 *    shape gradients, i.e. vertex a of tet e receives V (μR + γΩY) ∇φ_a (positive forces).
 *    The three coordinate blocks share one nv×nv matrix, factored once by CHOLMOD and solved
 *    with three right-hand sides.
 *  - contact (App. E resolved as in sim_step.c): after the tentative solve x* = Q⁻¹ b, a sample
 *    is active when x* puts it more than 1e-9·extent below the ground while moving down from
 *    x_n; its y ends at the ground ("position") or at y_n ("velocity"); its x and z move by
 *    μ_c × the previous tangential displacement. The contact force of least fᵀM⁻¹f with
 *    L f = d, L = Jᶜ Q⁻¹, is f = M Lᵀ y with (L M Lᵀ + εI) y = d (the same damped
 *    pseudo-inverse, MLC_SIM_CONTACT_RCOND), and x = x* + (Q⁻¹ M Q⁻¹) Jᶜᵀ y. The columns
 *    Q⁻¹ M Q⁻¹ e_s of the samples are precomputed (2·ns solves at creation). This is exactly
 *    the reduced rule with N = BᵀMB, Q = BᵀQB and S = Jᶜ B when B is invertible. The default
 *    complementarity contact (contact.h) acts on the samples' precomputed Delassus matrix, or
 *    on every surface vertex (contact_surface: a broad phase, columns of Q⁻¹ solved on demand
 *    and cached in slots, the problem on the slots, a check of every other surface vertex).
 * Differences from the reduced code, all deliberate: rotations are applied on the right-hand
 * side and then solved (the reduced code pre-solves each term: equal up to rounding); each step
 * iterates to its own stopping rule (mlc_fullspace_stop: until the iterate changes by at most a
 * tolerance relative to the extent), Anderson-accelerated and started from q plus the last
 * step's correction, because the reference must not inherit the reduced model's truncation; a
 * CHOLMOD solve can fail (reported as a status); nothing else. The per-tet loops run on
 * fs->threads threads and sum in tet order (the same bits for any count).
 * The simulator keeps its tets in its own order, sorted in space (tet_order.h), so that the
 * reference's local step adds each run of tets' terms into a small buffer of that run's
 * vertices (scatter_blocks); a tet's number never leaves this file.
 */
#include "fullspace.h"

#include <cholmod.h>

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "dense.h"
#include "internal/cholesky_solve.h"
#include "internal/contact.h"
#include "internal/polar.h"
#include "internal/terrain_contact.h"
#include "testing/sim_testing.h"
#include "tet_order.h"

static void mlc_fullspace_stop_default(mlc_fullspace_stop *stop);
static inline void tet_terms(const mlc_fullspace *fs, int e, const double P[9], double s,
                             double *restrict t);
static void surface_invalidate(mlc_fullspace *fs);

struct mlc_fullspace {
    mlc_sim_settings set;
    mlc_fullspace_stop stop;
    int nv, nt, m, ma, nca, ns;
    int npr;        /* passive rotations: nt (per tet) or the subspace's ncp */
    int *T;         /* 4×nt */
    int *pcl, *acl; /* nt: passive rotation index, actuation cluster */
    int *samples;   /* ns contact vertices */
    double *X;      /* 3×nv rest positions */
    double *vol;    /* nt */
    double *grad;   /* 12×nt shape gradients (fem.h layout) */
    double *mass;   /* nv: ρ × lumped volume */
    double *Yhat;   /* nt × m × 9: ∇(D_i)_e, so Y_e(ā) = I + Σ_i a_i Yhat[e, i] */
    double *gb;     /* 3×nv: Σ_{e∋v} V_e ∇φ_v, so Σ_e V_e F_e = Σ_v x_v gb_vᵀ */
    double *GS;     /* nv×ns: Q⁻¹ M Q⁻¹ e_{v_s} (one coordinate block) */
    double *Gss;    /* ns×ns: its rows at the samples (Gram matrix of the contact system) */
    double *QiE;    /* nv×ns: Q⁻¹ e_{v_s}, the motion per unit force on sample s (one block) */
    double *Dss;    /* ns×ns: its rows at the samples, the Delassus matrix (contact.h) */
    double total_mass, extent, ground_tol, com_rest[3];
    cholmod_common cc;
    int cc_started;
    double *wmu, *wga, *wk; /* nt: μ_e/μ, γ_e/γ, (μ_e+γ_e)/(μ+γ) (per-tet materials), or NULL */
    double *fric;           /* ns: friction of each sample (per-region), or NULL */
    cholmod_factor *L;      /* of the nv×nv block of Q */
    cholmod_sparse *K; /* (μ+γ) Σ V GᵀG, kept when Rayleigh β > 0 (its rhs term β K x_n / h) */
    cholmod_dense *Xn, *KX; /* nv×3: x_n and K x_n (Rayleigh β) */
    /* The global solve's own copy of the factor Q = P L Lᵀ Pᵀ, split over fs->threads threads
     * (cholesky_solve.h: the same bits for any count) */
    mlc_cholsolve qs3;
    double *rhs, *xs; /* 3×nv right-hand side, tentative solution x* */
    /* state */
    int step, contacts, last_iterations;
    double last_work, last_change;  /* last_change: ‖Δx‖_∞ / extent of the last iteration */
    mlc_fullspace_convergence conv; /* since the last reset */
    double *xc, *xp, *xn;           /* 3×nv current, previous, next (rotated by pointer swap) */
    double *q, *b0, *xi;            /* 3×nv prediction, nv×3 constant rhs, previous iterate */
    double *abar;                   /* ma */
    double *Ye;      /* nt×9 actuation targets of this step (not formed for the reference: Wm) */
    double *Fp;      /* npr×9 passive cluster sums (when not per tet) */
    double *Rp, *qp; /* npr×9 rotations, npr×4 warm-start quaternions */
    double *g3;      /* 9×nt: ∇φ_0..2 of each tet (∇φ_3 = −their sum), for the reference */
    double *muv;     /* nt: μ_e V_e */
    double *Wm; /* the reference: (m+1) × 3nv, W_i[v] = Σ_{(e,a)∋v} γ_e V_e Yhat[e, i] ∇φ_a
                   (W_m with the identity), so that w = Σ_i ā_i W_i; NULL otherwise */
    double *qs; /* the reference's per-tet warm starts: q_k of tet e at qs[k·qs_ld + e] */
    size_t qs_ld;         /* nt rounded up to a multiple of MLC_FULLSPACE_POLAR_CHUNK */
    double *Hc, *Om, *qa; /* nca×9, nca×9, nca×4 */
    double qbody[4];
    double *xsc, *xsp;     /* 3×ns sample positions at x_n and x_{n−1} */
    int *active;           /* ns */
    double *ys, *Gm, *Ym;  /* ns, ns×ns, ns×3 */
    mlc_contact cs;        /* complementarity contact */
    double *yst, *yt, *ct; /* ns each: y at x*, normal targets, friction right-hand sides */
    /* terrain contact (terrain.h; NULL frame when the terrain is the flat plane): as
     * sim_step.c's, per sample frame [n, t1, t2], friction bounds and Delassus matrices */
    mlc_terrain terrain;
    mlc_terrain_contact tc;
    mlc_fullspace_frame_fn observer; /* mlc_fullspace_observe */
    void *observer_user;
    /* ---- parallel local step (bit-identical for any thread count); tH, tF, tb, inc_ptr and
     * tslot belong to the general path (local_and_rhs), wv, hpart, wpart and the scatter
     * blocks to the reference (local_and_rhs_reference); each path allocates only its own ---- */
    int threads; /* OpenMP threads of the per-tet and per-vertex loops, ≥ 1 */
    double *tH;  /* nt×9: each tet's V F Yᵀ (summed per actuation cluster in tet order) */
    double *tFp; /* nt×9: each tet's μ-weighted V F (per-cluster passive rotations) */
    double *tF;  /* nt×9: each tet's F */
    double *wv;  /* 3×nv: one actuation cluster: actuation_targets */
    double *tb;  /* 4nt×3: the tets' right-hand-side terms V P ∇φ_a, by vertex (below) */
    /* tb holds the terms vertex by vertex, each vertex's (tet, corner) pairs ascending in tet
     * (the serial scatter's order), so a gather reads it in sequence: vertex v's terms are at
     * 3p, p = inc_ptr[v] .. inc_ptr[v+1]−1, and tet e's corner a writes at tslot[4e + a]. */
    int *inc_ptr; /* nv+1 */
    int *tslot;   /* 4nt */
    /* The reference's local step scatters block by block: block k is the chunks
     * blk_chunk[k] .. blk_chunk[k+1]−1 (whole chunks of MLC_FULLSPACE_POLAR_CHUNK tets, in the
     * simulator's tet order) and owns the slots blk_slot[k] .. blk_slot[k+1]−1 of bbuf, one per
     * vertex it touches; tet e's corner a adds its terms at bbuf + corner_slot[4e + a]. Vertex
     * v's slots, in block order, are at the offsets vslot[vslot_ptr[v] .. vslot_ptr[v+1]−1]. */
    int nblk;
    int *blk_chunk, *blk_slot; /* nblk+1 each */
    int *corner_slot;          /* 4nt: offsets in doubles into bbuf */
    int *vslot_ptr, *vslot;    /* nv+1, blk_slot[nblk] */
    double *bbuf;              /* 3 × blk_slot[nblk] */
    double *hpart;             /* 9 per block of MLC_FULLSPACE_SUM_BLOCK vertices: its part of H */
    double *wpart; /* per block of as many vertices, then of tets: its part of the work */
    /* ---- Anderson acceleration of the iteration (window aa_m; 0 = plain) ---- */
    int aa_m, aa_n, aa_head, aa_k; /* window, differences kept, next slot, iterations seen */
    double aa_r2;                  /* ‖f‖₂² of the last iteration */
    double aa_gram[MLC_FULLSPACE_ANDERSON_MAX * MLC_FULLSPACE_ANDERSON_MAX]; /* ΔF_aᵀΔF_c by slot */
    double *dq; /* 3×nv: x_n minus the prediction of the last step (the next step's start) */
    double *aa_dF, *aa_dG; /* 3nv × aa_m: differences of residuals f = G(x) − x and of G(x) */
    double *aa_f, *aa_g;   /* 3nv: the previous f and G(x) */
    double *aa_part;       /* per block of MLC_FULLSPACE_SUM_BLOCK coordinates: its part of
                              ‖f‖², of the Gram row and of ΔFᵀf (anderson_next) */
    /* ---- contact on every surface vertex (mlc_fullspace_use_surface_contact) ---- */
    int surface;       /* 1: contact on every boundary vertex instead of the samples */
    int nsurf, *surf;  /* boundary vertices, ascending */
    int cap, nfill;    /* column slots, slots filled (0..nfill−1) */
    int cap0, cap_max; /* slots at the start of a rollout, the most the cache may grow to */
    int *slot_of;      /* nv: a vertex's slot, −1 when its column is not cached */
    int *slot_v;       /* cap: the vertex of a slot */
    long *slot_seen;   /* cap: last step (fs->step) the slot's vertex was near its target */
    double *QiEc;      /* nv×cap: Q⁻¹ e_v of each slot's vertex v (one coordinate block) */
    double *Dc;      /* cap×cap: Delassus matrix of the slots, D[u, s] = (Q⁻¹ e_{v_s})_{v_u} */
    double *sy, *sg; /* cap: y at x* and normal target of each slot */
    double *sct;     /* 3×cap: friction right-hand sides, then forces (by contact) */
    double *vfric;   /* nv: friction of each vertex (per-region), or NULL */
    double *sfric;   /* cap: friction of each slot's vertex, or NULL */
    int *want;       /* nsurf: vertices that need a column */
    mlc_contact csurf;
    mlc_contact_live live;
    int runs[2];
    const char *failure; /* what a step that returned a negative status ran into */
    long columns_solved; /* surface contact: columns solved since creation */
    int grown;           /* surface contact: times the cache grew since creation */
};

/* ---- lifetime ------------------------------------------------------------------------------ */

void mlc_fullspace_destroy(mlc_fullspace *fs) {
    if (!fs) return;
    if (fs->cc_started) {
        cholmod_free_factor(&fs->L, &fs->cc);
        cholmod_free_sparse(&fs->K, &fs->cc);
        cholmod_free_dense(&fs->Xn, &fs->cc);
        cholmod_free_dense(&fs->KX, &fs->cc);
        cholmod_finish(&fs->cc);
    }
    double *bufs[] = {fs->X,  fs->vol, fs->grad, fs->mass, fs->Yhat, fs->gb,  fs->GS,   fs->Gss,
                      fs->xc, fs->xp,  fs->xn,   fs->q,    fs->b0,   fs->xi,  fs->abar, fs->Ye,
                      fs->Fp, fs->Rp,  fs->qp,   fs->Hc,   fs->Om,   fs->qa,  fs->xsc,  fs->xsp,
                      fs->ys, fs->Gm,  fs->Ym,   fs->QiE,  fs->Dss,  fs->yst, fs->yt,   fs->ct};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        mlc_free(bufs[i]);
    mlc_free(fs->wmu);
    mlc_free(fs->wga);
    mlc_free(fs->wk);
    mlc_free(fs->fric);
    mlc_free(fs->T);
    mlc_free(fs->pcl);
    mlc_free(fs->acl);
    mlc_free(fs->samples);
    mlc_free(fs->active);
    double *more[] = {fs->tH,    fs->tF,   fs->wv,    fs->tFp,   fs->tb,  fs->aa_dF,
                      fs->aa_dG, fs->aa_f, fs->aa_g,  fs->QiEc,  fs->Dc,  fs->sy,
                      fs->sg,    fs->sct,  fs->vfric, fs->sfric, fs->rhs, fs->xs};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        mlc_free(more[i]);
    int *imore[] = {fs->inc_ptr,     fs->tslot,     fs->surf,      fs->slot_of,
                    fs->slot_v,      fs->want,      fs->blk_chunk, fs->blk_slot,
                    fs->corner_slot, fs->vslot_ptr, fs->vslot};
    for (size_t i = 0; i < sizeof imore / sizeof imore[0]; i++)
        mlc_free(imore[i]);
    mlc_free(fs->slot_seen);
    mlc_free(fs->bbuf);
    mlc_free(fs->hpart);
    mlc_free(fs->wpart);
    mlc_free(fs->aa_part);
    mlc_free(fs->dq);
    mlc_free(fs->qs);
    mlc_free(fs->g3);
    mlc_free(fs->muv);
    mlc_free(fs->Wm);
    mlc_cholsolve_destroy(&fs->qs3);
    mlc_contact_destroy(&fs->csurf);
    mlc_contact_destroy(&fs->cs);
    mlc_terrain_contact_destroy(&fs->tc);
    mlc_terrain_free(&fs->terrain);
    mlc_free(fs);
}

static mlc_status check_inputs(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                               const mlc_sim_settings *s, int per_tet, mlc_err *err) {
    if (!mesh || !fem || !sub || !s) return mlc_errf(err, MLC_EINVAL, "fullspace: NULL argument");
    if (s->integrator != MLC_INTEGRATOR_EULER)
        return mlc_errf(err, MLC_EINVAL,
                        "fullspace: the full-space reference integrates with backward Euler "
                        "only; run --full-space with sim.integrator = \"euler\"");
    if (fem->nv != mesh->nv || fem->nt != mesh->nt || sub->nv != mesh->nv || sub->nt != mesh->nt)
        return mlc_errf(err, MLC_EINVAL,
                        "fullspace: mesh (%d vertices, %d tets), FEM data (%d, %d) and subspace "
                        "(%d, %d) disagree",
                        mesh->nv, mesh->nt, fem->nv, fem->nt, sub->nv, sub->nt);
    if (sub->m < 0 || (sub->m > 0 && !sub->D))
        return mlc_errf(err, MLC_EINVAL, "fullspace: subspace has %d modes but no mode data",
                        sub->m);
    if (sub->nca < 1 || !sub->acluster || (!per_tet && (sub->ncp < 1 || !sub->cluster)))
        return mlc_errf(err, MLC_EINVAL, "fullspace: subspace has no clusters");
    for (int e = 0; e < mesh->nt; e++)
        if (sub->acluster[e] < 0 || sub->acluster[e] >= sub->nca ||
            (!per_tet && (sub->cluster[e] < 0 || sub->cluster[e] >= sub->ncp)))
            return mlc_errf(err, MLC_EINVAL, "fullspace: cluster label of tet %d out of range", e);
    if (sub->ns < 0 || (sub->ns > 0 && !sub->samples))
        return mlc_errf(err, MLC_EINVAL, "fullspace: %d samples but no sample list", sub->ns);
    for (int i = 0; i < sub->ns; i++)
        if (sub->samples[i] < 0 || sub->samples[i] >= mesh->nv)
            return mlc_errf(err, MLC_EINVAL, "fullspace: contact sample %d names vertex %d of %d",
                            i, sub->samples[i], mesh->nv);
    if (!(s->dt > 0) || !isfinite(s->dt))
        return mlc_errf(err, MLC_EINVAL, "fullspace: need dt > 0 (got %g)", s->dt);
    if (!(s->density > 0) || !(s->mu >= 0) || !(s->gamma >= 0) || !isfinite(s->density) ||
        !isfinite(s->mu) || !isfinite(s->gamma) || !(s->mu + s->gamma > 0))
        return mlc_errf(err, MLC_EINVAL,
                        "fullspace: need density > 0, mu >= 0, gamma >= 0, mu + gamma > 0 "
                        "(got %g, %g, %g)",
                        s->density, s->mu, s->gamma);
    if (!(s->damping >= 0 && s->damping < 1))
        return mlc_errf(err, MLC_EINVAL, "fullspace: contact damping %g must be in [0, 1)",
                        s->damping);
    if (!isfinite(s->gravity[0]) || !isfinite(s->gravity[1]) || !isfinite(s->gravity[2]) ||
        !isfinite(s->ground))
        return mlc_errf(err, MLC_EINVAL, "fullspace: gravity and ground must be finite");
    return MLC_OK;
}

static mlc_status cholmod_fail(mlc_fullspace *fs, mlc_err *err, const char *what) {
    int st = fs->cc.status;
    if (st == CHOLMOD_NOT_POSDEF)
        return mlc_errf(err, MLC_ENOTSPD,
                        "fullspace: %s: the system matrix is not positive "
                        "definite (CHOLMOD, column %d)",
                        what, fs->L ? (int)fs->L->minor : -1);
    return mlc_errf(err, st == CHOLMOD_OUT_OF_MEMORY ? MLC_ENOMEM : MLC_ENUMERIC,
                    "fullspace: %s failed (CHOLMOD status %d)", what, st);
}

/* The factor's copy for the global solve (cholesky_solve.h), split for fs->threads, and the
 * solve's vectors. */
static mlc_status copy_factor(mlc_fullspace *fs, mlc_err *err) {
    if ((int)fs->L->n != fs->nv)
        return mlc_errf(err, MLC_ENUMERIC, "fullspace: unexpected factor form from CHOLMOD");
    mlc_status s = mlc_cholsolve_create(&fs->qs3, fs->L, err);
    if (s != MLC_OK) return s;
    size_t v3 = 3 * (size_t)fs->nv;
    int ok = (fs->rhs = mlc_calloc(v3, sizeof(double))) != NULL;
    ok &= (fs->xs = mlc_calloc(v3, sizeof(double))) != NULL;
    if (!ok) return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory for the factor");
    return mlc_cholsolve_set_threads(&fs->qs3, fs->threads, err);
}

/* x = Q⁻¹ b for the three coordinates at once (b, x: 3×nv interleaved; they may not overlap). */
static void qsolve(mlc_fullspace *fs, const double *restrict b, double *restrict x) {
    mlc_cholsolve_solve3(&fs->qs3, b, x);
}

/* Q = (μ+γ) Lap + M/h² (upper triangle, as fem.h returns it), analysed and factored once. */
static mlc_status factor_system(mlc_fullspace *fs, const mlc_mesh *mesh, const mlc_fem *fem,
                                mlc_err *err) {
    cholmod_sparse *A = mlc_fem_laplacian(mesh, fem, fs->wk, &fs->cc);
    if (!A) return cholmod_fail(fs, err, "assembling the Laplacian");
    const int *Ap = A->p, *Ai = A->i;
    double *Ax = A->x, ih2 = 1.0 / (fs->set.dt * fs->set.dt), k = fs->set.mu + fs->set.gamma;
    /* Rayleigh damping adds (αM + βK)/h (sim.h). */
    const double ra = fs->set.rayleigh[0] / fs->set.dt, rb = fs->set.rayleigh[1] / fs->set.dt;
    for (int j = 0; j < fs->nv; j++)
        for (int p = Ap[j]; p < Ap[j + 1]; p++)
            Ax[p] *= k;
    if (rb != 0) {
        fs->K = cholmod_copy_sparse(A, &fs->cc);
        fs->Xn = cholmod_zeros((size_t)fs->nv, 3, CHOLMOD_REAL, &fs->cc);
        fs->KX = cholmod_zeros((size_t)fs->nv, 3, CHOLMOD_REAL, &fs->cc);
        if (!fs->K || !fs->Xn || !fs->KX) {
            cholmod_free_sparse(&A, &fs->cc);
            return cholmod_fail(fs, err, "copying the stiffness matrix");
        }
    }
    for (int j = 0; j < fs->nv; j++) {
        int found = 0;
        for (int p = Ap[j]; p < Ap[j + 1]; p++) {
            Ax[p] *= 1 + rb;
            if (Ai[p] == j) Ax[p] += (ih2 + ra) * fs->mass[j], found = 1;
        }
        if (!found) {
            cholmod_free_sparse(&A, &fs->cc);
            return mlc_errf(err, MLC_EINVAL, "fullspace: vertex %d belongs to no tet", j);
        }
    }
    /* Simplicial LLᵀ after a nested-dissection ordering (AMD where METIS is missing): a solve
     * with three right-hand sides reads the factor once a sweep, and the supernodal form's dense
     * blocks only pay with many right-hand sides (measured on the cat: 2.0 ms a solve against
     * 4.0 ms supernodal; nested dissection fills 599k entries, AMD 644k). */
    cholmod_common *cc = &fs->cc;
    cc->supernodal = CHOLMOD_SIMPLICIAL;
    cc->final_ll = 1;
    cc->nmethods = 1;
    cc->method[0].ordering = CHOLMOD_NESDIS;
    fs->L = cholmod_analyze(A, cc);
    if (!fs->L && cc->status == CHOLMOD_NOT_INSTALLED) {
        cc->status = CHOLMOD_OK;
        cc->method[0].ordering = CHOLMOD_AMD;
        fs->L = cholmod_analyze(A, cc);
    }
    int ok = fs->L && cholmod_factorize(A, fs->L, cc) && cc->status == CHOLMOD_OK;
    cholmod_free_sparse(&A, cc);
    if (!ok) return cholmod_fail(fs, err, "factorizing M/h² + (mu+gamma) L");
    return copy_factor(fs, err);
}

/* Contact columns: QiE = Q⁻¹ E (E the sample indicator columns) and the Delassus matrix
 * Dss = Eᵀ QiE (complementarity); GS = Q⁻¹ M Q⁻¹ E and Gss = Eᵀ GS (equality). */
static mlc_status contact_columns(mlc_fullspace *fs, mlc_err *err) {
    int nv = fs->nv, ns = fs->ns;
    if (ns == 0) return MLC_OK;
    cholmod_dense *E = cholmod_zeros((size_t)nv, (size_t)ns, CHOLMOD_REAL, &fs->cc);
    if (!E) return cholmod_fail(fs, err, "allocating the contact columns");
    double *Ex = E->x;
    for (int s = 0; s < ns; s++)
        Ex[fs->samples[s] + (size_t)nv * s] = 1;
    cholmod_dense *Y = cholmod_solve(CHOLMOD_A, fs->L, E, &fs->cc);
    cholmod_free_dense(&E, &fs->cc);
    if (!Y) return cholmod_fail(fs, err, "solving for the contact columns");
    double *Yx = Y->x;
    memcpy(fs->QiE, Yx, sizeof(double) * (size_t)nv * ns);
    for (int s = 0; s < ns; s++)
        for (int u = 0; u < ns; u++)
            fs->Dss[u + (size_t)ns * s] = fs->QiE[fs->samples[u] + (size_t)nv * s];
    for (int s = 0; s < ns; s++)
        for (int i = 0; i < nv; i++)
            Yx[i + (size_t)nv * s] *= fs->mass[i];
    cholmod_dense *G = cholmod_solve(CHOLMOD_A, fs->L, Y, &fs->cc);
    cholmod_free_dense(&Y, &fs->cc);
    if (!G) return cholmod_fail(fs, err, "solving for the contact columns");
    memcpy(fs->GS, G->x, sizeof(double) * (size_t)nv * ns);
    cholmod_free_dense(&G, &fs->cc);
    for (int s = 0; s < ns; s++)
        for (int u = 0; u < ns; u++)
            fs->Gss[u + (size_t)ns * s] = fs->GS[fs->samples[u] + (size_t)nv * s];
    return MLC_OK;
}

mlc_status mlc_fullspace_create(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                                const mlc_sim_settings *settings, int passive_per_tet,
                                mlc_fullspace **out, mlc_err *err) {
    return mlc_fullspace_create_materials(mesh, fem, sub, settings, passive_per_tet, NULL, out,
                                          err);
}

/* The inputs with their tets in the simulator's order (tet_order.h): views that share the
 * callers' per-vertex arrays and own sorted copies of the per-tet ones (sorted_views), for
 * the set-up only: the simulator keeps nothing of them but its own copies. */
typedef struct tet_views {
    mlc_mesh mesh;
    mlc_fem fem;
    mlc_subspace sub;
    mlc_materials mat;
    void *owned[8];
} tet_views;

static void free_views(tet_views *v) {
    for (size_t i = 0; i < sizeof v->owned / sizeof v->owned[0]; i++)
        mlc_free(v->owned[i]);
}

/* A per-tet array of `width` values (NULL stays NULL) in the order `order`, or NULL with *ok
 * cleared when out of memory. */
static void *sorted_copy(const void *src, size_t width, const int *order, int nt, void **own,
                         int *ok) {
    if (!src) return NULL;
    char *dst = mlc_malloc(width * (size_t)MLC_MAX(nt, 1));
    *own = dst;
    if (!dst) {
        *ok = 0;
        return NULL;
    }
    for (int i = 0; i < nt; i++)
        memcpy(dst + width * (size_t)i, (const char *)src + width * (size_t)order[i], width);
    return dst;
}

static mlc_status sorted_views(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                               const mlc_materials *mat, tet_views *v, mlc_err *err) {
    memset(v, 0, sizeof *v);
    const int nt = mesh->nt;
    int *order = mlc_malloc(sizeof(int) * (size_t)MLC_MAX(nt, 1)), ok = order != NULL;
    if (ok && mlc_tet_spatial_order(mesh, order, err) != MLC_OK) {
        mlc_free(order);
        return MLC_ENOMEM;
    }
    v->mesh = *mesh, v->fem = *fem, v->sub = *sub, v->mat = *mat;
    v->mesh.tet_tag = NULL;
    if (ok) {
        v->mesh.T = sorted_copy(mesh->T, 4 * sizeof(int), order, nt, &v->owned[0], &ok);
        v->fem.vol = sorted_copy(fem->vol, sizeof(double), order, nt, &v->owned[1], &ok);
        v->fem.grad = sorted_copy(fem->grad, 12 * sizeof(double), order, nt, &v->owned[2], &ok);
        v->sub.cluster = sorted_copy(sub->cluster, sizeof(int), order, nt, &v->owned[3], &ok);
        v->sub.acluster = sorted_copy(sub->acluster, sizeof(int), order, nt, &v->owned[4], &ok);
        v->mat.mu = sorted_copy(mat->mu, sizeof(double), order, nt, &v->owned[5], &ok);
        v->mat.gamma = sorted_copy(mat->gamma, sizeof(double), order, nt, &v->owned[6], &ok);
        v->mat.density = sorted_copy(mat->density, sizeof(double), order, nt, &v->owned[7], &ok);
    }
    mlc_free(order);
    if (!ok) {
        free_views(v);
        return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory (%d tets)", nt);
    }
    return MLC_OK;
}

/* Every array of the full-space simulator for its sizes (fs->nv, nt, m, ns, npr, nca), zeroed
 * where the step accumulates; per-tet stiffness adds the weights wmu, wga, wk, per-vertex
 * friction adds fric. 0 when out of memory (mlc_fullspace_destroy frees what was allocated). */
static int alloc_arrays(mlc_fullspace *fs, const mlc_materials *mat) {
    const int nv = fs->nv, nt = fs->nt, m = fs->m;
    size_t v3 = 3 * (size_t)nv, nsx = (size_t)MLC_MAX(fs->ns, 1);
    int ok = 1;
    ok &= (fs->T = mlc_malloc(sizeof(int) * 4 * (size_t)nt)) != NULL;
    ok &= (fs->pcl = mlc_malloc(sizeof(int) * (size_t)nt)) != NULL;
    ok &= (fs->acl = mlc_malloc(sizeof(int) * (size_t)nt)) != NULL;
    ok &= (fs->samples = mlc_malloc(sizeof(int) * nsx)) != NULL;
    ok &= (fs->active = mlc_calloc(nsx, sizeof(int))) != NULL;
    double **vecs3[] = {&fs->X, &fs->gb, &fs->xc, &fs->xp, &fs->xn, &fs->q, &fs->b0, &fs->xi};
    for (size_t i = 0; i < sizeof vecs3 / sizeof vecs3[0]; i++)
        ok &= (*vecs3[i] = mlc_calloc(v3, sizeof(double))) != NULL;
    ok &= (fs->vol = mlc_malloc(sizeof(double) * (size_t)nt)) != NULL;
    ok &= (fs->grad = mlc_malloc(sizeof(double) * 12 * (size_t)nt)) != NULL;
    ok &= (fs->mass = mlc_malloc(sizeof(double) * (size_t)nv)) != NULL;
    ok &= (fs->Yhat = mlc_calloc((size_t)nt * (size_t)MLC_MAX(m, 1) * 9, sizeof(double))) != NULL;
    ok &= (fs->GS = mlc_calloc((size_t)nv * nsx, sizeof(double))) != NULL;
    ok &= (fs->Gss = mlc_calloc(nsx * nsx, sizeof(double))) != NULL;
    ok &= (fs->abar = mlc_calloc((size_t)fs->ma, sizeof(double))) != NULL;
    ok &= (fs->Ye = mlc_calloc((size_t)nt * 9, sizeof(double))) != NULL;
    ok &= (fs->Fp = mlc_calloc((size_t)fs->npr * 9, sizeof(double))) != NULL;
    ok &= (fs->Rp = mlc_calloc((size_t)fs->npr * 9, sizeof(double))) != NULL;
    ok &= (fs->qp = mlc_calloc((size_t)fs->npr * 4, sizeof(double))) != NULL;
    fs->qs_ld = ((size_t)nt + MLC_FULLSPACE_POLAR_CHUNK - 1) / MLC_FULLSPACE_POLAR_CHUNK *
                MLC_FULLSPACE_POLAR_CHUNK;
    ok &= (fs->qs = mlc_calloc(4 * fs->qs_ld, sizeof(double))) != NULL;
    ok &= (fs->g3 = mlc_malloc(sizeof(double) * 9 * (size_t)nt)) != NULL;
    ok &= (fs->muv = mlc_malloc(sizeof(double) * (size_t)nt)) != NULL;
    ok &= (fs->Hc = mlc_calloc((size_t)fs->nca * 9, sizeof(double))) != NULL;
    ok &= (fs->Om = mlc_calloc((size_t)fs->nca * 9, sizeof(double))) != NULL;
    ok &= (fs->qa = mlc_calloc((size_t)fs->nca * 4, sizeof(double))) != NULL;
    ok &= (fs->xsc = mlc_calloc(3 * nsx, sizeof(double))) != NULL;
    ok &= (fs->xsp = mlc_calloc(3 * nsx, sizeof(double))) != NULL;
    ok &= (fs->ys = mlc_calloc(nsx, sizeof(double))) != NULL;
    ok &= (fs->Gm = mlc_calloc(nsx * nsx, sizeof(double))) != NULL;
    ok &= (fs->Ym = mlc_calloc(nsx * 3, sizeof(double))) != NULL;
    ok &= (fs->QiE = mlc_calloc((size_t)nv * nsx, sizeof(double))) != NULL;
    ok &= (fs->Dss = mlc_calloc(nsx * nsx, sizeof(double))) != NULL;
    ok &= (fs->yst = mlc_calloc(nsx, sizeof(double))) != NULL;
    ok &= (fs->yt = mlc_calloc(nsx, sizeof(double))) != NULL;
    ok &= (fs->ct = mlc_calloc(nsx, sizeof(double))) != NULL;
    if (mat->mu || mat->gamma) {
        ok &= (fs->wmu = mlc_malloc(sizeof(double) * (size_t)nt)) != NULL;
        ok &= (fs->wga = mlc_malloc(sizeof(double) * (size_t)nt)) != NULL;
        ok &= (fs->wk = mlc_malloc(sizeof(double) * (size_t)nt)) != NULL;
    }
    if (mat->friction) ok &= (fs->fric = mlc_malloc(sizeof(double) * nsx)) != NULL;
    if (mat->friction) ok &= (fs->vfric = mlc_malloc(sizeof(double) * (size_t)nv)) != NULL;
    if (fs->npr == nt && fs->nca == 1) { /* the reference (local_and_rhs_reference) */
        const size_t vb = ((size_t)nv + MLC_FULLSPACE_SUM_BLOCK - 1) / MLC_FULLSPACE_SUM_BLOCK,
                     tb = ((size_t)nt + MLC_FULLSPACE_SUM_BLOCK - 1) / MLC_FULLSPACE_SUM_BLOCK;
        ok &= (fs->wv = mlc_calloc(v3, sizeof(double))) != NULL;
        ok &= (fs->Wm = mlc_calloc(v3 * (size_t)(m + 1), sizeof(double))) != NULL;
        ok &= (fs->hpart = mlc_malloc(sizeof(double) * 9 * (vb + 1))) != NULL;
        ok &= (fs->wpart = mlc_malloc(sizeof(double) * (vb + tb + 1))) != NULL;
    } else { /* the per-tet terms of the general path (local_and_rhs) */
        ok &= (fs->tH = mlc_malloc(sizeof(double) * 9 * (size_t)nt)) != NULL;
        ok &= (fs->tF = mlc_malloc(sizeof(double) * 9 * (size_t)nt)) != NULL;
        ok &= (fs->tb = mlc_malloc(sizeof(double) * 12 * (size_t)nt)) != NULL;
        ok &= (fs->inc_ptr = mlc_calloc((size_t)nv + 1, sizeof(int))) != NULL;
        ok &= (fs->tslot = mlc_malloc(sizeof(int) * 4 * (size_t)nt)) != NULL;
    }
    if (fs->npr != nt) ok &= (fs->tFp = mlc_malloc(sizeof(double) * 9 * (size_t)nt)) != NULL;
    ok &= (fs->slot_of = mlc_malloc(sizeof(int) * (size_t)nv)) != NULL;
    ok &= (fs->dq = mlc_calloc(v3, sizeof(double))) != NULL;
    return ok;
}

/* The history of Anderson acceleration for a window of m iterations (0: none). */
static mlc_status anderson_alloc(mlc_fullspace *fs, int m, mlc_err *err) {
    mlc_free(fs->aa_dF), mlc_free(fs->aa_dG), mlc_free(fs->aa_f), mlc_free(fs->aa_g);
    mlc_free(fs->aa_part);
    fs->aa_dF = fs->aa_dG = fs->aa_f = fs->aa_g = fs->aa_part = NULL;
    fs->aa_m = m;
    if (m == 0) return MLC_OK;
    size_t v3 = 3 * (size_t)fs->nv;
    size_t blocks = (v3 + MLC_FULLSPACE_SUM_BLOCK - 1) / MLC_FULLSPACE_SUM_BLOCK;
    int ok = (fs->aa_part = mlc_malloc(sizeof(double) * (blocks > 0 ? blocks : 1) *
                                       (1 + 2 * MLC_FULLSPACE_ANDERSON_MAX))) != NULL;
    ok &= (fs->aa_dF = mlc_malloc(sizeof(double) * v3 * (size_t)m)) != NULL;
    ok &= (fs->aa_dG = mlc_malloc(sizeof(double) * v3 * (size_t)m)) != NULL;
    ok &= (fs->aa_f = mlc_malloc(sizeof(double) * v3)) != NULL;
    ok &= (fs->aa_g = mlc_malloc(sizeof(double) * v3)) != NULL;
    if (!ok) {
        fs->aa_m = 0;
        return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory for the acceleration");
    }
    return MLC_OK;
}

/* The vertices' (tet, corner) slots in ascending tet order (the gather of the right-hand side
 * adds them in the serial scatter's order, fs->tslot) and the boundary vertices, ascending. */
static mlc_status incidence_surface(mlc_fullspace *fs, const mlc_mesh *mesh, mlc_err *err) {
    const int nv = fs->nv, nt = fs->nt;
    if (fs->tslot) { /* the general path only (the reference scatters by blocks) */
        for (int e = 0; e < nt; e++)
            for (int a = 0; a < 4; a++)
                fs->inc_ptr[fs->T[4 * e + a] + 1]++;
        for (int v = 0; v < nv; v++)
            fs->inc_ptr[v + 1] += fs->inc_ptr[v];
        int *fill = fs->slot_of; /* scratch: next free entry per vertex */
        memcpy(fill, fs->inc_ptr, sizeof(int) * (size_t)nv);
        for (int e = 0; e < nt; e++)
            for (int a = 0; a < 4; a++)
                fs->tslot[4 * e + a] = 3 * fill[fs->T[4 * e + a]]++;
    }
    for (int v = 0; v < nv; v++)
        fs->slot_of[v] = 0;
    for (int f = 0; f < 3 * mesh->nf; f++)
        fs->slot_of[mesh->F[f]] = 1;
    fs->nsurf = 0;
    for (int v = 0; v < nv; v++)
        fs->nsurf += fs->slot_of[v];
    fs->surf = mlc_malloc(sizeof(int) * (size_t)MLC_MAX(fs->nsurf, 1));
    if (!fs->surf) return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory");
    for (int v = 0, i = 0; v < nv; v++)
        if (fs->slot_of[v]) fs->surf[i++] = v;
    for (int v = 0; v < nv; v++)
        fs->slot_of[v] = -1;
    return MLC_OK;
}

/* The reference's scatter blocks (the fields by fs->nblk): whole chunks, about
 * MLC_FULLSPACE_BLOCK_CHUNKS each, and per block a slot for every vertex its tets touch, in the
 * order the block first touches them. Depends on the tets only, not on the thread count. */
static mlc_status scatter_blocks(mlc_fullspace *fs, mlc_err *err) {
    const int nt = fs->nt, nv = fs->nv;
    const int nchunks = (nt + MLC_FULLSPACE_POLAR_CHUNK - 1) / MLC_FULLSPACE_POLAR_CHUNK;
    const int nblk =
        MLC_MAX(1, (nchunks + MLC_FULLSPACE_BLOCK_CHUNKS / 2) / MLC_FULLSPACE_BLOCK_CHUNKS);
    fs->nblk = nblk;
    fs->blk_chunk = mlc_malloc(sizeof(int) * ((size_t)nblk + 1));
    fs->blk_slot = mlc_malloc(sizeof(int) * ((size_t)nblk + 1));
    fs->corner_slot = mlc_malloc(sizeof(int) * 4 * (size_t)nt);
    fs->vslot_ptr = mlc_calloc((size_t)nv + 1, sizeof(int));
    int *mark = mlc_malloc(sizeof(int) * (size_t)MLC_MAX(nv, 1));
    int *owner = mlc_malloc(sizeof(int) * 4 * (size_t)nt); /* slot → vertex, at most 4nt */
    if (!fs->blk_chunk || !fs->blk_slot || !fs->corner_slot || !fs->vslot_ptr || !mark || !owner) {
        mlc_free(mark), mlc_free(owner);
        return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory for the scatter blocks");
    }
    for (int v = 0; v < nv; v++)
        mark[v] = -1;
    int nslots = 0;
    for (int k = 0; k < nblk; k++) {
        const int c0 = (int)((long long)nchunks * k / nblk),
                  c1 = (int)((long long)nchunks * (k + 1) / nblk);
        const int e0 = c0 * MLC_FULLSPACE_POLAR_CHUNK,
                  e1 = MLC_MIN(nt, c1 * MLC_FULLSPACE_POLAR_CHUNK);
        fs->blk_chunk[k] = c0, fs->blk_slot[k] = nslots;
        for (int e = e0; e < e1; e++)
            for (int a = 0; a < 4; a++) {
                const int v = fs->T[4 * (size_t)e + a];
                if (mark[v] < 0) mark[v] = nslots, owner[nslots++] = v, fs->vslot_ptr[v + 1]++;
                fs->corner_slot[4 * (size_t)e + a] = 3 * mark[v];
            }
        for (int q = fs->blk_slot[k]; q < nslots; q++)
            mark[owner[q]] = -1;
    }
    fs->blk_chunk[nblk] = nchunks, fs->blk_slot[nblk] = nslots;
    for (int v = 0; v < nv; v++)
        fs->vslot_ptr[v + 1] += fs->vslot_ptr[v];
    fs->vslot = mlc_malloc(sizeof(int) * (size_t)MLC_MAX(nslots, 1));
    fs->bbuf = mlc_malloc(sizeof(double) * 3 * (size_t)MLC_MAX(nslots, 1));
    if (!fs->vslot || !fs->bbuf) {
        mlc_free(mark), mlc_free(owner);
        return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory for the scatter blocks");
    }
    int *fill = mark; /* next free entry per vertex; slots ascend, so blocks come in order */
    memcpy(fill, fs->vslot_ptr, sizeof(int) * (size_t)nv);
    for (int q = 0; q < nslots; q++)
        fs->vslot[fill[owner[q]]++] = 3 * q;
    mlc_free(mark), mlc_free(owner);
    return MLC_OK;
}

/* The simulator's own copies of the inputs: the per-tet material weights (μ_e/μ, γ_e/γ,
 * (μ_e+γ_e)/(μ+γ)), each sample's friction, the mesh, the FEM data and the cluster labels
 * (every tet its own passive cluster with passive_per_tet). */
static void copy_inputs(mlc_fullspace *fs, const mlc_mesh *mesh, const mlc_fem *fem,
                        const mlc_subspace *sub, const mlc_materials *mat, int passive_per_tet) {
    const mlc_sim_settings *set = &fs->set;
    const int nt = fs->nt, ns = fs->ns;
    for (int e = 0; fs->wmu && e < nt; e++) {
        double mue = mat->mu ? mat->mu[e] : set->mu;
        double gae = mat->gamma ? mat->gamma[e] : set->gamma;
        fs->wmu[e] = mue / set->mu, fs->wga[e] = gae / set->gamma;
        fs->wk[e] = (mue + gae) / (set->mu + set->gamma);
    }
    for (int s = 0; fs->fric && s < ns; s++)
        fs->fric[s] = mat->friction[sub->samples[s]];
    if (fs->vfric) memcpy(fs->vfric, mat->friction, sizeof(double) * (size_t)fs->nv);
    memcpy(fs->T, mesh->T, sizeof(int) * 4 * (size_t)nt);
    memcpy(fs->X, mesh->X, sizeof(double) * 3 * (size_t)fs->nv);
    memcpy(fs->vol, fem->vol, sizeof(double) * (size_t)nt);
    memcpy(fs->grad, fem->grad, sizeof(double) * 12 * (size_t)nt);
    memcpy(fs->acl, sub->acluster, sizeof(int) * (size_t)nt);
    if (ns > 0) memcpy(fs->samples, sub->samples, sizeof(int) * (size_t)ns);
    for (int e = 0; e < nt; e++) {
        fs->pcl[e] = passive_per_tet ? e : sub->cluster[e];
        memcpy(fs->g3 + 9 * (size_t)e, fem->grad + 12 * (size_t)e, sizeof(double) * 9);
        fs->muv[e] = (fs->wmu ? set->mu * fs->wmu[e] : set->mu) * fem->vol[e];
    }
}

/* Per-vertex mass (Σ ρ_e V_e / 4 with per-tet density, else the settings' density), the total
 * mass and the extent. */
static void masses_extent(mlc_fullspace *fs, const mlc_mesh *mesh, const mlc_fem *fem,
                          const mlc_materials *mat) {
    const int nv = fs->nv, nt = fs->nt;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    if (mat->density) {
        memset(fs->mass, 0, sizeof(double) * (size_t)nv);
        for (int e = 0; e < nt; e++)
            for (int a = 0; a < 4; a++)
                fs->mass[mesh->T[4 * e + a]] += 0.25 * mat->density[e] * fem->vol[e];
    }
    for (int i = 0; i < nv; i++) {
        if (!mat->density) fs->mass[i] = fs->set.density * fem->vmass[i];
        fs->total_mass += fs->mass[i];
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], mesh->X[3 * i + k]), hi[k] = fmax(hi[k], mesh->X[3 * i + k]);
    }
    fs->extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    fs->ground_tol = 1e-9 * fs->extent; /* as sim_model.c: "below" is not decided by rounding */
}

/* The body map gb = Σ V ∇φ per vertex and the per-tet target gradients Yhat[l + 3j] =
 * ∂(D_i)_l/∂X_j (Eq. 5 per tet). */
static void body_map_gradients(mlc_fullspace *fs, const mlc_mesh *mesh, const mlc_fem *fem,
                               const mlc_subspace *sub) {
    const int m = fs->m;
    const size_t v3 = 3 * (size_t)fs->nv;
    for (int e = 0; e < fs->nt; e++)
        for (int a = 0; a < 4; a++) {
            int v = mesh->T[4 * e + a];
            const double *g = fem->grad + 12 * e + 3 * a;
            for (int j = 0; j < 3; j++)
                fs->gb[3 * v + j] += fem->vol[e] * g[j];
            for (int i = 0; i < m; i++) {
                const double *Di = sub->D + v3 * i;
                double *Y = fs->Yhat + ((size_t)e * m + i) * 9;
                for (int l = 0; l < 3; l++)
                    for (int j = 0; j < 3; j++)
                        Y[l + 3 * j] += Di[3 * v + l] * g[j];
            }
        }
}

/* The reference's W_i (fs->Wm): each mode's actuation terms per vertex, summed in tet order. */
static void reference_targets(mlc_fullspace *fs) {
    const int m = fs->m;
    const size_t v3 = 3 * (size_t)fs->nv;
    for (int e = 0; e < fs->nt; e++) {
        const double gv = (fs->wga ? fs->set.gamma * fs->wga[e] : fs->set.gamma) * fs->vol[e];
        for (int i = 0; i <= m; i++) {
            static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
            const double *Y = i < m ? fs->Yhat + ((size_t)e * m + i) * 9 : eye;
            double t[12];
            tet_terms(fs, e, Y, gv, t);
            for (int a = 0; a < 4; a++)
                for (int k = 0; k < 3; k++)
                    fs->Wm[v3 * (size_t)i + 3 * (size_t)fs->T[4 * e + a] + k] += t[3 * a + k];
        }
    }
}

/* The contact solver on the precomputed Delassus matrix, and the terrain (set up as the reduced
 * model's, mlc_terrain_own) with its own contact workspace off the flat ground. */
static mlc_status contact_solver_terrain(mlc_fullspace *fs, const mlc_mesh *mesh, mlc_err *err) {
    const mlc_sim_settings *settings = &fs->set;
    if (mlc_contact_create(&fs->cs, fs->ns, fs->Dss, fs->ground_tol, settings->friction) != MLC_OK)
        return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory for the contact solver");
    fs->cs.friction_s = fs->fric;
    int ok = mlc_terrain_own(&fs->terrain, settings->terrain, settings->ground, settings->friction,
                             mesh->X, fs->nv) == MLC_OK;
    fs->set.terrain = &fs->terrain;
    if (ok && !fs->terrain.flat) {
        ok = mlc_terrain_contact_create(&fs->tc, fs->ns) == MLC_OK;
        if (ok) fs->cs.D = fs->tc.Dn;
    }
    if (!ok) return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory for the terrain");
    return MLC_OK;
}

mlc_status mlc_fullspace_create_materials(const mlc_mesh *mesh, const mlc_fem *fem,
                                          const mlc_subspace *sub, const mlc_sim_settings *settings,
                                          int passive_per_tet, const mlc_materials *mat,
                                          mlc_fullspace **out, mlc_err *err) {
    /* ---- check ---- */
    *out = NULL;
    mlc_status st = check_inputs(mesh, fem, sub, settings, passive_per_tet, err);
    if (st != MLC_OK) return st;
    static const mlc_materials uniform = {0};
    if (!mat) mat = &uniform;
    tet_views views;
    if ((st = sorted_views(mesh, fem, sub, mat, &views, err)) != MLC_OK) return st;
    mesh = &views.mesh, fem = &views.fem, sub = &views.sub, mat = &views.mat;

    /* ---- workspace and the copies of the inputs ---- */
    mlc_fullspace *fs = mlc_calloc(1, sizeof *fs);
    if (!fs) {
        free_views(&views);
        return mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory");
    }
    fs->set = *settings;
    int nv = mesh->nv, nt = mesh->nt, m = sub->m;
    fs->nv = nv, fs->nt = nt, fs->m = m, fs->ma = m + 1, fs->nca = sub->nca, fs->ns = sub->ns;
    fs->npr = passive_per_tet ? nt : sub->ncp;
    if (!alloc_arrays(fs, mat)) {
        st = mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory (%d vertices, %d tets)", nv, nt);
        goto fail;
    }
    copy_inputs(fs, mesh, fem, sub, mat, passive_per_tet);
    if ((st = incidence_surface(fs, mesh, err)) != MLC_OK) goto fail;
    if (fs->Wm && (st = scatter_blocks(fs, err)) != MLC_OK) goto fail;
    fs->threads = 1;
    if ((st = anderson_alloc(fs, MLC_FULLSPACE_ANDERSON, err)) != MLC_OK) goto fail;
    masses_extent(fs, mesh, fem, mat);
    body_map_gradients(fs, mesh, fem, sub);
    if (fs->Wm) reference_targets(fs);

    /* ---- the system matrix, its factor, the solve workspace and the contact columns ---- */
    cholmod_start(&fs->cc);
    fs->cc_started = 1;
    fs->cc.print = 0; /* modules never print; failures come back as a status */
    if ((st = factor_system(fs, mesh, fem, err)) != MLC_OK) goto fail;
    if ((st = contact_columns(fs, err)) != MLC_OK ||
        (st = contact_solver_terrain(fs, mesh, err)) != MLC_OK)
        goto fail;

    mlc_fullspace_stop_default(&fs->stop);
    mlc_fullspace_reset(fs);
    mlc_fullspace_com(fs, fs->X, fs->com_rest);
    free_views(&views);
    *out = fs;
    return MLC_OK;
fail:
    free_views(&views);
    mlc_fullspace_destroy(fs);
    return st;
}

int mlc_fullspace_nv(const mlc_fullspace *fs) {
    return fs->nv;
}
int mlc_fullspace_last_iterations(const mlc_fullspace *fs) {
    return fs->last_iterations;
}
double mlc_fullspace_last_change(const mlc_fullspace *fs) {
    return fs->last_change;
}
void mlc_fullspace_convergence_get(const mlc_fullspace *fs, mlc_fullspace_convergence *out) {
    *out = fs->conv;
}

static void mlc_fullspace_stop_default(mlc_fullspace_stop *stop) {
    stop->tolerance = MLC_FULLSPACE_TOLERANCE;
    stop->max_iterations = MLC_FULLSPACE_MAX_ITERATIONS;
}

mlc_status mlc_fullspace_set_stop(mlc_fullspace *fs, const mlc_fullspace_stop *stop, mlc_err *err) {
    if (!(stop->tolerance >= 0) || !isfinite(stop->tolerance) || stop->max_iterations < 1)
        return mlc_errf(err, MLC_EINVAL,
                        "fullspace: need a finite tolerance >= 0 and "
                        "max_iterations >= 1 (got %g, %d)",
                        stop->tolerance, stop->max_iterations);
    fs->stop = *stop;
    return MLC_OK;
}
mlc_status mlc_fullspace_set_acceleration(mlc_fullspace *fs, int window, mlc_err *err) {
    if (window < 0 || window > MLC_FULLSPACE_ANDERSON_MAX)
        return mlc_errf(err, MLC_EINVAL,
                        "fullspace: the acceleration window must be in [0, %d] (got %d)",
                        MLC_FULLSPACE_ANDERSON_MAX, window);
    if (window == fs->aa_m) return MLC_OK;
    return anderson_alloc(fs, window, err);
}

void mlc_fullspace_set_threads(mlc_fullspace *fs, int threads) {
    if (threads <= 0) {
        threads = MLC_MIN(omp_get_num_procs(), fs->nt / MLC_FULLSPACE_TETS_PER_THREAD);
        threads = MLC_MAX(threads, 1);
    }
    fs->threads = threads;
    mlc_err err;
    /* Out of memory leaves the solve serial: slower, the same bits. */
    if (fs->qs3.n > 0) (void)mlc_cholsolve_set_threads(&fs->qs3, fs->threads, &err);
}

/* The normal target of vertex v this step, from x_n as the samples' (contact_complementarity):
 * the ground, or at most push_speed·h above a penetrating vertex ("velocity": y_n). */
static inline double surface_target(const mlc_fullspace *fs, int v) {
    const mlc_sim_settings *set = &fs->set;
    double g = set->ground, yn = fs->xc[3 * (size_t)v + 1];
    if (set->projection_velocity) return fmin(g, yn);
    if (yn < g - fs->ground_tol) return fmin(g, yn + set->push_speed * set->dt);
    return g;
}

/* The slots outside [0, nfill) have no column: no coupling to any slot, never candidates. */
static int slots_hold(void *user, double lsum) {
    MLC_UNUSED(user), MLC_UNUSED(lsum);
    return 1;
}
static void slots_exact(void *user) {
    MLC_UNUSED(user);
}

mlc_status mlc_fullspace_use_surface_contact(mlc_fullspace *fs, int columns, mlc_err *err) {
    if (fs->surface) return MLC_OK;
    if (!fs->terrain.flat || !mlc_contact_model_forces(fs->set.contact_model))
        return mlc_errf(err, MLC_EINVAL,
                        "fullspace: contact on every surface vertex is solved on the flat "
                        "ground with the complementarity model; terrain and equality contact "
                        "use contact samples");
    if (columns < 0)
        return mlc_errf(err, MLC_EINVAL, "fullspace: %d contact columns (need >= 0)", columns);
    if (fs->nsurf == 0) return mlc_errf(err, MLC_EINVAL, "fullspace: the mesh has no surface");
    const int nv = fs->nv,
              cap = MLC_MIN(columns > 0 ? columns : MLC_FULLSPACE_CONTACT_COLUMNS, fs->nsurf);
    const size_t c = (size_t)cap;
    int ok = (fs->slot_v = mlc_malloc(sizeof(int) * c)) != NULL;
    ok &= (fs->slot_seen = mlc_malloc(sizeof(long) * c)) != NULL;
    ok &= (fs->QiEc = mlc_malloc(sizeof(double) * c * (size_t)nv)) != NULL;
    ok &= (fs->Dc = mlc_calloc(c * c, sizeof(double))) != NULL;
    ok &= (fs->sy = mlc_calloc(c, sizeof(double))) != NULL;
    ok &= (fs->sg = mlc_calloc(c, sizeof(double))) != NULL;
    ok &= (fs->sct = mlc_calloc(3 * c, sizeof(double))) != NULL;
    ok &= (fs->want = mlc_malloc(sizeof(int) * (size_t)fs->nsurf)) != NULL;
    if (fs->vfric) ok &= (fs->sfric = mlc_calloc(c, sizeof(double))) != NULL;
    ok = ok &&
         mlc_contact_create(&fs->csurf, cap, fs->Dc, fs->ground_tol, fs->set.friction) == MLC_OK;
    if (!ok)
        return mlc_errf(err, MLC_ENOMEM,
                        "fullspace: out of memory for %d contact columns of %d vertices", cap, nv);
    /* Tikhonov scale: D's diagonal is at most h²/m_v (Q ⪰ M/h²), a bound known before any
     * column is (the samples' solver takes D's largest diagonal entry). */
    double dmax = 0;
    for (int i = 0; i < fs->nsurf; i++)
        dmax = fmax(dmax, fs->set.dt * fs->set.dt / fs->mass[fs->surf[i]]);
    fs->csurf.eps = MLC_CONTACT_EPS * dmax;
    mlc_contact_set_updates(&fs->csurf, 1); /* sets of hundreds of forces under a flat body */
    fs->csurf.friction_s = fs->sfric;
    fs->live.runs = fs->runs;
    fs->live.nruns = 1;
    fs->live.hold = slots_hold;
    fs->live.exact = slots_exact;
    fs->live.user = fs;
    fs->surface = 1;
    fs->cap = fs->cap0 = fs->cap_max = cap;
    fs->nfill = 0;
    return MLC_OK;
}

/* Bytes of a cache of c slots: a column of nv values per slot, the slots' vectors, and five
 * c×c matrices (the Delassus matrix, the contact solver's factor, A_PP and the two friction
 * factors). */
static double cache_bytes(const mlc_fullspace *fs, double c) {
    return c * (8.0 * fs->nv + 200.0) + 40.0 * c * c;
}

void mlc_fullspace_set_contact_memory(mlc_fullspace *fs, double bytes) {
    if (!fs->surface) return;
    int hi = fs->cap;
    if (bytes > 0) { /* the largest c ≤ the surface's vertices whose cache fits */
        int lo = fs->cap, top = fs->nsurf;
        while (lo < top) {
            const int mid = lo + (top - lo + 1) / 2;
            if (cache_bytes(fs, mid) <= bytes)
                lo = mid;
            else
                top = mid - 1;
        }
        hi = lo;
    }
    fs->cap_max = hi;
}

int mlc_fullspace_contact_columns(const mlc_fullspace *fs, int *most) {
    if (most) *most = fs->surface ? fs->cap_max : 0;
    return fs->surface ? fs->cap : 0;
}

/* Twice the slots (at most cap_max), every slot's column, Delassus entries and warm start kept
 * in place: for a step that needs more surface vertices near the ground at once than the cache
 * holds. The slots in use keep their numbers, so the step goes on where it was. 0 when the
 * cache may not grow or memory ran out (the cache then unchanged). */
static int surface_grow(mlc_fullspace *fs) {
    const int cap = fs->cap, nc = MLC_MIN(2 * cap, fs->cap_max);
    if (nc <= cap) return 0;
    const size_t c = (size_t)nc, nvs = (size_t)fs->nv;
    double *Dc = mlc_calloc(c * c, sizeof(double));
    if (!Dc) return 0;
    for (int s = 0; s < fs->nfill; s++)
        memcpy(Dc + c * s, fs->Dc + (size_t)cap * s, sizeof(double) * (size_t)fs->nfill);
    void *p;
    /* Each array grown on its own: one that fails leaves the others larger than used, which is
     * harmless; the sizes the step relies on change only below, together. */
    int ok = (p = mlc_realloc(fs->slot_v, sizeof(int) * c)) != NULL;
    if (p) fs->slot_v = p;
    ok &= (p = mlc_realloc(fs->slot_seen, sizeof(long) * c)) != NULL;
    if (p) fs->slot_seen = p;
    ok &= (p = mlc_realloc(fs->QiEc, sizeof(double) * c * nvs)) != NULL;
    if (p) fs->QiEc = p;
    ok &= (p = mlc_realloc(fs->sy, sizeof(double) * c)) != NULL;
    if (p) fs->sy = p;
    ok &= (p = mlc_realloc(fs->sg, sizeof(double) * c)) != NULL;
    if (p) fs->sg = p;
    ok &= (p = mlc_realloc(fs->sct, sizeof(double) * 3 * c)) != NULL;
    if (p) fs->sct = p;
    if (fs->sfric) {
        ok &= (p = mlc_realloc(fs->sfric, sizeof(double) * c)) != NULL;
        if (p) fs->sfric = p;
    }
    if (!ok || mlc_contact_grow(&fs->csurf, nc, Dc) != MLC_OK) {
        mlc_free(Dc);
        return 0;
    }
    mlc_free(fs->Dc);
    fs->Dc = Dc;
    fs->csurf.friction_s = fs->sfric;
    fs->cap = nc;
    fs->grown++;
    return 1;
}

const double *mlc_fullspace_state(const mlc_fullspace *fs) {
    return fs->xc;
}
int mlc_fullspace_contacts(const mlc_fullspace *fs) {
    return fs->contacts;
}

static void reset_rotations(mlc_fullspace *fs) {
    for (int c = 0; c < fs->npr; c++)
        fs->qp[4 * c] = 1, fs->qp[4 * c + 1] = fs->qp[4 * c + 2] = fs->qp[4 * c + 3] = 0;
    for (size_t e = 0; e < fs->qs_ld; e++)
        fs->qs[e] = 1,
        fs->qs[fs->qs_ld + e] = fs->qs[2 * fs->qs_ld + e] = fs->qs[3 * fs->qs_ld + e] = 0;
    for (int c = 0; c < fs->nca; c++)
        fs->qa[4 * c] = 1, fs->qa[4 * c + 1] = fs->qa[4 * c + 2] = fs->qa[4 * c + 3] = 0;
    fs->qbody[0] = 1, fs->qbody[1] = fs->qbody[2] = fs->qbody[3] = 0;
}

/* A grown cache back to its first size for a new rollout (the arrays keep their memory): a
 * rollout evicts and grows as if it were the first. On out of memory it stays grown (the
 * contact the same up to which slots are evicted when). */
static void surface_shrink(mlc_fullspace *fs) {
    if (fs->cap == fs->cap0) return;
    mlc_contact cs;
    if (mlc_contact_create(&cs, fs->cap0, fs->Dc, fs->ground_tol, fs->set.friction) != MLC_OK)
        return;
    cs.eps = fs->csurf.eps;
    cs.friction_s = fs->sfric;
    mlc_contact_set_updates(&cs, fs->csurf.updates);
    mlc_contact_destroy(&fs->csurf);
    fs->csurf = cs;
    fs->cap = fs->cap0;
}

void mlc_fullspace_reset(mlc_fullspace *fs) {
    size_t v3 = 3 * (size_t)fs->nv;
    memcpy(fs->xc, fs->X, sizeof(double) * v3);
    memcpy(fs->xp, fs->X, sizeof(double) * v3);
    fs->step = 0;
    fs->contacts = 0;
    fs->last_work = 0;
    fs->last_iterations = 0;
    fs->last_change = 0;
    memset(&fs->conv, 0, sizeof fs->conv);
    reset_rotations(fs);
    mlc_contact_reset(&fs->cs);
    mlc_terrain_contact_reset(&fs->tc);
    /* Surface contact starts without columns: a rollout's slots (and so its bits) do not depend
     * on the rollouts before it. */
    if (fs->surface) {
        for (int s = 0; s < fs->nfill; s++)
            fs->slot_of[fs->slot_v[s]] = -1;
        fs->nfill = 0;
        surface_shrink(fs);
        mlc_contact_reset(&fs->csurf);
        surface_invalidate(fs);
    }
    fs->failure = NULL;
    memset(fs->dq, 0, sizeof(double) * v3);
}

void mlc_fullspace_set_state(mlc_fullspace *fs, const double *x, const double *x_prev) {
    size_t v3 = 3 * (size_t)fs->nv;
    memcpy(fs->xc, x, sizeof(double) * v3);
    memcpy(fs->xp, x_prev, sizeof(double) * v3);
    memset(fs->dq, 0, sizeof(double) * v3);
    reset_rotations(fs); /* as sim.h: a moved start is far from the warm starts */
}

void mlc_fullspace_com(const mlc_fullspace *fs, const double *x, double com[3]) {
    double c[3] = {0, 0, 0};
    for (int i = 0; i < fs->nv; i++)
        for (int k = 0; k < 3; k++)
            c[k] += fs->mass[i] * x[3 * i + k];
    for (int k = 0; k < 3; k++)
        com[k] = c[k] / fs->total_mass;
}

/* Σ_e V_e F_e(x) = Σ_v x_v gb_vᵀ (3×3 column-major): the body rotation's matrix of Eq. 17. */
static void body_matrix(const mlc_fullspace *fs, const double *x, double A[9]) {
    memset(A, 0, 9 * sizeof(double));
    for (int i = 0; i < fs->nv; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                A[k + 3 * j] += x[3 * i + k] * fs->gb[3 * i + j];
}

void mlc_fullspace_rotation(const mlc_fullspace *fs, const double *x, double R[9]) {
    double A[9], q[4] = {1, 0, 0, 0};
    body_matrix(fs, x, A);
    mlc_polar(A, q, R);
}

/* ---- one step ------------------------------------------------------------------------------- */

/* F_e = Σ_a x_{v_a} ∇φ_aᵀ (3×3 column-major) for interleaved x. */
static inline void tet_F(const mlc_fullspace *fs, const double *restrict x, int e, double F[9]) {
    const int *t = fs->T + 4 * (size_t)e;
    const double *g = fs->grad + 12 * (size_t)e;
    for (int i = 0; i < 9; i++)
        F[i] = 0;
    for (int a = 0; a < 4; a++) {
        const double *xa = x + 3 * t[a], *ga = g + 3 * a;
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                F[k + 3 * j] += xa[k] * ga[j];
    }
}

/* C = A B for 3×3 column-major matrices. */
static inline void mul33(const double A[9], const double B[9], double C[9]) {
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            C[i + 3 * j] = A[i] * B[3 * j] + A[i + 3] * B[3 * j + 1] + A[i + 6] * B[3 * j + 2];
}

/* The terms V P ∇φ_a of tet e for its four vertices (∂/∂x_a of tr(Pᵀ F_e) = P ∇φ_a), corner a
 * and axis k at t[3a + k]. */
static inline void tet_terms(const mlc_fullspace *fs, int e, const double P[9], double s,
                             double *restrict t) {
    const double *g = fs->grad + 12 * (size_t)e;
    for (int a = 0; a < 4; a++) {
        const double *ga = g + 3 * a;
        for (int k = 0; k < 3; k++)
            t[3 * a + k] = s * (P[k] * ga[0] + P[k + 3] * ga[1] + P[k + 6] * ga[2]);
    }
}

/* Tet e's terms t (corner a, axis k at t[3a + k]) into their slots of fs->tb. */
static inline void store_terms(const mlc_fullspace *fs, int e, const double *restrict t) {
    const int *slot = fs->tslot + 4 * (size_t)e;
    for (int a = 0; a < 4; a++) {
        double *tb = fs->tb + slot[a];
        tb[0] = t[3 * a], tb[1] = t[3 * a + 1], tb[2] = t[3 * a + 2];
    }
}

/* b[3v + k] = b0[3v + k] (NULL: 0) + the terms of v's tets, in tet order (fs->tb). */
static inline void gather_vertex(const mlc_fullspace *fs, int v, const double *b0,
                                 double *restrict b) {
    double s[3];
    for (int k = 0; k < 3; k++)
        s[k] = b0 ? b0[3 * (size_t)v + k] : 0;
    for (int p = fs->inc_ptr[v]; p < fs->inc_ptr[v + 1]; p++) {
        const double *t = fs->tb + 3 * (size_t)p;
        for (int k = 0; k < 3; k++)
            s[k] += t[k];
    }
    for (int k = 0; k < 3; k++)
        b[3 * (size_t)v + k] = s[k];
}

/* Complementarity contact, as sim_step.c's (contact.h): normal targets from x_n (the ground,
 * or at most push_speed·h above a penetrating sample; "velocity": y_n), friction targets
 * x_n + μ_c (x_n − x_{n−1}); a force on sample s moves every coordinate block by Q⁻¹ e_s.
 * xs is x* (nv×3 blocks), x (3×nv) receives the correction. Returns the samples in contact. */
static int contact_complementarity(mlc_fullspace *fs, const double *xs, double *x,
                                   int first_iteration) {
    const mlc_sim_settings *set = &fs->set;
    const int ns = fs->ns, nv = fs->nv;
    const size_t nvs = (size_t)nv;
    if (first_iteration)
        for (int s = 0; s < ns; s++) {
            double g = set->ground, yn = fs->xsc[3 * s + 1];
            if (set->projection_velocity)
                g = fmin(g, yn);
            else if (yn < g - fs->ground_tol)
                g = fmin(g, yn + set->push_speed * set->dt);
            fs->yt[s] = g;
        }
    for (int s = 0; s < ns; s++)
        fs->yst[s] = xs[3 * (size_t)fs->samples[s] + 1];
    mlc_contact *cs = &fs->cs;
    int np = mlc_contact_solve_normal(cs, fs->yst, fs->yt);
    for (int k = 0; k < 3 && np > 0; k += 2) {
        for (int b = 0; b < np; b++) {
            int s = cs->contact[b];
            const double *xo = fs->xsc + 3 * s, *xq = fs->xsp + 3 * s;
            fs->ct[b] = xo[k] + set->damping * (xo[k] - xq[k]) - xs[3 * (size_t)fs->samples[s] + k];
        }
        mlc_contact_solve_friction(cs, k, fs->ct);
    }
    for (int b = 0; b < np; b++) {
        int s = cs->contact[b];
        const double *g = fs->QiE + nvs * s;
        for (int k = 0; k < 3; k++) {
            double f = cs->lam[(size_t)k * ns + s];
            for (int i = 0; i < nv; i++)
                x[3 * i + k] += g[i] * f;
        }
    }
    return np;
}

/* Terrain contact, as sim_step.c's contact_terrain: each sample's frame and half-space from
 * its closest terrain feature at x_n (once a step), the normal problem on Dn, friction per
 * tangent axis on Dt1 (anisotropic bounds) and Dt2. */
static int contact_terrain(mlc_fullspace *fs, const double *xs, double *x, int first_iteration) {
    const mlc_sim_settings *set = &fs->set;
    const int ns = fs->ns, nv = fs->nv;
    const size_t nvs = (size_t)nv;
    mlc_terrain_contact *tc = &fs->tc;
    if (first_iteration)
        mlc_terrain_contact_update(tc, &fs->terrain, fs->Dss, fs->fric, fs->xsc, 3, 1,
                                   fs->ground_tol, set->push_speed * set->dt,
                                   set->projection_velocity);
    for (int s = 0; s < ns; s++) {
        const double *n = tc->frame + 9 * (size_t)s;
        int v = fs->samples[s];
        const double *xv = xs + 3 * (size_t)v;
        fs->yst[s] = n[0] * xv[0] + n[1] * xv[1] + n[2] * xv[2];
    }
    mlc_contact *cs = &fs->cs;
    int np = mlc_contact_solve_normal(cs, fs->yst, tc->target);
    for (int a = 1; a <= 2 && np > 0; a++) {
        for (int b = 0; b < np; b++) {
            int s = cs->contact[b], v = fs->samples[s];
            const double *t = tc->frame + 9 * (size_t)s + 3 * a;
            const double *xo = fs->xsc + 3 * s, *xq = fs->xsp + 3 * s;
            double w = 0;
            for (int k = 0; k < 3; k++)
                w += t[k] * (xo[k] + set->damping * (xo[k] - xq[k]) - xs[3 * (size_t)v + k]);
            fs->ct[b] = w;
        }
        if (a == 1)
            mlc_contact_solve_friction_box(cs, 0, fs->ct, tc->Dt1, tc->mu1l, tc->mu1h);
        else
            mlc_contact_solve_friction_box(cs, 2, fs->ct, tc->Dt2, tc->mu2, tc->mu2);
    }
    for (int b = 0; b < np; b++) {
        int s = cs->contact[b];
        const double *g = fs->QiE + nvs * s, *f = tc->frame + 9 * (size_t)s;
        double ln = cs->lam[(size_t)ns + s], l1 = cs->lam[s], l2 = cs->lam[2 * (size_t)ns + s];
        for (int k = 0; k < 3; k++) {
            double fk = ln * f[k] + l1 * f[3 + k] + l2 * f[6 + k];
            for (int i = 0; i < nv; i++)
                x[3 * i + k] += g[i] * fk;
        }
    }
    return np;
}

/* The contact solver's kept factors name slots: forget them when a slot changes vertex. */
static void surface_invalidate(mlc_fullspace *fs) {
    mlc_contact *cs = &fs->csurf;
    cs->fnp = cs->anp = -1;
    cs->bnf[0] = cs->bnf[1] = -1;
}

/* A slot for a new column: the next free one, else the one whose vertex was near its target
 * longest ago (not this step) and carries no force; −1 when every slot is in use this step. */
static int surface_slot(mlc_fullspace *fs) {
    if (fs->nfill < fs->cap) return fs->nfill++;
    const mlc_contact *cs = &fs->csurf;
    int best = -1;
    for (int s = 0; s < fs->cap; s++)
        if (fs->slot_seen[s] < fs->step && cs->lam[(size_t)fs->cap + s] == 0 &&
            (best < 0 || fs->slot_seen[s] < fs->slot_seen[best]))
            best = s;
    if (best < 0) return -1;
    mlc_contact *w = &fs->csurf;
    for (int k = 0; k < 3; k++)
        w->lam[(size_t)k * fs->cap + best] = 0, w->fside[(size_t)k * fs->cap + best] = 0;
    fs->slot_of[fs->slot_v[best]] = -1;
    surface_invalidate(fs);
    return best;
}

/* Columns Q⁻¹ e_v for the n vertices v (none cached), solved three at a time with the kept
 * factor on the step's threads (mlc_cholsolve_unit3: the same bits for any thread count), and
 * their rows and columns of the slots' Delassus matrix (entry (u, s) from the column of
 * the later slot filled, for both triangles: symmetric). 0, or a negative status. */
static int surface_columns(mlc_fullspace *fs, const int *verts, int n) {
    const size_t nvs = (size_t)fs->nv;
    for (int b0 = 0; b0 < n; b0 += 3) {
        const int nb = MLC_MIN(n - b0, 3);
        int slots[3];
        double *cols[3];
        for (int j = 0; j < nb; j++) {
            if ((slots[j] = surface_slot(fs)) < 0 && surface_grow(fs)) slots[j] = surface_slot(fs);
            if (slots[j] < 0) {
                fs->failure = fs->cap < fs->cap_max
                                  ? "out of memory growing the contact columns"
                                  : "more surface vertices near the ground at once than contact "
                                    "columns";
                return MLC_ENOMEM;
            }
            fs->slot_v[slots[j]] = verts[b0 + j];
            fs->slot_of[verts[b0 + j]] = slots[j];
            fs->slot_seen[slots[j]] = fs->step;
        }
        for (int j = 0; j < nb; j++) /* after any growth above, which moves QiEc */
            cols[j] = fs->QiEc + nvs * (size_t)slots[j];
        mlc_cholsolve_unit3(&fs->qs3, verts + b0, nb, cols);
        fs->columns_solved += nb;
        const size_t cap = (size_t)fs->cap;
        for (int j = 0; j < nb; j++) {
            const int sl = slots[j];
            for (int u = 0; u < fs->nfill; u++) {
                const double d = cols[j][fs->slot_v[u]];
                fs->Dc[u + cap * sl] = d;
                fs->Dc[sl + cap * u] = d;
            }
        }
    }
    return 0;
}

/* x += Σ_b Q⁻¹ e_{v_b} f_b over the nc contacts (slots sl[b], forces f[3b..3b+2] per axis), in
 * blocks of vertices, each coordinate receiving the contacts' terms in contact order: the same
 * sums for any thread count (the column-by-column loop's, bit for bit). */
static void surface_correct(mlc_fullspace *fs, const int *sl, const double *f, int nc,
                            double *restrict x) {
    enum { BLOCK = 512 };
    const int nv = fs->nv, nblocks = (nv + BLOCK - 1) / BLOCK;
    const size_t nvs = (size_t)nv;
    const double *restrict Q = fs->QiEc;
#pragma omp parallel for schedule(static) num_threads(fs->threads) if (fs->threads > 1)
    for (int blk = 0; blk < nblocks; blk++) {
        const int i0 = blk * BLOCK, n = MLC_MIN(BLOCK, nv - i0);
        double *restrict xb = x + 3 * (size_t)i0;
        for (int b = 0; b < nc; b++) {
            const double *restrict g = Q + nvs * (size_t)sl[b] + i0;
            const double f0 = f[3 * b], f1 = f[3 * b + 1], f2 = f[3 * b + 2];
            for (int i = 0; i < n; i++) {
                xb[3 * i] += g[i] * f0;
                xb[3 * i + 1] += g[i] * f1;
                xb[3 * i + 2] += g[i] * f2;
            }
        }
    }
}

/* Contact on every surface vertex (complementarity on the flat ground, as
 * contact_complementarity on samples): a broad phase takes every surface vertex whose y at x*
 * is within MLC_FULLSPACE_CONTACT_MARGIN × extent of its target; those without a cached column
 * get one. The problem is solved on the slots (the cached vertices), x corrected, and every
 * other surface vertex checked at the corrected x: one below its target gets a column and the
 * problem is solved again. So the contact set and forces are those of the problem over all
 * surface vertices. Returns the vertices in contact, or a negative status. */
static int contact_surface(mlc_fullspace *fs, const double *xs, double *x) {
    const mlc_sim_settings *set = &fs->set;
    const int nv = fs->nv;
    const size_t nvs = (size_t)nv, v3 = 3 * nvs;
    const double margin = MLC_FULLSPACE_CONTACT_MARGIN * fs->extent;
    mlc_contact *cs = &fs->csurf;
    int nw = 0;
    for (int i = 0; i < fs->nsurf; i++) {
        const int v = fs->surf[i];
        if (xs[3 * (size_t)v + 1] < surface_target(fs, v) + margin) {
            if (fs->slot_of[v] >= 0)
                fs->slot_seen[fs->slot_of[v]] = fs->step;
            else
                fs->want[nw++] = v;
        }
    }
    for (int round = 0;; round++) {
        if (nw > 0) {
            int st = surface_columns(fs, fs->want, nw);
            if (st < 0) return st;
        }
        for (int sl = 0; sl < fs->nfill; sl++) {
            const int v = fs->slot_v[sl];
            fs->sy[sl] = xs[3 * (size_t)v + 1];
            fs->sg[sl] = surface_target(fs, v);
        }
        fs->runs[0] = 0, fs->runs[1] = fs->nfill;
        const int np = mlc_contact_solve_normal_live(cs, fs->sy, fs->sg, &fs->live);
        for (int k = 0; k < 3 && np > 0; k += 2) {
            for (int b = 0; b < np; b++) {
                const int v = fs->slot_v[cs->contact[b]];
                const double xo = fs->xc[3 * (size_t)v + k], xq = fs->xp[3 * (size_t)v + k];
                fs->sct[b] = xo + set->damping * (xo - xq) - xs[3 * (size_t)v + k];
            }
            mlc_contact_solve_friction(cs, k, fs->sct);
        }
        const size_t cap = (size_t)fs->cap; /* after any growth */
        for (int b = 0; b < np; b++)        /* the forces by contact, axis-interleaved */
            for (int k = 0; k < 3; k++)
                fs->sct[3 * b + k] = cs->lam[(size_t)k * cap + cs->contact[b]];
        surface_correct(fs, cs->contact, fs->sct, np, x);
        nw = 0;
        for (int i = 0; i < fs->nsurf; i++) {
            const int v = fs->surf[i];
            if (fs->slot_of[v] < 0 && x[3 * (size_t)v + 1] < surface_target(fs, v) - fs->ground_tol)
                fs->want[nw++] = v;
        }
        if (nw == 0) return np;
        if (round >= MLC_FULLSPACE_CONTACT_ROUNDS) return np; /* the next iteration takes them */
        memcpy(x, xs, sizeof(double) * v3); /* back to x*: solve again with the new columns */
    }
}

/* F_e = Σ_{a<3} (x_a − x_3) ∇φ_aᵀ (the four shape gradients sum to zero) of the tets
 * e0 .. e0+n−1 as rows of problems (mlc_polar_lanes: F_kj of tet e0+p at F[(3k + j)·ld + p]),
 * the rows padded to a multiple of 4 with zeros. */
static void chunk_F(const mlc_fullspace *fs, const double *restrict x, int e0, int n,
                    double *restrict F, size_t ld) {
    for (int p = 0; p < n; p++) {
        const int e = e0 + p, *t = fs->T + 4 * (size_t)e;
        const double *g = fs->g3 + 9 * (size_t)e, *x3 = x + 3 * (size_t)t[3];
        double f[9] = {0};
        for (int a = 0; a < 3; a++) {
            const double *xa = x + 3 * (size_t)t[a], *ga = g + 3 * a;
            const double d[3] = {xa[0] - x3[0], xa[1] - x3[1], xa[2] - x3[2]};
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++)
                    f[3 * k + j] += d[k] * ga[j];
        }
        for (int r = 0; r < 9; r++)
            F[r * ld + p] = f[r];
    }
    for (int p = n; p % 4; p++)
        for (int r = 0; r < 9; r++)
            F[r * ld + p] = 0;
}

/* The passive terms μ_e V_e R ∇φ_a of tet e0+p for its corners a < 3 (t[3a + k]; corner 3's is
 * minus their sum), R as rows of problems (R_kj at R[(3k + j)·ld + p]). */
static inline void chunk_terms(const mlc_fullspace *fs, const double *restrict R, size_t ld, int e0,
                               int p, double t[9]) {
    const double *g = fs->g3 + 9 * (size_t)(e0 + p), sc = fs->muv[e0 + p];
    const double R00 = R[p], R01 = R[ld + p], R02 = R[2 * ld + p], R10 = R[3 * ld + p],
                 R11 = R[4 * ld + p], R12 = R[5 * ld + p], R20 = R[6 * ld + p], R21 = R[7 * ld + p],
                 R22 = R[8 * ld + p];
    for (int a = 0; a < 3; a++) {
        const double *ga = g + 3 * a;
        t[3 * a] = sc * (R00 * ga[0] + R01 * ga[1] + R02 * ga[2]);
        t[3 * a + 1] = sc * (R10 * ga[0] + R11 * ga[1] + R12 * ga[2]);
        t[3 * a + 2] = sc * (R20 * ga[0] + R21 * ga[1] + R22 * ga[2]);
    }
}

/* The reference's local step and right-hand side (one rotation per tet, one actuation cluster):
 * the actuation terms γV Ω Y_e ∇φ_a are linear in the one Ω, so their sum per vertex is Ω w_v
 * with w_v = Σ γV Y_e ∇φ_a formed once a step (actuation_targets), and so is the cluster's
 * matrix, H = Σ_e γV F_e Y_eᵀ = Σ_v x_v w_vᵀ: a pass over the vertices gives Ω (its sum by
 * blocks of vertices, added in block order), and one pass over the tets (F, the rotations of a
 * chunk together by mlc_polar_lanes, the passive terms V μ_e R_e ∇φ_a) the rest. Each block of tets
 * adds its terms, in tet order, into its own slots (scatter_blocks: a buffer small enough to stay
 * in cache, where one array of every term would not); then each vertex sums b0 + Ω w_v and its
 * slots in block order. The blocks do not depend on the thread count, so neither do the bits. */
static void local_and_rhs_reference(mlc_fullspace *fs, const double *x, double *restrict b) {
    enum { CH = MLC_FULLSPACE_POLAR_CHUNK };
    const int nt = fs->nt, nv = fs->nv;
    const size_t ldq = fs->qs_ld;
    const double *Om = fs->Om;
    const int *restrict cslot = fs->corner_slot;
    double *restrict buf = fs->bbuf, *restrict hpart = fs->hpart;
    const int hblocks = (nv + MLC_FULLSPACE_SUM_BLOCK - 1) / MLC_FULLSPACE_SUM_BLOCK;
#pragma omp parallel num_threads(fs->threads) if (fs->threads > 1)
    {
        /* H's parts by blocks of vertices (the passive terms below do not need Ω) */
#pragma omp for schedule(static) nowait
        for (int k = 0; k < hblocks; k++) {
            double h[9] = {0};
            const int v1 = MLC_MIN(nv, (k + 1) * MLC_FULLSPACE_SUM_BLOCK);
            for (int v = k * MLC_FULLSPACE_SUM_BLOCK; v < v1; v++) {
                const double *xv = x + 3 * (size_t)v, *w = fs->wv + 3 * (size_t)v;
                for (int j = 0; j < 3; j++)
                    for (int i = 0; i < 3; i++)
                        h[i + 3 * j] += xv[i] * w[j];
            }
            memcpy(hpart + 9 * (size_t)k, h, sizeof h);
        }
#pragma omp for schedule(static)
        for (int k = 0; k < fs->nblk; k++) {
            memset(buf + 3 * (size_t)fs->blk_slot[k], 0,
                   sizeof(double) * 3 * (size_t)(fs->blk_slot[k + 1] - fs->blk_slot[k]));
            for (int ch = fs->blk_chunk[k]; ch < fs->blk_chunk[k + 1]; ch++) {
                const int e0 = ch * CH, n = MLC_MIN(nt - e0, CH);
                double F[9 * CH], R[9 * CH];
                chunk_F(fs, x, e0, n, F, CH);
                mlc_polar_lanes(n, F, CH, fs->qs + e0, ldq, R, CH, NULL);
                for (int p = 0; p < n; p++) {
                    const int *cs = cslot + 4 * (size_t)(e0 + p);
                    double t[9];
                    chunk_terms(fs, R, CH, e0, p, t);
                    for (int a = 0; a < 3; a++) {
                        double *bv = buf + cs[a];
                        bv[0] += t[3 * a], bv[1] += t[3 * a + 1], bv[2] += t[3 * a + 2];
                    }
                    double *bv = buf + cs[3];
                    bv[0] += -(t[0] + t[3] + t[6]);
                    bv[1] += -(t[1] + t[4] + t[7]);
                    bv[2] += -(t[2] + t[5] + t[8]);
                }
            }
        }
#pragma omp single
        {
            double H[9] = {0};
            for (int k = 0; k < hblocks; k++)
                for (int i = 0; i < 9; i++)
                    H[i] += hpart[9 * (size_t)k + i];
            mlc_polar(H, fs->qa, fs->Om);
        }
#pragma omp for schedule(static)
        for (int v = 0; v < nv; v++) {
            const double *w = fs->wv + 3 * (size_t)v, *b0 = fs->b0 + 3 * (size_t)v;
            double s[3];
            for (int k = 0; k < 3; k++)
                s[k] = b0[k] + (Om[k] * w[0] + Om[k + 3] * w[1] + Om[k + 6] * w[2]);
            for (int p = fs->vslot_ptr[v]; p < fs->vslot_ptr[v + 1]; p++) {
                const double *t = buf + fs->vslot[p];
                s[0] += t[0], s[1] += t[1], s[2] += t[2];
            }
            for (int k = 0; k < 3; k++)
                b[3 * (size_t)v + k] = s[k];
        }
    }
}

/* Local step (1) and right-hand side (2) at iterate x: fills fs->Rp, fs->Om and b. The
 * reference (one rotation per tet, one actuation cluster) is local_and_rhs_reference; here the
 * per-cluster rotations or several actuation clusters. The per-tet work runs on fs->threads
 * threads, each tet writing only its own slots (its rotation, its V F Yᵀ, its right-hand-side
 * terms); the sums over tets are then formed in tet order, per cluster and per vertex: the same
 * bits for any thread count. */
static void local_and_rhs(mlc_fullspace *fs, const double *x, double *restrict b) {
    const int nt = fs->nt, nca = fs->nca, nv = fs->nv;
    const int per_tet = fs->npr == nt;
    if (per_tet && nca == 1) {
        local_and_rhs_reference(fs, x, b);
        return;
    }
    const double mu = fs->set.mu, gam = fs->set.gamma;
    /* per tet, in chunks: F (into tF), V F Yᵀ, and per tet the chunk's rotations together
     * (mlc_polar_n: the same bits as one mlc_polar each) */
    const int nchunks = (nt + MLC_FULLSPACE_POLAR_CHUNK - 1) / MLC_FULLSPACE_POLAR_CHUNK;
#pragma omp parallel for schedule(static) num_threads(fs->threads) if (fs->threads > 1)
    for (int ch = 0; ch < nchunks; ch++) {
        const int e0 = ch * MLC_FULLSPACE_POLAR_CHUNK,
                  e1 = MLC_MIN(nt, e0 + MLC_FULLSPACE_POLAR_CHUNK);
        for (int e = e0; e < e1; e++) {
            double *F = fs->tF + 9 * (size_t)e, V = fs->vol[e];
            double Vm = fs->wmu ? fs->wmu[e] * V : V, Va = fs->wga ? fs->wga[e] * V : V;
            tet_F(fs, x, e, F);
            if (!per_tet) {
                double *Fe = fs->tFp + 9 * (size_t)e;
                for (int i = 0; i < 9; i++)
                    Fe[i] = Vm * F[i];
            }
            double *H = fs->tH + 9 * (size_t)e; /* V F Yᵀ (unit γ: polar ignores scale) */
            const double *Y = fs->Ye + 9 * (size_t)e;
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++)
                    H[i + 3 * j] = Va * (F[i] * Y[j] + F[i + 3] * Y[j + 3] + F[i + 6] * Y[j + 6]);
        }
        if (per_tet)
            mlc_polar_n(e1 - e0, fs->tF + 9 * (size_t)e0, fs->qp + 4 * (size_t)e0,
                        fs->Rp + 9 * (size_t)e0, NULL);
    }
    memset(fs->Hc, 0, sizeof(double) * 9 * (size_t)nca);
    for (int e = 0; e < nt; e++) {
        double *H = fs->Hc + 9 * fs->acl[e];
        const double *He = fs->tH + 9 * (size_t)e;
        for (int i = 0; i < 9; i++)
            H[i] += He[i];
    }
    if (!per_tet) {
        memset(fs->Fp, 0, sizeof(double) * 9 * (size_t)fs->npr);
        for (int e = 0; e < nt; e++) {
            double *Fc = fs->Fp + 9 * fs->pcl[e];
            const double *Fe = fs->tFp + 9 * (size_t)e;
            for (int i = 0; i < 9; i++)
                Fc[i] += Fe[i];
        }
        for (int c = 0; c < fs->npr; c++)
            mlc_polar(fs->Fp + 9 * c, fs->qp + 4 * c, fs->Rp + 9 * c);
    }
    for (int c = 0; c < nca; c++)
        mlc_polar(fs->Hc + 9 * c, fs->qa + 4 * c, fs->Om + 9 * c);
#pragma omp parallel num_threads(fs->threads) if (fs->threads > 1)
    {
#pragma omp for schedule(static)
        for (int e = 0; e < nt; e++) {
            double P[9], OY[9];
            const double *R = fs->Rp + 9 * fs->pcl[e];
            mul33(fs->Om + 9 * fs->acl[e], fs->Ye + 9 * (size_t)e, OY);
            const double mue = fs->wmu ? mu * fs->wmu[e] : mu,
                         gae = fs->wga ? gam * fs->wga[e] : gam;
            for (int i = 0; i < 9; i++)
                P[i] = mue * R[i] + gae * OY[i];
            double t[12];
            tet_terms(fs, e, P, fs->vol[e], t);
            store_terms(fs, e, t);
        }
#pragma omp for schedule(static)
        for (int v = 0; v < nv; v++)
            gather_vertex(fs, v, fs->b0, b);
    }
}

/* The reference's work Δxᵀ(bᵃ − Qᵃ x) with Δx = x − x_n: Σ_v Δx_v · Ω w_v minus
 * Σ_e γ_e V_e ⟨F_e(x), F_e(Δx)⟩ (the same bracket, its passive-free part summed per tet), by
 * blocks of vertices and of tets on the step's threads, the blocks' parts added in block
 * order: the same bits for any thread count. */
static double reference_work(const mlc_fullspace *fs, const double *xc, const double *x) {
    enum { B = MLC_FULLSPACE_SUM_BLOCK };
    const int nv = fs->nv, nt = fs->nt;
    const int vblocks = (nv + B - 1) / B, tblocks = (nt + B - 1) / B;
    const double *Om = fs->Om;
    double *part = fs->wpart; /* vblocks + tblocks */
#pragma omp parallel num_threads(fs->threads) if (fs->threads > 1)
    {
#pragma omp for schedule(static) nowait
        for (int k = 0; k < vblocks; k++) {
            double act = 0;
            for (int v = k * B; v < MLC_MIN(nv, (k + 1) * B); v++) {
                const double *w = fs->wv + 3 * (size_t)v, *xv = x + 3 * (size_t)v,
                             *cv = xc + 3 * (size_t)v;
                for (int i = 0; i < 3; i++)
                    act += (xv[i] - cv[i]) * (Om[i] * w[0] + Om[i + 3] * w[1] + Om[i + 6] * w[2]);
            }
            part[k] = act;
        }
#pragma omp for schedule(static)
        for (int k = 0; k < tblocks; k++) {
            double pas = 0;
            for (int e = k * B; e < MLC_MIN(nt, (k + 1) * B); e++) {
                const int *t = fs->T + 4 * (size_t)e;
                const double *g = fs->g3 + 9 * (size_t)e, *x3 = x + 3 * (size_t)t[3],
                             *c3 = xc + 3 * (size_t)t[3];
                double F[9] = {0}, D[9] = {0};
                for (int a = 0; a < 3; a++) {
                    const double *xa = x + 3 * (size_t)t[a], *ca = xc + 3 * (size_t)t[a],
                                 *ga = g + 3 * a;
                    for (int i = 0; i < 3; i++) {
                        const double d = xa[i] - x3[i], dd = (xa[i] - ca[i]) - (x3[i] - c3[i]);
                        for (int j = 0; j < 3; j++)
                            F[3 * i + j] += d * ga[j], D[3 * i + j] += dd * ga[j];
                    }
                }
                double fd = 0;
                for (int i = 0; i < 9; i++)
                    fd += F[i] * D[i];
                pas += (fs->wga ? fs->set.gamma * fs->wga[e] : fs->set.gamma) * fs->vol[e] * fd;
            }
            part[vblocks + k] = pas;
        }
    }
    double act = 0, pas = 0;
    for (int k = 0; k < vblocks; k++)
        act += part[k];
    for (int k = 0; k < tblocks; k++)
        pas += part[vblocks + k];
    return act - pas;
}

/* Y_e(ā) = ā_m I + Σ_i a_i Yhat[e, i] per tet for this step's ā (fs->abar), and with one
 * actuation cluster (fs->wv) w_v = Σ_{(e,a)∋v} γ_e V_e Y_e ∇φ_a (3×nv) in tet order (fs->tb as
 * scratch): the actuation terms of the right-hand side are then Ω w_v. Per tet, then per
 * vertex: the same bits for any thread count. */
static void actuation_targets(mlc_fullspace *fs) {
    const int nt = fs->nt, nv = fs->nv, m = fs->m;
    const double *abar = fs->abar;
    if (fs->Wm) { /* the reference: w = Σ_i ā_i W_i, no per-tet targets */
        const size_t v3 = 3 * (size_t)nv;
#pragma omp parallel for schedule(static) num_threads(fs->threads) if (fs->threads > 1)
        for (size_t j = 0; j < v3; j++) {
            double w = 0;
            for (int i = 0; i <= m; i++)
                w += abar[i] * fs->Wm[v3 * (size_t)i + j];
            fs->wv[j] = w;
        }
        return;
    }
#pragma omp parallel num_threads(fs->threads) if (fs->threads > 1)
    {
#pragma omp for schedule(static)
        for (int e = 0; e < nt; e++) {
            double *Y = fs->Ye + 9 * (size_t)e;
            for (int i = 0; i < 9; i++)
                Y[i] = (i % 4 == 0) * abar[m];
            for (int i = 0; i < m; i++) {
                double ai = abar[i];
                if (ai == 0) continue;
                const double *Yh = fs->Yhat + ((size_t)e * m + i) * 9;
                for (int l = 0; l < 9; l++)
                    Y[l] += ai * Yh[l];
            }
            if (fs->wv) {
                double t[12];
                tet_terms(fs, e, Y,
                          (fs->wga ? fs->set.gamma * fs->wga[e] : fs->set.gamma) * fs->vol[e], t);
                store_terms(fs, e, t);
            }
        }
        if (fs->wv) {
#pragma omp for schedule(static)
            for (int v = 0; v < nv; v++) {
                double s[3] = {0, 0, 0};
                for (int p = fs->inc_ptr[v]; p < fs->inc_ptr[v + 1]; p++)
                    for (int k = 0; k < 3; k++)
                        s[k] += fs->tb[3 * (size_t)p + k];
                for (int k = 0; k < 3; k++)
                    fs->wv[3 * (size_t)v + k] = s[k];
            }
        }
    }
}

/* Anderson acceleration (type II, window m) of the fixed-point map G of one iteration: with
 * the residuals f_j = G(x_j) − x_j of the last iterations, the next iterate is
 * x_{k+1} = G(x_k) − Σ_j γ_j ΔG_j, γ minimizing ‖f_k − Σ_j γ_j ΔF_j‖₂ (ΔF_j, ΔG_j the
 * differences of consecutive f and G(x)), solved by the normal equations with a Tikhonov term
 * of MLC_FULLSPACE_ANDERSON_EPS × their largest diagonal entry. Safeguard: when the residual
 * grew (the last accelerated iterate was worse than the one before), the history is dropped
 * and the plain iterate G(x_k) is kept. xk is x_k; g holds G(x_k) and receives x_{k+1}.
 * Sums in a fixed order: the same bits for any thread count. */
static void anderson_next(mlc_fullspace *fs, const double *restrict xk, double *restrict g) {
    const size_t n = 3 * (size_t)fs->nv;
    const int m = fs->aa_m, have = fs->aa_k > 0, h = fs->aa_head;
    double *restrict fp = fs->aa_f, *restrict gp = fs->aa_g;
    /* One pass over the coordinates for every sum of the update: ‖f‖², the new differences
     * (into slot h, when there is a last iterate), their Gram row and the right-hand side
     * ΔF_aᵀ f over the slots the window will hold. Each sum is taken by blocks of
     * MLC_FULLSPACE_SUM_BLOCK coordinates, each block's part in index order, and the parts
     * added in block order: the same bits for any thread count. The slot is written even when
     * ‖f‖ grew, since a restart empties the window. */
    const int na = have ? MLC_MIN(fs->aa_n + 1, m) : fs->aa_n;
    double r2 = 0, gram_row[MLC_FULLSPACE_ANDERSON_MAX] = {0}, y[MLC_FULLSPACE_ANDERSON_MAX] = {0};
    const double *slot[MLC_FULLSPACE_ANDERSON_MAX];
    for (int a = 0; a < na; a++)
        slot[a] = fs->aa_dF + n * (size_t)a;
    double *dF = fs->aa_dF + n * (size_t)h, *dG = fs->aa_dG + n * (size_t)h;
    enum { PART = 1 + 2 * MLC_FULLSPACE_ANDERSON_MAX };
    const long long blocks = ((long long)n + MLC_FULLSPACE_SUM_BLOCK - 1) / MLC_FULLSPACE_SUM_BLOCK;
#pragma omp parallel for schedule(static) num_threads(fs->threads) if (fs->threads > 1)
    for (long long k = 0; k < blocks; k++) {
        const size_t i0 = (size_t)k * MLC_FULLSPACE_SUM_BLOCK,
                     i1 = MLC_MIN(n, i0 + MLC_FULLSPACE_SUM_BLOCK);
        double pr2 = 0, pg[MLC_FULLSPACE_ANDERSON_MAX] = {0}, py[MLC_FULLSPACE_ANDERSON_MAX] = {0};
        for (size_t i = i0; i < i1; i++) {
            double f = g[i] - xk[i];
            pr2 += f * f;
            if (have) {
                double df = f - fp[i];
                dF[i] = df, dG[i] = g[i] - gp[i];
                for (int c = 0; c < na; c++)
                    pg[c] += df * slot[c][i];
            }
            for (int a = 0; a < na; a++)
                py[a] += slot[a][i] * f;
            fp[i] = f, gp[i] = g[i];
        }
        double *part = fs->aa_part + (size_t)k * PART;
        part[0] = pr2;
        for (int a = 0; a < na; a++)
            part[1 + a] = pg[a], part[1 + MLC_FULLSPACE_ANDERSON_MAX + a] = py[a];
    }
    for (long long k = 0; k < blocks; k++) {
        const double *part = fs->aa_part + (size_t)k * PART;
        r2 += part[0];
        for (int a = 0; a < na; a++)
            gram_row[a] += part[1 + a], y[a] += part[1 + MLC_FULLSPACE_ANDERSON_MAX + a];
    }
    if (have && !(r2 <= fs->aa_r2)) { /* grew: restart from the plain iterate */
        fs->aa_n = fs->aa_head = 0;
        fs->aa_k = 1;
        fs->aa_r2 = r2;
        return;
    }
    if (have) { /* slot h is the newest difference; its Gram entries */
        fs->aa_head = (h + 1) % m;
        fs->aa_n = na;
        for (int c = 0; c < na; c++) {
            fs->aa_gram[h + MLC_FULLSPACE_ANDERSON_MAX * c] = gram_row[c];
            fs->aa_gram[c + MLC_FULLSPACE_ANDERSON_MAX * h] = gram_row[c];
        }
    }
    fs->aa_k++;
    fs->aa_r2 = r2;
    if (na == 0) return;
    double A[MLC_FULLSPACE_ANDERSON_MAX * MLC_FULLSPACE_ANDERSON_MAX];
    double dmax = 0;
    for (int a = 0; a < na; a++) {
        for (int c = 0; c <= a; c++) /* kept from the iteration that filled the later slot */
            A[a + na * c] = A[c + na * a] = fs->aa_gram[a + MLC_FULLSPACE_ANDERSON_MAX * c];
        dmax = fmax(dmax, A[a + na * a]);
    }
    if (!(dmax > 0)) return;
    const double eps = MLC_FULLSPACE_ANDERSON_EPS * dmax;
    for (int a = 0; a < na; a++)
        A[a + na * a] += eps;
    mlc_dense_cholesky(A, (size_t)na, na, eps);
    mlc_dense_cholesky_solve(A, (size_t)na, na, y);
    /* g −= ΔG y, each coordinate's terms in slot order: independent coordinates, so threads */
    const double *dGs[MLC_FULLSPACE_ANDERSON_MAX];
    for (int a = 0; a < na; a++)
        dGs[a] = fs->aa_dG + n * (size_t)a;
    const long long nn = (long long)n;
#pragma omp parallel for schedule(static) num_threads(fs->threads) if (fs->threads > 1)
    for (long long i = 0; i < nn; i++) {
        double gi = g[i];
        for (int a = 0; a < na; a++)
            gi -= y[a] * dGs[a][i];
        g[i] = gi;
    }
}

/* xi ← x (the iterate the step started from), x ← xs (the tentative solve), on the step's
 * threads. */
static void copy_iterate(mlc_fullspace *fs, double *restrict x, const double *restrict xs) {
    double *restrict xi = fs->xi;
    const long long n = 3 * (long long)fs->nv;
#pragma omp parallel for schedule(static) num_threads(fs->threads) if (fs->threads > 1)
    for (long long i = 0; i < n; i++) {
        xi[i] = x[i];
        x[i] = xs[i];
    }
}

/* max_i |x_i − xi_i| by fmax (a NaN term is skipped, as fmax does; the caller treats a
 * non-finite answer as no convergence). A maximum is exact in any order, so the threads'
 * parts give the one-thread answer. */
static double largest_change(mlc_fullspace *fs, const double *restrict x) {
    const double *restrict xi = fs->xi;
    const long long n = 3 * (long long)fs->nv;
    double change = 0;
#pragma omp parallel num_threads(fs->threads) if (fs->threads > 1)
    {
        double part = 0;
#pragma omp for schedule(static) nowait
        for (long long i = 0; i < n; i++)
            part = fmax(part, fabs(x[i] - xi[i]));
#pragma omp critical(mlc_fullspace_change)
        change = fmax(change, part);
    }
    return change;
}

int mlc_fullspace_step(mlc_fullspace *fs, const mlc_actuation *act) {
    const mlc_sim_settings *set = &fs->set;
    const int nv = fs->nv, nt = fs->nt, ns = fs->ns, m = fs->m;
    const size_t v3 = 3 * (size_t)nv, nvs = (size_t)nv;
    const double ih2 = 1.0 / (set->dt * set->dt);
    double *restrict xc = fs->xc, *restrict xp = fs->xp, *restrict x = fs->xn;
    double *b = fs->rhs;

    /* ---- per-step constants: ā(t_{n+1}), Y_e(ā), q, b0 = M q/h² + M g ---- */
    double t = (fs->step + 1) * set->dt;
    mlc_actuation_eval(act, m, t, set->ramp, fs->abar);
    actuation_targets(fs);
    for (size_t i = 0; i < v3; i++)
        fs->q[i] = 2 * xc[i] - xp[i];
    const double ra = set->rayleigh[0] / set->dt, rb = set->rayleigh[1] / set->dt;
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++)
            fs->b0[3 * i + k] =
                fs->mass[i] * (ih2 * fs->q[3 * i + k] + set->gravity[k] + ra * xc[3 * i + k]);
    if (fs->K) { /* + β K x_n / h */
        double *xn = fs->Xn->x, one[2] = {1, 0}, zero[2] = {0, 0};
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++)
                xn[i + nvs * k] = xc[3 * i + k];
        if (!cholmod_sdmult(fs->K, 0, one, zero, fs->Xn, fs->KX, &fs->cc)) return MLC_ENOMEM;
        const double *kx = fs->KX->x;
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++)
                fs->b0[3 * i + k] += rb * kx[i + nvs * k];
    }
    int contact = set->contact && (ns > 0 || fs->surface);
    /* The reference solves the equality model in its own loop below (sim_step.c: one switch). */
    const int equality = set->contact_model == MLC_CONTACT_EQUALITY;
    if (contact && !fs->surface)
        for (int s = 0; s < ns; s++)
            for (int k = 0; k < 3; k++) {
                fs->xsc[3 * s + k] = xc[3 * fs->samples[s] + k];
                fs->xsp[3 * s + k] = xp[3 * fs->samples[s] + k];
            }

    /* ---- local-global iterations (order of docs/method.md §6), from q, to the stopping rule,
     * Anderson-accelerated (anderson_next) ---- */
    if (fs->stop.tolerance > 0) /* converged steps: start where the last step's answer lay */
        for (size_t i = 0; i < v3; i++)
            x[i] = fs->q[i] + fs->dq[i];
    else
        memcpy(x, fs->q, sizeof(double) * v3);
    const double stop_at = fs->stop.tolerance * fs->extent;
    const int accelerate = fs->aa_m > 0 && fs->stop.tolerance > 0;
    double change = INFINITY;
    int it, na = 0;
    fs->aa_n = fs->aa_head = fs->aa_k = 0;
    for (it = 0; it < fs->stop.max_iterations; it++) {
        /* (1) local step and (2) right-hand side, (3) tentative solve x* = Q⁻¹ b */
        local_and_rhs(fs, x, b);
        qsolve(fs, b, fs->xs);
        const double *xs = fs->xs;
        /* (4) contact at x*, (5) x = x* + Q⁻¹ f_c */
        copy_iterate(fs, x, xs);
        na = 0;
        if (contact && fs->surface) {
            na = contact_surface(fs, xs, x);
            if (na < 0) return na;
        } else if (contact && fs->tc.frame) {
            na = contact_terrain(fs, xs, x, it == 0);
        } else if (contact && !equality) {
            na = contact_complementarity(fs, xs, x, it == 0);
        } else if (contact) {
            for (int s = 0; s < ns; s++) {
                double ys = xs[3 * (size_t)fs->samples[s] + 1];
                if (ys < set->ground - fs->ground_tol && ys - fs->xsc[3 * s + 1] < 0) {
                    fs->active[na] = s;
                    fs->ys[na] = ys;
                    na++;
                }
            }
        }
        if (na > 0 && equality) {
            double *Gm = fs->Gm, *Y = fs->Ym, diag = 0;
            for (int a = 0; a < na; a++) {
                int s = fs->active[a], v = fs->samples[s];
                for (int c = 0; c <= a; c++)
                    Gm[a + (size_t)ns * c] = fs->Gss[s + (size_t)ns * fs->active[c]];
                diag += Gm[a + (size_t)ns * a];
                const double *xo = fs->xsc + 3 * s, *xq = fs->xsp + 3 * s;
                double ytarget = set->projection_velocity ? xo[1] : set->ground;
                Y[a] = xo[0] + set->damping * (xo[0] - xq[0]) - xs[3 * (size_t)v];
                Y[a + ns] = ytarget - fs->ys[a];
                Y[a + 2 * ns] = xo[2] + set->damping * (xo[2] - xq[2]) - xs[3 * (size_t)v + 2];
            }
            /* Damped pseudo-inverse, as sim_step.c: Cholesky of L M Lᵀ + εI. */
            double eps = MLC_SIM_CONTACT_RCOND * MLC_SIM_CONTACT_RCOND * diag / na;
            for (int a = 0; a < na; a++)
                Gm[a + (size_t)ns * a] += eps;
            mlc_dense_cholesky(Gm, (size_t)ns, na, eps);
            for (int k = 0; k < 3; k++) {
                double *yk = Y + (size_t)ns * k;
                mlc_dense_cholesky_solve(Gm, (size_t)ns, na, yk);
                for (int a = 0; a < na; a++) {
                    const double *g = fs->GS + nvs * fs->active[a];
                    double ya = yk[a];
                    for (int i = 0; i < nv; i++)
                        x[3 * i + k] += g[i] * ya;
                }
            }
        }
        /* The largest coordinate change: a local, unit-carrying measure (a vertex moved by
         * at most this much), independent of the mesh resolution, unlike ‖Δx‖₂. NaN counts
         * as not converged. */
        change = largest_change(fs, x);
        if (!isfinite(change)) change = INFINITY;
        if (fs->stop.tolerance > 0 && change <= stop_at) {
            it++;
            break;
        }
        /* x = G(xi) is the plain iterate; the accelerated one replaces it */
        if (accelerate && isfinite(change)) anderson_next(fs, fs->xi, x);
    }
    fs->last_iterations = it;
    fs->last_change = change / fs->extent;
    fs->contacts = na;
    fs->conv.steps++;
    fs->conv.iterations += it;
    fs->conv.most_iterations = MLC_MAX(fs->conv.most_iterations, it);
    fs->conv.guard_steps += !(change <= stop_at);
    fs->conv.worst_change = fmax(fs->conv.worst_change, fs->last_change);

    /* ---- work Δxᵀ(bᵃ − Qᵃ x) (Eq. 18 bracket): per tet γV (Ω Y − F) ∇φ_a, with the last
     * iteration's Ω_c and the final x, as the reduced code ---- */
    double work;
    if (fs->Wm) {
        work = reference_work(fs, xc, x);
    } else {
#pragma omp parallel num_threads(fs->threads) if (fs->threads > 1)
        {
#pragma omp for schedule(static)
            for (int e = 0; e < nt; e++) {
                double F[9], OY[9];
                tet_F(fs, x, e, F);
                mul33(fs->Om + 9 * fs->acl[e], fs->Ye + 9 * (size_t)e, OY);
                for (int i = 0; i < 9; i++)
                    OY[i] -= F[i];
                double terms[12];
                tet_terms(fs, e, OY, (fs->wga ? set->gamma * fs->wga[e] : set->gamma) * fs->vol[e],
                          terms);
                store_terms(fs, e, terms);
            }
#pragma omp for schedule(static)
            for (int v = 0; v < nv; v++)
                gather_vertex(fs, v, NULL, b);
        }
        work = 0;
        for (int i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++)
                work += (x[3 * i + k] - xc[3 * i + k]) * b[3 * i + k];
    }
    fs->last_work = work;

    for (size_t i = 0; i < v3; i++)
        fs->dq[i] = x[i] - fs->q[i];
    /* ---- advance ---- */
    fs->xp = xc;
    fs->xc = x;
    fs->xn = xp;
    fs->step++;
    if (!mlc_all_finite(x, v3)) return 1;
    double com[3], d2 = 0;
    mlc_fullspace_com(fs, x, com);
    for (int k = 0; k < 3; k++)
        d2 += (com[k] - fs->com_rest[k]) * (com[k] - fs->com_rest[k]);
    return d2 > 1e6 * fs->extent * fs->extent; /* runaway, as sim_step.c */
}

/* ---- what the objective reads of a frame (objective.h) ----------------------------------------
 */

static void body_rotation(mlc_fullspace *fs, const double *x, double R[9]) {
    double A[9];
    body_matrix(fs, x, A);
    mlc_polar(A, fs->qbody, R);
}

void mlc_fullspace_observe(mlc_fullspace *fs, mlc_fullspace_frame_fn fn, void *user) {
    fs->observer = fn;
    fs->observer_user = user;
}

void mlc_fullspace_notify(const mlc_fullspace *fs, int frame, double time, const double com[3],
                          const double forward[3]) {
    if (fs->observer)
        fs->observer(fs->observer_user, frame, time, fs->xc, com, forward, fs->contacts);
}

void mlc_fullspace_frame_state(mlc_fullspace *fs, mlc_frame_state *f) {
    mlc_fullspace_com(fs, fs->xc, f->com);
    body_rotation(fs, fs->xc, f->R);
    double lowest = INFINITY;
    if (fs->tc.frame) { /* terrain: ground + the smallest distance to it (as sim_step.c) */
        double n[3];
        for (int i = 0; i < fs->ns; i++)
            lowest =
                fmin(lowest, mlc_terrain_query(&fs->terrain, fs->xc + 3 * fs->samples[i], n, NULL));
        lowest += fs->set.ground;
    } else if (fs->surface) {
        for (int i = 0; i < fs->nsurf; i++)
            lowest = fmin(lowest, fs->xc[3 * (size_t)fs->surf[i] + 1]);
    } else {
        for (int i = 0; i < fs->ns; i++)
            lowest = fmin(lowest, fs->xc[3 * fs->samples[i] + 1]);
    }
    f->lowest = lowest;
    f->work = fs->last_work;
    f->abar = fs->abar;
    f->m = fs->m;
    f->contacts = fs->contacts;
}

const mlc_sim_settings *mlc_fullspace_settings(const mlc_fullspace *fs) {
    return &fs->set;
}
const mlc_terrain *mlc_fullspace_terrain(const mlc_fullspace *fs) {
    return &fs->terrain;
}
double mlc_fullspace_extent(const mlc_fullspace *fs) {
    return fs->extent;
}
int mlc_fullspace_solver_status(const mlc_fullspace *fs) {
    return fs->cc.status;
}
const char *mlc_fullspace_failure(const mlc_fullspace *fs) {
    return fs->failure ? fs->failure : "no failure";
}
int mlc_fullspace_surface_vertices(const mlc_fullspace *fs) {
    return fs->surface ? fs->nsurf : 0;
}
int mlc_fullspace_contact_force(const mlc_fullspace *fs, int i, int *vertex, double f[3]) {
    const mlc_contact *cs = fs->surface ? &fs->csurf : &fs->cs;
    if (fs->tc.frame || !mlc_contact_model_forces(fs->set.contact_model) || i < 0 ||
        i >= fs->contacts || i >= cs->np)
        return -1;
    const int s = cs->contact[i], n = cs->ns;
    *vertex = fs->surface ? fs->slot_v[s] : fs->samples[s];
    for (int k = 0; k < 3; k++)
        f[k] = cs->lam[(size_t)k * n + s];
    return 0;
}
long mlc_fullspace_columns_solved(const mlc_fullspace *fs) {
    return fs->columns_solved;
}
