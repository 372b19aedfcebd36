/* objective.h: the seven objective kinds of docs/method.md §7 (locomotion, jump, turn, target,
 * path, roll, flip), accumulated frame by frame.
 * The reduced simulator and the full-space reference both score their rollouts through this
 * one accumulator, so their J terms mean exactly the same thing.
 *
 * Per frame the caller supplies the centre of mass c(t), the body rotation R(t) (3×3
 * column-major, polar factor of Σ V F) and the actuation work of the step. Then
 *   J_disp  = (c(t₀) − c(t_S))·v̂,     J_align = max(0, min_t a(t)) (1 when align is off),
 *   a(t)    = (R û₀)·v̂, and with `upright` min of that and (R ŷ)·ŷ,
 *   (align_mean: J_align = mean over the frames of max(0, a(t)) instead),
 *   J       = J_disp·J_align (locomotion; with whole_losses a backward travel, J_disp > 0,
 *             stays J_disp whole) or −(mean_t c_y − c_y(t₀))·J_align (jump),
 *   J      += α Σ_s h·work_s (or Σ_s h·|work_s|), work_s = Δz_sᵀ(bᵃ − Qᵃ z_s): Eq. 18 integrates
 *             over time, so α does not change meaning with h.
 * With the credibility gate (credible_gate, and with whole_losses only a locomotion gain
 * J_disp·J_align < 0) J_disp·J_align, or the task term of the other kinds but jump and flip,
 * is multiplied by
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

#include "base.h"
#include "fullspace.h"
#include "sim.h"

/* What J measures (objective.kind; docs/method.md §7): seven kinds. Locomotion and jump keep
 * the values 0 and 1 of the former `jump` flag. */
typedef enum mlc_objective_kind {
    MLC_OBJ_LOCOMOTION = 0,
    MLC_OBJ_JUMP = 1,
    MLC_OBJ_TURN,   /* end with the body's forward axis along the heading */
    MLC_OBJ_TARGET, /* end with the centre of mass at a target */
    MLC_OBJ_PATH,   /* follow timed waypoints with the centre of mass */
    MLC_OBJ_ROLL,   /* roll forward about v̂ × ŷ */
    MLC_OBJ_FLIP    /* rotate about v̂ × ŷ while airborne */
} mlc_objective_kind;

#define MLC_OBJ_MAX_MODES MLC_SUBSPACE_MAX_ACTUATED /* a_max entries of the effort penalty */

typedef struct mlc_objective_settings {
    int kind;            /* mlc_objective_kind (one of the seven above) */
    double direction[3]; /* v̂ (normalized by the model) */
    double forward[3];   /* û₀ (normalized) */
    int align;           /* multiply by J_align */
    int upright;    /* J_align = max(0, min_t min((R û₀)·v̂, (R ŷ)·ŷ)): also no rolling */
    int align_mean; /* J_align = mean_t max(0, a(t)) instead of max(0, min_t a(t)) */
    double work_penalty; /* α */
    int work_abs;        /* penalize |work| per step */
    int credible_gate;   /* J ×= J_gate (objective.h): leaps and flights do not pay */
    int whole_losses;    /* locomotion: a backward travel counts whole (J = J_disp) */
    double heading[3];   /* turn: final forward direction ĥ (y ignored; normalized on the
                            ground by the objective) */
    double target[3];    /* target (and jump with target_set): final centre of mass */
    int target_set;
    const double *path; /* path: npath waypoints (t, x, y, z), times increasing (borrowed) */
    int npath;
    double effort;                   /* weight of the effort penalty (0 = off) */
    double a_max[MLC_OBJ_MAX_MODES]; /* per-mode amplitude limits of the effort penalty
                                        (0 or unset entries count as 1) */
    double vibration;                /* weight of the vibration penalty (0 = off) */
} mlc_objective_settings;

typedef struct mlc_rollout_result {
    double J, J_disp, J_align, J_work; /* objective and its terms (J_work = α·work) */
    double J_task;       /* the task term before gate and penalties (docs/method.md §7) */
    double task_error;   /* how far from the task: turn |heading error| (radians), target
                            final distance / extent, path mean distance / extent, roll and flip
                            the rotation about the lateral axis (radians, signed); 0 else */
    double J_effort;     /* effort weight × mean_s ‖a(t_s)/a_max‖² */
    double J_vibration;  /* vibration weight × mean squared CoM acceleration (extents/s²)² */
    double roll_angle;   /* accumulated rotation about v̂ × ŷ (radians) */
    double flip_angle;   /* the same, over airborne frames only */
    double J_gate;       /* credibility gate (1 when off) */
    double displacement; /* centre-of-mass travel along v̂ (= -J_disp for locomotion) */
    double height_gain;  /* mean_t c_y(t) - c_y(t0) (jump) */
    double com0[3], com1[3];
    int steps_done;     /* < steps when the rollout blew up */
    int failed;         /* 1: NaN/Inf or runaway state; J is then MLC_SIM_FAIL_PENALTY */
    double align_min;   /* min over frames of the alignment a(t), not clamped at 0 (with
                           `upright` also of R_yy): how far a tumbling rollout, whose
                           J_align is 0, was from staying aligned (the optimizer's
                           tie-breaker); up to the failing frame when failed */
    double gate_excess; /* how far the rollout went past the credibility gate's fade-out:
                           Σ over rise, airborne and tilt (1 − up_min, with `upright`) of
                           max(0, x/limit − 0.6)/0.4, not clamped (J_gate is 0 from 1 on); 0
                           when the gate is off. With align_min it ranks candidates whose J is
                           0 by how far they are from a credible gait (the optimizer's
                           tie-breaker) */
} mlc_rollout_result;

