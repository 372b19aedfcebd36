/* base.h: statuses, error detail, allocation, clocks, the seeded generator and hashing.
 *
 * Every other module builds on this one. Conventions used throughout the project:
 *  - Fallible functions return mlc_status (0 = MLC_OK, negative = failure) and take a nullable
 *    `mlc_err *err` last that receives a human-readable message naming the file, the place
 *    and the fix. Modules never print and never exit; only the CLI does.
 *  - A zeroed struct is a valid empty object; `_free` functions are idempotent.
 *  - Arrays handed to BLAS, LAPACK, ARPACK or CHOLMOD are column-major. Vertices are 3×nv
 *    column-major (xyz interleaved), tets 4×nt int.
 *  - All heap memory goes through mlc_malloc/mlc_calloc/mlc_realloc/mlc_free (overflow-checked
 *    sizes, a live-block counter and a failure-injection hook for tests).
 */
#ifndef MODALLOCO_BASE_H
#define MODALLOCO_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifndef MLC_VERSION
#define MLC_VERSION "0.0.0"
#endif

/* X-macro table: name, value, short description. */
#define MLC_STATUS_MAP(X)                                                                          \
    X(MLC_OK, 0, "success")                                                                        \
    X(MLC_ENOMEM, -1, "out of memory")                                                             \
    X(MLC_EINVAL, -2, "invalid argument or setting")                                               \
    X(MLC_EIO, -3, "input/output error")                                                           \
    X(MLC_EPARSE, -4, "malformed input file")                                                      \
    X(MLC_ENOTSPD, -5, "matrix is not symmetric positive definite")                                \
    X(MLC_ENOCONV, -6, "iterative solver did not converge")                                        \
    X(MLC_ENUMERIC, -7, "numerical breakdown")                                                     \
    X(MLC_ETOOL, -8, "external tool failed")                                                       \
    X(MLC_EINTR, -9, "interrupted")

typedef enum {
#define MLC_STATUS_ENUM(name, value, text) name = value,
    MLC_STATUS_MAP(MLC_STATUS_ENUM)
#undef MLC_STATUS_ENUM
} mlc_status;

/* Short description of a status ("out of memory"). Never NULL. */
const char *mlc_strerror(mlc_status s);

/* Error detail filled by fallible functions. `msg` is one line per problem (usually one),
 * lines separated by '\n', no trailing newline. */
typedef struct mlc_err {
    mlc_status code;
    char msg[1024];
} mlc_err;

/* Fill `err` (if non-NULL) with code and a printf-style message; returns `code`, so callers
 * can write `return mlc_errf(err, MLC_EPARSE, "%s:%d: expected ...", path, line);`. */
