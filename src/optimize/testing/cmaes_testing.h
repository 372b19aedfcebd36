/* cmaes_testing.h: test-only inspection of the optimizer (cmaes.c). This header is NOT part of the
 * program's interface: only the tests, the fuzz targets, the benchmarks and the source files that
 * define these functions include it. */
#ifndef MODALLOCO_CMAES_TESTING_H
#define MODALLOCO_CMAES_TESTING_H

#include "cmaes.h"

/* ---- CMA-ES (cmaes.c) ------------------------------------------------------------------------ */
/* Criterion that ended the most recent run ("" if none has ended yet): also set when a
 * restart followed. */
const char *mlc_cmaes_run_stop_reason(const mlc_cmaes *es);
/* The secondary value of mlc_cmaes_best_x (+INFINITY if none). */
double mlc_cmaes_best_tie(const mlc_cmaes *es);
void mlc_cmaes_get_constants(const mlc_cmaes *es, mlc_cmaes_constants *c);

#endif
