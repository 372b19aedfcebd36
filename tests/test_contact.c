/* test_contact.c: the complementarity contact (contact.h) and the energy ledger (sim.h):
 *  - the LCP solver against exhaustive enumeration of contact sets on small random problems
 *    (rank-deficient Delassus matrices included) and its complementarity conditions;
 *  - its shortcut for a repeated contact set against its general path, bit for bit;
 *  - its factor followed by rank-one changes against a refactored one;
 *  - in rollouts: normal forces never pull and samples never end below the ground;
 *  - a body dropped from height h comes to rest and bounces back less than 5% of h;
 *  - a body sliding on the ground stops;
 *  - an unactuated body's mechanical energy never increases, contact work is never positive,
 *    and the ledger balances (its numerical dissipation is ≥ 0);
 *  - the reduced and full-space simulators use the same contact rule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "fullspace.h"
#include "test_sim_util.h"

/* ---- the solver ------------------------------------------------------------------------ */

/* A random ns×ns Delassus matrix D = J Jᵀ of rank ≤ rank, and random gaps. */
static void random_problem(unsigned *seed, int ns, int rank, double *D, double *c) {
    double J[16 * 16];
    /* Column 0 is constant, like a rigid translation along the normal: every problem is then
     * feasible (raising all samples at once is always possible), as in a simulation. */
    for (int i = 0; i < ns * rank; i++)
        J[i] = i < ns ? 0.3 : (double)rand_r(seed) / RAND_MAX - 0.5;
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < ns; j++) {
            double s = 0;
            for (int k = 0; k < rank; k++)
                s += J[i + ns * k] * J[j + ns * k];
            D[i + ns * j] = s;
        }
    for (int i = 0; i < ns; i++)
        c[i] = (double)rand_r(seed) / RAND_MAX - 0.6;
}

/* min ½λᵀ(D+εI)λ + cᵀλ over λ ≥ 0 by trying every support set (the exact answer). */
static double brute_force(int ns, const double *D, double eps, const double *c, double *best) {
    double fbest = INFINITY;
    for (unsigned mask = 0; mask < (1u << ns); mask++) {
        int idx[16], n = 0;
        for (int i = 0; i < ns; i++)
            if (mask & (1u << i)) idx[n++] = i;
        double A[256], x[16];
        for (int a = 0; a < n; a++) {
            x[a] = -c[idx[a]];
            for (int b = 0; b < n; b++)
                A[a + n * b] = D[idx[a] + ns * idx[b]] + (a == b) * eps;
        }
        if (n > 0 && LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, 1, A, n, x, n) != 0) continue;
        int ok = 1;
        for (int a = 0; a < n; a++)
            ok &= x[a] >= 0;
        if (!ok) continue;
        double lam[16] = {0};
        for (int a = 0; a < n; a++)
            lam[idx[a]] = x[a];
        double f = 0;
        for (int i = 0; i < ns; i++) {
            f += c[i] * lam[i] + 0.5 * eps * lam[i] * lam[i];
            for (int j = 0; j < ns; j++)
                f += 0.5 * lam[i] * D[i + ns * j] * lam[j];
        }
        if (f < fbest) fbest = f, memcpy(best, lam, sizeof(double) * ns);
    }
    return fbest;
}

static void lcp_should_match_enumeration(void **state) {
    (void)state;
    unsigned seed = 12345;
    double worst_gap = 0, worst_obj = 0;
    for (int trial = 0; trial < 300; trial++) {
        int ns = 2 + trial % 9, rank = 1 + (trial / 9) % ns;
        double D[16 * 16], c[16], ystar[16], g[16], lam_ref[16];
        random_problem(&seed, ns, rank, D, c);
        /* gaps c = y* − g with g = 0 */
        for (int i = 0; i < ns; i++)
            ystar[i] = c[i], g[i] = 0;
        mlc_contact cs;
        assert_int_equal(mlc_contact_create(&cs, ns, D, 1e-12, 0), MLC_OK);
        /* A stale warm start must not matter. */
        if (trial % 3 == 1)
            for (int i = 0; i < ns; i++)
                cs.lam[ns + i] = (double)(i % 2);
        mlc_contact_solve_normal(&cs, ystar, g);
        const double *lam = cs.lam + ns;
        double f = 0;
        for (int i = 0; i < ns; i++) {
            /* λ ≥ 0, y = y* + Dλ ≥ −tol, complementarity */
            assert_true(lam[i] >= 0);
            double y = ystar[i];
            for (int j = 0; j < ns; j++)
                y += D[i + ns * j] * lam[j];
            assert_true(y >= -1e-9);
            if (lam[i] > 0) assert_true(fabs(y) < 1e-9);
            worst_gap = fmax(worst_gap, fabs(lam[i] * y));
            f += c[i] * lam[i] + 0.5 * cs.eps * lam[i] * lam[i];
            for (int j = 0; j < ns; j++)
                f += 0.5 * lam[i] * D[i + ns * j] * lam[j];
        }
        double fref = brute_force(ns, D, cs.eps, c, lam_ref);
        assert_true(f <= fref + 1e-10 * (1 + fabs(fref)));
        worst_obj = fmax(worst_obj, f - fref);
        mlc_contact_destroy(&cs);
    }
    print_message("LCP: worst |λ·y| %.2e, worst objective excess over enumeration %.2e\n",
                  worst_gap, worst_obj);
}

