/* config.c: defaults, JSON loading, --set, validation and JSON output of the run configuration.
 *
 * A generic loader: it knows no key. Each module describes its keys in a table next to its
 * settings struct (keys.h: name, JSON type, offsetof in the struct, bounds, default, doc) and
 * mlc_config_sections[] places each section's struct in mlc_config. Loading walks the JSON
 * document and dispatches on the row's type; defaults, validation and output walk the tables,
 * and validation ends with each module's check of the rules between its keys. Adding a key is
 * one field and one row in its module.
 *
 * Loading works on a heap copy of the config and commits only on success, so a failed load or
 * --set leaves the caller's config untouched.
 */
#include "config.h"

#include "internal/config_values.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- The sections ---------------------------------------------------------------------- */
#define SECTION(s)                                                                                 \
    { &mlc_##s##_key_section, offsetof(mlc_config, s) }
const mlc_config_section mlc_config_sections[] = {
    SECTION(mesh),      SECTION(material), SECTION(regions), SECTION(subspace),
    SECTION(actuation), SECTION(sim),      SECTION(contact), SECTION(reference),
    SECTION(objective), SECTION(cmaes),    SECTION(output),  SECTION(parallel),
};
const int mlc_config_nsections = (int)(sizeof mlc_config_sections / sizeof mlc_config_sections[0]);

/* Every key of every section, in docs/config.md's order. */
#define FOR_EACH_KEY(sec, k)                                                                       \
    for (const mlc_config_section *sec = mlc_config_sections;                                      \
         sec < mlc_config_sections + mlc_config_nsections; sec++)                                  \
        for (const mlc_key *k = sec->keys->keys; k < sec->keys->keys + sec->keys->nkeys; k++)

#define MAX_KEYS 256 /* bound for per-load bookkeeping of the keys given */

const mlc_key *mlc_config_key_find(const char *name, const mlc_config_section **section) {
    for (int s = 0; s < mlc_config_nsections; s++) {
        const mlc_key_section *ks = mlc_config_sections[s].keys;
        for (int i = 0; i < ks->nkeys; i++)
            if (strcmp(ks->keys[i].name, name) == 0) {
                if (section) *section = &mlc_config_sections[s];
                return &ks->keys[i];
            }
    }
    return NULL;
}

/* ---- Small helpers ---------------------------------------------------------------------- */
/* Field access through the table's offsets, within a section's settings struct. */
static void *field(void *cfg, size_t off) {
    return (char *)cfg + off;
}
static const void *cfield(const void *cfg, size_t off) {
    return (const char *)cfg + off;
}

/* The entry count of a list key (or the "given" flag of a VEC3_OR_NULL key). */
static int key_count(const void *cfg, const mlc_key *k) {
    return *(const int *)cfield(cfg, k->count_offset);
}

/* ---- Range checks (shared by loading and mlc_config_validate) --------------------------- */
static int in_bounds(const mlc_key *k, double v) {
    if (k->lo_kind == '(' && !(v > k->lo)) return 0;
    if (k->lo_kind == '[' && !(v >= k->lo)) return 0;
    if (k->hi_kind == ')' && !(v < k->hi)) return 0;
    if (k->hi_kind == ']' && !(v <= k->hi)) return 0;
    return 1;
}

static int has_choice(const char *choices, const char *s) {
    return mlc_key_choice_index(choices, s) >= 0;
}

/* The unit vector of an axis name "+x" … "-z"; 0 when `s` is not one. */
static int axis_vector(const char *s, double v[3]) {
    if ((s[0] != '+' && s[0] != '-') || s[1] < 'x' || s[1] > 'z' || s[2] != '\0') return 0;
    v[0] = v[1] = v[2] = 0;
    v[s[1] - 'x'] = s[0] == '+' ? 1.0 : -1.0;
    return 1;
}

/* Each entry of an int list in range and none listed twice. */
static int check_int_array(const void *cfg, const mlc_key *k, const void *f, char *msg, size_t n) {
    const int *a = f;
    int cnt = key_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        if (!in_bounds(k, a[i])) {
            snprintf(msg, n, "key '%s[%d]' = %d is out of range; valid: %s", k->name, i, a[i],
                     k->range);
            return 1;
        }
        for (int j = 0; j < i; j++)
            if (a[j] == a[i]) {
                snprintf(msg, n, "key '%s' lists %d twice (at %d and %d); valid: %s", k->name, a[i],
                         j, i, k->range);
                return 1;
            }
    }
    return 0;
}

/* An axis given by name must be a valid name that agrees with its vector (preparation reads the
 * vector); without a name the vector must be finite and nonzero. */
