/* gzip.c: whole-buffer gzip decompression with zlib's inflate, for compressed input files.
 *
 * We decompress in memory rather than through gzopen/gzread so that the limits are ours: the
 * output grows by doubling from an estimate, each size is checked against the caller's limit
 * before it is allocated, and a damaged file is reported with its own kind of message (not a
 * gzip file, corrupt data, truncated) instead of a parse error deep in the decompressed text. */
#include "gzip.h"

#include <limits.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

int mlc_gz_name(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n > 3 && strcasecmp(path + n - 3, ".gz") == 0;
}

/* zlib's own allocations go through ours, so failure injection and the live-block count cover
 * them too. */
static voidpf gz_alloc(voidpf opaque, uInt items, uInt size) {
    (void)opaque;
    return mlc_calloc(items, size);
}

static void gz_free(voidpf opaque, voidpf p) {
    (void)opaque;
    mlc_free(p);
}

static mlc_status too_large(const char *path, size_t max_bytes, const char *what, mlc_err *err) {
    return mlc_errf(err, MLC_EINVAL,
                    "%s: decompresses to more than %zu bytes, the largest file supported (%s)",
                    path, max_bytes, what ? what : "is it the right file?");
}

mlc_status mlc_gz_inflate(const char *path, const unsigned char *in, size_t n, size_t max_bytes,
                          const char *what, char **out, size_t *size, mlc_err *err) {
    *out = NULL;
    *size = 0;
    if (n < 2 || in[0] != 0x1f || in[1] != 0x8b)
        return mlc_errf(err, MLC_EPARSE,
                        "%s: not a gzip file (the name ends in .gz but the data does not start "
                        "with the gzip signature); decompress it or rename it",
                        path);
    /* First guess: the size the last member records in its trailer (modulo 2^32, so only a
     * hint), bounded by deflate's largest ratio (about 1032:1) and by the limit. */
    size_t cap = 1 << 16;
    if (n >= 18) {
        const unsigned char *t = in + n - 4;
        size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
        size_t ratio = n <= SIZE_MAX / 1032 ? n * 1032 : SIZE_MAX;
        if (isize > cap) cap = isize < ratio ? isize : ratio;
    }
    if (cap > max_bytes) cap = max_bytes;
    char *buf = mlc_malloc(cap + 1);
    if (!buf) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory decompressing", path);

    z_stream z;
    memset(&z, 0, sizeof z);
    z.zalloc = gz_alloc;
    z.zfree = gz_free;
    /* 16 + MAX_WBITS: gzip wrapper only (a raw zlib stream is not a .gz file). */
    int zs = inflateInit2(&z, 16 + MAX_WBITS);
    if (zs != Z_OK) {
        mlc_free(buf);
        return mlc_errf(err, zs == Z_MEM_ERROR ? MLC_ENOMEM : MLC_EPARSE,
                        "%s: cannot start decompressing (zlib: %s)", path, zError(zs));
    }
    size_t used = 0, consumed = 0;
    mlc_status st = MLC_OK;
    for (;;) {
        if (used == cap) {
            if (cap >= max_bytes) {
                st = too_large(path, max_bytes, what, err);
                break;
            }
            size_t next = cap <= max_bytes / 2 ? 2 * cap : max_bytes;
            char *b = mlc_realloc(buf, next + 1);
            if (!b) {
                st = mlc_errf(err, MLC_ENOMEM, "%s: out of memory decompressing %zu bytes", path,
                              next);
                break;
            }
            buf = b;
            cap = next;
        }
        /* zlib counts in uInt; feed and drain in pieces below 4 GiB. */
        size_t in_left = n - consumed, out_left = cap - used;
        z.next_in = (Bytef *)(uintptr_t)(in + consumed);
        z.avail_in = (uInt)(in_left < UINT_MAX ? in_left : UINT_MAX);
        z.next_out = (Bytef *)buf + used;
        z.avail_out = (uInt)(out_left < UINT_MAX ? out_left : UINT_MAX);
        uInt avail_in = z.avail_in, avail_out = z.avail_out;
        zs = inflate(&z, Z_NO_FLUSH);
        consumed += avail_in - z.avail_in;
        used += avail_out - z.avail_out;
        if (zs == Z_STREAM_END) {
            /* gzip(1) concatenates members (`cat a.gz b.gz`); tar-like tools pad with zeros. */
            size_t k = consumed;
            while (k < n && in[k] == 0)
                k++;
            if (k == n) break;
            if (n - consumed >= 2 && in[consumed] == 0x1f && in[consumed + 1] == 0x8b) {
                inflateReset(&z);
                continue;
            }
            st = mlc_errf(err, MLC_EPARSE,
                          "%s: data after the end of the compressed stream (at compressed byte "
                          "%zu of %zu); the file is damaged",
                          path, consumed, n);
            break;
        }
        if (zs == Z_OK) continue;
        if (zs == Z_BUF_ERROR && z.avail_out == 0) continue; /* output full: grow */
        if (zs == Z_BUF_ERROR && consumed == n) {
            st = mlc_errf(err, MLC_EPARSE,
                          "%s: truncated gzip file (the compressed data ends after %zu bytes, "
                          "inside a member, %zu bytes decompressed); the file was cut short, "
                          "fetch or compress it again",
                          path, n, used);
            break;
        }
        if (zs == Z_MEM_ERROR) {
            st = mlc_errf(err, MLC_ENOMEM, "%s: out of memory decompressing", path);
            break;
        }
        st = mlc_errf(err, MLC_EPARSE,
                      "%s: corrupt gzip data near compressed byte %zu (zlib: %s); the file is "
                      "damaged, fetch or compress it again",
                      path, consumed, z.msg ? z.msg : zError(zs));
        break;
    }
    inflateEnd(&z);
    if (st != MLC_OK) {
        mlc_free(buf);
        return st;
    }
    buf[used] = '\0';
    *out = buf;
    *size = used;
    return MLC_OK;
}

mlc_status mlc_gz_read_all(const char *path, size_t max_bytes, const char *what, char **buf,
                           size_t *size, mlc_err *err) {
    char *raw = NULL;
    size_t n = 0;
    mlc_status st = mlc_file_read_all(path, max_bytes, what, &raw, &n, err);
    if (st != MLC_OK) return st;
    st = mlc_gz_inflate(path, (const unsigned char *)raw, n, max_bytes, what, buf, size, err);
    mlc_free(raw);
    return st;
}
