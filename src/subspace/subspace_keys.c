/* subspace_keys.c: the rows of the keys subspace.* (keys.h). */
#include "subspace_keys.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_subspace
static const mlc_key subspace_keys[] = {
    {.name = "subspace.skinning_modes",
     .type_name = "int",
     .default_json = "10",
     .range = "1..32",
     .meaning = "skinning modes w (reduced size r = 12w)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(skinning_modes),
     MLC_KEY_BETWEEN('[', 1, 32, ']')},
    {.name = "subspace.passive_clusters",
     .type_name = "int",
     .default_json = "10",
     .range = ">= 1",
     .meaning = "passive clusters |C_p| before component splitting",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(passive_clusters),
     MLC_KEY_GE(1)},
    {.name = "subspace.actuation_clusters",
     .type_name = "int",
     .default_json = "1",
     .range = ">= 1",
     .meaning = "actuation clusters |C_a|",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(actuation_clusters),
     MLC_KEY_GE(1)},
    {.name = "subspace.contact_samples",
     .type_name = "int",
     .default_json = "64",
     .range = ">= 1",
     .meaning = "contact samples |I| (at least; subspace.contact_spacing may add more)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(contact_samples),
     MLC_KEY_GE(1)},
    {.name = "subspace.contact_band",
     .type_name = "number",
     .default_json = "0.01",
     .range = "in [0, 0.1]",
     .meaning = "half of the contact samples go to the soles, the boundary vertices at most "
                "this × extent above the lowest one, a quarter to the surface facing down (0 = "
                "farthest-point over the whole surface)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(contact_band),
     MLC_KEY_BETWEEN('[', 0, 0.1, ']')},
    {.name = "subspace.contact_spacing",
     .type_name = "number",
     .default_json = "0.04",
     .range = "in [0, 1]",
     .meaning = "more contact samples (up to 512) until every vertex of the soles and of the "
                "surface facing down is within this × extent of one, height counting three "
                "times, so no thin part that can touch the ground goes without (0 = exactly "
                "subspace.contact_samples; needs subspace.contact_band > 0)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(contact_spacing),
     MLC_KEY_BETWEEN('[', 0, 1, ']')},
    {.name = "subspace.cache",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "precompute cache file (\"\" = none); for a surface mesh, CACHE.tets also keeps "
                "its tetrahedralization (tetgen runs once per surface and tetgen build)",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(cache),
     MLC_KEY_BYTES(cache)},
};

const mlc_key_section mlc_subspace_key_section = MLC_KEY_SECTION("subspace", subspace_keys, NULL);
