/* config_values.c: the JSON shapes of the configuration's values (config_values.h): the
 * leaf parsers and their messages, and the three structured values (actuation.parameters,
 * material.regions, contact.boxes) read, checked and written. */
#include "internal/config_values.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest of %.15g / %.17g that reads back exactly, so messages say 0.1, not 0.1000...01. */
const char *mlc_cv_fmt_num(double x, char *buf, size_t n) {
    snprintf(buf, n, "%.15g", x);
    if (strtod(buf, NULL) != x) snprintf(buf, n, "%.17g", x);
    return buf;
}

/* "[a, b, c]" of n doubles. */
const char *mlc_cv_fmt_vec(const double *v, int n, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < cap; i++) {
        char num[32];
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "[",
                                 mlc_cv_fmt_num(v[i], num, sizeof num));
    }
    if (used < cap) snprintf(buf + used, cap - used, n ? "]" : "[]");
    return buf;
}

/* What a JSON value is, for "got ..." in messages: "string \"abc\"", "number 3.5", ... */
const char *mlc_cv_describe(const cJSON *it, char *buf, size_t n) {
    char num[32];
    if (cJSON_IsString(it)) {
        const char *s = it->valuestring;
        if (strlen(s) > 60)
            snprintf(buf, n, "string \"%.60s...\"", s);
        else
            snprintf(buf, n, "string \"%s\"", s);
    } else if (cJSON_IsNumber(it)) {
        snprintf(buf, n, "number %s", mlc_cv_fmt_num(it->valuedouble, num, sizeof num));
    } else if (cJSON_IsBool(it)) {
        snprintf(buf, n, "boolean %s", cJSON_IsTrue(it) ? "true" : "false");
    } else if (cJSON_IsNull(it)) {
        snprintf(buf, n, "null");
    } else if (cJSON_IsArray(it)) {
        snprintf(buf, n, "array of %d", cJSON_GetArraySize(it));
    } else if (cJSON_IsObject(it)) {
        snprintf(buf, n, "object");
    } else {
        snprintf(buf, n, "invalid value");
    }
    return buf;
}

mlc_status mlc_cv_failf(const mlc_cv_ctx *c, mlc_status code, const char *fmt, ...) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mlc_errf(c->err, code, "%s: %s", c->source, msg);
}

mlc_status mlc_cv_type_error(const mlc_cv_ctx *c, const char *label, const char *want,
                             const cJSON *got) {
    char d[128];
    return mlc_cv_failf(c, MLC_EINVAL, "key '%s' must be %s, got %s", label, want,
                        mlc_cv_describe(got, d, sizeof d));
}

/* ---- Leaf parsers ----------------------------------------------------------------------- */
/* A JSON number that is finite. cJSON turns overflowing literals (1e999) into ±inf. */
mlc_status mlc_cv_get_number(const mlc_cv_ctx *c, const char *label, const cJSON *it, double *out) {
    if (!cJSON_IsNumber(it)) return mlc_cv_type_error(c, label, "a number", it);
    if (!isfinite(it->valuedouble))
        return mlc_cv_failf(c, MLC_EINVAL,
                            "key '%s' is not a finite number (the literal overflows)", label);
    *out = it->valuedouble;
    return MLC_OK;
}

/* A JSON number with an integral value that fits in int: 3 and 3.0 pass, 3.5 and 1e20 fail.
 * cJSON's own valueint saturates silently, so we judge the double. */
mlc_status mlc_cv_get_int(const mlc_cv_ctx *c, const char *label, const cJSON *it, int *out) {
    char num[32];
    if (!cJSON_IsNumber(it)) return mlc_cv_type_error(c, label, "an integer", it);
    double d = it->valuedouble;
    if (!isfinite(d))
        return mlc_cv_failf(c, MLC_EINVAL,
                            "key '%s' must be an integer, got a number that overflows", label);
    if (floor(d) != d)
        return mlc_cv_failf(c, MLC_EINVAL, "key '%s' must be an integer, got %s", label,
                            mlc_cv_fmt_num(d, num, sizeof num));
    if (d < (double)INT_MIN || d > (double)INT_MAX)
        return mlc_cv_failf(c, MLC_EINVAL, "key '%s' = %s does not fit in an integer (%d..%d)",
                            label, mlc_cv_fmt_num(d, num, sizeof num), INT_MIN, INT_MAX);
    *out = (int)d;
    return MLC_OK;
}

