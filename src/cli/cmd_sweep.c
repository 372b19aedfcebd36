/* cmd_sweep.c: `modalloco sweep` (expand a parameter sweep into optimize runs; run them here
 * one after the other, or write a Slurm job array) and `modalloco summarize` (one CSV row and
 * one bar of a chart per run). docs/cluster.md is the user's guide.
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
 * with a checkpoint is resumed, so an interrupted sweep continues where it stopped. Runs execute
 * in-process through mlc_cmd_optimize, so under mpirun every run uses all processes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "dist.h"
#include "output.h"

#define SWEEP_MAX_RUNS 100000

/* ---- Small file helpers --------------------------------------------------------------- */
static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static cJSON *read_json(const char *path) {
    char *text = mlc_file_read_text(path);
    if (!text) return NULL;
    cJSON *j = cJSON_Parse(text);
    mlc_free(text);
    return j;
}

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

/* A value for a table cell: strings without their quotes, anything else as compact JSON. */
static char *cell_text(const cJSON *v) {
    if (cJSON_IsString(v)) return mlc_strdup(v->valuestring);
    return value_text(v);
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
/* CSV field: quoted when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

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
        csv_field(csv.fp, k->valuestring);
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
        csv_field(csv.fp, r->dir);
        fprintf(csv.fp, ",%d", r->seed);
        cJSON_ArrayForEach(k, w->keys) {
            fputc(',', csv.fp);
            const cJSON *v = cJSON_GetObjectItem(r->overrides, k->valuestring);
            if (v) {
                char *c = cell_text(v);
                if (c) csv_field(csv.fp, c);
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

static mlc_status write_slurm(const sweep *w, const char *path, mlc_err *err) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        snprintf(exe, sizeof exe, "modalloco");
    else
        exe[n] = 0;

    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    FILE *f = af.fp;
    fprintf(f,
            "#!/bin/bash\n"
            "# Slurm job array written by `modalloco sweep`: %d runs, one array task each.\n"
            "# Submit: sbatch %s    Then: modalloco summarize %s --out %s/summary.csv\n",
            w->nruns, path, w->root, w->root);
    fprintf(f, "#SBATCH --job-name=modalloco-sweep\n#SBATCH --array=0-%d\n", w->nruns - 1);
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
        if (rank == 0)
            for (int i = 0; i < w.nruns; i++) {
                static const char *what[] = {"todo", "complete", "resume", "conflict"};
                printf("%-8s ", what[state[i]]);
                print_run(stdout, &w, &w.runs[i]);
                putchar('\n');
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
    if (rank == 0 && s == MLC_OK && opt->slurm) s = write_slurm(&w, opt->slurm, &err);
    /* Only rank 0 wrote: the others must learn its outcome before running anything. */
    if ((s = mlc_dist_agree(s, NULL)) != MLC_OK) goto fail;

    if (opt->slurm) {
        if (rank == 0) {
            int todo = 0;
            for (int i = 0; i < w.nruns; i++)
                todo += state[i] != RUN_SKIP;
            printf("%s: %d runs (%d to do) in %s\n", opt->slurm, w.nruns, todo, w.root);
            print_resources(stdout, &w);
            printf("submit with: sbatch %s\n", opt->slurm);
        }
        goto done;
    }

    /* Local: one run after the other, in this process (all ranks together under mpirun). */
    int ran = 0, skipped = 0, failed = 0, none = 0;
    double t0 = mlc_now();
    for (int i = 0; i < w.nruns; i++) {
        sweep_run *r = &w.runs[i];
        if (state[i] == RUN_SKIP) {
            skipped++;
            if (!quiet)
                fprintf(stderr, "modalloco: sweep: run %d/%d complete, skipped\n", i + 1, w.nruns);
            continue;
        }
        if (!quiet) {
            fprintf(stderr, "modalloco: sweep: run %d/%d%s: ", i + 1, w.nruns,
                    state[i] == RUN_RESUME ? " (resuming)" : "");
            print_run(stderr, &w, r);
            fputc('\n', stderr);
        }
        mlc_cli_options o;
        memset(&o, 0, sizeof o);
        o.command = "optimize";
        o.input = w.base;
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
        ran++;
        if (code == 130) {
            if (!quiet)
                fprintf(stderr, "modalloco: sweep interrupted; run the same command again to "
                                "continue\n");
            rc = 130;
            goto done;
        }
        if (code == 3) {
            none++; /* complete, with "found": false: a result, not a failure */
        } else if (code != 0) {
            failed++;
            if (rank == 0)
                fprintf(stderr, "modalloco: sweep: run %d failed (exit %d); going on\n", i, code);
        }
    }
    if (rank == 0)
        fprintf(stderr,
                "modalloco: sweep: %d runs: %d ran (%d failed, %d found no credible gait), %d "
                "already complete; %.1f s; results: modalloco summarize %s\n",
                w.nruns, ran, failed, none, skipped, mlc_now() - t0, w.root);
    rc = failed ? 1 : 0;
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
typedef struct summary_row {
    char *dir;        /* the run directory as found (owned) */
    cJSON *overrides; /* from run.json (owned; NULL for a run made outside a sweep) */
    double seed, J, displacement, J_align, generations, seconds; /* NAN when unknown */
    const char *status; /* "done" (params.json), "partial" (checkpoint), "pending" */
    int found;          /* params.json "found": 1, 0, or -1 when absent */
    char kind[16];      /* objective.kind of config.json ("" when unknown) */
    char task[160];     /* what the task asks (target, heading, path), "" for locomotion */
    double task_error;  /* result.json task_error (docs/method.md §7), NAN when unknown */
} summary_row;

typedef struct summary {
    summary_row *rows;
    int n, cap;
} summary;

static int is_run_dir(const char *dir) {
    static const char *marks[] = {"params.json", "run.json", "config.json", "checkpoint.bin"};
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, marks[i]);
        if (mlc_file_exists(path)) return 1;
    }
    return 0;
}

