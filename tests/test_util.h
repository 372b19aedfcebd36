/* test_util.h: helpers shared by the cmocka tests: a float comparison that does not truncate
 * to float (cmocka 1.1's assert_float_equal does), and small mesh fixtures built in code. */
#ifndef MODALLOCO_TEST_UTIL_H
#define MODALLOCO_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base_testing.h"
#include "cmaes_testing.h"
#include "mesh.h"
#include "output_testing.h"
#include "sim_testing.h"

#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_))                                                                \
            fail_msg("%s = %.17g, %s = %.17g, |diff| = %.3g > %.3g", #a, a_, #b, b_,               \
                     fabs(a_ - b_), t_);                                                           \
    } while (0)

/* Relative comparison: |a-b| <= tol * max(|a|, |b|, floor). */
#define assert_rel(a, b, tol, floor_)                                                              \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        double s_ = fmax(fmax(fabs(a_), fabs(b_)), (floor_));                                      \
        if (!(fabs(a_ - b_) <= (tol)*s_))                                                          \
            fail_msg("%s = %.17g, %s = %.17g, rel diff = %.3g > %.3g", #a, a_, #b, b_,             \
                     fabs(a_ - b_) / s_, (double)(tol));                                           \
    } while (0)

/* A whole file (malloc, NUL-terminated; its length into *n unless n is NULL), or NULL (and
 * length 0) when it cannot be opened or read. */
static inline char *test_read_file(const char *path, size_t *n) {
    if (n) *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = NULL;
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)len + 1)) != NULL) {
        if (fread(b, 1, (size_t)len, f) != (size_t)len) {
            free(b);
            b = NULL;
        } else {
            b[len] = '\0';
            if (n) *n = (size_t)len;
        }
    }
    fclose(f);
    return b;
}

/* test_read_file that fails the test when the file cannot be read. */
static inline char *test_slurp(const char *path, size_t *n) {
    char *b = test_read_file(path, n);
    if (!b) fail_msg("cannot read %s", path);
    return b;
}

/* A solid box of nx×ny×nz voxels of edge h, min corner at origin, 6 tets per voxel. */
static inline void test_box_mesh(int nx, int ny, int nz, double h, mlc_mesh *mesh) {
    unsigned char *occ = malloc((size_t)nx * ny * nz);
    memset(occ, 1, (size_t)nx * ny * nz);
    double origin[3] = {0, 0, 0};
    mlc_err err;
    mlc_status s = mlc_mesh_from_voxels(nx, ny, nz, occ, h, origin, mesh, &err);
    free(occ);
    if (s != MLC_OK) fail_msg("test_box_mesh: %s", err.msg);
}

/* A small quadruped: a body slab on four legs (voxel units), with a head block at +x.
 * Total extent about (8, 5, 4) voxels; `h` is the voxel size. */
static inline void test_quadruped_mesh(double h, mlc_mesh *mesh) {
    enum { NX = 9, NY = 5, NZ = 4 };
    unsigned char occ[NX * NY * NZ];
    memset(occ, 0, sizeof occ);
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                int body = j >= 2 && j <= 3 && i <= 7;
                int leg = j <= 1 && (i == 0 || i == 1 || i == 6 || i == 7) && (k == 0 || k == 3);
                int head = j >= 3 && i >= 7 && k >= 1 && k <= 2;
                if (body || leg || head) occ[i + NX * (j + NY * k)] = 1;
            }
    double origin[3] = {0, 0, 0};
    mlc_err err;
    mlc_status s = mlc_mesh_from_voxels(NX, NY, NZ, occ, h, origin, mesh, &err);
    if (s != MLC_OK) fail_msg("test_quadruped_mesh: %s", err.msg);
}

#endif