/* A fixed-length array of numbers ([min,max], [x,y,z]). */
mlc_status mlc_cv_get_fixed_vec(const mlc_cv_ctx *c, const char *label, const cJSON *it, int n,
                                const char *want, double *out) {
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != n)
        return mlc_cv_type_error(c, label, want, it);
    double tmp[3];
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, it) {
        char lab[160];
        snprintf(lab, sizeof lab, "%s[%d]", label, i);
        mlc_status s = mlc_cv_get_number(c, lab, e, &tmp[i]);
        if (s != MLC_OK) return s;
        i++;
    }
    memcpy(out, tmp, (size_t)n * sizeof *out);
    return MLC_OK;
}

/* The members of an object of named numbers ({"amplitude": A, "period": T, ...}): member
 * names[q] goes to *dst[q] and sets have[q]; a member of another name is rejected, naming the
 * `expected` ones. */
static mlc_status get_number_members(const mlc_cv_ctx *c, const char *label, const cJSON *obj,
                                     const char *const *names, int n, double *const *dst, int *have,
                                     const char *expected) {
    const cJSON *f;
    cJSON_ArrayForEach(f, obj) {
        int w = -1;
        for (int q = 0; q < n; q++)
            if (f->string && strcmp(f->string, names[q]) == 0) w = q;
        if (w < 0)
            return mlc_cv_failf(c, MLC_EINVAL, "unknown member '%s' in '%s'; expected %s",
                                f->string ? f->string : "", label, expected);
        char flab[280];
        snprintf(flab, sizeof flab, "%s.%s", label, names[w]);
        mlc_status s = mlc_cv_get_number(c, flab, f, dst[w]);
        if (s != MLC_OK) return s;
        have[w] = 1;
    }
    return MLC_OK;
}

/* One object of "parameters": {"mode": i, "sinusoids": [{"amplitude", "period", "phase"}]}.
 * Unknown members are rejected like unknown keys: a typo ("perod") must not silently vanish. */
mlc_status mlc_cv_get_param(const mlc_cv_ctx *c, const char *label, const cJSON *it,
                            mlc_config_param *p) {
    if (!cJSON_IsObject(it))
        return mlc_cv_type_error(c, label, "an object {\"mode\": i, \"sinusoids\": [...]}", it);
    memset(p, 0, sizeof *p);
    const cJSON *mode = NULL, *sins = NULL, *m;
    cJSON_ArrayForEach(m, it) {
        if (m->string && strcmp(m->string, "mode") == 0)
            mode = m;
        else if (m->string && strcmp(m->string, "sinusoids") == 0)
            sins = m;
        else
            return mlc_cv_failf(c, MLC_EINVAL,
                                "unknown member '%s' in '%s'; expected 'mode' and 'sinusoids'",
                                m->string ? m->string : "", label);
    }
    char lab[200];
    if (!mode) return mlc_cv_failf(c, MLC_EINVAL, "'%s' lacks member 'mode'", label);
    if (!sins) return mlc_cv_failf(c, MLC_EINVAL, "'%s' lacks member 'sinusoids'", label);
    snprintf(lab, sizeof lab, "%s.mode", label);
    mlc_status s = mlc_cv_get_int(c, lab, mode, &p->mode);
    if (s != MLC_OK) return s;
    snprintf(lab, sizeof lab, "%s.sinusoids", label);
    if (!cJSON_IsArray(sins)) return mlc_cv_type_error(c, lab, "an array of sinusoids", sins);
    int ns = cJSON_GetArraySize(sins);
    if (ns < 1 || ns > MLC_CONFIG_MAX_SINUSOIDS)
        return mlc_cv_failf(c, MLC_EINVAL, "key '%s' has %d sinusoids; valid: 1..%d", lab, ns,
                            MLC_CONFIG_MAX_SINUSOIDS);
    int j = 0;
    const cJSON *sj;
    cJSON_ArrayForEach(sj, sins) {
        char slab[240];
        snprintf(slab, sizeof slab, "%s[%d]", lab, j);
        if (!cJSON_IsObject(sj))
            return mlc_cv_type_error(
                c, slab, "an object {\"amplitude\": A, \"period\": T, \"phase\": θ}", sj);
        static const char *const names[3] = {"amplitude", "period", "phase"};
        double *dst[3] = {&p->sinusoids[j].amplitude, &p->sinusoids[j].period,
                          &p->sinusoids[j].phase};
        int have[3] = {0, 0, 0};
        s = get_number_members(c, slab, sj, names, 3, dst, have,
                               "'amplitude', 'period' and 'phase'");
        if (s != MLC_OK) return s;
        for (int q = 0; q < 3; q++)
            if (!have[q])
                return mlc_cv_failf(c, MLC_EINVAL, "'%s' lacks member '%s'", slab, names[q]);
        j++;
    }
    p->nsinusoids = ns;
    return MLC_OK;
}

