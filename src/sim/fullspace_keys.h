/* fullspace_keys.h: the configuration keys reference.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_FULLSPACE_KEYS_H
#define MODALLOCO_FULLSPACE_KEYS_H

#include "keys.h"

/* The full-space reference of `simulate --full-space` (fullspace.h): its own stopping rule,
 * independent of sim.iterations, which is the reduced model's. */
typedef struct mlc_config_reference {
    double tolerance;    /* reference.tolerance: stop when max |Δx| ≤ it × extent, ≥ 0 */
    int max_iterations;  /* reference.max_iterations: guard per step, ≥ 1 */
    int contact_samples; /* reference.contact_samples: 0 = every surface vertex, N > 0 = its own
                            N samples, −1 = the model's */
    int contact_columns; /* reference.contact_columns: cached columns of surface contact, ≥ 1;
                            0 = growing from MLC_FULLSPACE_CONTACT_COLUMNS (judge.h) */
    int acceleration; /* reference.acceleration: Anderson window, 0..MLC_FULLSPACE_ANDERSON_MAX */
    int threads;      /* reference.threads: threads of its per-tet work, 0 = all cores */
    int check;        /* reference.check: 1 = optimize replays its gait in the reference */
    int rerank;       /* reference.rerank: candidates optimize replays in the reference before it
                         chooses the gait, 0 = off, ≤ MLC_REFERENCE_RERANK_MAX,
                         −1 = chosen from the body's size (optimize_run.c) */
    double refine;    /* reference.refine: optimize searches once more in a finer model when its
                         gait keeps less than this share of its travel in the reference, or is
                         not credible there (optimize_refine.c); 0 = never */
} mlc_config_reference;

/* The most candidates reference.rerank may replay: each costs a full-space rollout (16-31 CPU s
 * on the cat), and past the returned gait, the runs' bests and the last generations' bests
 * the candidates are near copies of each other. */
#define MLC_REFERENCE_RERANK_MAX 32

extern const mlc_key_section mlc_reference_key_section; /* keys reference.* */

#endif
