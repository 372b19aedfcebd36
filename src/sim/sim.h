/* sim.h: the reduced soft-body simulator (docs/method.md §4–7, §11): precomputed reduced model,
 * per-thread rollouts with ground contact. The objective that scores a rollout is objective.h.
 *
 * Reduced coordinates (r = 12w): z = [t_x; t_y; t_z], t_k ∈ ℝ^{4w} holds row k of every
 * skinning transform T_b ∈ ℝ^{3×4}: t_k[4b + c] = (T_b)_{kc}. Vertex i moves to
 * x_i[k] = Σ_b W_ib (T_b [X_i; 1])_k. At rest T_0 = [I | 0] / W_{·0}, other T_b = 0.
 *
 * Ownership and threads: an mlc_model is immutable after creation and may be shared by any
 * number of threads; each thread owns its mlc_rollout (state and scratch). Stepping a rollout
 * never allocates and never touches full-mesh arrays.
 */
#ifndef MODALLOCO_SIM_H
#define MODALLOCO_SIM_H

#include "base.h"
#include "fem.h"
#include "mesh.h"
#include "subspace.h"
#include "terrain.h"

/* contact.model (docs/method.md, "Contact"): how a step solves the samples' contact. Each model's
 * properties are in one table (sim_model.c), read through the functions below; the step
 * chooses its solve once, in one switch (sim_step.c). */
typedef enum mlc_contact_model {
    MLC_CONTACT_COMPLEMENTARITY = 0, /* default: forces only push, Coulomb friction (contact.h) */
    MLC_CONTACT_EQUALITY = 1,        /* the paper's equality-constrained solve (for comparisons) */
    MLC_CONTACT_MODELS
} mlc_contact_model;

/* The model named `name` (contact.model's values "complementarity" and "equality"), or -1. */
int mlc_contact_model_parse(const char *name);
/* Its name (as contact.model spells it); "unknown" out of range. */
const char *mlc_contact_model_name(mlc_contact_model model);
/* 1 when it solves on any terrain (slopes, heightfields, boxes, anisotropy); 0 when on the flat
 * ground only. */
int mlc_contact_model_any_terrain(mlc_contact_model model);
/* 1 when its multipliers are forces that only push (contact work, per-contact forces, the
 * full-space reference's contact on every surface vertex); 0 when they can pull. */
int mlc_contact_model_forces(mlc_contact_model model);

typedef struct mlc_sim_settings {
    double dt;               /* h, seconds */
    int steps;               /* S */
    int iterations;          /* local-global iterations per step (max) */
    double tolerance;        /* stop iterating when ‖Δz‖ < tolerance (0 = never) */
    int guess_previous;      /* 0: start iterations from q = 2z_n - z_{n-1}; 1: from z_n */
    double gravity[3];       /* m/s² */
    int contact;             /* ground contact on/off */
    double damping;          /* μ_c ∈ [0,1): fraction of tangential velocity kept per step */
    int projection_velocity; /* 0: "position" projection (default); 1: "velocity" (paper) */
    mlc_contact_model contact_model; /* contact.model (above) */
    double push_speed; /* m/s: the fastest a penetrating sample is pushed back out (position
                          projection, complementarity); bounds the energy a deep
                          penetration can give back */
    double friction;   /* Coulomb coefficient μ_f: tangential force ≤ μ_f × normal force per
                          sample and axis (complementarity); 0 = unbounded (the paper's
                          damping alone) */
    double ground;     /* y of the ground plane */
    double density, mu, gamma; /* ρ, passive μ, actuation γ */
    double rayleigh[2]; /* Rayleigh damping [α (1/s), β (s)]: force −(αM + βK) v with K the
                           rest stiffness (μ + γ) Σ V GᵀG; constant, so Q stays constant
                           (Q += (αN + βK)/h). Not co-rotational: β also slows a spin */
    double ramp;        /* actuation ramp-in, seconds (0 = off): see mlc_actuation_eval */
    int integrator;     /* MLC_INTEGRATOR_EULER (backward Euler) or MLC_INTEGRATOR_BDF2 */
    const mlc_terrain *terrain; /* contact geometry (borrowed by mlc_model_create, which
                                   keeps its own copy); NULL = the plane y = ground with
                                   friction μ_f */
    int threads; /* mlc_model_create's pass over the tets: 1 = one thread, otherwise two
                    where the machine has two cores (the same bits either way) */
} mlc_sim_settings;