/* The members of a material.regions entry, in MLC_REGION_* bit order. */
static const char *const region_members[4] = {"mu", "gamma", "density", "friction"};

static double region_get(const mlc_config_region_material *r, int q) {
    return q == 0 ? r->mu : q == 1 ? r->gamma : q == 2 ? r->density : r->friction;
}

/* material.regions: {"3": {"mu": 1e7, "friction": 0.1}, ...}. A label is an integer written
 * as a string (JSON member names are strings); unknown members are rejected. */
mlc_status mlc_cv_get_region_materials(const mlc_cv_ctx *c, const char *label, const cJSON *it,
                                       mlc_config_region_material *out, int cap, int *count) {
    if (!cJSON_IsObject(it))
        return mlc_cv_type_error(c, label,
                                 "an object of region label → {\"mu\", \"gamma\", \"density\", "
                                 "\"friction\"}",
                                 it);
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, it) {
        const char *name = r->string ? r->string : "";
        char lab[200];
        snprintf(lab, sizeof lab, "%s.%s", label, name);
        char *end = NULL;
        errno = 0;
        long v = strtol(name, &end, 10);
        if (!name[0] || *end || errno || v < INT_MIN || v > INT_MAX)
            return mlc_cv_failf(c, MLC_EINVAL,
                                "key '%s': region labels are integers written as strings (\"3\"), "
                                "got \"%.60s\"",
                                label, name);
        if (n == cap)
            return mlc_cv_failf(c, MLC_EINVAL, "key '%s' has more than %d regions", label, cap);
        mlc_config_region_material *m = out + n;
        memset(m, 0, sizeof *m);
        m->label = (int)v;
        if (!cJSON_IsObject(r))
            return mlc_cv_type_error(c, lab,
                                     "an object {\"mu\", \"gamma\", \"density\", \"friction\"} "
                                     "(each optional)",
                                     r);
        double *const dst[4] = {&m->mu, &m->gamma, &m->density, &m->friction};
        int have[4] = {0, 0, 0, 0};
        mlc_status s = get_number_members(c, lab, r, region_members, 4, dst, have,
                                          "'mu', 'gamma', 'density' or 'friction'");
        if (s != MLC_OK) return s;
        for (int q = 0; q < 4; q++)
            m->set |= have[q] << q;
        n++;
    }
    /* Entries past n stay zero: configs holding the same settings compare equal. */
    memset(out + n, 0, (size_t)(cap - n) * sizeof *out);
    *count = n;
    return MLC_OK;
}

/* One object of contact.boxes: {"min": [x,y,z], "max": [x,y,z], "friction": μ}. */
mlc_status mlc_cv_get_box(const mlc_cv_ctx *c, const char *label, const cJSON *it,
                          mlc_config_box *b) {
    if (!cJSON_IsObject(it))
        return mlc_cv_type_error(c, label, "an object {\"min\": [x,y,z], \"max\": [x,y,z]}", it);
    memset(b, 0, sizeof *b);
    const cJSON *m;
    int have = 0;
    char lab[200];
    cJSON_ArrayForEach(m, it) {
        const char *name = m->string ? m->string : "";
        snprintf(lab, sizeof lab, "%s.%s", label, name);
        mlc_status s;
        if (strcmp(name, "min") == 0)
            s = mlc_cv_get_fixed_vec(c, lab, m, 3, "[x, y, z] (3 numbers)", b->min), have |= 1;
        else if (strcmp(name, "max") == 0)
            s = mlc_cv_get_fixed_vec(c, lab, m, 3, "[x, y, z] (3 numbers)", b->max), have |= 2;
        else if (strcmp(name, "friction") == 0)
            s = mlc_cv_get_number(c, lab, m, &b->friction), b->has_friction = 1;
        else
            return mlc_cv_failf(c, MLC_EINVAL,
                                "unknown member '%s' in '%s'; expected 'min', 'max' and optionally "
                                "'friction'",
                                name, label);
        if (s != MLC_OK) return s;
    }
    if (!(have & 1)) return mlc_cv_failf(c, MLC_EINVAL, "'%s' lacks member 'min'", label);
    if (!(have & 2)) return mlc_cv_failf(c, MLC_EINVAL, "'%s' lacks member 'max'", label);
    return MLC_OK;
}

