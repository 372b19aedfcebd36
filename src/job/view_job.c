/* view_job.c: the view job (view_job.h): the HTML viewer of a run directory (viewer.c), a film
 * strip PNG and animations, all rendered without a browser (render.c, anim.c).
 *
 * An animation shows the run at its real speed by default: frame k is the surface at
 * t = k·speed/fps seconds of simulated time, interpolated linearly between the two samples of
 * animation.pc2 around it, so any frame rate plays at the stated speed. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "anim.h"
#include "png.h"
#include "render.h"
#include "view_job.h"
#include "viewer.h"

/* Defaults (docs/viewing.md). */
#define STRIP_PANELS 6
#define STRIP_W 320
#define STRIP_H 240
#define ANIM_W 480
#define ANIM_H 270
#define ANIM_FPS 25
#define ANIM_HOLD 0.5
#define ANIM_MAX_FRAMES 5000

/* ---- File names ------------------------------------------------------------------------- */

typedef struct view_output {
    const char *option; /* "--png" ... */
    const char *what;   /* for messages */
    const char *exts;   /* extensions it writes, space separated */
} view_output;

static const view_output outputs[] = {{"--png", "a PNG film strip", "png"},
                                      {"--gif", "a GIF animation", "gif"},
                                      {"--apng", "an animated PNG", "png apng"},
                                      {"--mp4", "an MP4 (or WebM) video", "mp4 webm"}};

/* The extension of the file name in path (after the last dot of its last component), or "". */
static const char *extension(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : "";
}

static int has_ext(const char *exts, const char *ext) {
    size_t n = strlen(ext);
    for (const char *p = exts; *p;) {
        size_t m = strcspn(p, " ");
        if (m == n && !strncasecmp(p, ext, n)) return 1;
        p += m;
        while (*p == ' ')
            p++;
    }
    return 0;
}

/* A name without an extension is taken as it is; one whose extension another option writes,
 * or none writes, is a usage error that names the option to use. */
static mlc_status check_name(const view_output *o, const char *path, mlc_err *err) {
    const char *ext = extension(path);
    if (!*ext || has_ext(o->exts, ext)) return MLC_OK;
    /* The options that write this extension (.png: the strip and the animated PNG). */
    char use[128] = "";
    for (size_t k = 0; k < sizeof outputs / sizeof outputs[0]; k++)
        if (has_ext(outputs[k].exts, ext))
            snprintf(use + strlen(use), sizeof use - strlen(use), "%s%s %s (%s)",
                     *use ? ", or " : "", outputs[k].option, path, outputs[k].what);
    if (*use)
        return mlc_errf(err, MLC_EINVAL,
                        "%s writes %s, but '%s' is named for another format; use %s, or "
                        "name the file .%.*s",
                        o->option, o->what, path, use, (int)strcspn(o->exts, " "), o->exts);
    return mlc_errf(err, MLC_EINVAL,
                    "%s writes %s, but '%s' has the extension .%s, which view does not "
                    "write; name it .%.*s (view writes .png with --png or --apng, .gif with "
                    "--gif, .mp4 or .webm with --mp4)",
                    o->option, o->what, path, ext, (int)strcspn(o->exts, " "), o->exts);
}

mlc_status mlc_view_check_names(const mlc_view_def *d, mlc_err *err) {
    const char *paths[4] = {d->png, d->gif, d->apng, d->mp4};
    mlc_status s = MLC_OK;
    for (int k = 0; k < 4 && s == MLC_OK; k++)
        if (paths[k]) s = check_name(&outputs[k], paths[k], err);
    return s;
}

/* ---- The scene ----------------------------------------------------------------------------- */

/* The rest body's largest bounding-box extent, and its mean vertex. */
static double rest_extent(const mlc_run *run, double mean[3]) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    mean[0] = mean[1] = mean[2] = 0;
    for (int i = 0; i < run->nv; i++)
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], run->rest[3 * i + c]), hi[c] = fmax(hi[c], run->rest[3 * i + c]);
            mean[c] += run->rest[3 * i + c] / run->nv;
        }
    return fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
}