/* A sequence of solves whose contact set mostly stays (slowly drifting gaps, as across the
 * iterations and steps of a resting contact) gives the same bits with the shortcut for a repeated
 * set (contact.c, same_set_again) as through the general path alone. The general path does not
 * read cs->np, and with cs->np = 0 the shortcut never applies: the reference solver is the same
 * solver forced down the general path. Friction included, as its factors are kept across the
 * same solves: both axes at once (mlc_contact_solve_friction_xz, the step's) against one axis at
 * a time. */
static void repeated_contact_set_should_give_the_general_path_bits(void **state) {
    (void)state;
    unsigned seed = 2024;
    int repeats = 0, solves = 0;
    for (int trial = 0; trial < 40; trial++) {
        int ns = 4 + trial % 12, rank = 2 + trial % 5;
        double D[16 * 16], c[16], g[16] = {0}, y[16], rhs[16], rhs2[16];
        random_problem(&seed, ns, rank < ns ? rank : ns, D, c);
        mlc_contact fast, ref;
        double mu = trial % 2 ? 0.4 : 0;
        assert_int_equal(mlc_contact_create(&fast, ns, D, 1e-12, mu), MLC_OK);
        assert_int_equal(mlc_contact_create(&ref, ns, D, 1e-12, mu), MLC_OK);
        int prev_np = -1, prev_set[16];
        for (int it = 0; it < 60; it++) {
            for (int i = 0; i < ns; i++) { /* drift, with an occasional jump */
                double kick = it % 17 == 16 ? 0.3 : 0.01;
                c[i] += kick * ((double)rand_r(&seed) / RAND_MAX - 0.5);
                y[i] = c[i];
                rhs[i] = 0.05 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
                rhs2[i] = 0.05 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
            }
            ref.np = 0; /* the general path only */
            int np = mlc_contact_solve_normal(&fast, y, g);
            assert_int_equal(mlc_contact_solve_normal(&ref, y, g), np);
            assert_memory_equal(fast.contact, ref.contact, sizeof(int) * (size_t)np);
            if (np > 0) {
                mlc_contact_solve_friction_xz(&fast, rhs, rhs2);
                mlc_contact_solve_friction(&ref, 0, rhs);
                mlc_contact_solve_friction(&ref, 2, rhs2);
            }
            assert_memory_equal(fast.lam, ref.lam, sizeof(double) * 3 * (size_t)ns);
            repeats += np > 0 && np == prev_np &&
                       memcmp(prev_set, fast.contact, sizeof(int) * (size_t)np) == 0;
            solves++;
            prev_np = np;
            memcpy(prev_set, fast.contact, sizeof(int) * (size_t)np);
        }
        mlc_contact_destroy(&fast);
        mlc_contact_destroy(&ref);
    }
    print_message("repeated contact sets: %d of %d solves\n", repeats, solves);
    assert_true(repeats > solves / 3); /* the shortcut was exercised */
}

/* Rank-one changes of the normal factor (mlc_contact_set_updates, the full-space reference's
 * surface contact): on sets of dozens of forces that gain and lose a few at a time, the forces
 * match those of the solver that refactors (to rounding), satisfy the complementarity
 * conditions themselves, and the factor left behind reproduces A_PP. */
