/* mesh_lexer.c: the text layer of the mesh readers: the shared whole-file loader (gzip-aware)
 * and the bounded tokenizer with its checked conversions and messages (mesh_lexer.h).
 *
 * The file is read once into memory and parsed from the buffer without ever reading past its
 * end; every failure is MLC_EPARSE with "path:line: expected ...". */
#include "internal/mesh_lexer.h"

#include "gzip.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- Whole-file loading ----------------------------------------------------------------- */
mlc_status mlc__file_load(const char *path, char **buf, size_t *size, mlc_err *err) {
    /* Every reader loads through here, so NAME.EXT.gz works for every format. */
    if (mlc_gz_name(path))
        return mlc_gz_read_all(path, MLC__MAX_FILE_BYTES, "simplify the mesh", buf, size, err);
    return mlc_file_read_all(path, MLC__MAX_FILE_BYTES, "simplify the mesh", buf, size, err);
}

/* ---- Tokenizer -------------------------------------------------------------------------- */
static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

void mlc__lex_init(mlc__lex *lx, const char *buf, size_t size, const char *path, char comment) {
    lx->p = lx->begin = buf;
    lx->end = buf + size;
    lx->path = path;
    lx->line = 1;
    lx->comment = comment;
}

/* Take the token starting at p (p < end, not blank). Tokens stop at whitespace and at the
 * comment character, so "1#x" is the token "1" followed by a comment. */
static void take_token(mlc__lex *lx, const char *p, mlc__tok *t) {
    t->s = p;
    t->line = lx->line;
    while (p < lx->end && !is_blank(*p) && *p != '\n' && !(lx->comment && *p == lx->comment))
        p++;
    t->n = (size_t)(p - t->s);
    lx->p = p;
}

int mlc__lex_next(mlc__lex *lx, mlc__tok *t) {
    const char *p = lx->p, *end = lx->end;
    for (;;) {
        while (p < end && (is_blank(*p) || *p == '\n')) {
            if (*p == '\n') lx->line++;
            p++;
        }
        if (p < end && lx->comment && *p == lx->comment) {
            while (p < end && *p != '\n')
                p++;
            continue;
        }
        break;
    }
    if (p >= end) {
        lx->p = end;
        return 0;
    }
    take_token(lx, p, t);
    return 1;
}

int mlc__lex_inline(mlc__lex *lx, mlc__tok *t) {
    const char *p = lx->p;
    while (p < lx->end && is_blank(*p))
        p++;
    lx->p = p;
    if (p >= lx->end || *p == '\n' || (lx->comment && *p == lx->comment)) return 0;
    take_token(lx, p, t);
    return 1;
}

void mlc__lex_skip_line(mlc__lex *lx) {
    const char *p = lx->p;
    while (p < lx->end && *p != '\n')
        p++;
    if (p < lx->end) {
        p++;
        lx->line++;
    }
    lx->p = p;
}

int mlc__tok_is(const mlc__tok *t, const char *word) {
    size_t n = strlen(word);
    return t->n == n && strncasecmp(t->s, word, n) == 0;
}

/* A printable, bounded rendering of a token for messages (files may hold binary garbage). */
const char *mlc__tok_show(const mlc__tok *t, char out[48]) {
    size_t n = t->n < 40 ? t->n : 40, j = 0;
    out[j++] = '\'';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t->s[i];
        out[j++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (t->n > n) {
        out[j++] = '.';
        out[j++] = '.';
        out[j++] = '.';
    }
    out[j++] = '\'';
    out[j] = '\0';
    return out;
}

mlc_status mlc__lex_missing(const mlc__lex *lx, int inline_only, const char *what, mlc_err *err) {
    int at_eof = lx->p >= lx->end;
    return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected %s, found %s%s", lx->path, lx->line, what,
                    at_eof        ? "the end of the file"
                    : inline_only ? "the end of the line"
                                  : "nothing",
                    at_eof ? " (the file is truncated)" : "");
}

mlc_status mlc__tok_bad(const mlc__lex *lx, const mlc__tok *t, const char *what, mlc_err *err) {
    char show[48];
    return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected %s, found %s", lx->path, t->line, what,
                    mlc__tok_show(t, show));
}

