/* test_summary.c: reading run directories back and grouping them by setting across seeds
 * (job/summary.h), and the relative links of the sweep's gallery (job/gallery.h). Every test
 * that writes works in its own fresh temporary directory, removed afterwards. */
#include "test_util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gallery.h"
#include "summary.h"

typedef struct {
    char dir[64];
} tmpdir;

static int setup(void **state) {
    tmpdir *t = malloc(sizeof *t);
    strcpy(t->dir, "/tmp/mlc_test_summary_XXXXXX");
    if (!mkdtemp(t->dir)) return -1;
    *state = t;
    return 0;
}

static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

static int teardown(void **state) {
    tmpdir *t = *state;
    remove_tree(t->dir);
    free(t);
    return 0;
}

static void write_file(const char *dir, const char *name, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A run directory ROOT/run_NNNN as sweep and optimize leave it: run.json with the overrides
 * (a JSON object text) and the seed; params.json with J and result.json with the credibility
 * when J is finite (a pending run otherwise); robustness < 0 leaves it out. */
static void make_run(const char *root, int i, const char *overrides, int seed, double J,
                     int credible, double robustness) {
    char dir[512], text[1024];
    snprintf(dir, sizeof dir, "%s/run_%04d", root, i);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(text, sizeof text, "{\"run\": %d, \"seed\": %d, \"overrides\": %s}\n", i, seed,
             overrides);
    write_file(dir, "run.json", text);
    if (isnan(J)) return;
    snprintf(text, sizeof text, "{\"J\": %.17g, \"seed\": %d, \"found\": %s}\n", J, seed,
             credible && J < 0 ? "true" : "false");
    write_file(dir, "params.json", text);
    char rob[64] = "";
    if (robustness >= 0) snprintf(rob, sizeof rob, "\"robustness\": %.17g, ", robustness);
    snprintf(text, sizeof text, "{\"J\": %.17g, \"credibility\": {%s\"credible\": %s}}\n", J, rob,
             credible ? "true" : "false");
    write_file(dir, "result.json", text);
}

static void relative_links_should_climb_and_descend(void **state) {
    (void)state;
    static const char *cases[][3] = {
        {"/a/b", "/a/b/run_0000/strip.png", "run_0000/strip.png"},
        {"/a/b", "/a/summary.csv", "../summary.csv"},
        {"/a/b", "/a/bc/x.svg", "../bc/x.svg"}, /* a shared prefix is not a shared directory */
        {"/a/b", "/a/b", "."},
        {"/a/b/c", "/a", "../../"},
        {"/x/y", "/z/w.png", "../../z/w.png"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *rel = mlc_gallery_relative(cases[k][0], cases[k][1]);
        assert_non_null(rel);
        if (strcmp(rel, cases[k][2]))
            fail_msg("from %s to %s: '%s', expected '%s'", cases[k][0], cases[k][1], rel,
                     cases[k][2]);
        mlc_free(rel);
    }
}

static void runs_should_group_by_setting_across_seeds(void **state) {
    const char *root = ((tmpdir *)*state)->dir;
    /* Setting {a: 1, b: "x"} over four seeds (member order and a swept seed must not split
     * it), setting {a: 2, b: "x"} over two seeds with one still pending, and {a: 1} alone. */
    make_run(root, 0, "{\"a\": 1, \"b\": \"x\"}", 1, -0.4, 1, 1.0);
    make_run(root, 1, "{\"b\": \"x\", \"a\": 1}", 2, -0.1, 0, 0.5);
    make_run(root, 2, "{\"a\": 1, \"b\": \"x\", \"cmaes.seed\": 7}", 7, -0.3, 1, 0.75);
    make_run(root, 3, "{\"a\": 1, \"b\": \"x\"}", 3, 0.2, 0, -1);
    make_run(root, 4, "{\"a\": 2, \"b\": \"x\"}", 1, -0.5, 1, 1.0);
    make_run(root, 5, "{\"a\": 2, \"b\": \"x\"}", 2, NAN, 0, -1);
    make_run(root, 6, "{\"a\": 1}", 1, -0.2, 1, 1.0);

    mlc_summary sm = {0};
    mlc_err err = {0};
    assert_int_equal(mlc_summary_collect(&sm, root, &err), MLC_OK);
    assert_int_equal(mlc_summary_group_runs(&sm, &err), MLC_OK);
    assert_int_equal(sm.nruns, 7);
    assert_int_equal(sm.ngroups, 3);
    const int group_of[7] = {0, 0, 0, 0, 1, 1, 2};
    for (int i = 0; i < 7; i++)
        assert_int_equal(sm.runs[i].group, group_of[i]);

    const mlc_summary_group *g = sm.groups;
    assert_int_equal(g[0].n, 4);
    assert_int_equal(g[0].done, 4);
    assert_near(g[0].J_median, 0.5 * (-0.3 + -0.1), 1e-15); /* even count: the middle two */
    assert_near(g[0].J_min, -0.4, 0);
    assert_near(g[0].J_max, 0.2, 0);
    assert_int_equal(g[0].credible_k, 2);
    assert_int_equal(g[0].credible_n, 4);
    assert_int_equal(g[0].robust_k, 2); /* 1.0 and 0.75 reach MLC_SUMMARY_ROBUST, 0.5 not */
    assert_int_equal(g[0].robust_n, 3); /* run 3 records no robustness */
    assert_int_equal(g[0].transfer_n, 0);
    assert_true(isnan(g[0].transfer_median));
    assert_string_equal(g[0].label, "a=1 b=x");

    assert_int_equal(g[1].n, 2);
    assert_int_equal(g[1].done, 1);
    assert_near(g[1].J_median, -0.5, 0);
    assert_int_equal(g[1].credible_n, 1);
    assert_string_equal(sm.runs[5].status, "pending");

    assert_int_equal(g[2].n, 1);
    assert_string_equal(g[2].label, "a=1");
    assert_null(cJSON_GetObjectItem(g[2].setting, "b"));

    /* The grouped CSV: the swept keys but the seed, then the numbers. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    mlc_summary_groups_csv(f, &sm);
    fclose(f);
    const char *want = "group,a,b,n,done,J_median,J_min,J_max,credible_k,credible_n,robust_k,"
                       "robust_n,transfer_median,transfer_n\n"
                       "1,1,x,4,4,-0.20000000000000001,-0.40000000000000002,"
                       "0.20000000000000001,2,4,2,3,,0\n"
                       "2,2,x,2,1,-0.5,-0.5,-0.5,1,1,1,1,,0\n"
                       "3,1,,1,1,-0.20000000000000001,-0.20000000000000001,"
                       "-0.20000000000000001,1,1,1,1,,0\n";
    assert_string_equal(text, want);
    free(text);

    /* The JSON document has the same groups, and null for what is unknown. */
    cJSON *j = mlc_summary_json(&sm);
    const cJSON *groups = cJSON_GetObjectItem(j, "groups");
    assert_int_equal(cJSON_GetArraySize(groups), 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "runs")), 7);
    const cJSON *g2 = cJSON_GetArrayItem(groups, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g2, "runs")), 2);
    const cJSON *pending = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "runs"), 5);
    char *pj = cJSON_PrintUnformatted(pending);
    assert_non_null(strstr(pj, "\"J\":null"));
    assert_non_null(strstr(pj, "\"credible\":null"));
    cJSON_free(pj);
    cJSON_Delete(j);
    mlc_summary_free(&sm);
    mlc_summary_free(&sm); /* idempotent */
}

