/* keys.h: how a module describes its configuration keys (docs/config.md).
 *
 * Every module that has settings a user can give declares them next to its settings struct as
 * one table of mlc_key rows and one mlc_key_section (src/sim/sim_keys.c for sim.*, ...): the
 * dotted name, the JSON shape, where the value lives in the module's settings struct
 * (offsetof), its bounds, its one default and one line of documentation. The section also
 * names the module's check of the rules that involve several of its keys.
 *
 * The loader (src/job/config.c) walks the sections: it sets the defaults from the rows, reads
 * JSON files and --set, checks the bounds, prints the effective configuration; the
 * documentation tool (tools/make_config_doc.c) prints docs/config.md's key tables from the same
 * rows. So a key is added in one place: a field in the module's settings struct and a row.
 *
 * The tables are plain constant data, owned by their module, never freed.
 */
#ifndef MODALLOCO_KEYS_H
#define MODALLOCO_KEYS_H

#include <stddef.h>

#include "base.h"

#define MLC_CONFIG_PATH_MAX 4096 /* bytes of a path, including the terminating NUL */
#define MLC_CONFIG_WORD_MAX 16   /* bytes of an enumerated string ("locomotion") + NUL */

/* The JSON shape of a key and the C type of its field. */
typedef enum mlc_key_type {
    MLC_KEY_STRING,           /* char array of `capacity` bytes; `choices` may restrict it */
    MLC_KEY_ENUM,             /* int: the index of its name in `choices` ("a|b|c"); JSON: the
                               * name. Strings become numbers once, here, where they are read */
    MLC_KEY_BOOL,             /* int 0/1, JSON true/false */
    MLC_KEY_INT,              /* int, JSON integer (3.0 accepted) */
    MLC_KEY_NUMBER,           /* double */
    MLC_KEY_INT_ARRAY,        /* int array + int count */
    MLC_KEY_NUMBER_ARRAY,     /* double array + int count (a bare number counts as [number]) */
    MLC_KEY_RANGE,            /* double[2], [min, max] */
    MLC_KEY_VEC3,             /* double[3] */
    MLC_KEY_VEC3_OR_NULL,     /* double[3] + int flag; null clears the flag */
    MLC_KEY_AXIS,             /* a direction: a name among `choices` ("+z") into the char array,
                               * or [x,y,z] (nonzero), which clears the name; either way the
                               * vector (double[3] at count_offset) is set */
    MLC_KEY_PARAMETERS,       /* mlc_config_param array + int count (actuation_keys.h) */
    MLC_KEY_REGION_MATERIALS, /* mlc_config_region_material array + int count; JSON: an object
                               * of label → {"mu", "gamma", "density", "friction"} */
    MLC_KEY_BOXES             /* mlc_config_box array + int count (contact_keys.h) */
} mlc_key_type;

/* Extra checks beyond the numeric bounds. */
typedef enum mlc_key_check {
    MLC_KEY_CHECK_NONE,
    MLC_KEY_CHECK_NONEMPTY, /* string must not be "" */
    MLC_KEY_CHECK_NONZERO,  /* vector must have nonzero length */
    MLC_KEY_CHECK_ORDERED   /* range: min ≤ max */
} mlc_key_check;

typedef struct mlc_key {
    const char *name;         /* dotted key, "sim.dt"; its prefix is the section's name */
    const char *type_name;    /* as docs/config.md writes it: "int", "[x,y,z] or null" ... */
    const char *default_json; /* the default as JSON text, e.g. "[0, -9.81, 0]": the only one */
    const char *range;        /* valid values in words ("> 0", "1..32"); "" = any */
    const char *meaning;      /* one line */
    /* For the loader: how to reach and check the field. */
    mlc_key_type type;
    size_t offset;         /* of the value within the module's settings struct */
    size_t count_offset;   /* of the int count or flag (arrays, VEC3_OR_NULL), or of the
                            * double[3] vector (AXIS), within the same struct */
    int capacity;          /* array elements, or char array bytes for strings and axes */
    char lo_kind, hi_kind; /* '[' / '(' and ']' / ')' bounds on numbers (elementwise
                            * for arrays); 0 = unbounded on that side */
    double lo, hi;
    mlc_key_check check;
    const char *choices; /* strings, enums, axes: "a|b" allowed names, NULL = any */
    const char *aliases; /* enums: other names read as a choice, "alias=name|...", NULL = none;
                          * written back as the choice's own name */
} mlc_key;

/* One section of the configuration ("sim": every key sim.*), owned by one module. */
typedef struct mlc_key_section {
    const char *name;    /* "sim" */
    const mlc_key *keys; /* in docs/config.md's order */
    int nkeys;
    /* The rules that involve several keys of the section, on its settings struct after every
     * key alone passed its bounds: MLC_OK, or MLC_EINVAL with a message naming the keys, the
     * values and what to change. NULL = none. */
    mlc_status (*check)(const void *settings, mlc_err *err);
} mlc_key_section;

/* Row helpers for the tables. Define MLC_KEY_STRUCT as the settings struct type first. */
#define MLC_KEY_FIELD(f) .offset = offsetof(MLC_KEY_STRUCT, f)
#define MLC_KEY_COUNT(f) .count_offset = offsetof(MLC_KEY_STRUCT, f)
#define MLC_KEY_BYTES(f) .capacity = (int)sizeof(((MLC_KEY_STRUCT *)0)->f)
#define MLC_KEY_ELEMS(f)                                                                           \
    .capacity = (int)(sizeof(((MLC_KEY_STRUCT *)0)->f) / sizeof(((MLC_KEY_STRUCT *)0)->f[0]))
#define MLC_KEY_GT(x) .lo_kind = '(', .lo = (x)
#define MLC_KEY_GE(x) .lo_kind = '[', .lo = (x)
#define MLC_KEY_BETWEEN(lk, a, b, hk) .lo_kind = (lk), .lo = (a), .hi = (b), .hi_kind = (hk)
#define MLC_KEY_SECTION(sname, table, checkfn)                                                     \
    {                                                                                              \
        .name = (sname), .keys = (table), .nkeys = (int)(sizeof(table) / sizeof((table)[0])),      \
        .check = (checkfn)                                                                         \
    }

/* The index of `name` among the '|'-separated `choices`, or -1. */
int mlc_key_choice_index(const char *choices, const char *name);

/* The name of choice `index` of `choices` into buf (empty when out of range); returns buf. */
const char *mlc_key_choice_name(const char *choices, int index, char *buf, size_t n);

#endif
