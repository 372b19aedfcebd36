/* test_terrain.c: ground geometry (terrain.h) and time integration (sim.integrator).
 *  - the terrain's signed distances and normals (plane, slope, box, heightfield), and the
 *    heightfield reader's errors naming file:line;
 *  - a block on a 20° slope slides with μ_f < tan θ and stays with μ_f > tan θ;
 *  - a flat heightfield gives the rollout of the flat plane;
 *  - a body dropped on a box rests on the box's top;
 *  - anisotropic friction: pushed forward a body slides a times farther than pushed back;
 *  - backward Euler is unchanged (golden checksums recorded before terrain and BDF2
 *    existed); BDF2 keeps more energy than backward Euler in free vibration, is damped by
 *    Rayleigh damping as expected, and never gains energy in an undamped drop.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "terrain.h"
#include "test_sim_util.h"

/* ---- geometry ----------------------------------------------------------------------------- */

static void terrain_should_give_distances_and_normals(void **state) {
    (void)state;
    mlc_err err;
    mlc_terrain t;
    const double dir[3] = {1, 0, 0};
    /* slope of 30° rising along +x through the origin */
    assert_int_equal(mlc_terrain_init(&t, 0, 0.5, 30, 1, dir, NULL, 0, &err), MLC_OK);
    assert_false(t.flat);
    double n[3], mu, x[3] = {2, 3, 1};
    double d = mlc_terrain_query(&t, x, n, &mu);
    assert_near(d, -0.5 * 2 + cos(MLC_PI / 6) * 3, 1e-14);
    assert_near(n[0], -0.5, 1e-15);
    assert_near(n[1], cos(MLC_PI / 6), 1e-15);
    assert_near(mlc_terrain_height(&t, 2, 0), tan(MLC_PI / 6) * 2, 1e-14);
    mlc_terrain_free(&t);
    /* a box on the flat ground: its top is the closest feature above it, its side beside it */
    mlc_terrain_box b = {{0, -1, 0}, {1, 0.25, 1}, 0.9};
    assert_int_equal(mlc_terrain_init(&t, 0, 0.5, 0, 1, dir, &b, 1, &err), MLC_OK);
    double above[3] = {0.5, 0.4, 0.5}, beside[3] = {1.1, 0.2, 0.5}, far[3] = {3, 0.2, 3};
    assert_near(mlc_terrain_query(&t, above, n, &mu), 0.15, 1e-14);
    assert_true(n[1] == 1 && mu == 0.9);
    assert_near(mlc_terrain_query(&t, beside, n, &mu), 0.1, 1e-14);
    assert_true(n[0] == 1 && mu == 0.9);
    assert_near(mlc_terrain_query(&t, far, n, &mu), 0.2, 1e-14);
    assert_true(n[1] == 1 && mu == 0.5); /* the ground's */
    assert_near(mlc_terrain_height(&t, 0.5, 0.5), 0.25, 0);
    mlc_terrain_free(&t);
    /* invalid values */
    b.hi[1] = -2;
    assert_int_equal(mlc_terrain_init(&t, 0, 0.5, 0, 1, dir, &b, 1, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "contact.boxes[0]"));
    assert_int_equal(mlc_terrain_init(&t, 0, 0.5, 90, 1, dir, NULL, 0, &err), MLC_EINVAL);
    assert_int_equal(mlc_terrain_init(&t, 0, 0.5, 0, 0.5, dir, NULL, 0, &err), MLC_EINVAL);
    mlc_terrain_free(&t);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void heightfield_should_interpolate_and_name_bad_lines(void **state) {
    (void)state;
    char path[] = "/tmp/mlc-test-hf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    mlc_err err;
    mlc_terrain t;
    const double dir[3] = {1, 0, 0};
    /* a ramp h = 0.1 x over x ∈ [0, 2], flat in z */
    write_file(path, "# a ramp\n3 2 0 0 1 1\n0 0.1 0.2\n0 0.1 0.2\n");
    assert_int_equal(mlc_terrain_init(&t, 0, 0.5, 0, 1, dir, NULL, 0, &err), MLC_OK);
    assert_int_equal(mlc_terrain_read_heightfield(&t, path, &err), MLC_OK);
    double n[3], x[3] = {1.5, 0.5, 0.5};
    double d = mlc_terrain_query(&t, x, n, NULL), s = 1 / sqrt(1.01);
    assert_near(d, (0.5 - 0.15) * s, 1e-14);
    assert_near(n[0], -0.1 * s, 1e-14);
    double outside[3] = {5, 0.5, -3}; /* clamped: the edge value, flat */
    assert_near(mlc_terrain_query(&t, outside, n, NULL), 0.3, 1e-14);
    assert_true(n[1] == 1);
    mlc_terrain_free(&t);
    struct {
        const char *text, *want;
    } bad[] = {
        {"3 2 0 0 1\n", ":2: heightfield header: expected dz"},
        {"3 2 0 0 1 1\n0 0 0\n0 x 0\n", ":3: heightfield row 2, column 2"},
        {"3 2 0 0 1 1\n0 0 0\n0 0\n", "row 2, column 3: expected a height, got the end"},
        {"3 2 0 0 1 1\n0 0 0\n0 0 0\n1\n", ":4: heightfield has more than"},
        {"3 2 0 0 -1 1\n", ":1: heightfield header"},
        {"1 2 0 0 1 1\n0\n0\n", "nx and nz must be whole numbers in 2..4096"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i].text);
        mlc_terrain_flat(&t, 0, 0.5);
        assert_int_equal(mlc_terrain_read_heightfield(&t, path, &err), MLC_EINVAL);
        if (!strstr(err.msg, bad[i].want) || !strstr(err.msg, path))
            fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg, bad[i].want);
        assert_null(t.h);
        mlc_terrain_free(&t);
    }
    unlink(path);
}

