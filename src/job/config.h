/* config.h: the run configuration (docs/config.md, defaults from docs/method.md §9).
 *
 * An mlc_config is plain data: one field per key of docs/config.md's key table, grouped by section
 * so that key `sim.dt` is field `cfg.sim.dt`. Strings are fixed char arrays, lists are fixed
 * arrays with a count, so a config can be copied with `=` and needs no free.
 *
 * Typical use (what the CLI does):
 *     mlc_config cfg;
 *     mlc_config_defaults(&cfg);
 *     mlc_config_load_file(&cfg, "run.json", &err);        // JSON file or optimize's params.json
 *     mlc_config_set(&cfg, "sim.steps=500", &err);         // each --set, in order
 *     mlc_config_validate(&cfg, &err);                     // cross-key checks
 * Loading and --set check types and per-key ranges immediately (messages name the file or
 * "--set"); mlc_config_validate repeats them and adds checks that involve several keys (the
 * count of actuation.fixed_periods, actuation.select ≤ m), so call it once after all layers.
 *
 * Errors: MLC_EPARSE for malformed JSON, MLC_EINVAL for everything else (unreadable file,
 * unknown key, wrong type, out of range). On any error the config is left unchanged.
 * The key table mlc_config_keys[] is the source of truth for docs/config.md and --help.
 */
#ifndef MODALLOCO_CONFIG_H
#define MODALLOCO_CONFIG_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base.h"

#define MLC_CONFIG_PATH_MAX 4096   /* bytes of a path, including the terminating NUL */
#define MLC_CONFIG_WORD_MAX 16     /* bytes of an enumerated string ("locomotion") + NUL */
#define MLC_CONFIG_MAX_MODES 64    /* m, len(mode_list), number of parameter entries */
#define MLC_CONFIG_MAX_SINUSOIDS 8 /* k */
#define MLC_CONFIG_MAX_BOXES 64    /* contact.boxes */
#define MLC_CONFIG_MAX_FIXED_PERIODS (MLC_CONFIG_MAX_MODES * MLC_CONFIG_MAX_SINUSOIDS)
#define MLC_CONFIG_MAX_REGIONS 64 /* entries of material.regions */

/* One sinusoid of Eq. 6: A sin(2π (t / T + θ)). */
typedef struct mlc_config_sinusoid {
    double amplitude; /* A (mode coordinate units) */
    double period;    /* T, seconds, > 0 */
    double phase;     /* θ, cycles */
} mlc_config_sinusoid;

/* One entry of actuation.parameters / params.json "parameters". */
typedef struct mlc_config_param {
    int mode;       /* vibration mode index (0 = first non-rigid), ≥ 0 */
    int nsinusoids; /* 1..MLC_CONFIG_MAX_SINUSOIDS */
    mlc_config_sinusoid sinusoids[MLC_CONFIG_MAX_SINUSOIDS]; /* first nsinusoids used */
} mlc_config_param;

/* One entry of contact.boxes: {"min": [x,y,z], "max": [x,y,z], "friction": μ (optional)}. */
typedef struct mlc_config_box {
    double min[3], max[3]; /* corners, min < max per axis */
    double friction;       /* Coulomb μ ≥ 0 of its faces when has_friction */
    int has_friction;      /* 0: the ground's contact.friction */
} mlc_config_box;

typedef struct mlc_config_mesh {
    char path[MLC_CONFIG_PATH_MAX]; /* mesh.path: tet or surface mesh; "" = bundled sample */
    int normalize;                  /* mesh.normalize (bool): centre x,z, min y = 0, scale */
    double extent;                  /* mesh.extent: largest bbox extent after normalizing, > 0 */
    int min_tets;                   /* mesh.min_tets: a surface gets at least this many tets, ≥ 0
                                     * (0 = tetgen's quality bound alone) */
    char up[MLC_CONFIG_WORD_MAX];   /* mesh.up by name, "+x" | "-x" | "+y" | "-y" | "+z" | "-z";
                                     * "" when it was given as a vector */
    double up_vector[3];            /* mesh.up as a direction, nonzero (any length); always
                                     * set, also for a name, and the one preparation uses */
} mlc_config_mesh;

/* One entry of material.regions: the material of the region with the user's label `label`.
 * A value whose bit is not in `set` is not given: the global one (material.*, contact.friction)
 * applies. Unset values are 0, so configs holding the same settings compare equal. */
