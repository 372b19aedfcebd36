/* test_sim.c: the reduced simulator (docs/method.md §5–7, §11) and the polar decomposition:
 * resting contact, momentum conservation of the plasticity actuation against force actuation
 * (Fig. 3), rigid-motion equivariance, monotone local-global iterations, no allocation and
 * bit-identical determinism. Subspaces are built in the test (test_sim_util.h). */
#include "polar.h"
#include "test_sim_util.h"

static double rot_angle_deg(const double R[9]) {
    double c = (R[0] + R[4] + R[8] - 1) / 2;
    return acos(fmax(-1.0, fmin(1.0, c))) * 180 / MLC_PI;
}

/* ---- polar ------------------------------------------------------------------------------- */

static void polar_should_match_svd_with_det_fix(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    double worst = 0;
    for (int trial = 0; trial < 2000; trial++) {
        double A[9], U[9], Vt[9], sv[3], sup[2], Ac[9];
        for (int i = 0; i < 9; i++)
            A[i] = mlc_rng_normal(&rng);
        if (trial % 4 == 1) /* rank deficient (built in place) */
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++)
                    A[i + 3 * j] = A[i] * A[3 * j + 1];
        if (trial % 4 == 2) /* near identity, warm-start regime */
            for (int i = 0; i < 9; i++)
                A[i] = (i % 4 == 0) + 1e-3 * A[i];
        memcpy(Ac, A, sizeof A);
        LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'A', 'A', 3, 3, Ac, 3, sv, U, 3, Vt, 3, sup);
        double R[9], Rs[9], q[4] = {1, 0, 0, 0};
        mlc_polar(A, q, R);
        double d = 0, tr = 0, trs = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double UV = 0;
                for (int k = 0; k < 3; k++)
                    UV += U[i + 3 * k] * Vt[k + 3 * j];
                Rs[i + 3 * j] = UV;
            }
        double det = Rs[0] * (Rs[4] * Rs[8] - Rs[7] * Rs[5]) -
                     Rs[3] * (Rs[1] * Rs[8] - Rs[7] * Rs[2]) +
                     Rs[6] * (Rs[1] * Rs[5] - Rs[4] * Rs[2]);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double UV = 0;
                for (int k = 0; k < 3; k++)
                    UV += U[i + 3 * k] * (k == 2 ? det : 1) * Vt[k + 3 * j];
                Rs[i + 3 * j] = UV;
            }
        for (int i = 0; i < 9; i++)
            tr += R[i] * A[i], trs += Rs[i] * A[i];
        /* The maximum of tr(Rᵀ A) is unique unless σ2 + σ3·det ≈ 0 (rank one): compare values. */
        assert_near(tr, trs, 1e-12 * (1 + fabs(trs)));
        int gap = sv[1] + det * sv[2] > 1e-3 * sv[0]; /* top eigenvalue of K simple */
        if (gap) {
            for (int i = 0; i < 9; i++)
                d = fmax(d, fabs(R[i] - Rs[i]));
            worst = fmax(worst, d);
        }
        double RtR[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                RtR[i + 3 * j] = 0;
                for (int k = 0; k < 3; k++)
                    RtR[i + 3 * j] += R[k + 3 * i] * R[k + 3 * j];
                assert_near(RtR[i + 3 * j], i == j, 1e-14);
            }
        double detR = R[0] * (R[4] * R[8] - R[7] * R[5]) - R[3] * (R[1] * R[8] - R[7] * R[2]) +
                      R[6] * (R[1] * R[5] - R[4] * R[2]);
        assert_near(detR, 1.0, 1e-14);
        /* Warm start from the answer: same rotation, one sweep (when the rotation is unique;
         * otherwise another optimal one). */
        double R2[9], tr2 = 0;
        int sweeps = mlc_polar(A, q, R2);
        if (gap && sweeps > 2)
            fail_msg("trial %d: %d sweeps (sv %g %g %g)", trial, sweeps, sv[0], sv[1], sv[2]);
        if (gap)
            for (int i = 0; i < 9; i++)
                assert_near(R2[i], R[i], 1e-13);
        for (int i = 0; i < 9; i++)
            tr2 += R2[i] * A[i];
        assert_near(tr2, trs, 1e-12 * (1 + fabs(trs)));
    }
    assert_true(worst < 1e-10);
    double Z[9] = {0}, q[4] = {0.5, 0.5, 0.5, 0.5}, R[9];
    mlc_polar(Z, q, R); /* A = 0 keeps the warm start */
    assert_near(q[0], 0.5, 1e-15);
}

