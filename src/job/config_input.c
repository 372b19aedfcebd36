/* config_input.c: the configuration of a positional input (config_input.h). */
#include "config_input.h"

#include <stdio.h>
#include <string.h>

mlc_status mlc_config_input(mlc_config *cfg, const char *input, mlc_err *err) {
    mlc_config_defaults(cfg);
    if (!input) return MLC_OK;
    size_t n = strlen(input);
    if (n >= 5 && strcmp(input + n - 5, ".json") == 0) return mlc_config_load_file(cfg, input, err);
    if (n >= sizeof cfg->mesh.path)
        return mlc_errf(err, MLC_EINVAL, "mesh path too long: %s", input);
    snprintf(cfg->mesh.path, sizeof cfg->mesh.path, "%s", input);
    return MLC_OK;
}
