/* test_objective.c: the objective terms of a rollout (docs/method.md §7) agree with their
 * definitions evaluated independently from the frames: J_disp from the centres of mass,
 * J_align = max(0, min_t (R û₀)·v̂), and with objective.upright also min_t (R ŷ)·ŷ. */
#include "test_util.h"

#include "test_sim_util.h"

typedef struct frames {
    const mlc_model *model;
    double u0[3], v[3];
    double min_fwd, min_up;
    double sum_fwd; /* Σ_t max(0, (R û₀)·v̂) */
    int n;
    double c0[3], c1[3];
    double max_y; /* highest centre of mass */
} frames;

static mlc_status on_frame(void *user, int frame, double time, const double *z, const double com[3],
                           const double forward[3], int contacts) {
    (void)time, (void)contacts, (void)forward;
    frames *f = user;
    double R[9];
    mlc_model_rotation(f->model, z, R);
    double fwd = 0;
    for (int k = 0; k < 3; k++)
        fwd += (R[k] * f->u0[0] + R[k + 3] * f->u0[1] + R[k + 6] * f->u0[2]) * f->v[k];
    if (frame == 0 || fwd < f->min_fwd) f->min_fwd = fwd;
    f->sum_fwd += fmax(0.0, fwd);
    f->n++;
    if (frame == 0 || R[4] < f->min_up) f->min_up = R[4];
    if (frame == 0) memcpy(f->c0, com, sizeof f->c0);
    if (frame == 0 || com[1] > f->max_y) f->max_y = com[1];
    memcpy(f->c1, com, sizeof f->c1);
    return MLC_OK;
}

static void objective_terms_should_match_their_definitions(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = 150;
    /* The paper's contact (equality constraints, damping friction), which lets this actuation
     * roll the body over: what matters here is the bookkeeping, not the physics. */
    set.contact_equality = 1, set.friction = 0, set.damping = 0.2;
    tsim_init(&t, &set, 4, 4, 5, 12);
    /* Actuation that makes the body lurch and roll over. */
    double A[4], T[4], th[4];
    for (int i = 0; i < 4; i++) {
        A[i] = 0.5 / t.sub.grad_max[i];
        T[i] = 0.2 + 0.07 * i;
        th[i] = 0.21 * i;
    }
    mlc_actuation act = {4, 1, A, T, th};
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.credible_gate = 0;                          /* checked below */
    obj.direction[0] = 0.6, obj.direction[2] = 0.8; /* a diagonal target */
    obj.forward[0] = 1;
    frames f = {.model = t.model, .u0 = {1, 0, 0}, .v = {0.6, 0, 0.8}};
    mlc_rollout_result plain, up;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, on_frame, &f, &plain), MLC_OK);
    assert_false(plain.failed);
    double disp = 0;
    for (int k = 0; k < 3; k++)
        disp += (f.c1[k] - f.c0[k]) * f.v[k];
    assert_near(plain.displacement, disp, 1e-12);
    assert_near(plain.J_disp, -disp, 1e-12);
    assert_near(plain.J_align, fmax(0.0, f.min_fwd), 1e-9);
    assert_near(plain.J, plain.J_disp * plain.J_align, 1e-12);

    obj.upright = 1;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &up), MLC_OK);
    assert_near(up.J_align, fmax(0.0, fmin(f.min_fwd, f.min_up)), 1e-9);
    assert_near(up.displacement, plain.displacement, 0.0); /* same physics, bit for bit */
    /* This actuation rolls the body over while its forward axis stays roughly on course: the
     * paper's J_align does not see it, the upright gate does. */
    assert_true(plain.J_align > 0.2);
    assert_true(f.min_up < 0);
    assert_true(up.J_align < plain.J_align);

    /* align_mode "mean": the mean over frames of max(0, a(t)). */
    mlc_rollout_result mean;
    obj.upright = 0;
    obj.align_mean = 1;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &mean), MLC_OK);
    assert_near(mean.J_align, f.sum_fwd / f.n, 1e-9);
    assert_true(mean.J_align >= plain.J_align);
    assert_near(mean.J, mean.J_disp * mean.J_align, 1e-12);

    /* The credibility gate: J_gate = g(rise)·g(airborne) with g(x, L) = clamp((L − x)/0.4L),
     * rise from the frames' centres of mass; this lurching rollout rises and flies enough to
     * lose part of its gain. */
    mlc_rollout_result gated;
    obj.align_mean = 0;
    obj.credible_gate = 1;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &gated), MLC_OK);
    assert_true(gated.J_gate >= 0 && gated.J_gate <= 1);
    assert_near(gated.J, gated.J_disp * gated.J_align * gated.J_gate, 1e-12);
    double rise = (f.max_y - f.c0[1]) / mlc_model_extent(t.model);
    double g_rise = fmin(1, fmax(0, (0.25 - rise) / 0.1));
    assert_true(gated.J_gate <= g_rise + 1e-12); /* the airborne factor is ≤ 1 */
    print_message("rise %.3f extents: gate %.3f\n", rise, gated.J_gate);
    print_message("J_align %.4f, with upright %.4f (min up_y %.4f)\n", plain.J_align, up.J_align,
                  f.min_up);
    tsim_free(&t);
}

