/* test_vtkxml.c: the VTK XML writers at the byte level (the CLI test reads whole series with
 * VTK's own readers): the base64 stream decodes to a UInt64 byte count followed by the values,
 * offsets end each cell, bad arguments write nothing, and collection names are escaped. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vtkxml.h"

static char dir[] = "/tmp/mlc_test_vtkxml_XXXXXX";

static void temp_path(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", dir, name);
}

static int b64_value(char c) {
    static const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = strchr(a, c);
    return c && p ? (int)(p - a) : -1;
}

/* Decode the base64 text of the DataArray named `name` into out (at most cap bytes); returns
 * the byte count, or -1 when the array is missing or its text is not clean base64. */
static long array_bytes(const char *xml, const char *name, unsigned char *out, size_t cap) {
    char key[64];
    snprintf(key, sizeof key, "Name=\"%s\"", name);
    const char *p = strstr(xml, key);
    if (!p || !(p = strchr(p, '>'))) return -1;
    p++;
    while (*p == ' ' || *p == '\n')
        p++;
    size_t n = 0;
    unsigned v = 0;
    int bits = 0;
    for (; *p && *p != '\n'; p++) {
        if (*p == '=') continue;
        int d = b64_value(*p);
        if (d < 0) return -1;
        v = (v << 6 | (unsigned)d) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n == cap) return -1;
            out[n++] = (unsigned char)(v >> bits);
        }
    }
    return (long)n;
}

static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = v << 8 | p[k];
    return v;
}

static float get_f32(const unsigned char *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void polydata_should_encode_header_and_values(void **state) {
    (void)state;
    char path[128];
    temp_path(path, sizeof path, "t.vtp");
    /* Two triangles on four points; the values cover base64 padding (36 + 8 = 44 bytes). */
    const double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1.5, -2.25, 1e-3};
    const int F[6] = {0, 1, 2, 1, 3, 2};
    const unsigned char flag[4] = {0, 1, 0, 1};
    mlc_vtk_field fields[1] = {{"contact_sample", 1, NULL, flag}};
    mlc_vtk_piece piece = {X, 4, F, 2, fields, 1};
    mlc_err err;
    assert_int_equal(mlc_vtp_write(path, &piece, &err), MLC_OK);
    char *xml = test_read_file(path, NULL);
    assert_non_null(xml);
    assert_non_null(strstr(xml, "header_type=\"UInt64\""));
    assert_non_null(strstr(xml, "byte_order=\"LittleEndian\""));
    assert_non_null(strstr(xml, "NumberOfPoints=\"4\""));
    assert_non_null(strstr(xml, "NumberOfPolys=\"2\""));
    unsigned char b[256];
    assert_int_equal(array_bytes(xml, "Points", b, sizeof b), 8 + 48);
    assert_int_equal(get_u64(b), 48);
    for (int i = 0; i < 12; i++)
        assert_true(get_f32(b + 8 + 4 * i) == (float)X[i]);
    assert_int_equal(array_bytes(xml, "connectivity", b, sizeof b), 8 + 24);
    for (int i = 0; i < 6; i++) {
        const unsigned char *q = b + 8 + 4 * i;
        assert_int_equal(q[0] | q[1] << 8 | q[2] << 16 | q[3] << 24, F[i]);
    }
    assert_int_equal(array_bytes(xml, "offsets", b, sizeof b), 8 + 8);
    assert_int_equal(b[8], 3);
    assert_int_equal(b[12], 6);
    assert_int_equal(array_bytes(xml, "contact_sample", b, sizeof b), 8 + 4);
    assert_memory_equal(b + 8, flag, 4);
    free(xml);

    /* An index out of range is refused and the previous file is left as it was. */
    char *before = test_read_file(path, NULL);
    const int Fbad[6] = {0, 1, 2, 1, 4, 2};
    piece.cells = Fbad;
    assert_int_equal(mlc_vtp_write(path, &piece, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "outside [0, 4)"));
    char *after = test_read_file(path, NULL);
    assert_string_equal(before, after);
    free(before);
    free(after);
    unlink(path);
}

static void grid_should_mark_tets(void **state) {
    (void)state;
    char path[128];
    temp_path(path, sizeof path, "t.vtu");
    const double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    const int T[4] = {0, 1, 2, 3};
    mlc_vtk_field bad[1] = {{"has space", 1, X, NULL}};
    mlc_vtk_piece piece = {X, 4, T, 1, bad, 1};
    mlc_err err;
    assert_int_equal(mlc_vtu_write(path, &piece, &err), MLC_EINVAL);
    mlc_vtk_field disp[1] = {{"displacement", 3, X, NULL}};
    piece.fields = disp;
    assert_int_equal(mlc_vtu_write(path, &piece, &err), MLC_OK);
    char *xml = test_read_file(path, NULL);
    unsigned char b[128];
    assert_int_equal(array_bytes(xml, "types", b, sizeof b), 8 + 1);
    assert_int_equal(b[8], 10);
    assert_int_equal(array_bytes(xml, "offsets", b, sizeof b), 8 + 4);
    assert_int_equal(b[8], 4);
    assert_non_null(strstr(xml, "Name=\"displacement\" NumberOfComponents=\"3\""));
    free(xml);
    unlink(path);
}

static void collection_should_escape_names(void **state) {
    (void)state;
    char path[128];
    temp_path(path, sizeof path, "t.pvd");
    const double t[2] = {0, 0.25};
    const char *files[2] = {"a&b.vtp", "c\"d.vtp"};
    mlc_err err;
    assert_int_equal(mlc_pvd_write(path, t, files, 2, &err), MLC_OK);
    char *xml = test_read_file(path, NULL);
    assert_non_null(strstr(xml, "<VTKFile type=\"Collection\""));
    assert_non_null(strstr(xml, "timestep=\"0.25\" group=\"\" part=\"0\" file=\"c&quot;d.vtp\""));
    assert_non_null(strstr(xml, "file=\"a&amp;b.vtp\""));
    free(xml);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(polydata_should_encode_header_and_values),
        cmocka_unit_test(grid_should_mark_tets),
        cmocka_unit_test(collection_should_escape_names),
    };
    if (!mkdtemp(dir)) return 1;
    int failed = cmocka_run_group_tests_name("vtkxml", tests, NULL, NULL);
    rmdir(dir);
    return failed;
}
