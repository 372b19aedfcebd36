/* subspace_cache.c: the reusable precompute cache of subspace.h (docs/method.md §3–6 results).
 *
 * File format (native little-endian; the endianness marker rejects anything else), version 3, or
 * version 4 for a subspace with local modes (nregions > 0; the fields marked "local" exist only
 * there). Versions 1 and 2 are the same files without cluster_seed (header 160 and 192 bytes):
 * they are still parsed, as clusters of an unknown seed, but their keys included the seed, so a
 * cache of theirs is stale for this program and recomputed once:
 *   offset  size  field
 *        0     8  magic "MLCCACHE"
 *        8     4  uint32 format version (CACHE_VERSION)
 *       12     4  uint32 endianness marker 0x01020304
 *       16     8  uint64 key (mlc_subspace_cache_key)
 *       24    40  int32 nv, nt, w, m, ncp, nca, ns, skin_solves, vib_solves, nregions
 *       64    48  double rigid_eval[6]
 *      112    32  double t_skinning, t_vibration, t_clusters, t_samples
 *      144    16  char ordering[16]
 *      160     8  uint64 cluster_seed (the k-means seed of cluster[] and acluster[])
 *      168    32  local: double local_weight, t_local, local_gram_min, local_spread_max
 *   168/200       double W[nv·w], skin_eval[w], D[3nv·m], vib_eval[m], grad_max[m],
 *                 local: vib_frac[m]
 *                 int32 mode_index[m], local: mode_region[m],
 *                 int32 cluster[nt], acluster[nt], samples[ns]
 *      end-8   8  uint64 FNV-1a 64 of every byte before it
 * Reading checks magic, version, marker and key from the header, bounds every size and checks
 * that they add up to the file length before allocating anything, then verifies the checksum
 * and the label ranges. Writing goes to a mkstemp file beside the target, fsync, rename, so a
 * reader never sees a half-written cache.
 */
#include "internal/subspace_internal.h"
#include "subspace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_VERSION 3u
#define CACHE_VERSION_LOCAL 4u
#define CACHE_VERSION_OLD 1u /* without cluster_seed */
#define CACHE_VERSION_OLD_LOCAL 2u
#define CACHE_ENDIAN 0x01020304u
#define CACHE_HEADER 160 /* the fixed part every version has */
#define CACHE_SEED 8     /* cluster_seed, from version 3 */
#define CACHE_LOCAL 32   /* the local-mode fields */
#define CACHE_MAX_W 32
#define CACHE_MAX_M 1024

