/* optimize_job.h: the state and the calls that the optimize job's files share. From the top:
 * optimize_refine.c (the job: a search, and the further searches it may need), optimize_run.c
 * (one search: setup and the generations), optimize_finish.c (the returned gait and its files),
 * optimize_rerank.c (the full-space validation), optimize_robust.c (scoring), optimize_rules.c
 * (whether a further search follows); each calls only those below it. Not for use outside the
 * job; optimize_run.h is its interface. */
#ifndef MODALLOCO_OPTIMIZE_JOB_H
#define MODALLOCO_OPTIMIZE_JOB_H

#include <stdint.h>
#include <stdio.h>

#include "checkpoint.h"
#include "cmaes.h"
#include "credibility.h"
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
    int lam_max;     /* the largest population, restarts included */
    int rerank;      /* reference.rerank resolved: the candidates of the full-space validation,
                        0 = none (-1 in the configuration chooses it from the body's size) */
    int rerank_told; /* rank 0: the other processes know whether to replay (optimize_rerank.c) */
    const char *replay_error; /* the returned gait's full-space replay failed with this message
                                 (the validation's, optimize_rerank.c): reported, not fatal */
    int R;                    /* replays of each point that walks */
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
    /* The passive rollout of the model the search runs on (optimize_run.c, lay_down), once
     * made: its lowest up and the input mesh's direction that points up at its end. */
    int passive_known;
    double passive_up_min, passive_rest_up[3];
    /* rerank > 0, rank 0: the candidates the generations leave (kept in the checkpoint) for the
     * full-space validation (optimize_rerank.c): each CMA-ES run's best point (run_x, n per
     * run, restart index order) and score (run_f, +inf while the run has none), and a ring of
     * the last MLC_REFERENCE_RERANK_MAX generations' best points with their scores and
     * generation numbers. */
    double *run_x, *run_f;
    int nruns;
    double *ring_x, *ring_f;
    int *ring_gen;
    int ring_len, ring_next;
    int stop, rc;    /* stop: the run ends here with exit code rc, nothing to report */
    int interrupted; /* SIGINT or SIGTERM ended the generations (exit 130) */
} optimize_run;

/* One search (optimize_run.c): mlc_optimize_run without reference.refine's second search.
 * *final_cfg (may be NULL) receives the configuration as the search ran it: lay_down may have
 * set mesh.up. */
int mlc_optimize_search(const mlc_optimize_def *def, mlc_optimize_result *out,
                        mlc_config *final_cfg);

/* The rules for a further search (optimize_rules.c), pure functions of a search's configuration
 * and figures, so that the dry run, the finish and the further searches decide alike.
 * subspace.skinning_modes' upper bound (subspace_keys.c): a finer model doubles w up to it. */
#define MLC_REFINE_SKINNING_MAX 32

/* reference.refine's rule: 1 when a search of configuration cfg whose gait,
 * credible in the reduced model, kept `share` in the full-space reference (mlc_judgement_kept:
 * of its travel and of its J) and is (credible_full) or is not credible there, is followed by a
 * second search in a finer model. */
int mlc_optimize_refine_wanted(const mlc_config *cfg, double share, int credible_full);

/* The rule for searching once more with objective.whole_losses: 1 when a
 * locomotion search of configuration cfg (as it ran: the backward plateau may have turned the
 * key on already) ended with a best gait of J `J` that does not gain and travelled
 * `displacement` (< 0: backward). */
int mlc_optimize_retry_wanted(const mlc_config *cfg, double J, double displacement);

/* "out of memory" into o->err: MLC_ENOMEM. */
static inline mlc_status mlc_optimize_oom(optimize_run *o) {
    return mlc_errf(&o->err, MLC_ENOMEM, "out of memory");
}

/* Seed of replay `replay` (1..R) of point `point` (candidate index, -1 for the distribution
 * mean) in generation `gen` (tells before it): a pure function of the run's state, so a
 * rollout's perturbation never depends on which thread or process runs it (optimize_robust.c). */