static int check_axis(const void *cfg, const mlc_key *k, const void *f, char *msg, size_t n) {
    char v[200];
    const double *a = cfield(cfg, k->count_offset);
    double want[3];
    const char *name = f;
    if (name[0]) {
        if (!has_choice(k->choices, name) || !axis_vector(name, want)) {
            snprintf(msg, n,
                     "key '%s' = \"%.100s\" is invalid; valid: %s (e.g. --set "
                     "%s=+z for a mesh whose up axis is z)",
                     k->name, name, k->range, k->name);
            return 1;
        }
        /* Preparation reads the vector; a name that disagrees with it would be a lie in
         * config.json. */
        if (a[0] != want[0] || a[1] != want[1] || a[2] != want[2]) {
            snprintf(msg, n, "key '%s' = \"%s\" disagrees with its vector %s", k->name, name,
                     mlc_cv_fmt_vec(a, 3, v, sizeof v));
            return 1;
        }
        return 0;
    }
    if (!isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2]) ||
        !(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] > 0)) {
        snprintf(msg, n, "key '%s' = %s is invalid; valid: %s", k->name,
                 mlc_cv_fmt_vec(a, 3, v, sizeof v), k->range);
        return 1;
    }
    return 0;
}

/* Check one key of *cfg alone. Returns 0, or 1 with `msg` saying key, value and range. */
static int check_key(const void *cfg, const mlc_key *k, char *msg, size_t n) {
    const void *f = cfield(cfg, k->offset);
    char v[200];
    switch (k->type) {
    case MLC_KEY_STRING: {
        const char *s = f;
        if (k->choices && !has_choice(k->choices, s)) {
            snprintf(msg, n, "key '%s' = \"%.100s\" is invalid; valid: %s", k->name, s, k->range);
            return 1;
        }
        if (k->check == MLC_KEY_CHECK_NONEMPTY && s[0] == '\0') {
            snprintf(msg, n, "key '%s' = \"\" is invalid; valid: %s", k->name, k->range);
            return 1;
        }
        return 0;
    }
    case MLC_KEY_ENUM: {
        char name[64];
        int x = *(const int *)f;
        if (!mlc_key_choice_name(k->choices, x, name, sizeof name)[0]) {
            snprintf(msg, n, "key '%s' = %d is invalid; valid: %s", k->name, x, k->range);
            return 1;
        }
        return 0;
    }
    case MLC_KEY_BOOL:
        return 0;
    case MLC_KEY_INT: {
        int x = *(const int *)f;
        if (!in_bounds(k, x)) {
            snprintf(msg, n, "key '%s' = %d is out of range; valid: %s", k->name, x, k->range);
            return 1;
        }
        return 0;
    }
    case MLC_KEY_NUMBER: {
        double x = *(const double *)f;
        if (!isfinite(x) || !in_bounds(k, x)) {
            snprintf(msg, n, "key '%s' = %s is out of range; valid: %s", k->name,
                     mlc_cv_fmt_num(x, v, sizeof v), k->range);
            return 1;
        }
        return 0;
    }
    case MLC_KEY_INT_ARRAY:
        return check_int_array(cfg, k, f, msg, n);
    case MLC_KEY_NUMBER_ARRAY: {
        const double *a = f;
        int cnt = key_count(cfg, k);
        for (int i = 0; i < cnt; i++)
            if (!isfinite(a[i]) || !in_bounds(k, a[i])) {
                snprintf(msg, n, "key '%s[%d]' = %s is out of range; valid: %s", k->name, i,
                         mlc_cv_fmt_num(a[i], v, sizeof v), k->range);
                return 1;
            }
        return 0;
    }
    case MLC_KEY_RANGE: {
        const double *a = f;
        int bad = !isfinite(a[0]) || !isfinite(a[1]) || !in_bounds(k, a[0]) ||
                  !in_bounds(k, a[1]) || (k->check == MLC_KEY_CHECK_ORDERED && a[0] > a[1]);
        if (bad) {
            snprintf(msg, n, "key '%s' = %s is invalid; valid: %s", k->name,
                     mlc_cv_fmt_vec(a, 2, v, sizeof v), k->range);
            return 1;
        }
        return 0;
    }
    case MLC_KEY_VEC3:
    case MLC_KEY_VEC3_OR_NULL: {
        const double *a = f;
        if (k->type == MLC_KEY_VEC3_OR_NULL && !key_count(cfg, k)) return 0;
        int bad = !isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2]);
        if (k->check == MLC_KEY_CHECK_NONZERO && !(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] > 0))
            bad = 1;
        if (bad) {
            snprintf(msg, n, "key '%s' = %s is invalid; valid: %s", k->name,
                     mlc_cv_fmt_vec(a, 3, v, sizeof v), k->range);
            return 1;
        }
        return 0;
    }
    case MLC_KEY_AXIS:
        return check_axis(cfg, k, f, msg, n);
    case MLC_KEY_BOXES:
        return mlc_cv_check_boxes(cfg, k, f, msg, n);
    case MLC_KEY_PARAMETERS:
        return mlc_cv_check_parameters(cfg, k, f, msg, n);
    case MLC_KEY_REGION_MATERIALS:
        return mlc_cv_check_region_materials(cfg, k, f, msg, n);
    }
    return 0;
}