/* ---- physics ----------------------------------------------------------------------------- */

static void box_at_rest_should_settle_on_the_ground(void **state) {
    (void)state;
    tsim t = {0};
    test_box_mesh(4, 2, 2, 0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    tsim_init(&t, &set, 5, 3, 4, 12);
    double height = 0.5, com_settled[3] = {0}, minY = 1e9, maxdev = 0;
    double xs[3 * 12];
    for (int s = 1; s <= 1000; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, NULL), 0);
        const double *z = mlc_rollout_state(t.ro);
        mlc_model_skin(t.model, z, t.sub.ns, t.sub.samples, xs);
        for (int i = 0; i < t.sub.ns; i++)
            minY = fmin(minY, xs[3 * i + 1]);
        double com[3];
        mlc_model_com(t.model, z, com);
        if (s == 200) memcpy(com_settled, com, sizeof com);
        if (s > 200)
            for (int k = 0; k < 3; k++)
                maxdev = fmax(maxdev, fabs(com[k] - com_settled[k]));
    }
    print_message("rest: min sample y = %.3e (height %.2f), CoM drift after settling = %.3e\n",
                  minY, height, maxdev);
    assert_true(minY > -0.01 * height);
    assert_true(maxdev < 0.01 * height);
    assert_true(mlc_rollout_contacts(t.ro) >= 0);
    tsim_free(&t);
}

static void velocity_projection_should_also_rest(void **state) {
    (void)state;
    tsim t = {0};
    test_box_mesh(4, 2, 2, 0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.projection_velocity = 1;
    tsim_init(&t, &set, 4, 0, 3, 10);
    double com[3], c0[3];
    mlc_model_com(t.model, mlc_rollout_state(t.ro), c0);
    for (int s = 0; s < 300; s++)
        assert_int_equal(mlc_rollout_step(t.ro, NULL), 0);
    mlc_model_com(t.model, mlc_rollout_state(t.ro), com);
    assert_true(fabs(com[1] - c0[1]) < 0.01 * 0.5);
    tsim_free(&t);
}

/* Strong actuation of every mode at a_max (p = 1). */
static void strong_actuation(const mlc_subspace *sub, double *A, double *T, double *th,
                             mlc_actuation *act) {
    for (int i = 0; i < sub->m; i++) {
        A[i] = 1.0 / sub->grad_max[i];
        T[i] = 0.2 + 0.1 * i;
        th[i] = 0.13 * i;
    }
    act->m = sub->m, act->k = 1, act->A = A, act->T = T, act->theta = th;
}

/* Free flight of one actuation variant: max CoM drift, max body rotation (deg), max |L|, and
 * the largest Σ m |x − c||v| seen (a scale for |L|). */
static void fly(tsim *t, const mlc_actuation *act, int forced, double out[4]) {
    int r = mlc_model_dim(t->model);
    double *zprev = malloc(sizeof(double) * r), c0[3], c[3], R[9], L[3];
    mlc_rollout_reset(t->ro);
    mlc_model_com(t->model, mlc_rollout_state(t->ro), c0);
    memset(out, 0, 4 * sizeof(double));
    for (int s = 0; s < 300; s++) {
        memcpy(zprev, mlc_rollout_state(t->ro), sizeof(double) * r);
        const mlc_actuation *a = s < 200 ? act : NULL; /* then let the shape relax */
        assert_int_equal(forced ? mlc_rollout_step_forced(t->ro, a) : mlc_rollout_step(t->ro, a),
                         0);
        const double *z = mlc_rollout_state(t->ro);
        mlc_model_com(t->model, z, c);
        for (int k = 0; k < 3; k++)
            out[0] = fmax(out[0], fabs(c[k] - c0[k]));
        mlc_model_rotation(t->model, z, R);
        out[1] = rot_angle_deg(R); /* net rotation at the end */
        mlc_model_angular_momentum(t->model, z, zprev, L);
        out[2] = fmax(out[2], sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]));
        /* scale: Σ m |x−c| |v| over the vertices */
        double sc = 0;
        int nv = t->mesh.nv;
        double *x1 = malloc(sizeof(double) * 3 * nv), *x0 = malloc(sizeof(double) * 3 * nv);
        mlc_model_skin(t->model, z, nv, NULL, x1);
        mlc_model_skin(t->model, zprev, nv, NULL, x0);
        for (int i = 0; i < nv; i++) {
            double d = 0, v = 0;
            for (int k = 0; k < 3; k++)
                d += pow(x1[3 * i + k] - c[k], 2),
                    v += pow((x1[3 * i + k] - x0[3 * i + k]) / 0.01, 2);
            sc += 1000 * t->fem.vmass[i] * sqrt(d * v);
        }
        out[3] = fmax(out[3], sc);
        free(x1), free(x0);
    }
    free(zprev);
}

