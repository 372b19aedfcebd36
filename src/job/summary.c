/* summary.c: reading run directories back and grouping them by setting (summary.h); the tables,
 * plots and JSON of `modalloco summarize`. */
#include "summary.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "objective.h"
#include "output.h"

/* ---- Reading one run ------------------------------------------------------------------ */
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

void mlc_csv_field(FILE *f, const char *s) {
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

char *mlc_json_cell_text(const cJSON *v) {
    if (cJSON_IsString(v)) return mlc_strdup(v->valuestring);
    char *t = cJSON_PrintUnformatted(v);
    if (!t) return NULL;
    char *copy = mlc_strdup(t);
    cJSON_free(t);
    return copy;
}
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
static void summary_task(mlc_summary_run *r, const char *dir) {
    char path[PATH_MAX], v[120];
    snprintf(path, sizeof path, "%s/config.json", dir);
    cJSON *cj = read_json(path);
    const cJSON *ob = cJSON_GetObjectItem(cj, "objective");
    const cJSON *kind = cJSON_GetObjectItem(ob, "kind");
    if (cJSON_IsString(kind)) snprintf(r->kind, sizeof r->kind, "%s", kind->valuestring);
    /* The key holding the kind's goal, from the kinds' registry (objective.h). */
    const mlc_objective_kind_info *ki = mlc_objective_kind_find(r->kind);
    const char *key = ki ? ki->goal_key : NULL;
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

/* What the run's gait holds up to: result.json's credibility block, and the travel it keeps in
 * a second model (result.json "transfer", else the full-space comparison of fullspace.json). */
static void summary_checks(mlc_summary_run *r, const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/result.json", dir);
    cJSON *rj = read_json(path);
    const cJSON *cred = cJSON_GetObjectItem(rj, "credibility");
    const cJSON *c = cJSON_GetObjectItem(cred, "credible");
    if (cJSON_IsBool(c)) r->credible = cJSON_IsTrue(c);
    r->robustness = mlc_json_number(cred, "robustness", (double)NAN);
    const cJSON *tr = cJSON_GetObjectItem(rj, "transfer");
    if (cJSON_IsObject(tr)) {
        r->transfer = mlc_json_number(tr, "fraction", (double)NAN);
        const cJSON *model = cJSON_GetObjectItem(tr, "model");
        snprintf(r->transfer_model, sizeof r->transfer_model, "%s",
                 cJSON_IsString(model) ? model->valuestring : "");
    }
    cJSON_Delete(rj);
    if (!isnan(r->transfer)) return;
    snprintf(path, sizeof path, "%s/fullspace.json", dir);
    cJSON *fj = read_json(path);
    double reduced =
        mlc_json_number(cJSON_GetObjectItem(fj, "reduced"), "displacement", (double)NAN);
    double full = mlc_json_number(cJSON_GetObjectItem(fj, "full"), "displacement", (double)NAN);
    if (isfinite(reduced) && isfinite(full) && reduced != 0) {
        r->transfer = full / reduced;
        snprintf(r->transfer_model, sizeof r->transfer_model, "fullspace");
    }
    cJSON_Delete(fj);
}

static mlc_status summary_add(mlc_summary *sm, const char *dir, mlc_err *err) {
    if (sm->nruns == sm->cap) {
        int ncap = sm->cap ? 2 * sm->cap : 16;
        mlc_summary_run *nr = mlc_realloc(sm->runs, (size_t)ncap * sizeof *nr);
        if (!nr) return mlc_errf(err, MLC_ENOMEM, "out of memory");
        sm->runs = nr, sm->cap = ncap;
    }
    mlc_summary_run *r = &sm->runs[sm->nruns];
    memset(r, 0, sizeof *r);
    r->seed = r->J = r->displacement = r->J_align = r->generations = r->seconds = NAN;
    r->found = r->credible = -1;
    r->robustness = r->transfer = NAN;
    if (!(r->dir = mlc_strdup(dir))) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    sm->nruns++;
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
    summary_checks(r, dir);
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
mlc_status mlc_summary_collect(mlc_summary *sm, const char *dir, mlc_err *err) {
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

/* ---- Grouping ------------------------------------------------------------------------- */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place); NAN when n = 0. */
static double median(double *v, int n) {
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int is_seed_key(const char *key) {
    return !strcmp(key, MLC_SUMMARY_SEED_KEY);
}

/* A run's setting: its values of the keys but the seed, in key order (owned). */
static cJSON *run_setting(const cJSON *keys, const cJSON *overrides) {
    cJSON *s = cJSON_CreateObject();
    const cJSON *k;
    cJSON_ArrayForEach(k, keys) {
        const cJSON *v = cJSON_GetObjectItem(overrides, k->valuestring);
        if (s && v && !is_seed_key(k->valuestring))
            cJSON_AddItemToObject(s, k->valuestring, cJSON_Duplicate(v, 1));
    }
    return s;
}

/* "KEY=value KEY=value", or "(all runs)" for the empty setting (owned). */
static char *setting_label(const cJSON *setting) {
    size_t cap = 64, n = 0;
    char *out = mlc_malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, setting) {
        char *c = mlc_json_cell_text(v);
        if (!c) break;
        size_t need = n + strlen(v->string) + strlen(c) + 3;
        if (need > cap) {
            char *grown = mlc_realloc(out, need * 2);
            if (!grown) {
                mlc_free(c);
                break;
            }
            out = grown, cap = need * 2;
        }
        n += (size_t)snprintf(out + n, cap - n, "%s%s=%s", n ? " " : "", v->string, c);
        mlc_free(c);
    }
    if (n == 0) snprintf(out, cap, "(all runs)");
    return out;
}

static void group_stats(mlc_summary *sm, mlc_summary_group *g, int gi, double *scratch) {
    int nj = 0, nt = 0;
    g->J_min = g->J_max = NAN;
    for (int i = 0; i < sm->nruns; i++) {
        const mlc_summary_run *r = &sm->runs[i];
        if (r->group != gi) continue;
        g->n++;
        g->done += !strcmp(r->status, "done");
        if (isfinite(r->J)) {
            scratch[nj++] = r->J;
            g->J_min = isnan(g->J_min) ? r->J : fmin(g->J_min, r->J);
            g->J_max = isnan(g->J_max) ? r->J : fmax(g->J_max, r->J);
        }
        if (r->credible >= 0) g->credible_n++, g->credible_k += r->credible;
        if (!isnan(r->robustness))
            g->robust_n++, g->robust_k += r->robustness >= MLC_SUMMARY_ROBUST;
    }
    g->J_median = median(scratch, nj);
    for (int i = 0; i < sm->nruns; i++)
        if (sm->runs[i].group == gi && isfinite(sm->runs[i].transfer))
            scratch[nt++] = sm->runs[i].transfer;
    g->transfer_n = nt;
    g->transfer_median = median(scratch, nt);
}

mlc_status mlc_summary_group_runs(mlc_summary *sm, mlc_err *err) {
    if (!sm->keys && !(sm->keys = cJSON_CreateArray()))
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    /* Every overridden key, in order of first appearance. */
    for (int i = 0; i < sm->nruns; i++) {
        const cJSON *k, *have;
        cJSON_ArrayForEach(k, sm->runs[i].overrides) {
            int known = 0;
            cJSON_ArrayForEach(have, sm->keys) known |= !strcmp(have->valuestring, k->string);
            if (!known) cJSON_AddItemToArray(sm->keys, cJSON_CreateString(k->string));
        }
    }
    sm->groups = mlc_calloc((size_t)MLC_MAX(sm->nruns, 1), sizeof *sm->groups);
    double *scratch = mlc_calloc((size_t)MLC_MAX(sm->nruns, 1), sizeof *scratch);
    if (!sm->groups || !scratch) {
        mlc_free(scratch);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    for (int i = 0; i < sm->nruns; i++) {
        mlc_summary_run *r = &sm->runs[i];
        cJSON *s = run_setting(sm->keys, r->overrides);
        if (!s) {
            mlc_free(scratch);
            return mlc_errf(err, MLC_ENOMEM, "out of memory");
        }
        int g = 0;
        while (g < sm->ngroups && !cJSON_Compare(sm->groups[g].setting, s, 1))
            g++;
        if (g == sm->ngroups) {
            sm->groups[g].setting = s;
            sm->groups[g].label = setting_label(s);
            sm->ngroups++;
            if (!sm->groups[g].label) {
                mlc_free(scratch);
                return mlc_errf(err, MLC_ENOMEM, "out of memory");
            }
        } else {
            cJSON_Delete(s);
        }
        r->group = g;
    }
    for (int g = 0; g < sm->ngroups; g++)
        group_stats(sm, &sm->groups[g], g, scratch);
    mlc_free(scratch);
    return MLC_OK;
}

void mlc_summary_free(mlc_summary *sm) {
    for (int i = 0; i < sm->nruns; i++) {
        mlc_free(sm->runs[i].dir);
        cJSON_Delete(sm->runs[i].overrides);
    }
    for (int g = 0; g < sm->ngroups; g++) {
        cJSON_Delete(sm->groups[g].setting);
        mlc_free(sm->groups[g].label);
    }
    mlc_free(sm->runs);
    mlc_free(sm->groups);
    cJSON_Delete(sm->keys);
    memset(sm, 0, sizeof *sm);
}

/* ---- Tables ----------------------------------------------------------------------------- */
static void put_number(FILE *f, double v, const char *fmt) {
    fputc(',', f);
    if (!isnan(v)) fprintf(f, fmt, v);
}

/* A cell of key `key` for the values `values` (an object; the key may be absent). */
static void put_value(FILE *f, const cJSON *values, const char *key) {
    fputc(',', f);
    const cJSON *v = cJSON_GetObjectItem(values, key);
    char *c = v ? mlc_json_cell_text(v) : NULL;
    if (c) mlc_csv_field(f, c);
    mlc_free(c);
}

void mlc_summary_runs_csv(FILE *f, const mlc_summary *sm) {
    const cJSON *k;
    fputs("run", f);
    cJSON_ArrayForEach(k, sm->keys) {
        fputc(',', f);
        mlc_csv_field(f, k->valuestring);
    }
    /* The task columns appear when a run has a task beyond walking along a direction. */
    int tasks = 0;
    for (int i = 0; i < sm->nruns; i++)
        tasks |= sm->runs[i].kind[0] && strcmp(sm->runs[i].kind, "locomotion") != 0;
    fputs(",seed,J,displacement,J_align,generations,seconds,found,status", f);
    fputs(tasks ? ",kind,task,task_error\n" : "\n", f);
    for (int i = 0; i < sm->nruns; i++) {
        const mlc_summary_run *r = &sm->runs[i];
        mlc_csv_field(f, r->dir);
        cJSON_ArrayForEach(k, sm->keys) put_value(f, r->overrides, k->valuestring);
        put_number(f, r->seed, "%.0f");
        put_number(f, r->J, "%.17g");
        put_number(f, r->displacement, "%.17g");
        put_number(f, r->J_align, "%.17g");
        put_number(f, r->generations, "%.0f");
        put_number(f, r->seconds, "%.3f");
        fprintf(f, ",%s,%s", r->found < 0 ? "" : r->found ? "true" : "false", r->status);
        if (tasks) {
            fputc(',', f);
            mlc_csv_field(f, r->kind);
            fputc(',', f);
            mlc_csv_field(f, r->task);
            put_number(f, r->task_error, "%.9g");
        }
        fputc('\n', f);
    }
}

void mlc_summary_groups_csv(FILE *f, const mlc_summary *sm) {
    const cJSON *k;
    fputs("group", f);
    cJSON_ArrayForEach(k, sm->keys) {
        if (is_seed_key(k->valuestring)) continue;
        fputc(',', f);
        mlc_csv_field(f, k->valuestring);
    }
    fputs(",n,done,J_median,J_min,J_max,credible_k,credible_n,robust_k,robust_n,"
          "transfer_median,transfer_n\n",
          f);
    for (int g = 0; g < sm->ngroups; g++) {
        const mlc_summary_group *G = &sm->groups[g];
        fprintf(f, "%d", g + 1);
        cJSON_ArrayForEach(k, sm->keys) {
            if (!is_seed_key(k->valuestring)) put_value(f, G->setting, k->valuestring);
        }
        fprintf(f, ",%d,%d", G->n, G->done);
        put_number(f, G->J_median, "%.17g");
        put_number(f, G->J_min, "%.17g");
        put_number(f, G->J_max, "%.17g");
        fprintf(f, ",%d,%d,%d,%d", G->credible_k, G->credible_n, G->robust_k, G->robust_n);
        put_number(f, G->transfer_median, "%.6g");
        fprintf(f, ",%d\n", G->transfer_n);
    }
}

/* The table's cells, row-major: a header row, then one row per group. */
#define TABLE_FIXED 7
static void table_cell(char *buf, size_t cap, const mlc_summary_group *G, int col) {
    switch (col) {
    case 0:
        snprintf(buf, cap, "%d", G->n);
        break;
    case 1:
    case 2:
    case 3: {
        double v = col == 1 ? G->J_median : col == 2 ? G->J_min : G->J_max;
        snprintf(buf, cap, isnan(v) ? "-" : "%.4g", v);
        break;
    }
    case 4:
    case 5: {
        int k = col == 4 ? G->credible_k : G->robust_k, n = col == 4 ? G->credible_n : G->robust_n;
        if (n)
            snprintf(buf, cap, "%d/%d", k, n);
        else
            snprintf(buf, cap, "-");
        break;
    }
    default:
        if (G->transfer_n)
            snprintf(buf, cap, "%.3f (%d)", G->transfer_median, G->transfer_n);
        else
            snprintf(buf, cap, "-");
    }
}

/* The text of a table cell: column col of group g (the header when g < 0); the columns are
 * "group", the keys `names[0..nk)`, then the fixed ones. Owned text goes through *own. */
static const char *table_text(const mlc_summary *sm, int g, int col, const char **names, int nk,
                              char *buf, size_t cap, char **own) {
    static const char *fixed[TABLE_FIXED] = {"n",        "J median", "J min",          "J max",
                                             "credible", "robust",   "full-space kept"};
    const mlc_summary_group *G = g >= 0 ? &sm->groups[g] : NULL;
    if (col == 0) {
        if (!G) return "group";
        snprintf(buf, cap, "%d", g + 1);
        return buf;
    }
    if (col <= nk) {
        if (!G) return names[col - 1];
        const cJSON *v = cJSON_GetObjectItem(G->setting, names[col - 1]);
        if (!v) return "-";
        *own = mlc_json_cell_text(v);
        return *own ? *own : "?";
    }
    if (!G) return fixed[col - 1 - nk];
    table_cell(buf, cap, G, col - 1 - nk);
    return buf;
}

void mlc_summary_table(FILE *f, const mlc_summary *sm) {
    const cJSON *k;
    int nk = 0;
    const char **names = mlc_calloc((size_t)cJSON_GetArraySize(sm->keys) + 1, sizeof *names);
    const int ncol = 1 + cJSON_GetArraySize(sm->keys) + TABLE_FIXED;
    int *width = mlc_calloc((size_t)ncol, sizeof *width);
    if (!names || !width) goto out;
    cJSON_ArrayForEach(k, sm->keys) {
        if (!is_seed_key(k->valuestring)) names[nk++] = k->valuestring;
    }
    const int used = 1 + nk + TABLE_FIXED;
    char buf[256];
    /* Two passes: measure every column, then print. */
    for (int pass = 0; pass < 2; pass++)
        for (int g = -1; g < sm->ngroups; g++) {
            for (int col = 0; col < used; col++) {
                char *own = NULL;
                const char *text = table_text(sm, g, col, names, nk, buf, sizeof buf, &own);
                if (pass == 0)
                    width[col] = MLC_MAX(width[col], (int)strlen(text));
                else
                    fprintf(f, "%s%-*s", col ? "  " : "", col == used - 1 ? 0 : width[col], text);
                mlc_free(own);
            }
            if (pass == 1) fputc('\n', f);
        }
out:
    mlc_free(names);
    mlc_free(width);
}
#undef TABLE_FIXED

/* ---- Plots -------------------------------------------------------------------------------- */
/* A "nice" tick step (1, 2 or 5 × 10^k) for about five ticks over a range of `span`. */
static double nice_step(double span) {
    double raw = span / 5, mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5)
        step = 10 * mag;
    else if (raw / mag > 2)
        step = 5 * mag;
    else if (raw / mag > 1)
        step = 2 * mag;
    return step;
}

/* The J range of the runs, padded, always holding 0 (the no-gain line). */
static void j_range(const mlc_summary *sm, double *lo, double *hi) {
    *lo = *hi = 0;
    for (int i = 0; i < sm->nruns; i++)
        if (isfinite(sm->runs[i].J)) *lo = fmin(*lo, sm->runs[i].J), *hi = fmax(*hi, sm->runs[i].J);
    if (*hi - *lo < 1e-12) *hi = *lo + 1;
    double pad = 0.05 * (*hi - *lo);
    if (*lo < 0) *lo -= pad;
    if (*hi > 0) *hi += pad;
}

/* Horizontal grid lines and labels of J from lo to hi over [left, right], the plot's top at
 * `top` and `h` pixels high, and the zero line. */
static void j_axis(FILE *f, double lo, double hi, double left, double right, double top, double h) {
    double step = nice_step(hi - lo);
    for (double t = ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) {
        double y = top + (hi - t) / (hi - lo) * h;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                left, y, right, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", left - 6, y + 4,
                fabs(t) < 1e-12 * step ? 0.0 : t);
    }
    double y0 = top + hi / (hi - lo) * h;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left,
            y0, right, y0);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left,
            top, left, top + h);
}

