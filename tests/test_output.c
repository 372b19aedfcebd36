/* test_output.c: atomic files, mkdir -p, and the OBJ, PC2, PLY, VTK and SVG writers. Every test
 * works in its own fresh temporary directory, removed afterwards. */
#include "test_util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

/* ---- fixtures ---- */

typedef struct {
    char dir[64];
} tmpdir;

static int setup(void **state) {
    tmpdir *t = malloc(sizeof *t);
    strcpy(t->dir, "/tmp/mlc_test_output_XXXXXX");
    if (!mkdtemp(t->dir)) return -1;
    *state = t;
    return 0;
}

/* rm -r of a directory tree (only what the tests create: files and directories). */
static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[512];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int teardown(void **state) {
    tmpdir *t = *state;
    remove_tree(t->dir);
    free(t);
    return 0;
}

static const char *in_dir(void **state, const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", ((tmpdir *)*state)->dir, name);
    return buf;
}

/* Whole file into a malloc'ed NUL-terminated buffer; *len gets the byte count. */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int count_substr(const char *s, const char *sub) {
    int n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub))
        n++;
    return n;
}

/* ---- atomic files ---- */

static void atomic_write_should_leave_no_temp_and_abort_should_keep_old(void **state) {
    const char *dir = ((tmpdir *)*state)->dir;
    char path[512];
    snprintf(path, sizeof path, "%s/result.json", dir);
    mlc_err err;
    long live = mlc_alloc_live();
    assert_int_equal(mlc_write_text_atomic(path, "old\n", &err), MLC_OK);
    assert_int_equal(count_entries(dir), 1);

    mlc_afile af;
    assert_int_equal(mlc_afile_open(&af, path, &err), MLC_OK);
    assert_non_null(strstr(af.tmp, "/.result.json."));
    fputs("new, half written", af.fp);
    assert_int_equal(count_entries(dir), 2); /* the temp file lives beside the target */
    mlc_afile_abort(&af);
    mlc_afile_abort(&af); /* idempotent */
    assert_null(af.fp);
    char *s = test_read_file(path, NULL);
    assert_string_equal(s, "old\n");
    free(s);
    assert_int_equal(count_entries(dir), 1);

    assert_int_equal(mlc_afile_open(&af, path, &err), MLC_OK);
    fputs("new\n", af.fp);
    assert_int_equal(mlc_afile_commit(&af, &err), MLC_OK);
    s = test_read_file(path, NULL);
    assert_string_equal(s, "new\n");
    free(s);
    assert_int_equal(count_entries(dir), 1);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(mlc_alloc_live(), live);
}

static void atomic_open_should_fail_in_a_missing_directory(void **state) {
    mlc_afile af;
    mlc_err err;
    assert_int_equal(mlc_afile_open(&af, in_dir(state, "nope/x.txt"), &err), MLC_EIO);
    assert_non_null(strstr(err.msg, "nope/x.txt"));
    assert_null(af.fp);
    assert_int_equal(mlc_afile_open(&af, in_dir(state, "dir/"), &err), MLC_EINVAL);
}

