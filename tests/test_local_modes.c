/* test_local_modes.c: localized vibration modes (local_modes.h, docs/method.md "Localized
 * actuation modes"): localization, M-orthonormality, eigenpairs against a dense solver, the
 * equivalence with the global modes for one region and weight 0, the cache, bad settings. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "local_modes.h"
#include "subspace.h"
#include "test_util.h"

#define NREG 5 /* four legs and the rest */

static mlc_subspace_settings settings(void) {
    mlc_subspace_settings st = {0};
    st.w = 5;
    st.m = 0;
    st.poisson = 0.25;
    st.passive_clusters = 4;
    st.actuation_clusters = 1;
    st.contact_samples = 8;
    st.seed = 1;
    st.local_modes = 2;
    st.localization = 30; /* the default of actuation.localization */
    return st;
}

/* The voxel quadruped (h = 0.1, legs below y = 0.2 at x in [0,0.2] or [0.6,0.8] and z in
 * [0,0.1] or [0.3,0.4]): label a tet by the leg box its centroid falls in, else the body. */
static void leg_labels(const mlc_mesh *m, int *label) {
    for (int e = 0; e < m->nt; e++) {
        double c[3] = {0, 0, 0};
        for (int a = 0; a < 4; a++)
            for (int k = 0; k < 3; k++)
                c[k] += 0.25 * m->X[3 * m->T[4 * e + a] + k];
        label[e] = c[1] < 0.2 ? 2 * (c[0] > 0.4) + (c[2] > 0.2) : 4;
    }
}

typedef struct fixture {
    mlc_mesh m;
    mlc_fem fem;
    int *label;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    test_quadruped_mesh(0.1, &f->m);
    if (mlc_fem_init(&f->fem, &f->m, NULL) != MLC_OK) return -1;
    f->label = malloc((size_t)f->m.nt * sizeof(int));
    leg_labels(&f->m, f->label);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    free(f->label);
    mlc_fem_free(&f->fem);
    mlc_mesh_free(&f->m);
    free(f);
    return 0;
}

/* The default local-mode settings on the leg labels. */
static mlc_subspace_settings labelled(const fixture *f) {
    mlc_subspace_settings st = settings();
    st.tet_region = f->label;
    st.nregions = NREG;
    return st;
}

static void compute_or_fail(const fixture *f, const mlc_subspace_settings *st, mlc_subspace *s) {
    mlc_err err = {0};
    if (mlc_subspace_compute(&f->m, &f->fem, st, s, &err) != MLC_OK)
        fail_msg("mlc_subspace_compute: %s", err.msg);
}

/* Every leg mode moves the body outside its leg by less than 15% of its motion (measured:
 * see the printout; docs/method.md states the figures), and the a-posteriori bound √(λ/w)
 * holds before orthonormalization up to the small Löwdin change. */
static void local_modes_should_stay_in_their_region(void **state) {
    fixture *f = *state;
    mlc_subspace_settings st = labelled(f);
    mlc_subspace s = {0};
    compute_or_fail(f, &st, &s);
    assert_int_equal(s.m, 2 * NREG);
    assert_int_equal(s.nregions, NREG);
    assert_true(s.local_weight > 0);
    for (int i = 0; i < s.m; i++) {
        assert_int_equal(s.mode_region[i], i / 2);
        assert_int_equal(s.mode_index[i], i);
        printf("# region %d mode %d: lambda %.4g, outside fraction %.4f, bound %.4f\n",
               s.mode_region[i], i % 2, s.vib_eval[i], s.vib_frac[i],
               sqrt(s.vib_eval[i] / s.local_weight));
        assert_true(s.vib_frac[i] < 0.15);
        assert_true(s.vib_frac[i] <= sqrt(s.vib_eval[i] / s.local_weight) + 0.02);
        assert_true(s.grad_max[i] > 0);
    }
    mlc_subspace_free(&s);
}