/* The last component of a path (the run's directory name). */
static const char *base_name(const char *dir) {
    const char *name = strrchr(dir, '/');
    return name && name[1] ? name + 1 : dir;
}

mlc_status mlc_summary_bars_svg(const char *path, const mlc_summary *sm, mlc_err *err) {
    double lo, hi;
    j_range(sm, &lo, &hi);
    const double left = 70, top = 40, plot_h = 260, bottom = 110, slot = 26;
    const double plot_w = fmax(300, slot * sm->nruns);
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
    j_axis(f, lo, hi, left, left + plot_w, top, plot_h);
    double w = plot_w / (sm->nruns ? sm->nruns : 1);
    for (int i = 0; i < sm->nruns; i++) {
        const mlc_summary_run *r = &sm->runs[i];
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
        fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-60)\" text-anchor=\"end\">",
                x + 0.5 * w + 4, top + plot_h + 12);
        mlc_xml_escape(f, base_name(r->dir));
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
#undef Y
    return mlc_afile_commit(&af, err);
}

/* One panel's x axis: where each group sits. Numeric when every group has a number for the key
 * and there are two values or more; else one slot per distinct value (absent: "-"), in order of
 * first appearance. */
typedef struct panel_axis {
    int numeric;
    double lo, hi;    /* numeric range */
    int nslots;       /* categorical slots */
    int *slot;        /* per group: its slot (categorical) */
    double *value;    /* per group: its number (numeric) */
    char **slot_text; /* nslots labels (owned) */
} panel_axis;

