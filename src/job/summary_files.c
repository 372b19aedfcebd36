/* summary_files.c: a summary's files (summary_files.h). */
#include "summary_files.h"

#include <stdio.h>
#include <string.h>

#include "output.h"

/* "STEM" + suffix, where STEM is `out` without a final ".csv" (owned). */
static char *beside(const char *out, const char *suffix) {
    size_t n = strlen(out), cap = n + strlen(suffix) + 1;
    if (n > 4 && !strcmp(out + n - 4, ".csv")) n -= 4;
    char *p = mlc_malloc(cap);
    if (p) snprintf(p, cap, "%.*s%s", (int)n, out, suffix);
    return p;
}

/* Write the CSV of `write` to `path` atomically. */
static mlc_status write_csv(const char *path, void (*write)(FILE *, const mlc_summary *),
                            const mlc_summary *sm, mlc_err *err) {
    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    write(af.fp, sm);
    return mlc_afile_commit(&af, err);
}

mlc_status mlc_summary_write_files(const mlc_summary *sm, const char *out, const char *gallery_root,
                                   mlc_summary_outputs *o, mlc_err *err) {
    mlc_status s;
    memset(o, 0, sizeof *o);
    if (!(o->runs_csv = mlc_strdup(out)) || !(o->bars_svg = beside(out, ".svg")) ||
        !(o->groups_csv = beside(out, "_groups.csv")) ||
        !(o->plot_svg = beside(out, "_by_setting.svg")))
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    if ((s = write_csv(o->runs_csv, mlc_summary_runs_csv, sm, err)) != MLC_OK ||
        (s = mlc_summary_bars_svg(o->bars_svg, sm, err)) != MLC_OK ||
        (s = write_csv(o->groups_csv, mlc_summary_groups_csv, sm, err)) != MLC_OK ||
        (s = mlc_summary_plot_svg(o->plot_svg, sm, err)) != MLC_OK)
        return s;
    if (!gallery_root) return MLC_OK;
    mlc_gallery_files files = {.runs_csv = o->runs_csv,
                               .groups_csv = o->groups_csv,
                               .plot_svg = o->plot_svg,
                               .bars_svg = o->bars_svg};
    return mlc_gallery_write(sm, gallery_root, &files, &o->gallery, err);
}

void mlc_summary_outputs_free(mlc_summary_outputs *o) {
    mlc_free(o->runs_csv), mlc_free(o->bars_svg), mlc_free(o->groups_csv), mlc_free(o->plot_svg);
    memset(o, 0, sizeof *o);
}
