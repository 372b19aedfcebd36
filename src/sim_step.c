/* sim_step.c: reduced time stepping with ground contact, and the rollout objective
 * (METHOD.md §4, §6, §7; 000 App. D–E with the signs of SEEDS_DIGEST §1.5).
 *
 * One step minimizes the backward-Euler incremental potential (Eq. 25/45)
 *   (1/2h²)‖z − q‖²_N − zᵀBᵀMg + E_v(z) + E_a(z, ā),  q = 2z_n − z_{n−1},
 * by local-global iterations. Local: R_c = polar(F_c) per passive cluster (Eq. 30 of 002),
 * Ω_c = polar(H_c), H_c = Σ γV F Y(ā)ᵀ per actuation cluster (Eq. 12–13). Global: Q z = b + f_c
 * with Q = Qᵛ + Qᵃ + N/h² and b = N q/h² + BᵀMg + bᵛ + bᵃ (positive forces; Eq. 46 resolved),
 * bᵛ_k = μ Σ_c G_c R_c[k,:]ᵀ and bᵃ_k = γ Σ_c 𝒦_c(ā) Ω_c[k,:]ᵀ (∂ tr(Rᵀ F_c)/∂t_k, §11).
 * Q = I₃ ⊗ Q₄ (sim_model.c), so a solve is three triangular solve pairs with one 4w×4w factor.
 *
 * Contact (Eq. 47–54 resolved, METHOD §6): after the tentative solve z* = Q⁻¹ b, a sample is
 * active when z* puts it more than 1e-9·extent below the ground while moving down (from z_n);
 * its y ends at the ground ("position" projection) or at y_n ("velocity"), its x and z move by
 * μ_c × the previous step's tangential displacement. The contact force solves L f = d with
 * L = Jᶜ Q⁻¹ and least fᵀ N⁻¹ f: f = N Lᵀ y with (L N Lᵀ) y = d. L N Lᵀ is a na×na submatrix
 * of a precomputed Gram matrix (sim_model.c), the same for the three blocks (normal rows in y,
 * tangents in x and z). It is numerically singular for many samples on a flat patch, so it is
 * solved as a damped pseudo-inverse, (L N Lᵀ + εI) y = d, ε = RCOND² × its mean diagonal
 * (MLC_SIM_CONTACT_RCOND): Lᵀ(LLᵀ+εI)⁻¹ → L⁺ as ε → 0, i.e. the minimum-norm least-squares
 * solution with singular values below ~RCOND × typical damped away; this also covers the
 * over-determined case (na·3 > r). Then z = z* + Q⁻¹ f = z* + (Q⁻¹ N Q⁻¹) S_a y, again
 * precomputed columns. Nothing here allocates: all scratch lives in the rollout.
 */
#include <math.h>
#include <string.h>

#include "modalloco/polar.h"
#include "sim_internal.h"

void mlc_sim_settings_default(mlc_sim_settings *s) {
    memset(s, 0, sizeof *s);
    s->dt = 0.01;
    s->steps = 300;
    s->iterations = 10;
    s->tolerance = 0;
    s->guess_previous = 0;
    s->gravity[1] = -9.81;
    s->contact = 1;
    s->damping = 0.2;
    s->projection_velocity = 0;
    s->ground = 0;
    s->density = 1000;
    s->mu = 1e6;
    s->gamma = 1e6;
}

void mlc_objective_settings_default(mlc_objective_settings *o) {
    memset(o, 0, sizeof *o);
    o->direction[0] = 1;
    o->forward[0] = 1;
    o->align = 1;
}

double mlc_model_extent(const mlc_model *mod) { return mod->extent; }

void mlc_actuation_eval(const mlc_actuation *act, int m, double t, double *abar) {
    for (int i = 0; i < m; i++) abar[i] = 0;
    abar[m] = 1;
    if (!act) return;
    int mm = MLC_MIN(act->m, m);
    for (int i = 0; i < mm; i++) {
        double s = 0;
        for (int j = 0; j < act->k; j++) {
            double A = act->A[i * act->k + j];
            if (A == 0) continue;
            s += A * sin(2 * MLC_PI * (t / act->T[i * act->k + j] + act->theta[i * act->k + j]));
        }
        abar[i] = s;
    }
}

