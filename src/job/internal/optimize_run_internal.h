/* optimize_run_internal.h: what the optimize job's files share (optimize_run.c: setup and the
 * generations; optimize_robust.c: scoring; optimize_finish.c: the returned gait and its
 * files). Not for use outside the job; optimize_run.h is its interface. */
#ifndef MODALLOCO_OPTIMIZE_RUN_INTERNAL_H
#define MODALLOCO_OPTIMIZE_RUN_INTERNAL_H

#include <stdio.h>

#include "checkpoint.h"
#include "cmaes.h"
#include "gait.h"
#include "objective.h"
#include "optimize_run.h"
#include "pipeline.h"
#include "sim.h"

/* A rollout and the decoded parameters, one per thread. */
typedef struct worker {
    mlc_rollout *ro;
    double *A, *T, *th; /* m×k each */
} worker;

/* One run of the command, shared by its phases. Rank 0 alone owns the optimizer, the history
 * and the files. */
typedef struct optimize_run {
    mlc_optimize_def def;     /* what to run (the configuration is cfg) */
    mlc_optimize_result *res; /* what came out */
    mlc_err err;
    mlc_config cfg;
    mlc_pipeline p;
    mlc_gait_space g;
    mlc_objective_settings obj;
    mlc_cmaes *es;
    worker *workers; /* one per thread */
    int nworkers, nthreads;
    int rank, nproc, quiet;
    const char *dir;
    uint64_t fingerprint;
    int lam_max;   /* the largest population, restarts included */
    int R;         /* replays of each point that walks */
    int improving; /* cmaes.robust_scope "improving": replay only walkers that beat best_f */
    /* Per point (the population, then the mean; lam_max + 1 at most): scores f, median scratch
     * and ties; the rollout values, nominal J0 and tie T0 per point, then J2 and T2 per replay
     * (all in Jv). */
    double *f, *scratch, *tie, *Jv, *J0, *T0, *J2, *T2;
    int *pts;      /* the points of a batch */
    double *Xbuf;  /* the points as scored (the population, then the mean) and broadcast */
    double *stats; /* several processes: per rank its failure count and rollout seconds */
    mlc_history_row *hist;
    int nhist, cap_hist;
    /* cmaes.budget > 0: rollouts the generations may spend (the budget less what the final mean
     * and the polish are expected to take); the polish stops at the budget itself. */
    long loop_budget;
    long eval_budget; /* restarts without a budget: candidate evaluations, generations × λ */
    int budget_spent; /* the loop ended because the next generation would not fit */
    int room_spent;   /* ... or because a pending restart would not (cmaes.restart_room) */
    long rollouts;    /* rollouts of the run so far (history.csv) */
    double t_offset;  /* wall time of earlier sessions of a resumed run */
    double t_start, t_pre;
    FILE *hf; /* history.csv */
    /* The checkpoint of the last generation, encoded; written when `ckpt_pending` and a
     * CHECKPOINT_SECONDS have passed since `t_ckpt`, or when the generations end. */
    mlc_checkpoint_bytes ckpt;
    int ckpt_pending;
    double t_ckpt;
    char path[MLC_CONFIG_PATH_MAX + 64];
    int gens_this_session;
    /* Timing of this session's generations (rank 0): rollouts of the slowest rank, their mean
     * over ranks, and rank 0's time inside broadcasts and gathers. */
    double sum_roll_max, sum_roll_mean, sum_comm, sum_wait, sum_gen;
    /* With several processes, failures before the loop are settled collectively (settle), and
     * a failure of rank 0 inside the loop aborts the job (the others wait in a broadcast). */
    int in_setup, in_loop;
    int stop, rc;    /* stop: the run ends here with exit code rc, nothing to report */
    int interrupted; /* SIGINT or SIGTERM ended the generations (exit 130) */
} optimize_run;

/* "out of memory" into o->err: MLC_ENOMEM. */
mlc_status mlc_optimize_oom(optimize_run *o);

/* Score `npts` points (optimize_robust.c). */
int mlc_optimize_evaluate(optimize_run *o, const double *X, int npts, int ncand, int gen, int dist,
                          double improve_below, int *nwalk, double *seconds);

/* The finish on rank 0 (optimize_finish.c): unless interrupted, the final mean's score, the
 * gait returned, the polish, the files and the summary; o->rc 3 when nothing credible gains. */
mlc_status mlc_optimize_finish(optimize_run *o);

#endif
