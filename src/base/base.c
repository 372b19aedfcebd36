/* base.c: statuses, error detail, counted allocation, small file and path helpers, monotonic
 * clock, xoshiro256**, FNV-1a, finite check and median. */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "detmath.h"
#include "testing/base_testing.h"

const char *mlc_strerror(mlc_status s) {
    switch (s) {
#define MLC_STATUS_CASE(name, value, text)                                                         \
    case name:                                                                                     \
        return text;
        MLC_STATUS_MAP(MLC_STATUS_CASE)
#undef MLC_STATUS_CASE
    }
    return "unknown status";
}

mlc_status mlc_errf(mlc_err *err, mlc_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int mlc_exit_code(mlc_status s) {
    switch (s) {
    case MLC_OK:
        return 0;
    case MLC_EINVAL:
    case MLC_EPARSE:
        return 2;
    case MLC_EINTR:
        return 130;
    default:
        return 1;
    }
}

/* ---- Memory ---------------------------------------------------------------------------- */
static atomic_long live_blocks;
static atomic_long total_allocs;
static atomic_long fail_countdown;

static int should_fail(void) {
    long c = atomic_load(&fail_countdown);
    if (c <= 0) return 0;
    /* Decrement; the allocation that takes it to zero fails. */
    return atomic_fetch_sub(&fail_countdown, 1) == 1;
}

void *mlc_malloc(size_t size) {
    if (size == 0) size = 1;
    if (size > MLC_MAX_ALLOC || should_fail()) return NULL;
    void *p = malloc(size);
    if (p) {
        atomic_fetch_add(&live_blocks, 1);
        atomic_fetch_add(&total_allocs, 1);
    }
    return p;
}

void *mlc_calloc(size_t n, size_t size) {
    if (n == 0 || size == 0) n = size = 1;
    if (n > MLC_MAX_ALLOC / size || should_fail()) return NULL;
    void *p = calloc(n, size);
    if (p) {
        atomic_fetch_add(&live_blocks, 1);
        atomic_fetch_add(&total_allocs, 1);
    }
    return p;
}

void *mlc_realloc(void *p, size_t size) {
    if (!p) return mlc_malloc(size);
    if (size == 0) size = 1;
    if (size > MLC_MAX_ALLOC || should_fail()) return NULL;
    void *q = realloc(p, size);
    if (q) atomic_fetch_add(&total_allocs, 1);
    return q;
}

void mlc_free(void *p) {
    if (!p) return;
    atomic_fetch_sub(&live_blocks, 1);
    free(p);
}

char *mlc_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = mlc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

long mlc_alloc_live(void) {
    return atomic_load(&live_blocks);
}
long mlc_alloc_count(void) {
    return atomic_load(&total_allocs);
}
void mlc_alloc_fail_after(long n) {
    atomic_store(&fail_countdown, n > 0 ? n : 0);
}

/* ---- Files ---------------------------------------------------------------------------- */
mlc_status mlc_file_read_all(const char *path, size_t max_bytes, const char *what, char **buf,
                             size_t *size, mlc_err *err) {
    *buf = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return mlc_errf(err, MLC_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return mlc_errf(err, MLC_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return mlc_errf(err, MLC_EINVAL, "%s: not a regular file", path);
    }
    if (st.st_size < 0 || (unsigned long long)st.st_size > (unsigned long long)max_bytes) {
        close(fd);
        char lim[32];
        if (max_bytes % ((size_t)1 << 30) == 0)
            snprintf(lim, sizeof lim, "%zu GiB", max_bytes >> 30);
        else if (max_bytes % ((size_t)1 << 20) == 0)
            snprintf(lim, sizeof lim, "%zu MiB", max_bytes >> 20);
        else
            snprintf(lim, sizeof lim, "%zu bytes", max_bytes);
        return mlc_errf(err, MLC_EINVAL,
                        "%s: the file is %lld bytes; files larger than %s are "
                        "not supported (%s)",
                        path, (long long)st.st_size, lim, what ? what : "is it the right file?");
    }
    size_t n = (size_t)st.st_size;
    char *b = mlc_malloc(n + 1);
    if (!b) {
        close(fd);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory reading %zu bytes", path, n);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            mlc_free(b);
            return mlc_errf(err, MLC_EIO, "%s: read error: %s", path, strerror(e));
        }
        if (r == 0) break; /* the file shrank while we read it: parse what is there */
        got += (size_t)r;
    }
    close(fd);
    b[got] = '\0';
    *buf = b;
    *size = got;
    return MLC_OK;
}

char *mlc_file_read_text(const char *path) {
    char *buf = NULL;
    size_t n;
    if (mlc_file_read_all(path, (size_t)64 << 20, NULL, &buf, &n, NULL) != MLC_OK) return NULL;
    return buf;
}

int mlc_file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

int mlc_path_join(char *out, size_t cap, const char *dir, const char *name) {
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < cap;
}

char *mlc_path_join_alloc(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = mlc_malloc(n);
    if (p) mlc_path_join(p, n, dir, name);
    return p;
}

/* ---- Clock ----------------------------------------------------------------------------- */
double mlc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- RNG ------------------------------------------------------------------------------- */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void mlc_rng_seed(mlc_rng *rng, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
    rng->has_spare = 0;
    rng->spare = 0.0;
}

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

static uint64_t mlc_rng_u64(mlc_rng *rng) {
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double mlc_rng_uniform(mlc_rng *rng) {
    return (double)(mlc_rng_u64(rng) >> 11) * 0x1.0p-53;
}

double mlc_rng_normal(mlc_rng *rng) {
    if (rng->has_spare) {
        rng->has_spare = 0;
        return rng->spare;
    }
    /* Box-Muller on (0,1]: the log never sees 0. Deterministic given the stream. */
    double u1 = 1.0 - mlc_rng_uniform(rng);
    double u2 = mlc_rng_uniform(rng);
    double r = sqrt(-2.0 * mlc_log(u1));
    rng->spare = r * mlc_sin(2.0 * MLC_PI * u2);
    rng->has_spare = 1;
    return r * mlc_cos(2.0 * MLC_PI * u2);
}

int mlc_rng_below(mlc_rng *rng, int n) {
    /* Lemire-free simple rejection to stay unbiased. */
    uint64_t bound = (uint64_t)n;
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do
        x = mlc_rng_u64(rng);
    while (x >= limit);
    return (int)(x % bound);
}

uint64_t mlc_hash64(uint64_t h, const void *data, size_t len) {
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* ---- Small helpers ---------------------------------------------------------------------- */
int mlc_all_finite(const double *x, size_t n) {
    /* x·0 is ±0 for a finite x and NaN otherwise; NaN survives any sum, so four partial sums
     * (which the additions need not wait on one another for) decide as one would. */
    double s[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; l++)
            s[l] += x[i + l] * 0.0;
    for (; i < n; i++)
        s[0] += x[i] * 0.0;
    return (s[0] + s[1]) + (s[2] + s[3]) == 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double mlc_median(const double *v, int n, double *work) {
    if (work != v) memcpy(work, v, (size_t)n * sizeof(double));
    qsort(work, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? work[n / 2] : 0.5 * (work[n / 2 - 1] + work[n / 2]);
}

static int larger_first(const void *a, const void *b) {
    const mlc_weighted *u = a, *v = b;
    return u->work > v->work   ? -1
           : u->work < v->work ? 1
                               : (u->item > v->item) - (u->item < v->item);
}

void mlc_sort_largest_first(const double *work, int *items, int n, mlc_weighted *tmp) {
    for (int c = 0; c < n; c++)
        tmp[c].work = work[items[c]], tmp[c].item = items[c];
    qsort(tmp, (size_t)n, sizeof *tmp, larger_first);
    for (int c = 0; c < n; c++)
        items[c] = tmp[c].item;
}

double mlc_deal_largest_first(const double *work, const int *items, int n, int bins, double *load,
                              int *assign) {
    for (int b = 0; b < bins; b++)
        load[b] = 0;
    for (int c = 0; c < n; c++) {
        int least = 0;
        for (int b = 1; b < bins; b++)
            if (load[b] < load[least]) least = b;
        load[least] += work[items[c]];
        if (assign) assign[c] = least;
    }
    double most = 0;
    for (int b = 0; b < bins; b++)
        most = load[b] > most ? load[b] : most;
    return most;
}

void mlc_sort3(int v[3]) {
    int t;
    if (v[0] > v[1]) t = v[0], v[0] = v[1], v[1] = t;
    if (v[1] > v[2]) t = v[1], v[1] = v[2], v[2] = t;
    if (v[0] > v[1]) t = v[0], v[0] = v[1], v[1] = t;
}

int mlc_uf_find(int *parent, int i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

void mlc_uf_union(int *parent, int i, int j) {
    i = mlc_uf_find(parent, i);
    j = mlc_uf_find(parent, j);
    if (i < j)
        parent[j] = i;
    else if (j < i)
        parent[i] = j;
}

int mlc_edit_distance(const char *a, const char *b) {
    enum { MAXLEN = 128 };
    size_t na = strlen(a), nb = strlen(b);
    if (na > MAXLEN || nb > MAXLEN) return INT_MAX / 2;
    int prev[MAXLEN + 1], cur[MAXLEN + 1];
    for (size_t j = 0; j <= nb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = MLC_MIN(sub, MLC_MIN(del, ins));
        }
        memcpy(prev, cur, (nb + 1) * sizeof *prev);
    }
    return prev[nb];
}
