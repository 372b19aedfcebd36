/* fuzz_mesh_ply.c: libFuzzer target for the .ply reader (through mlc_mesh_read). */
#define FUZZ_MESH_FILE "in.ply"
#include "fuzz_mesh.h"