mlc_status mlc_errf(mlc_err *err, mlc_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Exit code for a status, as the README defines: 0 ok, 2 input/usage errors (EINVAL, EPARSE),
 * 130 interrupted, 1 everything else (runtime failures). */
int mlc_exit_code(mlc_status s);

/* ---- Memory ---------------------------------------------------------------------------- */
/* Sizes are checked for overflow (n*size); a request above MLC_MAX_ALLOC fails (NULL). */
#define MLC_MAX_ALLOC ((size_t)1 << 38) /* 256 GiB: a sanity bound, not a budget */
void *mlc_malloc(size_t size);
void *mlc_calloc(size_t n, size_t size); /* zeroed */
void *mlc_realloc(void *p, size_t size);
void mlc_free(void *p);
char *mlc_strdup(const char *s);

/* ---- Files ---------------------------------------------------------------------------- */
/* Read a whole regular file into a fresh buffer (*buf, NUL-terminated, *size bytes without the
 * NUL, owned, mlc_free). The size is checked against `max_bytes` before anything is allocated.
 * Errors: MLC_EIO "PATH: cannot open: <strerror>" (or a read error); MLC_EINVAL "PATH: not a
 * regular file" or "PATH: the file is N bytes; files larger than <max> are not supported";
 * MLC_ENOMEM. `what` completes the too-large message with the fix (e.g. "simplify the mesh"). */
mlc_status mlc_file_read_all(const char *path, size_t max_bytes, const char *what, char **buf,
                             size_t *size, mlc_err *err);
/* A whole small text file (at most 64 MiB; NUL-terminated, owned, mlc_free), or NULL on any
 * error, without a message (for files whose absence or damage the caller handles itself). */
char *mlc_file_read_text(const char *path);
/* Nonzero when something exists at `path` (stat succeeds; a symbolic link is followed). */
int mlc_file_exists(const char *path);
/* "DIR/NAME" into out (cap bytes; truncated, still NUL-terminated, when it does not fit).
 * Returns 1 when it fit, 0 when truncated. */
int mlc_path_join(char *out, size_t cap, const char *dir, const char *name);
/* "DIR/NAME" in a fresh buffer (owned, mlc_free), or NULL when out of memory. */
char *mlc_path_join_alloc(const char *dir, const char *name);

/* ---- Clocks ---------------------------------------------------------------------------- */
double mlc_now(void); /* monotonic seconds */

/* ---- Deterministic random numbers (xoshiro256**, seeded by splitmix64) ------------------ */
typedef struct mlc_rng {
    uint64_t s[4];
    int has_spare; /* Box-Muller spare */
    double spare;
} mlc_rng;
void mlc_rng_seed(mlc_rng *rng, uint64_t seed);
double mlc_rng_uniform(mlc_rng *rng);   /* in [0, 1), 53 random bits */
double mlc_rng_normal(mlc_rng *rng);    /* standard normal */
int mlc_rng_below(mlc_rng *rng, int n); /* uniform integer in [0, n), n > 0 */

/* ---- Small integer helpers -------------------------------------------------------------- */
/* Sort three ints ascending in place (a triangle's vertex key). */
void mlc_sort3(int v[3]);
/* Union-find over 0..n−1, parent[i] = i to start. mlc_uf_find returns the root of i and halves
 * the path on the way; mlc_uf_union joins the sets of i and j with the smaller root as the root
 * (deterministic, and shallow enough with path halving). */
int mlc_uf_find(int *parent, int i);
void mlc_uf_union(int *parent, int i, int j);

/* ---- Names ------------------------------------------------------------------------------ */
/* Levenshtein distance between a and b (insertions, deletions, substitutions, each 1): how
 * "did you mean" hints find the nearest key, command or option. Names longer than 128 bytes
 * are never near anything (INT_MAX / 2). */
int mlc_edit_distance(const char *a, const char *b);

/* ---- Hashing (FNV-1a 64, for checksums and cache keys) --------------------------------- */
#define MLC_HASH_INIT 0xcbf29ce484222325ULL
uint64_t mlc_hash64(uint64_t h, const void *data, size_t len);

/* ---- Small helpers ---------------------------------------------------------------------- */
#define MLC_PI 3.14159265358979323846
#define MLC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define MLC_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MLC_UNUSED(x) ((void)(x))
/* The text of a macro's value: MLC_STR(MLC_SIM_DEFAULT_DT) is "0.01". */
#define MLC_STR_(x) #x
#define MLC_STR(x) MLC_STR_(x)
/* Nonzero when every x[0..n) is finite (no NaN, no ±Inf). */
int mlc_all_finite(const double *x, size_t n);
/* Median of v[0..n), n >= 1 (the mean of the two middle values when n is even). work (n values,
 * may be v itself) receives v sorted ascending; NaN compares equal to everything, as in qsort
 * with a (x > y) − (x < y) comparison. */
double mlc_median(const double *v, int n, double *work);

/* Splitting work over threads (the split sparse solves): items are indices into `work`.
 * mlc_sort_largest_first orders items[0..n) by work, largest first, ties by the lower item
 * (tmp: n entries of scratch). mlc_deal_largest_first deals the items in their order, each to
 * the least loaded of `bins` bins (ties: the lower bin); load (bins entries) gets the bins'
 * totals and assign (may be NULL) each item's bin. Returns the largest load. */
typedef struct mlc_weighted {
    double work;
    int item;
} mlc_weighted;
void mlc_sort_largest_first(const double *work, int *items, int n, mlc_weighted *tmp);
double mlc_deal_largest_first(const double *work, const int *items, int n, int bins, double *load,
                              int *assign);

#endif
