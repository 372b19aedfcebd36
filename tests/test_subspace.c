/* test_subspace.c: the precomputation of docs/method.md §3–6 (skinning and vibration modes,
 * amplitude limits, clusters, samples) and its cache file. */
#include <stdio.h>
#include <unistd.h>

#include "eigen.h"
#include "subspace.h"
#include "test_util.h"

static mlc_subspace_settings default_settings(void) {
    mlc_subspace_settings st = {0};
    st.w = 5;
    st.m = 10;
    st.poisson = 0.25;
    st.passive_clusters = 4;
    st.actuation_clusters = 1;
    st.contact_samples = 8;
    st.seed = 1;
    return st;
}

static void compute_or_fail(const mlc_mesh *m, const mlc_fem *fem, const mlc_subspace_settings *st,
                            mlc_subspace *out) {
    mlc_err err = {0};
    mlc_status s = mlc_subspace_compute(m, fem, st, out, &err);
    if (s != MLC_OK) fail_msg("mlc_subspace_compute: %s", err.msg);
}

/* Bitwise equality of two subspaces (all arrays and scalars). */
static void assert_same_subspace(const mlc_subspace *a, const mlc_subspace *b) {
    assert_int_equal(a->nv, b->nv);
    assert_int_equal(a->nt, b->nt);
    assert_int_equal(a->w, b->w);
    assert_int_equal(a->m, b->m);
    assert_int_equal(a->ncp, b->ncp);
    assert_int_equal(a->nca, b->nca);
    assert_int_equal(a->ns, b->ns);
    size_t nv = a->nv, nt = a->nt, w = a->w, m = a->m;
    assert_memory_equal(a->W, b->W, nv * w * sizeof(double));
    assert_memory_equal(a->skin_eval, b->skin_eval, w * sizeof(double));
    assert_memory_equal(a->D, b->D, 3 * nv * m * sizeof(double));
    assert_memory_equal(a->vib_eval, b->vib_eval, m * sizeof(double));
    assert_memory_equal(a->grad_max, b->grad_max, m * sizeof(double));
    assert_memory_equal(a->mode_index, b->mode_index, m * sizeof(int));
    assert_memory_equal(a->rigid_eval, b->rigid_eval, sizeof a->rigid_eval);
    assert_memory_equal(a->cluster, b->cluster, nt * sizeof(int));
    assert_memory_equal(a->acluster, b->acluster, nt * sizeof(int));
    assert_memory_equal(a->samples, b->samples, (size_t)a->ns * sizeof(int));
}

