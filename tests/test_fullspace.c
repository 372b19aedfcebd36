/* test_fullspace.c: the full-space reference simulator (fullspace.h) and its comparison with
 * the reduced simulator: a body resting on the ground stays there; with every tet its own
 * passive cluster, the reduced trajectory approaches the full-space one as the number of
 * skinning modes w grows (free flight with actuation, then gravity and ground contact); and
 * full-space rollouts are bit-identical when repeated. Subspaces are built in the test
 * (test_sim_util.h). */
#include "config.h"
#include "fullspace.h"
#include "test_sim_util.h"

/* Every mode driven at a fraction p of its amplitude limit, one sinusoid each. */
static void actuation_at(const mlc_subspace *sub, double p, double *A, double *T, double *th,
                         mlc_actuation *act) {
    for (int i = 0; i < sub->m; i++) {
        A[i] = p / sub->grad_max[i];
        T[i] = 0.25 + 0.05 * i;
        th[i] = 0.1 * i;
    }
    act->m = sub->m, act->k = 1, act->A = A, act->T = T, act->theta = th;
}

static mlc_fullspace *full_create(const tsim *t, const mlc_sim_settings *set) {
    mlc_fullspace *fs = NULL;
    mlc_err err;
    if (mlc_fullspace_create(&t->mesh, &t->fem, &t->sub, set, 1, &fs, &err) != MLC_OK)
        fail_msg("fullspace: %s", err.msg);
    return fs;
}

/* The 4×2×2-voxel box (edge 0.25) on the ground with the default settings: 2 skinning modes,
 * 3 vibration modes, 12 contact samples. */
static void resting_box(tsim *t, mlc_sim_settings *set) {
    test_box_mesh(4, 2, 2, 0.25, &t->mesh);
    mlc_sim_settings_default(set);
    tsim_init(t, set, 2, 3, -1, 12);
}

/* ---- (a) rest ------------------------------------------------------------------------------ */

static void box_at_rest_should_stay_on_the_ground(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    resting_box(&t, &set);
    mlc_fullspace *fs = full_create(&t, &set);
    int nv = t.mesh.nv;
    double height = 0.5, c_settled[3] = {0}, minY = 1e9, drift = 0, sag = 0;
    for (int s = 1; s <= 400; s++) {
        assert_int_equal(mlc_fullspace_step(fs, NULL), 0);
        const double *x = mlc_fullspace_state(fs);
        for (int i = 0; i < t.sub.ns; i++)
            minY = fmin(minY, x[3 * t.sub.samples[i] + 1]);
        double c[3];
        mlc_fullspace_com(fs, x, c);
        if (s == 200) memcpy(c_settled, c, sizeof c);
        if (s > 200)
            for (int k = 0; k < 3; k++)
                drift = fmax(drift, fabs(c[k] - c_settled[k]));
        if (s == 400)
            for (int i = 0; i < 3 * nv; i++)
                sag = fmax(sag, fabs(x[i] - t.mesh.X[i]));
    }
    print_message("full space at rest: min sample y = %.3e, CoM drift after settling %.3e, "
                  "max vertex displacement %.3e (height %.2f)\n",
                  minY, drift, sag, height);
    assert_true(minY > -0.01 * height);
    assert_true(drift < 0.01 * height);
    assert_true(sag < 0.02 * height);
    mlc_fullspace_destroy(fs);
    tsim_free(&t);
}

/* ---- (b) reduced → full as w grows -------------------------------------------------------------
 */

typedef struct curve_point {
    int w;
    double com_err, vert_err; /* relative to the extent */
    double J_reduced, J_full;
} curve_point;

/* Runs the comparison for each w in ws (n values) on the quadruped (every tet its own passive
 * cluster, one actuation cluster, 4 vibration modes, ns contact samples). */
static void error_curve(const char *name, const mlc_sim_settings *set, double p, int ns,
                        const int *ws, int n, curve_point *pts) {
    mlc_mesh mesh = {0};
    test_quadruped_mesh(0.25, &mesh);
    mlc_fullspace *fs = NULL;
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.work_penalty = 1e-3;
    double A[8], T[8], th[8];
    mlc_actuation act;
    print_message("%s (%d vertices, %d tets, %d steps):\n", name, mesh.nv, mesh.nt, set->steps);
    print_message("   w  max CoM err/extent  final max vertex err/extent  J reduced   J full\n");
    for (int j = 0; j < n; j++) {
        tsim t = {0};
        t.mesh = mesh; /* borrowed: the fixture's copy is detached below */
        tsim_init(&t, set, ws[j], 4, -1, ns);
        actuation_at(&t.sub, p, A, T, th, &act);
        if (!fs) fs = full_create(&t, set); /* the full space does not depend on w */
        mlc_fullspace_comparison cmp;
        mlc_err err;
        if (mlc_fullspace_compare(t.model, fs, &act, &obj, &cmp, &err) != MLC_OK)
            fail_msg("compare: %s", err.msg);
        assert_int_equal(cmp.reduced.failed, 0);
        assert_int_equal(cmp.full.failed, 0);
        assert_int_equal(cmp.frames, set->steps + 1);
        pts[j].w = ws[j];
        pts[j].com_err = cmp.com_error_max / cmp.extent;
        pts[j].vert_err = cmp.vertex_error_max / cmp.extent;
        pts[j].J_reduced = cmp.reduced.J, pts[j].J_full = cmp.full.J;
        print_message("  %2d  %18.3e  %27.3e  %9.3e  %9.3e   (reduced %.3f s, full %.3f s)\n",
                      ws[j], pts[j].com_err, pts[j].vert_err, cmp.reduced.J, cmp.full.J,
                      cmp.t_reduced, cmp.t_full);
        memset(&t.mesh, 0, sizeof t.mesh);
        tsim_free(&t);
    }
    mlc_fullspace_destroy(fs);
    mlc_mesh_free(&mesh);
}

