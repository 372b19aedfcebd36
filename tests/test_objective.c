/* test_objective.c: the objective terms of a rollout (docs/method.md §7) agree with their
 * definitions evaluated independently from the frames: J_disp from the centres of mass,
 * J_align = max(0, min_t (R û₀)·v̂), and with objective.upright also min_t (R ŷ)·ŷ. */
#include "test_util.h"

#include "test_sim_util.h"

#include <unistd.h>

#include "objective.h"

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

/* 150 steps of the quadruped with the paper's contact (equality constraints, damping
 * friction) and an actuation that makes the body lurch and roll over: what matters here is
 * the bookkeeping, not the physics. */
static mlc_actuation lurching_rollout(tsim *t, mlc_sim_settings *set, double A[4], double T[4],
                                      double th[4]) {
    test_quadruped_mesh(0.25, &t->mesh);
    mlc_sim_settings_default(set);
    set->steps = 150;
    set->contact_model = MLC_CONTACT_EQUALITY, set->friction = 0, set->damping = 0.2;
    tsim_init(t, set, 4, 4, 5, 12);
    for (int i = 0; i < 4; i++) {
        A[i] = 0.5 / t->sub.grad_max[i];
        T[i] = 0.2 + 0.07 * i;
        th[i] = 0.21 * i;
    }
    return (mlc_actuation){4, 1, A, T, th};
}

static void objective_terms_should_match_their_definitions(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[4], T[4], th[4];
    mlc_actuation act = lurching_rollout(&t, &set, A, T, th);
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
    /* The excess is the same fade-out unclamped: the rise's share is (rise − 0.6L)/0.4L when
     * positive, the airborne share adds a non-negative term, and it is 0 exactly when the
     * gate is 1 (both within 60% of their limits). */
    double e_rise = fmax(0, (rise - 0.15) / 0.1);
    assert_true(gated.gate_excess >= e_rise - 1e-12);
    assert_true((gated.gate_excess == 0) == (gated.J_gate == 1));
    if (gated.J_gate > 0) assert_true(gated.gate_excess <= 2.0 + 1e-12);
    assert_true(plain.gate_excess == 0); /* gate off: no excess */
    print_message("rise %.3f extents: gate %.3f, excess %.3f\n", rise, gated.J_gate,
                  gated.gate_excess);
    print_message("J_align %.4f, with upright %.4f (min up_y %.4f)\n", plain.J_align, up.J_align,
                  f.min_up);
    tsim_free(&t);
}

/* objective.whole_losses: the same lurching rollout scored toward the direction it went and
 * away from it. A gain is scored as without the key, bit for bit; a backward travel is J_disp
 * whole, where without the key J_align (the body turns and rolls) and the gate shrink it. */
static void whole_losses_should_leave_gains_and_keep_losses_whole(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[4], T[4], th[4];
    mlc_actuation act = lurching_rollout(&t, &set, A, T, th);
    for (int way = 1; way >= -1; way -= 2) {
        mlc_objective_settings obj;
        mlc_objective_settings_default(&obj);
        obj.direction[0] = 0.6 * way, obj.direction[2] = 0.8 * way;
        obj.forward[0] = way;
        mlc_rollout_result paper, whole;
        assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &paper), MLC_OK);
        obj.whole_losses = 1;
        assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &whole), MLC_OK);
        assert_near(whole.J_disp, paper.J_disp, 0.0);
        assert_near(paper.J, paper.J_disp * paper.J_align * paper.J_gate, 1e-12);
        if (paper.J_disp < 0) { /* a gain: the same bits */
            assert_memory_equal(&whole.J, &paper.J, sizeof paper.J);
        } else { /* a loss: whole, and more than the paper's scaled one */
            assert_near(whole.J, whole.J_disp, 0.0);
            assert_true(paper.J_align * paper.J_gate < 0.9);
            assert_true(whole.J > paper.J);
        }
        print_message("direction %+d: J_disp %.4f, J %.4f (paper) %.4f (whole losses)\n", way,
                      paper.J_disp, paper.J, whole.J);
    }
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

/* ---- The task kinds and the penalties, re-derived from the frames ---------------------- */
#define TASK_MAX_FRAMES 400
typedef struct task_frames {
    const mlc_model *model;
    int n;
    double com[TASK_MAX_FRAMES][3], fwd[TASK_MAX_FRAMES][3], R[TASK_MAX_FRAMES][9];
} task_frames;

