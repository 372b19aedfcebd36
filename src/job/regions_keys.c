/* regions_keys.c: the rows of the keys regions.* (keys.h). */
#include "regions_keys.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_regions
static const mlc_key regions_keys[] = {
    {.name = "regions.file",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "label file: one integer per tet or per vertex (docs/config.md); \"\" = the "
                "mesh file's labels, if any",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(file),
     MLC_KEY_BYTES(file)},
    {.name = "regions.auto",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "K > 0: K regions found automatically from the skinning weights (limbs "
                "separate); 0 = off",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(automatic),
     MLC_KEY_GE(0)},
};

const mlc_key_section mlc_regions_key_section = MLC_KEY_SECTION("regions", regions_keys, NULL);
