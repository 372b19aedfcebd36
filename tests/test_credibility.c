/* test_credibility.c: the credibility block (credibility.h) re-derived independently from the
 * stored frames of a rollout, the robustness replays (sequential re-derivation, thread-count
 * independence, the J >= 0 rule), the verdict's limits, and the perturbation's statistics and
 * determinism (perturb.h), and the bounded lowest-vertex search against the exhaustive scan on
 * random gaits. */
#include <stdio.h>

#include "credibility.h"
#include "perturb.h"
#include "test_sim_util.h"

/* ---- Stored frames ------------------------------------------------------------------------ */
typedef struct store {
    int r, cap, n;
    double *z; /* cap × r */
} store;

static mlc_status store_frame(void *user, int frame, double time, const double *z,
                              const double com[3], const double forward[3], int contacts) {
    MLC_UNUSED(time), MLC_UNUSED(com), MLC_UNUSED(forward), MLC_UNUSED(contacts);
    store *s = user;
    assert_int_equal(frame, s->n); /* frames come in order, from 0 */
    assert_true(frame < s->cap);
    memcpy(s->z + (size_t)frame * s->r, z, sizeof(double) * (size_t)s->r);
    s->n++;
    return MLC_OK;
}

/* y of vertex i under state z, straight from sim.h's layout: z = [t_x; t_y; t_z], t_k[4b + c]
 * = (T_b)_{kc}, x_i[k] = Σ_b W_ib (T_b [X_i; 1])_k. */
static double skin_y(const tsim *t, const double *z, int i) {
    int nv = t->mesh.nv, w = t->sub.w;
    const double *X = t->mesh.X + 3 * i, *ty = z + 4 * w;
    double y = 0;
    for (int b = 0; b < w; b++)
        y += t->sub.W[i + (size_t)nv * b] *
             (ty[4 * b] * X[0] + ty[4 * b + 1] * X[1] + ty[4 * b + 2] * X[2] + ty[4 * b + 3]);
    return y;
}

/* The measures of credibility.h, from the stored frames: every vertex of a boundary face
 * skinned here, the centre of mass as the lumped-mass mean of all skinned vertices. */
static void rederive(const tsim *t, const store *st, double ground, mlc_credibility *c) {
    int nv = t->mesh.nv;
    unsigned char *bnd = calloc((size_t)nv, 1);
    for (int f = 0; f < 3 * t->mesh.nf; f++)
        bnd[t->mesh.F[f]] = 1;
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], t->mesh.X[3 * i + k]), hi[k] = fmax(hi[k], t->mesh.X[3 * i + k]);
    double e = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    double cy0 = 0, rise = 0, depth = 0, up = 1e300;
    int air = 0;
    for (int f = 0; f < st->n; f++) {
        const double *z = st->z + (size_t)f * st->r;
        double msum = 0, my = 0, ymin = 1e300;
        for (int i = 0; i < nv; i++) {
            double y = skin_y(t, z, i);
            msum += t->fem.vmass[i];
            my += t->fem.vmass[i] * y;
            if (bnd[i]) ymin = fmin(ymin, y);
        }
        double cy = my / msum;
        if (f == 0) cy0 = cy;
        rise = fmax(rise, cy - cy0);
        depth = fmax(depth, ground - ymin);
        if (f > 0 && ymin > ground + 0.01 * e) air++;
        double R[9];
        mlc_model_rotation(t->model, z, R);
        up = fmin(up, R[4]);
    }
    free(bnd);
    c->rise = rise / e;
    c->penetration = depth / e;
    c->airborne = st->n > 1 ? (double)air / (st->n - 1) : 0;
    c->up_min = up;
    c->frames = st->n;
}

/* Robustness the slow way: the documented noise, one replay after the other on one rollout. */
static double rederive_robustness(const tsim *t, const mlc_actuation *act,
                                  const mlc_objective_settings *obj, double J) {
    if (!(J < 0)) return 0;
    int mk = act->m * act->k, kept = 0;
    double *p = malloc(sizeof(double) * 3 * (size_t)mk);
    mlc_rng rng;
    mlc_rng_seed(&rng, MLC_CRED_SEED);
    for (int r = 0; r < MLC_CRED_REPLAYS; r++) {
        mlc_gait_perturb(&rng, act->m, act->k, act->A, act->T, act->theta, p, p + mk, p + 2 * mk);
        mlc_actuation pa = {act->m, act->k, p, p + mk, p + 2 * mk};
        mlc_rollout_result rr;
        assert_int_equal(mlc_rollout_run(t->ro, &pa, obj, NULL, NULL, &rr), MLC_OK);
        kept += rr.J <= J / 2;
    }
    free(p);
    return (double)kept / MLC_CRED_REPLAYS;
}