/* Eq. 18 as the paper writes it, with the time step: J_work = α Σ_s Δz_sᵀ(bᵃ − Qᵃ z_s)·h, the
 * same accumulator for every h (checked at two), against the steps' own work terms. */
static void work_penalty_should_carry_the_time_step(void **state) {
    (void)state;
    double A[4], T[4], th[4];
    for (int run = 0; run < 2; run++) {
        tsim t = {0};
        test_quadruped_mesh(0.25, &t.mesh);
        mlc_sim_settings set;
        mlc_sim_settings_default(&set);
        set.dt = run ? 0.005 : 0.01;
        set.steps = run ? 80 : 40;
        tsim_init(&t, &set, 3, 4, 4, 12);
        for (int i = 0; i < 4; i++)
            A[i] = 0.1 / t.sub.grad_max[i], T[i] = 0.3, th[i] = 0.1 * i;
        mlc_actuation act = {4, 1, A, T, th};
        mlc_objective_settings obj;
        mlc_objective_settings_default(&obj);
        obj.work_penalty = 2.5;
        mlc_rollout_result res;
        assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &res), MLC_OK);
        mlc_rollout_reset(t.ro);
        double sum = 0, sum_abs = 0;
        for (int s = 0; s < set.steps; s++) {
            assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
            sum += mlc_rollout_last_work(t.ro);
            sum_abs += fabs(mlc_rollout_last_work(t.ro));
        }
        assert_true(fabs(sum) > 0);
        assert_near(res.J_work, 2.5 * set.dt * sum, 1e-12 * fabs(2.5 * set.dt * sum));
        obj.work_abs = 1;
        assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &res), MLC_OK);
        assert_near(res.J_work, 2.5 * set.dt * sum_abs, 1e-12 * 2.5 * set.dt * sum_abs);
        tsim_free(&t);
    }
}

/* A frame function that fails (e.g. a frame write) stops the rollout: no frame after it, its
 * status comes back and the result counts the steps done and is marked failed. */
typedef struct stopper {
    int calls, stop_at;
} stopper;

static mlc_status stop_frame(void *user, int frame, double time, const double *z,
                             const double com[3], const double forward[3], int contacts) {
    (void)time, (void)z, (void)com, (void)forward, (void)contacts;
    stopper *st = user;
    assert_int_equal(frame, st->calls);
    st->calls++;
    return frame == st->stop_at ? MLC_EIO : MLC_OK;
}

static void a_failing_frame_function_should_stop_the_rollout(void **state) {
    (void)state;
    const int steps = 30;
    tsim t = {0};
    tsim_quadruped(&t, steps, 3, 4, 4, 12);
    double A[4], T[4], th[4];
    for (int i = 0; i < 4; i++)
        A[i] = 0.1 / t.sub.grad_max[i], T[i] = 0.3, th[i] = 0.1 * i;
    mlc_actuation act = {4, 1, A, T, th};
    mlc_rollout_result res;
    const int stops[3] = {0, 7, steps}; /* at rest, mid-way, at the last frame */
    for (int k = 0; k < 3; k++) {
        stopper st = {0, stops[k]};
        assert_int_equal(mlc_rollout_run(t.ro, &act, NULL, stop_frame, &st, &res), MLC_EIO);
        assert_int_equal(st.calls, stops[k] + 1);
        assert_int_equal(res.steps_done, stops[k]);
        assert_true(res.failed);
    }
    stopper none = {0, -1};
    assert_int_equal(mlc_rollout_run(t.ro, &act, NULL, stop_frame, &none, &res), MLC_OK);
    assert_int_equal(none.calls, steps + 1);
    assert_int_equal(res.steps_done, steps);
    assert_false(res.failed);
    tsim_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(objective_terms_should_match_their_definitions),
        cmocka_unit_test(work_penalty_should_carry_the_time_step),
        cmocka_unit_test(a_failing_frame_function_should_stop_the_rollout),
    };
    return cmocka_run_group_tests_name("objective", tests, NULL, NULL);
}