/* The task's marks in green, their size a tenth of the rest body's largest extent. Returns the
 * count; *marks owned. */
static int task_marks(const mlc_run *run, double **marks) {
    double mean[3];
    double size = 0.1 * rest_extent(run, mean);
    return mlc_run_task_segments(run, size, marks);
}

/* For the animations of a run whose task is a direction (locomotion, roll): the marks plus an
 * arrow on the ground from the first centre of mass along objective.direction, as long as the
 * rest body's largest extent. The film strip keeps the marks alone. Returns the count; *out
 * owned (NULL and 0 when out of memory). */
static int with_direction_arrow(const mlc_run *run, const double *marks, int nmarks, double **out) {
    *out = NULL;
    double d[3] = {0, 0, 0};
    int have = 0;
    if ((!strcmp(run->kind, "locomotion") || !strcmp(run->kind, "roll")) && run->config_json) {
        cJSON *root = cJSON_Parse(run->config_json);
        const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "objective");
        const cJSON *dir = cJSON_GetObjectItemCaseSensitive(obj, "direction");
        if (cJSON_IsArray(dir) && cJSON_GetArraySize(dir) == 3) {
            have = 1;
            for (int k = 0; k < 3; k++) {
                const cJSON *v = cJSON_GetArrayItem(dir, k);
                have &= cJSON_IsNumber(v);
                if (cJSON_IsNumber(v)) d[k] = v->valuedouble;
            }
        }
        cJSON_Delete(root);
    }
    double n = sqrt(d[0] * d[0] + d[2] * d[2]);
    int extra = have && n > 1e-9 ? 3 : 0;
    double *s = mlc_malloc(sizeof(double) * 6 * (size_t)(nmarks + extra));
    if (!s) return 0;
    if (nmarks) memcpy(s, marks, sizeof(double) * 6 * (size_t)nmarks);
    if (extra) {
        double c[3];
        double len = rest_extent(run, c);
        if (run->ntraj > 0) c[0] = run->traj[1], c[2] = run->traj[3];
        mlc_render_ground_arrow(c[0], c[2], d[0] / n * len, d[2] / n * len, run->ground_y, 0.15,
                                0.09, s + 6 * nmarks);
    }
    *out = s;
    return nmarks + extra;
}

static void time_label(char *buf, size_t cap, double t, double speed) {
    if (fabs(speed - 1) < 1e-9)
        snprintf(buf, cap, "t = %.2f s", t);
    else
        snprintf(buf, cap, "t = %.2f s (%.3gx speed)", t, speed);
}

/* ---- Film strip ---------------------------------------------------------------------------- */

static mlc_status write_strip(const mlc_view_def *opt, const mlc_run *run, const double *marks,
                              int nmarks, mlc_err *err) {
    /* Panels evenly spread from the first to the last frame. */
    int n = opt->frames > 0 ? opt->frames : STRIP_PANELS;
    if (n > run->nframes) n = run->nframes;
    int frames[64];
    char text[64][48];
    const char *labels[64];
    for (int k = 0; k < n; k++) {
        frames[k] = n == 1 ? 0 : (int)lrint((double)k * (run->nframes - 1) / (n - 1));
        time_label(text[k], sizeof text[k], frames[k] * run->frame_dt, 1);
        labels[k] = text[k];
    }
    mlc_filmstrip_options fo;
    memset(&fo, 0, sizeof fo);
    fo.panel_w = opt->width > 0 ? opt->width : STRIP_W;
    fo.panel_h = opt->height > 0 ? opt->height : STRIP_H;
    fo.ground_y = run->ground_y;
    fo.marks = marks;
    fo.nmarks = nmarks;
    fo.labels = labels;
    mlc_image im;
    mlc_status s = mlc_render_filmstrip(run->xyz, run->nv, run->nframes, run->faces, run->nf,
                                        frames, n, &fo, &im, err);
    if (s == MLC_OK) {
        s = mlc_png_write(opt->png, im.rgb, im.w, im.h, err);
        if (s == MLC_OK)
            mlc_sink_say(&opt->sink, 1, "%s (%d x %d, %d frames of %d)\n", opt->png, im.w, im.h, n,
                         run->nframes);
    }
    mlc_image_free(&im);
    return s;
}

