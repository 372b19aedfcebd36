/* output_keys.c: the rows of the keys output.* (keys.h). */
#include "output_keys.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_output
static const mlc_key output_keys[] = {
    {.name = "output.dir",
     .type_name = "string",
     .default_json = "\"modalloco-out\"",
     .range = "nonempty",
     .meaning = "output directory",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(dir),
     MLC_KEY_BYTES(dir),
     .check = MLC_KEY_CHECK_NONEMPTY},
    {.name = "output.every",
     .type_name = "int",
     .default_json = "1",
     .range = ">= 1",
     .meaning = "write every n-th frame to the vertex cache",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(every),
     MLC_KEY_GE(1)},
    {.name = "output.viewer",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "simulate and optimize also write view.html (as `modalloco view DIR`)",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(viewer)},
    {.name = "output.vtk",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "simulate and optimize also write frames.pvd and frames/frame_NNNN.vtp, the "
                "surface of every output frame (output.every), for ParaView",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(vtk)},
    {.name = "output.vtk_volume",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "with output.vtk, also volume.pvd and frames/frame_NNNN.vtu, the whole tet "
                "mesh of every output frame",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(vtk_volume)},
};

const mlc_key_section mlc_output_key_section = MLC_KEY_SECTION("output", output_keys, NULL);