static void mkdir_p_should_create_nested_dirs_and_reject_files(void **state) {
    mlc_err err;
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "a/b//c/"));
    assert_int_equal(mlc_mkdir_p(path, &err), MLC_OK);
    assert_int_equal(mlc_mkdir_p(path, &err), MLC_OK); /* exists: fine */
    struct stat st;
    assert_int_equal(stat(in_dir(state, "a/b/c"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(mlc_write_text_atomic(in_dir(state, "a/file"), "x", &err), MLC_OK);
    snprintf(path, sizeof path, "%s", in_dir(state, "a/file/sub"));
    assert_int_equal(mlc_mkdir_p(path, &err), MLC_EIO);
}

/* ---- PC2 ---- */

static uint32_t u32le(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void pc2_should_round_trip_with_the_exact_layout(void **state) {
    enum { N = 5, FRAMES = 3 };
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "animation.pc2"));
    double x[FRAMES][3 * N];
    for (int f = 0; f < FRAMES; f++)
        for (int i = 0; i < 3 * N; i++)
            x[f][i] = 0.1 * i - 0.37 * f + 1e-3 * i * f;
    mlc_pc2_writer w;
    mlc_err err;
    assert_int_equal(mlc_pc2_begin(&w, path, N, &err), MLC_OK);
    long allocs = mlc_alloc_count();
    assert_int_equal(mlc_pc2_frame(&w, x[0], &err), MLC_OK);
    assert_int_equal(mlc_pc2_frame(&w, x[1], &err), MLC_OK);
    /* Frame 2 through the index map: points listed in reverse from a 3×N array. */
    double rev[3 * N];
    int idx[N];
    for (int i = 0; i < N; i++) {
        idx[i] = N - 1 - i;
        memcpy(rev + 3 * (N - 1 - i), x[2] + 3 * i, 3 * sizeof(double));
    }
    assert_int_equal(mlc_pc2_frame_indexed(&w, rev, idx, &err), MLC_OK);
    assert_int_equal(mlc_alloc_count(), allocs); /* frames do not allocate */
    assert_int_equal(mlc_pc2_end(&w, &err), MLC_OK);

    size_t len = 0;
    unsigned char *b = (unsigned char *)test_read_file(path, &len);
    assert_int_equal(len, 32 + 12 * N * FRAMES);
    assert_memory_equal(b, "POINTCACHE2\0", 12);
    assert_int_equal(u32le(b + 12), 1);
    assert_int_equal(u32le(b + 16), N);
    assert_int_equal(u32le(b + 20), 0x00000000u); /* float 0.0 */
    assert_int_equal(u32le(b + 24), 0x3f800000u); /* float 1.0 */
    assert_int_equal(u32le(b + 28), FRAMES);
    float first;
    uint32_t bits = u32le(b + 32);
    memcpy(&first, &bits, 4);
    assert_true(first == (float)x[0][0]);
    free(b);

    int np = 0, ns = 0;
    float start = -1, rate = -1, *data = NULL;
    assert_int_equal(mlc_pc2_read(path, &np, &ns, &start, &rate, &data, &err), MLC_OK);
    assert_int_equal(np, N);
    assert_int_equal(ns, FRAMES);
    assert_true(start == 0.0f && rate == 1.0f);
    for (int f = 0; f < FRAMES; f++)
        for (int i = 0; i < 3 * N; i++)
            assert_true(data[3 * N * f + i] == (float)x[f][i]);
    mlc_free(data);
    assert_int_equal(count_entries(((tmpdir *)*state)->dir), 1);
}

static void pc2_reader_should_reject_truncated_and_foreign_files(void **state) {
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "a.pc2"));
    mlc_pc2_writer w;
    mlc_err err;
    double x[6] = {0, 1, 2, 3, 4, 5};
    assert_int_equal(mlc_pc2_begin(&w, path, 2, &err), MLC_OK);
    assert_int_equal(mlc_pc2_frame(&w, x, &err), MLC_OK);
    assert_int_equal(mlc_pc2_end(&w, &err), MLC_OK);
    assert_int_equal(truncate(path, 32 + 12), 0);
    int np, ns;
    float *data;
    assert_int_equal(mlc_pc2_read(path, &np, &ns, NULL, NULL, &data, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "truncated"));
    assert_null(data);
    assert_int_equal(mlc_write_text_atomic(path, "POINTCACHE2 and some more text here", &err),
                     MLC_OK);
    assert_int_equal(mlc_pc2_read(path, &np, &ns, NULL, NULL, &data, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "signature"));
    /* An aborted cache leaves the previous file alone. */
    assert_int_equal(mlc_pc2_begin(&w, path, 2, &err), MLC_OK);
    assert_int_equal(mlc_pc2_frame(&w, x, &err), MLC_OK);
    mlc_pc2_abort(&w);
    char *s = test_read_file(path, NULL);
    assert_string_equal(s, "POINTCACHE2 and some more text here");
    free(s);
    assert_int_equal(count_entries(((tmpdir *)*state)->dir), 1);
}

/* ---- OBJ ---- */

