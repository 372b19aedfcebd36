/* fuzz_mesh_obj.c: libFuzzer target for the .obj reader (through mlc_mesh_read). */
#define FUZZ_MESH_FILE "in.obj"
#include "fuzz_mesh.h"