#define MLC_REGION_MU 1
#define MLC_REGION_GAMMA 2
#define MLC_REGION_DENSITY 4
#define MLC_REGION_FRICTION 8
typedef struct mlc_config_region_material {
    int label;                           /* the region's label as the user numbers it */
    int set;                             /* MLC_REGION_* bits of the values given */
    double mu, gamma, density, friction; /* > 0, > 0, > 0, >= 0 when given */
} mlc_config_region_material;

typedef struct mlc_config_material {
    double density;       /* material.density: ρ, > 0 */
    double mu;            /* material.mu: passive ARAP stiffness μ, > 0 */
    double gamma;         /* material.gamma: actuation stiffness γ, > 0 */
    double poisson_modes; /* material.poisson_modes: Poisson ratio of the mode Hessian, (−1, 0.5) */
    mlc_config_region_material regions[MLC_CONFIG_MAX_REGIONS]; /* material.regions, by label */
    int nregions;                                               /* its length, 0 = none */
} mlc_config_material;

/* Body regions (regions.h): from a label file, automatic, or (neither given) the mesh file's. */
typedef struct mlc_config_regions {
    char file[MLC_CONFIG_PATH_MAX]; /* regions.file: per-tet or per-vertex labels, "" = none */
    int automatic;                  /* regions.auto: K automatic regions, 0 = off */
} mlc_config_regions;

typedef struct mlc_config_subspace {
    int skinning_modes;              /* subspace.skinning_modes: w (r = 12w), 1..32 */
    int passive_clusters;            /* subspace.passive_clusters: |C_p| before splitting, ≥ 1 */
    int actuation_clusters;          /* subspace.actuation_clusters: |C_a|, ≥ 1 */
    int contact_samples;             /* subspace.contact_samples: |I|, ≥ 1 */
    double contact_band;             /* subspace.contact_band: × extent, in [0, 1] */
    double contact_spacing;          /* subspace.contact_spacing: × extent, in [0, 1] */
    char cache[MLC_CONFIG_PATH_MAX]; /* subspace.cache: precompute cache file, "" = none */
} mlc_config_subspace;

typedef struct mlc_config_actuation {
    int modes;                           /* actuation.modes: m, 0..64 (0 only with
                                          * local_modes > 0) */
    int local_modes;                     /* actuation.local_modes: m_r per region, 0 = off */
    double localization;                 /* actuation.localization: weight factor c, >= 0 */
    int mode_list[MLC_CONFIG_MAX_MODES]; /* actuation.mode_list: explicit indices, ≥ 0 */
    int nmode_list;                      /* its length; > 0 overrides `modes` */
    int sinusoids;                       /* actuation.sinusoids: k, 1..8 */
    double period_range[2];              /* actuation.period_range: [min, max] s */
    double phase_range[2];               /* actuation.phase_range: [min, max] cycles */
    double amplitude_p;                  /* actuation.amplitude_p: p of App. H, > 0 */
    char amplitude_bound[16];            /* actuation.amplitude_bound: "combined" (p
                                          * bounds the sum of all signals, gait.h) or
                                          * "per_signal" (the paper: each signal) */
    double ramp;                         /* actuation.ramp: ramp-in seconds, ≥ 0 (0 off) */
    double fixed_periods[MLC_CONFIG_MAX_FIXED_PERIODS]; /* actuation.fixed_periods, > 0 each;
                                                         * one for all, or mode-major [i*k + j] */
    int nfixed_periods;                                 /* its length: 0, 1 or m·k */
    int select;                                         /* actuation.select: q, 0 = off, ≤ m */
    mlc_config_param parameters[MLC_CONFIG_MAX_MODES];  /* actuation.parameters */
    int nparameters;                                    /* its length, 0 = none */
} mlc_config_actuation;

typedef struct mlc_config_sim {
    double dt;                               /* sim.dt: h, seconds, > 0 */
    int steps;                               /* sim.steps: S, ≥ 1 */
    int iterations;                          /* sim.iterations: local-global per step, ≥ 1 */
    double tolerance;                        /* sim.tolerance: ‖Δz‖ stop, ≥ 0 (0 = never) */
    char initial_guess[MLC_CONFIG_WORD_MAX]; /* sim.initial_guess: "inertial" | "previous" */
    double gravity[3];                       /* sim.gravity: m/s² */
    double rayleigh[2];                      /* sim.rayleigh: [α 1/s, β s], each ≥ 0 */
    char integrator[MLC_CONFIG_WORD_MAX];    /* sim.integrator: "euler" | "bdf2" */
} mlc_config_sim;

