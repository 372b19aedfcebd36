/* cmaes.h: the built-in optimizer, a (mu/mu_w, lambda)-CMA-ES with pycma 4.4.0's defaults.
 *
 * What it is (pycma 4.4.0, docs/method.md §8):
 *  - pycma's default strategy parameters with active CMA (negative recombination weights for
 *    the covariance update only), CSA step-size control with the log-step clipped at 1;
 *  - bounds by pycma's BoundTransform: the distribution lives in an unbounded "genotype" space
 *    and every candidate is mapped into the box by a smooth piecewise quadratic/linear periodic
 *    transform. Everything this API returns (candidates, mean, best) is in bounds;
 *  - pycma's termination criteria (pycma's stop()) plus a generation/evaluation budget; with
 *    early_stop = 0 only the budget and a numerical breakdown end a run (see the setting);
 *  - an optional tie-breaker (mlc_cmaes_tell_ties): candidates with equal f are ranked by a
 *    secondary value, so a generation of equal f still moves the distribution;
 *  - IPOP or BIPOP restarts inside the object: when a run ends (any criterion except ftarget
 *    and the budget) and restarts remain, the next ask starts a new run from x0. IPOP: sigma0
 *    and the population doubled (lambda_k = floor(lambda0 * 2^k), lambda0 unrounded 4 + 3 ln n
 *    when defaulted, as pycma). BIPOP (Hansen 2009, pycma fmin2 bipop=True): "large" runs as
 *    IPOP, interleaved with "small" runs whenever the small runs have spent fewer evaluations
 *    than the large ones; a small run has lambda = floor(lambda0 (incpopsize^(L-1))^(u^2)),
 *    sigma0 10^(-2u) and at most half the large runs' evaluations (L large runs so far, u
 *    uniform from the object's own generator). The best-ever solution is kept across runs;
 *  - two restart triggers for short budgets (collapse_std, stall_generations), tested with or
 *    without early_stop: pycma's criteria rarely fire within a few hundred generations;
 *  - a private xoshiro256** generator and a self-written eigensolver (Householder + QL), so a
 *    seed gives a bit-identical run on any machine and thread count (same binary);
 *  - checkpoints: the complete state, RNG included, serializes to a byte buffer; a loaded
 *    object continues exactly as the saved one would have.
 *
 * Use (reverse communication; the caller owns the loop and may evaluate in parallel):
 *
 *     mlc_cmaes_settings s; mlc_cmaes_settings_default(&s, n);
 *     s.x0 = x0; s.sigma0 = 0.3; s.lower = lo; s.upper = hi; s.seed = 7;
 *     mlc_cmaes *es; if (mlc_cmaes_create(&s, &es, &err)) ...;
 *     while (!mlc_cmaes_stop(es, NULL)) {
 *         const double *X = mlc_cmaes_ask(es);          // n x lambda, column-major
 *         int lam = mlc_cmaes_lambda(es);
 *         for (int k = 0; k < lam; k++) f[k] = objective(X + (size_t)k * n);
 *         mlc_cmaes_tell(es, f);
 *     }
 *     use mlc_cmaes_best_x(es), mlc_cmaes_best_f(es); mlc_cmaes_destroy(es);
 *
 * NaN objective values are allowed and rank as the worst (after +inf; ties keep candidate
 * order). They never become the best-ever. With early stops on, a run where every value is NaN
 * or equal stops on "tolflatfitness" after two generations.
 *
 * Not implemented (documented deviations from pycma): mirrored sampling (pycma uses it only for
 * popsize < 6, i.e. n = 1 with the default lambda), conditioncov_alleviate (C is never rescaled;
 * tolconditioncov stops the run instead), tolfunrel (off in pycma too), timeouts.
 * tolxstagnation is tracked with an anchor: the run stops when the mean has stayed within
 * 1e-9 (Euclidean, genotype) of a point for more than 20 + 0.1 * iteration generations.
 */
#ifndef MODALLOCO_CMAES_H
#define MODALLOCO_CMAES_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

typedef struct mlc_cmaes mlc_cmaes; /* opaque */

