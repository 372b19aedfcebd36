/* fullspace.h: the full-space reference simulator (docs/method.md §5–7 without the subspace), and
 * its comparison with the reduced simulator of sim.h.
 *
 * Same energies, time stepping, contact rule and objective as sim.h, but the unknowns are the
 * positions of every vertex, x (3×nv column-major, xyz interleaved, 3nv DOFs):
 *   minimize (1/2h²)‖x − q‖²_M − xᵀMg + E_v(x) + E_a(x, ā),   q = 2x_n − x_{n−1},
 * with lumped mass M, passive ARAP with one rotation per tet (R_e = polar(F_e)) or, as an
 * option, per passive cluster of the subspace, and the actuation energy with one rotation per
 * actuation cluster, Ω_c = polar(Σ_{e∈c} γV F_e Y_eᵀ), exactly as the reduced model. The
 * local-global solver uses the constant matrix Q = M/h² + (μ+γ) Σ_e V G_eᵀG_e ⊗ I₃; its three
 * coordinate blocks are identical, so one nv×nv sparse Cholesky factor (CHOLMOD, simplicial
 * after a nested-dissection ordering) serves all, solved by this file for the three
 * coordinates at once.
 *
 * This is a reference for validating the subspace, not a production simulator: it allocates at
 * creation and setup only (mlc_fullspace_set_acceleration, mlc_fullspace_use_surface_contact),
 * and its cost grows with the mesh. Unlike the reduced model, which runs a fixed number of
 * iterations (sim.iterations: part of its physics), the reference iterates each step to
 * convergence (mlc_fullspace_stop), Anderson-accelerated: every iteration costs one sparse
 * solve with three right-hand sides and one pass over the tets (on mlc_fullspace_set_threads
 * threads, the same bits for any count). With one rotation per tet and one actuation cluster
 * (the reference of `simulate --full-space`) an iteration's local step and right-hand side take
 * that one pass (the cluster's rotation from a sum over vertices), its tets kept in space order
 * and their terms added by blocks of nearby tets; measured on the bundled cat (10k vertices,
 * 37k tets, the default job's gaits): about 2.4 ms an iteration on two threads, the solve
 * about 1 ms of it (docs/performance.md).
 *
 * Contact acts on the subspace's samples (a dense Delassus matrix of them, precomputed) or, after
 * mlc_fullspace_use_surface_contact, on every boundary vertex (columns of Q⁻¹ solved on demand
 * and cached).
 *
 * Ownership: an mlc_fullspace owns its state, factor and scratch; it borrows nothing after
 * creation (the mesh, FEM data and subspace may be freed). One caller thread per object (it
 * runs its own OpenMP threads inside a step).
 */
#ifndef MODALLOCO_FULLSPACE_H
#define MODALLOCO_FULLSPACE_H

#include "base.h"
#include "fem.h"
#include "mesh.h"
#include "sim.h"
#include "subspace.h"

typedef struct mlc_fullspace mlc_fullspace;

/* When a step's local-global iterations stop. Each iteration (local step, global solve and
 * contact solve) maps the iterate x to a new one; the step ends after the first iteration
 * whose change max_i |Δx_i| (over all 3nv coordinates, metres) is at most tolerance × extent
 * (largest bounding-box extent of the rest mesh), or after max_iterations, the guard, whichever
 * comes first. tolerance = 0 never stops early: exactly max_iterations a step, the reduced
 * model's fixed-count rule (with max_iterations = sim.iterations, the old reference). */
typedef struct mlc_fullspace_stop {
    double tolerance;   /* relative to the extent, >= 0 */
    int max_iterations; /* >= 1 */
} mlc_fullspace_stop;

