/* fuzz_mesh_medit.c: libFuzzer target for the .mesh reader (through mlc_mesh_read). */
#define FUZZ_MESH_FILE "in.mesh"
#include "fuzz_mesh.h"
