/* output_testing.h: test-only writers of output.c. This header is NOT part of the program's
 * interface: only the tests, the fuzz targets, the benchmarks and the source files that define
 * these functions include it. */
#ifndef MODALLOCO_OUTPUT_TESTING_H
#define MODALLOCO_OUTPUT_TESTING_H

#include "output.h"

/* ---- Point cache writer (output.c) ----------------------------------------------------------- */
/* As mlc_pc2_frame, gathering point i from x[3*idx[i] .. 3*idx[i]+2] (e.g. idx = the surface vertex
 * list of mlc_mesh_surface and x the full 3×nv positions). Does not allocate. */
mlc_status mlc_pc2_frame_indexed(mlc_pc2_writer *w, const double *x, const int *idx, mlc_err *err);

#endif