static void obj_should_reference_every_vertex_with_1_based_indices(void **state) {
    mlc_mesh m = {0};
    test_box_mesh(2, 1, 1, 0.5, &m);
    int nsv, *sv, *sf;
    assert_int_equal(mlc_mesh_surface(&m, &nsv, &sv, &sf), MLC_OK);
    double *P = calloc((size_t)3 * (nsv + 1), sizeof *P); /* one spare vertex */
    for (int i = 0; i < nsv; i++)
        memcpy(P + 3 * i, m.X + 3 * sv[i], 3 * sizeof(double));
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "surface.obj"));
    mlc_err err;
    assert_int_equal(mlc_obj_write(path, P, nsv, sf, m.nf, "test\nsecond line", &err), MLC_OK);

    char *text = test_read_file(path, NULL);
    assert_true(strncmp(text, "# test\n", 7) == 0);
    int nvl = 0, nfl = 0;
    int *used = calloc((size_t)nsv, sizeof *used);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == 'v' && line[1] == ' ') {
            double a, b, c;
            assert_int_equal(sscanf(line, "v %lf %lf %lf", &a, &b, &c), 3);
            assert_near(a, P[3 * nvl], 1e-14);
            assert_near(b, P[3 * nvl + 1], 1e-14);
            assert_near(c, P[3 * nvl + 2], 1e-14);
            nvl++;
        } else if (line[0] == 'f') {
            int a, b, c;
            assert_int_equal(sscanf(line, "f %d %d %d", &a, &b, &c), 3);
            int v[3] = {a, b, c};
            for (int k = 0; k < 3; k++) {
                assert_true(v[k] >= 1 && v[k] <= nsv);
                assert_int_equal(v[k] - 1, sf[3 * nfl + k]);
                used[v[k] - 1] = 1;
            }
            nfl++;
        } else {
            assert_true(line[0] == '#'); /* only the one comment line */
        }
    }
    assert_int_equal(nvl, nsv);
    assert_int_equal(nfl, m.nf);
    for (int i = 0; i < nsv; i++)
        assert_true(used[i]);
    free(used);
    free(text);

    /* An unused vertex is refused (Blender would drop it) and nothing is written. */
    char path2[512];
    snprintf(path2, sizeof path2, "%s", in_dir(state, "bad.obj"));
    assert_int_equal(mlc_obj_write(path2, P, nsv + 1, sf, m.nf, NULL, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "used by no face"));
    assert_int_equal(access(path2, F_OK), -1);
    sf[0] = nsv; /* out of range */
    assert_int_equal(mlc_obj_write(path2, P, nsv, sf, m.nf, NULL, &err), MLC_EINVAL);
    free(P);
    mlc_free(sv);
    mlc_free(sf);
    mlc_mesh_free(&m);
}

/* ---- colours, PLY, VTK ---- */

static void colormaps_should_hit_their_ends_and_be_distinct(void **state) {
    (void)state;
    unsigned char c[3];
    mlc_colormap(0, c);
    assert_true(c[0] == 68 && c[1] == 1 && c[2] == 84);
    mlc_colormap(1, c);
    assert_true(c[0] == 253 && c[1] == 231 && c[2] == 37);
    mlc_colormap(7, c); /* clamped */
    assert_true(c[0] == 253);
    /* Lightness (green channel as a proxy) increases along the ramp. */
    unsigned char prev[3];
    mlc_colormap(0, prev);
    for (int i = 1; i <= 100; i++) {
        mlc_colormap(i / 100.0, c);
        assert_true(c[1] >= prev[1]);
        memcpy(prev, c, 3);
    }
    unsigned char pal[12][3];
    for (int i = 0; i < 12; i++)
        mlc_color_label(i, pal[i]);
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < i; j++)
            assert_memory_not_equal(pal[i], pal[j], 3);
    mlc_color_label(12, c);
    assert_memory_equal(c, pal[0], 3);
    double s[4] = {2, 4, (double)NAN, 3};
    unsigned char rgb[12];
    mlc_colors_from_scalars(s, 4, 0, 0, rgb); /* auto range [2, 4] */
    assert_true(rgb[0] == 68 && rgb[3] == 253 && rgb[6] == 128);
}

