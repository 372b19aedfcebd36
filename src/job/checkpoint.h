/* checkpoint.h: optimize's checkpoint (OUT/checkpoint.bin, read by `optimize --resume`): the
 * history so far and the complete CMA-ES state, tied to the configuration that produced them.
 * optimize writes it after a generation when a second or more has passed since the last write,
 * and always when its generations end (budget, stop criterion, SIGINT/SIGTERM or an error), so
 * a run killed outright loses at most about a second of generations, which --resume redoes
 * bit for bit.
 *
 * Format (native byte order): the magic "MLCCKPT5", the configuration fingerprint (8 bytes),
 * the number of history rows (8 bytes), the rows as raw mlc_history_row bytes, the length of
 * the optimizer state (8 bytes), the state (mlc_cmaes_save), the length of the job's own state
 * (8 bytes, may be 0), that state (opaque here: optimize's candidates for its full-space
 * validation), and an FNV-1a checksum (mlc_hash64) of everything before it. A change of
 * mlc_history_row or of the optimizer state's format is a new magic (4: the optimizer's
 * diagonal phase; 5: the job's state); an earlier format is refused with a message saying so. */
#ifndef MODALLOCO_CHECKPOINT_H
#define MODALLOCO_CHECKPOINT_H

#include <stdint.h>

#include "base.h"
#include "cmaes.h"
#include "config.h"

/* One generation of optimize's history (a history.csv row). Stored byte for byte in the
 * checkpoint, so a run continued with --resume writes the same history. */
typedef struct mlc_history_row {
    int generation;
    long evaluations;
    double best_J;   /* best of this generation */
    double median_J; /* median of this generation */
    double sigma;
    double best_ever_J;
    int failed;     /* nominal rollouts of this generation's candidates that blew up */
    double seconds; /* wall clock since the run started (not reproducible) */
    double mean_J;  /* score of the distribution mean this generation sampled around */
    long rollouts;  /* rollouts so far: candidates, means and replays (the run's cost) */
    int restart;    /* restarts before this generation's run (0: the first run) */
    int population; /* candidates of this generation */
} mlc_history_row;

/* What a checkpoint must match to be resumed: a hash of the configuration with output.dir and
 * parallel.threads cleared (everything that changes results, and nothing that does not). */
uint64_t mlc_checkpoint_fingerprint(const mlc_config *cfg);

/* A checkpoint's bytes, encoded in memory: optimize encodes one after every generation (cheap)
 * and writes the latest to disk only now and then (the write and its fsyncs are not). data is
 * owned (mlc_free), len bytes of cap. */
typedef struct mlc_checkpoint_bytes {
    unsigned char *data;
    size_t len, cap;
} mlc_checkpoint_bytes;

/* Encode the history (nhist rows), the optimizer state and the job's state (`job`, job_len
 * bytes; NULL when 0) into b, replacing what it held. */
mlc_status mlc_checkpoint_encode(mlc_checkpoint_bytes *b, uint64_t fingerprint,
                                 const mlc_history_row *hist, int nhist, const mlc_cmaes *es,
                                 const void *job, size_t job_len, mlc_err *err);

/* Write encoded bytes to `path` atomically (output.h's mlc_afile): an interrupted write leaves
 * the previous checkpoint. */
mlc_status mlc_checkpoint_write(const char *path, const mlc_checkpoint_bytes *b, mlc_err *err);

/* Read the checkpoint at `path`, which must carry `fingerprint`: on success *hist (nhist rows,
 * owned, mlc_free), *es (owned, mlc_cmaes_destroy) and the job's state *job (*job_len bytes,
 * owned, mlc_free; NULL when empty; job = NULL: not wanted). Errors name the path and start
 * with "--resume: ": a missing file or a different configuration is MLC_EINVAL, anything
 * unreadable, truncated, corrupt or of an earlier format MLC_EPARSE (docs/errors.md). */
mlc_status mlc_checkpoint_read(const char *path, uint64_t fingerprint, mlc_history_row **hist,
                               int *nhist, mlc_cmaes **es, unsigned char **job, size_t *job_len,
                               mlc_err *err);

#endif
