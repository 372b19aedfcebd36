/* cmaes.c: (mu/mu_w, lambda)-CMA-ES with active covariance update, pycma 4.4.0's defaults
 * and constants, its BoundTransform bounds, its termination criteria, IPOP and BIPOP restarts, a
 * lazy eigendecomposition (mlc_symeig, symeig.c), and exact checkpoints.
 *
 * One generation (pycma's notation, C = B D^2 B^T, genotype space):
 *   ask:  z_k ~ N(0, I), y_k = B D z_k, x_k = m + sigma y_k, candidate = T(x_k) (T: box map)
 *   tell: sort by f; m' = m + sigma sum_{i<=mu} w_i y_i:lambda;
 *         ps = (1-cs) ps + sqrt(cs(2-cs)mueff) B sum w_i z_i   (= C^{-1/2} (m'-m)/sigma)
 *         hsig = |ps|^2 / (1-(1-cs)^(2g)) / n < 2 + 4/(n+1)
 *         pc = (1-cc) pc + hsig sqrt(cc(2-cc)mueff) (m'-m)/sigma
 *         C = (1 - c1a - cmu sum w) C + c1 pc pc^T + cmu sum_i w°_i y_i y_i^T,
 *             c1a = c1 (1 - (1-hsig) cc (2-cc)), w°_i = w_i n/|z_i|^2 for w_i < 0
 *         sigma *= exp(min(1, cs/damps (|ps|/chiN - 1))); cap sigma sqrt(C_ii) at 1/3 box.
 * Using B sum w_i z_i instead of C^{-1/2} applied to the mean shift is exact here because B and
 * D do not change between an ask and its tell (decompositions happen in ask only), and
 * |C^{-1/2} y_i| = |z_i| for the same reason.
 *
 * Determinism: the only randomness is the object's mlc_rng; all reductions run in a fixed
 * order on one thread, so a seed fixes the run bit for bit (for a given binary).
 */
#include "cmaes.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "symeig.h"
#include "testing/cmaes_testing.h"

#define MLC_INF ((double)INFINITY) /* INFINITY is a float constant */

/* ---- termination codes -------------------------------------------------------------------- */
enum {
    ST_NONE = 0,
    ST_FTARGET,
    ST_MAXGEN,
    ST_MAXEVAL,
    ST_MAXITER,
    ST_TOLFUN,
    ST_TOLFUNHIST,
    ST_TOLX,
    ST_TOLXSTAG,
    ST_TOLSTAG,
    ST_TOLFACUPX,
    ST_TOLUPSIGMA,
    ST_TOLCOND,
    ST_NOEFFAXIS,
    ST_NOEFFCOORD,
    ST_FLAT,
    ST_COLLAPSE,
    ST_STALL,
    ST_NUMERIC,
    ST_NOMEM,
    ST_COUNT
};
static const char *const stop_names[ST_COUNT] = {"",
                                                 "ftarget",
                                                 "max_generations",
                                                 "max_evaluations",
                                                 "maxiter",
                                                 "tolfun",
                                                 "tolfunhist",
                                                 "tolx",
                                                 "tolxstagnation",
                                                 "tolstagnation",
                                                 "tolfacupx",
                                                 "tolupsigma",
                                                 "tolconditioncov",
                                                 "noeffectaxis",
                                                 "noeffectcoord",
                                                 "tolflatfitness",
                                                 "collapse",
                                                 "stall",
                                                 "numerical breakdown",
                                                 "out of memory"};

/* The stagnation history keeps at most this many samples (one per 5 generations); beyond it
 * the oldest half is dropped. pycma's test only reads the newest 20% anyway. */
#define HIST_MAX 100000

struct mlc_cmaes {
    /* ---- settings (copied; pointer fields of `set` are NULL) ---- */
    mlc_cmaes_settings set;
    int n;
    double *x0;      /* n, phenotype */
    double *lb, *ub; /* n, -inf/+inf where unbounded */
    double *al, *au; /* n, quadratic margin widths of the transform */
    double *xg0;     /* n, genotype of x0 (T(xg0) = x0 up to rounding) */
    int bounded;     /* some finite bound */
    double popsize0; /* unrounded population of the first run */

    /* ---- constants of the current run (functions of n, lambda, popsize_real) ---- */
    int lambda, mu;
    double popsize_real;
    double *w; /* lambda, best first */
    double mueff, mueff_minus, sum_w, sum_wneg, cs, damps, cc, c1, cmu, chiN, eigen_gap;
    int maxiter, tolstag, fhist_len, hist_cap;

    /* ---- state (all serialized) ---- */
    mlc_rng rng;
    int run;       /* restarts done */
    int run_small; /* BIPOP: the current run is a small one */
    int n_large;   /* large runs started, the first included (BIPOP's next large exponent) */
    long evals_small, evals_large; /* evaluations told in small / large runs */
    double sigma_run;              /* sigma0 of the current run */
    int run_maxiter;               /* generation cap of a BIPOP small run; 0 = none */
    double run_best;               /* best f of the current run (NaN as +inf) */
    int run_best_iter;             /* iter when run_best last improved */
    int final_stop;                /* ST_*: nonzero ends everything */
    int run_stop; /* ST_* that ended the current run; a restart is pending if !final */
    int asked;    /* population outstanding */
    long evals;
    int gen;  /* tells, all runs */
    int iter; /* tells, this run */
    double sigma;
    double *m, *ps, *pc;     /* n each, genotype */
    double *C;               /* n x n, symmetric, both triangles kept */
    double *B;               /* n x n, eigenvectors in columns */
    double *D;               /* n, sqrt of the eigenvalues, ascending */
    int eig_iter;            /* iter of the last decomposition */
    int c_dirty;             /* C changed since */
    double cond;             /* max/min eigenvalue at the last decomposition */
    double *Z, *Y, *XG, *XP; /* n x lambda: z, y = B D z, genotype, phenotype */
    double *best_x;          /* n */
    double best_f;
    double best_g; /* secondary value of best_x (tell_ties), +inf without */
    long best_eval;
    double *mean_p; /* n, T(m) */
    double *fhist;  /* fhist_len: ring of best f per generation */
    int fhist_n, fhist_pos;
    double *hbest, *hmed; /* hist_cap: best/median f every 5th generation, oldest first */
    int hist_n;
    int stag_flag;  /* tolstagnation window condition at the last sample */
    double *anchor; /* n: reference mean for tolxstagnation */
    int anchor_iter;
    int flat_count;

    /* ---- scratch (not serialized) ---- */
    double *fs, *fsort; /* lambda */
    double *gs;         /* lambda: secondary values of this tell, NaN -> +inf */
    int *idx, *idx2;    /* lambda */
    double *work;       /* 3n */
    double *hwork;      /* hist_cap */
};

/* ---- small helpers ------------------------------------------------------------------------ */
static double *dalloc(size_t n) {
    return (double *)mlc_malloc(n * sizeof(double));
}

/* Margin width of the lin-quad transform: pycma's margin_width2. */
static double margin(double b, double width) {
    double m = fmax(1.0, fabs(b)) / 20.0;
    return isfinite(width) ? fmin(width / 2.0, m) : m;
}

/* BoundTransform: identity inside [lb+al, ub-au], quadratic on the margins (lb-al -> lb),
 * reflected/periodic beyond (period 2 (ub - lb + al + au)). The result is clamped so rounding
 * can never leave the box. */
static double to_box(double x, double lb, double ub, double al, double au) {
    int hl = isfinite(lb), hu = isfinite(ub);
    if (!hl && !hu) return x;
    if (hl && hu) {
        double w = ub - lb;
        double s = lb - 2.0 * al - w / 2.0;
        if (x < s || x > ub + 2.0 * au + w / 2.0) {
            double r = 2.0 * (w + al + au);
            x -= r * floor((x - s) / r);
        }
        if (x > ub + au) x -= 2.0 * (x - ub - au);
        if (x < lb - al) x += 2.0 * (lb - al - x);
    } else if (hl) {
        if (x < lb - al) x += 2.0 * (lb - al - x);
    } else {
        if (x > ub + au) x -= 2.0 * (x - ub - au);
    }
    double y = x;
    if (hl && x < lb + al) {
        double t = x - (lb - al);
        y = lb + t * t / (4.0 * al);
    } else if (hu && x > ub - au) {
        double t = x - (ub + au);
        y = ub - t * t / (4.0 * au);
    }
    if (hl && y < lb) y = lb;
    if (hu && y > ub) y = ub;
    return y;
}

/* Inverse of to_box on [lb, ub] (branch nearest the box), for x0. */
static double from_box(double y, double lb, double ub, double al, double au) {
    if (isfinite(lb) && y < lb + al) return lb - al + 2.0 * sqrt(al * (y - lb));
    if (isfinite(ub) && y > ub - au) return ub + au - 2.0 * sqrt(au * (ub - y));
    return y;
}