static void ply_should_carry_vertex_and_face_colours(void **state) {
    double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    int F[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    double s[4] = {0, 1, 2, 3};
    int lab[4] = {0, 1, 2, 3};
    unsigned char vc[12], fc[12];
    mlc_colors_from_scalars(s, 4, 0, 3, vc);
    mlc_colors_from_labels(lab, 4, fc);
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "w.ply"));
    mlc_err err;
    assert_int_equal(mlc_ply_write(path, X, 4, F, 4, vc, fc, &err), MLC_OK);
    char *t = test_read_file(path, NULL);
    assert_true(strncmp(t, "ply\nformat ascii 1.0\n", 21) == 0);
    assert_non_null(strstr(t, "element vertex 4\n"));
    assert_non_null(strstr(t, "element face 4\n"));
    assert_int_equal(count_substr(t, "property uchar red"), 2);
    assert_non_null(strstr(t, "end_header\n0 0 0 68 1 84\n"));
    assert_non_null(strstr(t, "\n3 0 2 1 31 119 180\n"));
    free(t);
    assert_int_equal(mlc_ply_write(path, X, 4, F, 4, NULL, NULL, &err), MLC_OK);
    t = test_read_file(path, NULL);
    assert_int_equal(count_substr(t, "property uchar"), 0);
    free(t);
    F[5] = 4;
    assert_int_equal(mlc_ply_write(path, X, 4, F, 4, NULL, NULL, &err), MLC_EINVAL);
}

/* printf's "%d" over the decimal edges, the extremes and a spread of values. */
static void format_int_should_print_what_printf_prints(void **state) {
    (void)state;
    int v[] = {0, 1, -1, 9, 10, -10, 99, 100, 255, 65535, INT_MAX, INT_MIN, INT_MIN + 1};
    char want[16], got[16];
    unsigned x = 12345;
    for (int i = 0; i < 200000; i++) {
        int value = i < (int)(sizeof v / sizeof *v) ? v[i] : (int)(x = x * 1103515245u + 12345u);
        if (i % 3 == 0 && i >= 13) value >>= (i % 29); /* short numbers too */
        snprintf(want, sizeof want, "%d", value);
        size_t n = mlc_format_int(got, value);
        got[n] = '\0';
        assert_string_equal(got, want);
    }
}

/* The writers from shared text print, byte for byte, what fprintf prints from the values: the
 * reference below is each format as the files document it, written the slow way. */
static char *reference_text(const double *X, int nv, const int *idx, int n, const int *F, int nf,
                            const unsigned char *rgb, int obj) {
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (obj) {
        fprintf(fp, "# c\n");
        for (int i = 0; i < n; i++) {
            const double *x = X + 3 * idx[i];
            fprintf(fp, "v %.15g %.15g %.15g\n", x[0], x[1], x[2]);
        }
        for (int f = 0; f < nf; f++)
            fprintf(fp, "f %d %d %d\n", F[3 * f] + 1, F[3 * f + 1] + 1, F[3 * f + 2] + 1);
    } else {
        for (int i = 0; i < n; i++) {
            const double *x = X + 3 * idx[i];
            fprintf(fp, "%.15g %.15g %.15g %d %d %d\n", x[0], x[1], x[2], rgb[3 * i],
                    rgb[3 * i + 1], rgb[3 * i + 2]);
        }
        for (int f = 0; f < nf; f++)
            fprintf(fp, "3 %d %d %d\n", F[3 * f], F[3 * f + 1], F[3 * f + 2]);
    }
    (void)nv;
    fclose(fp);
    return buf;
}