static void local_modes_should_be_mass_orthonormal(void **state) {
    fixture *f = *state;
    mlc_subspace_settings st = labelled(f);
    st.m = 3; /* with global modes before them */
    mlc_subspace s = {0};
    compute_or_fail(f, &st, &s);
    int n = 3 * f->m.nv;
    double worst = 0;
    for (int a = 3; a < s.m; a++)
        for (int b = 3; b < s.m; b++) {
            double d = 0;
            for (int i = 0; i < n; i++)
                d += s.D[(size_t)n * a + i] * f->fem.vmass[i / 3] * s.D[(size_t)n * b + i];
            worst = fmax(worst, fabs(d - (a == b)));
        }
    printf(
        "# max |(D^T M D - I)_ab| over the local modes: %.3g; before the Loewdin step the "
        "Gram matrix's smallest eigenvalue was %.4f, the largest change of a mode %.4f (M-norm)\n",
        worst, s.local_gram_min, s.local_spread_max);
    assert_true(s.local_gram_min > 0.5 && s.local_gram_min < 1);
    assert_true(s.local_spread_max > 0 && s.local_spread_max < 0.3);
    assert_true(worst < 1e-10);
    for (int i = 0; i < 3; i++)
        assert_int_equal(s.mode_region[i], -1);
    assert_int_equal(s.mode_index[3], 3); /* local ones count on after the global ones */
    mlc_subspace_free(&s);
}

/* Each region's penalized eigenvalues against LAPACKE_dsygv on the dense K + w M_out, M. */
static void local_eigenvalues_should_match_a_dense_solver(void **state) {
    fixture *f = *state;
    mlc_subspace_settings st = labelled(f);
    mlc_subspace s = {0};
    compute_or_fail(f, &st, &s);
    int n = 3 * f->m.nv;
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    double nu = st.poisson, lambda = 2.0 * nu / (1.0 - 2.0 * nu);
    cholmod_sparse *H = mlc_fem_elasticity_hessian(&f->m, &f->fem, 1.0, lambda, &cc);
    assert_non_null(H);
    double *A = malloc((size_t)n * n * sizeof(double)), *B = malloc((size_t)n * n * sizeof(double));
    double *w = malloc((size_t)n * sizeof(double)), *mout = malloc((size_t)n * sizeof(double));
    double worst = 0;
    for (int r = 0; r < NREG; r++) {
        memset(A, 0, (size_t)n * n * sizeof(double));
        memset(B, 0, (size_t)n * n * sizeof(double));
        const int *Ap = H->p, *Ai = H->i;
        const double *Ax = H->x;
        for (int j = 0; j < n; j++)
            for (int p = Ap[j]; p < Ap[j + 1]; p++) {
                int i = Ai[p];
                if ((H->stype > 0 && i > j) || (H->stype < 0 && i < j)) continue;
                A[i + (size_t)j * n] = A[j + (size_t)i * n] = Ax[p];
            }
        mlc_local_outside_mass(&f->m, &f->fem, f->label, NULL, r, mout);
        for (int i = 0; i < n; i++) {
            A[i + (size_t)i * n] += s.local_weight * mout[i];
            B[i + (size_t)i * n] = f->fem.vmass[i / 3];
        }
        assert_int_equal(LAPACKE_dsygv(LAPACK_COL_MAJOR, 1, 'N', 'U', n, A, n, B, n, w), 0);
        for (int j = 0; j < 2; j++) {
            double rel = fabs(s.vib_eval[2 * r + j] - w[j]) / w[j];
            worst = fmax(worst, rel);
        }
    }
    printf("# largest relative eigenvalue difference to dsygv: %.3g\n", worst);
    assert_true(worst < 1e-8);
    free(A), free(B), free(w), free(mout);
    cholmod_free_sparse(&H, &cc);
    cholmod_finish(&cc);
    mlc_subspace_free(&s);
}

