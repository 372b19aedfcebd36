/* summary_files.h: what `modalloco summarize --out FILE.csv` (or --gallery) writes from a
 * summary (summary.h): the per-run CSV at `out`, beside it STEM.svg (bars), STEM_groups.csv
 * and STEM_by_setting.svg (STEM is `out` without .csv), and with a gallery root ROOT/index.html
 * (gallery.h). */
#ifndef MODALLOCO_SUMMARY_FILES_H
#define MODALLOCO_SUMMARY_FILES_H

#include "base.h"
#include "gallery.h"
#include "summary.h"

typedef struct mlc_summary_outputs {
    char *runs_csv, *bars_svg, *groups_csv, *plot_svg; /* the paths written (owned) */
    mlc_gallery_info gallery;                          /* with a gallery */
} mlc_summary_outputs;

/* Write the files (each atomically); gallery_root NULL for no gallery. Free *o with
 * mlc_summary_outputs_free whatever the outcome. */
mlc_status mlc_summary_write_files(const mlc_summary *sm, const char *out, const char *gallery_root,
                                   mlc_summary_outputs *o, mlc_err *err);
void mlc_summary_outputs_free(mlc_summary_outputs *o);

#endif