static void text_writers_should_print_the_bytes_of_fprintf(void **state) {
    /* Values whose "%.15g" takes every form: signed zero, tiny and huge exponents, subnormals,
     * fractions that do not terminate, integers past 15 digits, and a NaN. */
    const double X[] = {-0.0,     0.0,      0.1,
                        1.0 / 3,  -2.0 / 3, 1e-300,
                        -1.7e308, 5e-324,   123456789012345678.0,
                        1e15,     1e16,     -123.456,
                        NAN,      1e-5,     0.000123456789012345,
                        42,       -7,       2.5e-310};
    const int nv = 6;
    const int idx[4] = {5, 0, 3, 2}; /* surface vertex i is mesh vertex idx[i] */
    const int F[6] = {0, 1, 2, 0, 2, 3};
    const unsigned char rgb[12] = {0, 1, 255, 9, 10, 99, 100, 200, 7, 68, 1, 84};
    mlc_number_text pts;
    mlc_err err;
    assert_int_equal(mlc_number_text_alloc(&pts, nv, 3, &err), MLC_OK);
    mlc_number_text_fill(&pts, X, 3, nv); /* in two ranges, in either order */
    mlc_number_text_fill(&pts, X, 0, 3);
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "s.obj"));
    assert_int_equal(mlc_obj_write_text(path, &pts, idx, 4, F, 2, "c", &err), MLC_OK);
    char *got = test_read_file(path, NULL), *want = reference_text(X, nv, idx, 4, F, 2, rgb, 1);
    assert_string_equal(got, want);
    free(got);
    free(want);

    snprintf(path, sizeof path, "%s", in_dir(state, "s.ply"));
    assert_int_equal(mlc_ply_write_text(path, &pts, idx, 4, F, 2, rgb, NULL, &err), MLC_OK);
    got = test_read_file(path, NULL);
    want = reference_text(X, nv, idx, 4, F, 2, rgb, 0);
    const char *body = strstr(got, "end_header\n");
    assert_non_null(body);
    assert_string_equal(body + strlen("end_header\n"), want);
    free(got);
    free(want);

    /* A point index outside the text is refused before any file is made. */
    const int bad[4] = {5, 0, 6, 2};
    snprintf(path, sizeof path, "%s", in_dir(state, "bad.ply"));
    assert_int_equal(mlc_ply_write_text(path, &pts, bad, 4, F, 2, rgb, NULL, &err), MLC_EINVAL);
    assert_int_equal(access(path, F_OK), -1);

    /* subspace.vtk from texts equals the file formatted from the values, a field given as
     * text and one as values. */
    const double field[6] = {1e-300, -0.0, 0.1, NAN, 1.0 / 7, -5e-324};
    mlc_number_text ft;
    assert_int_equal(mlc_number_text_build(&ft, field, nv, 1, &err), MLC_OK);
    const int T[8] = {0, 1, 2, 3, 2, 3, 4, 5};
    const int cells[2] = {INT_MIN, 12};
    mlc_vtk_scalars slow[2] = {{"a", field, NULL}, {"b", X, NULL}};
    mlc_vtk_scalars fast[2] = {{"a", NULL, &ft}, {"b", X, NULL}};
    char path2[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "slow.vtk"));
    snprintf(path2, sizeof path2, "%s", in_dir(state, "fast.vtk"));
    assert_int_equal(mlc_vtk_write(path, X, nv, T, 2, slow, 2, "c", cells, &err), MLC_OK);
    assert_int_equal(mlc_vtk_write_text(path2, &pts, T, 2, fast, 2, "c", cells, &err), MLC_OK);
    got = test_read_file(path2, NULL);
    want = test_read_file(path, NULL);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "\n1e-300\n-0\n0.1\n"));
    assert_non_null(strstr(got, "\n-2147483648\n12\n"));
    free(got);
    free(want);
    mlc_number_text_free(&ft);
    mlc_number_text_free(&pts);
}

static void vtk_should_write_tets_with_point_and_cell_data(void **state) {
    mlc_mesh m = {0};
    test_box_mesh(1, 1, 2, 1.0, &m);
    double *w0 = malloc((size_t)m.nv * sizeof *w0), *w1 = malloc((size_t)m.nv * sizeof *w1);
    for (int i = 0; i < m.nv; i++)
        w0[i] = m.X[3 * i + 2], w1[i] = -1;
    int *lab = malloc((size_t)m.nt * sizeof *lab);
    for (int e = 0; e < m.nt; e++)
        lab[e] = e / 6;
    mlc_vtk_scalars f[2] = {{"weight_1", w0, NULL}, {"weight_2", w1, NULL}};
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "mesh.vtk"));
    mlc_err err;
    assert_int_equal(mlc_vtk_write(path, m.X, m.nv, m.T, m.nt, f, 2, "cluster", lab, &err), MLC_OK);
    char *t = test_read_file(path, NULL);
    char want[128];
    assert_true(strncmp(t, "# vtk DataFile Version 3.0\n", 27) == 0);
    snprintf(want, sizeof want, "POINTS %d double\n", m.nv);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "CELLS %d %d\n", m.nt, 5 * m.nt);
    assert_non_null(strstr(t, want));
    assert_int_equal(count_substr(t, "\n10\n"), m.nt); /* one VTK_TETRA per cell */
    assert_non_null(strstr(t, "SCALARS weight_2 double 1\nLOOKUP_TABLE default\n-1\n"));
    assert_non_null(strstr(t, "CELL_DATA 12\nSCALARS cluster int 1\n"));
    free(t);
    f[1].name = "bad name";
    assert_int_equal(mlc_vtk_write(path, m.X, m.nv, m.T, m.nt, f, 2, NULL, NULL, &err), MLC_EINVAL);
    free(w0);
    free(w1);
    free(lab);
    mlc_mesh_free(&m);
}

