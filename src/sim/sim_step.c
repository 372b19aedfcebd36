/* sim_step.c: reduced time stepping with ground contact (docs/method.md §4, §6; 000 App. D–E with
 * the signs of docs/method.md §6).
 *
 * One step minimizes the backward-Euler incremental potential (Eq. 25/45)
 *   (1/2h²)‖z − q‖²_N − zᵀBᵀMg + E_v(z) + E_a(z, ā),  q = 2z_n − z_{n−1},
 * by local-global iterations. With the rotations fixed it is quadratic, with the constant
 * Hessian Q = Qᵛ + Qᵃ + N/h² = I₃ ⊗ Q₄ (Q₄ 4w×4w, sim_model.c) and the right-hand side
 * b = N q/h² + BᵀMg + bᵛ + bᵃ (positive forces; Eq. 46 resolved), bᵛ_k = μ Σ_c G_c R_c[k,:]ᵀ,
 * bᵃ_k = γ Σ_c 𝒦_c(ā) Ω_c[k,:]ᵀ (∂ tr(Rᵀ F_c)/∂t_k, §11).
 *
 * Phases of a step (step_body):
 *  1. Setup: ā(t_{n+1}); per actuation cluster 𝒦_c(ā) = Σ_v ā_v 𝒦_c[v] and Q₄⁻¹𝒦_c(ā), written
 *     into the rollout's combined maps GT and QG; the prediction q; the constant part of the
 *     solution z*₀ = Q⁻¹(N q/h² + BᵀMg) = (Q₄⁻¹N) q/h² + g ⊗ Q₄⁻¹Σms (+ the Rayleigh term);
 *     the samples' positions at z_n and z_{n−1} (kept from the previous step when the steps
 *     follow each other).
 *  2. Local step, every iteration: F_c of every passive cluster (Eq. 30 of 002) and
 *     H_c = Σ γV F Y(ā)ᵀ of every actuation cluster (Eq. 12–13) from the iterate in one kernel
 *     call, then all their polar decompositions R_c, Ω_c in one batch (mlc_polar_lanes,
 *     warm-started from the last quaternions).
 *  3. Global step: Q₄ is factored once (sim_model.c), and its solve applied there to every
 *     right-hand-side term, so z* = z*₀ + Σ_c (Q⁻¹G_c) μR_cᵀ + Σ_c (Q⁻¹𝒦_c(ā)) γΩ_cᵀ is one
 *     linear combination of precomputed columns: no triangular solve runs in a step (only the
 *     test-only forced step uses the factor Lq).
 *  4. Contact, every iteration at z*: the complementarity model (default, contact.h) solves
 *     the samples' normal LCP on the precomputed Delassus matrix D = S Q₄⁻¹ Sᵀ, then friction
 *     on the samples in contact, and moves z by Q₄⁻¹ s_s per sample and axis. The paper's
 *     equality model (contact.model "equality") solves a damped least-force system on its
 *     active set's submatrix of Gss (factors cached per set: MLC_CONTACT_CACHE). Iterations
 *     end after sim.iterations, or earlier when the iterate moved less than sim.tolerance.
 *     Samples that cannot touch are left out: the first iteration's heights give each
 *     4-sample group the distance its rows can move before a sample reaches its threshold,
 *     and a later iteration whose z* has moved less (‖S_s‖ times the y-block's motion, plus
 *     a force-coupling bound the solve checks) neither skins the group nor reads it in the
 *     solve (contact_complementarity, mlc_contact_solve_normal_live): the same contact set
 *     and forces, at the cost of the samples near the ground.
 *  5. Finish: the actuation work Δzᵀ(bᵃ − Qᵃz) with the last Ω_c; the velocity update, which
 *     in backward Euler is the state shift z_{n−1} ← z_n, z_n ← z (pointer rotation of three
 *     vectors; the velocity is (z_n − z_{n−1})/h); the samples' new positions; the non-finite
 *     and runaway checks.
 *
 * Data layout (sim_internal.h): z ∈ ℝ^r, r = 3·n4, n4 = 4w, is [t_x; t_y; t_z]; operators are
 * I₃ ⊗ (n4×n4) or n4×3 maps, column-major with leading dimension n4. For the kernels
 * (sim_kernels.h: "rows" and "cols" products, compiled 2- and 4-wide, one copy chosen at load
 * through cpu.c) maps are stored transposed and padded: GT holds every cluster's map lane by
 * lane (column npad·j + c), so the local step's output F is already the structure-of-arrays
 * input of mlc_polar_lanes; sample rows ST are n4 × nsp (nsp = ns rounded up to 4), and sample
 * positions are three blocks of nsp.
 *
 * Precomputed by mlc_model_create (sim_model.c) from the subspace (skinning weights W,
 * vibration modes D, passive and actuation cluster labels, contact samples: subspace.c,
 * clusters.c): Lap, N, Q₄ and its Cholesky factor, the maps G_c and tensors 𝒦_c[v] for unit
 * stiffness and Q₄⁻¹ applied to each, Q₄⁻¹N, Q₄⁻¹Σms, the Delassus matrix and Q₄⁻¹Sᵀ, the
 * equality model's Gss and GS. mlc_rollout_create copies the passive maps into GT and QG.
 *
 * Where the time goes, in instructions a step and in shares of the time: docs/performance.md,
 * "The step" (tests/bench/step_vs_old.sh measures a build beside another).
 *
 * Allocation: none in a step. All scratch (states, combined maps, polar lanes, contact factors,
 * the contact solver's workspace) is allocated by mlc_rollout_create; test_sim checks that 200
 * steps and a whole rollout allocate nothing.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "dense.h"
#include "fma_exact.h"
#include "internal/contact.h"
#include "internal/polar.h"
#include "internal/sim_internal.h"
#include "testing/sim_testing.h"

void mlc_sim_settings_default(mlc_sim_settings *s) {
    memset(s, 0, sizeof *s);
    s->dt = MLC_SIM_DEFAULT_DT;
    s->steps = MLC_SIM_DEFAULT_STEPS;
    s->iterations = MLC_SIM_DEFAULT_ITERATIONS;
    s->tolerance = 0;
    s->guess_previous = 0;
    s->gravity[1] = -MLC_SIM_DEFAULT_GRAVITY;
    s->contact = 1;
    s->damping = 0.0;
    s->projection_velocity = 0;
    s->contact_model = MLC_CONTACT_COMPLEMENTARITY;
    s->push_speed = MLC_SIM_DEFAULT_PUSH_SPEED;
    s->friction = MLC_SIM_DEFAULT_FRICTION;
    s->ground = 0;
    s->density = MLC_SIM_DEFAULT_DENSITY;
    s->mu = MLC_SIM_DEFAULT_MU;
    s->gamma = MLC_SIM_DEFAULT_GAMMA;
}

double mlc_model_extent(const mlc_model *mod) {
    return mod->extent;
}

/* ---- rollout lifetime ------------------------------------------------------------------ */

