/* anim.c: GIF, APNG and ffmpeg video writers for frames pulled from a source. See anim.h. */
#include "anim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "internal/png_parts.h"
#include "output.h"
#include "png.h"

extern char **environ;

static mlc_status check_spec(const mlc_anim_spec *sp, mlc_err *err) {
    if (sp->w < 1 || sp->h < 1 || sp->w > 65535 || sp->h > 65535)
        return mlc_errf(err, MLC_EINVAL, "animation size %d x %d out of range (1..65535)", sp->w,
                        sp->h);
    if (sp->nframes < 1)
        return mlc_errf(err, MLC_EINVAL, "animation of %d frames: nothing to write", sp->nframes);
    if (sp->fps < 1 || sp->fps > 100)
        return mlc_errf(err, MLC_EINVAL, "animation at %d frames per second: valid 1..100",
                        sp->fps);
    if (!(sp->hold >= 0 && sp->hold <= 60))
        return mlc_errf(err, MLC_EINVAL, "animation hold of %g s: valid 0..60", sp->hold);
    return MLC_OK;
}

/* Write n bytes to an atomic file; MLC_EIO naming the path. */
static mlc_status put(mlc_afile *af, const void *p, size_t n, mlc_err *err) {
    if (n && fwrite(p, 1, n, af->fp) != n)
        return mlc_errf(err, MLC_EIO, "%s: write failed: %s", af->path, strerror(errno));
    return MLC_OK;
}

/* The rectangle bounding the pixels where a and b (w×h, `bpp` bytes per pixel) differ; 0 when
 * they are equal. */
static int changed_rect(const unsigned char *a, const unsigned char *b, int w, int h, int bpp,
                        int r[4]) {
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
    size_t row = (size_t)w * bpp;
    for (int j = 0; j < h; j++) {
        const unsigned char *pa = a + j * row, *pb = b + j * row;
        if (!memcmp(pa, pb, row)) continue;
        int i = 0, k = w - 1;
        while (!memcmp(pa + (size_t)i * bpp, pb + (size_t)i * bpp, bpp))
            i++;
        while (!memcmp(pa + (size_t)k * bpp, pb + (size_t)k * bpp, bpp))
            k--;
        x0 = MLC_MIN(x0, i), x1 = MLC_MAX(x1, k);
        y0 = MLC_MIN(y0, j), y1 = j;
    }
    if (x1 < 0) return 0;
    r[0] = x0, r[1] = y0, r[2] = x1 - x0 + 1, r[3] = y1 - y0 + 1;
    return 1;
}

/* ==== GIF: palette ============================================================================ */

/* A map from 24-bit colours to small values by open addressing, keys stored plus one (0 =
 * empty). Used as a set of distinct colours and as the colour -> palette index cache. */
#define CMAP_BITS 16
#define CMAP_SIZE (1u << CMAP_BITS)
typedef struct cmap {
    uint32_t key[CMAP_SIZE];
    uint8_t val[CMAP_SIZE];
    unsigned n;
} cmap;