/* Every terrain box has min below max on each axis and a friction >= 0 when it gives one. */
int mlc_cv_check_boxes(const void *cfg, const mlc_key *k, const void *f, char *msg, size_t n) {
    char v[200];
    const mlc_config_box *b = f;
    int cnt = mlc_cv_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        for (int a = 0; a < 3; a++)
            if (!(b[i].min[a] < b[i].max[a])) {
                snprintf(msg, n,
                         "key '%s[%d]': min[%d] = %s is not below max[%d] = %s; give the "
                         "box's smaller corner as \"min\" and the larger as \"max\"",
                         k->name, i, a, mlc_cv_fmt_num(b[i].min[a], v, 32), a,
                         mlc_cv_fmt_num(b[i].max[a], v + 32, 32));
                return 1;
            }
        if (b[i].has_friction && !(b[i].friction >= 0)) {
            snprintf(msg, n, "key '%s[%d].friction' = %s is out of range; valid: >= 0", k->name, i,
                     mlc_cv_fmt_num(b[i].friction, v, 32));
            return 1;
        }
    }
    return 0;
}

/* Every actuated mode named once, with 1..MLC_CONFIG_MAX_SINUSOIDS finite sinusoids of positive
 * period. */
int mlc_cv_check_parameters(const void *cfg, const mlc_key *k, const void *f, char *msg, size_t n) {
    char v[200];
    const mlc_config_param *p = f;
    int cnt = mlc_cv_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        if (p[i].mode < 0) {
            snprintf(msg, n, "key '%s[%d].mode' = %d is out of range; valid: >= 0", k->name, i,
                     p[i].mode);
            return 1;
        }
        for (int j = 0; j < i; j++)
            if (p[j].mode == p[i].mode) {
                snprintf(msg, n, "key '%s' gives mode %d twice (entries %d and %d)", k->name,
                         p[i].mode, j, i);
                return 1;
            }
        if (p[i].nsinusoids < 1 || p[i].nsinusoids > MLC_CONFIG_MAX_SINUSOIDS) {
            snprintf(msg, n, "key '%s[%d].sinusoids' has %d entries; valid: 1..%d", k->name, i,
                     p[i].nsinusoids, MLC_CONFIG_MAX_SINUSOIDS);
            return 1;
        }
        for (int j = 0; j < p[i].nsinusoids; j++) {
            const mlc_config_sinusoid *s = &p[i].sinusoids[j];
            if (!isfinite(s->amplitude) || !isfinite(s->phase) || !isfinite(s->period) ||
                !(s->period > 0)) {
                snprintf(msg, n,
                         "key '%s[%d].sinusoids[%d]' = {amplitude %s, period %s, phase "
                         "%s} is invalid; valid: finite values, period > 0",
                         k->name, i, j, mlc_cv_fmt_num(s->amplitude, v, 32),
                         mlc_cv_fmt_num(s->period, v + 32, 32),
                         mlc_cv_fmt_num(s->phase, v + 64, 32));
                return 1;
            }
        }
    }
    return 0;
}