static const int curve_w[] = {1, 2, 3, 4, 5, 6, 8, 12};
#define NW ((int)(sizeof curve_w / sizeof curve_w[0]))

/* Free flight, no gravity, all four modes at p = 0.3: the centre of mass is conserved by both
 * simulators, so the shape is what differs; it converges steadily (measured against the
 * converged reference: 8.5e-2 of the extent at w = 1, 2.3e-3 at w = 12). */
static void reduced_should_approach_full_space_in_free_flight(void **state) {
    (void)state;
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.gravity[1] = 0;
    set.contact = 0;
    set.steps = 100;
    curve_point pts[NW];
    error_curve("free flight, no gravity, 4 modes at p = 0.3", &set, 0.3, 16, curve_w, NW, pts);
    const curve_point *first = &pts[0], *last = &pts[NW - 1];
    for (int j = 0; j < NW; j++)
        assert_true(pts[j].com_err < 1e-9);
    assert_true(last->vert_err < first->vert_err / 20);
    assert_true(last->vert_err < 5e-3);
    assert_rel(last->J_reduced, last->J_full, 0.01, 1e-9);
}

/* Gravity and ground contact: the body starts 0.2 above the ground, falls, lands on its
 * 16 contact samples and is gently actuated (p = 0.03), with Rayleigh damping (β = 0.01 s) so
 * the elastic rebound of the landing does not make the comparison a matter of bounce timing.
 * The full-space body has no smoothness between its samples (other surface vertices may sink
 * there), so the curve flattens early (measured: CoM 2.5e-2 → 9.5e-3 of the extent from
 * w = 1 to 12, vertices 1.6e-2 → 8.8e-3, J within 20% at w ≥ 4). */
static void reduced_should_approach_full_space_with_contact(void **state) {
    (void)state;
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = 100;
    set.ground = -0.2;
    set.rayleigh[1] = 0.01; /* damped: the landing does not ring (both simulators) */
    curve_point pts[NW];
    error_curve("gravity, drop of 0.2 onto the ground, 4 modes at p = 0.03", &set, 0.03, 16,
                curve_w, NW, pts);
    const curve_point *first = &pts[0], *last = &pts[NW - 1];
    assert_true(last->com_err < first->com_err / 2);
    assert_true(last->vert_err < first->vert_err / 1.5);
    assert_true(last->com_err < 1.5e-2);
    assert_rel(last->J_reduced, last->J_full, 0.25, 1e-9);
}

/* ---- (c) convergence of the reference's steps ----------------------------------------------- */

static void set_stop(mlc_fullspace *fs, double tol, int max_it) {
    mlc_fullspace_stop stop = {tol, max_it};
    mlc_err err;
    if (mlc_fullspace_set_stop(fs, &stop, &err) != MLC_OK) fail_msg("set_stop: %s", err.msg);
}

