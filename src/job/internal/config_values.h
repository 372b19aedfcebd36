/* config_values.h: the JSON shapes of the configuration's values, for config.c (internal to
 * src/job). config.c walks the modules' key tables and dispatches on a row's type; the
 * readers, checks and writers of the values themselves are here: finite numbers, integers,
 * fixed-size vectors, and the three structured values (actuation.parameters, material.regions,
 * contact.boxes).
 *
 * Readers take a context naming the input ("run.json", "--set") and a label naming the key
 * ("actuation.parameters[2].mode"); messages read "SOURCE: key 'LABEL' must be ..., got ...".
 * Checks write "key '...' = VALUE is ...; valid: ..." into msg and return 1 (0 = valid); `cfg`
 * is the section's settings struct the row's offsets point into.
 */
#ifndef MODALLOCO_CONFIG_VALUES_H
#define MODALLOCO_CONFIG_VALUES_H

#include <cjson/cJSON.h>

#include "config.h"

/* Where the input came from and where errors go. */
typedef struct mlc_cv_ctx {
    const char *source;
    mlc_err *err;
} mlc_cv_ctx;

/* The entry count of a list key (or the "given" flag of a VEC3_OR_NULL key). */
static inline int mlc_cv_count(const void *cfg, const mlc_key *k) {
    return *(const int *)((const char *)cfg + k->count_offset);
}

/* Shortest of %.15g / %.17g that reads back exactly, into buf; returns buf. */
const char *mlc_cv_fmt_num(double x, char *buf, size_t n);
/* "[a, b, c]" of n doubles into buf; returns buf. */
const char *mlc_cv_fmt_vec(const double *v, int n, char *buf, size_t cap);
/* What a JSON value is, for "got ...": "string \"abc\"", "number 3.5", ... */
const char *mlc_cv_describe(const cJSON *it, char *buf, size_t n);

/* "SOURCE: message" into c->err; returns code. */
mlc_status mlc_cv_failf(const mlc_cv_ctx *c, mlc_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "SOURCE: key 'LABEL' must be WANT, got ..."; returns MLC_EINVAL. */
mlc_status mlc_cv_type_error(const mlc_cv_ctx *c, const char *label, const char *want,
                             const cJSON *got);

/* Leaf readers: a finite number, an integer (3.0 accepted), n finite numbers. */
mlc_status mlc_cv_get_number(const mlc_cv_ctx *c, const char *label, const cJSON *it, double *out);
mlc_status mlc_cv_get_int(const mlc_cv_ctx *c, const char *label, const cJSON *it, int *out);
mlc_status mlc_cv_get_fixed_vec(const mlc_cv_ctx *c, const char *label, const cJSON *it, int n,
                                const char *want, double *out);

/* The structured values: one parameters entry, the whole material.regions object (at most cap
 * entries, *count set), one box. */
mlc_status mlc_cv_get_param(const mlc_cv_ctx *c, const char *label, const cJSON *it,
                            mlc_config_param *p);
mlc_status mlc_cv_get_region_materials(const mlc_cv_ctx *c, const char *label, const cJSON *it,
                                       mlc_config_region_material *out, int cap, int *count);
mlc_status mlc_cv_get_box(const mlc_cv_ctx *c, const char *label, const cJSON *it,
                          mlc_config_box *b);
int mlc_cv_check_boxes(const void *cfg, const mlc_key *k, const void *f, char *msg, size_t n);
int mlc_cv_check_parameters(const void *cfg, const mlc_key *k, const void *f, char *msg, size_t n);
int mlc_cv_check_region_materials(const void *cfg, const mlc_key *k, const void *f, char *msg,
                                  size_t n);

/* Writers. `exact`: numbers as raw shortest-exact text (config.json), else ordinary cJSON
 * numbers (cJSON_Print may drop a last bit). All return NULL when out of memory. */
int mlc_cv_add(cJSON *obj, const char *name, cJSON *item); /* 0: failed, item deleted */
cJSON *mlc_cv_num(double x, int exact);
cJSON *mlc_cv_number_array(const double *v, int n, int exact);
cJSON *mlc_cv_params_to_cjson(const mlc_config_param *p, int n, int exact);
cJSON *mlc_cv_regions_to_cjson(const mlc_config_region_material *r, int n, int exact);
cJSON *mlc_cv_boxes_to_cjson(const mlc_config_box *b, int n, int exact);

#endif
