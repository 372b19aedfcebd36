/* summary.h: what a set of finished (or unfinished) optimize runs found, read back from their
 * directories, for `modalloco summarize`: one row per run, and the runs grouped by setting
 * across seeds.
 *
 * A run directory is one that holds params.json, run.json, config.json or checkpoint.bin. A
 * sweep root is a directory whose subdirectories are runs (taken in name order). From each run
 * the summary reads run.json (the swept settings and the seed, written by `sweep`),
 * params.json (J and its terms, "found"), result.json (the credibility block and, when the gait
 * was checked in a second model, "transfer"), fullspace.json (written by `simulate
 * --full-space`: the full-space travel), config.json (the task) and the last row of
 * history.csv (generations and wall seconds). Every file is optional; what is missing reads
 * as unknown (NAN, -1 or "").
 *
 * A group is every run with the same values of the swept keys other than the seed
 * (cmaes.seed): a sweep's grid point × list entry. Runs made outside a sweep (no run.json)
 * have no swept keys and fall into one group. Groups are numbered in the order of their first
 * run.
 */
#ifndef MODALLOCO_SUMMARY_H
#define MODALLOCO_SUMMARY_H

#include <stdio.h>

/* cJSON's tree, by its tag: this header does not pull in cJSON.h; a source that builds or
 * reads the trees includes <cjson/cJSON.h> itself (C11 allows the repeated typedef). */
typedef struct cJSON cJSON;

#include "base.h"

/* The key a group is not split by: the seed is what repeats within a group. */
#define MLC_SUMMARY_SEED_KEY "cmaes.seed"

/* One run directory. Numbers are NAN when unknown. */
typedef struct mlc_summary_run {
    char *dir;        /* the directory as found (owned) */
    cJSON *overrides; /* run.json "overrides" {"KEY": value} (owned; NULL outside a sweep) */
    double seed, J, displacement, J_align, generations, seconds;
    const char *status;      /* "done" (params.json), "partial" (checkpoint.bin) or "pending" */
    int found;               /* params.json "found": 1, 0, or -1 when absent */
    int credible;            /* result.json credibility.credible: 1, 0, or -1 when absent */
    double robustness;       /* result.json credibility.robustness, a fraction of the replays */
    double transfer;         /* fraction of the reduced travel kept in the second model
                                (result.json transfer.fraction, else fullspace.json's
                                full.displacement / reduced.displacement) */
    char transfer_model[32]; /* transfer.model, "fullspace" from fullspace.json, "" unknown */
    char kind[16];           /* objective.kind of config.json ("" when unknown) */
    char task[160];          /* what the task asks (target, heading, path), "" for locomotion */
    double task_error;       /* result.json task_error, NAN when unknown */
    int group;               /* index into mlc_summary.groups (after mlc_summary_group_runs) */
} mlc_summary_run;

/* The runs of one setting. Statistics over the runs that are done and have a finite J. */
typedef struct mlc_summary_group {
    cJSON *setting;                /* {"KEY": value} of the swept keys but the seed (owned) */
    char *label;                   /* "KEY=value KEY=value" ("(all runs)" without keys) (owned) */
    int n, done;                   /* runs, runs with params.json */
    double J_median, J_min, J_max; /* NAN when no run has a J */
    int credible_k, credible_n;    /* credible runs / runs with a credibility block */
    int robust_k, robust_n;        /* robustness >= MLC_SUMMARY_ROBUST / runs recording it */
    double transfer_median;        /* median full-space travel fraction, NAN when none */
    int transfer_n;                /* runs with a travel fraction */
} mlc_summary_group;

/* A gait is robust when this fraction of perturbed replays keep half its gain (the limit the
 * credibility test uses, optimize/credibility.h). */
#define MLC_SUMMARY_ROBUST 0.75

/* Zeroed = empty; mlc_summary_free is idempotent. */
typedef struct mlc_summary {
    mlc_summary_run *runs; /* nruns (owned) */
    int nruns, cap;
    cJSON *keys; /* the overridden keys, in order of first appearance (owned; after grouping) */
    mlc_summary_group *groups; /* ngroups (owned; after grouping) */
    int ngroups;
} mlc_summary;

/* Add `dir`: a run directory, or a directory whose subdirectories are runs. MLC_EINVAL naming
 * the directory when it is neither. */
mlc_status mlc_summary_collect(mlc_summary *sm, const char *dir, mlc_err *err);

/* Find the keys and group the collected runs (sets keys, groups and every run's group). */
mlc_status mlc_summary_group_runs(mlc_summary *sm, mlc_err *err);

void mlc_summary_free(mlc_summary *sm);

/* The per-run CSV: run, a column per key, seed, J, displacement, J_align, generations,
 * seconds, found, status (and kind, task, task_error when a run has a task other than
 * locomotion). */
void mlc_summary_runs_csv(FILE *f, const mlc_summary *sm);

/* The grouped CSV: group, a column per key but the seed, n, done, J_median, J_min, J_max,
 * credible_k, credible_n, robust_k, robust_n, transfer_median, transfer_n. */
void mlc_summary_groups_csv(FILE *f, const mlc_summary *sm);

/* The groups as an aligned text table for people. */
void mlc_summary_table(FILE *f, const mlc_summary *sm);

/* A bar per run of its final J (lower is better), written atomically to `path`. */
mlc_status mlc_summary_bars_svg(const char *path, const mlc_summary *sm, mlc_err *err);

/* J against each swept key but the seed, one panel per key (one panel "all runs" without keys),
 * written atomically to `path`. Numeric keys get a linear axis, others one slot per value in
 * order of appearance. Every run with a J is a dot (filled green: credible; open red: not
 * credible; open grey: credibility unknown), every group's median a black bar, and the medians
 * of groups that differ only in the panel's key are joined by a line. */
mlc_status mlc_summary_plot_svg(const char *path, const mlc_summary *sm, mlc_err *err);

/* The whole summary as JSON: {"keys": [...], "groups": [...], "runs": [...]} (owned; unknown
 * numbers are null). */
cJSON *mlc_summary_json(const mlc_summary *sm);

/* A CSV field, quoted when it holds a comma, quote or line break. */
void mlc_csv_field(FILE *f, const char *s);

/* A JSON value as text for a table cell: a string without its quotes, anything else compact
 * JSON. Owned (mlc_free); NULL when out of memory. */
char *mlc_json_cell_text(const cJSON *v);

#endif
