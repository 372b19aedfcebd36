/* fuzz_mesh_gz.c: libFuzzer target for compressed input (gzip.c, then the MEDIT reader),
 * through mlc_mesh_read. */
#define FUZZ_MESH_FILE "in.mesh.gz"
#include "fuzz_mesh.h"