static void panel_axis_free(panel_axis *a, int ngroups) {
    for (int i = 0; i < a->nslots; i++)
        mlc_free(a->slot_text[i]);
    (void)ngroups;
    mlc_free(a->slot_text);
    mlc_free(a->slot);
    mlc_free(a->value);
}

static mlc_status panel_axis_make(panel_axis *a, const mlc_summary *sm, const char *key) {
    memset(a, 0, sizeof *a);
    const int ng = sm->ngroups;
    a->slot = mlc_calloc((size_t)ng, sizeof *a->slot);
    a->value = mlc_calloc((size_t)ng, sizeof *a->value);
    a->slot_text = mlc_calloc((size_t)ng, sizeof *a->slot_text);
    if (!a->slot || !a->value || !a->slot_text) return MLC_ENOMEM;
    a->numeric = key != NULL;
    a->lo = INFINITY, a->hi = -INFINITY;
    for (int g = 0; g < ng; g++) {
        const cJSON *v = key ? cJSON_GetObjectItem(sm->groups[g].setting, key) : NULL;
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
            a->value[g] = v->valuedouble;
            a->lo = fmin(a->lo, v->valuedouble), a->hi = fmax(a->hi, v->valuedouble);
        } else {
            a->numeric = 0;
        }
        char *text = !key ? mlc_strdup("all runs") : v ? mlc_json_cell_text(v) : mlc_strdup("-");
        if (!text) return MLC_ENOMEM;
        int s = 0;
        while (s < a->nslots && strcmp(a->slot_text[s], text))
            s++;
        if (s == a->nslots)
            a->slot_text[a->nslots++] = text;
        else
            mlc_free(text);
        a->slot[g] = s;
    }
    if (a->numeric && !(a->hi > a->lo)) a->numeric = 0;
    return MLC_OK;
}

