/* test_anim.c: the animation writers, checked by decoding what they wrote with readers written
 * here: a GIF parser with its own LZW decoder (blocks, palette, delays, frame rectangles,
 * transparency, composited pixels), an APNG parser (chunk order and CRCs, acTL, fcTL sequence
 * numbers and rectangles, zlib-inflated and unfiltered pixels), the ffmpeg pipe against
 * stand-in programs, atomicity when a frame source fails, and the bitmap font. */
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "test_util.h"

#include "anim.h"
#include "png.h"
#include "render.h"

static char tmpdir[256];

/* ---- Synthetic animations ------------------------------------------------------------------- */

/* A frame source: a static background, a square that moves one pixel per frame, a strip that
 * changes every frame. `colors` selects the background: a few colours (0), a smooth gradient
 * with thousands of colours (1), or noise over 253 colours (2; 255 with the square and strip).
 * `fail_at` >= 0 makes that frame fail. Counts the calls. */
typedef struct synth {
    int w, h, colors, fail_at, calls;
} synth;

static uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static void synth_pixel(const synth *s, int k, int i, int j, unsigned char *p) {
    if (s->colors == 0) {
        p[0] = (unsigned char)(40 * ((i / 5 + j / 7) % 4)), p[1] = 200, p[2] = 90;
    } else if (s->colors == 1) {
        p[0] = (unsigned char)(255 * i / (s->w - 1)), p[1] = (unsigned char)(255 * j / (s->h - 1));
        p[2] = (unsigned char)((i * 7 + j * 3) & 255);
    } else {
        uint32_t v = hash32((uint32_t)(j * s->w + i)) % 253;
        p[0] = (unsigned char)v, p[1] = (unsigned char)(255 - v), p[2] = (unsigned char)(v * 3);
    }
    int x0 = 3 + k, y0 = 4 + k / 2;
    if (i >= x0 && i < x0 + 6 && j >= y0 && j < y0 + 5) p[0] = 250, p[1] = 20, p[2] = 20;
    if (j == s->h - 2 && i < 4 + (k % 5)) p[0] = 10, p[1] = 10, p[2] = 250;
}

static mlc_status synth_frame(void *ctx, int k, unsigned char *rgb, mlc_err *err) {
    synth *s = ctx;
    s->calls++;
    if (k == s->fail_at) return mlc_errf(err, MLC_EIO, "frame %d failed on purpose", k);
    for (int j = 0; j < s->h; j++)
        for (int i = 0; i < s->w; i++)
            synth_pixel(s, k, i, j, rgb + 3 * ((size_t)j * s->w + i));
    return MLC_OK;
}