static void map_to_box(const mlc_cmaes *es, const double *xg, double *xp) {
    if (!es->bounded) {
        memcpy(xp, xg, (size_t)es->n * sizeof(double));
        return;
    }
    for (int i = 0; i < es->n; i++)
        xp[i] = to_box(xg[i], es->lb[i], es->ub[i], es->al[i], es->au[i]);
}

/* E|N(0,I)|: exact for n <= 6, pycma's expansion above (pycma 4.4.0's constants). The exact
 * value √2 Γ((n+1)/2)/Γ(n/2) by its recurrence χ_n = χ_{n−2} (n−1)/(n−2) from χ_1 = √(2/π) and
 * χ_2 = √(π/2): square roots and divisions only, so no lgamma of the C library. */
static double chi_n(int n) {
    double N = n;
    if (n <= 6) {
        double chi = n % 2 ? sqrt(2.0 / MLC_PI) : sqrt(MLC_PI / 2.0);
        for (int k = n % 2 ? 3 : 4; k <= n; k += 2)
            chi = chi * (k - 1) / (k - 2);
        return chi;
    }
    return sqrt(N) * (1.0 - 1.0 / (4.0 * N) + 1.0 / (26.0 * N * N));
}

/* b^e for an integer e ≥ 0 by squaring (multiplications only, see detmath.h). */
static double pow_int(double b, long e) {
    double r = 1.0;
    for (; e > 0; e >>= 1, b *= b)
        if (e & 1) r *= b;
    return r;
}

/* ---- strategy constants ------------------------------------------------------------------- */
static void compute_constants(mlc_cmaes *es) {
    int lam = es->lambda;
    double N = es->n;
    es->mu = lam / 2;
    double *w = es->w;
    double spos = 0, sneg = 0, s2pos = 0, s2neg = 0;
    for (int i = 0; i < lam; i++) {
        w[i] = mlc_log((lam + 1) / 2.0) - mlc_log(i + 1.0);
        if (i < es->mu) {
            spos += w[i];
        } else {
            sneg += w[i];
            s2neg += w[i] * w[i];
        }
    }
    for (int i = 0; i < es->mu; i++) {
        w[i] /= spos;
        s2pos += w[i] * w[i];
    }
    es->mueff = 1.0 / s2pos;
    es->mueff_minus = s2neg > 0 ? sneg * sneg / s2neg : 0.0;
    double mueff = es->mueff;
    es->c1 = 2.0 * fmin(1.0, lam / 6.0) / ((N + 1.3) * (N + 1.3) + mueff);
    es->cmu = fmin(1.0 - es->c1,
                   2.0 * (0.25 + mueff - 2.0 + 1.0 / mueff) / ((N + 2.0) * (N + 2.0) + mueff));
    es->cs = (mueff + 2.0) / (N + mueff + 3.0);
    es->damps = 1.0 + 2.0 * fmax(0.0, sqrt((mueff - 1.0) / (N + 1.0)) - 1.0) + es->cs;
    es->cc = (4.0 + mueff / N) / (N + 4.0 + 2.0 * mueff / N);
    es->chiN = chi_n(es->n);
    /* Active weights: normalize the negative ones to sum -1, then scale to -alpha. */
    double alpha = fmin(1.0 + es->c1 / es->cmu, fmin(1.0 + 2.0 * es->mueff_minus / (mueff + 2.0),
                                                     (1.0 - es->c1 - es->cmu) / (N * es->cmu)));
    es->sum_wneg = 0;
    for (int i = es->mu; i < lam; i++) {
        if (sneg < 0) w[i] = w[i] / -sneg * alpha;
        es->sum_wneg += w[i];
    }
    es->sum_w = 1.0 + es->sum_wneg;
    es->eigen_gap = 1.0 / ((es->c1 + es->cmu) * N * 10.0);
    double mi = 100.0 + 150.0 * (N + 3.0) * (N + 3.0) / sqrt(es->popsize_real);
    es->maxiter = es->set.maxiter > 0 ? es->set.maxiter : (mi < 2e9 ? (int)floor(mi) : 2000000000);
    if (es->set.tolstagnation < 0) {
        es->tolstag = 0;
    } else if (es->set.tolstagnation > 0) {
        es->tolstag = es->set.tolstagnation;
    } else {
        double ts = 100.0 + 100.0 * (N * sqrt(N)) / es->popsize_real; /* N^1.5 */
        es->tolstag = ts < 2e9 ? (int)ts : 2000000000;
    }
    es->fhist_len = 10 + (int)ceil(30.0 * N / lam);
    es->hist_cap = es->maxiter / 5 + 2 < HIST_MAX ? es->maxiter / 5 + 2 : HIST_MAX;
}

/* ---- allocation ---------------------------------------------------------------------------- */
static void free_run_arrays(mlc_cmaes *es) {
    mlc_free(es->w);
    mlc_free(es->Z);
    mlc_free(es->Y);
    mlc_free(es->XG);
    mlc_free(es->XP);
    mlc_free(es->fs);
    mlc_free(es->fsort);
    mlc_free(es->gs);
    mlc_free(es->idx);
    mlc_free(es->idx2);
    mlc_free(es->fhist);
    mlc_free(es->hbest);
    mlc_free(es->hmed);
    mlc_free(es->hwork);
    es->w = es->Z = es->Y = es->XG = es->XP = es->fs = es->fsort = es->gs = NULL;
    es->fhist = es->hbest = es->hmed = es->hwork = NULL;
    es->idx = es->idx2 = NULL;
}

/* Population of run k: the given lambda for the first run, else floor(lambda0 incpopsize^k)
 * with lambda0 unrounded (pycma's IPOP); *real (when not NULL) gets lambda0 incpopsize^k. */
static int run_lambda(const mlc_cmaes *es, int k, double *real) {
    double pr = es->popsize0;
    for (int i = 0; i < k; i++)
        pr *= es->set.incpopsize;
    int lam = k == 0 && es->set.lambda > 0 ? es->set.lambda : (int)floor(pr);
    if (real) *real = pr;
    return lam < 2 ? 2 : lam;
}

/* What a run starts with: its population (rounded and unrounded), step size, generation cap
 * (0 = the usual maxiter) and regime. */
typedef struct run_plan {
    int lambda;
    double popsize_real;
    double sigma;
    int maxiter;
    int small;
} run_plan;

/* The plan of run k: IPOP's (and BIPOP's large runs') population lambda0 incpopsize^j, sigma0;
 * j = k for IPOP, the number of large runs so far for BIPOP. BIPOP (Hansen 2009; pycma fmin2
 * bipop=True, CMAES.md §7) starts a small run instead while the small runs have spent fewer
 * evaluations than the large ones: lambda = floor(lambda0 (incpopsize^(L-1))^(u^2)),
 * sigma0 10^(-2u), at most min(maxiter, half the large runs' evaluations / lambda)
 * generations, with u uniform from the object's generator (so a seed fixes the schedule). */
static void plan_run(mlc_cmaes *es, int k, run_plan *p) {
    p->sigma = es->set.sigma0;
    p->maxiter = 0;
    p->small = 0;
    if (k == 0 || !es->set.bipop) {
        p->lambda = run_lambda(es, k, &p->popsize_real);
        if (k == 0 && es->set.lambda > 0) p->popsize_real = (double)es->set.lambda;
        return;
    }
    if (es->evals_small < es->evals_large) {
        double u = mlc_rng_uniform(&es->rng);
        /* Own exp/log, not the C library's pow: a BIPOP schedule is the same on every CPU. */
        double mult = pow_int(es->set.incpopsize, es->n_large - 1);
        p->popsize_real = es->popsize0 * mlc_exp(u * u * mlc_log(mult));
        p->lambda = (int)floor(p->popsize_real);
        if (p->lambda < 2) p->lambda = 2;
        p->sigma = es->set.sigma0 * mlc_exp(-2.0 * u * mlc_log(10.0));
        double cap = 0.5 * (double)es->evals_large / p->lambda;
        p->maxiter = cap < 1 ? 1 : cap < 2e9 ? (int)cap : 2000000000;
        p->small = 1;
        return;
    }
    p->popsize_real = es->popsize0;
    for (int i = 0; i < es->n_large; i++)
        p->popsize_real *= es->set.incpopsize;
    p->lambda = (int)floor(p->popsize_real);
    if (p->lambda < 2) p->lambda = 2;
}

/* Start run k (0 = first) by plan p: population, constants, fresh distribution at x0.
 * Allocates the population-sized arrays (the only allocation after create). */