/* The last data row of history.csv: generation (column 1) and wall seconds (column 6). */
static void history_tail(const char *dir, double *generation, double *seconds) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/history.csv", dir);
    char *text = mlc_file_read_text(path);
    if (!text) return;
    char *last = NULL;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (isdigit((unsigned char)line[0])) last = line;
    if (last) {
        char *field = last;
        for (int col = 1; field && col <= 6; col++) {
            if (col == 1) *generation = strtod(field, NULL);
            if (col == 6) *seconds = strtod(field, NULL);
            field = strchr(field, ',');
            if (field) field++;
        }
    }
    mlc_free(text);
}

/* "[a b c]" of a JSON number array into buf. */
static void vec_text(const cJSON *a, char *buf, size_t cap) {
    size_t n = 0;
    const cJSON *x;
    buf[0] = 0;
    cJSON_ArrayForEach(x, a) {
        if (n >= cap) break;
        int w = snprintf(buf + n, cap - n, "%s%.6g", n ? " " : "[",
                         cJSON_IsNumber(x) ? x->valuedouble : (double)NAN);
        if (w > 0) n += (size_t)w;
    }
    if (n > 0 && n < cap) snprintf(buf + n, cap - n, "]");
}

/* The task of a run (config.json's objective) and how far the written gait is from it
 * (result.json task_error). */
static void summary_task(summary_row *r, const char *dir) {
    char path[PATH_MAX], v[120];
    snprintf(path, sizeof path, "%s/config.json", dir);
    cJSON *cj = read_json(path);
    const cJSON *ob = cJSON_GetObjectItem(cj, "objective");
    const cJSON *kind = cJSON_GetObjectItem(ob, "kind");
    if (cJSON_IsString(kind)) snprintf(r->kind, sizeof r->kind, "%s", kind->valuestring);
    const char *key = !strcmp(r->kind, "turn")     ? "heading"
                      : !strcmp(r->kind, "target") ? "target"
                      : !strcmp(r->kind, "path")   ? "path"
                      : !strcmp(r->kind, "jump")   ? "target"
                                                   : NULL;
    const cJSON *t = key ? cJSON_GetObjectItem(ob, key) : NULL;
    if (cJSON_IsArray(t)) {
        vec_text(t, v, sizeof v);
        snprintf(r->task, sizeof r->task, "%s %s", key, v);
    } else if (cJSON_IsString(t)) {
        snprintf(r->task, sizeof r->task, "%s %.120s", key, t->valuestring);
    }
    cJSON_Delete(cj);
    snprintf(path, sizeof path, "%s/result.json", dir);
    cJSON *rj = read_json(path);
    r->task_error = mlc_json_number(rj, "task_error", (double)NAN);
    cJSON_Delete(rj);
}

