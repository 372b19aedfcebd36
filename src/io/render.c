/* render.c: software rasterizer (flat triangles, depth buffer), a tiny scene renderer (ground
 * grid, drop shadow, flat-shaded surface, fixed camera), a bitmap font and the film strip. See
 * render.h. */
#include "render.h"

#include <float.h>
#include <math.h>
#include <string.h>

const unsigned char mlc_render_bg[3] = {238, 240, 244};
const unsigned char mlc_render_body[3] = {226, 122, 46};
static const unsigned char ground_rgb[3] = {206, 210, 216};
static const unsigned char grid_rgb[3] = {150, 157, 168};
static const unsigned char shadow_rgb[3] = {160, 164, 172};
static const unsigned char separator_rgb[3] = {60, 64, 72};
static const unsigned char mark_rgb[3] = {26, 158, 64};

/* ---- Images ------------------------------------------------------------------------------ */

mlc_status mlc_image_init(mlc_image *im, int w, int h, const unsigned char bg[3], mlc_err *err) {
    memset(im, 0, sizeof *im);
    if (w < 1 || h < 1 || w > 16384 || h > 16384)
        return mlc_errf(err, MLC_EINVAL, "image size %d x %d out of range (1..16384)", w, h);
    size_t n = (size_t)w * (size_t)h;
    im->rgb = mlc_malloc(3 * n);
    im->depth = mlc_malloc(n * sizeof *im->depth);
    if (!im->rgb || !im->depth) {
        mlc_image_free(im);
        return mlc_errf(err, MLC_ENOMEM, "out of memory for a %d x %d image", w, h);
    }
    im->w = w;
    im->h = h;
    for (size_t i = 0; i < n; i++) {
        memcpy(im->rgb + 3 * i, bg, 3);
        im->depth[i] = INFINITY;
    }
    return MLC_OK;
}

void mlc_image_free(mlc_image *im) {
    mlc_free(im->rgb);
    mlc_free(im->depth);
    memset(im, 0, sizeof *im);
}

/* Copy `src` into `dst` with its top-left corner at (x0, y0), clipped to dst. */
static void mlc_image_blit(mlc_image *dst, const mlc_image *src, int x0, int y0) {
    for (int j = 0; j < src->h; j++) {
        int y = y0 + j;
        if (y < 0 || y >= dst->h) continue;
        for (int i = 0; i < src->w; i++) {
            int x = x0 + i;
            if (x < 0 || x >= dst->w) continue;
            memcpy(dst->rgb + 3 * ((size_t)y * dst->w + x), src->rgb + 3 * ((size_t)j * src->w + i),
                   3);
        }
    }
}

/* ---- Rasterizer ---------------------------------------------------------------------------- */

/* Twice the signed area of (a, b, p); positive when p is on the inner side of a→b for the
 * orientation the rasterizer normalizes to. */
static double edge_fn(const double a[3], const double b[3], double px, double py) {
    return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]);
}

/* Top-left rule for the orientation with positive edge_fn inside (y down): a top edge runs
 * exactly horizontally to the right, a left edge runs up. Pixels exactly on such edges belong
 * to this triangle, pixels on the other edges to the neighbour, so shared edges are drawn once. */
static int is_top_left(const double a[3], const double b[3]) {
    double dx = b[0] - a[0], dy = b[1] - a[1];
    return (dy == 0 && dx > 0) || dy < 0;
}

