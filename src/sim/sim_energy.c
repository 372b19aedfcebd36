/* sim_energy.c: energies of the reduced model (sim.h): the incremental potential a step
 * minimizes (tests) and the energy ledger of a rollout. In block form (sim_internal.h) every
 * quadratic term is a 4w×4w form per coordinate block, and the elastic energies are
 *   E_v = ½μ Σ_k t_kᵀ Lap t_k − μ Σ_c tr(R_cᵀ F_c) + (3/2) μ V,   R_c = polar(F_c),
 *   E_a = ½γ Σ_k t_kᵀ Lap t_k − γ Σ_c tr(Ω_cᵀ H_c) + ½γ āᵀ Y_c ā,  Ω_c = polar(H_c),
 * i.e. ½ Σ_e V‖F_e − R‖² expanded, with F_c and H_c the cluster sums of the step (unit
 * stiffness maps Gp and 𝒦_c(ā)). Rotations are exact polar decompositions from a cold start,
 * so the values do not depend on the step's warm starts. Nothing here allocates. */
#include <math.h>
#include <string.h>

#include "internal/polar.h"
#include "internal/sim_internal.h"
#include "testing/sim_testing.h"

/* ½ dᵀ (I₃⊗N) d with d = a·z1 + b·z2 (+ c·z3 when z3 is not NULL). */
static double quad_N(const mlc_model *mod, const double *z1, double a, const double *z2, double b,
                     const double *z3, double c) {
    const int n4 = mod->n4;
    double E = 0;
    for (int k = 0; k < 3; k++) {
        size_t o = (size_t)k * n4;
        for (int j = 0; j < n4; j++) {
            double dj = a * z1[o + j] + b * z2[o + j] + (z3 ? c * z3[o + j] : 0);
            double Nd = 0;
            for (int i = 0; i < n4; i++) {
                double di = a * z1[o + i] + b * z2[o + i] + (z3 ? c * z3[o + i] : 0);
                Nd += mod->N[i + (size_t)n4 * j] * di;
            }
            E += 0.5 * dj * Nd;
        }
    }
    return E;
}

/* ½ Σ_k t_kᵀ L t_k (unit stiffness) for L = Lap, Lapv or Lapa (sim_internal.h). */
static double quad_form(const mlc_model *mod, const double *L, const double *z) {
    const int n4 = mod->n4;
    double E = 0;
    for (int k = 0; k < 3; k++) {
        const double *zk = z + (size_t)k * n4;
        for (int j = 0; j < n4; j++)
            E += 0.5 * zk[j] * mlc__dot(L + (size_t)n4 * j, zk, n4);
    }
    return E;
}
static double quad_lap(const mlc_model *mod, const double *z) {
    return quad_form(mod, mod->Lap, z);
}

static double gravity_energy(const mlc_model *mod, const double *z) {
    double E = 0;
    for (int k = 0; k < 3; k++)
        E -= mod->set.gravity[k] * mlc__dot(mod->gsum, z + (size_t)k * mod->n4, mod->n4);
    return E;
}

static double passive_energy(const mlc_model *mod, const double *z) {
    const size_t n3 = (size_t)mod->n4 * 3;
    double E = quad_form(mod, mod->Lapv ? mod->Lapv : mod->Lap, z) + 1.5 * mod->vol_mu;
    for (int c = 0; c < mod->ncp; c++) {
        double F[9], R[9], q[4] = {1, 0, 0, 0};
        mlc__block_map(z, mod->Gp + (size_t)c * n3, mod->n4, F);
        mlc_polar(F, q, R);
        for (int i = 0; i < 9; i++)
            E -= R[i] * F[i];
    }
    return mod->set.mu * E;
}

/* Energy terms (sim_energy.c): the actuation elastic energy of z for targets ā (ma values), and
 * the ledger's updates around a step: before (ā_{n+1} in ro->abar, z_n current) and after it. */
static double mlc__energy_actuation(const mlc_model *mod, const double *z, const double *abar) {
    const int n4 = mod->n4, ma = mod->ma;
    const size_t n3 = (size_t)n4 * 3;
    double K[3 * 4 * MLC_SIM_MAX_W]; /* w ≤ MLC_SIM_MAX_W: mlc_model_create checks it */
    double E = quad_form(mod, mod->Lapa ? mod->Lapa : mod->Lap, z);
    for (int c = 0; c < mod->nca; c++) {
        memset(K, 0, sizeof(double) * n3);
        for (int v = 0; v < ma; v++)
            for (size_t i = 0; i < n3; i++)
                K[i] += abar[v] * mod->Ka[((size_t)c * ma + v) * n3 + i];
        double H[9], Om[9], q[4] = {1, 0, 0, 0};
        mlc__block_map(z, K, n4, H);
        mlc_polar(H, q, Om);
        for (int i = 0; i < 9; i++)
            E -= Om[i] * H[i];
        const double *Y = mod->Yg + (size_t)c * ma * ma;
        for (int u = 0; u < ma; u++)
            for (int v = 0; v < ma; v++)
                E += 0.5 * abar[u] * Y[u + ma * v] * abar[v];
    }
    return mod->set.gamma * E;
}

