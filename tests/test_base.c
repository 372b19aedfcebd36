/* test_base.c: the small helpers of base.h: median, finite check, path joining, file existence
 * and small text files. */
#include <stdio.h>
#include <unistd.h>

#include "test_util.h"

#include "base.h"

static void median_odd_even_in_place(void **state) {
    (void)state;
    double v[5] = {3, -1, 7, 2, 2}, work[5];
    assert_true(mlc_median(v, 5, work) == 2.0);
    assert_true(v[0] == 3 && v[2] == 7); /* v untouched */
    assert_true(mlc_median(v, 4, work) == 2.5);
    assert_true(mlc_median(v, 1, work) == 3.0);
    assert_true(mlc_median(v, 5, v) == 2.0); /* in place: v sorted */
    for (int i = 0; i + 1 < 5; i++)
        assert_true(v[i] <= v[i + 1]);
}

static void all_finite_sees_nan_and_inf(void **state) {
    (void)state;
    double v[4] = {1, -0.0, 1e308, -1e-300};
    assert_true(mlc_all_finite(v, 4));
    assert_true(mlc_all_finite(v, 0));
    v[2] = NAN;
    assert_false(mlc_all_finite(v, 4));
    v[2] = -INFINITY;
    assert_false(mlc_all_finite(v, 4));
    assert_true(mlc_all_finite(v, 2));
    /* Every length up to 13 and every position of one bad value (the partial sums and the
     * tail), and +∞ and −∞ in different partial sums. */
    double w[13];
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int n = 1; n <= 13; n++)
        for (int at = 0; at < n; at++)
            for (int b = 0; b < 3; b++) {
                for (int i = 0; i < n; i++)
                    w[i] = (i % 3 - 1) * 1e300 + i;
                assert_true(mlc_all_finite(w, (size_t)n));
                w[at] = bad[b];
                assert_false(mlc_all_finite(w, (size_t)n));
                if (at + 1 < n) {
                    w[at + 1] = -w[at];
                    assert_false(mlc_all_finite(w, (size_t)n));
                }
            }
}

static void path_join_and_files(void **state) {
    (void)state;
    char buf[16];
    assert_int_equal(mlc_path_join(buf, sizeof buf, "dir", "name"), 1);
    assert_string_equal(buf, "dir/name");
    assert_int_equal(mlc_path_join(buf, 8, "dir", "name"), 0); /* truncated */
    assert_string_equal(buf, "dir/nam");
    char *p = mlc_path_join_alloc("a/b", "c.txt");
    assert_string_equal(p, "a/b/c.txt");
    mlc_free(p);

    char dir[] = "/tmp/mlc_test_base_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    mlc_path_join(path, sizeof path, dir, "t.txt");
    assert_false(mlc_file_exists(path));
    assert_null(mlc_file_read_text(path));
    FILE *f = fopen(path, "w");
    fputs("hello\n", f);
    fclose(f);
    assert_true(mlc_file_exists(path));
    assert_true(mlc_file_exists(dir));
    char *text = mlc_file_read_text(path);
    assert_string_equal(text, "hello\n");
    mlc_free(text);
    assert_null(mlc_file_read_text(dir)); /* not a regular file */
    unlink(path);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_odd_even_in_place),
        cmocka_unit_test(all_finite_sees_nan_and_inf),
        cmocka_unit_test(path_join_and_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