static mlc_status summary_add(summary *sm, const char *dir, mlc_err *err) {
    if (sm->n == sm->cap) {
        int ncap = sm->cap ? 2 * sm->cap : 16;
        summary_row *nr = mlc_realloc(sm->rows, (size_t)ncap * sizeof *nr);
        if (!nr) return mlc_errf(err, MLC_ENOMEM, "out of memory");
        sm->rows = nr, sm->cap = ncap;
    }
    summary_row *r = &sm->rows[sm->n];
    memset(r, 0, sizeof *r);
    r->seed = r->J = r->displacement = r->J_align = r->generations = r->seconds = NAN;
    r->found = -1;
    if (!(r->dir = mlc_strdup(dir))) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    sm->n++;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/run.json", dir);
    cJSON *rj = read_json(path);
    if (rj) {
        cJSON *ov = cJSON_DetachItemFromObject(rj, "overrides");
        if (cJSON_IsObject(ov))
            r->overrides = ov;
        else
            cJSON_Delete(ov);
        r->seed = mlc_json_number(rj, "seed", (double)NAN);
        cJSON_Delete(rj);
    }
    history_tail(dir, &r->generations, &r->seconds);
    r->task_error = NAN;
    summary_task(r, dir);
    snprintf(path, sizeof path, "%s/params.json", dir);
    cJSON *pj = read_json(path);
    if (pj) {
        r->status = "done";
        r->J = mlc_json_number(pj, "J", (double)NAN);
        r->displacement = mlc_json_number(pj, "displacement", (double)NAN);
        r->J_align = mlc_json_number(pj, "J_align", (double)NAN);
        r->generations = mlc_json_number(pj, "generations", (double)NAN);
        const cJSON *fd = cJSON_GetObjectItem(pj, "found");
        if (cJSON_IsBool(fd)) r->found = cJSON_IsTrue(fd);
        if (isnan(r->seed)) r->seed = mlc_json_number(pj, "seed", (double)NAN);
        cJSON_Delete(pj);
        return MLC_OK;
    }
    snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
    r->status = mlc_file_exists(path) ? "partial" : "pending";
    if (isnan(r->seed)) {
        snprintf(path, sizeof path, "%s/config.json", dir);
        cJSON *cj = read_json(path);
        r->seed = mlc_json_number(cJSON_GetObjectItem(cj, "cmaes"), "seed", (double)NAN);
        cJSON_Delete(cj);
    }
    return MLC_OK;
}

static int name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A run directory, or a directory whose subdirectories (sorted by name) are runs. */
static mlc_status summary_collect(summary *sm, const char *dir, mlc_err *err) {
    if (is_run_dir(dir)) return summary_add(sm, dir, err);
    DIR *d = opendir(dir);
    if (!d)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: not a directory (give optimize output directories "
                        "or a sweep's output root)",
                        dir);
    char **names = NULL;
    int n = 0, cap = 0;
    mlc_status s = MLC_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *sub = mlc_path_join_alloc(dir, e->d_name);
        if (!sub) {
            s = mlc_errf(err, MLC_ENOMEM, "out of memory");
            break;
        }
        if (!is_dir(sub) || !is_run_dir(sub)) {
            mlc_free(sub);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = mlc_realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                mlc_free(sub);
                s = mlc_errf(err, MLC_ENOMEM, "out of memory");
                break;
            }
            names = nn;
        }
        names[n++] = sub;
    }
    closedir(d);
    if (s == MLC_OK && n == 0)
        s = mlc_errf(err, MLC_EINVAL,
                     "%s: holds no runs (no params.json, run.json or "
                     "config.json in it or its subdirectories)",
                     dir);
    if (s == MLC_OK) qsort(names, (size_t)n, sizeof *names, name_cmp);
    for (int i = 0; i < n; i++) {
        if (s == MLC_OK) s = summary_add(sm, names[i], err);
        mlc_free(names[i]);
    }
    mlc_free(names);
    return s;
}