/* ---- rollout lifetime ------------------------------------------------------------------ */

void mlc_rollout_destroy(mlc_rollout *ro) {
    if (!ro) return;
    double *bufs[] = {ro->zc, ro->zp, ro->zn, ro->q, ro->b0, ro->zs0, ro->ba, ro->zs, ro->zi,
                      ro->ys,                      ro->abar, ro->Kc, ro->QiKc, ro->Om, ro->qp, ro->qa, ro->xc, ro->xp, ro->Gm, ro->Ym};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) mlc_free(bufs[i]);
    mlc_free(ro->active);
    mlc_free(ro);
}

mlc_status mlc_rollout_create(const mlc_model *mod, mlc_rollout **out) {
    *out = NULL;
    mlc_rollout *ro = mlc_calloc(1, sizeof *ro);
    if (!ro) return MLC_ENOMEM;
    ro->mod = mod;
    size_t r = (size_t)mod->r, n4 = (size_t)mod->n4, ns = (size_t)MLC_MAX(mod->ns, 1);
    double **vecs[] = {&ro->zc, &ro->zp, &ro->zn, &ro->q, &ro->b0, &ro->zs0, &ro->ba, &ro->zs,
                       &ro->zi};
    int ok = 1;
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        ok &= (*vecs[i] = mlc_calloc(r, sizeof(double))) != NULL;
    ok &= (ro->ys = mlc_calloc(ns, sizeof(double))) != NULL;
    ok &= (ro->abar = mlc_calloc((size_t)mod->ma, sizeof(double))) != NULL;
    ok &= (ro->Kc = mlc_calloc((size_t)mod->nca * n4 * 3, sizeof(double))) != NULL;
    ok &= (ro->QiKc = mlc_calloc((size_t)mod->nca * n4 * 3, sizeof(double))) != NULL;
    ok &= (ro->Om = mlc_calloc((size_t)mod->nca * 9, sizeof(double))) != NULL;
    ok &= (ro->qp = mlc_calloc((size_t)mod->ncp * 4, sizeof(double))) != NULL;
    ok &= (ro->qa = mlc_calloc((size_t)mod->nca * 4, sizeof(double))) != NULL;
    ok &= (ro->xc = mlc_calloc(3 * ns, sizeof(double))) != NULL;
    ok &= (ro->xp = mlc_calloc(3 * ns, sizeof(double))) != NULL;
    ok &= (ro->active = mlc_calloc(ns, sizeof(int))) != NULL;
    ok &= (ro->Gm = mlc_calloc(ns * ns, sizeof(double))) != NULL;
    ok &= (ro->Ym = mlc_calloc(ns * 3, sizeof(double))) != NULL;
    if (!ok) {
        mlc_rollout_destroy(ro);
        return MLC_ENOMEM;
    }
    mlc_rollout_reset(ro);
    *out = ro;
    return MLC_OK;
}

static void reset_rotations(mlc_rollout *ro) {
    const mlc_model *mod = ro->mod;
    for (int c = 0; c < mod->ncp; c++)
        ro->qp[4 * c] = 1, ro->qp[4 * c + 1] = ro->qp[4 * c + 2] = ro->qp[4 * c + 3] = 0;
    for (int c = 0; c < mod->nca; c++)
        ro->qa[4 * c] = 1, ro->qa[4 * c + 1] = ro->qa[4 * c + 2] = ro->qa[4 * c + 3] = 0;
    ro->qbody[0] = 1, ro->qbody[1] = ro->qbody[2] = ro->qbody[3] = 0;
}

void mlc_rollout_reset(mlc_rollout *ro) {
    mlc_model_rest_state(ro->mod, ro->zc);
    mlc_model_rest_state(ro->mod, ro->zp);
    ro->step = 0;
    ro->contacts = 0;
    ro->last_work = 0;
    ro->last_iterations = 0;
    reset_rotations(ro);
}

