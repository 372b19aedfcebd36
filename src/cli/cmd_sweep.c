/* cmd_sweep.c: `modalloco sweep` (expand a parameter sweep into optimize runs; run them here,
 * one after the other in this process or --jobs N at a time as child processes, or write a
 * Slurm job array) and `modalloco summarize` (the runs' results, per run and grouped by
 * setting: job/summary.h; the HTML gallery: job/gallery.h). docs/cluster.md is the user's
 * guide.
 *
 * A sweep file is JSON:
 *   {"base": "run.json" | "bat.off" | {config object},    (optional; defaults otherwise)
 *    "grid": {"KEY": [v1, v2, ...], ...},                  (optional: the cartesian product)
 *    "list": [{"KEY": v, ...}, ...],                        (optional: explicit combinations)
 *    "seeds": [1, 2, 3],                                    (optional: each combination per seed)
 *    "args": ["KEY=VALUE", ...],                            (optional: --set for every run;
 *                                                            `sweep --set` adds more)
 *    "out": "ROOT",                                         (optional; --out wins)
 *    "slurm": {"launcher": "srun", "mpi": "pmix", "ntasks": 1, "cpus_per_task": 2,
 *              "options": ["--time=02:00:00", ...]}}        (optional; for --slurm; checked
 *                                                            always: slurm_load)
 * Runs: every grid point × every list entry × every seed, in that nesting (the grid's first
 * key varies slowest, seeds fastest); run i goes to ROOT/run_%04d. Its --set overrides are, in
 * order: args, the grid values, the list entry's values, cmaes.seed. Paths in the sweep file
 * (base, mesh.path in an inline base or a --set) are taken relative to the working directory,
 * like command-line paths; a base configuration file resolves its own mesh.path relative to
 * itself (mlc_config_load_file).
 *
 * Files in ROOT: sweep.json (the sweep as read), runs.csv (run, dir, seed and one column per
 * swept key), manifest.tsv (line i+1: the arguments of run i's `modalloco optimize`, tab
 * separated, absolute paths: what the Slurm script reads by SLURM_ARRAY_TASK_ID), base.json
 * (when the base is an object), and run_NNNN/run.json (index, seed, overrides, sets) which
 * `summarize` reads.
 *
 * A run whose params.json exists and whose config.json matches is complete and skipped, a run
 * with a checkpoint is resumed, so an interrupted sweep continues where it stopped. With one job
 * (the default) runs execute in-process through mlc_cmd_optimize, so under mpirun every run
 * uses all processes. With --jobs N they are `modalloco optimize` processes started N at a time
 * (posix_spawn), each writing to ROOT/run_NNNN/optimize.log with --threads = cores / N unless
 * the run sets parallel.threads or --threads is given; a run's result does not depend on its
 * thread count, so the files are the same as with one job.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <cjson/cJSON.h>

#include "commands.h"
#include "dist.h"
#include "gallery.h"
#include "output.h"
#include "summary.h"

#define SWEEP_MAX_RUNS 100000

/* ---- Small file helpers --------------------------------------------------------------- */
/* An absolute version of `path` (owned): realpath when it exists, else cwd + path. */
static char *absolute(const char *path) {
    char buf[PATH_MAX];
    if (realpath(path, buf)) return mlc_strdup(buf);
    if (path[0] == '/') return mlc_strdup(path);
    if (!getcwd(buf, sizeof buf)) return NULL;
    return mlc_path_join_alloc(buf, path);
}

/* ---- The sweep ------------------------------------------------------------------------ */
typedef struct sweep_run {
    char *dir;        /* absolute ROOT/run_NNNN (owned) */
    cJSON *overrides; /* {"KEY": value} of this run, seed excluded (owned) */
    char **sets;      /* --set strings in order (owned) */
    int nsets;
    int seed;     /* effective cmaes.seed */
    int threads;  /* effective parallel.threads (0 = all cores) */
    char *config; /* the effective configuration as optimize writes config.json (owned) */
} sweep_run;

typedef struct sweep {
    cJSON *doc;            /* the parsed sweep file (owned) */
    char *root;            /* absolute output root (owned) */
    char *base;            /* optimize's positional input: a path (owned) or NULL for defaults */
    const cJSON *base_obj; /* the base when given inline (in doc) */
    sweep_run *runs;       /* nruns (owned) */
    int nruns;
    cJSON *keys; /* array of the swept key names, first appearance order (owned) */
    struct {
        const char *launcher; /* "srun" (default), "mpirun", ... or "" (in doc) */
        const char *mpi;      /* srun's MPI plugin for runs of several tasks ("" = Slurm's) */
        int ntasks, cpus;     /* processes per run, CPUs per process (0: not asked) */
        const cJSON *options; /* more #SBATCH lines (in doc; may be NULL) */
    } slurm;
} sweep;

static void sweep_free(sweep *w) {
    for (int i = 0; i < w->nruns; i++) {
        sweep_run *r = &w->runs[i];
        mlc_free(r->dir);
        cJSON_Delete(r->overrides);
        for (int k = 0; k < r->nsets; k++)
            mlc_free(r->sets[k]);
        mlc_free(r->sets);
        mlc_free(r->config);
    }
    mlc_free(w->runs);
    mlc_free(w->root);
    mlc_free(w->base);
    cJSON_Delete(w->keys);
    cJSON_Delete(w->doc);
    memset(w, 0, sizeof *w);
}

/* A JSON value as the text of a --set value (compact JSON). Owned, mlc_free. */
static char *value_text(const cJSON *v) {
    char *t = cJSON_PrintUnformatted(v);
    if (!t) return NULL;
    char *copy = mlc_strdup(t);
    cJSON_free(t);
    return copy;
}

static mlc_status add_set(sweep_run *r, const char *key, const cJSON *value, const char *raw,
                          mlc_err *err) {
    char **ns = mlc_realloc(r->sets, (size_t)(r->nsets + 1) * sizeof *ns);
    if (!ns) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    r->sets = ns;
    char *vt = raw ? mlc_strdup(raw) : value_text(value);
    if (!vt) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    char *s = NULL;
    if (key) {
        size_t n = strlen(key) + strlen(vt) + 2;
        s = mlc_malloc(n);
        if (s) snprintf(s, n, "%s=%s", key, vt);
        mlc_free(vt);
    } else {
        s = vt;
    }
    if (!s) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    r->sets[r->nsets++] = s;
    return MLC_OK;
}

static void note_key(sweep *w, const char *key) {
    const cJSON *k;
    cJSON_ArrayForEach(k, w->keys) if (!strcmp(k->valuestring, key)) return;
    cJSON_AddItemToArray(w->keys, cJSON_CreateString(key));
}

/* The effective configuration of a run, exactly as optimize will build it. */
static mlc_status run_config(const sweep *w, const sweep_run *r, const char *src, mlc_config *cfg,
                             mlc_err *err) {
    mlc_status s;
    mlc_config_defaults(cfg);
    if (w->base_obj) {
        if ((s = mlc_config_apply_json(cfg, w->base_obj, src, err)) != MLC_OK) return s;
    } else if (w->base) {
        mlc_cli_options o;
        memset(&o, 0, sizeof o);
        o.input = w->base;
        mlc_config tmp;
        /* mlc_cli_load_config validates too, which is what we want for the base alone. */
        if ((s = mlc_cli_load_config(&o, &tmp, err)) != MLC_OK) return s;
        *cfg = tmp;
    }
    for (int i = 0; i < r->nsets; i++)
        if ((s = mlc_config_set(cfg, r->sets[i], err)) != MLC_OK) return s;
    if (strlen(r->dir) >= sizeof cfg->output.dir)
        return mlc_errf(err, MLC_EINVAL, "output path too long: %s", r->dir);
    snprintf(cfg->output.dir, sizeof cfg->output.dir, "%s", r->dir);
    /* actuation.local_modes replacing the global modes, as optimize resolves it (cli.c). */
    s = mlc_config_resolve_local_modes(cfg, w->base_obj, w->base, src, (const char *const *)r->sets,
                                       r->nsets, err);
    if (s != MLC_OK) return s;
    return mlc_config_validate(cfg, err);
}