static void put_number(FILE *f, double v, const char *fmt) {
    fputc(',', f);
    if (!isnan(v)) fprintf(f, fmt, v);
}

static void summary_csv(FILE *f, const summary *sm, const cJSON *keys) {
    const cJSON *k;
    fputs("run", f);
    cJSON_ArrayForEach(k, keys) {
        fputc(',', f);
        csv_field(f, k->valuestring);
    }
    /* The task columns appear when a run has a task beyond walking along a direction. */
    int tasks = 0;
    for (int i = 0; i < sm->n; i++)
        tasks |= sm->rows[i].kind[0] && strcmp(sm->rows[i].kind, "locomotion") != 0;
    fputs(",seed,J,displacement,J_align,generations,seconds,found,status", f);
    fputs(tasks ? ",kind,task,task_error\n" : "\n", f);
    for (int i = 0; i < sm->n; i++) {
        const summary_row *r = &sm->rows[i];
        csv_field(f, r->dir);
        cJSON_ArrayForEach(k, keys) {
            fputc(',', f);
            const cJSON *v = cJSON_GetObjectItem(r->overrides, k->valuestring);
            char *c = v ? cell_text(v) : NULL;
            if (c) csv_field(f, c);
            mlc_free(c);
        }
        put_number(f, r->seed, "%.0f");
        put_number(f, r->J, "%.17g");
        put_number(f, r->displacement, "%.17g");
        put_number(f, r->J_align, "%.17g");
        put_number(f, r->generations, "%.0f");
        put_number(f, r->seconds, "%.3f");
        fprintf(f, ",%s,%s", r->found < 0 ? "" : r->found ? "true" : "false", r->status);
        if (tasks) {
            fputc(',', f);
            csv_field(f, r->kind);
            fputc(',', f);
            csv_field(f, r->task);
            put_number(f, r->task_error, "%.9g");
        }
        fputc('\n', f);
    }
}

/* A bar per run of its final J (lower is better: J is minimized), the zero line, y ticks, and
 * the run names under the bars. Runs without a J get an empty slot. */
