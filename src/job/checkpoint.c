/* checkpoint.c: optimize's checkpoint file, encoded after every generation and read by
 * --resume (format in checkpoint.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "checkpoint.h"
#include "output.h"

/* ---- Resume compatibility: everything that changes results, and nothing that does not -- */
uint64_t mlc_checkpoint_fingerprint(const mlc_config *cfg) {
    mlc_config c = *cfg;
    memset(c.output.dir, 0, sizeof c.output.dir);
    c.parallel.threads = 0;
    char *text = mlc_config_to_json(&c);
    uint64_t h = mlc_hash64(MLC_HASH_INIT, text ? text : "", text ? strlen(text) : 0);
    mlc_free(text);
    return h;
}

/* ---- Checkpoint: magic, fingerprint, history, CMA-ES state, checksum --------------------- */
/* The history rows are stored as raw bytes: a change of mlc_history_row is a new magic. Format 2
 * added mean_J, format 3 restart and population. */
#define CKPT_MAGIC "MLCCKPT5"
#define CKPT_MAGIC_OLD "MLCCKPT" /* + one digit: an earlier format */

/* Append `len` bytes to b, growing it geometrically. */
static int put_bytes(mlc_checkpoint_bytes *b, const void *p, size_t len) {
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        unsigned char *d = mlc_realloc(b->data, cap);
        if (!d) return 0;
        b->data = d, b->cap = cap;
    }
    memcpy(b->data + b->len, p, len);
    b->len += len;
    return 1;
}

mlc_status mlc_checkpoint_encode(mlc_checkpoint_bytes *b, uint64_t fingerprint,
                                 const mlc_history_row *hist, int nhist, const mlc_cmaes *es,
                                 const void *job, size_t job_len, mlc_err *err) {
    unsigned char *blob = NULL;
    size_t blen = 0;
    if (mlc_cmaes_save(es, &blob, &blen) != MLC_OK)
        return mlc_errf(err, MLC_ENOMEM, "out of memory saving the optimizer state");
    uint64_t n64 = (uint64_t)nhist, b64 = (uint64_t)blen, j64 = (uint64_t)job_len;
    b->len = 0;
    int ok = put_bytes(b, CKPT_MAGIC, 8) && put_bytes(b, &fingerprint, 8) &&
             put_bytes(b, &n64, 8) &&
             (!nhist || put_bytes(b, hist, (size_t)nhist * sizeof *hist)) &&
             put_bytes(b, &b64, 8) && put_bytes(b, blob, blen) && put_bytes(b, &j64, 8) &&
             (!job_len || put_bytes(b, job, job_len));
    mlc_free(blob);
    if (ok) {
        uint64_t h = mlc_hash64(MLC_HASH_INIT, b->data, b->len);
        ok = put_bytes(b, &h, 8);
    }
    if (!ok) {
        b->len = 0;
        return mlc_errf(err, MLC_ENOMEM, "out of memory encoding the checkpoint");
    }
    return MLC_OK;
}

mlc_status mlc_checkpoint_write(const char *path, const mlc_checkpoint_bytes *b, mlc_err *err) {
    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    fwrite(b->data, 1, b->len, af.fp);
    return mlc_afile_commit(&af, err);
}

