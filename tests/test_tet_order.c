/* test_tet_order.c: the spatial order of a mesh's tets (tet_order.h): a permutation, the same
 * for the same positions whatever order the file lists the tets in, and one whose runs of
 * consecutive tets touch few vertices, which is what it is for. */
#include "test_util.h"

#include "mesh.h"
#include "tet_order.h"

enum { RUN = 2048 }; /* the full-space reference's scatter block (fullspace.h) */

static int *order_of(const mlc_mesh *mesh) {
    int *order = malloc(sizeof(int) * (size_t)mesh->nt);
    mlc_err err;
    assert_int_equal(mlc_tet_spatial_order(mesh, order, &err), MLC_OK);
    return order;
}

/* The most distinct vertices any run of RUN consecutive tets of `order` touches. */
static int most_vertices_a_run(const mlc_mesh *mesh, const int *order) {
    int *mark = malloc(sizeof(int) * (size_t)mesh->nv), most = 0;
    for (int v = 0; v < mesh->nv; v++)
        mark[v] = -1;
    for (int r = 0; r * RUN < mesh->nt; r++) {
        int count = 0;
        for (int i = r * RUN; i < mesh->nt && i < (r + 1) * RUN; i++)
            for (int a = 0; a < 4; a++) {
                const int v = mesh->T[4 * order[i] + a];
                if (mark[v] != r) mark[v] = r, count++;
            }
        most = count > most ? count : most;
    }
    free(mark);
    return most;
}

static void order_should_be_a_permutation(void **state) {
    (void)state;
    mlc_mesh mesh = {0};
    test_box_mesh(16, 12, 10, 0.1, &mesh);
    int *order = order_of(&mesh), *seen = calloc((size_t)mesh.nt, sizeof(int));
    for (int i = 0; i < mesh.nt; i++) {
        assert_in_range(order[i], 0, mesh.nt - 1);
        seen[order[i]]++;
    }
    for (int e = 0; e < mesh.nt; e++)
        assert_int_equal(seen[e], 1);
    free(order), free(seen);
    mlc_mesh_free(&mesh);
}

/* The tets listed backwards come out in the same places: the order follows the positions. */
static void order_should_not_depend_on_the_files_order(void **state) {
    (void)state;
    mlc_mesh mesh = {0}, back = {0};
    test_box_mesh(16, 12, 10, 0.1, &mesh);
    back = mesh;
    back.T = malloc(sizeof(int) * 4 * (size_t)mesh.nt);
    for (int e = 0; e < mesh.nt; e++)
        memcpy(back.T + 4 * e, mesh.T + 4 * (mesh.nt - 1 - e), sizeof(int) * 4);
    int *order = order_of(&mesh), *order_back = order_of(&back);
    for (int i = 0; i < mesh.nt; i++)
        assert_int_equal(order_back[i], mesh.nt - 1 - order[i]);
    free(order), free(order_back), free(back.T);
    mlc_mesh_free(&mesh);
}

/* Runs of 2,048 sorted tets (341 voxels' worth) touch a few hundred vertices; the same runs of
 * a shuffled list touch most of the mesh's 2,431. */
static void sorted_runs_should_touch_few_vertices(void **state) {
    (void)state;
    mlc_mesh mesh = {0};
    test_box_mesh(16, 12, 10, 0.1, &mesh);
    int *order = order_of(&mesh), *shuffled = malloc(sizeof(int) * (size_t)mesh.nt);
    mlc_rng rng;
    mlc_rng_seed(&rng, 3);
    for (int e = 0; e < mesh.nt; e++)
        shuffled[e] = e;
    for (int e = mesh.nt - 1; e > 0; e--) {
        const int j = (int)(mlc_rng_uniform(&rng) * (e + 1)), keep = shuffled[e];
        shuffled[e] = shuffled[j], shuffled[j] = keep;
    }
    const int sorted_most = most_vertices_a_run(&mesh, order);
    const int shuffled_most = most_vertices_a_run(&mesh, shuffled);
    print_message("most vertices a run of %d tets: sorted %d, shuffled %d (of %d)\n", RUN,
                  sorted_most, shuffled_most, mesh.nv);
    assert_true(shuffled_most > mesh.nv / 2);
    assert_true(sorted_most < shuffled_most / 3);
    free(order), free(shuffled);
    mlc_mesh_free(&mesh);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_should_be_a_permutation),
        cmocka_unit_test(order_should_not_depend_on_the_files_order),
        cmocka_unit_test(sorted_runs_should_touch_few_vertices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