/* The name of the first member of object `o` that is not among `known`, or NULL. */
static const char *unknown_member(const cJSON *o, const char *const *known, size_t n) {
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        size_t k = 0;
        while (k < n && strcmp(it->string, known[k]))
            k++;
        if (k == n) return it->string;
    }
    return NULL;
}

/* Is `opt` (an #SBATCH option) the option `name` ("--ntasks") or its short form `letter`? */
static int is_option(const char *opt, const char *name, const char *letter) {
    size_t n = strlen(name);
    if (!strncmp(opt, name, n) && (opt[n] == 0 || opt[n] == '=' || opt[n] == ' ')) return 1;
    n = letter ? strlen(letter) : 0;
    return n && !strncmp(opt, letter, n);
}

/* The value of option `name`/`letter` among the #SBATCH options, or NULL. */
static const char *option_value(const cJSON *opts, const char *name, const char *letter) {
    const cJSON *o;
    cJSON_ArrayForEach(o, opts) {
        const char *v = o->valuestring;
        if (!is_option(v, name, letter)) continue;
        v += v[1] == '-' ? strlen(name) : strlen(letter);
        while (*v == '=' || *v == ' ')
            v++;
        return v;
    }
    return NULL;
}

/* Is the launcher Slurm's srun (by its name, with or without a directory)? */
static int is_srun(const char *launcher) {
    const char *base = strrchr(launcher, '/');
    return !strcmp(base ? base + 1 : launcher, "srun");
}

static int positive_int(const cJSON *v) {
    return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 1 &&
           v->valuedouble <= 100000;
}

/* The "slurm" member, checked whether or not --slurm is given: a mistake in it should show at
 * once, not when the cluster rejects the job. */
static mlc_status slurm_load(sweep *w, const char *file, mlc_err *err) {
    w->slurm.launcher = "srun";
    w->slurm.mpi = "pmix";
    w->slurm.ntasks = 1;
    const cJSON *sl = cJSON_GetObjectItem(w->doc, "slurm"), *it;
    if (!sl) return MLC_OK;
    if (!cJSON_IsObject(sl))
        return mlc_errf(err, MLC_EINVAL,
                        "%s: \"slurm\" must be an object (launcher, mpi, ntasks, "
                        "cpus_per_task, options)",
                        file);
    static const char *known[] = {"launcher", "mpi", "ntasks", "cpus_per_task", "options"};
    const char *odd = unknown_member(sl, known, sizeof known / sizeof known[0]);
    if (odd)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: \"slurm\": unknown member \"%s\"; it has launcher, mpi, "
                        "ntasks, cpus_per_task and options (docs/cluster.md)",
                        file, odd);
    const cJSON *launcher = cJSON_GetObjectItem(sl, "launcher");
    const cJSON *mpi = cJSON_GetObjectItem(sl, "mpi");
    const cJSON *ntasks = cJSON_GetObjectItem(sl, "ntasks");
    const cJSON *cpus = cJSON_GetObjectItem(sl, "cpus_per_task");
    const cJSON *opts = cJSON_GetObjectItem(sl, "options");
    if (launcher && (!cJSON_IsString(launcher) || strpbrk(launcher->valuestring, "\t\n")))
        return mlc_errf(err, MLC_EINVAL,
                        "%s: \"slurm\": \"launcher\" must be a program name such as "
                        "\"srun\" or \"mpirun\", or \"\" to run the program directly",
                        file);
    if (launcher) w->slurm.launcher = launcher->valuestring;
    if (mpi) {
        int ok = cJSON_IsString(mpi) && strlen(mpi->valuestring) < 64;
        for (const char *c = ok ? mpi->valuestring : ""; *c; c++)
            ok &= isalnum((unsigned char)*c) || *c == '_';
        if (!ok)
            return mlc_errf(err, MLC_EINVAL,
                            "%s: \"slurm\": \"mpi\" must name an MPI plugin of srun, such as "
                            "\"pmix\" or \"pmi2\" (`srun --mpi=list`), or be \"\" for "
                            "Slurm's MpiDefault",
                            file);
        if (!is_srun(w->slurm.launcher))
            return mlc_errf(err, MLC_EINVAL,
                            "%s: \"slurm\": \"mpi\" is srun's --mpi; the launcher \"%s\" "
                            "does not take it (remove \"mpi\", or use \"launcher\": "
                            "\"srun\")",
                            file, w->slurm.launcher);
        w->slurm.mpi = mpi->valuestring;
    }
    if ((ntasks && !positive_int(ntasks)) || (cpus && !positive_int(cpus)))
        return mlc_errf(err, MLC_EINVAL,
                        "%s: \"slurm\": \"%s\" must be a whole number from 1 to 100000", file,
                        ntasks && !positive_int(ntasks) ? "ntasks" : "cpus_per_task");
    if (ntasks) w->slurm.ntasks = (int)ntasks->valuedouble;
    if (w->slurm.ntasks > 1 && !*w->slurm.launcher)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: \"slurm\": \"ntasks\": %d needs a launcher to start them "
                        "(\"srun\" or \"mpirun\"); with \"launcher\": \"\" one process "
                        "runs and the other tasks' CPUs idle",
                        file, w->slurm.ntasks);
    if (cpus) w->slurm.cpus = (int)cpus->valuedouble;
    if (opts && !cJSON_IsArray(opts))
        return mlc_errf(err, MLC_EINVAL,
                        "%s: \"slurm\": \"options\" must be an array of sbatch options "
                        "(\"--time=01:00:00\", ...)",
                        file);
    /* What the script sets itself may not be set twice. */
    static const char *own[][3] = {{"--array", "-a", "the sweep's runs"},
                                   {"--output", "-o", "ROOT/slurm-JOB_TASK.out"},
                                   {"--open-mode", NULL, "append"},
                                   {"--ntasks", "-n", "\"ntasks\""},
                                   {"--cpus-per-task", "-c", "\"cpus_per_task\""}};
    cJSON_ArrayForEach(it, opts) {
        const char *o = cJSON_IsString(it) ? it->valuestring : NULL;
        if (!o || o[0] != '-' || strpbrk(o, "\n\r"))
            return mlc_errf(err, MLC_EINVAL,
                            "%s: \"slurm\": every entry of \"options\" must be one sbatch "
                            "option starting with '-' (\"--time=01:00:00\")",
                            file);
        for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
            if (is_option(o, own[k][0], own[k][1]))
                return mlc_errf(err, MLC_EINVAL,
                                "%s: \"slurm\": option \"%s\": the script sets %s itself "
                                "(from %s)",
                                file, o, own[k][0], own[k][2]);
    }
    w->slurm.options = opts;
    return MLC_OK;
}

/* Read the sweep file into w->doc and refuse members a sweep does not have. */
static mlc_status sweep_parse(sweep *w, const char *file, mlc_err *err) {
    char *text = mlc_file_read_text(file);
    if (!text) return mlc_errf(err, MLC_EINVAL, "%s: cannot read the sweep file", file);
    w->doc = cJSON_Parse(text);
    mlc_free(text);
    if (!w->doc || !cJSON_IsObject(w->doc))
        return mlc_errf(err, MLC_EPARSE, "%s: not a JSON object (see docs/cluster.md)", file);
    static const char *known[] = {"base", "grid", "list", "seeds", "args", "out", "slurm"};
    const char *odd = unknown_member(w->doc, known, sizeof known / sizeof known[0]);
    if (odd)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: unknown member \"%s\"; a sweep has base, grid, "
                        "list, seeds, args, out and slurm",
                        file, odd);
    return MLC_OK;
}

