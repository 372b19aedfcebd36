/* optimize_fault.c: the optimize job with one process's precompute made to fail, for
 * tests/cli_mpi.sh under mpirun (the program itself has no such seam):
 *   optimize_fault RANK OUT_DIR [KEY=VALUE...]
 * runs the job on the defaults with the assignments, output.dir OUT_DIR and one thread per
 * process, and makes the precompute of rank RANK fail. Errors print as the program's do;
 * exits with the job's exit code. */
#include <stdio.h>
#include <stdlib.h>

#include "dist.h"
#include "optimize_run.h"

static mlc_status fail_rank(void *user, int rank, mlc_err *err) {
    int chosen = *(const int *)user;
    if (rank == chosen)
        return mlc_errf(err, MLC_EIO, "precompute failed on purpose (the test's fault on rank %d)",
                        chosen);
    return MLC_OK;
}

typedef struct args {
    int argc;
    char **argv;
} args;

/* Every process builds the configuration alike; a bad one is settled by the job. */
static mlc_status load(void *user, mlc_config *cfg, mlc_err *err) {
    const args *a = user;
    mlc_status s;
    mlc_config_defaults(cfg);
    for (int i = 3; i < a->argc; i++)
        if ((s = mlc_config_set(cfg, a->argv[i], err)) != MLC_OK) return s;
    snprintf(cfg->output.dir, sizeof cfg->output.dir, "%s", a->argv[2]);
    cfg->parallel.threads = 1;
    return mlc_config_validate(cfg, err);
}

static int report(void *user, mlc_status s, const mlc_err *err) {
    (void)user;
    fprintf(stderr, "modalloco: error: %s\n", err && err->msg[0] ? err->msg : mlc_strerror(s));
    return mlc_exit_code(s);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: optimize_fault RANK OUT_DIR [KEY=VALUE...]\n");
        return 2;
    }
    int rank = atoi(argv[1]);
    args a = {argc, argv};
    mlc_optimize_def def = {0};
    def.load = load;
    def.load_user = &a;
    def.quiet = 1;
    def.sink.fail = report;
    def.fault = fail_rank;
    def.fault_user = &rank;
    mlc_optimize_result res;
    int rc = mlc_optimize_run(&def, &res);
    mlc_optimize_result_free(&res);
    mlc_dist_finalize();
    return rc;
}
