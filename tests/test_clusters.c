/* test_clusters.c: passive clusters (k-means++ on skinning features, component split, small
 * component merge) and farthest-point contact samples. The skinning weights here are synthetic
 * (the vertex coordinates, or indicator fields) so the tests do not need the eigen-solvers. */
#include "test_util.h"

#include "clusters.h"

/* W (nv×4): column 0 constant, columns 1..3 the vertex coordinates; eigenvalues (0,1,1,1). */
static double *coordinate_weights(const mlc_mesh *m, double eval[4]) {
    double *W = malloc((size_t)4 * m->nv * sizeof *W);
    for (int i = 0; i < m->nv; i++) {
        W[i] = 1;
        for (int k = 0; k < 3; k++)
            W[(size_t)(k + 1) * m->nv + i] = m->X[3 * i + k];
    }
    eval[0] = 0;
    eval[1] = eval[2] = eval[3] = 1;
    return W;
}

/* Do tets a and b share 3 vertices (a triangle)? */
static int share_face(const mlc_mesh *m, int a, int b) {
    int n = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            n += m->T[4 * a + i] == m->T[4 * b + j];
    return n == 3;
}

/* Every label in [0, nc) is used, labels are numbered in order of first tet, and every
 * cluster is face-connected (flood fill within the label reaches all its tets). */
static void check_partition(const mlc_mesh *m, const int *label, int nc) {
    int *seen = calloc((size_t)nc, sizeof *seen);
    int next = 0;
    for (int e = 0; e < m->nt; e++) {
        assert_true(label[e] >= 0 && label[e] < nc);
        if (!seen[label[e]]) {
            assert_int_equal(label[e], next); /* first-tet order */
            next++;
        }
        seen[label[e]]++;
    }
    assert_int_equal(next, nc);
    /* Vertex -> tets incidence (CSR), so face neighbours are found among tets sharing a
     * vertex, independently of the library's face sort. */
    int *vs = calloc((size_t)m->nv + 1, sizeof *vs), *vt = malloc((size_t)4 * m->nt * sizeof *vt);
    for (int i = 0; i < 4 * m->nt; i++)
        vs[m->T[i] + 1]++;
    for (int v = 0; v < m->nv; v++)
        vs[v + 1] += vs[v];
    int *fill = malloc((size_t)m->nv * sizeof *fill);
    memcpy(fill, vs, (size_t)m->nv * sizeof *fill);
    for (int i = 0; i < 4 * m->nt; i++)
        vt[fill[m->T[i]]++] = i / 4;
    int *mark = calloc((size_t)m->nt, sizeof *mark);
    int *stack = malloc((size_t)m->nt * sizeof *stack);
    for (int c = 0; c < nc; c++) {
        int s = 0;
        while (label[s] != c)
            s++;
        int top = 0, reached = 1;
        stack[top++] = s;
        mark[s] = 1;
        while (top) {
            int e = stack[--top];
            /* A face neighbour shares vertex 0 or vertex 1 (3 of the 4), so two lists do. */
            for (int q = 0; q < 2; q++) {
                int v = m->T[4 * e + q];
                for (int x = vs[v]; x < vs[v + 1]; x++) {
                    int o = vt[x];
                    if (!mark[o] && label[o] == c && share_face(m, e, o)) {
                        mark[o] = 1;
                        reached++;
                        stack[top++] = o;
                    }
                }
            }
        }
        if (reached != seen[c])
            fail_msg("cluster %d: %d of %d tets reachable", c, reached, seen[c]);
    }
    free(mark);
    free(stack);
    free(seen);
    free(vs);
    free(vt);
    free(fill);
}

static void clusters_should_be_deterministic_for_a_seed(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_quadruped_mesh(0.1, &m);
    double ev[4];
    double *W = coordinate_weights(&m, ev);
    int *a = malloc((size_t)m.nt * sizeof *a), *b = malloc((size_t)m.nt * sizeof *b);
    int na = 0, nb = 0;
    mlc_err err;
    assert_int_equal(mlc_clusters_passive(&m, NULL, W, 4, ev, 6, 42, a, &na, &err), MLC_OK);
    assert_int_equal(mlc_clusters_passive(&m, NULL, W, 4, ev, 6, 42, b, &nb, &err), MLC_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, (size_t)m.nt * sizeof *a);
    check_partition(&m, a, na);
    free(a);
    free(b);
    free(W);
    mlc_mesh_free(&m);
}