static mlc_status record_frame(void *user, int frame, double time, const double *z,
                               const double com[3], const double forward[3], int contacts) {
    (void)time, (void)contacts;
    task_frames *f = user;
    assert_int_equal(frame, f->n);
    assert_true(f->n < TASK_MAX_FRAMES);
    memcpy(f->com[f->n], com, 3 * sizeof(double));
    memcpy(f->fwd[f->n], forward, 3 * sizeof(double));
    mlc_model_rotation(f->model, z, f->R[f->n]);
    f->n++;
    return MLC_OK;
}

static double tdist(const double a[3], const double b[3]) {
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

/* Rotation angle about axis l from R0 to R1 (world frame), via the quaternion of R1 R0ᵀ: an
 * independent route from the objective's skew-part formula. */
static double rot_about(const double R0[9], const double R1[9], const double l[3]) {
    double D[3][3];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            D[a][b] = 0;
            for (int j = 0; j < 3; j++)
                D[a][b] += R1[a + 3 * j] * R0[b + 3 * j];
        }
    double w = 0.5 * sqrt(fmax(0, 1 + D[0][0] + D[1][1] + D[2][2]));
    double q[3] = {(D[2][1] - D[1][2]) / (4 * w), (D[0][2] - D[2][0]) / (4 * w),
                   (D[1][0] - D[0][1]) / (4 * w)};
    double sn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    double ang = 2 * atan2(sn, w);
    return sn > 0 ? ang * (q[0] * l[0] + q[1] * l[1] + q[2] * l[2]) / sn : 0;
}

