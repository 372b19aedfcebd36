/* render.h: a small software renderer for preview images without a browser
 * (`modalloco view DIR --png/--gif/--apng/--mp4 FILE`).
 *
 * The rasterizer fills triangles with a flat colour into an RGB image with a depth buffer;
 * the renderer on top of it draws a surface (3×nv float positions, 3×nf 0-based triangles, the
 * layout of surface.obj + animation.pc2) with flat shading, a ground plane with a grid and a
 * soft-less drop shadow, seen through a pinhole camera, and labels in a built-in bitmap font.
 * The film strip and the animations (anim.h) are drawn with it; png.h encodes the pictures.
 *
 * Screen conventions: x to the right, y down, pixel (i, j) covers [i, i+1) × [j, j+1) and is
 * sampled at its centre (i + 0.5, j + 0.5). Depth values: smaller is nearer; a triangle's depth
 * is interpolated linearly in screen space (pass -1/z_camera for perspective-correct testing).
 */
#ifndef MODALLOCO_RENDER_H
#define MODALLOCO_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* ---- Images ------------------------------------------------------------------------------ */

/* An RGB image (3 bytes per pixel, rows top to bottom) with a float depth buffer. A zeroed
 * struct is empty; mlc_image_free is idempotent. */
typedef struct mlc_image {
    int w, h;
    unsigned char *rgb; /* 3·w·h */
    float *depth;       /* w·h, +Inf after clearing */
} mlc_image;

/* Allocate a w×h image (w, h in 1..16384) filled with `bg` and infinite depth. */
mlc_status mlc_image_init(mlc_image *im, int w, int h, const unsigned char bg[3], mlc_err *err);
void mlc_image_free(mlc_image *im);

/* Fill the pixels whose centres lie inside triangle (a, b, c) (each x, y, depth), with the
 * top-left rule so that triangles sharing an edge cover each pixel exactly once, where the
 * interpolated depth is below the stored one (which it then replaces). Either winding.
 * Returns the number of pixels written. */
long mlc_raster_triangle(mlc_image *im, const double a[3], const double b[3], const double c[3],
                         const unsigned char rgb[3]);

/* ---- Camera and scene ---------------------------------------------------------------------- */

/* A pinhole camera looking from `eye` at `target`, `up` roughly vertical, vertical field of
 * view fov_y (radians), for an image of w×h pixels. */
typedef struct mlc_camera {
    double eye[3], target[3], up[3];
    double fov_y;
    int w, h;
} mlc_camera;

/* ---- Scenes ------------------------------------------------------------------------------ */

/* What stays the same from one picture of a moving surface to the next: the camera, the
 * ground plane with its grid, and the task's marks. Plain data: a caller may move the camera
 * (eye and target together) to follow the body. */
typedef struct mlc_render_scene {
    mlc_camera cam;
    double ground_y;     /* height of the ground plane (m) */
    double spacing;      /* ground grid spacing (m) */
    const double *marks; /* nmarks segments (6 values: two points), borrowed; drawn in green
                            over the ground, hidden where the body is in front */
    int nmarks;
} mlc_render_scene;

/* A scene whose camera, looking from (azimuth, elevation) in radians (azimuth 0 looks along -z
 * from the +z side, x to the right; elevation > 0 looks down; both 0 = defaults 0.45, 0.42),
 * sees the axis-aligned box [lo, hi] whole in a w×h image, a margin of 8% around it. The box is
 * extended down to the ground so that the contact stays in view. The grid spacing is a round
 * number giving a handful of cells across the box. No marks (set them after). */
void mlc_render_scene_fit(mlc_render_scene *sc, const double lo[3], const double hi[3],
                          double ground_y, double azimuth, double elevation, int w, int h);

/* Draw one picture into im (which must be sc->cam.w × sc->cam.h): background, the ground grid
 * fading with distance, the drop shadow, the flat-shaded surface (3·nv float positions, 3·nf
 * 0-based triangles) and the marks. Returns the number of body pixels written. */
long mlc_render_scene_draw(mlc_image *im, const mlc_render_scene *sc, const float *xyz, int nv,
                           const int *faces, int nf);

/* An arrow lying at height y: from (x, z) along (hx, hz) (its length included), barbs reaching
 * back `back`·h and out `side`·h either side of the tip. Writes 3 segments (18 values: the
 * shaft, then the two barbs, each ending at the tip) to seg, for mlc_render_scene.marks. */
void mlc_render_ground_arrow(double x, double z, double hx, double hz, double y, double back,
                             double side, double seg[18]);

/* ---- Text --------------------------------------------------------------------------------- */

/* A built-in 5×7 pixel font of the printable ASCII characters (32..126; the few it does not
 * draw show as '?'), scaled by an integer factor: a character is 5·scale × 7·scale pixels and
 * advances 6·scale. */
#define MLC_FONT_W 5
#define MLC_FONT_H 7

/* Width and height in pixels of `s` drawn at `scale` (0 for an empty string). */
int mlc_text_width(const char *s, int scale);
int mlc_text_height(int scale);
/* Draw `s` with its top-left corner at (x, y), clipped to the image; depth is left alone. */
void mlc_draw_text(mlc_image *im, int x, int y, const char *s, int scale,
                   const unsigned char rgb[3]);
/* Draw `s` in dark grey on a light box (a padding of 2·scale pixels, the pixels below blended
 * 80% towards white) whose top-left corner is at (x, y): legible over the body and the grid. */
void mlc_draw_label(mlc_image *im, int x, int y, const char *s, int scale);
/* The scale for labels in an image `h` pixels high: max(1, (h + 60) / 135), so 2 for the
 * strip's 240-pixel panels and the animations' default 270. */
int mlc_label_scale(int h);

/* ---- Film strip --------------------------------------------------------------------------- */

/* One image of `nshow` panels of panel_w×panel_h side by side (a 2-pixel dark separator
 * between them), panel k showing sample frames[k] of xyz (3·nv floats per sample) with
 * labels[k] in its top-left corner. One fixed camera frames the union of the bounding boxes of
 * the shown samples (seen from the side and above), so the travel shows as displacement
 * against the ground grid. */
typedef struct mlc_filmstrip_options {
    int panel_w, panel_h; /* 0 = 320 × 240 */
    double ground_y;
    double azimuth, elevation; /* radians; both 0 = defaults (0.45, 0.42) */
    const double *marks;       /* nmarks segments (6 values: two points) drawn in green over
                                  the ground, hidden where the body is in front; the camera
                                  frames them too (the task: mlc_run_task_segments) */
    int nmarks;
    const char *const *labels; /* nshow strings (e.g. the time), or NULL for none; borrowed */
} mlc_filmstrip_options;

mlc_status mlc_render_filmstrip(const float *xyz, int nv, int nsamples, const int *faces, int nf,
                                const int *frames, int nshow, const mlc_filmstrip_options *opt,
                                mlc_image *out, mlc_err *err);

/* Colours of the film strip (tests use them to tell body from background). */
extern const unsigned char mlc_render_bg[3];
extern const unsigned char mlc_render_body[3];

#endif