uint64_t mlc_subspace_cache_key(const mlc_mesh *mesh, const mlc_subspace_settings *st) {
    uint64_t h = MLC_HASH_INIT;
    uint32_t version = CACHE_VERSION;
    h = mlc_hash64(h, "mlc-subspace", 12);
    h = mlc_hash64(h, &version, sizeof version);
    uint64_t mc = mlc_mesh_checksum(mesh);
    h = mlc_hash64(h, &mc, sizeof mc);
    int32_t v[6] = {st->w,
                    st->nlist > 0 ? -1 : st->m,
                    st->nlist > 0 ? st->nlist : 0,
                    st->passive_clusters,
                    st->actuation_clusters,
                    st->contact_samples};
    h = mlc_hash64(h, v, sizeof v);
    for (int i = 0; i < st->nlist && st->mode_list; i++) {
        int32_t q = st->mode_list[i];
        h = mlc_hash64(h, &q, sizeof q);
    }
    double nu = st->poisson == 0.0 ? 0.0 : st->poisson; /* −0 and +0 hash alike */
    h = mlc_hash64(h, &nu, sizeof nu);
    double band = st->contact_band == 0.0 ? 0.0 : st->contact_band;
    h = mlc_hash64(h, &band, sizeof band);
    /* The contact sampling rule itself (clusters.h), so a cache of an earlier rule is not
     * taken for this one. */
    h = mlc_hash64(h, "samples: soles, faces down, all; height x3", 42);
    /* The cover's spacing, only when it is on (a cache of the plain count keeps its key). */
    if (st->contact_spacing > 0 && st->contact_band > 0) {
        h = mlc_hash64(h, "cover", 5);
        h = mlc_hash64(h, &st->contact_spacing, sizeof st->contact_spacing);
        int32_t cap = MLC_CONTACT_SAMPLES_MAX;
        h = mlc_hash64(h, &cap, sizeof cap);
    }
    /* Not the seed: only the clusters depend on it, and a reader reclusters a cache of another
     * seed (mlc_subspace_cache_load) instead of repeating the eigen-solves. */
    /* Per-region materials and labels (absent for one material: the key stays as it was). */
    if (st->tet_stiffness) h = mlc_hash64(h, st->tet_stiffness, (size_t)mesh->nt * sizeof(double));
    if (st->vertex_mass) h = mlc_hash64(h, st->vertex_mass, (size_t)mesh->nv * sizeof(double));
    if (st->tet_region && st->nregions > 1) {
        int32_t k = st->nregions;
        h = mlc_hash64(h, "regions", 7);
        h = mlc_hash64(h, &k, sizeof k);
        h = mlc_hash64(h, st->tet_region, (size_t)mesh->nt * sizeof(int));
    }
    /* Local modes: m_r, the weight factor and the labels; nothing without them, so the keys
     * of caches without local modes stay what they were. */
    int32_t lm = st->local_modes > 0 ? st->local_modes : 0;
    if (lm > 0) {
        h = mlc_hash64(h, "local modes", 11);
        h = mlc_hash64(h, &lm, sizeof lm);
        double c = st->localization == 0.0 ? 0.0 : st->localization;
        h = mlc_hash64(h, &c, sizeof c);
        int32_t nr = st->tet_region ? st->nregions : 1;
        h = mlc_hash64(h, &nr, sizeof nr);
        if (st->tet_region) h = mlc_hash64(h, st->tet_region, (size_t)mesh->nt * sizeof(int));
        if (st->tet_mass_scale)
            h = mlc_hash64(h, st->tet_mass_scale, (size_t)mesh->nt * sizeof(double));
    }
    return h;
}

/* Payload size in bytes for the given sizes (callers bound the sizes so this cannot overflow). */
static uint64_t payload_bytes(uint64_t nv, uint64_t nt, uint64_t w, uint64_t m, uint64_t ns,
                              int local) {
    return 8 * (nv * w + w + 3 * nv * m + 2 * m) + 4 * (m + 2 * nt + ns) + (local ? 12 * m : 0);
}

static unsigned char *put(unsigned char *p, const void *src, size_t n) {
    if (n) memcpy(p, src, n);
    return p + n;
}

