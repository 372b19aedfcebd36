/* credibility.h: does a rollout look like a gait a researcher can trust? Measures that the
 * objective does not see (leaps, flight, sinking, tumbling, knife-edge parameters), computed at
 * output time for `simulate` and for the gait `optimize` returns (result.json "credibility").
 *
 * Over the frames 0..S' of a rollout from rest (S' = steps done; frame 0 is the rest state),
 * with e = mlc_model_extent (largest rest bounding-box extent), g = the settings' ground height,
 * c(t) the centre of mass, y_min(t) the lowest y over EVERY boundary vertex of the mesh (the
 * surface of mlc_mesh_surface, skinned each frame, not only the contact samples) and R(t) the
 * body rotation of mlc_model_rotation (the up_x, up_y, up_z columns of trajectory.csv):
 *   rise        = max_{t=0..S'} (c_y(t) − c_y(0)) / e                       (≥ 0)
 *   airborne    = #{t = 1..S' : y_min(t) > g + 0.01 e} / S'                 (0 when S' = 0)
 *   penetration = max(0, max_{t=0..S'} (g − y_min(t)) / e)
 *   up_min      = min_{t=0..S'} (R(t) ŷ)_y
 *   robustness  = fraction of MLC_CRED_REPLAYS rollouts of perturbed parameters (perturb.h,
 *                 generator seeded with MLC_CRED_SEED, replay r takes the r-th draw) whose
 *                 J_r ≤ J/2, i.e. keep at least half the gain. When J ≥ 0 there is no gain
 *                 to keep: robustness is 0 and no replay runs. A replay that blows up scores
 *                 MLC_SIM_FAIL_PENALTY and so never counts.
 *   credible    = the rollout did not blow up, rise ≤ 0.25, airborne ≤ 0.25,
 *                 penetration ≤ 0.02, up_min > 0.5 and robustness ≥ 0.75. For a jump
 *                 objective the rise and airborne limits do not apply (leaving the ground is
 *                 the task). NaN measures fail every limit.
 *   Per objective kind: turn, target and path are judged like locomotion; roll drops up_min
 *   (turning over is the task); flip drops up_min and replaces the rise and airborne limits by
 *   rise ≤ 1 extent, airborne ≤ 0.6 and airborne ≥ 0.02 (it must leave the ground, and a
 *   flight of more than 60% of the rollout is not a flip from the ground).
 *
 * Cost: y_min needs only the lowest vertices. On the flat ground the meter keeps the surface in
 * groups of nearby vertices (at most 32, boxes of the rest shape) with a bound on each group's
 * skinning rows, evaluates every group's lower bound on y (O(w) each) and skins only the groups
 * whose bound does not exceed the lowest y found: the same y_min as skinning every vertex, at
 * a fraction of its O(n_surface · w). On a terrain every vertex is skinned and queried. Plus 8
 * more rollouts: fine for a final evaluation, never for the optimizer's per-candidate
 * rollouts (which must not touch full-mesh arrays).
 *
 * Threads: the replays run in parallel (OpenMP, one mlc_rollout per thread); each is a pure
 * function of its parameters, whose noise is drawn sequentially before, so the result is
 * bit-identical for any thread count.
 */
#ifndef MODALLOCO_CREDIBILITY_H
#define MODALLOCO_CREDIBILITY_H

#include "base.h"
#include "mesh.h"
#include "objective.h"
#include "sim.h"

/* MLC_CRED_RISE_MAX, MLC_CRED_AIRBORNE_MAX, MLC_CRED_UP_MIN and MLC_CRED_CLEARANCE, which the
 * objective's gate also uses, are objective.h's. */
#define MLC_CRED_PENETRATION_MAX 0.02  /* extents */
#define MLC_CRED_ROBUSTNESS_MIN 0.75   /* fraction of replays */
#define MLC_CRED_FLIP_RISE_MAX 1.0     /* extents (objective.kind "flip") */
#define MLC_CRED_FLIP_AIRBORNE_MAX 0.6 /* fraction of frames (flip) */
#define MLC_CRED_FLIP_AIRBORNE_MIN 0.02
#define MLC_CRED_REPLAYS 8
#define MLC_CRED_SEED 20240613ULL /* generator seed of the robustness noise */

typedef struct mlc_credibility {
    double rise, airborne, penetration, up_min; /* as above */
    double robustness;                          /* kept / MLC_CRED_REPLAYS; NaN when not computed */
    int kept;     /* replays that kept half of J (−1 when not computed) */
    int frames;   /* frames measured (S' + 1) */
    int failed;   /* the measured rollout blew up */
    int credible; /* 1 when every limit holds (robustness included) */
} mlc_credibility;