static void updated_factor_should_match_a_refactored_one(void **state) {
    (void)state;
    enum { NS = 96 };
    unsigned seed = 77;
    double *J = malloc(sizeof(double) * NS * NS), *D = malloc(sizeof(double) * NS * NS);
    assert_non_null(J);
    assert_non_null(D);
    double worst = 0, worst_kkt = 0, worst_factor = 0;
    unsigned long updates = 0;
    for (int trial = 0; trial < 4; trial++) {
        /* A Delassus matrix like a surface's: a force moves its own sample most and its
         * neighbours less (an exponential kernel along a line of samples, positive definite),
         * plus a small rigid part and a random full-rank one (every problem feasible) */
        for (int i = 0; i < NS * NS; i++)
            J[i] = 0.02 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
        for (int i = 0; i < NS; i++)
            for (int j = 0; j < NS; j++) {
                double sum = exp(-fabs((double)(i - j)) / 3) + 0.01;
                for (int k = 0; k < NS; k++)
                    sum += J[i + NS * k] * J[j + NS * k];
                D[i + NS * j] = sum;
            }
        double c[NS], y[NS], g[NS] = {0}, rhs[NS], rhs2[NS];
        for (int i = 0; i < NS; i++)
            c[i] = 0.2 * ((double)rand_r(&seed) / RAND_MAX) - 0.5; /* lying flat */
        const double mu = trial % 2 ? 0.4 : 0;
        mlc_contact upd, ref;
        assert_int_equal(mlc_contact_create(&upd, NS, D, 1e-12, mu), MLC_OK);
        assert_int_equal(mlc_contact_create(&ref, NS, D, 1e-12, mu), MLC_OK);
        mlc_contact_set_updates(&upd, 1);
        for (int it = 0; it < 200; it++) {
            for (int i = 0; i < NS; i++) {
                c[i] += 0.01 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
                y[i] = c[i];
                rhs[i] = 0.05 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
                rhs2[i] = 0.05 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
            }
            const int np = mlc_contact_solve_normal(&upd, y, g);
            mlc_contact_solve_normal(&ref, y, g);
            if (np > 0) mlc_contact_solve_friction_xz(&upd, rhs, rhs2);
            if (ref.np > 0) mlc_contact_solve_friction_xz(&ref, rhs, rhs2);
            double lmax = 0;
            for (int i = 0; i < 3 * NS; i++)
                lmax = fmax(lmax, fabs(ref.lam[i]));
            for (int i = 0; i < 3 * NS; i++)
                worst = fmax(worst, fabs(upd.lam[i] - ref.lam[i]) / (1 + lmax));
            const double *lam = upd.lam + NS;
            for (int i = 0; i < NS; i++) { /* λ ≥ 0, y ≥ 0, λ·y = 0 to rounding */
                double yi = y[i];
                for (int j = 0; j < NS; j++)
                    yi += D[i + NS * j] * lam[j];
                assert_true(lam[i] >= 0);
                worst_kkt = fmax(worst_kkt, fmax(-yi, lam[i] > 0 ? fabs(yi) : 0));
            }
        }
        /* The factor left behind: L Lᵀ = A_PP + εI over the last contact set (reciprocal
         * pivots on L's diagonal). */
        const int np = upd.fnp;
        const size_t ld = upd.ldf;
        double amax = 0, err = 0;
        for (int i = 0; i < np; i++)
            for (int j = 0; j <= i; j++) {
                double sum = 0;
                for (int k = 0; k <= j; k++) {
                    const double lik = k == i ? 1 / upd.L[ld * k + k] : upd.L[ld * k + i];
                    const double ljk = k == j ? 1 / upd.L[ld * k + k] : upd.L[ld * k + j];
                    sum += lik * ljk;
                }
                const double a = D[upd.fkey[i] + NS * upd.fkey[j]] + (i == j ? upd.eps : 0);
                amax = fmax(amax, fabs(a));
                err = fmax(err, fabs(sum - a));
            }
        worst_factor = fmax(worst_factor, err / (amax > 0 ? amax : 1));
        updates += upd.updates_made;
        mlc_contact_destroy(&upd);
        mlc_contact_destroy(&ref);
    }
    free(J);
    free(D);
    print_message("rank-one factor changes: %lu; forces within %.2e of the refactored solver's, "
                  "complementarity within %.2e, factor residual %.2e\n",
                  updates, worst, worst_kkt, worst_factor);
    assert_true(updates >= 100); /* the changes were exercised */
    assert_true(worst <= 1e-8);
    assert_true(worst_kkt <= 1e-8);
    assert_true(worst_factor <= 1e-10);
}