/* ---- Animations ------------------------------------------------------------------------------ */

typedef struct anim_plan {
    const mlc_run *run;
    mlc_render_scene scene;
    double tstep;   /* simulated seconds between frames */
    double speed;   /* simulated seconds per second played */
    int follow;     /* move the camera with the body */
    double *center; /* 2·nframes: bounding-box centre (x, z) per sample (follow) */
    double c0[2];   /* the smoothed centre the camera was fitted on */
    float *xyz;     /* 3·nv: the interpolated surface */
    mlc_image im;
} anim_plan;

/* The body's centre in x and z around simulated time t: the mean of the samples' bounding-box
 * centres within half a second either side, so the camera glides instead of shaking with
 * every step. */
static void smooth_center(const anim_plan *p, double t, double c[2]) {
    const mlc_run *run = p->run;
    int half = (int)lrint(0.5 / run->frame_dt);
    int mid = (int)lrint(t / run->frame_dt);
    int a = MLC_MAX(0, mid - half), b = MLC_MIN(run->nframes - 1, mid + half);
    c[0] = c[1] = 0;
    for (int i = a; i <= b; i++)
        c[0] += p->center[2 * i], c[1] += p->center[2 * i + 1];
    c[0] /= b - a + 1, c[1] /= b - a + 1;
}

static mlc_status anim_frame(void *ctx, int k, unsigned char *rgb, mlc_err *err) {
    (void)err;
    anim_plan *p = ctx;
    const mlc_run *run = p->run;
    double t = k * p->tstep;
    double u = t / run->frame_dt;
    int i0 = (int)floor(u);
    if (i0 >= run->nframes - 1) i0 = run->nframes - 1, u = i0;
    if (i0 < 0) i0 = 0, u = 0;
    float a = (float)(u - i0);
    const float *x0 = run->xyz + (size_t)3 * run->nv * i0;
    const float *x1 = i0 + 1 < run->nframes ? x0 + (size_t)3 * run->nv : x0;
    for (size_t i = 0; i < (size_t)3 * run->nv; i++)
        p->xyz[i] = x0[i] + a * (x1[i] - x0[i]);
    mlc_render_scene sc = p->scene;
    if (p->follow) {
        double c[2];
        smooth_center(p, t, c);
        for (int e = 0; e < 2; e++) {
            sc.cam.eye[2 * e] += c[e] - p->c0[e];
            sc.cam.target[2 * e] += c[e] - p->c0[e];
        }
    }
    mlc_render_scene_draw(&p->im, &sc, p->xyz, run->nv, run->faces, run->nf);
    char label[64];
    time_label(label, sizeof label, t, p->speed);
    int scale = mlc_label_scale(p->im.h);
    mlc_draw_label(&p->im, 3 * scale, 3 * scale, label, scale);
    memcpy(rgb, p->im.rgb, (size_t)3 * p->im.w * p->im.h);
    return MLC_OK;
}

/* Frame the camera: on every sample and the task's marks (fixed), or on the largest extent of
 * the body in one sample around its smoothed starting place (follow). */