typedef struct mlc_config_contact {
    int enabled;                           /* contact.enabled (bool) */
    double damping;                        /* contact.damping: μ_c in [0, 1) */
    char projection[MLC_CONFIG_WORD_MAX];  /* contact.projection: "position" | "velocity" */
    char model[MLC_CONFIG_WORD_MAX];       /* contact.model: "complementarity" | "equality" */
    double push_speed;                     /* contact.push_speed: m/s, ≥ 0 */
    double friction;                       /* contact.friction: Coulomb μ_f, ≥ 0 (0 = off) */
    double ground_height;                  /* contact.ground_height: y of the ground */
    double slope;                          /* contact.slope: degrees in [0, 90), rising along
                                            * objective.direction */
    char heightfield[MLC_CONFIG_PATH_MAX]; /* contact.heightfield: file, "" = none */
    mlc_config_box boxes[MLC_CONFIG_MAX_BOXES]; /* contact.boxes */
    int nboxes;
    double anisotropy; /* contact.anisotropy: backward / forward friction, ≥ 1 */
} mlc_config_contact;

/* The full-space reference of `simulate --full-space` (fullspace.h): its own stopping rule,
 * independent of sim.iterations, which is the reduced model's. */
typedef struct mlc_config_reference {
    double tolerance;    /* reference.tolerance: stop when max |Δx| ≤ it × extent, ≥ 0 */
    int max_iterations;  /* reference.max_iterations: guard per step, ≥ 1 */
    int contact_samples; /* reference.contact_samples: 0 = every surface vertex, N > 0 = its own
                            N samples, −1 = the model's */
    int contact_columns; /* reference.contact_columns: cached columns of surface contact, ≥ 1 */
    int acceleration; /* reference.acceleration: Anderson window, 0..MLC_FULLSPACE_ANDERSON_MAX */
    int threads;      /* reference.threads: threads of its per-tet work, 0 = all cores */
    int check;        /* reference.check: 1 = optimize replays its gait in the reference */
} mlc_config_reference;

typedef struct mlc_config_objective {
    char kind[MLC_CONFIG_WORD_MAX]; /* objective.kind: "locomotion" | "jump" */
    double direction[3];            /* objective.direction: v̂, nonzero */
    double forward[3];              /* objective.forward: û₀ when forward_set, else zeros */
    int forward_set;                /* 0: objective.forward is null (use direction) */
    int align;                      /* objective.align (bool): multiply by J_align */
    char align_mode[MLC_CONFIG_WORD_MAX]; /* objective.align_mode: "min" (paper) | "mean" */
    int upright;                          /* objective.upright (bool): J_align also gates on the
                                           * body's up axis staying up (no rolling over) */
    int credible_gate;                    /* objective.credible_gate (bool) */
    double work_penalty;                  /* objective.work_penalty: α, ≥ 0 */
    int work_abs;                         /* objective.work_abs (bool): penalize absolute work */
    double heading[3];                    /* objective.heading: [x,z] or [x,y,z] (turn) */
    int nheading;                         /* its length: 2 or 3 */
    double target[3];                     /* objective.target (target, jump) when target_set */
    int target_set;                       /* 0: objective.target is null */
    char path[MLC_CONFIG_PATH_MAX];       /* objective.path: waypoint CSV (path) */
    double effort;                        /* objective.effort: weight, ≥ 0 */
    double vibration;                     /* objective.vibration: weight, ≥ 0 */
} mlc_config_objective;

typedef struct mlc_config_cmaes {
    int population;           /* cmaes.population: λ, ≥ 2 */
    int generations;          /* cmaes.generations: ≥ 1 */
    double sigma0;            /* cmaes.sigma0: in the normalized box, > 0 */
    int seed;                 /* cmaes.seed: seed of everything random */
    int restarts;             /* cmaes.restarts: restarts, ≥ 0 */
    char restart_strategy[8]; /* cmaes.restart_strategy: "ipop" or "bipop" */
    double restart_collapse;  /* cmaes.restart_collapse: spread that ends a run, ≥ 0 (0 off) */
    int restart_stall;        /* cmaes.restart_stall: generations without gain, ≥ 0 (0 off) */
    double restart_room;      /* cmaes.restart_room: a restart begins only when the budget left
                                 is at least this many times the ended run's evaluations, ≥ 0
                                 (0: whatever is left) */
    int diagonal;             /* cmaes.diagonal: generations of each run with diagonal C, ≥ 0;
                                 −1: chosen from the dimension (cmd_optimize.c) */
    int budget;               /* cmaes.budget: rollouts in all, ≥ 0 (0: generations × λ) */
    int early_stop;           /* cmaes.early_stop: pycma's early stops end a run (bool) */
    int mean_every;           /* cmaes.mean_every: the distribution mean is scored every this
                                 many generations (history.csv mean_J), ≥ 0 (0: never) */
    int robust_samples;       /* cmaes.robust_samples: perturbed replays per candidate, 0..16 */
    char robust_scope[16];    /* cmaes.robust_scope: which candidates are replayed: "walkers"
                                 (every one that walks) or "improving" (only those whose
                                 nominal J beats the best score so far) */
    int polish;               /* cmaes.polish: gradient polish steps after CMA-ES, 0 = off */
} mlc_config_cmaes;