/* The choice an enum's alias names ("walk=locomotion|..."), or -1. */
static int alias_index(const mlc_key *k, const char *name) {
    size_t n = strlen(name);
    for (const char *p = k->aliases; n && (p = strstr(p, name)) != NULL; p += n)
        if ((p == k->aliases || p[-1] == '|') && p[n] == '=') {
            char target[MLC_CONFIG_WORD_MAX];
            size_t len = strcspn(p + n + 1, "|");
            if (len >= sizeof target) return -1;
            memcpy(target, p + n + 1, len);
            target[len] = '\0';
            return mlc_key_choice_index(k->choices, target);
        }
    return -1;
}

/* ---- Applying one value ----------------------------------------------------------------- */
static mlc_status apply_value(const mlc_cv_ctx *c, void *cfg, const mlc_key *k, const char *label,
                              const cJSON *it) {
    void *f = field(cfg, k->offset);
    mlc_status s = MLC_OK;
    char lab[160];
    switch (k->type) {
    case MLC_KEY_STRING: {
        if (!cJSON_IsString(it)) return mlc_cv_type_error(c, label, "a string", it);
        size_t len = strlen(it->valuestring);
        if (len >= (size_t)k->capacity)
            return mlc_cv_failf(c, MLC_EINVAL, "key '%s' is too long (%zu bytes; at most %d)",
                                label, len, k->capacity - 1);
        memset(f, 0, (size_t)k->capacity); /* keep the tail zero: configs compare by bytes */
        memcpy(f, it->valuestring, len);
        break;
    }
    case MLC_KEY_ENUM: {
        if (!cJSON_IsString(it)) return mlc_cv_type_error(c, label, "a string", it);
        size_t len = strlen(it->valuestring);
        int x = mlc_key_choice_index(k->choices, it->valuestring);
        if (x < 0 && k->aliases) x = alias_index(k, it->valuestring);
        if (len >= MLC_CONFIG_WORD_MAX)
            return mlc_cv_failf(c, MLC_EINVAL, "key '%s' is too long (%zu bytes; at most %d)",
                                label, len, MLC_CONFIG_WORD_MAX - 1);
        if (x < 0)
            return mlc_cv_failf(c, MLC_EINVAL, "key '%s' = \"%.100s\" is invalid; valid: %s",
                                k->name, it->valuestring, k->range);
        *(int *)f = x;
        break;
    }
    case MLC_KEY_BOOL:
        if (!cJSON_IsBool(it)) return mlc_cv_type_error(c, label, "a boolean (true or false)", it);
        *(int *)f = cJSON_IsTrue(it) ? 1 : 0;
        break;
    case MLC_KEY_INT:
        s = mlc_cv_get_int(c, label, it, f);
        break;
    case MLC_KEY_NUMBER:
        s = mlc_cv_get_number(c, label, it, f);
        break;
    case MLC_KEY_INT_ARRAY:
    case MLC_KEY_NUMBER_ARRAY:
    case MLC_KEY_BOXES:
    case MLC_KEY_PARAMETERS: {
        const char *want = k->type == MLC_KEY_INT_ARRAY      ? "an array of integers"
                           : k->type == MLC_KEY_NUMBER_ARRAY ? "a number or an array of numbers"
                           : k->type == MLC_KEY_BOXES        ? "an array of box objects"
                                                             : "an array of parameter objects";
        int *count = field(cfg, k->count_offset);
        /* "one value for all" reads naturally as a bare number. */
        if (k->type == MLC_KEY_NUMBER_ARRAY && cJSON_IsNumber(it)) {
            double x;
            s = mlc_cv_get_number(c, label, it, &x);
            if (s != MLC_OK) return s;
            memset(f, 0, (size_t)k->capacity * sizeof(double));
            ((double *)f)[0] = x;
            *count = 1;
            break;
        }
        if (!cJSON_IsArray(it)) return mlc_cv_type_error(c, label, want, it);
        int n = cJSON_GetArraySize(it);
        if (n > k->capacity)
            return mlc_cv_failf(c, MLC_EINVAL, "key '%s' has %d elements; at most %d", label, n,
                                k->capacity);
        size_t elem = k->type == MLC_KEY_INT_ARRAY      ? sizeof(int)
                      : k->type == MLC_KEY_NUMBER_ARRAY ? sizeof(double)
                      : k->type == MLC_KEY_BOXES        ? sizeof(mlc_config_box)
                                                        : sizeof(mlc_config_param);
        memset(f, 0, (size_t)k->capacity * elem);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, it) {
            snprintf(lab, sizeof lab, "%s[%d]", label, i);
            if (k->type == MLC_KEY_INT_ARRAY)
                s = mlc_cv_get_int(c, lab, e, (int *)f + i);
            else if (k->type == MLC_KEY_NUMBER_ARRAY)
                s = mlc_cv_get_number(c, lab, e, (double *)f + i);
            else if (k->type == MLC_KEY_BOXES)
                s = mlc_cv_get_box(c, lab, e, (mlc_config_box *)f + i);
            else
                s = mlc_cv_get_param(c, lab, e, (mlc_config_param *)f + i);
            if (s != MLC_OK) return s;
            i++;
        }
        *count = n;
        break;
    }
    case MLC_KEY_REGION_MATERIALS:
        s = mlc_cv_get_region_materials(c, label, it, f, k->capacity, field(cfg, k->count_offset));
        break;
    case MLC_KEY_RANGE:
        s = mlc_cv_get_fixed_vec(c, label, it, 2, "[min, max] (an array of 2 numbers)", f);
        break;
    case MLC_KEY_VEC3:
        s = mlc_cv_get_fixed_vec(c, label, it, 3, "[x, y, z] (3 numbers)", f);
        break;
    case MLC_KEY_VEC3_OR_NULL: {
        int *set = field(cfg, k->count_offset);
        if (cJSON_IsNull(it)) {
            memset(f, 0, 3 * sizeof(double));
            *set = 0;
            break;
        }
        s = mlc_cv_get_fixed_vec(c, label, it, 3, "[x, y, z] (3 numbers) or null", f);
        if (s == MLC_OK) *set = 1;
        break;
    }
    case MLC_KEY_AXIS: {
        double *vec = field(cfg, k->count_offset);
        memset(f, 0, (size_t)k->capacity); /* keep the tail zero: configs compare by bytes */
        if (cJSON_IsString(it)) {
            const char *name = it->valuestring;
            if (strlen(name) >= (size_t)k->capacity || !axis_vector(name, vec))
                return mlc_cv_failf(c, MLC_EINVAL,
                                    "key '%s' = \"%.100s\" is invalid; valid: %s (e.g. "
                                    "--set %s=+z for a mesh whose up axis is z)",
                                    label, name, k->range, label);
            memcpy(f, name, strlen(name));
            break;
        }
        s = mlc_cv_get_fixed_vec(c, label, it, 3, "an axis name (\"+z\") or [x, y, z] (3 numbers)",
                                 vec);
        break;
    }
    }
    if (s != MLC_OK) return s;
    /* Per-key ranges are checked here too, so the message can name the file or --set. */
    char msg[800];
    if (check_key(cfg, k, msg, sizeof msg)) return mlc_cv_failf(c, MLC_EINVAL, "%s", msg);
    return MLC_OK;
}

