/* ply_binary.h: the binary layer of the PLY reader (mesh_surface.c): the header's scalar type
 * names and a bounded cursor that decodes values of those types, little- or big-endian, from
 * the body of a binary_little_endian / binary_big_endian PLY file (what Blender, MeshLab and
 * most scanners write). Not part of the public API. */
#ifndef MODALLOCO_PLY_BINARY_H
#define MODALLOCO_PLY_BINARY_H

#include "base.h"

#include <stddef.h>

/* The PLY scalar types; MLC__PLY_NONE (0) for a name that is none of them. */
typedef enum mlc__ply_type {
    MLC__PLY_NONE = 0,
    MLC__PLY_INT8,
    MLC__PLY_UINT8,
    MLC__PLY_INT16,
    MLC__PLY_UINT16,
    MLC__PLY_INT32,
    MLC__PLY_UINT32,
    MLC__PLY_FLOAT32,
    MLC__PLY_FLOAT64
} mlc__ply_type;

/* The type a header word names: char/int8, uchar/uint8, short/int16, ushort/uint16, int/int32,
 * uint/uint32, float/float32, double/float64 (s: n bytes, not NUL-terminated). */
mlc__ply_type mlc__ply_type_named(const char *s, size_t n);
/* Bytes of one value of type t (1, 2, 4 or 8; 0 for MLC__PLY_NONE). */
int mlc__ply_type_size(mlc__ply_type t);
/* Nonzero for the integer types. */
int mlc__ply_type_is_integer(mlc__ply_type t);

/* A cursor over the binary body [begin + offset, end) of a PLY file. `begin` is the start of
 * the file, so messages give byte offsets a hex viewer shows. Never reads outside [p, end). */
typedef struct mlc__ply_bin {
    const unsigned char *begin, *p, *end;
    int big_endian;
    const char *path; /* for messages */
} mlc__ply_bin;

/* Decode the next value of type t (not MLC__PLY_NONE) into *out (exact for every type: all fit
 * in a double) and advance. `what` ("a vertex coordinate") and `element`, `item` (the element's
 * name and the 0-based index of the item being read) name it in the message when the file ends
 * first: MLC_EPARSE "path:byte N: expected WHAT of ELEMENT I (TYPE), found the end of the file
 * ...". Non-finite floats are returned as they are; the caller decides. */
mlc_status mlc__ply_bin_value(mlc__ply_bin *b, mlc__ply_type t, const char *what,
                              const char *element, long long item, double *out, mlc_err *err);

/* Byte offset of the cursor from the start of the file. */
size_t mlc__ply_bin_offset(const mlc__ply_bin *b);

#endif
