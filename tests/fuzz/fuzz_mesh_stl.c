/* fuzz_mesh_stl.c: libFuzzer target for the STL reader (ASCII and binary), through mlc_mesh_read.
 */
#define FUZZ_MESH_FILE "in.stl"
#include "fuzz_mesh.h"
