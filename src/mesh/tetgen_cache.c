/* tetgen_cache.c: tetgen's output for one surface, kept in a file so that reading the same
 * surface again (another seed of a sweep, a rerun) restores the tets instead of running tetgen,
 * which takes about half a second on the bundled 40–60k-tet characters.
 *
 * The file keeps the .node and .ele texts tetgen wrote, byte for byte: a restored pair goes
 * through the same reader (mlc__tetgen_read) as a fresh one, so the mesh is the same bits.
 * Format (native byte order):
 *   offset  size  field
 *        0     8  magic "MLCTETS1"
 *        8     8  uint64 key (mlc__tetgen_cache_key)
 *       16     8  uint64 node_len
 *       24     8  uint64 ele_len
 *       32        node_len bytes of .node, then ele_len bytes of .ele
 *    end-8     8  uint64 FNV-1a 64 of every byte before it
 * The key covers the exact surface tetgen is given (the OFF text, after the readers' repairs),
 * its switches, and the program (path, size and modification time: an upgraded tetgen may mesh
 * differently). Anything else (a missing, foreign, stale, truncated or corrupt file) is a miss:
 * tetgen runs and the file is rewritten atomically. Failing to write is not an error. */
#include "internal/mesh_internal.h"
#include "internal/mesh_lexer.h"
#include "output.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define TETS_MAGIC "MLCTETS1"
#define TETS_HEADER 32

uint64_t mlc__tetgen_cache_key(const char *off_path, const char *prog, const char *switches) {
    char *off = NULL;
    size_t size = 0;
    struct stat sb;
    if (stat(prog, &sb) != 0 || mlc__file_load(off_path, &off, &size, NULL) != MLC_OK) return 0;
    uint64_t h = mlc_hash64(MLC_HASH_INIT, "mlc-tetgen-cache 1", 18);
    h = mlc_hash64(h, switches, strlen(switches) + 1);
    h = mlc_hash64(h, prog, strlen(prog) + 1);
    int64_t id[3] = {(int64_t)sb.st_size, (int64_t)sb.st_mtim.tv_sec, (int64_t)sb.st_mtim.tv_nsec};
    h = mlc_hash64(h, id, sizeof id);
    h = mlc_hash64(h, off, size);
    mlc_free(off);
    return h ? h : 1; /* 0 means "no key" */
}

/* Write n bytes to a new file at path; 1 on success. */
static int write_bytes(const char *path, const char *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(p, 1, n, f) == n;
    return (fclose(f) == 0) & ok;
}

int mlc__tetgen_cache_get(const char *cache, uint64_t key, const char *node_out,
                          const char *ele_out) {
    char *buf = NULL;
    size_t size = 0;
    if (!cache || !cache[0] || !key || mlc__file_load(cache, &buf, &size, NULL) != MLC_OK) return 0;
    uint64_t fkey, nlen, elen, sum;
    int ok = size >= TETS_HEADER + 8 && memcmp(buf, TETS_MAGIC, 8) == 0;
    if (ok) {
        memcpy(&fkey, buf + 8, 8);
        memcpy(&nlen, buf + 16, 8);
        memcpy(&elen, buf + 24, 8);
        memcpy(&sum, buf + size - 8, 8);
        ok = fkey == key && nlen <= size && elen <= size &&
             TETS_HEADER + nlen + elen + 8 == (uint64_t)size &&
             sum == mlc_hash64(MLC_HASH_INIT, buf, size - 8);
    }
    ok = ok && write_bytes(node_out, buf + TETS_HEADER, (size_t)nlen) &&
         write_bytes(ele_out, buf + TETS_HEADER + nlen, (size_t)elen);
    mlc_free(buf);
    return ok;
}

void mlc__tetgen_cache_put(const char *cache, uint64_t key, const char *node, const char *ele) {
    char *nb = NULL, *eb = NULL;
    size_t nlen = 0, elen = 0;
    if (!cache || !cache[0] || !key || mlc__file_load(node, &nb, &nlen, NULL) != MLC_OK ||
        mlc__file_load(ele, &eb, &elen, NULL) != MLC_OK) {
        mlc_free(nb);
        return;
    }
    unsigned char head[TETS_HEADER];
    uint64_t n64 = nlen, e64 = elen;
    memcpy(head, TETS_MAGIC, 8);
    memcpy(head + 8, &key, 8);
    memcpy(head + 16, &n64, 8);
    memcpy(head + 24, &e64, 8);
    uint64_t sum = mlc_hash64(MLC_HASH_INIT, head, sizeof head);
    sum = mlc_hash64(sum, nb, nlen);
    sum = mlc_hash64(sum, eb, elen);
    mlc_afile af = {0};
    if (mlc_afile_open(&af, cache, NULL) == MLC_OK) {
        fwrite(head, 1, sizeof head, af.fp);
        fwrite(nb, 1, nlen, af.fp);
        fwrite(eb, 1, elen, af.fp);
        fwrite(&sum, 1, 8, af.fp);
        (void)mlc_afile_commit(&af, NULL); /* a write error only loses the cache */
    }
    mlc_free(nb);
    mlc_free(eb);
}