static void clusters_should_never_be_empty_and_always_connected(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_quadruped_mesh(0.1, &m);
    double ev[4];
    double *W = coordinate_weights(&m, ev);
    int *lab = malloc((size_t)m.nt * sizeof *lab);
    long live = mlc_alloc_live();
    for (int k = 1; k <= 20; k++) {
        int nc = 0;
        mlc_err err;
        assert_int_equal(mlc_clusters_passive(&m, NULL, W, 4, ev, k, (uint64_t)k, lab, &nc, &err),
                         MLC_OK);
        /* Splitting can only add clusters; a k-means cluster always keeps its largest part. */
        assert_true(nc >= k);
        check_partition(&m, lab, nc);
    }
    assert_int_equal(mlc_alloc_live(), live);
    free(lab);
    free(W);
    mlc_mesh_free(&m);
}

/* Features that are all equal make every k-means++ draw degenerate: the empty-cluster repair
 * must still give each of the k clusters a tet. */
static void identical_features_should_still_fill_every_cluster(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_box_mesh(2, 2, 2, 1.0, &m);
    double *W = malloc((size_t)2 * m.nv * sizeof *W);
    for (int i = 0; i < 2 * m.nv; i++)
        W[i] = 1.0;
    double ev[2] = {0, 2};
    int *lab = malloc((size_t)m.nt * sizeof *lab);
    int nc = 0;
    assert_int_equal(mlc_clusters_passive(&m, NULL, W, 2, ev, 5, 1, lab, &nc, NULL), MLC_OK);
    assert_true(nc >= 1);
    check_partition(&m, lab, nc);
    free(lab);
    free(W);
    mlc_mesh_free(&m);
}

static void degenerate_settings_should_give_one_cluster_or_an_error(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_box_mesh(2, 1, 1, 1.0, &m);
    double ev[4];
    double *W = coordinate_weights(&m, ev);
    int lab[12];
    int nc = -1;
    mlc_err err;
    /* w == 1: no features. */
    assert_int_equal(mlc_clusters_passive(&m, NULL, W, 1, ev, 5, 1, lab, &nc, &err), MLC_OK);
    assert_int_equal(nc, 1);
    for (int e = 0; e < m.nt; e++)
        assert_int_equal(lab[e], 0);
    /* k > nt is clamped: each tet its own cluster. */
    assert_int_equal(mlc_clusters_passive(&m, NULL, W, 4, ev, 1000, 1, lab, &nc, &err), MLC_OK);
    assert_int_equal(nc, m.nt);
    check_partition(&m, lab, nc);
    assert_int_equal(mlc_clusters_passive(&m, NULL, W, 4, ev, 0, 1, lab, &nc, &err), MLC_EINVAL);
    ev[2] = 0; /* a second zero eigenvalue: the mesh would be disconnected */
    assert_int_equal(mlc_clusters_passive(&m, NULL, W, 4, ev, 2, 1, lab, &nc, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "eigenvalue 2"));
    free(W);
    mlc_mesh_free(&m);
}

/* A bar along x whose "weight" is 1 on the far half and on one voxel near the start (the
 * fragment), 0 elsewhere. k-means with k = 2 groups the fragment with the far half, the split
 * makes it a component of its own, and whether it survives depends on its size relative to
 * the 1% threshold. Returns the number of clusters; *frag_label / *near_label are the labels
 * of a tet inside the fragment voxel and one in the first voxel. */