/* ---- rollouts ----------------------------------------------------------------------------- */

/* Translation by v (metres) of a state: the constant weight's homogeneous entries. */
static void translate(const tsim *t, double *z, const double v[3]) {
    int n4 = mlc_model_dim(t->model) / 3;
    double iw0 = 1 / t->sub.W[0];
    for (int k = 0; k < 3; k++)
        z[k * n4 + 3] += v[k] * iw0;
}

static double lowest_vertex(const tsim *t, const double *z) {
    int nv = t->mesh.nv;
    double *x = malloc(sizeof(double) * 3 * (size_t)nv), lo = INFINITY;
    mlc_model_skin(t->model, z, nv, NULL, x);
    for (int i = 0; i < nv; i++)
        lo = fmin(lo, x[3 * i + 1]);
    free(x);
    return lo;
}

/* A 1 × 0.5 × 1 block laid flat on a slope of θ rising along +x (rotated by θ about z and
 * moved onto the settled plane), at rest; returns the centre of mass's travel down the slope
 * over `steps` steps. */
static double slope_slide(double theta_deg, double mu, int steps) {
    tsim t = {0};
    test_box_mesh(4, 2, 4, 0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.friction = mu;
    mlc_terrain ter;
    mlc_err err;
    const double dir[3] = {1, 0, 0};
    assert_int_equal(mlc_terrain_init(&ter, 0, mu, theta_deg, 1, dir, NULL, 0, &err), MLC_OK);
    set.terrain = &ter;
    tsim_init(&t, &set, 4, 0, 4, 24);
    mlc_terrain_free(&ter);
    const mlc_terrain *mt = mlc_model_terrain(t.model);
    int r = mlc_model_dim(t.model), n4 = r / 3;
    double *z = calloc((size_t)r, sizeof(double)), th = theta_deg * MLC_PI / 180;
    double iw0 = 1 / t.sub.W[0],
           R[3][3] = {{cos(th), -sin(th), 0}, {sin(th), cos(th), 0}, {0, 0, 1}};
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++)
            z[k * n4 + c] = R[k][c] * iw0;
    /* the rotated bottom face lies in the plane n·x = 0; the settled plane is n·x = offset */
    double v[3] = {mt->offset * mt->n[0], mt->offset * mt->n[1], mt->offset * mt->n[2]};
    translate(&t, z, v);
    mlc_rollout_reset(t.ro);
    mlc_rollout_set_state(t.ro, z, z);
    double c0[3], c1[3];
    mlc_model_com(t.model, z, c0);
    for (int s = 0; s < steps; s++)
        assert_int_equal(mlc_rollout_step(t.ro, NULL), 0);
    mlc_model_com(t.model, mlc_rollout_state(t.ro), c1);
    double down[3] = {-cos(th), -sin(th), 0}, travel = 0;
    for (int k = 0; k < 3; k++)
        travel += (c1[k] - c0[k]) * down[k];
    free(z);
    tsim_free(&t);
    return travel;
}