double mlc_rollout_energy(const mlc_rollout *ro, const mlc_actuation *act, const double *z) {
    const mlc_model *mod = ro->mod;
    const double h = mod->set.dt;
    double abar[1 + MLC_SIM_MAX_MODES]; /* m ≤ MLC_SIM_MAX_MODES: mlc_model_create checks it */
    mlc_actuation_eval(act, mod->m, (ro->step + 1) * h, mod->set.ramp, abar);
    /* (1/2h²)‖z − q‖²_N with q = 2z_n − z_{n−1}, and the damping (1/2h)‖z − z_n‖²_C */
    double E = quad_N(mod, z, 1 / h, ro->zc, -2 / h, ro->zp, 1 / h) + gravity_energy(mod, z) +
               passive_energy(mod, z) + mlc__energy_actuation(mod, z, abar);
    const double *ra = mod->set.rayleigh;
    if (ra[0] != 0 || ra[1] != 0) {
        double *dz = ro->zi; /* scratch of the step, free between steps */
        for (int i = 0; i < mod->r; i++)
            dz[i] = z[i] - ro->zc[i];
        E += ra[0] / h * quad_N(mod, dz, 1, dz, 0, NULL, 0) +
             ra[1] * (mod->set.mu + mod->set.gamma) / h * quad_lap(mod, dz);
    }
    return E;
}

/* ---- the ledger ------------------------------------------------------------------------- */

/* The state energies of (z_n, z_{n−1}) with targets ā (ro->abar). */
static void ledger_state(mlc_rollout *ro) {
    const mlc_model *mod = ro->mod;
    mlc_energy_ledger *L = ro->ledger;
    const double ih = 1 / mod->set.dt;
    L->kinetic = mod->bdf2 ? quad_N(mod, ro->vc, 1, ro->vc, 0, NULL, 0) /* BDF2: v_n */
                           : quad_N(mod, ro->zc, ih, ro->zp, -ih, NULL, 0);
    L->gravity = gravity_energy(mod, ro->zc);
    L->elastic_passive = passive_energy(mod, ro->zc);
    L->elastic_actuation = mlc__energy_actuation(mod, ro->zc, ro->abar);
    L->total = L->kinetic + L->gravity + L->elastic_passive + L->elastic_actuation;
    L->dissipated = L->initial + L->actuation_work + L->contact_work - L->total;
}

void mlc_rollout_set_ledger(mlc_rollout *ro, mlc_energy_ledger *ledger, const mlc_actuation *act) {
    ro->ledger = ledger;
    if (!ledger) return;
    memset(ledger, 0, sizeof *ledger);
    mlc_actuation_eval(act, ro->mod->m, ro->step * ro->mod->set.dt, ro->mod->set.ramp, ro->abar);
    ledger_state(ro);
    ledger->initial = ledger->total;
    ledger->dissipated = 0;
}

void mlc__ledger_before_step(mlc_rollout *ro) {
    /* The targets move from ā(t_n) to ā(t_{n+1}) (in ro->abar) at the shape z_n. */
    mlc_energy_ledger *L = ro->ledger;
    L->actuation_work += mlc__energy_actuation(ro->mod, ro->zc, ro->abar) - L->elastic_actuation;
}

void mlc__ledger_after_step(mlc_rollout *ro) {
    const mlc_model *mod = ro->mod;
    mlc_energy_ledger *L = ro->ledger;
    double w = 0, wn = 0;
    if (ro->x_valid &&
        mlc_contact_model_forces(mod->set.contact_model)) { /* xc = S z_{n+1}, xp = S z_n */
        const size_t nsp = (size_t)mod->nsp, ns = (size_t)mod->ns;
        const double *lam = mlc_rollout_contact_forces(ro);
        for (size_t k = 0; k < 3; k++)
            for (size_t s = 0; s < ns; s++) {
                double f = lam[k * ns + s];
                if (f == 0) continue;
                double dw = f * (ro->xc[k * nsp + s] - ro->xp[k * nsp + s]);
                w += dw;
                if (k == 1 && !ro->fw) wn += dw;
            }
        if (ro->fw) /* terrain: the normal part along each sample's normal */
            for (size_t s = 0; s < ns; s++) {
                const double *n = ro->tc.frame + 9 * s;
                double f = ro->cs.lam[ns + s];
                for (size_t k = 0; f != 0 && k < 3; k++)
                    wn += f * n[k] * (ro->xc[k * nsp + s] - ro->xp[k * nsp + s]);
            }
    }
    L->contact_work_step = w;
    L->contact_work += w;
    L->contact_work_normal += wn;
    ledger_state(ro);
}

const double *mlc_rollout_contact_forces(const mlc_rollout *ro) {
    return ro->fw ? ro->fw : ro->cs.lam;
}
