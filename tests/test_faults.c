/* test_faults.c: allocation-failure injection. For every mesh format and every precompute
 * stage (FEM operators, subspace incl. the eigensolver, clusters, contact samples, the reduced
 * model, the whole pipeline), fail the n-th allocation made through mlc_malloc for
 * n = 1, 2, ... until the operation succeeds. Each failing attempt must return MLC_ENOMEM
 * (with a message), must not crash, and must free everything it allocated (mlc_alloc_live
 * back to its start). CHOLMOD, ARPACK and LAPACK allocate internally, outside our hook; only
 * our own allocation sites are exercised. Surfaces need tetgen and are skipped without it. */
#include "test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clusters.h"
#include "config.h"
#include "fem.h"
#include "pipeline.h"
#include "sim.h"
#include "subspace.h"

#define FUZZ_CORPUS MLC_TEST_DATA "/../fuzz/corpus"
/* A bound on the attempts: an operation needing more allocations than this is a test bug. */
#define MAX_ATTEMPTS 20000

/* One operation under test: run it, return its status, and release whatever it produced. */
typedef mlc_status (*op_fn)(void *ctx, mlc_err *err);

/* The fault loop. Returns the number of allocation sites exercised. */
static int fail_each_allocation(const char *name, op_fn op, void *ctx) {
    mlc_err err;
    long live0 = mlc_alloc_live();
    mlc_status st = op(ctx, &err);
    if (st != MLC_OK) fail_msg("%s: fails without fault injection: %s", name, err.msg);
    assert_int_equal(mlc_alloc_live(), live0);
    for (int n = 1; n <= MAX_ATTEMPTS; n++) {
        memset(&err, 0, sizeof err);
        mlc_alloc_fail_after(n);
        st = op(ctx, &err);
        mlc_alloc_fail_after(0);
        long live = mlc_alloc_live();
        if (live != live0)
            fail_msg("%s: allocation %d failed: %ld blocks leaked (status %d: %s)", name, n,
                     live - live0, (int)st, err.msg);
        if (st == MLC_OK) return n - 1;
        if (st != MLC_ENOMEM || err.code != MLC_ENOMEM || !err.msg[0])
            fail_msg("%s: allocation %d failed: expected MLC_ENOMEM with a message, got status "
                     "%d (err code %d): '%s'",
                     name, n, (int)st, (int)err.code, err.msg);
    }
    fail_msg("%s: still failing after %d attempts", name, MAX_ATTEMPTS);
    return 0;
}

/* ---- Mesh reading ------------------------------------------------------------------------ */
static char tmpdir[512];

static mlc_status op_mesh_read(void *ctx, mlc_err *err) {
    mlc_mesh m = {0};
    mlc_status st = mlc_mesh_read((const char *)ctx, &m, NULL, err);
    mlc_mesh_free(&m);
    return st;
}

/* The TetGen seed holds .node and .ele separated by a "#ELE" line; split it into a pair. */
static void write_tetgen_pair(const char *seed, char node[600]) {
    FILE *f = fopen(seed, "rb");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *mark = strstr(buf, "\n#ELE\n");
    assert_non_null(mark);
    char ele[600];
    snprintf(node, 600, "%s/pair.node", tmpdir);
    snprintf(ele, sizeof ele, "%s/pair.ele", tmpdir);
    f = fopen(node, "wb");
    fwrite(buf, 1, (size_t)(mark - buf) + 1, f);
    fclose(f);
    f = fopen(ele, "wb");
    fputs(mark + 6, f);
    fclose(f);
}

static int have_tetgen(void) {
    return system("command -v tetgen >/dev/null 2>&1") == 0;
}