static void runs_outside_a_sweep_should_form_one_group(void **state) {
    const char *root = ((tmpdir *)*state)->dir;
    char dir[512];
    for (int i = 0; i < 3; i++) {
        snprintf(dir, sizeof dir, "%s/opt%d", root, i);
        assert_int_equal(mkdir(dir, 0755), 0);
        char text[128];
        snprintf(text, sizeof text, "{\"J\": %d, \"seed\": %d}\n", -i, i + 1);
        write_file(dir, "params.json", text);
    }
    mlc_summary sm = {0};
    mlc_err err = {0};
    assert_int_equal(mlc_summary_collect(&sm, root, &err), MLC_OK);
    assert_int_equal(mlc_summary_group_runs(&sm, &err), MLC_OK);
    assert_int_equal(sm.ngroups, 1);
    assert_int_equal(sm.groups[0].n, 3);
    assert_near(sm.groups[0].J_median, -1, 0);
    assert_int_equal(sm.groups[0].credible_n, 0);
    assert_string_equal(sm.groups[0].label, "(all runs)");
    /* The plot has its one panel. */
    char svg[512];
    snprintf(svg, sizeof svg, "%s/plot.svg", root);
    assert_int_equal(mlc_summary_plot_svg(svg, &sm, &err), MLC_OK);
    char *text = mlc_file_read_text(svg);
    assert_non_null(text);
    assert_non_null(strstr(text, "J vs all runs"));
    assert_non_null(strstr(text, "</svg>"));
    mlc_free(text);
    mlc_summary_free(&sm);
    /* A directory holding no runs is an error naming it. */
    snprintf(dir, sizeof dir, "%s/opt0", root);
    remove_tree(dir);
    snprintf(dir, sizeof dir, "%s/empty", root);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mlc_summary_collect(&sm, dir, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "holds no runs"));
    mlc_summary_free(&sm);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(relative_links_should_climb_and_descend),
        cmocka_unit_test_setup_teardown(runs_should_group_by_setting_across_seeds, setup, teardown),
        cmocka_unit_test_setup_teardown(runs_outside_a_sweep_should_form_one_group, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("summary", tests, NULL, NULL);
}
