/* sim_testing.h: test-only setup and inspection of the simulators' internals (sim_step.c,
 * sim_model.c, sim_energy.c, fullspace.c). This header is NOT part of the program's interface: only
 * the tests, the fuzz targets, the benchmarks and the source files that define these functions
 * include it. */
#ifndef MODALLOCO_SIM_TESTING_H
#define MODALLOCO_SIM_TESTING_H

#include "base.h"

/* The simulators' types, declared here (as in sim.h and fullspace.h) instead of included, so a
 * test that includes this header before or without sim.h gets nothing else with it. C11 allows
 * a typedef to be repeated. */
typedef struct mlc_sim_settings mlc_sim_settings;
typedef struct mlc_actuation mlc_actuation;
typedef struct mlc_model mlc_model;
typedef struct mlc_rollout mlc_rollout;
typedef struct mlc_energy_ledger mlc_energy_ledger;
typedef struct mlc_step_profile mlc_step_profile;
typedef struct mlc_fullspace mlc_fullspace;
typedef struct mlc_fullspace_convergence mlc_fullspace_convergence;

/* ---- Reduced simulator (sim_step.c, sim_model.c, sim_energy.c) ------------------------------- */
/* Set the current and previous state (e.g. a rotated or moving start for tests). The time
 * (step counter) is kept: call mlc_rollout_reset first to start at t = 0. */
void mlc_rollout_set_state(mlc_rollout *ro, const double *z, const double *z_prev);
/* Defaults of docs/method.md §9 (h = 0.01 s, 300 steps, 10 iterations from q, g = −9.81 ŷ,
 * contact on, μ_c = 0.5, position projection, ground y = 0, ρ = 1000, μ = γ = 1e6). */
void mlc_sim_settings_default(mlc_sim_settings *s);
/* Angular momentum about the origin, Σ_i m_i x_i × v_i with x from z and v = (z − z_prev)/h
 * (ε_abc t_bᵀ N (t_c − t_c,prev)/h in block form). */
void mlc_model_angular_momentum(const mlc_model *model, const double *z, const double *z_prev,
                                double L[3]);
/* Test-only contrast of Fig. 3 ("force-based actuation"): one step in which the actuation
 * energy is replaced by passive ARAP of stiffness γ (rotations R_c, so Q is unchanged) plus
 * the world-frame generalized force f = γ Σ_c Σ_i a_i 𝒦_c[i] = Bᵀ K_γ D a, i.e. "f = K D a"
 * with K the Hessian of ½Σ γV‖F‖². It does not co-rotate with the body, so it can create net
 * torque. Same return value as mlc_rollout_step; allocation-free. */
int mlc_rollout_step_forced(mlc_rollout *ro, const mlc_actuation *act);

/* Incremental potential of the NEXT step (from the current z_n, z_{n−1}, at t_{n+1}) evaluated
 * at z, with the optimal rotations of z (exact polar, cold start) and every constant term:
 * (1/2h²)‖z − q‖²_N − zᵀBᵀMg + E_v + E_a (½ convention). Contact is not part of it. For tests
 * (each local-global iteration must not increase it); O(r² + clusters·r). Backward Euler's
 * potential: with sim.integrator = BDF2 it is not the step's. */
double mlc_rollout_energy(const mlc_rollout *ro, const mlc_actuation *act, const double *z);
/* Keep a ledger from now on (NULL stops): it is filled with the current state's energies and
 * zero works, and updated after every step (O(r² + clusters) a step: tests and reports, not
 * the optimizer's rollouts). act must be the actuation the next steps will use. Resetting or
 * setting the state does not restart it: call this again after mlc_rollout_reset. */
void mlc_rollout_set_ledger(mlc_rollout *ro, mlc_energy_ledger *ledger, const mlc_actuation *act);
/* The contact forces of the last step per sample (3 × ns, axis k at k·ns, newtons; y is the
 * normal force, ≥ 0), zero off contact. Complementarity model only (else all zero). On a
 * terrain (not the flat plane) they are world-frame force vectors (normal and friction
 * together). */
const double *mlc_rollout_contact_forces(const mlc_rollout *ro);

/* Record the iterates of subsequent steps: after iteration j of a step, z is copied to
 * buf + j·r (at most cap iterations). buf = NULL stops recording. For tests. */
void mlc_rollout_set_trace(mlc_rollout *ro, double *buf, int cap);
/* on = 0: the complementarity contact reads every sample in every iteration, instead of ruling
 * out the samples whose bounds show they cannot touch (the same bits either way; for tests).
 * The count is of samples ruled out, summed over the iterations since creation. */
void mlc_rollout_set_contact_skip(mlc_rollout *ro, int on);
long mlc_rollout_contact_skipped(const mlc_rollout *ro);
/* p = NULL stops profiling. p is not reset. */
void mlc_rollout_set_profile(mlc_rollout *ro, mlc_step_profile *p);

/* ---- Full-space reference (fullspace.c) ------------------------------------------------------ */
/* Iterations of the last step, and the change of its last iteration relative to the extent. */
int mlc_fullspace_last_iterations(const mlc_fullspace *fs);
double mlc_fullspace_last_change(const mlc_fullspace *fs);
/* Set current and previous positions (3×nv each); the step counter is kept. */
void mlc_fullspace_set_state(mlc_fullspace *fs, const double *x, const double *x_prev);
int mlc_fullspace_contacts(const mlc_fullspace *fs); /* active samples, last step */
/* The i-th contact of the last iteration (complementarity on the flat ground, samples or
 * surface vertices): its vertex and its force per axis (x, y = normal, z). 0, or −1 when there
 * is no such contact. */
int mlc_fullspace_contact_force(const mlc_fullspace *fs, int i, int *vertex, double f[3]);
#endif