void mlc_rollout_set_state(mlc_rollout *ro, const double *z, const double *z_prev) {
    size_t r = (size_t)ro->mod->r;
    memcpy(ro->zc, z, sizeof(double) * r);
    memcpy(ro->zp, z_prev, sizeof(double) * r);
    /* Warm starts are only hints, but a rotated start is far from identity: start cold. */
    reset_rotations(ro);
}

const double *mlc_rollout_state(const mlc_rollout *ro) { return ro->zc; }
int mlc_rollout_contacts(const mlc_rollout *ro) { return ro->contacts; }
int mlc_rollout_last_iterations(const mlc_rollout *ro) { return ro->last_iterations; }
double mlc_rollout_last_work(const mlc_rollout *ro) { return ro->last_work; }

void mlc_rollout_set_trace(mlc_rollout *ro, double *buf, int cap) {
    ro->trace = buf;
    ro->trace_cap = buf ? cap : 0;
}

/* ---- small kernels ----------------------------------------------------------------------- */

static inline double dot(const double *restrict a, const double *restrict b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* x ← Q₄⁻¹ x with the lower Cholesky factor L (column-major n×n). */
static void chol_solve(const double *restrict L, int n, double *restrict x) {
    for (int j = 0; j < n; j++) {
        const double *col = L + (size_t)n * j;
        double xj = x[j] / col[j];
        x[j] = xj;
        for (int i = j + 1; i < n; i++) x[i] -= col[i] * xj;
    }
    for (int j = n - 1; j >= 0; j--) {
        const double *col = L + (size_t)n * j;
        double s = x[j];
        for (int i = j + 1; i < n; i++) s -= col[i] * x[i];
        x[j] = s / col[j];
    }
}

/* M (3×3, M[k + 3j] = t_kᵀ G[:, j]) for a 4w×3 map G. */
static inline void block_map(const double *restrict z, const double *restrict G, int n4,
                             double M[9]) {
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++) M[k + 3 * j] = dot(z + k * n4, G + n4 * j, n4);
}

/* b_k += s Σ_j R[k, j] G[:, j] for k = 0..2 (the rhs of tr(Rᵀ F) terms, §11). */
static inline void block_rhs(double *restrict b, const double *restrict G, int n4,
                             const double R[9], double s) {
    for (int k = 0; k < 3; k++) {
        double c0 = s * R[k], c1 = s * R[k + 3], c2 = s * R[k + 6];
        double *bk = b + k * n4;
        for (int i = 0; i < n4; i++) bk[i] += c0 * G[i] + c1 * G[i + n4] + c2 * G[i + 2 * n4];
    }
}

/* ---- one step ---------------------------------------------------------------------------- */

static int finite_vec(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * 0.0; /* NaN/Inf propagate, finite values give 0 */
    return s == 0;
}