long mlc_raster_triangle(mlc_image *im, const double a[3], const double b[3], const double c[3],
                         const unsigned char rgb[3]) {
    double area = edge_fn(a, b, c[0], c[1]);
    if (!(fabs(area) > 0) || !isfinite(area)) return 0;
    if (area < 0) { /* normalize the winding so that "inside" is positive for every edge */
        const double *t = b;
        b = c;
        c = t;
        area = -area;
    }
    double xmin = fmin(a[0], fmin(b[0], c[0])), xmax = fmax(a[0], fmax(b[0], c[0]));
    double ymin = fmin(a[1], fmin(b[1], c[1])), ymax = fmax(a[1], fmax(b[1], c[1]));
    /* Pixels whose centre i + 0.5 lies in [xmin, xmax]. */
    int i0 = (int)fmax(0.0, ceil(xmin - 0.5)), i1 = (int)fmin(im->w - 1.0, floor(xmax - 0.5));
    int j0 = (int)fmax(0.0, ceil(ymin - 0.5)), j1 = (int)fmin(im->h - 1.0, floor(ymax - 0.5));
    int tl_bc = is_top_left(b, c), tl_ca = is_top_left(c, a), tl_ab = is_top_left(a, b);
    double inv = 1.0 / area;
    long written = 0;
    for (int j = j0; j <= j1; j++) {
        double py = j + 0.5;
        for (int i = i0; i <= i1; i++) {
            double px = i + 0.5;
            double w0 = edge_fn(b, c, px, py), w1 = edge_fn(c, a, px, py),
                   w2 = edge_fn(a, b, px, py);
            if (w0 < 0 || w1 < 0 || w2 < 0) continue;
            if ((w0 == 0 && !tl_bc) || (w1 == 0 && !tl_ca) || (w2 == 0 && !tl_ab)) continue;
            double z = (w0 * a[2] + w1 * b[2] + w2 * c[2]) * inv;
            size_t k = (size_t)j * im->w + i;
            if (!((float)z < im->depth[k])) continue;
            im->depth[k] = (float)z;
            memcpy(im->rgb + 3 * k, rgb, 3);
            written++;
        }
    }
    return written;
}

/* ---- Camera ---------------------------------------------------------------------------------- */