/* A block on a 20° slope (tan θ = 0.364), released at rest, over 1 s: with μ_f = 0.2 it
 * slides like a Coulomb block, g (sin θ − μ cos θ) t²/2 = 0.756 m; with μ_f = 0.6 it stays
 * (measured travel printed; the tolerance: within 25% of the block, and under 1 cm). */
static void block_should_slide_on_a_slope_only_below_the_critical_friction(void **state) {
    (void)state;
    const double th = 20 * MLC_PI / 180, g = 9.81;
    double slide = slope_slide(20, 0.2, 100), stay = slope_slide(20, 0.6, 100);
    double block = 0.5 * g * (sin(th) - 0.2 * cos(th));
    print_message("slope 20°, 1 s: μ_f = 0.2 travelled %.4f m (Coulomb block %.4f m), "
                  "μ_f = 0.6 travelled %.2e m\n",
                  slide, block, stay);
    assert_true(fabs(slide - block) < 0.25 * block);
    assert_true(fabs(stay) < 0.01);
}

/* A walking rollout (actuated quadruped, 150 steps) on a terrain; final state into z. */
static void walk(const mlc_terrain *ter, const mlc_sim_settings *base, double *z, int *contacts) {
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set = base ? *base : (mlc_sim_settings){0};
    if (!base) mlc_sim_settings_default(&set);
    set.terrain = ter;
    tsim_init(&t, &set, 5, 4, 8, 40);
    double A[8] = {0.3, 0.1, -0.2, 0.05, 0.15, 0, 0.1, -0.1};
    double T[8] = {0.3, 0.45, 0.25, 0.5, 0.35, 0.4, 0.3, 0.55};
    double th[8] = {0, 0.1, 0.2, 0.3, 0.05, 0.15, 0.25, 0.35};
    mlc_actuation act = {4, 2, A, T, th};
    mlc_rollout_reset(t.ro);
    int c = 0;
    for (int s = 0; s < 150; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
        c += mlc_rollout_contacts(t.ro);
    }
    memcpy(z, mlc_rollout_state(t.ro), sizeof(double) * (size_t)mlc_model_dim(t.model));
    if (contacts) *contacts = c;
    tsim_free(&t);
}

static uint64_t hash_doubles(const double *x, int n) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &x[i], sizeof b);
        h = (h ^ b) * 1099511628211ull;
    }
    return h;
}

/* Backward Euler on the flat plane takes the original contact path: a walking rollout with the
 * defaults ends where it was recorded (FLAT_WALK_Z: the translation of the first skinning
 * transform, z[3], z[23], z[43]; and FLAT_WALK_CONTACTS), and one with integrator = euler, rayleigh
 * = [0, 0] and the flat terrain given explicitly ends in the same bits. The recorded values are
 * checked to 1e-9 relative, not bit for bit: the subspace comes from LAPACK, whose kernels (chosen
 * per CPU by OpenBLAS) may round differently, e.g. under valgrind; a changed contact path moves the
 * body by far more. A change of the values is a change of results: say why in its commit. */