static uint32_t rgb24(const unsigned char *p) {
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* The slot of colour c: where it is, or the empty slot where it would go. */
static unsigned cmap_slot(const cmap *m, uint32_t c) {
    unsigned h = (unsigned)((c * 2654435761u) >> (32 - CMAP_BITS));
    while (m->key[h] && m->key[h] != c + 1)
        h = (h + 1) & (CMAP_SIZE - 1);
    return h;
}

typedef struct gif_palette {
    int n; /* colours, 1..255; index n is the transparent one */
    unsigned char rgb[256][3];
} gif_palette;

/* Median cut: boxes over the 5-bit histogram, each split at the weighted median of its longest
 * side, the box with the most pixels first (ties: the first), until 255 boxes or no box can be
 * split. */
typedef struct mc_box {
    int lo[3], hi[3]; /* 5-bit bounds, inclusive */
    double count;
} mc_box;

static double box_count(const double *hist, const mc_box *b) {
    double c = 0;
    for (int r = b->lo[0]; r <= b->hi[0]; r++)
        for (int g = b->lo[1]; g <= b->hi[1]; g++)
            for (int bl = b->lo[2]; bl <= b->hi[2]; bl++)
                c += hist[(r << 10) | (g << 5) | bl];
    return c;
}

/* Shrink the box to the bins that hold pixels. */
static void box_shrink(const double *hist, mc_box *b) {
    int lo[3] = {31, 31, 31}, hi[3] = {0, 0, 0};
    for (int r = b->lo[0]; r <= b->hi[0]; r++)
        for (int g = b->lo[1]; g <= b->hi[1]; g++)
            for (int bl = b->lo[2]; bl <= b->hi[2]; bl++)
                if (hist[(r << 10) | (g << 5) | bl] > 0) {
                    int v[3] = {r, g, bl};
                    for (int k = 0; k < 3; k++)
                        lo[k] = MLC_MIN(lo[k], v[k]), hi[k] = MLC_MAX(hi[k], v[k]);
                }
    memcpy(b->lo, lo, sizeof lo);
    memcpy(b->hi, hi, sizeof hi);
}

static void median_cut(const double *hist, const double (*sum)[3], gif_palette *pal) {
    mc_box box[255];
    int nb = 1;
    box[0] = (mc_box){{0, 0, 0}, {31, 31, 31}, 0};
    box_shrink(hist, &box[0]);
    box[0].count = box_count(hist, &box[0]);
    while (nb < 255) {
        int best = -1;
        for (int i = 0; i < nb; i++) {
            int splittable = box[i].lo[0] < box[i].hi[0] || box[i].lo[1] < box[i].hi[1] ||
                             box[i].lo[2] < box[i].hi[2];
            if (splittable && (best < 0 || box[i].count > box[best].count)) best = i;
        }
        if (best < 0) break;
        mc_box *b = &box[best];
        int ax = 0;
        for (int k = 1; k < 3; k++)
            if (b->hi[k] - b->lo[k] > b->hi[ax] - b->lo[ax]) ax = k;
        /* Pixels per slice along the axis, then the cut below which half of them lie (at least
         * one slice on either side). */
        double slice[32] = {0};
        for (int r = b->lo[0]; r <= b->hi[0]; r++)
            for (int g = b->lo[1]; g <= b->hi[1]; g++)
                for (int bl = b->lo[2]; bl <= b->hi[2]; bl++) {
                    int v[3] = {r, g, bl};
                    slice[v[ax]] += hist[(r << 10) | (g << 5) | bl];
                }
        double acc = 0;
        int cut = b->lo[ax];
        for (int v = b->lo[ax]; v < b->hi[ax]; v++) {
            acc += slice[v];
            cut = v;
            if (acc >= 0.5 * b->count) break;
        }
        mc_box upper = *b;
        b->hi[ax] = cut;
        upper.lo[ax] = cut + 1;
        box_shrink(hist, b);
        box_shrink(hist, &upper);
        b->count = box_count(hist, b);
        upper.count = box_count(hist, &upper);
        box[nb++] = upper;
    }
    pal->n = nb;
    for (int i = 0; i < nb; i++) {
        double s[3] = {0, 0, 0};
        for (int r = box[i].lo[0]; r <= box[i].hi[0]; r++)
            for (int g = box[i].lo[1]; g <= box[i].hi[1]; g++)
                for (int bl = box[i].lo[2]; bl <= box[i].hi[2]; bl++)
                    for (int k = 0; k < 3; k++)
                        s[k] += sum[(r << 10) | (g << 5) | bl][k];
        for (int k = 0; k < 3; k++)
            pal->rgb[i][k] = (unsigned char)(s[k] / box[i].count + 0.5);
    }
}

/* Choose the palette from up to 16 frames spread over the animation. */
static mlc_status choose_palette(const mlc_anim_spec *sp, mlc_anim_source src, void *ctx,
                                 unsigned char *rgb, cmap *seen, gif_palette *pal, int *exact,
                                 mlc_err *err) {
    size_t npx = (size_t)sp->w * sp->h;
    int nsample = MLC_MIN(sp->nframes, 16);
    double *hist = mlc_calloc(32768, sizeof *hist);
    double(*sum)[3] = mlc_calloc(32768, sizeof *sum);
    if (!hist || !sum) {
        mlc_free(hist);
        mlc_free(sum);
        return mlc_errf(err, MLC_ENOMEM, "out of memory choosing a GIF palette");
    }
    memset(seen, 0, sizeof *seen);
    int distinct_ok = 1; /* every colour seen so far fits the palette as it is */
    mlc_status s = MLC_OK;
    for (int q = 0; q < nsample && s == MLC_OK; q++) {
        int k = nsample == 1 ? 0 : (int)((long)q * (sp->nframes - 1) / (nsample - 1));
        if ((s = src(ctx, k, rgb, err)) != MLC_OK) break;
        for (size_t i = 0; i < npx; i++) {
            const unsigned char *p = rgb + 3 * i;
            int bin = (p[0] >> 3) << 10 | (p[1] >> 3) << 5 | p[2] >> 3;
            hist[bin] += 1;
            for (int c = 0; c < 3; c++)
                sum[bin][c] += p[c];
            if (!distinct_ok) continue;
            uint32_t c = rgb24(p);
            unsigned h = cmap_slot(seen, c);
            if (seen->key[h]) continue;
            if (seen->n == 255) {
                distinct_ok = 0;
                continue;
            }
            seen->key[h] = c + 1;
            memcpy(pal->rgb[seen->n], p, 3);
            seen->n++;
        }
    }
    if (s == MLC_OK) {
        if (distinct_ok) {
            pal->n = (int)seen->n;
        } else {
            median_cut(hist, (const double(*)[3])sum, pal);
        }
        *exact = distinct_ok;
    }
    mlc_free(hist);
    mlc_free(sum);
    return s;
}

/* The palette index of colour p: the nearest entry, cached. */
static uint8_t map_colour(cmap *cache, const gif_palette *pal, const unsigned char *p) {
    uint32_t c = rgb24(p);
    unsigned h = cmap_slot(cache, c);
    if (cache->key[h]) return cache->val[h];
    long best = -1;
    int bi = 0;
    for (int i = 0; i < pal->n; i++) {
        long d = 0;
        for (int k = 0; k < 3; k++) {
            long e = (long)p[k] - pal->rgb[i][k];
            d += e * e;
        }
        if (best < 0 || d < best) best = d, bi = i;
    }
    if (cache->n >= CMAP_SIZE / 2) { /* keep the probes short: start afresh */
        memset(cache->key, 0, sizeof cache->key);
        cache->n = 0;
        h = cmap_slot(cache, c);
    }
    cache->key[h] = c + 1;
    cache->val[h] = (uint8_t)bi;
    cache->n++;
    return (uint8_t)bi;
}

/* ==== GIF: LZW ================================================================================ */

/* Variable-width codes packed least significant bit first, cut into sub-blocks of at most 255
 * bytes. Codes grow from min_size + 1 bits as the decoder's table grows (the decoder adds an
 * entry one code later than the encoder, so the width follows the encoder's count minus one);
 * a clear code restarts the table when it holds 4096 entries. */
typedef struct lzw {
    mlc_afile *af;
    unsigned char block[256]; /* [0] = length of the sub-block being filled */
    uint32_t bits;
    int nbits;
    int32_t key[8192]; /* (prefix << 8 | byte), -1 = empty */
    uint16_t code[8192];
} lzw;

static mlc_status lzw_flush_block(lzw *z, mlc_err *err) {
    mlc_status s = MLC_OK;
    if (z->block[0]) s = put(z->af, z->block, (size_t)z->block[0] + 1, err);
    z->block[0] = 0;
    return s;
}

static mlc_status lzw_emit(lzw *z, unsigned code, int width, mlc_err *err) {
    z->bits |= (uint32_t)code << z->nbits;
    z->nbits += width;
    while (z->nbits >= 8) {
        z->block[1 + z->block[0]++] = (unsigned char)z->bits;
        z->bits >>= 8;
        z->nbits -= 8;
        if (z->block[0] == 255) {
            mlc_status s = lzw_flush_block(z, err);
            if (s != MLC_OK) return s;
        }
    }
    return MLC_OK;
}

static mlc_status lzw_encode(lzw *z, int min_size, const uint8_t *idx, size_t n, mlc_err *err) {
    const unsigned clear = 1u << min_size, eoi = clear + 1;
    unsigned next = eoi + 1;
    int width = min_size + 1;
    z->bits = 0, z->nbits = 0, z->block[0] = 0;
    memset(z->key, 0xff, sizeof z->key);
    mlc_status s = lzw_emit(z, clear, width, err);
    unsigned prefix = idx[0];
    for (size_t i = 1; i < n && s == MLC_OK; i++) {
        int32_t k = (int32_t)(prefix << 8 | idx[i]);
        unsigned h = ((uint32_t)k * 2654435761u) >> 19;
        while (z->key[h] != -1 && z->key[h] != k)
            h = (h + 1) & 8191;
        if (z->key[h] == k) {
            prefix = z->code[h];
            continue;
        }
        while (width < 12 && next - 1 >= (1u << width))
            width++;
        s = lzw_emit(z, prefix, width, err);
        if (next < 4096) {
            z->key[h] = k;
            z->code[h] = (uint16_t)next++;
        } else {
            while (width < 12 && next - 1 >= (1u << width))
                width++;
            if (s == MLC_OK) s = lzw_emit(z, clear, width, err);
            memset(z->key, 0xff, sizeof z->key);
            next = eoi + 1;
            width = min_size + 1;
        }
        prefix = idx[i];
    }
    while (width < 12 && next - 1 >= (1u << width))
        width++;
    if (s == MLC_OK) s = lzw_emit(z, prefix, width, err);
    /* The decoder adds an entry for that code too before reading the end code. */
    if (next < 4096) next++;
    while (width < 12 && next - 1 >= (1u << width))
        width++;
    if (s == MLC_OK) s = lzw_emit(z, eoi, width, err);
    if (s == MLC_OK && z->nbits > 0) s = lzw_emit(z, 0, 8 - z->nbits, err);
    if (s == MLC_OK) s = lzw_flush_block(z, err);
    static const unsigned char terminator = 0;
    if (s == MLC_OK) s = put(z->af, &terminator, 1, err);
    return s;
}

/* ==== GIF: file =============================================================================== */

static void le16(unsigned char *p, unsigned v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

mlc_status mlc_gif_write(const char *path, const mlc_anim_spec *sp, mlc_anim_source src, void *ctx,
                         mlc_anim_info *info, mlc_err *err) {
    mlc_status s = check_spec(sp, err);
    if (s != MLC_OK) return s;
    size_t npx = (size_t)sp->w * sp->h;
    unsigned char *rgb = mlc_malloc(3 * npx);
    uint8_t *cur = mlc_malloc(npx), *prev = mlc_malloc(npx), *rect = mlc_malloc(npx);
    cmap *cache = mlc_malloc(sizeof *cache);
    lzw *z = mlc_malloc(sizeof *z);
    gif_palette *pal = mlc_calloc(1, sizeof *pal);
    mlc_afile af = {0};
    if (!rgb || !cur || !prev || !rect || !cache || !z || !pal) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory for a %d x %d GIF", sp->w, sp->h);
        goto done;
    }
    int exact = 0;
    if ((s = choose_palette(sp, src, ctx, rgb, cache, pal, &exact, err)) != MLC_OK) goto done;
    memset(cache, 0, sizeof *cache);
    const int transparent = pal->n; /* one past the colours */
    int bits = 1;
    while ((1 << bits) < pal->n + 1)
        bits++;
    const int min_size = MLC_MAX(2, bits);

    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) goto done;
    unsigned char head[13] = {'G', 'I', 'F', '8', '9', 'a'};
    le16(head + 6, (unsigned)sp->w);
    le16(head + 8, (unsigned)sp->h);
    head[10] = (unsigned char)(0x80 | (7 << 4) | (bits - 1)); /* global table, 8-bit colour */
    unsigned char table[3 * 256] = {0};
    memcpy(table, pal->rgb, 3 * (size_t)pal->n);
    /* NETSCAPE2.0: loop forever. */
    static const unsigned char loop[19] = {0x21, 0xFF, 11,  'N', 'E', 'T', 'S', 'C', 'A', 'P',
                                           'E',  '2',  '.', '0', 3,   1,   0,   0,   0};
    if ((s = put(&af, head, 13, err)) != MLC_OK ||
        (s = put(&af, table, 3 * ((size_t)1 << bits), err)) != MLC_OK ||
        (s = put(&af, loop, sizeof loop, err)) != MLC_OK)
        goto done;
    long shown_cs = 0; /* centiseconds of the frames written so far */
    for (int k = 0; k < sp->nframes; k++) {
        if ((s = src(ctx, k, rgb, err)) != MLC_OK) goto done;
        for (size_t i = 0; i < npx; i++)
            cur[i] = map_colour(cache, pal, rgb + 3 * i);
        int r[4] = {0, 0, sp->w, sp->h};
        int delta = k > 0;
        if (delta && !changed_rect(cur, prev, sp->w, sp->h, 1, r))
            r[0] = 0, r[1] = 0, r[2] = 1, r[3] = 1; /* nothing changed: one transparent pixel */
        size_t n = 0;
        for (int j = r[1]; j < r[1] + r[3]; j++)
            for (int i = r[0]; i < r[0] + r[2]; i++) {
                size_t p = (size_t)j * sp->w + i;
                rect[n++] = delta && cur[p] == prev[p] ? (uint8_t)transparent : cur[p];
            }
        double end = (double)(k + 1) / sp->fps + (k == sp->nframes - 1 ? sp->hold : 0);
        long end_cs = (long)(100 * end + 0.5);
        long delay = MLC_MIN(MLC_MAX(end_cs - shown_cs, 0), 65535);
        shown_cs += delay;
        unsigned char gce[8] = {0x21,
                                0xF9,
                                4,
                                (unsigned char)(1 << 2 | (delta ? 1 : 0)),
                                0,
                                0,
                                (unsigned char)transparent,
                                0};
        le16(gce + 4, (unsigned)delay);
        unsigned char desc[10] = {0x2C};
        le16(desc + 1, (unsigned)r[0]);
        le16(desc + 3, (unsigned)r[1]);
        le16(desc + 5, (unsigned)r[2]);
        le16(desc + 7, (unsigned)r[3]);
        unsigned char msize = (unsigned char)min_size;
        z->af = &af;
        if ((s = put(&af, gce, 8, err)) != MLC_OK || (s = put(&af, desc, 10, err)) != MLC_OK ||
            (s = put(&af, &msize, 1, err)) != MLC_OK ||
            (s = lzw_encode(z, min_size, rect, n, err)) != MLC_OK)
            goto done;
        uint8_t *t = prev;
        prev = cur, cur = t;
    }
    static const unsigned char trailer = 0x3B;
    if ((s = put(&af, &trailer, 1, err)) != MLC_OK) goto done;
    long bytes = ftell(af.fp);
    if ((s = mlc_afile_commit(&af, err)) != MLC_OK) goto done;
    if (info) {
        info->bytes = bytes > 0 ? (size_t)bytes : 0;
        info->ncolors = pal->n;
        info->exact = exact;
    }
done:
    mlc_afile_abort(&af);
    mlc_free(rgb);
    mlc_free(cur);
    mlc_free(prev);
    mlc_free(rect);
    mlc_free(cache);
    mlc_free(z);
    mlc_free(pal);
    return s;
}