static void v3_sub(const double a[3], const double b[3], double o[3]) {
    for (int k = 0; k < 3; k++)
        o[k] = a[k] - b[k];
}
static double v3_dot(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static void v3_cross(const double a[3], const double b[3], double o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}
static double v3_normalize(double a[3]) {
    double n = sqrt(v3_dot(a, a));
    if (n > 0)
        for (int k = 0; k < 3; k++)
            a[k] /= n;
    return n;
}

/* Orthonormal camera frame: f forward, r right, u up; fpx = focal length in pixels. */
typedef struct cam_frame {
    double f[3], r[3], u[3], fpx;
} cam_frame;

static void camera_frame(const mlc_camera *cam, cam_frame *cf) {
    v3_sub(cam->target, cam->eye, cf->f);
    if (v3_normalize(cf->f) == 0) cf->f[2] = -1;
    v3_cross(cf->f, cam->up, cf->r);
    if (v3_normalize(cf->r) == 0) { /* looking along up: any right vector will do */
        double alt[3] = {1, 0, 0};
        v3_cross(cf->f, alt, cf->r);
        v3_normalize(cf->r);
    }
    v3_cross(cf->r, cf->f, cf->u);
    cf->fpx = 0.5 * cam->h / tan(0.5 * cam->fov_y);
}

static int project_cf(const mlc_camera *cam, const cam_frame *cf, const double p[3],
                      double out[3]) {
    double d[3];
    v3_sub(p, cam->eye, d);
    double z = v3_dot(d, cf->f);
    if (!(z > 1e-6)) return 0;
    out[0] = 0.5 * cam->w + cf->fpx * v3_dot(d, cf->r) / z;
    out[1] = 0.5 * cam->h - cf->fpx * v3_dot(d, cf->u) / z;
    out[2] = -1.0 / z; /* affine in screen space, increasing with distance */
    return 1;
}

/* Do all eight corners of the box project inside the image minus the margin? */
static int box_fits(const mlc_camera *cam, const double lo[3], const double hi[3], double margin) {
    cam_frame cf;
    camera_frame(cam, &cf);
    for (int m = 0; m < 8; m++) {
        double p[3] = {m & 1 ? hi[0] : lo[0], m & 2 ? hi[1] : lo[1], m & 4 ? hi[2] : lo[2]}, s[3];
        if (!project_cf(cam, &cf, p, s)) return 0;
        if (s[0] < margin * cam->w || s[0] > (1 - margin) * cam->w || s[1] < margin * cam->h ||
            s[1] > (1 - margin) * cam->h)
            return 0;
    }
    return 1;
}

/* A camera that sees the axis-aligned box [lo, hi] whole from direction (azimuth, elevation)
 * in radians: azimuth 0 looks along -z (from the +z side, x to the right), elevation > 0 looks
 * down. Margin: fraction of the image left around the box (e.g. 0.1). */
static void mlc_camera_frame_box(mlc_camera *cam, const double lo[3], const double hi[3],
                                 double azimuth, double elevation, double margin, int w, int h) {
    double dir[3] = {sin(azimuth) * cos(elevation), sin(elevation), cos(azimuth) * cos(elevation)};
    double ext[3];
    v3_sub(hi, lo, ext);
    double radius = 0.5 * sqrt(v3_dot(ext, ext));
    if (!(radius > 0)) radius = 1;
    memset(cam, 0, sizeof *cam);
    cam->w = w;
    cam->h = h;
    cam->fov_y = 35.0 * MLC_PI / 180.0;
    cam->up[1] = 1;
    for (int k = 0; k < 3; k++)
        cam->target[k] = 0.5 * (lo[k] + hi[k]);
    /* Bisect the distance: the box shrinks towards the image centre as the camera backs away,
     * so the smallest distance at which every corner fits is well defined. */
    double dlo = 1e-3 * radius, dhi = 1e3 * radius;
    for (int it = 0; it < 60; it++) {
        double d = 0.5 * (dlo + dhi);
        for (int k = 0; k < 3; k++)
            cam->eye[k] = cam->target[k] + d * dir[k];
        if (box_fits(cam, lo, hi, margin))
            dhi = d;
        else
            dlo = d;
    }
    for (int k = 0; k < 3; k++)
        cam->eye[k] = cam->target[k] + dhi * dir[k];
}

/* ---- Scene ----------------------------------------------------------------------------------- */

static void mlc_render_ground(mlc_image *im, const mlc_camera *cam, double ground_y, double spacing,
                              const unsigned char bg[3]) {
    cam_frame cf;
    camera_frame(cam, &cf);
    double dist = sqrt((cam->eye[0] - cam->target[0]) * (cam->eye[0] - cam->target[0]) +
                       (cam->eye[1] - cam->target[1]) * (cam->eye[1] - cam->target[1]) +
                       (cam->eye[2] - cam->target[2]) * (cam->eye[2] - cam->target[2]));
    double fade = 3.0 * fmax(dist, 1e-9);
    if (!(spacing > 0)) spacing = 0.5;
    for (int j = 0; j < im->h; j++)
        for (int i = 0; i < im->w; i++) {
            /* Ray through the pixel centre with unit forward component, so t is the depth. */
            double sx = (i + 0.5 - 0.5 * cam->w) / cf.fpx, sy = (j + 0.5 - 0.5 * cam->h) / cf.fpx;
            double d[3];
            for (int k = 0; k < 3; k++)
                d[k] = cf.f[k] + sx * cf.r[k] - sy * cf.u[k];
            if (d[1] == 0) continue;
            double t = (ground_y - cam->eye[1]) / d[1];
            if (!(t > 1e-6)) continue;
            size_t idx = (size_t)j * im->w + i;
            float z = (float)(-1.0 / t);
            if (!(z < im->depth[idx])) continue;
            double px = cam->eye[0] + t * d[0], pz = cam->eye[2] + t * d[2];
            /* Distance to the nearest grid line against the pixel footprint (about t/fpx,
             * stretched at grazing angles) keeps lines roughly one pixel wide. */
            double foot = t / cf.fpx * sqrt(v3_dot(d, d)) / fmax(fabs(d[1]), 0.05);
            double fx = fabs(px / spacing - floor(px / spacing + 0.5)) * spacing;
            double fz = fabs(pz / spacing - floor(pz / spacing + 0.5)) * spacing;
            int line = fmin(fx, fz) < 0.6 * fmin(foot, 0.2 * spacing) + 0.004 * spacing;
            const unsigned char *g = line ? grid_rgb : ground_rgb;
            double a = exp(-t / fade);
            for (int k = 0; k < 3; k++)
                im->rgb[3 * idx + k] = (unsigned char)lrint(a * g[k] + (1 - a) * bg[k]);
            im->depth[idx] = z;
        }
}

/* Draw a surface: flat shading from a fixed light above and behind the camera (two-sided, so
 * inner faces of non-manifold meshes are lit too), base colour `rgb`. If `shadow` is set, the
 * vertical projection of the surface onto y = ground_y is drawn first in a darkened ground
 * colour. Triangles with a vertex behind the camera, or with an index out of range, are
 * skipped. Returns the number of body pixels written. */
static long mlc_render_surface(mlc_image *im, const mlc_camera *cam, const float *xyz, int nv,
                               const int *faces, int nf, const unsigned char rgb[3], int shadow,
                               double ground_y) {
    cam_frame cf;
    camera_frame(cam, &cf);
    /* Light from above, a little from the camera's side, so faces towards the viewer are lit
     * and the top is brightest. */
    double light[3];
    for (int k = 0; k < 3; k++)
        light[k] = -0.45 * cf.f[k] + 0.8 * cf.u[k] - 0.3 * cf.r[k];
    light[1] += 0.4;
    v3_normalize(light);
    long body = 0;
    for (int pass = shadow ? 0 : 1; pass < 2; pass++)
        for (int t = 0; t < nf; t++) {
            double p[3][3], s[3][3];
            int ok = 1;
            for (int v = 0; v < 3 && ok; v++) {
                int idx = faces[3 * t + v];
                if (idx < 0 || idx >= nv) {
                    ok = 0;
                    break;
                }
                for (int k = 0; k < 3; k++)
                    p[v][k] = (double)xyz[3 * (size_t)idx + k];
                /* The shadow is the vertical projection, lifted by a hair to win against the
                 * ground's depth. */
                if (pass == 0) p[v][1] = ground_y + 1e-4;
                ok = project_cf(cam, &cf, p[v], s[v]);
            }
            if (!ok) continue;
            if (pass == 0) {
                mlc_raster_triangle(im, s[0], s[1], s[2], shadow_rgb);
                continue;
            }
            double e1[3], e2[3], n[3];
            v3_sub(p[1], p[0], e1);
            v3_sub(p[2], p[0], e2);
            v3_cross(e1, e2, n);
            v3_normalize(n);
            double lit = 0.32 + 0.68 * fabs(v3_dot(n, light));
            unsigned char col[3];
            for (int k = 0; k < 3; k++)
                col[k] = (unsigned char)lrint(fmin(255.0, rgb[k] * lit));
            body += mlc_raster_triangle(im, s[0], s[1], s[2], col);
        }
    return body;
}

/* A segment two pixels wide, a hair nearer than its depth so that it wins against the ground
 * it lies on. */
static void draw_segment(mlc_image *im, const mlc_camera *cam, const cam_frame *cf,
                         const double p[3], const double q[3], const unsigned char rgb[3]) {
    double a[3], b[3];
    if (!project_cf(cam, cf, p, a) || !project_cf(cam, cf, q, b)) return;
    double dx = b[0] - a[0], dy = b[1] - a[1], len = sqrt(dx * dx + dy * dy);
    double nx = len > 0 ? -dy / len : 1, ny = len > 0 ? dx / len : 0;
    double c[4][3];
    for (int k = 0; k < 4; k++) {
        const double *e = k < 2 ? a : b;
        double side = k == 0 || k == 3 ? 1 : -1;
        c[k][0] = e[0] + side * nx, c[k][1] = e[1] + side * ny, c[k][2] = e[2] * (1 + 1e-3);
    }
    mlc_raster_triangle(im, c[0], c[1], c[2], rgb);
    mlc_raster_triangle(im, c[0], c[2], c[3], rgb);
}

/* ---- Scenes ---------------------------------------------------------------------------------- */

void mlc_render_scene_fit(mlc_render_scene *sc, const double lo_in[3], const double hi_in[3],
                          double ground_y, double azimuth, double elevation, int w, int h) {
    double lo[3] = {lo_in[0], fmin(lo_in[1], ground_y), lo_in[2]};
    double hi[3] = {hi_in[0], fmax(hi_in[1], ground_y), hi_in[2]};
    if (azimuth == 0 && elevation == 0) azimuth = 0.45, elevation = 0.42;
    double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    memset(sc, 0, sizeof *sc);
    sc->ground_y = ground_y;
    /* Grid spacing: a round number giving a handful of cells across the scene. */
    sc->spacing = pow(10.0, floor(log10(fmax(ext, 1e-9) / 4)));
    if (ext / sc->spacing > 20)
        sc->spacing *= 5;
    else if (ext / sc->spacing > 8)
        sc->spacing *= 2;
    mlc_camera_frame_box(&sc->cam, lo, hi, azimuth, elevation, 0.08, w, h);
}

long mlc_render_scene_draw(mlc_image *im, const mlc_render_scene *sc, const float *xyz, int nv,
                           const int *faces, int nf) {
    for (size_t i = 0; i < (size_t)im->w * im->h; i++) {
        memcpy(im->rgb + 3 * i, mlc_render_bg, 3);
        im->depth[i] = INFINITY;
    }
    mlc_render_ground(im, &sc->cam, sc->ground_y, sc->spacing, mlc_render_bg);
    long body =
        mlc_render_surface(im, &sc->cam, xyz, nv, faces, nf, mlc_render_body, 1, sc->ground_y);
    cam_frame cf;
    camera_frame(&sc->cam, &cf);
    for (int i = 0; i < sc->nmarks; i++)
        draw_segment(im, &sc->cam, &cf, sc->marks + 6 * i, sc->marks + 6 * i + 3, mark_rgb);
    return body;
}

void mlc_render_ground_arrow(double x, double z, double hx, double hz, double y, double back,
                             double side, double seg[18]) {
    double tx = x + hx, tz = z + hz;
    double from[3][2] = {{x, z},
                         {tx - back * hx + side * hz, tz - back * hz - side * hx},
                         {tx - back * hx - side * hz, tz - back * hz + side * hx}};
    for (int i = 0; i < 3; i++) {
        double s[6] = {from[i][0], y, from[i][1], tx, y, tz};
        memcpy(seg + 6 * i, s, sizeof s);
    }
}

/* ---- Text ------------------------------------------------------------------------------------ */

/* Rows of the glyphs of characters 32..126, top to bottom; bit 4 is the leftmost column.
 * Characters the font does not draw hold the glyph of '?'. */
static const unsigned char font5x7[95][MLC_FONT_H] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /*  !"# */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* $%&' */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02},
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00}, /* ()*+ */
    {0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08},
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00},
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c},
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}, /* ,-./ */
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e},
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f},
    {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}, /* 0123 */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02},
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e},
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e},
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}, /* 4567 */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e},
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c},
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* 89:; */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* <=>? */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11},
    {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e},
    {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}, /* @ABC */
    {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c},
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f},
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10},
    {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}, /* DEFG */
    {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11},
    {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e},
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c},
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, /* HIJK */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f},
    {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11},
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11},
    {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* LMNO */
    {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10},
    {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d},
    {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11},
    {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}, /* PQRS */
    {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04},
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e},
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04},
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}, /* TUVW */
    {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11},
    {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04},
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* XYZ[ */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}, /* \\]^_ */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f},
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e},
    {0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e}, /* `abc */
    {0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f},
    {0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e},
    {0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08},
    {0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* defg */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11},
    {0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e},
    {0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0c},
    {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12}, /* hijk */
    {0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e},
    {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11},
    {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11},
    {0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e}, /* lmno */
    {0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10},
    {0x00, 0x00, 0x0d, 0x13, 0x0f, 0x01, 0x01},
    {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10},
    {0x00, 0x00, 0x0f, 0x10, 0x0e, 0x01, 0x1e}, /* pqrs */
    {0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06},
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d},
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04},
    {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a}, /* tuvw */
    {0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11},
    {0x00, 0x00, 0x11, 0x11, 0x0f, 0x01, 0x0e},
    {0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* xyz{ */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* |}~ */
};