/* Friction with a Coulomb limit stays inside its box; without one it solves D_PP x = rhs. */
static void friction_should_respect_the_coulomb_box(void **state) {
    (void)state;
    unsigned seed = 77;
    for (int trial = 0; trial < 50; trial++) {
        int ns = 3 + trial % 6;
        double D[16 * 16], c[16], g[16] = {0}, rhs[16];
        random_problem(&seed, ns, ns, D, c);
        for (int i = 0; i < ns; i++)
            c[i] = -fabs(c[i]) - 0.1; /* all penetrating */
        for (int i = 0; i < ns; i++)
            rhs[i] = (double)rand_r(&seed) / RAND_MAX - 0.5;
        for (int limited = 0; limited < 2; limited++) {
            mlc_contact cs;
            assert_int_equal(mlc_contact_create(&cs, ns, D, 1e-12, limited ? 0.3 : 0), MLC_OK);
            int np = mlc_contact_solve_normal(&cs, c, g);
            assert_true(np > 0);
            mlc_contact_solve_friction(&cs, 0, rhs);
            for (int b = 0; b < np; b++) {
                int s = cs.contact[b];
                double f = cs.lam[s], fn = cs.lam[ns + s];
                if (limited) {
                    assert_true(fabs(f) <= 0.3 * fn * (1 + 1e-12));
                } else { /* (D + εI)_PP x = rhs */
                    double r = rhs[b] - cs.eps * f;
                    for (int e = 0; e < np; e++)
                        r -= D[s + ns * cs.contact[e]] * cs.lam[cs.contact[e]];
                    assert_true(fabs(r) < 1e-9);
                }
            }
            mlc_contact_destroy(&cs);
        }
    }
}

/* ---- rollouts ----------------------------------------------------------------------------- */

typedef struct drop_run {
    double first_contact_time, rebound, settle_y, lowest, max_energy_rise, min_normal;
    double contact_work, dissipated, max_step_contact_work, final_kinetic, max_step_normal_work;
    double initial_kinetic;
} drop_run;

/* Lowest boundary vertex height of state z (all boundary vertices skinned). */
static double lowest_vertex(const tsim *t, const double *z) {
    int nv = t->mesh.nv;
    double *x = malloc(sizeof(double) * 3 * (size_t)nv), lo = INFINITY;
    mlc_model_skin(t->model, z, nv, NULL, x);
    for (int f = 0; f < 3 * t->mesh.nf; f++)
        lo = fmin(lo, x[3 * t->mesh.F[f] + 1]);
    free(x);
    return lo;
}

/* Drop the body from height h above the ground (ground at −h), no actuation, `steps` steps,
 * optionally with an initial horizontal velocity vx; record the ledger and the contact. */
static void drop(tsim *t, double vx, int steps, drop_run *out) {
    memset(out, 0, sizeof *out);
    out->first_contact_time = -1;
    out->min_normal = INFINITY;
    const int r = mlc_model_dim(t->model), n4 = r / 3, ns = t->sub.ns;
    const double dt = mlc_model_settings(t->model)->dt,
                 ground = mlc_model_settings(t->model)->ground;
    mlc_rollout_reset(t->ro);
    if (vx != 0) { /* a uniform velocity: z_{−1} = z_0 shifted back by vx·h (t_x's translation) */
        double *z = malloc(sizeof(double) * r), *zp = malloc(sizeof(double) * r);
        mlc_model_rest_state(t->model, z);
        memcpy(zp, z, sizeof(double) * r);
        /* translation lives in the homogeneous entries (c = 3) of the constant weight */
        zp[3] -= vx * dt * z[0];
        mlc_rollout_set_state(t->ro, z, zp);
        free(z), free(zp);
    }
    mlc_energy_ledger L;
    mlc_rollout_set_ledger(t->ro, &L, NULL);
    out->initial_kinetic = L.kinetic;
    double prev_total = L.total, lowest_after = -INFINITY, prev_normal = 0;
    int landed_step = -1;
    for (int s = 1; s <= steps; s++) {
        assert_int_equal(mlc_rollout_step(t->ro, NULL), 0);
        const double *f = mlc_rollout_contact_forces(t->ro);
        for (int i = 0; i < ns; i++)
            out->min_normal = fmin(out->min_normal, f[ns + i]);
        out->max_energy_rise = fmax(out->max_energy_rise, L.total - prev_total);
        out->max_step_contact_work = fmax(out->max_step_contact_work, L.contact_work_step);
        out->max_step_normal_work =
            fmax(out->max_step_normal_work, L.contact_work_normal - prev_normal);
        prev_normal = L.contact_work_normal;
        prev_total = L.total;
        double lo = lowest_vertex(t, mlc_rollout_state(t->ro)) - ground;
        if (landed_step < 0 && mlc_rollout_contacts(t->ro) > 0)
            landed_step = s, out->first_contact_time = s * dt;
        if (landed_step > 0 && s > landed_step + 5) lowest_after = fmax(lowest_after, lo);
        if (s == steps) out->lowest = lo;
    }
    out->rebound = lowest_after;
    out->contact_work = L.contact_work;
    out->dissipated = L.dissipated;
    const double *z = mlc_rollout_state(t->ro);
    double c[3];
    mlc_model_com(t->model, z, c);
    out->settle_y = c[1];
    out->final_kinetic = L.kinetic;
    (void)n4;
    mlc_rollout_set_ledger(t->ro, NULL, NULL);
}