typedef struct mlc_config_output {
    char dir[MLC_CONFIG_PATH_MAX]; /* output.dir: output directory, nonempty */
    int every;                     /* output.every: every n-th frame to the cache, ≥ 1 */
    int viewer;                    /* output.viewer (bool): also write DIR/view.html */
    int vtk;        /* output.vtk (bool): DIR/frames.pvd and a VTK file per output frame */
    int vtk_volume; /* output.vtk_volume (bool): with vtk, the tet mesh too (volume.pvd) */
} mlc_config_output;

typedef struct mlc_config_parallel {
    int threads; /* parallel.threads: 0 = all cores, ≥ 0 */
    /* --max-memory (not a key: a bound of the machine, not of the run): bytes the precompute
     * may use, 0 = the default bound (budget.h: 80% of the physical, cgroup or address-space
     * limit). */
    double max_memory;
} mlc_config_parallel;

typedef struct mlc_config {
    mlc_config_mesh mesh;
    mlc_config_material material;
    mlc_config_regions regions;
    mlc_config_subspace subspace;
    mlc_config_actuation actuation;
    mlc_config_sim sim;
    mlc_config_contact contact;
    mlc_config_reference reference;
    mlc_config_objective objective;
    mlc_config_cmaes cmaes;
    mlc_config_output output;
    mlc_config_parallel parallel;
} mlc_config;

/* ---- The key table ---------------------------------------------------------------------- */
typedef enum {
    MLC_CFG_STRING,           /* char array; `choices` may restrict it */
    MLC_CFG_BOOL,             /* int 0/1, JSON true/false */
    MLC_CFG_INT,              /* int, JSON integer (3.0 accepted) */
    MLC_CFG_NUMBER,           /* double */
    MLC_CFG_INT_ARRAY,        /* int array + int count */
    MLC_CFG_NUMBER_ARRAY,     /* double array + int count (a bare number counts as [number]) */
    MLC_CFG_RANGE,            /* double[2], [min, max] with min ≤ max */
    MLC_CFG_VEC3,             /* double[3] */
    MLC_CFG_VEC3_OR_NULL,     /* double[3] + int flag; null clears the flag */
    MLC_CFG_AXIS,             /* a direction: a name among `choices` ("+z") into the char array,
                               * or [x,y,z] (nonzero), which clears the name; either way the
                               * vector (double[3] at count_offset) is set */
    MLC_CFG_PARAMETERS,       /* mlc_config_param array + int count */
    MLC_CFG_REGION_MATERIALS, /* mlc_config_region_material array + int count; JSON: an object
                               * of label → {"mu", "gamma", "density", "friction"} */
    MLC_CFG_BOXES             /* mlc_config_box array + int count */
} mlc_config_type;

/* Extra checks beyond the numeric bounds. */
typedef enum {
    MLC_CFG_CHECK_NONE,
    MLC_CFG_CHECK_NONEMPTY, /* string must not be "" */
    MLC_CFG_CHECK_NONZERO,  /* vector must have nonzero length */
    MLC_CFG_CHECK_ORDERED   /* range: min ≤ max */
} mlc_config_check;

typedef struct mlc_config_key {
    const char *name;         /* dotted key, "sim.dt" */
    const char *type_name;    /* as docs/config.md writes it: "int", "[x,y,z] or null" ... */
    const char *default_json; /* the default as JSON text, e.g. "[0, -9.81, 0]" */
    const char *range;        /* valid values in words ("> 0", "1..32"); "" = any */
    const char *meaning;      /* one line */
    /* For config.c: how to reach and check the field. */
    mlc_config_type type;
    size_t offset;         /* of the value within mlc_config */
    size_t count_offset;   /* of the int count or flag (arrays, VEC3_OR_NULL), or of the
                            * double[3] vector (AXIS) */
    int capacity;          /* array elements, or char array bytes for strings */
    char lo_kind, hi_kind; /* '[' / '(' and ']' / ')' bounds on numbers (elementwise
                            * for arrays); 0 = unbounded on that side */
    double lo, hi;
    mlc_config_check check;
    const char *choices; /* strings, axes: "a|b" allowed names, NULL = any */
} mlc_config_key;

