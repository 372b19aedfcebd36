/* fuzz_mesh_off.c: libFuzzer target for the .off reader (through mlc_mesh_read). */
#define FUZZ_MESH_FILE "in.off"
#include "fuzz_mesh.h"
