/* png.h: the PNG encoder (8-bit RGB, no interlace) and the pieces an animated PNG shares with
 * it (anim.c): chunk framing with its CRC, the header fields, and the filtered, deflated rows
 * of a rectangle of pixels. zlib compresses the rows and computes the CRCs.
 *
 * Pixels are 8-bit RGB, 3 bytes per pixel, rows top to bottom.
 */
#ifndef MODALLOCO_PNG_H
#define MODALLOCO_PNG_H

#include <stddef.h>

#include "base.h"

/* The 8-byte signature every PNG file starts with. */
extern const unsigned char mlc_png_signature[8];

/* Write one chunk at `at`: 4-byte big-endian length (nhead + n), the type, `head` (nhead bytes,
 * may be NULL when 0: e.g. the sequence number that starts an fdAT chunk) followed by `data`
 * (n bytes), then the CRC-32 of type, head and data. Needs 12 + nhead + n bytes at `at`;
 * returns the end of the chunk. */
unsigned char *mlc_png_chunk(unsigned char *at, const char type[4], const unsigned char *head,
                             size_t nhead, const unsigned char *data, size_t n);

/* The 13 bytes of IHDR for a w×h image, 8-bit RGB, deflate, adaptive filters, no interlace. */
void mlc_png_ihdr(unsigned char ihdr[13], int w, int h);

/* The zlib stream of a w×h rectangle of pixels whose rows start `stride` bytes apart (3·w for a
 * whole image): filter type 1 "Sub" on every row, compress2 at `level` (0 stores, 1..9
 * compress, -1 is zlib's default). *z (owned, mlc_free) and *zlen receive the stream.
 * MLC_EINVAL for a zlib failure or a level out of range, MLC_ENOMEM. */
mlc_status mlc_png_deflate_rows(const unsigned char *rgb, size_t stride, int w, int h, int level,
                                unsigned char **z, size_t *zlen, mlc_err *err);

/* Encode 8-bit RGB rows (3·w·h bytes, top to bottom) as a PNG in memory: signature, IHDR,
 * IDAT chunks of at most 64 KiB holding one zlib stream (mlc_png_deflate_rows at `level`),
 * IEND. *png (owned, mlc_free) and *len receive the file. w, h in 1..65535. */
mlc_status mlc_png_encode(const unsigned char *rgb, int w, int h, int level, unsigned char **png,
                          size_t *len, mlc_err *err);
/* Encode (zlib's default level) and write atomically to `path` (MLC_EIO naming the path on
 * failure). */
mlc_status mlc_png_write(const char *path, const unsigned char *rgb, int w, int h, mlc_err *err);

#endif