/* The x pixel of group g in a panel whose plot spans [x0, x0 + w]. */
static double panel_x(const panel_axis *a, int g, double x0, double w) {
    if (a->numeric) return x0 + 0.1 * w + 0.8 * w * (a->value[g] - a->lo) / (a->hi - a->lo);
    return x0 + w * (a->slot[g] + 0.5) / a->nslots;
}

/* The groups' settings without `key`, as one text each (owned array of owned strings): groups
 * with the same text differ only in `key`, and their medians are joined by a line. */
static char **series_of(const mlc_summary *sm, const char *key) {
    char **out = mlc_calloc((size_t)sm->ngroups, sizeof *out);
    if (!out) return NULL;
    for (int g = 0; g < sm->ngroups; g++) {
        cJSON *rest = cJSON_Duplicate(sm->groups[g].setting, 1);
        if (key) cJSON_DeleteItemFromObjectCaseSensitive(rest, key);
        char *t = rest ? cJSON_PrintUnformatted(rest) : NULL;
        out[g] = t ? mlc_strdup(t) : NULL;
        cJSON_free(t);
        cJSON_Delete(rest);
    }
    return out;
}

typedef struct plot_frame {
    double x0, top, w, h; /* the plot area of the panel */
    double lo, hi;        /* J range */
} plot_frame;

