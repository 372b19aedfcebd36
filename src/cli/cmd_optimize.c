/* cmd_optimize.c: `modalloco optimize`: CMA-ES over the actuation parameters (docs/method.md §8),
 * each candidate scored by a reduced rollout; OpenMP across the population; a checkpoint
 * (at most every CHECKPOINT_SECONDS, and when the generations end); params.json,
 * history.csv/.svg and the best gait's rollout.
 *
 * Scoring: a candidate that walks (nominal J < 0) is replayed R times with perturbed
 * parameters (cmaes.robust_samples, run_batch) and scores the worst J of its R + 1 rollouts,
 * so the best-ever gait is one whose neighbourhood walks too, and its own J is never worse
 * than its score. Candidates with equal scores (every rollout that tumbles, leaps or flies has
 * J = 0) are ranked by how far they were from a credible gait: how far they stayed from
 * tumbling (-align_min of the nominal rollout) plus how far they went past the credibility
 * gate (gate_excess), a tie-breaker inside CMA-ES's ranking that leaves the scores themselves
 * untouched. Without the second term a population that flies has no direction back to the
 * ground when it stays aligned. Every cmaes.mean_every generations the distribution mean the
 * generation sampled around is scored too (history.csv mean_J): a report that CMA-ES never
 * sees, kept sparse because on two cores a 17th rollout runs alone.
 *
 * Determinism: CMA-ES owns its generator and linear algebra, every rollout is a pure function
 * of its parameters (a replay's perturbation is seeded by seed, generation, candidate and
 * replay index), and the population is scored into a fixed slot per rollout, so the run is
 * bit-identical for any thread count and across --resume.
 *
 * Processes (MPI, through dist.h): under mpirun every rank builds the same model (rank 0 runs
 * the precompute and shares it through the cache file), rank 0 alone owns CMA-ES, the files
 * and the terminal, broadcasts each generation's population and gathers the objective values
 * by candidate index, each rank scoring a contiguous block of candidates with its OpenMP
 * threads. The optimizer sees exactly the numbers a single process computes, so the run is
 * bit-identical for any number of processes too. The unit of work handed out is one rollout
 * (candidate × replay, the mean last), not one candidate.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "checkpoint.h"
#include "cmaes.h"
#include "commands.h"
#include "dist.h"
#include "gait.h"
#include "judge.h"
#include "output.h"
#include "perturb.h"
#include "polish.h"
#include "rollout_io.h"

/* ---- Signals: finish the generation, save, exit 130 ------------------------------------- */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

/* ---- History rows (mlc_history_row, checkpoint.h) ---------------------------------------- */

static void history_header(FILE *f) {
    /* New columns go after the old ones: scripts read them by position. */
    fprintf(f, "generation,evaluations,best_J,median_J,sigma,seconds,best_ever_J,failed,mean_J,"
               "rollouts,restart,population\n");
}
/* mean_J is empty in a generation that did not score the mean (NaN, cmaes.mean_every). */
static void history_line(FILE *f, const mlc_history_row *r) {
    char mean[32] = "";
    if (!isnan(r->mean_J)) snprintf(mean, sizeof mean, "%.17g", r->mean_J);
    fprintf(f, "%d,%ld,%.17g,%.17g,%.17g,%.3f,%.17g,%d,%s,%ld,%d,%d\n", r->generation,
            r->evaluations, r->best_J, r->median_J, r->sigma, r->seconds, r->best_ever_J, r->failed,
            mean, r->rollouts, r->restart, r->population);
}

/* Whether the generation after `told` tells scores its distribution mean too (cmaes.mean_every:
 * generations 1, 1 + N, 1 + 2N, ...). Every rank decides alike from the broadcast count. */
static int scores_mean(const mlc_config *cfg, int told) {
    return cfg->cmaes.mean_every > 0 && told % cfg->cmaes.mean_every == 0;
}

/* ---- params.json ---------------------------------------------------------------------------- */
/* Every number of params.json with all 17 digits (mlc_json_exact_number): a gait replays bit
 * for bit. */
static void add_exact(cJSON *o, const char *name, double v) {
    cJSON_AddItemToObject(o, name, mlc_json_exact_number(v));
}
static char *params_json(const mlc_config *cfg, const mlc_pipeline *p, const mlc_gait_space *g,
                         const double *u, const double *A, const double *T, const double *th,
                         const mlc_rollout_result *res, int found, const mlc_cmaes *es,
                         const char *stop_reason, double J_mean, int chose_mean) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "program", "modalloco");
    cJSON_AddStringToObject(o, "version", MLC_VERSION);
    cJSON_AddNumberToObject(o, "seed", cfg->cmaes.seed);
    add_exact(o, "J", res->J);
    add_exact(o, "J_disp", res->J_disp);
    add_exact(o, "J_align", res->J_align);
    add_exact(o, "J_work", res->J_work);
    add_exact(o, "displacement", res->displacement);
    cJSON_AddBoolToObject(o, "found", found);
    /* The scores the optimizer ranked by (the worst J over the nominal rollout and its
     * perturbed replays): the best gait's, and the final distribution mean's. */
    add_exact(o, "J_robust", mlc_cmaes_best_f(es));
    add_exact(o, "J_mean", J_mean);
    /* which point the parameters are: the best-ever candidate or the final mean */
    cJSON_AddStringToObject(o, "gait", chose_mean ? "mean" : "best");
    cJSON_AddNumberToObject(o, "generations", mlc_cmaes_generation(es));
    cJSON_AddNumberToObject(o, "evaluations", (double)mlc_cmaes_evaluations(es));
    cJSON_AddNumberToObject(o, "restarts", mlc_cmaes_restarts_done(es));
    cJSON_AddStringToObject(o, "stop_reason", stop_reason);
    cJSON *mesh = cJSON_AddObjectToObject(o, "mesh");
    cJSON_AddStringToObject(mesh, "path", p->mesh_path);
    char sum[32];
    snprintf(sum, sizeof sum, "%016" PRIx64, p->mesh_checksum);
    cJSON_AddStringToObject(mesh, "checksum", sum);
    cJSON_AddNumberToObject(mesh, "vertices", p->mesh.nv);
    cJSON_AddNumberToObject(mesh, "tets", p->mesh.nt);
    mlc_json_add_transform(mesh, &p->transform);
    cJSON *modes = cJSON_AddArrayToObject(o, "modes");
    for (int i = 0; i < p->sub.m; i++)
        cJSON_AddItemToArray(modes, cJSON_CreateNumber(p->sub.mode_index[i]));
    if (g->q > 0) {
        cJSON *part = cJSON_AddArrayToObject(o, "participation");
        for (int i = 0; i < g->m; i++)
            cJSON_AddItemToArray(part, mlc_json_exact_number(u[i]));
    }
    int driven[MLC_GAIT_MAX_MODES];
    int nd = mlc_gait_driven_modes(g, u, driven);
    cJSON *params = cJSON_AddArrayToObject(o, "parameters");
    for (int s = 0; s < nd; s++) {
        int i = driven[s];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "mode", p->sub.mode_index[i]);
        cJSON *sins = cJSON_AddArrayToObject(e, "sinusoids");
        for (int j = 0; j < g->k; j++) {
            cJSON *sn = cJSON_CreateObject();
            add_exact(sn, "amplitude", A[i * g->k + j]);
            add_exact(sn, "period", T[i * g->k + j]);
            add_exact(sn, "phase", th[i * g->k + j]);
            cJSON_AddItemToArray(sins, sn);
        }
        cJSON_AddItemToArray(params, e);
    }
    /* The configuration that reproduces the gait. Where the results go and how many threads
     * computed them do not change the gait, so they are left out: params.json of the same
     * run is then identical for any --out and --threads. */
    cJSON *c = mlc_config_to_cjson(cfg);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(c, "output"), "dir");
    cJSON_DeleteItemFromObject(c, "parallel");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(c, "actuation"), "parameters");
    cJSON_AddItemToObject(o, "config", c);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return NULL;
    char *copy = mlc_malloc(strlen(text) + 2);
    if (copy) sprintf(copy, "%s\n", text);
    cJSON_free(text);
    return copy;
}

/* ---- Workers: a rollout and the decoded parameters, one per thread ------------------------ */
typedef struct worker {
    mlc_rollout *ro;
    double *A, *T, *th; /* m×k each */
} worker;