/* ---- Defaults --------------------------------------------------------------------------- */
void mlc_config_defaults(mlc_config *cfg) {
    /* Zero everything, padding included, so equal settings mean equal bytes; then every key
     * its row's default, read like a value in a file (a test proves each one valid). */
    memset(cfg, 0, sizeof *cfg);
    mlc_cv_ctx c = {"(defaults)", NULL};
    FOR_EACH_KEY(sec, k) {
        cJSON *v = cJSON_Parse(k->default_json);
        if (v) apply_value(&c, field(cfg, sec->offset), k, k->name, v);
        cJSON_Delete(v);
    }
}

/* ---- Unknown keys: suggest the nearest valid one ---------------------------------------- */
static const char *leaf(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

/* Names other tools give these settings (pycma's popsize, maxiter and maxfevals, the λ and σ
 * of the CMA-ES papers, common simulator and CLI words), which no edit distance would lead to
 * our key. Only for the hint: the configuration never accepts them. */
static const struct {
    const char *key, *aliases; /* aliases: space-separated */
} key_aliases[] = {
    {"cmaes.population", "popsize pop_size population_size lambda lambda_ lam"},
    {"cmaes.sigma0", "sigma sigma_0 step_size stepsize"},
    {"cmaes.seed", "random_seed rng_seed"},
    {"cmaes.generations", "maxiter max_iter maxiters max_iterations maxgen max_generations ngen"},
    {"cmaes.budget", "maxfevals max_fevals maxevals max_evals evaluations"},
    {"parallel.threads", "nthreads num_threads n_jobs jobs"},
    {"sim.dt", "timestep time_step"},
    {"sim.steps", "nsteps num_steps"},
    {"material.density", "rho"},
    {"output.dir", "outdir output_dir"},
    {"mesh.path", "mesh"},
};

/* Whether `word` is one of the space-separated words of `list`. */
static int in_word_list(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; n && (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

/* The key nearest to `name`: a known name from another tool (for the whole name or its last
 * component), else by edit distance of the dotted names, or of the last components plus a
 * small charge, so "simulation.steps" and a misplaced "dt" still find their key. NULL when
 * nothing is near enough to be a plausible typo. */
static const char *suggest(const char *name) {
    for (size_t i = 0; i < sizeof key_aliases / sizeof key_aliases[0]; i++)
        if (in_word_list(key_aliases[i].aliases, name) ||
            in_word_list(key_aliases[i].aliases, leaf(name)))
            return key_aliases[i].key;
    int best = INT_MAX;
    const char *arg = NULL;
    FOR_EACH_KEY(sec, k) {
        const char *kn = k->name;
        int d = MLC_MIN(mlc_edit_distance(name, kn), mlc_edit_distance(leaf(name), leaf(kn)) + 2);
        if (d < best) best = d, arg = kn;
    }
    int limit = MLC_MAX(2, (int)strlen(name) / 3);
    return best <= limit ? arg : NULL;
}

static mlc_status unknown_key(const mlc_cv_ctx *c, const char *name) {
    const char *s = suggest(name);
    if (s) return mlc_cv_failf(c, MLC_EINVAL, "unknown key '%s'; did you mean '%s'?", name, s);
    char list[256] = "";
    for (int i = 0; i < mlc_config_nsections; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 mlc_config_sections[i].keys->name);
    return mlc_cv_failf(c, MLC_EINVAL, "unknown key '%s' (sections: %s)", name, list);
}

static int is_section(const char *name) {
    for (int s = 0; s < mlc_config_nsections; s++)
        if (strcmp(mlc_config_sections[s].keys->name, name) == 0) return 1;
    return 0;
}

/* Apply an object of sections, {"sim": {"dt": ...}, ...}. */
static mlc_status apply_sections(const mlc_cv_ctx *c, mlc_config *cfg, const cJSON *obj) {
    const mlc_key *seen[MAX_KEYS]; /* a key given twice is almost surely a mistake */
    int nseen = 0;
    const cJSON *sec;
    cJSON_ArrayForEach(sec, obj) {
        const char *sname = sec->string ? sec->string : "";
        /* "comment": free text (a string or an array of strings) describing the file, since
         * JSON has no comments; example configurations say there what they reproduce. */
        if (strcmp(sname, "comment") == 0) {
            int ok = cJSON_IsString(sec);
            if (cJSON_IsArray(sec)) {
                const cJSON *line;
                ok = 1;
                cJSON_ArrayForEach(line, sec) ok &= cJSON_IsString(line);
            }
            if (!ok) return mlc_cv_type_error(c, "comment", "a string or an array of strings", sec);
            continue;
        }
        if (!is_section(sname)) {
            /* Report the first full key inside, so a wrong section still gets a suggestion. */
            if (cJSON_IsObject(sec) && sec->child && sec->child->string) {
                char full[300];
                snprintf(full, sizeof full, "%s.%s", sname, sec->child->string);
                return unknown_key(c, full);
            }
            return unknown_key(c, sname);
        }
        if (!cJSON_IsObject(sec)) {
            char lab[160];
            snprintf(lab, sizeof lab, "%s", sname);
            return mlc_cv_type_error(c, lab, "an object of settings", sec);
        }
        const cJSON *item;
        cJSON_ArrayForEach(item, sec) {
            char full[300];
            snprintf(full, sizeof full, "%s.%s", sname, item->string ? item->string : "");
            const mlc_config_section *ks = NULL;
            const mlc_key *k = mlc_config_key_find(full, &ks);
            if (!k) return unknown_key(c, full);
            for (int i = 0; i < nseen; i++)
                if (seen[i] == k)
                    return mlc_cv_failf(c, MLC_EINVAL, "key '%s' is given twice", full);
            if (nseen < MAX_KEYS) seen[nseen++] = k;
            mlc_status s = apply_value(c, field(cfg, ks->offset), k, k->name, item);
            if (s != MLC_OK) return s;
        }
    }
    return MLC_OK;
}

static mlc_status apply_root(const mlc_cv_ctx *c, mlc_config *cfg, const cJSON *root) {
    char d[128];
    if (!cJSON_IsObject(root))
        return mlc_cv_failf(c, MLC_EINVAL,
                            "the top level must be a JSON object of sections, got %s",
                            mlc_cv_describe(root, d, sizeof d));
    /* A params.json from optimize: {"config": {...effective config...}, "parameters": [...],
     * "J": ..., "seed": ..., ...}. "config" is not a section name, so the shapes cannot be
     * confused. */
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(root, "config");
    if (conf) {
        if (!cJSON_IsObject(conf)) return mlc_cv_type_error(c, "config", "an object", conf);
        mlc_status s = apply_sections(c, cfg, conf);
        if (s != MLC_OK) return s;
        const cJSON *par = cJSON_GetObjectItemCaseSensitive(root, "parameters");
        if (par) {
            const mlc_config_section *ks = NULL;
            const mlc_key *k = mlc_config_key_find("actuation.parameters", &ks);
            s = apply_value(c, field(cfg, ks->offset), k, "parameters", par);
        }
        return s;
    }
    return apply_sections(c, cfg, root);
}

mlc_status mlc_config_apply_json(mlc_config *cfg, const cJSON *root, const char *source,
                                 mlc_err *err) {
    mlc_cv_ctx c = {source ? source : "(config)", err};
    /* Work on a copy (memcpy keeps the zeroed padding) and commit only on success. */
    mlc_config *work = mlc_malloc(sizeof *work);
    if (!work) return mlc_cv_failf(&c, MLC_ENOMEM, "out of memory");
    memcpy(work, cfg, sizeof *work);
    mlc_status s = apply_root(&c, work, root);
    if (s == MLC_OK) memcpy(cfg, work, sizeof *cfg);
    mlc_free(work);
    return s;
}

/* ---- Files ------------------------------------------------------------------------------ */
#define MAX_FILE_BYTES ((size_t)64 << 20) /* a config is kilobytes; refuse to slurp a disk */

/* Read a whole file into a NUL-terminated mlc_malloc buffer. */
static mlc_status read_all(const char *path, char **out, size_t *len, mlc_err *err) {
    mlc_status s = mlc_file_read_all(path, MAX_FILE_BYTES, "not a configuration", out, len, err);
    /* A configuration that cannot be read is a usage error (exit 2), not a runtime one. */
    if (s == MLC_EIO) s = err ? (err->code = MLC_EINVAL) : MLC_EINVAL;
    return s;
}

/* "PATH:LINE:COL: malformed JSON near '...'" for a parse failure at byte `pos`. */
static mlc_status syntax_error(const char *path, const char *text, size_t len, size_t pos,
                               mlc_err *err) {
    if (pos > len) pos = len;
    int line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n')
            line++, col = 1;
        else
            col++;
    }
    /* cJSON reports the byte where it gave up, which is often just past the culprit (after
     * "0.01,}" it points at the newline), so show a little of the line before it too. */
    size_t line_start = pos;
    while (line_start > 0 && text[line_start - 1] != '\n')
        line_start--;
    size_t from = pos - MLC_MIN(pos - line_start, (size_t)12);
    char near[40];
    size_t m = 0;
    while (from + m < len && m < 32 && text[from + m] != '\n' && text[from + m] != '\r') {
        unsigned char ch = (unsigned char)text[from + m];
        near[m] = (ch < 32 || ch == 127) ? ' ' : (char)ch;
        m++;
    }
    near[m] = '\0';
    if (m == 0 && pos >= len)
        return mlc_errf(err, MLC_EPARSE, "%s:%d:%d: malformed JSON near end of input", path, line,
                        col);
    return mlc_errf(err, MLC_EPARSE, "%s:%d:%d: malformed JSON near '%s'", path, line, col, near);
}

/* A relative mesh.path written in a configuration file is looked up next to the configuration
 * first, so a config and its mesh travel together and run from any directory
 * (examples/table1_bat.json says "../data/cat.off.gz"), the way #include resolves. It becomes
 * DIR/PATH, DIR being the config's directory as given, so the result is again relative to the
 * working directory like every other path. When nothing is there the path stays relative to
 * the working directory: that is how the configurations modalloco writes (config.json, the
 * "config" of a params.json) record it, and how earlier versions read it, so both keep
 * working (`--resume DIR` loads DIR/config.json). Paths from the command line (--set, a mesh
 * argument) are never rewritten. */
static mlc_status resolve_file_path(char *dst, const cJSON *root, const char *section,
                                    const char *key, const char *path, mlc_err *err) {
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, section);
    const cJSON *mp = sec ? cJSON_GetObjectItemCaseSensitive(sec, key) : NULL;
    if (!cJSON_IsString(mp) || !mp->valuestring[0] || mp->valuestring[0] == '/') return MLC_OK;
    const char *slash = strrchr(path, '/');
    if (!slash) return MLC_OK;             /* the config is in the working directory */
    int dir_len = (int)(slash - path) + 1; /* keep the slash ("/x.json" -> "/") */
    char joined[MLC_CONFIG_PATH_MAX];
    int n = snprintf(joined, sizeof joined, "%.*s%s", dir_len, path, mp->valuestring);
    if (n < 0 || (size_t)n >= sizeof joined)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: %s.%s taken relative to the configuration's directory is "
                        "longer than %zu bytes; give a shorter or absolute path",
                        path, section, key, sizeof joined - 1);
    /* A TetGen stem ("body.1") names body.1.node. */
    char node[sizeof joined + 8];
    snprintf(node, sizeof node, "%s.node", joined);
    if (mlc_file_exists(joined) || mlc_file_exists(node)) memcpy(dst, joined, (size_t)n + 1);
    return MLC_OK;
}

