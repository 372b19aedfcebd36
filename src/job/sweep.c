/* sweep.c: a parameter sweep (sweep.h) expanded into optimize runs, and its files: the
 * manifest, runs.csv, base.json, each run's run.json and the Slurm job array script.
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
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config_input.h"
#include "dist.h"
#include "output.h"
#include "summary.h" /* mlc_csv_field, mlc_json_cell_text */
#include "sweep.h"

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
void mlc_sweep_free(mlc_sweep *w) {
    for (int i = 0; i < w->nruns; i++) {
        mlc_sweep_run *r = &w->runs[i];
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

static mlc_status add_set(mlc_sweep_run *r, const char *key, const cJSON *value, const char *raw,
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

static void note_key(mlc_sweep *w, const char *key) {
    const cJSON *k;
    cJSON_ArrayForEach(k, w->keys) if (!strcmp(k->valuestring, key)) return;
    cJSON_AddItemToArray(w->keys, cJSON_CreateString(key));
}

/* The effective configuration of a run, exactly as optimize will build it. */
static mlc_status run_config(const mlc_sweep *w, const mlc_sweep_run *r, const char *src,
                             mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    mlc_config_defaults(cfg);
    if (w->base_obj) {
        if ((s = mlc_config_apply_json(cfg, w->base_obj, src, err)) != MLC_OK) return s;
    } else if (w->base) {
        /* The base alone as optimize would read it, validated too. */
        mlc_config tmp;
        if ((s = mlc_config_input(&tmp, w->base, err)) != MLC_OK ||
            (s = mlc_config_resolve_local_modes(&tmp, NULL, w->base, w->base, NULL, 0, err)) !=
                MLC_OK ||
            (s = mlc_config_validate(&tmp, err)) != MLC_OK)
            return s;
        *cfg = tmp;
    }
    for (int i = 0; i < r->nsets; i++)
        if ((s = mlc_config_set(cfg, r->sets[i], err)) != MLC_OK) return s;
    if (strlen(r->dir) >= sizeof cfg->output.dir)
        return mlc_errf(err, MLC_EINVAL, "output path too long: %s", r->dir);
    snprintf(cfg->output.dir, sizeof cfg->output.dir, "%s", r->dir);
    /* actuation.local_modes replacing the global modes, as optimize resolves it. */
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
static mlc_status slurm_load(mlc_sweep *w, const char *file, mlc_err *err) {
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
static mlc_status sweep_parse(mlc_sweep *w, const char *file, mlc_err *err) {
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
static mlc_status sweep_paths(mlc_sweep *w, const char *file, const char *out, mlc_err *err) {
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
static mlc_status run_overrides(mlc_sweep *w, mlc_sweep_run *r, long gi, int li, mlc_err *err) {
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
static mlc_status expand_run(mlc_sweep *w, long gi, int li, int si, const char *file,
                             const char *const *extra, int nextra, mlc_err *err) {
    const cJSON *seeds = cJSON_GetObjectItem(w->doc, "seeds");
    const cJSON *args = cJSON_GetObjectItem(w->doc, "args");
    const cJSON *it;
    mlc_status s;
    mlc_sweep_run *r = &w->runs[w->nruns];
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
mlc_status mlc_sweep_load(mlc_sweep *w, const char *file, const char *out, const char *const *extra,
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
mlc_status mlc_sweep_write_manifest(const mlc_sweep *w, mlc_err *err) {
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
        const mlc_sweep_run *r = &w->runs[i];
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
static void srun_options(FILE *f, const mlc_sweep *w) {
    if (!is_srun(w->slurm.launcher)) return;
    if (w->slurm.ntasks > 1 && *w->slurm.mpi) fprintf(f, " --mpi=%s", w->slurm.mpi);
    if (w->slurm.cpus) fprintf(f, " --cpus-per-task=%d", w->slurm.cpus);
}

/* This program's path (what the Slurm script and the runs of --jobs start), or "modalloco" to
 * be found on PATH when /proc does not say. */
void mlc_sweep_program(char *exe, size_t cap) {
    ssize_t n = readlink("/proc/self/exe", exe, cap - 1);
    if (n <= 0)
        snprintf(exe, cap, "modalloco");
    else
        exe[n] = 0;
}

/* max_running > 0 throttles the array: Slurm starts at most that many tasks at once. */
mlc_status mlc_sweep_write_slurm(const mlc_sweep *w, const char *path, int max_running,
                                 mlc_err *err) {
    char exe[PATH_MAX];
    mlc_sweep_program(exe, sizeof exe);

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
void mlc_sweep_print_resources(FILE *f, const mlc_sweep *w) {
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

/* ---- What the runs' directories hold ------------------------------------------------- */

/* What to do with run r, from what its directory holds. */
int mlc_sweep_run_state(const mlc_sweep_run *r) {
    char *cp = mlc_path_join_alloc(r->dir, "config.json");
    char *pp = mlc_path_join_alloc(r->dir, "params.json");
    char *kp = mlc_path_join_alloc(r->dir, "checkpoint.bin");
    int state = MLC_SWEEP_FRESH;
    if (cp && pp && kp && mlc_file_exists(cp)) {
        char *text = mlc_file_read_text(cp);
        if (!text || strcmp(text, r->config) != 0)
            state = MLC_SWEEP_CONFLICT;
        else if (mlc_file_exists(pp))
            state = MLC_SWEEP_SKIP;
        else if (mlc_file_exists(kp))
            state = MLC_SWEEP_RESUME;
        mlc_free(text);
    }
    mlc_free(cp), mlc_free(pp), mlc_free(kp);
    return state;
}

void mlc_sweep_print_run(FILE *f, const mlc_sweep *w, const mlc_sweep_run *r) {
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
static const char *const state_names[] = {"todo", "complete", "resume", "conflict"};

const char *mlc_sweep_state_name(int state) {
    return state_names[state];
}

/* {"root", "base", "keys", "runs": [{"run", "dir", "state", "seed", "settings", "sets",
 * "command"}]}: what each run would do, for scripts. */
cJSON *mlc_sweep_runs_json(const mlc_sweep *w, const int *state) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "root", w->root);
    cJSON_AddItemToObject(o, "base", w->base ? cJSON_CreateString(w->base) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "keys", cJSON_Duplicate(w->keys, 1));
    cJSON *runs = cJSON_AddArrayToObject(o, "runs");
    for (int i = 0; i < w->nruns; i++) {
        const mlc_sweep_run *r = &w->runs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddItemToArray(runs, j);
        cJSON_AddNumberToObject(j, "run", i);
        cJSON_AddStringToObject(j, "dir", r->dir);
        cJSON_AddStringToObject(j, "state", state_names[state[i]]);
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
    return o;
}

mlc_status mlc_sweep_states(const mlc_sweep *w, int **state, mlc_err *err) {
    *state = mlc_calloc((size_t)w->nruns, sizeof **state);
    if (!*state) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    for (int i = 0; i < w->nruns; i++)
        (*state)[i] = mlc_sweep_run_state(&w->runs[i]);
    /* Rank 0's view of the directories decides, so every rank takes the same path. */
    mlc_dist_bcast_int(*state, w->nruns, 0);
    return MLC_OK;
}

mlc_status mlc_sweep_check_conflicts(const mlc_sweep *w, const int *state, mlc_err *err) {
    int conflicts = 0, first_conflict = -1;
    for (int i = 0; i < w->nruns; i++) {
        if (state[i] == MLC_SWEEP_CONFLICT && first_conflict < 0) first_conflict = i;
        conflicts += state[i] == MLC_SWEEP_CONFLICT;
    }
    if (!conflicts) return MLC_OK;
    return mlc_errf(err, MLC_EINVAL,
                    "%s holds a run with another configuration (%d such "
                    "runs: the sweep changed?); use another --out, or --force to redo them",
                    w->runs[first_conflict].dir, conflicts);
}

void mlc_sweep_print_list(FILE *f, const mlc_sweep *w, const int *state) {
    for (int i = 0; i < w->nruns; i++) {
        fprintf(f, "%-8s ", mlc_sweep_state_name(state[i]));
        mlc_sweep_print_run(f, w, &w->runs[i]);
        fputc('\n', f);
    }
}

void mlc_sweep_print_slurm(FILE *f, const mlc_sweep *w, const int *state, const char *path,
                           int max_running) {
    int todo = 0;
    for (int i = 0; i < w->nruns; i++)
        todo += state[i] != MLC_SWEEP_SKIP;
    fprintf(f, "%s: %d runs (%d to do) in %s", path, w->nruns, todo, w->root);
    if (max_running) fprintf(f, ", at most %d running at once", max_running);
    fputc('\n', f);
    mlc_sweep_print_resources(f, w);
    fprintf(f, "submit with: sbatch %s\n", path);
}