static int step_impl(mlc_rollout *ro, const mlc_actuation *act, int forced) {
    const mlc_model *mod = ro->mod;
    const mlc_sim_settings *set = &mod->set;
    const int n4 = mod->n4, r = mod->r, ns = mod->ns, ma = mod->ma, nca = mod->nca;
    const size_t n3 = (size_t)n4 * 3;
    const double ih2 = 1.0 / (set->dt * set->dt), mu = set->mu, gam = set->gamma;
    double *restrict zc = ro->zc, *restrict zp = ro->zp, *restrict z = ro->zn;

    /* ---- per-step constants: ā(t_{n+1}), 𝒦_c(ā), q, b0 = N q/h² + BᵀMg ---- */
    double t = (ro->step + 1) * set->dt;
    mlc_actuation_eval(act, mod->m, t, ro->abar);
    for (int c = 0; c < nca; c++) {
        double *K = ro->Kc + (size_t)c * n3, *QK = ro->QiKc + (size_t)c * n3;
        const double *Kt = mod->Ka + (size_t)c * ma * n3, *QKt = mod->QiKa + (size_t)c * ma * n3;
        memset(K, 0, sizeof(double) * n3);
        memset(QK, 0, sizeof(double) * n3);
        for (int v = 0; v < ma; v++) {
            double av = ro->abar[v];
            if (av == 0) continue;
            const double *Kv = Kt + (size_t)v * n3, *QKv = QKt + (size_t)v * n3;
            for (size_t i = 0; i < n3; i++) K[i] += av * Kv[i], QK[i] += av * QKv[i];
        }
    }
    for (int i = 0; i < r; i++) ro->q[i] = 2 * zc[i] - zp[i];
    for (int k = 0; k < 3; k++) {
        const double *qk = ro->q + k * n4;
        double *bk = ro->b0 + k * n4;
        for (int i = 0; i < n4; i++) bk[i] = set->gravity[k] * mod->gsum[i];
        for (int j = 0; j < n4; j++) {
            double s = ih2 * qk[j];
            const double *Nj = mod->N + (size_t)n4 * j;
            for (int i = 0; i < n4; i++) bk[i] += Nj[i] * s;
        }
    }
    if (forced) {
        /* Fig. 3 contrast: fixed world-frame force γ Σ_c Σ_{i<m} a_i 𝒦_c[i][:, k] on block k. */
        memset(ro->ba, 0, sizeof(double) * (size_t)r);
        for (int c = 0; c < nca; c++)
            for (int v = 0; v < mod->m; v++) {
                double av = gam * ro->abar[v];
                if (av == 0) continue;
                const double *Kv = mod->Ka + ((size_t)c * ma + v) * n3;
                for (int k = 0; k < 3; k++)
                    for (int i = 0; i < n4; i++) ro->ba[k * n4 + i] += av * Kv[i + n4 * k];
            }
        for (int i = 0; i < r; i++) ro->b0[i] += ro->ba[i];
    }
    memcpy(ro->zs0, ro->b0, sizeof(double) * (size_t)r);
    for (int k = 0; k < 3; k++) chol_solve(mod->Lq, n4, ro->zs0 + k * n4);
    /* Sample positions at z_n and z_{n−1} (targets and approach test). */
    int contact = set->contact && ns > 0;
    if (contact)
        for (int s = 0; s < ns; s++) {
            const double *row = mod->S + (size_t)s * n4;
            for (int k = 0; k < 3; k++) {
                ro->xc[3 * s + k] = dot(row, zc + k * n4, n4);
                ro->xp[3 * s + k] = dot(row, zp + k * n4, n4);
            }
        }

    /* ---- local-global iterations ---- */
    memcpy(z, set->guess_previous ? zc : ro->q, sizeof(double) * (size_t)r);
    int it, na = 0;
    const double pscale = forced ? mu + gam : mu;
    for (it = 0; it < set->iterations; it++) {
        /* (1) local step, (2) right-hand side and (3) tentative solve at once: the solve is
         * linear, so z* = Q⁻¹b0 + Σ_c (Q⁻¹G_c) μR_cᵀ + Σ_c (Q⁻¹𝒦_c) γΩ_cᵀ (precomputed). */
        memcpy(ro->zs, ro->zs0, sizeof(double) * (size_t)r);
        for (int c = 0; c < mod->ncp; c++) {
            double F[9], R[9];
            block_map(z, mod->Gp + (size_t)c * n3, n4, F);
            mlc_polar(F, ro->qp + 4 * c, R);
            block_rhs(ro->zs, mod->QiGp + (size_t)c * n3, n4, R, pscale);
        }
        if (!forced)
            for (int c = 0; c < nca; c++) {
                double H[9];
                block_map(z, ro->Kc + (size_t)c * n3, n4, H);
                mlc_polar(H, ro->qa + 4 * c, ro->Om + 9 * c);
                block_rhs(ro->zs, ro->QiKc + (size_t)c * n3, n4, ro->Om + 9 * c, gam);
            }
        /* (4) contact: active set from z*, then the contact correction */
        na = 0;
        if (contact) {
            const double *zsy = ro->zs + n4;
            for (int s = 0; s < ns; s++) {
                double ys = dot(mod->S + (size_t)s * n4, zsy, n4);
                if (ys < set->ground - mod->ground_tol && ys - ro->xc[3 * s + 1] < 0) {
                    ro->active[na] = s;
                    ro->ys[na] = ys; /* keep y* for the target below */
                    na++;
                }
            }
        }
        /* (5) final solve: z = z* + Q⁻¹ f_c = z* + P g */
        if (set->tolerance > 0) memcpy(ro->zi, z, sizeof(double) * (size_t)r);
        memcpy(z, ro->zs, sizeof(double) * (size_t)r);
        if (na > 0) {
            double *Gm = ro->Gm, *Y = ro->Ym, diag = 0;
            for (int a = 0; a < na; a++) {
                int s = ro->active[a];
                const double *row = mod->S + (size_t)s * n4;
                for (int c = 0; c <= a; c++)
                    Gm[a + (size_t)ns * c] = mod->Gss[s + (size_t)ns * ro->active[c]];
                diag += Gm[a + (size_t)ns * a];
                const double *x = ro->xc + 3 * s, *xo = ro->xp + 3 * s;
                double ytarget = set->projection_velocity ? x[1] : set->ground;
                Y[a] = x[0] + set->damping * (x[0] - xo[0]) - dot(row, ro->zs, n4);
                Y[a + ns] = ytarget - ro->ys[a];
                Y[a + 2 * ns] = x[2] + set->damping * (x[2] - xo[2]) - dot(row, ro->zs + 2 * n4, n4);
            }
            /* Damped pseudo-inverse (MLC_SIM_CONTACT_RCOND): Cholesky of L N Lᵀ + εI. */
            double eps = MLC_SIM_CONTACT_RCOND * MLC_SIM_CONTACT_RCOND * diag / na;
            for (int a = 0; a < na; a++) Gm[a + (size_t)ns * a] += eps;
            for (int c = 0; c < na; c++) {
                double *colc = Gm + (size_t)ns * c;
                for (int p = 0; p < c; p++) {
                    const double *colp = Gm + (size_t)ns * p;
                    double l = colp[c];
                    for (int a = c; a < na; a++) colc[a] -= l * colp[a];
                }
                double piv = colc[c] > eps ? sqrt(colc[c]) : sqrt(eps); /* rounding guard */
                colc[c] = piv;
                for (int a = c + 1; a < na; a++) colc[a] /= piv;
            }
            for (int k = 0; k < 3; k++) {
                double *yk = Y + (size_t)ns * k;
                for (int c = 0; c < na; c++) { /* forward */
                    const double *col = Gm + (size_t)ns * c;
                    yk[c] /= col[c];
                    for (int a = c + 1; a < na; a++) yk[a] -= col[a] * yk[c];
                }
                for (int c = na - 1; c >= 0; c--) { /* backward */
                    const double *col = Gm + (size_t)ns * c;
                    double sum = yk[c];
                    for (int a = c + 1; a < na; a++) sum -= col[a] * yk[a];
                    yk[c] = sum / col[c];
                }
                double *zk = z + k * n4;
                for (int a = 0; a < na; a++) {
                    const double *g = mod->GS + (size_t)n4 * ro->active[a];
                    double ya = yk[a];
                    for (int i2 = 0; i2 < n4; i2++) zk[i2] += g[i2] * ya;
                }
            }
        }
        if (ro->trace && it < ro->trace_cap)
            memcpy(ro->trace + (size_t)it * r, z, sizeof(double) * (size_t)r);
        if (set->tolerance > 0) {
            double d2 = 0;
            for (int i = 0; i < r; i++) d2 += (z[i] - ro->zi[i]) * (z[i] - ro->zi[i]);
            if (sqrt(d2) < set->tolerance) {
                it++;
                break;
            }
        }
    }
    ro->last_iterations = it;
    if (!forced) { /* bᵃ with the last iteration's Ω_c, for the work term */
        memset(ro->ba, 0, sizeof(double) * (size_t)r);
        for (int c = 0; c < nca; c++) block_rhs(ro->ba, ro->Kc + (size_t)c * n3, n4, ro->Om + 9 * c, gam);
    }
    ro->contacts = na;

    /* ---- work Δzᵀ(bᵃ − Qᵃ z) (Eq. 18, bracket = −∇_z E_a) ---- */
    double work = 0;
    for (int k = 0; k < 3; k++) {
        const double *zk = z + k * n4, *zck = zc + k * n4, *bak = ro->ba + k * n4;
        for (int i = 0; i < n4; i++) {
            double qa = gam * dot(mod->Lap + (size_t)n4 * i, zk, n4);
            work += (zk[i] - zck[i]) * (bak[i] - (forced ? 0 : qa));
        }
    }
    ro->last_work = work;

    /* ---- advance: z_{n−1} ← z_n, z_n ← z ---- */
    ro->zp = zc;
    ro->zc = z;
    ro->zn = zp;
    ro->step++;
    if (!finite_vec(z, r)) return 1;
    double com[3];
    mlc_model_com(mod, z, com);
    double d2 = 0;
    for (int k = 0; k < 3; k++) d2 += (com[k] - mod->com_rest[k]) * (com[k] - mod->com_rest[k]);
    return d2 > 1e6 * mod->extent * mod->extent; /* |Δcom| > 1e3 × extent: runaway */
}

