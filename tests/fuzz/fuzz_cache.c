/* fuzz_cache.c: libFuzzer target for the precompute cache reader (mlc_subspace_cache_read).
 * A random file almost never carries the right key and FNV checksum, which would stop the
 * fuzzer at the first checks; so the harness reads the key from the input (bytes 16..23)
 * and, for inputs of at least 168 bytes, overwrites the last 8 bytes with the checksum of the
 * rest. The key and checksum checks themselves are covered by tests/test_regress.c. */
#include "fuzz_util.h"
#include "subspace.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t key = 0;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    if (size >= 24) memcpy(&key, copy + 16, 8);
    if (size >= 168) {
        uint64_t sum = mlc_hash64(MLC_HASH_INIT, copy, size - 8);
        memcpy(copy + size - 8, &sum, 8);
    }
    const char *path = fuzz_write("in.cache", copy, size);
    free(copy);
    long live = mlc_alloc_live();
    mlc_subspace s;
    mlc_err err = {0};
    mlc_status st = mlc_subspace_cache_read(path, key, &s, &err);
    fuzz_check_msg(st, &err, "cache");
    if (st != MLC_OK && st != MLC_EPARSE && st != MLC_EIO) abort();
    if (st == MLC_OK) {
        /* What the simulator relies on: labels in range, finite data. */
        for (int i = 0; i < s.nt; i++)
            if (s.cluster[i] < 0 || s.cluster[i] >= s.ncp || s.acluster[i] < 0 ||
                s.acluster[i] >= s.nca)
                abort();
        for (int i = 0; i < s.ns; i++)
            if (s.samples[i] < 0 || s.samples[i] >= s.nv) abort();
        for (size_t i = 0; i < (size_t)s.nv * (size_t)s.w; i++)
            if (!isfinite(s.W[i])) abort();
        for (size_t i = 0; i < 3 * (size_t)s.nv * (size_t)s.m; i++)
            if (!isfinite(s.D[i])) abort();
    }
    mlc_subspace_free(&s);
    fuzz_check_live(live, "cache");
    return 0;
}
