/* png.c: the PNG encoder: the chunks written here, the compressed stream and the CRCs from
 * zlib. See png.h. */
#include "png.h"
#include "internal/png_parts.h"

#include <string.h>
#include <zlib.h>

#include "output.h"

const unsigned char mlc_png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

static void put_be32(unsigned char *p, unsigned long v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

unsigned char *mlc_png_chunk(unsigned char *at, const char type[4], const unsigned char *head,
                             size_t nhead, const unsigned char *data, size_t n) {
    put_be32(at, (unsigned long)(nhead + n));
    memcpy(at + 4, type, 4);
    if (nhead) memcpy(at + 8, head, nhead);
    if (n) memcpy(at + 8 + nhead, data, n);
    /* The CRC covers the type and the data, not the length. */
    uLong crc = crc32(crc32(0, Z_NULL, 0), (const Bytef *)at + 4, (uInt)(4 + nhead + n));
    put_be32(at + 8 + nhead + n, crc);
    return at + 12 + nhead + n;
}

void mlc_png_ihdr(unsigned char ihdr[13], int w, int h) {
    put_be32(ihdr, (unsigned long)w);
    put_be32(ihdr + 4, (unsigned long)h);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* compression: deflate */
    ihdr[11] = 0; /* filter method: adaptive */
    ihdr[12] = 0; /* no interlace */
}

mlc_status mlc_png_deflate_rows(const unsigned char *rgb, size_t stride, int w, int h, int level,
                                unsigned char **z, size_t *zlen, mlc_err *err) {
    *z = NULL;
    *zlen = 0;
    if (level < -1 || level > 9)
        return mlc_errf(err, MLC_EINVAL, "PNG compression level %d out of range (-1..9)", level);
    size_t row = 3 * (size_t)w + 1;
    size_t rawlen = row * (size_t)h;
    uLong zcap = compressBound((uLong)rawlen);
    unsigned char *raw = mlc_malloc(rawlen);
    unsigned char *out = mlc_malloc(zcap);
    if (!raw || !out) {
        mlc_free(raw);
        mlc_free(out);
        return mlc_errf(err, MLC_ENOMEM, "out of memory encoding a PNG");
    }
    /* Filter "Sub" (each byte minus the one a pixel to the left): flat areas become zeros,
     * which LZ77 turns into long cheap matches. */
    for (int j = 0; j < h; j++) {
        unsigned char *r = raw + (size_t)j * row;
        const unsigned char *s = rgb + (size_t)j * stride;
        r[0] = 1;
        for (size_t x = 0; x < 3 * (size_t)w; x++)
            r[1 + x] = (unsigned char)(s[x] - (x >= 3 ? s[x - 3] : 0));
    }
    uLongf n = zcap;
    int zs = compress2(out, &n, raw, (uLong)rawlen, level);
    mlc_free(raw);
    if (zs != Z_OK) {
        mlc_free(out);
        return mlc_errf(err, zs == Z_MEM_ERROR ? MLC_ENOMEM : MLC_EINVAL,
                        "zlib could not compress a PNG (%s)", zError(zs));
    }
    *z = out;
    *zlen = (size_t)n;
    return MLC_OK;
}

mlc_status mlc_png_encode(const unsigned char *rgb, int w, int h, int level, unsigned char **png,
                          size_t *len, mlc_err *err) {
    *png = NULL;
    *len = 0;
    if (w < 1 || h < 1 || w > 65535 || h > 65535)
        return mlc_errf(err, MLC_EINVAL, "PNG size %d x %d out of range", w, h);
    unsigned char *z;
    size_t zlen;
    mlc_status s = mlc_png_deflate_rows(rgb, 3 * (size_t)w, w, h, level, &z, &zlen, err);
    if (s != MLC_OK) return s;
    size_t nidat = (zlen + 65535) / 65536;
    size_t outlen = 8 + (12 + 13) + 12 * nidat + zlen + 12;
    unsigned char *out = mlc_malloc(outlen);
    if (!out) {
        mlc_free(z);
        return mlc_errf(err, MLC_ENOMEM, "out of memory encoding a PNG");
    }
    memcpy(out, mlc_png_signature, 8);
    unsigned char ihdr[13];
    mlc_png_ihdr(ihdr, w, h);
    unsigned char *at = mlc_png_chunk(out + 8, "IHDR", NULL, 0, ihdr, sizeof ihdr);
    for (size_t off = 0; off < zlen; off += 65536)
        at = mlc_png_chunk(at, "IDAT", NULL, 0, z + off, MLC_MIN((size_t)65536, zlen - off));
    at = mlc_png_chunk(at, "IEND", NULL, 0, NULL, 0);
    mlc_free(z);
    *png = out;
    *len = (size_t)(at - out);
    return MLC_OK;
}

mlc_status mlc_png_write(const char *path, const unsigned char *rgb, int w, int h, mlc_err *err) {
    unsigned char *png;
    size_t len;
    mlc_status s = mlc_png_encode(rgb, w, h, Z_DEFAULT_COMPRESSION, &png, &len, err);
    if (s != MLC_OK) return s;
    mlc_afile af = {0};
    if ((s = mlc_afile_open(&af, path, err)) == MLC_OK) {
        if (fwrite(png, 1, len, af.fp) != len) {
            mlc_afile_abort(&af);
            s = mlc_errf(err, MLC_EIO, "%s: write failed", path);
        } else {
            s = mlc_afile_commit(&af, err);
        }
    }
    mlc_free(png);
    return s;
}