/* ==== APNG ==================================================================================== */

static void be32(unsigned char *p, unsigned long v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Write one chunk through a scratch buffer grown as needed. */
static mlc_status put_chunk(mlc_afile *af, unsigned char **buf, size_t *cap, const char type[4],
                            const unsigned char *head, size_t nhead, const unsigned char *data,
                            size_t n, mlc_err *err) {
    size_t need = 12 + nhead + n;
    if (need > *cap) {
        unsigned char *b = mlc_realloc(*buf, need);
        if (!b) return mlc_errf(err, MLC_ENOMEM, "out of memory writing %s", af->path);
        *buf = b, *cap = need;
    }
    unsigned char *end = mlc_png_chunk(*buf, type, head, nhead, data, n);
    return put(af, *buf, (size_t)(end - *buf), err);
}

mlc_status mlc_apng_write(const char *path, const mlc_anim_spec *sp, mlc_anim_source src, void *ctx,
                          mlc_anim_info *info, mlc_err *err) {
    mlc_status s = check_spec(sp, err);
    if (s != MLC_OK) return s;
    size_t npx = (size_t)sp->w * sp->h;
    unsigned char *cur = mlc_malloc(3 * npx), *prev = mlc_malloc(3 * npx);
    unsigned char *buf = NULL, *zs = NULL;
    size_t cap = 0, zlen = 0;
    mlc_afile af = {0};
    if (!cur || !prev) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory for a %d x %d APNG", sp->w, sp->h);
        goto done;
    }
    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) goto done;
    unsigned char ihdr[13], actl[8];
    mlc_png_ihdr(ihdr, sp->w, sp->h);
    be32(actl, (unsigned long)sp->nframes);
    be32(actl + 4, 0); /* plays: forever */
    if ((s = put(&af, mlc_png_signature, 8, err)) != MLC_OK ||
        (s = put_chunk(&af, &buf, &cap, "IHDR", NULL, 0, ihdr, 13, err)) != MLC_OK ||
        (s = put_chunk(&af, &buf, &cap, "acTL", NULL, 0, actl, 8, err)) != MLC_OK)
        goto done;
    unsigned long seq = 0;
    for (int k = 0; k < sp->nframes; k++) {
        if ((s = src(ctx, k, cur, err)) != MLC_OK) goto done;
        int r[4] = {0, 0, sp->w, sp->h};
        if (k > 0 && !changed_rect(cur, prev, sp->w, sp->h, 3, r))
            r[0] = 0, r[1] = 0, r[2] = 1, r[3] = 1; /* nothing changed: redraw one pixel */
        unsigned char fctl[26];
        be32(fctl, seq++);
        be32(fctl + 4, (unsigned long)r[2]);
        be32(fctl + 8, (unsigned long)r[3]);
        be32(fctl + 12, (unsigned long)r[0]);
        be32(fctl + 16, (unsigned long)r[1]);
        long num = 1 + (k == sp->nframes - 1 ? (long)(sp->hold * sp->fps + 0.5) : 0);
        fctl[20] = (unsigned char)(num >> 8), fctl[21] = (unsigned char)num;
        fctl[22] = (unsigned char)(sp->fps >> 8), fctl[23] = (unsigned char)sp->fps;
        fctl[24] = 0; /* dispose: none */
        fctl[25] = 0; /* blend: source */
        if ((s = put_chunk(&af, &buf, &cap, "fcTL", NULL, 0, fctl, 26, err)) != MLC_OK) goto done;
        mlc_free(zs);
        zs = NULL;
        const unsigned char *origin = cur + 3 * ((size_t)r[1] * sp->w + r[0]);
        if ((s = mlc_png_deflate_rows(origin, 3 * (size_t)sp->w, r[2], r[3], Z_DEFAULT_COMPRESSION,
                                      &zs, &zlen, err)) != MLC_OK)
            goto done;
        if (k == 0) {
            s = put_chunk(&af, &buf, &cap, "IDAT", NULL, 0, zs, zlen, err);
        } else {
            unsigned char sq[4];
            be32(sq, seq++);
            s = put_chunk(&af, &buf, &cap, "fdAT", sq, 4, zs, zlen, err);
        }
        if (s != MLC_OK) goto done;
        unsigned char *t = prev;
        prev = cur, cur = t;
    }
    if ((s = put_chunk(&af, &buf, &cap, "IEND", NULL, 0, NULL, 0, err)) != MLC_OK) goto done;
    long bytes = ftell(af.fp);
    if ((s = mlc_afile_commit(&af, err)) != MLC_OK) goto done;
    if (info) {
        memset(info, 0, sizeof *info);
        info->bytes = bytes > 0 ? (size_t)bytes : 0;
    }
