/* viewer.h: reading a run directory (what simulate/optimize write) for viewing, and writing the
 * self-contained HTML viewer `DIR/view.html` (`modalloco view DIR`).
 *
 * The page plays the surface animation with WebGL (a 2D-canvas fallback without WebGL), draws
 * the ground grid (or the run's terrain: slope, heightfield, boxes, as triangles built here) and
 * the centre-of-mass path with the task (target, waypoints, heading), plots best/median J per
 * generation and lists the key numbers. Everything is inside the one file (inline CSS and JS,
 * data as base64; a Content-Security-Policy forbids any load), so it opens from file:// with no
 * network. When the data is decoded and the first frame drawn, the page sets data-ready (frames
 * loaded), data-resources (resource entries, always 0), data-webgl (1 or 0), data-task (the
 * kind whose geometry it draws, or empty) and data-terrain (terrain triangles, 0 for the flat
 * plane) on <body>.
 */
#ifndef MODALLOCO_VIEWER_H
#define MODALLOCO_VIEWER_H

#include <stddef.h>

#include "base.h"
#include "terrain.h"

/* A run directory in memory. Zeroed = empty; mlc_run_free is idempotent. */
typedef struct mlc_run {
    char *dir;          /* as given (owned) */
    int nv, nf;         /* surface points (= PC2 points) and triangles */
    int *faces;         /* 3·nf, 0-based (surface.obj) */
    int nframes;        /* PC2 samples */
    float *xyz;         /* 3·nv·nframes, sample-major (animation.pc2) */
    double frame_dt;    /* seconds between samples: sim.dt · output.every (0.01 if unknown) */
    int traj_per_frame; /* trajectory rows per sample: output.every (1 if unknown) */
    double ground_y;    /* contact.ground_height (0 if unknown) */
    int ntraj;          /* trajectory.csv rows (0 if the file is absent) */
    double *traj;       /* 4·ntraj: time, com x, y, z */
    int nhist;          /* history.csv rows (0 if absent) */
    double *hist;       /* 3·nhist: generation, best_J, median_J */
    char *config_json, *params_json, *result_json; /* file texts or NULL if absent */
    double *rest;                                  /* 3·nv rest surface (surface.obj's vertices) */
    double *fwd; /* 3·ntraj forward axis per trajectory row (kind "turn"; else NULL) */
    /* The task and the ground of config.json (kind "" when there is none or it does not load) */
    char kind[32];          /* objective.kind */
    int target_set;         /* objective.target given */
    double target[3];       /* objective.target */
    double heading[3];      /* objective.heading on the ground (x, 0, z), kind "turn" */
    int npath;              /* objective.path's waypoints (kind "path"; 0 if unreadable) */
    double *path;           /* 4·npath: time, x, y, z */
    int has_terrain;        /* terrain holds the contact geometry (settled on the rest surface) */
    mlc_terrain terrain;    /* as the simulator built it from the configuration */
    char heightfield[1024]; /* contact.heightfield as config.json names it ("" = none) */
    char note[1024];        /* what could not be read of the task or terrain ("" = all) */
} mlc_run;

/* Load DIR. surface.obj and animation.pc2 are required: a missing one is MLC_EINVAL with a
 * message naming the file and the commands that write it; a malformed one (or point counts
 * that differ) MLC_EPARSE. trajectory.csv, history.csv, config.json, params.json and
 * result.json are optional; a malformed CSV row is MLC_EPARSE naming file and line. The task
 * and the terrain come from config.json through the simulator's own code (mlc_config_load_file,
 * mlc_pipeline_terrain, the slope settled on the rest surface as mlc_model_create does); a
 * heightfield or waypoint file that cannot be read leaves a flat ground or no path, and says so
 * in run->note. */
mlc_status mlc_run_load(const char *dir, mlc_run *run, mlc_err *err);
void mlc_run_free(mlc_run *run);

/* The task as line segments (6 values each: two points) for a picture: the target as a cross
 * of size `size` with a drop to the ground, the waypoints as a polyline (and again on the
 * ground below them), the heading wanted as
 * an arrow of length 4·size at the last centre of mass. *segs owned (mlc_free); returns the
 * count (0 and NULL for a task without geometry, or out of memory). */
int mlc_run_task_segments(const mlc_run *run, double size, double **segs);

/* What mlc_view_html_write decided. */
typedef struct mlc_view_html_info {
    size_t bytes;      /* size of the page */
    size_t data_bytes; /* base64 characters of the embedded surface data */
    int frames;        /* frames embedded */
    int step;          /* every step-th sample of the PC2 embedded (1 = all) */
    int quantized;     /* positions as int16 over the bounding box instead of float32 */
} mlc_view_html_info;

/* Default budget of embedded surface data (base64 characters): keeps the page loadable. */
#define MLC_VIEW_MAX_DATA ((size_t)60 << 20)

/* Write the viewer page for `run` atomically to `path`. Positions are float32 if the data fits
 * in max_data bytes of base64; otherwise int16 quantized over the bounding box of all frames;
 * if still too big, only every step-th frame (and the last) is kept. The page says which. */
mlc_status mlc_view_html_write(const mlc_run *run, const char *path, size_t max_data,
                               mlc_view_html_info *info, mlc_err *err);

#endif