#define FLAT_WALK_CONTACTS 70
#define FLAT_WALK_Z0 0.45128661100343992
#define FLAT_WALK_Z1 1.1514159274102767
#define FLAT_WALK_Z2 2.5046252572253311
static const double FLAT_WALK_Z[3] = {FLAT_WALK_Z0, FLAT_WALK_Z1, FLAT_WALK_Z2};
static void euler_on_flat_ground_should_be_unchanged(void **state) {
    (void)state;
    double z[60], z2[60];
    int c;
    walk(NULL, NULL, z, &c);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.integrator = MLC_INTEGRATOR_EULER;
    set.rayleigh[0] = set.rayleigh[1] = 0;
    mlc_terrain flat;
    mlc_terrain_flat(&flat, set.ground, set.friction);
    walk(&flat, &set, z2, NULL);
    uint64_t h = hash_doubles(z, 60), h2 = hash_doubles(z2, 60);
    print_message("walking rollout: %d contacts over 150 steps, final state hash %016llx, "
                  "z[3], z[23], z[43] = %.17g, %.17g, %.17g\n",
                  c, (unsigned long long)h, z[3], z[23], z[43]);
    assert_int_equal(c, FLAT_WALK_CONTACTS);
    for (int k = 0; k < 3; k++)
        assert_rel(z[3 + 20 * k], FLAT_WALK_Z[k], 1e-9, 1e-3);
    assert_true(h == h2);
}

/* A flat heightfield (all heights 0, anisotropy 1, the general terrain path) gives the flat
 * plane's walking rollout to 1e-10 of its size. The two paths round differently and 150 steps
 * of contact amplify that: measured 5.5e-13 and 2.9e-12 of 2.5 on one machine, with subspaces
 * built by two OpenBLAS thread counts (its kernels and threads set the subspace's last bits);
 * a wrong height or normal moves the body by millimetres. */
static void flat_heightfield_should_match_the_plane(void **state) {
    (void)state;
    char path[] = "/tmp/mlc-test-hf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, "3 3 -10 -10 10 10\n0 0 0\n0 0 0\n0 0 0\n");
    mlc_terrain ter;
    mlc_err err;
    const double dir[3] = {1, 0, 0};
    assert_int_equal(mlc_terrain_init(&ter, 0, 0.5, 0, 1, dir, NULL, 0, &err), MLC_OK);
    assert_int_equal(mlc_terrain_read_heightfield(&ter, path, &err), MLC_OK);
    assert_false(ter.flat);
    double z[60], zh[60];
    walk(NULL, NULL, z, NULL);
    walk(&ter, NULL, zh, NULL);
    double worst = 0, size = 0;
    for (int i = 0; i < 60; i++)
        worst = fmax(worst, fabs(z[i] - zh[i])), size = fmax(size, fabs(z[i]));
    print_message("flat heightfield vs plane: largest state difference %.3g (of %.3g)\n", worst,
                  size);
    assert_true(worst <= 1e-10 * size);
    mlc_terrain_free(&ter);
    unlink(path);
}

/* Dropped from 0.3 m above a box whose top (y = 0.3) covers its footprint, the body lands
 * on the box and rests there: the lowest vertex ends within 1% of the extent of the top. */
