/* mesh_lexer.h: the text layer under the mesh readers (mesh_tet.c, mesh_surface.c): loading a
 * whole file into memory, a bounded tokenizer over that buffer that tracks line numbers for
 * messages, checked number conversion and the messages built from them. Not part of the public
 * API. */
#ifndef MODALLOCO_MESH_LEXER_H
#define MODALLOCO_MESH_LEXER_H

#include "base.h"

#include <stddef.h>

/* Largest file the readers accept (larger ones are refused with MLC_EINVAL). */
#define MLC__MAX_FILE_BYTES ((size_t)4 << 30)

/* Read the whole file into a fresh buffer (*buf, NUL-terminated, *size bytes without the NUL,
 * owned, mlc_free). A name ending in ".gz" is decompressed (gzip.h) and the buffer holds the
 * decompressed bytes. MLC_EIO with strerror when it cannot be opened or read, MLC_EINVAL when
 * it (or its decompressed content) is larger than 4 GiB or not a regular file, MLC_EPARSE for
 * a damaged .gz. */
mlc_status mlc__file_load(const char *path, char **buf, size_t *size, mlc_err *err);

/* Tokenizer over [p, end). Tokens are runs of non-whitespace bytes; `comment` (e.g. '#', or 0
 * for none) starts a comment that runs to the end of the line. `line` is the 1-based line of
 * the cursor. Never reads outside [p, end). */
typedef struct mlc__lex {
    const char *p, *end;
    const char *begin; /* start of the buffer, for byte offsets */
    const char *path;  /* for messages */
    long line;
    char comment;
} mlc__lex;

typedef struct mlc__tok {
    const char *s; /* not NUL-terminated */
    size_t n;
    long line;
} mlc__tok;

void mlc__lex_init(mlc__lex *lx, const char *buf, size_t size, const char *path, char comment);
/* Next token anywhere (crossing line ends and comments); 0 at end of buffer. */
int mlc__lex_next(mlc__lex *lx, mlc__tok *t);
/* Next token on the current line only; 0 at the end of the line (the newline is not consumed). */
int mlc__lex_inline(mlc__lex *lx, mlc__tok *t);
/* Skip the rest of the current line, including its newline. */
void mlc__lex_skip_line(mlc__lex *lx);
/* Case-insensitive comparison of a token with a NUL-terminated word. */
int mlc__tok_is(const mlc__tok *t, const char *word);

/* Checked conversions. `inline_only` restricts the search to the current line. `what` names
 * the expected item in the message ("path:line: expected <what>, found ..."). Doubles must be
 * finite. Integers must fit in a long long. All fail with MLC_EPARSE. */
mlc_status mlc__lex_double(mlc__lex *lx, int inline_only, const char *what, double *out,
                           mlc_err *err);
mlc_status mlc__lex_ll(mlc__lex *lx, int inline_only, const char *what, long long *out,
                       mlc_err *err);
/* Convert one token (already taken) to a long long / double, same rules and messages. */
mlc_status mlc__tok_ll(const mlc__lex *lx, const mlc__tok *t, const char *what, long long *out,
                       mlc_err *err);
/* Expect a specific keyword (case-insensitive) as the next token. */
mlc_status mlc__lex_expect(mlc__lex *lx, const char *word, mlc_err *err);

/* A header count `n` of items that each take `tokens` tokens in an ASCII file must fit in the
 * bytes left (each token needs at least one byte plus a separator) and in an int index space.
 * This is what keeps a lying header from sizing an allocation. MLC_EPARSE otherwise. */
mlc_status mlc__check_count(const mlc__lex *lx, long line, long long n, int tokens,
                            const char *what, mlc_err *err);

/* Messages shared by the readers, all MLC_EPARSE "path:line: expected <what>, found ...":
 * nothing where an item was due (the end of the line, or of a truncated file) / an unexpected
 * token. */
mlc_status mlc__lex_missing(const mlc__lex *lx, int inline_only, const char *what, mlc_err *err);
mlc_status mlc__tok_bad(const mlc__lex *lx, const mlc__tok *t, const char *what, mlc_err *err);
/* A printable, bounded rendering of a token for messages (quoted, at most 40 bytes, non-ASCII
 * as '?'); returns out. */
const char *mlc__tok_show(const mlc__tok *t, char out[48]);

#endif