/* mesh.path, regions.file (a label file travels with its mesh), contact.heightfield and
 * objective.path resolve the same way. */
static mlc_status resolve_mesh_path(mlc_config *cfg, const cJSON *root, const char *path,
                                    mlc_err *err) {
    mlc_status s = resolve_file_path(cfg->mesh.path, root, "mesh", "path", path, err);
    if (s == MLC_OK) s = resolve_file_path(cfg->regions.file, root, "regions", "file", path, err);
    if (s == MLC_OK)
        s = resolve_file_path(cfg->contact.heightfield, root, "contact", "heightfield", path, err);
    if (s == MLC_OK)
        s = resolve_file_path(cfg->objective.path, root, "objective", "path", path, err);
    return s;
}

mlc_status mlc_config_load_file(mlc_config *cfg, const char *path, mlc_err *err) {
    char *text = NULL;
    size_t len = 0;
    mlc_status s = read_all(path, &text, &len, err);
    if (s != MLC_OK) return s;
    /* Editors on some systems prepend a UTF-8 byte-order mark; cJSON does not skip it. */
    size_t skip = (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
    /* The length includes the NUL: with require_null_terminated cJSON looks for it inside the
     * buffer, which is also what rejects trailing garbage ("{} x"). */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text + skip, len - skip + 1, &end, 1);
    if (!root) {
        size_t pos = end ? (size_t)(end - text) : skip;
        s = syntax_error(path, text, len, pos, err);
    } else {
        s = mlc_config_apply_json(cfg, root, path, err);
        if (s == MLC_OK) s = resolve_mesh_path(cfg, root, path, err);
        cJSON_Delete(root);
    }
    mlc_free(text);
    return s;
}

