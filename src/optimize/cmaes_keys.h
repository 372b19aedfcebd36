/* cmaes_keys.h: the configuration keys cmaes.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_CMAES_KEYS_H
#define MODALLOCO_CMAES_KEYS_H

#include "gait.h"
#include "keys.h"

/* The most parameters a gait can have (gait.h: a participation per mode, then per mode and
 * sinusoid A, T and θ): the capacity of cmaes.start. */
#define MLC_CMAES_START_MAX (MLC_GAIT_MAX_MODES + MLC_GAIT_MAX_MODES * MLC_GAIT_MAX_SINUSOIDS * 3)

typedef struct mlc_config_cmaes {
    int population;           /* cmaes.population: λ, ≥ 2 */
    int generations;          /* cmaes.generations: ≥ 1 */
    double sigma0;            /* cmaes.sigma0: in the normalized box, > 0 */
    int seed;                 /* cmaes.seed: seed of everything random */
    int restarts;             /* cmaes.restarts: restarts, ≥ 0 */
    char restart_strategy[8]; /* cmaes.restart_strategy: "ipop" or "bipop" */
    double restart_collapse;  /* cmaes.restart_collapse: spread that ends a run, ≥ 0 (0 off) */
    int restart_stall;        /* cmaes.restart_stall: generations without gain, ≥ 0 (0 off) */
    double restart_room;      /* cmaes.restart_room: a restart begins only when the budget left
                                 is at least this many times the ended run's evaluations, ≥ 0
                                 (0: whatever is left) */
    int diagonal;             /* cmaes.diagonal: generations of each run with diagonal C, ≥ 0;
                                 −1: chosen from the dimension (job/optimize_run.c) */
    int budget;               /* cmaes.budget: rollouts in all, ≥ 0 (0: generations × λ) */
    int early_stop;           /* cmaes.early_stop: pycma's early stops end a run (bool) */
    int mean_every;           /* cmaes.mean_every: the distribution mean is scored every this
                                 many generations (history.csv mean_J), ≥ 0 (0: never) */
    int robust_samples;       /* cmaes.robust_samples: perturbed replays per candidate, 0..16 */
    char robust_scope[16];    /* cmaes.robust_scope: which candidates are replayed: "walkers"
                                 (every one that walks) or "improving" (only those whose
                                 nominal J beats the best score so far) */
    int polish;               /* cmaes.polish: gradient polish steps after CMA-ES, 0 = off */
    double start[MLC_CMAES_START_MAX]; /* cmaes.start: the first mean in the normalized box,
                                          each in [0, 1]; nstart = 0: the box's centre */
    int nstart;                        /* its length: 0, or the search's parameter count */
} mlc_config_cmaes;

extern const mlc_key_section mlc_cmaes_key_section; /* keys cmaes.* */

/* Rollouts of one generation at worst: every candidate and the mean walk and are replayed
 * robust_samples times each. A budget below it would end a run before its first generation. */
static inline long mlc_cmaes_generation_cost(const mlc_config_cmaes *cm) {
    return ((long)cm->population + 1) * (cm->robust_samples + 1);
}

#endif