static int bar_with_fragment(int nx, int ny, int nz, int fi, int fj, int fk, int *frag_label,
                             int *near_label) {
    mlc_mesh m = {0};
    test_box_mesh(nx, ny, nz, 1.0, &m);
    double *W = malloc((size_t)2 * m.nv * sizeof *W);
    for (int i = 0; i < m.nv; i++) {
        const double *x = m.X + 3 * i;
        int in_frag = x[0] >= fi && x[0] <= fi + 1 && x[1] >= fj && x[1] <= fj + 1 && x[2] >= fk &&
                      x[2] <= fk + 1;
        W[i] = 1;
        W[m.nv + i] = (x[0] >= nx / 2 || in_frag) ? 1.0 : 0.0;
    }
    double ev[2] = {0, 1};
    int *lab = malloc((size_t)m.nt * sizeof *lab);
    int nc = 0;
    mlc_fem fem = {0};
    fem.nt = m.nt;
    fem.nv = m.nv;
    fem.vol = malloc((size_t)m.nt * sizeof *fem.vol);
    for (int e = 0; e < m.nt; e++)
        fem.vol[e] = 1.0 / 6.0; /* unit voxels, 6 equal tets */
    assert_int_equal(mlc_clusters_passive(&m, &fem, W, 2, ev, 2, 3, lab, &nc, NULL), MLC_OK);
    check_partition(&m, lab, nc);
    /* Voxel (i,j,k) holds tets 6·(i + nx(j + ny k)) .. +5 (mlc_mesh_from_voxels order). */
    *frag_label = lab[6 * (fi + nx * (fj + ny * fk))];
    *near_label = lab[0];
    free(fem.vol);
    free(lab);
    free(W);
    mlc_mesh_free(&m);
    return nc;
}

static void tiny_fragment_should_be_merged_into_its_neighbour(void **state) {
    (void)state;
    int frag, near_;
    /* 10800 tets, half of them in the far cluster: 1% = 54 tets, more than the fragment. */
    int nc = bar_with_fragment(200, 3, 3, 5, 1, 1, &frag, &near_);
    assert_int_equal(nc, 2);
    assert_int_equal(frag, near_);
    /* Control: on a short bar the same fragment is above 1% and stays a cluster. */
    nc = bar_with_fragment(20, 3, 3, 5, 1, 1, &frag, &near_);
    assert_int_equal(nc, 3);
    assert_int_not_equal(frag, near_);
}

static void clusters_should_fail_cleanly_without_memory(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_quadruped_mesh(0.1, &m);
    double ev[4];
    double *W = coordinate_weights(&m, ev);
    int *lab = malloc((size_t)m.nt * sizeof *lab);
    long live = mlc_alloc_live();
    for (long n = 1; n < 40; n++) {
        int nc = 0;
        mlc_alloc_fail_after(n);
        mlc_status s = mlc_clusters_passive(&m, NULL, W, 4, ev, 4, 9, lab, &nc, NULL);
        mlc_alloc_fail_after(0);
        assert_true(s == MLC_OK || s == MLC_ENOMEM);
        assert_int_equal(mlc_alloc_live(), live);
    }
    free(lab);
    free(W);
    mlc_mesh_free(&m);
}

/* ---- contact samples ---- */

static double d2(const mlc_mesh *m, int a, int b) {
    double s = 0;
    for (int k = 0; k < 3; k++) {
        double t = m->X[3 * a + k] - m->X[3 * b + k];
        s += t * t;
    }
    return s;
}

/* Largest distance from a boundary vertex to its nearest sample among the first n. */
static double covering_radius(const mlc_mesh *m, const int *s, int n) {
    double r = 0;
    for (int i = 0; i < 3 * m->nf; i++) {
        int v = m->F[i];
        double best = HUGE_VAL;
        for (int j = 0; j < n; j++)
            best = fmin(best, d2(m, v, s[j]));
        r = fmax(r, best);
    }
    return sqrt(r);
}

static int on_boundary(const mlc_mesh *m, int v) {
    for (int i = 0; i < 3 * m->nf; i++)
        if (m->F[i] == v) return 1;
    return 0;
}