static void free_flight_should_conserve_momentum_unlike_force_actuation(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.gravity[1] = 0;
    set.contact = 0;
    tsim_init(&t, &set, 5, 4, 5, 10);
    double A[8], T[8], th[8];
    mlc_actuation act;
    strong_actuation(&t.sub, A, T, th, &act);
    for (int i = 0; i < act.m; i++)
        A[i] *= 0.3; /* p = 0.3 per mode, all modes at once */
    /* One mode (a straight path in shape space, so no "falling cat" reorientation is
     * possible with zero angular momentum): 200 actuated steps, 100 to relax. */
    double A1[8] = {0}, o1[4], f1[4];
    A1[1] = A[1];
    mlc_actuation a1 = act;
    a1.A = A1;
    fly(&t, &a1, 0, o1);
    fly(&t, &a1, 1, f1);
    print_message("free flight, mode 1 at p = 0.3: CoM drift %.2e (force actuation %.2e), net "
                  "rotation %.3f deg (%.3f deg), max |L| %.2e (%.2e), momentum scale %.2e\n",
                  o1[0], f1[0], o1[1], f1[1], o1[2], f1[2], o1[3]);
    assert_true(o1[0] < 1e-10 * mlc_model_extent(t.model));
    assert_true(o1[1] < 1.0);
    assert_true(f1[1] > 10.0);
    assert_true(o1[2] < 0.01 * o1[3]);
    assert_true(f1[2] > 100 * o1[2]);
    /* All four modes at once (large deformations, a cyclic path in shape space). */
    double ours[4], forced[4];
    fly(&t, &act, 0, ours);
    fly(&t, &act, 1, forced);
    print_message("free flight, 4 modes at p = 0.3: CoM drift %.2e (%.2e), net rotation %.3f deg "
                  "(%.3f deg), max |L| %.2e (%.2e), momentum scale %.2e\n",
                  ours[0], forced[0], ours[1], forced[1], ours[2], forced[2], ours[3]);
    assert_true(ours[0] < 1e-10 * mlc_model_extent(t.model));
    assert_true(ours[2] < 0.05 * ours[3]);
    assert_true(forced[2] > 20 * ours[2]);
    tsim_free(&t);
}