/* The bundled-quadruped-like test body (w = 4, m = 3) with the given ground and gravity. */
static void quad_init(tsim *t, int steps, double ground, const double g[3]) {
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = steps;
    set.ground = ground;
    for (int k = 0; k < 3; k++)
        set.gravity[k] = g[k];
    test_quadruped_mesh(0.25, &t->mesh);
    tsim_init(t, &set, 4, 3, 6, 12);
}

/* One scenario: evaluate, re-derive from stored frames, compare every measure. */
static void check_scenario(double ground, const double g[3], double amp, int jump,
                           mlc_credibility *out) {
    tsim t;
    memset(&t, 0, sizeof t);
    const int S = 150;
    quad_init(&t, S, ground, g);
    double A[6], T[6], th[6];
    for (int i = 0; i < 6; i++) {
        A[i] = amp / t.sub.grad_max[i / 2] * (i % 2 ? 0.5 : 1.0);
        T[i] = 0.3 + 0.1 * i;
        th[i] = 0.15 * i;
    }
    mlc_actuation act = {3, 2, A, T, th};
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.kind = jump;
    /* Locomotion without the alignment factor, along the way this actuation happens to move
     * the body: J < 0, so the robustness replays run and have a gain to keep. */
    obj.align = 0;
    if (!jump) {
        mlc_rollout_result pre;
        assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &pre), MLC_OK);
        double dx = pre.com1[0] - pre.com0[0], dz = pre.com1[2] - pre.com0[2];
        assert_true(hypot(dx, dz) > 0);
        obj.direction[0] = dx, obj.direction[1] = 0, obj.direction[2] = dz;
    }
    store st = {mlc_model_dim(t.model), S + 1, 0, NULL};
    st.z = malloc(sizeof(double) * (size_t)st.cap * (size_t)st.r);
    mlc_rollout_result res, res2;
    mlc_credibility c, d;
    mlc_err err;
    assert_int_equal(mlc_credibility_evaluate(
                         &(mlc_credibility_def){t.model, &t.mesh, &obj, 2, store_frame, &st}, &act,
                         &res, &c, &err),
                     MLC_OK);
    assert_int_equal(st.n, res.steps_done + 1);
    assert_int_equal(c.frames, st.n);
    /* The frames were those of an ordinary rollout. */
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &res2), MLC_OK);
    assert_true(res.J == res2.J);
    memset(&d, 0, sizeof d);
    rederive(&t, &st, ground, &d);
    double tol = 1e-10;
    assert_near(c.rise, d.rise, tol);
    assert_near(c.penetration, d.penetration, tol);
    assert_near(c.airborne, d.airborne, 0); /* a count: identical unless a frame sits on 1% */
    assert_near(c.up_min, d.up_min, tol);
    assert_true(c.robustness == rederive_robustness(&t, &act, &obj, res.J));
    assert_int_equal(c.kept, (int)lround(c.robustness * MLC_CRED_REPLAYS));
    mlc_credibility j = d;
    j.robustness = c.robustness;
    j.failed = res.failed;
    mlc_credibility_judge(&j, jump);
    assert_int_equal(c.credible, j.credible);
    printf("ground %g, g (%g %g %g), amplitude %g: J %.4g rise %.4g airborne %.4g penetration "
           "%.4g up_min %.4g robustness %.3g credible %d\n",
           ground, g[0], g[1], g[2], amp, res.J, c.rise, c.airborne, c.penetration, c.up_min,
           c.robustness, c.credible);
    *out = c;
    free(st.z);
    tsim_free(&t);
}

