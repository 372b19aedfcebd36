/* test_regress.c: every file in tests/data/regress/ goes through the reader its extension
 * names, exactly as the fuzz targets in tests/fuzz/ feed it, so an input the fuzzer once
 * broke stays fixed in the normal suite:
 *   .mesh .msh .off .obj .stl .ply   mlc_mesh_read (tetgen disabled, as in the fuzzer)
 *   .tetgen                          .node and .ele split at a "#ELE" line, mlc_mesh_read
 *   .json                            mlc_config_load_file + mlc_config_validate (configs and
 *                                    params files)
 *   .cache                           mlc_subspace_cache_read, key taken from bytes 16..23
 *   .ckpt                            the --resume checkpoint reader, fingerprint from bytes 8..15
 * Every file must be read without a crash or leak and end in OK or an input-error status with
 * a message. tests/data/regress/expect.txt pins the outcome of listed files (status and a
 * piece of the message): those lines are the tests of the params, checkpoint and cache rows of
 * docs/errors.md. */
#include "test_util.h"

#include <dirent.h>
#include <unistd.h>

#include "checkpoint.h"
#include "config.h"
#include "subspace.h"

#define REGRESS_DIR MLC_TEST_DATA "/regress"

static char tmpdir[512];

typedef struct expectation {
    char file[128];
    char status[16];
    char text[400];
    int used;
} expectation;

static expectation expects[256];
static int nexpects;

/* expect.txt: "FILE STATUS TEXT..." per line; '#' starts a comment line. */
static void load_expectations(void) {
    FILE *f = fopen(REGRESS_DIR "/expect.txt", "r");
    assert_non_null(f);
    char line[600];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = '\0';
        assert_true(nexpects < (int)(sizeof expects / sizeof *expects));
        expectation *e = &expects[nexpects];
        int used = 0;
        if (sscanf(line, "%127s %15s %n", e->file, e->status, &used) < 2)
            fail_msg("expect.txt: malformed line '%s'", line);
        snprintf(e->text, sizeof e->text, "%s", line + used);
        nexpects++;
    }
    fclose(f);
}

static const char *status_name(mlc_status s) {
    switch (s) {
    case MLC_OK:
        return "OK";
    case MLC_ENOMEM:
        return "ENOMEM";
    case MLC_EINVAL:
        return "EINVAL";
    case MLC_EIO:
        return "EIO";
    case MLC_EPARSE:
        return "EPARSE";
    case MLC_ETOOL:
        return "ETOOL";
    default:
        return "OTHER";
    }
}