static char *tmp_path(const char *name) {
    static char buf[4][512];
    static int n;
    char *b = buf[n++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

/* Files in the temporary directory whose name starts with '.' (an atomic writer's leftover). */
static int hidden_files(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' | grep '^\\.')\"", tmpdir);
    return system(cmd) != 0;
}

/* ---- An independent GIF reader ----------------------------------------------------------------
 */

typedef struct gif_frame {
    int x, y, w, h, delay, disposal, transparent; /* transparent = -1 for none */
} gif_frame;

typedef struct gif_file {
    int w, h, ncolors, loop_seen;
    unsigned char pal[256][3];
    int nframes;
    gif_frame frames[64];
    unsigned char *canvas[64]; /* the composited picture after each frame (RGB) */
} gif_file;

static int rd16(const unsigned char *p) {
    return p[0] | p[1] << 8;
}

/* LZW as the GIF specification defines it: codes of min_size + 1 bits growing to 12, clear and
 * end codes, the table growing by one entry per code after the first. Returns the count. */
static size_t lzw_decode(const unsigned char *data, size_t n, int min_size, unsigned char *out,
                         size_t cap) {
    const int clear = 1 << min_size, eoi = clear + 1;
    static uint16_t prefix[4096];
    static unsigned char suffix[4096], first[4096];
    static unsigned char stack[4096];
    int width = min_size + 1, next = eoi + 1, prev = -1;
    for (int c = 0; c < clear; c++)
        prefix[c] = 0xFFFF, suffix[c] = (unsigned char)c, first[c] = (unsigned char)c;
    uint32_t bits = 0;
    int nbits = 0;
    size_t pos = 0, len = 0;
    int seen_end = 0;
    while (!seen_end) {
        while (nbits < width) {
            assert_true(pos < n); /* the stream ends with the end code */
            bits |= (uint32_t)data[pos++] << nbits;
            nbits += 8;
        }
        int code = (int)(bits & ((1u << width) - 1));
        bits >>= width;
        nbits -= width;
        if (code == clear) {
            width = min_size + 1, next = eoi + 1, prev = -1;
            continue;
        }
        if (code == eoi) {
            seen_end = 1;
            break;
        }
        int cur = code;
        unsigned char lead;
        size_t sp = 0;
        if (prev < 0) {
            assert_true(code < clear);
        } else {
            assert_true(code <= next);
        }
        if (prev >= 0 && code == next) { /* the entry being defined: prev + its first byte */
            stack[sp++] = first[prev];
            cur = prev;
        }
        while (cur != 0xFFFF && cur >= 0) {
            assert_true(sp < sizeof stack);
            stack[sp++] = suffix[cur];
            cur = cur < clear ? -1 : prefix[cur];
        }
        lead = stack[sp - 1];
        assert_true(len + sp <= cap);
        while (sp)
            out[len++] = stack[--sp];
        if (prev >= 0 && next < 4096) {
            prefix[next] = (uint16_t)prev;
            suffix[next] = lead;
            first[next] = first[prev];
            next++;
            if (next == (1 << width) && width < 12) width++;
        }
        prev = code;
    }
    return len;
}

/* Join the sub-blocks starting at d[*p] (length byte, data, ..., a zero length) into out;
 * returns their length and moves *p past the terminator. */
static size_t sub_blocks(const unsigned char *d, size_t n, size_t *p, unsigned char *out) {
    size_t dn = 0;
    for (;;) {
        assert_true(*p < n);
        unsigned char len = d[(*p)++];
        if (!len) return dn;
        assert_true(*p + len <= n);
        memcpy(out + dn, d + *p, len);
        dn += len, *p += len;
    }
}

static void gif_free(gif_file *g) {
    for (int k = 0; k < g->nframes; k++)
        free(g->canvas[k]);
}

static void gif_read(const char *path, gif_file *g) {
    size_t n;
    unsigned char *d = (unsigned char *)test_read_file(path, &n);
    assert_non_null(d);
    memset(g, 0, sizeof *g);
    assert_true(n > 13);
    assert_memory_equal(d, "GIF89a", 6);
    g->w = rd16(d + 6), g->h = rd16(d + 8);
    assert_true(d[10] & 0x80); /* a global colour table */
    int tsize = 2 << (d[10] & 7);
    g->ncolors = tsize;
    size_t p = 13;
    assert_true(p + 3 * (size_t)tsize <= n);
    memcpy(g->pal, d + p, 3 * (size_t)tsize);
    p += 3 * (size_t)tsize;
    size_t npx = (size_t)g->w * g->h;
    unsigned char *canvas = calloc(3 * npx, 1);
    unsigned char *idx = malloc(npx + 1);
    unsigned char *data = malloc(n);
    gif_frame gce = {0, 0, 0, 0, 0, 0, -1};
    for (;;) {
        assert_true(p < n);
        unsigned char b = d[p++];
        if (b == 0x3B) break;
        if (b == 0x21) {
            unsigned char label = d[p++];
            size_t dn = sub_blocks(d, n, &p, data);
            if (label == 0xF9) {
                assert_int_equal(dn, 4);
                gce.disposal = (data[0] >> 2) & 7;
                gce.delay = rd16(data + 1);
                gce.transparent = data[0] & 1 ? data[3] : -1;
            } else if (label == 0xFF && dn >= 14 && !memcmp(data, "NETSCAPE2.0", 11)) {
                assert_int_equal(rd16(data + 12), 0); /* loop forever */
                g->loop_seen = 1;
            }
            continue;
        }
        assert_int_equal(b, 0x2C);
        assert_true(g->nframes < 64);
        gif_frame *f = &g->frames[g->nframes];
        *f = gce;
        f->x = rd16(d + p), f->y = rd16(d + p + 2), f->w = rd16(d + p + 4), f->h = rd16(d + p + 6);
        assert_int_equal(d[p + 8] & 0x80, 0); /* no local colour table */
        p += 9;
        assert_true(f->w >= 1 && f->h >= 1 && f->x + f->w <= g->w && f->y + f->h <= g->h);
        int min_size = d[p++];
        assert_true(min_size >= 2 && min_size <= 8);
        size_t dn = sub_blocks(d, n, &p, data);
        size_t got = lzw_decode(data, dn, min_size, idx, npx + 1);
        assert_int_equal(got, (size_t)f->w * f->h);
        for (int j = 0; j < f->h; j++)
            for (int i = 0; i < f->w; i++) {
                int c = idx[(size_t)j * f->w + i];
                if (c == f->transparent) continue;
                assert_true(c < tsize);
                memcpy(canvas + 3 * ((size_t)(f->y + j) * g->w + f->x + i), g->pal[c], 3);
            }
        g->canvas[g->nframes] = malloc(3 * npx);
        memcpy(g->canvas[g->nframes], canvas, 3 * npx);
        g->nframes++;
        gce = (gif_frame){0, 0, 0, 0, 0, 0, -1};
    }
    assert_int_equal(p, n); /* nothing after the trailer */
    free(canvas);
    free(idx);
    free(data);
    free(d);
}

static long dist2(const unsigned char *a, const unsigned char *b) {
    long d = 0;
    for (int k = 0; k < 3; k++)
        d += (long)(a[k] - b[k]) * (a[k] - b[k]);
    return d;
}

/* Write a GIF of `s`, read it back and compare: sizes, frame count, delays (each frame's end
 * within half a centisecond of the exact time), rectangles, and every pixel equal to the input
 * (exact) or to the input's nearest palette entry. */
static void gif_roundtrip(synth *s, int nframes, int fps, double hold, int expect_exact) {
    mlc_anim_spec spec = {s->w, s->h, nframes, fps, hold};
    mlc_anim_info info;
    mlc_err err = {0};
    const char *path = tmp_path("t.gif");
    long live = mlc_alloc_live();
    assert_int_equal(mlc_gif_write(path, &spec, synth_frame, s, &info, &err), MLC_OK);
    assert_int_equal(mlc_alloc_live(), live);
    assert_int_equal(info.exact, expect_exact);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((size_t)st.st_size, info.bytes);
    gif_file g;
    gif_read(path, &g);
    assert_int_equal(g.w, s->w);
    assert_int_equal(g.h, s->h);
    assert_true(g.loop_seen);
    assert_int_equal(g.nframes, nframes);
    long total = 0;
    size_t npx = (size_t)s->w * s->h;
    unsigned char *in = malloc(3 * npx);
    for (int k = 0; k < nframes; k++) {
        const gif_frame *f = &g.frames[k];
        total += f->delay;
        double end = (double)(k + 1) / fps + (k == nframes - 1 ? hold : 0);
        assert_true(fabs(total - 100 * end) <= 0.5 + 1e-9);
        if (k == 0) {
            assert_int_equal(f->w * f->h, (int)npx); /* the first frame is whole */
            assert_int_equal(f->transparent, -1);
        } else {
            assert_int_equal(f->disposal, 1); /* do not dispose: later frames draw over it */
            assert_true(f->transparent >= info.ncolors);
            /* Only the square and the strip change: the rectangle is smaller than the frame. */
            assert_true((size_t)f->w * f->h < npx);
        }
        mlc_err e2 = {0};
        synth_frame(s, k, in, &e2);
        for (size_t i = 0; i < npx; i++) {
            const unsigned char *got = g.canvas[k] + 3 * i, *want = in + 3 * i;
            if (expect_exact) {
                if (memcmp(got, want, 3))
                    fail_msg("frame %d pixel %zu: (%d %d %d), expected (%d %d %d)", k, i, got[0],
                             got[1], got[2], want[0], want[1], want[2]);
                continue;
            }
            long best = LONG_MAX;
            for (int c = 0; c < info.ncolors; c++)
                best = MLC_MIN(best, dist2(g.pal[c], want));
            if (dist2(got, want) != best)
                fail_msg("frame %d pixel %zu is not the nearest palette colour", k, i);
        }
    }
    free(in);
    gif_free(&g);
}

static void gif_should_decode_to_the_input_when_colours_fit(void **state) {
    (void)state;
    synth s = {37, 23, 0, -1, 0};
    /* 30 fps: delays of 3 1/3 cs, rounded so that the running time stays exact. */
    gif_roundtrip(&s, 9, 30, 0.5, 1);
    /* One frame: a still GIF. */
    synth one = {5, 4, 0, -1, 0};
    gif_roundtrip(&one, 1, 25, 0, 1);
}

static void gif_noise_should_survive_table_resets(void **state) {
    (void)state;
    /* 255 colours of noise: the 4096-entry table fills many times per frame (clear codes),
     * and the transparent index is 255, the last of an 8-bit table. */
    synth s = {160, 120, 2, -1, 0};
    gif_roundtrip(&s, 3, 10, 0, 1);
}

static void gif_many_colours_should_map_to_the_nearest_entry(void **state) {
    (void)state;
    synth s = {64, 48, 1, -1, 0};
    gif_roundtrip(&s, 20, 25, 1.0, 0);
    /* The median cut spends the palette well on a smooth gradient: the mean error per channel
     * is a few levels. */
    gif_file g;
    gif_read(tmp_path("t.gif"), &g);
    unsigned char *in = malloc(3 * 64 * 48);
    mlc_err err = {0};
    synth_frame(&s, 0, in, &err);
    double e = 0;
    for (size_t i = 0; i < 3 * 64 * 48; i++)
        e += fabs((double)g.canvas[0][i] - in[i]);
    e /= 3 * 64 * 48;
    assert_true(e < 6);
    free(in);
    gif_free(&g);
}

static void gif_should_be_deterministic(void **state) {
    (void)state;
    synth s = {64, 48, 1, -1, 0};
    mlc_anim_spec spec = {64, 48, 12, 20, 0.25};
    mlc_err err = {0};
    assert_int_equal(mlc_gif_write(tmp_path("a.gif"), &spec, synth_frame, &s, NULL, &err), MLC_OK);
    assert_int_equal(mlc_gif_write(tmp_path("b.gif"), &spec, synth_frame, &s, NULL, &err), MLC_OK);
    size_t na, nb;
    char *a = test_read_file(tmp_path("a.gif"), &na), *b = test_read_file(tmp_path("b.gif"), &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
}

/* ---- An independent APNG reader ------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Undo the row filters of a w×h RGB image (all five types). */
static void unfilter(unsigned char *raw, int w, int h, unsigned char *out) {
    size_t stride = 3 * (size_t)w;
    for (int j = 0; j < h; j++) {
        const unsigned char *r = raw + (size_t)j * (stride + 1);
        unsigned char *o = out + (size_t)j * stride, *up = j ? o - stride : NULL;
        assert_true(r[0] <= 4);
        for (size_t x = 0; x < stride; x++) {
            int a = x >= 3 ? o[x - 3] : 0, b = up ? up[x] : 0, c = up && x >= 3 ? up[x - 3] : 0;
            int pred = 0;
            if (r[0] == 1) pred = a;
            if (r[0] == 2) pred = b;
            if (r[0] == 3) pred = (a + b) / 2;
            if (r[0] == 4) {
                int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
                pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
            }
            o[x] = (unsigned char)(r[1 + x] + pred);
        }
    }
}

static void apng_should_decode_to_the_input(void **state) {
    (void)state;
    synth s = {37, 23, 1, -1, 0};
    const int nframes = 7, fps = 12;
    mlc_anim_spec spec = {s.w, s.h, nframes, fps, 0.5};
    mlc_anim_info info;
    mlc_err err = {0};
    const char *path = tmp_path("t.png");
    long live = mlc_alloc_live();
    assert_int_equal(mlc_apng_write(path, &spec, synth_frame, &s, &info, &err), MLC_OK);
    assert_int_equal(mlc_alloc_live(), live);
    size_t n;
    unsigned char *d = (unsigned char *)test_read_file(path, &n);
    assert_non_null(d);
    assert_int_equal(n, info.bytes);
    assert_memory_equal(d, mlc_png_signature, 8);
    size_t npx = (size_t)s.w * s.h;
    unsigned char *canvas = calloc(3 * npx, 1), *in = malloc(3 * npx), *pix = malloc(3 * npx);
    unsigned char *z = malloc(n), *raw = malloc(npx * 3 + (size_t)s.h);
    size_t zn = 0;
    int seen_actl = 0, seen_idat = 0, frames = 0, expect_seq = 0;
    uint32_t rx = 0, ry = 0, rw = 0, rh = 0;
    int have_rect = 0;
    /* Composite the pending frame (the fcTL rectangle, data in z) onto the canvas and compare
     * with the input. */
#define FINISH_FRAME()                                                                             \
    do {                                                                                           \
        uLongf rn = (uLongf)(3 * (size_t)rw * rh + rh);                                            \
        assert_int_equal(uncompress(raw, &rn, z, (uLong)zn), Z_OK);                                \
        assert_int_equal(rn, 3 * (size_t)rw * rh + rh);                                            \
        unfilter(raw, (int)rw, (int)rh, pix);                                                      \
        for (uint32_t j = 0; j < rh; j++)                                                          \
            memcpy(canvas + 3 * ((size_t)(ry + j) * s.w + rx), pix + 3 * (size_t)j * rw, 3 * rw);  \
        synth_frame(&s, frames, in, &err);                                                         \
        assert_memory_equal(canvas, in, 3 * npx);                                                  \
        frames++, zn = 0, have_rect = 0;                                                           \
    } while (0)
    size_t p = 8;
    int first = 1;
    while (p < n) {
        assert_true(p + 12 <= n);
        uint32_t len = be32(d + p);
        assert_true(p + 12 + len <= n);
        const unsigned char *type = d + p + 4, *data = d + p + 8;
        assert_int_equal(be32(data + len), crc32(crc32(0, Z_NULL, 0), type, 4 + len));
        if (first) {
            assert_memory_equal(type, "IHDR", 4);
            assert_int_equal(be32(data), s.w);
            assert_int_equal(be32(data + 4), s.h);
            assert_int_equal(data[8], 8);
            assert_int_equal(data[9], 2);
            first = 0;
        } else if (!memcmp(type, "acTL", 4)) {
            assert_false(seen_idat); /* acTL comes before the image data */
            assert_int_equal(be32(data), nframes);
            assert_int_equal(be32(data + 4), 0); /* loop forever */
            seen_actl = 1;
        } else if (!memcmp(type, "fcTL", 4)) {
            if (have_rect) FINISH_FRAME();
            assert_int_equal(len, 26);
            assert_int_equal(be32(data), expect_seq++);
            rw = be32(data + 4), rh = be32(data + 8), rx = be32(data + 12), ry = be32(data + 16);
            assert_true(rw >= 1 && rh >= 1 && rx + rw <= (uint32_t)s.w && ry + rh <= (uint32_t)s.h);
            if (frames == 0)
                assert_true(rw == (uint32_t)s.w && rh == (uint32_t)s.h && !rx && !ry);
            else
                assert_true((size_t)rw * rh < npx);
            int num = data[20] << 8 | data[21], den = data[22] << 8 | data[23];
            assert_int_equal(den, fps);
            assert_int_equal(num, frames == nframes - 1 ? 1 + 6 : 1); /* hold 0.5 s at 12 fps */
            assert_int_equal(data[24], 0);
            assert_int_equal(data[25], 0);
            have_rect = 1;
        } else if (!memcmp(type, "IDAT", 4)) {
            assert_true(seen_actl && have_rect && frames == 0);
            seen_idat = 1;
            memcpy(z + zn, data, len);
            zn += len;
        } else if (!memcmp(type, "fdAT", 4)) {
            assert_true(seen_idat && have_rect && frames > 0);
            assert_int_equal(be32(data), expect_seq++);
            memcpy(z + zn, data + 4, len - 4);
            zn += len - 4;
        } else if (!memcmp(type, "IEND", 4)) {
            assert_int_equal(p + 12, n);
            if (have_rect) FINISH_FRAME();
        }
        p += 12 + len;
    }
#undef FINISH_FRAME
    assert_int_equal(frames, nframes);
    assert_int_equal(expect_seq, 2 * nframes - 1); /* an fcTL per frame, an fdAT after the first */
    free(d);
    free(canvas);
    free(in);
    free(pix);
    free(z);
    free(raw);
}

/* ---- Failures leave no file ------------------------------------------------------------------ */

static void failed_source_should_leave_the_previous_file(void **state) {
    (void)state;
    const char *path = tmp_path("keep.gif");
    mlc_err err = {0};
    assert_int_equal(mlc_write_text_atomic(path, "previous", &err), MLC_OK);
    synth s = {20, 10, 0, 3, 0};
    mlc_anim_spec spec = {20, 10, 6, 10, 0};
    long live = mlc_alloc_live();
    assert_int_equal(mlc_gif_write(path, &spec, synth_frame, &s, NULL, &err), MLC_EIO);
    assert_non_null(strstr(err.msg, "frame 3 failed"));
    s.calls = 0;
    assert_int_equal(mlc_apng_write(path, &spec, synth_frame, &s, NULL, &err), MLC_EIO);
    assert_int_equal(s.calls, 4); /* stopped at the failing frame */
    assert_int_equal(mlc_alloc_live(), live);
    char *text = test_read_file(path, NULL);
    assert_string_equal(text, "previous");
    free(text);
    assert_false(hidden_files());
    /* A directory that does not exist. */
    s.fail_at = -1;
    assert_int_equal(mlc_gif_write("/nonexistent-dir/a.gif", &spec, synth_frame, &s, NULL, &err),
                     MLC_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/a.gif"));
    /* Specifications out of range. */
    mlc_anim_spec bad = spec;
    bad.fps = 0;
    assert_int_equal(mlc_apng_write(path, &bad, synth_frame, &s, NULL, &err), MLC_EINVAL);
    bad = spec, bad.nframes = 0;
    assert_int_equal(mlc_gif_write(path, &bad, synth_frame, &s, NULL, &err), MLC_EINVAL);
}

/* ---- Video through a stand-in for ffmpeg ---------------------------------------------------- */

/* Write an executable shell script `name` in the temporary directory. */
static const char *script(const char *name, const char *body) {
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

static void video_should_pipe_every_frame(void **state) {
    (void)state;
    mkdir(tmp_path("bin"), 0755);
    /* The stand-in checks the size and rate it is told, then stores its input where the
     * output file goes (the last argument). */
    script("bin/ffmpeg", "size='' rate='' last=''\n"
                         "while [ $# -gt 0 ]; do\n"
                         "  case $1 in -s) size=$2;; -framerate) rate=$2;; esac\n"
                         "  last=$1; shift\n"
                         "done\n"
                         "[ \"$size\" = 20x10 ] && [ \"$rate\" = 8 ] || exit 9\n"
                         "cat > \"$last\"");
    char found[1024];
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    char path_var[1200];
    snprintf(path_var, sizeof path_var, "/nonexistent:%s", tmp_path("bin"));
    setenv("PATH", path_var, 1);
    assert_int_equal(mlc_video_find("ffmpeg", found, sizeof found), 1);
    assert_string_equal(found, tmp_path("bin/ffmpeg"));
    assert_int_equal(mlc_video_find("no-such-program-here", found, sizeof found), 0);
    if (saved) setenv("PATH", saved, 1);
    free(saved);

    synth s = {20, 10, 1, -1, 0};
    mlc_anim_spec spec = {20, 10, 5, 8, 0.5};
    mlc_anim_info info;
    mlc_err err = {0};
    const char *out = tmp_path("v.mp4");
    mlc_status vs = mlc_video_write(out, found, &spec, synth_frame, &s, &info, &err);
    if (vs != MLC_OK) fail_msg("%s", err.msg);
    size_t n;
    unsigned char *d = (unsigned char *)test_read_file(out, &n);
    assert_int_equal(n, 5 * 3 * 20 * 10); /* every frame, raw, no hold */
    assert_int_equal(info.bytes, n);
    unsigned char *in = malloc(600);
    for (int k = 0; k < 5; k++) {
        synth_frame(&s, k, in, &err);
        assert_memory_equal(d + 600 * k, in, 600);
    }
    free(in);
    free(d);

    /* An encoder that fails, one that stops reading at once, a frame that fails, odd sizes:
     * an error and no file. */
    const char *fails = script("fails", "cat > /dev/null; echo 'no encoder' >&2; exit 1");
    const char *quits = script("quits", "exit 0");
    const char *out2 = tmp_path("w.mp4");
    assert_int_equal(mlc_video_write(out2, fails, &spec, synth_frame, &s, NULL, &err), MLC_ETOOL);
    assert_non_null(strstr(err.msg, "exit status 1"));
    mlc_anim_spec big = {640, 480, 40, 8, 0};
    synth bs = {640, 480, 1, -1, 0}; /* frames of the big size: every byte written is set */
    assert_int_equal(mlc_video_write(out2, quits, &big, synth_frame, &bs, NULL, &err), MLC_ETOOL);
    s.fail_at = 2;
    assert_int_equal(mlc_video_write(out2, found, &spec, synth_frame, &s, NULL, &err), MLC_EIO);
    s.fail_at = -1;
    mlc_anim_spec odd = {21, 10, 5, 8, 0};
    assert_int_equal(mlc_video_write(out2, found, &odd, synth_frame, &s, NULL, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "even"));
    assert_int_equal(access(out2, F_OK), -1);
    assert_false(hidden_files());
}

/* ---- The bitmap font ---------------------------------------------------------------------- */

static long ink(const mlc_image *im, int *x0, int *y0, int *x1, int *y1) {
    long n = 0;
    *x0 = im->w, *y0 = im->h, *x1 = -1, *y1 = -1;
    for (int j = 0; j < im->h; j++)
        for (int i = 0; i < im->w; i++)
            if (im->rgb[3 * ((size_t)j * im->w + i)] == 0) {
                n++;
                *x0 = MLC_MIN(*x0, i), *x1 = MLC_MAX(*x1, i);
                *y0 = MLC_MIN(*y0, j), *y1 = MLC_MAX(*y1, j);
            }
    return n;
}

static void text_should_scale_and_stay_in_its_box(void **state) {
    (void)state;
    static const unsigned char white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
    mlc_image a, b;
    mlc_err err = {0};
    assert_int_equal(mlc_image_init(&a, 80, 20, white, &err), MLC_OK);
    assert_int_equal(mlc_image_init(&b, 160, 40, white, &err), MLC_OK);
    const char *s = "t = 1.20 s";
    assert_int_equal(mlc_text_width(s, 1), 59);
    assert_int_equal(mlc_text_width("", 3), 0);
    assert_int_equal(mlc_text_height(2), 14);
    mlc_draw_text(&a, 2, 3, s, 1, black);
    mlc_draw_text(&b, 4, 6, s, 2, black);
    int x0, y0, x1, y1;
    long na = ink(&a, &x0, &y0, &x1, &y1);
    assert_true(na > 40);
    assert_true(x0 >= 2 && x1 < 2 + 59 && y0 >= 3 && y1 < 3 + 7);
    /* "t" has ink in its top row ... and the scaled text is the text with every pixel doubled. */
    assert_int_equal(ink(&b, &x0, &y0, &x1, &y1), 4 * na);
    for (int j = 0; j < 40; j++)
        for (int i = 0; i < 160; i++)
            assert_int_equal(b.rgb[3 * ((size_t)j * 160 + i)],
                             a.rgb[3 * ((size_t)(j / 2) * 80 + i / 2)]);
    /* Different digits draw differently; characters outside the font draw as '?'. */
    mlc_image c;
    assert_int_equal(mlc_image_init(&c, 40, 10, white, &err), MLC_OK);
    mlc_draw_text(&c, 0, 0, "0", 1, black);
    mlc_draw_text(&c, 6, 0, "8", 1, black);
    mlc_draw_text(&c, 12, 0, "\x01", 1, black);
    mlc_draw_text(&c, 18, 0, "?", 1, black);
    int differ = 0, same = 1;
    for (int j = 0; j < 7; j++)
        for (int i = 0; i < 5; i++) {
            differ |= c.rgb[3 * (j * 40 + i)] != c.rgb[3 * (j * 40 + 6 + i)];
            same &= c.rgb[3 * (j * 40 + 12 + i)] == c.rgb[3 * (j * 40 + 18 + i)];
        }
    assert_true(differ);
    assert_true(same);
    /* Drawing off the image is clipped, not a crash. */
    mlc_draw_text(&c, -20, -3, "clipped 123", 2, black);
    mlc_draw_label(&c, 30, 5, "label", 3);
    mlc_image_free(&a);
    mlc_image_free(&b);
    mlc_image_free(&c);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mlc_test_anim_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gif_should_decode_to_the_input_when_colours_fit),
        cmocka_unit_test(gif_noise_should_survive_table_resets),
        cmocka_unit_test(gif_many_colours_should_map_to_the_nearest_entry),
        cmocka_unit_test(gif_should_be_deterministic),
        cmocka_unit_test(apng_should_decode_to_the_input),
        cmocka_unit_test(failed_source_should_leave_the_previous_file),
        cmocka_unit_test(video_should_pipe_every_frame),
        cmocka_unit_test(text_should_scale_and_stay_in_its_box),
    };
    int rc = cmocka_run_group_tests_name("anim", tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