/* ---- --set ------------------------------------------------------------------------------ */
mlc_status mlc_config_set(mlc_config *cfg, const char *assignment, mlc_err *err) {
    mlc_cv_ctx c = {"--set", err};
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return mlc_cv_failf(&c, MLC_EINVAL, "expected KEY=VALUE (e.g. sim.steps=500), got '%s'",
                            assignment);
    size_t klen = (size_t)(eq - assignment);
    if (klen >= 256) return mlc_cv_failf(&c, MLC_EINVAL, "key '%.40s...' is too long", assignment);
    char key[256];
    memcpy(key, assignment, klen);
    key[klen] = '\0';
    const char *text = eq + 1;

    /* JSON when it parses as a whole, else a bare string; string keys take any non-string
     * literal verbatim (output.dir=123 means the directory "123"). */
    cJSON *value = cJSON_ParseWithOpts(text, NULL, 1);
    const mlc_key *k = mlc_config_key_find(key, NULL);
    if (!value ||
        (k && (k->type == MLC_KEY_STRING || k->type == MLC_KEY_ENUM) && !cJSON_IsString(value))) {
        cJSON_Delete(value);
        value = cJSON_CreateString(text);
    }
    cJSON *root = cJSON_CreateObject();
    mlc_status s = MLC_OK;
    if (!value || !root) {
        cJSON_Delete(value);
        s = mlc_cv_failf(&c, MLC_ENOMEM, "out of memory");
        goto done;
    }
    /* Build {"section": {"rest": value}} (or {"key": value} for a bare section) and reuse the
     * file path, so --set gets the same checks and messages as a file. */
    char *dot = strchr(key, '.');
    if (dot) {
        *dot = '\0';
        cJSON *sec = cJSON_CreateObject();
        if (!sec || !cJSON_AddItemToObject(root, key, sec)) {
            cJSON_Delete(sec);
            cJSON_Delete(value);
            s = mlc_cv_failf(&c, MLC_ENOMEM, "out of memory");
            goto done;
        }
        if (!cJSON_AddItemToObject(sec, dot + 1, value)) {
            cJSON_Delete(value);
            s = mlc_cv_failf(&c, MLC_ENOMEM, "out of memory");
            goto done;
        }
    } else if (!cJSON_AddItemToObject(root, key, value)) {
        cJSON_Delete(value);
        s = mlc_cv_failf(&c, MLC_ENOMEM, "out of memory");
        goto done;
    }
    s = mlc_config_apply_json(cfg, root, "--set", err);
done:
    cJSON_Delete(root);
    return s;
}