static void measures_should_match_a_rederivation_from_the_stored_frames(void **state) {
    (void)state;
    mlc_credibility c;
    const double down[3] = {0, -9.81, 0}, tilted[3] = {-6, -9.81, 3};
    /* Dropped from 0.3 extents above the ground: airborne for a while, then landing. */
    check_scenario(-0.6, down, 0.3, 0, &c);
    assert_true(c.airborne > 0 && c.airborne < 1);
    assert_true(c.rise == 0);
    /* Actuated on the ground. */
    check_scenario(0, down, 0.5, 0, &c);
    assert_true(c.penetration > 0);
    assert_true(c.kept >= 0); /* the replays ran */
    /* Gravity pulling sideways: the body tips (up_min well below 1). */
    check_scenario(0, tilted, 0.5, 1, &c);
    assert_true(c.up_min < 0.99);
}

static void robustness_should_not_depend_on_the_thread_count(void **state) {
    (void)state;
    tsim t;
    memset(&t, 0, sizeof t);
    const double down[3] = {0, -9.81, 0};
    quad_init(&t, 80, 0, down);
    double A[6], T[6], th[6];
    for (int i = 0; i < 6; i++)
        A[i] = 0.4 / t.sub.grad_max[i / 2], T[i] = 0.4, th[i] = 0.1 * i;
    mlc_actuation act = {3, 2, A, T, th};
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.credible_gate = 0; /* every replay keeps a J of its own (none gated to 0) */
    mlc_err err;
    double J1[MLC_CRED_REPLAYS], Jn[MLC_CRED_REPLAYS];
    mlc_credibility c1, cn;
    /* J = −1e-9 asks every replay to reach J ≤ −5e-10: whatever they score, they all run. */
    assert_int_equal(mlc_credibility_robustness(t.model, &act, &obj, -1e-9, 1, &c1, J1, &err),
                     MLC_OK);
    for (int r = 0; r < MLC_CRED_REPLAYS; r++)
        assert_true(isfinite(J1[r]));
    for (int threads = 2; threads <= 4; threads++) {
        assert_int_equal(
            mlc_credibility_robustness(t.model, &act, &obj, -1e-9, threads, &cn, Jn, &err), MLC_OK);
        assert_memory_equal(J1, Jn, sizeof J1);
        assert_int_equal(c1.kept, cn.kept);
    }
    /* The replays differ from each other (the noise reaches the rollout). */
    int distinct = 0;
    for (int r = 1; r < MLC_CRED_REPLAYS; r++)
        distinct += J1[r] != J1[0];
    assert_true(distinct > 0);
    /* No gain to keep: robustness 0 and nothing replayed. */
    for (int i = 0; i < 2; i++) {
        double J = i ? 0.25 : 0.0;
        assert_int_equal(mlc_credibility_robustness(t.model, &act, &obj, J, 2, &cn, Jn, &err),
                         MLC_OK);
        assert_true(cn.robustness == 0 && cn.kept == 0);
        for (int r = 0; r < MLC_CRED_REPLAYS; r++)
            assert_true(isnan(Jn[r]));
    }
    tsim_free(&t);
}

static void judge_should_apply_each_limit(void **state) {
    (void)state;
    mlc_credibility good = {0.1, 0.1, 0.01, 0.9, 0.75, 6, 10, 0, 0};
    mlc_credibility c = good;
    mlc_credibility_judge(&c, 0);
    assert_true(c.credible);
    char why[256];
    mlc_credibility_explain(&c, 0, why, sizeof why);
    assert_string_equal(why, "");
    /* Each limit alone, at and beyond its threshold. */
    struct {
        double *field;
        double ok, bad;
        int jump_exempt;
    } lim[] = {
        {&c.rise, MLC_CRED_RISE_MAX, 0.26, 1},
        {&c.airborne, MLC_CRED_AIRBORNE_MAX, 0.26, 1},
        {&c.penetration, MLC_CRED_PENETRATION_MAX, 0.021, 0},
        {&c.up_min, 0.5001, MLC_CRED_UP_MIN, 0},
        {&c.robustness, MLC_CRED_ROBUSTNESS_MIN, 0.625, 0},
    };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
        for (int jump = 0; jump <= 1; jump++) {
            c = good;
            *lim[i].field = lim[i].ok;
            mlc_credibility_judge(&c, jump);
            assert_true(c.credible);
            *lim[i].field = lim[i].bad;
            mlc_credibility_judge(&c, jump);
            assert_int_equal(c.credible, jump && lim[i].jump_exempt);
            mlc_credibility_explain(&c, jump, why, sizeof why);
            assert_int_equal(why[0] != 0, !(jump && lim[i].jump_exempt));
            *lim[i].field = NAN;
            mlc_credibility_judge(&c, jump);
            assert_int_equal(c.credible, jump && lim[i].jump_exempt);
        }
    }
    c = good;
    c.failed = 1;
    mlc_credibility_judge(&c, 1);
    assert_false(c.credible);
    /* found: credible and gaining. */
    mlc_rollout_result res = {0};
    c = good;
    mlc_credibility_judge(&c, 0);
    res.J = -0.1;
    assert_true(mlc_credibility_found(&res, &c));
    res.J = 0;
    assert_false(mlc_credibility_found(&res, &c));
    /* A tiny buffer is filled, truncated, never overrun. */
    c.rise = 1, c.up_min = -1;
    char small[8];
    memset(small, 'x', sizeof small);
    mlc_credibility_explain(&c, 0, small, 5);
    assert_int_equal(strlen(small), 4);
    assert_int_equal(small[5], 'x');
}