/* sim.integrator (docs/method.md, "Time integration"). BDF2 with the constant step h:
 * v_{n+1} = (3z_{n+1} − 4z_n + z_{n−1})/(2h), a step minimizes
 * (9/8h²)‖z − ẑ‖²_N − zᵀBᵀMg + E_v + E_a + (3/4h)‖z − (4z_n − z_{n−1})/3‖²_C with
 * ẑ = (4z_n − z_{n−1})/3 + (2h/9)(4v_n − v_{n−1}): the system matrix is backward Euler's with
 * N/h² → (9/4)N/h² and C/h → (3/2)C/h, constant, so one factorization serves every step. A
 * rollout starts from rest (or from mlc_rollout_set_state's constant-velocity history), an
 * exact history, so every step is BDF2. */
enum { MLC_INTEGRATOR_EULER = 0, MLC_INTEGRATOR_BDF2 = 1 };

/* Per-mode actuation signals (Eq. 6): a_i(t) = Σ_j A[i*k+j] sin(2π(t/T[i*k+j] + θ[i*k+j])),
 * for the m modes of the subspace (A = 0 leaves a mode idle). θ in cycles, T in seconds. */
typedef struct mlc_actuation {
    int m, k;
    const double *A, *T, *theta;
} mlc_actuation;

typedef struct mlc_model mlc_model;
typedef struct mlc_rollout mlc_rollout;

/* Largest subspace a model accepts: w skinning weights and m actuation modes (the energy
 * evaluation keeps fixed buffers of these sizes; the configuration allows w ≤ 32 and m ≤ 64).
 * mlc_model_create rejects a larger subspace with MLC_EINVAL. */
#define MLC_SIM_MAX_W 64
#define MLC_SIM_MAX_MODES 256

/* Precompute the reduced model (one streaming pass over the tets, never a dense 9|T|×r
 * matrix): Qᵛ, Qᵃ, N blocks, gravity, passive and actuation cluster tensors, centre-of-mass
 * and body-rotation maps, contact rows, and the Cholesky factor of the 4w×4w block of Q. */
mlc_status mlc_model_create(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                            const mlc_sim_settings *settings, mlc_model **out, mlc_err *err);

/* Per-tet materials and per-vertex friction (regions.h builds them from material.regions).
 * A NULL array means the settings' scalar everywhere. Values must be positive (friction ≥ 0,
 * 0 = unbounded, as contact.friction). */
typedef struct mlc_materials {
    const double *mu;       /* nt: μ_e (passive stiffness of tet e), or NULL: settings.mu */
    const double *gamma;    /* nt: γ_e, or NULL: settings.gamma */
    const double *density;  /* nt: ρ_e, or NULL: settings.density */
    const double *friction; /* nv: μ_f of a contact sample at vertex v, or NULL:
                               settings.friction */
} mlc_materials;

/* mlc_model_create with per-tet materials: Qᵛ = Σ μ_e V G Gᵀ, Qᵃ = Σ γ_e V G Gᵀ, the cluster
 * maps G_c and tensors 𝒦_c weighted by μ_e/μ and γ_e/γ (the step scales them by μ and γ), the
 * lumped mass m_v = Σ_{e∋v} ρ_e V_e/4, and each contact sample's friction. mat = NULL (or all
 * arrays NULL) gives exactly mlc_model_create's model, bit for bit. The test-only forced step
 * (mlc_rollout_step_forced) assumes one material. */
mlc_status mlc_model_create_materials(const mlc_mesh *mesh, const mlc_fem *fem,
                                      const mlc_subspace *sub, const mlc_sim_settings *settings,
                                      const mlc_materials *mat, mlc_model **out, mlc_err *err);
/* The model's total mass Σ_v m_v (kg). */
double mlc_model_mass(const mlc_model *model);
void mlc_model_destroy(mlc_model *model);
int mlc_model_dim(const mlc_model *model); /* r = 12w */
const mlc_sim_settings *mlc_model_settings(const mlc_model *model);
/* Rest state z (r values). */
void mlc_model_rest_state(const mlc_model *model, double *z);
/* Centre of mass (mass-weighted) and body rotation R (3×3 column-major) of a state. */
void mlc_model_com(const mlc_model *model, const double *z, double com[3]);
void mlc_model_rotation(const mlc_model *model, const double *z, double R[9]);
/* Full-space positions of selected vertices (n indices into the mesh) for output frames:
 * out is 3×n column-major; verts = NULL means vertices 0..n−1. Cost O(n·w). */