static mlc_status start_run(mlc_cmaes *es, int k, const run_plan *p) {
    int n = es->n;
    int lam = p->lambda;
    free_run_arrays(es);
    es->lambda = lam;
    es->popsize_real = p->popsize_real;
    size_t nl = (size_t)n * (size_t)lam;
    es->w = dalloc((size_t)lam);
    if (!es->w) return MLC_ENOMEM;
    compute_constants(es);
    es->Z = dalloc(nl);
    es->Y = dalloc(nl);
    es->XG = dalloc(nl);
    es->XP = dalloc(nl);
    es->fs = dalloc((size_t)lam);
    es->fsort = dalloc((size_t)lam);
    es->gs = dalloc((size_t)lam);
    es->idx = (int *)mlc_malloc((size_t)lam * sizeof(int));
    es->idx2 = (int *)mlc_malloc((size_t)lam * sizeof(int));
    es->fhist = dalloc((size_t)es->fhist_len);
    es->hbest = dalloc((size_t)es->hist_cap);
    es->hmed = dalloc((size_t)es->hist_cap);
    es->hwork = dalloc((size_t)es->hist_cap);
    if (!es->Z || !es->Y || !es->XG || !es->XP || !es->fs || !es->fsort || !es->gs || !es->idx ||
        !es->idx2 || !es->fhist || !es->hbest || !es->hmed || !es->hwork)
        return MLC_ENOMEM;
    memset(es->Z, 0, nl * sizeof(double));
    memset(es->Y, 0, nl * sizeof(double));
    memset(es->XG, 0, nl * sizeof(double));
    memset(es->XP, 0, nl * sizeof(double));

    es->run = k;
    es->run_small = p->small;
    if (!p->small) es->n_large++;
    es->sigma_run = p->sigma;
    es->run_maxiter = p->maxiter;
    es->run_best = MLC_INF;
    es->run_best_iter = 0;
    es->run_stop = ST_NONE;
    es->asked = 0;
    es->iter = 0;
    es->sigma = p->sigma;
    memcpy(es->m, es->xg0, (size_t)n * sizeof(double));
    memset(es->ps, 0, (size_t)n * sizeof(double));
    memset(es->pc, 0, (size_t)n * sizeof(double));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            es->C[i + (size_t)j * n] = i == j;
            es->B[i + (size_t)j * n] = i == j;
        }
    for (int i = 0; i < n; i++)
        es->D[i] = 1.0;
    es->eig_iter = 0;
    es->c_dirty = 0;
    es->cond = 1.0;
    map_to_box(es, es->m, es->mean_p);
    es->fhist_n = es->fhist_pos = 0;
    es->hist_n = 0;
    es->stag_flag = 0;
    memcpy(es->anchor, es->m, (size_t)n * sizeof(double));
    es->anchor_iter = 0;
    es->flat_count = 0;
    return MLC_OK;
}

void mlc_cmaes_settings_default(mlc_cmaes_settings *s, int n) {
    memset(s, 0, sizeof *s);
    s->n = n;
    s->incpopsize = 2.0;
    s->ftarget = -MLC_INF;
    s->tolfun = 1e-11;
    s->tolfunhist = 1e-12;
    s->tolx = 1e-11;
    s->tolxstagnation = 1e-9;
    s->tolfacupx = 1e3;
    s->tolupsigma = 1e20;
    s->tolconditioncov = 1e14;
    s->tolflatfitness = 1;
    s->noeffectaxis = 1;
    s->noeffectcoord = 1;
    s->maxstd_boundrange = 1.0 / 3.0;
    s->early_stop = 1;
}

void mlc_cmaes_destroy(mlc_cmaes *es) {
    if (!es) return;
    free_run_arrays(es);
    mlc_free(es->x0);
    mlc_free(es->lb);
    mlc_free(es->ub);
    mlc_free(es->al);
    mlc_free(es->au);
    mlc_free(es->xg0);
    mlc_free(es->m);
    mlc_free(es->ps);
    mlc_free(es->pc);
    mlc_free(es->C);
    mlc_free(es->B);
    mlc_free(es->D);
    mlc_free(es->best_x);
    mlc_free(es->mean_p);
    mlc_free(es->anchor);
    mlc_free(es->work);
    mlc_free(es);
}

#define MAX_N 10000 /* C and B take 2 n^2 doubles: 1.6 GB at the limit */
#define MAX_LAMBDA (1 << 24)

static mlc_status check_settings(const mlc_cmaes_settings *s, mlc_err *err) {
    if (s->n < 1 || s->n > MAX_N)
        return mlc_errf(err, MLC_EINVAL, "cmaes: dimension n = %d must be in [1, %d]", s->n, MAX_N);
    int n = s->n;
    if (s->lambda != 0 && (s->lambda < 2 || s->lambda > MAX_LAMBDA))
        return mlc_errf(err, MLC_EINVAL, "cmaes: lambda = %d must be 0 (default) or >= 2",
                        s->lambda);
    if (!(s->sigma0 > 0) || !isfinite(s->sigma0))
        return mlc_errf(err, MLC_EINVAL, "cmaes: sigma0 = %g must be positive and finite",
                        s->sigma0);
    if (!s->x0) return mlc_errf(err, MLC_EINVAL, "cmaes: x0 is NULL");
    for (int i = 0; i < n; i++) {
        double lo = s->lower ? s->lower[i] : -MLC_INF, hi = s->upper ? s->upper[i] : MLC_INF;
        if (!isfinite(s->x0[i])) return mlc_errf(err, MLC_EINVAL, "cmaes: x0[%d] is not finite", i);
        if (isnan(lo) || isnan(hi) || lo == MLC_INF || hi == -MLC_INF || !(lo < hi))
            return mlc_errf(err, MLC_EINVAL,
                            "cmaes: bounds of coordinate %d are [%g, %g]; need lower < upper", i,
                            lo, hi);
        if (s->x0[i] < lo || s->x0[i] > hi)
            return mlc_errf(err, MLC_EINVAL, "cmaes: x0[%d] = %g is outside [%g, %g]", i, s->x0[i],
                            lo, hi);
    }
    if (s->max_generations < 0 || s->max_evaluations < 0 || s->maxiter < 0)
        return mlc_errf(err, MLC_EINVAL,
                        "cmaes: negative budget (max_generations, "
                        "max_evaluations or maxiter)");
    if (s->restarts < 0 || s->restarts > 40)
        return mlc_errf(err, MLC_EINVAL, "cmaes: restarts = %d must be in [0, 40]", s->restarts);
    if (s->bipop != 0 && s->bipop != 1)
        return mlc_errf(err, MLC_EINVAL, "cmaes: bipop = %d must be 0 or 1", s->bipop);
    if (!(s->collapse_std >= 0) || !isfinite(s->collapse_std))
        return mlc_errf(err, MLC_EINVAL, "cmaes: collapse_std = %g must be >= 0 and finite",
                        s->collapse_std);
    if (s->stall_generations < 0)
        return mlc_errf(err, MLC_EINVAL, "cmaes: stall_generations = %d must be >= 0",
                        s->stall_generations);
    if (s->diagonal < 0)
        return mlc_errf(err, MLC_EINVAL, "cmaes: diagonal = %d must be >= 0", s->diagonal);
    if (!(s->incpopsize >= 1.0) || !isfinite(s->incpopsize))
        return mlc_errf(err, MLC_EINVAL, "cmaes: incpopsize = %g must be >= 1", s->incpopsize);
    double p = s->lambda > 0 ? s->lambda : 4.0 + 3.0 * mlc_log((double)n);
    for (int k = 0; k < s->restarts; k++)
        p *= s->incpopsize;
    if (p > MAX_LAMBDA)
        return mlc_errf(err, MLC_EINVAL,
                        "cmaes: the last restart's population %g exceeds %d; use fewer "
                        "restarts or a smaller incpopsize",
                        p, MAX_LAMBDA);
    if (isnan(s->ftarget) || isnan(s->tolfun) || isnan(s->tolfunhist) || isnan(s->tolx) ||
        isnan(s->tolxstagnation) || isnan(s->tolfacupx) || isnan(s->tolupsigma) ||
        isnan(s->tolconditioncov) || isnan(s->maxstd_boundrange))
        return mlc_errf(err, MLC_EINVAL, "cmaes: a tolerance or ftarget is NaN");
    return MLC_OK;
}