/* ---- Frame measures (rise, airborne, penetration, up_min) -------------------------------- */

/* Accumulates the frame measures of one rollout. Owns the surface list and a 3×n_surface
 * scratch; borrows the model (and must be used with states of that model). One thread. */
typedef struct mlc_cred_meter mlc_cred_meter;

/* The mesh must be the one the model was created from (its boundary is measured). */
mlc_status mlc_cred_meter_create(const mlc_model *model, const mlc_mesh *mesh, mlc_cred_meter **out,
                                 mlc_err *err);
void mlc_cred_meter_destroy(mlc_cred_meter *m);
/* Forget every frame (a new rollout begins). */
void mlc_cred_meter_reset(mlc_cred_meter *m);
/* Measure one frame of reduced state z (frame 0 must come first after a reset). Its
 * signature is mlc_frame_fn's, with the meter as `user`; returns MLC_OK. Allocation-free. */
mlc_status mlc_cred_meter_frame(void *meter, int frame, double time, const double *z,
                                const double com[3], const double forward[3], int contacts);
/* Measure one frame from positions (e.g. of a full-space rollout): the centre of mass,
 * up_y = (R ŷ)_y and the surface vertices' positions x (3 per vertex, by vertex), of vertices
 * verts[0..n) (NULL: 0..n−1). On a terrain that is not the flat plane the lowest height and
 * the centre of mass's height are taken relative to the terrain (the model's). */
void mlc_cred_meter_frame_positions(mlc_cred_meter *m, int frame, const double com[3], double up_y,
                                    const double *x, const int *verts, int n);
/* on = 1: skin every surface vertex at every frame (the reference the bounded search of
 * mlc_cred_meter_frame must reproduce exactly; for tests); 0: the bounded search (default). */
void mlc_cred_meter_set_exhaustive(mlc_cred_meter *m, int on);
/* Surface vertices skinned by mlc_cred_meter_frame since the last reset (with the bounded
 * search, usually a small fraction of frames × surface vertices). */
long mlc_cred_meter_skinned(const mlc_cred_meter *m);
/* Fill rise, airborne, penetration, up_min and frames of `out` (other fields untouched). */
void mlc_cred_meter_result(const mlc_cred_meter *m, mlc_credibility *out);
/* Surface vertices measured (indices into the mesh, ascending; borrowed). */
int mlc_cred_meter_surface(const mlc_cred_meter *m, const int **verts);

/* ---- Robustness and the verdict ---------------------------------------------------------- */

/* Robustness of actuation `act` whose nominal rollout scored J: runs the MLC_CRED_REPLAYS
 * perturbed replays (none when J ≥ 0 or not finite) on `threads` OpenMP threads (≤ 0: all
 * cores). Fills out->robustness and out->kept; J_replay (may be NULL) receives the replays' J
 * (MLC_CRED_REPLAYS values, NaN when not run). Errors: MLC_ENOMEM. */
mlc_status mlc_credibility_robustness(const mlc_model *model, const mlc_actuation *act,
                                      const mlc_objective_settings *obj, double J, int threads,
                                      mlc_credibility *out, double *J_replay, mlc_err *err);

/* Set out->credible from the measures (robustness NaN fails) with the limits of objective kind
 * `kind` (mlc_objective_kind; 0 locomotion, 1 jump). */
void mlc_credibility_judge(mlc_credibility *out, int kind);

/* The limits a rollout misses, as one line for a warning ("rise 0.41 > 0.25, up_min -0.2 <=
 * 0.5"), into buf (NUL-terminated, truncated to cap). Empty when it is credible. */
void mlc_credibility_explain(const mlc_credibility *c, int kind, char *buf, size_t cap);

/* What `optimize` reports as "found": a credible gait that gains (J < 0). */
int mlc_credibility_found(const mlc_rollout_result *res, const mlc_credibility *c);

/* What a gait is judged on: the model and its mesh, the objective, the threads of the
 * robustness replays, and `frame` (may be NULL) with `user`, which gets every frame of the
 * nominal rollout so a caller can write its outputs from the same rollout. Borrowed. */
typedef struct mlc_credibility_def {
    const mlc_model *model;
    const mlc_mesh *mesh;
    const mlc_objective_settings *obj;
    int threads;
    mlc_frame_fn frame;
    void *user;
} mlc_credibility_def;

/* The whole evaluation: one rollout of `act` from rest, measured frame by frame (and passed
 * on to def->frame), the robustness replays and the verdict. res receives the nominal
 * rollout's result. */
mlc_status mlc_credibility_evaluate(const mlc_credibility_def *def, const mlc_actuation *act,
                                    mlc_rollout_result *res, mlc_credibility *out, mlc_err *err);

#endif