int mlc_rollout_step(mlc_rollout *ro, const mlc_actuation *act) { return step_impl(ro, act, 0); }
int mlc_rollout_step_forced(mlc_rollout *ro, const mlc_actuation *act) {
    return step_impl(ro, act, 1);
}

/* ---- energy (tests) ---------------------------------------------------------------------- */

double mlc_rollout_energy(const mlc_rollout *ro, const mlc_actuation *act, const double *z) {
    const mlc_model *mod = ro->mod;
    const mlc_sim_settings *set = &mod->set;
    const int n4 = mod->n4, ma = mod->ma;
    const size_t n3 = (size_t)n4 * 3;
    double ih2 = 1.0 / (set->dt * set->dt);
    double abar[1 + 256];
    if (ma > 257) return NAN; /* test helper: modest m only */
    mlc_actuation_eval(act, mod->m, (ro->step + 1) * set->dt, abar);
    double E = 0;
    for (int k = 0; k < 3; k++) {
        const double *zk = z + k * n4, *zck = ro->zc + k * n4, *zpk = ro->zp + k * n4;
        for (int j = 0; j < n4; j++) {
            double dj = zk[j] - (2 * zck[j] - zpk[j]);
            double Ndj = 0, Lzj = 0;
            for (int i = 0; i < n4; i++) {
                double di = zk[i] - (2 * zck[i] - zpk[i]);
                Ndj += mod->N[i + (size_t)n4 * j] * di;
                Lzj += mod->Lap[i + (size_t)n4 * j] * zk[i];
            }
            E += 0.5 * ih2 * dj * Ndj + 0.5 * (set->mu + set->gamma) * zk[j] * Lzj;
            E -= set->gravity[k] * mod->gsum[j] * zk[j];
        }
    }
    /* −μ Σ tr(R_cᵀ F_c) + ½μ·3·V  and  −γ Σ tr(Ω_cᵀ H_c) + ½γ āᵀ Yg ā */
    for (int c = 0; c < mod->ncp; c++) {
        double F[9], R[9], q[4] = {1, 0, 0, 0};
        block_map(z, mod->Gp + (size_t)c * n3, n4, F);
        mlc_polar(F, q, R);
        for (int i = 0; i < 9; i++) E -= set->mu * R[i] * F[i];
    }
    E += 1.5 * set->mu * mod->volume;
    double K[3 * 4 * 64];
    if (n3 > sizeof K / sizeof K[0]) return NAN;
    for (int c = 0; c < mod->nca; c++) {
        memset(K, 0, sizeof(double) * n3);
        for (int v = 0; v < ma; v++)
            for (size_t i = 0; i < n3; i++) K[i] += abar[v] * mod->Ka[((size_t)c * ma + v) * n3 + i];
        double H[9], Om[9], q[4] = {1, 0, 0, 0};
        block_map(z, K, n4, H);
        mlc_polar(H, q, Om);
        for (int i = 0; i < 9; i++) E -= set->gamma * Om[i] * H[i];
        const double *Y = mod->Yg + (size_t)c * ma * ma;
        for (int u = 0; u < ma; u++)
            for (int v = 0; v < ma; v++) E += 0.5 * set->gamma * abar[u] * Y[u + ma * v] * abar[v];
    }
    return E;
}

