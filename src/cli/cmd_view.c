/* cmd_view.c: `modalloco view DIR [--png FILE [--frames N]]`: the HTML viewer of a run
 * directory (DIR/view.html, viewer.c) or a film strip PNG rendered without a browser
 * (render.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "png.h"
#include "render.h"
#include "viewer.h"

int mlc_cmd_view(const mlc_cli_options *opt) {
    if (opt->out || opt->nsets) {
        fprintf(stderr,
                "modalloco: view writes DIR/view.html (or --png FILE) and takes no "
                "%s\nTry 'modalloco view --help'.\n",
                opt->out ? "--out" : "--set");
        return 2;
    }
    if (opt->frames && !opt->png) {
        fprintf(stderr, "modalloco: --frames goes with --png FILE\nTry 'modalloco view "
                        "--help'.\n");
        return 2;
    }
    mlc_err err = {0};
    mlc_run run;
    mlc_status s = mlc_run_load(opt->input, &run, &err);
    if (s != MLC_OK) return mlc_cli_fail(s, &err);

    if (opt->png) {
        /* Panels evenly spread from the first to the last frame. */
        int n = opt->frames > 0 ? opt->frames : 6;
        if (n > run.nframes) n = run.nframes;
        int frames[64];
        for (int k = 0; k < n; k++)
            frames[k] = n == 1 ? 0 : (int)lrint((double)k * (run.nframes - 1) / (n - 1));
        mlc_filmstrip_options fo;
        memset(&fo, 0, sizeof fo);
        fo.ground_y = run.ground_y;
        /* The task in green, its size a tenth of the rest body's largest extent. */
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int i = 0; i < run.nv; i++)
            for (int c = 0; c < 3; c++)
                lo[c] = fmin(lo[c], run.rest[3 * i + c]), hi[c] = fmax(hi[c], run.rest[3 * i + c]);
        double size = 0.1 * fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
        double *marks = NULL;
        fo.nmarks = mlc_run_task_segments(&run, size, &marks);
        fo.marks = marks;
        mlc_image im;
        s = mlc_render_filmstrip(run.xyz, run.nv, run.nframes, run.faces, run.nf, frames, n, &fo,
                                 &im, &err);
        mlc_free(marks);
        if (s == MLC_OK) {
            s = mlc_png_write(opt->png, im.rgb, im.w, im.h, &err);
            if (s == MLC_OK)
                printf("%s (%d x %d, %d frames of %d)\n", opt->png, im.w, im.h, n, run.nframes);
        }
        mlc_image_free(&im);
    } else {
        size_t len = strlen(opt->input) + 16;
        char *path = mlc_malloc(len);
        if (!path) {
            s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
        } else {
            snprintf(path, len, "%s/view.html", opt->input);
            mlc_view_html_info info;
            s = mlc_view_html_write(&run, path, MLC_VIEW_MAX_DATA, &info, &err);
            if (s == MLC_OK) {
                printf("%s\n", path);
                if (!opt->quiet)
                    fprintf(stderr, "modalloco: %.1f MB, %d vertices, %d of %d frames%s\n",
                            (double)info.bytes / (1 << 20), run.nv, info.frames, run.nframes,
                            info.quantized ? ", positions quantized to 16 bits" : "");
            }
            mlc_free(path);
        }
    }
    mlc_run_free(&run);
    return s == MLC_OK ? 0 : mlc_cli_fail(s, &err);
}