/* ---- SVG ---- */

static void check_svg(const char *path) {
    size_t len = 0;
    char *t = test_read_file(path, &len);
    assert_non_null(t);
    assert_true(strncmp(t, "<svg", 4) == 0);
    assert_true(len > 8 && strcmp(t + len - 7, "</svg>\n") == 0);
    int lines = count_substr(t, "<polyline");
    assert_true(lines == 2 || lines == 3); /* J, and sigma when given */
    assert_int_equal(count_substr(t, "<text"), count_substr(t, "</text>"));
    assert_int_equal(count_substr(t, "<title"), count_substr(t, "</title>"));
    assert_int_equal(count_substr(t, "<g"), count_substr(t, "</g>"));
    /* No non-finite number leaked into coordinates. */
    assert_null(strstr(t, "nan"));
    assert_null(strstr(t, "inf"));
    free(t);
}

static void svg_should_be_well_formed_with_nan_constant_and_single_points(void **state) {
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir(state, "history.svg"));
    mlc_err err;
    double best[6] = {-0.1, (double)NAN, -0.25, -0.3, HUGE_VAL, -0.42};
    double med[6] = {0.2, 0.1, (double)NAN, -0.05, -0.1, -0.2};
    int gen[6] = {1, 2, 3, 4, 5, 6};
    assert_int_equal(
        mlc_history_svg_write(path, gen, best, med, NULL, NULL, 6, "bat <p=1> & co", &err), MLC_OK);
    check_svg(path);
    char *t = test_read_file(path, NULL);
    assert_non_null(strstr(t, "bat &lt;p=1&gt; &amp; co"));
    assert_non_null(strstr(t, "best J"));
    assert_non_null(strstr(t, "median J"));
    assert_int_equal(count_substr(t, "<polyline"), 2); /* no sigma given */
    free(t);
    /* Sigma adds a third line; each change of run one restart marker. */
    double sig[6] = {0.3, 0.2, 0.3, 0.1, 0.05, 0.3};
    int run[6] = {0, 0, 1, 1, 1, 2};
    assert_int_equal(mlc_history_svg_write(path, gen, best, med, sig, run, 6, NULL, &err), MLC_OK);
    check_svg(path);
    t = test_read_file(path, NULL);
    assert_int_equal(count_substr(t, "<polyline"), 3);
    assert_int_equal(count_substr(t, "<title>restart "), 2);
    assert_non_null(strstr(t, "<title>restart 2</title>"));
    free(t);
    double c[3] = {0, 0, 0};
    assert_int_equal(mlc_history_svg_write(path, NULL, c, c, NULL, NULL, 3, NULL, &err), MLC_OK);
    check_svg(path);
    double one = -1.5;
    assert_int_equal(mlc_history_svg_write(path, NULL, &one, &one, NULL, NULL, 1, NULL, &err),
                     MLC_OK);
    check_svg(path);
    t = test_read_file(path, NULL);
    assert_int_equal(count_substr(t, "<circle"), 2);
    free(t);
    double nn[2] = {(double)NAN, (double)NAN};
    assert_int_equal(mlc_history_svg_write(path, NULL, nn, nn, NULL, NULL, 2, NULL, &err), MLC_OK);
    check_svg(path);
    assert_int_equal(mlc_history_svg_write(path, NULL, NULL, NULL, NULL, NULL, 0, NULL, &err),
                     MLC_OK);
    check_svg(path);
    double big[3] = {1e9, 2e9, 3e9}, tiny[3] = {1e-9, 2e-9, 1.5e-9};
    assert_int_equal(mlc_history_svg_write(path, NULL, big, tiny, NULL, NULL, 3, NULL, &err),
                     MLC_OK);
    check_svg(path);
}