/* Create without starting a run's state beyond run 0 (shared by create and load). */
static mlc_status create_impl(const mlc_cmaes_settings *s, mlc_cmaes **out, mlc_err *err) {
    *out = NULL;
    mlc_status st = check_settings(s, err);
    if (st) return st;
    int n = s->n;
    size_t nn = (size_t)n * (size_t)n;
    mlc_cmaes *es = (mlc_cmaes *)mlc_calloc(1, sizeof *es);
    if (!es) return mlc_errf(err, MLC_ENOMEM, "cmaes: out of memory");
    es->set = *s;
    es->set.x0 = es->set.lower = es->set.upper = NULL;
    es->n = n;
    es->x0 = dalloc((size_t)n);
    es->lb = dalloc((size_t)n);
    es->ub = dalloc((size_t)n);
    es->al = dalloc((size_t)n);
    es->au = dalloc((size_t)n);
    es->xg0 = dalloc((size_t)n);
    es->m = dalloc((size_t)n);
    es->ps = dalloc((size_t)n);
    es->pc = dalloc((size_t)n);
    es->C = dalloc(nn);
    es->B = dalloc(nn);
    es->D = dalloc((size_t)n);
    es->best_x = dalloc((size_t)n);
    es->mean_p = dalloc((size_t)n);
    es->anchor = dalloc((size_t)n);
    es->work = dalloc(3 * (size_t)n); /* eigen: 2n + n eigenvalues; tell: 3n */
    if (!es->x0 || !es->lb || !es->ub || !es->al || !es->au || !es->xg0 || !es->m || !es->ps ||
        !es->pc || !es->C || !es->B || !es->D || !es->best_x || !es->mean_p || !es->anchor ||
        !es->work) {
        mlc_cmaes_destroy(es);
        return mlc_errf(err, MLC_ENOMEM, "cmaes: out of memory (n = %d)", n);
    }
    memcpy(es->x0, s->x0, (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) {
        es->lb[i] = s->lower ? s->lower[i] : -MLC_INF;
        es->ub[i] = s->upper ? s->upper[i] : MLC_INF;
        double w = es->ub[i] - es->lb[i];
        es->al[i] = isfinite(es->lb[i]) ? margin(es->lb[i], w) : 0.0;
        es->au[i] = isfinite(es->ub[i]) ? margin(es->ub[i], w) : 0.0;
        if (isfinite(es->lb[i]) || isfinite(es->ub[i])) es->bounded = 1;
        es->xg0[i] = from_box(es->x0[i], es->lb[i], es->ub[i], es->al[i], es->au[i]);
    }
    es->popsize0 = s->lambda > 0 ? (double)s->lambda : 4.0 + 3.0 * mlc_log((double)n);
    mlc_rng_seed(&es->rng, s->seed);
    memcpy(es->best_x, es->x0, (size_t)n * sizeof(double));
    es->best_f = MLC_INF;
    es->best_g = MLC_INF;
    es->best_eval = 0;
    run_plan plan;
    plan_run(es, 0, &plan);
    if (start_run(es, 0, &plan) != MLC_OK) {
        mlc_cmaes_destroy(es);
        return mlc_errf(err, MLC_ENOMEM, "cmaes: out of memory (n = %d)", n);
    }
    *out = es;
    return MLC_OK;
}

mlc_status mlc_cmaes_create(const mlc_cmaes_settings *s, mlc_cmaes **out, mlc_err *err) {
    if (!s || !out) return mlc_errf(err, MLC_EINVAL, "cmaes: NULL settings or output");
    return create_impl(s, out, err);
}

/* ---- ask ------------------------------------------------------------------------------------ */
/* In the diagonal phase (the next tell is one of the run's first set.diagonal): B stays I and
 * D_i = sqrt(C_ii), floored as update_eigen floors the eigenvalues; O(n). */
static int diagonal_phase(const mlc_cmaes *es, int iter) {
    return iter < es->set.diagonal;
}

static void update_diagonal(mlc_cmaes *es) {
    int n = es->n;
    size_t ld = (size_t)n;
    double cmax = 0, cmin = MLC_INF;
    int finite = 1;
    for (int i = 0; i < n; i++) {
        double c = es->C[i + i * ld];
        finite &= isfinite(c) != 0;
        cmax = c > cmax ? c : cmax;
        cmin = c < cmin ? c : cmin;
    }
    if (!finite || !(cmax > 0)) { /* as a failed eigendecomposition: the run ends */
        es->run_stop = ST_NUMERIC;
        return;
    }
    double floor_ = cmax * 1e-15;
    for (int i = 0; i < n; i++) {
        double c = es->C[i + i * ld];
        es->D[i] = sqrt(c > floor_ ? c : floor_);
    }
    cmin = cmin > floor_ ? cmin : floor_;
    es->cond = cmax / cmin;
    es->eig_iter = es->iter;
    es->c_dirty = 0;
}

static void update_eigen(mlc_cmaes *es) {
    int n = es->n;
    double *evals = es->work + 2 * (size_t)n;
    /* On failure B is left inconsistent, but the run ends here (a restart resets B). */
    if (mlc_symeig(n, es->C, es->B, evals, es->work) != 0 || !isfinite(evals[0]) ||
        !isfinite(evals[n - 1])) {
        es->run_stop = ST_NUMERIC;
        return;
    }
    double emax = evals[n - 1];
    if (!(emax > 0)) {
        es->run_stop = ST_NUMERIC;
        return;
    }
    /* Active CMA can in principle push an eigenvalue to <= 0; floor it so that sampling stays
     * defined and tolconditioncov (cond > 1e14) ends the run. */
    double floor_ = emax * 1e-15;
    for (int i = 0; i < n; i++)
        es->D[i] = sqrt(evals[i] > floor_ ? evals[i] : floor_);
    es->cond = (es->D[n - 1] / es->D[0]) * (es->D[n - 1] / es->D[0]);
    es->eig_iter = es->iter;
    es->c_dirty = 0;
}

static void finish_stop(mlc_cmaes *es);

const double *mlc_cmaes_ask(mlc_cmaes *es) {
    if (!es || es->final_stop) return NULL;
    if (es->asked) return es->XP;
    if (es->run_stop) {
        run_plan plan;
        plan_run(es, es->run + 1, &plan);
        if (start_run(es, es->run + 1, &plan) != MLC_OK) {
            es->final_stop = ST_NOMEM;
            return NULL;
        }
    }
    int n = es->n, lam = es->lambda;
    size_t ld = (size_t)n;
    if (es->c_dirty && diagonal_phase(es, es->iter)) {
        update_diagonal(es); /* B is still I: C has had no off-diagonal entry */
        if (es->run_stop) {
            finish_stop(es);
            return mlc_cmaes_ask(es);
        }
    } else if (es->c_dirty && es->iter - es->eig_iter >= es->eigen_gap) {
        update_eigen(es);
        if (es->run_stop) { /* numerical breakdown: end this run, maybe restart */
            finish_stop(es);
            return mlc_cmaes_ask(es);
        }
    }
    for (int k = 0; k < lam; k++) {
        double *z = es->Z + k * ld, *y = es->Y + k * ld, *xg = es->XG + k * ld;
        for (int i = 0; i < n; i++)
            z[i] = mlc_rng_normal(&es->rng);
        for (int i = 0; i < n; i++)
            y[i] = 0.0;
        for (int j = 0; j < n; j++) {
            const double *b = es->B + j * ld;
            double t = es->D[j] * z[j];
            for (int i = 0; i < n; i++)
                y[i] += b[i] * t;
        }
        for (int i = 0; i < n; i++)
            xg[i] = es->m[i] + es->sigma * y[i];
        map_to_box(es, xg, es->XP + k * ld);
    }
    es->asked = 1;
    return es->XP;
}

/* ---- tell ------------------------------------------------------------------------------------ */
/* Rank order "a before b": smaller f; NaN after everything (+inf included); then the smaller
 * secondary value gs (NaN already mapped to +inf); stable. */
static int before(const double *fs, const double *f, const double *gs, int a, int b) {
    if (fs[a] != fs[b]) return fs[a] < fs[b];
    int na = isnan(f[a]) != 0, nb = isnan(f[b]) != 0;
    if (na != nb) return nb;
    if (gs[a] != gs[b]) return gs[a] < gs[b];
    return a < b;
}

/* Bottom-up merge sort of idx (stable, O(lambda log lambda), no allocation). */
static void rank_sort(int lam, const double *fs, const double *f, const double *gs, int *idx,
                      int *tmp) {
    for (int i = 0; i < lam; i++)
        idx[i] = i;
    int *src = idx, *dst = tmp;
    for (int width = 1; width < lam; width *= 2) {
        for (int lo = 0; lo < lam; lo += 2 * width) {
            int mid = lo + width < lam ? lo + width : lam;
            int hi = lo + 2 * width < lam ? lo + 2 * width : lam;
            int a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                dst[o++] = before(fs, f, gs, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid)
                dst[o++] = src[a++];
            while (b < hi)
                dst[o++] = src[b++];
        }
        int *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)lam * sizeof(int));
}

/* Decide what a fired run criterion means: ftarget and budgets end everything, others end the
 * run and leave a restart pending if any remain. */
static void finish_stop(mlc_cmaes *es) {
    int r = es->run_stop;
    /* BIPOP counts large runs only (pycma: irun - runs_with_small > restarts): small runs fit
     * between them and end with the last large one. */
    int last = es->set.bipop ? es->n_large > es->set.restarts : es->run >= es->set.restarts;
    if (r == ST_FTARGET || r == ST_MAXGEN || r == ST_MAXEVAL || r == ST_NOMEM || last)
        es->final_stop = r;
}