/* ---- rollout and objective (METHOD.md §7) -------------------------------------------------- */

static void normalize3(const double in[3], double out[3]) {
    double n = sqrt(in[0] * in[0] + in[1] * in[1] + in[2] * in[2]);
    if (!(n > 0) || !isfinite(n)) {
        out[0] = 1, out[1] = out[2] = 0;
        return;
    }
    for (int k = 0; k < 3; k++) out[k] = in[k] / n;
}

/* Body forward vector R(t) û₀ with R = polar(Σ V F_e), warm-started per rollout. */
static void body_forward(mlc_rollout *ro, const double *z, const double u0[3], double fwd[3]) {
    double A[9], R[9];
    mlc__model_body_matrix(ro->mod, z, A);
    mlc_polar(A, ro->qbody, R);
    for (int k = 0; k < 3; k++) fwd[k] = R[k] * u0[0] + R[k + 3] * u0[1] + R[k + 6] * u0[2];
}

mlc_status mlc_rollout_run(mlc_rollout *ro, const mlc_actuation *act,
                           const mlc_objective_settings *obj, mlc_frame_fn frame, void *user,
                           mlc_rollout_result *res) {
    const mlc_model *mod = ro->mod;
    mlc_objective_settings od;
    if (!obj) {
        mlc_objective_settings_default(&od);
        obj = &od;
    }
    memset(res, 0, sizeof *res);
    double v[3], u0[3], fwd[3], com[3];
    normalize3(obj->direction, v);
    normalize3(obj->forward, u0);
    mlc_rollout_reset(ro);
    const int S = mod->set.steps;
    double h = mod->set.dt;

    mlc_model_com(mod, ro->zc, res->com0);
    body_forward(ro, ro->zc, u0, fwd);
    double align = fwd[0] * v[0] + fwd[1] * v[1] + fwd[2] * v[2];
    if (frame) frame(user, 0, 0.0, ro->zc, res->com0, fwd, 0);
    memcpy(res->com1, res->com0, sizeof com);
    double work = 0, ysum = 0;
    int s;
    for (s = 1; s <= S; s++) {
        if (mlc_rollout_step(ro, act)) {
            res->failed = 1;
            break;
        }
        double wk = mlc_rollout_last_work(ro);
        work += obj->work_abs ? fabs(wk) : wk;
        mlc_model_com(mod, ro->zc, com);
        body_forward(ro, ro->zc, u0, fwd);
        align = fmin(align, fwd[0] * v[0] + fwd[1] * v[1] + fwd[2] * v[2]);
        ysum += com[1];
        memcpy(res->com1, com, sizeof com);
        if (frame) frame(user, s, s * h, ro->zc, com, fwd, ro->contacts);
    }
    res->steps_done = s - 1;
    if (res->failed) {
        res->J = MLC_SIM_FAIL_PENALTY;
        return MLC_OK;
    }
    double disp = 0;
    for (int k = 0; k < 3; k++) disp += (res->com1[k] - res->com0[k]) * v[k];
    res->displacement = disp;
    res->J_disp = -disp;
    res->J_align = obj->align ? fmax(0.0, align) : 1.0;
    res->height_gain = (S > 0 ? ysum / S : res->com0[1]) - res->com0[1];
    res->J_work = obj->work_penalty * work;
    double J = obj->jump ? -res->height_gain * res->J_align : res->J_disp * res->J_align;
    res->J = J + res->J_work;
    if (!isfinite(res->J)) {
        res->failed = 1;
        res->J = MLC_SIM_FAIL_PENALTY;
    }
    return MLC_OK;
}