static void perturbation_should_have_the_documented_statistics(void **state) {
    (void)state;
    enum { M = 3, K = 2, N = M * K, DRAWS = 4000 };
    const double A[N] = {0.2, -0.05, 0, 0.01, -0.3, 0.0};
    const double T[N] = {0.5, 1.0, 0.25, 2.0, 0.7, 1.3};
    const double th[N] = {0, 0.25, 0.5, 0.75, 1.0, -0.2};
    const double big = 0.3;
    double oA[N], oT[N], oth[N];
    /* Per parameter and kind: sum and sum of squares of the normalized noise. */
    double s1[3][N] = {{0}}, s2[3][N] = {{0}};
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    for (int d = 0; d < DRAWS; d++) {
        mlc_gait_perturb(&rng, M, K, A, T, th, oA, oT, oth);
        for (int i = 0; i < N; i++) {
            assert_true(oT[i] > 0);
            double z[3] = {(oA[i] - A[i]) / (0.01 * fabs(A[i]) + 0.001 * big),
                           (oT[i] / T[i] - 1) / 0.005, (oth[i] - th[i]) / 0.005};
            for (int q = 0; q < 3; q++)
                s1[q][i] += z[q], s2[q][i] += z[q] * z[q];
        }
    }
    /* Standard normals: mean within 4.5 standard errors of 0, variance within 10% of 1. */
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < N; i++) {
            double mean = s1[q][i] / DRAWS, var = s2[q][i] / DRAWS - mean * mean;
            assert_true(fabs(mean) < 4.5 / sqrt(DRAWS));
            assert_near(var, 1.0, 0.1);
        }
    /* Determinism: the same seed gives the same noise; outputs may alias the inputs. */
    mlc_rng r1, r2;
    mlc_rng_seed(&r1, MLC_CRED_SEED);
    mlc_rng_seed(&r2, MLC_CRED_SEED);
    double a2[N], t2[N], h2[N];
    memcpy(a2, A, sizeof a2), memcpy(t2, T, sizeof t2), memcpy(h2, th, sizeof h2);
    mlc_gait_perturb(&r1, M, K, A, T, th, oA, oT, oth);
    mlc_gait_perturb(&r2, M, K, a2, t2, h2, a2, t2, h2);
    assert_memory_equal(oA, a2, sizeof oA);
    assert_memory_equal(oT, t2, sizeof oT);
    assert_memory_equal(oth, h2, sizeof oth);
    /* Exactly 3·m·k normals consumed. */
    mlc_rng_seed(&r1, 11);
    mlc_rng_seed(&r2, 11);
    mlc_gait_perturb(&r1, M, K, A, T, th, oA, oT, oth);
    for (int i = 0; i < 3 * N; i++)
        mlc_rng_normal(&r2);
    assert_true(mlc_rng_normal(&r1) == mlc_rng_normal(&r2));
    /* All-zero amplitudes stay zero (no largest amplitude to scale by). */
    const double Z[N] = {0};
    mlc_gait_perturb(&r1, M, K, Z, T, th, oA, oT, oth);
    for (int i = 0; i < N; i++)
        assert_true(oA[i] == 0);
}