static void test_termination(mlc_cmaes *es) {
    const mlc_cmaes_settings *s = &es->set;
    int n = es->n, lam = es->lambda;
    size_t ld = (size_t)n;
    int r = ST_NONE;
    if (es->best_f <= s->ftarget)
        r = ST_FTARGET;
    else if (s->max_generations > 0 && es->gen >= s->max_generations)
        r = ST_MAXGEN;
    else if (s->max_evaluations > 0 && es->evals >= s->max_evaluations)
        r = ST_MAXEVAL;
    else if ((s->early_stop && es->iter >= es->maxiter) ||
             (es->run_maxiter > 0 && es->iter >= es->run_maxiter))
        r = ST_MAXITER;
    if (r) goto done;
    /* The short-budget restart triggers: a search whose spread has shrunk below collapse_std
     * only refines its local optimum, and one whose best has not moved for stall_generations
     * has stopped finding anything; either way the rest of the budget buys more in a new run. */
    if (s->collapse_std > 0) {
        double cmax = 0;
        for (int i = 0; i < n; i++)
            cmax = fmax(cmax, es->C[i + i * ld]);
        if (es->sigma * sqrt(cmax) < s->collapse_std) {
            r = ST_COLLAPSE;
            goto done;
        }
    }
    if (s->stall_generations > 0 && es->iter - es->run_best_iter >= s->stall_generations) {
        r = ST_STALL;
        goto done;
    }
    if (!s->early_stop) {
        /* Only the numerical breakdown test: a C this ill-conditioned is singular in double
         * precision (the eigenvalue floor of update_eigen would take over). */
        if (s->tolconditioncov > 0 && es->cond > s->tolconditioncov) r = ST_TOLCOND;
        goto done;
    }

    /* tolfun: range of this generation and of the recent best values. */
    {
        double hmin = MLC_INF, hmax = -MLC_INF;
        for (int i = 0; i < es->fhist_n; i++) {
            hmin = fmin(hmin, es->fhist[i]);
            hmax = fmax(hmax, es->fhist[i]);
        }
        double hr = hmax - hmin;
        if (s->tolfun > 0 && es->fsort[lam - 1] - es->fsort[0] < s->tolfun && hr < s->tolfun) {
            r = ST_TOLFUN;
            goto done;
        }
        if (s->tolfunhist > 0 && es->fhist_n > 9 && hr < s->tolfunhist) {
            r = ST_TOLFUNHIST;
            goto done;
        }
    }
    /* tolx: every coordinate std and every pc entry tiny. */
    if (s->tolx > 0) {
        int all = 1;
        for (int i = 0; i < n && all; i++)
            all = es->sigma * sqrt(es->C[i + i * ld]) < s->tolx &&
                  es->sigma * fabs(es->pc[i]) < s->tolx;
        if (all) {
            r = ST_TOLX;
            goto done;
        }
    }
    /* tolxstagnation (anchor form). */
    if (s->tolxstagnation > 0) {
        double d2 = 0;
        for (int i = 0; i < n; i++)
            d2 += (es->m[i] - es->anchor[i]) * (es->m[i] - es->anchor[i]);
        if (!(d2 <= s->tolxstagnation * s->tolxstagnation)) {
            memcpy(es->anchor, es->m, (size_t)n * sizeof(double));
            es->anchor_iter = es->iter;
        } else if (es->iter - es->anchor_iter > 20 + 0.1 * es->iter) {
            r = ST_TOLXSTAG;
            goto done;
        }
    }
    if (es->tolstag > 0 && es->stag_flag && es->iter > n * (5.0 + 100.0 / lam)) {
        r = ST_TOLSTAG;
        goto done;
    }
    if (s->tolfacupx > 0) {
        for (int i = 0; i < n; i++)
            if (es->sigma * sqrt(es->C[i + i * ld]) > s->tolfacupx * es->sigma_run) {
                r = ST_TOLFACUPX;
                goto done;
            }
    }
    if (s->tolupsigma > 0) {
        double dmax = es->D[n - 1]; /* ascending, but for the diagonal phase's */
        for (int i = 0; es->set.diagonal > 0 && i < n; i++)
            dmax = es->D[i] > dmax ? es->D[i] : dmax;
        if (es->sigma / es->sigma_run > s->tolupsigma * dmax) {
            r = ST_TOLUPSIGMA;
            goto done;
        }
    }
    if (s->tolconditioncov > 0 && es->cond > s->tolconditioncov) {
        r = ST_TOLCOND;
        goto done;
    }
    if (s->noeffectaxis) {
        int i = es->iter % n, same = 1;
        const double *b = es->B + (size_t)i * ld;
        double f = 0.1 * es->sigma * es->D[i];
        for (int k = 0; k < n && same; k++)
            same = es->m[k] == es->m[k] + f * b[k];
        if (same) {
            r = ST_NOEFFAXIS;
            goto done;
        }
    }
    if (s->noeffectcoord) {
        for (int i = 0; i < n; i++)
            if (es->m[i] == es->m[i] + 0.2 * es->sigma * sqrt(es->C[i + i * ld])) {
                r = ST_NOEFFCOORD;
                goto done;
            }
    }
    if (s->tolflatfitness >= 0 && es->flat_count > s->tolflatfitness) r = ST_FLAT;
done:
    if (r) {
        es->run_stop = r;
        finish_stop(es);
    }
}

mlc_status mlc_cmaes_tell(mlc_cmaes *es, const double *f) {
    return mlc_cmaes_tell_ties(es, f, NULL);
}

/* Rank this generation (NaN counts as +inf for the statistics and ranks last; ties broken by
 * `tie`) into es->idx and es->fsort, and keep the best point seen. */
static void rank_generation(mlc_cmaes *es, const double *f, const double *tie) {
    const int lam = es->lambda;
    const size_t ld = (size_t)es->n;
    for (int k = 0; k < lam; k++) {
        es->fs[k] = isnan(f[k]) ? MLC_INF : f[k];
        es->gs[k] = !tie || isnan(tie[k]) ? MLC_INF : tie[k];
    }
    rank_sort(lam, es->fs, f, es->gs, es->idx, es->idx2);
    for (int k = 0; k < lam; k++)
        es->fsort[k] = es->fs[es->idx[k]];
    int ib = es->idx[0];
    if (!isnan(f[ib]) && (f[ib] < es->best_f || (f[ib] == es->best_f && es->gs[ib] < es->best_g))) {
        es->best_f = f[ib];
        es->best_g = es->gs[ib];
        memcpy(es->best_x, es->XP + (size_t)ib * ld, ld * sizeof(double));
        es->best_eval = es->evals;
    }
}

/* The histories the termination tests read: the best values (tolflatfitness, tolfun), the
 * best and median every fifth generation (tolstagnation's flag) and the flat-fitness count. */
static void update_histories(mlc_cmaes *es) {
    const int lam = es->lambda;
    es->fhist[es->fhist_pos] = es->fsort[0];
    es->fhist_pos = (es->fhist_pos + 1) % es->fhist_len;
    if (es->fhist_n < es->fhist_len) es->fhist_n++;
    double fmed =
        lam % 2 ? es->fsort[lam / 2] : 0.5 * (es->fsort[lam / 2 - 1] + es->fsort[lam / 2]);
    if (es->iter % 5 == 0 && es->tolstag > 0) {
        if (es->hist_n == es->hist_cap) {
            int keep = es->hist_cap / 2;
            memmove(es->hbest, es->hbest + (es->hist_n - keep), (size_t)keep * sizeof(double));
            memmove(es->hmed, es->hmed + (es->hist_n - keep), (size_t)keep * sizeof(double));
            es->hist_n = keep;
        }
        es->hbest[es->hist_n] = es->fsort[0];
        es->hmed[es->hist_n] = fmed;
        es->hist_n++;
        /* Window of 2l samples (tolstagnation generations, or the newest 20% of the history):
         * stagnation when neither median improved from the older to the newer half. */
        int l = es->tolstag / 10;
        if (es->hist_n / 10 > l) l = es->hist_n / 10;
        es->stag_flag = 0;
        if (l > 0 && 2 * l < es->hist_n) {
            int hn = es->hist_n;
            double nb = mlc_median(es->hbest + hn - l, l, es->hwork);
            double ob = mlc_median(es->hbest + hn - 2 * l, l, es->hwork);
            double nm = mlc_median(es->hmed + hn - l, l, es->hwork);
            double om = mlc_median(es->hmed + hn - 2 * l, l, es->hwork);
            es->stag_flag = nb >= ob && nm >= om;
        }
    }
    int iq = (int)(0.75 * lam);
    if (iq > lam - 1) iq = lam - 1;
    es->flat_count = es->fsort[0] == es->fsort[iq] ? es->flat_count + 1 : 0;
}

/* Move the mean by the weighted best steps and update both evolution paths; returns |p_σ|² and
 * sets *hsig_out (0 holds back p_c's update while p_σ is long). */
