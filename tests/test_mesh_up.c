/* test_mesh_up.c: mesh.up, the rotation applied before preparation (mesh.h), and the support
 * measure `info` guesses an up axis from. */
#include "test_util.h"

#include "mesh.h"

#define QUADRUPED MLC_DATA_DIR "/quadruped.mesh"

static const double axes[6][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                  {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};

static double det3(const double *R) {
    return R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
           R[2] * (R[3] * R[7] - R[4] * R[6]);
}

/* R is a proper rotation (RᵀR = I, det +1) taking up/|up| to +y. */
static void check_rotation(const double up[3], const double R[9], double tol) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++)
                s += R[3 * k + i] * R[3 * k + j];
            assert_near(s, i == j ? 1.0 : 0.0, tol);
        }
    assert_near(det3(R), 1.0, tol);
    double n = sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
    for (int i = 0; i < 3; i++) {
        double y = (R[3 * i] * up[0] + R[3 * i + 1] * up[1] + R[3 * i + 2] * up[2]) / n;
        assert_near(y, i == 1 ? 1.0 : 0.0, tol);
    }
}

static void axis_rotations_should_be_exact_signed_permutations(void **state) {
    (void)state;
    /* Written out by hand: +x: (x,y,z) → (−y, x, z); −x: (y, −x, z); +y: identity;
     * −y: (x, −y, −z); +z: (x, z, −y); −z: (x, −z, y). */
    static const double want[6][9] = {{0, -1, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 0, -1, 0, 0, 0, 0, 1},
                                      {1, 0, 0, 0, 1, 0, 0, 0, 1},  {1, 0, 0, 0, -1, 0, 0, 0, -1},
                                      {1, 0, 0, 0, 0, 1, 0, -1, 0}, {1, 0, 0, 0, 0, -1, 0, 1, 0}};
    for (int a = 0; a < 6; a++) {
        double R[9];
        mlc_mesh_up_rotation(axes[a], R);
        for (int i = 0; i < 9; i++)
            if (R[i] != want[a][i] || signbit(R[i]) != signbit(want[a][i]))
                fail_msg("axis %d: R[%d] = %.17g, want %g", a, i, R[i], want[a][i]);
        check_rotation(axes[a], R, 0);
        /* Length does not matter. */
        double longer[3] = {3 * axes[a][0], 3 * axes[a][1], 3 * axes[a][2]}, R3[9];
        mlc_mesh_up_rotation(longer, R3);
        assert_memory_equal(R3, R, sizeof R);
    }
}

static void vector_rotations_should_be_proper_even_next_to_minus_y(void **state) {
    (void)state;
    static const double ups[][3] = {{1, 1, 0},         {0.3, -0.2, 0.9}, {-2, 5, 1e-3},
                                    {1e-9, -1, 0},     {0, -1, 1e-12},   {1e-300, -1, 0},
                                    {-0.7, -0.7, 0.1}, {1e-8, 1, -1e-8}};
    for (size_t i = 0; i < sizeof ups / sizeof ups[0]; i++) {
        double R[9];
        mlc_mesh_up_rotation(ups[i], R);
        check_rotation(ups[i], R, 4e-16 * 8);
    }
    /* The smallest rotation turns about up × ŷ: that axis is left in place. */
    double up[3] = {0.3, -0.2, 0.9}, R[9];
    mlc_mesh_up_rotation(up, R);
    double k[3] = {-up[2], 0, up[0]};
    for (int i = 0; i < 3; i++)
        assert_near(R[3 * i] * k[0] + R[3 * i + 1] * k[1] + R[3 * i + 2] * k[2], k[i], 1e-15);
}

/* Q X for a 3×3 row-major Q, in place. */
static void rotate_mesh(mlc_mesh *m, const double Q[9]) {
    for (int i = 0; i < m->nv; i++) {
        double *x = m->X + 3 * i, y[3];
        for (int r = 0; r < 3; r++)
            y[r] = Q[3 * r] * x[0] + Q[3 * r + 1] * x[1] + Q[3 * r + 2] * x[2];
        memcpy(x, y, sizeof y);
    }
}

static double min_signed_volume(const mlc_mesh *m) {
    double v_min = HUGE_VAL;
    for (int e = 0; e < m->nt; e++) {
        const double *a = m->X + 3 * m->T[4 * e], *b = m->X + 3 * m->T[4 * e + 1];
        const double *c = m->X + 3 * m->T[4 * e + 2], *d = m->X + 3 * m->T[4 * e + 3];
        double u[3], v[3], w[3];
        for (int k = 0; k < 3; k++)
            u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
        double s = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
                   u[2] * (v[0] * w[1] - v[1] * w[0]);
        if (s < v_min) v_min = s;
    }
    return v_min;
}

