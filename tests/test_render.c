/* test_render.c: the PNG encoder (structure, chunk CRCs, and the pixels after inflating the
 * zlib stream with zlib's uncompress),
 * the rasterizer (coverage against the analytic area, shared edges drawn once, depth test),
 * the film strip, and the run loader / HTML writer of the viewer (errors, size budget). */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "test_util.h"

#include "output.h"
#include "png.h"
#include "render.h"
#include "viewer.h"

/* ---- An independent PNG reader ------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Inflate a zlib stream with zlib (which checks the header and the Adler-32 trailer) into out
 * (cap bytes); returns the length. *stored: the first deflate block is a stored one. */
static size_t inflate_zlib(const unsigned char *z, size_t zn, unsigned char *out, size_t cap,
                           int *stored) {
    assert_true(zn >= 6);
    assert_int_equal(z[0] & 0x0F, 8); /* CM = deflate */
    *stored = ((z[2] >> 1) & 3) == 0; /* BTYPE of the first block */
    uLongf n = cap;
    assert_int_equal(uncompress(out, &n, z, (uLong)zn), Z_OK);
    return (size_t)n;
}

/* Parse a PNG: check signature, chunk order and CRCs, IHDR fields; return the RGB pixels
 * (malloc) after inflating and undoing the row filters. */
static unsigned char *png_decode(const unsigned char *png, size_t len, int *w, int *h, int *stored,
                                 int *nidat) {
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    assert_true(len > 8);
    assert_memory_equal(png, sig, 8);
    size_t pos = 8, zn = 0;
    unsigned char *z = malloc(len);
    int seen_ihdr = 0, seen_iend = 0;
    *nidat = 0;
    while (pos < len) {
        assert_true(pos + 12 <= len);
        uint32_t n = be32(png + pos);
        assert_true(pos + 12 + n <= len);
        const unsigned char *type = png + pos + 4, *data = png + pos + 8;
        assert_int_equal(be32(data + n), crc32(crc32(0, Z_NULL, 0), type, 4 + n));
        if (!memcmp(type, "IHDR", 4)) {
            assert_int_equal(pos, 8); /* first chunk */
            assert_int_equal(n, 13);
            *w = (int)be32(data);
            *h = (int)be32(data + 4);
            assert_int_equal(data[8], 8);  /* bit depth */
            assert_int_equal(data[9], 2);  /* RGB */
            assert_int_equal(data[10], 0); /* deflate */
            assert_int_equal(data[11], 0); /* adaptive filtering */
            assert_int_equal(data[12], 0); /* no interlace */
            seen_ihdr = 1;
        } else if (!memcmp(type, "IDAT", 4)) {
            assert_true(seen_ihdr);
            memcpy(z + zn, data, n);
            zn += n;
            (*nidat)++;
        } else if (!memcmp(type, "IEND", 4)) {
            assert_int_equal(n, 0);
            seen_iend = 1;
        }
        pos += 12 + n;
    }
    assert_true(seen_ihdr && seen_iend && *nidat > 0);
    size_t stride = 3 * (size_t)*w + 1, rawcap = stride * (size_t)*h;
    unsigned char *raw = malloc(rawcap + 1);
    size_t rn = inflate_zlib(z, zn, raw, rawcap + 1, stored);
    assert_int_equal(rn, rawcap);
    free(z);
    unsigned char *rgb = malloc(3 * (size_t)*w * *h);
    for (int j = 0; j < *h; j++) {
        const unsigned char *r = raw + j * stride;
        unsigned char *o = rgb + (size_t)j * 3 * *w, *up = j ? o - 3 * *w : NULL;
        for (size_t x = 0; x < 3 * (size_t)*w; x++) {
            unsigned a = x >= 3 ? o[x - 3] : 0, b = up ? up[x] : 0;
            unsigned c = x >= 3 && up ? up[x - 3] : 0, v = r[1 + x];
            switch (r[0]) {
            case 0:
                break;
            case 1:
                v += a;
                break;
            case 2:
                v += b;
                break;
            case 3:
                v += (a + b) / 2;
                break;
            case 4: {
                int p = (int)a + (int)b - (int)c, pa = abs(p - (int)a), pb = abs(p - (int)b),
                    pc = abs(p - (int)c);
                v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
                break;
            }
            default:
                fail_msg("bad filter type %d in row %d", r[0], j);
            }
            o[x] = (unsigned char)v;
        }
    }
    free(raw);
    return rgb;
}