/* The number of grid points (the product of the value counts, stopping once past
 * SWEEP_MAX_RUNS), after checking that every grid key has a non-empty array of values. */
static mlc_status grid_points(const cJSON *grid, const char *file, long *ngrid, mlc_err *err) {
    const cJSON *it;
    *ngrid = 1;
    if (!grid) return MLC_OK;
    if (!cJSON_IsObject(grid))
        return mlc_errf(err, MLC_EINVAL, "%s: \"grid\" must be an object {\"KEY\": [values]}",
                        file);
    cJSON_ArrayForEach(it, grid) {
        int n = cJSON_GetArraySize(it);
        if (!cJSON_IsArray(it) || n == 0)
            return mlc_errf(err, MLC_EINVAL,
                            "%s: grid \"%s\" must be a non-empty array of "
                            "values",
                            file, it->string);
        *ngrid *= n;
        if (*ngrid > SWEEP_MAX_RUNS) break;
    }
    return MLC_OK;
}

/* The shapes of "base", "grid", "list", "seeds", "args" and "out", with messages that say what is
 * expected; *ngrid, *nlist and *nseeds are the grid's points and the list's and the seeds'
 * lengths (1 when absent). */
static mlc_status check_members(const cJSON *doc, const char *file, long *ngrid, int *nlist,
                                int *nseeds, mlc_err *err) {
    const cJSON *it;
    const cJSON *base = cJSON_GetObjectItem(doc, "base");
    const cJSON *list = cJSON_GetObjectItem(doc, "list");
    const cJSON *seeds = cJSON_GetObjectItem(doc, "seeds");
    const cJSON *args = cJSON_GetObjectItem(doc, "args");
    const cJSON *jout = cJSON_GetObjectItem(doc, "out");
    if (base && !cJSON_IsString(base) && !cJSON_IsObject(base) && !cJSON_IsNull(base))
        return mlc_errf(err, MLC_EINVAL,
                        "%s: \"base\" must be a config or mesh path, or a "
                        "configuration object",
                        file);
    mlc_status s = grid_points(cJSON_GetObjectItem(doc, "grid"), file, ngrid, err);
    if (s != MLC_OK) return s;
    *nlist = 1;
    if (list) {
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
            return mlc_errf(err, MLC_EINVAL, "%s: \"list\" must be a non-empty array of objects",
                            file);
        *nlist = cJSON_GetArraySize(list);
        cJSON_ArrayForEach(it, list) {
            if (!cJSON_IsObject(it))
                return mlc_errf(err, MLC_EINVAL,
                                "%s: every \"list\" entry must be an object {\"KEY\": value}",
                                file);
        }
    }
    *nseeds = 1;
    if (seeds) {
        if (!cJSON_IsArray(seeds) || cJSON_GetArraySize(seeds) == 0)
            return mlc_errf(err, MLC_EINVAL, "%s: \"seeds\" must be a non-empty array of integers",
                            file);
        *nseeds = cJSON_GetArraySize(seeds);
        cJSON_ArrayForEach(it, seeds) {
            if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
                fabs(it->valuedouble) > 2147483647.0)
                return mlc_errf(err, MLC_EINVAL, "%s: \"seeds\" must hold integers", file);
        }
    }
    if (args) {
        if (!cJSON_IsArray(args))
            return mlc_errf(err, MLC_EINVAL,
                            "%s: \"args\" must be an array of \"KEY=VALUE\" "
                            "strings",
                            file);
        cJSON_ArrayForEach(it, args) {
            if (!cJSON_IsString(it) || !strchr(it->valuestring, '='))
                return mlc_errf(err, MLC_EINVAL,
                                "%s: \"args\" entries must be \"KEY=VALUE\" strings (as for --set)",
                                file);
        }
    }
    if (jout && !cJSON_IsString(jout))
        return mlc_errf(err, MLC_EINVAL, "%s: \"out\" must be a directory path", file);
    return MLC_OK;
}

/* Where things go (the absolute output root: `out`, else the file's "out", else sweep-out) and
 * what every run starts from (the base file's absolute path, or base.json under the root for an
 * inline base object). */
static mlc_status sweep_paths(sweep *w, const char *file, const char *out, mlc_err *err) {
    const cJSON *base = cJSON_GetObjectItem(w->doc, "base");
    const cJSON *jout = cJSON_GetObjectItem(w->doc, "out");
    const char *root = out ? out : jout ? jout->valuestring : "sweep-out";
    if (!(w->root = absolute(root))) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    if (strpbrk(w->root, "\t\n"))
        return mlc_errf(err, MLC_EINVAL, "the output root may not contain tabs or newlines: %s",
                        w->root);
    if (cJSON_IsObject(base)) {
        w->base_obj = base;
        if (!(w->base = mlc_path_join_alloc(w->root, "base.json")))
            return mlc_errf(err, MLC_ENOMEM, "out of memory");
    } else if (cJSON_IsString(base)) {
        if (!mlc_file_exists(base->valuestring))
            return mlc_errf(err, MLC_EINVAL, "%s: base %s: no such file", file, base->valuestring);
        if (!(w->base = absolute(base->valuestring)))
            return mlc_errf(err, MLC_ENOMEM, "out of memory");
        if (strpbrk(w->base, "\t\n"))
            return mlc_errf(err, MLC_EINVAL, "the base path may not contain tabs or newlines");
    }
    return MLC_OK;
}

/* Run r's overrides: grid point gi's values in the file's key order, then list entry li's (which
 * replace a grid key they repeat); every key is noted for runs.csv. */
static mlc_status run_overrides(sweep *w, sweep_run *r, long gi, int li, mlc_err *err) {
    const cJSON *grid = cJSON_GetObjectItem(w->doc, "grid");
    const cJSON *list = cJSON_GetObjectItem(w->doc, "list");
    const cJSON *it;
    int ngk = grid ? cJSON_GetArraySize(grid) : 0;
    if (!(r->overrides = cJSON_CreateObject())) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    /* Grid point gi in mixed radix, the first key slowest. */
    long rem = gi;
    for (int k = ngk - 1; k >= 0; k--) {
        const cJSON *vals = cJSON_GetArrayItem(grid, k);
        int n = cJSON_GetArraySize(vals);
        const cJSON *v = cJSON_GetArrayItem(vals, (int)(rem % n));
        rem /= n;
        cJSON_AddItemToObject(r->overrides, vals->string, cJSON_Duplicate(v, 1));
    }
    /* AddItemToObject above appended in reverse key order; rebuild in key order so
     * the --set order (and runs.csv) follows the file. */
    cJSON *ordered = cJSON_CreateObject();
    for (int k = 0; k < ngk; k++) {
        const char *key = cJSON_GetArrayItem(grid, k)->string;
        note_key(w, key);
        cJSON_AddItemToObject(ordered, key,
                              cJSON_Duplicate(cJSON_GetObjectItem(r->overrides, key), 1));
    }
    if (list) {
        const cJSON *e = cJSON_GetArrayItem(list, li);
        cJSON_ArrayForEach(it, e) {
            note_key(w, it->string);
            cJSON_DeleteItemFromObject(ordered, it->string);
            cJSON_AddItemToObject(ordered, it->string, cJSON_Duplicate(it, 1));
        }
    }
    cJSON_Delete(r->overrides);
    r->overrides = ordered;
    return MLC_OK;
}