static double update_mean_paths(mlc_cmaes *es, int *hsig_out) {
    const int n = es->n, mu = es->mu;
    const size_t ld = (size_t)n;
    const double *w = es->w;
    double *ymean = es->work, *zmean = es->work + ld, *bz = es->work + 2 * ld;
    for (int i = 0; i < n; i++)
        ymean[i] = zmean[i] = 0.0;
    for (int k = 0; k < mu; k++) {
        const double *y = es->Y + (size_t)es->idx[k] * ld, *z = es->Z + (size_t)es->idx[k] * ld;
        for (int i = 0; i < n; i++) {
            ymean[i] += w[k] * y[i];
            zmean[i] += w[k] * z[i];
        }
    }
    for (int i = 0; i < n; i++)
        es->m[i] += es->sigma * ymean[i];
    for (int i = 0; i < n; i++)
        bz[i] = 0.0;
    for (int j = 0; j < n; j++) {
        const double *b = es->B + (size_t)j * ld;
        double t = zmean[j];
        for (int i = 0; i < n; i++)
            bz[i] += b[i] * t;
    }
    double cps = sqrt(es->cs * (2.0 - es->cs) * es->mueff), psn2 = 0;
    for (int i = 0; i < n; i++) {
        es->ps[i] = (1.0 - es->cs) * es->ps[i] + cps * bz[i];
        psn2 += es->ps[i] * es->ps[i];
    }
    double N = n;
    double hden = 1.0 - pow_int(1.0 - es->cs, 2L * es->iter);
    int hsig = psn2 / hden / N < 2.0 + 4.0 / (N + 1.0);
    double cpc = hsig ? sqrt(es->cc * (2.0 - es->cc) * es->mueff) : 0.0;
    for (int i = 0; i < n; i++)
        es->pc[i] = (1.0 - es->cc) * es->pc[i] + cpc * ymean[i];
    *hsig_out = hsig;
    return psn2;
}

/* The rank-one and rank-μ update of C (negative weights scaled as pycma's active CMA), on the
 * lower triangle, then mirrored. */
static void update_covariance(mlc_cmaes *es, int hsig) {
    const int n = es->n, lam = es->lambda;
    const size_t ld = (size_t)n;
    const double *w = es->w;
    const double N = n;
    if (diagonal_phase(es, es->iter - 1)) { /* this tell's generation samples with B = I */
        /* sep-CMA-ES (Ros & Hansen 2008): the diagonal of the same update, with c1 and cmu
         * scaled by (n + 2)/3 and the positive weights only (the active update's length bound
         * is made for full C; a diagonal entry under it could turn negative at these rates). */
        double f = (N + 2.0) / 3.0, c1 = es->c1 * f, cmu = fmin(1.0 - c1, es->cmu * f);
        double c1d = c1 * (1.0 - (1 - hsig) * es->cc * (2.0 - es->cc));
        for (int i = 0; i < n; i++) {
            double rank_mu = 0;
            for (int k = 0; k < es->mu; k++) {
                double yi = es->Y[(size_t)es->idx[k] * ld + (size_t)i];
                rank_mu += w[k] * yi * yi;
            }
            double *cii = es->C + (size_t)i * (ld + 1);
            *cii = (1.0 - c1d - cmu) * *cii + c1 * es->pc[i] * es->pc[i] + cmu * rank_mu;
        }
        es->c_dirty = 1;
        return;
    }
    double c1a = es->c1 * (1.0 - (1 - hsig) * es->cc * (2.0 - es->cc));
    double fac = 1.0 - c1a - es->cmu * es->sum_w;
    for (int j = 0; j < n; j++) {
        double *col = es->C + (size_t)j * ld;
        double pj = es->c1 * es->pc[j];
        for (int i = j; i < n; i++)
            col[i] = fac * col[i] + pj * es->pc[i];
    }
    for (int k = 0; k < lam; k++) {
        double wk = w[k];
        const double *y = es->Y + (size_t)es->idx[k] * ld;
        if (wk < 0) {
            /* Negative weights scaled by n / |C^{-1/2} y|^2 = n / |z|^2 bound the length of the
             * active update (pycma 4.4.0's constants). */
            const double *z = es->Z + (size_t)es->idx[k] * ld;
            double z2 = 0;
            for (int i = 0; i < n; i++)
                z2 += z[i] * z[i];
            wk = z2 > 0 ? wk * N / z2 : 0.0;
        }
        double cw = es->cmu * wk;
        if (cw == 0.0) continue;
        for (int j = 0; j < n; j++) {
            double *col = es->C + (size_t)j * ld;
            double t = cw * y[j];
            for (int i = j; i < n; i++)
                col[i] += t * y[i];
        }
    }
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++)
            es->C[j + (size_t)i * ld] = es->C[i + (size_t)j * ld];
    es->c_dirty = 1;
}

/* The step size (log change clipped at 1, as pycma) and the box std cap. */
static void update_sigma(mlc_cmaes *es, double psn2) {
    const int n = es->n;
    const size_t ld = (size_t)n;
    es->sigma *= mlc_exp(fmin(1.0, es->cs / es->damps * (sqrt(psn2) / es->chiN - 1.0)));
    if (es->bounded && es->set.maxstd_boundrange > 0) {
        for (int i = 0; i < n; i++) {
            double width = es->ub[i] - es->lb[i];
            if (!isfinite(width)) continue;
            double cap = es->set.maxstd_boundrange * width, sd = sqrt(es->C[i + i * ld]);
            if (es->sigma * sd > cap) es->sigma = cap / sd;
        }
    }
    map_to_box(es, es->m, es->mean_p);
}

mlc_status mlc_cmaes_tell_ties(mlc_cmaes *es, const double *f, const double *tie) {
    if (!es || !f || !es->asked) return MLC_EINVAL;
    int n = es->n;
    size_t ld = (size_t)n;
    es->asked = 0;
    es->iter++;
    es->gen++;
    es->evals += es->lambda;
    if (es->run_small)
        es->evals_small += es->lambda;
    else
        es->evals_large += es->lambda;
    rank_generation(es, f, tie);
    if (es->fsort[0] < es->run_best) {
        es->run_best = es->fsort[0];
        es->run_best_iter = es->iter;
    }
    update_histories(es);
    int hsig;
    double psn2 = update_mean_paths(es, &hsig);
    update_covariance(es, hsig);
    update_sigma(es, psn2);
    int finite = isfinite(es->sigma) && es->sigma > 0;
    for (int i = 0; i < n && finite; i++)
        finite = isfinite(es->m[i]) && isfinite(es->C[i + i * ld]);
    if (!finite) {
        es->run_stop = ST_NUMERIC;
        finish_stop(es);
        return MLC_OK;
    }
    test_termination(es);
    return MLC_OK;
}

/* ---- getters -------------------------------------------------------------------------------- */
int mlc_cmaes_lambda(const mlc_cmaes *es) {
    return es->lambda;
}
int mlc_cmaes_stop(const mlc_cmaes *es, const char **reason) {
    if (reason) *reason = stop_names[es->final_stop];
    return es->final_stop != ST_NONE;
}
const char *mlc_cmaes_run_stop_reason(const mlc_cmaes *es) {
    return stop_names[es->run_stop];
}
const double *mlc_cmaes_best_x(const mlc_cmaes *es) {
    return es->best_x;
}
double mlc_cmaes_best_f(const mlc_cmaes *es) {
    return es->best_f;
}
double mlc_cmaes_best_tie(const mlc_cmaes *es) {
    return es->best_g;
}
const double *mlc_cmaes_mean(const mlc_cmaes *es) {
    return es->mean_p;
}
double mlc_cmaes_sigma(const mlc_cmaes *es) {
    return es->sigma;
}
int mlc_cmaes_generation(const mlc_cmaes *es) {
    return es->gen;
}
long mlc_cmaes_evaluations(const mlc_cmaes *es) {
    return es->evals;
}
int mlc_cmaes_restarts_done(const mlc_cmaes *es) {
    return es->run;
}
int mlc_cmaes_run_is_small(const mlc_cmaes *es) {
    return es->run_small;
}
int mlc_cmaes_restart_pending(const mlc_cmaes *es) {
    return es->run_stop != ST_NONE && es->final_stop == ST_NONE;
}
long mlc_cmaes_run_evaluations(const mlc_cmaes *es) {
    return (long)es->iter * es->lambda; /* the population is fixed within a run */
}
int mlc_cmaes_dim(const mlc_cmaes *es) {
    return es->n;
}

void mlc_cmaes_get_constants(const mlc_cmaes *es, mlc_cmaes_constants *c) {
    c->n = es->n;
    c->lambda = es->lambda;
    c->mu = es->mu;
    c->weights = es->w;
    c->mueff = es->mueff;
    c->mueff_minus = es->mueff_minus;
    c->sum_w = es->sum_w;
    c->sum_wneg = es->sum_wneg;
    c->cs = es->cs;
    c->damps = es->damps;
    c->cc = es->cc;
    c->c1 = es->c1;
    c->cmu = es->cmu;
    c->chiN = es->chiN;
    c->eigen_gap = es->eigen_gap;
    c->popsize_real = es->popsize_real;
    c->maxiter = es->maxiter;
    c->tolstagnation = es->tolstag;
    c->fhist_len = es->fhist_len;
}