static void body_dropped_on_a_box_should_rest_on_its_top(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.rayleigh[1] = 0.01; /* settle */
    mlc_terrain ter;
    mlc_err err;
    const double dir[3] = {1, 0, 0};
    mlc_terrain_box b = {{-0.5, -1, -0.5}, {2.75, 0.3, 1.5}, -1};
    assert_int_equal(mlc_terrain_init(&ter, 0, 0.5, 0, 1, dir, &b, 1, &err), MLC_OK);
    set.terrain = &ter;
    tsim_init(&t, &set, 5, 0, 8, 40);
    mlc_terrain_free(&ter);
    int r = mlc_model_dim(t.model);
    double *z = malloc(sizeof(double) * (size_t)r), up[3] = {0, 0.6, 0};
    mlc_model_rest_state(t.model, z);
    translate(&t, z, up);
    mlc_rollout_reset(t.ro);
    mlc_rollout_set_state(t.ro, z, z);
    double lo_min = INFINITY;
    for (int s = 0; s < 200; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, NULL), 0);
        lo_min = fmin(lo_min, lowest_vertex(&t, mlc_rollout_state(t.ro)));
    }
    double lo = lowest_vertex(&t, mlc_rollout_state(t.ro)), e = mlc_model_extent(t.model);
    print_message("dropped on a box (top 0.3): lowest vertex at rest %.4f, lowest ever %.4f\n", lo,
                  lo_min);
    assert_true(fabs(lo - 0.3) < 0.01 * e);
    assert_true(lo_min > 0.3 - 0.02 * e);
    free(z);
    tsim_free(&t);
}

/* Sliding at v = 2 m/s on flat ground with μ_f = 0.5 and anisotropy a = 2: forward (+x, the
 * objective direction) the friction is μ_f, backward a·μ_f, so a Coulomb block slides
 * v²/(2μg) forward and a times less backward. */
static double push(double vx, double a) {
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    mlc_terrain ter;
    mlc_err err;
    const double dir[3] = {1, 0, 0};
    assert_int_equal(mlc_terrain_init(&ter, 0, 0.5, 0, a, dir, NULL, 0, &err), MLC_OK);
    set.terrain = &ter;
    tsim_init(&t, &set, 5, 0, 8, 40);
    mlc_terrain_free(&ter);
    int r = mlc_model_dim(t.model);
    double *z = malloc(sizeof(double) * (size_t)r), *zp = malloc(sizeof(double) * (size_t)r);
    mlc_model_rest_state(t.model, z);
    memcpy(zp, z, sizeof(double) * (size_t)r);
    double back[3] = {-vx * set.dt, 0, 0}, c0[3], c1[3];
    translate(&t, zp, back);
    mlc_rollout_reset(t.ro);
    mlc_rollout_set_state(t.ro, z, zp);
    mlc_model_com(t.model, z, c0);
    for (int s = 0; s < 200; s++)
        assert_int_equal(mlc_rollout_step(t.ro, NULL), 0);
    mlc_model_com(t.model, mlc_rollout_state(t.ro), c1);
    free(z), free(zp);
    tsim_free(&t);
    return fabs(c1[0] - c0[0]);
}

static void anisotropic_friction_should_hold_backward_sliding_more(void **state) {
    (void)state;
    const double a = 2;
    double fwd = push(2, a), bwd = push(-2, a), iso = push(-2, 1);
    print_message("anisotropy %g: slid %.4f m forward, %.4f m backward (ratio %.3f), %.4f m "
                  "backward when isotropic (block: %.4f m)\n",
                  a, fwd, bwd, fwd / bwd, iso, 4 / (2 * 0.5 * 9.81));
    assert_true(fabs(fwd / bwd - a) < 0.15 * a);
    assert_true(fabs(iso - fwd) < 0.05 * fwd); /* forward is the isotropic friction */
}

/* ---- BDF2 ------------------------------------------------------------------------------------ */

/* Free vibration (no gravity, no contact) from a stretched start: the mechanical energy
 * (ledger total) after `steps` steps relative to the start. */