/* The next run (grid point gi, list entry li, seed si): its directory, its --set list (the
 * file's args, then `sweep --set`, then its overrides and seed) and its checked configuration. */
static mlc_status expand_run(sweep *w, long gi, int li, int si, const char *file,
                             const char *const *extra, int nextra, mlc_err *err) {
    const cJSON *seeds = cJSON_GetObjectItem(w->doc, "seeds");
    const cJSON *args = cJSON_GetObjectItem(w->doc, "args");
    const cJSON *it;
    mlc_status s;
    sweep_run *r = &w->runs[w->nruns];
    char name[32];
    snprintf(name, sizeof name, "run_%04d", w->nruns);
    w->nruns++;
    if (!(r->dir = mlc_path_join_alloc(w->root, name)))
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    cJSON_ArrayForEach(it, args) {
        if ((s = add_set(r, NULL, NULL, it->valuestring, err)) != MLC_OK) return s;
    }
    /* `sweep --set` applies to every run, after the file's args. */
    for (int k = 0; k < nextra; k++)
        if ((s = add_set(r, NULL, NULL, extra[k], err)) != MLC_OK) return s;
    if ((s = run_overrides(w, r, gi, li, err)) != MLC_OK) return s;
    cJSON_ArrayForEach(it, r->overrides) {
        if ((s = add_set(r, it->string, it, NULL, err)) != MLC_OK) return s;
    }
    if (seeds) {
        char sv[32];
        snprintf(sv, sizeof sv, "%d", (int)cJSON_GetArrayItem(seeds, si)->valuedouble);
        if ((s = add_set(r, "cmaes.seed", NULL, sv, err)) != MLC_OK) return s;
    }
    /* Check the run's configuration now: a typo in the sweep should stop it before
     * any work, not after hours. */
    mlc_err cerr;
    mlc_config cfg;
    if ((s = run_config(w, r, file, &cfg, &cerr)) != MLC_OK)
        return mlc_errf(err, s, "%s: %s: %s", file, name, cerr.msg);
    r->seed = cfg.cmaes.seed;
    r->threads = cfg.parallel.threads;
    if (!(r->config = mlc_config_to_json(&cfg))) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    for (int k = 0; k < r->nsets; k++)
        if (strpbrk(r->sets[k], "\t\n"))
            return mlc_errf(err, MLC_EINVAL, "%s: %s: a value holds a tab or newline", file, name);
    return MLC_OK;
}

/* Parse the sweep file and expand it into runs (nothing is written). */
static mlc_status sweep_load(sweep *w, const char *file, const char *out, const char *const *extra,
                             int nextra, mlc_err *err) {
    mlc_status s;
    long ngrid = 1;
    int nlist = 1, nseeds = 1;
    if ((s = sweep_parse(w, file, err)) != MLC_OK ||
        (s = check_members(w->doc, file, &ngrid, &nlist, &nseeds, err)) != MLC_OK)
        return s;
    long total = ngrid * nlist * nseeds;
    if (total > SWEEP_MAX_RUNS)
        return mlc_errf(err, MLC_EINVAL, "%s: %ld runs is more than this tool expands (%d)", file,
                        total, SWEEP_MAX_RUNS);
    if ((s = sweep_paths(w, file, out, err)) != MLC_OK || (s = slurm_load(w, file, err)) != MLC_OK)
        return s;
    w->keys = cJSON_CreateArray();
    w->runs = mlc_calloc((size_t)total, sizeof *w->runs);
    if (!w->keys || !w->runs) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    for (long gi = 0; gi < ngrid; gi++)
        for (int li = 0; li < nlist; li++)
            for (int si = 0; si < nseeds; si++)
                if ((s = expand_run(w, gi, li, si, file, extra, nextra, err)) != MLC_OK) return s;
    return MLC_OK;
}

/* ---- Writing the sweep's files ------------------------------------------------------------ */
static mlc_status write_manifest(const sweep *w, mlc_err *err) {
    mlc_status s;
    char *path = NULL;
    if ((s = mlc_mkdir_p(w->root, err)) != MLC_OK) return s;
    if (w->base_obj) {
        char *t = cJSON_Print(w->base_obj);
        if (!t) return mlc_errf(err, MLC_ENOMEM, "out of memory");
        size_t n = strlen(t);
        char *tn = mlc_malloc(n + 2);
        if (tn) snprintf(tn, n + 2, "%s\n", t);
        cJSON_free(t);
        if (!tn) return mlc_errf(err, MLC_ENOMEM, "out of memory");
        s = mlc_write_text_atomic(w->base, tn, err);
        mlc_free(tn);
        if (s != MLC_OK) return s;
    }
    /* The sweep as read, for the record. */
    char *t = cJSON_Print(w->doc);
    if (!t || !(path = mlc_path_join_alloc(w->root, "sweep.json"))) {
        cJSON_free(t);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    s = mlc_write_text_atomic(path, t, err);
    cJSON_free(t);
    mlc_free(path);
    if (s != MLC_OK) return s;

    /* manifest.tsv: what each Slurm array task runs; runs.csv: the same for people. */
    mlc_afile tsv = {0}, csv = {0};
    char *tp = mlc_path_join_alloc(w->root, "manifest.tsv"),
         *cp = mlc_path_join_alloc(w->root, "runs.csv");
    if (!tp || !cp) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory");
        goto out;
    }
    if ((s = mlc_afile_open(&tsv, tp, err)) != MLC_OK) goto out;
    if ((s = mlc_afile_open(&csv, cp, err)) != MLC_OK) goto out;
    fputs("run,dir,seed", csv.fp);
    const cJSON *k;
    cJSON_ArrayForEach(k, w->keys) {
        fputc(',', csv.fp);
        mlc_csv_field(csv.fp, k->valuestring);
    }
    fputc('\n', csv.fp);
    for (int i = 0; i < w->nruns; i++) {
        const sweep_run *r = &w->runs[i];
        if (w->base) fprintf(tsv.fp, "%s\t", w->base);
        fprintf(tsv.fp, "--out\t%s", r->dir);
        for (int j = 0; j < r->nsets; j++)
            fprintf(tsv.fp, "\t--set\t%s", r->sets[j]);
        fputc('\n', tsv.fp);

        fprintf(csv.fp, "%d,", i);
        mlc_csv_field(csv.fp, r->dir);
        fprintf(csv.fp, ",%d", r->seed);
        cJSON_ArrayForEach(k, w->keys) {
            fputc(',', csv.fp);
            const cJSON *v = cJSON_GetObjectItem(r->overrides, k->valuestring);
            if (v) {
                char *c = mlc_json_cell_text(v);
                if (c) mlc_csv_field(csv.fp, c);
                mlc_free(c);
            }
        }
        fputc('\n', csv.fp);

        /* run_NNNN/run.json: what summarize reports as the run's settings. */
        if ((s = mlc_mkdir_p(r->dir, err)) != MLC_OK) goto out;
        cJSON *rj = cJSON_CreateObject();
        cJSON_AddNumberToObject(rj, "run", i);
        cJSON_AddNumberToObject(rj, "seed", r->seed);
        cJSON_AddItemToObject(rj, "overrides", cJSON_Duplicate(r->overrides, 1));
        cJSON *sets = cJSON_AddArrayToObject(rj, "sets");
        for (int j = 0; j < r->nsets; j++)
            cJSON_AddItemToArray(sets, cJSON_CreateString(r->sets[j]));
        if (w->base) cJSON_AddStringToObject(rj, "base", w->base);
        char *rt = cJSON_Print(rj);
        cJSON_Delete(rj);
        char *rp = mlc_path_join_alloc(r->dir, "run.json");
        s = rt && rp ? mlc_write_text_atomic(rp, rt, err)
                     : mlc_errf(err, MLC_ENOMEM, "out of memory");
        cJSON_free(rt);
        mlc_free(rp);
        if (s != MLC_OK) goto out;
    }
    if ((s = mlc_afile_commit(&tsv, err)) != MLC_OK) goto out;
    s = mlc_afile_commit(&csv, err);
out:
    mlc_afile_abort(&tsv);
    mlc_afile_abort(&csv);
    mlc_free(tp);
    mlc_free(cp);
    return s;
}