typedef struct mlc_cmaes_settings {
    int n;                /* dimension, 1 .. 10000 */
    int lambda;           /* population of the first run; 0 = pycma default 4 + floor(3 ln n) */
    double sigma0;        /* initial step size (coordinates of x0), > 0 */
    const double *x0;     /* n: initial mean (phenotype, must be within the bounds); borrowed
                             during create only (copied) */
    const double *lower;  /* n lower bounds or NULL (no lower bounds); entries may be -INFINITY */
    const double *upper;  /* n upper bounds or NULL; entries may be +INFINITY. lower < upper */
    uint64_t seed;        /* any value (0 included) is a fixed seed */
    int max_generations;  /* budget over all runs (tell calls); 0 = unlimited. Ends everything */
    long max_evaluations; /* budget over all runs (objective values told); 0 = unlimited */
    int restarts;         /* restarts after the first run (pycma fmin2 restarts=k), <= 40; with
                             BIPOP the large runs' (small runs come on top, as pycma) */
    int bipop;            /* 0: IPOP restarts; 1: BIPOP (large and small runs interleaved) */
    double incpopsize;    /* population factor per (large) restart, default 2 */
    double ftarget;       /* stop everything when best f <= ftarget; -INFINITY disables */
    /* Per-run termination (pycma names and defaults; a value <= 0 switches a test off unless
     * noted). */
    int maxiter;              /* generations per run; 0 = pycma 100 + 150 (n+3)^2 / sqrt(lambda0) */
    double tolfun;            /* 1e-11: range of current f and of recent best f below */
    double tolfunhist;        /* 1e-12: range of recent best f (history > 9) below */
    double tolx;              /* 1e-11: all sigma sqrt(C_ii) and sigma |pc_i| below */
    double tolxstagnation;    /* 1e-9: mean stuck within this for 20 + 0.1 iter generations */
    int tolstagnation;        /* 0 = pycma int(100 + 100 n^1.5 / lambda0); < 0 off */
    double tolfacupx;         /* 1e3: some sigma sqrt(C_ii) > tolfacupx * sigma0 */
    double tolupsigma;        /* 1e20: sigma / sigma0 > tolupsigma * max sqrt(eig C) */
    double tolconditioncov;   /* 1e14: cond(C) above */
    int tolflatfitness;       /* 1: stop when best f == 75%-quantile f in more than this many
                                 consecutive generations */
    int noeffectaxis;         /* 1: mean unchanged by 0.1 sigma along principal axis (iter mod n) */
    int noeffectcoord;        /* 1: mean unchanged by 0.2 sigma sqrt(C_ii) in some coordinate */
    double maxstd_boundrange; /* 1/3: cap sigma sqrt(C_ii) at this fraction of a finite box width */
    int early_stop;           /* 1 (default): the per-run criteria above (maxiter, tolfun ...
                                 noeffectcoord, tolflatfitness) end a run and start the next
                                 IPOP restart. 0: none of them is tested; a run ends only on the
                                 budgets, ftarget or a numerical breakdown (non-finite state, a
                                 failed eigendecomposition, cond(C) > tolconditioncov, which
                                 stays on because C is then numerically singular) */
    /* Restart triggers for short budgets, tested whatever early_stop says (0 = off, the
     * default): */
    double collapse_std;   /* "collapse": sigma max_i sqrt(C_ii) below this (genotype units,
                              which are the box's inside a box) */
    int stall_generations; /* "stall": the run's best f not improved for this many tells */
    /* Separable start (pycma's CMA_diagonal = k; Ros & Hansen 2008, sep-CMA-ES): the first
     * `diagonal` generations of every run keep C diagonal (B = I, D_i = sqrt(C_ii)) and learn
     * it (n + 2)/3 times faster, from the positive weights only; then the full, active update
     * continues from that C. 0 = off (the default). In n dimensions full C learns at
     * ~2/n^2 a generation: a few hundred generations barely shape it when n is ~100, while the
     * diagonal phase scales each coordinate within tens. */
    int diagonal;
} mlc_cmaes_settings;

/* Fill `s` with the defaults for dimension n (pointers NULL, sigma0 0: caller sets x0/sigma0). */
void mlc_cmaes_settings_default(mlc_cmaes_settings *s, int n);

/* Strategy constants of the current run (tests and logs). `weights` is borrowed: lambda
 * entries, sorted best first, the first mu positive (sum 1), the rest negative (active CMA,
 * already scaled); valid until the next restart or destroy. */
typedef struct mlc_cmaes_constants {
    int n, lambda, mu;
    const double *weights;
    double mueff;       /* (sum w+)^2 / sum (w+)^2 */
    double mueff_minus; /* same for the negative weights */
    double sum_w;       /* sum of all weights */
    double sum_wneg;    /* sum of the negative weights */
    double cs, damps, cc, c1, cmu;
    double chiN;         /* E||N(0,I)|| */
    double eigen_gap;    /* generations between eigendecompositions: 1 / ((c1 + cmu) n 10) */
    double popsize_real; /* unrounded population (4 + 3 ln n when defaulted) */
    int maxiter;         /* generations of this run */
    int tolstagnation;   /* generations; 0 = off */
    int fhist_len;       /* length of the best-f history for tolfun/tolfunhist */
} mlc_cmaes_constants;