int mlc_text_width(const char *s, int scale) {
    size_t n = strlen(s);
    return n ? (int)(6 * n - 1) * scale : 0;
}

int mlc_text_height(int scale) {
    return MLC_FONT_H * scale;
}

void mlc_draw_text(mlc_image *im, int x, int y, const char *s, int scale,
                   const unsigned char rgb[3]) {
    for (; *s; s++, x += 6 * scale) {
        unsigned char ch = (unsigned char)*s;
        const unsigned char *g = font5x7[(ch < 32 || ch > 126 ? '?' : ch) - 32];
        for (int r = 0; r < MLC_FONT_H * scale; r++) {
            int py = y + r;
            if (py < 0 || py >= im->h) continue;
            for (int c = 0; c < MLC_FONT_W * scale; c++) {
                int px = x + c;
                if (px < 0 || px >= im->w || !(g[r / scale] >> (MLC_FONT_W - 1 - c / scale) & 1))
                    continue;
                memcpy(im->rgb + 3 * ((size_t)py * im->w + px), rgb, 3);
            }
        }
    }
}

void mlc_draw_label(mlc_image *im, int x, int y, const char *s, int scale) {
    static const unsigned char ink[3] = {40, 44, 52};
    int pad = 2 * scale;
    int bw = mlc_text_width(s, scale) + 2 * pad, bh = mlc_text_height(scale) + 2 * pad;
    for (int j = MLC_MAX(y, 0); j < MLC_MIN(y + bh, im->h); j++)
        for (int i = MLC_MAX(x, 0); i < MLC_MIN(x + bw, im->w); i++) {
            unsigned char *p = im->rgb + 3 * ((size_t)j * im->w + i);
            for (int k = 0; k < 3; k++)
                p[k] = (unsigned char)((p[k] + 4 * 255 + 2) / 5);
        }
    mlc_draw_text(im, x + pad, y + pad, s, scale, ink);
}

