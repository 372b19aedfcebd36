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
 * The keys are described by their modules' tables (keys.h), which are the source of the
 * defaults, the checks, docs/config.md's key tables (tools/make_config_doc.c) and the manual.
 */
#ifndef MODALLOCO_CONFIG_H
#define MODALLOCO_CONFIG_H

#include <stddef.h>

#include "base.h"

struct cJSON;

/* Each section's settings struct and key table live with its module (keys.h). */
#include "actuation_keys.h"
#include "cmaes_keys.h"
#include "contact_keys.h"
#include "fullspace_keys.h"
#include "mesh_keys.h"
#include "objective_keys.h"
#include "output_keys.h"
#include "parallel_keys.h"
#include "regions_keys.h"
#include "sim_keys.h"
#include "subspace_keys.h"

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

/* ---- The sections --------------------------------------------------------------------- */
/* One section of mlc_config: its module's key table and where its settings struct sits. */
typedef struct mlc_config_section {
    const mlc_key_section *keys;
    size_t offset; /* of the section's settings struct within mlc_config */
} mlc_config_section;

extern const mlc_config_section mlc_config_sections[]; /* in docs/config.md's order */
extern const int mlc_config_nsections;

/* The table entry of a dotted key, or NULL; *section (may be NULL) gets its section. */
const mlc_key *mlc_config_key_find(const char *name, const mlc_config_section **section);

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
mlc_status mlc_config_apply_json(mlc_config *cfg, const struct cJSON *root, const char *source,
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
struct cJSON *mlc_config_to_cjson(const mlc_config *cfg);

/* The same as pretty-printed JSON text ending in a newline (config.json). Owned by the caller:
 * mlc_free. NULL when out of memory. Loading it back reproduces *cfg exactly. */
char *mlc_config_to_json(const mlc_config *cfg);

/* actuation.local_modes > 0 replaces the global modes (actuation.modes = 0) unless a layer
 * gives actuation.modes or actuation.mode_list itself. `cfg` is the configuration built from
 * the layers: a base (a configuration object base_obj, or a file base_path, used when it ends
 * in .json; both may be NULL) and nsets --set assignments; they are applied once more to a
 * probe whose actuation.modes is unset, and cfg's modes become 0 when it stays unset. The
 * resolved count is what config.json then holds, so it loads back to the same modes. */
mlc_status mlc_config_resolve_local_modes(mlc_config *cfg, const struct cJSON *base_obj,
                                          const char *base_path, const char *source,
                                          const char *const *sets, int nsets, mlc_err *err);

#endif
