/* view_job.h: what `modalloco view DIR` makes of a run directory (docs/viewing.md): DIR/view.html
 * (viewer.h) or, when any file is named, a film strip PNG and GIF, animated PNG and MP4/WebM
 * animations (the video through the ffmpeg program). The files written are said through the
 * sink (results), with the viewer's size as a note unless quiet. */
#ifndef MODALLOCO_VIEW_JOB_H
#define MODALLOCO_VIEW_JOB_H

#include "base.h"
#include "sink.h"

typedef struct mlc_view_def {
    const char *dir;                    /* the run directory */
    const char *png, *gif, *apng, *mp4; /* files to write, or NULL */
    int frames;                         /* strip panels or animation frames (0 = default) */
    int fps;                            /* animation frames per second (0 = default) */
    int width, height;                  /* pixels of a panel or frame (0 = default) */
    double speed;                       /* simulated seconds per second played (with speed_set) */
    int speed_set;
    double hold; /* seconds the last frame of a looping animation stays (with hold_set) */
    int hold_set;
    int follow; /* the camera moves with the body */
    int quiet;
    mlc_sink sink;
} mlc_view_def;

/* MLC_EINVAL when a named file's extension is one another option writes, or none does; the
 * message names the option or the extension to use. */
mlc_status mlc_view_check_names(const mlc_view_def *d, mlc_err *err);

/* The animation frame size: width and height, or 16:9 defaults (the height even). */
void mlc_view_anim_size(const mlc_view_def *d, int *w, int *h);

/* Write the files. MLC_EINVAL when --mp4 is asked and ffmpeg is not on PATH, or an animation
 * would have too many frames; the run's own errors as mlc_run_load says. */
mlc_status mlc_view_job(const mlc_view_def *d, mlc_err *err);

#endif
