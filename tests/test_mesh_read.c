/* test_mesh_read.c: mlc_mesh_read for every format and every input error of docs/errors.md.
 * Tet formats are written from one box mesh into a temp dir and must read back identically;
 * surfaces of a cube go through tetgen (skipped when tetgen is absent) and must give the cube's
 * volume with a closed, outward boundary. Malformed files must fail cleanly (EPARSE with a
 * line) without leaks or crashes, including every truncation of a valid file. */
#include "test_util.h"

#include "gzip.h"
#include "internal/mesh_lexer.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[512];

/* ---- Helpers ---------------------------------------------------------------------------- */
static void rm_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rm_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mlc-test-mesh-read-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    rm_tree(tmpdir);
    return 0;
}

/* Path of a file in the temp dir (a few rotating buffers so several can be live). */
static const char *tpath(const char *name) {
    static char buf[64][1024];
    static int i;
    char *p = buf[i++ % 64];
    snprintf(p, 1024, "%s/%s", tmpdir, name);
    return p;
}

static const char *write_bytes(const char *name, const void *data, size_t n) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return p;
}

static const char *write_text(const char *name, const char *text) {
    return write_bytes(name, text, strlen(text));
}

static int tetgen_available(void) {
    const char *path = getenv("PATH");
    char buf[1024];
    if (!path) return 0;
    while (*path) {
        const char *c = strchr(path, ':');
        size_t len = c ? (size_t)(c - path) : strlen(path);
        snprintf(buf, sizeof buf, "%.*s/tetgen", (int)len, path);
        if (access(buf, X_OK) == 0) return 1;
        path += len + (c ? 1 : 0);
    }
    return 0;
}

#define SKIP_WITHOUT_TETGEN()                                                                      \
    do {                                                                                           \
        if (!tetgen_available()) {                                                                 \
            print_message("tetgen is not installed (apt-get install tetgen): skipping\n");         \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static double mesh_volume(const mlc_mesh *m) {
    mlc_mesh_stats s;
    mlc_mesh_compute_stats(m, &s);
    return s.volume;
}

/* Every tet positive, and the boundary closed and outward: by the divergence theorem
 * ∮ x·n dA / 3 equals the volume only if every boundary triangle appears once, wound out. */
static void check_valid(const mlc_mesh *m, double volume, double tol) {
    double vol = 0, flux = 0;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * e;
        const double *a = m->X + 3 * t[0], *b = m->X + 3 * t[1], *c = m->X + 3 * t[2],
                     *d = m->X + 3 * t[3];
        double u[3], v[3], w[3];
        for (int k = 0; k < 3; k++)
            u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
        double v6 = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
                    u[2] * (v[0] * w[1] - v[1] * w[0]);
        assert_true(v6 > 0);
        vol += v6 / 6;
    }
    for (int f = 0; f < m->nf; f++) {
        const double *a = m->X + 3 * m->F[3 * f], *b = m->X + 3 * m->F[3 * f + 1],
                     *c = m->X + 3 * m->F[3 * f + 2];
        double u[3], v[3], n[3];
        for (int k = 0; k < 3; k++)
            u[k] = b[k] - a[k], v[k] = c[k] - a[k];
        n[0] = u[1] * v[2] - u[2] * v[1];
        n[1] = u[2] * v[0] - u[0] * v[2];
        n[2] = u[0] * v[1] - u[1] * v[0];
        flux += (a[0] * n[0] + a[1] * n[1] + a[2] * n[2]) / 6.0;
    }
    assert_near(vol, volume, tol);
    assert_near(mesh_volume(m), volume, tol);
    assert_near(flux, volume, tol);
}

/* Read a file that must fail with `code` and a message containing `needle`; no leak. */
static void expect_error(const char *path, mlc_status code, const char *needle) {
    long live = mlc_alloc_live();
    mlc_mesh m = {0};
    mlc_mesh_report r;
    mlc_err err = {0};
    mlc_status s = mlc_mesh_read(path, &m, &r, &err);
    if (s != code) fail_msg("%s: status %d, expected %d: %s", path, s, code, err.msg);
    if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_null(m.X);
    assert_null(m.T);
    assert_int_equal(mlc_alloc_live(), live);
}

static void read_ok(const char *path, mlc_mesh *m, mlc_mesh_report *r) {
    mlc_err err = {0};
    mlc_status s = mlc_mesh_read(path, m, r, &err);
    if (s != MLC_OK) fail_msg("%s: %s", path, err.msg);
}

/* ---- Writers of the tet formats --------------------------------------------------------- */
static const char *write_medit(const char *name, const mlc_mesh *m) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "w");
    fprintf(f, "MeshVersionFormatted 2\n# written by the test\ndimension\n3\n\nvertices\n%d\n",
            m->nv);
    for (int i = 0; i < m->nv; i++)
        fprintf(f, "%.17g %.17g %.17g 0\n", m->X[3 * i], m->X[3 * i + 1], m->X[3 * i + 2]);
    /* Sections the reader must skip. */
    fprintf(f, "Triangles\n1\n1 2 3 7\nEdges\n1\n1 2 0\nCorners\n1\n1\n");
    fprintf(f, "TETRAHEDRA\n%d\n", m->nt);
    for (int e = 0; e < m->nt; e++)
        fprintf(f, "%d %d %d %d 1\n", m->T[4 * e] + 1, m->T[4 * e + 1] + 1, m->T[4 * e + 2] + 1,
                m->T[4 * e + 3] + 1);
    fprintf(f, "End\n");
    fclose(f);
    return p;
}

/* 1-based TetGen files with attributes, markers and comments everywhere. */
static const char *write_tetgen(const char *stem, const mlc_mesh *m, int trailing_comment) {
    char name[256];
    snprintf(name, sizeof name, "%s.node", stem);
    FILE *f = fopen(tpath(name), "w");
    fprintf(f, "# nodes\n%d 3 1 1\n", m->nv);
    for (int i = 0; i < m->nv; i++)
        fprintf(f, "%d %.17g %.17g %.17g 0.5 1%s\n", i + 1, m->X[3 * i], m->X[3 * i + 1],
                m->X[3 * i + 2], i == 2 ? " # a comment" : "");
    if (trailing_comment) fprintf(f, "# Generated by tetgen -pYq1.414 cube.off\n");
    fclose(f);
    snprintf(name, sizeof name, "%s.ele", stem);
    f = fopen(tpath(name), "w");
    fprintf(f, "%d 4 1\n# tets\n", m->nt);
    for (int e = 0; e < m->nt; e++)
        fprintf(f, "%d %d %d %d %d 3\n", e + 1, m->T[4 * e] + 1, m->T[4 * e + 1] + 1,
                m->T[4 * e + 2] + 1, m->T[4 * e + 3] + 1);
    if (trailing_comment) fprintf(f, "# Generated by tetgen -pYq1.414 cube.off\n");
    fclose(f);
    snprintf(name, sizeof name, "%s.node", stem);
    return tpath(name);
}

static long long node_tag(int i) {
    return 3LL * i + 5;
} /* sparse, not starting at 1 */

static const char *write_msh2(const char *name, const mlc_mesh *m) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "w");
    fprintf(f,
            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 1 \"body\"\n"
            "$EndPhysicalNames\n$Nodes\n%d\n",
            m->nv);
    for (int i = 0; i < m->nv; i++)
        fprintf(f, "%lld %.17g %.17g %.17g\n", node_tag(i), m->X[3 * i], m->X[3 * i + 1],
                m->X[3 * i + 2]);
    fprintf(f, "$EndNodes\n$Elements\n%d\n", m->nt + 2);
    fprintf(f, "1 15 2 0 1 %lld\n", node_tag(0));
    fprintf(f, "2 2 2 0 1 %lld %lld %lld\n", node_tag(0), node_tag(1), node_tag(2));
    for (int e = 0; e < m->nt; e++)
        fprintf(f, "%d 4 2 1 1 %lld %lld %lld %lld\n", e + 3, node_tag(m->T[4 * e]),
                node_tag(m->T[4 * e + 1]), node_tag(m->T[4 * e + 2]), node_tag(m->T[4 * e + 3]));
    fprintf(f, "$EndElements\n");
    fclose(f);
    return p;
}

static void put_i32(FILE *f, int v) {
    int32_t x = v;
    fwrite(&x, 4, 1, f);
}

static const char *write_msh2_binary(const char *name, const mlc_mesh *m) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "wb");
    fprintf(f, "$MeshFormat\n2.2 1 8\n");
    put_i32(f, 1);
    fprintf(f, "\n$EndMeshFormat\n$Nodes\n%d\n", m->nv);
    for (int i = 0; i < m->nv; i++) {
        put_i32(f, (int)node_tag(i));
        fwrite(m->X + 3 * i, 8, 3, f);
    }
    fprintf(f, "\n$EndNodes\n$Elements\n%d\n", m->nt + 1);
    put_i32(f, 2), put_i32(f, 1), put_i32(f, 2); /* one triangle, two tags */
    put_i32(f, 1), put_i32(f, 0), put_i32(f, 1);
    for (int k = 0; k < 3; k++)
        put_i32(f, (int)node_tag(k));
    put_i32(f, 4), put_i32(f, m->nt), put_i32(f, 2);
    for (int e = 0; e < m->nt; e++) {
        put_i32(f, e + 2), put_i32(f, 1), put_i32(f, 1);
        for (int k = 0; k < 4; k++)
            put_i32(f, (int)node_tag(m->T[4 * e + k]));
    }
    fprintf(f, "\n$EndElements\n");
    fclose(f);
    return p;
}