static double frame_y(const plot_frame *p, double J) {
    return p->top + (p->hi - J) / (p->hi - p->lo) * p->h;
}

/* The medians of groups in one series, joined left to right. */
static void series_lines(FILE *f, const mlc_summary *sm, const panel_axis *a, char **series,
                         const plot_frame *p) {
    int *order = mlc_calloc((size_t)sm->ngroups, sizeof *order);
    char *drawn = mlc_calloc((size_t)sm->ngroups, 1);
    if (!order || !drawn) goto out;
    for (int g = 0; g < sm->ngroups; g++) {
        if (drawn[g] || !series[g]) continue;
        int n = 0;
        for (int h = g; h < sm->ngroups; h++)
            if (series[h] && !strcmp(series[h], series[g]) && isfinite(sm->groups[h].J_median))
                order[n++] = h, drawn[h] = 1;
        if (n < 2) continue;
        /* Insertion sort by x: few groups per series. */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && panel_x(a, order[j], 0, 1) < panel_x(a, order[j - 1], 0, 1);
                 j--) {
                int t = order[j];
                order[j] = order[j - 1], order[j - 1] = t;
            }
        fputs("<polyline fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\" points=\"", f);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", panel_x(a, order[i], p->x0, p->w),
                    frame_y(p, sm->groups[order[i]].J_median));
        fputs("\"/>\n", f);
    }
