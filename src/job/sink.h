/* sink.h: where a job's words go. Jobs print nothing themselves (base.h): every line meant for
 * the user (progress and notes on stderr in the program, results on stdout, the error a
 * process reports) goes through a sink, which the program points at its terminal and a test
 * at whatever it checks. */
#ifndef MODALLOCO_SINK_H
#define MODALLOCO_SINK_H

#include "base.h"
#include "credibility.h"

/* Printed by optimize and simulate when the step emulates its fused multiply-adds
 * (mlc_sim_fma_emulated). */
#define MLC_FMA_NOTE                                                                               \
    "modalloco: note: this CPU has no FMA instruction (or MLC_NO_FMA is set); the simulator "      \
    "emulates it, with the same results, about 20 times slower (docs/architecture.md)\n"

/* Every member may be NULL/0 (then that kind of text is dropped). */
typedef struct mlc_sink {
    void *user; /* passed back to every callback */
    /* Text for the user, whole lines (or, with `tty`, a progress line that starts with \r and
     * is rewritten): to_stdout 1 for results (`J ...`, `found true`), 0 for progress, notes
     * and warnings. `text` is only valid during the call. */
    void (*say)(void *user, int to_stdout, const char *text);
    /* A failure this process reports (print "modalloco: error: ..."); returns the exit code
     * for `s` (docs/errors.md). NULL: nothing is printed, the code is mlc_exit_code(s). */
    int (*fail)(void *user, mlc_status s, const mlc_err *err);
    int tty; /* progress goes to a terminal: one line rewritten in place */
} mlc_sink;

/* printf-style text through sink->say (nothing when it is NULL). */
void mlc_sink_say(const mlc_sink *sink, int to_stdout, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The credibility lines (rollout_io.h, mlc_print_credibility) as results. MLC_ENOMEM when
 * they cannot be formatted. */
mlc_status mlc_sink_credibility(const mlc_sink *sink, const mlc_credibility *c, mlc_err *err);

/* A pipeline's note (pipeline.h, mlc_pipeline.note) as "modalloco: LINE" on the progress side;
 * `sink` is the const mlc_sink * given as note_user. */
void mlc_sink_note(void *sink, const char *line);

/* Report a failure through sink->fail; returns its exit code. */
int mlc_sink_fail(const mlc_sink *sink, mlc_status s, const mlc_err *err);

#endif