static mlc_status plan_camera(anim_plan *p, const double *marks, int nmarks, int w, int h,
                              mlc_err *err) {
    const mlc_run *run = p->run;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double half[3] = {0, 0, 0};
    if (p->follow && !(p->center = mlc_malloc(sizeof(double) * 2 * (size_t)run->nframes)))
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    for (int f = 0; f < run->nframes; f++) {
        const float *x = run->xyz + (size_t)3 * run->nv * f;
        double flo[3] = {INFINITY, INFINITY, INFINITY}, fhi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int i = 0; i < run->nv; i++)
            for (int c = 0; c < 3; c++)
                if (isfinite(x[3 * i + c]))
                    flo[c] = fmin(flo[c], (double)x[3 * i + c]),
                    fhi[c] = fmax(fhi[c], (double)x[3 * i + c]);
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], flo[c]), hi[c] = fmax(hi[c], fhi[c]);
            if (fhi[c] >= flo[c]) half[c] = fmax(half[c], 0.5 * (fhi[c] - flo[c]));
        }
        if (p->follow) {
            p->center[2 * f] = fhi[0] >= flo[0] ? 0.5 * (flo[0] + fhi[0]) : 0;
            p->center[2 * f + 1] = fhi[2] >= flo[2] ? 0.5 * (flo[2] + fhi[2]) : 0;
        }
    }
    if (!(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]))
        return mlc_errf(err, MLC_EINVAL, "%s/animation.pc2 holds no finite position", run->dir);
    if (p->follow) {
        /* A body-sized box with a fifth more room, so the smoothing's lag stays in view. */
        smooth_center(p, 0, p->c0);
        lo[0] = p->c0[0] - 1.2 * half[0], hi[0] = p->c0[0] + 1.2 * half[0];
        lo[2] = p->c0[1] - 1.2 * half[2], hi[2] = p->c0[1] + 1.2 * half[2];
    } else {
        for (int i = 0; i < 2 * nmarks; i++)
            for (int c = 0; c < 3; c++)
                if (isfinite(marks[3 * i + c]))
                    lo[c] = fmin(lo[c], marks[3 * i + c]), hi[c] = fmax(hi[c], marks[3 * i + c]);
    }
    mlc_render_scene_fit(&p->scene, lo, hi, run->ground_y, 0, 0, w, h);
    p->scene.marks = marks;
    p->scene.nmarks = nmarks;
    return MLC_OK;
}

/* The frame size: 16:9 by default, the default height rounded to even for the video codecs. */
void mlc_view_anim_size(const mlc_view_def *opt, int *w, int *h) {
    *w = opt->width > 0 ? opt->width : ANIM_W;
    *h = opt->height > 0 ? opt->height : 2 * (int)lrint(*w * 9.0 / 32);
}

