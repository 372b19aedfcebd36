/* optimize_robust.c: how the optimize job scores points (optimize_run.h): every point's nominal
 * rollout, then the perturbed replays of the points that walk, shared out among the threads
 * and, in the generations, among the processes.
 *
 * A candidate that walks (nominal J < 0) is replayed R times with perturbed parameters
 * (cmaes.robust_samples) and scores the worst J of its R + 1 rollouts, so the best-ever gait is
 * one whose neighbourhood walks too, and its own J is never worse than its score. A replay's
 * perturbation is seeded by seed, generation, candidate and replay index, and every rollout is
 * scored into a fixed slot, so the scores do not depend on the thread or process that ran it.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dist.h"
#include "internal/optimize_job.h"
#include "perturb.h"

/* ---- Robust scoring ----------------------------------------------------------------------- */
/* Seed of replay `replay` of point `point` (optimize_job.h). */
uint64_t mlc_optimize_replay_seed(int seed, int gen, int point, int replay) {
    int64_t key[4] = {seed, gen, point, replay};
    return mlc_hash64(MLC_HASH_INIT, key, sizeof key);
}

/* Rollouts [lo, hi) of a batch: rollout i is replay r0 + i % nrep of point pts[i / nrep]
 * (column pts[..] of X, n × points). Replay 0 is the nominal rollout; replay r > 0 perturbs the
 * decoded parameters (mlc_gait_perturb). Points below `ncand` are candidates (their index is
 * their seed tag); the others are distribution means (tag -1). Writes J[i] and
 * tie[i] = -align_min + gate_excess (smaller = nearer a credible gait); returns how many
 * candidates' nominal rollouts blew up. Allocation-free; threads over rollouts. */
static int run_batch(const mlc_gait_space *g, worker *workers, int nthreads,
                     const mlc_objective_settings *obj, const double *X, const int *pts, int ncand,
                     int r0, int nrep, int seed, int gen, int lo, int hi, double *J, double *tie) {
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads) reduction(+ : failed)
    for (int i = lo; i < hi; i++) {
#ifdef _OPENMP
        worker *w = &workers[omp_get_thread_num()];
#else
        worker *w = &workers[0];
        (void)nthreads;
#endif
        int pt = pts[i / nrep], r = r0 + i % nrep;
        mlc_gait_decode(g, X + (size_t)pt * (size_t)g->n, w->A, w->T, w->th);
        if (r > 0) {
            mlc_rng rng;
            mlc_rng_seed(&rng, mlc_optimize_replay_seed(seed, gen, pt < ncand ? pt : -1, r));
            mlc_gait_perturb(&rng, g->m, g->k, w->A, w->T, w->th, w->A, w->T, w->th);
        }
        mlc_actuation act = {g->m, g->k, w->A, w->T, w->th};
        mlc_rollout_result res;
        mlc_rollout_run(w->ro, &act, obj, NULL, NULL, &res);
        J[i] = res.J;
        tie[i] = -res.align_min + res.gate_excess;
        if (r == 0 && pt < ncand) failed += res.failed;
    }
    return failed;
}

/* The replays of a point that could become the best-ever run in rounds: replay 1, then 2..3,
 * then 4..7, ... up to R. A point whose worst J so far is already at or above `improve_below`
 * can no longer become the best-ever, so it stops there and keeps that partial worst as its
 * score: most late-search walkers fail their first nudge, and their other R - 1 replays bought
 * nothing but rank among losers. A point that stays below runs all R, as with one round. The
 * next round's first replay index: */
static int round_end(int r_lo, int R, int rounds) {
    return rounds ? MLC_MIN(R + 1, 2 * r_lo) : R + 1;
}

/* Score `npts` points (columns of X: the first `ncand` candidates, the others distribution
 * means) in generation `gen` (tells before it): every point's nominal rollout, then up to R
 * perturbed replays of each point that walks (nominal J < 0) and, with cmaes.robust_scope
 * "improving", whose nominal J is below `improve_below` (the best score so far: only a point
 * that would become the best-ever pays for its replays, and it does so before it can; its
 * replays stop early once one of them reaches `improve_below`, see round_end). With `dist` the
 * rollouts are shared out among the processes and gathered by index, whatever rank computed them;
 * without it this process runs them all. On rank 0, f[q] is then point q's score, the worst J of
 * its rollouts (a point that does not walk keeps its nominal J either way: replays could only raise
 * it further above the walkers), and T0[q] its nominal rollout's tie-breaker. Returns how many of
 * this process's nominal candidate rollouts blew up; *nreplays is the number of replays run (by
 * all processes), *seconds this process's time in rollouts. */