#define MLC_SIM_FAIL_PENALTY 1e3

/* Credibility limits (credibility.h) that the gate above also applies. */
#define MLC_CRED_RISE_MAX 0.25     /* extents */
#define MLC_CRED_AIRBORNE_MAX 0.25 /* fraction of frames */
#define MLC_CRED_CLEARANCE 0.01    /* a frame is airborne above ground + this × extent */
#define MLC_CRED_UP_MIN 0.5        /* up_min must exceed it (60° of tilt) */

/* Locomotion along +x, û₀ = +x, J_align on, no work penalty. */
void mlc_objective_settings_default(mlc_objective_settings *o);

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

/* ---- The kinds, in one table ------------------------------------------------------------ */
/* objective.kind's names in mlc_objective_kind's order; the key table (objective_keys.c)
 * accepts exactly these, and mlc_objective_kinds[] lists them in the same order. */
#define MLC_OBJECTIVE_KIND_NAMES "locomotion|jump|turn|target|path|roll|flip"
/* Other names objective.kind reads as a kind ("alias=name|..."); config.json writes the name. */
#define MLC_OBJECTIVE_KIND_ALIASES "walk=locomotion"

/* Everything the rest of the program knows about one objective kind. Adding a kind is a value
 * of mlc_objective_kind, its name above, its row in mlc_objective_kinds[] and its measure in
 * objective.c; the configuration, the credibility limits, the viewer and the summary read the
 * row. */
typedef struct mlc_objective_kind_info {
    const char *name;        /* as objective.kind writes it: "target" */
    mlc_objective_kind kind; /* its value, the row's index */
    const char *goal_key;    /* the objective.* key holding its goal ("target"), NULL = none;
                              * the summary's task column shows it */
    int goal_required;       /* 1: a configuration of this kind must give goal_key */
    const char *goal_hint;   /* the rest of the message when it is missing */
    /* Credibility limits (credibility.h): rise and airborne share at most (INFINITY = do not
     * apply), airborne share at least, and whether up_min applies. */
    double rise_max, airborne_max, airborne_min;
    int up;
    const char *task_error_unit; /* unit of result.json task_error: "extents" or "rad" */
} mlc_objective_kind_info;

extern const mlc_objective_kind_info mlc_objective_kinds[];
extern const int mlc_objective_nkinds;

/* The row of a kind value, or NULL when it is none. */
const mlc_objective_kind_info *mlc_objective_kind_info_of(int kind);

/* The row of an objective.kind name ("turn"), or NULL when it is none (files written by
 * another version). */
const mlc_objective_kind_info *mlc_objective_kind_find(const char *name);

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

/* ---- Scored rollouts (rollout_run.c) ------------------------------------------------------- */

/* Called for frame 0 (rest) and after every step. Returns MLC_OK to go on; any other status
 * (e.g. a failed frame write) stops the rollout, which returns that status. */
typedef mlc_status (*mlc_frame_fn)(void *user, int frame, double time, const double *z,
                                   const double com[3], const double forward[3], int contacts);

/* Run a whole rollout from rest: S steps, scored by the accumulator above (docs/method.md
 * §7). `frame` may be NULL. Failures of the simulation (blow-up) are reported in result->failed,
 * not as a status. Returns MLC_OK, or the status of a frame function that stopped the rollout (then
 * result covers the steps done and is marked failed). */
mlc_status mlc_rollout_run(mlc_rollout *ro, const mlc_actuation *act,
                           const mlc_objective_settings *obj, mlc_frame_fn frame, void *user,
                           mlc_rollout_result *result);

/* A whole rollout from rest scored as mlc_rollout_run (docs/method.md §7),
 * so the two results are directly comparable. Blow-ups go to result->failed; a CHOLMOD
 * failure is returned as a status. */
mlc_status mlc_fullspace_run(mlc_fullspace *fs, const mlc_actuation *act,
                             const mlc_objective_settings *obj, mlc_fullspace_frame_fn frame,
                             void *user, mlc_rollout_result *result, mlc_err *err);

typedef struct mlc_fullspace_comparison {
    mlc_rollout_result reduced, full; /* objective terms of both rollouts */
    double com_error_max;             /* max over frames of |c_reduced(t) − c_full(t)| (metres) */
    double com_error_final;           /* the same at the last frame */
    double vertex_error_max;          /* max over vertices of |B z_S − x_S| at the last frame */
    double vertex_error_rms;          /* root mean square of the same */
    double extent;            /* largest bounding-box extent of the rest mesh (error scale) */
    int frames;               /* frames compared (steps + 1 unless a rollout failed) */
    double t_reduced, t_full; /* seconds per rollout */
    mlc_fullspace_convergence convergence; /* of the full-space rollout */
} mlc_fullspace_comparison;

/* Run the reduced rollout of `model` and the full-space rollout of `fs` with the same actuation
 * and objective, and compare them frame by frame (both must have been created from the same
 * mesh and settings). Allocates O(steps + nv) scratch. */
mlc_status mlc_fullspace_compare(const mlc_model *model, mlc_fullspace *fs,
                                 const mlc_actuation *act, const mlc_objective_settings *obj,
                                 mlc_fullspace_comparison *out, mlc_err *err);

#endif