/* Validate settings, copy them, start the first run. Statuses: MLC_EINVAL (bad setting, with
 * the field named in err), MLC_ENOMEM. */
mlc_status mlc_cmaes_create(const mlc_cmaes_settings *s, mlc_cmaes **out, mlc_err *err);
void mlc_cmaes_destroy(mlc_cmaes *es); /* NULL is fine */

/* Sample a population: n x lambda column-major, inside the bounds, borrowed until the next
 * tell/destroy. Calling ask again before tell returns the same candidates (no new sampling).
 * Starts the pending IPOP restart first if the last run ended. Returns NULL when the object has
 * stopped for good or when a restart could not allocate (mlc_cmaes_stop then reports
 * "out of memory"). Cost O(lambda n^2) plus an O(n^3) eigendecomposition every eigen_gap
 * generations; no heap allocation except at a restart. */
const double *mlc_cmaes_ask(mlc_cmaes *es);

/* Population size of the current run (the number of columns ask returns). Call after ask:
 * a pending restart changes it. */
int mlc_cmaes_lambda(const mlc_cmaes *es);

/* Report the lambda objective values of the last ask's candidates (same order). Updates the
 * distribution and tests termination. MLC_EINVAL if there was no ask since the last tell. */
mlc_status mlc_cmaes_tell(mlc_cmaes *es, const double *f);

/* As tell, with a secondary value per candidate (lambda values, smaller is better, NaN worst;
 * NULL = tell): the ranking is lexicographic on (f, tie), so candidates with equal f (e.g. a
 * generation that all scores 0) are ordered by `tie` instead of by their index and the
 * distribution still moves. f alone feeds every statistic (termination, histories), so f keeps
 * its meaning. The best-ever solution is the lexicographic best as well. */
mlc_status mlc_cmaes_tell_ties(mlc_cmaes *es, const double *f, const double *tie);

/* Nonzero when finished: target reached, budget used, or the last run ended with no restart
 * left (or out of memory). `reason` (nullable) receives a static string: "ftarget",
 * "max_generations", "max_evaluations", the pycma criterion of the last run ("tolfun",
 * "tolfunhist", "tolx", "tolxstagnation", "tolstagnation", "tolfacupx", "tolupsigma",
 * "tolconditioncov", "noeffectaxis", "noeffectcoord", "tolflatfitness", "maxiter", "collapse",
 * "stall"),
 * "out of memory"; "" while running. */
int mlc_cmaes_stop(const mlc_cmaes *es, const char **reason);

const double *mlc_cmaes_best_x(const mlc_cmaes *es); /* n, best ever evaluated, in bounds
                                                        (x0 until a finite value was told) */
double mlc_cmaes_best_f(const mlc_cmaes *es);        /* +INFINITY until a non-NaN value */
const double *mlc_cmaes_mean(const mlc_cmaes *es);   /* n, distribution mean mapped into bounds */
double mlc_cmaes_sigma(const mlc_cmaes *es);
int mlc_cmaes_generation(const mlc_cmaes *es);    /* tell calls over all runs */
int mlc_cmaes_restarts_done(const mlc_cmaes *es); /* 0 in the first run */
int mlc_cmaes_run_is_small(const mlc_cmaes *es);  /* 1 in a BIPOP small run */
/* 1 when the current run has ended (a run criterion fired) and a restart is left: the next ask
 * starts it. A caller with a budget of its own may decline it (stop asking) instead. */
int mlc_cmaes_restart_pending(const mlc_cmaes *es);
long mlc_cmaes_run_evaluations(const mlc_cmaes *es); /* objective values told in this run */
long mlc_cmaes_evaluations(const mlc_cmaes *es);     /* objective values told, all runs */
int mlc_cmaes_dim(const mlc_cmaes *es);

/* Checkpoint. save: *buf is allocated with mlc_malloc (caller mlc_frees), *len its size; the
 * format is versioned, native-endian (an endian tag is checked), ends with an FNV-1a checksum,
 * and holds everything incl. settings, RNG and any outstanding population. Save/load is
 * allowed between any two calls; the loaded object continues bit-identically.
 * load: validates magic, version, checksum, every size against the buffer length and every
 * value's range before allocating; MLC_EPARSE on any mismatch (a checkpoint of another format
 * version is named as such), MLC_ENOMEM. */
mlc_status mlc_cmaes_save(const mlc_cmaes *es, unsigned char **buf, size_t *len);
mlc_status mlc_cmaes_load(const unsigned char *buf, size_t len, mlc_cmaes **out, mlc_err *err);

#endif