/* Defaults: tolerance MLC_FULLSPACE_TOLERANCE, guard MLC_FULLSPACE_MAX_ITERATIONS. The
 * iteration contracts linearly (about 0.7 per iteration on the quadruped), so a step that stops
 * at 1e-6 of the extent lies within about 3e-6 of its fixed point; over a 300-step gait that
 * moves the displacement by about 0.1% (against 1e-8), far below the reduced-versus-full
 * differences the comparison exists to show (tens of percent). Measured: 15–20 iterations a
 * step on average (at most 26) on the demo gaits, 21–23 (at most 36) on a 10k-vertex cat;
 * the guard only stops a step that cannot converge (e.g. contact cycling between sets). */
#define MLC_FULLSPACE_TOLERANCE 1e-6
#define MLC_FULLSPACE_MAX_ITERATIONS 1000

/* Anderson acceleration of a step's iterations (mlc_fullspace_set_acceleration): the default
 * window, the largest, and the Tikhonov term of its least-squares problem relative to the
 * largest diagonal entry of its normal equations. */
#define MLC_FULLSPACE_ANDERSON 5
#define MLC_FULLSPACE_ANDERSON_MAX 20
#define MLC_FULLSPACE_ANDERSON_EPS 1e-10
/* Entries (coordinates, vertices or tets) in one block of the step's long sums: Anderson's,
 * the reference's H = Σ_v x_v w_vᵀ and its work term. Each block's part is summed in index
 * order and the parts in block order, whatever the thread count. */
#define MLC_FULLSPACE_SUM_BLOCK 4096
/* Tets whose rotations are computed together (mlc_polar_lanes or mlc_polar_n), one chunk per
 * thread at a time (the reference keeps a chunk's F and R on the stack: 2 × 9 × 8 bytes a tet). */
#define MLC_FULLSPACE_POLAR_CHUNK 256
/* Chunks in one block of the reference's local step, whose terms go to a buffer of the
 * block's own vertices (2,048 tets: on the bundled spot, 59k tets, 29 blocks whose buffers
 * hold 1.5 slots a vertex, against 15 slots a vertex when every term has its own). */
#define MLC_FULLSPACE_BLOCK_CHUNKS 8

/* Contact on every surface vertex (mlc_fullspace_use_surface_contact): the default number of
 * cached columns of Q⁻¹ (one per surface vertex that came near the ground; memory
 * 8·nv bytes each, plus 40·columns bytes per column for the Delassus matrix and the contact
 * solver's factors), the broad phase's margin (relative to the extent) and the most times one
 * iteration adds columns and solves its contact again. */
#define MLC_FULLSPACE_CONTACT_COLUMNS 1024
#define MLC_FULLSPACE_CONTACT_MARGIN 1e-3
#define MLC_FULLSPACE_CONTACT_ROUNDS 4
/* The samples a caller takes where surface contact is not available (terrain, equality). */
#define MLC_FULLSPACE_FALLBACK_SAMPLES 512

/* How the stopping rule went, over the steps since the last reset (mlc_fullspace_run resets,
 * so after a run: that rollout). */
typedef struct mlc_fullspace_convergence {
    long steps;          /* steps taken */
    long iterations;     /* iterations, all steps together */
    int most_iterations; /* the most iterations one step took */
    int guard_steps;     /* steps that ran max_iterations without meeting the tolerance */
    double worst_change; /* largest last-iteration change over the steps, relative to the
                            extent (≤ tolerance unless a step hit the guard) */
} mlc_fullspace_convergence;

/* Build the full-space simulator for a prepared mesh. From the subspace it takes only the
 * vibration modes D (actuation targets Y_e(ā)), the actuation clusters, the contact samples
 * and, when passive_per_tet = 0, the passive clusters. passive_per_tet = 1 (the reference) uses
 * one ARAP rotation per tet. Settings are those of the reduced model (sim.h), with the same
 * meaning, except the reduced model's iteration rule (`iterations`, `tolerance`,
 * `guess_previous`), which is ignored: the reference starts every step from the inertial
 * prediction q and stops by the default mlc_fullspace_stop (change it with
 * mlc_fullspace_set_stop), so the reference does not depend on how the reduced model iterates.
 * Errors: MLC_EINVAL (sizes disagree, bad settings), MLC_ENOMEM, MLC_ENOTSPD (factorization). */
