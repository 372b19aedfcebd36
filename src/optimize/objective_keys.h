/* objective_keys.h: the configuration keys objective.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_OBJECTIVE_KEYS_H
#define MODALLOCO_OBJECTIVE_KEYS_H

#include "keys.h"
#include "objective.h"

/* objective.align_mode, in the order of its names "min|mean". */
enum { MLC_ALIGN_MIN = 0, MLC_ALIGN_MEAN = 1 };

typedef struct mlc_config_objective {
    int kind;            /* objective.kind: mlc_objective_kind (objective.h) */
    double direction[3]; /* objective.direction: v̂, nonzero */
    double forward[3];   /* objective.forward: û₀ when forward_set, else zeros */
    int forward_set;     /* 0: objective.forward is null (use direction) */
    int align;           /* objective.align (bool): multiply by J_align */
    int align_mode;      /* objective.align_mode: MLC_ALIGN_MIN (paper) | MLC_ALIGN_MEAN */
    int upright;         /* objective.upright (bool): J_align also gates on the
                          * body's up axis staying up (no rolling over) */
    int credible_gate;   /* objective.credible_gate (bool) */
    int whole_losses;    /* objective.whole_losses (bool): a backward travel is not scaled by
                          * J_align or J_gate (locomotion) */
    double work_penalty; /* objective.work_penalty: α, ≥ 0 */
    int work_abs;        /* objective.work_abs (bool): penalize absolute work */
    double heading[3];   /* objective.heading: [x,z] or [x,y,z] (turn) */
    int nheading;        /* its length: 2 or 3 */
    double target[3];    /* objective.target (target, jump) when target_set */
    int target_set;      /* 0: objective.target is null */
    char path[MLC_CONFIG_PATH_MAX]; /* objective.path: waypoint CSV (path) */
    double effort;                  /* objective.effort: weight, ≥ 0 */
    double vibration;               /* objective.vibration: weight, ≥ 0 */
} mlc_config_objective;

extern const mlc_key_section mlc_objective_key_section; /* keys objective.* */

#endif