/* Shell-safe single quoting for the script and --dry-run listings. */
static void shell_word(FILE *f, const char *s) {
    int plain = *s != 0;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("/._-=,:+@%", *c)) plain = 0;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* What the script adds to an srun launcher: the MPI plugin for runs of several tasks (Slurm's
 * MpiDefault is often none, and srun would start unjoined copies), and --cpus-per-task, which
 * Slurm 22.05's srun does not take from the allocation. */
static void srun_options(FILE *f, const sweep *w) {
    if (!is_srun(w->slurm.launcher)) return;
    if (w->slurm.ntasks > 1 && *w->slurm.mpi) fprintf(f, " --mpi=%s", w->slurm.mpi);
    if (w->slurm.cpus) fprintf(f, " --cpus-per-task=%d", w->slurm.cpus);
}

/* This program's path (what the Slurm script and the runs of --jobs start), or "modalloco" to
 * be found on PATH when /proc does not say. */
static void self_exe(char *exe, size_t cap) {
    ssize_t n = readlink("/proc/self/exe", exe, cap - 1);
    if (n <= 0)
        snprintf(exe, cap, "modalloco");
    else
        exe[n] = 0;
}

/* max_running > 0 throttles the array: Slurm starts at most that many tasks at once. */
static mlc_status write_slurm(const sweep *w, const char *path, int max_running, mlc_err *err) {
    char exe[PATH_MAX];
    self_exe(exe, sizeof exe);

    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    FILE *f = af.fp;
    fprintf(f,
            "#!/bin/bash\n"
            "# Slurm job array written by `modalloco sweep`: %d runs, one array task each.\n"
            "# Submit: sbatch %s    Then: modalloco summarize %s --out %s/summary.csv\n",
            w->nruns, path, w->root, w->root);
    fprintf(f, "#SBATCH --job-name=modalloco-sweep\n#SBATCH --array=0-%d", w->nruns - 1);
    if (max_running > 0) fprintf(f, "%%%d", max_running);
    fputc('\n', f);
    /* Append: a requeued task's output file is truncated otherwise, and the first attempt's
     * log lost. */
    fprintf(f, "#SBATCH --output=%s/slurm-%%A_%%a.out\n#SBATCH --open-mode=append\n", w->root);
    fprintf(f, "#SBATCH --ntasks=%d\n", w->slurm.ntasks);
    if (w->slurm.cpus) fprintf(f, "#SBATCH --cpus-per-task=%d\n", w->slurm.cpus);
    const cJSON *o;
    cJSON_ArrayForEach(o, w->slurm.options) fprintf(f, "#SBATCH %s\n", o->valuestring);
    fputs("set -euo pipefail\n", f);
    fputs("MODALLOCO=${MODALLOCO:-", f);
    shell_word(f, exe);
    fputs("}\nROOT=", f);
    shell_word(f, w->root);
    /* The launcher starts the run's processes (MPI ranks when ntasks > 1); "" runs the program
     * directly. */
    fputs("\nLAUNCH=(", f);
    const char *l = w->slurm.launcher;
    if (*l) shell_word(f, l);
    srun_options(f, w);
    fputs(")\n", f);
    fputs("task=${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}\n"
          "# One line per attempt: a requeued task appends to the same log.\n"
          "echo \"modalloco: array task $task, attempt $((${SLURM_RESTART_COUNT:-0} + 1))"
          " (SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-0}), job ${SLURM_JOB_ID:-?}"
          " on $(hostname) at $(date '+%F %T')\"\n"
          "# Line task+1 of the manifest holds this run's optimize arguments, tab separated.\n"
          "IFS=$'\\t' read -r -a args < <(sed -n \"$((task + 1))p\" \"$ROOT/manifest.tsv\")\n"
          "dir=$(printf '%s/run_%04d' \"$ROOT\" \"$task\")\n"
          "if [ -f \"$dir/params.json\" ]; then echo \"run $task is complete\"; exit 0; fi\n"
          "# A preempted or requeued task continues from its checkpoint.\n"
          "resume=()\n"
          "if [ -f \"$dir/checkpoint.bin\" ]; then resume=(--resume \"$dir\"); fi\n"
          "export OPENBLAS_NUM_THREADS=1\n"
          "rc=0\n"
          "${LAUNCH[@]+\"${LAUNCH[@]}\"} \"$MODALLOCO\" optimize \"${args[@]}\" "
          "${resume[@]+\"${resume[@]}\"} || rc=$?\n"
          "# Exit 3: the run is complete but found no credible gait (\"found\": false), a\n"
          "# result rather than a failed task.\n"
          "if [ \"$rc\" -eq 3 ]; then echo \"run $task found no credible gait\"; rc=0; fi\n"
          "exit \"$rc\"\n",
          f);
    s = mlc_afile_commit(&af, err);
    if (s == MLC_OK) chmod(path, 0755);
    return s;
}

/* What every array task asks Slurm for, so that a job that cannot fit is noticed before it
 * waits forever (docs/cluster.md: PENDING with reason PartitionConfig or Resources). */
static void print_resources(FILE *f, const sweep *w) {
    const cJSON *opts = w->slurm.options;
    const char *nodes = option_value(opts, "--nodes", "-N");
    const char *mem = option_value(opts, "--mem", NULL);
    const char *mem_cpu = option_value(opts, "--mem-per-cpu", NULL);
    const char *time = option_value(opts, "--time", "-t");
    const char *part = option_value(opts, "--partition", "-p");
    const int cpus = w->slurm.cpus ? w->slurm.cpus : 1;
    fprintf(f, "each array task asks for: nodes %s, %d task%s x %d CPU%s = %d CPUs%s",
            nodes                  ? nodes
            : w->slurm.ntasks == 1 ? "1"
                                   : "as Slurm places them",
            w->slurm.ntasks, w->slurm.ntasks == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s",
            w->slurm.ntasks * cpus,
            w->slurm.cpus ? "" : " (cpus_per_task not set: Slurm's default, 1)");
    if (mem)
        fprintf(f, ", memory %s per node", mem);
    else if (mem_cpu)
        fprintf(f, ", memory %s per CPU", mem_cpu);
    else
        fputs(", memory the partition's default", f);
    fprintf(f, ", time %s, partition %s\n", time ? time : "the partition's default",
            part ? part : "the default");
    fprintf(f, "launch: %s", *w->slurm.launcher ? w->slurm.launcher : "(none: the program itself)");
    srun_options(f, w);
    fputs("; a task that stays PENDING (PartitionConfig) asks for more than a node of the "
          "partition has: see docs/cluster.md\n",
          f);
}

/* ---- sweep ------------------------------------------------------------------------------ */
enum { RUN_FRESH, RUN_SKIP, RUN_RESUME, RUN_CONFLICT };

/* What to do with run r, from what its directory holds. */
static int run_state(const sweep_run *r) {
    char *cp = mlc_path_join_alloc(r->dir, "config.json");
    char *pp = mlc_path_join_alloc(r->dir, "params.json");
    char *kp = mlc_path_join_alloc(r->dir, "checkpoint.bin");
    int state = RUN_FRESH;
    if (cp && pp && kp && mlc_file_exists(cp)) {
        char *text = mlc_file_read_text(cp);
        if (!text || strcmp(text, r->config) != 0)
            state = RUN_CONFLICT;
        else if (mlc_file_exists(pp))
            state = RUN_SKIP;
        else if (mlc_file_exists(kp))
            state = RUN_RESUME;
        mlc_free(text);
    }
    mlc_free(cp), mlc_free(pp), mlc_free(kp);
    return state;
}