/* Rebound of the lowest boundary vertex in the converged full-space reference (per-tet ARAP,
 * the same contact rule and samples, each step iterated to its default tolerance). */
static double full_space_rebound(tsim *t, const mlc_sim_settings *set0, int steps) {
    mlc_sim_settings set = *set0;
    mlc_fullspace *fs;
    mlc_err err;
    assert_int_equal(mlc_fullspace_create(&t->mesh, &t->fem, &t->sub, &set, 1, &fs, &err), MLC_OK);
    double rebound = -INFINITY;
    int landed = -1;
    for (int s = 1; s <= steps; s++) {
        assert_int_equal(mlc_fullspace_step(fs, NULL), 0);
        const double *x = mlc_fullspace_state(fs);
        double lo = INFINITY;
        for (int f = 0; f < 3 * t->mesh.nf; f++)
            lo = fmin(lo, x[3 * t->mesh.F[f] + 1]);
        if (landed < 0 && mlc_fullspace_contacts(fs) > 0) landed = s;
        if (landed > 0 && s > landed + 5) rebound = fmax(rebound, lo - set.ground);
    }
    mlc_fullspace_destroy(fs);
    return rebound;
}

/* Dropped from h = 0.5 (a fifth of its extent) onto its 40 samples. Undamped, the body is an
 * elastic spring: it rebounds by the energy its deformation stored, not by contact (the
 * contact work is negative, the normal part never positive, the total energy never rises),
 * and no more than the full-space reference does (measured: 16.8% of h reduced, 20.0% full).
 * With Rayleigh damping β = 0.01 s it lands and stays (measured: 3.8% of h). */
static void dropped_body_should_land_without_gaining_energy(void **state) {
    (void)state;
    const double h = 0.5;
    for (int damped = 0; damped < 2; damped++) {
        tsim t = {0};
        test_quadruped_mesh(0.25, &t.mesh);
        mlc_sim_settings set;
        mlc_sim_settings_default(&set);
        set.ground = -h;
        if (damped) set.rayleigh[1] = 0.01;
        tsim_init(&t, &set, 5, 0, 8, 40);
        drop_run d;
        drop(&t, 0, 300, &d);
        double extent = mlc_model_extent(t.model);
        print_message("drop from %.2f%s: rebound of the lowest vertex %.1f%% of h, final lowest "
                      "%.2e extents, largest energy rise %.2e J, contact work %.3e J (largest "
                      "step: %.2e J, its normal part %.2e J), dissipated %.3e J\n",
                      h, damped ? " (β = 0.01 s)" : "", 100 * d.rebound / h, d.lowest / extent,
                      d.max_energy_rise, d.contact_work, d.max_step_contact_work,
                      d.max_step_normal_work, d.dissipated);
        assert_true(d.first_contact_time > 0);
        assert_true(d.min_normal >= 0);               /* forces only push */
        assert_true(d.max_energy_rise <= 1e-6);       /* joules, for ~6e3 J in play */
        assert_true(d.max_step_normal_work <= 1e-6);  /* the ground never pushes energy in */
        assert_true(d.max_step_contact_work <= 1e-6); /* Coulomb friction only resists */
        assert_true(d.contact_work < 0);
        assert_true(d.dissipated > 0);
        assert_true(d.lowest > -0.01 * extent); /* resting, nothing sunk */
        assert_true(d.final_kinetic < 1e-3 * d.dissipated);
        if (damped) {
            assert_true(d.rebound < 0.05 * h);
        } else {
            double full = full_space_rebound(&t, &set, 300);
            print_message("full-space reference: rebound %.1f%% of h\n", 100 * full / h);
            assert_true(d.rebound <= 1.1 * full);
        }
        tsim_free(&t);
    }
}