done:
    mlc_afile_abort(&af);
    mlc_free(cur);
    mlc_free(prev);
    mlc_free(buf);
    mlc_free(zs);
    return s;
}

/* ==== Video through ffmpeg ==================================================================== */

int mlc_video_find(const char *name, char *buf, size_t cap) {
    char cand[4096];
    struct stat st;
    if (strchr(name, '/')) {
        if (stat(name, &st) != 0 || !S_ISREG(st.st_mode) || access(name, X_OK) != 0 ||
            strlen(name) >= cap)
            return 0;
        snprintf(buf, cap, "%s", name);
        return 1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        /* An empty entry is the current directory. */
        int n = len ? snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, name)
                    : snprintf(cand, sizeof cand, "./%s", name);
        if (n > 0 && (size_t)n < sizeof cand && (size_t)n < cap && stat(cand, &st) == 0 &&
            S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            memcpy(buf, cand, (size_t)n + 1);
            return 1;
        }
        if (!e) break;
        p = e;
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m) return 0;
    for (size_t i = 0; i < m; i++)
        if ((s[n - m + i] | 0x20) != suffix[i]) return 0;
    return 1;
}

/* Write all n bytes to fd; 0 on success, else errno. */
static int write_all(int fd, const unsigned char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += w, n -= (size_t)w;
    }
    return 0;
}