void mlc_rollout_destroy(mlc_rollout *ro) {
    if (!ro) return;
    double *bufs[] = {ro->zc, ro->zp,   ro->zn,   ro->q,  ro->b0, ro->zs0, ro->ba,  ro->zs, ro->zi,
                      ro->ys, ro->abar, ro->Kc,   ro->QG, ro->PR, ro->qs,  ro->scl, ro->xc, ro->xp,
                      ro->xs, ro->Fall, ro->coef, ro->GT, ro->Gm, ro->Ym,  ro->vc,  ro->vp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        mlc_free(bufs[i]);
    mlc_free(ro->active);
    mlc_free(ro->cact);
    mlc_contact_destroy(&ro->cs);
    mlc_free(ro->yt);
    mlc_free(ro->ct);
    mlc_free(ro->spack);
    mlc_free(ro->xpack);
    mlc_free(ro->pkey);
    double *sbufs[] = {ro->gcoup, ro->grad, ro->zref, ro->srnorm, ro->srad};
    for (size_t i = 0; i < sizeof sbufs / sizeof sbufs[0]; i++)
        mlc_free(sbufs[i]);
    mlc_free(ro->sskip);
    mlc_free(ro->sfar);
    mlc_free(ro->sruns);
    mlc_terrain_contact_destroy(&ro->tc);
    mlc_free(ro->fw);
    mlc_free(ro);
}

mlc_status mlc_rollout_create(const mlc_model *mod, mlc_rollout **out) {
    *out = NULL;
    mlc_rollout *ro = mlc_calloc(1, sizeof *ro);
    if (!ro) return MLC_ENOMEM;
    ro->mod = mod;
    size_t r = (size_t)mod->r, n4 = (size_t)mod->n4, ns = (size_t)MLC_MAX(mod->ns, 1);
    double **vecs[] = {&ro->zc,  &ro->zp, &ro->zn, &ro->q, &ro->b0,
                       &ro->zs0, &ro->ba, &ro->zs, &ro->zi};
    int ok = 1;
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        ok &= (*vecs[i] = mlc_calloc(r, sizeof(double))) != NULL;
    ok &= (ro->ys = mlc_calloc(ns, sizeof(double))) != NULL;
    ok &= (ro->abar = mlc_calloc((size_t)mod->ma, sizeof(double))) != NULL;
    size_t ncl = (size_t)mod->ncp + (size_t)mod->nca, nsp = (size_t)mod->nsp;
    ro->npad = (int)((ncl + 3) & ~(size_t)3);
    ro->ldc = 3 * ro->npad;
    size_t ldc = (size_t)ro->ldc, npad = (size_t)ro->npad;
    ok &= (ro->Kc = mlc_calloc((size_t)mod->nca * n4 * 3, sizeof(double))) != NULL;
    ok &= (ro->QG = mlc_calloc(3 * ncl * n4, sizeof(double))) != NULL;
    ok &= (ro->GT = mlc_calloc(ldc * n4, sizeof(double))) != NULL;
    ok &= (ro->PR = mlc_calloc(npad * 9, sizeof(double))) != NULL;
    ok &= (ro->qs = mlc_calloc(npad * 4, sizeof(double))) != NULL;
    ok &= (ro->scl = mlc_calloc(npad, sizeof(double))) != NULL;
    ok &= (ro->xc = mlc_calloc(3 * nsp, sizeof(double))) != NULL;
    ok &= (ro->xp = mlc_calloc(3 * nsp, sizeof(double))) != NULL;
    ok &= (ro->xs = mlc_calloc(3 * nsp, sizeof(double))) != NULL;
    ok &= (ro->Fall = mlc_calloc(3 * ldc, sizeof(double))) != NULL;
    ok &= (ro->coef = mlc_calloc(3 * ldc, sizeof(double))) != NULL;
    ok &= (ro->active = mlc_calloc(ns, sizeof(int))) != NULL;
    ok &= (ro->cact = mlc_calloc(MLC_CONTACT_CACHE * ns, sizeof(int))) != NULL;
    ok &= (ro->Gm = mlc_calloc(MLC_CONTACT_CACHE * ns * ns, sizeof(double))) != NULL;
    ok &= (ro->Ym = mlc_calloc(ns * 4, sizeof(double))) != NULL;
    ok &= (ro->yt = mlc_calloc(ns, sizeof(double))) != NULL;
    ok &= (ro->ct = mlc_calloc(2 * (size_t)ns, sizeof(double))) != NULL;
    ok &= (ro->spack = mlc_calloc(n4 * nsp, sizeof(double))) != NULL;
    ok &= (ro->xpack = mlc_calloc(3 * nsp, sizeof(double))) != NULL;
    ok &= (ro->pkey = mlc_calloc(ns, sizeof(int))) != NULL;
    ro->npk = -1;
    ok &= (ro->gcoup = mlc_calloc(nsp / 4 + 1, sizeof(double))) != NULL;
    ok &= (ro->grad = mlc_calloc(nsp / 4 + 1, sizeof(double))) != NULL;
    ok &= (ro->srnorm = mlc_calloc(nsp, sizeof(double))) != NULL;
    ok &= (ro->srad = mlc_calloc(nsp, sizeof(double))) != NULL;
    ok &= (ro->sfar = mlc_calloc(nsp / 4 + 1, sizeof(int))) != NULL;
    ok &= (ro->zref = mlc_calloc(n4, sizeof(double))) != NULL;
    ok &= (ro->sruns = mlc_calloc(nsp / 2 + 4, sizeof(int))) != NULL;
    ok &= (ro->sskip = mlc_calloc(nsp / 4 + 1, sizeof(int))) != NULL;
    ok &= mlc_contact_create(&ro->cs, mod->ns, mod->Dss, mod->ground_tol, mod->set.friction) ==
          MLC_OK;
    ro->cs.friction_s = mod->friction_s; /* per-region friction, or NULL */
    if (!mod->terrain.flat) {            /* terrain contact: per-sample frames and matrices */
        ok &= mlc_terrain_contact_create(&ro->tc, mod->ns) == MLC_OK;
        ok &= (ro->fw = mlc_calloc(3 * ns, sizeof(double))) != NULL;
        if (ok) ro->cs.D = ro->tc.Dn; /* the normal problem on nᵢᵀnⱼ Dᵢⱼ (same diagonal) */
    }
    if (mod->bdf2) {
        ok &= (ro->vc = mlc_calloc(r, sizeof(double))) != NULL;
        ok &= (ro->vp = mlc_calloc(r, sizeof(double))) != NULL;
    }
    if (!ok) {
        mlc_rollout_destroy(ro);
        return MLC_ENOMEM;
    }
    /* The constant passive columns of the combined maps (the actuation columns are set per
     * step; padding columns stay zero). */
    size_t ncolp = 3 * (size_t)mod->ncp;
    for (size_t i = 0; i < n4; i++)
        for (size_t c = 0; c < (size_t)mod->ncp; c++)
            for (size_t j = 0; j < 3; j++)
                ro->GT[ldc * i + npad * j + c] = mod->GpT[ncolp * i + 3 * c + j];
    memcpy(ro->QG, mod->QiGp, sizeof(double) * ncolp * n4);
    /* The bounds that rule samples out of the contact solve: y_s moves by at most ‖S_s‖ times
     * the y-block's motion, and forces on other samples lower it by at most max(0, −D_sc)
     * each (plus a 1e-10 share of |D_sc| for the rounding of the gap sums), so by at most
     * ‖S_s‖ times gcoup times their total. */
    for (int g = 0; g < (int)nsp / 4; g++) {
        double worst = 0;
        for (int s = 4 * g; s < MLC_MIN(4 * g + 4, mod->ns); s++) {
            double n2 = 0, neg = 0, mag = 0;
            for (size_t i = 0; i < n4; i++)
                n2 += mod->ST[(size_t)s + nsp * i] * mod->ST[(size_t)s + nsp * i];
            for (int c = 0; c < mod->ns; c++) {
                double d = mod->Dss[(size_t)s + (size_t)mod->ns * c];
                if (c != s) neg = fmax(neg, -d), mag = fmax(mag, fabs(d));
            }
            double coup = neg + 1e-10 * mag, nrm = sqrt(n2);
            ro->srnorm[s] = nrm > 0 ? 1 / nrm * (1 - 1e-12) : 0;
            /* a sample its row cannot move is never ruled out (grad −∞), this is then moot */
            worst = fmax(worst, nrm > 0 ? coup / nrm * (1 + 1e-12) : 0);
        }
        ro->gcoup[g] = worst;
    }
    for (int e = 0; e < MLC_CONTACT_CACHE; e++)
        ro->cna[e] = -1;
    ro->cnext = 0;
    mlc_rollout_reset(ro);
    *out = ro;
    return MLC_OK;
}

void mlc_rollout_set_contact_skip(mlc_rollout *ro, int on) {
    ro->skip_off = !on;
}
long mlc_rollout_contact_skipped(const mlc_rollout *ro) {
    return ro->skip_samples;
}

void mlc_rollout_set_profile(mlc_rollout *ro, mlc_step_profile *p) {
    ro->prof = p;
}

static void reset_rotations(mlc_rollout *ro) {
    for (int c = 0; c < ro->npad; c++) /* padding lanes too (their maps are zero) */
        for (int k = 0; k < 4; k++)
            ro->qs[k * ro->npad + c] = k == 0;
    ro->qbody[0] = 1, ro->qbody[1] = ro->qbody[2] = ro->qbody[3] = 0;
}

void mlc_rollout_reset(mlc_rollout *ro) {
    mlc_model_rest_state(ro->mod, ro->zc);
    mlc_model_rest_state(ro->mod, ro->zp);
    ro->step = 0;
    ro->contacts = 0;
    ro->last_work = 0;
    ro->last_iterations = 0;
    ro->x_valid = 0;
    reset_rotations(ro);
    mlc_contact_reset(&ro->cs);
    if (ro->vc) {
        memset(ro->vc, 0, sizeof(double) * (size_t)ro->mod->r);
        memset(ro->vp, 0, sizeof(double) * (size_t)ro->mod->r);
    }
    if (ro->tc.frame) {
        mlc_terrain_contact_reset(&ro->tc);
        memset(ro->fw, 0, sizeof(double) * 3 * (size_t)ro->mod->ns);
    }
}

void mlc_rollout_set_state(mlc_rollout *ro, const double *z, const double *z_prev) {
    size_t r = (size_t)ro->mod->r;
    memcpy(ro->zc, z, sizeof(double) * r);
    memcpy(ro->zp, z_prev, sizeof(double) * r);
    ro->x_valid = 0;
    if (ro->vc) /* BDF2: a constant-velocity history */
        for (size_t i = 0; i < r; i++)
            ro->vc[i] = ro->vp[i] = (z[i] - z_prev[i]) / ro->mod->set.dt;
    /* Warm starts are only hints, but a rotated start is far from identity: start cold. */
    reset_rotations(ro);
}

const double *mlc_rollout_state(const mlc_rollout *ro) {
    return ro->zc;
}
int mlc_rollout_contacts(const mlc_rollout *ro) {
    return ro->contacts;
}
const mlc_model *mlc_rollout_model(const mlc_rollout *ro) {
    return ro->mod;
}
double mlc_rollout_last_work(const mlc_rollout *ro) {
    return ro->last_work;
}

void mlc_rollout_set_trace(mlc_rollout *ro, double *buf, int cap) {
    ro->trace = buf;
    ro->trace_cap = buf ? cap : 0;
}

/* ---- small kernels ----------------------------------------------------------------------- */

/* b_k += s Σ_j R[k, j] G[:, j] for k = 0..2 (the rhs of tr(Rᵀ F) terms, §11). */
static inline void block_rhs(double *restrict b, const double *restrict G, int n4,
                             const double R[9], double s) {
    for (int k = 0; k < 3; k++) {
        double c0 = s * R[k], c1 = s * R[k + 3], c2 = s * R[k + 6];
        double *bk = b + k * n4;
        for (int i = 0; i < n4; i++)
            bk[i] += c0 * G[i] + c1 * G[i + n4] + c2 * G[i + 2 * n4];
    }
}

/* ---- the small dense kernels, one copy per code path (sim_kernels.h) ---------------------
 * x86-64 with GCC: an AVX2 copy (4-wide, with the FMA instruction) and two SSE2 baseline
 * copies (2-wide): with the FMA instruction, and with fused multiply-adds emulated for a CPU
 * without one (fma_exact.h: about 20× slower than AVX2, the same bits). The path is chosen
 * once, at load, by mlc__cpu_use_avx2 and mlc__cpu_use_fma (cpu.h: the CPU;
 * MLC_NO_AVX2=1 in the environment forces the baseline, MLC_NO_FMA=1 the emulation; building
 * with -DMLC_NO_KERNEL_CLONES drops the instruction copies). Elsewhere: the 2-wide copy only,
 * with the target's FMA instruction where it has one (arm64), else emulated. Every copy
 * performs the same operations in the same order per output, so results are bit-identical
 * across paths. */
typedef double mlc_v2d __attribute__((vector_size(16), aligned(8)));
#define KNAME(f) f##_v2
#define KATTR
#define VL 2
#define VD mlc_v2d
#define KSPLAT(x) ((mlc_v2d){(x), (x)})
#ifdef __FP_FAST_FMA /* the target has the instruction (e.g. arm64) */
#define KFMA(a, b, c)                                                                              \
    ((mlc_v2d){__builtin_fma((a)[0], (b)[0], (c)[0]), __builtin_fma((a)[1], (b)[1], (c)[1])})
#else /* x86-64's baseline has none: emulated, the same bits (fma_exact.h) */
#define KFMA(a, b, c) mlc_fma_exact2((a), (b), (c))
#endif
#include "internal/sim_kernels.h"

typedef void (*rows3_fn)(const double *restrict, int, const double *restrict, size_t, int,
                         double *restrict, size_t);
typedef void (*rows1_fn)(const double *restrict, int, const double *restrict, size_t, int,
                         double *restrict);
typedef void (*cols3_fn)(double *, const double *, int, const double *restrict, size_t,
                         const int *restrict, int, const double *restrict, size_t, size_t);
typedef void (*csolve_fn)(const double *restrict, int, int, double *restrict);
typedef void (*interleave_fn)(double *restrict, const double *restrict, size_t,
                              const double *restrict, int);
static rows3_fn rows3 = rows3_v2;
static rows1_fn rows1 = rows1_v2;
static cols3_fn cols3 = cols3_v2;
static csolve_fn contact_solve = contact_solve_v2;
static interleave_fn scale_interleave3 = scale_interleave3_v2;
static const char *kernel_path = "generic (2-wide)";

#ifdef MLC_HAVE_AVX2_CLONES
/* The baseline's kernels with the FMA instruction, 2-wide (MLC_NO_AVX2=1 on a CPU with FMA,
 * or the rare CPU with FMA and no AVX2): the baseline's speed where the emulation is 13×
 * slower, the same bits. */
#define KNAME(f) f##_v2f
#define KATTR __attribute__((target("fma")))
#define VL 2
#define VD mlc_v2d
#define KSPLAT(x) ((mlc_v2d){(x), (x)})
#define KFMA(a, b, c) __builtin_ia32_vfmaddpd((a), (b), (c))
#include "internal/sim_kernels.h"

typedef double mlc_v4d __attribute__((vector_size(32), aligned(8)));
#define KNAME(f) f##_v4
#define KATTR __attribute__((target("avx2,fma")))
#define VL 4
#define VD mlc_v4d
#define KSPLAT(x) ((mlc_v4d){(x), (x), (x), (x)})
#define KFMA(a, b, c) __builtin_ia32_vfmaddpd256((a), (b), (c))
#include "internal/sim_kernels.h"

#endif

const char *mlc__sim_kernel_path(void) {
    return kernel_path;
}

int mlc_sim_fma_emulated(void) {
#ifdef __FP_FAST_FMA
    return 0;
#elif defined(MLC_HAVE_AVX2_CLONES)
    return !mlc__cpu_use_fma();
#else
    return 1;
#endif
}

/* Profiling marks: accumulate the time since the previous mark into a field (no-op unless
 * mlc_rollout_set_profile was called). */
#define PROF_MARK(field)                                                                           \
    do {                                                                                           \
        if (prof) {                                                                                \
            double t_ = mlc_now();                                                                 \
            prof->field += t_ - tprev;                                                             \
            tprev = t_;                                                                            \
        }                                                                                          \
    } while (0)

/* Damped Cholesky factor of the contact system L N Lᵀ + εI of the active set (ld ns), from the
 * cache when this set was factored recently (it depends only on the set, so a cached factor is
 * bit-identical to refactoring; the set often returns to an earlier one within a step), else
 * computed into the oldest entry. */
static const double *contact_factor(mlc_rollout *ro, int na) {
    const mlc_model *mod = ro->mod;
    const int ns = mod->ns;
    for (int e = 0; e < MLC_CONTACT_CACHE; e++)
        if (ro->cna[e] == na &&
            memcmp(ro->active, ro->cact + (size_t)ns * e, sizeof(int) * (size_t)na) == 0)
            return ro->Gm + (size_t)ns * ns * e;
    int e = ro->cnext;
    ro->cnext = (e + 1) % MLC_CONTACT_CACHE;
    double *Gm = ro->Gm + (size_t)ns * ns * e, diag = 0;
    for (int a = 0; a < na; a++) {
        int s = ro->active[a];
        for (int c = 0; c <= a; c++)
            Gm[a + (size_t)ns * c] = mod->Gss[s + (size_t)ns * ro->active[c]];
        diag += Gm[a + (size_t)ns * a];
    }
    /* Damped pseudo-inverse (MLC_SIM_CONTACT_RCOND): Cholesky of L N Lᵀ + εI. */
    double eps = MLC_SIM_CONTACT_RCOND * MLC_SIM_CONTACT_RCOND * diag / na;
    for (int a = 0; a < na; a++)
        Gm[a + (size_t)ns * a] += eps;
    mlc_dense_cholesky(Gm, (size_t)ns, na, eps); /* reciprocal pivots: the solves multiply */
    memcpy(ro->cact + (size_t)ns * e, ro->active, sizeof(int) * (size_t)na);
    ro->cna[e] = na;
    if (ro->prof) ro->prof->contact_factorizations++;
    return Gm;
}

/* ---- contact (step phase 4–5): z holds z* on entry and z* + Q⁻¹ f_c on exit; returns the
 * number of samples in contact. ---------------------------------------------------------- */

/* The paper's rule (contact.model "equality"): samples below the ground and moving down are
 * active; their y ends at the ground ("position") or at y_n ("velocity") and their x, z move
 * by μ_c × the previous step's tangential displacement, as equality constraints with the
 * force of least fᵀN⁻¹f (damped pseudo-inverse, MLC_SIM_CONTACT_RCOND). Kept for comparisons:
 * its multipliers can pull, and a squashed body can be launched by the position targets. */
static int contact_equality(mlc_rollout *ro, double *z, int prev_na) {
    const mlc_model *mod = ro->mod;
    const mlc_sim_settings *set = &mod->set;
    const int n4 = mod->n4, ns = mod->ns;
    const size_t nsp = (size_t)mod->nsp;
    /* All three blocks in one pass while many samples are active (as in the previous
     * iteration), else first y alone for the test, then x and z of the active ones. */
    int fused = prev_na > 4, na = 0;
    if (fused)
        rows3(ro->zs, n4, mod->ST, nsp, (int)nsp, ro->xs, nsp);
    else
        rows1(ro->zs + n4, n4, mod->ST, nsp, (int)nsp, ro->xs + nsp);
    const double *xcy = ro->xc + nsp, *ysa = ro->xs + nsp;
    for (int s = 0; s < ns; s++) {
        double ys = ysa[s];
        if (ys < set->ground - mod->ground_tol && ys - xcy[s] < 0) {
            ro->active[na] = s;
            ro->ys[na] = ys; /* keep y* for the target below */
            na++;
        }
    }
    if (!fused && na > 4) {
        rows1(ro->zs, n4, mod->ST, nsp, (int)nsp, ro->xs);
        rows1(ro->zs + 2 * n4, n4, mod->ST, nsp, (int)nsp, ro->xs + 2 * nsp);
    } else if (!fused) { /* the same sums as the kernels', sample by sample */
        const double *zx = ro->zs, *zz = ro->zs + 2 * n4;
        for (int a = 0; a < na; a++) {
            const double *col = mod->ST + ro->active[a];
            double sx = zx[0] * col[0], sz = zz[0] * col[0];
            for (int i = 1; i < n4; i++) {
                double g = col[nsp * i];
                sx += zx[i] * g, sz += zz[i] * g;
            }
            ro->xs[ro->active[a]] = sx, ro->xs[2 * nsp + ro->active[a]] = sz;
        }
    }
    if (na == 0) return 0;
    double *Y = ro->Ym;
    const double *x0 = ro->xc, *x2 = ro->xc + 2 * nsp, *o0 = ro->xp, *o2 = ro->xp + 2 * nsp;
    for (int a = 0; a < na; a++) { /* Y[4a + k]: the three blocks side by side */
        int s = ro->active[a];
        double ytarget = set->projection_velocity ? ro->xc[nsp + s] : set->ground;
        Y[4 * a] = x0[s] + set->damping * (x0[s] - o0[s]) - ro->xs[s];
        Y[4 * a + 1] = ytarget - ro->ys[a];
        Y[4 * a + 2] = x2[s] + set->damping * (x2[s] - o2[s]) - ro->xs[2 * nsp + s];
        Y[4 * a + 3] = 0;
    }
    contact_solve(contact_factor(ro, na), ns, na, Y);
    cols3(z, ro->zs, n4, mod->GS, (size_t)n4, ro->active, na, Y, 1, 4);
    return na;
}

/* Every sample's y at z*, for a solve whose bounds could not rule some out. */
static void exact_heights(void *user) {
    mlc_rollout *ro = user;
    const size_t nsp = (size_t)ro->mod->nsp;
    rows1(ro->zs + ro->mod->n4, ro->mod->n4, ro->mod->ST, nsp, (int)nsp, ro->xs + nsp);
}

/* Do the groups ruled out stay at or above their thresholds under forces of total lsum? Each
 * of their samples is at least ‖S_s‖ (grad − smove) above it at z*, and the forces lower it by
 * at most ‖S_s‖ gcoup lsum (the factor covers the rounding of lsum, a sum of positive terms). */
static int groups_hold(void *user, double lsum) {
    const mlc_rollout *ro = user;
    const double push = lsum * (1 + 1e-9), move = ro->smove;
    /* The least distance against the largest coupling holding, every group holds (rounding
     * is monotone: no group's difference is smaller, no group's product larger); else each
     * group is asked, for the same answer. */
    if (ro->skip_grad - move >= ro->skip_coup * push) return 1;
    const double *restrict grad = ro->grad, *restrict gcoup = ro->gcoup;
    int ok = 1;
    for (int q = 0; q < ro->nskip; q++) {
        const int g = ro->sskip[q];
        ok &= grad[g] - move >= gcoup[g] * push;
    }
    return ok;
}

/* Complementarity contact (contact.h, default). Every sample must end at or above its
 * target: the ground; for a sample already below it (pushed in between samples' contacts or
 * by a neighbour), at most push_speed·h higher than it is, so a deep penetration is not
 * turned into a launch; with "velocity" projection y_n, the paper's frozen normal motion.
 * Friction: the samples in contact move by μ_c × their previous step's x and z displacement
 * (the paper's damping), optionally Coulomb-limited. Forces act on the three blocks through
 * Q₄⁻¹ s_s (normal on y, friction on x and z). Inlined into each copy of the step, so its
 * passes over the samples are compiled for that copy's vectors. */
static inline __attribute__((always_inline)) int contact_complementarity(mlc_rollout *ro, double *z,
                                                                         int first_iteration) {
    const mlc_model *mod = ro->mod;
    const mlc_sim_settings *set = &mod->set;
    const int n4 = mod->n4, ns = mod->ns;
    const size_t nsp = (size_t)mod->nsp;
    double *ys = ro->xs + nsp; /* y of every sample at z* */
    const int ngroups = (int)nsp / 4;
    /* After the step's first iteration, a 4-sample group whose samples are all further above
     * their targets than z*'s y-block has moved since (times their rows' norms) cannot touch:
     * its heights are not computed and the solve does not read it (contact.h,
     * mlc_contact_live). 1e-9 of both z*'s norms covers the rounding of the heights, of the
     * distance and of the gap sums; the solve checks the force coupling itself. */
    mlc_contact_live lv = {0}, *live = NULL;
    if (!first_iteration && ro->nfar > 0) {
        const double *restrict zy = ro->zs + n4, *restrict zr = ro->zref;
        /* four partial sums (n4 is a multiple of 4), one vector: the order of a bound's sum
         * does not matter (its margin covers any order's rounding), its latency chain does */
        double d4[4] = {0, 0, 0, 0};
        for (int i = 0; i < n4; i += 4)
            for (int k = 0; k < 4; k++)
                d4[k] += (zy[i + k] - zr[i + k]) * (zy[i + k] - zr[i + k]);
        const double d2 = (d4[0] + d4[1]) + (d4[2] + d4[3]);
        /* ‖z*_y‖ ≤ ‖zref‖ + d bounds both heights' rounding */
        const double d = sqrt(d2), move = d * (1 + 1e-12) + 1e-9 * (2 * ro->zref_norm + d);
        int nr = 0, nskip = 0, prev = 0, *restrict runs = ro->sruns, *restrict skip = ro->sskip;
        double gmin = INFINITY, cmax = 0;
        for (int q = 0; q < ro->nfar; q++) {
            const int g = ro->sfar[q];
            if (!(ro->grad[g] > move)) continue;
            skip[nskip++] = g;
            gmin = ro->grad[g] < gmin ? ro->grad[g] : gmin;
            cmax = ro->gcoup[g] > cmax ? ro->gcoup[g] : cmax;
            if (4 * g > prev) runs[2 * nr] = prev, runs[2 * nr + 1] = 4 * g, nr++;
            prev = 4 * g + 4;
        }
        /* A group or two ruled out saves less than splitting the passes into runs costs */
        if (4 * nskip >= ngroups) {
            if (prev < ns) runs[2 * nr] = prev, runs[2 * nr + 1] = ns, nr++;
            ro->smove = move, ro->nskip = nskip;
            ro->skip_grad = gmin, ro->skip_coup = cmax;
            ro->skip_samples += 4 * nskip - (prev > ns ? prev - ns : 0); /* padding */
            lv = (mlc_contact_live){runs, nr, groups_hold, exact_heights, ro};
            live = &lv;
        }
    }
    /* y now; x and z only for the samples that end in contact (below) */
    if (live) { /* y of the live groups (each output the same sum whatever the columns) */
        for (int q = 0; q < lv.nruns; q++) {
            const int b = lv.runs[2 * q], nc = (lv.runs[2 * q + 1] - b + 3) & ~3;
            rows1(ro->zs + n4, n4, mod->ST + b, nsp, nc, ys + b);
        }
    } else {
        rows1(ro->zs + n4, n4, mod->ST, nsp, (int)nsp, ys);
    }
    if (first_iteration) {
        /* The targets, which depend only on z_n; and the reference of the later iterations'
         * bounds: each sample's distance to its threshold (the solve's g − tol, less 1e-9 of
         * the values for their rounding) over its row's norm (times its reciprocal rounded
         * down); a negative, infinite or NaN distance is −1, never ruled out. Only groups at a
         * positive distance ("far") can be ruled out in this step's later iterations. */
        const double *zy = ro->zs + n4;
        double n2 = 0;
        for (int i = 0; i < n4; i++)
            ro->zref[i] = zy[i], n2 += zy[i] * zy[i];
        ro->zref_norm = sqrt(n2);
        const double ground = set->ground, tol = mod->ground_tol, low = ground - tol;
        const double pd = set->push_speed * set->dt;
        const int pv = set->projection_velocity;
        const double *restrict yn = ro->xc + nsp, *restrict srn = ro->srnorm;
        const double *restrict ysr = ys;
        double *restrict yt = ro->yt, *restrict rad = ro->srad;
        for (int s = 0; s < ns; s++) {
            const double y = yn[s], p = y + pd;
            /* as fmin (a NaN height keeps the ground), inline */
            const double g =
                pv ? (y < ground ? y : ground) : (y < low ? (p < ground ? p : ground) : ground);
            yt[s] = g;
            const double th = g - tol;
            const double slack = ysr[s] - th - 1e-9 * (fabs(ysr[s]) + fabs(th));
            rad[s] = (slack >= 0) & (slack <= DBL_MAX) ? slack * srn[s] : -1;
        }
        ro->nfar = 0;
        for (int g = 0; g < ngroups && !ro->skip_off; g++) {
            double lo = rad[4 * g];
            for (int s = 4 * g + 1; s < MLC_MIN(4 * g + 4, ns); s++)
                lo = rad[s] < lo ? rad[s] : lo;
            ro->grad[g] = lo;
            if (lo > 0) ro->sfar[ro->nfar++] = g;
        }
        if (4 * ro->nfar < ngroups) ro->nfar = 0; /* too few to pay for the bounds */
    }
    mlc_contact *cs = &ro->cs;
    int np = mlc_contact_solve_normal_live(cs, ys, ro->yt, live);
    if (np == 0) return 0;
    /* x and z at z* of the samples in contact: the rows kernel over their columns of S packed
     * side by side (each output is the same sum in the same order whatever the columns, so
     * these are the bits of a full pass, at the contact set's cost). The pack is kept while
     * the set stays: across the iterations of a step and the steps of a resting contact. */
    const size_t ldp = nsp;
    if (np != ro->npk || memcmp(ro->pkey, cs->contact, sizeof(int) * (size_t)np) != 0) {
        for (int i = 0; i < n4; i++) {
            const double *src = mod->ST + nsp * (size_t)i;
            double *dst = ro->spack + ldp * (size_t)i;
            for (int b = 0; b < np; b++)
                dst[b] = src[cs->contact[b]];
        }
        memcpy(ro->pkey, cs->contact, sizeof(int) * (size_t)np);
        ro->npk = np;
    }
    rows3(ro->zs, n4, ro->spack, ldp, (np + 3) & ~3, ro->xpack, ldp);
    /* x's and z's wanted motions in ct (z's after x's), in one pass over the set */
    const double damp = set->damping, *restrict xn = ro->xc, *restrict xo = ro->xp;
    const double *restrict sx = ro->xpack, *restrict sz = ro->xpack + 2 * ldp;
    double *restrict ctx = ro->ct, *restrict ctz = ro->ct + ns;
    const int *restrict C = cs->contact;
    for (int b = 0; b < np; b++) {
        const size_t sx0 = (size_t)C[b], sz0 = 2 * nsp + (size_t)C[b];
        ctx[b] = xn[sx0] + damp * (xn[sx0] - xo[sx0]) - sx[b];
        ctz[b] = xn[sz0] + damp * (xn[sz0] - xo[sz0]) - sz[b];
    }
    mlc_contact_solve_friction_xz(cs, ro->ct, ro->ct + ns);
    double *restrict Y = ro->Ym; /* Y[4b + k]: the three blocks' forces side by side */
    const double *restrict lam = cs->lam;
    for (int b = 0; b < np; b++) {
        const size_t s = (size_t)C[b];
        Y[4 * b] = lam[s];
        Y[4 * b + 1] = lam[(size_t)ns + s];
        Y[4 * b + 2] = lam[2 * (size_t)ns + s];
        Y[4 * b + 3] = 0;
    }
    cols3(z, ro->zs, n4, mod->QiS, (size_t)n4, C, np, Y, 1, 4);
    return np;
}

/* Terrain contact (terrain.h; the terrain is not the flat plane): the same problem as
 * contact_complementarity's in each sample's own frame. Once a step (first iteration) every
 * sample's closest terrain feature at x_n gives its normal n, its half-space n·x ≥ n·p
 * (p = x_n − d n the closest point; the push_speed rule on n·x) and its tangents t1 (the
 * objective direction projected on the tangent plane) and t2 = n × t1. A force λ on sample j
 * along unit vector a_j moves sample i's coordinate along b_i by Dᵢⱼ (b_i·a_j), so the normal
 * problem runs on Dn = [Dᵢⱼ nᵢ·nⱼ] and friction per tangent axis on [Dᵢⱼ t_i·t_j] (the
 * couplings between the axes are left out: exact when the samples in contact share a normal).
 * Friction along t1 is bounded by μ against forward sliding and a·μ against backward sliding
 * (contact.anisotropy), along t2 by μ; μ is the friction of the sample's feature. */
static int contact_terrain(mlc_rollout *ro, double *z, int first_iteration) {
    const mlc_model *mod = ro->mod;
    const mlc_sim_settings *set = &mod->set;
    const int n4 = mod->n4, ns = mod->ns;
    const size_t nsp = (size_t)mod->nsp;
    mlc_terrain_contact *tc = &ro->tc;
    rows3(ro->zs, n4, mod->ST, nsp, (int)nsp, ro->xs, nsp);
    if (first_iteration)
        mlc_terrain_contact_update(tc, &mod->terrain, mod->Dss, mod->friction_s, ro->xc, 1, nsp,
                                   mod->ground_tol, set->push_speed * set->dt,
                                   set->projection_velocity);
    const double *xs = ro->xs;
    for (int s = 0; s < ns; s++) {
        const double *n = tc->frame + 9 * (size_t)s;
        ro->ys[s] = n[0] * xs[s] + n[1] * xs[nsp + s] + n[2] * xs[2 * nsp + s];
    }
    mlc_contact *cs = &ro->cs;
    int np = mlc_contact_solve_normal(cs, ro->ys, tc->target);
    memset(ro->fw, 0, sizeof(double) * 3 * (size_t)ns);
    if (np == 0) return 0;
    const double *xn = ro->xc, *xo = ro->xp;
    for (int a = 1; a <= 2; a++) { /* t1 into lam's x block, t2 into its z block */
        for (int b = 0; b < np; b++) {
            int s = cs->contact[b];
            const double *t = tc->frame + 9 * (size_t)s + 3 * a;
            double v = 0;
            for (int k = 0; k < 3; k++) {
                size_t o = (size_t)k * nsp + s;
                v += t[k] * (xn[o] + set->damping * (xn[o] - xo[o]) - xs[o]);
            }
            ro->ct[b] = v;
        }
        if (a == 1)
            mlc_contact_solve_friction_box(cs, 0, ro->ct, tc->Dt1, tc->mu1l, tc->mu1h);
        else
            mlc_contact_solve_friction_box(cs, 2, ro->ct, tc->Dt2, tc->mu2, tc->mu2);
    }
    double *Y = ro->Ym; /* Y[4b + k]: the world-frame force of the b-th sample in contact */
    for (int b = 0; b < np; b++) {
        int s = cs->contact[b];
        const double *f = tc->frame + 9 * (size_t)s;
        double ln = cs->lam[(size_t)ns + s], l1 = cs->lam[s], l2 = cs->lam[2 * (size_t)ns + s];
        ro->active[b] = s;
        for (int k = 0; k < 3; k++) {
            Y[4 * b + k] = ln * f[k] + l1 * f[3 + k] + l2 * f[6 + k];
            ro->fw[(size_t)k * ns + s] = Y[4 * b + k];
        }
        Y[4 * b + 3] = 0;
    }
    cols3(z, ro->zs, n4, mod->QiS, (size_t)n4, ro->active, np, Y, 1, 4);
    return np;
}

static inline __attribute__((always_inline)) int step_body(mlc_rollout *ro,
                                                           const mlc_actuation *act, int forced) {
    const mlc_model *mod = ro->mod;
    const mlc_sim_settings *set = &mod->set;
    const int n4 = mod->n4, r = mod->r, ns = mod->ns, ma = mod->ma, nca = mod->nca;
    const int ncp = mod->ncp, ncolp = 3 * ncp, nsp = mod->nsp;
    const size_t ldc = (size_t)ro->ldc, npad = (size_t)ro->npad;
    const size_t n3 = (size_t)n4 * 3;
    const double ih2 = 1.0 / (set->dt * set->dt), mu = set->mu, gam = set->gamma;
    double *restrict zc = ro->zc, *restrict zp = ro->zp, *restrict z = ro->zn;
    mlc_step_profile *prof = ro->prof;
    double tprev = prof ? mlc_now() : 0;

    /* ---- per-step constants: ā(t_{n+1}), 𝒦_c(ā) (both layouts), q, z*₀ = Q⁻¹ b0 ---- */
    double t = (ro->step + 1) * set->dt;
    mlc_actuation_eval(act, mod->m, t, set->ramp, ro->abar);
    if (ro->ledger) mlc__ledger_before_step(ro);
    for (int c = 0; c < nca; c++) {
        double *K = ro->Kc + (size_t)c * n3, *QK = ro->QG + (size_t)n4 * (ncolp + 3 * c);
        const double *Kt = mod->Ka + (size_t)c * ma * n3, *QKt = mod->QiKa + (size_t)c * ma * n3;
        memset(K, 0, sizeof(double) * n3);
        memset(QK, 0, sizeof(double) * n3);
        for (int v = 0; v < ma; v++) {
            double av = ro->abar[v];
            if (av == 0) continue;
            const double *Kv = Kt + (size_t)v * n3, *QKv = QKt + (size_t)v * n3;
            for (size_t i = 0; i < n3; i++)
                K[i] += av * Kv[i], QK[i] += av * QKv[i];
        }
        /* transposed into the rows of GT, columns npad·j + ncp + c (K's values: the same sums,
         * same terms in the same order, that were recomputed here from a transposed copy) */
        for (int i = 0; i < n4; i++)
            for (int j = 0; j < 3; j++)
                ro->GT[npad * j + ncp + c + ldc * (size_t)i] = K[i + n4 * j];
    }
    if (!mod->bdf2) {
        for (int i = 0; i < r; i++)
            ro->q[i] = 2 * zc[i] - zp[i];
    } else { /* ẑ = (4z_n − z_{n−1})/3 + (2h/9)(4v_n − v_{n−1}) (sim.h) */
        const double c = 2 * set->dt / 9;
        for (int i = 0; i < r; i++)
            ro->q[i] = (4 * zc[i] - zp[i]) / 3 + c * (4 * ro->vc[i] - ro->vp[i]);
    }
    /* z*₀ = Q⁻¹(N q/h² + BᵀMg) = (Q₄⁻¹N) q/h² + g ⊗ Q₄⁻¹Σms: no solve in the step (BDF2:
     * (9/4) N q/h², and the damping's C (4z_n − z_{n−1})/3 · 3/(2h) with Q₄⁻¹ (3/2)C/h). */
    {
        double *sq = ro->zi; /* scratch: q/h² */
        const double iq = mod->bdf2 ? 2.25 * ih2 : ih2;
        for (int i = 0; i < r; i++)
            sq[i] = iq * ro->q[i];
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < n4; i++)
                ro->zs0[k * n4 + i] = set->gravity[k] * mod->Qig[i];
        cols3(ro->zs0, ro->zs0, n4, mod->QiN, (size_t)n4, NULL, n4, sq, (size_t)n4, 1);
        if (mod->QiC && !mod->bdf2)
            cols3(ro->zs0, ro->zs0, n4, mod->QiC, (size_t)n4, NULL, n4, zc, (size_t)n4, 1);
        else if (mod->QiC) {
            double *zd = ro->b0; /* scratch (b0 is set again below when forced) */
            for (int i = 0; i < r; i++)
                zd[i] = (4 * zc[i] - zp[i]) / 3;
            cols3(ro->zs0, ro->zs0, n4, mod->QiC, (size_t)n4, NULL, n4, zd, (size_t)n4, 1);
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
                    for (int i = 0; i < n4; i++)
                        ro->ba[k * n4 + i] += av * Kv[i + n4 * k];
            }
        memcpy(ro->b0, ro->ba, sizeof(double) * (size_t)r);
        mlc_dense_cholesky_spd_solve(mod->Lq, (size_t)n4, n4, ro->b0, (size_t)n4, 3);
        for (int i = 0; i < r; i++)
            ro->zs0[i] += ro->b0[i];
    }
    /* Sample positions at z_n and z_{n−1} (targets and approach test); z_{n−1}'s are the
     * previous step's z_n's when the steps are consecutive. */
    int contact = set->contact && ns > 0;
    if (contact && !ro->x_valid) {
        rows3(zp, n4, mod->ST, (size_t)nsp, nsp, ro->xp, (size_t)nsp);
        rows3(zc, n4, mod->ST, (size_t)nsp, nsp, ro->xc, (size_t)nsp);
    }
    PROF_MARK(t_setup);

    /* ---- local-global iterations ---- */
    memcpy(z, set->guess_previous ? zc : ro->q, sizeof(double) * (size_t)r);
    int it, na = 0, prev_na = ro->contacts;
    const double pscale = forced ? mu + gam : mu;
    double *scl = ro->scl; /* per lane: μ (μ + γ when forced) for passive clusters, else γ */
    for (int c = 0; c < (int)npad; c++)
        scl[c] = c < ncp ? pscale : gam;
    double *F = ro->Fall, *C = ro->coef, *PR = ro->PR;
    /* Columns of the combined maps: 3ncp passive, then 3nca actuation (not when forced). */
    const int npol = forced ? ncp : ncp + nca, ncol = 3 * npol;
    for (it = 0; it < set->iterations; it++) {
        /* (1) local step, (2) right-hand side and (3) tentative solve at once: the solve is
         * linear, so z* = Q⁻¹b0 + Σ_c (Q⁻¹G_c) μR_cᵀ + Σ_c (Q⁻¹𝒦_c) γΩ_cᵀ (precomputed). */
        rows3(z, n4, ro->GT, ldc, (int)ldc, F, ldc);
        PROF_MARK(t_maps);
        /* All clusters' polar decompositions in one batch, lane by lane: F is already laid
         * out as mlc_polar_lanes wants it (F_c[k][j] at F[(3k + j)·npad + c]). */
        int pit = mlc_polar_lanes(npol, F, npad, ro->qs, npad, PR, npad, NULL);
        if (prof) prof->polar_iterations += pit, prof->polar_calls += npol;
        for (int k = 0; k < 3; k++) /* all npad lanes (≤ ldc/3): a stride-3 interleave */
            scale_interleave3(C + k * ldc, PR + 3 * k * npad, npad, scl, (int)npad);
        PROF_MARK(t_polar);
        cols3(ro->zs, ro->zs0, n4, ro->QG, (size_t)n4, NULL, ncol, C, ldc, 1); /* zs0 + ... */
        PROF_MARK(t_rhs);
        /* (4) contact at z*, (5) z = z* + Q⁻¹ f_c. */
        if (set->tolerance > 0) memcpy(ro->zi, z, sizeof(double) * (size_t)r);
        na = 0;
        if (contact) { /* with forces, these write z = z* + Q⁻¹ f_c themselves */
            switch (mod->contact_solve) {
            case CONTACT_SOLVE_EQUALITY:
                na = contact_equality(ro, z, prev_na);
                break;
            case CONTACT_SOLVE_TERRAIN:
                na = contact_terrain(ro, z, it == 0);
                break;
            case CONTACT_SOLVE_PLANE:
                na = contact_complementarity(ro, z, it == 0);
                break;
            }
            prev_na = na;
        }
        if (na == 0) memcpy(z, ro->zs, sizeof(double) * (size_t)r);
        PROF_MARK(t_contact);
        if (ro->trace && it < ro->trace_cap)
            memcpy(ro->trace + (size_t)it * r, z, sizeof(double) * (size_t)r);
        if (set->tolerance > 0) {
            double d2 = 0;
            for (int i = 0; i < r; i++)
                d2 += (z[i] - ro->zi[i]) * (z[i] - ro->zi[i]);
            if (sqrt(d2) < set->tolerance) {
                it++;
                break;
            }
        }
    }
    ro->last_iterations = it;
    if (!forced) { /* bᵃ with the last iteration's Ω_c, for the work term */
        memset(ro->ba, 0, sizeof(double) * (size_t)r);
        for (int c = 0; c < nca; c++) {
            double Om[9];
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++)
                    Om[k + 3 * j] = PR[(size_t)(3 * k + j) * npad + ncp + c];
            block_rhs(ro->ba, ro->Kc + (size_t)c * n3, n4, Om, gam);
        }
    }
    ro->contacts = na;

    /* ---- work Δzᵀ(bᵃ − Qᵃ z) (Eq. 18, bracket = −∇_z E_a); Lap z as axpys (Lap symmetric) ---- */
    double work = 0, *restrict lz = ro->zi; /* scratch: the iteration copy is no longer needed */
    memset(lz, 0, sizeof(double) * (size_t)r);
    if (!forced) {
        double *gz = ro->b0; /* scratch (b0 is only used by the forced setup) */
        for (int i = 0; i < r; i++)
            gz[i] = gam * z[i];
        cols3(lz, lz, n4, mod->Lapa ? mod->Lapa : mod->Lap, (size_t)n4, NULL, n4, gz, (size_t)n4,
              1);
    }
    for (int i = 0; i < r; i++)
        work += (z[i] - zc[i]) * (ro->ba[i] - lz[i]);
    ro->last_work = work;

    /* ---- advance: z_{n−1} ← z_n, z_n ← z (BDF2: v_{n+1} = (3z − 4z_n + z_{n−1})/(2h)) ---- */
    if (mod->bdf2) {
        double *v = ro->vp, ih = 0.5 / set->dt;
        for (int i = 0; i < r; i++)
            v[i] = (3 * z[i] - 4 * zc[i] + zp[i]) * ih;
        ro->vp = ro->vc, ro->vc = v;
    }
    ro->zp = zc;
    ro->zc = z;
    ro->zn = zp;
    ro->step++;
    ro->x_valid = 0;
    if (!mlc_all_finite(z, (size_t)r)) {
        PROF_MARK(t_finish);
        return 1;
    }
    /* Sample positions of the new z_n into the old xp, then swap: the next step finds
     * xc = S z_n and xp = S z_{n−1} (the same values recomputing them would give). */
    if (contact) {
        rows3(z, n4, mod->ST, (size_t)nsp, nsp, ro->xp, (size_t)nsp);
        double *tmp = ro->xp;
        ro->xp = ro->xc, ro->xc = tmp;
        ro->x_valid = 1;
    }
    if (ro->ledger) mlc__ledger_after_step(ro);
    double com[3];
    mlc_model_com(mod, z, com);
    double d2 = 0;
    for (int k = 0; k < 3; k++)
        d2 += (com[k] - mod->com_rest[k]) * (com[k] - mod->com_rest[k]);
    if (prof) {
        prof->steps++;
        prof->iterations += it;
    }
    PROF_MARK(t_finish);
    return d2 > 1e6 * mod->extent * mod->extent; /* |Δcom| > 1e3 × extent: runaway */
}

