/* simulate_job.h: what `modalloco simulate` runs: one rollout of the configuration's
 * actuation.parameters (or a params.json's) on the reduced model, its files (mlc_write_rollout,
 * the viewer), with the full-space reference beside it (judge.h, fullspace.json) and a check
 * against a stored result.json when asked. Its summary and warnings go through the sink. */
#ifndef MODALLOCO_SIMULATE_JOB_H
#define MODALLOCO_SIMULATE_JOB_H

#include "base.h"
#include "config.h"
#include "pipeline.h"
#include "sink.h"

typedef struct mlc_simulate_def {
    /* The CONFIG or PARAMS file the configuration came from (NULL: defaults and --set only).
     * A params.json must name the mesh it was optimized on. */
    const char *input;
    /* output.dir was given (--out or --set output.dir=...): else a params.json from DIR
     * replays into DIR/replay, never over the optimizer's own outputs. */
    int out_given;
    int full_space;     /* also the full-space reference (sim.integrator "euler" only) */
    int force;          /* overwrite output.dir although its config.json is another run's */
    int quiet;          /* no timing and notes */
    const char *expect; /* a result.json to compare J, its terms and com_end with, or NULL */
    double tolerance;   /* relative tolerance of that comparison */
    mlc_sink sink;
} mlc_simulate_def;

/* Run it. `cfg` is the validated configuration; its output.dir may change (the replay folder).
 * `p` (zeroed by the caller; mlc_pipeline_free it whatever the outcome) receives the model.
 * *differ is 1 when --expect found a difference beyond the tolerance (exit code 1). */
mlc_status mlc_simulate_job(const mlc_simulate_def *d, mlc_config *cfg, mlc_pipeline *p,
                            int *differ, mlc_err *err);

#endif
