/* number_text.h: numbers as the text writers print them, formatted once and shared.
 *
 * A job writes one mesh's coordinates into many text files (surface.obj, a PLY per skinning
 * weight, the labels, subspace.vtk), and printf's "%.15g" is most of what those files cost.
 * An mlc_number_text holds the text of n tuples of `dim` doubles, each number printed as
 * "%.15g" and the tuple's numbers separated by one space, exactly what fprintf(fp, "%.15g
 * %.15g %.15g", ...) prints; the writers of output.h copy it instead of formatting again, so
 * their bytes do not change.
 *
 * Tuple i's text starts at text + i * stride and is len[i] characters long (no separator, no
 * NUL counted). Filling is split by ranges so that a caller with threads (this module has
 * none) can fill disjoint ranges side by side; the text is then read-only.
 */
#ifndef MODALLOCO_NUMBER_TEXT_H
#define MODALLOCO_NUMBER_TEXT_H

#include <stddef.h>

#include "base.h"

/* Longest "%.15g" of a double: sign, 15 digits, point, "e-308" (22), rounded up. */
#define MLC_G15_MAX 24

typedef struct mlc_number_text {
    char *text;          /* n * stride characters (owned) */
    unsigned short *len; /* n lengths (owned) */
    size_t stride;       /* dim * (MLC_G15_MAX + 1) + 1 */
    int n, dim;
} mlc_number_text;

/* Allocate the text of n tuples of dim (1..8) numbers; MLC_ENOMEM or MLC_EINVAL on failure,
 * with t zeroed. Fill every tuple before a writer reads it. */
mlc_status mlc_number_text_alloc(mlc_number_text *t, int n, int dim, mlc_err *err);
/* Format tuples [lo, hi) of X (n × dim, row-major: tuple i is X[i*dim .. i*dim + dim)). */
void mlc_number_text_fill(mlc_number_text *t, const double *X, int lo, int hi);
/* Allocate and fill all n tuples on the calling thread. */
mlc_status mlc_number_text_build(mlc_number_text *t, const double *X, int n, int dim, mlc_err *err);
void mlc_number_text_free(mlc_number_text *t);

/* Tuple i's text and its length. */
static inline const char *mlc_number_text_at(const mlc_number_text *t, int i, size_t *len) {
    *len = t->len[i];
    return t->text + (size_t)i * t->stride;
}

/* v as printf's "%.15g" prints it, at p (MLC_G15_MAX + 1 bytes of room, the NUL included);
 * returns the length. */
size_t mlc_format_g15(char *p, double v);
/* v as printf's "%d" prints it, at p (at most 11 characters); returns the length. */
size_t mlc_format_int(char *p, int v);

#endif