/* One region (no labels) and weight 0: the global modes (eigenvalues and vectors up to sign). */
static void one_region_without_weight_should_be_the_global_modes(void **state) {
    fixture *f = *state;
    mlc_subspace_settings gs = settings();
    gs.local_modes = 0;
    gs.m = 4;
    mlc_subspace g = {0}, l = {0};
    compute_or_fail(f, &gs, &g);
    mlc_subspace_settings ls = settings();
    ls.local_modes = 4;
    ls.localization = 0;
    compute_or_fail(f, &ls, &l);
    assert_int_equal(l.m, 4);
    int n = 3 * f->m.nv;
    double worst = 0, worst_ev = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(l.mode_region[i], 0);
        assert_true(fabs(l.vib_eval[i] - g.vib_eval[i]) <= 1e-8 * g.vib_eval[i]);
        double dp = 0, dm = 0;
        for (int k = 0; k < n; k++) {
            double a = l.D[(size_t)n * i + k], b = g.D[(size_t)n * i + k];
            dp = fmax(dp, fabs(a - b));
            dm = fmax(dm, fabs(a + b));
        }
        assert_true(fmin(dp, dm) < 1e-8);
        worst = fmax(worst, fmin(dp, dm));
        worst_ev = fmax(worst_ev, fabs(l.vib_eval[i] - g.vib_eval[i]));
        assert_true(fabs(l.grad_max[i] - g.grad_max[i]) <= 1e-8 * g.grad_max[i]);
    }
    printf("# one region, weight 0 against the global modes: largest differences %.3g "
           "(eigenvalues), %.3g (vectors, up to sign)\n",
           worst_ev, worst);
    mlc_subspace_free(&g);
    mlc_subspace_free(&l);
}

static void cache_should_keep_the_regions(void **state) {
    fixture *f = *state;
    mlc_subspace_settings st = labelled(f);
    st.m = 2;
    mlc_subspace s = {0}, r = {0};
    compute_or_fail(f, &st, &s);
    char path[] = "/tmp/mlc_local_cacheXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    mlc_err err = {0};
    uint64_t key = mlc_subspace_cache_key(&f->m, &st);
    assert_int_equal(mlc_subspace_cache_write(path, key, &s, &err), MLC_OK);
    assert_int_equal(mlc_subspace_cache_read(path, key, &r, &err), MLC_OK);
    size_t m = (size_t)s.m, n = 3 * (size_t)s.nv;
    assert_int_equal(r.m, s.m);
    assert_int_equal(r.nregions, NREG);
    assert_memory_equal(r.mode_region, s.mode_region, m * sizeof(int));
    assert_memory_equal(r.mode_index, s.mode_index, m * sizeof(int));
    assert_memory_equal(r.vib_frac, s.vib_frac, m * sizeof(double));
    assert_memory_equal(r.D, s.D, n * m * sizeof(double));
    assert_memory_equal(r.grad_max, s.grad_max, m * sizeof(double));
    assert_true(r.local_weight == s.local_weight);
    assert_true(r.local_spread_max == s.local_spread_max);
    /* The key follows the labels, the weight and m_r. */
    f->label[0] = (f->label[0] + 1) % NREG;
    assert_true(mlc_subspace_cache_key(&f->m, &st) != key);
    f->label[0] = (f->label[0] + NREG - 1) % NREG;
    assert_true(mlc_subspace_cache_key(&f->m, &st) == key);
    st.localization = 20;
    assert_true(mlc_subspace_cache_key(&f->m, &st) != key);
    st.localization = 30, st.local_modes = 1;
    assert_true(mlc_subspace_cache_key(&f->m, &st) != key);
    mlc_subspace_free(&r);
    /* Without local modes: every mode global, no regions. */
    mlc_subspace_settings gs = settings();
    gs.local_modes = 0, gs.m = 2;
    mlc_subspace g = {0};
    compute_or_fail(f, &gs, &g);
    key = mlc_subspace_cache_key(&f->m, &gs);
    assert_int_equal(mlc_subspace_cache_write(path, key, &g, &err), MLC_OK);
    assert_int_equal(mlc_subspace_cache_read(path, key, &r, &err), MLC_OK);
    assert_int_equal(r.nregions, 0);
    assert_int_equal(r.mode_region[0], -1);
    assert_int_equal(r.mode_region[1], -1);
    unlink(path);
    mlc_subspace_free(&r);
    mlc_subspace_free(&g);
    mlc_subspace_free(&s);
}