static double max_diff(const double *a, const double *b, int n) {
    double d = 0;
    for (int i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* The quadruped 0.05 above the ground, every tet its own passive cluster, 16 contact samples,
 * its 4 modes driven at p = 0.3: it falls, lands and walks within a few dozen steps. */
static void landing_walker(tsim *t, mlc_sim_settings *set, int steps, double *A, double *T,
                           double *th, mlc_actuation *act) {
    test_quadruped_mesh(0.25, &t->mesh);
    mlc_sim_settings_default(set);
    set->ground = -0.05;
    set->steps = steps;
    tsim_init(t, set, 2, 4, -1, 16);
    actuation_at(&t->sub, 0.3, A, T, th, act);
}

/* Every step of an actuated rollout that falls, lands and walks on the quadruped: the default
 * rule (1e-6 of the extent) ends each step below its tolerance, never at the guard; from the
 * same start (x_n, x_{n-1}), the step it takes is within a few tolerances of the step's fixed
 * point (taken as 300 iterations: at the contraction measured here, about 0.7 per iteration,
 * far past rounding) and closer to it than the step a looser tolerance (1e-4) takes. */
/* What fa's steps did against fb's and fc's from the same starts (race_steps). */
typedef struct step_race {
    double err_a, err_b;      /* largest distance of fa's, fb's step to fc's, / extent */
    double worst_change, low; /* fa: largest last change; lowest surface vertex − ground */
    int its_a, its_b, its_max, contact_steps;
} step_race;

static double extent_of(const mlc_mesh *mesh);
static double lowest_surface(const mlc_mesh *mesh, const double *x);
static int check_forces(const mlc_fullspace *fs, double friction);

/* `steps` steps of fa; before each, fb and fc start from fa's state (their step counters agree)
 * and take the same step, fc as the step's fixed point (300 plain iterations). Every step of fa
 * meets the default tolerance, and its contact forces push (checked). */
static void race_steps(const tsim *t, const mlc_sim_settings *set, const mlc_actuation *act,
                       mlc_fullspace *fa, mlc_fullspace *fb, mlc_fullspace *fc, int steps,
                       step_race *r) {
    set_stop(fc, 0, 300);
    const int n3 = 3 * t->mesh.nv;
    double *xn = malloc(sizeof(double) * n3), *xp = malloc(sizeof(double) * n3);
    memcpy(xn, t->mesh.X, sizeof(double) * n3);
    memcpy(xp, t->mesh.X, sizeof(double) * n3);
    const double extent = extent_of(&t->mesh);
    memset(r, 0, sizeof *r);
    r->low = INFINITY;
    for (int s = 1; s <= steps; s++) {
        mlc_fullspace_set_state(fb, xn, xp);
        mlc_fullspace_set_state(fc, xn, xp);
        assert_int_equal(mlc_fullspace_step(fa, act), 0);
        assert_int_equal(mlc_fullspace_step(fb, act), 0);
        assert_int_equal(mlc_fullspace_step(fc, act), 0);
        const double *xa = mlc_fullspace_state(fa), *xc = mlc_fullspace_state(fc);
        r->err_a = fmax(r->err_a, max_diff(xa, xc, n3) / extent);
        r->err_b = fmax(r->err_b, max_diff(mlc_fullspace_state(fb), xc, n3) / extent);
        int it = mlc_fullspace_last_iterations(fa);
        r->its_a += it, r->its_max = MLC_MAX(r->its_max, it);
        r->its_b += mlc_fullspace_last_iterations(fb);
        r->worst_change = fmax(r->worst_change, mlc_fullspace_last_change(fa));
        assert_true(mlc_fullspace_last_change(fa) <= 1e-6);
        assert_true(it < MLC_FULLSPACE_MAX_ITERATIONS);
        assert_int_equal(mlc_fullspace_last_iterations(fc), 300);
        r->low = fmin(r->low, lowest_surface(&t->mesh, xa) - set->ground);
        r->contact_steps += check_forces(fa, set->friction) > 0;
        memcpy(xp, xn, sizeof(double) * n3);
        memcpy(xn, xa, sizeof(double) * n3);
    }
    free(xn), free(xp);
}

static void full_space_steps_should_converge_to_their_tolerance(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[8], T[8], th[8];
    mlc_actuation act;
    const int steps = 40;
    landing_walker(&t, &set, steps, A, T, th, &act);
    mlc_fullspace *fa = full_create(&t, &set), *fb = full_create(&t, &set),
                  *fc = full_create(&t, &set);
    set_stop(fb, 1e-4, MLC_FULLSPACE_MAX_ITERATIONS);
    step_race r;
    race_steps(&t, &set, &act, fa, fb, fc, steps, &r);
    print_message("%d steps (%d in contact): iterations mean %.1f, max %d; worst last change "
                  "%.2e of the extent; distance of a step to its fixed point %.2e (tolerance "
                  "1e-6), %.2e (1e-4)\n",
                  steps, r.contact_steps, (double)r.its_a / steps, r.its_max, r.worst_change,
                  r.err_a, r.err_b);
    mlc_fullspace_convergence cv;
    mlc_fullspace_convergence_get(fa, &cv);
    assert_int_equal(cv.steps, steps);
    assert_int_equal(cv.iterations, r.its_a);
    assert_int_equal(cv.most_iterations, r.its_max);
    assert_int_equal(cv.guard_steps, 0);
    assert_true(cv.worst_change <= 1e-6);
    assert_true(r.contact_steps > steps / 2);
    assert_true(r.err_a < 1e-5);
    assert_true(r.err_a < r.err_b / 10);
    mlc_fullspace_destroy(fa), mlc_fullspace_destroy(fb), mlc_fullspace_destroy(fc);
    tsim_free(&t);
}

/* A whole rollout (40 steps: falling, landing, actuated): the tighter the tolerance, the less
 * the final state and J move when it is tightened further (against 1e-9 of the extent). */
static void tighter_tolerance_should_change_a_rollout_less(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[8], T[8], th[8];
    mlc_actuation act;
    landing_walker(&t, &set, 40, A, T, th, &act);
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    mlc_fullspace *fs = full_create(&t, &set);
    const double tols[] = {1e-3, 1e-5, 1e-7, 1e-9};
    const int n3 = 3 * t.mesh.nv;
    double *x[4], J[4];
    mlc_err err;
    for (int j = 0; j < 4; j++) {
        mlc_rollout_result r;
        set_stop(fs, tols[j], MLC_FULLSPACE_MAX_ITERATIONS);
        assert_int_equal(mlc_fullspace_run(fs, &act, &obj, NULL, NULL, &r, &err), MLC_OK);
        assert_int_equal(r.failed, 0);
        mlc_fullspace_convergence cv;
        mlc_fullspace_convergence_get(fs, &cv);
        assert_int_equal(cv.guard_steps, 0);
        x[j] = malloc(sizeof(double) * n3);
        memcpy(x[j], mlc_fullspace_state(fs), sizeof(double) * n3);
        J[j] = r.J;
        print_message("tolerance %.0e: %.1f iterations a step, J %.12f\n", tols[j],
                      (double)cv.iterations / (double)cv.steps, r.J);
    }
    double prev = INFINITY;
    for (int j = 0; j < 3; j++) {
        double dx = max_diff(x[j], x[3], n3), dJ = fabs(J[j] - J[3]);
        print_message("  %.0e vs 1e-9: final state %.2e, J %.2e\n", tols[j], dx, dJ);
        assert_true(dx < prev / 5); /* measured: 15× and 100× */
        prev = dx;
    }
    assert_true(fabs(J[2] - J[3]) < fabs(J[0] - J[3]));
    for (int j = 0; j < 4; j++)
        free(x[j]);
    mlc_fullspace_destroy(fs);
    tsim_free(&t);
}

/* ---- (d) determinism ------------------------------------------------------------------------- */

static void full_space_rollouts_should_be_deterministic(void **state) {
    (void)state;
    long live = mlc_alloc_live();
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = 60;
    tsim_init(&t, &set, 3, 4, 6, 20); /* x-slab passive clusters: also the cluster path */
    double A[8], T[8], th[8];
    mlc_actuation act;
    actuation_at(&t.sub, 0.1, A, T, th, &act);
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.work_penalty = 1e-3;
    mlc_fullspace *f1 = full_create(&t, &set), *f2 = NULL;
    mlc_err err;
    assert_int_equal(mlc_fullspace_create(&t.mesh, &t.fem, &t.sub, &set, 0, &f2, &err), MLC_OK);
    mlc_rollout_result r1, r2, r3;
    int nv = t.mesh.nv, contacts = 0;
    double *x1 = malloc(sizeof(double) * 3 * nv);
    assert_int_equal(mlc_fullspace_run(f1, &act, &obj, NULL, NULL, &r1, &err), MLC_OK);
    memcpy(x1, mlc_fullspace_state(f1), sizeof(double) * 3 * nv);
    contacts = mlc_fullspace_contacts(f1);
    assert_int_equal(mlc_fullspace_run(f1, &act, &obj, NULL, NULL, &r2, &err), MLC_OK);
    assert_memory_equal(x1, mlc_fullspace_state(f1), sizeof(double) * 3 * nv);
    assert_memory_equal(&r1, &r2, sizeof r1);
    assert_int_equal(r1.failed, 0);
    assert_int_equal(r1.steps_done, 60);
    assert_true(contacts > 0);
    /* Per-cluster passive rotations are a different (coarser) model: same run, other result. */
    assert_int_equal(mlc_fullspace_run(f2, &act, &obj, NULL, NULL, &r3, &err), MLC_OK);
    assert_int_equal(r3.failed, 0);
    assert_true(r3.J != r1.J);
    mlc_fullspace_destroy(f1);
    mlc_fullspace_destroy(f2);
    free(x1);
    tsim_free(&t);
    assert_int_equal(mlc_alloc_live(), live);
}

static void bad_settings_should_be_reported(void **state) {
    (void)state;
    tsim t = {0};
    test_box_mesh(2, 1, 1, 0.5, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    tsim_init(&t, &set, 2, 0, -1, 4);
    mlc_fullspace *fs = NULL;
    mlc_err err;
    set.dt = 0;
    assert_int_equal(mlc_fullspace_create(&t.mesh, &t.fem, &t.sub, &set, 1, &fs, &err), MLC_EINVAL);
    assert_null(fs);
    mlc_sim_settings_default(&set);
    set.damping = 1;
    assert_int_equal(mlc_fullspace_create(&t.mesh, &t.fem, &t.sub, &set, 1, &fs, &err), MLC_EINVAL);
    /* The stopping rule: bad values are refused and leave the rule as it was. */
    mlc_sim_settings_default(&set);
    fs = full_create(&t, &set);
    mlc_fullspace_stop bad[] = {{-1e-6, 10}, {NAN, 10}, {INFINITY, 10}, {1e-6, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mlc_fullspace_set_stop(fs, &bad[i], &err), MLC_EINVAL);
    assert_int_equal(mlc_fullspace_step(fs, NULL), 0);
    assert_true(mlc_fullspace_last_iterations(fs) < MLC_FULLSPACE_MAX_ITERATIONS);
    assert_true(mlc_fullspace_last_change(fs) <= MLC_FULLSPACE_TOLERANCE);
    mlc_fullspace_destroy(fs);
    /* The configuration's defaults are the library's. */
    mlc_config cfg;
    mlc_config_defaults(&cfg);
    assert_true(cfg.reference.tolerance == MLC_FULLSPACE_TOLERANCE);
    assert_int_equal(cfg.reference.max_iterations, MLC_FULLSPACE_MAX_ITERATIONS);
    assert_int_equal(cfg.reference.contact_samples, 0); /* every surface vertex */
    assert_int_equal(cfg.reference.contact_columns, 0); /* growing from the library's */
    assert_int_equal(cfg.reference.acceleration, MLC_FULLSPACE_ANDERSON);
    assert_int_equal(cfg.reference.threads, 0); /* the command's threads */
    tsim_free(&t);
}

/* ---- (e) contact on every surface vertex, acceleration, threads ----------------------------- */

static mlc_fullspace *surface_create(const tsim *t, const mlc_sim_settings *set) {
    mlc_fullspace *fs = full_create(t, set);
    mlc_err err;
    if (mlc_fullspace_use_surface_contact(fs, 0, &err) != MLC_OK) fail_msg("surface: %s", err.msg);
    return fs;
}

static double extent_of(const mlc_mesh *mesh) {
    double extent = 0;
    for (int k = 0; k < 3; k++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < mesh->nv; i++)
            lo = fmin(lo, mesh->X[3 * i + k]), hi = fmax(hi, mesh->X[3 * i + k]);
        extent = fmax(extent, hi - lo);
    }
    return extent;
}

/* The lowest y of any boundary vertex of x. */
static double lowest_surface(const mlc_mesh *mesh, const double *x) {
    double lo = INFINITY;
    for (int f = 0; f < 3 * mesh->nf; f++)
        lo = fmin(lo, x[3 * mesh->F[f] + 1]);
    return lo;
}

/* Every contact force of the last iteration pushes (normal force ≥ 0) and keeps Coulomb's
 * bound; returns the contacts checked. */
static int check_forces(const mlc_fullspace *fs, double friction) {
    int n = mlc_fullspace_contacts(fs);
    for (int i = 0; i < n; i++) {
        int v;
        double f[3];
        assert_int_equal(mlc_fullspace_contact_force(fs, i, &v, f), 0);
        if (!(f[1] >= 0)) fail_msg("contact %d (vertex %d) pulls: normal force %.3e", i, v, f[1]);
        for (int k = 0; k < 3; k += 2)
            if (fabs(f[k]) > friction * f[1] * (1 + 1e-9) + 1e-300)
                fail_msg("contact %d: friction %.3e beyond %.3e", i, f[k], friction * f[1]);
    }
    return n;
}

/* A slab (5×2×3 voxels of edge h) on four legs one voxel thick and one tall, at its corners:
 * thin limbs whose tips (the legs' bottom vertices) are no contact samples when the samples are
 * the boundary vertices above them. With samples only, the legs sink into the ground until the
 * slab's underside lands (by about h); with contact on every surface vertex nothing sinks. The
 * surface contact's forces never pull. */
static void thin_limb_tips_should_not_sink_with_surface_contact(void **state) {
    (void)state;
    enum { NX = 5, NY = 3, NZ = 3 };
    const double h = 0.1;
    unsigned char occ[NX * NY * NZ];
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++)
                occ[i + NX * (j + NY * k)] =
                    j >= 1 || ((i == 0 || i == NX - 1) && (k == 0 || k == NZ - 1));
    tsim t = {0};
    double origin[3] = {0, 0, 0};
    mlc_err err;
    if (mlc_mesh_from_voxels(NX, NY, NZ, occ, h, origin, &t.mesh, &err) != MLC_OK)
        fail_msg("mesh: %s", err.msg);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    tsim_init(&t, &set, 2, 2, -1, 4);
    /* samples: every boundary vertex above the tips */
    unsigned char *bnd = calloc((size_t)t.mesh.nv, 1);
    for (int f = 0; f < 3 * t.mesh.nf; f++)
        bnd[t.mesh.F[f]] = 1;
    int ns = 0;
    for (int v = 0; v < t.mesh.nv; v++)
        ns += bnd[v] && t.mesh.X[3 * v + 1] > 0.5 * h;
    mlc_free(t.sub.samples);
    t.sub.samples = mlc_malloc(sizeof(int) * (size_t)ns);
    t.sub.ns = 0;
    for (int v = 0; v < t.mesh.nv; v++)
        if (bnd[v] && t.mesh.X[3 * v + 1] > 0.5 * h) t.sub.samples[t.sub.ns++] = v;
    free(bnd);
    mlc_fullspace *fsam = full_create(&t, &set), *fsur = surface_create(&t, &set);
    assert_int_equal(mlc_fullspace_surface_vertices(fsur), mlc_fullspace_surface_vertices(fsur));
    assert_true(mlc_fullspace_surface_vertices(fsur) > ns);
    double low_sam = INFINITY, low_sur = INFINITY;
    int forces = 0;
    for (int s = 0; s < 60; s++) {
        assert_int_equal(mlc_fullspace_step(fsam, NULL), 0);
        assert_int_equal(mlc_fullspace_step(fsur, NULL), 0);
        low_sam = fmin(low_sam, lowest_surface(&t.mesh, mlc_fullspace_state(fsam)));
        low_sur = fmin(low_sur, lowest_surface(&t.mesh, mlc_fullspace_state(fsur)));
        forces += check_forces(fsur, set.friction);
    }
    double extent = extent_of(&t.mesh);
    print_message("thin legs, %d samples above the tips: lowest surface vertex %.3e (samples), "
                  "%.3e (every surface vertex, %d contact forces checked)\n",
                  ns, low_sam, low_sur, forces);
    assert_true(low_sam < -0.5 * h);
    assert_true(low_sur > -1e-6 * extent);
    assert_true(forces > 0);
    mlc_fullspace_destroy(fsam), mlc_fullspace_destroy(fsur);
    tsim_free(&t);
}

/* Every step of the landing, walking quadruped with contact on every surface vertex: the
 * accelerated step is as close to the step's fixed point (300 plain iterations from the same
 * start) as the plain step that stops at the same tolerance, in fewer iterations; its contact
 * forces never pull and no surface vertex ends below the ground. */
static void accelerated_steps_should_agree_with_plain_steps(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[8], T[8], th[8];
    mlc_actuation act;
    const int steps = 40;
    landing_walker(&t, &set, steps, A, T, th, &act);
    mlc_fullspace *fa = surface_create(&t, &set), *fp = surface_create(&t, &set),
                  *fc = surface_create(&t, &set);
    mlc_err err;
    assert_int_equal(mlc_fullspace_set_acceleration(fp, 0, &err), MLC_OK);
    step_race r;
    race_steps(&t, &set, &act, fa, fp, fc, steps, &r);
    print_message("%d steps (%d in contact): iterations a step %.1f accelerated, %.1f plain; "
                  "distance to the fixed point %.2e accelerated, %.2e plain; lowest surface "
                  "vertex %.2e\n",
                  steps, r.contact_steps, (double)r.its_a / steps, (double)r.its_b / steps, r.err_a,
                  r.err_b, r.low);
    assert_true(r.contact_steps > steps / 2);
    assert_true(r.err_a < 1e-5);
    assert_true(r.err_a < 2 * r.err_b + 1e-9);
    assert_true(r.its_a < r.its_b);
    assert_true(r.low > -1e-6 * extent_of(&t.mesh));
    mlc_fullspace_destroy(fa), mlc_fullspace_destroy(fp), mlc_fullspace_destroy(fc);
    tsim_free(&t);
}

/* The reference's own local step (one rotation per tet and one actuation cluster: the
 * cluster's matrix summed over vertices, F from three edge vectors, the rotations of a chunk
 * together, the terms added to the right-hand side as they are formed) against the general one
 * (per-tet V F Yᵀ summed over tets, the terms gathered per vertex), forced by a second, empty
 * actuation cluster: the same physics by different sums. On the landing, walking quadruped with
 * contact on every surface vertex, from the same starts, both paths end every step within a few
 * tolerances of the step's fixed point (300 plain iterations of the reference path), so a gait
 * replayed by either is the same answer to the tolerance. */
static void reference_path_should_agree_with_the_general_path(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[8], T[8], th[8];
    mlc_actuation act;
    const int steps = 40;
    landing_walker(&t, &set, steps, A, T, th, &act);
    mlc_subspace two = t.sub;
    two.nca = 2; /* every tet in cluster 0: cluster 1 is empty */
    mlc_fullspace *fa = surface_create(&t, &set), *fc = surface_create(&t, &set), *fb = NULL;
    mlc_err err;
    assert_int_equal(mlc_fullspace_create(&t.mesh, &t.fem, &two, &set, 1, &fb, &err), MLC_OK);
    assert_int_equal(mlc_fullspace_use_surface_contact(fb, 0, &err), MLC_OK);
    step_race r;
    race_steps(&t, &set, &act, fa, fb, fc, steps, &r);
    print_message("%d steps (%d in contact): iterations a step %.1f reference path, %.1f general; "
                  "distance to the fixed point %.2e reference path, %.2e general\n",
                  steps, r.contact_steps, (double)r.its_a / steps, (double)r.its_b / steps, r.err_a,
                  r.err_b);
    assert_true(r.contact_steps > steps / 2);
    assert_true(r.err_a < 1e-5);
    assert_true(r.err_b < 1e-5);
    /* the actuation's work, summed per vertex and per tet on the reference path (from the
     * modes' per-vertex terms) and per tet on the general one (from the targets Y_e) */
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.work_penalty = 1e-3;
    mlc_rollout_result ra, rb;
    assert_int_equal(mlc_fullspace_run(fa, &act, &obj, NULL, NULL, &ra, &err), MLC_OK);
    assert_int_equal(mlc_fullspace_run(fb, &act, &obj, NULL, NULL, &rb, &err), MLC_OK);
    print_message("work term %.9g reference path, %.9g general\n", ra.J_work, rb.J_work);
    assert_true(ra.J_work != 0);
    assert_rel(ra.J_work, rb.J_work, 1e-4, 0);
    mlc_fullspace_destroy(fa), mlc_fullspace_destroy(fb), mlc_fullspace_destroy(fc);
    tsim_free(&t);
}

/* The same rollout on one and on two threads, bit for bit: with contact on every surface
 * vertex (one rotation per tet, the fused right-hand side) and with per-cluster passive
 * rotations on samples (the two-pass right-hand side). */
static void rollouts_should_be_bit_identical_for_one_and_two_threads(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[8], T[8], th[8];
    mlc_actuation act;
    landing_walker(&t, &set, 30, A, T, th, &act);
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.work_penalty = 1e-3;
    const int n3 = 3 * t.mesh.nv;
    for (int path = 0; path < 2; path++) {
        mlc_fullspace *f[2];
        mlc_rollout_result r[2];
        double *x[2];
        mlc_err err;
        for (int j = 0; j < 2; j++) {
            if (path == 0) {
                f[j] = surface_create(&t, &set);
            } else {
                f[j] = NULL;
                assert_int_equal(
                    mlc_fullspace_create(&t.mesh, &t.fem, &t.sub, &set, 0, &f[j], &err), MLC_OK);
            }
            mlc_fullspace_set_threads(f[j], j + 1);
            assert_int_equal(mlc_fullspace_run(f[j], &act, &obj, NULL, NULL, &r[j], &err), MLC_OK);
            assert_int_equal(r[j].failed, 0);
            x[j] = malloc(sizeof(double) * n3);
            memcpy(x[j], mlc_fullspace_state(f[j]), sizeof(double) * n3);
        }
        assert_memory_equal(x[0], x[1], sizeof(double) * n3);
        assert_memory_equal(&r[0], &r[1], sizeof r[0]);
        for (int j = 0; j < 2; j++)
            free(x[j]), mlc_fullspace_destroy(f[j]);
    }
    tsim_free(&t);
}

/* The same inputs with the tets listed backwards (mesh, volumes, gradients, clusters; the
 * vertices and their masses as they were): the simulator sorts its tets by position, so the
 * rollout is the same bit for bit. */
static void rollouts_should_not_depend_on_the_order_of_the_tets(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    double A[8], T[8], th[8];
    mlc_actuation act;
    landing_walker(&t, &set, 30, A, T, th, &act);
    const int nt = t.mesh.nt, n3 = 3 * t.mesh.nv;
    tsim back = t; /* shares everything per vertex */
    back.mesh.T = malloc(sizeof(int) * 4 * (size_t)nt);
    back.fem.vol = malloc(sizeof(double) * (size_t)nt);
    back.fem.grad = malloc(sizeof(double) * 12 * (size_t)nt);
    back.sub.cluster = malloc(sizeof(int) * (size_t)nt);
    back.sub.acluster = malloc(sizeof(int) * (size_t)nt);
    for (int e = 0; e < nt; e++) {
        const int f = nt - 1 - e;
        memcpy(back.mesh.T + 4 * e, t.mesh.T + 4 * f, sizeof(int) * 4);
        memcpy(back.fem.grad + 12 * e, t.fem.grad + 12 * f, sizeof(double) * 12);
        back.fem.vol[e] = t.fem.vol[f];
        back.sub.cluster[e] = t.sub.cluster[f], back.sub.acluster[e] = t.sub.acluster[f];
    }
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    obj.work_penalty = 1e-3;
    mlc_fullspace *f[2] = {surface_create(&t, &set), surface_create(&back, &set)};
    mlc_rollout_result r[2];
    mlc_err err;
    for (int j = 0; j < 2; j++) {
        mlc_fullspace_set_threads(f[j], 2);
        assert_int_equal(mlc_fullspace_run(f[j], &act, &obj, NULL, NULL, &r[j], &err), MLC_OK);
        assert_int_equal(r[j].failed, 0);
    }
    assert_true(r[0].displacement != 0);
    assert_memory_equal(mlc_fullspace_state(f[0]), mlc_fullspace_state(f[1]), sizeof(double) * n3);
    assert_memory_equal(&r[0], &r[1], sizeof r[0]);
    mlc_fullspace_destroy(f[0]), mlc_fullspace_destroy(f[1]);
    free(back.mesh.T), free(back.fem.vol), free(back.fem.grad);
    free(back.sub.cluster), free(back.sub.acluster);
    tsim_free(&t);
}

/* A box resting on the ground with contact on every surface vertex stays there: no surface
 * vertex below the ground, no drift. With a cache of 2 columns its bottom does not fit: the
 * step fails with MLC_ENOMEM and says why. Bad settings are refused. */
static void box_at_rest_should_stay_on_every_surface_vertex(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    resting_box(&t, &set);
    mlc_fullspace *fs = surface_create(&t, &set);
    double c0[3] = {0, 0, 0}, c[3], low = INFINITY, drift = 0;
    for (int s = 1; s <= 200; s++) {
        assert_int_equal(mlc_fullspace_step(fs, NULL), 0);
        low = fmin(low, lowest_surface(&t.mesh, mlc_fullspace_state(fs)));
        check_forces(fs, set.friction);
        mlc_fullspace_com(fs, mlc_fullspace_state(fs), c);
        if (s == 100) memcpy(c0, c, sizeof c);
        if (s > 100)
            for (int k = 0; k < 3; k++)
                drift = fmax(drift, fabs(c[k] - c0[k]));
    }
    print_message("box at rest, every surface vertex: lowest %.3e, CoM drift after settling "
                  "%.3e, %ld columns\n",
                  low, drift, mlc_fullspace_columns_solved(fs));
    assert_true(low > -1e-9);
    assert_true(drift < 1e-5); /* measured 5.4e-6: settling within the tolerance */
    mlc_fullspace_destroy(fs);
    mlc_err err;
    fs = full_create(&t, &set);
    assert_int_equal(mlc_fullspace_use_surface_contact(fs, -1, &err), MLC_EINVAL);
    assert_int_equal(mlc_fullspace_set_acceleration(fs, -1, &err), MLC_EINVAL);
    assert_int_equal(mlc_fullspace_set_acceleration(fs, MLC_FULLSPACE_ANDERSON_MAX + 1, &err),
                     MLC_EINVAL);
    assert_int_equal(mlc_fullspace_use_surface_contact(fs, 2, &err), MLC_OK);
    int rc = 0;
    for (int s = 0; s < 5 && rc == 0; s++)
        rc = mlc_fullspace_step(fs, NULL);
    assert_int_equal(rc, MLC_ENOMEM);
    assert_non_null(strstr(mlc_fullspace_failure(fs), "contact columns"));
    mlc_fullspace_destroy(fs);
    set.contact_model = MLC_CONTACT_EQUALITY;
    fs = full_create(&t, &set);
    assert_int_equal(mlc_fullspace_use_surface_contact(fs, 0, &err), MLC_EINVAL);
    mlc_fullspace_destroy(fs);
    tsim_free(&t);
}

/* A cache of 2 columns that may grow (mlc_fullspace_set_contact_memory) holds the box's bottom
 * of 15 vertices: its steps succeed and follow those of the default cache of 1,024 to the step
 * tolerance (here to the last bit: the bottom needs its columns at once, so no slot is evicted
 * and the slots are filled in the same order); after a reset the
 * cache starts at 2 again and the rollout repeats bit for bit. A memory share that holds only
 * 4 columns fails as a fixed cache does, and says why. */
static void a_growing_contact_cache_should_hold_what_a_large_one_holds(void **state) {
    (void)state;
    tsim t = {0};
    mlc_sim_settings set;
    resting_box(&t, &set);
    mlc_err err;
    mlc_fullspace *big = surface_create(&t, &set), *grow = full_create(&t, &set);
    assert_int_equal(mlc_fullspace_use_surface_contact(grow, 2, &err), MLC_OK);
    mlc_fullspace_set_contact_memory(grow, 1e9);
    int most = 0;
    assert_int_equal(mlc_fullspace_contact_columns(grow, &most), 2);
    assert_int_equal(most, mlc_fullspace_surface_vertices(grow)); /* every surface vertex fits */
    const int steps = 80;
    const size_t v3 = 3 * (size_t)t.mesh.nv;
    double *first = malloc(sizeof(double) * v3 * steps), diff = 0;
    assert_non_null(first);
    for (int s = 0; s < steps; s++) {
        assert_int_equal(mlc_fullspace_step(big, NULL), 0);
        assert_int_equal(mlc_fullspace_step(grow, NULL), 0);
        const double *a = mlc_fullspace_state(big), *b = mlc_fullspace_state(grow);
        for (size_t i = 0; i < v3; i++)
            diff = fmax(diff, fabs(a[i] - b[i]));
        memcpy(first + v3 * s, b, sizeof(double) * v3);
        check_forces(grow, set.friction);
    }
    const int grown = mlc_fullspace_contact_columns(grow, NULL);
    const double extent = extent_of(&t.mesh);
    print_message("growing cache: %d columns at the end, largest difference from 1,024 columns "
                  "%.2e of the extent\n",
                  grown, diff / extent);
    assert_true(grown >= 16); /* 2, 4, 8, 16: the bottom's 15 vertices */
    assert_true(diff <= 1e-5 * extent);
    mlc_fullspace_reset(grow);
    assert_int_equal(mlc_fullspace_contact_columns(grow, NULL), 2);
    for (int s = 0; s < steps; s++) {
        assert_int_equal(mlc_fullspace_step(grow, NULL), 0);
        assert_memory_equal(mlc_fullspace_state(grow), first + v3 * s, sizeof(double) * v3);
    }
    free(first);
    mlc_fullspace_destroy(grow);
    /* 4 columns of 45 vertices: 4 × (8·45 + 200) + 40·16 = 2,880 bytes */
    grow = full_create(&t, &set);
    assert_int_equal(mlc_fullspace_use_surface_contact(grow, 2, &err), MLC_OK);
    mlc_fullspace_set_contact_memory(grow, 3000);
    assert_int_equal(mlc_fullspace_contact_columns(grow, &most), 2);
    assert_int_equal(most, 4);
    int rc = 0;
    for (int s = 0; s < 5 && rc == 0; s++)
        rc = mlc_fullspace_step(grow, NULL);
    assert_int_equal(rc, MLC_ENOMEM);
    assert_non_null(strstr(mlc_fullspace_failure(grow), "contact columns"));
    assert_int_equal(mlc_fullspace_contact_columns(grow, NULL), 4);
    mlc_fullspace_destroy(grow);
    mlc_fullspace_destroy(big);
    tsim_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_at_rest_should_stay_on_the_ground),
        cmocka_unit_test(reduced_should_approach_full_space_in_free_flight),
        cmocka_unit_test(reduced_should_approach_full_space_with_contact),
        cmocka_unit_test(full_space_steps_should_converge_to_their_tolerance),
        cmocka_unit_test(tighter_tolerance_should_change_a_rollout_less),
        cmocka_unit_test(full_space_rollouts_should_be_deterministic),
        cmocka_unit_test(bad_settings_should_be_reported),
        cmocka_unit_test(thin_limb_tips_should_not_sink_with_surface_contact),
        cmocka_unit_test(accelerated_steps_should_agree_with_plain_steps),
        cmocka_unit_test(reference_path_should_agree_with_the_general_path),
        cmocka_unit_test(rollouts_should_be_bit_identical_for_one_and_two_threads),
        cmocka_unit_test(rollouts_should_not_depend_on_the_order_of_the_tets),
        cmocka_unit_test(box_at_rest_should_stay_on_every_surface_vertex),
        cmocka_unit_test(a_growing_contact_cache_should_hold_what_a_large_one_holds),
    };
    return cmocka_run_group_tests_name("fullspace", tests, NULL, NULL);
}