mlc_status mlc_fullspace_create(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                                const mlc_sim_settings *settings, int passive_per_tet,
                                mlc_fullspace **out, mlc_err *err);
/* The same with per-tet materials and per-vertex friction (sim.h mlc_materials; NULL or NULL
 * arrays: mlc_fullspace_create exactly): per-tet μ_e, γ_e in the system matrix, the local
 * step and the work, ρ_e in the lumped mass, and each contact sample's friction. */
mlc_status mlc_fullspace_create_materials(const mlc_mesh *mesh, const mlc_fem *fem,
                                          const mlc_subspace *sub, const mlc_sim_settings *settings,
                                          int passive_per_tet, const mlc_materials *mat,
                                          mlc_fullspace **out, mlc_err *err);
void mlc_fullspace_destroy(mlc_fullspace *fs);

int mlc_fullspace_nv(const mlc_fullspace *fs);
/* Replace the stopping rule. Errors: MLC_EINVAL (tolerance < 0 or not finite,
 * max_iterations < 1), the rule unchanged. */
mlc_status mlc_fullspace_set_stop(mlc_fullspace *fs, const mlc_fullspace_stop *stop, mlc_err *err);
/* Anderson acceleration of each step's iterations with a window of `window` iterations
 * (default MLC_FULLSPACE_ANDERSON; 0 = the plain local-global iteration). The stopping rule
 * is unchanged: a step ends with the plain iterate G(x_k) of the first iteration whose change
 * |G(x_k) − x_k| is at most the tolerance, so it lies as close to the step's fixed point as a
 * plain step that stops there. Ignored with tolerance 0 (a fixed count is the plain rule's).
 * Allocates 2·window + 2 vectors of 3nv. Errors: MLC_EINVAL (window outside
 * [0, MLC_FULLSPACE_ANDERSON_MAX]), MLC_ENOMEM (then no acceleration). */
mlc_status mlc_fullspace_set_acceleration(mlc_fullspace *fs, int window, mlc_err *err);
/* Threads of a step's per-tet and per-vertex loops and of its sparse solve (OpenMP; default
 * 1; ≤ 0: every core, at most one per MLC_FULLSPACE_TETS_PER_THREAD tets, below which a
 * parallel region's fork and join cost more than it saves). Each tet writes its own slots, the
 * sums are formed in tet order and the solve's split keeps the serial order of every sum
 * (cholesky_solve.h), so the results are bit-identical for any thread count. */
#define MLC_FULLSPACE_TETS_PER_THREAD 4096
void mlc_fullspace_set_threads(mlc_fullspace *fs, int threads);
/* Contact on every surface (boundary) vertex instead of the subspace's samples, on the flat
 * ground with the complementarity model (the samples' semantics: forces only push, Coulomb
 * friction, push-out speed limit). Every iteration a broad phase takes the surface vertices
 * whose y at x* is within MLC_FULLSPACE_CONTACT_MARGIN × extent of their target; the columns
 * Q⁻¹ e_v of those not yet cached are solved with the kept factor (three at a time, the
 * forward sweep on their paths to the root only) into `columns` slots (0:
 * MLC_FULLSPACE_CONTACT_COLUMNS; at most
 * the surface's vertices); the complementarity problem is solved on the cached vertices' Delassus
 * matrix, and every other surface vertex is checked at the corrected positions (one below its
 * target gets a column and the problem is solved again), so the contact is that of the
 * problem over all surface vertices. A full cache gives the slot of the vertex away from the
 * ground longest (without force); a step that needs more slots at once grows the cache
 * (mlc_fullspace_set_contact_memory) or, where it may not, returns MLC_ENOMEM
 * (mlc_fullspace_failure says so). Columns are kept across steps and dropped by
 * mlc_fullspace_reset. Setup only (allocates). Errors: MLC_EINVAL (a terrain or equality
 * contact: those use samples; columns < 0; no surface), MLC_ENOMEM. */