static void mesh_formats_should_fail_cleanly_at_every_allocation(void **state) {
    (void)state;
    static const char *const seeds[] = {
        "fuzz_mesh_medit/cube5.mesh",       "fuzz_mesh_gmsh/cube5_v22.msh",
        "fuzz_mesh_gmsh/cube5_v22_bin.msh", "fuzz_mesh_gmsh/cube5_v41.msh",
        "fuzz_mesh_off/quads.off",          "fuzz_mesh_obj/cube.obj",
        "fuzz_mesh_stl/cube_ascii.stl",     "fuzz_mesh_stl/cube_bin.stl",
        "fuzz_mesh_ply/cube.ply",           "fuzz_mesh_gz/cube5.mesh.gz"};
    int tg = have_tetgen();
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
        const char *ext = strrchr(seeds[i], '.');
        int surface = strcmp(ext, ".mesh") && strcmp(ext, ".msh") && strcmp(ext, ".gz");
        if (surface && !tg) {
            printf("# skipping %s: tetgen not installed\n", seeds[i]);
            continue;
        }
        char path[600];
        snprintf(path, sizeof path, "%s/%s", FUZZ_CORPUS, seeds[i]);
        int sites = fail_each_allocation(seeds[i], op_mesh_read, path);
        printf("# %s: %d allocations, each failed once\n", seeds[i], sites);
        assert_true(sites > 0);
    }
    char node[600];
    write_tetgen_pair(FUZZ_CORPUS "/fuzz_mesh_tetgen/cube5.txt", node);
    int sites = fail_each_allocation("tetgen .node/.ele", op_mesh_read, node);
    assert_true(sites > 0);
}

/* ---- Precompute --------------------------------------------------------------------------- */
typedef struct precompute {
    mlc_mesh mesh;
    mlc_fem fem;
    mlc_subspace_settings ss;
    mlc_subspace sub;
    mlc_sim_settings sim;
    mlc_config cfg;
} precompute;

static void settings(precompute *p) {
    memset(&p->ss, 0, sizeof p->ss);
    p->ss.w = 3;
    p->ss.m = 3;
    p->ss.poisson = 0.25;
    p->ss.passive_clusters = 3;
    p->ss.actuation_clusters = 2;
    p->ss.contact_samples = 6;
    p->ss.seed = 1;
    mlc_sim_settings_default(&p->sim);
}

static mlc_status op_fem(void *ctx, mlc_err *err) {
    precompute *p = ctx;
    mlc_fem fem;
    memset(&fem, 0, sizeof fem);
    mlc_status st = mlc_fem_init(&fem, &p->mesh, err);
    mlc_fem_free(&fem);
    return st;
}

static mlc_status op_subspace(void *ctx, mlc_err *err) {
    precompute *p = ctx;
    mlc_subspace sub;
    memset(&sub, 0, sizeof sub);
    mlc_status st = mlc_subspace_compute(&p->mesh, &p->fem, &p->ss, &sub, err);
    mlc_subspace_free(&sub);
    return st;
}

static mlc_status op_clusters(void *ctx, mlc_err *err) {
    precompute *p = ctx;
    int *label = malloc((size_t)p->mesh.nt * sizeof(int)), nc = 0;
    mlc_status st = mlc_clusters_passive(&p->mesh, &p->fem, p->sub.W, p->sub.w, p->sub.skin_eval, 3,
                                         1, label, &nc, err);
    free(label);
    return st;
}

static mlc_status op_samples(void *ctx, mlc_err *err) {
    precompute *p = ctx;
    int samples[16], ns = 0;
    return mlc_contact_samples(&p->mesh, 16, 0.0, samples, &ns, err);
}

static mlc_status op_model(void *ctx, mlc_err *err) {
    precompute *p = ctx;
    mlc_model *model = NULL;
    mlc_status st = mlc_model_create(&p->mesh, &p->fem, &p->sub, &p->sim, &model, err);
    mlc_model_destroy(model);
    return st;
}

static mlc_status op_pipeline(void *ctx, mlc_err *err) {
    precompute *p = ctx;
    mlc_pipeline pl;
    memset(&pl, 0, sizeof pl);
    mlc_status st = mlc_pipeline_model(&pl, &p->cfg, err);
    mlc_pipeline_free(&pl);
    return st;
}

