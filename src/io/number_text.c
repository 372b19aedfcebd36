/* number_text.c: "%.15g" tuples formatted once (number_text.h). */
#include "number_text.h"

#include <stdio.h>
#include <string.h>

mlc_status mlc_number_text_alloc(mlc_number_text *t, int n, int dim, mlc_err *err) {
    memset(t, 0, sizeof *t);
    if (n < 0 || dim < 1 || dim > 8)
        return mlc_errf(err, MLC_EINVAL, "number text: %d tuples of %d numbers", n, dim);
    t->stride = (size_t)dim * (MLC_G15_MAX + 1) + 1;
    t->text = mlc_malloc((size_t)MLC_MAX(n, 1) * t->stride);
    t->len = mlc_malloc((size_t)MLC_MAX(n, 1) * sizeof *t->len);
    if (!t->text || !t->len) {
        mlc_number_text_free(t);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    t->n = n;
    t->dim = dim;
    return MLC_OK;
}

void mlc_number_text_fill(mlc_number_text *t, const double *X, int lo, int hi) {
    const int d = t->dim;
    for (int i = lo; i < hi; i++) {
        char *p = t->text + (size_t)i * t->stride;
        size_t n = 0;
        for (int k = 0; k < d; k++) {
            if (k) p[n++] = ' ';
            /* The room left always holds a "%.15g" and its NUL (stride's + 1). */
            n += mlc_format_g15(p + n, X[(size_t)i * d + k]);
        }
        t->len[i] = (unsigned short)n;
    }
}

mlc_status mlc_number_text_build(mlc_number_text *t, const double *X, int n, int dim,
                                 mlc_err *err) {
    mlc_status s = mlc_number_text_alloc(t, n, dim, err);
    if (s == MLC_OK) mlc_number_text_fill(t, X, 0, n);
    return s;
}

void mlc_number_text_free(mlc_number_text *t) {
    if (!t) return;
    mlc_free(t->text);
    mlc_free(t->len);
    memset(t, 0, sizeof *t);
}

size_t mlc_format_g15(char *p, double v) {
    return (size_t)snprintf(p, MLC_G15_MAX + 1, "%.15g", v);
}

size_t mlc_format_int(char *p, int v) {
    char digits[10];
    int nd = 0;
    /* Through unsigned so that INT_MIN negates without overflow. */
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do {
        digits[nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t n = 0;
    if (v < 0) p[n++] = '-';
    while (nd)
        p[n++] = digits[--nd];
    return n;
}