/* ---- Robust scoring ----------------------------------------------------------------------- */
/* Seed of replay `replay` of point `point` (candidate index, -1 for the distribution mean) in
 * generation `gen` (tells before it): a pure function of the run's state, so a rollout's
 * perturbation never depends on which thread or process runs it. */
static uint64_t replay_seed(int seed, int gen, int point, int replay) {
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
            mlc_rng_seed(&rng, replay_seed(seed, gen, pt < ncand ? pt : -1, r));
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

static void format_eta(double s, char *buf, size_t cap) {
    if (!(s >= 0) || s > 1e7)
        snprintf(buf, cap, "?");
    else if (s < 60)
        snprintf(buf, cap, "%.0fs", s);
    else
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

/* ---- Several processes: setup agreement and the shared precompute ------------------------ */
/* Collective: settle the outcome of a setup step that every rank ran (or skipped). Returns 0
 * when every rank succeeded. When rank 0 failed (input errors, which every rank usually meets
 * alike) rank 0 prints its message and every rank returns the exit code: a clean exit. When
 * only another rank failed, that rank prints its message and aborts the job, and the others
 * wait for the abort, so the message is never lost and nothing hangs. */
static int settle(mlc_status s, const mlc_err *err) {
    int first;
    mlc_status all = mlc_dist_agree(s, &first);
    if (all == MLC_OK) return 0;
    int code = mlc_exit_code(all);
    if (first == 0) return mlc_dist_rank() == 0 ? mlc_cli_fail(s, err) : code;
    if (s != MLC_OK) {
        mlc_err ranked;
        mlc_errf(&ranked, s, "rank %d of %d: %s", mlc_dist_rank(), mlc_dist_size(),
                 err && err->msg[0] ? err->msg : mlc_strerror(s));
        mlc_dist_abort(mlc_cli_fail(s, &ranked));
    }
    mlc_dist_await_abort(code);
}

/* Only in modalloco_test_hooks, the test build of the program (CMakeLists.txt defines
 * MLC_TEST_HOOKS for it): MLC_TEST_FAIL_RANK=R makes rank R's precompute fail (tests/cli_mpi.sh
 * checks that a failing rank ends the whole job with its message, without a hang). */
#ifdef MLC_TEST_HOOKS
static mlc_status test_fail_hook(mlc_err *err) {
    const char *v = getenv("MLC_TEST_FAIL_RANK");
    if (v && *v && atoi(v) == mlc_dist_rank())
        return mlc_errf(err, MLC_EIO, "precompute failed on purpose (MLC_TEST_FAIL_RANK=%s)", v);
    return MLC_OK;
}
#else
static mlc_status test_fail_hook(mlc_err *err) {
    (void)err;
    return MLC_OK;
}
#endif

/* The precompute cache the ranks share: subspace.cache when set, else DIR/precompute.cache
 * (kept after the run: a resume or a rerun with the same settings then skips the solves). */
static mlc_status shared_cache_path(const mlc_config *cfg, char *path, size_t cap, mlc_err *err) {
    int n = cfg->subspace.cache[0] ? snprintf(path, cap, "%s", cfg->subspace.cache)
                                   : snprintf(path, cap, "%s/precompute.cache", cfg->output.dir);
    if (n < 0 || (size_t)n >= cap)
        return mlc_errf(err, MLC_EINVAL, "output.dir is too long for the precompute cache path");
    return MLC_OK;
}

/* Rank 0 of several: the usual pipeline, with the cache file forced on so the others can read
 * the subspaces instead of repeating the eigen-solves. The configuration itself is not changed
 * (it goes into config.json, params.json and the resume fingerprint, which must match a
 * single-process run). */
static mlc_status model_root(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    mlc_config *pc = mlc_malloc(sizeof *pc);
    if (!pc) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    *pc = *cfg;
    if ((s = shared_cache_path(cfg, pc->subspace.cache, sizeof pc->subspace.cache, err)) ==
            MLC_OK &&
        (s = mlc_mkdir_p(cfg->output.dir, err)) == MLC_OK && (s = test_fail_hook(err)) == MLC_OK)
        s = mlc_pipeline_model(p, pc, err);
    /* The pipeline only warns when it cannot write the cache; here the other ranks need it. */
    if (s == MLC_OK && !p->cache_used && access(pc->subspace.cache, R_OK) != 0)
        s = mlc_errf(err, MLC_EIO,
                     "could not write the precompute cache %s that the other "
                     "processes read; check that the directory is writable",
                     pc->subspace.cache);
    mlc_free(pc);
    return s;
}

/* The other ranks: mesh and FEM as usual, then the subspaces from rank 0's cache file. A cache
 * that cannot be read is an error here, never a silent recomputation: all ranks must simulate
 * with the same subspaces, and a shared file system that does not show rank 0's file is a
 * set-up problem the user has to see. */
static mlc_status model_worker(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    char cache[MLC_CONFIG_PATH_MAX];
    if ((s = shared_cache_path(cfg, cache, sizeof cache, err)) != MLC_OK) return s;
    if ((s = test_fail_hook(err)) != MLC_OK) return s;
    /* The mesh with rank 0's cache path too: a surface's tets are then restored from the
     * CACHE.tets rank 0 wrote instead of running tetgen on every rank. */
    mlc_config *pc = mlc_malloc(sizeof *pc);
    if (!pc) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    *pc = *cfg;
    snprintf(pc->subspace.cache, sizeof pc->subspace.cache, "%s", cache);
    s = mlc_pipeline_load_mesh(p, pc, err);
    mlc_free(pc);
    if (s != MLC_OK) return s;
    if ((s = mlc_pipeline_regions(p, cfg, err)) != MLC_OK) return s;
    mlc_subspace_settings ss;
    mlc_pipeline_subspace_settings_for(p, cfg, &ss);
    mlc_err cerr;
    if (mlc_subspace_cache_load(cache, &p->mesh, &p->fem, &ss, &p->sub, &cerr) != MLC_OK)
        return mlc_errf(err, MLC_EIO,
                        "cannot use the precompute cache %s that rank 0 wrote "
                        "(%s); the output directory must be on a file system every process "
                        "sees",
                        cache, cerr.msg);
    p->cache_used = 1;
    return mlc_pipeline_model(p, cfg, err);
}

/* ---- The command: setup, the generation loop, the finish --------------------------------- */
/* One run of the command, shared by its phases. Rank 0 alone owns the optimizer, the history
 * and the files. */
typedef struct optimize_run {
    mlc_cli_options opt;
    char resume_cfg[MLC_CONFIG_PATH_MAX + 64]; /* opt.input of --resume DIR without a config */
    mlc_err err;
    mlc_config cfg;
    mlc_pipeline p;
    mlc_gait_space g;
    mlc_objective_settings obj;
    mlc_cmaes *es;
    worker *workers; /* one per thread */
    int nworkers, nthreads;
    int rank, nproc, quiet;
    const char *dir;
    uint64_t fingerprint;
    int lam_max;   /* the largest population, restarts included */
    int R;         /* replays of each point that walks */
    int improving; /* cmaes.robust_scope "improving": replay only walkers that beat best_f */
    /* Per point (the population, then the mean; lam_max + 1 at most): scores f, median scratch
     * and ties; the rollout values, nominal J0 and tie T0 per point, then J2 and T2 per replay
     * (all in Jv). */
    double *f, *scratch, *tie, *Jv, *J0, *T0, *J2, *T2;
    int *pts;      /* the points of a batch */
    double *Xbuf;  /* the points as scored (the population, then the mean) and broadcast */
    double *stats; /* several processes: per rank its failure count and rollout seconds */
    mlc_history_row *hist;
    int nhist, cap_hist;
    /* cmaes.budget > 0: rollouts the generations may spend (the budget less what the final mean
     * and the polish are expected to take); the polish stops at the budget itself. */
    long loop_budget;
    long eval_budget; /* restarts without a budget: candidate evaluations, generations × λ */
    int budget_spent; /* the loop ended because the next generation would not fit */
    int room_spent;   /* ... or because a pending restart would not (cmaes.restart_room) */
    long rollouts;    /* rollouts of the run so far (history.csv) */
    double t_offset;  /* wall time of earlier sessions of a resumed run */
    double t_start, t_pre;
    FILE *hf; /* history.csv */
    /* The checkpoint of the last generation, encoded; written when `ckpt_pending` and a
     * CHECKPOINT_SECONDS have passed since `t_ckpt`, or when the generations end. */
    mlc_checkpoint_bytes ckpt;
    int ckpt_pending;
    double t_ckpt;
    char path[MLC_CONFIG_PATH_MAX + 64];
    int gens_this_session;
    /* Timing of this session's generations (rank 0): rollouts of the slowest rank, their mean
     * over ranks, and rank 0's time inside broadcasts and gathers. */
    double sum_roll_max, sum_roll_mean, sum_comm, sum_wait, sum_gen;
    /* With several processes, failures before the loop are settled collectively (settle), and
     * a failure of rank 0 inside the loop aborts the job (the others wait in a broadcast). */
    int in_setup, in_loop;
    int stop, rc; /* stop: the run ends here with exit code rc, nothing to report */
} optimize_run;

static mlc_status out_of_memory(optimize_run *o) {
    return mlc_errf(&o->err, MLC_ENOMEM, "out of memory");
}

/* settle() of a step every rank passed: 1 (and the run stops) when another rank failed. */
static int settled(optimize_run *o) {
    if ((o->rc = settle(MLC_OK, &o->err)) != 0) o->stop = 1;
    return o->stop;
}

/* Score `npts` points (columns of X: the first `ncand` candidates, the others distribution
 * means) in generation `gen` (tells before it): every point's nominal rollout, then R perturbed
 * replays of each point that walks (nominal J < 0) and, with cmaes.robust_scope "improving",
 * whose nominal J is below `improve_below` (the best score so far: only a point that would
 * become the best-ever pays for its replays, and it does so before it can). With `dist` the
 * rollouts are shared out among the processes and gathered by index, whatever rank computed them;
 * without it this process runs them all. On rank 0, f[q] is then point q's score, the worst J of
 * its rollouts (a point that does not walk keeps its nominal J either way: replays could only raise
 * it further above the walkers), and T0[q] its nominal rollout's tie-breaker. Returns how many of
 * this process's nominal candidate rollouts blew up; *nwalk is the number of points that walk,
 * *seconds this process's time in rollouts. */
static int evaluate(optimize_run *o, const double *X, int npts, int ncand, int gen, int dist,
                    double improve_below, int *nwalk, double *seconds) {
    const int rank = dist ? o->rank : 0, nproc = dist ? o->nproc : 1, R = o->R;
    const int seed = o->cfg.cmaes.seed;
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
    int nw = 0;
    if (R > 0) {
        if (rank == 0)
            for (int q = 0; q < npts; q++)
                if (o->J0[q] < 0 && (!o->improving || o->J0[q] < improve_below)) pts[nw++] = q;
        if (dist) mlc_dist_bcast_int(&nw, 1, 0);
        if (nw > 0) {
            if (dist) mlc_dist_bcast_int(pts, nw, 0);
            t_comm += mlc_now() - t_c;
            mlc_dist_block(nw * R, rank, nproc, &c_lo, &c_hi);
            run_batch(&o->g, o->workers, o->nthreads, &o->obj, X, pts, ncand, 1, R, seed, gen, c_lo,
                      c_hi, o->J2, o->T2);
            t_c = mlc_now();
            if (dist) mlc_dist_gather_blocks(o->J2 + c_lo, o->J2, nw * R);
        }
    }
    t_comm += mlc_now() - t_c;
    *seconds = mlc_now() - t_roll - t_comm;
    *nwalk = nw;
    if (rank == 0) {
        for (int q = 0; q < npts; q++)
            o->f[q] = o->J0[q];
        for (int w = 0; w < nw; w++)
            for (int r = 0; r < R; r++)
                o->f[pts[w]] = fmax(o->f[pts[w]], o->J2[(size_t)w * R + r]);
    }
    return failed;
}

/* Parameters from which cmaes.diagonal = -1 keeps the covariance diagonal throughout. */
#define MLC_AUTO_DIAGONAL_DIMENSION 100
/* cmaes.sigma0 = 0: σ₀ = MLC_SIGMA0_BASE × min(1, sqrt(MLC_SIGMA0_SIGNALS / signals)). */
#define MLC_SIGMA0_BASE 0.3
#define MLC_SIGMA0_SIGNALS 8.0

/* cmaes.sigma0, with 0 chosen from the driven signals s = (q or m) × k: the m·k sinusoids add
 * up, so the first generation's strain grows about as sqrt(s)·σ₀. 0.3 suits 8 signals (the
 * default 4 modes × 2 sinusoids, the paper's Bat row's 6); more signals start narrower (the
 * Couch row's 20 signals at 0.3 leap or tip in most first guesses: docs/method.md). */
static double initial_sigma(const mlc_config *cfg, const mlc_gait_space *g) {
    if (cfg->cmaes.sigma0 > 0) return cfg->cmaes.sigma0;
    double signals = (double)((g->q > 0 ? g->q : g->m) * g->k);
    return MLC_SIGMA0_BASE * fmin(1.0, sqrt(MLC_SIGMA0_SIGNALS / signals));
}

/* cmaes.diagonal, with -1 chosen from the dimension n: with n parameters the full covariance
 * learns at rates of about 2/n² a generation, so from about 100 on it barely leaves the
 * identity within a 200-generation budget (the octopus's 108 parameters: docs/method.md),
 * while a diagonal one learns each parameter's scale (n + 2)/3 times faster. */
static int diagonal_generations(const mlc_config *cfg, int n) {
    if (cfg->cmaes.diagonal >= 0) return cfg->cmaes.diagonal;
    return n >= MLC_AUTO_DIAGONAL_DIMENSION ? INT_MAX : 0;
}

/* Setup: the configuration (with --resume DIR and no config, the one the run wrote), the model
 * (with several processes rank 0 precomputes and the others read its cache), the search space,
 * a worker per thread and the buffers of a generation. */
static mlc_status setup(optimize_run *o) {
    mlc_status s;
    mlc_cli_options *opt = &o->opt;
    mlc_config *cfg = &o->cfg;
    if ((s = mlc_dist_init(&o->err)) != MLC_OK) return s;
    o->rank = mlc_dist_rank(), o->nproc = mlc_dist_size();
    o->in_setup = o->nproc > 1;

    /* --resume DIR without a config: take the configuration the run wrote. */
    if (opt->resume) {
        if (!opt->out) opt->out = opt->resume;
        if (!opt->input) {
            snprintf(o->resume_cfg, sizeof o->resume_cfg, "%s/config.json", opt->resume);
            opt->input = o->resume_cfg;
        }
    }
    if ((s = mlc_cli_load_config(opt, cfg, &o->err)) != MLC_OK) return s;
    if (opt->resume && strcmp(cfg->output.dir, opt->resume) != 0)
        return mlc_errf(&o->err, MLC_EINVAL,
                        "--resume %s conflicts with output.dir %s; they must be "
                        "the same directory",
                        opt->resume, cfg->output.dir);
    if (o->in_setup && settled(o)) return MLC_OK;
    o->fingerprint = mlc_checkpoint_fingerprint(cfg);
    o->dir = cfg->output.dir;
    o->quiet = opt->quiet || o->rank != 0; /* one voice: rank 0's */

    o->t_start = mlc_now();
    if (o->nproc == 1) {
        if ((s = test_fail_hook(&o->err)) != MLC_OK ||
            (s = mlc_pipeline_model(&o->p, cfg, &o->err)) != MLC_OK)
            return s;
    } else {
        /* Rank 0 precomputes and writes the cache; after the agreement (a barrier) the others
         * read it. */
        if (o->rank == 0 && (s = model_root(&o->p, cfg, &o->err)) != MLC_OK) return s;
        if (settled(o)) return MLC_OK;
        if (o->rank != 0 && (s = model_worker(&o->p, cfg, &o->err)) != MLC_OK) return s;
        if (settled(o)) return MLC_OK;
    }
    o->t_pre = mlc_now() - o->t_start;

    /* Search space. */
    mlc_gait_space *g = &o->g;
    if ((s = mlc_pipeline_gait_space(&o->p, cfg, g, &o->err)) != MLC_OK) return s;
    mlc_pipeline_objective(&o->p, cfg, &o->obj);

    /* Workers: one rollout and parameter buffers per thread. Processes sharing a node share
     * its cores unless --threads says otherwise. */
    int nthreads = cfg->parallel.threads;
#ifdef _OPENMP
    if (nthreads <= 0) nthreads = MLC_MAX(1, omp_get_num_procs() / mlc_dist_local_size());
#else
    nthreads = 1;
#endif
    o->nthreads = o->nworkers = nthreads;
    o->workers = mlc_calloc((size_t)o->nworkers, sizeof *o->workers);
    if (!o->workers) return out_of_memory(o);
    const size_t mk = (size_t)g->m * (size_t)g->k;
    for (int t = 0; t < o->nworkers; t++) {
        worker *w = &o->workers[t];
        w->A = mlc_malloc(3 * mk * sizeof(double));
        if (!w->A || mlc_rollout_create(o->p.model, &w->ro) != MLC_OK) return out_of_memory(o);
        w->T = w->A + mk;
        w->th = w->A + 2 * mk;
    }
    o->lam_max = cfg->cmaes.population << MLC_MIN(cfg->cmaes.restarts, 20);
    const int R = o->R = cfg->cmaes.robust_samples;
    o->improving = strcmp(cfg->cmaes.robust_scope, "improving") == 0;
    /* A generation scores lam candidates and the distribution mean (points): one nominal
     * rollout each, then R replays of each point that walks. */
    const size_t npts_max = (size_t)o->lam_max + 1;
    o->f = mlc_malloc((3 * npts_max) * sizeof(double)); /* scores (npts), median scratch, ties */
    o->Jv = mlc_malloc(2 * npts_max * (size_t)(R + 1) * sizeof(double));
    o->pts = mlc_malloc(npts_max * sizeof(int));
    o->Xbuf = mlc_malloc(npts_max * (size_t)g->n * sizeof(double));
    if (!o->f || !o->Jv || !o->pts || !o->Xbuf) return out_of_memory(o);
    o->scratch = o->f + npts_max;
    o->tie = o->f + 2 * npts_max;
    o->J0 = o->Jv, o->T0 = o->Jv + npts_max, o->J2 = o->Jv + 2 * npts_max;
    o->T2 = o->J2 + npts_max * (size_t)R;
    if (o->nproc > 1) {
        o->stats = mlc_malloc(2 * (size_t)o->nproc * sizeof(double));
        if (!o->stats) return out_of_memory(o);
    }
    return MLC_OK;
}

/* --dry-run: setup has validated the settings and run (or read) the precompute; time a batch
 * of rollouts at the requested thread count, estimate the whole run, and stop before writing
 * anything. */
static mlc_status dry_run(optimize_run *o) {
    const mlc_config *cfg = &o->cfg;
    const mlc_gait_space *g = &o->g;
    const int nthreads = o->nthreads, nproc = o->nproc, R = o->R;
    o->stop = 1, o->rc = 0;
    if (o->rank != 0) return MLC_OK;
    const int nbatch = MLC_MAX(cfg->cmaes.population, 2 * nthreads); /* one generation */
    mlc_rng rng;
    mlc_rng_seed(&rng, (uint64_t)(int64_t)cfg->cmaes.seed);
    double *U = mlc_malloc((size_t)nbatch * (size_t)g->n * sizeof(double));
    if (!U) return out_of_memory(o);
    /* Candidates like a first generation: around the box centre, sigma0 wide. */
    for (size_t i = 0; i < (size_t)nbatch * (size_t)g->n; i++) {
        double u = 0.5 + initial_sigma(cfg, g) * mlc_rng_normal(&rng);
        U[i] = u < 0 ? 0 : u > 1 ? 1 : u;
    }
    double t0 = mlc_now();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int c = 0; c < nbatch; c++) {
#ifdef _OPENMP
        worker *w = &o->workers[omp_get_thread_num()];
#else
        worker *w = &o->workers[0];
#endif
        mlc_gait_decode(g, U + (size_t)c * g->n, w->A, w->T, w->th);
        mlc_actuation act = {g->m, g->k, w->A, w->T, w->th};
        mlc_rollout_result r;
        mlc_rollout_run(w->ro, &act, &o->obj, NULL, NULL, &r);
    }
    double per = (mlc_now() - t0) / nbatch; /* wall seconds per rollout, all threads */
    mlc_free(U);
    /* Each generation: the candidates, R + 1 rollouts each, and every cmaes.mean_every
     * generations the mean too. */
    const long gens = cfg->cmaes.generations, every = cfg->cmaes.mean_every;
    long rollouts =
        ((long)cfg->cmaes.population * gens + (every > 0 ? (gens + every - 1) / every : 0)) *
        (R + 1);
    double est = o->t_pre + per * (double)rollouts / nproc + 2 * per * nthreads;
    printf("mesh %s: %d vertices, %d tets\n", o->p.mesh_path, o->p.mesh.nv, o->p.mesh.nt);
    printf("reduced dimension r %d, contact samples %d, modes %d, sinusoids %d, parameters %d\n",
           mlc_model_dim(o->p.model), o->p.sub.ns, g->m, g->k, g->n);
    printf("rollouts %ld ((population %d + mean) x %d replays x %d generations), steps "
           "per rollout %d\n",
           rollouts, cfg->cmaes.population, R + 1, cfg->cmaes.generations, cfg->sim.steps);
    printf("precompute %.3f s%s\n", o->t_pre, o->p.cache_used ? " (cache)" : "");
    printf("rollout %.4f s per rollout at %d thread%s x %d process%s (%.2f us per step)\n", per,
           nthreads, nthreads == 1 ? "" : "s", nproc, nproc == 1 ? "" : "es",
           1e6 * per * nthreads / cfg->sim.steps);
    printf("estimated wall time %.1f s\n", est);
    return MLC_OK;
}

/* The optimizer (rank 0 only), fresh or resumed from the checkpoint, the output directory and
 * history.csv (a resumed run's rows first); then the end of setup, which every rank agrees on. */
static mlc_status start(optimize_run *o) {
    mlc_status s;
    const mlc_config *cfg = &o->cfg;
    const int n = o->g.n;
    const int R = o->R;
    if (cfg->cmaes.budget > 0) {
        long polish = (long)cfg->cmaes.polish * (2L * n + MLC_POLISH_LINE) * (R + 1);
        o->loop_budget = MLC_MAX(0, cfg->cmaes.budget - (R + 1) - polish);
    } else if (cfg->cmaes.restarts > 0) {
        o->eval_budget = (long)cfg->cmaes.generations * cfg->cmaes.population;
    }
    if (o->rank == 0) {
        if (o->opt.resume) {
            snprintf(o->path, sizeof o->path, "%s/checkpoint.bin", o->dir);
            if ((s = mlc_checkpoint_read(o->path, o->fingerprint, &o->hist, &o->nhist, &o->es,
                                         &o->err)) != MLC_OK)
                return s;
            /* The fingerprint is only a hash: a doctored state of another size must not be
             * read as this run's population. */
            if (mlc_cmaes_dim(o->es) != n)
                return mlc_errf(&o->err, MLC_EPARSE,
                                "--resume: %s: the optimizer state has %d "
                                "parameters, this configuration has %d (corrupt checkpoint)",
                                o->path, mlc_cmaes_dim(o->es), n);
            if (o->nhist > 0) {
                o->t_offset = o->hist[o->nhist - 1].seconds;
                o->rollouts = o->hist[o->nhist - 1].rollouts;
            }
            if (!o->quiet)
                fprintf(stderr, "modalloco: resuming %s at generation %d\n", o->dir, o->nhist);
        } else {
            mlc_cmaes_settings cs;
            mlc_cmaes_settings_default(&cs, n);
            double *x0 = mlc_malloc(3 * (size_t)n * sizeof(double));
            if (!x0) return out_of_memory(o);
            double *lo = x0 + n, *hi = x0 + 2 * n;
            for (int i = 0; i < n; i++)
                x0[i] = 0.5, lo[i] = 0.0, hi[i] = 1.0;
            cs.lambda = cfg->cmaes.population;
            cs.sigma0 = initial_sigma(cfg, &o->g);
            cs.x0 = x0;
            cs.lower = lo;
            cs.upper = hi;
            cs.seed = (uint64_t)(int64_t)cfg->cmaes.seed;
            /* Without restarts and a budget, the generation count is the budget, as it always
             * was; otherwise the loop enforces the budget in rollouts or evaluations, since
             * populations change from run to run. */
            cs.max_generations = o->loop_budget || o->eval_budget ? 0 : cfg->cmaes.generations;
            cs.max_evaluations = o->eval_budget;
            cs.restarts = cfg->cmaes.restarts;
            cs.bipop = strcmp(cfg->cmaes.restart_strategy, "bipop") == 0;
            cs.early_stop = cfg->cmaes.early_stop;
            cs.diagonal = diagonal_generations(cfg, n);
            if (cfg->cmaes.restarts > 0) {
                cs.collapse_std = cfg->cmaes.restart_collapse;
                cs.stall_generations = cfg->cmaes.restart_stall;
            }
            s = mlc_cmaes_create(&cs, &o->es, &o->err);
            mlc_free(x0);
            if (s != MLC_OK) return s;
        }

        if ((s = mlc_prepare_out_dir(o->dir, cfg, o->opt.force || o->opt.resume, &o->err)) !=
            MLC_OK)
            return s;
        snprintf(o->path, sizeof o->path, "%s/history.csv", o->dir);
        o->hf = fopen(o->path, "w");
        if (!o->hf) return mlc_errf(&o->err, MLC_EIO, "cannot write %s", o->path);
        history_header(o->hf);
        for (int i = 0; i < o->nhist; i++)
            history_line(o->hf, &o->hist[i]);
        fflush(o->hf);

        /* Room for the generations as configured; a budget or small BIPOP runs may need more,
         * which record_generation adds. */
        o->cap_hist = o->nhist + cfg->cmaes.generations + 1;
        mlc_history_row *nh = mlc_realloc(o->hist, (size_t)o->cap_hist * sizeof *o->hist);
        if (!nh) return out_of_memory(o);
        o->hist = nh;
    }
    if (o->in_setup && settled(o)) return MLC_OK;
    o->in_setup = 0;

    if (!o->quiet) {
        char procs[48] = "";
        if (o->nproc > 1) snprintf(procs, sizeof procs, "%d processes x ", o->nproc);
        fprintf(stderr,
                "modalloco: %d vertices, %d tets; r = %d, %d contact samples, %d modes x %d "
                "sinusoids, %d parameters; population %d, %d generations, %s%d thread%s; "
                "precompute %.2f s%s\n",
                o->p.mesh.nv, o->p.mesh.nt, mlc_model_dim(o->p.model), o->p.sub.ns, o->g.m, o->g.k,
                n, cfg->cmaes.population, cfg->cmaes.generations, procs, o->nthreads,
                o->nthreads == 1 ? "" : "s", o->t_pre, o->p.cache_used ? " (cache)" : "");
        if (cfg->cmaes.sigma0 == 0)
            fprintf(stderr, "modalloco: sigma0 %.3g (cmaes.sigma0 = 0 chooses it for %d signals)\n",
                    initial_sigma(cfg, &o->g), (o->g.q > 0 ? o->g.q : o->g.m) * o->g.k);
        if (cfg->cmaes.diagonal < 0 && diagonal_generations(cfg, n) > 0)
            fprintf(stderr,
                    "modalloco: a diagonal covariance throughout (cmaes.diagonal = -1 chooses it "
                    "for %d parameters, %d or more)\n",
                    n, MLC_AUTO_DIAGONAL_DIMENSION);
        if (mlc_sim_fma_emulated()) fputs(MLC_FMA_NOTE, stderr);
    }
    return MLC_OK;
}

/* The checkpoint on disk lags the generations by at most this many seconds of wall time
 * (checkpoint.h): writing it, with its fsyncs, after every generation cost 3-5% of a Table 1
 * job. */
#define CHECKPOINT_SECONDS 1.0

/* Rank 0: write the encoded checkpoint of the last generation, if not written yet. */
static mlc_status save_checkpoint(optimize_run *o) {
    if (!o->ckpt_pending) return MLC_OK;
    snprintf(o->path, sizeof o->path, "%s/checkpoint.bin", o->dir);
    mlc_status s = mlc_checkpoint_write(o->path, &o->ckpt, &o->err);
    if (s == MLC_OK) o->ckpt_pending = 0, o->t_ckpt = mlc_now();
    return s;
}

/* Rank 0, after a generation's tell: its history row (history.csv and the encoded checkpoint,
 * written when due) and the progress line. */
static mlc_status record_generation(optimize_run *o, int lam, int with_mean, int failed,
                                    double t_gen, double t_loop, int tty) {
    mlc_status s;
    if (o->nhist == o->cap_hist) {
        int cap = 2 * o->cap_hist;
        mlc_history_row *nh = mlc_realloc(o->hist, (size_t)cap * sizeof *o->hist);
        if (!nh) return out_of_memory(o);
        o->hist = nh, o->cap_hist = cap;
    }
    mlc_history_row *r = &o->hist[o->nhist++];
    memset(r, 0, sizeof *r); /* padding too: the checkpoint hashes these bytes */
    r->generation = mlc_cmaes_generation(o->es);
    r->evaluations = mlc_cmaes_evaluations(o->es);
    double bj = o->f[0];
    for (int c = 1; c < lam; c++)
        bj = fmin(bj, o->f[c]);
    r->best_J = bj;
    r->median_J = mlc_median(o->f, lam, o->scratch);
    r->sigma = mlc_cmaes_sigma(o->es);
    r->best_ever_J = mlc_cmaes_best_f(o->es);
    r->failed = failed;
    r->seconds = o->t_offset + (mlc_now() - o->t_start);
    r->mean_J = with_mean ? o->f[lam] : (double)NAN;
    r->rollouts = o->rollouts;
    r->restart = mlc_cmaes_restarts_done(o->es);
    r->population = lam;
    history_line(o->hf, r);
    fflush(o->hf);
    o->ckpt_pending = 0;
    if ((s = mlc_checkpoint_encode(&o->ckpt, o->fingerprint, o->hist, o->nhist, o->es, &o->err)) !=
        MLC_OK)
        return s;
    o->ckpt_pending = 1;
    if (mlc_now() - o->t_ckpt >= CHECKPOINT_SECONDS && (s = save_checkpoint(o)) != MLC_OK) return s;
    o->gens_this_session++;
    o->sum_gen += mlc_now() - t_gen;
    if (!o->quiet) {
        int gens = o->cfg.cmaes.generations;
        /* Under a budget, the generations left are estimated from the cost so far. */
        if (o->loop_budget > 0)
            gens = r->generation +
                   (int)((o->loop_budget - o->rollouts) / MLC_MAX(1, o->rollouts / o->nhist));
        else if (o->eval_budget > 0)
            gens = r->generation + (int)((o->eval_budget - r->evaluations) /
                                         MLC_MAX(1, r->evaluations / r->generation));
        double per = (mlc_now() - t_loop) / o->gens_this_session;
        char eta[32];
        format_eta(per * MLC_MAX(0, gens - r->generation), eta, sizeof eta);
        char mean[32] = "-"; /* not scored this generation (cmaes.mean_every) */
        if (!isnan(r->mean_J)) snprintf(mean, sizeof mean, tty ? "%.5g" : "%.6g", r->mean_J);
        if (tty)
            fprintf(stderr,
                    "\rgen %4d/%d  evals %6ld  best %-11.5g mean %-11s median "
                    "%-11.5g sigma %-9.3g %6.1fs  left %s   ",
                    r->generation, gens, r->evaluations, r->best_ever_J, mean, r->median_J,
                    r->sigma, r->seconds, eta);
        else
            fprintf(stderr,
                    "gen %d/%d evals %ld best %.6g mean %s median %.6g sigma "
                    "%.4g %.1fs left %s\n",
                    r->generation, gens, r->evaluations, r->best_ever_J, mean, r->median_J,
                    r->sigma, r->seconds, eta);
    }
    return MLC_OK;
}

/* Whether a generation of lam candidates (and the mean, with_mean) fits in what is left of the
 * budget, at its worst (all walk and are replayed): never overspending matters more than the
 * rollouts left over. */
static int generation_fits(const optimize_run *o, int lam, int with_mean) {
    if (o->loop_budget > 0)
        return o->rollouts + ((long)lam + with_mean) * (o->R + 1) <= o->loop_budget;
    if (o->eval_budget > 0) return mlc_cmaes_evaluations(o->es) + lam <= o->eval_budget;
    return 1;
}

/* Whether the restart CMA-ES has pending may begin (cmaes.restart_room): the budget left must
 * be at least `room` times what the run that ended spent. A new run starts again from the box
 * centre, with a larger population under IPOP, so it needs at least that much to get as far;
 * with less, its best stays far from the best-ever (on the Table 1 bat, seeds 1-11: −0.67 to
 * −1.40 in 272-1,296 evaluations, against −1.75 to −2.19 for the runs that ended after
 * 1,904-2,928), and the job had better end. Budgets in rollouts count the ended run's
 * evaluations at the job's rollouts per evaluation so far. */
static int restart_has_room(const optimize_run *o) {
    const double room = o->cfg.cmaes.restart_room;
    if (!(room > 0) || !mlc_cmaes_restart_pending(o->es)) return 1;
    const double ran = (double)mlc_cmaes_run_evaluations(o->es);
    const long evals = mlc_cmaes_evaluations(o->es);
    if (o->loop_budget > 0) {
        double per = evals > 0 ? (double)o->rollouts / (double)evals : 1;
        return (double)(o->loop_budget - o->rollouts) >= room * ran * per;
    }
    if (o->eval_budget > 0) return (double)(o->eval_budget - evals) >= room * ran;
    return 1;
}

/* The generation loop, on every rank: rank 0 asks CMA-ES for a population and broadcasts it
 * with its mean, every rank scores its share, rank 0 tells, records and saves the checkpoint.
 * Ends on the budget, a stop criterion or SIGINT/SIGTERM (after the generation: a checkpoint
 * is always saved). */
static mlc_status generations(optimize_run *o) {
    mlc_status s = MLC_OK;
    const int rank = o->rank, nproc = o->nproc, n = o->g.n;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    const int tty = isatty(STDERR_FILENO);
    double t_loop = mlc_now();
    o->t_ckpt = t_loop;
    o->in_loop = nproc > 1;

    for (;;) {
        /* Rank 0 decides whether to go on (budget, stop criteria, a signal) and hands out
         * the population; lam = 0 ends every rank's loop. */
        double t_gen = mlc_now(), comm0 = mlc_dist_comm_seconds();
        int head[2] = {0, 0}; /* population size (0 = stop), generations told before */
        int go = rank == 0 && !mlc_cmaes_stop(o->es, NULL) && !interrupted;
        if (go && !restart_has_room(o)) go = 0, o->room_spent = 1;
        if (go) {
            const double *X = mlc_cmaes_ask(o->es);
            head[0] = X ? mlc_cmaes_lambda(o->es) : 0;
            head[1] = mlc_cmaes_generation(o->es);
            if (head[0] > 0 && !generation_fits(o, head[0], scores_mean(&o->cfg, head[1])))
                head[0] = 0, o->budget_spent = 1;
            if (head[0] > 0 && head[0] <= o->lam_max) {
                /* The population, then the mean it was sampled around (after ask: a pending
                 * restart moves it). */
                memcpy(o->Xbuf, X, (size_t)head[0] * (size_t)n * sizeof(double));
                memcpy(o->Xbuf + (size_t)head[0] * n, mlc_cmaes_mean(o->es),
                       (size_t)n * sizeof(double));
            }
        }
        mlc_dist_bcast_int(head, 2, 0);
        const int lam = head[0], gen_before = head[1];
        if (lam == 0) break;
        if (lam > o->lam_max) {
            s = mlc_errf(&o->err, MLC_EINVAL, "population grew beyond %d", o->lam_max);
            break;
        }
        if (nproc > 1) mlc_dist_bcast_double(o->Xbuf, ((size_t)lam + 1) * (size_t)n, 0);
        const int with_mean = scores_mean(&o->cfg, gen_before), npts = lam + with_mean;
        int nwalk;
        double mine[2]; /* this rank's failure count and rollout seconds */
        const double best = o->rank == 0 ? mlc_cmaes_best_f(o->es) : HUGE_VAL;
        mine[0] = evaluate(o, o->Xbuf, npts, lam, gen_before, 1, best, &nwalk, &mine[1]);
        if (nproc > 1) mlc_dist_gather_fixed(mine, o->stats, 2);
        if (rank != 0) continue;
        int failed = (int)mine[0];
        double roll_max = mine[1], roll_sum = mine[1];
        if (nproc > 1) {
            failed = 0;
            roll_max = roll_sum = 0;
            for (int q = 0; q < nproc; q++) {
                failed += (int)o->stats[2 * q];
                roll_max = fmax(roll_max, o->stats[2 * q + 1]);
                roll_sum += o->stats[2 * q + 1];
            }
        }
        o->sum_roll_max += roll_max;
        o->sum_roll_mean += roll_sum / nproc;
        /* Rank 0's time in collectives includes its wait for the slowest rank, which is load
         * imbalance rather than communication: count it apart. */
        o->sum_wait += roll_max - mine[1];
        o->sum_comm += mlc_dist_comm_seconds() - comm0 - (roll_max - mine[1]);
        /* Scores (f[lam] is the mean's); ties are broken by the nominal rollout's alignment
         * and gate excess. */
        for (int c = 0; c < lam; c++)
            o->tie[c] = o->T0[c];
        o->rollouts += npts + (long)nwalk * o->R;
        if ((s = mlc_cmaes_tell_ties(o->es, o->f, o->tie)) != MLC_OK) {
            mlc_errf(&o->err, s, "optimizer update failed");
            break;
        }
        if ((s = record_generation(o, lam, with_mean, failed, t_gen, t_loop, tty)) != MLC_OK) break;
    }
    /* The last generation's checkpoint, if not on disk yet (on an error, the last one recorded). */
    if (rank == 0) {
        mlc_err first = o->err; /* an earlier error is the one to report */
        mlc_status w = save_checkpoint(o);
        if (s == MLC_OK)
            s = w;
        else
            o->err = first;
    }
    if (s == MLC_OK) {
        o->in_loop = 0;
        if (!o->quiet && tty) fputc('\n', stderr);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return s;
}

/* The gait returned: the best-ever point when it is a credible gain; else the final
 * distribution mean when that one is (the search's centre, whose neighbourhood every
 * generation sampled, is often the steadier gait); else the best-ever point, reported as
 * not found. */
static mlc_status choose_gait(optimize_run *o, const double **u, int *chose_mean) {
    mlc_status s;
    const mlc_gait_space *g = &o->g;
    worker *w = &o->workers[0];
    mlc_rollout_result r1;
    mlc_credibility c1;
    *u = mlc_cmaes_best_x(o->es);
    *chose_mean = 0;
    mlc_gait_decode(g, *u, w->A, w->T, w->th);
    mlc_actuation a1 = {g->m, g->k, w->A, w->T, w->th};
    if ((s = mlc_credibility_evaluate(
             &(mlc_credibility_def){o->p.model, &o->p.mesh, &o->obj, o->nthreads, NULL, NULL}, &a1,
             &r1, &c1, &o->err)) != MLC_OK)
        return s;
    if (mlc_credibility_found(&r1, &c1)) return MLC_OK;
    mlc_gait_decode(g, mlc_cmaes_mean(o->es), w->A, w->T, w->th);
    if ((s = mlc_credibility_evaluate(
             &(mlc_credibility_def){o->p.model, &o->p.mesh, &o->obj, o->nthreads, NULL, NULL}, &a1,
             &r1, &c1, &o->err)) != MLC_OK)
        return s;
    if (mlc_credibility_found(&r1, &c1)) {
        *u = mlc_cmaes_mean(o->es), *chose_mean = 1;
        if (!o->quiet)
            fprintf(stderr, "modalloco: the best-ever point is not a credible gait; "
                            "returning the final distribution mean, which is\n");
    }
    return MLC_OK;
}

/* ---- Gradient polish (cmaes.polish, polish.h) ------------------------------------------- */
/* The polish scores its points the way the generations score theirs (evaluate: the nominal
 * rollout and, for a point that walks, R perturbed replays, the worst counts), in batches of
 * at most a population plus one. Every point is scored as a distribution mean of one fixed
 * generation tag, so its replays' perturbations do not depend on the batch or the step: the
 * polish minimizes one deterministic function. */
#define POLISH_GEN (-2)

typedef struct polish_eval_ctx {
    optimize_run *o;
    long rollouts;
    long limit; /* rollouts the polish may spend (cmaes.budget), < 0 = no limit */
} polish_eval_ctx;

static void polish_eval(void *user, const double *X, int npts, double *f) {
    polish_eval_ctx *pc = user;
    optimize_run *o = pc->o;
    const int n = o->g.n, chunk = o->lam_max + 1;
    for (int q0 = 0; q0 < npts; q0 += chunk) {
        int nq = MLC_MIN(chunk, npts - q0), nwalk;
        double seconds;
        /* Past the budget, points are not scored: +inf is never accepted, so the polish ends
         * (its gradient and line search see no finite difference). */
        if (pc->limit >= 0 && pc->rollouts + (long)nq * (o->R + 1) > pc->limit) {
            for (int q = 0; q < nq; q++)
                f[q0 + q] = INFINITY;
            continue;
        }
        evaluate(o, X + (size_t)q0 * n, nq, 0, POLISH_GEN, 0, HUGE_VAL, &nwalk, &seconds);
        memcpy(f + q0, o->f, (size_t)nq * sizeof(double));
        pc->rollouts += nq + (long)nwalk * o->R;
    }
}

/* Whether gait u is credible and gains (mlc_credibility_found), by the full evaluation. */
static mlc_status gait_found(optimize_run *o, const double *u, int *found) {
    const mlc_gait_space *g = &o->g;
    worker *w = &o->workers[0];
    mlc_rollout_result r;
    mlc_credibility c;
    mlc_gait_decode(g, u, w->A, w->T, w->th);
    mlc_actuation a = {g->m, g->k, w->A, w->T, w->th};
    mlc_status s = mlc_credibility_evaluate(
        &(mlc_credibility_def){o->p.model, &o->p.mesh, &o->obj, o->nthreads, NULL, NULL}, &a, &r,
        &c, &o->err);
    *found = mlc_credibility_found(&r, &c);
    return s;
}

/* Polish gait u into out (n values): cmaes.polish steps from u in the normalized box [0,1]^n.
 * When u is a credible gait, the result is the last point of the polish's trail that is one
 * too (u itself when none is). Fills rep and *rollouts. */
static mlc_status polish_gait(optimize_run *o, const double *u, double *out, mlc_polish_report *rep,
                              long *rollouts) {
    const int n = o->g.n, steps = o->cfg.cmaes.polish;
    double *lohi = mlc_malloc(2 * (size_t)n * sizeof(double));
    double *trail = mlc_malloc((size_t)(steps + 1) * (size_t)n * sizeof(double));
    if (!lohi || !trail) {
        mlc_free(lohi), mlc_free(trail);
        return out_of_memory(o);
    }
    for (int i = 0; i < n; i++)
        lohi[i] = 0, lohi[n + i] = 1;
    polish_eval_ctx pc = {o, 0, -1};
    if (o->cfg.cmaes.budget > 0)
        pc.limit = MLC_MAX(0, o->cfg.cmaes.budget - o->rollouts - (o->R + 1));
    int nt = 0, found_u = 0, found = 0;
    const mlc_polish_def def = {n, lohi, lohi + n, steps, polish_eval, &pc};
    mlc_status s = mlc_polish_run(&def, u, NAN, out, trail, &nt, rep, &o->err);
    if (s == MLC_OK && nt > 1) s = gait_found(o, u, &found_u);
    if (s == MLC_OK && nt > 1 && found_u) {
        /* Keep the credibility: walk back along the accepted points. */
        int k = nt - 1;
        for (; k > 0; k--) {
            /* A check, and the re-score of the point it keeps, must fit in the budget. */
            if (pc.limit >= 0 &&
                pc.rollouts + *rollouts + 1 + MLC_CRED_REPLAYS + o->R + 1 > pc.limit) {
                k = 0; /* no budget left to check: keep u, known credible */
                break;
            }
            if ((s = gait_found(o, trail + (size_t)k * n, &found)) != MLC_OK) break;
            *rollouts += 1 + MLC_CRED_REPLAYS;
            if (found) break;
        }
        if (s == MLC_OK && k < nt - 1) {
            memcpy(out, trail + (size_t)k * n, (size_t)n * sizeof(double));
            /* Its score, as the polish computed it (reserved above); u's is f_before. */
            double f = rep->f_before;
            pc.limit = -1;
            if (k > 0) polish_eval(&pc, out, 1, &f);
            rep->f_after = f;
            if (!o->quiet)
                fprintf(stderr,
                        "modalloco: polish: the last %d improved point%s not credible; keeping "
                        "the last credible one\n",
                        nt - 1 - k, nt - 1 - k == 1 ? " is" : "s are");
        }
    }
    *rollouts += pc.rollouts;
    mlc_free(lohi);
    mlc_free(trail);
    return s;
}

/* Add result.json's "polish" block to DIR/result.json (rewritten atomically). */
/* Add `block` (owned, consumed) as `name` to the result.json that write_results wrote. */
static mlc_status add_result_block(optimize_run *o, const char *name, cJSON *block) {
    snprintf(o->path, sizeof o->path, "%s/result.json", o->dir);
    char *text = NULL;
    size_t len = 0;
    mlc_status s = mlc_file_read_all(o->path, (size_t)16 << 20, NULL, &text, &len, &o->err);
    cJSON *root = s == MLC_OK ? cJSON_Parse(text) : NULL;
    mlc_free(text);
    if (!root) {
        cJSON_Delete(block);
        return s != MLC_OK
                   ? s
                   : mlc_errf(&o->err, MLC_EIO, "%s: cannot read back result.json", o->path);
    }
    cJSON_AddItemToObject(root, name, block);
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    if (!out) return out_of_memory(o);
    char *copy = mlc_malloc(strlen(out) + 2);
    if (copy) sprintf(copy, "%s\n", out);
    cJSON_free(out);
    if (!copy) return out_of_memory(o);
    s = mlc_write_text_atomic(o->path, copy, &o->err);
    mlc_free(copy);
    return s;
}

static mlc_status add_polish_block(optimize_run *o, const mlc_polish_report *rep, long rollouts) {
    cJSON *b = cJSON_CreateObject();
    if (!b) return out_of_memory(o);
    cJSON_AddNumberToObject(b, "steps", rep->steps);
    cJSON_AddNumberToObject(b, "accepted", rep->accepted);
    add_exact(b, "J_before", rep->f_before);
    add_exact(b, "J_after", rep->f_after);
    cJSON_AddNumberToObject(b, "rollouts", (double)rollouts);
    return add_result_block(o, "polish", b);
}

/* reference.check: the returned gait replayed in the full-space reference (judge.h); prints the
 * share of the travel it kept and adds result.json's "transfer" block. A gait that does not
 * hold there is reported, not rejected: the reduced model's credibility decides the exit code. */
static mlc_status check_transfer(optimize_run *o, const mlc_actuation *act,
                                 const mlc_credibility *cred) {
    double t0 = mlc_now();
    mlc_judgement j;
    mlc_status s = mlc_judge_fullspace(&o->p, &o->cfg, act, cred, &j, &o->err);
    if (s != MLC_OK) return s;
    const double share = mlc_judgement_transfer(&j), seconds = mlc_now() - t0;
    printf("transfer_displacement %.9g\ntransfer_fraction %.6g\ntransfer_credible %s\n",
           j.c.full.displacement, share, j.cred.credible ? "true" : "false");
    if (!o->quiet)
        fprintf(stderr,
                "modalloco: in the full-space reference the gait keeps %.0f%% of its travel "
                "(%.3g of %.3g)%s, %.1f s\n",
                100 * share, j.c.full.displacement, j.c.reduced.displacement,
                j.cred.credible     ? ""
                : j.cred.up_min < 0 ? " and tips over"
                                    : " and is not credible there",
                seconds);
    cJSON *b = cJSON_CreateObject();
    if (!b) return out_of_memory(o);
    cJSON_AddStringToObject(b, "model", "fullspace");
    add_exact(b, "displacement", j.c.full.displacement);
    add_exact(b, "fraction", share);
    add_exact(b, "J", j.c.full.J);
    mlc_json_add_credibility(b, &j.cred);
    cJSON_AddNumberToObject(b, "contact_vertices", j.contact_vertices);
    cJSON_AddNumberToObject(b, "seconds", seconds);
    return add_result_block(o, "transfer", b);
}

/* The outputs of gait u: its rollout (mlc_write_rollout), params.json, history.svg and the
 * viewer; the summary on stdout, and exit code 3 when it is not a credible gait that gains. */
static mlc_status write_results(optimize_run *o, const double *u, double J_mean, int chose_mean) {
    mlc_status s;
    const mlc_config *cfg = &o->cfg;
    const mlc_gait_space *g = &o->g;
    const int nhist = o->nhist;
    worker *w = &o->workers[0];
    mlc_gait_decode(g, u, w->A, w->T, w->th);
    mlc_actuation act = {g->m, g->k, w->A, w->T, w->th};
    mlc_rollout_result res;
    mlc_credibility cred;
    if ((s = mlc_write_rollout(&o->p, cfg, &act, o->dir, 1, &res, &cred, &o->err)) != MLC_OK)
        return s;
    const int found = mlc_credibility_found(&res, &cred);
    const char *reason = NULL;
    mlc_cmaes_stop(o->es, &reason);
    if (o->budget_spent) reason = "budget";
    if (o->room_spent) reason = "restart_room";
    char *pj = params_json(cfg, &o->p, g, u, w->A, w->T, w->th, &res, found, o->es,
                           reason ? reason : "", J_mean, chose_mean);
    if (!pj) return out_of_memory(o);
    snprintf(o->path, sizeof o->path, "%s/params.json", o->dir);
    s = mlc_write_text_atomic(o->path, pj, &o->err);
    mlc_free(pj);
    if (s != MLC_OK) return s;
    int *gen = mlc_malloc(2 * (size_t)(nhist ? nhist : 1) * sizeof(int));
    double *best = mlc_malloc(3 * (size_t)(nhist ? nhist : 1) * sizeof(double));
    if (!gen || !best) {
        mlc_free(gen);
        mlc_free(best);
        return out_of_memory(o);
    }
    for (int i = 0; i < nhist; i++) {
        gen[i] = o->hist[i].generation;
        best[i] = o->hist[i].best_J;
        best[nhist + i] = o->hist[i].median_J;
        best[2 * nhist + i] = o->hist[i].sigma;
        gen[nhist + i] = o->hist[i].restart;
    }
    snprintf(o->path, sizeof o->path, "%s/history.svg", o->dir);
    s = mlc_history_svg_write(o->path, gen, best, best + nhist, best + 2 * nhist, gen + nhist,
                              nhist, "modalloco: best and median J per generation", &o->err);
    mlc_free(gen);
    mlc_free(best);
    if (s != MLC_OK) return s;
    if (cfg->output.viewer && (s = mlc_write_viewer(o->dir, &o->err)) != MLC_OK) return s;
    printf("J %.9g\nJ_disp %.9g\nJ_align %.9g\nJ_work %.9g\ndisplacement %.9g\n"
           "generations %d\nevaluations %ld\n",
           res.J, res.J_disp, res.J_align, res.J_work, res.displacement,
           mlc_cmaes_generation(o->es), mlc_cmaes_evaluations(o->es));
    if (o->obj.kind != MLC_OBJ_LOCOMOTION || o->obj.effort > 0 || o->obj.vibration > 0)
        printf("J_task %.9g\ntask_error %.9g\nJ_effort %.9g\nJ_vibration %.9g\n", res.J_task,
               res.task_error, res.J_effort, res.J_vibration);
    mlc_print_credibility(stdout, &cred);
    printf("found %s\n", found ? "true" : "false");
    if (cfg->reference.check && (s = check_transfer(o, &act, &cred)) != MLC_OK) return s;
    if (!o->quiet)
        fprintf(stderr, "modalloco: done in %.1f s (%s); outputs in %s\n", mlc_now() - o->t_start,
                reason ? reason : "budget", o->dir);
    /* Ran to the end but nothing credible that gains: say so plainly, exit 3. */
    if (!found) {
        char why[512];
        mlc_credibility_explain(&cred, o->obj.kind, why, sizeof why);
        if (!(res.J < 0))
            fprintf(stderr,
                    "modalloco: no credible gait found: the best gait does not "
                    "gain (J = %.6g); outputs are written with \"found\": false\n",
                    res.J);
        else
            fprintf(stderr,
                    "modalloco: no credible gait found: the best gait (J = %.6g) "
                    "fails %s; outputs are written with \"found\": false\n",
                    res.J, why);
        o->rc = 3;
    }
    return MLC_OK;
}

/* The finish (rank 0; the files and the report are its own): close the history, report the
 * timing, and unless interrupted (exit 130, the checkpoint is saved) score the final mean,
 * choose the gait and write the results. */
static mlc_status finish(optimize_run *o) {
    mlc_status s;
    if (o->rank != 0) return MLC_OK;
    fclose(o->hf);
    o->hf = NULL;
    const int nproc = o->nproc;
    if (!o->quiet && o->gens_this_session > 0 && (nproc > 1 || getenv("MLC_TIMING"))) {
        double n = o->gens_this_session;
        fprintf(stderr,
                "modalloco: timing per generation: %.4f s total, rollouts %.4f s "
                "(slowest of %d process%s; mean %.4f s), communication %.6f s, "
                "waiting for the slowest %.4f s\n",
                o->sum_gen / n, o->sum_roll_max / n, nproc, nproc == 1 ? "" : "es",
                o->sum_roll_mean / n, fmax(o->sum_comm, 0) / n, o->sum_wait / n);
    }
    if (interrupted) {
        fprintf(stderr,
                "modalloco: interrupted after generation %d; checkpoint saved. Continue "
                "with: modalloco optimize --resume %s\n",
                o->nhist, o->dir);
        o->rc = 130;
        return MLC_OK;
    }

    /* The final distribution mean's score (params.json J_mean), as the generations score it,
     * all in this process. */
    int nwalk;
    double seconds;
    evaluate(o, mlc_cmaes_mean(o->es), 1, 0, mlc_cmaes_generation(o->es), 0, HUGE_VAL, &nwalk,
             &seconds);
    const double J_mean = o->f[0];

    const double *u;
    int chose_mean;
    if ((s = choose_gait(o, &u, &chose_mean)) != MLC_OK) return s;
    if (o->cfg.cmaes.polish <= 0) return write_results(o, u, J_mean, chose_mean);

    double *up = mlc_malloc((size_t)o->g.n * sizeof(double));
    if (!up) return out_of_memory(o);
    mlc_polish_report rep;
    long rollouts = 0;
    double t0 = mlc_now();
    s = polish_gait(o, u, up, &rep, &rollouts);
    if (s == MLC_OK && !o->quiet)
        fprintf(stderr,
                "modalloco: polish: J %.9g -> %.9g in %d gradient steps (%d accepted), %ld "
                "rollouts, %.1f s\n",
                rep.f_before, rep.f_after, rep.steps, rep.accepted, rollouts, mlc_now() - t0);
    if (s == MLC_OK) s = write_results(o, up, J_mean, chose_mean);
    if (s == MLC_OK) {
        printf("polish_steps %d\npolish_J_before %.9g\npolish_J_after %.9g\npolish_rollouts %ld\n",
               rep.steps, rep.f_before, rep.f_after, rollouts);
        s = add_polish_block(o, &rep, rollouts);
    }
    mlc_free(up);
    return s;
}

int mlc_cmd_optimize(const mlc_cli_options *opt_in) {
    optimize_run run;
    memset(&run, 0, sizeof run);
    optimize_run *o = &run;
    o->opt = *opt_in;
    o->p.note = mlc_cli_note;
    mlc_status s = setup(o);
    if (s == MLC_OK && !o->stop) s = o->opt.dry_run ? dry_run(o) : start(o);
    if (s == MLC_OK && !o->stop) s = generations(o);
    if (s == MLC_OK && !o->stop) s = finish(o);
    if (s == MLC_OK && !o->stop && o->rank == 0 && (o->rc == 0 || o->rc == 3))
        s = mlc_cli_print_result_json(o->dir, 0, &o->err); /* --json */
    if (s != MLC_OK) {
        if (o->in_setup) {
            o->rc = settle(s, &o->err);
        } else {
            o->rc = mlc_cli_fail(s, &o->err);
            if (o->in_loop) mlc_dist_abort(o->rc); /* the other ranks wait in a collective */
        }
    }
    if (o->hf) fclose(o->hf);
    for (int t = 0; t < o->nworkers; t++) {
        mlc_rollout_destroy(o->workers[t].ro);
        mlc_free(o->workers[t].A);
    }
    mlc_free(o->workers);
    mlc_free(o->hist);
    mlc_free(o->ckpt.data);
    mlc_free(o->f);
    mlc_free(o->Xbuf);
    mlc_free(o->Jv);
    mlc_free(o->pts);
    mlc_free(o->stats);
    mlc_cmaes_destroy(o->es);
    mlc_pipeline_free(&o->p);
    return o->rc;
}
