/* test_surface_check.c: mlc_surface_check_compute on small surfaces built in code: a closed
 * cube passes; each defect (hole, fin, zero-area triangle, second part) is counted with an
 * example; equal positions are welded; orientation flips are counted but are no defect; bad
 * indices and failed allocations are refused without a leak. */
#include "test_util.h"

#include "surface_check.h"

/* A unit cube, 8 vertices, 12 outward triangles; room for a second cube and extras. */
typedef struct surf {
    int nv, nf;
    double V[3 * 64];
    int F[3 * 80];
} surf;

static const int cube_tris[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7},
                                     {0, 1, 5}, {0, 5, 4}, {1, 2, 6}, {1, 6, 5},
                                     {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};

static int add_vertex(surf *s, double x, double y, double z) {
    s->V[3 * s->nv] = x, s->V[3 * s->nv + 1] = y, s->V[3 * s->nv + 2] = z;
    return s->nv++;
}

static void add_tri(surf *s, int a, int b, int c) {
    s->F[3 * s->nf] = a, s->F[3 * s->nf + 1] = b, s->F[3 * s->nf + 2] = c;
    s->nf++;
}

/* Append a cube at x offset `dx`, all 12 triangles or the first `ntri`. */
static void add_cube(surf *s, double dx, int ntri) {
    int base = s->nv;
    for (int i = 0; i < 8; i++)
        add_vertex(s, dx + (i % 4 == 1 || i % 4 == 2), i % 4 >= 2, i >= 4);
    for (int t = 0; t < ntri; t++)
        add_tri(s, base + cube_tris[t][0], base + cube_tris[t][1], base + cube_tris[t][2]);
}

static mlc_surface_check check(const surf *s) {
    mlc_surface_check c;
    long live = mlc_alloc_live();
    assert_int_equal(mlc_surface_check_compute(s->nv, s->V, s->nf, s->F, &c), MLC_OK);
    assert_int_equal(mlc_alloc_live(), live);
    return c;
}

static void closed_cube_should_pass(void **state) {
    (void)state;
    surf s = {0};
    add_cube(&s, 0, 12);
    mlc_surface_check c = check(&s);
    assert_true(mlc_surface_check_ok(&c));
    assert_int_equal(c.components, 1);
    assert_int_equal(c.component_sizes[0], 12);
    assert_int_equal(c.component_sizes[1], 0);
    assert_int_equal(c.misoriented_edges, 0);
    assert_int_equal(c.boundary_vertex, -1);
    assert_int_equal(c.degenerate_triangle, -1);
}

static void missing_triangle_should_give_three_boundary_edges(void **state) {
    (void)state;
    surf s = {0};
    add_cube(&s, 0, 11); /* the last triangle (3, 4, 7) is missing */
    mlc_surface_check c = check(&s);
    assert_false(mlc_surface_check_ok(&c));
    assert_int_equal(c.boundary_edges, 3);
    assert_true(c.boundary_vertex == 3 || c.boundary_vertex == 4 || c.boundary_vertex == 7);
    assert_int_equal(c.nonmanifold_edges, 0);
    assert_int_equal(c.components, 1);
}

static void fin_should_be_a_nonmanifold_edge(void **state) {
    (void)state;
    surf s = {0};
    add_cube(&s, 0, 12);
    int tip = add_vertex(&s, 0.5, -1, 0);
    add_tri(&s, 0, 1, tip);
    add_tri(&s, 1, 0, tip);
    mlc_surface_check c = check(&s);
    assert_int_equal(c.boundary_edges, 0);
    assert_int_equal(c.nonmanifold_edges, 1);
    assert_int_equal(c.nonmanifold_edge[0], 0);
    assert_int_equal(c.nonmanifold_edge[1], 1);
    assert_int_equal(c.nonmanifold_count, 4);
    assert_false(mlc_surface_check_ok(&c));
}

static void collinear_and_repeated_corners_should_be_degenerate(void **state) {
    (void)state;
    surf s = {0};
    add_cube(&s, 0, 12);
    /* Split the front quad's triangle (0, 1, 5) at the midpoint m of edge 0-1 and close the
     * gap with the needle (0, 1, m): still closed, but one triangle has no area. */
    int m = add_vertex(&s, 0.5, 0, 0);
    s.F[3 * 4 + 1] = m; /* (0, m, 5) */
    add_tri(&s, m, 1, 5);
    add_tri(&s, 0, 1, m);
    mlc_surface_check c = check(&s);
    assert_int_equal(c.degenerate, 1);
    assert_int_equal(c.degenerate_triangle, 13);
    assert_int_equal(c.boundary_edges, 0);
    assert_int_equal(c.nonmanifold_edges, 0);
    /* Two vertices at one position make a triangle through both degenerate. */
    int twin = add_vertex(&s, 1, 1, 1);
    add_tri(&s, 6, twin, 7);
    c = check(&s);
    assert_int_equal(c.degenerate, 2);
}