static mlc_status write_animations(const mlc_view_def *opt, const mlc_run *run, const double *marks,
                                   int nmarks, const char *ffmpeg, mlc_err *err) {
    anim_plan p;
    memset(&p, 0, sizeof p);
    p.run = run;
    p.follow = opt->follow;
    mlc_anim_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.fps = opt->fps > 0 ? opt->fps : ANIM_FPS;
    spec.hold = opt->hold_set ? opt->hold : ANIM_HOLD;
    mlc_view_anim_size(opt, &spec.w, &spec.h);
    double span = (run->nframes - 1) * run->frame_dt; /* simulated seconds */
    if (opt->frames > 0) {
        spec.nframes = opt->frames;
        p.tstep = opt->frames > 1 ? span / (opt->frames - 1) : 0;
        p.speed = p.tstep > 0 ? p.tstep * spec.fps : 1;
    } else {
        p.speed = opt->speed_set ? opt->speed : 1;
        p.tstep = p.speed / spec.fps;
        double n = floor(span / p.tstep + 1e-9) + 1;
        if (n > ANIM_MAX_FRAMES)
            return mlc_errf(err, MLC_EINVAL,
                            "%.0f frames (%.2f s simulated at %g x speed and %d fps) are more "
                            "than %d; raise --speed, lower --fps, or give --frames N",
                            n, span, p.speed, spec.fps, ANIM_MAX_FRAMES);
        spec.nframes = (int)n;
    }
    mlc_status s = plan_camera(&p, marks, nmarks, spec.w, spec.h, err);
    if (s == MLC_OK && !(p.xyz = mlc_malloc(sizeof(float) * 3 * (size_t)run->nv)))
        s = mlc_errf(err, MLC_ENOMEM, "out of memory");
    if (s == MLC_OK) s = mlc_image_init(&p.im, spec.w, spec.h, mlc_render_bg, err);
    const char *paths[3] = {opt->gif, opt->apng, opt->mp4};
    for (int f = 0; f < 3 && s == MLC_OK; f++) {
        if (!paths[f]) continue;
        mlc_anim_info info;
        memset(&info, 0, sizeof info);
        if (f == 0)
            s = mlc_gif_write(paths[f], &spec, anim_frame, &p, &info, err);
        else if (f == 1)
            s = mlc_apng_write(paths[f], &spec, anim_frame, &p, &info, err);
        else
            s = mlc_video_write(paths[f], ffmpeg, &spec, anim_frame, &p, &info, err);
        if (s != MLC_OK) break;
        char speed[32];
        if (fabs(p.speed - 1) < 1e-9)
            snprintf(speed, sizeof speed, "real speed");
        else
            snprintf(speed, sizeof speed, "%.3g x speed", p.speed);
        mlc_sink_say(&opt->sink, 1,
                     "%s (%d x %d, %d frames at %d fps, %.2f s of simulated time at %s, %.0f KB)\n",
                     paths[f], spec.w, spec.h, spec.nframes, spec.fps, (spec.nframes - 1) * p.tstep,
                     speed, info.bytes / 1024.0);
    }
    mlc_image_free(&p.im);
    mlc_free(p.xyz);
    mlc_free(p.center);
    return s;
}

mlc_status mlc_view_job(const mlc_view_def *opt, mlc_err *err) {
    char ffmpeg[4096] = "";
    if (opt->mp4 && !mlc_video_find("ffmpeg", ffmpeg, sizeof ffmpeg))
        return mlc_errf(err, MLC_EINVAL,
                        "--mp4 encodes with the ffmpeg program, which is not on PATH; install "
                        "it (Debian and Ubuntu: apt-get install ffmpeg; macOS: brew install "
                        "ffmpeg), or write an animation without it: --gif FILE.gif or --apng "
                        "FILE.png");
    mlc_run run;
    mlc_status s = mlc_run_load(opt->dir, &run, err);
    if (s != MLC_OK) return s;

    if (opt->png || opt->gif || opt->apng || opt->mp4) {
        double *marks = NULL;
        int nmarks = task_marks(&run, &marks);
        /* The animations first: their frame count is checked before anything is written. */
        if (opt->gif || opt->apng || opt->mp4) {
            double *amarks;
            int namarks = with_direction_arrow(&run, marks, nmarks, &amarks);
            s = write_animations(opt, &run, amarks, namarks, ffmpeg, err);
            mlc_free(amarks);
        }
        if (s == MLC_OK && opt->png) s = write_strip(opt, &run, marks, nmarks, err);
        mlc_free(marks);
    } else {
        size_t len = strlen(opt->dir) + 16;
        char *path = mlc_malloc(len);
        if (!path) {
            s = mlc_errf(err, MLC_ENOMEM, "out of memory");
        } else {
            snprintf(path, len, "%s/view.html", opt->dir);
            mlc_view_html_info info;
            s = mlc_view_html_write(&run, path, MLC_VIEW_MAX_DATA, &info, err);
            if (s == MLC_OK) {
                mlc_sink_say(&opt->sink, 1, "%s\n", path);
                if (!opt->quiet)
                    mlc_sink_say(&opt->sink, 0,
                                 "modalloco: %.1f MB, %d vertices, %d of %d frames%s\n",
                                 (double)info.bytes / (1 << 20), run.nv, info.frames, run.nframes,
                                 info.quantized ? ", positions quantized to 16 bits" : "");
            }
            mlc_free(path);
        }
    }
    mlc_run_free(&run);
    return s;
}
