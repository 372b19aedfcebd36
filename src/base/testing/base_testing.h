/* base_testing.h: test-only hooks of base.c: allocation counters and failure injection. This header
 * is NOT part of the program's interface: only the tests, the fuzz targets, the benchmarks and the
 * source files that define these functions include it. */
#ifndef MODALLOCO_BASE_TESTING_H
#define MODALLOCO_BASE_TESTING_H

#include "base.h"

/* ---- Memory (base.c) ------------------------------------------------------------------------- */
/* Number of live blocks allocated through mlc_malloc and the others of base.h (for leak and
 * no-allocation checks in tests). Thread-safe (atomic). */
long mlc_alloc_live(void);
/* Total number of successful allocations since start (monotone; tests use differences). */
long mlc_alloc_count(void);
/* Failure injection: the n-th allocation from now (1 = the next) fails; 0 disables. */
void mlc_alloc_fail_after(long n);

#endif