static const char *write_msh4(const char *name, const mlc_mesh *m) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "w");
    int n1 = m->nv / 2, n2 = m->nv - n1;
    fprintf(f,
            "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 0 1\n1 0 0 0 1 1 1 0 0\n"
            "$EndEntities\n$Nodes\n2 %d %lld %lld\n",
            m->nv, node_tag(0), node_tag(m->nv - 1));
    /* Two blocks; the second is parametric on a 2D entity (u v after x y z). */
    fprintf(f, "3 1 0 %d\n", n1);
    for (int i = 0; i < n1; i++)
        fprintf(f, "%lld\n", node_tag(i));
    for (int i = 0; i < n1; i++)
        fprintf(f, "%.17g %.17g %.17g\n", m->X[3 * i], m->X[3 * i + 1], m->X[3 * i + 2]);
    fprintf(f, "2 1 1 %d\n", n2);
    for (int i = n1; i < m->nv; i++)
        fprintf(f, "%lld\n", node_tag(i));
    for (int i = n1; i < m->nv; i++)
        fprintf(f, "%.17g %.17g %.17g 0.25 0.75\n", m->X[3 * i], m->X[3 * i + 1], m->X[3 * i + 2]);
    fprintf(f, "$EndNodes\n$Elements\n2 %d 1 %d\n", m->nt + 1, m->nt + 1);
    fprintf(f, "2 1 2 1\n1 %lld %lld %lld\n", node_tag(0), node_tag(1), node_tag(2));
    fprintf(f, "3 1 4 %d\n", m->nt);
    for (int e = 0; e < m->nt; e++)
        fprintf(f, "%d %lld %lld %lld %lld\n", e + 2, node_tag(m->T[4 * e]),
                node_tag(m->T[4 * e + 1]), node_tag(m->T[4 * e + 2]), node_tag(m->T[4 * e + 3]));
    fprintf(f, "$EndElements\n");
    fclose(f);
    return p;
}

