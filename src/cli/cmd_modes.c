/* cmd_modes.c: `modalloco modes`: the subspaces and the files to inspect them (job/modes_job.h);
 * their eigenvalues, modes, regions and clusters on stdout. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "modes_job.h"

int mlc_cmd_modes(const mlc_cli_options *opt) {
    mlc_err err = {0};
    mlc_config cfg;
    mlc_pipeline p;
    memset(&p, 0, sizeof p);
    mlc_sink sink = mlc_cli_sink();
    p.note = mlc_sink_note, p.note_user = &sink;
    mlc_status s = mlc_cli_load_config(opt, &cfg, &err);
    if (s != MLC_OK) return mlc_cli_fail(s, &err);
    if ((s = mlc_modes_job(&p, &cfg, opt->force, &err)) != MLC_OK) {
        mlc_pipeline_free(&p);
        return mlc_cli_fail(s, &err);
    }
    const char *dir = cfg.output.dir;
    const mlc_subspace *sub = &p.sub;
    printf("skinning eigenvalues:");
    for (int b = 0; b < sub->w; b++)
        printf(" %.6g", sub->skin_eval[b]);
    printf("\nvibration modes:");
    for (int i = 0; i < sub->m; i++)
        printf(" %d", sub->mode_index[i]);
    printf("\nvibration eigenvalues:");
    for (int i = 0; i < sub->m; i++)
        printf(" %.6g", sub->vib_eval[i]);
    if (sub->nregions > 0) {
        printf("\nmode regions (-1 = global):");
        for (int i = 0; i < sub->m; i++)
            printf(" %d", sub->mode_region[i]);
        printf("\noutside shares:");
        for (int i = 0; i < sub->m; i++)
            printf(" %.3f", sub->vib_frac[i]);
    }
    printf("\npassive clusters: %d, actuation clusters: %d, contact samples: %d\n", sub->ncp,
           sub->nca, sub->ns);
    printf("regions: %d (%s)\n", p.regions.nregions, p.regions.source);
    if (!opt->quiet)
        fprintf(stderr,
                "modalloco: mesh %.2f s, fem %.2f s, subspaces %.2f s%s, files %.2f s; outputs in "
                "%s\n",
                p.t_mesh, p.t_fem, p.t_subspace, p.cache_used ? " (cache)" : "", p.t_files, dir);
    mlc_pipeline_free(&p);
    return 0;
}