mlc_status mlc_subspace_cache_write(const char *path, uint64_t key, const mlc_subspace *s,
                                    mlc_err *err) {
    if (!path || !s || s->nv <= 0 || s->nt <= 0 || s->w < 1 || s->w > CACHE_MAX_W || s->m < 1 ||
        s->m > CACHE_MAX_M || s->ns < 0)
        return mlc_errf(err, MLC_EINVAL, "cache write: empty or out-of-range subspace");
    int local = s->nregions > 0;
    uint64_t header = CACHE_HEADER + CACHE_SEED + (local ? CACHE_LOCAL : 0);
    uint64_t total = header +
                     payload_bytes((uint64_t)s->nv, (uint64_t)s->nt, (uint64_t)s->w, (uint64_t)s->m,
                                   (uint64_t)s->ns, local) +
                     8;
    unsigned char *buf = mlc_malloc((size_t)total);
    if (!buf) return mlc_errf(err, MLC_ENOMEM, "cache write %s: out of memory", path);
    memset(buf, 0, (size_t)header);
    unsigned char *p = buf;
    uint32_t ver = local ? CACHE_VERSION_LOCAL : CACHE_VERSION, endian = CACHE_ENDIAN;
    p = put(p, "MLCCACHE", 8);
    p = put(p, &ver, 4);
    p = put(p, &endian, 4);
    p = put(p, &key, 8);
    int32_t hdr[10] = {s->nv,  s->nt, s->w,           s->m,          s->ncp,
                       s->nca, s->ns, s->skin_solves, s->vib_solves, s->nregions};
    p = put(p, hdr, sizeof hdr);
    p = put(p, s->rigid_eval, sizeof s->rigid_eval);
    double t[4] = {s->t_skinning, s->t_vibration, s->t_clusters, s->t_samples};
    p = put(p, t, sizeof t);
    p = put(p, s->ordering, sizeof s->ordering);
    p = put(p, &s->cluster_seed, 8);
    double lw[4] = {s->local_weight, s->t_local, s->local_gram_min, s->local_spread_max};
    if (local) p = put(p, lw, sizeof lw);
    size_t nv = (size_t)s->nv, nt = (size_t)s->nt, w = (size_t)s->w, m = (size_t)s->m;
    p = put(p, s->W, nv * w * sizeof(double));
    p = put(p, s->skin_eval, w * sizeof(double));
    p = put(p, s->D, 3 * nv * m * sizeof(double));
    p = put(p, s->vib_eval, m * sizeof(double));
    p = put(p, s->grad_max, m * sizeof(double));
    if (local) p = put(p, s->vib_frac, m * sizeof(double));
    p = put(p, s->mode_index, m * sizeof(int));
    if (local) p = put(p, s->mode_region, m * sizeof(int));
    p = put(p, s->cluster, nt * sizeof(int));
    p = put(p, s->acluster, nt * sizeof(int));
    p = put(p, s->samples, (size_t)s->ns * sizeof(int));
    uint64_t sum = mlc_hash64(MLC_HASH_INIT, buf, (size_t)(p - buf));
    p = put(p, &sum, 8);

    /* Temporary name beside the target so rename() stays within one file system. */
    size_t plen = strlen(path);
    char *tmp = mlc_malloc(plen + 16);
    if (!tmp) {
        mlc_free(buf);
        return mlc_errf(err, MLC_ENOMEM, "cache write %s: out of memory", path);
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    mlc_status st = MLC_OK;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        st = mlc_errf(err, MLC_EIO, "cache write %s: cannot create a temporary file: %s", path,
                      strerror(errno));
        goto done;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        st = mlc_errf(err, MLC_EIO, "cache write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto done;
    }
    /* mkstemp creates 0600; a cache is not secret. */
    fchmod(fd, 0644);
    int bad = fwrite(buf, 1, (size_t)total, f) != (size_t)total;
    bad = bad || fflush(f) != 0 || fsync(fd) != 0;
    int saved = errno;
    bad = (fclose(f) != 0) || bad;
    if (bad) {
        st = mlc_errf(err, MLC_EIO, "cache write %s: %s (disk full?)", tmp, strerror(saved));
        unlink(tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        st = mlc_errf(err, MLC_EIO, "cache write %s: rename from %s failed: %s", path, tmp,
                      strerror(errno));
        unlink(tmp);
    }
done:
    mlc_free(tmp);
    mlc_free(buf);
    return st;
}

static const unsigned char *get(const unsigned char *p, void *dst, size_t n) {
    if (n) memcpy(dst, p, n);
    return p + n;
}

static int labels_ok(const int *a, size_t n, int hi) {
    for (size_t i = 0; i < n; i++)
        if (a[i] < 0 || a[i] >= hi) return 0;
    return 1;
}

/* −1 (a global mode) or a region 0..nregions−1. */
static int regions_ok(const int *a, size_t n, int nregions) {
    for (size_t i = 0; i < n; i++)
        if (a[i] < -1 || a[i] >= nregions) return 0;
    return 1;
}

/* What a cache's header says: its format and the sizes of what it holds. */
typedef struct cache_header {
    int local;                          /* local-mode fields (versions 2 and 4) */
    int seeded;                         /* cluster_seed (versions 3 and 4) */
    int32_t nv, nt, w, m, ncp, nca, ns; /* sizes */
    int32_t skin_solves, vib_solves;    /* solver statistics */
    int32_t nregions;                   /* body regions (local format only) */
    uint64_t flen, total;               /* the file's length and the length the header implies */
} cache_header;

/* Read and check the fixed header (regular file, magic, version and byte order, key) into hdr
 * and the fields of *ch that it names. */
static mlc_status read_header(FILE *f, const char *path, uint64_t key,
                              unsigned char hdr[CACHE_HEADER], cache_header *ch, mlc_err *err) {
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode))
        return mlc_errf(err, MLC_EIO, "cache %s: not a regular file", path);
    ch->flen = (uint64_t)sb.st_size;
    if (ch->flen < CACHE_HEADER + 8 || fread(hdr, 1, CACHE_HEADER, f) != CACHE_HEADER)
        return mlc_errf(err, MLC_EPARSE, "cache %s: truncated (%llu bytes, header needs %d)", path,
                        (unsigned long long)ch->flen, CACHE_HEADER + 8);
    if (memcmp(hdr, "MLCCACHE", 8) != 0)
        return mlc_errf(err, MLC_EPARSE, "cache %s: not a modalloco cache (bad magic)", path);
    uint32_t ver, endian;
    uint64_t fkey;
    int32_t h[10];
    const unsigned char *q = hdr + 8;
    q = get(q, &ver, 4);
    q = get(q, &endian, 4);
    q = get(q, &fkey, 8);
    get(q, h, sizeof h);
    if (endian != CACHE_ENDIAN || ver < CACHE_VERSION_OLD || ver > CACHE_VERSION_LOCAL)
        return mlc_errf(err, MLC_EPARSE,
                        "cache %s: format version %u (or byte order) differs from "
                        "this program's version %u",
                        path, (unsigned)ver, CACHE_VERSION);
    if (fkey != key)
        return mlc_errf(err, MLC_EPARSE,
                        "cache %s: stale (computed for another mesh or other settings)", path);
    ch->nv = h[0], ch->nt = h[1], ch->w = h[2], ch->m = h[3], ch->ncp = h[4], ch->nca = h[5];
    ch->ns = h[6], ch->skin_solves = h[7], ch->vib_solves = h[8], ch->nregions = h[9];
    ch->local = ver == CACHE_VERSION_LOCAL || ver == CACHE_VERSION_OLD_LOCAL;
    ch->seeded = ver >= CACHE_VERSION;
    return MLC_OK;
}

