/* fuzz_mesh_gmsh.c: libFuzzer target for the Gmsh .msh reader (2.2 ASCII and binary, 4.1 ASCII),
 * through mlc_mesh_read. */
#define FUZZ_MESH_FILE "in.msh"
#include "fuzz_mesh.h"