/* ---- The bounded lowest-vertex search against the exhaustive scan ------------------------ */
typedef struct meter_pair {
    mlc_cred_meter *fast, *full;
} meter_pair;

/* Both meters measure the frame; their measures must agree bit for bit after every frame
 * (so every frame's y_min decided the same penetration and airborne count). */
static mlc_status both_meters(void *user, int frame, double time, const double *z,
                              const double com[3], const double forward[3], int contacts) {
    meter_pair *p = user;
    mlc_cred_meter_frame(p->fast, frame, time, z, com, forward, contacts);
    mlc_cred_meter_frame(p->full, frame, time, z, com, forward, contacts);
    mlc_credibility a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    mlc_cred_meter_result(p->fast, &a);
    mlc_cred_meter_result(p->full, &b);
    assert_memory_equal(&a.rise, &b.rise, sizeof a.rise);
    assert_memory_equal(&a.penetration, &b.penetration, sizeof a.penetration);
    assert_memory_equal(&a.airborne, &b.airborne, sizeof a.airborne);
    assert_memory_equal(&a.up_min, &b.up_min, sizeof a.up_min);
    assert_int_equal(a.frames, b.frames);
    return MLC_OK;
}

static void bounded_search_should_equal_the_exhaustive_scan(void **state) {
    (void)state;
    const double down[3] = {0, -9.81, 0}, tilted[3] = {-6, -9.81, 3};
    const struct {
        double ground;
        const double *g;
    } bodies[3] = {{0, down}, {-0.6, down}, {0, tilted}}; /* resting, dropped, tipping */
    mlc_rng rng;
    mlc_rng_seed(&rng, 23);
    long fast = 0, full = 0;
    int airborne = 0, penetrating = 0;
    for (int bi = 0; bi < 3; bi++) {
        tsim t;
        memset(&t, 0, sizeof t);
        quad_init(&t, 120, bodies[bi].ground, bodies[bi].g);
        meter_pair p;
        mlc_err err;
        assert_int_equal(mlc_cred_meter_create(t.model, &t.mesh, &p.fast, &err), MLC_OK);
        assert_int_equal(mlc_cred_meter_create(t.model, &t.mesh, &p.full, &err), MLC_OK);
        mlc_cred_meter_set_exhaustive(p.full, 1);
        for (int run = 0; run < 12; run++) { /* random gaits, up to large amplitudes */
            double A[6], T[6], th[6];
            for (int i = 0; i < 6; i++) {
                A[i] = 1.2 * mlc_rng_uniform(&rng) / t.sub.grad_max[i / 2];
                T[i] = 0.1 + 0.5 * mlc_rng_uniform(&rng);
                th[i] = 6.283 * mlc_rng_uniform(&rng);
            }
            mlc_actuation act = {3, 2, A, T, th};
            mlc_cred_meter_reset(p.fast);
            mlc_cred_meter_reset(p.full);
            mlc_rollout_result res;
            assert_int_equal(mlc_rollout_run(t.ro, &act, NULL, both_meters, &p, &res), MLC_OK);
            mlc_credibility c;
            mlc_cred_meter_result(p.fast, &c);
            airborne += c.airborne > 0, penetrating += c.penetration > 0;
            fast += mlc_cred_meter_skinned(p.fast), full += mlc_cred_meter_skinned(p.full);
        }
        mlc_cred_meter_destroy(p.fast);
        mlc_cred_meter_destroy(p.full);
        tsim_free(&t);
    }
    printf("bounded search: %ld of %ld vertex skinnings; %d of 36 rollouts airborne, %d "
           "penetrating\n",
           fast, full, airborne, penetrating);
    assert_true(airborne > 0 && penetrating > 0); /* both measures were exercised */
    assert_true(2 * fast < full);                 /* and the search skipped most vertices */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measures_should_match_a_rederivation_from_the_stored_frames),
        cmocka_unit_test(robustness_should_not_depend_on_the_thread_count),
        cmocka_unit_test(judge_should_apply_each_limit),
        cmocka_unit_test(perturbation_should_have_the_documented_statistics),
        cmocka_unit_test(bounded_search_should_equal_the_exhaustive_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