/* Per-region densities (legs at 0.3 of the body's): the outside mass uses the densities of the
 * mass matrix, so M − M_out(R) is the mass of R's own tets and these add up to M over the
 * regions; every outside share is then a share (< 1) and within its bound √(λ/w). */
static void outside_mass_should_follow_the_region_densities(void **state) {
    fixture *f = *state;
    int nv = f->m.nv, nt = f->m.nt, n = 3 * nv;
    double *scale = malloc((size_t)nt * sizeof(double));
    double *vmass = calloc((size_t)nv, sizeof(double));
    double *mout = malloc((size_t)n * sizeof(double)), *inside = calloc((size_t)n, sizeof(double));
    for (int e = 0; e < nt; e++) {
        scale[e] = f->label[e] == NREG - 1 ? 1.0 : 0.3;
        for (int a = 0; a < 4; a++)
            vmass[f->m.T[4 * e + a]] += 0.25 * scale[e] * f->fem.vol[e];
    }
    double worst = 0;
    for (int r = 0; r < NREG; r++) {
        mlc_local_outside_mass(&f->m, &f->fem, f->label, scale, r, mout);
        for (int i = 0; i < n; i++) {
            assert_true(mout[i] <= vmass[i / 3] * (1 + 1e-12));
            inside[i] += vmass[i / 3] - mout[i];
        }
    }
    for (int i = 0; i < n; i++)
        worst = fmax(worst, fabs(inside[i] - vmass[i / 3]) / vmass[i / 3]);
    assert_true(worst < 1e-12);
    mlc_subspace_settings st = labelled(f);
    st.vertex_mass = vmass;
    st.tet_mass_scale = scale;
    mlc_subspace s = {0};
    compute_or_fail(f, &st, &s);
    for (int i = 0; i < s.m; i++) {
        double bound = sqrt(s.vib_eval[i] / s.local_weight);
        printf("# light legs: region %d mode %d: outside fraction %.4f, bound %.4f\n",
               s.mode_region[i], i % 2, s.vib_frac[i], bound);
        assert_true(s.vib_frac[i] < 1 && s.vib_frac[i] <= bound + 0.02);
    }
    mlc_subspace_free(&s);
    free(scale), free(vmass), free(mout), free(inside);
}

static void expect_error(const fixture *f, const mlc_subspace_settings *st, const char *what) {
    mlc_subspace s = {0};
    mlc_err err = {0};
    mlc_status rc = mlc_subspace_compute(&f->m, &f->fem, st, &s, &err);
    if (rc != MLC_EINVAL || !strstr(err.msg, what))
        fail_msg("expected EINVAL naming '%s', got %d: %s", what, (int)rc, err.msg);
    assert_null(s.D);
}

static void bad_settings_should_be_refused_clearly(void **state) {
    fixture *f = *state;
    mlc_subspace_settings st = labelled(f);
    st.local_modes = 65;
    expect_error(f, &st, "actuation.local_modes = 65");
    st.local_modes = 13; /* 13 × 5 = 65 modes */
    expect_error(f, &st, "at most 64");
    st.local_modes = 2;
    st.localization = -1;
    expect_error(f, &st, "actuation.localization = -1");
    st.localization = 0;
    expect_error(f, &st, "actuation.localization = 0 with 5 regions");
    st.localization = 30;
    st.nregions = 6; /* region 5 has no tets */
    expect_error(f, &st, "region 5 has no tets");
    st.nregions = 4; /* label 4 out of range */
    expect_error(f, &st, "labels must be 0..3");
    st.tet_region = NULL, st.nregions = 1, st.m = 2; /* whole-body region: global modes again */
    expect_error(f, &st, "repeat the global ones");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(local_modes_should_stay_in_their_region),
        cmocka_unit_test(local_modes_should_be_mass_orthonormal),
        cmocka_unit_test(local_eigenvalues_should_match_a_dense_solver),
        cmocka_unit_test(one_region_without_weight_should_be_the_global_modes),
        cmocka_unit_test(cache_should_keep_the_regions),
        cmocka_unit_test(outside_mass_should_follow_the_region_densities),
        cmocka_unit_test(bad_settings_should_be_refused_clearly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
