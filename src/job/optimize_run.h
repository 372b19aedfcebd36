/* optimize_run.h: the optimize job (docs/method.md §8), what `modalloco optimize` runs: the
 * model (under mpirun rank 0 precomputes and the other processes read its cache), CMA-ES over
 * the actuation parameters with robust scoring and restarts, the checkpoint, the polish, and
 * the run's files in output.dir (config.json, history.csv/.svg, checkpoint.bin, params.json,
 * result.json, the best gait's rollout, view.html).
 *
 * The job prints nothing itself: its progress, summary and errors go through the sink
 * (sink.h). With several processes only rank 0 says anything, except the error of a rank that
 * fails alone.
 *
 * Determinism: the same configuration gives the same bits for any parallel.threads, any
 * number of processes and across an interruption and --resume (docs/architecture.md). */
#ifndef MODALLOCO_OPTIMIZE_RUN_H
#define MODALLOCO_OPTIMIZE_RUN_H

#include "base.h"
#include "checkpoint.h"
#include "config.h"
#include "sink.h"

/* What to run. Zero-initialize, then set the configuration (config or load) and what else
 * applies. Nothing here is kept after mlc_optimize_run returns. */
typedef struct mlc_optimize_def {
    /* The validated configuration (copied), used when `load` is NULL. */
    const mlc_config *config;
    /* Or the configuration made on every process after MPI has started (defaults, file, --set,
     * validation: the program's options), so that a bad input under mpirun is settled once
     * by every process: rank 0 reports, every process exits with its code. */
    mlc_status (*load)(void *user, mlc_config *cfg, mlc_err *err);
    void *load_user;
    /* --resume DIR: continue the run in DIR (which must be output.dir) from its checkpoint. */
    const char *resume;
    int force;   /* --force: overwrite output.dir although its config.json is another run's */
    int dry_run; /* --dry-run: time a generation's rollouts and say the estimate; no files */
    int quiet;   /* no progress and notes (results, warnings of "not found" and errors stay) */
    mlc_sink sink;
    /* Rank 0, after each generation's row is recorded (history.csv); `row` is valid during the
     * call. May be NULL. */
    void (*generation)(void *user, const mlc_history_row *row);
    void *generation_user;
    /* Tests only (the program leaves it NULL): called on every process right before its
     * precompute, with its rank; a status other than MLC_OK is that process's failure there,
     * message in *err. How tests check that one failing rank ends the whole job. */
    mlc_status (*fault)(void *user, int rank, mlc_err *err);
    void *fault_user;
    /* Tests only (the program leaves it NULL): with reference.rerank > 0, the full-space J of
     * candidate gait u (n values in [0,1]^n) in place of its replay in the reference, so a
     * test decides which candidate holds; the share of travel kept is then unknown (null). */
    double (*rerank_judge)(void *user, const double *u, int n);
    void *rerank_judge_user;
    /* The directory an interrupted run is resumed from, named in the message that says how
     * (NULL: output.dir). The second search of reference.refine runs in a subdirectory of it. */
    const char *resume_dir;
    /* Set by reference.refine for its second search (optimize_refine.c), whose comparison with
     * the first says whether the gait returned holds: the search's own warning stays out. */
    int second_search;
} mlc_optimize_def;

/* What came out (filled on every process; the values only on the one that wrote the files). */
typedef struct mlc_optimize_result {
    /* The exit code: 0; 3, ran to the end without a credible gait; 130, interrupted (the
     * checkpoint is saved); or a failure's, already reported through sink.fail. */
    int rc;
    int written;       /* 1 when this process wrote the run's results (rank 0 and rc 0 or 3) */
    mlc_status status; /* MLC_OK, or the failure's status with its message in err */
    mlc_err err;
    char dir[MLC_CONFIG_PATH_MAX]; /* output.dir */
    /* When written (as params.json says): */
    double J, J_robust, J_mean; /* the gait's J, its score (worst of its replays), the mean's */
    double displacement;        /* its travel along objective.direction, in extents */
    int found;                  /* a credible gait that gains */
    int chose_mean;             /* the gait is the final distribution mean, not the best-ever */
    int generations, restarts;
    long evaluations;
    long rollouts;        /* the generations' rollouts (history.csv's last row) */
    char stop_reason[32]; /* params.json stop_reason: "budget", "restart_room", ... or "" */
    int n;                /* parameters */
    double *u;            /* the returned gait in [0,1]^n (mlc_gait_decode), owned */
    /* The returned gait's replay in the full-space reference (reference.check, or the
     * validation's), when one was measured and converged: transfer_known 1, then the share of
     * its travel it kept, its full-space J, whether it is credible there, and what it kept
     * (mlc_judgement_kept: for locomotion the lesser of its travel's and its J's shares). */
    int transfer_known, transfer_credible;
    double transfer_fraction, transfer_J, transfer_kept;
    int rerank; /* reference.rerank resolved: the candidates the validation replays (0: none) */
    /* reference.refine searched again (optimize_refine.c): the gait returned, 0 the first
     * search's, 1 the finer model's from that gait (OUT/finer), 2 the finer model's from the
     * box's centre (OUT/finer_centre); -1 when there was no further search. */
    int refined;
    /* The first search ended with no gain, its best gait going backward, and was run again with
     * objective.whole_losses (OUT/whole_losses, optimize_refine.c): 1 when that search's gait is
     * the one returned, 0 when the first's is; -1 when there was no such search. */
    int retried;
} mlc_optimize_result;

/* Run the job (collective under mpirun: every process calls it): the search, and when its gait
 * does not hold in the full-space reference a second one in a finer model (reference.refine,
 * optimize_refine.c). Fills *out (free it with mlc_optimize_result_free) and returns out->rc. A
 * failure has been reported through def->sink.fail by then; a failure that only a rank other than 0
 * meets ends the whole job (mlc_dist_abort) and does not return. */
int mlc_optimize_run(const mlc_optimize_def *def, mlc_optimize_result *out);

void mlc_optimize_result_free(mlc_optimize_result *r);

#endif
