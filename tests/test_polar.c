/* test_polar.c: the batched polar decomposition is bit-identical to the one-at-a-time one, for
 * every group size and mix of warm, cold, singular and reflected problems (the simulator's
 * determinism rests on it), and both return proper rotations. */
#include "test_util.h"

#include "modalloco/polar.h"

static void random_problem(mlc_rng *rng, int kind, double A[9], double q[4]) {
    for (int i = 0; i < 9; i++) A[i] = mlc_rng_normal(rng);
    if (kind == 1) /* near the identity, as in a simulation step */
        for (int i = 0; i < 9; i++) A[i] = 0.05 * A[i] + (i % 4 == 0);
    if (kind == 2) /* rank one */
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++) A[i + 3 * j] = A[i] * A[3 + j];
    if (kind == 3) /* reflected */
        for (int i = 0; i < 3; i++) A[i] = -A[i];
    if (kind == 4) memset(A, 0, 9 * sizeof(double));
    q[0] = 1, q[1] = q[2] = q[3] = 0;
    if (kind == 1) q[0] = 1, q[1] = 0.01 * mlc_rng_normal(rng), q[2] = 0.02, q[3] = -0.01;
}

static void batched_should_equal_single_bit_for_bit(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 42);
    enum { N = 37 };
    double A[9 * N], q1[4 * N], qn[4 * N], R1[9 * N], Rn[9 * N];
    int w1[N], wn[N];
    for (int n = 1; n <= N; n++) {
        for (int p = 0; p < n; p++) random_problem(&rng, (p * 7 + n) % 5, A + 9 * p, q1 + 4 * p);
        memcpy(qn, q1, sizeof(double) * 4 * (size_t)n);
        int total = 0;
        for (int p = 0; p < n; p++) total += w1[p] = mlc_polar(A + 9 * p, q1 + 4 * p, R1 + 9 * p);
        assert_int_equal(mlc_polar_n(n, A, qn, Rn, wn), total);
        assert_memory_equal(R1, Rn, sizeof(double) * 9 * (size_t)n);
        assert_memory_equal(q1, qn, sizeof(double) * 4 * (size_t)n);
        assert_memory_equal(w1, wn, sizeof(int) * (size_t)n);
    }
}

static void rotations_should_be_proper_and_optimal(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    for (int t = 0; t < 500; t++) {
        double A[9], q[4], R[9];
        random_problem(&rng, t % 4, A, q);
        mlc_polar(A, q, R);
        /* RᵀR = I and det R = +1. */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double d = 0;
                for (int k = 0; k < 3; k++) d += R[k + 3 * i] * R[k + 3 * j];
                assert_near(d, i == j, 1e-12);
            }
        double det = R[0] * (R[4] * R[8] - R[7] * R[5]) - R[3] * (R[1] * R[8] - R[7] * R[2]) +
                     R[6] * (R[1] * R[5] - R[4] * R[2]);
        assert_near(det, 1.0, 1e-12);
        /* Optimal: no small rotation of R increases tr(Rᵀ A). */
        double best = 0;
        for (int i = 0; i < 9; i++) best += R[i] * A[i];
        for (int axis = 0; axis < 3; axis++)
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                double th = sgn * 1e-3, c = cos(th), s = sin(th), G[9] = {0}, RG[9];
                int a = (axis + 1) % 3, b = (axis + 2) % 3;
                G[axis + 3 * axis] = 1, G[a + 3 * a] = c, G[b + 3 * b] = c;
                G[a + 3 * b] = -s, G[b + 3 * a] = s;
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        RG[i + 3 * j] = 0;
                        for (int k = 0; k < 3; k++) RG[i + 3 * j] += R[i + 3 * k] * G[k + 3 * j];
                    }
                double tr = 0;
                for (int i = 0; i < 9; i++) tr += RG[i] * A[i];
                assert_true(tr <= best + 1e-12 * (1 + fabs(best)));
            }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batched_should_equal_single_bit_for_bit),
        cmocka_unit_test(rotations_should_be_proper_and_optimal),
    };
    return cmocka_run_group_tests_name("polar", tests, NULL, NULL);
}
