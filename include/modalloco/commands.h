/* commands.h: the commands behind the CLI (info, modes, simulate, optimize, sweep, summarize)
 * and the pieces
 * they share: loading the effective configuration and writing a rollout's output files.
 * Each command prints results on stdout and diagnostics on stderr, and returns an exit code. */
#ifndef MODALLOCO_COMMANDS_H
#define MODALLOCO_COMMANDS_H

#include <stdio.h>

#include "modalloco/base.h"
#include "modalloco/config.h"
#include "modalloco/credibility.h"
#include "modalloco/pipeline.h"
#include "modalloco/sim.h"

#define MLC_CLI_MAX_SETS 256

typedef struct mlc_cli_options {
    const char *command;
    const char *input;                  /* CONFIG, PARAMS or MESH positional (may be NULL) */
    const char *out;                    /* --out DIR */
    const char *sets[MLC_CLI_MAX_SETS]; /* --set KEY=VALUE, in order */
    int nsets;
    long long seed; /* --seed N */
    int seed_set;
    int threads; /* --threads N */
    int threads_set;
    const char *resume; /* --resume DIR */
    int quiet, json, full_space, force, dry_run;
    const char *expect; /* simulate --expect RESULT.json */
    double tolerance;   /* simulate --tolerance T (relative; default 1e-9) */
    int tolerance_set;
    const char *slurm;                    /* sweep --slurm FILE */
    const char *inputs[MLC_CLI_MAX_SETS]; /* summarize DIR...: every positional, in order */
    int ninputs;
    const char *png; /* view --png FILE */
    int frames;      /* view --frames N (0 = default) */
} mlc_cli_options;

/* Defaults, then the input (JSON config/params or a mesh path), then every --set, then the
 * dedicated options (--seed, --threads, --out), then validation. */
mlc_status mlc_cli_load_config(const mlc_cli_options *opt, mlc_config *cfg, mlc_err *err);

/* Write surface.obj, animation.pc2, trajectory.csv and result.json for one rollout of `act`
 * into `dir` (which must exist), fill `res`, and judge the rollout (credibility.h, with
 * parallel.threads for the replays) into `cred`, which result.json carries; with_found adds
 * optimize's "found" (mlc_credibility_found). */
mlc_status mlc_write_rollout(const mlc_pipeline *p, const mlc_config *cfg, const mlc_actuation *act,
                             const char *dir, int with_found, mlc_rollout_result *res,
                             mlc_credibility *cred, mlc_err *err);

/* Create `dir` if needed and write config.json. If `dir` already holds a config.json of
 * another configuration and `force` is 0, fail (MLC_EINVAL) instead of overwriting a
 * different run's results. */
mlc_status mlc_prepare_out_dir(const char *dir, const mlc_config *cfg, int force, mlc_err *err);

/* Write DIR/view.html for a run directory (output.viewer), as `modalloco view DIR` does. */
mlc_status mlc_write_viewer(const char *dir, mlc_err *err);

/* result.json text for a rollout (owned, mlc_free), with the credibility block when cred is
 * not NULL and "found" when found >= 0. */
char *mlc_result_json(const mlc_rollout_result *res, const mlc_credibility *cred, int found);

/* Add the "credibility" object (the six keys of result.json) to the cJSON object o. */
struct cJSON;
void mlc_json_add_credibility(struct cJSON *o, const mlc_credibility *c);

/* Add the "transform" object of mesh preparation to the cJSON object o:
 * {"rotate": [[R00, R01, R02], [R10, ...], [R20, ...]], "scale": s, "translate": [tx, ty, tz]},
 * meaning x_prepared = s · R x_input + t (R by rows; the identity unless mesh.up is given), so
 * x_input = Rᵀ (x_prepared − t) / s maps results back to the input mesh. Numbers are written
 * with 17 digits, exact. */
void mlc_json_add_transform(struct cJSON *o, const mlc_transform *tf);

/* The credibility block on stdout, one "name value" line per measure (as the objective terms;
 * credible true|false). */
void mlc_print_credibility(FILE *f, const mlc_credibility *c);

int mlc_cmd_info(const mlc_cli_options *opt);
int mlc_cmd_modes(const mlc_cli_options *opt);
int mlc_cmd_simulate(const mlc_cli_options *opt);
int mlc_cmd_optimize(const mlc_cli_options *opt);
/* sweep SWEEP.json: expand into optimize runs and run them here, or write a Slurm job array
 * (--slurm FILE), or list them (--dry-run); summarize DIR...: one CSV row per run (stdout or
 * --out FILE.csv, plus FILE.svg). See src/cmd_sweep.c and docs/cluster.md. */
int mlc_cmd_sweep(const mlc_cli_options *opt);
int mlc_cmd_summarize(const mlc_cli_options *opt);
int mlc_cmd_view(const mlc_cli_options *opt);

/* Print "modalloco: message" on stderr and return the exit code for the status. */
int mlc_cli_fail(mlc_status s, const mlc_err *err);

#endif