out:
    mlc_free(order);
    mlc_free(drawn);
}

/* Every run as a dot (spread sideways within its group), every group's median as a bar. */
static void panel_points(FILE *f, const mlc_summary *sm, const panel_axis *a, const plot_frame *p) {
    for (int g = 0; g < sm->ngroups; g++) {
        const mlc_summary_group *G = &sm->groups[g];
        double x = panel_x(a, g, p->x0, p->w);
        int k = 0;
        for (int i = 0; i < sm->nruns; i++) {
            const mlc_summary_run *r = &sm->runs[i];
            if (r->group != g || !isfinite(r->J)) continue;
            double dx = 4.0 * (k++ - 0.5 * (G->n - 1));
            const char *style = r->credible == 1   ? "fill=\"#2e8b3d\" stroke=\"#2e8b3d\""
                                : r->credible == 0 ? "fill=\"white\" stroke=\"#c0392b\""
                                                   : "fill=\"white\" stroke=\"#888\"";
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" %s stroke-width=\"1.5\"><title>",
                    x + dx, frame_y(p, r->J), style);
            mlc_xml_escape(f, base_name(r->dir));
            fprintf(f, ": J = %.6g, seed %.0f, %s</title></circle>\n", r->J, r->seed,
                    r->credible == 1   ? "credible"
                    : r->credible == 0 ? "not credible"
                                       : "credibility unknown");
        }
        if (isfinite(G->J_median)) {
            double y = frame_y(p, G->J_median);
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" "
                    "stroke-width=\"2.5\"><title>",
                    x - 10, y, x + 10, y);
            mlc_xml_escape(f, G->label);
            fprintf(f, ": median J = %.6g over %d runs</title></line>\n", G->J_median, G->n);
        }
    }
}