static void samples_should_start_low_and_spread_out(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_quadruped_mesh(0.1, &m);
    int s[40], n = 0;
    mlc_err err;
    assert_int_equal(mlc_contact_samples(&m, 40, 0.0, s, &n, &err), MLC_OK);
    assert_int_equal(n, 40);
    /* First: the lowest boundary vertex, smallest index among ties. */
    int low = -1;
    for (int i = 0; i < 3 * m.nf; i++) {
        int v = m.F[i];
        if (low < 0 || m.X[3 * v + 1] < m.X[3 * low + 1] ||
            (m.X[3 * v + 1] == m.X[3 * low + 1] && v < low))
            low = v;
    }
    assert_int_equal(s[0], low);
    /* Second: the boundary vertex farthest from the first. */
    double far = 0;
    for (int i = 0; i < 3 * m.nf; i++)
        far = fmax(far, d2(&m, s[0], m.F[i]));
    assert_near(d2(&m, s[0], s[1]), far, 0);
    for (int i = 0; i < n; i++) {
        assert_true(on_boundary(&m, s[i]));
        for (int j = 0; j < i; j++)
            assert_int_not_equal(s[i], s[j]);
    }
    /* The covering radius never grows as samples are added, and each new sample was at the
     * covering radius of the previous ones (that is what "farthest point" means). */
    double prev = HUGE_VAL;
    for (int k = 1; k <= n; k++) {
        double r = covering_radius(&m, s, k);
        assert_true(r <= prev);
        if (k < n) {
            double dk = HUGE_VAL;
            for (int j = 0; j < k; j++)
                dk = fmin(dk, d2(&m, s[k], s[j]));
            assert_near(sqrt(dk), r, 1e-12);
        }
        prev = r;
    }
    /* Deterministic. */
    int s2[40], n2 = 0;
    assert_int_equal(mlc_contact_samples(&m, 40, 0.0, s2, &n2, &err), MLC_OK);
    assert_memory_equal(s, s2, sizeof s);
    mlc_mesh_free(&m);
}

static void samples_should_stop_at_the_boundary_vertex_count(void **state) {
    (void)state;
    mlc_mesh m = {0};
    test_box_mesh(1, 1, 1, 1.0, &m); /* 8 vertices, all on the boundary */
    int s[20], n = 0;
    assert_int_equal(mlc_contact_samples(&m, 20, 0.0, s, &n, NULL), MLC_OK);
    assert_int_equal(n, 8);
    assert_int_equal(mlc_contact_samples(&m, 0, 0.0, s, &n, NULL), MLC_OK);
    assert_int_equal(n, 0);
    assert_int_equal(mlc_contact_samples(&m, -1, 0.0, s, &n, NULL), MLC_EINVAL);
    mlc_mesh_free(&m);
}

#define MLC_CONTACT_CAP_TEST 400

/* A body on four legs with a thin tail: 1 voxel thick, sticking out behind at one voxel above
 * the ground, its underside facing down (a part a tilted body lands on). */
static void thin_tail_mesh(mlc_mesh *mesh) {
    enum { NX = 16, NY = 4, NZ = 4 };
    unsigned char occ[NX * NY * NZ];
    memset(occ, 0, sizeof occ);
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                int body = j >= 2 && i >= 4 && i <= 11;
                int leg = j <= 1 && (i == 5 || i == 6 || i == 10 || i == 11) && (k == 0 || k == 3);
                int tail = j == 1 && i <= 4 && (k == 1 || k == 2);
                if (body || leg || tail) occ[i + NX * (j + NY * k)] = 1;
            }
    double origin[3] = {0, 0, 0};
    mlc_err err;
    if (mlc_mesh_from_voxels(NX, NY, NZ, occ, 0.1, origin, mesh, &err) != MLC_OK)
        fail_msg("thin_tail_mesh: %s", err.msg);
}

/* The weighted distance (height ×MLC_CONTACT_HEIGHT_WEIGHT) from v to its nearest sample. */
static double weighted_gap(const mlc_mesh *m, const int *s, int n, int v) {
    double best = HUGE_VAL;
    for (int j = 0; j < n; j++) {
        const double *p = m->X + 3 * s[j], *q = m->X + 3 * v;
        double dx = q[0] - p[0], dy = MLC_CONTACT_HEIGHT_WEIGHT * (q[1] - p[1]), dz = q[2] - p[2];
        best = fmin(best, dx * dx + dy * dy + dz * dz);
    }
    return sqrt(best);
}