/* A body set sliding along the ground at 2 m/s stops, and the normal forces do no work. With
 * the paper's damping (20% of the tangential velocity kept per step) it stops within a few
 * steps; with a Coulomb limit μ_f = 0.5 and no damping (μ_c = 0, stick when the limit allows)
 * it slides like a block: v²/(2 μ_f g) = 0.41 m. */
static void sliding_body_should_stop(void **state) {
    (void)state;
    for (int coulomb = 0; coulomb < 2; coulomb++) {
        tsim t = {0};
        test_quadruped_mesh(0.25, &t.mesh);
        mlc_sim_settings set;
        mlc_sim_settings_default(&set);
        if (coulomb)
            set.friction = 0.5, set.damping = 0;
        else /* the paper's rule */
            set.friction = 0, set.damping = 0.2;
        tsim_init(&t, &set, 5, 0, 8, 40);
        drop_run d;
        double c0[3], c1[3], z0[1024];
        mlc_model_rest_state(t.model, z0);
        mlc_model_com(t.model, z0, c0);
        const double v = 2;
        drop(&t, v, 200, &d);
        mlc_model_com(t.model, mlc_rollout_state(t.ro), c1);
        double travel = c1[0] - c0[0], block = v * v / (2 * 0.5 * 9.81);
        print_message("slide at 2 m/s%s: travelled %.3f m (a Coulomb block: %.3f), kinetic "
                      "%.2e -> %.2e J, contact work %.3e J, largest step normal work %.2e J, "
                      "lowest vertex %.2e\n",
                      coulomb ? " (Coulomb 0.5, no damping)" : "", travel, block, d.initial_kinetic,
                      d.final_kinetic, d.contact_work, d.max_step_normal_work, d.lowest);
        assert_true(d.final_kinetic < 1e-4 * d.initial_kinetic);
        assert_true(d.max_step_normal_work <= 1e-6);
        assert_true(d.contact_work < 0);
        assert_true(d.min_normal >= 0);
        if (coulomb)
            assert_true(fabs(travel - block) < 0.25 * block);
        else
            assert_true(fabs(travel) < 0.05);
        tsim_free(&t);
    }
}

/* Walking (an actuated body on the ground): the ledger balances every step. What the actuation
 * puts in (changing its targets at a fixed shape) plus the contact work minus the change of
 * the mechanical energy is what backward Euler dissipates; it must not be negative beyond
 * rounding (measured: the smallest step value). */
static void ledger_should_balance_while_walking(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    tsim_init(&t, &set, 5, 4, 8, 40);
    double A[8], T[8], th[8];
    for (int i = 0; i < 8; i++)
        A[i] = 0.15 / t.sub.grad_max[i / 2], T[i] = 0.3 + 0.05 * i, th[i] = 0.1 * i;
    mlc_actuation act = {4, 2, A, T, th};
    mlc_energy_ledger L;
    mlc_rollout_reset(t.ro);
    mlc_rollout_set_ledger(t.ro, &L, &act);
    double prev_diss = 0, min_step = INFINITY, scale = 0;
    for (int s = 1; s <= 300; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
        min_step = fmin(min_step, L.dissipated - prev_diss);
        prev_diss = L.dissipated;
        scale = fmax(scale, fabs(L.total));
    }
    print_message("walking: actuation work %.3e J, contact work %.3e J, dissipated %.3e J, "
                  "smallest step dissipation %.3e J (energies up to %.3e J)\n",
                  L.actuation_work, L.contact_work, L.dissipated, min_step, scale);
    assert_true(L.actuation_work != 0);
    assert_true(L.dissipated > 0);
    assert_true(min_step > -1e-9 * scale);
    mlc_rollout_set_ledger(t.ro, NULL, NULL);
    tsim_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lcp_should_match_enumeration),
        cmocka_unit_test(repeated_contact_set_should_give_the_general_path_bits),
        cmocka_unit_test(updated_factor_should_match_a_refactored_one),
        cmocka_unit_test(friction_should_respect_the_coulomb_box),
        cmocka_unit_test(dropped_body_should_land_without_gaining_energy),
        cmocka_unit_test(sliding_body_should_stop),
        cmocka_unit_test(ledger_should_balance_while_walking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
