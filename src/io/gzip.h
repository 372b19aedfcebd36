/* gzip.h: reading gzip-compressed input files (a name ending in ".gz") through zlib.
 *
 * The mesh readers go through mlc_gz_read_all when the file name says it is compressed, so
 * every supported format can be given as NAME.EXT.gz and is parsed from the decompressed bytes
 * exactly as the plain file would be (same line numbers in messages, same checksum). */
#ifndef MODALLOCO_GZIP_H
#define MODALLOCO_GZIP_H

#include "base.h"

#include <stddef.h>

/* 1 when `path` ends in ".gz" (any case) and has something before it, else 0. */
int mlc_gz_name(const char *path);

/* Decompress the gzip data in[0..n) (one or more gzip members, as gzip(1) writes them; zero
 * bytes of padding after the last member are allowed) into a fresh buffer (*out,
 * NUL-terminated, *size bytes without the NUL, owned, mlc_free). At most `max_bytes` are
 * produced: the buffer grows by doubling and every growth is checked against the limit before
 * it is allocated. `path` only names the file in messages. Errors, each naming the file:
 * MLC_EPARSE "not a gzip file", "corrupt gzip data" (a bad header, block or checksum, with the
 * compressed byte offset) or "truncated gzip file" (the data ends inside a member), and
 * "data after the end of the compressed stream"; MLC_EINVAL when the content is larger than
 * `max_bytes` (`what` completes that message with the fix); MLC_ENOMEM. */
mlc_status mlc_gz_inflate(const char *path, const unsigned char *in, size_t n, size_t max_bytes,
                          const char *what, char **out, size_t *size, mlc_err *err);

/* mlc_file_read_all for a compressed file: read PATH whole (at most `max_bytes` compressed) and
 * decompress it with mlc_gz_inflate (at most `max_bytes` decompressed). Same ownership and
 * errors as those two. */
mlc_status mlc_gz_read_all(const char *path, size_t max_bytes, const char *what, char **buf,
                           size_t *size, mlc_err *err);

#endif