int mlc_optimize_evaluate(optimize_run *o, const double *X, int npts, int ncand, int gen, int dist,
                          double improve_below, int *nreplays, double *seconds) {
    const int rank = dist ? o->rank : 0, nproc = dist ? o->nproc : 1, R = o->R;
    const int seed = o->cfg.cmaes.seed;
    /* Rounds in the generations (`dist`, where every rank must take the same ones: only rank 0
     * knows improve_below); the polish and the final mean score their points in full. */
    const int rounds = o->improving && dist;
    int *pts = o->pts;
    for (int q = 0; q < npts; q++)
        pts[q] = q;
    int c_lo, c_hi;
    mlc_dist_block(npts, rank, nproc, &c_lo, &c_hi);
    double t_roll = mlc_now(), t_comm = 0;
    int failed = run_batch(&o->g, o->workers, o->nthreads, &o->obj, X, pts, ncand, 0, 1, seed, gen,
                           c_lo, c_hi, o->J0, o->T0);
    double t_c = mlc_now();
    if (dist) {
        mlc_dist_gather_blocks(o->J0 + c_lo, o->J0, npts);
        mlc_dist_gather_blocks(o->T0 + c_lo, o->T0, npts);
    }
    if (rank == 0)
        for (int q = 0; q < npts; q++)
            o->f[q] = o->J0[q];
    int nw = 0, replays = 0;
    if (R > 0 && rank == 0)
        for (int q = 0; q < npts; q++)
            if (o->J0[q] < 0 && (!o->improving || o->J0[q] < improve_below)) pts[nw++] = q;
    for (int r_lo = 1; r_lo <= R;) {
        if (dist) mlc_dist_bcast_int(&nw, 1, 0);
        if (nw == 0) break;
        if (dist) mlc_dist_bcast_int(pts, nw, 0);
        const int r_hi = round_end(r_lo, R, rounds), nrep = r_hi - r_lo;
        t_comm += mlc_now() - t_c;
        mlc_dist_block(nw * nrep, rank, nproc, &c_lo, &c_hi);
        run_batch(&o->g, o->workers, o->nthreads, &o->obj, X, pts, ncand, r_lo, nrep, seed, gen,
                  c_lo, c_hi, o->J2, o->T2);
        t_c = mlc_now();
        if (dist) mlc_dist_gather_blocks(o->J2 + c_lo, o->J2, nw * nrep);
        replays += nw * nrep;
        if (rank == 0) { /* fold the round in; keep the points that can still become the best */
            int alive = 0;
            for (int w = 0; w < nw; w++) {
                double *fq = &o->f[pts[w]];
                for (int r = 0; r < nrep; r++)
                    *fq = fmax(*fq, o->J2[(size_t)w * nrep + r]);
                if (!rounds || *fq < improve_below) pts[alive++] = pts[w];
            }
            nw = alive;
        }
        r_lo = r_hi;
    }
    t_comm += mlc_now() - t_c;
    *seconds = mlc_now() - t_roll - t_comm;
    *nreplays = replays;
    return failed;
}

/* ---- One gait, fully evaluated ----------------------------------------------------------- */
mlc_status mlc_optimize_evaluate_gait(optimize_run *o, const double *u, mlc_actuation *a,
                                      mlc_rollout_result *r, mlc_credibility *c) {
    const mlc_gait_space *g = &o->g;
    worker *w = &o->workers[0];
    mlc_gait_decode(g, u, w->A, w->T, w->th);
    *a = (mlc_actuation){g->m, g->k, w->A, w->T, w->th};
    return mlc_credibility_evaluate(
        &(mlc_credibility_def){o->p.model, &o->p.mesh, &o->obj, o->nthreads, NULL, NULL}, a, r, c,
        &o->err);
}