static void trajectory_should_be_rigid_motion_equivariant(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.gravity[1] = 0;
    set.contact = 0;
    tsim_init(&t, &set, 4, 3, 4, 8);
    int r = mlc_model_dim(t.model), n4 = r / 3;
    double A[8], T[8], th[8];
    mlc_actuation act;
    strong_actuation(&t.sub, A, T, th, &act);
    double *z0 = malloc(sizeof(double) * r), *zp = malloc(sizeof(double) * r);
    double *z0r = malloc(sizeof(double) * r), *zpr = malloc(sizeof(double) * r);
    double *traj = malloc(sizeof(double) * r * 100), *zt = malloc(sizeof(double) * r);
    mlc_model_rest_state(t.model, z0);
    mlc_rng rng;
    mlc_rng_seed(&rng, 3);
    for (int i = 0; i < r; i++)
        zp[i] = z0[i] + 1e-3 * mlc_rng_normal(&rng); /* moving start */
    mlc_rollout_set_state(t.ro, z0, zp);
    for (int s = 0; s < 100; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
        memcpy(traj + (size_t)s * r, mlc_rollout_state(t.ro), sizeof(double) * r);
    }
    double q[4] = {0.8, 0.3, -0.4, 0.33}, R[9], p[3] = {0.7, -1.1, 2.3};
    mlc_quat_to_matrix(q, R);
    test_transform_state(R, p, t.sub.W[0], n4, z0, z0r);
    test_transform_state(R, p, t.sub.W[0], n4, zp, zpr);
    mlc_rollout_reset(t.ro); /* same t = 0 */
    mlc_rollout_set_state(t.ro, z0r, zpr);
    double err = 0, scale = 0;
    for (int s = 0; s < 100; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
        test_transform_state(R, p, t.sub.W[0], n4, traj + (size_t)s * r, zt);
        const double *z = mlc_rollout_state(t.ro);
        for (int i = 0; i < r; i++)
            err = fmax(err, fabs(z[i] - zt[i])), scale = fmax(scale, fabs(zt[i]));
    }
    print_message("equivariance: max |z' - (R z + p)| = %.3e (max |z| %.3g)\n", err, scale);
    assert_true(err < 1e-9 * scale);
    free(z0), free(zp), free(z0r), free(zpr), free(traj), free(zt);
    tsim_free(&t);
}

static void local_global_iterations_should_not_increase_energy(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.contact = 0; /* contact projection is not a descent step */
    tsim_init(&t, &set, 5, 4, 6, 10);
    int r = mlc_model_dim(t.model);
    double A[8], T[8], th[8];
    mlc_actuation act;
    strong_actuation(&t.sub, A, T, th, &act);
    double *trace = malloc(sizeof(double) * r * set.iterations), *q = malloc(sizeof(double) * r);
    double *zn = malloc(sizeof(double) * r), *zp = malloc(sizeof(double) * r);
    mlc_rollout *twin; /* stays one step behind to evaluate the step's energy */
    assert_int_equal(mlc_rollout_create(t.model, &twin), MLC_OK);
    mlc_rollout_set_trace(t.ro, trace, set.iterations);
    mlc_model_rest_state(t.model, zn);
    mlc_model_rest_state(t.model, zp);
    double worst = 0, total_drop = 0;
    for (int s = 0; s < 60; s++) {
        for (int i = 0; i < r; i++)
            q[i] = 2 * zn[i] - zp[i];
        assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
        double E = mlc_rollout_energy(twin, &act, q), E0 = E;
        for (int j = 0; j < set.iterations; j++) {
            double Ej = mlc_rollout_energy(twin, &act, trace + (size_t)j * r);
            worst = fmax(worst, (Ej - E) / fabs(E0));
            E = Ej;
        }
        total_drop += E0 - E;
        assert_int_equal(mlc_rollout_step(twin, &act), 0);
        memcpy(zp, zn, sizeof(double) * r);
        memcpy(zn, mlc_rollout_state(t.ro), sizeof(double) * r);
    }
    print_message(
        "energy: largest relative increase over an iteration %.3e (total decrease %.3e)\n", worst,
        total_drop);
    assert_true(worst <= 1e-12);
    assert_true(total_drop > 0);
    mlc_rollout_destroy(twin);
    free(trace), free(q), free(zn), free(zp);
    tsim_free(&t);
}