static void separate_parts_should_be_counted_largest_first(void **state) {
    (void)state;
    surf s = {0};
    add_cube(&s, 0, 12);
    add_cube(&s, 3, 12);
    int a = add_vertex(&s, 9, 0, 0), b = add_vertex(&s, 10, 0, 0), d = add_vertex(&s, 9, 1, 0);
    add_tri(&s, a, b, d);
    add_cube(&s, 6, 12);
    add_cube(&s, 12, 12);
    add_cube(&s, 15, 11);
    mlc_surface_check c = check(&s);
    assert_int_equal(c.components, 6);
    int want[MLC_SURFACE_CHECK_PARTS] = {12, 12, 12, 12};
    assert_memory_equal(c.component_sizes, want, sizeof want);
    assert_int_equal(c.boundary_edges, 3 + 3);
}

static void equal_positions_should_be_welded(void **state) {
    (void)state;
    /* A cube whose top face has its own copies of the four top vertices (as an export split
     * at a seam): closed once welded, and example vertices are the smallest indices. */
    surf s = {0};
    add_cube(&s, 0, 12);
    int copy[4];
    for (int i = 0; i < 4; i++)
        copy[i] = add_vertex(&s, s.V[3 * (4 + i)], s.V[3 * (4 + i) + 1], s.V[3 * (4 + i) + 2]);
    for (int t = 2; t < 4; t++)
        for (int k = 0; k < 3; k++)
            s.F[3 * t + k] = copy[s.F[3 * t + k] - 4];
    mlc_surface_check c = check(&s);
    assert_true(mlc_surface_check_ok(&c));
    int map[64];
    assert_int_equal(mlc_surface_weld_map(s.nv, s.V, map), MLC_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(map[copy[i]], 4 + i);
    assert_int_equal(map[0], 0);
}

static void flipped_triangle_should_count_misoriented_edges_only(void **state) {
    (void)state;
    surf s = {0};
    add_cube(&s, 0, 12);
    int t = s.F[1];
    s.F[1] = s.F[2], s.F[2] = t;
    mlc_surface_check c = check(&s);
    assert_int_equal(c.misoriented_edges, 3);
    assert_true(mlc_surface_check_ok(&c));
}

static void bad_input_and_failed_allocations_should_be_refused(void **state) {
    (void)state;
    surf s = {0};
    add_cube(&s, 0, 12);
    mlc_surface_check c;
    s.F[5] = 8;
    assert_int_equal(mlc_surface_check_compute(s.nv, s.V, s.nf, s.F, &c), MLC_EINVAL);
    s.F[5] = -1;
    assert_int_equal(mlc_surface_check_compute(s.nv, s.V, s.nf, s.F, &c), MLC_EINVAL);
    s.F[5] = 1;
    assert_int_equal(mlc_surface_check_compute(s.nv, s.V, 0, s.F, &c), MLC_OK);
    assert_int_equal(c.components, 0);
    long live = mlc_alloc_live();
    for (long n = 1;; n++) {
        mlc_alloc_fail_after(n);
        mlc_status st = mlc_surface_check_compute(s.nv, s.V, s.nf, s.F, &c);
        mlc_alloc_fail_after(0);
        assert_int_equal(mlc_alloc_live(), live);
        if (st == MLC_OK) break;
        assert_int_equal(st, MLC_ENOMEM);
        assert_true(n < 10);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_cube_should_pass),
        cmocka_unit_test(missing_triangle_should_give_three_boundary_edges),
        cmocka_unit_test(fin_should_be_a_nonmanifold_edge),
        cmocka_unit_test(collinear_and_repeated_corners_should_be_degenerate),
        cmocka_unit_test(separate_parts_should_be_counted_largest_first),
        cmocka_unit_test(equal_positions_should_be_welded),
        cmocka_unit_test(flipped_triangle_should_count_misoriented_edges_only),
        cmocka_unit_test(bad_input_and_failed_allocations_should_be_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