/* ---- Writers of the cube surface (offset so nothing sits at the origin) ------------------- */
static const double cube_v[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                    {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
static const int cube_q[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                 {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
static const double cube_off[3] = {0.25, -0.5, 1.0};

static double cv(int i, int k) {
    return cube_v[i][k] + cube_off[k];
}

static const char *write_cube_off(const char *name, double shift) {
    char text[4096];
    int n = snprintf(text, sizeof text, "OFF\n# a cube of quads\n8 6 0\n");
    for (int i = 0; i < 8; i++)
        n += snprintf(text + n, sizeof text - n, "%.17g %.17g %.17g\n", cv(i, 0) + shift,
                      cv(i, 1) + shift, cv(i, 2) + shift);
    for (int q = 0; q < 6; q++)
        n += snprintf(text + n, sizeof text - n, "4 %d %d %d %d\n", cube_q[q][0], cube_q[q][1],
                      cube_q[q][2], cube_q[q][3]);
    return write_text(name, text);
}

static const char *write_cube_obj(const char *name) {
    char text[4096];
    int n = snprintf(text, sizeof text, "# cube\nmtllib x.mtl\no cube\n");
    for (int i = 0; i < 8; i++)
        n += snprintf(text + n, sizeof text - n, "v %.17g %.17g %.17g\n", cv(i, 0), cv(i, 1),
                      cv(i, 2));
    n += snprintf(text + n, sizeof text - n, "vt 0 0\nvn 0 0 1\ns off\n");
    for (int q = 0; q < 6; q++) {
        const int *c = cube_q[q];
        if (q % 3 == 0)
            n += snprintf(text + n, sizeof text - n, "f %d %d %d %d\n", c[0] + 1, c[1] + 1,
                          c[2] + 1, c[3] + 1);
        else if (q % 3 == 1) /* negative: relative to the 8 vertices so far */
            n += snprintf(text + n, sizeof text - n, "f %d/1 %d/1 %d/1 %d/1\n", c[0] - 8, c[1] - 8,
                          c[2] - 8, c[3] - 8);
        else
            n += snprintf(text + n, sizeof text - n, "f %d/1/1 %d//1 %d/1/1 %d//1\n", c[0] + 1,
                          c[1] + 1, c[2] + 1, c[3] + 1);
    }
    return write_text(name, text);
}

static void cube_tri(int t, int out[3]) {
    const int *c = cube_q[t / 2];
    out[0] = c[0];
    out[1] = t % 2 ? c[2] : c[1];
    out[2] = t % 2 ? c[3] : c[2];
}

static const char *write_cube_stl_ascii(const char *name) {
    char text[8192];
    int n = snprintf(text, sizeof text, "solid cube\n");
    for (int t = 0; t < 12; t++) {
        int v[3];
        cube_tri(t, v);
        n += snprintf(text + n, sizeof text - n, "  facet normal 0 0 0\n    outer loop\n");
        for (int k = 0; k < 3; k++)
            n += snprintf(text + n, sizeof text - n, "      vertex %.9g %.9g %.9g\n", cv(v[k], 0),
                          cv(v[k], 1), cv(v[k], 2));
        n += snprintf(text + n, sizeof text - n, "    endloop\n  endfacet\n");
    }
    snprintf(text + n, sizeof text - n, "endsolid cube\n");
    return write_text(name, text);
}

static const char *write_cube_stl_binary(const char *name) {
    unsigned char b[84 + 50 * 12];
    memset(b, 0, sizeof b);
    memcpy(b, "solid but actually binary", 25); /* exporters do this; size decides */
    b[80] = 12;
    for (int t = 0; t < 12; t++) {
        int v[3];
        cube_tri(t, v);
        for (int k = 0; k < 3; k++)
            for (int d = 0; d < 3; d++) {
                float x = (float)cv(v[k], d);
                memcpy(b + 84 + 50 * t + 12 + 12 * k + 4 * d, &x, 4); /* host is little-endian */
            }
    }
    return write_bytes(name, b, sizeof b);
}

static const char *write_cube_ply(const char *name) {
    char text[4096];
    int n = snprintf(text, sizeof text,
                     "ply\nformat ascii 1.0\ncomment made by the test\nelement vertex 8\n"
                     "property float x\nproperty uchar red\nproperty float y\nproperty float z\n"
                     "element face 6\nproperty list uchar int vertex_indices\nproperty int flags\n"
                     "element edge 1\nproperty int vertex1\nproperty int vertex2\nend_header\n");
    for (int i = 0; i < 8; i++)
        n += snprintf(text + n, sizeof text - n, "%.17g 255 %.17g %.17g\n", cv(i, 0), cv(i, 1),
                      cv(i, 2));
    for (int q = 0; q < 6; q++)
        n += snprintf(text + n, sizeof text - n, "4 %d %d %d %d 0\n", cube_q[q][0], cube_q[q][1],
                      cube_q[q][2], cube_q[q][3]);
    snprintf(text + n, sizeof text - n, "0 1\n");
    return write_text(name, text);
}

/* ---- Tests: formats ------------------------------------------------------------------------ */
static void tet_formats_should_agree_on_counts_and_volume(void **state) {
    (void)state;
    long live = mlc_alloc_live();
    mlc_mesh box = {0};
    test_box_mesh(2, 3, 2, 0.5, &box); /* 1 × 1.5 × 1 */
    const char *paths[] = {write_medit("mesh_box.mesh", &box),
                           write_tetgen("mesh_box", &box, 1),
                           tpath("mesh_box"),
                           tpath("mesh_box.ele"),
                           write_msh2("mesh_box2.msh", &box),
                           write_msh2_binary("mesh_box2b.msh", &box),
                           write_msh4("mesh_box4.msh", &box)};
    const char *formats[] = {"medit", "tetgen", "tetgen", "tetgen", "gmsh2", "gmsh2", "gmsh4"};
    for (int i = 0; i < 7; i++) {
        mlc_mesh m = {0};
        mlc_mesh_report r;
        read_ok(paths[i], &m, &r);
        assert_string_equal(r.format, formats[i]);
        assert_int_equal(r.tetrahedralized, 0);
        assert_int_equal(r.components, 1);
        assert_int_equal(r.flipped_tets, 0);
        assert_int_equal(r.dropped_vertices, 0);
        assert_int_equal(m.nv, box.nv);
        assert_int_equal(m.nt, box.nt);
        assert_int_equal(m.nf, box.nf);
        /* Vertex order and tets are preserved, so the content is identical. */
        assert_memory_equal(m.X, box.X, 3 * (size_t)box.nv * sizeof(double));
        assert_memory_equal(m.T, box.T, 4 * (size_t)box.nt * sizeof(int));
        check_valid(&m, 1.5, 1e-12);
        mlc_mesh_free(&m);
    }
    mlc_mesh_free(&box);
    assert_int_equal(mlc_alloc_live(), live);
}

static void committed_data_files_should_read(void **state) {
    (void)state;
    struct {
        const char *file, *format;
        int nv, nt;
        double volume;
    } cases[] = {
        {"mesh_cube5.mesh", "medit", 8, 5, 1.0},
        {"mesh_cube5.msh", "gmsh4", 8, 5, 1.0},
        {"mesh_cube5", "tetgen", 8, 5, 1.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", MLC_TEST_DATA, cases[i].file);
        mlc_mesh m = {0};
        mlc_mesh_report r;
        read_ok(p, &m, &r);
        assert_string_equal(r.format, cases[i].format);
        assert_int_equal(m.nv, cases[i].nv);
        assert_int_equal(m.nt, cases[i].nt);
        check_valid(&m, cases[i].volume, 1e-12);
        mlc_mesh_free(&m);
    }
}

static void surfaces_should_tetrahedralize_to_the_cube(void **state) {
    (void)state;
    SKIP_WITHOUT_TETGEN();
    long live = mlc_alloc_live();
    char data_off[1024];
    snprintf(data_off, sizeof data_off, "%s/mesh_cube.off", MLC_TEST_DATA);
    const char *paths[] = {
        write_cube_off("mesh_cube.off", 0),      write_cube_obj("mesh_cube.obj"),
        write_cube_stl_ascii("mesh_cube_a.stl"), write_cube_stl_binary("mesh_cube_b.stl"),
        write_cube_ply("mesh_cube.ply"),         data_off};
    const char *formats[] = {"off", "obj", "stl", "stl", "ply", "off"};
    for (int i = 0; i < 6; i++) {
        mlc_mesh m = {0};
        mlc_mesh_report r;
        read_ok(paths[i], &m, &r);
        assert_string_equal(r.format, formats[i]);
        assert_int_equal(r.tetrahedralized, 1);
        assert_int_equal(r.components, 1);
        assert_true(m.nv >= 8);
        assert_true(m.nt >= 5);
        /* -Y keeps the surface: 12 boundary triangles, the 8 corners first. */
        assert_int_equal(m.nf, 12);
        check_valid(&m, 1.0, 1e-9);
        mlc_mesh_stats s;
        mlc_mesh_compute_stats(&m, &s);
        for (int k = 0; k < 3; k++) { /* the committed cube is not offset */
            double lo = i == 5 ? 0.0 : cube_off[k];
            assert_near(s.bbox_min[k], lo, 1e-7);
            assert_near(s.bbox_max[k], lo + 1, 1e-7);
        }
        mlc_mesh_free(&m);
    }
    assert_int_equal(mlc_alloc_live(), live);
}

static long lines_in(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

static void assert_same_mesh(const mlc_mesh *a, const mlc_mesh *b) {
    assert_int_equal(a->nv, b->nv);
    assert_int_equal(a->nt, b->nt);
    assert_int_equal(a->nf, b->nf);
    assert_memory_equal(a->X, b->X, 3 * (size_t)a->nv * sizeof(double));
    assert_memory_equal(a->T, b->T, 4 * (size_t)a->nt * sizeof(int));
    assert_memory_equal(a->F, b->F, 3 * (size_t)a->nf * sizeof(int));
}

/* With a tets cache, a surface read again is restored from the cache, with the same bits,
 * instead of running tetgen (a wrapper counts its runs); another surface, a corrupt or a
 * truncated cache runs tetgen again, and what it gives is still the same mesh. */
static void tets_cache_should_restore_the_same_mesh_without_tetgen(void **state) {
    (void)state;
    SKIP_WITHOUT_TETGEN();
    long live = mlc_alloc_live();
    char script[1024];
    snprintf(script, sizeof script, "#!/bin/sh\necho run >> '%s'\nexec tetgen \"$@\"\n",
             tpath("tetgen_runs.log"));
    const char *tool = write_text("counting_tetgen.sh", script);
    assert_int_equal(chmod(tool, 0700), 0);
    setenv("MLC_TETGEN", tool, 1);
    const char *runs = tpath("tetgen_runs.log"), *cache = tpath("cube.tets");
    const char *cube = write_cube_off("mesh_cube_tc.off", 0);
    const char *other = write_cube_off("mesh_cube_tc2.off", 0.5);
    mlc_mesh first = {0}, m = {0};
    mlc_mesh_report r0, r;
    mlc_err err = {0};
    assert_int_equal(mlc_mesh_read_cached(cube, cache, &first, &r0, &err), MLC_OK);
    assert_int_equal(lines_in(runs), 1);
    assert_int_equal(mlc_mesh_read_cached(cube, cache, &m, &r, &err), MLC_OK);
    assert_int_equal(lines_in(runs), 1); /* restored: tetgen did not run */
    assert_same_mesh(&first, &m);
    assert_memory_equal(&r0, &r, sizeof r);
    mlc_mesh_free(&m);
    /* Another surface misses (and replaces the cache); the first then misses too. */
    assert_int_equal(mlc_mesh_read_cached(other, cache, &m, &r, &err), MLC_OK);
    assert_int_equal(lines_in(runs), 2);
    assert_true(m.X[0] != first.X[0] || m.X[1] != first.X[1] || m.X[2] != first.X[2]);
    mlc_mesh_free(&m);
    assert_int_equal(mlc_mesh_read_cached(cube, cache, &m, &r, &err), MLC_OK);
    assert_int_equal(lines_in(runs), 3);
    assert_same_mesh(&first, &m);
    mlc_mesh_free(&m);
    /* A flipped byte in the kept .node text, then a cut file: both run tetgen. */
    FILE *f = fopen(cache, "r+b");
    assert_non_null(f);
    fseek(f, 40, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 40, SEEK_SET);
    fputc(c ^ 1, f);
    fclose(f);
    assert_int_equal(mlc_mesh_read_cached(cube, cache, &m, &r, &err), MLC_OK);
    assert_int_equal(lines_in(runs), 4);
    assert_same_mesh(&first, &m);
    mlc_mesh_free(&m);
    assert_int_equal(truncate(cache, 100), 0);
    assert_int_equal(mlc_mesh_read_cached(cube, cache, &m, &r, &err), MLC_OK);
    assert_int_equal(lines_in(runs), 5);
    assert_same_mesh(&first, &m);
    mlc_mesh_free(&m);
    /* Without a cache, or for a tet mesh, nothing is kept. */
    unlink(cache);
    assert_int_equal(mlc_mesh_read_cached(cube, "", &m, &r, &err), MLC_OK);
    assert_int_equal(access(cache, F_OK), -1);
    mlc_mesh_free(&m);
    mlc_mesh_free(&first);
    unsetenv("MLC_TETGEN");
    assert_int_equal(mlc_alloc_live(), live);
}

static void paths_with_spaces_and_non_ascii_should_work(void **state) {
    (void)state;
    assert_int_equal(mkdir(tpath("dir with space é"), 0700), 0);
    mlc_mesh box = {0};
    test_box_mesh(1, 1, 1, 1.0, &box);
    mlc_mesh m = {0};
    mlc_mesh_report r;
    /* Upper-case extensions too: dispatch is case-insensitive. */
    read_ok(write_medit("dir with space é/Würfel box.MESH", &box), &m, &r);
    assert_int_equal(m.nt, 6);
    mlc_mesh_free(&m);
    read_ok(write_tetgen("dir with space é/Würfel box", &box, 0), &m, &r);
    assert_int_equal(m.nt, 6);
    mlc_mesh_free(&m);
    mlc_mesh_free(&box);
    if (tetgen_available()) {
        read_ok(write_cube_off("dir with space é/Würfel ü.Off", 0), &m, &r);
        check_valid(&m, 1.0, 1e-9);
        mlc_mesh_free(&m);
    }
}

/* ---- Tests: errors (docs/errors.md, one test per row) ------------------------------------ */
static void unknown_extension_should_list_the_supported_ones(void **state) {
    (void)state;
    expect_error(write_text("mesh_x.vtk", "x"), MLC_EINVAL, ".mesh (MEDIT), .node/.ele");
    expect_error(tpath("no_extension_at_all"), MLC_EINVAL, "unknown mesh file extension");
}

static void missing_file_should_give_eio_with_strerror(void **state) {
    (void)state;
    expect_error(tpath("does_not_exist.mesh"), MLC_EIO, "No such file or directory");
    /* A TetGen .node whose .ele is missing. */
    write_text("mesh_lonely.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
    expect_error(tpath("mesh_lonely.node"), MLC_EIO, "mesh_lonely.ele: cannot open");
}

static void huge_file_should_be_refused(void **state) {
    (void)state;
    const char *p = tpath("mesh_huge.mesh");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    /* A sparse 5 GB file: refused from its size before anything is read. */
    if (truncate(p, 5LL << 30) != 0) {
        print_message("cannot make a sparse 5 GB file here: skipping\n");
        skip();
    }
    long count = mlc_alloc_count();
    expect_error(p, MLC_EINVAL, "larger than 4 GiB");
    assert_int_equal(mlc_alloc_count(), count);
    unlink(p);
}

/* Every proper prefix of a valid file must fail cleanly (never crash, never succeed while
 * data is missing); run under ASan this also checks that nothing reads past the buffer. */
static void check_truncations(const char *full, const char *name, size_t optional_tail) {
    size_t n;
    char *data = test_slurp(full, &n);
    for (size_t len = 0; len < n; len++) {
        const char *p = write_bytes(name, data, len);
        mlc_mesh m = {0};
        mlc_err err = {0};
        long live = mlc_alloc_live();
        mlc_status s = mlc_mesh_read(p, &m, NULL, &err);
        if (len + optional_tail < n && s == MLC_OK)
            fail_msg("%s truncated to %zu of %zu bytes was accepted", name, len, n);
        int complete = len + optional_tail >= n; /* may go on to tetgen and succeed */
        if (!complete && s != MLC_EPARSE && s != MLC_EINVAL)
            fail_msg("%s truncated to %zu bytes: status %d (%s)", name, len, s, err.msg);
        if (!complete) assert_non_null(strstr(err.msg, name));
        mlc_mesh_free(&m);
        assert_int_equal(mlc_alloc_live(), live);
    }
    free(data);
}

static void truncated_files_should_fail_with_a_location(void **state) {
    (void)state;
    mlc_mesh box = {0};
    test_box_mesh(1, 1, 2, 1.0, &box);
    check_truncations(write_medit("full.mesh", &box), "cut.mesh", 5); /* "\nEnd\n" is optional */
    write_tetgen("full", &box, 0);
    check_truncations(tpath("full.ele"), "full.ele", 3); /* " 3\n" attribute */
    check_truncations(write_msh2("full2.msh", &box), "cut2.msh", 1);
    check_truncations(write_msh2_binary("full2b.msh", &box), "cut2b.msh", 1);
    check_truncations(write_msh4("full4.msh", &box), "cut4.msh", 1);
    /* Surfaces fail while parsing, before tetgen would run. */
    check_truncations(write_cube_off("full.off", 0), "cut.off", 1);
    check_truncations(write_cube_ply("full.ply"), "cut.ply", 1);
    check_truncations(write_cube_stl_binary("fullb.stl"), "cutb.stl", 0);
    mlc_mesh_free(&box);
    /* The messages name the place. */
    expect_error(write_text("mesh_trunc.mesh",
                            "MeshVersionFormatted 1\nDimension 3\nVertices\n"
                            "4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\nTetrahedra\n1\n1    2    3"),
                 MLC_EPARSE,
                 "mesh_trunc.mesh:11: expected a vertex number, found the end of "
                 "the file (the file is truncated)");
    unsigned char b[84 + 50];
    memset(b, 0, sizeof b);
    b[80] = 2; /* announces 2 triangles, holds 1 */
    expect_error(write_bytes("mesh_trunc.stl", b, sizeof b), MLC_EPARSE,
                 "mesh_trunc.stl:byte 0: expected an STL file");
}

/* ---- Compressed input ------------------------------------------------------------------- */
/* Write `src` gzip-compressed as tmpdir/name (with zlib's own writer, as gzip(1) would). */
static const char *gzip_file(const char *src, const char *name) {
    size_t n;
    char *data = test_slurp(src, &n);
    const char *p = tpath(name);
    gzFile g = gzopen(p, "wb9");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, data, (unsigned)n), (int)n);
    assert_int_equal(gzclose(g), Z_OK);
    free(data);
    return p;
}

static uint64_t checksum_of(const char *path, char *format) {
    mlc_mesh m = {0};
    mlc_mesh_report r;
    read_ok(path, &m, &r);
    if (format) snprintf(format, sizeof r.format, "%s", r.format);
    uint64_t c = mlc_mesh_checksum(&m);
    mlc_mesh_free(&m);
    return c;
}

/* Same mesh (checksum) and format whether a file is read plain or as NAME.EXT.gz. */
static void expect_same_as_gz(const char *plain, const char *gz) {
    char f1[32], f2[32];
    uint64_t a = checksum_of(plain, f1), b = checksum_of(gz, f2);
    if (a != b)
        fail_msg("%s and %s differ: %016llx vs %016llx", plain, gz, (unsigned long long)a,
                 (unsigned long long)b);
    assert_string_equal(f1, f2);
}

/* Compress the file just written at `plain` as tmpdir/gz_name and compare the two. */
static void plain_and_gz(const char *plain, const char *gz_name) {
    expect_same_as_gz(plain, gzip_file(plain, gz_name));
}

static void gz_input_should_equal_plain_input(void **state) {
    (void)state;
    long live = mlc_alloc_live();
    mlc_mesh box = {0};
    test_box_mesh(2, 3, 2, 0.5, &box);
    plain_and_gz(write_medit("gz_box.mesh", &box), "gz_box.mesh.gz");
    plain_and_gz(write_msh2("gz_box2.msh", &box), "gz_box2.msh.gz");
    plain_and_gz(write_msh2_binary("gz_box2b.msh", &box), "gz_box2b.msh.gz");
    plain_and_gz(write_msh4("gz_box4.msh", &box), "gz_box4.msh.gz");
    /* TetGen: either file of the pair names both; each finds its compressed partner. */
    write_tetgen("gz_box", &box, 1);
    gzip_file(tpath("gz_box.node"), "gzt.node.gz");
    gzip_file(tpath("gz_box.ele"), "gzt.ele.gz");
    expect_same_as_gz(tpath("gz_box.ele"), tpath("gzt.ele.gz"));
    expect_same_as_gz(tpath("gz_box.node"), tpath("gzt.node.gz"));
    /* ... or the plain one when only that is there. */
    gzip_file(tpath("gz_box.ele"), "gz_box.ele.gz");
    expect_same_as_gz(tpath("gz_box.ele"), tpath("gz_box.ele.gz"));
    mlc_mesh_free(&box);
    /* The committed test meshes. */
    const char *files[] = {"mesh_cube5.mesh", "mesh_cube5.msh", "mesh_cube5.ele"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[1024], name[64];
        snprintf(p, sizeof p, "%s/%s", MLC_TEST_DATA, files[i]);
        snprintf(name, sizeof name, "%s.gz", files[i]);
        if (i == 2) {
            char q[1024];
            snprintf(q, sizeof q, "%s/mesh_cube5.node", MLC_TEST_DATA);
            gzip_file(q, "mesh_cube5.node.gz");
        }
        expect_same_as_gz(p, gzip_file(p, name));
    }
    if (!tetgen_available()) {
        skip();
        return;
    }
    /* Surfaces: the .gz is decompressed before parsing, tetgen sees the same surface. */
    plain_and_gz(write_cube_off("gz_cube.off", 0), "gz_cube.off.gz");
    plain_and_gz(write_cube_obj("gz_cube.obj"), "gz_cube.obj.gz");
    plain_and_gz(write_cube_stl_ascii("gz_cube.stl"), "gz_cube.stl.gz");
    plain_and_gz(write_cube_stl_binary("gz_cubeb.stl"), "gz_cubeb.STL.GZ");
    plain_and_gz(write_cube_ply("gz_cube.ply"), "gz_cube.ply.gz");
    assert_int_equal(mlc_alloc_live(), live);
}

/* A damaged .gz is refused with a message naming the file and saying what is wrong; every
 * truncation of a valid one is refused too (never parsed as a shorter mesh). */
static void damaged_gz_should_be_refused_cleanly(void **state) {
    (void)state;
    long live = mlc_alloc_live();
    mlc_mesh box = {0};
    test_box_mesh(1, 1, 2, 1.0, &box);
    size_t n;
    char *gz = test_slurp(gzip_file(write_medit("dmg.mesh", &box), "dmg.mesh.gz"), &n);
    mlc_mesh_free(&box);
    for (size_t len = 0; len < n; len++) {
        const char *p = write_bytes("cut.mesh.gz", gz, len);
        mlc_mesh m = {0};
        mlc_err err = {0};
        mlc_status s = mlc_mesh_read(p, &m, NULL, &err);
        if (s != MLC_EPARSE)
            fail_msg("cut.mesh.gz of %zu/%zu bytes: status %d (%s)", len, n, s, err.msg);
        assert_non_null(strstr(err.msg, "cut.mesh.gz"));
        if (len >= 10) assert_non_null(strstr(err.msg, "truncated gzip file"));
        mlc_mesh_free(&m);
    }
    /* A flipped byte in the deflate data or in the CRC. */
    gz[n / 2] ^= 0x55;
    expect_error(write_bytes("flip.mesh.gz", gz, n), MLC_EPARSE, "flip.mesh.gz: corrupt gzip data");
    gz[n / 2] ^= 0x55;
    gz[n - 6] ^= 0x01;
    expect_error(write_bytes("crc.mesh.gz", gz, n), MLC_EPARSE, "crc.mesh.gz: corrupt gzip data");
    gz[n - 6] ^= 0x01;
    /* Garbage after the stream; a plain file named .gz; a name with no format before .gz. */
    char *more = malloc(n + 4);
    memcpy(more, gz, n);
    memcpy(more + n, "junk", 4);
    expect_error(write_bytes("junk.mesh.gz", more, n + 4), MLC_EPARSE, "data after the end");
    free(more);
    expect_error(write_text("plain.mesh.gz", "MeshVersionFormatted 1\n"), MLC_EPARSE,
                 "plain.mesh.gz: not a gzip file");
    expect_error(write_bytes("noformat.gz", gz, n), MLC_EINVAL, "extension before .gz");
    free(gz);
    /* A zlib stream (what compress2 writes) is not a gzip file. */
    enum { ZEROS = 1 << 12 };
    char *zeros = calloc(ZEROS, 1);
    uLongf cap = compressBound(ZEROS);
    unsigned char *z = malloc(cap);
    assert_int_equal(compress2(z, &cap, (const Bytef *)zeros, ZEROS, 9), Z_OK);
    free(zeros);
    char *out = NULL;
    size_t size = 0;
    mlc_err err = {0};
    assert_int_equal(mlc_gz_inflate("z.gz", z, cap, 1 << 20, NULL, &out, &size, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "not a gzip file"));
    free(z);
    assert_int_equal(mlc_alloc_live(), live);
}

/* A small file that decompresses to more than the limit (a "zip bomb") stops there instead of
 * allocating it all. */
static void gz_output_should_stop_at_the_limit(void **state) {
    (void)state;
    long live = mlc_alloc_live();
    enum { N = 1 << 20 };
    char *zeros = calloc(N, 1);
    const char *p = tpath("zeros.gz");
    gzFile g = gzopen(p, "wb9");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, zeros, N), N);
    assert_int_equal(gzclose(g), Z_OK);
    free(zeros);
    size_t n;
    char *gz = test_slurp(p, &n);
    char *out = NULL;
    size_t size = 0;
    mlc_err err = {0};
    assert_int_equal(mlc_gz_inflate(p, (unsigned char *)gz, n, N - 1, "test", &out, &size, &err),
                     MLC_EINVAL);
    assert_non_null(strstr(err.msg, "decompresses to more than"));
    assert_null(out);
    assert_int_equal(mlc_gz_inflate(p, (unsigned char *)gz, n, N, "test", &out, &size, &err),
                     MLC_OK);
    assert_int_equal(size, N);
    mlc_free(out);
    free(gz);
    assert_int_equal(mlc_alloc_live(), live);
}

static void malformed_numbers_should_name_line_and_token(void **state) {
    (void)state;
    expect_error(write_text("mesh_bad.node", "4 3 0 0\n0 0 0 0\n1 1.5.3 0 0\n2 0 1 0\n3 0 0 1\n"),
                 MLC_EPARSE, "mesh_bad.node:3: expected a node coordinate, found '1.5.3'");
    expect_error(write_text("mesh_bad.off", "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 1 x\n"),
                 MLC_EPARSE, "mesh_bad.off:7: expected a vertex index, found 'x'");
    expect_error(write_text("mesh_badkw.mesh", "MeshVersionFormatted 1\n42\n"), MLC_EPARSE,
                 "mesh_badkw.mesh:2: expected a section keyword");
}

/* The lexer reads plain decimal tokens itself: every token must give strtoll's value, or be
 * refused as strtoll refuses it. */
static void integer_tokens_should_read_as_strtoll_reads_them(void **state) {
    (void)state;
    const char *tokens[] = {"0",
                            "-0",
                            "+0",
                            "7",
                            "-7",
                            "+7",
                            "0012",
                            "-",
                            "+",
                            "--1",
                            "+-1",
                            "1-",
                            "12a",
                            "0x1f",
                            "2147483648",
                            "-9223372036854775808",
                            "9223372036854775807",
                            "9223372036854775808",
                            "999999999999999999",
                            "-999999999999999999",
                            "1000000000000000000",
                            "1e3",
                            "1.0"};
    char buf[32];
    unsigned x = 7;
    for (int i = 0; i < 100000; i++) {
        const char *s = buf;
        if (i < (int)(sizeof tokens / sizeof *tokens)) {
            s = tokens[i];
        } else { /* random digit strings of 1 to 20 characters, some signed */
            x = x * 1103515245u + 12345u;
            int n = 1 + (int)(x >> 16) % 20, k = 0;
            if (x & 1) buf[k++] = (x & 2) ? '-' : '+';
            for (; k < n; k++)
                buf[k] = (char)('0' + (x = x * 1103515245u + 12345u) % 10);
            buf[n] = '\0';
        }
        mlc__lex lx;
        mlc__lex_init(&lx, s, strlen(s), "t", 0);
        mlc__tok t = {s, strlen(s), 1};
        long long got = 0;
        mlc_err err;
        mlc_status st = mlc__tok_ll(&lx, &t, "an integer", &got, &err);
        char *e;
        errno = 0;
        long long want = strtoll(s, &e, 10);
        int ok = *s && *e == '\0' && errno != ERANGE;
        assert_int_equal(st, ok ? MLC_OK : MLC_EPARSE);
        if (ok) assert_true(got == want);
    }
}

static void out_of_range_index_should_name_the_line(void **state) {
    (void)state;
    write_text("mesh_idx.node", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n");
    expect_error(write_text("mesh_idx.ele", "1 4 0\n1 1 2 3 99\n"), MLC_EPARSE,
                 "mesh_idx.ele:2: expected a node number in 1..4 (the .node file has 4 nodes), "
                 "found 99");
    expect_error(write_text("mesh_idx.mesh",
                            "MeshVersionFormatted 1\nDimension 3\nVertices\n4\n"
                            "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\nTetrahedra\n1\n1 2 3 0 0\n"),
                 MLC_EPARSE, "mesh_idx.mesh:11: expected a vertex number in 1..4, found 0");
    expect_error(write_text("mesh_idx.msh",
                            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n"
                            "1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n$Elements\n1\n"
                            "1 4 0 1 2 3 5\n$EndElements\n"),
                 MLC_EPARSE,
                 "mesh_idx.msh:13: expected the tag of a node defined in $Nodes, "
                 "found 5");
    expect_error(write_text("mesh_idx.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 0\n"),
                 MLC_EPARSE, "mesh_idx.obj:5: expected a vertex index in 1..4 or -4..-1");
    expect_error(write_text("mesh_idx.ply",
                            "ply\nformat ascii 1.0\nelement vertex 4\n"
                            "property float x\nproperty float y\nproperty float z\nelement face "
                            "4\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0"
                            "\n0 1 0\n0 0 1\n3 0 1 2\n3 0 1 3\n3 0 2 3\n3 1 2 4\n"),
                 MLC_EPARSE, "mesh_idx.ply:17: expected a vertex index in 0..3, found 4");
    /* A second vertex element (found by fuzzing: its vertices overran the first's storage). */
    expect_error(write_text("mesh_twice.ply",
                            "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                            "property float y\nproperty float z\nelement vertex 3\nproperty "
                            "float x\nproperty float y\nproperty float z\nelement face 1\n"
                            "property list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0"
                            "\n0 1 0\n0 0 1\n3 0 1 2\n"),
                 MLC_EPARSE,
                 "mesh_twice.ply:7: expected one 'element vertex' in the header, "
                 "found a second");
}

static void nan_coordinate_should_be_rejected(void **state) {
    (void)state;
    expect_error(write_text("mesh_nan.mesh",
                            "MeshVersionFormatted 1\nDimension 3\nVertices\n4\n"
                            "0 0 0 0\n1 nan 0 0\n0 1 0 0\n0 0 1 0\nTetrahedra\n1\n1 2 3 4 0\n"),
                 MLC_EPARSE, "mesh_nan.mesh:6: a vertex coordinate is not finite ('nan')");
    expect_error(write_text("mesh_inf.obj", "v 0 0 0\nv 1 0 0\nv 0 1 inf\nv 0 0 1\n"), MLC_EPARSE,
                 "mesh_inf.obj:3: a vertex coordinate is not finite");
    unsigned char b[84 + 50 * 4];
    memset(b, 0, sizeof b);
    b[80] = 4;
    float nan = NAN;
    memcpy(b + 84 + 50 + 12 + 4, &nan, 4);
    expect_error(write_bytes("mesh_nan.stl", b, sizeof b), MLC_EPARSE,
                 "mesh_nan.stl:byte 150: expected a finite vertex coordinate");
}

/* A lying header in a tiny file must fail before any allocation sized by it. */
static void huge_header_count_should_fail_fast(void **state) {
    (void)state;
    struct {
        const char *name, *text, *needle;
    } cases[] = {
        {"mesh_hc.node", "400000000 3 0 0\n0 0 0 0\n", "announces 400000000 nodes"},
        {"mesh_hc.mesh", "MeshVersionFormatted 1\nVertices 500000000\n0 0 0 0\n",
         "announces 500000000 vertices"},
        {"mesh_hc.off", "OFF\n300000000 1 0\n0 0 0\n", "announces 300000000 vertices"},
        {"mesh_hc.ply",
         "ply\nformat ascii 1.0\nelement vertex 4000000000\nproperty float x\n"
         "property float y\nproperty float z\nelement face 1\nproperty list "
         "uchar int vertex_indices\nend_header\n0 0 0\n",
         "is more than this program supports"},
        {"mesh_hc.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 99999999 1 99999999\n",
         "announces 99999999 nodes"},
        {"mesh_hc2.msh",
         "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n"
         "3 0 1 0\n4 0 0 1\n$EndNodes\n$Elements\n123456789\n1 4 0 1 2 3 4\n",
         "announces 123456789 elements"},
        {"mesh_hc.ele", NULL, "announces 100000000 tetrahedra"},
    };
    write_text("mesh_hc_ok.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *p;
        if (cases[i].text) {
            p = write_text(cases[i].name, cases[i].text);
        } else {
            write_text("mesh_hc.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
            p = write_text("mesh_hc.ele", "100000000 4 0\n0 0 1 2 3\n");
        }
        long count = mlc_alloc_count();
        expect_error(p, MLC_EPARSE, cases[i].needle);
        /* Only the file buffers, paths and, for .ele, the .node arrays were allocated. */
        assert_true(mlc_alloc_count() - count <= 6);
    }
    /* Binary Gmsh: the count is checked against the bytes left (28 per node). */
    const char head[] = "$MeshFormat\n2.2 1 8\n";
    char b[256];
    size_t n = sizeof head - 1;
    memcpy(b, head, n);
    int32_t one = 1;
    memcpy(b + n, &one, 4);
    n += 4;
    n += (size_t)sprintf(b + n, "\n$EndMeshFormat\n$Nodes\n1000000\n");
    memset(b + n, 0, 28);
    expect_error(write_bytes("mesh_hcb.msh", b, n + 28), MLC_EPARSE,
                 "announces 1000000 nodes, but only 28 bytes follow");
}

static const char *tet_file(const char *name, const char *verts, int nv, const char *tets, int nt) {
    char text[2048];
    snprintf(text, sizeof text,
             "MeshVersionFormatted 1\nDimension 3\nVertices\n%d\n%s"
             "Tetrahedra\n%d\n%sEnd\n",
             nv, verts, nt, tets);
    return write_text(name, text);
}

static const char *unit_tet_verts = "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n";

static void repeated_vertex_in_a_tet_should_be_rejected(void **state) {
    (void)state;
    expect_error(tet_file("mesh_rep.mesh", unit_tet_verts, 4, "1 2 3 4 0\n1 2 2 4 0\n", 2),
                 MLC_EINVAL, "tet 1 uses vertex 1 twice");
}

static void zero_volume_tet_should_be_rejected(void **state) {
    (void)state;
    expect_error(tet_file("mesh_flat.mesh", "0 0 0 0\n1 0 0 0\n0 1 0 0\n1 1 0 0\n0 0 1 0\n", 5,
                          "1 2 3 5 0\n1 2 3 4 0\n", 2),
                 MLC_EINVAL, "tet 1 (vertices 0 1 2 3) has volume 0");
}

static void two_components_should_be_rejected(void **state) {
    (void)state;
    expect_error(tet_file("mesh_two.mesh",
                          "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n"
                          "5 0 0 0\n6 0 0 0\n5 1 0 0\n5 0 1 0\n",
                          8, "1 2 3 4 0\n5 6 7 8 0\n", 2),
                 MLC_EINVAL, "2 connected components");
}

/* One body by its vertices, but two parts that share no triangle: they hinge about the edge (or
 * the vertex) they share, which no stiffness resists, so the vibration solve would fail. */
static void parts_joined_at_an_edge_or_a_vertex_should_be_named(void **state) {
    (void)state;
    const char *verts = "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n"
                        "0 -1 0 0\n0 0 -1 0\n-1 0 0 0\n";
    expect_error(tet_file("mesh_edge.mesh", verts, 7, "1 2 3 4 0\n1 2 5 6 0\n", 2), MLC_EINVAL,
                 "the mesh is 2 parts (1, 1 tets) that share no triangle; they meet only at "
                 "vertices or edges (one at (0, 0, 0) in the file's units)");
    expect_error(tet_file("mesh_vertex.mesh", verts, 7, "1 2 3 4 0\n1 7 5 6 0\n", 2), MLC_EINVAL,
                 "the mesh is 2 parts (1, 1 tets) that share no triangle");
    /* Sharing a face, the same tets are one part. */
    mlc_mesh m = {0};
    mlc_mesh_report r;
    read_ok(tet_file("mesh_face.mesh", verts, 7, "1 2 3 4 0\n1 2 3 6 0\n1 2 4 5 0\n", 3), &m, &r);
    assert_int_equal(m.nt, 3);
    assert_int_equal(r.components, 1);
    mlc_mesh_free(&m);
}

static void face_shared_by_three_tets_should_be_rejected(void **state) {
    (void)state;
    expect_error(tet_file("mesh_fan.mesh",
                          "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 2 0\n"
                          "0.2 0.2 3 0\n",
                          6, "1 2 3 4 0\n1 2 3 5 0\n1 2 3 6 0\n", 3),
                 MLC_EINVAL, "is shared by more than two tets");
}

static void overlapping_tets_should_be_rejected(void **state) {
    (void)state;
    /* The same tet twice (once inverted: it is flipped first, then equals the other). */
    const char *verts = "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 2 0\n0.2 0.2 3 0\n";
    expect_error(tet_file("mesh_twice.mesh", verts, 6, "1 2 3 4 0\n1 2 4 3 0\n", 2), MLC_EINVAL,
                 "tets 0 and 1 lie on the same side of their shared triangle (0, 1, 2), so they "
                 "overlap (a duplicated or folded tet)");
    /* Two tets on the same side of one triangle: a fold, not a duplicate. */
    expect_error(tet_file("mesh_fold.mesh", verts, 6, "1 2 3 5 0\n1 2 3 6 0\n", 2), MLC_EINVAL,
                 "tets 0 and 1 lie on the same side of their shared triangle (0, 1, 2)");
    /* On opposite sides the same triangle is fine (as in inverted_tet_should_be_...). */
    mlc_mesh m = {0};
    mlc_mesh_report r;
    read_ok(tet_file("mesh_sides.mesh", "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 -1 0\n", 5,
                     "1 2 3 4 0\n1 3 2 5 0\n", 2),
            &m, &r);
    assert_int_equal(m.nf, 6);
    mlc_mesh_free(&m);
}

static void file_without_tets_should_be_rejected(void **state) {
    (void)state;
    expect_error(write_text("mesh_notets.msh",
                            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n"
                            "1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n$Elements\n1\n"
                            "1 2 0 1 2 3\n$EndElements\n"),
                 MLC_EINVAL, "the mesh has 4 vertices and 0 tets");
}

static void inverted_tet_should_be_flipped_and_reported(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_mesh_report r;
    read_ok(tet_file("mesh_inv.mesh", "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 -1 0\n", 5,
                     "1 2 3 4 0\n1 2 3 5 0\n", 2),
            &m, &r);
    assert_int_equal(r.flipped_tets, 1);
    check_valid(&m, 1.0 / 3.0, 1e-15);
    mlc_mesh_free(&m);
}

/* ---- Binary PLY -------------------------------------------------------------------------- */
/* A surface for the PLY writer: nv vertices (3×nv), nf polygons, polygon i having fc[i]
 * corners, all corners concatenated in fv. */
typedef struct ply_surf {
    int nv, nf;
    const double *V;
    const int *fc, *fv;
} ply_surf;

/* Append the `size` bytes of the host value at x in the file's byte order (the tests run on
 * little-endian hosts, as the binary STL writer above assumes). */
static void put_bytes(unsigned char **p, const void *x, int size, int big_endian) {
    const unsigned char *b = x;
    for (int i = 0; i < size; i++)
        (*p)[i] = b[big_endian ? size - 1 - i : i];
    *p += size;
}

/* Write `s` as PLY in `format` ("ascii", "binary_little_endian", "binary_big_endian") in
 * Blender's layout: float (or, with dbl, double) x, y, z, then float nx, ny, nz, s, t; with
 * colors also uchar red, green, blue, alpha; faces `list uchar IDX vertex_indices`, IDX "uint"
 * or "int"; with an extra element "edge" of two ints after the faces. ASCII prints each
 * coordinate with %.17g of the value the binary file holds, so twins carry the same numbers. */
static const char *write_ply(const char *name, const char *format, const ply_surf *s, int dbl,
                             int colors, const char *idx, int edge) {
    const int bin = strcmp(format, "ascii") != 0, be = !strcmp(format, "binary_big_endian");
    size_t cap = 1024 + (size_t)s->nv * 200 + (size_t)s->nf * 80;
    unsigned char *buf = malloc(cap), *p = buf;
    assert_non_null(buf);
    p += snprintf(
        (char *)p, cap,
        "ply\nformat %s 1.0\ncomment written by the test\nelement vertex %d\n"
        "property %s x\nproperty %s y\nproperty %s z\nproperty float nx\n"
        "property float ny\nproperty float nz\nproperty float s\nproperty float t\n%s"
        "element face %d\nproperty list uchar %s vertex_indices\n%s"
        "end_header\n",
        format, s->nv, dbl ? "double" : "float", dbl ? "double" : "float", dbl ? "double" : "float",
        colors ? "property uchar red\nproperty uchar green\nproperty uchar blue\n"
                 "property uchar alpha\n"
               : "",
        s->nf, idx, edge ? "element edge 1\nproperty int vertex1\nproperty int vertex2\n" : "");
    for (int i = 0; i < s->nv; i++) {
        const float extra[5] = {0.25f, -1.0f, (float)i, 0.5f, (float)i / (float)s->nv};
        const unsigned char rgba[4] = {255, 128, (unsigned char)i, 7};
        for (int k = 0; k < 3; k++) {
            const double x = s->V[3 * i + k];
            const float f = (float)x;
            if (!bin)
                p += sprintf((char *)p, "%.17g ", dbl ? x : (double)f);
            else if (dbl)
                put_bytes(&p, &x, 8, be);
            else
                put_bytes(&p, &f, 4, be);
        }
        for (int k = 0; k < 5; k++) {
            if (bin)
                put_bytes(&p, &extra[k], 4, be);
            else
                p += sprintf((char *)p, "%.9g ", (double)extra[k]);
        }
        for (int k = 0; colors && k < 4; k++) {
            if (bin)
                put_bytes(&p, &rgba[k], 1, be);
            else
                p += sprintf((char *)p, "%d ", rgba[k]);
        }
        if (!bin) *p++ = '\n';
    }
    for (int f = 0, c = 0; f < s->nf; f++) {
        const unsigned char n = (unsigned char)s->fc[f];
        if (bin)
            put_bytes(&p, &n, 1, be);
        else
            p += sprintf((char *)p, "%d", n);
        for (int k = 0; k < n; k++, c++) {
            const uint32_t v = (uint32_t)s->fv[c];
            if (bin)
                put_bytes(&p, &v, 4, be);
            else
                p += sprintf((char *)p, " %u", (unsigned)v);
        }
        if (!bin) *p++ = '\n';
    }
    if (edge) {
        const int32_t e[2] = {0, 1};
        for (int k = 0; k < 2; k++) {
            if (bin)
                put_bytes(&p, &e[k], 4, be);
            else
                p += sprintf((char *)p, "%d ", e[k]);
        }
    }
    assert_true((size_t)(p - buf) < cap);
    const char *path = write_bytes(name, buf, (size_t)(p - buf));
    free(buf);
    return path;
}

/* Both files read to the same mesh, bit for bit. */
static void expect_same_mesh(const char *a, const char *b) {
    mlc_mesh ma = {0}, mb = {0};
    mlc_mesh_report ra, rb;
    read_ok(a, &ma, &ra);
    read_ok(b, &mb, &rb);
    assert_string_equal(ra.format, "ply");
    assert_int_equal(ma.nv, mb.nv);
    assert_int_equal(ma.nt, mb.nt);
    assert_int_equal(ma.nf, mb.nf);
    assert_int_equal(ra.dropped_triangles, rb.dropped_triangles);
    assert_memory_equal(ma.X, mb.X, 3 * (size_t)ma.nv * sizeof(double));
    assert_memory_equal(ma.T, mb.T, 4 * (size_t)ma.nt * sizeof(int));
    assert_memory_equal(ma.F, mb.F, 3 * (size_t)ma.nf * sizeof(int));
    mlc_mesh_free(&ma);
    mlc_mesh_free(&mb);
}

/* A bundled surface (data/blub.off.gz), as Blender writes it (binary_little_endian, float
 * coordinates, normals and uv skipped, faces `list uchar uint`), reads to exactly the mesh of
 * its ASCII twin; so does the quad cube big-endian with double coordinates, colors, `list uchar
 * int` and an extra element. */
static void binary_ply_should_read_as_its_ascii_twin(void **state) {
    (void)state;
    if (!tetgen_available()) {
        fprintf(stderr, "  (skipped: no tetgen)\n");
        return;
    }
    char path[1024], *buf = NULL;
    size_t n = 0;
    mlc_err err = {0};
    snprintf(path, sizeof path, "%s/../../data/blub.off.gz", MLC_TEST_DATA);
    assert_int_equal(mlc_gz_read_all(path, (size_t)64 << 20, "", &buf, &n, &err), MLC_OK);
    /* OFF: "OFF", nv nf ne, nv lines x y z, nf lines n i j k... */
    char *q = buf + 3, *e;
    int nv = (int)strtol(q, &q, 10), nf = (int)strtol(q, &q, 10);
    strtol(q, &q, 10);
    assert_true(nv > 100 && nf > 100);
    double *V = malloc(3 * sizeof(double) * (size_t)nv);
    int *fc = malloc(sizeof(int) * (size_t)nf), *fv = malloc(3 * sizeof(int) * (size_t)nf);
    assert_true(V && fc && fv);
    for (int i = 0; i < 3 * nv; i++)
        V[i] = strtod(q, &q);
    for (int f = 0; f < nf; f++) {
        fc[f] = (int)strtol(q, &e, 10);
        assert_int_equal(fc[f], 3);
        for (int k = 0; k < 3; k++)
            fv[3 * f + k] = (int)strtol(e, &e, 10);
        q = e;
    }
    mlc_free(buf);
    ply_surf blub = {nv, nf, V, fc, fv};
    expect_same_mesh(write_ply("blub_blender.ply", "binary_little_endian", &blub, 0, 0, "uint", 0),
                     write_ply("blub_ascii.ply", "ascii", &blub, 0, 0, "uint", 0));
    free(V);
    free(fc);
    free(fv);

    double cube[24];
    int cfc[6], cfv[24];
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++)
            cube[3 * i + k] = cv(i, k) + 0.1; /* not a float: the double path must keep it */
    for (int f = 0; f < 6; f++) {
        cfc[f] = 4;
        memcpy(cfv + 4 * f, cube_q[f], sizeof cube_q[f]);
    }
    ply_surf quads = {8, 6, cube, cfc, cfv};
    const char *big = write_ply("cube_be.ply", "binary_big_endian", &quads, 1, 1, "int", 1);
    expect_same_mesh(big, write_ply("cube_twin.ply", "ascii", &quads, 1, 1, "int", 1));
    mlc_mesh m = {0};
    mlc_mesh_report r;
    read_ok(big, &m, &r);
    check_valid(&m, 1.0, 1e-12); /* the unit cube, quads fanned into outward triangles */
    mlc_mesh_free(&m);
    /* Every prefix of a binary file fails while parsing, naming the file. */
    check_truncations(write_ply("cube_le.ply", "binary_little_endian", &quads, 0, 0, "uint", 0),
                      "cut_le.ply", 0);
    check_truncations(big, "cut_be.ply", 0);
}

/* A little-endian PLY of 4 vertices (float x y z; x's type named `xtype`) and one face with
 * `nc` corners (length type `ltype`), whose header announces `count` vertices; its bytes into
 * file (at least 1024), their number returned. */
static size_t small_binary_ply(unsigned char *file, const char *count, const char *xtype,
                               const char *ltype, const uint32_t *corners, int nc) {
    int n = snprintf((char *)file, 512,
                     "ply\nformat binary_little_endian 1.0\nelement vertex %s\n"
                     "property %s x\nproperty float y\nproperty float z\nelement face 1\n"
                     "property list %s uint vertex_indices\nend_header\n",
                     count, xtype, ltype);
    unsigned char *p = file + n;
    for (int i = 0; i < 12; i++) {
        float f = (float)(i % 3 == i / 3); /* unit vectors, then the origin */
        put_bytes(&p, &f, 4, 0);
    }
    const unsigned char len = (unsigned char)nc;
    put_bytes(&p, &len, 1, 0);
    for (int k = 0; k < nc; k++)
        put_bytes(&p, &corners[k], 4, 0);
    return (size_t)(p - file);
}

/* Malformed binary PLY: each error names the file, the place and what to do. */
static void malformed_binary_ply_should_be_named(void **state) {
    (void)state;
    static const uint32_t tri[3] = {0, 1, 2}, bad[3] = {0, 1, 99};
    const struct {
        const char *name, *count, *xtype, *ltype;
        const uint32_t *corners;
        int nc, cut, inf; /* bytes cut off the end; an infinite last z */
        const char *needle;
    } cases[] = {
        {"bply_index.ply", "4", "float", "uchar", bad, 3, 0, 0,
         "expected a vertex index in 0..3, found 99"},
        {"bply_two.ply", "4", "float", "uchar", tri, 2, 0, 0,
         "expected a list length of at least 3, found 2"},
        {"bply_count.ply", "4000000000", "float", "uchar", tri, 3, 0, 0,
         "bply_count.ply:3: the header announces 4000000000 vertices of at least 12 bytes each, "
         "but only"},
        {"bply_type.ply", "4", "flaot", "uchar", tri, 3, 0, 0,
         "bply_type.ply:4: expected a PLY type (char, uchar"},
        {"bply_ltype.ply", "4", "float", "float", tri, 3, 0, 0,
         "a list length must have an integer type"},
        {"bply_inf.ply", "4", "float", "uchar", tri, 3, 0, 1,
         "a vertex coordinate of vertex 3 is not finite"},
        {"bply_trunc.ply", "4", "float", "uchar", tri, 3, 2, 0,
         "expected a list item in element 'face', item 0 (uint, 4 bytes), found the end of the "
         "file"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char file[1024];
        size_t n = small_binary_ply(file, cases[c].count, cases[c].xtype, cases[c].ltype,
                                    cases[c].corners, cases[c].nc);
        if (cases[c].inf) {
            const float inf = HUGE_VALF;
            memcpy(file + n - (1 + 4 * (size_t)cases[c].nc) - 4, &inf, 4);
        }
        expect_error(write_bytes(cases[c].name, file, n - (size_t)cases[c].cut), MLC_EPARSE,
                     cases[c].needle);
    }
    /* The well-formed file of the same layout is read (its tetrahedron has the volume 1/6). */
    if (tetgen_available()) {
        static const uint32_t faces[4][3] = {{3, 2, 1}, {3, 0, 2}, {3, 1, 0}, {0, 1, 2}};
        mlc_mesh m = {0};
        mlc_mesh_report r;
        unsigned char file[1024];
        size_t n = small_binary_ply(file, "4", "float", "uchar", faces[0], 3);
        /* add the other three faces: rewrite the face count, append their records */
        char *fc = strstr((char *)file, "element face 1");
        fc[13] = '4';
        unsigned char *p = file + n;
        for (int f = 1; f < 4; f++) {
            const unsigned char three = 3;
            put_bytes(&p, &three, 1, 0);
            for (int k = 0; k < 3; k++)
                put_bytes(&p, &faces[f][k], 4, 0);
        }
        read_ok(write_bytes("bply_ok.ply", file, (size_t)(p - file)), &m, &r);
        check_valid(&m, 1.0 / 6.0, 1e-15);
        mlc_mesh_free(&m);
    }
}

static void unreferenced_vertex_should_be_dropped_and_reported(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_mesh_report r;
    read_ok(tet_file("mesh_extra.mesh", "9 9 9 0\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n", 5,
                     "2 3 4 5 0\n", 1),
            &m, &r);
    assert_int_equal(r.dropped_vertices, 1);
    assert_int_equal(m.nv, 4);
    assert_near(m.X[0], 0.0, 0); /* the first kept vertex is the old second one */
    check_valid(&m, 1.0 / 6.0, 1e-15);
    mlc_mesh_free(&m);
}

static void unsupported_variants_should_say_what_to_do(void **state) {
    (void)state;
    expect_error(write_text("mesh_bin.ply", "ply\nformat binary_middle_endian 1.0\nend_header\n"),
                 MLC_EPARSE,
                 "mesh_bin.ply:2: expected 'format ascii 1.0', 'format binary_little_endian 1.0' "
                 "or 'format binary_big_endian 1.0'; save the surface as one of these");
    expect_error(write_text("mesh_41b.msh", "$MeshFormat\n4.1 1 8\n"), MLC_EPARSE,
                 "re-export the mesh from Gmsh as 2.2 or 4.1 ASCII");
    expect_error(write_text("mesh_40.msh", "$MeshFormat\n4 0 8\n$EndMeshFormat\n"), MLC_EPARSE,
                 "found version 4");
    expect_error(write_text("mesh_2d.mesh", "MeshVersionFormatted 1\nDimension 2\n"), MLC_EPARSE,
                 "expected dimension 3, found 2");
}

static void tiny_surface_should_be_rejected_before_tetgen(void **state) {
    (void)state;
    setenv("MLC_TETGEN", "/nonexistent/tetgen", 1); /* proves tetgen is never reached */
    expect_error(write_text("mesh_tri.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"),
                 MLC_EINVAL, "the surface has 3 vertices and 1 triangles");
    unsetenv("MLC_TETGEN");
}

static void self_intersecting_surface_should_say_so(void **state) {
    (void)state;
    SKIP_WITHOUT_TETGEN();
    /* Closed, manifold and in one part, so it passes the surface check and reaches tetgen. */
    const char *p = MLC_TEST_DATA "/surface_self_intersecting.off";
    expect_error(p, MLC_EINVAL, "surface self-intersects (");
    expect_error(p, MLC_EINVAL, "pairs of faces intersect); repair the surface");
}

/* Surface defects are found before tetgen runs (MLC_TETGEN points nowhere), one line each. */
static void surface_defect(const char *name, const char *needle) {
    setenv("MLC_TETGEN", "/nonexistent/tetgen", 1);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", MLC_TEST_DATA, name);
    expect_error(p, MLC_EINVAL, needle);
    unsetenv("MLC_TETGEN");
}

static void open_surface_should_name_a_vertex_on_the_hole(void **state) {
    (void)state;
    surface_defect("surface_open.off",
                   "surface_open.off: the surface is open: 3 boundary edges (edges of only one "
                   "triangle), one at vertex 3 (0, 1, 0); close the holes");
}

static void nonmanifold_edge_should_be_named(void **state) {
    (void)state;
    surface_defect("surface_nonmanifold.off",
                   "the surface is not manifold: 1 edges are shared by more than two triangles, "
                   "e.g. the edge from vertex 0 (0, 0, 0) to vertex 1 (1, 0, 0) (4 triangles)");
}

static void degenerate_triangle_should_be_named(void **state) {
    (void)state;
    surface_defect("surface_degenerate.off",
                   "1 degenerate triangles (zero area), e.g. the one with corners (0, 0, 0), "
                   "(1, 0, 0), (0.5, 0, 0); remove them");
}

static void separate_parts_should_be_counted(void **state) {
    (void)state;
    surface_defect("surface_two_parts.off",
                   "the surface has 2 separate parts (connected components) of 12 and 12 "
                   "triangles; the method needs one body");
}

static void missing_tetgen_should_give_the_install_hint(void **state) {
    (void)state;
    const char *p = write_cube_off("mesh_cube_nt.off", 0);
    char saved_path[4096];
    snprintf(saved_path, sizeof saved_path, "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin");
    setenv("MLC_TETGEN", "/nonexistent", 1);
    expect_error(p, MLC_ETOOL, "install the Debian package `tetgen`");
    expect_error(p, MLC_ETOOL, "set MLC_TETGEN");
    expect_error(p, MLC_ETOOL, "or give a tet mesh");
    setenv("PATH", "/nonexistent-dir", 1);
    unsetenv("MLC_TETGEN");
    expect_error(p, MLC_ETOOL, "tetgen was not found on PATH");
    setenv("PATH", saved_path, 1);
}

static void failing_tetgen_should_report_its_log(void **state) {
    (void)state;
    /* A stand-in program that prints like tetgen and fails. */
    const char *tool = write_text("fake tetgen.sh",
                                  "#!/bin/sh\necho 'Opening file.'\n"
                                  "echo 'Error:  A segment and a facet intersect.' >&2\nexit 3\n");
    assert_int_equal(chmod(tool, 0700), 0);
    const char *p = write_cube_off("mesh_cube_fail.off", 0);
    setenv("MLC_TETGEN", tool, 1);
    expect_error(p, MLC_ETOOL,
                 "tetgen failed with exit status 3; tetgen says: "
                 "Opening file. | Error:  A segment and a facet intersect.");
    unsetenv("MLC_TETGEN");
}

/* Random byte edits of valid files of every format must never crash, leak or read out of
 * bounds (run under ASan); surfaces stop before tetgen (MLC_TETGEN points nowhere). */
static void mutated_files_should_fail_cleanly(void **state) {
    (void)state;
    mlc_mesh box = {0};
    test_box_mesh(1, 1, 2, 1.0, &box);
    const char *full[] = {write_medit("fz.mesh", &box),
                          write_tetgen("fz", &box, 1),
                          tpath("fz.ele"),
                          write_msh2("fz2.msh", &box),
                          write_msh2_binary("fz2b.msh", &box),
                          write_msh4("fz4.msh", &box),
                          write_cube_off("fz.off", 0),
                          write_cube_obj("fz.obj"),
                          write_cube_stl_ascii("fza.stl"),
                          write_cube_stl_binary("fzb.stl"),
                          write_cube_ply("fz.ply")};
    const char *cut[] = {"fzc.mesh", "fzc.node", "fzc.ele",  "fzc2.msh", "fzc2b.msh", "fzc4.msh",
                         "fzc.off",  "fzc.obj",  "fzca.stl", "fzcb.stl", "fzc.ply"};
    const char bytes[] = {'0', '9', '-', '.', 'e', ' ', '\n', '#', '$', 'x', '\0', (char)0xff};
    mlc_rng rng;
    mlc_rng_seed(&rng, 12345);
    setenv("MLC_TETGEN", "/nonexistent", 1);
    for (size_t f = 0; f < sizeof full / sizeof *full; f++) {
        size_t n;
        /* The partner of a mutated TetGen file is the intact one. */
        if (f == 1 || f == 2) {
            char *partner = test_slurp(full[f == 1 ? 2 : 1], &n);
            write_bytes(cut[f == 1 ? 2 : 1], partner, n);
            free(partner);
        }
        char *data = test_slurp(full[f], &n);
        char *copy = malloc(n);
        for (int trial = 0; trial < 300; trial++) {
            memcpy(copy, data, n);
            int edits = 1 + mlc_rng_below(&rng, 3);
            for (int k = 0; k < edits; k++)
                copy[mlc_rng_below(&rng, (int)n)] = bytes[mlc_rng_below(&rng, (int)sizeof bytes)];
            const char *p = write_bytes(cut[f], copy, n);
            long live = mlc_alloc_live();
            mlc_mesh m = {0};
            mlc_err err = {0};
            mlc_status s = mlc_mesh_read(p, &m, NULL, &err);
            if (s != MLC_OK && s != MLC_EPARSE && s != MLC_EINVAL && s != MLC_ETOOL)
                fail_msg("%s: status %d: %s", cut[f], s, err.msg);
            mlc_mesh_free(&m);
            assert_int_equal(mlc_alloc_live(), live);
        }
        free(copy);
        free(data);
    }
    unsetenv("MLC_TETGEN");
    mlc_mesh_free(&box);
}

static void allocation_failures_should_be_clean(void **state) {
    (void)state;
    mlc_mesh box = {0};
    test_box_mesh(1, 1, 1, 1.0, &box);
    const char *paths[] = {write_medit("af.mesh", &box), write_msh4("af.msh", &box),
                           write_tetgen("af", &box, 1)};
    for (int f = 0; f < 3; f++)
        for (long n = 1; n < 40; n++) {
            long live = mlc_alloc_live();
            mlc_mesh m = {0};
            mlc_err err = {0};
            mlc_alloc_fail_after(n);
            mlc_status s = mlc_mesh_read(paths[f], &m, NULL, &err);
            mlc_alloc_fail_after(0);
            assert_true(s == MLC_OK || s == MLC_ENOMEM);
            if (s == MLC_OK) assert_int_equal(m.nt, 6);
            mlc_mesh_free(&m);
            assert_int_equal(mlc_alloc_live(), live);
        }
    mlc_mesh_free(&box);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tet_formats_should_agree_on_counts_and_volume),
        cmocka_unit_test(committed_data_files_should_read),
        cmocka_unit_test(parts_joined_at_an_edge_or_a_vertex_should_be_named),
        cmocka_unit_test(surfaces_should_tetrahedralize_to_the_cube),
        cmocka_unit_test(tets_cache_should_restore_the_same_mesh_without_tetgen),
        cmocka_unit_test(paths_with_spaces_and_non_ascii_should_work),
        cmocka_unit_test(unknown_extension_should_list_the_supported_ones),
        cmocka_unit_test(missing_file_should_give_eio_with_strerror),
        cmocka_unit_test(huge_file_should_be_refused),
        cmocka_unit_test(truncated_files_should_fail_with_a_location),
        cmocka_unit_test(malformed_numbers_should_name_line_and_token),
        cmocka_unit_test(integer_tokens_should_read_as_strtoll_reads_them),
        cmocka_unit_test(out_of_range_index_should_name_the_line),
        cmocka_unit_test(nan_coordinate_should_be_rejected),
        cmocka_unit_test(huge_header_count_should_fail_fast),
        cmocka_unit_test(repeated_vertex_in_a_tet_should_be_rejected),
        cmocka_unit_test(zero_volume_tet_should_be_rejected),
        cmocka_unit_test(two_components_should_be_rejected),
        cmocka_unit_test(face_shared_by_three_tets_should_be_rejected),
        cmocka_unit_test(overlapping_tets_should_be_rejected),
        cmocka_unit_test(file_without_tets_should_be_rejected),
        cmocka_unit_test(inverted_tet_should_be_flipped_and_reported),
        cmocka_unit_test(unreferenced_vertex_should_be_dropped_and_reported),
        cmocka_unit_test(unsupported_variants_should_say_what_to_do),
        cmocka_unit_test(binary_ply_should_read_as_its_ascii_twin),
        cmocka_unit_test(malformed_binary_ply_should_be_named),
        cmocka_unit_test(tiny_surface_should_be_rejected_before_tetgen),
        cmocka_unit_test(self_intersecting_surface_should_say_so),
        cmocka_unit_test(open_surface_should_name_a_vertex_on_the_hole),
        cmocka_unit_test(nonmanifold_edge_should_be_named),
        cmocka_unit_test(degenerate_triangle_should_be_named),
        cmocka_unit_test(separate_parts_should_be_counted),
        cmocka_unit_test(missing_tetgen_should_give_the_install_hint),
        cmocka_unit_test(failing_tetgen_should_report_its_log),
        cmocka_unit_test(mutated_files_should_fail_cleanly),
        cmocka_unit_test(allocation_failures_should_be_clean),
        cmocka_unit_test(gz_input_should_equal_plain_input),
        cmocka_unit_test(damaged_gz_should_be_refused_cleanly),
        cmocka_unit_test(gz_output_should_stop_at_the_limit),
    };
    return cmocka_run_group_tests_name("mesh_read", tests, setup, teardown);
}