static void task_kinds_should_match_their_definitions(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[4], T[4], th[4];
    mlc_actuation act = lurching_rollout(&t, &set, A, T, th);
    const double e = mlc_model_extent(t.model), h = set.dt;
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.credible_gate = 0, obj.upright = 0;
    obj.direction[0] = 0.6, obj.direction[2] = 0.8;
    static task_frames f;
    f.model = t.model, f.n = 0;
    mlc_rollout_result r;
    const int S = set.steps;

    /* turn: J = (cos φ₀ − cos φ_S)/2 with φ the ground angle from ĥ to the forward axis. */
    obj.kind = MLC_OBJ_TURN;
    obj.heading[0] = 0, obj.heading[2] = -2; /* −z */
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, record_frame, &f, &r), MLC_OK);
    assert_false(r.failed);
    assert_int_equal(f.n, S + 1);
    double c0 = -f.fwd[0][2] / hypot(f.fwd[0][0], f.fwd[0][2]);
    double c1 = -f.fwd[S][2] / hypot(f.fwd[S][0], f.fwd[S][2]);
    double Jt = 0.5 * (c0 - c1);
    assert_near(r.J, Jt, 1e-12 * fmax(1e-3, fabs(Jt)));
    assert_near(cos(r.task_error), c1, 1e-12);
    assert_true(fabs(Jt) > 1e-3); /* the body did turn */
    /* Translating does not count, spinning in place does: synthetic frames through the
     * accumulator (forward +x, heading −z). */
    for (int spin = 0; spin <= 1; spin++) {
        mlc_objective_acc acc;
        mlc_rollout_result syn;
        mlc_objective_settings so = obj;
        so.forward[0] = 1, so.forward[1] = so.forward[2] = 0;
        double Id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, cm[3] = {0, 0.5, 0}, fw[3];
        mlc_objective_begin(&acc, &so, 0.01, cm, Id, &syn, fw);
        for (int s2 = 1; s2 <= 50; s2++) {
            double a = spin ? 0.5 * M_PI * s2 / 50 : 0; /* about +y: +x turns toward −z */
            double Ry[9] = {cos(a), 0, -sin(a), 0, 1, 0, sin(a), 0, cos(a)};
            cm[0] = spin ? 0 : 0.02 * s2;
            mlc_objective_frame(&acc, cm, Ry, 0, 0, fw);
        }
        mlc_objective_end(&acc, 50, 50, 0);
        assert_near(syn.J, spin ? -0.5 : 0.0, 1e-12);
        assert_near(syn.task_error, 0.0, 1e-12 + (spin ? 0 : 0.5 * M_PI));
    }

    /* target: J = (‖c_S − p‖ − ‖c₀ − p‖)/e */
    obj.kind = MLC_OBJ_TARGET;
    obj.target[0] = -1, obj.target[1] = 0.4, obj.target[2] = 0.5;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &r), MLC_OK);
    double Jg = (tdist(f.com[S], obj.target) - tdist(f.com[0], obj.target)) / e;
    assert_near(r.J, Jg, 1e-12 * fabs(Jg));
    assert_near(r.task_error, tdist(f.com[S], obj.target) / e, 1e-12);

    /* jump to a target: the jump term plus the same target term. */
    mlc_rollout_result jump_only;
    obj.kind = MLC_OBJ_JUMP;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &jump_only), MLC_OK);
    obj.target_set = 1;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &r), MLC_OK);
    assert_near(r.J - jump_only.J, Jg, 1e-12 * fabs(Jg) + 1e-15);
    obj.target_set = 0;

    /* path: mean over frames of ‖c(t) − P(t)‖ − ‖c₀ − P(t)‖, / e; P piecewise linear,
     * held at the ends (waypoints from 0.2 s to 1.2 s of a 1.5 s rollout). */
    double wp[12] = {0.2, 0, 0.5, 0, 0.7, -0.5, 0.5, 0.3, 1.2, -1, 0.5, 0.6};
    obj.kind = MLC_OBJ_PATH;
    obj.path = wp, obj.npath = 3;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &r), MLC_OK);
    double sum = 0, sum0 = 0;
    for (int i = 0; i <= S; i++) {
        double tt = i * h, p[3];
        const double *a = wp, *b = wp + 4;
        if (tt > wp[4]) a = wp + 4, b = wp + 8;
        double u = fmin(1, fmax(0, (tt - a[0]) / (b[0] - a[0])));
        for (int k = 0; k < 3; k++)
            p[k] = a[k + 1] + u * (b[k + 1] - a[k + 1]);
        sum += tdist(f.com[i], p);
        sum0 += tdist(f.com[0], p);
    }
    double Jp = (sum - sum0) / ((S + 1) * e);
    assert_near(r.J, Jp, 1e-12 * fabs(Jp));
    assert_near(r.task_error, sum / ((S + 1) * e), 1e-12);

    /* roll: θ_l/(2π) − (c_S − c₀)·v̂/(π e), θ_l summed frame to frame about l = v̂ × ŷ. */
    obj.kind = MLC_OBJ_ROLL;
    obj.path = NULL, obj.npath = 0;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &r), MLC_OK);
    const double v[3] = {0.6, 0, 0.8}, l[3] = {-0.8, 0, 0.6};
    double th_l = 0, disp = 0;
    for (int i = 1; i <= S; i++)
        th_l += rot_about(f.R[i - 1], f.R[i], l);
    for (int k = 0; k < 3; k++)
        disp += (f.com[S][k] - f.com[0][k]) * v[k];
    double Jr = th_l / (2 * M_PI) - disp / (M_PI * e);
    /* the objective's rotations are polar factors warm-started frame to frame, the recorded
     * ones computed afresh: equal to rounding */
    assert_near(r.J, Jr, 1e-9 * fmax(1, fabs(Jr)));
    assert_near(r.roll_angle, th_l, 1e-9 * fmax(1, fabs(th_l)));
    assert_true(fabs(th_l) > 0.5); /* this actuation rolls the body */
    assert_true(fabs(r.flip_angle) < fabs(r.roll_angle));

    /* flip: the same rotation over airborne frames; without contact every frame is. */
    obj.kind = MLC_OBJ_FLIP;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &r), MLC_OK);
    assert_near(r.J, r.flip_angle / (2 * M_PI), 1e-15);

    /* effort and vibration, added to the locomotion J. */
    obj.kind = MLC_OBJ_LOCOMOTION;
    obj.effort = 0.7, obj.vibration = 1e-3;
    for (int i = 0; i < 4; i++)
        obj.a_max[i] = 0.3 / t.sub.grad_max[i];
    f.n = 0;
    mlc_rollout_result plain;
    mlc_objective_settings o0 = obj;
    o0.effort = o0.vibration = 0;
    assert_int_equal(mlc_rollout_run(t.ro, &act, &o0, NULL, NULL, &plain), MLC_OK);
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, record_frame, &f, &r), MLC_OK);
    double eff = 0, abar[5];
    for (int s = 1; s <= S; s++) {
        mlc_actuation_eval(&act, 4, s * h, set.ramp, abar);
        for (int i = 0; i < 4; i++)
            eff += h * (abar[i] / obj.a_max[i]) * (abar[i] / obj.a_max[i]);
    }
    double Je = 0.7 * eff / (S * h);
    assert_near(r.J_effort, Je, 1e-12 * Je);
    double vib = 0;
    for (int i = 1; i < S; i++) {
        double q = 0;
        for (int k = 0; k < 3; k++) {
            double d2 = f.com[i + 1][k] - 2 * f.com[i][k] + f.com[i - 1][k];
            q += d2 * d2;
        }
        vib += q;
    }
    double Jv = 1e-3 * vib / ((S - 1) * h * h * h * h * e * e);
    assert_near(r.J_vibration, Jv, 1e-12 * Jv);
    assert_near(r.J, plain.J + Je + Jv, 1e-12 * fabs(r.J));
    assert_true(Je > 0 && Jv > 0);
    print_message("turn %.4f target %.4f path %.4f roll %.4f rad, effort %.4g vibration %.4g\n", Jt,
                  Jg, Jp, th_l, Je, Jv);

    /* flip without contact: every frame is airborne, so flip = roll. */
    tsim_free(&t);
    tsim u = {0};
    test_quadruped_mesh(0.25, &u.mesh);
    set.contact = 0, set.steps = 60;
    tsim_init(&u, &set, 4, 4, 5, 12);
    for (int i = 0; i < 4; i++)
        A[i] = 0.5 / u.sub.grad_max[i];
    obj.kind = MLC_OBJ_FLIP, obj.effort = obj.vibration = 0;
    assert_int_equal(mlc_rollout_run(u.ro, &act, &obj, NULL, NULL, &r), MLC_OK);
    assert_true(r.roll_angle != 0);
    assert_true(r.flip_angle == r.roll_angle);
    tsim_free(&u);
}