/* Copy a numeric token into a NUL-terminated buffer for strtod/strtoll. Numbers longer than
 * the buffer are not numbers anyone writes. */
static int tok_cstr(const mlc__tok *t, char buf[64]) {
    if (t->n == 0 || t->n >= 64) return 0;
    memcpy(buf, t->s, t->n);
    buf[t->n] = '\0';
    return 1;
}

static mlc_status mlc__tok_double(const mlc__lex *lx, const mlc__tok *t, const char *what,
                                  double *out, mlc_err *err) {
    char buf[64], *e;
    if (!tok_cstr(t, buf)) return mlc__tok_bad(lx, t, what, err);
    double v = strtod(buf, &e);
    if (e != buf + t->n) return mlc__tok_bad(lx, t, what, err);
    if (!isfinite(v)) {
        char show[48];
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: %s is not finite (%s); coordinates must be "
                        "finite numbers, fix the file",
                        lx->path, t->line, what, mlc__tok_show(t, show));
    }
    *out = v;
    return MLC_OK;
}

mlc_status mlc__tok_ll(const mlc__lex *lx, const mlc__tok *t, const char *what, long long *out,
                       mlc_err *err) {
    /* Most tokens of a large mesh are vertex indices: plain digits with at most a sign, whose
     * value cannot overflow in 18 digits, are read here; anything else goes to strtoll. */
    size_t i = t->n > 0 && (t->s[0] == '-' || t->s[0] == '+');
    if (t->n > i && t->n - i <= 18) {
        long long v = 0;
        size_t k = i;
        while (k < t->n && t->s[k] >= '0' && t->s[k] <= '9')
            v = 10 * v + (t->s[k++] - '0');
        if (k == t->n) {
            *out = t->s[0] == '-' ? -v : v;
            return MLC_OK;
        }
    }
    char buf[64], *e;
    if (!tok_cstr(t, buf)) return mlc__tok_bad(lx, t, what, err);
    errno = 0;
    long long v = strtoll(buf, &e, 10);
    if (e != buf + t->n || errno == ERANGE) return mlc__tok_bad(lx, t, what, err);
    *out = v;
    return MLC_OK;
}

mlc_status mlc__lex_double(mlc__lex *lx, int inline_only, const char *what, double *out,
                           mlc_err *err) {
    mlc__tok t;
    if (!(inline_only ? mlc__lex_inline(lx, &t) : mlc__lex_next(lx, &t)))
        return mlc__lex_missing(lx, inline_only, what, err);
    return mlc__tok_double(lx, &t, what, out, err);
}

mlc_status mlc__lex_ll(mlc__lex *lx, int inline_only, const char *what, long long *out,
                       mlc_err *err) {
    mlc__tok t;
    if (!(inline_only ? mlc__lex_inline(lx, &t) : mlc__lex_next(lx, &t)))
        return mlc__lex_missing(lx, inline_only, what, err);
    return mlc__tok_ll(lx, &t, what, out, err);
}

mlc_status mlc__lex_expect(mlc__lex *lx, const char *word, mlc_err *err) {
    mlc__tok t;
    char what[80];
    snprintf(what, sizeof what, "'%s'", word);
    if (!mlc__lex_next(lx, &t)) return mlc__lex_missing(lx, 0, what, err);
    if (!mlc__tok_is(&t, word)) return mlc__tok_bad(lx, &t, what, err);
    return MLC_OK;
}

mlc_status mlc__check_count(const mlc__lex *lx, long line, long long n, int tokens,
                            const char *what, mlc_err *err) {
    size_t left = (size_t)(lx->end - lx->p);
    if (n < 0)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: expected a non-negative number of %s, found "
                        "%lld",
                        lx->path, line, what, n);
    if (n > INT_MAX / 4)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: %lld %s is more than this program supports "
                        "(%d)",
                        lx->path, line, n, what, INT_MAX / 4);
    /* n items of `tokens` tokens need at least 2*n*tokens - 1 bytes. */
    if ((unsigned long long)n > (left + 1) / (2 * (size_t)tokens))
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: the header announces %lld %s, but only %zu "
                        "bytes follow; the file is truncated or the count is wrong",
                        lx->path, line, n, what, left);
    return MLC_OK;
}
