/* config_input.h: the configuration a command's positional input gives (docs/config.md): the
 * defaults, then a JSON configuration file (a path ending in .json) or a mesh path
 * (mesh.path). What `optimize`, `simulate`, `modes` and a sweep's base start from; --set and
 * the options go on top. */
#ifndef MODALLOCO_CONFIG_INPUT_H
#define MODALLOCO_CONFIG_INPUT_H

#include "base.h"
#include "config.h"

/* The defaults, then `input` (may be NULL: the defaults alone). Not validated. */
mlc_status mlc_config_input(mlc_config *cfg, const char *input, mlc_err *err);

#endif