static void spill(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static mlc_status read_mesh(const char *path, mlc_err *err) {
    mlc_mesh m = {0};
    mlc_status st = mlc_mesh_read(path, &m, NULL, err);
    mlc_mesh_free(&m);
    return st;
}

static mlc_status read_tetgen(const char *path, mlc_err *err) {
    size_t n;
    unsigned char *b = (unsigned char *)test_slurp(path, &n);
    size_t split = n, skip = 0;
    for (size_t i = 0; i + 6 <= n; i++)
        if (memcmp(b + i, "\n#ELE\n", 6) == 0) {
            split = i + 1, skip = 5;
            break;
        }
    char node[600], ele[600];
    snprintf(node, sizeof node, "%s/in.node", tmpdir);
    snprintf(ele, sizeof ele, "%s/in.ele", tmpdir);
    spill(node, b, split);
    spill(ele, b + split + skip, n - split - skip);
    free(b);
    mlc_status st = read_mesh(node, err);
    unlink(node);
    unlink(ele);
    return st;
}

static mlc_status read_config(const char *path, mlc_err *err) {
    static mlc_config cfg;
    mlc_config_defaults(&cfg);
    mlc_status st = mlc_config_load_file(&cfg, path, err);
    if (st == MLC_OK) st = mlc_config_validate(&cfg, err);
    return st;
}

static mlc_status read_cache(const char *path, mlc_err *err) {
    size_t n;
    unsigned char *b = (unsigned char *)test_slurp(path, &n);
    uint64_t key = 0;
    if (n >= 24) memcpy(&key, b + 16, 8);
    free(b);
    mlc_subspace s;
    mlc_status st = mlc_subspace_cache_read(path, key, &s, err);
    mlc_subspace_free(&s);
    return st;
}

static mlc_status read_checkpoint(const char *path, mlc_err *err) {
    size_t n;
    unsigned char *b = (unsigned char *)test_slurp(path, &n);
    uint64_t fp = 0;
    if (n >= 16) memcpy(&fp, b + 8, 8);
    free(b);
    mlc_history_row *hist = NULL;
    int nhist = 0;
    mlc_cmaes *es = NULL;
    unsigned char *job = NULL;
    size_t job_len = 0;
    mlc_status st = mlc_checkpoint_read(path, fp, &hist, &nhist, &es, &job, &job_len, err);
    mlc_free(job);
    mlc_cmaes_destroy(es);
    mlc_free(hist);
    return st;
}

static void every_regression_input_should_be_rejected_cleanly(void **state) {
    (void)state;
    load_expectations();
    DIR *d = opendir(REGRESS_DIR);
    assert_non_null(d);
    struct dirent *de;
    int files = 0, failures = 0;
    while ((de = readdir(d)) != NULL) {
        const char *name = de->d_name, *ext = strrchr(name, '.');
        if (name[0] == '.' || !ext || !strcmp(name, "expect.txt") || !strcmp(ext, ".md")) continue;
        char path[800];
        snprintf(path, sizeof path, "%s/%s", REGRESS_DIR, name);
        mlc_status (*reader)(const char *, mlc_err *) = NULL;
        if (!strcmp(ext, ".json"))
            reader = read_config;
        else if (!strcmp(ext, ".cache"))
            reader = read_cache;
        else if (!strcmp(ext, ".ckpt"))
            reader = read_checkpoint;
        else if (!strcmp(ext, ".tetgen"))
            reader = read_tetgen;
        else if (strstr(".mesh.msh.off.obj.stl.ply", ext))
            reader = read_mesh;
        else
            fail_msg("%s: no reader for the extension '%s'", name, ext);
        mlc_err err;
        memset(&err, 0, sizeof err);
        long live = mlc_alloc_live();
        mlc_status st = reader(path, &err);
        files++;
        if (mlc_alloc_live() != live) {
            printf("FAIL %s: %ld blocks leaked\n", name, mlc_alloc_live() - live);
            failures++;
        }
        printf("# %s: %s %s\n", name, status_name(st), st ? err.msg : "");
        if (st != MLC_OK && st != MLC_EPARSE && st != MLC_EINVAL && st != MLC_ETOOL &&
            st != MLC_EIO) {
            printf("FAIL %s: status %d\n", name, (int)st);
            failures++;
        }
        if (st != MLC_OK && (!err.msg[0] || err.code != st)) {
            printf("FAIL %s: error without a message\n", name);
            failures++;
        }
        for (int i = 0; i < nexpects; i++) {
            if (strcmp(expects[i].file, name) != 0) continue;
            expects[i].used = 1;
            if (strcmp(expects[i].status, status_name(st)) != 0 ||
                (expects[i].text[0] && !strstr(err.msg, expects[i].text))) {
                printf("FAIL %s: expected %s '%s', got %s '%s'\n", name, expects[i].status,
                       expects[i].text, status_name(st), err.msg);
                failures++;
            }
        }
    }
    closedir(d);
    for (int i = 0; i < nexpects; i++)
        if (!expects[i].used) {
            printf("FAIL expect.txt names %s, which is not in %s\n", expects[i].file, REGRESS_DIR);
            failures++;
        }
    printf("# %d regression inputs\n", files);
    assert_true(files > 0);
    assert_int_equal(failures, 0);
}

static int setup(void **state) {
    (void)state;
    /* As in the fuzzer: surfaces that parse stop at tetgen, which is not what is tested. */
    setenv("MLC_TETGEN", "/nonexistent/modalloco-test/tetgen", 1);
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/mlc-test-regress-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    rmdir(tmpdir);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_regression_input_should_be_rejected_cleanly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