/* Refuse sizes no cache of this program has, and a file whose length is not the one they imply
 * (sets ch->total). */
static mlc_status check_sizes(const char *path, cache_header *ch, mlc_err *err) {
    uint64_t header = CACHE_HEADER + (ch->seeded ? CACHE_SEED : 0) + (ch->local ? CACHE_LOCAL : 0);
    if (ch->local != (ch->nregions > 0)) ch->nregions = -1; /* refused below as corrupt */
    if (ch->nv < 1 || ch->nt < 1 || ch->w < 1 || ch->w > CACHE_MAX_W || ch->m < 1 ||
        ch->m > CACHE_MAX_M || ch->ncp < 1 || ch->ncp > ch->nt || ch->nca < 1 || ch->nca > ch->nt ||
        ch->ns < 0 || ch->ns > ch->nv || ch->nregions < 0 || ch->nregions > ch->nt)
        return mlc_errf(err, MLC_EPARSE,
                        "cache %s:byte 24: corrupt header: expected sizes nv >= 1, nt >= 1, "
                        "w 1..%d, m 1..%d, clusters 1..nt, samples 0..nv; found nv %d, nt %d, "
                        "w %d, m %d, clusters %d and %d, samples %d",
                        path, CACHE_MAX_W, CACHE_MAX_M, (int)ch->nv, (int)ch->nt, (int)ch->w,
                        (int)ch->m, (int)ch->ncp, (int)ch->nca, (int)ch->ns);
    ch->total = header +
                payload_bytes((uint64_t)ch->nv, (uint64_t)ch->nt, (uint64_t)ch->w, (uint64_t)ch->m,
                              (uint64_t)ch->ns, ch->local) +
                8;
    if (ch->total != ch->flen || ch->total > MLC_MAX_ALLOC)
        return mlc_errf(err, MLC_EPARSE, "cache %s: %s (%llu bytes, the header implies %llu)", path,
                        ch->flen < ch->total ? "truncated" : "has trailing bytes",
                        (unsigned long long)ch->flen, (unsigned long long)ch->total);
    return MLC_OK;
}

