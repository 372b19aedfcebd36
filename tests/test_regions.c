/* test_regions.c: body regions (regions.h) and per-region materials. Labels read from every
 * format that carries them (MEDIT, Gmsh 2.2 ASCII and binary and 4.1, TetGen .ele attributes) and
 * from label files (per tet, per vertex with the majority rule), kept through the reader's repairs;
 * bad label input fails with the file and line; automatic regions put the quadruped's four feet and
 * the octopod's eight leg tips in separate regions; the mass of a body with two densities is the
 * dense sum Σ ρ_e V_e; one material written per tet gives the same bits as the global one; each
 * contact sample brakes with its region's friction; the cache key follows materials and labels; and
 * a bar resting on the ground, stiff in one half and soft in the other, squashes less in its stiff
 * half, in the reduced model and in the full-space reference. */
#include "test_util.h"

#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "fullspace.h"
#include "pipeline.h"
#include "regions.h"
#include "sim.h"
#include "subspace.h"

#ifndef AUTO_K
#define AUTO_K 12
#endif

static char tmpdir[256];

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mlc-test-regions-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text) {
    static char paths[8][400];
    static int k;
    char *p = paths[k++ % 8];
    snprintf(p, 400, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* The unit cube in 5 tets (tests/data/mesh_cube5.*), labelled 7, 7, 3, 3, -2. */
static const int cube_labels[5] = {7, 7, 3, 3, -2};
static const int cube_regions[5] = {2, 2, 1, 1, 0}; /* labels -2, 3, 7 in ascending order */
#define CUBE_NODES "0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n"

static const char *medit_cube =
    "MeshVersionFormatted 1\nDimension 3\nVertices\n8\n"
    "0 0 0 0\n1 0 0 0\n0 1 0 0\n1 1 0 0\n0 0 1 0\n1 0 1 0\n0 1 1 0\n1 1 1 0\n"
    "Triangles\n1\n1 2 4 9\n"
    "Tetrahedra\n5\n2 1 6 4 7\n3 1 4 7 7\n5 1 7 6 3\n8 4 6 7 3\n1 4 7 6 -2\nEnd\n";

static const char *gmsh2_cube =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n8\n"
    "1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n5 0 0 1\n6 1 0 1\n7 0 1 1\n8 1 1 1\n$EndNodes\n"
    "$Elements\n6\n1 2 2 99 1 1 2 4\n2 4 2 7 1 2 1 6 4\n3 4 2 7 1 3 1 4 7\n"
    "4 4 2 3 2 5 1 7 6\n5 4 2 3 2 8 4 6 7\n6 4 2 -2 3 1 4 7 6\n$EndElements\n";

static const char *gmsh4_cube =
    "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
    "$Entities\n0 0 1 3\n"
    "10 0 0 0 1 1 1 1 99 0\n"
    "1 0 0 0 1 1 1 1 7 0\n2 0 0 0 1 1 1 1 3 0\n3 0 0 0 1 1 1 2 -2 5 0\n$EndEntities\n"
    "$Nodes\n1 8 1 8\n3 1 0 8\n1\n2\n3\n4\n5\n6\n7\n8\n" CUBE_NODES "$EndNodes\n"
    "$Elements\n4 6 1 6\n2 10 2 1\n6 1 2 4\n3 1 4 2\n1 2 1 6 4\n2 3 1 4 7\n"
    "3 2 4 2\n3 5 1 7 6\n4 8 4 6 7\n3 3 4 1\n5 1 4 7 6\n$EndElements\n";

static const char *tetgen_node =
    "8 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n5 0 0 1\n6 1 0 1\n7 0 1 1\n8 1 1 1\n";
static const char *tetgen_ele = "# region attributes\n5 4 2\n1 2 1 6 4 7 0.5\n2 3 1 4 7 7.0 1\n"
                                "3 5 1 7 6 3 1\n4 8 4 6 7 3 1\n5 1 4 7 6 -2 1\n";

/* The cube as binary Gmsh 2.2: one block of 5 tets with 2 tags each (physical, entity). */
static const char *write_gmsh2_binary(const char *name) {
    static char p[400];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    int one = 1;
    fputs("$MeshFormat\n2.2 1 8\n", f);
    fwrite(&one, 4, 1, f);
    fputs("\n$EndMeshFormat\n$Nodes\n8\n", f);
    for (int i = 0; i < 8; i++) {
        int tag = i + 1;
        double x[3] = {i & 1, (i >> 1) & 1, (i >> 2) & 1};
        fwrite(&tag, 4, 1, f);
        fwrite(x, 8, 3, f);
    }
    fputs("\n$EndNodes\n$Elements\n5\n", f);
    int head[3] = {4, 5, 2},
        tets[5][4] = {{2, 1, 6, 4}, {3, 1, 4, 7}, {5, 1, 7, 6}, {8, 4, 6, 7}, {1, 4, 7, 6}};
    fwrite(head, 4, 3, f);
    for (int e = 0; e < 5; e++) {
        int rec[7] = {e + 1, cube_labels[e], 1, tets[e][0], tets[e][1], tets[e][2], tets[e][3]};
        fwrite(rec, 4, 7, f);
    }
    fputs("\n$EndElements\n", f);
    fclose(f);
    return p;
}

static void check_cube_regions(const mlc_mesh *m, const mlc_regions *r, const char *source) {
    assert_int_equal(m->nt, 5);
    assert_non_null(m->tet_tag);
    for (int e = 0; e < 5; e++)
        assert_int_equal(m->tet_tag[e], cube_labels[e]);
    assert_string_equal(r->source, source);
    assert_int_equal(r->nregions, 3);
    assert_int_equal(r->label[0], -2);
    assert_int_equal(r->label[1], 3);
    assert_int_equal(r->label[2], 7);
    for (int e = 0; e < 5; e++)
        assert_int_equal(r->tet_region[e], cube_regions[e]);
}

static void resolve_default(const mlc_mesh *m, const mlc_mesh_report *rep, mlc_regions *r) {
    mlc_config cfg;
    mlc_config_defaults(&cfg);
    mlc_err err;
    if (mlc_regions_resolve(&cfg, m, rep, NULL, r, &err) != MLC_OK) fail_msg("%s", err.msg);
}

static void labels_should_be_read_from_every_format(void **state) {
    (void)state;
    const char *paths[5] = {write_file("cube.mesh", medit_cube), write_file("cube.msh", gmsh2_cube),
                            write_file("cube4.msh", gmsh4_cube), NULL,
                            write_gmsh2_binary("cube_bin.msh")};
    write_file("cube.node", tetgen_node);
    paths[3] = write_file("cube.ele", tetgen_ele);
    const char *formats[5] = {"medit", "gmsh2", "gmsh4", "tetgen", "gmsh2"};
    for (int f = 0; f < 5; f++) {
        mlc_mesh m = {0};
        mlc_mesh_report rep;
        mlc_err err;
        if (mlc_mesh_read(paths[f], &m, &rep, &err) != MLC_OK) fail_msg("%s", err.msg);
        assert_string_equal(rep.format, formats[f]);
        mlc_regions r = {0};
        resolve_default(&m, &rep, &r);
        check_cube_regions(&m, &r, "mesh");
        mlc_regions_free(&r);
        mlc_mesh_free(&m);
    }
    /* A TetGen .ele without attributes and a voxel mesh carry no labels: one region. */
    write_file("plain.node", tetgen_node);
    const char *plain = write_file("plain.ele", "5 4 0\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n"
                                                "4 8 4 6 7\n5 1 4 7 6\n");
    mlc_mesh m = {0};
    mlc_err err;
    assert_int_equal(mlc_mesh_read(plain, &m, NULL, &err), MLC_OK);
    assert_null(m.tet_tag);
    mlc_regions r = {0};
    resolve_default(&m, NULL, &r);
    assert_string_equal(r.source, "none");
    assert_int_equal(r.nregions, 1);
    mlc_regions_free(&r);
    mlc_mesh_free(&m);
    /* A fractional region attribute is an error naming the line. */
    write_file("frac.node", tetgen_node);
    const char *frac = write_file("frac.ele", "5 4 1\n1 2 1 6 4 1\n2 3 1 4 7 2.5\n3 5 1 7 6 1\n"
                                              "4 8 4 6 7 1\n5 1 4 7 6 1\n");
    assert_int_equal(mlc_mesh_read(frac, &m, NULL, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "frac.ele:3:"));
    assert_non_null(strstr(err.msg, "integral"));
}

static void label_files_should_give_regions_per_tet_and_per_vertex(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_err err;
    write_file("plain2.node", tetgen_node);
    const char *mesh = write_file("plain2.ele", "5 4\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n"
                                                "4 8 4 6 7\n5 1 4 7 6\n");
    assert_int_equal(mlc_mesh_read(mesh, &m, NULL, &err), MLC_OK);
    mlc_config cfg;
    mlc_config_defaults(&cfg);
    /* per tet, with comments and blank lines */
    const char *pt = write_file("tets.txt", "# one label per tet\n7\n 7 # front\n\n3\n3\n-2\n");
    snprintf(cfg.regions.file, sizeof cfg.regions.file, "%s", pt);
    mlc_regions r = {0};
    if (mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    int tags[5];
    memcpy(tags, cube_labels, sizeof tags);
    m.tet_tag = tags; /* the check compares the file's labels through it */
    check_cube_regions(&m, &r, "file");
    m.tet_tag = NULL;
    mlc_regions_free(&r);
    /* per vertex: z = 0 → 1, z = 1 → 2. Tets (1-based vertices) 2 1 6 4 → 1,1,2,1: 1;
     * 3 1 4 7 → 1; 5 1 7 6 → 2; 8 4 6 7 → 2; 1 4 7 6 → 1,1,2,2: a tie, the smaller label 1. */
    const char *pv = write_file("verts.txt", "1\n1\n1\n1\n2\n2\n2\n2\n");
    snprintf(cfg.regions.file, sizeof cfg.regions.file, "%s", pv);
    if (mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    const int want[5] = {0, 0, 1, 1, 0};
    assert_int_equal(r.nregions, 2);
    for (int e = 0; e < 5; e++)
        assert_int_equal(r.tet_region[e], want[e]);
    /* The region of a vertex is the region of most of its volume (ties: smaller region). */
    mlc_fem fem;
    assert_int_equal(mlc_fem_init(&fem, &m, &err), MLC_OK);
    int vr[8];
    assert_int_equal(mlc_regions_vertex(&r, &m, &fem, vr, &err), MLC_OK);
    assert_int_equal(vr[0], 0); /* vertex 1: tets 0, 1, 2 (region 0, 0, 1) and 4 (0) */
    assert_int_equal(vr[7], 1); /* vertex 8: tet 3 only (region 1) */
    mlc_fem_free(&fem);
    mlc_regions_free(&r);
    mlc_mesh_free(&m);
}

/* Local modes need regions: a mesh without labels, or whose labels are all one, stops with the
 * fixes named, unless the regions are given (regions.auto = 1: the whole body, on purpose). */
static void local_modes_without_regions_should_name_the_fix(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_err err;
    write_file("plain3.node", tetgen_node);
    const char *mesh = write_file("plain3.ele", "5 4\n1 2 1 6 4\n2 3 1 4 7\n3 5 1 7 6\n"
                                                "4 8 4 6 7\n5 1 4 7 6\n");
    assert_int_equal(mlc_mesh_read(mesh, &m, NULL, &err), MLC_OK);
    assert_null(m.tet_tag);
    mlc_config cfg;
    mlc_config_defaults(&cfg);
    mlc_regions r = {0};
    if (mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_string_equal(r.source, "none"); /* without local modes: one region, as before */
    mlc_regions_free(&r);
    cfg.actuation.local_modes = 2;
    assert_int_equal(mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err), MLC_EINVAL);
    if (!strstr(err.msg, "carries no region labels") || !strstr(err.msg, "regions.auto=K") ||
        !strstr(err.msg, "regions.file=LABELS"))
        fail_msg("%s", err.msg);
    assert_null(r.tet_region);
    int tags[5] = {4, 4, 4, 4, 4};
    m.tet_tag = tags;
    assert_int_equal(mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err), MLC_EINVAL);
    if (!strstr(err.msg, "labels every tet 4")) fail_msg("%s", err.msg);
    tags[3] = 5; /* two labels: two regions */
    if (mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_int_equal(r.nregions, 2);
    mlc_regions_free(&r);
    m.tet_tag = NULL;
    mlc_fem fem;
    assert_int_equal(mlc_fem_init(&fem, &m, &err), MLC_OK);
    cfg.regions.automatic = 1;
    if (mlc_regions_resolve(&cfg, &m, NULL, &fem, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_int_equal(r.nregions, 1);
    assert_string_equal(r.source, "auto");
    mlc_regions_free(&r);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

static void bad_labels_should_fail_with_file_line_and_fix(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_err err;
    const char *mesh = write_file("bad.mesh", medit_cube);
    assert_int_equal(mlc_mesh_read(mesh, &m, NULL, &err), MLC_OK);
    mlc_config cfg;
    mlc_config_defaults(&cfg);
    mlc_regions r = {0};
    /* missing file */
    snprintf(cfg.regions.file, sizeof cfg.regions.file, "%s/none.txt", tmpdir);
    assert_int_equal(mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "none.txt"));
    assert_non_null(strstr(err.msg, "regions.file"));
    /* wrong count */
    const char *six = write_file("six.txt", "1\n2\n3\n4\n5\n6\n");
    snprintf(cfg.regions.file, sizeof cfg.regions.file, "%s", six);
    assert_int_equal(mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "6 labels"));
    assert_non_null(strstr(err.msg, "one per tet (5) or one per vertex (8)"));
    /* not an integer, on line 3 */
    const char *word = write_file("word.txt", "1\n2\nleg\n4\n5\n");
    snprintf(cfg.regions.file, sizeof cfg.regions.file, "%s", word);
    assert_int_equal(mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "word.txt:3:"));
    assert_non_null(strstr(err.msg, "'leg'"));
    const char *half = write_file("half.txt", "1\n2\n3.5\n4\n5\n");
    snprintf(cfg.regions.file, sizeof cfg.regions.file, "%s", half);
    assert_int_equal(mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "half.txt:3:"));
    /* file and auto together */
    cfg.regions.automatic = 2;
    assert_int_equal(mlc_regions_resolve(&cfg, &m, NULL, NULL, &r, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "both"));
    /* a material for a label no region has: the error lists the labels there are */
    mlc_config_defaults(&cfg);
    assert_int_equal(mlc_config_set(&cfg, "material.regions={\"5\": {\"mu\": 2e6}}", &err), MLC_OK);
    resolve_default(&m, NULL, &r);
    mlc_fem fem;
    assert_int_equal(mlc_fem_init(&fem, &m, &err), MLC_OK);
    mlc_region_materials mat;
    assert_int_equal(mlc_region_materials_build(&r, &cfg, &m, &fem, &mat, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "region 5"));
    assert_non_null(strstr(err.msg, "-2, 3, 7"));
    mlc_fem_free(&fem);
    mlc_regions_free(&r);
    mlc_mesh_free(&m);
}

/* Labels stay with their tets when reading repairs the mesh: an inverted tet is flipped and
 * an unreferenced vertex dropped. Per-vertex labels of such a file cannot be matched. */
static void labels_should_survive_repair(void **state) {
    (void)state;
    const char *path = write_file(
        "repair.mesh",
        "MeshVersionFormatted 1\nDimension 3\nVertices\n9\n"
        "0 0 0 0\n1 0 0 0\n0 1 0 0\n1 1 0 0\n9 9 9 0\n0 0 1 0\n1 0 1 0\n0 1 1 0\n1 1 1 0\n"
        "Tetrahedra\n5\n2 1 7 4 7\n3 1 4 8 7\n6 1 7 8 3\n9 4 7 8 3\n1 4 7 8 -2\nEnd\n");
    mlc_mesh m = {0};
    mlc_mesh_report rep;
    mlc_err err;
    if (mlc_mesh_read(path, &m, &rep, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_int_equal(rep.dropped_vertices, 1);
    assert_true(rep.flipped_tets >= 1); /* the tets list vertices in the other order here */
    mlc_regions r = {0};
    resolve_default(&m, &rep, &r);
    check_cube_regions(&m, &r, "mesh");
    mlc_regions_free(&r);
    mlc_config cfg;
    mlc_config_defaults(&cfg);
    const char *nine = write_file("nine.txt", "1\n1\n1\n1\n1\n2\n2\n2\n2\n");
    snprintf(cfg.regions.file, sizeof cfg.regions.file, "%s", nine);
    assert_int_equal(mlc_regions_resolve(&cfg, &m, &rep, NULL, &r, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "were dropped"));
    mlc_mesh_free(&m);
}

/* A mesh of data/ and its FEM data. */
static void read_bundled(const char *name, mlc_mesh *m, mlc_fem *fem) {
    char path[512];
    mlc_err err;
    snprintf(path, sizeof path, "%s/../../data/%s", MLC_TEST_DATA, name);
    if (mlc_mesh_read(path, m, NULL, &err) != MLC_OK) fail_msg("%s", err.msg);
    assert_int_equal(mlc_fem_init(fem, m, &err), MLC_OK);
}

/* The bundled quadruped: each foot (the lowest tet of each quadrant of the ground plane)
 * lies in its own automatic region. */
static void auto_regions_should_separate_the_legs(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem;
    mlc_err err;
    read_bundled("quadruped.mesh", &m, &fem);
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int i = 0; i < m.nv; i++)
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], m.X[3 * i + k]), hi[k] = fmax(hi[k], m.X[3 * i + k]);
    int foot[4] = {-1, -1, -1, -1};
    double fy[4];
    for (int e = 0; e < m.nt; e++) {
        double c[3] = {0, 0, 0};
        for (int a = 0; a < 4; a++)
            for (int k = 0; k < 3; k++)
                c[k] += 0.25 * m.X[3 * m.T[4 * e + a] + k];
        int q = (c[0] > 0.5 * (lo[0] + hi[0])) + 2 * (c[2] > 0.5 * (lo[2] + hi[2]));
        if (foot[q] < 0 || c[1] < fy[q]) foot[q] = e, fy[q] = c[1];
    }
    mlc_regions r = {0};
    if (mlc_regions_auto(&m, &fem, 9, 1, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    print_message("auto regions on the quadruped: %d; feet in regions %d %d %d %d\n", r.nregions,
                  r.tet_region[foot[0]], r.tet_region[foot[1]], r.tet_region[foot[2]],
                  r.tet_region[foot[3]]);
    assert_string_equal(r.source, "auto");
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < a; b++)
            assert_int_not_equal(r.tet_region[foot[a]], r.tet_region[foot[b]]);
    mlc_regions_free(&r);
    assert_int_equal(mlc_regions_auto(&m, &fem, m.nt + 1, 1, &r, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "regions.auto"));
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* The bundled octopod: its mesh labels are one region per leg and the body; the tip tet of
 * every leg (its lowest tet) lies in its own automatic region, and automatic regions follow
 * the legs: most of each leg's tets share the region of its tip. */
static void auto_regions_should_separate_the_octopod_legs(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem;
    mlc_err err;
    read_bundled("octopod.mesh", &m, &fem);
    mlc_regions mesh_regions = {0};
    resolve_default(&m, NULL, &mesh_regions);
    assert_string_equal(mesh_regions.source, "mesh");
    assert_int_equal(mesh_regions.nregions, 9);
    int tip[9];
    double ty[9];
    for (int l = 0; l < 9; l++)
        tip[l] = -1;
    for (int e = 0; e < m.nt; e++) {
        double cy = 0;
        for (int a = 0; a < 4; a++)
            cy += 0.25 * m.X[3 * m.T[4 * e + a] + 1];
        int l = m.tet_tag[e];
        if (tip[l] < 0 || cy < ty[l]) tip[l] = e, ty[l] = cy;
    }
    mlc_regions r = {0};
    if (mlc_regions_auto(&m, &fem, AUTO_K, 1, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    int same = 0, legs = 0;
    for (int e = 0; e < m.nt; e++)
        if (m.tet_tag[e] > 0) legs++, same += r.tet_region[e] == r.tet_region[tip[m.tet_tag[e]]];
    print_message(
        "octopod auto regions (K = %d): %d found; tips in regions %d %d %d %d %d %d %d %d; "
        "%.0f%% of the leg tets share their tip's region\n",
        AUTO_K, r.nregions, r.tet_region[tip[1]], r.tet_region[tip[2]], r.tet_region[tip[3]],
        r.tet_region[tip[4]], r.tet_region[tip[5]], r.tet_region[tip[6]], r.tet_region[tip[7]],
        r.tet_region[tip[8]], 100.0 * same / legs);
    for (int a = 1; a <= 8; a++)
        for (int b = 1; b < a; b++)
            assert_int_not_equal(r.tet_region[tip[a]], r.tet_region[tip[b]]);
    assert_true(same >= 0.75 * legs);
    mlc_regions_free(&r);
    mlc_regions_free(&mesh_regions);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* Agreement of regions r with the true labels lab[] (0 the body, 1..8 the limbs): for limb l,
 * share[l] is the fraction of its tets in its dominant region dom[l], and purity[l] the
 * fraction of that region's tets that belong to limb l. */
static void limb_agreement(int nt, const int *lab, const mlc_regions *r, int dom[9],
                           double share[9], double purity[9]) {
    int K = r->nregions;
    int *n = calloc((size_t)9 * K, sizeof(int)); /* n[l*K + k]: tets of limb l in region k */
    int *size = calloc((size_t)K, sizeof(int));
    assert_non_null(n);
    assert_non_null(size);
    for (int e = 0; e < nt; e++) {
        assert_true(lab[e] >= 0 && lab[e] <= 8);
        n[lab[e] * K + r->tet_region[e]]++;
        size[r->tet_region[e]]++;
    }
    for (int l = 1; l <= 8; l++) {
        int best = 0, total = 0;
        for (int k = 0; k < K; k++) {
            total += n[l * K + k];
            if (n[l * K + k] > n[l * K + best]) best = k;
        }
        dom[l] = best;
        share[l] = (double)n[l * K + best] / total;
        purity[l] = (double)n[l * K + best] / size[best];
    }
    free(n);
    free(size);
}

/* The bundled octopus (data/octopus.mesh.gz, 48,648 tets) with its labels removed: nine
 * automatic regions find the eight tentacles. Each tentacle's dominant region is its own (a
 * different one for each), at least 95% of that region is the tentacle (it takes in no mantle
 * and no other tentacle), and it holds at least 80% of the tentacle: the labels put the joint
 * at the mantle's ellipsoid, inside the web where neighbouring tentacles meet, and the regions
 * end a little further out (k-means alone cut at 63%, halfway along the tentacle). */
static void auto_regions_should_find_the_octopus_tentacles(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem;
    mlc_err err;
    read_bundled("octopus.mesh.gz", &m, &fem);
    assert_non_null(m.tet_tag);
    int *truth = m.tet_tag;
    m.tet_tag = NULL; /* an unlabelled file: regions.auto sees the geometry only */
    mlc_regions r = {0};
    if (mlc_regions_auto(&m, &fem, 9, 1, &r, &err) != MLC_OK) fail_msg("%s", err.msg);
    int dom[9];
    double share[9], purity[9];
    limb_agreement(m.nt, truth, &r, dom, share, purity);
    for (int l = 1; l <= 8; l++)
        print_message("octopus tentacle %d: region %d holds %.1f%% of it, %.1f%% of the region "
                      "is the tentacle\n",
                      l, dom[l], 100 * share[l], 100 * purity[l]);
    print_message("octopus auto regions: %d\n", r.nregions);
    for (int a = 1; a <= 8; a++) {
        assert_true(share[a] >= 0.8);
        assert_true(purity[a] >= 0.95);
        for (int b = 1; b < a; b++)
            assert_int_not_equal(dom[a], dom[b]);
    }
    mlc_regions_free(&r);
    mlc_free(truth);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* ---- materials ------------------------------------------------------------------------ */

/* A bar of 8×2×2 voxels of 0.1 (0.8 × 0.2 × 0.2) along x, on the ground: region 1 (x < 0.4)
 * and region 2. */
typedef struct bar {
    mlc_mesh mesh;
    mlc_fem fem;
    mlc_regions regions;
    mlc_config cfg;
    mlc_region_materials mat;
    mlc_subspace sub;
} bar;

static void bar_init(bar *b, const char *materials) {
    memset(b, 0, sizeof *b);
    test_box_mesh(8, 2, 2, 0.1, &b->mesh);
    mlc_err err;
    assert_int_equal(mlc_fem_init(&b->fem, &b->mesh, &err), MLC_OK);
    int *lab = malloc(sizeof(int) * (size_t)b->mesh.nt);
    for (int e = 0; e < b->mesh.nt; e++) {
        double cx = 0;
        for (int a = 0; a < 4; a++)
            cx += 0.25 * b->mesh.X[3 * b->mesh.T[4 * e + a]];
        lab[e] = cx < 0.4 ? 1 : 2;
    }
    assert_int_equal(mlc_regions_from_labels(b->mesh.nt, lab, "file", &b->regions, &err), MLC_OK);
    free(lab);
    mlc_config_defaults(&b->cfg);
    const char *sets[] = {"material.mu=1e5", "material.gamma=1e5", "actuation.modes=2",
                          "sim.rayleigh=[20, 0]", "contact.friction=0.5"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        assert_int_equal(mlc_config_set(&b->cfg, sets[i], &err), MLC_OK);
    if (materials) {
        char set[300];
        snprintf(set, sizeof set, "material.regions=%s", materials);
        if (mlc_config_set(&b->cfg, set, &err) != MLC_OK) fail_msg("%s", err.msg);
    }
    if (mlc_region_materials_build(&b->regions, &b->cfg, &b->mesh, &b->fem, &b->mat, &err) !=
        MLC_OK)
        fail_msg("%s", err.msg);
    mlc_subspace_settings ss;
    mlc_pipeline_subspace_settings(&b->cfg, &ss);
    ss.tet_stiffness = b->mat.stiffness, ss.vertex_mass = b->mat.vertex_mass;
    ss.tet_region = b->regions.tet_region, ss.nregions = b->regions.nregions;
    if (mlc_subspace_compute(&b->mesh, &b->fem, &ss, &b->sub, &err) != MLC_OK)
        fail_msg("%s", err.msg);
}

static void bar_free(bar *b) {
    mlc_subspace_free(&b->sub);
    mlc_region_materials_free(&b->mat);
    mlc_regions_free(&b->regions);
    mlc_fem_free(&b->fem);
    mlc_mesh_free(&b->mesh);
}

static mlc_model *bar_model(const bar *b, const mlc_materials *mat) {
    mlc_sim_settings set;
    mlc_pipeline_sim_settings(&b->cfg, &set);
    mlc_model *mod = NULL;
    mlc_err err;
    if (mlc_model_create_materials(&b->mesh, &b->fem, &b->sub, &set, mat, &mod, &err) != MLC_OK)
        fail_msg("%s", err.msg);
    return mod;
}

static void mass_should_be_the_dense_sum_of_region_densities(void **state) {
    (void)state;
    bar b;
    bar_init(&b, "{\"2\": {\"density\": 3000}}");
    assert_int_equal(b.mat.uniform, 0);
    double dense = 0; /* Σ_e ρ_e V_e, tet by tet */
    for (int e = 0; e < b.mesh.nt; e++)
        dense += (b.regions.tet_region[e] == 1 ? 3000.0 : 1000.0) * b.fem.vol[e];
    mlc_materials view = mlc_region_materials_view(&b.mat);
    mlc_model *mod = bar_model(&b, &view);
    print_message("mass: model %.17g, dense sum %.17g (0.8 × 0.04 m³ at 1000 and 3000)\n",
                  mlc_model_mass(mod), dense);
    assert_rel(mlc_model_mass(mod), dense, 1e-13, 0);
    assert_rel(dense, 0.016 * 1000 + 0.016 * 3000, 1e-12, 0);
    /* The subspace's mass is the same in units of material.density. */
    double vm = 0;
    for (int i = 0; i < b.mesh.nv; i++)
        vm += b.mat.vertex_mass[i];
    assert_rel(vm * 1000, dense, 1e-13, 0);
    mlc_model_destroy(mod);
    bar_free(&b);
}

/* Run a rollout of `steps` without actuation; z out (r values). */
static void rollout_rest(const mlc_model *mod, int steps, double *z) {
    mlc_rollout *ro = NULL;
    assert_int_equal(mlc_rollout_create(mod, &ro), MLC_OK);
    for (int s = 0; s < steps; s++)
        assert_int_equal(mlc_rollout_step(ro, NULL), 0);
    memcpy(z, mlc_rollout_state(ro), sizeof(double) * (size_t)mlc_model_dim(mod));
    mlc_rollout_destroy(ro);
}

static void one_material_per_tet_should_give_the_same_bits(void **state) {
    (void)state;
    bar b;
    bar_init(&b, NULL);
    assert_int_equal(b.mat.uniform, 1);
    assert_null(b.mat.mu);
    int nt = b.mesh.nt;
    double *mu = malloc(sizeof(double) * nt), *ga = malloc(sizeof(double) * nt);
    double *fr = malloc(sizeof(double) * b.mesh.nv);
    for (int e = 0; e < nt; e++)
        mu[e] = b.cfg.material.mu, ga[e] = b.cfg.material.gamma;
    for (int i = 0; i < b.mesh.nv; i++)
        fr[i] = b.cfg.contact.friction;
    mlc_materials per_tet = {mu, ga, NULL, fr};
    mlc_model *m0 = bar_model(&b, NULL), *m1 = bar_model(&b, &per_tet);
    int r = mlc_model_dim(m0);
    double *z0 = malloc(sizeof(double) * r), *z1 = malloc(sizeof(double) * r);
    rollout_rest(m0, 60, z0);
    rollout_rest(m1, 60, z1);
    assert_memory_equal(z0, z1, sizeof(double) * r);
    free(z0), free(z1), free(mu), free(ga), free(fr);
    mlc_model_destroy(m0);
    mlc_model_destroy(m1);
    bar_free(&b);
}

/* Squash of the top of each half: rest height 0.2 minus the mean y of the top vertices. */
static void half_squash(const mlc_mesh *mesh, const double *x, double sq[2]) {
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    for (int i = 0; i < mesh->nv; i++) {
        const double *X = mesh->X + 3 * i;
        if (X[1] < 0.2 - 1e-9 || fabs(X[0] - 0.4) < 1e-9 || X[0] < 0.05 || X[0] > 0.75) continue;
        int h = X[0] > 0.4;
        sum[h] += x[3 * i + 1], n[h]++;
    }
    for (int h = 0; h < 2; h++)
        sq[h] = 0.2 - sum[h] / n[h];
}

static void bar_squash(const char *materials, int full, double sq[2]) {
    bar b;
    bar_init(&b, materials);
    mlc_materials view = mlc_region_materials_view(&b.mat);
    double *x = malloc(sizeof(double) * 3 * (size_t)b.mesh.nv);
    mlc_err err;
    if (!full) {
        mlc_model *mod = bar_model(&b, &view);
        double *z = malloc(sizeof(double) * (size_t)mlc_model_dim(mod));
        rollout_rest(mod, 150, z);
        mlc_model_skin(mod, z, b.mesh.nv, NULL, x);
        free(z);
        mlc_model_destroy(mod);
    } else {
        mlc_sim_settings set;
        mlc_pipeline_sim_settings(&b.cfg, &set);
        mlc_fullspace *fs = NULL;
        if (mlc_fullspace_create_materials(&b.mesh, &b.fem, &b.sub, &set, 1, &view, &fs, &err) !=
            MLC_OK)
            fail_msg("%s", err.msg);
        for (int s = 0; s < 150; s++)
            assert_int_equal(mlc_fullspace_step(fs, NULL), 0);
        memcpy(x, mlc_fullspace_state(fs), sizeof(double) * 3 * (size_t)b.mesh.nv);
        mlc_fullspace_destroy(fs);
    }
    half_squash(&b.mesh, x, sq);
    free(x);
    bar_free(&b);
}

/* The bar slides along x from 1 m/s on its side: each contact sample brakes with the friction
 * of its region. All slippery (0.05) slides farthest, all grippy (1.0) least, and half and
 * half in between. */
static double bar_slide(const char *friction_left, const char *friction_right) {
    char mats[200];
    snprintf(mats, sizeof mats, "{\"1\": {\"friction\": %s}, \"2\": {\"friction\": %s}}",
             friction_left, friction_right);
    bar b;
    bar_init(&b, mats);
    b.cfg.sim.rayleigh[0] = 0; /* no drag: friction alone brakes */
    mlc_materials view = mlc_region_materials_view(&b.mat);
    mlc_model *mod = bar_model(&b, &view);
    int r = mlc_model_dim(mod);
    double *z = malloc(sizeof(double) * r), *zp = malloc(sizeof(double) * r);
    mlc_model_rest_state(mod, z);
    memcpy(zp, z, sizeof(double) * r);
    zp[3] -= 1.0 * 0.01 / b.sub.W[0]; /* x translation of z_prev: velocity +1 m/s along x */
    mlc_rollout *ro = NULL;
    assert_int_equal(mlc_rollout_create(mod, &ro), MLC_OK);
    mlc_rollout_set_state(ro, z, zp);
    double c0[3], c1[3];
    mlc_model_com(mod, z, c0);
    for (int s = 0; s < 50; s++)
        assert_int_equal(mlc_rollout_step(ro, NULL), 0);
    mlc_model_com(mod, mlc_rollout_state(ro), c1);
    mlc_rollout_destroy(ro);
    mlc_model_destroy(mod);
    free(z), free(zp);
    bar_free(&b);
    return c1[0] - c0[0];
}

static void friction_should_follow_the_region_of_each_sample(void **state) {
    (void)state;
    double slip = bar_slide("0.05", "0.05"), grip = bar_slide("1.0", "1.0");
    double half = bar_slide("0.05", "1.0");
    print_message("slide in 0.5 s from 1 m/s: friction 0.05 everywhere %.4f m, 1.0 everywhere "
                  "%.4f m, 0.05 on one half and 1.0 on the other %.4f m\n",
                  slip, grip, half);
    assert_true(slip > grip + 0.05);
    assert_true(half > grip + 0.01 && half < slip - 0.01);
}

/* The precompute cache key: unchanged without regions, changed by materials and by labels. */
static void cache_key_should_follow_materials_and_labels(void **state) {
    (void)state;
    bar b;
    bar_init(&b, "{\"1\": {\"mu\": 2e6}}");
    mlc_subspace_settings ss;
    mlc_pipeline_subspace_settings(&b.cfg, &ss);
    uint64_t plain = mlc_subspace_cache_key(&b.mesh, &ss);
    ss.tet_region = b.regions.tet_region, ss.nregions = b.regions.nregions;
    uint64_t labels = mlc_subspace_cache_key(&b.mesh, &ss);
    ss.tet_stiffness = b.mat.stiffness, ss.vertex_mass = b.mat.vertex_mass;
    uint64_t mats = mlc_subspace_cache_key(&b.mesh, &ss);
    b.mat.stiffness[0] *= 2;
    uint64_t mats2 = mlc_subspace_cache_key(&b.mesh, &ss);
    b.regions.tet_region[0] = 1 - b.regions.tet_region[0];
    uint64_t labels2 = mlc_subspace_cache_key(&b.mesh, &ss);
    assert_true(plain != labels && labels != mats && mats != mats2 && mats2 != labels2);
    ss.tet_region = NULL, ss.nregions = 0, ss.tet_stiffness = NULL, ss.vertex_mass = NULL;
    assert_true(mlc_subspace_cache_key(&b.mesh, &ss) == plain);
    bar_free(&b);
}

static void stiff_half_should_squash_less_than_soft_half(void **state) {
    (void)state;
    const char *two =
        "{\"1\": {\"mu\": 1e6, \"gamma\": 1e6}, \"2\": {\"mu\": 1e4, \"gamma\": 1e4}}";
    for (int full = 0; full < 2; full++) {
        double uni[2], mixed[2];
        bar_squash(NULL, full, uni);
        bar_squash(two, full, mixed);
        print_message("%s: top squash (m) one material: left %.3e, right %.3e; stiff left "
                      "(mu = gamma = 1e6), soft right (1e4): left %.3e, right %.3e\n",
                      full ? "full space" : "reduced", uni[0], uni[1], mixed[0], mixed[1]);
        /* One material: both halves alike (the bar is symmetric). */
        assert_rel(uni[0], uni[1], 0.1, 1e-6);
        assert_true(uni[0] > 0);
        /* Two: the soft half squashes more than the one-material bar, the stiff half less,
         * and the soft half several times more than the stiff one. */
        assert_true(mixed[1] > uni[1]);
        assert_true(mixed[0] < uni[0]);
        assert_true(mixed[1] > 3 * mixed[0]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(labels_should_be_read_from_every_format),
        cmocka_unit_test(label_files_should_give_regions_per_tet_and_per_vertex),
        cmocka_unit_test(labels_should_survive_repair),
        cmocka_unit_test(bad_labels_should_fail_with_file_line_and_fix),
        cmocka_unit_test(local_modes_without_regions_should_name_the_fix),
        cmocka_unit_test(auto_regions_should_separate_the_legs),
        cmocka_unit_test(auto_regions_should_separate_the_octopod_legs),
        cmocka_unit_test(auto_regions_should_find_the_octopus_tentacles),
        cmocka_unit_test(mass_should_be_the_dense_sum_of_region_densities),
        cmocka_unit_test(one_material_per_tet_should_give_the_same_bits),
        cmocka_unit_test(friction_should_follow_the_region_of_each_sample),
        cmocka_unit_test(cache_key_should_follow_materials_and_labels),
        cmocka_unit_test(stiff_half_should_squash_less_than_soft_half),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