/* A test picture: flat areas, gradients and noise (noise defeats LZ77, flats feed it). */
static unsigned char *test_picture(int w, int h) {
    unsigned char *rgb = malloc(3 * (size_t)w * h);
    uint32_t seed = 12345;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            unsigned char *p = rgb + 3 * ((size_t)j * w + i);
            if (i < w / 3) {
                p[0] = 30, p[1] = 200, p[2] = 90;
            } else if (i < 2 * w / 3) {
                p[0] = (unsigned char)(i * 3), p[1] = (unsigned char)(j * 5),
                p[2] = (unsigned char)(i + j);
            } else {
                for (int k = 0; k < 3; k++) {
                    seed = seed * 1664525u + 1013904223u;
                    p[k] = (unsigned char)(seed >> 24);
                }
            }
        }
    return rgb;
}

static void roundtrip(int w, int h, int level) {
    unsigned char *rgb = test_picture(w, h), *png;
    size_t len;
    mlc_err err;
    long live = mlc_alloc_live();
    assert_int_equal(mlc_png_encode(rgb, w, h, level, &png, &len, &err), MLC_OK);
    int dw = 0, dh = 0, stored = 0, nidat = 0;
    unsigned char *back = png_decode(png, len, &dw, &dh, &stored, &nidat);
    assert_int_equal(dw, w);
    assert_int_equal(dh, h);
    assert_memory_equal(back, rgb, 3 * (size_t)w * h);
    if (level == 0) assert_true(stored);
    if (level != 0 && w * h > 10000)
        assert_true(len < 3 * (size_t)w * h * 3 / 4); /* flats and gradients do compress */
    mlc_free(png);
    assert_int_equal(mlc_alloc_live(), live);
    free(back);
    free(rgb);
}

static void png_stored_roundtrip(void **state) {
    (void)state;
    roundtrip(1, 1, 0);
    roundtrip(37, 23, 0);
    roundtrip(300, 200, 0); /* > 64 KiB: several stored blocks and IDAT chunks */
}

static void png_compressed_roundtrip(void **state) {
    (void)state;
    roundtrip(1, 1, Z_DEFAULT_COMPRESSION);
    roundtrip(37, 23, 1);
    roundtrip(640, 400, Z_DEFAULT_COMPRESSION);
    roundtrip(640, 400, 9);
}