static void print_run(FILE *f, const sweep *w, const sweep_run *r) {
    fputs("modalloco optimize", f);
    if (w->base) fputc(' ', f), shell_word(f, w->base);
    fputs(" --out ", f);
    shell_word(f, r->dir);
    for (int j = 0; j < r->nsets; j++) {
        fputs(" --set ", f);
        shell_word(f, r->sets[j]);
    }
}

/* ---- --dry-run --json ------------------------------------------------------------------- */
static const char *state_name[] = {"todo", "complete", "resume", "conflict"};

/* {"root", "base", "keys", "runs": [{"run", "dir", "state", "seed", "settings", "sets",
 * "command"}]}: what each run would do, for scripts. */
static int print_runs_json(const sweep *w, const int *state) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "root", w->root);
    cJSON_AddItemToObject(o, "base", w->base ? cJSON_CreateString(w->base) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "keys", cJSON_Duplicate(w->keys, 1));
    cJSON *runs = cJSON_AddArrayToObject(o, "runs");
    for (int i = 0; i < w->nruns; i++) {
        const sweep_run *r = &w->runs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddItemToArray(runs, j);
        cJSON_AddNumberToObject(j, "run", i);
        cJSON_AddStringToObject(j, "dir", r->dir);
        cJSON_AddStringToObject(j, "state", state_name[state[i]]);
        cJSON_AddNumberToObject(j, "seed", r->seed);
        cJSON_AddItemToObject(j, "settings", cJSON_Duplicate(r->overrides, 1));
        cJSON *sets = cJSON_AddArrayToObject(j, "sets");
        for (int k = 0; k < r->nsets; k++)
            cJSON_AddItemToArray(sets, cJSON_CreateString(r->sets[k]));
        /* The arguments of `modalloco optimize`, as the manifest has them. */
        cJSON *cmd = cJSON_AddArrayToObject(j, "command");
        cJSON_AddItemToArray(cmd, cJSON_CreateString("optimize"));
        if (w->base) cJSON_AddItemToArray(cmd, cJSON_CreateString(w->base));
        cJSON_AddItemToArray(cmd, cJSON_CreateString("--out"));
        cJSON_AddItemToArray(cmd, cJSON_CreateString(r->dir));
        for (int k = 0; k < r->nsets; k++) {
            cJSON_AddItemToArray(cmd, cJSON_CreateString("--set"));
            cJSON_AddItemToArray(cmd, cJSON_CreateString(r->sets[k]));
        }
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return mlc_cli_fail(MLC_ENOMEM, NULL);
    puts(text);
    cJSON_free(text);
    return 0;
}

/* ---- Local runs ------------------------------------------------------------------------ */
/* What became of the runs. */
typedef struct sweep_tally {
    int ran, skipped, failed, none; /* none: complete without a credible gait (exit 3) */
    int interrupted;                /* a signal stopped the sweep: exit 130 */
} sweep_tally;

/* Count run i's exit code; a failure is reported with where to look. */
static void tally_exit(sweep_tally *t, const sweep *w, int i, int code, const char *log) {
    t->ran++;
    if (code == 0) return;
    if (code == 3) {
        t->none++; /* complete, with "found": false: a result, not a failure */
    } else if (code == 130) {
        t->interrupted = 1;
    } else {
        t->failed++;
        if (mlc_dist_rank() == 0)
            fprintf(stderr, "modalloco: sweep: run %d (%s) failed (exit %d)%s%s; going on\n", i,
                    w->runs[i].dir, code, log ? "; its log: " : "", log ? log : "");
    }
}

/* One run after the other, in this process (all ranks together under mpirun). */
static void run_in_process(const mlc_cli_options *opt, const sweep *w, const int *state, int quiet,
                           sweep_tally *t) {
    for (int i = 0; i < w->nruns && !t->interrupted; i++) {
        const sweep_run *r = &w->runs[i];
        if (state[i] == RUN_SKIP) {
            t->skipped++;
            if (!quiet)
                fprintf(stderr, "modalloco: sweep: run %d/%d complete, skipped\n", i + 1, w->nruns);
            continue;
        }
        if (!quiet) {
            fprintf(stderr, "modalloco: sweep: run %d/%d%s: ", i + 1, w->nruns,
                    state[i] == RUN_RESUME ? " (resuming)" : "");
            print_run(stderr, w, r);
            fputc('\n', stderr);
        }
        mlc_cli_options o;
        memset(&o, 0, sizeof o);
        o.command = "optimize";
        o.input = w->base;
        o.out = r->dir;
        o.nsets = MLC_MIN(r->nsets, MLC_CLI_MAX_SETS);
        for (int j = 0; j < o.nsets; j++)
            o.sets[j] = r->sets[j];
        o.quiet = opt->quiet;
        o.force = opt->force && state[i] == RUN_CONFLICT;
        if (state[i] == RUN_RESUME) o.resume = r->dir;
        if (opt->threads_set) o.threads = opt->threads, o.threads_set = 1;
        fflush(stdout);
        int code = mlc_cmd_optimize(&o);
        fflush(stdout);
        tally_exit(t, w, i, code, NULL);
    }
}

/* The last SIGINT/SIGTERM the sweep received while its runs were running (0: none). */
static volatile sig_atomic_t stop_signal;
static void on_stop(int sig) {
    stop_signal = sig;
}

extern char **environ;

/* Start run i as `modalloco optimize ...` in its own process, stdin from /dev/null, stdout
 * and stderr appended to `log`. */
static mlc_status spawn_run(const mlc_cli_options *opt, const sweep *w, int i, int state,
                            int threads, const char *log, pid_t *pid, mlc_err *err) {
    const sweep_run *r = &w->runs[i];
    char exe[PATH_MAX], nthreads[16];
    self_exe(exe, sizeof exe);
    snprintf(nthreads, sizeof nthreads, "%d", threads);
    /* Every argument owned: posix_spawn takes char *const[]. */
    const char *args[16 + 2 * MLC_CLI_MAX_SETS];
    int n = 0;
    args[n++] = exe;
    args[n++] = "optimize";
    if (w->base) args[n++] = w->base;
    args[n++] = "--out";
    args[n++] = r->dir;
    for (int k = 0; k < MLC_MIN(r->nsets, MLC_CLI_MAX_SETS); k++)
        args[n++] = "--set", args[n++] = r->sets[k];
    if (threads > 0) args[n++] = "--threads", args[n++] = nthreads;
    if (state == RUN_RESUME) args[n++] = "--resume", args[n++] = r->dir;
    if (opt->force && state == RUN_CONFLICT) args[n++] = "--force";
    if (opt->quiet) args[n++] = "--quiet";
    char *argv[sizeof args / sizeof args[0] + 1];
    int made = 0;
    for (; made < n; made++)
        if (!(argv[made] = mlc_strdup(args[made]))) break;
    argv[made] = NULL;
    mlc_status s = MLC_OK;
    /* The log starts with what ran, as the sweep's own progress line would say it. */
    FILE *lf = made == n ? fopen(log, "a") : NULL;
    if (made < n) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory");
    } else if (!lf) {
        s = mlc_errf(err, MLC_EIO, "%s: cannot write the run's log: %s", log, strerror(errno));
    } else {
        time_t now = time(NULL);
        char when[64];
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
        fprintf(lf, "modalloco sweep: run %d/%d%s, %s: ", i + 1, w->nruns,
                state == RUN_RESUME ? " (resuming)" : "", when);
        print_run(lf, w, r);
        fputc('\n', lf);
        fclose(lf);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_APPEND,
                                         0644);
        posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
        /* The run reacts to SIGINT/SIGTERM even when the sweep was started with them ignored
         * (a background job of a script): it saves a checkpoint, or stops before its first
         * generation. */
        posix_spawnattr_t at;
        posix_spawnattr_init(&at);
        sigset_t def;
        sigemptyset(&def);
        sigaddset(&def, SIGINT);
        sigaddset(&def, SIGTERM);
        posix_spawnattr_setsigdefault(&at, &def);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
        int e = posix_spawn(pid, exe, &fa, &at, argv, environ);
        posix_spawnattr_destroy(&at);
        posix_spawn_file_actions_destroy(&fa);
        if (e) s = mlc_errf(err, MLC_EIO, "cannot start %s: %s", exe, strerror(e));
    }
    for (int k = 0; k < made; k++)
        mlc_free(argv[k]);
    return s;
}