void mlc_model_skin(const mlc_model *model, const double *z, int n, const int *verts, double *out);
/* Coordinate k (0 x, 1 y, 2 z) alone of the same vertices (out: n values), the same bits as
 * mlc_model_skin's. */
void mlc_model_skin_coord(const mlc_model *model, const double *z, int k, int n, const int *verts,
                          double *out);
/* Vertex i's skinning row φ_i (4w values, φ[4b + c] = W_ib X̃_i[c] with X̃_i = [X_i; 1]): its
 * coordinate k under state z is t_kᵀ φ_i (t_k = z + 4w·k), the value mlc_model_skin computes
 * (to rounding). For bounds on many vertices at once (credibility.c). */
void mlc_model_skin_row(const mlc_model *model, int i, double *phi);

mlc_status mlc_rollout_create(const mlc_model *model, mlc_rollout **out);
void mlc_rollout_destroy(mlc_rollout *ro);
/* Back to rest (z_n = z_{n-1} = rest, t = 0). */
void mlc_rollout_reset(mlc_rollout *ro);
/* Advance one step with the given actuation (NULL = none). Returns 0, or 1 when the state
 * became non-finite or ran away (the rollout should stop). */
int mlc_rollout_step(mlc_rollout *ro, const mlc_actuation *act);
const double *mlc_rollout_state(const mlc_rollout *ro);    /* current z (r) */
const mlc_model *mlc_rollout_model(const mlc_rollout *ro); /* the model it steps */

/* What the objective reads of the current state (objective.h), taken once a frame and in order:
 * the body rotation is warm-started from the previous call's (mlc_rollout_reset restarts it). */
typedef struct mlc_frame_state {
    double com[3];      /* centre of mass */
    double R[9];        /* body rotation, polar factor of Σ V F (3×3 column-major) */
    double lowest;      /* height of the lowest contact sample (+∞ without contact) */
    double work;        /* actuation work of the last step (0 at rest) */
    const double *abar; /* ā of the last step (m + 1 values; borrowed from the simulator) */
    int m;              /* actuation modes */
    int contacts;       /* active samples in the last step */
} mlc_frame_state;
void mlc_rollout_frame_state(mlc_rollout *ro, mlc_frame_state *f);
int mlc_rollout_contacts(const mlc_rollout *ro); /* active samples in the last step */

/* ---- Additions (documented extensions of the contract) ---------------------------------- */

/* Contact solve tolerance (docs/method.md §6): the contact system L f = d (least fᵀN⁻¹f) is solved
 * as the damped pseudo-inverse (L N Lᵀ + εI) y = d, f = N Lᵀ y, with ε = RCOND² × the mean
 * diagonal of L N Lᵀ, so directions whose singular values are below about RCOND × typical
 * (the rounding noise of a flat patch of samples) are damped away instead of amplified. */
#define MLC_SIM_CONTACT_RCOND 1e-4

/* Defaults of the simulator's settings (docs/method.md §9), written only here: config.c's
 * defaults and its key table, and mlc_sim_settings_default (sim_testing.h), use them. */
#define MLC_SIM_DEFAULT_DT 0.01       /* time step h, seconds */
#define MLC_SIM_DEFAULT_STEPS 300     /* steps S */
#define MLC_SIM_DEFAULT_ITERATIONS 10 /* local-global iterations a step */
#define MLC_SIM_DEFAULT_GRAVITY 9.81  /* m/s², along −y */
#define MLC_SIM_DEFAULT_PUSH_SPEED 0.1
#define MLC_SIM_DEFAULT_FRICTION 0.5 /* Coulomb μ_c */
#define MLC_SIM_DEFAULT_DENSITY 1000 /* ρ, kg/m³ */
#define MLC_SIM_DEFAULT_MU 1e6       /* passive stiffness μ */
#define MLC_SIM_DEFAULT_GAMMA 1e6    /* actuation stiffness γ */

