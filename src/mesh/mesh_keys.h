/* mesh_keys.h: the configuration keys mesh.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_MESH_KEYS_H
#define MODALLOCO_MESH_KEYS_H

#include "keys.h"

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
    int lay_down;                   /* mesh.lay_down (bool): optimize searches a body that falls
                                     * over left alone in the pose it comes to rest in */
} mlc_config_mesh;

extern const mlc_key_section mlc_mesh_key_section; /* keys mesh.* */

#endif
