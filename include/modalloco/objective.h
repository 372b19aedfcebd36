/* objective.h: the locomotion and jump objectives of docs/method.md §7, accumulated frame by frame.
 * The reduced simulator and the full-space reference both score their rollouts through this
 * one accumulator, so their J terms mean exactly the same thing.
 *
 * Per frame the caller supplies the centre of mass c(t), the body rotation R(t) (3×3
 * column-major, polar factor of Σ V F) and the actuation work of the step. Then
 *   J_disp  = (c(t₀) − c(t_S))·v̂,     J_align = max(0, min_t a(t)) (1 when align is off),
 *   a(t)    = (R û₀)·v̂, and with `upright` min of that and (R ŷ)·ŷ,
 *   (align_mean: J_align = mean over the frames of max(0, a(t)) instead),
 *   J       = J_disp·J_align (locomotion) or −(mean_t c_y − c_y(t₀))·J_align (jump),
 *   J      += α Σ_s h·work_s (or Σ_s h·|work_s|), work_s = Δz_sᵀ(bᵃ − Qᵃ z_s): Eq. 18 integrates
 *             over time, so α does not change meaning with h.
 * With the credibility gate (credible_gate, locomotion only) J_disp·J_align is multiplied by
 *   J_gate = g(rise, 0.25)·g(airborne, 0.25),  g(x, L) = clamp((L − x)/(0.4 L), 0, 1),
 * rise = max_t (c_y(t) − c_y(t₀)) / extent and airborne = the share of frames whose lowest
 * contact sample is more than 1% of the extent above the ground: a leap or a flight does not
 * pay, so the optimizer's best gaits stay within the credibility limits (credibility.h).
 *
 * The other kinds (e = extent, J_up = max(0, min_t (R ŷ)·ŷ) with `upright`, else 1):
 *   turn    J = (cos φ(t₀) − cos φ(t_S))/2 · J_up, φ = angle on the ground from ĥ to R û₀,
 *   target  J = (‖c(t_S) − p‖ − ‖c(t₀) − p‖)/e · J_up,
 *   path    J = mean_t (‖c(t) − P(t)‖ − ‖c(t₀) − P(t)‖)/e · J_up, P linear in the waypoints,
 *   roll    J = θ_l/(2π) − (c(t_S) − c(t₀))·v̂/(π e), θ_l = Σ_t rotation of R(t−1)→R(t) about
 *           l = v̂ × ŷ (rolling forward along v̂ is negative),
 *   flip    J = θ_air/(2π), θ_air the same sum over airborne frames only (no gate),
 *   jump with objective.target adds the target term.
 * Penalties: J += effort · (1/(S h)) Σ_s h ‖a(t_s)/a_max‖² and
 *   J += vibration · mean_t ‖c(t+1) − 2c(t) + c(t−1)‖² / (h⁴ e²).
 */
#ifndef MODALLOCO_OBJECTIVE_H
#define MODALLOCO_OBJECTIVE_H

#include "modalloco/base.h"
#include "modalloco/sim.h"

typedef struct mlc_objective_acc {
    const mlc_objective_settings *obj; /* borrowed */
    mlc_rollout_result *res;           /* borrowed; filled by begin/frame/end */
    double v[3], u0[3];                /* normalized direction and body forward */
    double dt;                         /* h, the weight of each step's work */
    double align, work, ysum;
    double align_sum; /* Σ_t max(0, a(t)), for align_mode "mean" */
    int frames;
    double extent, ground;      /* body scale and ground height (credibility gate) */
    double rise;                /* highest c_y(t) − c_y(t₀) so far */
    int airborne_frames;        /* frames whose lowest contact point is off the ground */
    const mlc_terrain *terrain; /* not flat: rise is measured above the terrain (borrowed) */
    /* The kinds beyond locomotion and jump, and the penalties (docs/method.md §7). */
    double lat[3], hd[3];       /* lateral axis v̂ × ŷ (normalized), heading on the ground */
    double R_prev[9];           /* the previous frame's rotation */
    double roll, flip;          /* Σ rotation about lat (all frames; airborne frames) */
    double up_min;              /* min_t (R ŷ)·ŷ */
    double heading0, heading1;  /* signed heading error at the first and the latest frame */
    double path_sum, path_rest; /* Σ_t ‖c(t) − P(t)‖ and Σ_t ‖c(t₀) − P(t)‖ */
    int path_cursor;
    double c_prev[3], c_prev2[3]; /* c(t−1), c(t−2) for the vibration's second differences */
    double vib_sum;               /* Σ ‖c(t+1) − 2c(t) + c(t−1)‖² */
    int vib_n;
    double effort; /* Σ_s h ‖a(t_s)/a_max‖² */
} mlc_objective_acc;

/* The kind of an objective.kind name ("turn" -> MLC_OBJ_TURN); unknown names give locomotion
 * (the configuration has validated the name). */
int mlc_objective_kind_parse(const char *name);

/* Start with the rest frame (frame 0): zeroes *res, records c(t₀). dt is the time step h.
 * Writes the frame's body forward R û₀ into fwd (for frame callbacks). */
void mlc_objective_begin(mlc_objective_acc *acc, const mlc_objective_settings *obj, double dt,
                         const double com0[3], const double R0[9], mlc_rollout_result *res,
                         double fwd[3]);
/* The body's largest rest extent and the ground height: enables the credibility gate
 * (objective.credible_gate) with the limits of credibility.h. */
void mlc_objective_set_body(mlc_objective_acc *acc, double extent, double ground);
/* A terrain that is not flat: the rise is then that of the height of c above the terrain
 * under it, (c_y − h(c_x, c_z)) − (its value at t₀), and `lowest` below is ground + the
 * lowest contact sample's distance to the terrain. NULL or a flat terrain changes nothing. */
void mlc_objective_set_terrain(mlc_objective_acc *acc, const mlc_terrain *terrain);
/* One simulated step's frame; `lowest` is the height of the lowest contact point (the
 * samples; +∞ without contact), for the airborne share of the gate. */
void mlc_objective_frame(mlc_objective_acc *acc, const double com[3], const double R[9],
                         double step_work, double lowest, double fwd[3]);
/* The actuation ā of the step just taken (m values), for the effort penalty: call after each
 * step when obj->effort > 0. */
void mlc_objective_actuation(mlc_objective_acc *acc, const double *abar, int m);
/* Finish: `steps` planned, `done` completed; `failed` (blow-up) scores MLC_SIM_FAIL_PENALTY. */
void mlc_objective_end(mlc_objective_acc *acc, int steps, int done, int failed);

/* Read objective.path's CSV (header line starting with "time", then time,x,y,z per line, times
 * increasing) into *out (4×n values, owned, mlc_free). Errors name FILE:LINE; MLC_EINVAL. */
mlc_status mlc_objective_path_read(const char *file, double **out, int *n, mlc_err *err);

#endif