/* ā = [a(t); 1] (m + 1 values) of Eq. 6 at time t for a model with m modes; modes beyond
 * act->m, and sinusoids with A = 0, are idle. act may be NULL (a = 0). With ramp > 0 every
 * a_i(t) is multiplied by the envelope s(t/ramp), s(x) = x³(10 − 15x + 6x²) on [0, 1] and 1
 * after: a(0) = 0 with zero first and second derivatives, monotone, and the unramped signal
 * from t = ramp on, so the body is not kicked at t = 0. */
void mlc_actuation_eval(const mlc_actuation *act, int m, double t, double ramp, double *abar);
/* The envelope s(t/ramp) above (1 when ramp <= 0 or t >= ramp, 0 for t <= 0). */
double mlc_actuation_ramp(double t, double ramp);

/* The model's contact geometry (its own copy; a slope settled onto the rest mesh). */
const mlc_terrain *mlc_model_terrain(const mlc_model *model);

/* Largest bounding-box extent of the rest mesh (runaway and contact tolerances scale with it). */
double mlc_model_extent(const mlc_model *model);

/* 1 when this process's step emulates its fused multiply-adds (a CPU without the FMA
 * instruction, or MLC_NO_FMA=1): the same results, about 20× slower; commands say so. */
int mlc_sim_fma_emulated(void);

/* Energy ledger of a rollout (joules; docs/method.md, "Energy"). Mechanical energy of the state
 * (z_n, z_{n−1}) at t_n:  E = K + G + E_v + E_a with
 *   K   = ½ vᵀ N v, v = (z_n − z_{n−1})/h (kinetic, of the backward-Euler velocity),
 *   G   = −Σ_i m_i g·x_i (gravitational),
 *   E_v = ½ Σ_e μ V_e ‖F_e − R_c(e)‖², E_a = ½ Σ_e γ V_e ‖F_e − Ω_c(e) Y_e(ā(t_n))‖² (elastic,
 *         with the optimal cluster rotations of z_n).
 * Over the steps since the reset it accumulates the actuation work (E_a(z_n, ā(t_{n+1})) −
 * E_a(z_n, ā(t_n)) a step: what changing the targets at a fixed shape stored in the body),
 * the contact work (Σ_s λ_s·(x_{n+1,s} − x_{n,s}) over the samples and axes, with the
 * step's final contact forces; its normal part separately) and the numerical dissipation
 * E(t_0) + works − E(t_n), which backward Euler keeps ≥ 0. With BDF2 the kinetic term uses
 * BDF2's velocity v_n, and the dissipation is not monotone step by step (docs/method.md). Contact
 * work is recorded for the complementarity model only (the equality model's multipliers are not
 * forces). */
typedef struct mlc_energy_ledger {
    double kinetic, gravity, elastic_passive, elastic_actuation; /* of the current state */
    double total;                                                /* their sum */
    double initial; /* the total at t_0 (the last reset, or when the ledger started) */
    double actuation_work, contact_work, contact_work_normal; /* accumulated */
    double dissipated;        /* initial + actuation_work + contact_work − total */
    double contact_work_step; /* contact work of the last step */
} mlc_energy_ledger;
/* Actuation work Δzᵀ(bᵃ − Qᵃ z) of the last step (Eq. 18 bracket, resolved signs). */
double mlc_rollout_last_work(const mlc_rollout *ro);

/* Where the time of subsequent steps goes (seconds, accumulated; for bench_sim --profile).
 * Timing costs a few clock reads per iteration, so profiled steps run somewhat slower. */
typedef struct mlc_step_profile {
    double t_setup;   /* per-step constants: ā, 𝒦_c(ā), q, Q⁻¹b0, sample positions */
    double t_maps;    /* F_c = Σ μV F_e and H_c of every cluster from z (local step, part 1) */
    double t_polar;   /* the polar decompositions R_c, Ω_c (local step, part 2) */
    double t_rhs;     /* rotation terms of the right-hand side, i.e. the tentative z* */
    double t_contact; /* active set, contact system (factor when the set changed), correction */
    double t_finish;  /* work term, state advance, blow-up check */
    long steps, iterations, polar_calls, polar_iterations, contact_factorizations;
} mlc_step_profile;

#endif
