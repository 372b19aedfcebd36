/* output_keys.h: the configuration keys output.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_OUTPUT_KEYS_H
#define MODALLOCO_OUTPUT_KEYS_H

#include "keys.h"

typedef struct mlc_config_output {
    char dir[MLC_CONFIG_PATH_MAX]; /* output.dir: output directory, nonempty */
    int every;                     /* output.every: every n-th frame to the cache, ≥ 1 */
    int viewer;                    /* output.viewer (bool): also write DIR/view.html */
    int vtk;        /* output.vtk (bool): DIR/frames.pvd and a VTK file per output frame */
    int vtk_volume; /* output.vtk_volume (bool): with vtk, the tet mesh too (volume.pvd) */
} mlc_config_output;

extern const mlc_key_section mlc_output_key_section; /* keys output.* */

#endif