mlc_status mlc_config_resolve_local_modes(mlc_config *cfg, const cJSON *base_obj,
                                          const char *base_path, const char *source,
                                          const char *const *sets, int nsets, mlc_err *err) {
    if (cfg->actuation.local_modes <= 0 || cfg->actuation.nmode_list > 0) return MLC_OK;
    mlc_config *probe = mlc_malloc(sizeof *probe);
    if (!probe) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    mlc_config_defaults(probe);
    probe->actuation.modes = -1; /* unset: a layer that gives actuation.modes overwrites it */
    mlc_status s = MLC_OK;
    size_t n = base_path ? strlen(base_path) : 0;
    if (base_obj)
        s = mlc_config_apply_json(probe, base_obj, source, err);
    else if (n >= 5 && strcmp(base_path + n - 5, ".json") == 0)
        s = mlc_config_load_file(probe, base_path, err);
    for (int i = 0; s == MLC_OK && i < nsets; i++)
        s = mlc_config_set(probe, sets[i], err);
    if (s == MLC_OK && probe->actuation.modes == -1) cfg->actuation.modes = 0;
    mlc_free(probe);
    return s;
}

/* ---- Validation ------------------------------------------------------------------------- */
mlc_status mlc_config_validate(const mlc_config *cfg, mlc_err *err) {
    char msg[800];
    /* Every key alone first, then each module's rules between its keys. */
    FOR_EACH_KEY(sec, k) {
        if (check_key(cfield(cfg, sec->offset), k, msg, sizeof msg))
            return mlc_errf(err, MLC_EINVAL, "%s", msg);
    }
    for (int s = 0; s < mlc_config_nsections; s++) {
        const mlc_config_section *sec = &mlc_config_sections[s];
        mlc_status st = sec->keys->check ? sec->keys->check(cfield(cfg, sec->offset), err) : MLC_OK;
        if (st != MLC_OK) return st;
    }
    return MLC_OK;
}