static void subspace_should_have_exact_constant_weight_and_six_rigid_modes(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_quadruped_mesh(0.1, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    mlc_subspace_settings st = default_settings();
    mlc_subspace s = {0};
    compute_or_fail(&m, &fem, &st, &s);
    double msum = 0;
    for (int i = 0; i < m.nv; i++)
        msum += fem.vmass[i];
    double c0 = 1.0 / sqrt(msum);
    for (int i = 0; i < m.nv; i++)
        assert_true(s.W[i] == c0); /* exactly */
    assert_true(s.skin_eval[0] == 0.0);
    for (int b = 1; b < s.w; b++)
        assert_true(s.skin_eval[b] > 0 && s.skin_eval[b] >= s.skin_eval[b - 1]);
    /* Wᵀ M_s W = I. */
    for (int a = 0; a < s.w; a++)
        for (int b = 0; b < s.w; b++) {
            double d = 0;
            for (int i = 0; i < m.nv; i++)
                d += fem.vmass[i] * s.W[i + a * m.nv] * s.W[i + b * m.nv];
            assert_near(d, a == b ? 1.0 : 0.0, 1e-10);
        }
    /* Exactly 6 dropped rigid eigenvalues, tiny against the first kept one. */
    for (int r = 0; r < 6; r++)
        assert_true(fabs(s.rigid_eval[r]) < 1e-6 * s.vib_eval[0]);
    assert_true(s.vib_eval[0] > 0);
    int n = 3 * m.nv;
    for (int a = 0; a < s.m; a++) {
        assert_int_equal(s.mode_index[a], a);
        assert_true(s.grad_max[a] > 0);
        if (a) assert_true(s.vib_eval[a] >= s.vib_eval[a - 1]);
        for (int b = 0; b < s.m; b++) {
            double d = 0;
            for (int i = 0; i < n; i++)
                d += fem.vmass[i / 3] * s.D[i + a * n] * s.D[i + b * n];
            assert_near(d, a == b ? 1.0 : 0.0, 1e-10);
        }
    }
    /* grad_max is the max over tets of the Frobenius norm of the mode's gradient. */
    double g = 0;
    for (int e = 0; e < m.nt; e++) {
        double F[9], f2 = 0;
        mlc_fem_deformation_gradient(&m, &fem, e, s.D, F);
        for (int q = 0; q < 9; q++)
            f2 += F[q] * F[q];
        g = fmax(g, sqrt(f2));
    }
    assert_near(s.grad_max[0], g, 1e-14 * g);
    /* Clusters, actuation clusters and samples are filled and in range. */
    assert_true(s.ncp >= 1 && s.nca == 1 && s.ns == 8);
    for (int e = 0; e < m.nt; e++) {
        assert_true(s.cluster[e] >= 0 && s.cluster[e] < s.ncp);
        assert_int_equal(s.acluster[e], 0);
    }
    for (int i = 0; i < s.ns; i++)
        assert_true(s.samples[i] >= 0 && s.samples[i] < m.nv);
    assert_true(s.ordering[0] != '\0');
    assert_true(s.vib_solves > 0 && s.skin_solves > 0);
    mlc_subspace_free(&s);
    mlc_subspace_free(&s);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* The vibration problem on a second thread (subspace.h, threads) must change nothing: every
 * array the same bits as the steps in order, on meshes whose factors are supernodal (BLAS). */
static void thread_count_should_not_change_the_subspace(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        mlc_mesh m = {0};
        mlc_fem fem = {0};
        if (k == 0)
            test_quadruped_mesh(0.1, &m);
        else /* 1,377 vertices: supernodal factors */
            test_box_mesh(16, 8, 8, 0.05, &m);
        assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
        mlc_subspace_settings st = default_settings();
        st.actuation_clusters = 2;
        mlc_subspace one = {0}, two = {0}, all = {0};
        st.threads = 1;
        compute_or_fail(&m, &fem, &st, &one);
        st.threads = 2;
        compute_or_fail(&m, &fem, &st, &two);
        st.threads = 0;
        compute_or_fail(&m, &fem, &st, &all);
        assert_same_subspace(&one, &two);
        assert_same_subspace(&one, &all);
        assert_string_equal(one.ordering, two.ordering);
        printf("# %d vertices: the same bits on 1, 2 and all threads\n", m.nv);
        mlc_subspace_free(&one);
        mlc_subspace_free(&two);
        mlc_subspace_free(&all);
        mlc_fem_free(&fem);
        mlc_mesh_free(&m);
    }
}

/* Local modes with the next region's factorization beside the current region's Lanczos loop
 * (local_modes.h, threads): the same bits as the regions one after the other. */
static void local_modes_on_two_threads_should_give_the_same_bits(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_box_mesh(16, 8, 8, 0.05, &m); /* 1,377 vertices: supernodal factors */
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    int *region = malloc((size_t)m.nt * sizeof(int));
    for (int e = 0; e < m.nt; e++) { /* three slabs along x by the tet's first vertex */
        double x = m.X[3 * m.T[4 * e]];
        region[e] = x < 0.25 ? 0 : x < 0.55 ? 1 : 2;
    }
    mlc_subspace_settings st = default_settings();
    st.m = 0;
    st.local_modes = 2;
    st.localization = 30;
    st.tet_region = region;
    st.nregions = 3;
    mlc_subspace one = {0}, two = {0};
    st.threads = 1;
    compute_or_fail(&m, &fem, &st, &one);
    st.threads = 2;
    compute_or_fail(&m, &fem, &st, &two);
    assert_int_equal(one.m, 6);
    assert_same_subspace(&one, &two);
    for (int i = 0; i < one.m; i++)
        assert_int_equal(one.mode_region[i], i / 2);
    mlc_subspace_free(&one);
    mlc_subspace_free(&two);
    free(region);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

static void identical_inputs_should_give_identical_results(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_quadruped_mesh(0.1, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    mlc_subspace_settings st = default_settings();
    st.actuation_clusters = 2;
    mlc_subspace a = {0}, b = {0};
    long live = mlc_alloc_live();
    compute_or_fail(&m, &fem, &st, &a);
    compute_or_fail(&m, &fem, &st, &b);
    assert_same_subspace(&a, &b);
    assert_true(a.nca >= 2);
    /* A mode list selects the same vectors as the first m modes. */
    int list[2] = {2, 0};
    mlc_subspace_settings sl = default_settings();
    sl.m = 3;
    mlc_subspace c3 = {0}, cl = {0};
    compute_or_fail(&m, &fem, &sl, &c3);
    sl.mode_list = list;
    sl.nlist = 2;
    compute_or_fail(&m, &fem, &sl, &cl);
    assert_int_equal(cl.m, 2);
    assert_int_equal(cl.mode_index[0], 2);
    size_t n = 3 * (size_t)m.nv;
    assert_memory_equal(cl.D, c3.D + 2 * n, n * sizeof(double));
    assert_memory_equal(cl.D + n, c3.D, n * sizeof(double));
    assert_true(cl.vib_eval[0] == c3.vib_eval[2]);
    mlc_subspace_free(&a);
    mlc_subspace_free(&b);
    mlc_subspace_free(&c3);
    mlc_subspace_free(&cl);
    assert_int_equal(mlc_alloc_live(), live);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* Box of extent 2×1×1 at three resolutions: the first elastic eigenvalues change less at the
 * second refinement than at the first. (Not necessarily from above: the mass is lumped, so the
 * min-max monotonicity of conforming elements does not apply; mode 3 rises here.) */
static void refinement_should_converge(void **state) {
    (void)state;
    double ev[3][4];
    for (int r = 0; r < 3; r++) {
        int k = 1 << r;
        mlc_mesh m = {0};
        mlc_fem fem = {0};
        test_box_mesh(4 * k, 2 * k, 2 * k, 0.5 / k, &m);
        assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
        mlc_subspace_settings st = default_settings();
        st.w = 2;
        st.m = 4;
        mlc_subspace s = {0};
        compute_or_fail(&m, &fem, &st, &s);
        for (int i = 0; i < 4; i++)
            ev[r][i] = s.vib_eval[i];
        mlc_subspace_free(&s);
        mlc_fem_free(&fem);
        mlc_mesh_free(&m);
    }
    for (int i = 0; i < 4; i++) {
        double d1 = fabs(ev[1][i] - ev[0][i]), d2 = fabs(ev[2][i] - ev[1][i]);
        if (!(d2 < d1))
            fail_msg("mode %d: eigenvalues %.6g %.6g %.6g do not converge", i, ev[0][i], ev[1][i],
                     ev[2][i]);
    }
}

static void bad_settings_should_name_the_setting(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_box_mesh(2, 1, 1, 0.5, &m); /* 12 vertices */
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    struct {
        int field;
        int value;
        const char *key;
    } cases[] = {
        {0, 0, "subspace.skinning_modes"},   {0, 12, "subspace.skinning_modes"},
        {0, 33, "subspace.skinning_modes"},  {1, 0, "actuation.modes"},
        {1, 30, "actuation.modes"},          {2, 0, "subspace.contact_samples"},
        {3, 0, "subspace.passive_clusters"}, {4, 0, "subspace.actuation_clusters"},
    };
    long live = mlc_alloc_live();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mlc_subspace_settings st = default_settings();
        st.w = 3;
        st.m = 4;
        int *f[5] = {&st.w, &st.m, &st.contact_samples, &st.passive_clusters,
                     &st.actuation_clusters};
        *f[cases[c].field] = cases[c].value;
        mlc_subspace s = {0};
        mlc_err err = {0};
        assert_int_equal(mlc_subspace_compute(&m, &fem, &st, &s, &err), MLC_EINVAL);
        if (!strstr(err.msg, cases[c].key))
            fail_msg("case %zu: '%s' lacks %s", c, err.msg, cases[c].key);
        assert_null(s.W);
    }
    mlc_subspace_settings st = default_settings();
    st.w = 3;
    mlc_err err = {0};
    mlc_subspace s = {0};
    st.poisson = 0.5;
    assert_int_equal(mlc_subspace_compute(&m, &fem, &st, &s, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "material.poisson_modes"));
    st.poisson = 0.25;
    int list[2] = {1, -1};
    st.mode_list = list;
    st.nlist = 2;
    assert_int_equal(mlc_subspace_compute(&m, &fem, &st, &s, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "actuation.mode_list"));
    list[1] = 40;
    assert_int_equal(mlc_subspace_compute(&m, &fem, &st, &s, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "actuation.mode_list"));
    assert_int_equal(mlc_alloc_live(), live);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* Two voxels sharing only an edge: the hinge about that edge is a 7th zero-energy mode. */
static void hinged_mesh_should_report_extra_rigid_modes(void **state) {
    (void)state;
    unsigned char occ[4] = {1, 0, 0, 1}; /* voxels (0,0,0) and (1,1,0) */
    double o[3] = {0, 0, 0};
    mlc_mesh m = {0};
    mlc_err err = {0};
    if (mlc_mesh_from_voxels(2, 2, 1, occ, 1.0, o, &m, &err) != MLC_OK)
        skip(); /* finalize rejects edge-connected parts: nothing to test here */
    mlc_fem fem = {0};
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    mlc_subspace_settings st = default_settings();
    st.w = 2;
    st.m = 3;
    mlc_subspace s = {0};
    assert_int_equal(mlc_subspace_compute(&m, &fem, &st, &s, &err), MLC_ENUMERIC);
    if (!strstr(err.msg, "expected 6 rigid modes, found 7") ||
        !strstr(err.msg, "only at a vertex or along an edge"))
        fail_msg("%s", err.msg);
    assert_null(s.D);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* ---- the vibration solve's check and recovery ------------------------------------------ */

/* Only the vibration modes: one skinning mode, one cluster, one sample. */
static mlc_subspace_settings vibration_settings(void) {
    mlc_subspace_settings st = default_settings();
    st.w = 2;
    st.passive_clusters = 1;
    st.contact_samples = 1;
    st.threads = 1;
    return st;
}

/* A 6×6×6-voxel box whose cells grow from one corner by a factor r per cell along x, r^1.1
 * along y and r^1.2 along z (no symmetry, so no repeated eigenvalues): the corner cell is
 * r^(-16.5) of the far one in volume, with every size between. */
static void graded_box_mesh(double r, double scale, mlc_mesh *m) {
    test_box_mesh(6, 6, 6, 1.0, m);
    for (int i = 0; i < 3 * m->nv; i++) {
        double q = pow(r, 1.0 + 0.1 * (i % 3)), c = m->X[i]; /* c: 0..6, integral */
        m->X[i] = scale * (pow(q, c) - 1) / (pow(q, 6) - 1);
    }
}

static void scale_mesh(mlc_mesh *m, double s) {
    for (int i = 0; i < 3 * m->nv; i++)
        m->X[i] *= s;
}

/* One body in m, cm and mm: the same eigenvalues after × s² and the same M-orthonormal modes
 * after × s^(3/2) (M scales as s³), up to sign, for an evenly meshed body and a graded one. */
static void same_body_in_mm_cm_m_should_give_the_same_modes(void **state) {
    (void)state;
    for (int graded = 0; graded < 2; graded++) {
        mlc_subspace ref = {0};
        const double scales[3] = {1, 100, 1000};
        for (int u = 0; u < 3; u++) {
            mlc_mesh m = {0};
            mlc_fem fem = {0};
            if (graded)
                graded_box_mesh(2.0, 1.0, &m);
            else
                test_quadruped_mesh(0.1, &m);
            scale_mesh(&m, scales[u]);
            assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
            mlc_subspace_settings st = vibration_settings();
            mlc_subspace s = {0};
            compute_or_fail(&m, &fem, &st, &s);
            assert_true(s.vib_residual <= MLC_EIGEN_CHECK_TOL);
            if (u == 0) {
                ref = s;
            } else {
                int n = 3 * m.nv;
                double s2 = scales[u] * scales[u], s32 = pow(scales[u], 1.5);
                for (int i = 0; i < s.m; i++) {
                    assert_near(s.vib_eval[i] * s2, ref.vib_eval[i], 1e-9 * ref.vib_eval[i]);
                    const double *a = ref.D + (size_t)n * i, *b = s.D + (size_t)n * i;
                    double big = 0, dp = 0, dm = 0;
                    for (int k = 0; k < n; k++) {
                        big = fmax(big, fabs(a[k]));
                        dp = fmax(dp, fabs(b[k] * s32 - a[k]));
                        dm = fmax(dm, fabs(b[k] * s32 + a[k]));
                    }
                    if (!(fmin(dp, dm) <= 1e-6 * big))
                        fail_msg("graded %d, scale %g, mode %d: differs by %.3g of %.3g", graded,
                                 scales[u], i, fmin(dp, dm), big);
                }
                mlc_subspace_free(&s);
            }
            mlc_fem_free(&fem);
            mlc_mesh_free(&m);
        }
        mlc_subspace_free(&ref);
    }
}

/* Tet volumes over six orders of magnitude: the modes come out, and their pairs pass the
 * check at the first attempt. */
static void graded_mesh_should_start_with_checked_modes(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    graded_box_mesh(2.5, 1.0, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    double vmin = HUGE_VAL, vmax = 0;
    for (int e = 0; e < m.nt; e++)
        vmin = fmin(vmin, fem.vol[e]), vmax = fmax(vmax, fem.vol[e]);
    assert_true(vmax / vmin > 1e6); /* 2.5^16.5 = 3.7e6 */
    mlc_subspace_settings st = vibration_settings();
    mlc_subspace s = {0};
    compute_or_fail(&m, &fem, &st, &s);
    assert_int_equal(s.vib_attempts, 1);
    assert_true(s.vib_residual <= MLC_EIGEN_CHECK_TOL);
    assert_true(s.vib_orthogonality <= MLC_EIGEN_CHECK_TOL);
    for (int r = 0; r < 6; r++)
        assert_true(fabs(s.rigid_eval[r]) < 1e-6 * s.vib_eval[0]);
    mlc_subspace_free(&s);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* A first shift that does not work (above the first elastic eigenvalue: K − σM is not positive
 * definite) is noticed and the solve is repeated with a shift of its own: the same modes as
 * the default, and the note says what failed; the same for the skinning modes. When no
 * attempt passes, the error says so. */
static void failed_first_solve_should_be_recovered(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_quadruped_mesh(0.1, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    mlc_subspace_settings st = vibration_settings();
    mlc_subspace a = {0}, b = {0};
    compute_or_fail(&m, &fem, &st, &a);
    assert_int_equal(a.vib_attempts, 1);
    assert_string_equal(a.vib_note, "");
    st.first_shift = 2 * a.vib_eval[0];
    compute_or_fail(&m, &fem, &st, &b);
    assert_true(b.vib_attempts > 1);
    assert_true(b.vib_shift < 0);
    if (!strstr(b.vib_note, "not positive definite")) fail_msg("note: %s", b.vib_note);
    for (int i = 0; i < a.m; i++)
        assert_near(b.vib_eval[i], a.vib_eval[i], 1e-9 * a.vib_eval[i]);
    /* The skinning solve got the same shift (between its 0 and λ₁): refused, solved again. */
    assert_int_equal(a.skin_attempts, 1);
    assert_int_equal(b.skin_attempts, 2);
    if (!strstr(b.skin_note, "not positive definite")) fail_msg("note: %s", b.skin_note);
    assert_near(b.skin_eval[1], a.skin_eval[1], 1e-9 * a.skin_eval[1]);
    for (int i = 0; i < m.nv * a.w; i++)
        assert_near(b.W[i], a.W[i], 1e-6 * fabs(a.W[0]));
    /* A check no solve can pass: every attempt fails, and the message says it was the solve,
     * with its residuals, not the mesh. */
    st.first_shift = 0;
    st.check_tol = 1e-30;
    mlc_subspace c = {0};
    mlc_err err = {0};
    assert_int_equal(mlc_subspace_compute(&m, &fem, &st, &c, &err), MLC_ENOCONV);
    if (!strstr(err.msg, "the eigensolver failed on this mesh, 3 attempts") ||
        !strstr(err.msg, "relative residual") || !strstr(err.msg, "not a defect of the mesh") ||
        strstr(err.msg, "disconnected"))
        fail_msg("%s", err.msg);
    assert_null(c.D);
    mlc_subspace_free(&a);
    mlc_subspace_free(&b);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* ---- cache ---------------------------------------------------------------------------- */

typedef struct cache_fixture {
    mlc_mesh mesh;
    mlc_fem fem;
    mlc_subspace_settings st;
    mlc_subspace s;
    uint64_t key;
    char dir[64];
    char path[128];
} cache_fixture;

static int cache_setup(void **state) {
    cache_fixture *f = calloc(1, sizeof *f);
    test_quadruped_mesh(0.1, &f->mesh);
    if (mlc_fem_init(&f->fem, &f->mesh, NULL) != MLC_OK) return -1;
    f->st = default_settings();
    compute_or_fail(&f->mesh, &f->fem, &f->st, &f->s);
    f->key = mlc_subspace_cache_key(&f->mesh, &f->st);
    strcpy(f->dir, "/tmp/mlc_cache_test_XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->path, sizeof f->path, "%s/sub.cache", f->dir);
    *state = f;
    return 0;
}

static int cache_teardown(void **state) {
    cache_fixture *f = *state;
    unlink(f->path);
    rmdir(f->dir);
    mlc_subspace_free(&f->s);
    mlc_fem_free(&f->fem);
    mlc_mesh_free(&f->mesh);
    free(f);
    return 0;
}

static void spit(const char *path, const void *b, long len) {
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, len, fp), (size_t)len);
    fclose(fp);
}

/* The read must fail, leave `out` zeroed and leak nothing. */
static void expect_rejected(const cache_fixture *f, uint64_t key, const char *what) {
    mlc_subspace out;
    memset(&out, 0x5a, sizeof out);
    mlc_err err = {0};
    long live = mlc_alloc_live();
    mlc_status s = mlc_subspace_cache_read(f->path, key, &out, &err);
    if (s == MLC_OK) fail_msg("%s: accepted", what);
    assert_true(err.msg[0] != '\0');
    assert_null(out.W);
    assert_null(out.D);
    assert_int_equal(out.nv, 0);
    assert_int_equal(mlc_alloc_live(), live);
}

static void cache_should_round_trip_bit_for_bit(void **state) {
    cache_fixture *f = *state;
    mlc_err err = {0};
    assert_int_equal(mlc_subspace_cache_write(f->path, f->key, &f->s, &err), MLC_OK);
    mlc_subspace r = {0};
    if (mlc_subspace_cache_read(f->path, f->key, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_same_subspace(&f->s, &r);
    assert_string_equal(f->s.ordering, r.ordering);
    assert_true(r.t_vibration == f->s.t_vibration);
    assert_int_equal(r.vib_solves, f->s.vib_solves);
    mlc_subspace_free(&r);
    /* Overwrite in place (rename over an existing file) and no temporary left behind. */
    assert_int_equal(mlc_subspace_cache_write(f->path, f->key, &f->s, &err), MLC_OK);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void cache_key_should_depend_on_every_setting(void **state) {
    cache_fixture *f = *state;
    mlc_subspace_settings st = f->st;
    uint64_t k0 = mlc_subspace_cache_key(&f->mesh, &st);
    assert_true(k0 == f->key);
    int list[1] = {3};
    for (int c = 0; c < 7; c++) {
        mlc_subspace_settings t = st;
        switch (c) {
        case 0:
            t.w++;
            break;
        case 1:
            t.m++;
            break;
        case 2:
            t.poisson = 0.3;
            break;
        case 3:
            t.passive_clusters++;
            break;
        case 4:
            t.actuation_clusters++;
            break;
        case 5:
            t.contact_samples++;
            break;
        case 6:
            t.mode_list = list;
            t.nlist = 1;
            break;
        }
        assert_true(mlc_subspace_cache_key(&f->mesh, &t) != k0);
    }
    f->mesh.X[0] += 1e-9;
    assert_true(mlc_subspace_cache_key(&f->mesh, &st) != k0);
    f->mesh.X[0] -= 1e-9;
    /* Not the clustering seed: every seed shares the eigen-solves (mlc_subspace_cache_load). */
    st.seed += 7;
    assert_true(mlc_subspace_cache_key(&f->mesh, &st) == k0);
}

static long file_bytes(const char *path, unsigned char **buf) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    *buf = malloc((size_t)n);
    assert_int_equal(fread(*buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    return n;
}

/* A cache written for one seed, loaded for another, gives what a fresh precompute for that seed
 * gives, bit for bit (eigenmodes from the file, clusters recomputed); loaded for its own seed it
 * is the file's subspace without reclustering; neither load changes the file. */
static void cache_of_another_seed_should_recluster_as_a_fresh_compute(void **state) {
    cache_fixture *f = *state;
    mlc_err err = {0};
    assert_int_equal(mlc_subspace_cache_write(f->path, f->key, &f->s, &err), MLC_OK);
    unsigned char *before, *after;
    long n0 = file_bytes(f->path, &before);
    mlc_subspace_settings t = f->st;
    t.seed = 5;
    mlc_subspace fresh = {0}, got = {0};
    compute_or_fail(&f->mesh, &f->fem, &t, &fresh);
    /* The seed matters here: otherwise this test could not tell reclustering from reading. */
    assert_true(fresh.ncp != f->s.ncp ||
                memcmp(fresh.cluster, f->s.cluster, (size_t)f->mesh.nt * sizeof(int)) != 0);
    if (mlc_subspace_cache_load(f->path, &f->mesh, &f->fem, &t, &got, &err) != MLC_OK)
        fail_msg("%s", err.msg);
    assert_same_subspace(&fresh, &got);
    assert_true(got.cluster_seed == 5 && got.cluster_seed_known);
    mlc_subspace_free(&got);
    if (mlc_subspace_cache_load(f->path, &f->mesh, &f->fem, &f->st, &got, &err) != MLC_OK)
        fail_msg("%s", err.msg);
    assert_same_subspace(&f->s, &got);
    assert_true(got.t_clusters == f->s.t_clusters); /* the file's: not reclustered */
    mlc_subspace_free(&got);
    assert_int_equal(file_bytes(f->path, &after), n0);
    assert_memory_equal(before, after, (size_t)n0);
    free(after);

    /* The format before cluster_seed (version 1: the same file without those 8 bytes at 160)
     * is still read, as clusters of an unknown seed, which a load reclusters even for its own
     * seed. */
    unsigned char *old = malloc((size_t)n0);
    memcpy(old, before, 160);
    memcpy(old + 160, before + 168, (size_t)(n0 - 168));
    uint32_t v1 = 1;
    memcpy(old + 8, &v1, 4);
    uint64_t sum = mlc_hash64(MLC_HASH_INIT, old, (size_t)(n0 - 16));
    memcpy(old + n0 - 16, &sum, 8);
    spit(f->path, old, n0 - 8);
    if (mlc_subspace_cache_read(f->path, f->key, &got, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_false(got.cluster_seed_known);
    assert_memory_equal(got.D, f->s.D, 3 * (size_t)f->s.nv * (size_t)f->s.m * sizeof(double));
    mlc_subspace_free(&got);
    if (mlc_subspace_cache_load(f->path, &f->mesh, &f->fem, &f->st, &got, &err) != MLC_OK)
        fail_msg("%s", err.msg);
    assert_same_subspace(&f->s, &got);
    assert_true(got.cluster_seed == f->st.seed && got.cluster_seed_known);
    mlc_subspace_free(&got);
    mlc_subspace_free(&fresh);
    free(old);
    free(before);
}

static void damaged_or_foreign_cache_should_be_rejected(void **state) {
    cache_fixture *f = *state;
    mlc_err err = {0};
    assert_int_equal(mlc_subspace_cache_write(f->path, f->key, &f->s, &err), MLC_OK);
    size_t n;
    unsigned char *good = (unsigned char *)test_slurp(f->path, &n);
    long len = (long)n;
    /* Wrong key. */
    expect_rejected(f, f->key ^ 1, "wrong key");
    /* Truncations. */
    long cuts[] = {0, 7, 100, 159, 160, 168, len / 2, len - 9, len - 8, len - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        spit(f->path, good, cuts[c]);
        expect_rejected(f, f->key, "truncated");
    }
    /* Trailing garbage. */
    unsigned char *big = malloc(len + 3);
    memcpy(big, good, len);
    memset(big + len, 0, 3);
    spit(f->path, big, len + 3);
    expect_rejected(f, f->key, "trailing bytes");
    /* Flipped bytes anywhere: magic, version, sizes, payload, checksum. */
    long pos[] = {0, 9, 24, 28, 60, 70, 150, 200, len / 2, len - 20, len - 1};
    for (size_t c = 0; c < sizeof pos / sizeof pos[0]; c++) {
        memcpy(big, good, len);
        big[pos[c]] ^= 0x10;
        spit(f->path, big, len);
        expect_rejected(f, f->key, "flipped byte");
    }
    /* A forged header with a huge vertex count: rejected by the size check, no allocation. */
    memcpy(big, good, len);
    int32_t huge = 0x7fffffff;
    memcpy(big + 24, &huge, 4);
    spit(f->path, big, len);
    expect_rejected(f, f->key, "huge nv");
    /* Foreign files. */
    const char *text = "solid cube\n  facet normal 0 0 1\nendsolid\n";
    spit(f->path, text, (long)strlen(text));
    expect_rejected(f, f->key, "foreign text");
    memcpy(big, good, len);
    memcpy(big, "MLCCACHX", 8);
    spit(f->path, big, len);
    expect_rejected(f, f->key, "bad magic");
    /* Missing file: I/O error. */
    unlink(f->path);
    mlc_subspace out = {0};
    assert_int_equal(mlc_subspace_cache_read(f->path, f->key, &out, &err), MLC_EIO);
    assert_null(out.W);
    /* A directory is not a cache. */
    assert_int_not_equal(mlc_subspace_cache_read(f->dir, f->key, &out, &err), MLC_OK);
    /* Writing into a missing directory fails cleanly. */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/nope/sub.cache", f->dir);
    assert_int_equal(mlc_subspace_cache_write(bad, f->key, &f->s, &err), MLC_EIO);
    free(big);
    free(good);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(subspace_should_have_exact_constant_weight_and_six_rigid_modes),
        cmocka_unit_test(identical_inputs_should_give_identical_results),
        cmocka_unit_test(thread_count_should_not_change_the_subspace),
        cmocka_unit_test(local_modes_on_two_threads_should_give_the_same_bits),
        cmocka_unit_test(refinement_should_converge),
        cmocka_unit_test(bad_settings_should_name_the_setting),
        cmocka_unit_test(hinged_mesh_should_report_extra_rigid_modes),
        cmocka_unit_test(same_body_in_mm_cm_m_should_give_the_same_modes),
        cmocka_unit_test(graded_mesh_should_start_with_checked_modes),
        cmocka_unit_test(failed_first_solve_should_be_recovered),
        cmocka_unit_test_setup_teardown(cache_should_round_trip_bit_for_bit, cache_setup,
                                        cache_teardown),
        cmocka_unit_test_setup_teardown(cache_key_should_depend_on_every_setting, cache_setup,
                                        cache_teardown),
        cmocka_unit_test_setup_teardown(cache_of_another_seed_should_recluster_as_a_fresh_compute,
                                        cache_setup, cache_teardown),
        cmocka_unit_test_setup_teardown(damaged_or_foreign_cache_should_be_rejected, cache_setup,
                                        cache_teardown),
    };
    return cmocka_run_group_tests_name("subspace", tests, NULL, NULL);
}