/* Runs `jobs` at a time, each its own process (spawn_run). A run that fails is counted and
 * the others go on. SIGINT/SIGTERM stops starting runs and passes the signal on to the running
 * ones, which save their checkpoint and exit 130; the sweep waits for every one of them. */
static mlc_status run_parallel(const mlc_cli_options *opt, const sweep *w, const int *state,
                               int jobs, sweep_tally *t, mlc_err *err) {
    int threads = 0; /* 0: leave each run its own parallel.threads */
    if (opt->threads_set) {
        threads = opt->threads;
    } else {
#ifdef _OPENMP
        int cores = omp_get_num_procs();
#else
        int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
        threads = MLC_MAX(1, cores / jobs);
    }
    pid_t *pid = mlc_calloc((size_t)jobs, sizeof *pid);
    int *run = mlc_calloc((size_t)jobs, sizeof *run);
    double *start = mlc_calloc((size_t)jobs, sizeof *start);
    char **logs = mlc_calloc((size_t)w->nruns, sizeof *logs);
    if (!pid || !run || !start || !logs) {
        mlc_free(pid), mlc_free(run), mlc_free(start), mlc_free(logs);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    mlc_status s = MLC_OK;
    int next = 0, running = 0, forwarded = 0;
    const int quiet = opt->quiet;
    for (;;) {
        /* Fill the free slots, unless the sweep is stopping. */
        while (!stop_signal && !t->interrupted && s == MLC_OK && running < jobs &&
               next < w->nruns) {
            int i = next++;
            if (state[i] == RUN_SKIP) {
                t->skipped++;
                if (!quiet)
                    fprintf(stderr, "modalloco: sweep: run %d/%d complete, skipped\n", i + 1,
                            w->nruns);
                continue;
            }
            int slot = 0;
            while (pid[slot])
                slot++;
            /* A run with its own parallel.threads keeps it unless --threads says otherwise. */
            int nt = opt->threads_set || w->runs[i].threads == 0 ? threads : 0;
            if (!(logs[i] = mlc_path_join_alloc(w->runs[i].dir, "optimize.log"))) {
                s = mlc_errf(err, MLC_ENOMEM, "out of memory");
                break;
            }
            if ((s = spawn_run(opt, w, i, state[i], nt, logs[i], &pid[slot], err)) != MLC_OK) break;
            run[slot] = i, start[slot] = mlc_now();
            running++;
            if (!quiet)
                fprintf(stderr, "modalloco: sweep: run %d/%d started%s (%d running), log %s\n",
                        i + 1, w->nruns, state[i] == RUN_RESUME ? ", resuming" : "", running,
                        logs[i]);
        }
        if (running == 0) break;
        if (stop_signal && forwarded != stop_signal) {
            /* Ctrl-C reaches the runs from the terminal too; a signal sent to the sweep alone
             * must reach them as well. */
            for (int k = 0; k < jobs; k++)
                if (pid[k]) kill(pid[k], SIGINT);
            forwarded = stop_signal;
            if (!quiet)
                fprintf(stderr,
                        "modalloco: sweep: stopping; waiting for %d running run%s to "
                        "save a checkpoint\n",
                        running, running == 1 ? "" : "s");
        }
        int status;
        pid_t done = waitpid(-1, &status, WNOHANG);
        if (done == 0) {
            /* Poll: a signal that arrives while blocked in waitpid is still forwarded soon. */
            struct timespec nap = {0, 50 * 1000 * 1000};
            nanosleep(&nap, NULL);
            continue;
        }
        if (done < 0) {
            if (errno == EINTR) continue;
            break; /* no children left (ECHILD) */
        }
        int slot = 0;
        while (slot < jobs && pid[slot] != done)
            slot++;
        if (slot == jobs) continue; /* not one of ours */
        pid[slot] = 0;
        running--;
        int i = run[slot];
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        /* Killed by the signal that stopped the sweep (before its generation loop, where a run
         * saves a checkpoint): stopped, not failed. */
        if (stop_signal && WIFSIGNALED(status)) code = 130;
        tally_exit(t, w, i, code, logs[i]);
        if (!quiet && code != 130)
            fprintf(stderr, "modalloco: sweep: run %d/%d %s after %.1f s (exit %d)\n", i + 1,
                    w->nruns, code == 0 || code == 3 ? "done" : "failed", mlc_now() - start[slot],
                    code);
    }
    if (stop_signal) t->interrupted = 1;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    for (int i = 0; i < w->nruns; i++)
        mlc_free(logs[i]);
    mlc_free(logs), mlc_free(pid), mlc_free(run), mlc_free(start);
    return s;
}

/* Options that only make sense together, checked before anything is read. */
static mlc_status check_options(const mlc_cli_options *opt, mlc_err *err) {
    if (opt->json && !opt->dry_run)
        return mlc_errf(err, MLC_EINVAL,
                        "sweep --json goes with --dry-run (it lists the runs as JSON); "
                        "`modalloco summarize ROOT --json` reports their results");
    if (opt->slurm_max_running && !opt->slurm)
        return mlc_errf(err, MLC_EINVAL,
                        "--slurm-max-running goes with --slurm FILE (it throttles the job "
                        "array)");
    if (opt->jobs > 1 && opt->slurm)
        return mlc_errf(err, MLC_EINVAL,
                        "--jobs runs a sweep here; a Slurm array runs its tasks as Slurm "
                        "schedules them (limit them with --slurm-max-running N)");
    if (opt->jobs > 1 && mlc_dist_size() > 1)
        return mlc_errf(err, MLC_EINVAL,
                        "--jobs %d under mpirun: there every run uses all %d processes, one "
                        "run at a time; drop --jobs, or run the sweep without mpirun",
                        opt->jobs, mlc_dist_size());
    return MLC_OK;
}

int mlc_cmd_sweep(const mlc_cli_options *opt) {
    mlc_err err = {0};
    sweep w;
    memset(&w, 0, sizeof w);
    int rc = 0, *state = NULL;
    mlc_status s;
    if ((s = mlc_dist_init(&err)) != MLC_OK) goto fail;
    const int rank = mlc_dist_rank();
    const int quiet = opt->quiet || rank != 0;
    if (!opt->input) {
        s = mlc_errf(&err, MLC_EINVAL, "sweep needs a SWEEP.json argument (see docs/cluster.md)");
        goto fail;
    }
    if ((s = check_options(opt, &err)) != MLC_OK) goto fail;
    /* Every rank expands the sweep (cheap and deterministic); only rank 0 writes. */
    if ((s = sweep_load(&w, opt->input, opt->out, opt->sets, opt->nsets, &err)) != MLC_OK)
        goto fail;
    state = mlc_calloc((size_t)w.nruns, sizeof *state);
    if (!state) {
        s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < w.nruns; i++)
        state[i] = run_state(&w.runs[i]);
    /* Rank 0's view of the directories decides, so every rank takes the same path. */
    mlc_dist_bcast_int(state, w.nruns, 0);
    int conflicts = 0, first_conflict = -1;
    for (int i = 0; i < w.nruns; i++) {
        if (state[i] == RUN_CONFLICT && first_conflict < 0) first_conflict = i;
        conflicts += state[i] == RUN_CONFLICT;
    }
    if (opt->dry_run) {
        if (rank == 0 && opt->json) {
            rc = print_runs_json(&w, state);
        } else if (rank == 0) {
            for (int i = 0; i < w.nruns; i++) {
                printf("%-8s ", state_name[state[i]]);
                print_run(stdout, &w, &w.runs[i]);
                putchar('\n');
            }
        }
        goto done;
    }
    if (conflicts && !opt->force) {
        s = mlc_errf(&err, MLC_EINVAL,
                     "%s holds a run with another configuration (%d such "
                     "runs: the sweep changed?); use another --out, or --force to redo them",
                     w.runs[first_conflict].dir, conflicts);
        goto fail;
    }
    s = MLC_OK;
    if (rank == 0) s = write_manifest(&w, &err);
    if (rank == 0 && s == MLC_OK && opt->slurm)
        s = write_slurm(&w, opt->slurm, opt->slurm_max_running, &err);
    /* Only rank 0 wrote: the others must learn its outcome before running anything. */
    if ((s = mlc_dist_agree(s, NULL)) != MLC_OK) goto fail;

    if (opt->slurm) {
        if (rank == 0) {
            int todo = 0;
            for (int i = 0; i < w.nruns; i++)
                todo += state[i] != RUN_SKIP;
            printf("%s: %d runs (%d to do) in %s", opt->slurm, w.nruns, todo, w.root);
            if (opt->slurm_max_running)
                printf(", at most %d running at once", opt->slurm_max_running);
            putchar('\n');
            print_resources(stdout, &w);
            printf("submit with: sbatch %s\n", opt->slurm);
        }
        goto done;
    }

    sweep_tally t = {0};
    double t0 = mlc_now();
    const int jobs = MLC_MIN(MLC_MAX(opt->jobs, 1), w.nruns);
    if (jobs > 1) {
        fflush(stdout);
        if ((s = run_parallel(opt, &w, state, jobs, &t, &err)) != MLC_OK) goto fail;
    } else {
        run_in_process(opt, &w, state, quiet, &t);
    }
    if (t.interrupted) {
        if (!quiet)
            fprintf(stderr, "modalloco: sweep interrupted; run the same command again to "
                            "continue\n");
        rc = 130;
        goto done;
    }
    if (rank == 0)
        fprintf(stderr,
                "modalloco: sweep: %d runs: %d ran (%d failed, %d found no credible gait), %d "
                "already complete; %.1f s; results: modalloco summarize %s\n",
                w.nruns, t.ran, t.failed, t.none, t.skipped, mlc_now() - t0, w.root);
    rc = t.failed ? 1 : 0;
    goto done;
fail:
    /* Every rank met the same failure (the sweep file is the same): say it once. */
    rc = mlc_dist_rank() == 0 ? mlc_cli_fail(s, &err) : mlc_exit_code(s);
done:
    mlc_free(state);
    sweep_free(&w);
    return rc;
}

/* ---- summarize -------------------------------------------------------------------------- */
/* "STEM" + suffix, where STEM is `out` without a final ".csv" (owned). */
static char *beside(const char *out, const char *suffix) {
    size_t n = strlen(out), cap = n + strlen(suffix) + 1;
    if (n > 4 && !strcmp(out + n - 4, ".csv")) n -= 4;
    char *p = mlc_malloc(cap);
    if (p) snprintf(p, cap, "%.*s%s", (int)n, out, suffix);
    return p;
}

/* Write the CSV of `write` to `path` atomically. */
static mlc_status write_csv(const char *path, void (*write)(FILE *, const mlc_summary *),
                            const mlc_summary *sm, mlc_err *err) {
    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    write(af.fp, sm);
    return mlc_afile_commit(&af, err);
}

static int print_json(const mlc_summary *sm) {
    cJSON *o = mlc_summary_json(sm);
    char *text = o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text) return mlc_cli_fail(MLC_ENOMEM, NULL);
    puts(text);
    cJSON_free(text);
    return 0;
}

