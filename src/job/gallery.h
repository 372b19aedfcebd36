/* gallery.h: one HTML page of a whole sweep (`modalloco summarize ROOT --gallery`): every run's
 * film strip, grouped by setting with each group's numbers, and the summary's plots.
 *
 * The page is ROOT/index.html. It holds no data of its own: it shows files beside it through
 * relative links (each run's strip.png, the plots, the CSV files), so the directory can be
 * copied or served as it is and opened from file:// with no network. A run's film strip is
 * RUN/strip.png, rendered here (render.h, the renderer of `view --png`) when it is missing or
 * older than the run's animation.pc2. A run's RUN/view.html and RUN/gait.gif are linked when
 * they exist. A small inline script marks <body> when the page has loaded: data-ready="1",
 * data-images (images shown), data-broken (images that failed to load) and data-remote
 * (resources loaded from anywhere but file:, 0 for a page opened from disk).
 */
#ifndef MODALLOCO_GALLERY_H
#define MODALLOCO_GALLERY_H

#include "base.h"
#include "summary.h"

/* Files the page links to, as paths (absolute or relative to the working directory); NULL =
 * none. */
typedef struct mlc_gallery_files {
    const char *runs_csv, *groups_csv; /* the per-run and grouped CSV */
    const char *plot_svg, *bars_svg;   /* J by setting; J per run */
} mlc_gallery_files;

/* What mlc_gallery_write did. */
typedef struct mlc_gallery_info {
    int strips_made; /* film strips rendered now */
    int strips_kept; /* film strips newer than their animation, left as they were */
    int without;     /* runs without a strip (no surface.obj/animation.pc2 yet) */
} mlc_gallery_info;

/* Render the missing strips and write `dir`/index.html atomically for the runs of `sm`
 * (grouped: mlc_summary_group_runs). A run whose surface or animation cannot be read gets a
 * note in the page instead of a strip, not an error. MLC_EIO when the page or a strip cannot
 * be written. */
mlc_status mlc_gallery_write(const mlc_summary *sm, const char *dir, const mlc_gallery_files *files,
                             mlc_gallery_info *info, mlc_err *err);

/* The path of `target` relative to the directory `from` (both existing, or absolute), for a
 * link in a page in `from` (owned, mlc_free; NULL when out of memory). */
char *mlc_gallery_relative(const char *from, const char *target);

#endif