mlc_status mlc_checkpoint_read(const char *path, uint64_t fingerprint, mlc_history_row **hist,
                               int *nhist, mlc_cmaes **es, unsigned char **job, size_t *job_len,
                               mlc_err *err) {
    if (job) *job = NULL, *job_len = 0;
    struct stat st;
    if (stat(path, &st) != 0)
        return mlc_errf(err, MLC_EINVAL,
                        "--resume: %s: no checkpoint there (the run was stopped "
                        "before it saved one, or this is not an optimize output directory)",
                        path);
    char *text = NULL;
    size_t nbytes = 0;
    mlc_err rerr;
    if (mlc_file_read_all(path, (size_t)1 << 30, "not a checkpoint", &text, &nbytes, &rerr) !=
        MLC_OK)
        return mlc_errf(err, MLC_EPARSE, "--resume: %s", rerr.msg);
    if (nbytes == 0) {
        mlc_free(text);
        return mlc_errf(err, MLC_EPARSE, "--resume: %s: unreadable or empty checkpoint", path);
    }
    unsigned char *buf = (unsigned char *)text;
    size_t len = nbytes;
    mlc_status s = MLC_EPARSE;
    const char *why = "truncated";
    size_t L = len, off = 0;
    uint64_t fp, n64, b64, j64, sum;
    char whybuf[200]; /* messages that name a byte offset */
    if (L >= 8 && memcmp(buf, CKPT_MAGIC_OLD, 7) == 0 && buf[7] >= '1' && buf[7] < CKPT_MAGIC[7]) {
        snprintf(whybuf, sizeof whybuf,
                 "checkpoint format %c, written by an earlier version "
                 "of modalloco; this version reads format %c and cannot continue that run "
                 "(start it again without --resume)",
                 buf[7], CKPT_MAGIC[7]);
        why = whybuf;
        goto out;
    }
    if (L < 48 || memcmp(buf, CKPT_MAGIC, 8) != 0) {
        why = "not a modalloco checkpoint";
        goto out;
    }
    memcpy(&sum, buf + L - 8, 8);
    if (mlc_hash64(MLC_HASH_INIT, buf, L - 8) != sum) {
        why = "checksum mismatch (corrupt or truncated)";
        goto out;
    }
    off = 8;
    memcpy(&fp, buf + off, 8), off += 8;
    memcpy(&n64, buf + off, 8), off += 8;
    if (n64 > (L - off) / sizeof(mlc_history_row) ||
        off + (size_t)n64 * sizeof(mlc_history_row) + 8 > L - 8) {
        snprintf(whybuf, sizeof whybuf,
                 "byte 16: the history count %" PRIu64 " needs more "
                 "bytes than the file's %zu (corrupt checkpoint)",
                 n64, L);
        why = whybuf;
        goto out;
    }
    size_t hbytes = (size_t)n64 * sizeof(mlc_history_row);
    const unsigned char *hp = buf + off;
    off += hbytes;
    memcpy(&b64, buf + off, 8), off += 8;
    /* The state, then the job state's length: 8 bytes before the checksum at least. */
    if (L - 8 - off < 8 || b64 > L - 16 - off) {
        snprintf(whybuf, sizeof whybuf,
                 "byte %zu: the optimizer state length %" PRIu64 " needs more bytes than the "
                 "file's %zu (corrupt checkpoint)",
                 off - 8, b64, L);
        why = whybuf;
        goto out;
    }
    const size_t joff = off + (size_t)b64 + 8;
    memcpy(&j64, buf + joff - 8, 8);
    if (j64 != L - 8 - joff) {
        snprintf(whybuf, sizeof whybuf,
                 "byte %zu: expected the job state length %zu, found %" PRIu64
                 " (corrupt checkpoint)",
                 joff - 8, L - 8 - joff, j64);
        why = whybuf;
        goto out;
    }
    if (fp != fingerprint) {
        s = MLC_EINVAL;
        mlc_errf(err, MLC_EINVAL,
                 "--resume: %s was written by a run with another "
                 "configuration; resume with the same configuration and settings (only "
                 "output.dir and parallel.threads may differ)",
                 path);
        mlc_free(buf);
        return s;
    }
    *hist = mlc_malloc(hbytes ? hbytes : 1);
    if (!*hist) {
        s = MLC_ENOMEM;
        why = "out of memory";
        goto out;
    }
    memcpy(*hist, hp, hbytes);
    *nhist = (int)n64;
    mlc_err cerr;
    if ((s = mlc_cmaes_load(buf + off, (size_t)b64, es, &cerr)) != MLC_OK) {
        mlc_free(*hist);
        *hist = NULL;
        why = cerr.msg;
        s = MLC_EPARSE;
        goto out;
    }
    if (job && j64 > 0) {
        if (!(*job = mlc_malloc((size_t)j64))) {
            mlc_free(*hist), *hist = NULL;
            mlc_cmaes_destroy(*es), *es = NULL;
            s = MLC_ENOMEM;
            why = "out of memory";
            goto out;
        }
        memcpy(*job, buf + joff, (size_t)j64);
        *job_len = (size_t)j64;
    }
    mlc_free(buf);
    return MLC_OK;
out:
    mlc_errf(err, s, "--resume: %s: %s", path, why);
    mlc_free(buf);
    return s;
}