uint64_t mlc_optimize_replay_seed(int seed, int gen, int point, int replay);

/* Score `npts` points (optimize_robust.c). */
int mlc_optimize_evaluate(optimize_run *o, const double *X, int npts, int ncand, int gen, int dist,
                          double improve_below, int *nreplays, double *seconds);

/* Gait u (n values in [0,1]^n) decoded into worker 0's buffers (*a points there) and its
 * reduced rollout with the credibility measures (mlc_credibility_evaluate), in this process
 * (optimize_robust.c). */
mlc_status mlc_optimize_evaluate_gait(optimize_run *o, const double *u, mlc_actuation *a,
                                      mlc_rollout_result *r, mlc_credibility *c);

/* Add `block` (owned, consumed) as `name` to DIR/result.json (rewritten atomically): the run's
 * o->dir, or any `dir`. */
mlc_status mlc_optimize_add_result_block(optimize_run *o, const char *name, struct cJSON *block);
mlc_status mlc_result_add_block(const char *dir, const char *name, struct cJSON *block,
                                mlc_err *err);

/* The advice that ends the warning about a gait that does not hold in the full-space reference:
 * another seed, or more candidates replayed when the validation replayed fewer than 8. */
const char *mlc_optimize_hold_advice(int rerank);

/* ---- The full-space validation (reference.rerank, optimize_rerank.c) ---------------------- */
/* Rank 0, after a generation's tell: keep its best point among the candidates (the points in
 * X, lam × n, scored in o->f). */
mlc_status mlc_optimize_rerank_note(optimize_run *o, const double *X, int lam);

/* The candidates for the checkpoint (checkpoint.h's job state), so that a resumed run returns
 * the same gait as an uninterrupted one: *blob (owned, mlc_free; NULL and *len 0 before the
 * first note). Load reads them back (len 0: none); a blob that does not fit this configuration
 * is MLC_EPARSE naming o->path. */
mlc_status mlc_optimize_rerank_save(optimize_run *o, unsigned char **blob, size_t *len);
mlc_status mlc_optimize_rerank_load(optimize_run *o, const unsigned char *blob, size_t len);

/* What the validation chose. */
typedef struct mlc_rerank_choice {
    double *u;       /* the gait to return, n values in [0,1]^n, owned (free with mlc_free) */
    char source[32]; /* "returned", "best", "mean", "run R", "generation G" */
    int index;       /* among the candidates replayed; 0 is the gait returned without it */
    int judged;      /* 1: j is its replay in the reference (not the tests' substitute) */
    struct mlc_judgement *j; /* its full-space replay when judged, owned */
    double seconds;          /* of that replay */
    char error[256];         /* its replay failed ("" otherwise): no verdict, no transfer */
    struct cJSON *block;     /* result.json's "rerank" block, owned */
} mlc_rerank_choice;

/* Replay up to reference.rerank distinct candidates in the full-space reference: `ret` (the gait
 * the job returns without the validation, after the polish), the best-ever point, the final
 * mean, the runs' bests and the last generations' bests by score; choose the credible one with
 * the lowest full-space J (`ret` when none is credible). Prints a line per candidate. */
mlc_status mlc_optimize_rerank(optimize_run *o, const double *ret, mlc_rerank_choice *out);

/* Under MPI the replays are shared among the processes (the same verdicts for any number of
 * them): ranks other than 0 call serve after the generations, which replays their block of the
 * candidates once rank 0 hands them out, or returns when rank 0 releases them without any
 * (release: a no-op once told, so rank 0 calls it on every path out of the finish). */
mlc_status mlc_optimize_rerank_serve(optimize_run *o);
void mlc_optimize_rerank_release(optimize_run *o);

void mlc_rerank_choice_free(mlc_rerank_choice *c);
void mlc_optimize_rerank_free(optimize_run *o);

/* The finish on rank 0 (optimize_finish.c): unless interrupted, the final mean's score, the
 * gait returned, the polish, the files and the summary; o->rc 3 when nothing credible gains. */
mlc_status mlc_optimize_finish(optimize_run *o);

#endif