static double vibration_energy_kept(int integrator, double alpha, int steps) {
    tsim t = {0};
    test_box_mesh(4, 2, 2, 0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.contact = 0;
    set.gravity[1] = 0;
    set.integrator = integrator;
    set.mu = set.gamma = 2e3; /* soft: the lowest mode's period is many steps */
    set.rayleigh[0] = alpha;
    tsim_init(&t, &set, 4, 0, 4, 8);
    int r = mlc_model_dim(t.model), n4 = r / 3;
    double *z = malloc(sizeof(double) * (size_t)r);
    mlc_model_rest_state(t.model, z);
    z[0] *= 1.1; /* stretch 10% along x */
    (void)n4;
    mlc_rollout_reset(t.ro);
    mlc_rollout_set_state(t.ro, z, z);
    mlc_energy_ledger L;
    mlc_rollout_set_ledger(t.ro, &L, NULL);
    double e0 = L.total;
    for (int s = 0; s < steps; s++)
        assert_int_equal(mlc_rollout_step(t.ro, NULL), 0);
    double kept = L.total / e0;
    mlc_rollout_set_ledger(t.ro, NULL, NULL);
    free(z);
    tsim_free(&t);
    return kept;
}

static void bdf2_should_dissipate_less_than_backward_euler(void **state) {
    (void)state;
    double be = vibration_energy_kept(MLC_INTEGRATOR_EULER, 0, 100),
           bdf = vibration_energy_kept(MLC_INTEGRATOR_BDF2, 0, 100),
           bdf_damped = vibration_energy_kept(MLC_INTEGRATOR_BDF2, 1, 100);
    print_message("free vibration, 100 steps of 0.01 s: energy kept %.3g (backward Euler), "
                  "%.3g (BDF2), %.3g (BDF2 with Rayleigh α = 1/s: e^(−αt) = %.3g)\n",
                  be, bdf, bdf_damped, exp(-1.0));
    assert_true(bdf > be);
    assert_true(bdf <= 1 + 1e-9); /* and no gain */
    /* Rayleigh damping works with BDF2: mass-proportional α damps the energy by about
     * e^(−αt) (force −αMv) on top of the integrator's own loss */
    assert_true(fabs(bdf_damped / bdf - exp(-1.0)) < 0.05 * exp(-1.0));
}

typedef struct drop_energy {
    double start, highest, final, step_rise, deepest;
} drop_energy;

static void drop(int integrator, drop_energy *d) {
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.ground = -0.5;
    set.integrator = integrator;
    tsim_init(&t, &set, 5, 0, 8, 40);
    mlc_rollout_reset(t.ro);
    mlc_energy_ledger L;
    mlc_rollout_set_ledger(t.ro, &L, NULL);
    double prev = L.total;
    d->start = L.total, d->highest = -INFINITY, d->step_rise = 0, d->deepest = INFINITY;
    for (int s = 0; s < 300; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, NULL), 0);
        d->highest = fmax(d->highest, L.total);
        d->step_rise = fmax(d->step_rise, L.total - prev);
        prev = L.total;
        d->deepest = fmin(d->deepest, lowest_vertex(&t, mlc_rollout_state(t.ro)) - set.ground);
    }
    d->final = L.total;
    d->deepest /= mlc_model_extent(t.model);
    mlc_rollout_set_ledger(t.ro, NULL, NULL);
    tsim_free(&t);
}

/* An undamped drop from 0.5 m onto the flat ground: with BDF2 the mechanical energy (its
 * kinetic term from BDF2's velocity) never rises above its start, and the body does not sink
 * deeper than 2.5% of its extent. BDF2 is not monotone step by step (the energy trades between
 * steps; the largest step rise is printed), backward Euler is (test_contact.c). */
static void bdf2_drop_should_not_gain_energy(void **state) {
    (void)state;
    drop_energy be, bdf;
    drop(MLC_INTEGRATOR_EULER, &be);
    drop(MLC_INTEGRATOR_BDF2, &bdf);
    const char *fmt = "%s drop from 0.5 m: energy at start %.1f J, highest after it %.1f J, final "
                      "%.1f J (largest step rise %.3g J), deepest vertex %.4f extents\n";
    print_message(fmt, "backward Euler", be.start, be.highest, be.final, be.step_rise, be.deepest);
    print_message(fmt, "BDF2", bdf.start, bdf.highest, bdf.final, bdf.step_rise, bdf.deepest);
    assert_true(bdf.highest <= bdf.start + 1e-9 * fabs(bdf.start));
    assert_true(bdf.final < bdf.start);
    assert_true(bdf.final > be.final); /* less dissipated */
    assert_true(bdf.deepest > -0.025);
}

