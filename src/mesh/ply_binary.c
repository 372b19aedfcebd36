/* ply_binary.c: decoding the scalar values of a binary PLY body (ply_binary.h). A value is
 * assembled from its bytes in the file's byte order, so the reader works the same on hosts of
 * either endianness, and every read is checked against the end of the buffer first. */
#include "internal/ply_binary.h"

#include <stdint.h>
#include <string.h>

static const struct {
    const char *name, *alias;
    int size;
} types[] = {
    [MLC__PLY_NONE] = {"", "", 0},
    [MLC__PLY_INT8] = {"char", "int8", 1},
    [MLC__PLY_UINT8] = {"uchar", "uint8", 1},
    [MLC__PLY_INT16] = {"short", "int16", 2},
    [MLC__PLY_UINT16] = {"ushort", "uint16", 2},
    [MLC__PLY_INT32] = {"int", "int32", 4},
    [MLC__PLY_UINT32] = {"uint", "uint32", 4},
    [MLC__PLY_FLOAT32] = {"float", "float32", 4},
    [MLC__PLY_FLOAT64] = {"double", "float64", 8},
};

mlc__ply_type mlc__ply_type_named(const char *s, size_t n) {
    for (int t = MLC__PLY_INT8; t <= MLC__PLY_FLOAT64; t++)
        if ((strlen(types[t].name) == n && !memcmp(s, types[t].name, n)) ||
            (strlen(types[t].alias) == n && !memcmp(s, types[t].alias, n)))
            return (mlc__ply_type)t;
    return MLC__PLY_NONE;
}

int mlc__ply_type_size(mlc__ply_type t) {
    return t > MLC__PLY_NONE && t <= MLC__PLY_FLOAT64 ? types[t].size : 0;
}

int mlc__ply_type_is_integer(mlc__ply_type t) {
    return t >= MLC__PLY_INT8 && t <= MLC__PLY_UINT32;
}

size_t mlc__ply_bin_offset(const mlc__ply_bin *b) {
    return (size_t)(b->p - b->begin);
}

mlc_status mlc__ply_bin_value(mlc__ply_bin *b, mlc__ply_type t, const char *what,
                              const char *element, long long item, double *out, mlc_err *err) {
    const int size = mlc__ply_type_size(t);
    if (size == 0 || (size_t)(b->end - b->p) < (size_t)size)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:byte %zu: expected %s in element %s, item %lld (%s, %d bytes), found "
                        "the end of the file; the file is truncated or its header's counts are "
                        "wrong: export it again",
                        b->path, mlc__ply_bin_offset(b), what, element, item, types[t].name, size);
    /* The bytes as an unsigned integer, most significant first. */
    uint64_t u = 0;
    for (int i = 0; i < size; i++)
        u = u << 8 | b->p[b->big_endian ? i : size - 1 - i];
    b->p += size;
    switch (t) {
    case MLC__PLY_INT8:
        *out = (double)(int8_t)(uint8_t)u;
        break;
    case MLC__PLY_INT16:
        *out = (double)(int16_t)(uint16_t)u;
        break;
    case MLC__PLY_INT32:
        *out = (double)(int32_t)(uint32_t)u;
        break;
    case MLC__PLY_FLOAT32: {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, sizeof f);
        *out = (double)f;
        break;
    }
    case MLC__PLY_FLOAT64:
        memcpy(out, &u, sizeof *out);
        break;
    default: /* the unsigned types */
        *out = (double)u;
        break;
    }
    return MLC_OK;
}