static mlc_status summary_svg(const char *path, const summary *sm, mlc_err *err) {
    double lo = 0, hi = 0;
    for (int i = 0; i < sm->n; i++)
        if (isfinite(sm->rows[i].J)) lo = fmin(lo, sm->rows[i].J), hi = fmax(hi, sm->rows[i].J);
    if (hi - lo < 1e-12) hi = lo + 1;
    double pad = 0.05 * (hi - lo);
    if (lo < 0) lo -= pad;
    if (hi > 0) hi += pad;
    const double left = 70, top = 40, plot_h = 260, bottom = 110, slot = 26;
    const double plot_w = fmax(300, slot * sm->n);
    const double width = left + plot_w + 20, height = top + plot_h + bottom;
#define Y(v) (top + (hi - (v)) / (hi - lo) * plot_h)
    mlc_afile af = {0};
    mlc_status s = mlc_svg_begin(&af, path, width, height, 11, err);
    if (s != MLC_OK) return s;
    FILE *f = af.fp;
    fprintf(f,
            "<text x=\"%.1f\" y=\"22\" font-size=\"14\">modalloco: final J per run (lower "
            "is better)</text>\n",
            left);
    /* Y ticks at a "nice" step. */
    double raw = (hi - lo) / 5, mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5)
        step = 10 * mag;
    else if (raw / mag > 2)
        step = 5 * mag;
    else if (raw / mag > 1)
        step = 2 * mag;
    for (double t = ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) {
        double y = Y(t);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                left, y, left + plot_w, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", left - 6, y + 4,
                fabs(t) < 1e-12 * step ? 0.0 : t);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left,
            Y(0), left + plot_w, Y(0));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left,
            top, left, top + plot_h);
    double w = plot_w / (sm->n ? sm->n : 1);
    for (int i = 0; i < sm->n; i++) {
        const summary_row *r = &sm->rows[i];
        double x = left + i * w;
        if (isfinite(r->J)) {
            double y0 = Y(0), y1 = Y(r->J);
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"#3b6ea8\"><title>",
                    x + 0.15 * w, fmin(y0, y1), 0.7 * w, fabs(y1 - y0));
            mlc_xml_escape(f, r->dir);
            fprintf(f, ": J = %.6g", r->J);
            if (r->kind[0] && strcmp(r->kind, "locomotion") != 0) {
                fputs(", ", f);
                mlc_xml_escape(f, r->task[0] ? r->task : r->kind);
                if (isfinite(r->task_error)) fprintf(f, ", task error %.4g", r->task_error);
            }
            fputs("</title></rect>\n", f);
        }
        const char *name = strrchr(r->dir, '/');
        name = name && name[1] ? name + 1 : r->dir;
        fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-60)\" text-anchor=\"end\">",
                x + 0.5 * w + 4, top + plot_h + 12);
        mlc_xml_escape(f, name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
#undef Y
    return mlc_afile_commit(&af, err);
}

int mlc_cmd_summarize(const mlc_cli_options *opt) {
    mlc_err err = {0};
    summary sm = {0};
    cJSON *keys = cJSON_CreateArray();
    char *svg = NULL;
    int rc = 0;
    mlc_status s = MLC_OK;
    if (!keys) {
        s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
        goto fail;
    }
    if (opt->ninputs == 0) {
        s = mlc_errf(&err, MLC_EINVAL,
                     "summarize needs one or more run directories or sweep "
                     "output roots");
        goto fail;
    }
    for (int i = 0; i < opt->ninputs; i++)
        if ((s = summary_collect(&sm, opt->inputs[i], &err)) != MLC_OK) goto fail;
    /* Columns for every overridden key, in order of first appearance. */
    for (int i = 0; i < sm.n; i++) {
        const cJSON *k;
        cJSON_ArrayForEach(k, sm.rows[i].overrides) {
            const cJSON *have;
            int found = 0;
            cJSON_ArrayForEach(have, keys) found |= !strcmp(have->valuestring, k->string);
            if (!found) cJSON_AddItemToArray(keys, cJSON_CreateString(k->string));
        }
    }
    if (!opt->out) {
        summary_csv(stdout, &sm, keys);
        goto done;
    }
    mlc_afile af = {0};
    if ((s = mlc_afile_open(&af, opt->out, &err)) != MLC_OK) goto fail;
    summary_csv(af.fp, &sm, keys);
    if ((s = mlc_afile_commit(&af, &err)) != MLC_OK) goto fail;
    size_t n = strlen(opt->out);
    if (!(svg = mlc_malloc(n + 5))) {
        s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
        goto fail;
    }
    if (n > 4 && !strcmp(opt->out + n - 4, ".csv"))
        snprintf(svg, n + 5, "%.*s.svg", (int)(n - 4), opt->out);
    else
        snprintf(svg, n + 5, "%s.svg", opt->out);
    if ((s = summary_svg(svg, &sm, &err)) != MLC_OK) goto fail;
    if (!opt->quiet) fprintf(stderr, "modalloco: %d runs: %s and %s\n", sm.n, opt->out, svg);
    goto done;
fail:
    rc = mlc_cli_fail(s, &err);
done:
    for (int i = 0; i < sm.n; i++) {
        mlc_free(sm.rows[i].dir);
        cJSON_Delete(sm.rows[i].overrides);
    }
    mlc_free(sm.rows);
    mlc_free(svg);
    cJSON_Delete(keys);
    return rc;
}
