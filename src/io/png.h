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

/* Encode 8-bit RGB rows (3·w·h bytes, top to bottom) as a PNG in memory: signature, IHDR,
 * IDAT chunks of at most 64 KiB holding one zlib stream (mlc_png_deflate_rows at `level`),
 * IEND. *png (owned, mlc_free) and *len receive the file. w, h in 1..65535. */
mlc_status mlc_png_encode(const unsigned char *rgb, int w, int h, int level, unsigned char **png,
                          size_t *len, mlc_err *err);
/* Encode (zlib's default level) and write atomically to `path` (MLC_EIO naming the path on
 * failure). */
mlc_status mlc_png_write(const char *path, const unsigned char *rgb, int w, int h, mlc_err *err);

#endif