static void precompute_should_fail_cleanly_at_every_allocation(void **state) {
    (void)state;
    precompute *p = calloc(1, sizeof *p);
    mlc_err err;
    test_quadruped_mesh(0.1, &p->mesh);
    settings(p);
    assert_int_equal(mlc_fem_init(&p->fem, &p->mesh, &err), MLC_OK);
    if (mlc_subspace_compute(&p->mesh, &p->fem, &p->ss, &p->sub, &err) != MLC_OK)
        fail_msg("subspace: %s", err.msg);
    struct {
        const char *name;
        op_fn op;
    } ops[] = {{"fem", op_fem},
               {"subspace (eigen, clusters, samples)", op_subspace},
               {"clusters", op_clusters},
               {"contact samples", op_samples},
               {"model create", op_model}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        int sites = fail_each_allocation(ops[i].name, ops[i].op, p);
        printf("# %s: %d allocations, each failed once\n", ops[i].name, sites);
        assert_true(sites > 0);
    }
    /* The whole chain as the commands run it, from a small configuration. */
    mlc_config_defaults(&p->cfg);
    const char *sets[] = {"mesh.path=" MLC_TEST_DATA "/mesh_cube5.mesh",
                          "subspace.skinning_modes=2", "actuation.modes=2",
                          "subspace.passive_clusters=2", "subspace.contact_samples=4"};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        if (mlc_config_set(&p->cfg, sets[i], &err) != MLC_OK) fail_msg("%s", err.msg);
    int sites = fail_each_allocation("pipeline", op_pipeline, p);
    printf("# pipeline: %d allocations, each failed once\n", sites);
    mlc_subspace_free(&p->sub);
    mlc_fem_free(&p->fem);
    mlc_mesh_free(&p->mesh);
    free(p);
}

static int setup(void **state) {
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/mlc-test-faults-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char p[700];
    snprintf(p, sizeof p, "%s/pair.node", tmpdir);
    unlink(p);
    snprintf(p, sizeof p, "%s/pair.ele", tmpdir);
    unlink(p);
    rmdir(tmpdir);
    return 0;
}

/* The pipeline prints nothing itself: a corrupt precompute cache reaches its caller as one note
 * through the callback (which the commands print), stderr stays empty, and the cache written
 * then is used silently by the next pipeline. */
typedef struct notes {
    int n;
    char first[512];
} notes;
static void collect_note(void *user, const char *line) {
    notes *nt = user;
    if (nt->n++ == 0) snprintf(nt->first, sizeof nt->first, "%s", line);
}

static void pipeline_should_report_through_its_caller(void **state) {
    (void)state;
    mlc_config *cfg = calloc(1, sizeof *cfg);
    mlc_err err;
    char cache[700], errfile[700];
    snprintf(cache, sizeof cache, "%s/c.bin", tmpdir);
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", tmpdir);
    FILE *f = fopen(cache, "wb");
    assert_non_null(f);
    fputs("not a precompute cache", f);
    fclose(f);
    mlc_config_defaults(cfg);
    char set_cache[800];
    snprintf(set_cache, sizeof set_cache, "subspace.cache=%s", cache);
    const char *sets[] = {"mesh.path=" MLC_TEST_DATA "/mesh_cube5.mesh",
                          "subspace.skinning_modes=2",
                          "actuation.modes=2",
                          "subspace.passive_clusters=2",
                          "subspace.contact_samples=4",
                          set_cache};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        if (mlc_config_set(cfg, sets[i], &err) != MLC_OK) fail_msg("%s", err.msg);
    /* stderr to a file while the pipeline runs */
    fflush(stderr);
    int saved = dup(2), fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    notes nt = {0};
    mlc_pipeline pl;
    memset(&pl, 0, sizeof pl);
    pl.note = collect_note, pl.note_user = &nt;
    mlc_status st = mlc_pipeline_subspaces(&pl, cfg, &err);
    assert_int_equal(pl.cache_used, 0);
    mlc_pipeline_free(&pl);
    assert_ptr_equal(pl.note, collect_note); /* an emptied pipeline still reports */
    notes again = {0};
    pl.note_user = &again;
    mlc_status st2 = mlc_pipeline_subspaces(&pl, cfg, &err);
    int used = pl.cache_used;
    mlc_pipeline_free(&pl);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(st, MLC_OK);
    assert_int_equal(st2, MLC_OK);
    assert_int_equal(nt.n, 1);
    assert_non_null(strstr(nt.first, "recomputing the precompute cache: "));
    assert_int_equal(again.n, 0);
    assert_int_equal(used, 1);
    struct stat sb;
    assert_int_equal(stat(errfile, &sb), 0);
    assert_int_equal((int)sb.st_size, 0);
    unlink(errfile);
    unlink(cache);
    free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mesh_formats_should_fail_cleanly_at_every_allocation),
        cmocka_unit_test(precompute_should_fail_cleanly_at_every_allocation),
        cmocka_unit_test(pipeline_should_report_through_its_caller),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
