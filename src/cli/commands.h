/* commands.h: the commands behind the CLI (info, modes, simulate, optimize, sweep, summarize)
 * and what they share from cli.c: the options, loading the effective configuration and
 * reporting a failure. Writing a rollout's output files is rollout_io.h.
 * Each command prints results on stdout and diagnostics on stderr, and returns an exit code. */
#ifndef MODALLOCO_COMMANDS_H
#define MODALLOCO_COMMANDS_H

#include "base.h"
#include "config.h"
#include "sink.h" /* MLC_FMA_NOTE */

struct cJSON;

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
    int slurm_max_running;                /* sweep --slurm-max-running N (0 = no limit) */
    int jobs;                             /* sweep --jobs N: runs at a time (0 = not given) */
    int gallery;                          /* summarize --gallery */
    const char *inputs[MLC_CLI_MAX_SETS]; /* summarize DIR...: every positional, in order */
    int ninputs;
    const char *png;   /* view --png FILE: film strip */
    const char *gif;   /* view --gif FILE */
    const char *apng;  /* view --apng FILE */
    const char *mp4;   /* view --mp4 FILE (through ffmpeg) */
    int frames;        /* view --frames N: panels or animation frames (0 = default) */
    int fps;           /* view --fps N (0 = default) */
    int width, height; /* view --width, --height: pixels of a panel or frame (0 = default) */
    double speed;      /* view --speed X: simulated seconds per second played */
    int speed_set;
    double hold; /* view --hold S: seconds the last frame of a looping animation stays */
    int hold_set;
    int follow;        /* view --follow: the camera moves with the body */
    double max_memory; /* --max-memory SIZE in bytes (modes, simulate, optimize); 0 = default */
} mlc_cli_options;

/* Defaults, then the input (JSON config/params or a mesh path), then every --set, then the
 * dedicated options (--seed, --threads, --out), then validation. */
mlc_status mlc_cli_load_config(const mlc_cli_options *opt, mlc_config *cfg, mlc_err *err);

int mlc_cmd_info(const mlc_cli_options *opt);
int mlc_cmd_modes(const mlc_cli_options *opt);
int mlc_cmd_simulate(const mlc_cli_options *opt);
int mlc_cmd_optimize(const mlc_cli_options *opt);
/* sweep SWEEP.json: expand into optimize runs and run them here (--jobs N at a time), or write
 * a Slurm job array (--slurm FILE), or list them (--dry-run [--json]); summarize DIR...: one
 * CSV row per run on stdout, or with --out FILE.csv the per-run and grouped CSV, the plots,
 * a table of the groups (or --json) and with --gallery ROOT/index.html. See
 * src/job/sweep.h and docs/cluster.md. */
int mlc_cmd_sweep(const mlc_cli_options *opt);
int mlc_cmd_summarize(const mlc_cli_options *opt);
int mlc_cmd_view(const mlc_cli_options *opt);

/* --json (optimize, simulate): print DIR/result.json, with DIR/fullspace.json as member
 * "fullspace" when with_fullspace, as the one JSON document on stdout. A no-op without --json.
 * Call it once the run's files are written. MLC_EIO when they cannot be read back or stdout
 * cannot be written. */
mlc_status mlc_cli_print_result_json(const char *dir, int with_fullspace, mlc_err *err);

/* Print "modalloco: message" on stderr and return the exit code for the status. */
int mlc_cli_fail(mlc_status s, const mlc_err *err);

/* A job's sink (sink.h) on the terminal: results on stdout, the rest on stderr, failures
 * through mlc_cli_fail. */
mlc_sink mlc_cli_sink(void);

/* A JSON document (owned, consumed; NULL means out of memory) on stdout; the exit code. */
int mlc_cli_print_json(struct cJSON *o);

#endif
