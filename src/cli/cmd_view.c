/* cmd_view.c: `modalloco view DIR [--png FILE] [--gif FILE] [--apng FILE] [--mp4 FILE] ...`:
 * the options checked, then the viewer page, film strip and animations (job/view_job.h).
 * docs/viewing.md is the user's guide. */
#include <stdio.h>

#include "commands.h"
#include "view_job.h"

static int usage(const char *msg) {
    fprintf(stderr, "modalloco: %s\nTry 'modalloco view --help'.\n", msg);
    return 2;
}

static int check_options(const mlc_cli_options *opt, const mlc_view_def *d) {
    if (opt->out || opt->nsets) {
        fprintf(stderr,
                "modalloco: view writes DIR/view.html (or the files of --png, --gif, --apng, "
                "--mp4) and takes no %s\nTry 'modalloco view --help'.\n",
                opt->out ? "--out" : "--set");
        return 2;
    }
    int anim = opt->gif || opt->apng || opt->mp4;
    if (opt->frames && !opt->png && !anim)
        return usage("--frames goes with --png, --gif, --apng or --mp4 FILE");
    if ((opt->width || opt->height) && !opt->png && !anim)
        return usage("--width and --height go with --png, --gif, --apng or --mp4 FILE");
    if ((opt->fps || opt->speed_set || opt->follow || opt->hold_set) && !anim)
        return usage("--fps, --speed, --hold and --follow go with --gif, --apng or --mp4 FILE");
    if (opt->frames && opt->speed_set)
        return usage("--frames N spreads N frames over the whole run, which sets the speed; "
                     "give --frames or --speed, not both");
    if (opt->png && opt->frames > 64)
        return usage("--frames for the film strip (--png) is 1..64 panels");
    if (anim && opt->frames == 1) return usage("--frames for an animation is 2..5000");
    int w, h;
    mlc_view_anim_size(d, &w, &h);
    if (opt->mp4 && (w % 2 || h % 2)) {
        fprintf(stderr,
                "modalloco: --mp4: a video needs an even width and height (its colours are "
                "stored at half resolution); %d x %d is not\nTry 'modalloco view --help'.\n",
                w, h);
        return 2;
    }
    mlc_err err;
    if (mlc_view_check_names(d, &err) != MLC_OK) return usage(err.msg);
    return -1;
}

int mlc_cmd_view(const mlc_cli_options *opt) {
    mlc_view_def d = {opt->input,    opt->png,    opt->gif,       opt->apng,
                      opt->mp4,      opt->frames, opt->fps,       opt->width,
                      opt->height,   opt->speed,  opt->speed_set, opt->hold,
                      opt->hold_set, opt->follow, opt->quiet,     mlc_cli_sink()};
    int rc = check_options(opt, &d);
    if (rc >= 0) return rc;
    mlc_err err = {0};
    mlc_status s = mlc_view_job(&d, &err);
    return s == MLC_OK ? 0 : mlc_cli_fail(s, &err);
}
