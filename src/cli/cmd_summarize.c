/* cmd_summarize.c: `modalloco summarize DIR...`: the runs' results, per run and grouped by
 * setting (job/summary.h): one CSV row per run on stdout (or --json), or with --out FILE.csv
 * the files of job/summary_files.h, a table of the groups (or --json), and with --gallery
 * ROOT/index.html. docs/cluster.md is the user's guide. */
#include <stdio.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "output.h"
#include "summary_files.h"

int mlc_cmd_summarize(const mlc_cli_options *opt) {
    mlc_err err = {0};
    mlc_summary sm = {0};
    mlc_summary_outputs files = {0};
    char *out = NULL;
    int rc = 0;
    mlc_status s = MLC_OK;
    if (opt->ninputs == 0) {
        s = mlc_errf(&err, MLC_EINVAL,
                     "summarize needs one or more run directories or sweep "
                     "output roots");
        goto fail;
    }
    if (opt->gallery && opt->ninputs != 1) {
        s = mlc_errf(&err, MLC_EINVAL,
                     "--gallery writes ROOT/index.html for one sweep root, and %d "
                     "directories were given; summarize them one at a time",
                     opt->ninputs);
        goto fail;
    }
    for (int i = 0; i < opt->ninputs; i++)
        if ((s = mlc_summary_collect(&sm, opt->inputs[i], &err)) != MLC_OK) goto fail;
    if ((s = mlc_summary_group_runs(&sm, &err)) != MLC_OK) goto fail;
    /* The gallery's files go beside it unless --out says where. */
    if (opt->out)
        out = mlc_strdup(opt->out);
    else if (opt->gallery)
        out = mlc_path_join_alloc(opt->inputs[0], "summary.csv");
    if (!out) {
        if (opt->out || opt->gallery) {
            s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
            goto fail;
        }
        /* No files: what scripts read from stdout. */
        if (opt->json)
            rc = mlc_cli_print_json(mlc_summary_json(&sm));
        else
            mlc_summary_runs_csv(stdout, &sm);
        goto done;
    }
    s = mlc_summary_write_files(&sm, out, opt->gallery ? opt->inputs[0] : NULL, &files, &err);
    if (s != MLC_OK) goto fail;
    if (opt->json)
        rc = mlc_cli_print_json(mlc_summary_json(&sm));
    else
        mlc_summary_table(stdout, &sm);
    if (!opt->quiet) {
        fprintf(stderr, "modalloco: %d runs in %d groups: %s, %s, %s, %s", sm.nruns, sm.ngroups,
                files.runs_csv, files.groups_csv, files.plot_svg, files.bars_svg);
        if (opt->gallery)
            fprintf(stderr, ", %s/index.html (%d film strips made, %d kept, %d runs without)",
                    opt->inputs[0], files.gallery.strips_made, files.gallery.strips_kept,
                    files.gallery.without);
        fputc('\n', stderr);
    }
    goto done;
fail:
    rc = mlc_cli_fail(s, &err);
done:
    mlc_summary_free(&sm);
    mlc_summary_outputs_free(&files);
    mlc_free(out);
    return rc;
}
