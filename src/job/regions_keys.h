/* regions_keys.h: the configuration keys regions.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_REGIONS_KEYS_H
#define MODALLOCO_REGIONS_KEYS_H

#include "keys.h"

/* Body regions (regions.h): from a label file, automatic, or (neither given) the mesh file's. */
typedef struct mlc_config_regions {
    char file[MLC_CONFIG_PATH_MAX]; /* regions.file: per-tet or per-vertex labels, "" = none */
    int automatic;                  /* regions.auto: K automatic regions, 0 = off */
} mlc_config_regions;

extern const mlc_key_section mlc_regions_key_section; /* keys regions.* */

#endif
