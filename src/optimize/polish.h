/* polish.h: a gradient polish after CMA-ES (docs/method.md §8, cmaes.polish): projected
 * finite-difference gradient descent with a backtracking line search inside a box.
 *
 * The search works in the normalized coordinates y = (x − lo)/(hi − lo) ∈ [0,1]^n. A step:
 *  1. central differences g_i = (f(y + δe_i) − f(y − δe_i)) / (2δ), the two points clamped to
 *     the box (then divided by their actual distance), δ = MLC_POLISH_DELTA: 2n points;
 *  2. direction d = −g with the components that would leave the box at a bound set to 0,
 *     normalized (‖d‖₂ = 1); d = 0 ends the polish;
 *  3. backtracking line search along d: the L = MLC_POLISH_LINE points y + α 2^{−l} d
 *     (l = 0..L−1, each clamped to the box) are scored together; the best of them replaces y
 *     if it is strictly better than f(y) (then α becomes twice the accepted length when the
 *     longest was accepted, else the accepted length); otherwise α shrinks by 2^L and the step
 *     is repeated from the same gradient point; α below δ ends the polish.
 * Only strict improvements are taken, so the result is never worse than the start. Every batch
 * of points goes to the caller's evaluator at once (which may score them in parallel); the
 * polish itself is sequential, so its result is a pure function of the evaluator's values.
 */
#ifndef MODALLOCO_POLISH_H
#define MODALLOCO_POLISH_H

#include "base.h"

#define MLC_POLISH_DELTA 1e-3 /* finite-difference step, normalized units */
#define MLC_POLISH_STEP0 0.05 /* first line-search length, normalized units */
#define MLC_POLISH_LINE 8     /* line-search points per batch */

/* Score npts points (columns of X, n × npts, in the caller's coordinates) into f. Non-finite
 * values count as +∞. */
typedef void (*mlc_polish_eval)(void *user, const double *X, int npts, double *f);

typedef struct mlc_polish_report {
    int steps;        /* gradient evaluations done */
    int accepted;     /* line searches that improved */
    long evaluations; /* points scored (the start included) */
    double f_before;  /* f(x0) */
    double f_after;   /* f(x_out) ≤ f_before */
} mlc_polish_report;

/* What is polished: f over the box lo ≤ x ≤ hi (n values each, lo < hi per coordinate; borrowed
 * for the call), scored by `eval` with `user`, for at most `steps` gradient steps. */
typedef struct mlc_polish_def {
    int n;
    const double *lo, *hi;
    int steps;
    mlc_polish_eval eval;
    void *user;
} mlc_polish_def;

/* Polish x0 (n values inside the box). f0 is f(x0) when known, NaN to have it scored. x_out
 * receives the result; `trail` (may be NULL; capacity (steps + 1) × n) receives x0 and then
 * every accepted point in order, *ntrail their count, so a caller can fall back along it.
 * Errors: MLC_ENOMEM. */
mlc_status mlc_polish_run(const mlc_polish_def *def, const double *x0, double f0, double *x_out,
                          double *trail, int *ntrail, mlc_polish_report *rep, mlc_err *err);

#endif
