/* fuzz_checkpoint.c: libFuzzer target for the optimize checkpoint reader (checkpoint.bin,
 * read by `optimize --resume`, checkpoint.h). As in fuzz_cache.c the fingerprint is taken from the
 * input (bytes 8..15) and the trailing FNV checksum is recomputed, so the fuzzer reaches the
 * history and optimizer-state parsing. A checkpoint that loads is then driven for a few
 * generations, as a resumed run would. */
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t fp = 0;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    if (size >= 16) memcpy(&fp, copy + 8, 8);
    if (size >= 40) {
        uint64_t sum = mlc_hash64(MLC_HASH_INIT, copy, size - 8);
        memcpy(copy + size - 8, &sum, 8);
    }
    const char *path = fuzz_write("in.bin", copy, size);
    free(copy);
    long live = mlc_alloc_live();
    mlc_history_row *hist = NULL;
    int nhist = 0;
    mlc_cmaes *es = NULL;
    mlc_err err = {0};
    unsigned char *job = NULL;
    size_t job_len = 0;
    mlc_status st = mlc_checkpoint_read(path, fp, &hist, &nhist, &es, &job, &job_len, &err);
    mlc_free(job);
    fuzz_check_msg(st, &err, "checkpoint");
    if (st != MLC_OK && st != MLC_EPARSE && st != MLC_EINVAL) abort();
    if (st == MLC_OK) {
        int n = mlc_cmaes_dim(es);
        for (int gen = 0; gen < 3 && !mlc_cmaes_stop(es, NULL); gen++) {
            const double *X = mlc_cmaes_ask(es);
            if (!X) break;
            int lam = mlc_cmaes_lambda(es);
            double *f = malloc((size_t)lam * sizeof(double));
            if (!f) abort();
            for (int j = 0; j < lam; j++) {
                f[j] = 0;
                for (int i = 0; i < n; i++)
                    f[j] += X[(size_t)j * n + i] * X[(size_t)j * n + i];
            }
            mlc_cmaes_tell(es, f);
            free(f);
        }
    }
    mlc_cmaes_destroy(es);
    mlc_free(hist);
    fuzz_check_live(live, "checkpoint");
    return 0;
}