static void cover_should_reach_every_thin_part_that_can_touch(void **state) {
    (void)state;
    mlc_mesh m = {0};
    thin_tail_mesh(&m);
    const double extent = 1.2, spacing = 0.12, band = 0.01;
    /* The tail's lowest tip vertex: smallest x on the underside y = 0.1. */
    int tip = -1;
    for (int i = 0; i < 3 * m.nf; i++) {
        int v = m.F[i];
        if (fabs(m.X[3 * v + 1] - 0.1) < 1e-12 && (tip < 0 || m.X[3 * v] < m.X[3 * tip])) tip = v;
    }
    assert_true(tip >= 0 && m.X[3 * tip] == 0);
    /* Eight samples by the count alone: the soles and the belly take them, none near the tip. */
    int plain[8], np = 0;
    assert_int_equal(mlc_contact_samples(&m, 8, band, plain, &np, NULL), MLC_OK);
    assert_int_equal(np, 8);
    assert_true(weighted_gap(&m, plain, np, tip) > 2 * spacing * extent);
    /* The cover: every vertex of the soles and of the surface facing down within the spacing,
     * the tip among them; the first eight samples are the count's own. */
    int s[MLC_CONTACT_CAP_TEST], n = 0;
    double covered = -1;
    assert_int_equal(mlc_contact_samples_cover(&m, 8, band, spacing, MLC_CONTACT_CAP_TEST, s, &n,
                                               &covered, NULL),
                     MLC_OK);
    assert_true(n > 8 && n < MLC_CONTACT_CAP_TEST);
    assert_true(covered > 0 && covered <= spacing);
    assert_true(weighted_gap(&m, s, n, tip) <= spacing * extent * (1 + 1e-12));
    for (int i = 0; i < 3 * m.nf; i++) {
        int v = m.F[i];
        if (m.X[3 * v + 1] <= band * extent)
            assert_true(weighted_gap(&m, s, n, v) <= spacing * extent * (1 + 1e-12));
    }
    for (int i = 0; i < n; i++) {
        assert_true(on_boundary(&m, s[i]));
        for (int j = 0; j < i; j++)
            assert_int_not_equal(s[i], s[j]);
    }
    /* A cap holds: no more samples than it allows, and the spacing reached says it fell short. */
    int c[12], nc = 0;
    assert_int_equal(mlc_contact_samples_cover(&m, 8, band, spacing, 12, c, &nc, &covered, NULL),
                     MLC_OK);
    assert_int_equal(nc, 12);
    assert_true(covered > spacing);
    /* Spacing 0 is the count's rule, sample for sample. */
    int z[8], nz = 0;
    assert_int_equal(mlc_contact_samples_cover(&m, 8, band, 0.0, 8, z, &nz, NULL, NULL), MLC_OK);
    assert_int_equal(nz, np);
    assert_memory_equal(z, plain, sizeof z);
    /* Deterministic. */
    int s2[MLC_CONTACT_CAP_TEST], n2 = 0;
    assert_int_equal(
        mlc_contact_samples_cover(&m, 8, band, spacing, MLC_CONTACT_CAP_TEST, s2, &n2, NULL, NULL),
        MLC_OK);
    assert_int_equal(n2, n);
    assert_memory_equal(s2, s, (size_t)n * sizeof(int));
    mlc_mesh_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clusters_should_be_deterministic_for_a_seed),
        cmocka_unit_test(cover_should_reach_every_thin_part_that_can_touch),
        cmocka_unit_test(clusters_should_never_be_empty_and_always_connected),
        cmocka_unit_test(identical_features_should_still_fill_every_cluster),
        cmocka_unit_test(degenerate_settings_should_give_one_cluster_or_an_error),
        cmocka_unit_test(tiny_fragment_should_be_merged_into_its_neighbour),
        cmocka_unit_test(clusters_should_fail_cleanly_without_memory),
        cmocka_unit_test(samples_should_start_low_and_spread_out),
        cmocka_unit_test(samples_should_stop_at_the_boundary_vertex_count),
    };
    return cmocka_run_group_tests_name("clusters", tests, NULL, NULL);
}