/* contact.model's table: every model's name parses back to it, the equality model needs the
 * flat ground and has no pushing forces, and a model is refused where its table says so (the
 * equality model on a slope, a value outside the enum) with a message naming the model. */
static void contact_models_should_follow_their_table(void **state) {
    (void)state;
    for (int m = 0; m < MLC_CONTACT_MODELS; m++)
        assert_int_equal(mlc_contact_model_parse(mlc_contact_model_name((mlc_contact_model)m)), m);
    assert_int_equal(mlc_contact_model_parse("equality"), MLC_CONTACT_EQUALITY);
    assert_int_equal(mlc_contact_model_parse("complementarity"), MLC_CONTACT_COMPLEMENTARITY);
    assert_int_equal(mlc_contact_model_parse("Equality"), -1);
    assert_int_equal(mlc_contact_model_parse(NULL), -1);
    assert_string_equal(mlc_contact_model_name((mlc_contact_model)7), "unknown");
    assert_int_equal(mlc_contact_model_any_terrain(MLC_CONTACT_COMPLEMENTARITY), 1);
    assert_int_equal(mlc_contact_model_any_terrain(MLC_CONTACT_EQUALITY), 0);
    assert_int_equal(mlc_contact_model_forces(MLC_CONTACT_COMPLEMENTARITY), 1);
    assert_int_equal(mlc_contact_model_forces(MLC_CONTACT_EQUALITY), 0);

    /* The quadruped, not a box: a box's first skinning modes are about 1, x, y and z, whose
     * products with the rest positions repeat (x·y = y·x), so its reduced system is singular
     * up to rounding and positive definite only by luck of the rounding. */
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_err err;
    assert_int_equal(mlc_fem_init(&t.fem, &t.mesh, &err), MLC_OK);
    tsub_build(&t.mesh, &t.fem, 4, 0, 4, 8, &t.sub);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    assert_int_equal(set.contact_model, MLC_CONTACT_COMPLEMENTARITY);
    mlc_terrain ter;
    const double dir[3] = {1, 0, 0};
    assert_int_equal(mlc_terrain_init(&ter, 0, 0.5, 10, 1, dir, NULL, 0, &err), MLC_OK);
    set.terrain = &ter;
    set.contact_model = MLC_CONTACT_EQUALITY;
    mlc_model *mod = NULL;
    assert_int_equal(mlc_model_create(&t.mesh, &t.fem, &t.sub, &set, &mod, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "\"equality\" works on the flat ground only"));
    set.terrain = NULL; /* the flat ground: accepted */
    assert_int_equal(mlc_model_create(&t.mesh, &t.fem, &t.sub, &set, &mod, &err), MLC_OK);
    mlc_model_destroy(mod);
    set.contact_model = (mlc_contact_model)MLC_CONTACT_MODELS;
    assert_int_equal(mlc_model_create(&t.mesh, &t.fem, &t.sub, &set, &mod, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown contact model"));
    mlc_terrain_free(&ter);
    tsub_free(&t.sub);
    mlc_fem_free(&t.fem);
    mlc_mesh_free(&t.mesh);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(terrain_should_give_distances_and_normals),
        cmocka_unit_test(contact_models_should_follow_their_table),
        cmocka_unit_test(heightfield_should_interpolate_and_name_bad_lines),
        cmocka_unit_test(block_should_slide_on_a_slope_only_below_the_critical_friction),
        cmocka_unit_test(euler_on_flat_ground_should_be_unchanged),
        cmocka_unit_test(flat_heightfield_should_match_the_plane),
        cmocka_unit_test(body_dropped_on_a_box_should_rest_on_its_top),
        cmocka_unit_test(anisotropic_friction_should_hold_backward_sliding_more),
        cmocka_unit_test(bdf2_should_dissipate_less_than_backward_euler),
        cmocka_unit_test(bdf2_drop_should_not_gain_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