mlc_status mlc_fullspace_use_surface_contact(mlc_fullspace *fs, int columns, mlc_err *err);
/* Let the surface contact's cache grow, doubling, when a step needs more slots at once than it
 * has, up to the most columns (at most the surface's vertices) whose cache fits in `bytes`
 * (8·nv + 40·columns bytes a column; 0: no growth, the default). A rollout that never fills
 * the cache gives the same bits as without growth; each rollout starts at the first size
 * (mlc_fullspace_reset), so its bits do not depend on the rollouts before it. After
 * mlc_fullspace_use_surface_contact; ignored without surface contact. */
void mlc_fullspace_set_contact_memory(mlc_fullspace *fs, double bytes);
/* The surface contact's slots now and, in *most (may be NULL), the most it may grow to (both 0
 * without surface contact). */
int mlc_fullspace_contact_columns(const mlc_fullspace *fs, int *most);
/* The surface vertices contact covers (0 when contact is on samples), and the columns Q⁻¹ e_v it
 * has solved since creation (each one sparse solve, in batches). */
int mlc_fullspace_surface_vertices(const mlc_fullspace *fs);
long mlc_fullspace_columns_solved(const mlc_fullspace *fs);
/* Back to rest (x_n = x_{n−1} = X, t = 0). */
void mlc_fullspace_reset(mlc_fullspace *fs);
/* Advance one step (act may be NULL). Returns 0; 1 when the state became non-finite or ran away
 * (|Δ CoM| > 1e3 × extent, as sim.h); a negative mlc_status when a CHOLMOD solve failed. */
int mlc_fullspace_step(mlc_fullspace *fs, const mlc_actuation *act);
/* Mass-weighted centre of mass and body rotation polar(Σ_e V_e F_e(x)) of positions x. */
void mlc_fullspace_com(const mlc_fullspace *fs, const double *x, double com[3]);
void mlc_fullspace_rotation(const mlc_fullspace *fs, const double *x, double R[9]);

/* Called for frame 0 (rest) and after every step with the full positions x (3×nv). */
typedef void (*mlc_fullspace_frame_fn)(void *user, int frame, double time, const double *x,
                                       const double com[3], const double forward[3], int contacts);

/* Also call `fn` (NULL: nobody) for every frame of the following runs, beside their own
 * `frame` argument: a caller can measure the rollout mlc_fullspace_compare runs. */
void mlc_fullspace_observe(mlc_fullspace *fs, mlc_fullspace_frame_fn fn, void *user);
/* Call the function registered with mlc_fullspace_observe (if any) for a frame of the current
 * state (what mlc_fullspace_run does after its own `frame`). */
void mlc_fullspace_notify(const mlc_fullspace *fs, int frame, double time, const double com[3],
                          const double forward[3]);

/* What the objective reads of the current state, as mlc_rollout_frame_state (sim.h); once a
 * frame and in order (the body rotation is warm-started). */
void mlc_fullspace_frame_state(mlc_fullspace *fs, mlc_frame_state *f);
const mlc_sim_settings *mlc_fullspace_settings(const mlc_fullspace *fs);
const mlc_terrain *mlc_fullspace_terrain(const mlc_fullspace *fs); /* its own copy */
double mlc_fullspace_extent(const mlc_fullspace *fs); /* largest rest bounding-box extent */
/* CHOLMOD's status after a step that returned a negative status (for the message), and what
 * the step ran into ("sparse solve failed", or surface contact's cache was too small). */
int mlc_fullspace_solver_status(const mlc_fullspace *fs);
const char *mlc_fullspace_failure(const mlc_fullspace *fs);
/* The stopping rule's record since the last reset. */
void mlc_fullspace_convergence_get(const mlc_fullspace *fs, mlc_fullspace_convergence *out);
const double *mlc_fullspace_state(const mlc_fullspace *fs); /* current x (3×nv) */

#endif