/* Every region named once, its given mu, gamma, density > 0 and friction >= 0. */
int mlc_cv_check_region_materials(const void *cfg, const mlc_key *k, const void *f, char *msg,
                                  size_t n) {
    char v[200];
    const mlc_config_region_material *r = f;
    int cnt = mlc_cv_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        for (int j = 0; j < i; j++)
            if (r[j].label == r[i].label) {
                snprintf(msg, n, "key '%s' gives region %d twice", k->name, r[i].label);
                return 1;
            }
        for (int q = 0; q < 4; q++) {
            double x = region_get(&r[i], q);
            if (!(r[i].set & (1 << q))) continue;
            if (!isfinite(x) || (q < 3 ? !(x > 0) : !(x >= 0))) {
                snprintf(msg, n, "key '%s.%d.%s' = %s is out of range; valid: %s", k->name,
                         r[i].label, region_members[q], mlc_cv_fmt_num(x, v, sizeof v),
                         q < 3 ? "> 0" : ">= 0");
                return 1;
            }
        }
    }
    return 0;
}

/* ---- Output of the structured values
 * ----------------------------------------------------------------------------- */
/* Add `item` to `obj`; deletes it and returns 0 when either allocation failed. */
int mlc_cv_add(cJSON *obj, const char *name, cJSON *item) {
    if (!item) return 0;
    if (obj == NULL ||
        !(name ? cJSON_AddItemToObject(obj, name, item) : cJSON_AddItemToArray(obj, item))) {
        cJSON_Delete(item);
        return 0;
    }
    return 1;
}

/* cJSON prints a double with %.15g and keeps that when it reads back within an epsilon, which
 * can lose the last bit (-1.0000000000000002 becomes -1). For the text form we print numbers
 * ourselves, shortest exact form, as raw items; the tree form keeps ordinary numbers so that
 * callers can read it. Non-finite values (never valid) print as null, as cJSON would. */
cJSON *mlc_cv_num(double x, int exact) {
    if (!exact) return cJSON_CreateNumber(x);
    if (!isfinite(x)) return cJSON_CreateNull();
    char buf[32];
    return cJSON_CreateRaw(mlc_cv_fmt_num(x, buf, sizeof buf));
}

cJSON *mlc_cv_number_array(const double *v, int n, int exact) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++)
        if (!mlc_cv_add(arr, NULL, mlc_cv_num(v[i], exact))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

cJSON *mlc_cv_params_to_cjson(const mlc_config_param *p, int n, int exact) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!mlc_cv_add(arr, NULL, o)) goto fail;
        cJSON *sins = cJSON_CreateArray();
        if (!mlc_cv_add(o, "mode", cJSON_CreateNumber(p[i].mode)) ||
            !mlc_cv_add(o, "sinusoids", sins))
            goto fail;
        for (int j = 0; j < p[i].nsinusoids; j++) {
            const mlc_config_sinusoid *s = &p[i].sinusoids[j];
            cJSON *so = cJSON_CreateObject();
            if (!mlc_cv_add(sins, NULL, so) ||
                !mlc_cv_add(so, "amplitude", mlc_cv_num(s->amplitude, exact)) ||
                !mlc_cv_add(so, "period", mlc_cv_num(s->period, exact)) ||
                !mlc_cv_add(so, "phase", mlc_cv_num(s->phase, exact)))
                goto fail;
        }
    }
    return arr;
fail:
    cJSON_Delete(arr);
    return NULL;
}

/* material.regions as {"label": {"mu": ..., ...}}: only the members given. */
cJSON *mlc_cv_regions_to_cjson(const mlc_config_region_material *r, int n, int exact) {
    cJSON *obj = cJSON_CreateObject();
    for (int i = 0; obj && i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", r[i].label);
        cJSON *o = cJSON_CreateObject();
        if (!mlc_cv_add(obj, name, o)) goto fail;
        for (int q = 0; q < 4; q++)
            if ((r[i].set & (1 << q)) &&
                !mlc_cv_add(o, region_members[q], mlc_cv_num(region_get(&r[i], q), exact)))
                goto fail;
    }
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}

/* contact.boxes as [{"min", "max", "friction" when given}]. */
cJSON *mlc_cv_boxes_to_cjson(const mlc_config_box *b, int n, int exact) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!mlc_cv_add(arr, NULL, o) ||
            !mlc_cv_add(o, "min", mlc_cv_number_array(b[i].min, 3, exact)) ||
            !mlc_cv_add(o, "max", mlc_cv_number_array(b[i].max, 3, exact)) ||
            (b[i].has_friction && !mlc_cv_add(o, "friction", mlc_cv_num(b[i].friction, exact)))) {
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}