/* The whole file in *buf (the header already read, then the rest), its checksum verified. */
static mlc_status read_checked(FILE *f, const char *path, const unsigned char *hdr, uint64_t total,
                               unsigned char **buf, mlc_err *err) {
    if (!(*buf = mlc_malloc((size_t)total)))
        return mlc_errf(err, MLC_ENOMEM, "cache %s: out of memory", path);
    memcpy(*buf, hdr, CACHE_HEADER);
    if (fread(*buf + CACHE_HEADER, 1, (size_t)(total - CACHE_HEADER), f) !=
        (size_t)(total - CACHE_HEADER))
        return mlc_errf(err, MLC_EPARSE, "cache %s: short read (file changed while reading?)",
                        path);
    uint64_t sum;
    memcpy(&sum, *buf + total - 8, 8);
    if (sum != mlc_hash64(MLC_HASH_INIT, *buf, (size_t)total - 8))
        return mlc_errf(err, MLC_EPARSE, "cache %s: checksum mismatch (corrupt file)", path);
    return MLC_OK;
}

/* The subspace's arrays for the header's sizes, and its sizes and statistics; 0 when out of
 * memory. */
static int alloc_subspace(mlc_subspace *out, const cache_header *ch) {
    size_t snv = (size_t)ch->nv, snt = (size_t)ch->nt, sw = (size_t)ch->w, sm = (size_t)ch->m;
    out->W = mlc_malloc(snv * sw * sizeof(double));
    out->skin_eval = mlc_malloc(sw * sizeof(double));
    out->D = mlc_malloc(3 * snv * sm * sizeof(double));
    out->vib_eval = mlc_malloc(sm * sizeof(double));
    out->grad_max = mlc_malloc(sm * sizeof(double));
    out->mode_index = mlc_malloc(sm * sizeof(int));
    out->mode_region = mlc_malloc(sm * sizeof(int));
    out->vib_frac = mlc_malloc(sm * sizeof(double));
    out->cluster = mlc_malloc(snt * sizeof(int));
    out->acluster = mlc_malloc(snt * sizeof(int));
    out->samples = mlc_malloc((size_t)(ch->ns ? ch->ns : 1) * sizeof(int));
    out->nv = ch->nv;
    out->nt = ch->nt;
    out->w = ch->w;
    out->m = ch->m;
    out->ncp = ch->ncp;
    out->nca = ch->nca;
    out->ns = ch->ns;
    out->skin_solves = ch->skin_solves;
    out->vib_solves = ch->vib_solves;
    out->nregions = ch->nregions;
    return out->W && out->skin_eval && out->D && out->vib_eval && out->grad_max &&
           out->mode_index && out->mode_region && out->vib_frac && out->cluster && out->acluster &&
           out->samples;
}

/* Copy the payload after the fixed header (byte 64 on) into *out; a format without local-mode
 * fields reads as none (weights 0, every mode global), one without cluster_seed (1 and 2) as
 * clusters of an unknown seed (cluster_seed_known 0). */
static void unpack(mlc_subspace *out, const unsigned char *buf, int local, int seeded) {
    size_t snv = (size_t)out->nv, snt = (size_t)out->nt, sw = (size_t)out->w, sm = (size_t)out->m;
    const unsigned char *q = buf + 64;
    q = get(q, out->rigid_eval, sizeof out->rigid_eval);
    double t[4];
    q = get(q, t, sizeof t);
    out->t_skinning = t[0];
    out->t_vibration = t[1];
    out->t_clusters = t[2];
    out->t_samples = t[3];
    q = get(q, out->ordering, sizeof out->ordering);
    out->ordering[sizeof out->ordering - 1] = '\0';
    out->cluster_seed = 0;
    out->cluster_seed_known = seeded;
    if (seeded) q = get(q, &out->cluster_seed, 8);
    double lw[4] = {0, 0, 0, 0};
    if (local) q = get(q, lw, sizeof lw);
    out->local_weight = lw[0];
    out->t_local = lw[1];
    out->local_gram_min = lw[2];
    out->local_spread_max = lw[3];
    q = get(q, out->W, snv * sw * sizeof(double));
    q = get(q, out->skin_eval, sw * sizeof(double));
    q = get(q, out->D, 3 * snv * sm * sizeof(double));
    q = get(q, out->vib_eval, sm * sizeof(double));
    q = get(q, out->grad_max, sm * sizeof(double));
    if (local)
        q = get(q, out->vib_frac, sm * sizeof(double));
    else
        memset(out->vib_frac, 0, sm * sizeof(double));
    q = get(q, out->mode_index, sm * sizeof(int));
    if (local) {
        q = get(q, out->mode_region, sm * sizeof(int));
    } else {
        for (size_t i = 0; i < sm; i++)
            out->mode_region[i] = -1;
    }
    q = get(q, out->cluster, snt * sizeof(int));
    q = get(q, out->acluster, snt * sizeof(int));
    get(q, out->samples, (size_t)out->ns * sizeof(int));
}