int mlc_label_scale(int h) {
    return MLC_MAX(1, (h + 60) / 135);
}

/* ---- Film strip ------------------------------------------------------------------------------ */

mlc_status mlc_render_filmstrip(const float *xyz, int nv, int nsamples, const int *faces, int nf,
                                const int *frames, int nshow, const mlc_filmstrip_options *opt,
                                mlc_image *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    if (nv < 1 || nsamples < 1 || nshow < 1)
        return mlc_errf(err, MLC_EINVAL,
                        "film strip: nothing to draw (%d points, %d samples, "
                        "%d panels)",
                        nv, nsamples, nshow);
    int pw = opt && opt->panel_w > 0 ? opt->panel_w : 320;
    int ph = opt && opt->panel_h > 0 ? opt->panel_h : 240;
    const int sep = 2;
    if ((long)nshow * (pw + sep) > 16384)
        return mlc_errf(err, MLC_EINVAL, "film strip of %d panels of %d px is too wide", nshow, pw);
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int k = 0; k < nshow; k++) {
        if (frames[k] < 0 || frames[k] >= nsamples)
            return mlc_errf(err, MLC_EINVAL, "film strip: frame %d out of range 0..%d", frames[k],
                            nsamples - 1);
        const float *x = xyz + (size_t)3 * nv * frames[k];
        for (int i = 0; i < nv; i++)
            for (int c = 0; c < 3; c++)
                if (isfinite(x[3 * i + c])) {
                    lo[c] = fmin(lo[c], (double)x[3 * i + c]);
                    hi[c] = fmax(hi[c], (double)x[3 * i + c]);
                }
    }
    if (!(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]))
        return mlc_errf(err, MLC_EINVAL, "film strip: the shown frames hold no finite position");
    int nmarks = opt && opt->marks ? opt->nmarks : 0;
    for (int i = 0; i < 2 * nmarks; i++)
        for (int c = 0; c < 3; c++)
            if (isfinite(opt->marks[3 * i + c]))
                lo[c] = fmin(lo[c], opt->marks[3 * i + c]),
                hi[c] = fmax(hi[c], opt->marks[3 * i + c]);
    mlc_render_scene sc;
    mlc_render_scene_fit(&sc, lo, hi, opt ? opt->ground_y : 0, opt ? opt->azimuth : 0,
                         opt ? opt->elevation : 0, pw, ph);
    sc.marks = nmarks ? opt->marks : NULL;
    sc.nmarks = nmarks;
    mlc_status s = mlc_image_init(out, nshow * pw + (nshow - 1) * sep, ph, separator_rgb, err);
    if (s != MLC_OK) return s;
    mlc_image panel;
    if ((s = mlc_image_init(&panel, pw, ph, mlc_render_bg, err)) != MLC_OK) {
        mlc_image_free(out);
        return s;
    }
    int scale = mlc_label_scale(ph);
    for (int k = 0; k < nshow; k++) {
        mlc_render_scene_draw(&panel, &sc, xyz + (size_t)3 * nv * frames[k], nv, faces, nf);
        if (opt && opt->labels && opt->labels[k])
            mlc_draw_label(&panel, 3 * scale, 3 * scale, opt->labels[k], scale);
        mlc_image_blit(out, &panel, k * (pw + sep), 0);
    }
    mlc_image_free(&panel);
    return MLC_OK;
}