/* The x labels of a panel: every slot, or for a numeric key every distinct value (the ends
 * only when there are more than eight). */
static void panel_labels(FILE *f, const mlc_summary *sm, const panel_axis *a, const plot_frame *p) {
    double y = p->top + p->h + 14;
    if (!a->numeric) {
        for (int s = 0; s < a->nslots; s++) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                    p->x0 + p->w * (s + 0.5) / a->nslots, y);
            mlc_xml_escape(f, a->slot_text[s]);
            fputs("</text>\n", f);
        }
        return;
    }
    for (int g = 0; g < sm->ngroups; g++) {
        if (a->nslots > 8 && a->value[g] != a->lo && a->value[g] != a->hi) continue;
        int first = 1; /* one label per value */
        for (int h = 0; h < g; h++)
            first &= a->value[h] != a->value[g];
        if (!first) continue;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.6g</text>\n",
                panel_x(a, g, p->x0, p->w), y, a->value[g]);
    }
}

mlc_status mlc_summary_plot_svg(const char *path, const mlc_summary *sm, mlc_err *err) {
    /* The panels: one per swept key but the seed, or one for all runs. */
    const cJSON *k;
    int npanel = 0;
    cJSON_ArrayForEach(k, sm->keys) npanel += !is_seed_key(k->valuestring);
    const int keyless = npanel == 0;
    if (keyless) npanel = 1;
    const int per_row = MLC_MIN(npanel, 3), rows = (npanel + per_row - 1) / per_row;
    const double pw = 340, ph = 260, left = 64, top = 34, plot_w = 250, plot_h = 180;
    /* At least as wide as the legend. */
    const double width = fmax(per_row * pw + 10, 440), height = 56 + rows * ph;
    double lo, hi;
    j_range(sm, &lo, &hi);
    mlc_afile af = {0};
    mlc_status s = mlc_svg_begin(&af, path, width, height, 11, err);
    if (s != MLC_OK) return s;
    FILE *f = af.fp;
    fputs("<text x=\"10\" y=\"20\" font-size=\"14\">modalloco: final J by setting (lower is "
          "better)</text>\n",
          f);
    /* The legend. */
    fputs("<g transform=\"translate(10,38)\">"
          "<circle cx=\"5\" cy=\"-4\" r=\"3.5\" fill=\"#2e8b3d\" stroke=\"#2e8b3d\"/>"
          "<text x=\"13\" y=\"0\">credible run</text>"
          "<circle cx=\"105\" cy=\"-4\" r=\"3.5\" fill=\"white\" stroke=\"#c0392b\" "
          "stroke-width=\"1.5\"/><text x=\"113\" y=\"0\">not credible</text>"
          "<circle cx=\"200\" cy=\"-4\" r=\"3.5\" fill=\"white\" stroke=\"#888\" "
          "stroke-width=\"1.5\"/><text x=\"208\" y=\"0\">unknown</text>"
          "<line x1=\"280\" y1=\"-4\" x2=\"300\" y2=\"-4\" stroke=\"black\" stroke-width=\"2.5\"/>"
          "<text x=\"306\" y=\"0\">group median</text></g>\n",
          f);
    int panel = 0;
    const cJSON *key = sm->keys ? sm->keys->child : NULL;
    for (; panel < npanel; panel++) {
        while (key && is_seed_key(key->valuestring))
            key = key->next;
        const char *name = keyless ? NULL : key->valuestring;
        plot_frame p = {.x0 = (panel % per_row) * pw + left,
                        .top = 56 + (panel / per_row) * ph + top,
                        .w = plot_w,
                        .h = plot_h,
                        .lo = lo,
                        .hi = hi};
        panel_axis a;
        char **series = NULL;
        if (panel_axis_make(&a, sm, name) != MLC_OK || !(series = series_of(sm, name))) {
            panel_axis_free(&a, sm->ngroups);
            mlc_afile_abort(&af);
            return mlc_errf(err, MLC_ENOMEM, "out of memory");
        }
        fprintf(f, "<g class=\"panel\"><text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">J vs ", p.x0,
                p.top - 10);
        mlc_xml_escape(f, name ? name : "all runs");
        fputs("</text>\n", f);
        j_axis(f, lo, hi, p.x0, p.x0 + p.w, p.top, p.h);
        series_lines(f, sm, &a, series, &p);
        panel_points(f, sm, &a, &p);
        panel_labels(f, sm, &a, &p);
        fputs("</g>\n", f);
        for (int g = 0; g < sm->ngroups; g++)
            mlc_free(series[g]);
        mlc_free(series);
        panel_axis_free(&a, sm->ngroups);
        if (key) key = key->next;
    }
    fputs("</svg>\n", f);
    return mlc_afile_commit(&af, err);
}