static cJSON *value_to_cjson(const void *cfg, const mlc_key *k, int exact) {
    const void *f = cfield(cfg, k->offset);
    switch (k->type) {
    case MLC_KEY_STRING:
        return cJSON_CreateString(f);
    case MLC_KEY_ENUM: {
        char name[64];
        return cJSON_CreateString(
            mlc_key_choice_name(k->choices, *(const int *)f, name, sizeof name));
    }
    case MLC_KEY_BOOL:
        return cJSON_CreateBool(*(const int *)f != 0);
    case MLC_KEY_INT:
        return cJSON_CreateNumber(*(const int *)f);
    case MLC_KEY_NUMBER:
        return mlc_cv_num(*(const double *)f, exact);
    case MLC_KEY_INT_ARRAY: {
        const int *a = f;
        int n = key_count(cfg, k);
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; arr && i < n; i++)
            if (!mlc_cv_add(arr, NULL, cJSON_CreateNumber(a[i]))) {
                cJSON_Delete(arr);
                return NULL;
            }
        return arr;
    }
    case MLC_KEY_NUMBER_ARRAY:
        return mlc_cv_number_array(f, key_count(cfg, k), exact);
    case MLC_KEY_RANGE:
        return mlc_cv_number_array(f, 2, exact);
    case MLC_KEY_VEC3:
        return mlc_cv_number_array(f, 3, exact);
    case MLC_KEY_VEC3_OR_NULL:
        if (!key_count(cfg, k)) return cJSON_CreateNull();
        return mlc_cv_number_array(f, 3, exact);
    case MLC_KEY_AXIS:
        if (((const char *)f)[0]) return cJSON_CreateString(f);
        return mlc_cv_number_array(cfield(cfg, k->count_offset), 3, exact);
    case MLC_KEY_PARAMETERS:
        return mlc_cv_params_to_cjson(f, key_count(cfg, k), exact);
    case MLC_KEY_REGION_MATERIALS:
        return mlc_cv_regions_to_cjson(f, key_count(cfg, k), exact);
    case MLC_KEY_BOXES:
        return mlc_cv_boxes_to_cjson(f, key_count(cfg, k), exact);
    }
    return NULL;
}

static cJSON *to_tree(const mlc_config *cfg, int exact) {
    cJSON *root = cJSON_CreateObject();
    for (int s = 0; root && s < mlc_config_nsections; s++) {
        const mlc_key_section *ks = mlc_config_sections[s].keys;
        const void *base = cfield(cfg, mlc_config_sections[s].offset);
        cJSON *sec = cJSON_CreateObject();
        if (!mlc_cv_add(root, ks->name, sec)) goto fail;
        for (int i = 0; i < ks->nkeys; i++)
            if (!mlc_cv_add(sec, ks->keys[i].name + strlen(ks->name) + 1,
                            value_to_cjson(base, &ks->keys[i], exact)))
                goto fail;
    }
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}

struct cJSON *mlc_config_to_cjson(const mlc_config *cfg) {
    return to_tree(cfg, 0);
}

char *mlc_config_to_json(const mlc_config *cfg) {
    cJSON *root = to_tree(cfg, 1);
    if (!root) return NULL;
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return NULL;
    /* Copy into our allocator so callers free everything the same way (mlc_free). */
    size_t n = strlen(text);
    char *out = mlc_malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        out[n] = '\n';
        out[n + 1] = '\0';
    }
    cJSON_free(text);
    return out;
}
