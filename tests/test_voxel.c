/* test_voxel.c: the voxel tet generator and the shared finalize step (boundary, orientation). */
#include "test_util.h"

/* Signed volume of a tet, for orientation checks. */
static double vol6(const mlc_mesh *m, int e) {
    const int *t = m->T + 4 * e;
    const double *a = m->X + 3 * t[0], *b = m->X + 3 * t[1], *c = m->X + 3 * t[2],
                 *d = m->X + 3 * t[3];
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++)
        u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
           u[2] * (v[0] * w[1] - v[1] * w[0]);
}

static void box_should_have_exact_volume_counts_and_positive_tets(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_box_mesh(3, 2, 4, 0.5, &m);
    assert_int_equal(m.nt, 3 * 2 * 4 * 6);
    assert_int_equal(m.nv, 4 * 3 * 5);
    /* Each face of the box is split into 2 triangles per voxel face. */
    assert_int_equal(m.nf, 2 * 2 * (3 * 2 + 2 * 4 + 3 * 4));
    double vol = 0;
    for (int e = 0; e < m.nt; e++) {
        double v = vol6(&m, e);
        assert_true(v > 0);
        vol += v / 6;
    }
    assert_near(vol, 1.5 * 1.0 * 2.0, 1e-12);
    mlc_mesh_free(&m);
}

/* The divergence theorem: ∮ x·n dA / 3 = volume, which holds only if every boundary triangle
 * is present exactly once and wound outward. */
static void boundary_should_be_closed_and_outward(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_quadruped_mesh(0.1, &m);
    double flux = 0, vol = 0;
    for (int f = 0; f < m.nf; f++) {
        const double *a = m.X + 3 * m.F[3 * f], *b = m.X + 3 * m.F[3 * f + 1],
                     *c = m.X + 3 * m.F[3 * f + 2];
        double u[3], v[3], n[3];
        for (int k = 0; k < 3; k++)
            u[k] = b[k] - a[k], v[k] = c[k] - a[k];
        n[0] = u[1] * v[2] - u[2] * v[1];
        n[1] = u[2] * v[0] - u[0] * v[2];
        n[2] = u[0] * v[1] - u[1] * v[0];
        flux += (a[0] * n[0] + a[1] * n[1] + a[2] * n[2]) / 6.0;
    }
    for (int e = 0; e < m.nt; e++)
        vol += vol6(&m, e) / 6;
    assert_near(flux, vol, 1e-12);
    mlc_mesh_free(&m);
}

static void disconnected_voxels_should_be_rejected(void **state) {
    (void)state;
    unsigned char occ[3] = {1, 0, 1};
    double o[3] = {0, 0, 0};
    mlc_mesh m = {0};
    mlc_err err;
    assert_int_equal(mlc_mesh_from_voxels(3, 1, 1, occ, 1.0, o, &m, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "2 connected components"));
    assert_null(m.X);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_should_have_exact_volume_counts_and_positive_tets),
        cmocka_unit_test(boundary_should_be_closed_and_outward),
        cmocka_unit_test(disconnected_voxels_should_be_rejected),
    };
    return cmocka_run_group_tests_name("voxel", tests, NULL, NULL);
}