/* ---- JSON ------------------------------------------------------------------------------- */
static cJSON *number_or_null(double v) {
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *fraction_json(int k, int n) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "k", k);
    cJSON_AddNumberToObject(o, "n", n);
    return o;
}

static cJSON *bool_or_null(int b) {
    return b < 0 ? cJSON_CreateNull() : cJSON_CreateBool(b);
}

cJSON *mlc_summary_json(const mlc_summary *sm) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddItemToObject(o, "keys", cJSON_Duplicate(sm->keys, 1));
    cJSON *groups = cJSON_AddArrayToObject(o, "groups");
    for (int g = 0; g < sm->ngroups; g++) {
        const mlc_summary_group *G = &sm->groups[g];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddItemToArray(groups, j);
        cJSON_AddNumberToObject(j, "group", g + 1);
        cJSON_AddItemToObject(j, "setting", cJSON_Duplicate(G->setting, 1));
        cJSON_AddStringToObject(j, "label", G->label);
        cJSON_AddNumberToObject(j, "n", G->n);
        cJSON_AddNumberToObject(j, "done", G->done);
        const mlc_json_field J[] = {
            {"J_median", G->J_median}, {"J_min", G->J_min}, {"J_max", G->J_max}};
        mlc_json_add_numbers(j, J, (int)(sizeof J / sizeof J[0]));
        cJSON_AddItemToObject(j, "credible", fraction_json(G->credible_k, G->credible_n));
        cJSON_AddItemToObject(j, "robust", fraction_json(G->robust_k, G->robust_n));
        cJSON *t = cJSON_AddObjectToObject(j, "transfer");
        cJSON_AddItemToObject(t, "median", number_or_null(G->transfer_median));
        cJSON_AddNumberToObject(t, "n", G->transfer_n);
        cJSON *runs = cJSON_AddArrayToObject(j, "runs");
        for (int i = 0; i < sm->nruns; i++)
            if (sm->runs[i].group == g)
                cJSON_AddItemToArray(runs, cJSON_CreateString(sm->runs[i].dir));
    }
    cJSON *runs = cJSON_AddArrayToObject(o, "runs");
    for (int i = 0; i < sm->nruns; i++) {
        const mlc_summary_run *r = &sm->runs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddItemToArray(runs, j);
        cJSON_AddStringToObject(j, "dir", r->dir);
        cJSON_AddNumberToObject(j, "group", r->group + 1);
        cJSON_AddItemToObject(
            j, "overrides", r->overrides ? cJSON_Duplicate(r->overrides, 1) : cJSON_CreateObject());
        /* cJSON prints the unknown (NaN) ones as null. */
        const mlc_json_field nums[] = {{"seed", r->seed},
                                       {"J", r->J},
                                       {"displacement", r->displacement},
                                       {"J_align", r->J_align},
                                       {"generations", r->generations},
                                       {"seconds", r->seconds}};
        mlc_json_add_numbers(j, nums, (int)(sizeof nums / sizeof nums[0]));
        cJSON_AddItemToObject(j, "found", bool_or_null(r->found));
        cJSON_AddStringToObject(j, "status", r->status);
        cJSON_AddItemToObject(j, "credible", bool_or_null(r->credible));
        cJSON_AddItemToObject(j, "robustness", number_or_null(r->robustness));
        cJSON *t = cJSON_AddObjectToObject(j, "transfer");
        cJSON_AddItemToObject(t, "fraction", number_or_null(r->transfer));
        if (r->transfer_model[0]) cJSON_AddStringToObject(t, "model", r->transfer_model);
        if (r->kind[0]) cJSON_AddStringToObject(j, "kind", r->kind);
        if (r->task[0]) cJSON_AddStringToObject(j, "task", r->task);
        cJSON_AddItemToObject(j, "task_error", number_or_null(r->task_error));
    }
    return o;
}