/* mlc_json_exact_number: a number printed inside a document reads back with every bit (where
 * cJSON's own printing of 0.1 + 0.2 keeps 15 digits and loses the last bit), and NaN and ±∞
 * become null. */
static void exact_json_numbers_should_read_back_bit_for_bit(void **state) {
    (void)state;
    const double v[] = {
        0.1 + 0.2,          1.0 / 3, -2.5e-308, 4.9e-324, 1.7976931348623157e308, -0.0,
        123456789.12345678, 1e-3};
    const int n = (int)(sizeof v / sizeof v[0]);
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, mlc_json_exact_number(v[i]));
    cJSON_AddItemToArray(a, mlc_json_exact_number((double)NAN));
    cJSON_AddItemToArray(a, mlc_json_exact_number((double)INFINITY));
    char *text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    cJSON *back = cJSON_Parse(text);
    assert_non_null(back);
    assert_int_equal(cJSON_GetArraySize(back), n + 2);
    for (int i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetArrayItem(back, i);
        assert_true(cJSON_IsNumber(it));
        /* the bits, the sign of zero and the subnormals included */
        assert_memory_equal(&it->valuedouble, &v[i], sizeof(double));
    }
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(back, n)));
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(back, n + 1)));
    cJSON_Delete(back);
    free(text);
}

/* mlc_json_make_exact: a document read back and printed again by cJSON keeps every number's
 * bits (cJSON alone prints 0.96054599687637188 as 0.960545996876372, one unit in the last
 * place away, and −0 as 0), and a number whose 15 digits are exact keeps its short text. */
static void a_reprinted_document_should_keep_every_bit(void **state) {
    (void)state;
    const char *doc = "{\"a\": [0.96054599687637188, 0.30000000000000004, -0.0, 5],"
                      " \"b\": {\"c\": 0.1, \"d\": 2.5e-308}}";
    const double want[] = {0.96054599687637188, 0.30000000000000004, -0.0, 5, 0.1, 2.5e-308};
    cJSON *plain = cJSON_Parse(doc);
    char *lossy = cJSON_PrintUnformatted(plain);
    cJSON_Delete(plain);
    assert_null(strstr(lossy, "0.96054599687637188")); /* what the helper is for */
    free(lossy);
    cJSON *root = cJSON_Parse(doc);
    assert_true(mlc_json_make_exact(root));
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    assert_non_null(strstr(text, "\"c\":0.1,")); /* exact in 15 digits: as cJSON prints it */
    cJSON *back = cJSON_Parse(text);
    assert_non_null(back);
    const cJSON *a = cJSON_GetObjectItem(back, "a"), *b = cJSON_GetObjectItem(back, "b");
    double got[6];
    for (int i = 0; i < 4; i++)
        got[i] = cJSON_GetArrayItem(a, i)->valuedouble;
    got[4] = cJSON_GetObjectItem(b, "c")->valuedouble;
    got[5] = cJSON_GetObjectItem(b, "d")->valuedouble;
    assert_memory_equal(got, want, sizeof want);
    cJSON_Delete(back);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(atomic_write_should_leave_no_temp_and_abort_should_keep_old,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(atomic_open_should_fail_in_a_missing_directory, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(mkdir_p_should_create_nested_dirs_and_reject_files, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(pc2_should_round_trip_with_the_exact_layout, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(pc2_reader_should_reject_truncated_and_foreign_files, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(obj_should_reference_every_vertex_with_1_based_indices,
                                        setup, teardown),
        cmocka_unit_test(colormaps_should_hit_their_ends_and_be_distinct),
        cmocka_unit_test(exact_json_numbers_should_read_back_bit_for_bit),
        cmocka_unit_test(a_reprinted_document_should_keep_every_bit),
        cmocka_unit_test_setup_teardown(ply_should_carry_vertex_and_face_colours, setup, teardown),
        cmocka_unit_test(format_int_should_print_what_printf_prints),
        cmocka_unit_test_setup_teardown(text_writers_should_print_the_bytes_of_fprintf, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(vtk_should_write_tets_with_point_and_cell_data, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            svg_should_be_well_formed_with_nan_constant_and_single_points, setup, teardown),
    };
    return cmocka_run_group_tests_name("output", tests, NULL, NULL);
}