/* Waypoint files: good ones read back; every mistake named with its file and line. */
static void path_files_should_be_checked(void **state) {
    (void)state;
    char dir[] = "/tmp/mlc_path_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256];
    snprintf(file, sizeof file, "%s/p.csv", dir);
    struct {
        const char *text, *expect;
    } cases[] = {
        {"time,x,y,z\n0,0,0.5,0\n1, 1,0.5,0\r\n\n", NULL},
        {"0,0,0.5,0\n", "p.csv:1: expected the header line"},
        {"time,x,y,z\n0,0,0.5,0\n1,1,0.5\n", "p.csv:3: malformed waypoint"},
        {"time,x,y,z\n0,0,0.5,0\n1,1,x,0\n", "p.csv:3: malformed waypoint"},
        {"time,x,y,z\n0,0,0.5,0\n0,1,0.5,0\n", "p.csv:3: time 0 is not after"},
        {"time,x,y,z\n", "no waypoints"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *fp = fopen(file, "w");
        assert_non_null(fp);
        fputs(cases[i].text, fp);
        fclose(fp);
        double *w = NULL;
        int n = 0;
        mlc_err err = {0};
        mlc_status s = mlc_objective_path_read(file, &w, &n, &err);
        if (!cases[i].expect) {
            assert_int_equal(s, MLC_OK);
            assert_int_equal(n, 2);
            assert_true(w[4] == 1 && w[5] == 1 && w[6] == 0.5);
            mlc_free(w);
        } else {
            assert_int_equal(s, MLC_EINVAL);
            assert_null(w);
            assert_non_null(strstr(err.msg, cases[i].expect));
        }
    }
    remove(file);
    mlc_err err = {0};
    double *w = NULL;
    int n = 0;
    assert_int_equal(mlc_objective_path_read(file, &w, &n, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "objective.path"));
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(objective_terms_should_match_their_definitions),
        cmocka_unit_test(whole_losses_should_leave_gains_and_keep_losses_whole),
        cmocka_unit_test(work_penalty_should_carry_the_time_step),
        cmocka_unit_test(a_failing_frame_function_should_stop_the_rollout),
        cmocka_unit_test(task_kinds_should_match_their_definitions),
        cmocka_unit_test(path_files_should_be_checked),
    };
    return cmocka_run_group_tests_name("objective", tests, NULL, NULL);
}