/* Turning the quadruped so its up axis is u, then declaring mesh.up = u, must prepare the same
 * mesh as the original with +y: exactly for the axes, to round-off for a general vector. */
static void declared_up_should_undo_a_hand_rotation(void **state) {
    (void)state;
    mlc_mesh ref = {0};
    mlc_err err;
    assert_int_equal(mlc_mesh_read(QUADRUPED, &ref, NULL, &err), MLC_OK);
    mlc_transform tf0 = mlc_mesh_prepare_transform(&ref, NULL, 1, 2.0);
    assert_true(mlc_transform_is_unrotated(&tf0));
    uint64_t plain = mlc_mesh_checksum(&ref);
    assert_true(mlc_mesh_oriented_checksum(&ref, &tf0) == plain);
    mlc_mesh_apply_transform(&ref, tf0);

    /* Q takes +y to the axis: the inverses of the permutations above, written independently. */
    static const double Q[6][9] = {{0, 1, 0, -1, 0, 0, 0, 0, 1}, {0, -1, 0, 1, 0, 0, 0, 0, 1},
                                   {1, 0, 0, 0, 1, 0, 0, 0, 1},  {1, 0, 0, 0, -1, 0, 0, 0, -1},
                                   {1, 0, 0, 0, 0, -1, 0, 1, 0}, {1, 0, 0, 0, 0, 1, 0, -1, 0}};
    uint64_t seen[7];
    for (int a = 0; a <= 6; a++) {
        mlc_mesh m = {0};
        assert_int_equal(mlc_mesh_read(QUADRUPED, &m, NULL, &err), MLC_OK);
        double up[3], Rt[9];
        if (a < 6) {
            memcpy(up, axes[a], sizeof up);
            rotate_mesh(&m, Q[a]);
        } else { /* a general direction: turn by the transpose of its own rotation */
            up[0] = 0.48, up[1] = 0.6, up[2] = -0.64;
            double R[9];
            mlc_mesh_up_rotation(up, R);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    Rt[3 * i + j] = R[3 * j + i];
            rotate_mesh(&m, Rt);
        }
        mlc_transform tf = mlc_mesh_prepare_transform(&m, up, 1, 2.0);
        seen[a] = mlc_mesh_oriented_checksum(&m, &tf);
        mlc_mesh_apply_transform(&m, tf);
        assert_true(min_signed_volume(&m) > 0);
        for (int i = 0; i < 3 * m.nv; i++)
            if (a < 6 ? m.X[i] != ref.X[i] : fabs(m.X[i] - ref.X[i]) > 1e-14)
                fail_msg("up %d: X[%d] = %.17g, want %.17g", a, i, m.X[i], ref.X[i]);
        assert_near(tf.scale, tf0.scale, a < 6 ? 0 : 1e-14);
        mlc_mesh_free(&m);
    }
    /* Different orientations are different meshes for params.json. */
    for (int a = 0; a <= 6; a++)
        for (int b = 0; b < a; b++)
            assert_true(seen[a] != seen[b]);
    mlc_mesh_free(&ref);
}

/* The quadruped stands on +y (its centre of mass above its four feet) and not upside down;
 * turned so its up axis is z, it stands best on +z. */
static void support_margin_should_find_the_feet(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_err err;
    assert_int_equal(mlc_mesh_read(QUADRUPED, &m, NULL, &err), MLC_OK);
    mlc_mesh_support s[6];
    for (int a = 0; a < 6; a++)
        assert_int_equal(mlc_mesh_support_compute(&m, axes[a], 0.02, &s[a]), MLC_OK);
    assert_true(s[2].margin > 0);
    assert_true(s[3].margin < 0);
    assert_true(s[2].polygon > 0);
    for (int a = 0; a < 6; a++)
        if (a != 2) assert_true(s[2].margin > s[a].margin);
    static const double to_z[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}; /* +y → +z */
    rotate_mesh(&m, to_z);
    mlc_mesh_support t;
    assert_int_equal(mlc_mesh_support_compute(&m, axes[4], 0.02, &t), MLC_OK);
    assert_near(t.margin, s[2].margin, 1e-12);
    assert_near(t.polygon, s[2].polygon, 1e-12);
    mlc_mesh_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axis_rotations_should_be_exact_signed_permutations),
        cmocka_unit_test(vector_rotations_should_be_proper_even_next_to_minus_y),
        cmocka_unit_test(declared_up_should_undo_a_hand_rotation),
        cmocka_unit_test(support_margin_should_find_the_feet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