/* The step itself is compiled twice too (its own small loops then run 4-wide on the AVX2
 * path; no loop reassociates a sum, so the paths stay bit-identical), selected with the
 * kernels. */
static int step_base(mlc_rollout *ro, const mlc_actuation *act, int forced) {
    return step_body(ro, act, forced);
}
static int (*step_impl)(mlc_rollout *, const mlc_actuation *, int) = step_base;
#ifdef MLC_HAVE_AVX2_CLONES
__attribute__((target("avx2"))) static int step_avx2(mlc_rollout *ro, const mlc_actuation *act,
                                                     int forced) {
    return step_body(ro, act, forced);
}
#endif

/* The kernels and the step follow the one process-wide decision (cpu.h), at load. */
__attribute__((constructor)) static void select_kernels(void) {
#ifdef MLC_HAVE_AVX2_CLONES
    kernel_path = "sse2 (2-wide, emulated FMA)";
    if (mlc__cpu_use_fma() && !mlc__cpu_use_avx2()) {
        rows3 = rows3_v2f, rows1 = rows1_v2f, cols3 = cols3_v2f, contact_solve = contact_solve_v2f;
        scale_interleave3 = scale_interleave3_v2f;
        kernel_path = "sse2 (2-wide, FMA)";
    }
    if (!mlc__cpu_use_avx2()) return;
    rows3 = rows3_v4, rows1 = rows1_v4, cols3 = cols3_v4, contact_solve = contact_solve_v4;
    scale_interleave3 = scale_interleave3_v4;
    step_impl = step_avx2;
    kernel_path = "avx2 (4-wide)";
#endif
}

