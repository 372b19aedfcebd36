/* render.h: a small software renderer and PNG encoder for preview images without a browser
 * (`modalloco view DIR --png FILE`).
 *
 * The rasterizer fills triangles with a flat colour into an RGB image with a depth buffer;
 * the renderer on top of it draws a surface (3×nv float positions, 3×nf 0-based triangles, the
 * layout of surface.obj + animation.pc2) with flat shading, a ground plane with a grid and a
 * soft-less drop shadow, seen through a pinhole camera. The PNG encoder writes 8-bit RGB; zlib
 * compresses the pixel rows and computes the chunk CRCs.
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

/* ---- Film strip --------------------------------------------------------------------------- */

/* One image of `nshow` panels of panel_w×panel_h side by side (a 2-pixel dark separator
 * between them), panel k showing sample frames[k] of xyz (3·nv floats per sample). One fixed
 * camera frames the union of the bounding boxes of the shown samples (seen from the side and
 * above), so the travel shows as displacement against the ground grid. */
typedef struct mlc_filmstrip_options {
    int panel_w, panel_h; /* 0 = 320 × 240 */
    double ground_y;
    double azimuth, elevation; /* radians; both 0 = defaults (0.45, 0.42) */
    const double *marks;       /* nmarks segments (6 values: two points) drawn in green over
                                  the ground, hidden where the body is in front; the camera
                                  frames them too (the task: mlc_run_task_segments) */
    int nmarks;
} mlc_filmstrip_options;

mlc_status mlc_render_filmstrip(const float *xyz, int nv, int nsamples, const int *faces, int nf,
                                const int *frames, int nshow, const mlc_filmstrip_options *opt,
                                mlc_image *out, mlc_err *err);

/* Colours of the film strip (tests use them to tell body from background). */
extern const unsigned char mlc_render_bg[3];
extern const unsigned char mlc_render_body[3];

/* ---- PNG ---------------------------------------------------------------------------------- */

/* Encode 8-bit RGB rows (3·w·h bytes, top to bottom) as a PNG in memory: signature, IHDR
 * (colour type 2, no interlace), IDAT chunks of at most 64 KiB holding one zlib stream (filter
 * type 1 "Sub" on every row; zlib's compress2 at `level`: 0 stores, 1..9 compress, -1 is zlib's
 * default), IEND. *png (owned, mlc_free) and *len receive the file. */
mlc_status mlc_png_encode(const unsigned char *rgb, int w, int h, int level, unsigned char **png,
                          size_t *len, mlc_err *err);
/* Encode (zlib's default level) and write atomically to `path` (MLC_EIO naming the path on
 * failure). */
mlc_status mlc_png_write(const char *path, const unsigned char *rgb, int w, int h, mlc_err *err);

#endif