extern const mlc_config_key mlc_config_keys[]; /* in docs/config.md's order */
extern const int mlc_config_nkeys;

/* The table entry of a dotted key, or NULL. */
const mlc_config_key *mlc_config_key_find(const char *name);

/* ---- Functions -------------------------------------------------------------------------- */
/* Every field to its default (docs/method.md §9, docs/config.md); zeroes all unused bytes first, so
 * two configs holding the same settings compare equal with memcmp. */
void mlc_config_defaults(mlc_config *cfg);

/* Read a JSON file and apply it on top of *cfg (see mlc_config_apply_json). Messages start
 * with `path`; malformed JSON is reported as "PATH:LINE:COL: malformed JSON near '...'".
 * A relative mesh.path in a configuration (not in a params.json) that names an existing file
 * next to the configuration becomes DIR/PATH ("examples/../data/cat.off.gz"); otherwise it
 * stays relative to the working directory (as config.json records it, and as before).
 * Returns MLC_OK, MLC_EPARSE (malformed) or MLC_EINVAL (unreadable file, bad settings). */
mlc_status mlc_config_load_file(mlc_config *cfg, const char *path, mlc_err *err);

/* Apply a parsed JSON document on top of *cfg. Two shapes are accepted:
 *  - a configuration: an object of sections, {"sim": {"dt": 0.01}, "mesh": {...}}; every key
 *    optional, unknown keys rejected (with the closest valid key suggested), `{}` valid;
 *  - a params.json written by `optimize`: an object with a "config" object (the effective
 *    configuration, applied as above) and "parameters" (applied as actuation.parameters);
 *    its other top-level members (J, seed, version, ...) are ignored.
 * `source` names the input in messages ("run.json", "--set"). *cfg is unchanged on error. */
mlc_status mlc_config_apply_json(mlc_config *cfg, const cJSON *root, const char *source,
                                 mlc_err *err);

/* Apply one `--set KEY=VALUE`. KEY is a dotted key ("sim.dt") or a section ("sim", then VALUE
 * is an object). VALUE is parsed as JSON when it parses (3, 2.5, true, null, [0,-1,0],
 * {"dt":0.02}, "text"), else taken as a bare string. For string keys any VALUE that is not a
 * JSON string literal is taken verbatim, so `mesh.path=foo.mesh` and `output.dir=123` both
 * work. Messages start with "--set". *cfg is unchanged on error. */
mlc_status mlc_config_set(mlc_config *cfg, const char *assignment, mlc_err *err);

/* Check every key's range and the checks involving several keys. Messages name the key, the
 * value and the valid range. Returns MLC_OK or MLC_EINVAL. */
mlc_status mlc_config_validate(const mlc_config *cfg, mlc_err *err);

/* The complete effective configuration (every key) as a cJSON tree of sections, for embedding
 * (params.json "config"). Owned by the caller: cJSON_Delete. NULL when out of memory.
 * Numbers are ordinary cJSON numbers; note that cJSON_Print may drop the last bit of a double
 * (it accepts %.15g when it reads back within an epsilon), so only mlc_config_to_json is
 * bit-exact; values typed in decimal with up to 15 digits survive either way. */
cJSON *mlc_config_to_cjson(const mlc_config *cfg);

/* The same as pretty-printed JSON text ending in a newline (config.json). Owned by the caller:
 * mlc_free. NULL when out of memory. Loading it back reproduces *cfg exactly. */
char *mlc_config_to_json(const mlc_config *cfg);

/* actuation.local_modes > 0 replaces the global modes (actuation.modes = 0) unless a layer
 * gives actuation.modes or actuation.mode_list itself. `cfg` is the configuration built from
 * the layers: a base (a configuration object base_obj, or a file base_path, used when it ends
 * in .json; both may be NULL) and nsets --set assignments; they are applied once more to a
 * probe whose actuation.modes is unset, and cfg's modes become 0 when it stays unset. The
 * resolved count is what config.json then holds, so it loads back to the same modes. */
mlc_status mlc_config_resolve_local_modes(mlc_config *cfg, const cJSON *base_obj,
                                          const char *base_path, const char *source,
                                          const char *const *sets, int nsets, mlc_err *err);

#endif
