/* mesh_keys.c: the rows of the keys mesh.* (keys.h). */
#include "mesh_keys.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_mesh
static const mlc_key mesh_keys[] = {
    {.name = "mesh.path",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "tet mesh or surface mesh (tetrahedralized with tetgen); \"\" = the bundled "
                "sample mesh",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(path),
     MLC_KEY_BYTES(path)},
    {.name = "mesh.normalize",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "centre in x,z, min y = 0, scale to mesh.extent",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(normalize)},
    {.name = "mesh.extent",
     .type_name = "number",
     .default_json = "2.0",
     .range = "> 0",
     .meaning = "largest bounding-box extent after normalizing",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(extent),
     MLC_KEY_GT(0)},
    {.name = "mesh.min_tets",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "a surface mesh is tetrahedralized into at least this many tets (tetgen's volume "
                "bound: enclosed volume / N; 0 = no bound, tetgen -pYq1.414 alone); tet meshes "
                "ignore it",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(min_tets),
     MLC_KEY_GE(0)},
    {.name = "mesh.up",
     .type_name = "string or [x,y,z]",
     .default_json = "\"+y\"",
     .range = "+x, -x, +y, -y, +z, -z or a nonzero [x,y,z]",
     .meaning = "the mesh's up axis, rotated to +y before preparation",
     .type = MLC_KEY_AXIS,
     MLC_KEY_FIELD(up),
     MLC_KEY_BYTES(up),
     MLC_KEY_COUNT(up_vector),
     .choices = "+x|-x|+y|-y|+z|-z"},
    {.name = "mesh.lay_down",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "optimize, for an objective that keeps the body upright: a body that falls over "
                "when left alone (one passive rollout) is searched in the pose it comes to rest "
                "in; config.json then holds that pose as mesh.up and false here",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(lay_down)},
};

const mlc_key_section mlc_mesh_key_section = MLC_KEY_SECTION("mesh", mesh_keys, NULL);
