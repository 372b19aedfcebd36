/* cmd_simulate.c: `modalloco simulate [CONFIG|PARAMS]`: one rollout with given parameters
 * (job/simulate_job.h), its summary on stdout, --json. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "simulate_job.h"

int mlc_cmd_simulate(const mlc_cli_options *opt) {
    mlc_err err = {0};
    mlc_config cfg;
    mlc_status s = mlc_cli_load_config(opt, &cfg, &err);
    if (s != MLC_OK) return mlc_cli_fail(s, &err);
    mlc_simulate_def d = {0};
    d.input = opt->input;
    d.out_given = opt->out != NULL;
    for (int i = 0; i < opt->nsets; i++)
        d.out_given |= strncmp(opt->sets[i], "output.dir=", 11) == 0;
    d.full_space = opt->full_space;
    d.force = opt->force;
    d.quiet = opt->quiet;
    d.expect = opt->expect;
    d.tolerance = opt->tolerance_set ? opt->tolerance : 1e-9;
    d.sink = mlc_cli_sink();
    mlc_pipeline p;
    memset(&p, 0, sizeof p);
    p.note = mlc_sink_note, p.note_user = &d.sink;
    int differ = 0;
    s = mlc_simulate_job(&d, &cfg, &p, &differ, &err);
    mlc_pipeline_free(&p);
    if (s == MLC_OK) s = mlc_cli_print_result_json(cfg.output.dir, opt->full_space, &err);
    if (s != MLC_OK) return mlc_cli_fail(s, &err);
    return differ ? 1 : 0;
}
