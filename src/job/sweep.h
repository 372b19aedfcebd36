/* sweep.h: a parameter sweep (docs/cluster.md): a sweep file expanded into optimize runs under
 * an output root, the root's files (sweep.c), and running them here, one after the other in
 * this process or several at a time as child processes (sweep_exec.c). What `modalloco sweep`
 * does; the file format is described in sweep.c. Nothing here prints to the terminal: progress
 * goes through a sink, and the listing functions write to the FILE they are given. */
#ifndef MODALLOCO_SWEEP_H
#define MODALLOCO_SWEEP_H

#include <stdio.h>

/* cJSON's tree, by its tag: this header does not pull in cJSON.h; a source that builds or
 * reads the trees includes <cjson/cJSON.h> itself (C11 allows the repeated typedef). */
typedef struct cJSON cJSON;

#include "base.h"
#include "config.h"
#include "sink.h"

/* --set arguments a run passes on to optimize (the program's own limit). */
#define MLC_SWEEP_MAX_SETS 256

typedef struct mlc_sweep_run {
    char *dir;        /* absolute ROOT/run_NNNN (owned) */
    cJSON *overrides; /* {"KEY": value} of this run, seed excluded (owned) */
    char **sets;      /* --set strings in order (owned) */
    int nsets;
    int seed;     /* effective cmaes.seed */
    int threads;  /* effective parallel.threads (0 = all cores) */
    char *config; /* the effective configuration as optimize writes config.json (owned) */
} mlc_sweep_run;

typedef struct sweep {
    cJSON *doc;            /* the parsed sweep file (owned) */
    char *root;            /* absolute output root (owned) */
    char *base;            /* optimize's positional input: a path (owned) or NULL for defaults */
    const cJSON *base_obj; /* the base when given inline (in doc) */
    mlc_sweep_run *runs;   /* nruns (owned) */
    int nruns;
    cJSON *keys; /* array of the swept key names, first appearance order (owned) */
    struct {
        const char *launcher; /* "srun" (default), "mpirun", ... or "" (in doc) */
        const char *mpi;      /* srun's MPI plugin for runs of several tasks ("" = Slurm's) */
        int ntasks, cpus;     /* processes per run, CPUs per process (0: not asked) */
        const cJSON *options; /* more #SBATCH lines (in doc; may be NULL) */
    } slurm;
} mlc_sweep;

/* What a run's directory holds (mlc_sweep_run_state): nothing yet, a complete run (skipped),
 * a checkpoint (resumed), or a run of another configuration (redone only with --force). */
enum { MLC_SWEEP_FRESH, MLC_SWEEP_SKIP, MLC_SWEEP_RESUME, MLC_SWEEP_CONFLICT };

/* Parse the sweep file and expand it into runs under `out` (or the file's "out"), with the
 * `extra` --set assignments for every run; nothing is written. Errors name the file and the
 * member. Free *w with mlc_sweep_free whatever the outcome (zero it first). */
mlc_status mlc_sweep_load(mlc_sweep *w, const char *file, const char *out, const char *const *extra,
                          int nextra, mlc_err *err);
void mlc_sweep_free(mlc_sweep *w);

/* ROOT's sweep.json, runs.csv, manifest.tsv, base.json and every run's run.json. */
mlc_status mlc_sweep_write_manifest(const mlc_sweep *w, mlc_err *err);
/* The Slurm job array script at `path`; max_running > 0 throttles the array. */
mlc_status mlc_sweep_write_slurm(const mlc_sweep *w, const char *path, int max_running,
                                 mlc_err *err);
/* What each array task asks Slurm for and how it launches, as lines on f. */
void mlc_sweep_print_resources(FILE *f, const mlc_sweep *w);

/* This program's path (what the Slurm script and the runs of --jobs start), or "modalloco". */
void mlc_sweep_program(char *exe, size_t cap);

/* MLC_SWEEP_FRESH ... MLC_SWEEP_CONFLICT for run r, from its directory. */
int mlc_sweep_run_state(const mlc_sweep_run *r);
/* "todo", "complete", "resume", "conflict". */
const char *mlc_sweep_state_name(int state);
/* Run r as the shell command `modalloco optimize ...` (no newline) on f. */
void mlc_sweep_print_run(FILE *f, const mlc_sweep *w, const mlc_sweep_run *r);
/* {"root", "base", "keys", "runs": [...]}: what each run would do (`sweep --dry-run --json`).
 * Owned (cJSON_Delete); NULL when out of memory. */
cJSON *mlc_sweep_runs_json(const mlc_sweep *w, const int *state);

/* Collective: every run's state (*state: nruns values, owned, mlc_free), as rank 0 finds the
 * directories, so that every rank takes the same path. */
mlc_status mlc_sweep_states(const mlc_sweep *w, int **state, mlc_err *err);
/* MLC_EINVAL, naming the first and counting them, when runs of another configuration are in
 * the way (--force redoes them). */
mlc_status mlc_sweep_check_conflicts(const mlc_sweep *w, const int *state, mlc_err *err);
/* `sweep --dry-run`: each run's state and command, a line each. */
void mlc_sweep_print_list(FILE *f, const mlc_sweep *w, const int *state);
/* `sweep --slurm PATH`: the array's size, what a task asks for, how to submit. */
void mlc_sweep_print_slurm(FILE *f, const mlc_sweep *w, const int *state, const char *path,
                           int max_running);

/* ---- Running the runs here (sweep_exec.c) ---- */
/* What became of the runs. */
typedef struct mlc_sweep_tally {
    int ran, skipped, failed, none; /* none: complete without a credible gait (exit 3) */
    int interrupted;                /* a signal stopped the sweep: exit 130 */
} mlc_sweep_tally;

typedef struct mlc_sweep_exec {
    int jobs;    /* runs at a time: 1 in this process, more as child processes */
    int threads; /* --threads for every run (with threads_set) */
    int threads_set;
    int force; /* redo the runs of another configuration */
    int quiet; /* no progress (failures are still reported) */
    /* jobs 1: run i here, resuming its checkpoint or forcing over a conflicting run when
     * asked; returns optimize's exit code. */
    int (*run_here)(const void *user, const mlc_sweep *w, int i, int resume, int force);
    const void *user;
    mlc_sink sink; /* progress and failures, on rank 0 */
} mlc_sweep_exec;

/* Run every run whose state is not MLC_SWEEP_SKIP (state: one per run). A run that fails is
 * counted and the others go on; SIGINT/SIGTERM stops starting runs (the running ones save a
 * checkpoint) and sets t->interrupted. Collective under mpirun with jobs 1. */
mlc_status mlc_sweep_execute(const mlc_sweep *w, const int *state, const mlc_sweep_exec *x,
                             mlc_sweep_tally *t, mlc_err *err);

#endif
