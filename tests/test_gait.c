/* test_gait.c: the normalized search space maps onto the parameter box (METHOD.md §4). */
#include "test_util.h"

#include "modalloco/gait.h"

static void decode_should_map_the_unit_box_onto_the_parameter_bounds(void **state) {
    (void)state;
    mlc_gait_space g;
    double amax[3] = {0.5, 1.0, 2.0};
    assert_int_equal(mlc_gait_space_init(&g, 3, 2, 0, amax, 0.2, 0.6, 0.0, 1.5, NULL, 0, NULL),
                     MLC_OK);
    assert_int_equal(g.n, 18);
    double u[18], A[6], T[6], th[6];
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    for (int trial = 0; trial < 200; trial++) {
        for (int i = 0; i < 18; i++) u[i] = trial < 2 ? (double)trial : mlc_rng_uniform(&rng);
        mlc_gait_decode(&g, u, A, T, th);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++) {
                assert_true(fabs(A[2 * i + j]) <= amax[i] * (1 + 1e-15));
                assert_true(T[2 * i + j] >= 0.2 && T[2 * i + j] <= 0.6);
                assert_true(th[2 * i + j] >= 0.0 && th[2 * i + j] <= 1.5);
            }
    }
    /* The box centre is zero amplitude, mid period, mid phase. */
    for (int i = 0; i < 18; i++) u[i] = 0.5;
    mlc_gait_decode(&g, u, A, T, th);
    for (int i = 0; i < 6; i++) {
        assert_near(A[i], 0.0, 0.0);
        assert_near(T[i], 0.4, 1e-15);
        assert_near(th[i], 0.75, 1e-15);
    }
}

static void fixed_periods_should_remove_period_coordinates(void **state) {
    (void)state;
    mlc_gait_space g;
    double amax[2] = {1, 1}, Tf[4] = {0.25, 0.3, 0.35, 0.4};
    assert_int_equal(mlc_gait_space_init(&g, 2, 2, 0, amax, 0.2, 0.6, 0, 1, Tf, 4, NULL), MLC_OK);
    assert_int_equal(g.n, 8);
    double u[8] = {1, 0.5, 0, 0.5, 0.5, 0.5, 0.5, 0.5}, A[4], T[4], th[4];
    mlc_gait_decode(&g, u, A, T, th);
    for (int i = 0; i < 4; i++) assert_near(T[i], Tf[i], 0);
    assert_near(A[0], 1.0, 0);
    assert_near(A[1], -1.0, 0);
    mlc_err err;
    assert_int_equal(mlc_gait_space_init(&g, 2, 2, 0, amax, 0.2, 0.6, 0, 1, Tf, 3, &err),
                     MLC_EINVAL);
    assert_non_null(strstr(err.msg, "actuation.fixed_periods"));
}

static void selection_should_drive_the_modes_with_largest_participation(void **state) {
    (void)state;
    mlc_gait_space g;
    double amax[4] = {1, 1, 1, 1};
    assert_int_equal(mlc_gait_space_init(&g, 4, 1, 2, amax, 0.2, 0.6, 0, 1, NULL, 0, NULL),
                     MLC_OK);
    assert_int_equal(g.n, 4 + 3 * 2);
    double u[10] = {0.1, 0.9, 0.3, 0.9, /* slot 0 */ 1, 0.5, 0.5, /* slot 1 */ 0, 0.5, 0.5};
    int modes[4];
    assert_int_equal(mlc_gait_driven_modes(&g, u, modes), 2);
    assert_int_equal(modes[0], 1); /* tie with mode 3 goes to the smaller index */
    assert_int_equal(modes[1], 3);
    double A[4], T[4], th[4];
    mlc_gait_decode(&g, u, A, T, th);
    assert_near(A[0], 0, 0);
    assert_near(A[1], 1, 0);
    assert_near(A[2], 0, 0);
    assert_near(A[3], -1, 0);
}

static void inconsistent_bounds_should_be_rejected(void **state) {
    (void)state;
    mlc_gait_space g;
    double amax[1] = {1};
    mlc_err err;
    assert_int_equal(mlc_gait_space_init(&g, 1, 2, 0, amax, 0.6, 0.2, 0, 1, NULL, 0, &err),
                     MLC_EINVAL);
    assert_non_null(strstr(err.msg, "actuation.period_range"));
    assert_int_equal(mlc_gait_space_init(&g, 1, 2, 2, amax, 0.2, 0.6, 0, 1, NULL, 0, &err),
                     MLC_EINVAL);
    assert_non_null(strstr(err.msg, "actuation.select"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decode_should_map_the_unit_box_onto_the_parameter_bounds),
        cmocka_unit_test(fixed_periods_should_remove_period_coordinates),
        cmocka_unit_test(selection_should_drive_the_modes_with_largest_participation),
        cmocka_unit_test(inconsistent_bounds_should_be_rejected),
    };
    return cmocka_run_group_tests_name("gait", tests, NULL, NULL);
}