mlc_status mlc_video_write(const char *path, const char *program, const mlc_anim_spec *sp,
                           mlc_anim_source src, void *ctx, mlc_anim_info *info, mlc_err *err) {
    mlc_status s = check_spec(sp, err);
    if (s != MLC_OK) return s;
    if (sp->w % 2 || sp->h % 2)
        return mlc_errf(err, MLC_EINVAL,
                        "a video needs an even width and height (its colours are stored at "
                        "half resolution); %d x %d is not",
                        sp->w, sp->h);
    int webm = ends_with(path, ".webm");
    size_t npx = (size_t)sp->w * sp->h;
    unsigned char *rgb = mlc_malloc(3 * npx);
    if (!rgb) return mlc_errf(err, MLC_ENOMEM, "out of memory for a %d x %d video", sp->w, sp->h);
    /* The atomic file's temporary name is where ffmpeg writes; the commit renames it. */
    mlc_afile af = {0};
    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) {
        mlc_free(rgb);
        return s;
    }
    char size[32], rate[16];
    snprintf(size, sizeof size, "%dx%d", sp->w, sp->h);
    snprintf(rate, sizeof rate, "%d", sp->fps);
    /* posix_spawn takes non-const strings; the program's path is copied to give it one. */
    char prog[4096];
    snprintf(prog, sizeof prog, "%s", program);
    char *argv_mp4[] = {
        prog,       "-hide_banner", "-loglevel",  "error",   "-nostats",   "-y",   "-f", "rawvideo",
        "-pix_fmt", "rgb24",        "-s",         size,      "-framerate", rate,   "-i", "pipe:0",
        "-an",      "-c:v",         "libx264",    "-preset", "medium",     "-crf", "20", "-pix_fmt",
        "yuv420p",  "-movflags",    "+faststart", "-f",      "mp4",        af.tmp, NULL};
    char *argv_webm[] = {
        prog,       "-hide_banner", "-loglevel",  "error", "-nostats",   "-y",   "-f", "rawvideo",
        "-pix_fmt", "rgb24",        "-s",         size,    "-framerate", rate,   "-i", "pipe:0",
        "-an",      "-c:v",         "libvpx-vp9", "-crf",  "32",         "-b:v", "0",  "-pix_fmt",
        "yuv420p",  "-f",           "webm",       af.tmp,  NULL};
    int fds[2] = {-1, -1};
    pid_t pid = -1;
    int rc = pipe(fds);
    if (rc != 0) {
        s = mlc_errf(err, MLC_ETOOL, "cannot make a pipe to %s: %s", program, strerror(errno));
        goto done;
    }
    /* The parent's end must not leak into the child, or ffmpeg would never see the end of
     * its input. */
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    if ((rc = posix_spawn_file_actions_init(&fa)) == 0) {
        rc = posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
        if (!rc) rc = posix_spawn_file_actions_addclose(&fa, fds[0]);
        if (!rc) rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        if (!rc) rc = posix_spawn(&pid, prog, &fa, NULL, webm ? argv_webm : argv_mp4, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(fds[0]);
    if (rc != 0) {
        close(fds[1]);
        s = mlc_errf(err, MLC_ETOOL, "cannot start %s: %s", program, strerror(rc));
        goto done;
    }
    /* A reader that goes away must give EPIPE here, not kill the program. */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    int werr = 0;
    for (int k = 0; k < sp->nframes && s == MLC_OK && !werr; k++)
        if ((s = src(ctx, k, rgb, err)) == MLC_OK) werr = write_all(fds[1], rgb, 3 * npx);
    close(fds[1]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGPIPE, &old, NULL);
    if (s != MLC_OK) goto done;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char how[64];
        if (WIFEXITED(status))
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
        else
            snprintf(how, sizeof how, "signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        s = mlc_errf(err, MLC_ETOOL,
                     "%s failed (%s) encoding %s with %s%s; its messages are above; --gif or "
                     "--apng need no ffmpeg",
                     program, how, path, webm ? "libvpx-vp9" : "libx264",
                     werr ? ", after it stopped reading the frames" : "");
        goto done;
    }
    if (werr) {
        s = mlc_errf(err, MLC_ETOOL, "%s stopped reading the frames: %s", program, strerror(werr));
        goto done;
    }
    struct stat st;
    size_t bytes = stat(af.tmp, &st) == 0 ? (size_t)st.st_size : 0;
    if ((s = mlc_afile_commit(&af, err)) != MLC_OK) goto done;
    if (info) {
        memset(info, 0, sizeof *info);
        info->bytes = bytes;
    }
done:
    mlc_afile_abort(&af);
    mlc_free(rgb);
    return s;
}
