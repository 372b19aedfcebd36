/* subspace_keys.h: the configuration keys subspace.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_SUBSPACE_KEYS_H
#define MODALLOCO_SUBSPACE_KEYS_H

#include "keys.h"

typedef struct mlc_config_subspace {
    int skinning_modes;              /* subspace.skinning_modes: w (r = 12w), 1..32 */
    int passive_clusters;            /* subspace.passive_clusters: |C_p| before splitting, ≥ 1 */
    int actuation_clusters;          /* subspace.actuation_clusters: |C_a|, ≥ 1 */
    int contact_samples;             /* subspace.contact_samples: |I|, ≥ 1 */
    double contact_band;             /* subspace.contact_band: × extent, in [0, 1] */
    double contact_spacing;          /* subspace.contact_spacing: × extent, in [0, 1] */
    char cache[MLC_CONFIG_PATH_MAX]; /* subspace.cache: precompute cache file, "" = none */
} mlc_config_subspace;

extern const mlc_key_section mlc_subspace_key_section; /* keys subspace.* */

#endif
