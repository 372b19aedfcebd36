/* png_parts.h: the pieces of a PNG file that the still encoder (png.c) and the animated one
 * (anim.c) both write. Private to src/io. */
#ifndef MODALLOCO_PNG_PARTS_H
#define MODALLOCO_PNG_PARTS_H

#include <stddef.h>

#include "base.h"

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

#endif