/* Refuse labels out of range and numbers that are not finite: a cache this program wrote has
 * neither, and a NaN would only show up much later as a rollout blowing up, far from its cause. */
static mlc_status check_contents(const mlc_subspace *out, const char *path, mlc_err *err) {
    size_t snv = (size_t)out->nv, snt = (size_t)out->nt, sw = (size_t)out->w, sm = (size_t)out->m;
    const double lw[4] = {out->local_weight, out->t_local, out->local_gram_min,
                          out->local_spread_max};
    if (!labels_ok(out->cluster, snt, out->ncp) || !labels_ok(out->acluster, snt, out->nca) ||
        !labels_ok(out->samples, (size_t)out->ns, out->nv) ||
        !labels_ok(out->mode_index, sm, 1 << 20) ||
        !regions_ok(out->mode_region, sm, out->nregions))
        return mlc_errf(err, MLC_EPARSE, "cache %s: corrupt contents (label out of range)", path);
    if (!mlc_all_finite(out->W, snv * sw) || !mlc_all_finite(out->skin_eval, sw) ||
        !mlc_all_finite(out->D, 3 * snv * sm) || !mlc_all_finite(out->vib_eval, sm) ||
        !mlc_all_finite(out->grad_max, sm) || !mlc_all_finite(out->rigid_eval, 6) ||
        !mlc_all_finite(out->vib_frac, sm) || !mlc_all_finite(lw, 4))
        return mlc_errf(err, MLC_EPARSE, "cache %s: corrupt contents (a number is not finite)",
                        path);
    return MLC_OK;
}

mlc_status mlc_subspace_cache_read(const char *path, uint64_t key, mlc_subspace *out,
                                   mlc_err *err) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return mlc_errf(err, MLC_EIO, "cache %s: cannot open: %s", path, strerror(errno));
    unsigned char *buf = NULL;
    unsigned char hdr[CACHE_HEADER];
    cache_header ch = {0};
    mlc_status st;
    if ((st = read_header(f, path, key, hdr, &ch, err)) == MLC_OK &&
        (st = check_sizes(path, &ch, err)) == MLC_OK &&
        (st = read_checked(f, path, hdr, ch.total, &buf, err)) == MLC_OK) {
        if (!alloc_subspace(out, &ch)) {
            st = mlc_errf(err, MLC_ENOMEM, "cache %s: out of memory", path);
        } else {
            unpack(out, buf, ch.local, ch.seeded);
            st = check_contents(out, path, err);
        }
    }
    fclose(f);
    mlc_free(buf);
    if (st != MLC_OK) mlc_subspace_free(out);
    return st;
}

mlc_status mlc_subspace_cache_load(const char *path, const mlc_mesh *mesh, const mlc_fem *fem,
                                   const mlc_subspace_settings *settings, mlc_subspace *out,
                                   mlc_err *err) {
    mlc_status st = mlc_subspace_cache_read(path, mlc_subspace_cache_key(mesh, settings), out, err);
    if (st != MLC_OK) return st;
    if (out->cluster_seed_known && out->cluster_seed == settings->seed) return MLC_OK;
    if ((st = mlc_subspace_recluster(mesh, fem, settings, out, err)) != MLC_OK)
        mlc_subspace_free(out);
    return st;
}