int mlc_rollout_step(mlc_rollout *ro, const mlc_actuation *act) {
    return step_impl(ro, act, 0);
}
int mlc_rollout_step_forced(mlc_rollout *ro, const mlc_actuation *act) {
    return step_impl(ro, act, 1);
}

/* ---- what the objective reads of a frame (objective.h) ----------------------------------------
 */

/* Height of the lowest contact sample of the current state (+∞ without contact). */
static double lowest_sample(const mlc_rollout *ro) {
    const mlc_model *mod = ro->mod;
    if (!ro->x_valid) return INFINITY;
    const double *y = ro->xc + mod->nsp;
    double lo = INFINITY;
    if (ro->tc.frame) { /* terrain: ground + the smallest distance to it */
        const size_t nsp = (size_t)mod->nsp;
        for (int s = 0; s < mod->ns; s++) {
            double x[3] = {ro->xc[s], y[s], ro->xc[2 * nsp + s]}, n[3];
            lo = fmin(lo, mlc_terrain_query(&mod->terrain, x, n, NULL));
        }
        return mod->set.ground + lo;
    }
    for (int s = 0; s < mod->ns; s++)
        lo = MLC_MIN(y[s], lo); /* as fmin (NaN heights skipped), but inline */
    return lo;
}

/* Body rotation R(t) = polar(Σ V F_e), warm-started from the previous frame's. */
static void body_rotation(mlc_rollout *ro, const double *z, double R[9]) {
    double A[9];
    mlc__model_body_matrix(ro->mod, z, A);
    mlc_polar(A, ro->qbody, R);
}

void mlc_rollout_frame_state(mlc_rollout *ro, mlc_frame_state *f) {
    mlc_model_com(ro->mod, ro->zc, f->com);
    body_rotation(ro, ro->zc, f->R);
    f->lowest = lowest_sample(ro);
    f->work = ro->last_work;
    f->abar = ro->abar;
    f->m = ro->mod->m;
    f->contacts = ro->contacts;
}