/* ---- checkpoints ---------------------------------------------------------------------------- */
/* One walker serves save (sizing and writing) and load (reading), so the two can never
 * disagree on the layout. Reading never goes past `len`; every count is validated before it
 * sizes anything. */
typedef struct ser {
    unsigned char *wbuf;       /* write target, NULL while sizing */
    const unsigned char *rbuf; /* read source */
    size_t len, pos;
    int reading, bad;
} ser;

static void ser_bytes(ser *s, void *p, size_t nb) {
    if (s->bad) return;
    if (s->reading) {
        if (nb > s->len - s->pos) {
            s->bad = 1;
            return;
        }
        memcpy(p, s->rbuf + s->pos, nb);
    } else if (s->wbuf) {
        memcpy(s->wbuf + s->pos, p, nb);
    }
    s->pos += nb;
}
static void ser_int(ser *s, int *v) {
    ser_bytes(s, v, sizeof *v);
}
static void ser_long(ser *s, long *v) {
    ser_bytes(s, v, sizeof *v);
}
static void ser_dbl(ser *s, double *v) {
    ser_bytes(s, v, sizeof *v);
}
static void ser_u64(ser *s, uint64_t *v) {
    ser_bytes(s, v, sizeof *v);
}
static void ser_vec(ser *s, double *v, size_t count) {
    if (!s->bad && s->reading && count > (s->len - s->pos) / sizeof(double)) {
        s->bad = 1;
        return;
    }
    ser_bytes(s, v, count * sizeof(double));
}

#define CKPT_MAGIC "MLCCMAES"
#define CKPT_VERSION 4 /* 2: early_stop, best_g; 3: BIPOP and the restart triggers; 4: diagonal */
#define CKPT_ENDIAN 0x01020304u

/* Header and settings. On reading, fills *set and the three n-vectors (allocated here). */
static void ser_settings(ser *s, mlc_cmaes_settings *set, double **x0, double **lb, double **ub,
                         int *has_lb, int *has_ub) {
    char magic[8];
    memcpy(magic, CKPT_MAGIC, 8);
    uint32_t ver = CKPT_VERSION, endian = CKPT_ENDIAN;
    uint32_t sizes = (uint32_t)(sizeof(int) | sizeof(long) << 8 | sizeof(double) << 16);
    ser_bytes(s, magic, 8);
    ser_bytes(s, &ver, sizeof ver);
    ser_bytes(s, &endian, sizeof endian);
    ser_bytes(s, &sizes, sizeof sizes);
    if (s->reading &&
        (memcmp(magic, CKPT_MAGIC, 8) || ver != CKPT_VERSION || endian != CKPT_ENDIAN ||
         sizes != (uint32_t)(sizeof(int) | sizeof(long) << 8 | sizeof(double) << 16)))
        s->bad = 1;
    ser_int(s, &set->n);
    ser_int(s, &set->lambda);
    ser_dbl(s, &set->sigma0);
    ser_u64(s, &set->seed);
    ser_int(s, &set->max_generations);
    ser_long(s, &set->max_evaluations);
    ser_int(s, &set->restarts);
    ser_dbl(s, &set->incpopsize);
    ser_dbl(s, &set->ftarget);
    ser_int(s, &set->maxiter);
    ser_dbl(s, &set->tolfun);
    ser_dbl(s, &set->tolfunhist);
    ser_dbl(s, &set->tolx);
    ser_dbl(s, &set->tolxstagnation);
    ser_int(s, &set->tolstagnation);
    ser_dbl(s, &set->tolfacupx);
    ser_dbl(s, &set->tolupsigma);
    ser_dbl(s, &set->tolconditioncov);
    ser_int(s, &set->tolflatfitness);
    ser_int(s, &set->noeffectaxis);
    ser_int(s, &set->noeffectcoord);
    ser_dbl(s, &set->maxstd_boundrange);
    ser_int(s, &set->early_stop);
    ser_int(s, &set->bipop);
    ser_dbl(s, &set->collapse_std);
    ser_int(s, &set->stall_generations);
    ser_int(s, &set->diagonal);
    ser_int(s, has_lb);
    ser_int(s, has_ub);
    if (s->bad) return;
    if (s->reading) {
        /* Never allocate for sizes the buffer cannot hold: x0, bounds and, later, C and B
         * (n^2 each) must all be in it. */
        size_t nmax = (s->len - s->pos) / sizeof(double);
        if (set->n < 1 || set->n > MAX_N || (*has_lb != 0 && *has_lb != 1) ||
            (set->early_stop != 0 && set->early_stop != 1) || (*has_ub != 0 && *has_ub != 1) ||
            (size_t)set->n * 3 > nmax || (size_t)set->n * (size_t)set->n > nmax / 2) {
            s->bad = 1;
            return;
        }
        *x0 = dalloc((size_t)set->n);
        *lb = dalloc((size_t)set->n);
        *ub = dalloc((size_t)set->n);
        if (!*x0 || !*lb || !*ub) {
            s->bad = 2; /* out of memory */
            return;
        }
    }
    ser_vec(s, *x0, (size_t)set->n);
    ser_vec(s, *lb, (size_t)set->n);
    ser_vec(s, *ub, (size_t)set->n);
}