static void step_should_not_allocate_and_rollouts_should_be_deterministic(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = 200;
    tsim_init(&t, &set, 5, 4, 6, 20);
    double A[8], T[8], th[8];
    mlc_actuation act;
    strong_actuation(&t.sub, A, T, th, &act);
    for (int i = 0; i < act.m; i++)
        A[i] *= 0.3;
    long before = mlc_alloc_count();
    int contacts = 0;
    for (int s = 0; s < 200; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
        contacts += mlc_rollout_contacts(t.ro);
    }
    assert_int_equal(mlc_alloc_count() - before, 0);
    assert_true(contacts > 0); /* the contact path (SVD) ran */
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.work_penalty = 1e-3;
    mlc_rollout_result r1, r2;
    before = mlc_alloc_count();
    assert_int_equal(mlc_rollout_run(t.ro, &act, &obj, NULL, NULL, &r1), MLC_OK);
    assert_int_equal(mlc_alloc_count() - before, 0);
    int r = mlc_model_dim(t.model);
    double *z1 = malloc(sizeof(double) * r);
    memcpy(z1, mlc_rollout_state(t.ro), sizeof(double) * r);
    mlc_rollout *ro2;
    assert_int_equal(mlc_rollout_create(t.model, &ro2), MLC_OK);
    assert_int_equal(mlc_rollout_run(ro2, &act, &obj, NULL, NULL, &r2), MLC_OK);
    assert_memory_equal(z1, mlc_rollout_state(ro2), sizeof(double) * r);
    assert_memory_equal(&r1, &r2, sizeof r1);
    assert_int_equal(r1.failed, 0);
    assert_int_equal(r1.steps_done, 200);
    assert_near(r1.J_disp, -r1.displacement, 0);
    free(z1);
    mlc_rollout_destroy(ro2);
    tsim_free(&t);
}

/* Ruling samples out of the contact solve by their bounds changes only the cost: a quadruped
 * dropped tilted from above the ground, kicking at full actuation (most samples off the
 * ground, landings and lift-offs), takes bit-identical states and contact forces at every
 * step with the samples ruled out and with every sample read. */
static void ruling_samples_out_should_not_change_a_bit(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    tsim_init(&t, &set, 5, 4, 6, 40);
    mlc_rollout *full;
    assert_int_equal(mlc_rollout_create(t.model, &full), MLC_OK);
    mlc_rollout_set_contact_skip(full, 0);
    double A[8], T[8], th[8];
    mlc_actuation act;
    strong_actuation(&t.sub, A, T, th, &act);
    const int r = mlc_model_dim(t.model), n4 = r / 3, ns = 40;
    double *z = malloc(sizeof(double) * r), *zt = malloc(sizeof(double) * r);
    double q[4] = {0.96, 0.2, 0.1, 0.17}, R[9], p[3] = {0, 0.1, 0};
    mlc_quat_to_matrix(q, R);
    mlc_model_rest_state(t.model, z);
    test_transform_state(R, p, t.sub.W[0], n4, z, zt);
    mlc_rollout *ros[2] = {t.ro, full};
    for (int k = 0; k < 2; k++) {
        mlc_rollout_reset(ros[k]);
        mlc_rollout_set_state(ros[k], zt, zt);
    }
    int contacts = 0;
    for (int s = 0; s < 400; s++) {
        int st0 = mlc_rollout_step(t.ro, &act), st1 = mlc_rollout_step(full, &act);
        assert_int_equal(st0, st1);
        assert_memory_equal(mlc_rollout_state(t.ro), mlc_rollout_state(full), sizeof(double) * r);
        assert_memory_equal(mlc_rollout_contact_forces(t.ro), mlc_rollout_contact_forces(full),
                            sizeof(double) * 3 * ns);
        contacts += mlc_rollout_contacts(t.ro);
    }
    print_message("ruled out %ld sample-iterations, %d contacts over 400 steps\n",
                  mlc_rollout_contact_skipped(t.ro), contacts);
    assert_true(mlc_rollout_contact_skipped(t.ro) > 1000); /* the skip ran */
    assert_int_equal(mlc_rollout_contact_skipped(full), 0);
    assert_true(contacts > 50); /* and so did contact */
    free(z), free(zt);
    mlc_rollout_destroy(full);
    tsim_free(&t);
}