int mlc_cmd_summarize(const mlc_cli_options *opt) {
    mlc_err err = {0};
    mlc_summary sm = {0};
    char *out = NULL, *bars = NULL, *groups = NULL, *plot = NULL;
    int rc = 0;
    mlc_status s = MLC_OK;
    if (opt->ninputs == 0) {
        s = mlc_errf(&err, MLC_EINVAL,
                     "summarize needs one or more run directories or sweep "
                     "output roots");
        goto fail;
    }
    if (opt->gallery && opt->ninputs != 1) {
        s = mlc_errf(&err, MLC_EINVAL,
                     "--gallery writes ROOT/index.html for one sweep root, and %d "
                     "directories were given; summarize them one at a time",
                     opt->ninputs);
        goto fail;
    }
    for (int i = 0; i < opt->ninputs; i++)
        if ((s = mlc_summary_collect(&sm, opt->inputs[i], &err)) != MLC_OK) goto fail;
    if ((s = mlc_summary_group_runs(&sm, &err)) != MLC_OK) goto fail;
    /* The gallery's files go beside it unless --out says where. */
    if (opt->out)
        out = mlc_strdup(opt->out);
    else if (opt->gallery)
        out = mlc_path_join_alloc(opt->inputs[0], "summary.csv");
    if (!out) {
        if (opt->out || opt->gallery) {
            s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
            goto fail;
        }
        /* No files: what scripts read from stdout. */
        if (opt->json)
            rc = print_json(&sm);
        else
            mlc_summary_runs_csv(stdout, &sm);
        goto done;
    }
    if (!(bars = beside(out, ".svg")) || !(groups = beside(out, "_groups.csv")) ||
        !(plot = beside(out, "_by_setting.svg"))) {
        s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
        goto fail;
    }
    if ((s = write_csv(out, mlc_summary_runs_csv, &sm, &err)) != MLC_OK ||
        (s = mlc_summary_bars_svg(bars, &sm, &err)) != MLC_OK ||
        (s = write_csv(groups, mlc_summary_groups_csv, &sm, &err)) != MLC_OK ||
        (s = mlc_summary_plot_svg(plot, &sm, &err)) != MLC_OK)
        goto fail;
    mlc_gallery_info gi = {0};
    if (opt->gallery) {
        mlc_gallery_files files = {
            .runs_csv = out, .groups_csv = groups, .plot_svg = plot, .bars_svg = bars};
        if ((s = mlc_gallery_write(&sm, opt->inputs[0], &files, &gi, &err)) != MLC_OK) goto fail;
    }
    if (opt->json)
        rc = print_json(&sm);
    else
        mlc_summary_table(stdout, &sm);
    if (!opt->quiet) {
        fprintf(stderr, "modalloco: %d runs in %d groups: %s, %s, %s, %s", sm.nruns, sm.ngroups,
                out, groups, plot, bars);
        if (opt->gallery)
            fprintf(stderr, ", %s/index.html (%d film strips made, %d kept, %d runs without)",
                    opt->inputs[0], gi.strips_made, gi.strips_kept, gi.without);
        fputc('\n', stderr);
    }
    goto done;
fail:
    rc = mlc_cli_fail(s, &err);
done:
    mlc_summary_free(&sm);
    mlc_free(out), mlc_free(bars), mlc_free(groups), mlc_free(plot);
    return rc;
}