/* Run state. On reading, es already holds run 0 of the stored settings. */
static void ser_state(ser *s, mlc_cmaes *es) {
    int run = es->run;
    run_plan p = {es->lambda, es->popsize_real, es->sigma_run, es->run_maxiter, es->run_small};
    ser_int(s, &run);
    ser_int(s, &p.lambda);
    ser_dbl(s, &p.popsize_real);
    ser_dbl(s, &p.sigma);
    ser_int(s, &p.maxiter);
    ser_int(s, &p.small);
    if (s->bad) return;
    if (s->reading) {
        /* The run's plan: IPOP's is a function of the run index; a BIPOP plan drew a random
         * number, so only its range is known (BIPOP's small runs do not count as restarts, and
         * no run is larger than the last large one). The buffer must hold the four n x lambda
         * population arrays of that run before anything of that size is allocated. */
        int bip = es->set.bipop && run > 0, kmax = bip ? es->set.restarts : run;
        int lam = p.lambda,
            lam_ipop = run < 0 || kmax > es->set.restarts ? 0 : run_lambda(es, kmax, NULL);
        int ok = run >= 0 && (es->set.bipop || run <= es->set.restarts) && lam >= 2 &&
                 (bip ? lam <= lam_ipop : lam == lam_ipop) && isfinite(p.popsize_real) &&
                 p.popsize_real > 0 && isfinite(p.sigma) && p.sigma > 0 && p.maxiter >= 0 &&
                 (p.small == 0 || p.small == 1) && (bip || (p.small == 0 && p.maxiter == 0)) &&
                 (size_t)lam <= (s->len - s->pos) / sizeof(double) / 4 / (size_t)es->n;
        if (!ok) {
            s->bad = 1;
            return;
        }
        if ((run != es->run || lam != es->lambda || p.popsize_real != es->popsize_real ||
             p.sigma != es->sigma_run) &&
            start_run(es, run, &p) != MLC_OK) {
            s->bad = 2;
            return;
        }
    }
    int n = es->n;
    size_t nn = (size_t)n * (size_t)n, nl = (size_t)n * (size_t)es->lambda;
    ser_int(s, &es->final_stop);
    ser_int(s, &es->run_stop);
    ser_int(s, &es->asked);
    ser_long(s, &es->evals);
    ser_int(s, &es->gen);
    ser_int(s, &es->iter);
    ser_dbl(s, &es->sigma);
    ser_int(s, &es->eig_iter);
    ser_int(s, &es->c_dirty);
    ser_dbl(s, &es->cond);
    ser_dbl(s, &es->best_f);
    ser_dbl(s, &es->best_g);
    ser_long(s, &es->best_eval);
    ser_int(s, &es->fhist_n);
    ser_int(s, &es->fhist_pos);
    ser_int(s, &es->hist_n);
    ser_int(s, &es->stag_flag);
    ser_int(s, &es->anchor_iter);
    ser_int(s, &es->flat_count);
    ser_int(s, &es->n_large);
    ser_long(s, &es->evals_small);
    ser_long(s, &es->evals_large);
    ser_dbl(s, &es->run_best);
    ser_int(s, &es->run_best_iter);
    for (int i = 0; i < 4; i++)
        ser_u64(s, &es->rng.s[i]);
    ser_int(s, &es->rng.has_spare);
    ser_dbl(s, &es->rng.spare);
    if (s->bad) return;
    if (s->reading) {
        int ok = es->final_stop >= 0 && es->final_stop < ST_COUNT && es->run_stop >= 0 &&
                 es->run_stop < ST_COUNT && (es->asked == 0 || es->asked == 1) && es->evals >= 0 &&
                 es->gen >= 0 && es->iter >= 0 && es->iter <= es->gen && isfinite(es->sigma) &&
                 es->sigma > 0 && es->eig_iter >= 0 && es->eig_iter <= es->iter &&
                 (es->c_dirty == 0 || es->c_dirty == 1) && !isnan(es->cond) && !isnan(es->best_f) &&
                 !isnan(es->best_g) && es->best_eval >= 0 && es->best_eval <= es->evals &&
                 es->fhist_n >= 0 && es->fhist_n <= es->fhist_len && es->fhist_pos >= 0 &&
                 es->fhist_pos < es->fhist_len && es->hist_n >= 0 && es->hist_n <= es->hist_cap &&
                 (es->stag_flag == 0 || es->stag_flag == 1) && es->anchor_iter >= 0 &&
                 es->n_large >= 1 && es->n_large <= es->run + 1 &&
                 es->n_large <= es->set.restarts + 1 && es->evals_small >= 0 &&
                 es->evals_large >= 0 && es->evals_small == es->evals - es->evals_large &&
                 !isnan(es->run_best) && es->run_best_iter >= 0 && es->run_best_iter <= es->iter &&
                 es->anchor_iter <= es->iter && es->flat_count >= 0 &&
                 (es->rng.has_spare == 0 || es->rng.has_spare == 1) &&
                 (es->rng.s[0] | es->rng.s[1] | es->rng.s[2] | es->rng.s[3]) != 0;
        if (!ok) {
            s->bad = 1;
            return;
        }
    }
    ser_vec(s, es->m, (size_t)n);
    ser_vec(s, es->ps, (size_t)n);
    ser_vec(s, es->pc, (size_t)n);
    ser_vec(s, es->C, nn);
    ser_vec(s, es->B, nn);
    ser_vec(s, es->D, (size_t)n);
    ser_vec(s, es->Z, nl);
    ser_vec(s, es->Y, nl);
    ser_vec(s, es->XG, nl);
    ser_vec(s, es->XP, nl);
    ser_vec(s, es->best_x, (size_t)n);
    ser_vec(s, es->mean_p, (size_t)n);
    ser_vec(s, es->fhist, (size_t)es->fhist_n);
    ser_vec(s, es->hbest, (size_t)es->hist_n);
    ser_vec(s, es->hmed, (size_t)es->hist_n);
    ser_vec(s, es->anchor, (size_t)n);
    if (s->bad || !s->reading) return;
    /* Values: the distribution must be usable and candidates in bounds. */
    int ok = mlc_all_finite(es->m, (size_t)n) && mlc_all_finite(es->ps, (size_t)n) &&
             mlc_all_finite(es->pc, (size_t)n) && mlc_all_finite(es->C, nn) &&
             mlc_all_finite(es->B, nn) && mlc_all_finite(es->D, (size_t)n) &&
             mlc_all_finite(es->Z, nl) && mlc_all_finite(es->Y, nl) && mlc_all_finite(es->XG, nl) &&
             mlc_all_finite(es->XP, nl) && mlc_all_finite(es->best_x, (size_t)n) &&
             mlc_all_finite(es->mean_p, (size_t)n) && mlc_all_finite(es->anchor, (size_t)n);
    for (int i = 0; i < n && ok; i++)
        ok = es->D[i] > 0;
    for (size_t k = 0; k < nl && ok; k++) {
        size_t i = k % (size_t)n;
        ok = es->XP[k] >= es->lb[i] && es->XP[k] <= es->ub[i];
    }
    for (int i = 0; i < n && ok; i++)
        ok = es->best_x[i] >= es->lb[i] && es->best_x[i] <= es->ub[i] &&
             es->mean_p[i] >= es->lb[i] && es->mean_p[i] <= es->ub[i];
    if (!ok) s->bad = 1;
}

static mlc_cmaes *unconst(const mlc_cmaes *es) {
    /* The walker is shared with load; in write mode it only reads through this pointer. */
    return (mlc_cmaes *)(uintptr_t)es;
}

static void ser_all(ser *s, mlc_cmaes *es) {
    mlc_cmaes_settings set = es->set;
    int has_lb = 0, has_ub = 0;
    for (int i = 0; i < es->n; i++) {
        if (isfinite(es->lb[i])) has_lb = 1;
        if (isfinite(es->ub[i])) has_ub = 1;
    }
    ser_settings(s, &set, &es->x0, &es->lb, &es->ub, &has_lb, &has_ub);
    ser_state(s, es);
}

mlc_status mlc_cmaes_save(const mlc_cmaes *es, unsigned char **buf, size_t *len) {
    if (!es || !buf || !len) return MLC_EINVAL;
    *buf = NULL;
    *len = 0;
    if (es->final_stop == ST_NOMEM) return MLC_EINVAL; /* population arrays are gone */
    mlc_cmaes *me = unconst(es);
    ser sz = {0};
    ser_all(&sz, me);
    size_t total = sz.pos + sizeof(uint64_t);
    unsigned char *b = (unsigned char *)mlc_malloc(total);
    if (!b) return MLC_ENOMEM;
    ser wr = {0};
    wr.wbuf = b;
    ser_all(&wr, me);
    uint64_t h = mlc_hash64(MLC_HASH_INIT, b, wr.pos);
    memcpy(b + wr.pos, &h, sizeof h);
    *buf = b;
    *len = total;
    return MLC_OK;
}

mlc_status mlc_cmaes_load(const unsigned char *buf, size_t len, mlc_cmaes **out, mlc_err *err) {
    if (!out) return mlc_errf(err, MLC_EINVAL, "cmaes: NULL output");
    *out = NULL;
    if (!buf || len < 8 + 3 * 4 + sizeof(uint64_t))
        return mlc_errf(err, MLC_EPARSE, "cmaes checkpoint: %zu bytes is too short", len);
    size_t body = len - sizeof(uint64_t);
    uint64_t h;
    memcpy(&h, buf + body, sizeof h);
    if (memcmp(buf, CKPT_MAGIC, 8) != 0)
        return mlc_errf(err, MLC_EPARSE, "cmaes checkpoint: bad magic (not a checkpoint)");
    uint32_t ver;
    memcpy(&ver, buf + 8, sizeof ver);
    if (ver != CKPT_VERSION)
        return mlc_errf(err, MLC_EPARSE,
                        "cmaes checkpoint: format version %u, this build reads version %u "
                        "(written by another version of the program)",
                        (unsigned)ver, (unsigned)CKPT_VERSION);
    if (h != mlc_hash64(MLC_HASH_INIT, buf, body))
        return mlc_errf(err, MLC_EPARSE,
                        "cmaes checkpoint: checksum mismatch (truncated or corrupted)");

    ser rd = {0};
    rd.rbuf = buf;
    rd.len = body;
    rd.reading = 1;
    mlc_cmaes_settings set;
    memset(&set, 0, sizeof set);
    double *x0 = NULL, *lb = NULL, *ub = NULL;
    int has_lb = 0, has_ub = 0;
    mlc_cmaes *es = NULL;
    mlc_status st = MLC_OK;
    ser_settings(&rd, &set, &x0, &lb, &ub, &has_lb, &has_ub);
    if (rd.bad) {
        st = rd.bad == 2 ? mlc_errf(err, MLC_ENOMEM, "cmaes checkpoint: out of memory")
                         : mlc_errf(err, MLC_EPARSE, "cmaes checkpoint: bad header or settings");
        goto fail;
    }
    set.x0 = x0;
    set.lower = has_lb ? lb : NULL;
    set.upper = has_ub ? ub : NULL;
    /* Bound arrays hold +-inf where absent; without the flag they must be all infinite. */
    for (int i = 0; i < set.n; i++)
        if ((!has_lb && lb[i] != -MLC_INF) || (!has_ub && ub[i] != MLC_INF)) {
            st = mlc_errf(err, MLC_EPARSE, "cmaes checkpoint: inconsistent bounds");
            goto fail;
        }
    {
        mlc_err e2;
        st = create_impl(&set, &es, &e2);
        if (st) {
            st = mlc_errf(err, st == MLC_ENOMEM ? MLC_ENOMEM : MLC_EPARSE,
                          "cmaes checkpoint: invalid settings: %s", e2.msg);
            goto fail;
        }
    }
    ser_state(&rd, es);
    if (rd.bad || rd.pos != body) {
        st = rd.bad == 2 ? mlc_errf(err, MLC_ENOMEM, "cmaes checkpoint: out of memory")
                         : mlc_errf(err, MLC_EPARSE, "cmaes checkpoint: invalid run state");
        goto fail;
    }
    mlc_free(x0);
    mlc_free(lb);
    mlc_free(ub);
    *out = es;
    return MLC_OK;
fail:
    mlc_cmaes_destroy(es);
    mlc_free(x0);
    mlc_free(lb);
    mlc_free(ub);
    return st;
}
