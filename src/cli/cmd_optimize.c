/* cmd_optimize.c: `modalloco optimize`: the options into the optimize job (src/job/optimize_run.h),
 * its words onto the terminal (results on stdout, progress and errors on stderr), and --json.
 */
#include <stdio.h>

#include "commands.h"
#include "optimize_run.h"

/* The configuration, made by every process after MPI has started (the job settles a bad one). */
static mlc_status load_config(void *user, mlc_config *cfg, mlc_err *err) {
    return mlc_cli_load_config(user, cfg, err);
}

int mlc_cmd_optimize(const mlc_cli_options *opt_in) {
    mlc_cli_options opt = *opt_in;
    /* --resume DIR without a config: the configuration the run wrote, and DIR as --out. */
    char resume_cfg[MLC_CONFIG_PATH_MAX + 64];
    if (opt.resume) {
        if (!opt.out) opt.out = opt.resume;
        if (!opt.input) {
            snprintf(resume_cfg, sizeof resume_cfg, "%s/config.json", opt.resume);
            opt.input = resume_cfg;
        }
    }
    mlc_optimize_def def = {0};
    def.load = load_config;
    def.load_user = &opt;
    def.resume = opt.resume;
    def.force = opt.force;
    def.dry_run = opt.dry_run;
    def.quiet = opt.quiet;
    def.sink = mlc_cli_sink();
    mlc_optimize_result res;
    int rc = mlc_optimize_run(&def, &res);
    if (res.written) {
        mlc_err err;
        mlc_status s = mlc_cli_print_result_json(res.dir, 0, &err); /* --json */
        if (s != MLC_OK) rc = mlc_cli_fail(s, &err);
    }
    mlc_optimize_result_free(&res);
    return rc;
}