static void png_write_bad_path(void **state) {
    (void)state;
    unsigned char px[3] = {1, 2, 3};
    mlc_err err;
    assert_int_equal(mlc_png_write("/nonexistent-dir/x.png", px, 1, 1, &err), MLC_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir"));
}

/* ---- Rasterizer ------------------------------------------------------------------------------ */

static const unsigned char black[3] = {0, 0, 0}, red[3] = {255, 0, 0}, blue[3] = {0, 0, 255};

static long count_colour(const mlc_image *im, const unsigned char c[3]) {
    long n = 0;
    for (long i = 0; i < (long)im->w * im->h; i++)
        n += !memcmp(im->rgb + 3 * i, c, 3);
    return n;
}

static void raster_area_matches(void **state) {
    (void)state;
    mlc_image im;
    mlc_err err;
    assert_int_equal(mlc_image_init(&im, 128, 128, black, &err), MLC_OK);
    double a[3] = {10.3, 5.7, 0}, b[3] = {90.1, 20.2, 0}, c[3] = {30.5, 70.9, 0};
    long n = mlc_raster_triangle(&im, a, b, c, red);
    double area = 0.5 * fabs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
    assert_int_equal(n, count_colour(&im, red));
    assert_near((double)n, area, 2.0);
    /* Unbiased on average: many random triangles, mean error well below a pixel. */
    uint32_t seed = 7;
    double sum_err = 0;
    for (int t = 0; t < 300; t++) {
        double v[3][3];
        for (int k = 0; k < 3; k++) {
            seed = seed * 1664525u + 1013904223u;
            v[k][0] = 4 + 120.0 * (seed >> 8) / 16777216.0;
            seed = seed * 1664525u + 1013904223u;
            v[k][1] = 4 + 120.0 * (seed >> 8) / 16777216.0;
            v[k][2] = 0;
        }
        for (long i = 0; i < 128L * 128; i++)
            im.depth[i] = INFINITY;
        long m = mlc_raster_triangle(&im, v[0], v[1], v[2], red);
        double ar = 0.5 * fabs((v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) -
                               (v[1][1] - v[0][1]) * (v[2][0] - v[0][0]));
        sum_err += (double)m - ar;
    }
    assert_near(sum_err / 300, 0.0, 0.5);
    mlc_image_free(&im);
}

/* Two triangles sharing an edge (a square split on its diagonal, on integer and on pixel-centre
 * coordinates, where ties happen) cover the square's pixels exactly once. */
static void raster_shared_edge_once(void **state) {
    (void)state;
    mlc_image im;
    mlc_err err;
    assert_int_equal(mlc_image_init(&im, 64, 64, black, &err), MLC_OK);
    const double offs[2] = {0.0, 0.5};
    for (int o = 0; o < 2; o++) {
        double x0 = 8 + offs[o], y0 = 10 + offs[o], s = 40;
        double p00[3] = {x0, y0, 0}, p10[3] = {x0 + s, y0, 0}, p11[3] = {x0 + s, y0 + s, 0},
               p01[3] = {x0, y0 + s, 0};
        /* With the depth buffer reset in between, both triangles write every pixel they
         * cover: the counts add up to the square only if no pixel is claimed twice ... */
        for (long i = 0; i < 64L * 64; i++)
            im.depth[i] = INFINITY;
        long n1 = mlc_raster_triangle(&im, p00, p10, p11, red);
        for (long i = 0; i < 64L * 64; i++)
            im.depth[i] = INFINITY;
        long n2 = mlc_raster_triangle(&im, p00, p11, p01, blue);
        assert_int_equal(n1 + n2, (long)(s * s));
        /* ... and with it kept (equal depth fails the test), the union is the square: no
         * pixel is missed. */
        memset(im.rgb, 0, 3 * 64 * 64);
        for (long i = 0; i < 64L * 64; i++)
            im.depth[i] = INFINITY;
        mlc_raster_triangle(&im, p00, p10, p11, red);
        mlc_raster_triangle(&im, p01, p00, p11, blue); /* other winding, same triangle */
        assert_int_equal(count_colour(&im, red) + count_colour(&im, blue), (long)(s * s));
    }
    mlc_image_free(&im);
}

static void raster_depth_test(void **state) {
    (void)state;
    mlc_image im;
    mlc_err err;
    assert_int_equal(mlc_image_init(&im, 40, 40, black, &err), MLC_OK);
    double n0[3] = {0, 0, 1}, n1[3] = {40, 0, 1}, n2[3] = {0, 40, 1};   /* near: depth 1 */
    double f0[3] = {40, 40, 2}, f1[3] = {0, 40, 2}, f2[3] = {40, 0, 2}; /* far: depth 2 */
    mlc_raster_triangle(&im, n0, n1, n2, red);
    long far_written = mlc_raster_triangle(&im, f0, f1, f2, blue);
    /* Pixel (10, 10) is in both: the near one stays; (35, 35) only in the far one. */
    assert_memory_equal(im.rgb + 3 * (10 * 40 + 10), red, 3);
    assert_memory_equal(im.rgb + 3 * (35 * 40 + 35), blue, 3);
    assert_true(far_written < 40 * 40 / 2 + 40);
    /* Reverse order gives the same picture. */
    mlc_image im2;
    assert_int_equal(mlc_image_init(&im2, 40, 40, black, &err), MLC_OK);
    mlc_raster_triangle(&im2, f0, f1, f2, blue);
    mlc_raster_triangle(&im2, n0, n1, n2, red);
    assert_memory_equal(im.rgb, im2.rgb, 3 * 40 * 40);
    /* Degenerate and off-screen triangles draw nothing. */
    double d0[3] = {1, 1, 0}, d1[3] = {5, 5, 0}, d2[3] = {9, 9, 0};
    assert_int_equal(mlc_raster_triangle(&im, d0, d1, d2, red), 0);
    double o0[3] = {-50, -50, 0}, o1[3] = {-10, -50, 0}, o2[3] = {-50, -10, 0};
    assert_int_equal(mlc_raster_triangle(&im, o0, o1, o2, red), 0);
    mlc_image_free(&im);
    mlc_image_free(&im2);
}

/* ---- Film strip --------------------------------------------------------------------------------
 */

/* A unit cube standing on y = 0, as 8 points and 12 outward triangles. */
static const int cube_faces[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                   2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
static void cube_frames(float *xyz, int nframes) {
    for (int f = 0; f < nframes; f++)
        for (int v = 0; v < 8; v++) {
            float *p = xyz + 3 * (8 * f + v);
            p[0] = (float)((v & 1) ^ ((v >> 1) & 1)) + 0.8f * (float)f; /* walks along +x */
            p[1] = (float)((v >> 2) & 1);
            p[2] = (float)((v >> 1) & 1);
        }
}

static int is_body(const unsigned char *p) {
    return p[0] > p[1] + 40 && p[1] > p[2]; /* the orange body; ground and sky are grey */
}

static void filmstrip_shows_body(void **state) {
    (void)state;
    float xyz[3 * 8 * 4];
    cube_frames(xyz, 4);
    int frames[3] = {0, 1, 3};
    mlc_filmstrip_options o;
    memset(&o, 0, sizeof o);
    o.panel_w = 160;
    o.panel_h = 120;
    mlc_image im;
    mlc_err err;
    long live = mlc_alloc_live();
    assert_int_equal(mlc_render_filmstrip(xyz, 8, 4, cube_faces, 12, frames, 3, &o, &im, &err),
                     MLC_OK);
    assert_int_equal(im.w, 3 * 160 + 2 * 2);
    assert_int_equal(im.h, 120);
    int first_x[3];
    for (int k = 0; k < 3; k++) {
        long body = 0;
        first_x[k] = -1;
        for (int j = 0; j < 120; j++)
            for (int i = 0; i < 160; i++) {
                const unsigned char *p = im.rgb + 3 * ((size_t)j * im.w + k * 162 + i);
                if (is_body(p)) {
                    body++;
                    if (first_x[k] < 0 || i < first_x[k]) first_x[k] = i;
                }
            }
        assert_true(body > 300); /* the cube is clearly visible */
    }
    /* Fixed camera: the cube moves to the right from panel to panel. */
    assert_true(first_x[0] < first_x[1] && first_x[1] < first_x[2]);
    /* The corner pixel is background or ground, not body. */
    assert_false(is_body(im.rgb));
    mlc_image_free(&im);
    assert_int_equal(mlc_alloc_live(), live);
    int bad[1] = {9};
    assert_int_equal(mlc_render_filmstrip(xyz, 8, 4, cube_faces, 12, bad, 1, &o, &im, &err),
                     MLC_EINVAL);
}

/* Labels: each panel's label changes only its top-left box, whose size the font gives, and
 * different labels give different pixels there. */
static void filmstrip_labels_should_mark_each_panel(void **state) {
    (void)state;
    float xyz[3 * 8 * 4];
    cube_frames(xyz, 4);
    int frames[3] = {0, 1, 3};
    const char *labels[3] = {"t = 0.00 s", "t = 0.01 s", "t = 0.03 s"};
    mlc_filmstrip_options o;
    memset(&o, 0, sizeof o);
    o.panel_w = 160;
    o.panel_h = 120;
    mlc_image plain, lab;
    mlc_err err;
    assert_int_equal(mlc_render_filmstrip(xyz, 8, 4, cube_faces, 12, frames, 3, &o, &plain, &err),
                     MLC_OK);
    o.labels = labels;
    assert_int_equal(mlc_render_filmstrip(xyz, 8, 4, cube_faces, 12, frames, 3, &o, &lab, &err),
                     MLC_OK);
    int scale = mlc_label_scale(120);
    int bx = 3 * scale, by = 3 * scale; /* the box's corner; the text is inset by 2·scale */
    int bw = mlc_text_width(labels[0], scale) + 4 * scale, bh = mlc_text_height(scale) + 4 * scale;
    for (int k = 0; k < 3; k++) {
        long changed = 0, outside = 0;
        for (int j = 0; j < 120; j++)
            for (int i = 0; i < 160; i++) {
                size_t at = 3 * ((size_t)j * plain.w + k * 162 + i);
                if (!memcmp(plain.rgb + at, lab.rgb + at, 3)) continue;
                changed++;
                if (i < bx || i >= bx + bw || j < by || j >= by + bh) outside++;
            }
        assert_true(changed > (long)bw * bh / 2); /* the light box */
        assert_int_equal(outside, 0);
    }
    /* With one label on every panel the first two boxes are alike (the cube is elsewhere);
     * "0.00" and "0.01" differ in the last digit, and so do their boxes. */
    const char *same[3] = {labels[0], labels[0], labels[0]};
    mlc_image one;
    o.labels = same;
    assert_int_equal(mlc_render_filmstrip(xyz, 8, 4, cube_faces, 12, frames, 3, &o, &one, &err),
                     MLC_OK);
    int differ = 0, alike = 1;
    for (int j = by; j < by + bh; j++)
        for (int i = bx; i < bx + bw; i++) {
            size_t a = 3 * ((size_t)j * lab.w + i), b = a + 3 * 162;
            differ |= memcmp(lab.rgb + a, lab.rgb + b, 3) != 0;
            alike &= memcmp(one.rgb + a, one.rgb + b, 3) == 0;
        }
    assert_true(differ);
    assert_true(alike);
    mlc_image_free(&one);
    mlc_image_free(&plain);
    mlc_image_free(&lab);
}

/* ---- Viewer: run directories and the HTML budget ------------------------------------------- */

static char tmpdir[256];

static void write_cube_run(const char *dir, int nframes, int corrupt_pc2) {
    char path[512];
    mlc_err err;
    double X[24];
    float xyz[3 * 8 * 4];
    cube_frames(xyz, 4);
    for (int i = 0; i < 24; i++)
        X[i] = (double)xyz[i];
    snprintf(path, sizeof path, "%s/surface.obj", dir);
    assert_int_equal(mlc_obj_write(path, X, 8, cube_faces, 12, NULL, &err), MLC_OK);
    snprintf(path, sizeof path, "%s/animation.pc2", dir);
    mlc_pc2_writer w;
    memset(&w, 0, sizeof w);
    assert_int_equal(mlc_pc2_begin(&w, path, 8, &err), MLC_OK);
    for (int f = 0; f < nframes; f++) {
        double x[24];
        for (int i = 0; i < 24; i++)
            x[i] = (double)xyz[24 * (f % 4) + i];
        assert_int_equal(mlc_pc2_frame(&w, x, &err), MLC_OK);
    }
    assert_int_equal(mlc_pc2_end(&w, &err), MLC_OK);
    if (corrupt_pc2) assert_int_equal(truncate(path, 32 + 12 * 8 * nframes - 5), 0);
}

static void viewer_load_errors(void **state) {
    (void)state;
    char dir[300], path[400];
    mlc_run run;
    mlc_err err;
    long live = mlc_alloc_live();
    snprintf(dir, sizeof dir, "%s/missing", tmpdir);
    assert_int_equal(mlc_run_load(dir, &run, &err), MLC_EINVAL);
    snprintf(dir, sizeof dir, "%s/empty", tmpdir);
    assert_int_equal(mlc_mkdir_p(dir, &err), MLC_OK);
    assert_int_equal(mlc_run_load(dir, &run, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "surface.obj"));
    assert_non_null(strstr(err.msg, "optimize"));
    write_cube_run(dir, 3, 0);
    snprintf(path, sizeof path, "%s/animation.pc2", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mlc_run_load(dir, &run, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "animation.pc2"));
    write_cube_run(dir, 3, 1);
    assert_int_equal(mlc_run_load(dir, &run, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "animation.pc2"));
    /* A malformed trajectory.csv names its line. */
    write_cube_run(dir, 3, 0);
    snprintf(path, sizeof path, "%s/trajectory.csv", dir);
    assert_int_equal(mlc_write_text_atomic(path,
                                           "frame,time,com_x,com_y,com_z\n0,0,1,2,3\n"
                                           "1,0.01,x,2,3\n",
                                           &err),
                     MLC_OK);
    assert_int_equal(mlc_run_load(dir, &run, &err), MLC_EPARSE);
    assert_non_null(strstr(err.msg, "trajectory.csv:3"));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mlc_alloc_live(), live);
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static void viewer_html_budget(void **state) {
    (void)state;
    char dir[300], path[400];
    mlc_run run;
    mlc_err err;
    long live = mlc_alloc_live();
    snprintf(dir, sizeof dir, "%s/run", tmpdir);
    assert_int_equal(mlc_mkdir_p(dir, &err), MLC_OK);
    write_cube_run(dir, 40, 0);
    snprintf(path, sizeof path, "%s/trajectory.csv", dir);
    assert_int_equal(mlc_write_text_atomic(path,
                                           "frame,time,com_x,com_y,com_z,contacts\n"
                                           "0,0,0.5,0.5,0.5,0\n1,0.01,0.6,0.5,0.5,4\n",
                                           &err),
                     MLC_OK);
    assert_int_equal(mlc_run_load(dir, &run, &err), MLC_OK);
    assert_int_equal(run.nv, 8);
    assert_int_equal(run.nf, 12);
    assert_int_equal(run.nframes, 40);
    assert_int_equal(run.ntraj, 2);
    assert_near(run.traj[4 * 1 + 1], 0.6, 1e-12);
    snprintf(path, sizeof path, "%s/view.html", dir);

    /* Plenty of room: float32, every frame. */
    mlc_view_html_info info;
    assert_int_equal(mlc_view_html_write(&run, path, MLC_VIEW_MAX_DATA, &info, &err), MLC_OK);
    assert_int_equal(info.quantized, 0);
    assert_int_equal(info.step, 1);
    assert_int_equal(info.frames, 40);
    char *html = read_all(path);
    assert_non_null(strstr(html, "\"enc\":\"f32\""));
    assert_non_null(strstr(html, "dataset.ready"));
    /* Nothing to fetch (the only URL is the SVG namespace, which is a name, not a load). */
    assert_null(strstr(html, "https://"));
    assert_null(strstr(html, "src="));
    assert_null(strstr(html, "href="));
    assert_null(strstr(html, "url("));
    assert_null(strstr(html, "@import"));
    assert_non_null(strstr(html, "default-src 'none'"));
    free(html);

    /* float32 would need 4·ceil(12·8·40/3) = 5120 chars + faces 192; int16 fits in 2800. */
    assert_int_equal(mlc_view_html_write(&run, path, 2800, &info, &err), MLC_OK);
    assert_int_equal(info.quantized, 1);
    assert_int_equal(info.step, 1);
    assert_true(info.data_bytes <= 2800);
    html = read_all(path);
    assert_non_null(strstr(html, "quantized to 16 bits"));
    free(html);

    /* Tighter: int16 and every step-th frame, and the page says so. */
    assert_int_equal(mlc_view_html_write(&run, path, 1000, &info, &err), MLC_OK);
    assert_int_equal(info.quantized, 1);
    assert_true(info.step > 1);
    assert_true(info.data_bytes <= 1000);
    assert_int_equal(info.frames, (40 + info.step - 1) / info.step);
    html = read_all(path);
    assert_non_null(strstr(html, "Only one frame in"));
    free(html);
    mlc_run_free(&run);
    mlc_run_free(&run); /* idempotent */
    assert_int_equal(mlc_alloc_live(), live);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mlc_test_render_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(png_stored_roundtrip),
        cmocka_unit_test(png_compressed_roundtrip),
        cmocka_unit_test(png_write_bad_path),
        cmocka_unit_test(raster_area_matches),
        cmocka_unit_test(raster_shared_edge_once),
        cmocka_unit_test(raster_depth_test),
        cmocka_unit_test(filmstrip_shows_body),
        cmocka_unit_test(filmstrip_labels_should_mark_each_panel),
        cmocka_unit_test(viewer_load_errors),
        cmocka_unit_test(viewer_html_budget),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