static void blow_up_should_fail_with_penalty(void **state) {
    (void)state;
    tsim t = {0};
    test_box_mesh(2, 1, 1, 0.5, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = 50;
    tsim_init(&t, &set, 2, 0, 1, 4);
    int r = mlc_model_dim(t.model);
    double *z = malloc(sizeof(double) * r), *zp = malloc(sizeof(double) * r);
    mlc_model_rest_state(t.model, z);
    memcpy(zp, z, sizeof(double) * r);
    z[0] = NAN;
    mlc_rollout_set_state(t.ro, z, zp);
    assert_int_equal(mlc_rollout_step(t.ro, NULL), 1);
    free(z), free(zp);
    tsim_free(&t);
}

/* The subspace sizes the energy evaluation's buffers hold are checked where the model is
 * created: one more skinning weight or actuation mode than the limit is refused. */
static void model_should_refuse_a_subspace_beyond_its_limits(void **state) {
    (void)state;
    tsim t = {0};
    test_box_mesh(2, 1, 1, 0.5, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    tsim_init(&t, &set, 2, 2, 1, 4);
    mlc_subspace big = t.sub;
    mlc_model *mod = NULL;
    mlc_err err;
    big.w = MLC_SIM_MAX_W + 1;
    assert_int_equal(mlc_model_create(&t.mesh, &t.fem, &big, &set, &mod, &err), MLC_EINVAL);
    assert_null(mod);
    assert_non_null(strstr(err.msg, "skinning weights, at most"));
    big = t.sub;
    big.m = MLC_SIM_MAX_MODES + 1;
    assert_int_equal(mlc_model_create(&t.mesh, &t.fem, &big, &set, &mod, &err), MLC_EINVAL);
    assert_null(mod);
    assert_non_null(strstr(err.msg, "actuation modes, at most"));
    /* two equal weight functions: the reduced system matrix is singular */
    big = t.sub;
    int nv = t.mesh.nv;
    double *W = malloc(sizeof(double) * (size_t)nv * big.w);
    memcpy(W, big.W, sizeof(double) * (size_t)nv * big.w);
    memcpy(W + nv, W, sizeof(double) * (size_t)nv);
    big.W = W;
    assert_int_equal(mlc_model_create(&t.mesh, &t.fem, &big, &set, &mod, &err), MLC_ENOTSPD);
    assert_null(mod);
    assert_non_null(strstr(err.msg, "not positive definite"));
    assert_non_null(strstr(err.msg, "subspace.skinning_modes"));
    free(W);
    tsim_free(&t);
}

/* A 150-step rollout (kicking, with contact) of the model built on one thread and on two, with
 * one material and with per-tet materials (stiffness and density varying by tet), for several
 * mode counts (so that the two passes split the modes differently, one pass taking none of
 * them): every state and result bit-identical. */
static void model_built_on_two_threads_should_be_the_same_bits(void **state) {
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        const int m = variant == 0 ? 1 : variant == 1 ? 3 : 8;
        const int per_tet = variant == 3;
        tsim t = {0};
        test_quadruped_mesh(0.25, &t.mesh);
        mlc_sim_settings set;
        mlc_sim_settings_default(&set);
        set.steps = 150;
        set.threads = 1;
        tsim_init(&t, &set, 4, m, 5, 16);
        double *mu = NULL, *gam = NULL, *rho = NULL;
        mlc_materials mat = {0};
        if (per_tet) {
            mu = malloc(sizeof(double) * t.mesh.nt), gam = malloc(sizeof(double) * t.mesh.nt);
            rho = malloc(sizeof(double) * t.mesh.nt);
            for (int e = 0; e < t.mesh.nt; e++)
                mu[e] = set.mu * (1 + 0.5 * (e % 3)), gam[e] = set.gamma * (1 + 0.25 * (e % 5)),
                rho[e] = set.density * (1 + 0.1 * (e % 7));
            mat.mu = mu, mat.gamma = gam, mat.density = rho;
        }
        mlc_model *one = NULL, *two = NULL;
        mlc_err err;
        assert_int_equal(
            mlc_model_create_materials(&t.mesh, &t.fem, &t.sub, &set, &mat, &one, &err), MLC_OK);
        set.threads = 2;
        assert_int_equal(
            mlc_model_create_materials(&t.mesh, &t.fem, &t.sub, &set, &mat, &two, &err), MLC_OK);
        double A[8], T[8], th[8];
        mlc_actuation act;
        strong_actuation(&t.sub, A, T, th, &act);
        mlc_objective_settings obj;
        mlc_objective_settings_default(&obj);
        mlc_rollout *r1, *r2;
        assert_int_equal(mlc_rollout_create(one, &r1), MLC_OK);
        assert_int_equal(mlc_rollout_create(two, &r2), MLC_OK);
        const int r = mlc_model_dim(one);
        int contacts = 0;
        for (int step = 0; step < 150; step++) {
            mlc_rollout_step(r1, &act);
            mlc_rollout_step(r2, &act);
            contacts += mlc_rollout_contacts(r1);
            assert_memory_equal(mlc_rollout_state(r1), mlc_rollout_state(r2), sizeof(double) * r);
        }
        assert_true(contacts > 0);
        assert_true(mlc_model_mass(one) == mlc_model_mass(two));
        mlc_rollout_result a, b;
        assert_int_equal(mlc_rollout_run(r1, &act, &obj, NULL, NULL, &a), MLC_OK);
        assert_int_equal(mlc_rollout_run(r2, &act, &obj, NULL, NULL, &b), MLC_OK);
        assert_memory_equal(&a, &b, sizeof a);
        mlc_rollout_destroy(r1);
        mlc_rollout_destroy(r2);
        mlc_model_destroy(one);
        mlc_model_destroy(two);
        free(mu), free(gam), free(rho);
        tsim_free(&t);
    }
}

/* mlc_model_skin (three coordinates a pass) and mlc_model_skin_coord (one) give the same bits
 * for every vertex, through a kicking rollout (the credibility meter's bounds rely on it), and
 * the skinned rest state is the mesh. */
static void skin_and_skin_coord_should_agree_bit_for_bit(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    tsim_init(&t, &set, 4, 3, 5, 16);
    double A[8], T[8], th[8];
    mlc_actuation act;
    strong_actuation(&t.sub, A, T, th, &act);
    const int nv = t.mesh.nv;
    double *x = malloc(sizeof(double) * 3 * nv), *c = malloc(sizeof(double) * nv);
    int *odd = malloc(sizeof(int) * nv), nodd = 0;
    for (int i = 1; i < nv; i += 2)
        odd[nodd++] = i;
    mlc_rollout_reset(t.ro);
    mlc_model_skin(t.model, mlc_rollout_state(t.ro), nv, NULL, x);
    for (int i = 0; i < 3 * nv; i++)
        assert_true(fabs(x[i] - t.mesh.X[i]) <= 1e-12 * (1 + fabs(t.mesh.X[i])));
    for (int step = 0; step < 120; step++) {
        mlc_rollout_step(t.ro, &act);
        if (step % 7) continue;
        const double *z = mlc_rollout_state(t.ro);
        mlc_model_skin(t.model, z, nodd, odd, x);
        for (int k = 0; k < 3; k++) {
            mlc_model_skin_coord(t.model, z, k, nodd, odd, c);
            for (int p = 0; p < nodd; p++)
                assert_memory_equal(&x[3 * p + k], &c[p], sizeof(double));
        }
    }
    free(x), free(c), free(odd);
    tsim_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(polar_should_match_svd_with_det_fix),
        cmocka_unit_test(box_at_rest_should_settle_on_the_ground),
        cmocka_unit_test(velocity_projection_should_also_rest),
        cmocka_unit_test(free_flight_should_conserve_momentum_unlike_force_actuation),
        cmocka_unit_test(trajectory_should_be_rigid_motion_equivariant),
        cmocka_unit_test(local_global_iterations_should_not_increase_energy),
        cmocka_unit_test(step_should_not_allocate_and_rollouts_should_be_deterministic),
        cmocka_unit_test(ruling_samples_out_should_not_change_a_bit),
        cmocka_unit_test(model_built_on_two_threads_should_be_the_same_bits),
        cmocka_unit_test(skin_and_skin_coord_should_agree_bit_for_bit),
        cmocka_unit_test(blow_up_should_fail_with_penalty),
        cmocka_unit_test(model_should_refuse_a_subspace_beyond_its_limits),
    };
    return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
