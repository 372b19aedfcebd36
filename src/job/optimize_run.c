/* optimize_run.c: the optimize job (optimize_run.h): CMA-ES over the actuation parameters
 * (docs/method.md §8), each candidate scored by a reduced rollout; OpenMP across the population; a
 * checkpoint (at most every CHECKPOINT_SECONDS, and when the generations end); params.json,
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
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "checkpoint.h"
#include "cmaes.h"
#include "dist.h"
#include "gait.h"
#include "internal/optimize_job.h"
#include "output.h"
#include "polish.h"
#include "rollout_io.h"
#include "stop_signal.h"

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

static void format_eta(double s, char *buf, size_t cap) {
    if (!(s >= 0) || s > 1e7)
        snprintf(buf, cap, "?");
    else if (s < 60)
        snprintf(buf, cap, "%.0fs", s);
    else
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

/* ---- Several processes: setup agreement and the shared precompute ------------------------ */
/* A failure this process reports (the sink prints it); its exit code. */
static int report(const optimize_run *o, mlc_status s, const mlc_err *err) {
    return mlc_sink_fail(&o->def.sink, s, err);
}

/* Collective: settle the outcome of a setup step that every rank ran (or skipped). Returns 0
 * when every rank succeeded. When rank 0 failed (input errors, which every rank usually meets
 * alike) rank 0 reports its message and every rank returns the exit code: a clean exit. When
 * only another rank failed, that rank reports its message and aborts the job, and the others
 * wait for the abort, so the message is never lost and nothing hangs. */
static int settle(const optimize_run *o, mlc_status s, const mlc_err *err) {
    int first;
    mlc_status all = mlc_dist_agree(s, &first);
    if (all == MLC_OK) return 0;
    int code = mlc_exit_code(all);
    if (first == 0) return mlc_dist_rank() == 0 ? report(o, s, err) : code;
    if (s != MLC_OK) {
        mlc_err ranked;
        mlc_errf(&ranked, s, "rank %d of %d: %s", mlc_dist_rank(), mlc_dist_size(),
                 err && err->msg[0] ? err->msg : mlc_strerror(s));
        mlc_dist_abort(report(o, s, &ranked));
    }
    mlc_dist_await_abort(code);
}

/* The test seam (mlc_optimize_def.fault): a failure injected right before this process's
 * precompute; none in the program. */
static mlc_status fault_hook(const mlc_optimize_def *d, mlc_err *err) {
    return d->fault ? d->fault(d->fault_user, mlc_dist_rank(), err) : MLC_OK;
}

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
static mlc_status model_root(mlc_pipeline *p, const mlc_config *cfg, const mlc_optimize_def *d,
                             mlc_err *err) {
    mlc_status s;
    mlc_config *pc = mlc_malloc(sizeof *pc);
    if (!pc) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    *pc = *cfg;
    if ((s = shared_cache_path(cfg, pc->subspace.cache, sizeof pc->subspace.cache, err)) ==
            MLC_OK &&
        (s = mlc_mkdir_p(cfg->output.dir, err)) == MLC_OK && (s = fault_hook(d, err)) == MLC_OK)
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
static mlc_status model_worker(mlc_pipeline *p, const mlc_config *cfg, const mlc_optimize_def *d,
                               mlc_err *err) {
    mlc_status s;
    char cache[MLC_CONFIG_PATH_MAX];
    if ((s = shared_cache_path(cfg, cache, sizeof cache, err)) != MLC_OK) return s;
    if ((s = fault_hook(d, err)) != MLC_OK) return s;
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

/* ---- The job: setup, the generation loop, the finish ------------------------------------- */
/* settle() of a step every rank passed: 1 (and the run stops) when another rank failed. */
static int settled(optimize_run *o) {
    if ((o->rc = settle(o, MLC_OK, &o->err)) != 0) o->stop = 1;
    return o->stop;
}

/* Parameters from which cmaes.diagonal = -1 keeps the covariance diagonal throughout. */
#define MLC_AUTO_DIAGONAL_DIMENSION 100
/* cmaes.sigma0 = 0: σ₀ = MLC_SIGMA0_BASE × min(1, MLC_SIGMA0_SIGNALS / s)
 *                           × min(1, MLC_SIGMA0_HANDLES / w), with the square root of the first
 * factor for objectives without the upright limit (roll, flip). */
#define MLC_SIGMA0_BASE 0.3
#define MLC_SIGMA0_SIGNALS 8.0
#define MLC_SIGMA0_HANDLES 5.0

/* cmaes.sigma0, with 0 chosen from the driven signals s = (q or m) × k and the skinning modes w.
 * The m·k sinusoids add up, and over a rollout of many periods their peaks meet: a leap or a
 * tip happens at the worst moment, where the strain grows as s·σ₀, not as its root mean square
 * sqrt(s)·σ₀. 0.3 suits 8 signals (4 modes × 2 sinusoids, the paper's Bat row's 6); more
 * signals start narrower as 8/s (the Couch row's 20 signals at sqrt(8/20)·0.3 = 0.19 leapt or
 * tipped with no gain for 51-137 generations; at 8/20·0.3 = 0.12 seeds 1-3 first gained in
 * generations 2, 27 and 16). A finer subspace answers the same actuation with more motion: at
 * w = 10 and 0.3 every candidate of the cat's first 100 generations leapt or tipped; at 0.15 the
 * search found credible gaits on every zoo body but the penguin, which falls over even with no
 * actuation. So σ₀ shrinks as 5/w above the paper's five handles (docs/method.md, "A finer
 * subspace with a narrower start"). */
static double initial_sigma(const mlc_config *cfg, const mlc_gait_space *g) {
    if (cfg->cmaes.sigma0 > 0) return cfg->cmaes.sigma0;
    double signals = (double)((g->q > 0 ? g->q : g->m) * g->k);
    double handles = (double)cfg->subspace.skinning_modes;
    /* Where turning over is the task (roll, flip: up_min does not apply), a tip is no failure,
     * and the root mean square rule √(8/s) keeps the wider start those searches need. */
    const mlc_objective_kind_info *kind = mlc_objective_kind_info_of(cfg->objective.kind);
    const double fewer = fmin(1.0, MLC_SIGMA0_SIGNALS / signals);
    return MLC_SIGMA0_BASE * (kind && !kind->up ? sqrt(fewer) : fewer) *
           fmin(1.0, MLC_SIGMA0_HANDLES / handles);
}

/* reference.rerank = -1: the full-space validation replays candidates while their rollouts
 * together stay under MLC_RERANK_AUTO_TET_STEPS tet-steps (tets × sim.steps each: 4.4-7 CPU s at
 * the 0.55-0.89 µs a tet-step of the quadruped's and the cat's replays on one thread; 6-13 s when
 * this was chosen, with a slower reference), at most MLC_RERANK_AUTO_MAX of them. On bodies of a
 * few thousand tets a replay costs a fraction of a second, and replaying 16 of the last
 * generations' bests made the zoo's failing small gaits hold (docs/method.md, "Choosing the gait
 * where it holds"); a 19-21k-tet body gets the returned gait checked. A body too large for that
 * budget still gets its returned gait checked while one replay stays under
 * MLC_CHECK_AUTO_TET_STEPS: up to 100k tets at 300 steps, 5-8 s of wall time on 2 threads for
 * the cat and the hand, 10-12 s for spot (59k) and the octopus (49k), 11-16 s for an 86k-tet
 * voxel elephant, so that the user learns how much of the travel held (result.json "transfer")
 * without asking, and a gait that does not hold is searched for again (reference.refine: spot's
 * seed 3, which tumbles in full space, then holds). Larger bodies get none. */
#define MLC_RERANK_AUTO_TET_STEPS 8.0e6
#define MLC_CHECK_AUTO_TET_STEPS 30.0e6
#define MLC_RERANK_AUTO_MAX 16
/* --dry-run's estimate of a full-space replay, seconds a tet-step on one thread: the cat's rate,
 * the slower of the measured two (the quadruped's is 0.55e-6). */
#define MLC_REPLAY_SECONDS_PER_TET_STEP 0.9e-6
/* What each further thread of one replay adds to its speed, as a share of the first thread's:
 * the cat's replay took 10.0 s on one thread and 5.9 s on two. */
#define MLC_REPLAY_THREAD_GAIN 0.7

static int rerank_candidates(const mlc_config *cfg, int tets) {
    if (cfg->reference.rerank >= 0) return cfg->reference.rerank;
    const double per = (double)tets * (double)cfg->sim.steps;
    if (!(per > 0)) return 0;
    const double k = floor(MLC_RERANK_AUTO_TET_STEPS / per);
    if (k < 1) return per <= MLC_CHECK_AUTO_TET_STEPS;
    return (int)fmin(k, MLC_RERANK_AUTO_MAX);
}

/* cmaes.diagonal, with -1 chosen from the dimension n: with n parameters the full covariance
 * learns at rates of about 2/n² a generation, so from about 100 on it barely leaves the
 * identity within a 200-generation budget (the octopus's 108 parameters: docs/method.md),
 * while a diagonal one learns each parameter's scale (n + 2)/3 times faster. */
static int diagonal_generations(const mlc_config *cfg, int n) {
    if (cfg->cmaes.diagonal >= 0) return cfg->cmaes.diagonal;
    return n >= MLC_AUTO_DIAGONAL_DIMENSION ? INT_MAX : 0;
}

/* The precompute and what the search runs on: the pipeline's model (on several ranks, rank 0
 * computes and the others read its cache), the gait space and objective, and one worker (a
 * rollout and parameter buffers) per thread. */
static mlc_status build(optimize_run *o) {
    mlc_status s;
    const mlc_optimize_def *d = &o->def;
    const mlc_config *cfg = &o->cfg;
    if (o->nproc == 1) {
        if ((s = fault_hook(d, &o->err)) != MLC_OK ||
            (s = mlc_pipeline_model(&o->p, cfg, &o->err)) != MLC_OK)
            return s;
    } else {
        /* Rank 0 precomputes and writes the cache; after the agreement (a barrier) the others
         * read it. */
        if (o->rank == 0 && (s = model_root(&o->p, cfg, d, &o->err)) != MLC_OK) return s;
        if (settled(o)) return MLC_OK;
        if (o->rank != 0 && (s = model_worker(&o->p, cfg, d, &o->err)) != MLC_OK) return s;
        if (settled(o)) return MLC_OK;
    }

    /* Search space. */
    mlc_gait_space *g = &o->g;
    if ((s = mlc_pipeline_gait_space(&o->p, cfg, g, &o->err)) != MLC_OK) return s;
    if (cfg->cmaes.nstart > 0 && cfg->cmaes.nstart != g->n)
        return mlc_errf(&o->err, MLC_EINVAL,
                        "key 'cmaes.start' has %d values, but this search has %d parameters (%d "
                        "modes x %d sinusoids); give %d values in [0, 1], or [] to start from "
                        "the box's centre",
                        cfg->cmaes.nstart, g->n, g->m, g->k, g->n);
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
    if (!o->workers) return mlc_optimize_oom(o);
    const size_t mk = (size_t)g->m * (size_t)g->k;
    for (int t = 0; t < o->nworkers; t++) {
        worker *w = &o->workers[t];
        w->A = mlc_malloc(3 * mk * sizeof(double));
        if (!w->A || mlc_rollout_create(o->p.model, &w->ro) != MLC_OK) return mlc_optimize_oom(o);
        w->T = w->A + mk;
        w->th = w->A + 2 * mk;
    }
    return MLC_OK;
}

/* What build made, released: the workers and the pipeline (the gait space and objective point
 * into it). The pipeline's note callback stays. */
static void unbuild(optimize_run *o) {
    for (int t = 0; t < o->nworkers; t++) {
        mlc_rollout_destroy(o->workers[t].ro);
        mlc_free(o->workers[t].A);
    }
    mlc_free(o->workers);
    o->workers = NULL, o->nworkers = 0;
    const mlc_pipeline_note_fn note = o->p.note;
    void *note_user = o->p.note_user;
    mlc_pipeline_free(&o->p);
    memset(&o->p, 0, sizeof o->p);
    o->p.note = note, o->p.note_user = note_user;
    memset(&o->g, 0, sizeof o->g);
}

static mlc_status passive_up_min(optimize_run *o, double *up_min, double rest_up[3]);

/* mesh.lay_down: a body that falls over when left alone can keep a gait upright only by
 * balancing, which the reduced model allows and a finer body seldom reproduces; the penguin
 * tips in every zoo search (docs/method.md, "Bodies that cannot stand"). Searched in the pose
 * it comes to rest in, such a body crawls credibly. The job then runs as if the user had set
 * that pose: mesh.up becomes it (rounded as the note prints it) and mesh.lay_down false, so
 * config.json, params.json and a resume replay the search as it ran, and the resume's
 * fingerprint is the new configuration's. Every rank decides alike: the passive rollout is a
 * function of the model's bits. */
static mlc_status lay_down(optimize_run *o) {
    mlc_config *cfg = &o->cfg;
    const mlc_objective_kind_info *kind = mlc_objective_kind_info_of(o->obj.kind);
    if (!cfg->mesh.lay_down || !kind || !kind->up) return MLC_OK;
    double up_min, rest_up[3], up[3], len = 0;
    mlc_status s = passive_up_min(o, &up_min, rest_up);
    if (s != MLC_OK) return s;
    o->passive_known = 1, o->passive_up_min = up_min; /* start's note reads it */
    memcpy(o->passive_rest_up, rest_up, sizeof rest_up);
    if (up_min > MLC_CRED_UP_MIN) return MLC_OK;
    for (int j = 0; j < 3; j++) {
        up[j] = round(1000 * rest_up[j]) / 1000;
        len += up[j] * up[j];
    }
    if (!(len > 0.25)) return MLC_OK; /* no pose to name: the rollout failed */
    if (!o->quiet)
        mlc_sink_say(&o->def.sink, 0,
                     "modalloco: left alone, this body falls over within %.1f s (up_min %.2f with "
                     "no actuation); the search lays it down as it comes to rest, "
                     "mesh.up=[%.3f,%.3f,%.3f] (--set mesh.lay_down=false keeps it standing)\n",
                     cfg->sim.steps * cfg->sim.dt, up_min, up[0], up[1], up[2]);
    memcpy(cfg->mesh.up_vector, up, sizeof up);
    cfg->mesh.up[0] = '\0';
    cfg->mesh.lay_down = 0;
    o->fingerprint = mlc_checkpoint_fingerprint(cfg);
    o->passive_known = 0; /* another model: start rolls it out for its note */
    unbuild(o);
    return build(o);
}

/* Setup: the configuration, the model (with several processes rank 0 precomputes and the
 * others read its cache), the search space, a worker per thread (laid down first when the body
 * cannot stand) and the buffers of a generation. */
static mlc_status setup(optimize_run *o) {
    mlc_status s;
    const mlc_optimize_def *d = &o->def;
    mlc_config *cfg = &o->cfg;
    if ((s = mlc_dist_init(&o->err)) != MLC_OK) return s;
    o->rank = mlc_dist_rank(), o->nproc = mlc_dist_size();
    o->in_setup = o->nproc > 1;

    if (d->load) {
        if ((s = d->load(d->load_user, cfg, &o->err)) != MLC_OK) return s;
    } else if (d->config) {
        *cfg = *d->config;
    } else {
        return mlc_errf(&o->err, MLC_EINVAL, "optimize: no configuration given");
    }
    if (d->resume && strcmp(cfg->output.dir, d->resume) != 0)
        return mlc_errf(&o->err, MLC_EINVAL,
                        "--resume %s conflicts with output.dir %s; they must be "
                        "the same directory",
                        d->resume, cfg->output.dir);
    if (o->in_setup && settled(o)) return MLC_OK;
    o->fingerprint = mlc_checkpoint_fingerprint(cfg);
    o->dir = cfg->output.dir;
    snprintf(o->res->dir, sizeof o->res->dir, "%s", cfg->output.dir);
    o->quiet = d->quiet || o->rank != 0; /* one voice: rank 0's */

    o->p.note = mlc_sink_note; /* the pipeline's notes, from every rank as before */
    o->p.note_user = (void *)&o->def.sink;
    o->t_start = mlc_now();
    if ((s = build(o)) != MLC_OK || o->stop) return s;
    if ((s = lay_down(o)) != MLC_OK || o->stop) return s;
    o->t_pre = mlc_now() - o->t_start;
    o->rerank = rerank_candidates(cfg, o->p.mesh.nt);
    const mlc_gait_space *g = &o->g;
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
    if (!o->f || !o->Jv || !o->pts || !o->Xbuf) return mlc_optimize_oom(o);
    o->scratch = o->f + npts_max;
    o->tie = o->f + 2 * npts_max;
    o->J0 = o->Jv, o->T0 = o->Jv + npts_max, o->J2 = o->Jv + 2 * npts_max;
    o->T2 = o->J2 + npts_max * (size_t)R;
    if (o->nproc > 1) {
        o->stats = mlc_malloc(2 * (size_t)o->nproc * sizeof(double));
        if (!o->stats) return mlc_optimize_oom(o);
    }
    return MLC_OK;
}

/* A body that falls over when left alone can only stay up in a gait by actuating, and that
 * balance seldom holds in a finer model (docs/method.md, "One recipe for any body"). One passive
 * rollout in the reduced model, before the search, says so; *up_min is its lowest (R ŷ)·ŷ, and
 * rest_up (3) the unit direction of the input mesh that points up when the rollout ends, Rᵀŷ
 * taken back through the preparation's rotation: as mesh.up it lays the body down the way it
 * fell. The rollout starts from rest (mlc_rollout_run resets it), so the search's bits do not
 * change. */
static mlc_status passive_up_min(optimize_run *o, double *up_min, double rest_up[3]) {
    worker *w = &o->workers[0];
    const size_t mk = (size_t)o->g.m * (size_t)o->g.k;
    for (size_t i = 0; i < mk; i++)
        w->A[i] = 0, w->T[i] = 1, w->th[i] = 0;
    const mlc_actuation rest = {o->g.m, o->g.k, w->A, w->T, w->th};
    mlc_cred_meter *meter;
    mlc_status s = mlc_cred_meter_create(o->p.model, &o->p.mesh, &meter, &o->err);
    if (s != MLC_OK) return s;
    mlc_rollout_result res;
    s = mlc_rollout_run(w->ro, &rest, &o->obj, mlc_cred_meter_frame, meter, &res);
    mlc_credibility c;
    memset(&c, 0, sizeof c);
    mlc_cred_meter_result(meter, &c);
    mlc_cred_meter_destroy(meter);
    *up_min = res.failed ? -1 : c.up_min;
    mlc_frame_state f;
    mlc_rollout_frame_state(w->ro, &f);
    const double *Q = o->p.transform.rotate; /* row-major; R column-major: Rᵀŷ = row 1 of R */
    const double up[3] = {f.R[1], f.R[4], f.R[7]};
    double len = 0;
    for (int j = 0; j < 3; j++) {
        rest_up[j] = Q[j] * up[0] + Q[3 + j] * up[1] + Q[6 + j] * up[2];
        len += rest_up[j] * rest_up[j];
    }
    len = sqrt(len);
    for (int j = 0; j < 3; j++) /* no pose from a rollout that failed */
        rest_up[j] = len > 0 && !res.failed ? rest_up[j] / len : (double)NAN;
    return s;
}

/* --dry-run's typical cost of the replays under robust_scope "improving": all rollouts over the
 * candidates' and means' own, median and range over 70 default jobs (dry_run). */
#define MLC_DRY_RUN_REPLAYS_TYPICAL 1.19
#define MLC_DRY_RUN_REPLAYS_LOW 0.99
#define MLC_DRY_RUN_REPLAYS_HIGH 1.57

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
    if (!U) return mlc_optimize_oom(o);
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
    /* Each generation: the candidates, and every cmaes.mean_every generations the mean too
     * (`nominal` in all), each with at most R replays. */
    const long gens = cfg->cmaes.generations, every = cfg->cmaes.mean_every;
    const long nominal =
        (long)cfg->cmaes.population * gens + (every > 0 ? (gens + every - 1) / every : 0);
    const long rollouts = nominal * (R + 1);
    /* The validation's replays, side by side on the threads (optimize_rerank.c). */
    double validation = 0;
    if (o->rerank > 0) {
        const int par = MLC_MAX(1, MLC_MIN(nthreads, o->rerank));
        const int each =
            cfg->reference.threads > 0 ? cfg->reference.threads : MLC_MAX(1, nthreads / par);
        const double one = MLC_REPLAY_SECONDS_PER_TET_STEP * o->p.mesh.nt * cfg->sim.steps /
                           (1 + MLC_REPLAY_THREAD_GAIN * (each - 1));
        validation = one * (double)((o->rerank + par - 1) / par);
    }
    /* Everything but the search's rollouts: the precompute, a batch's start, the validation. */
    const double base = o->t_pre + 2 * per * nthreads + validation;
    const double est = base + per * (double)rollouts / nproc;
    mlc_sink_say(&o->def.sink, 1, "mesh %s: %d vertices, %d tets\n", o->p.mesh_path, o->p.mesh.nv,
                 o->p.mesh.nt);
    mlc_sink_say(
        &o->def.sink, 1,
        "reduced dimension r %d, contact samples %d, modes %d, sinusoids %d, parameters %d\n",
        mlc_model_dim(o->p.model), o->p.sub.ns, g->m, g->k, g->n);
    mlc_sink_say(&o->def.sink, 1,
                 "rollouts %ld ((population %d + mean) x %d replays x %d generations), steps "
                 "per rollout %d\n",
                 rollouts, cfg->cmaes.population, R + 1, cfg->cmaes.generations, cfg->sim.steps);
    mlc_sink_say(&o->def.sink, 1, "precompute %.3f s%s\n", o->t_pre,
                 o->p.cache_used ? " (cache)" : "");
    mlc_sink_say(&o->def.sink, 1,
                 "rollout %.4f s per rollout at %d thread%s x %d process%s (%.2f us per step)\n",
                 per, nthreads, nthreads == 1 ? "" : "s", nproc, nproc == 1 ? "" : "es",
                 1e6 * per * nthreads / cfg->sim.steps);
    if (o->rerank > 0)
        mlc_sink_say(&o->def.sink, 1,
                     "full-space validation up to %d candidate%s, about %.1f s (%.2g us a "
                     "tet-step on one thread)\n",
                     o->rerank, o->rerank == 1 ? "" : "s", validation,
                     1e6 * MLC_REPLAY_SECONDS_PER_TET_STEP);
    mlc_sink_say(&o->def.sink, 1, "estimated wall time %.1f s\n", est);
    /* reference.refine's further searches: on the zoo the finer model's search from the first
     * gait (3/10 of the generations) took 0.4-0.7 times the first search, the one from the centre
     * 1.2-2.1 times (docs/method.md, "A second search in a finer model"). */
    if ((o->rerank > 0 || cfg->reference.check) && mlc_optimize_refine_wanted(cfg, -INFINITY, 0))
        mlc_sink_say(
            &o->def.sink, 1,
            "further searches when the gait does not hold in the full-space reference "
            "(reference.refine %g): subspace.skinning_modes %d from that gait, about 0.4-0.7 "
            "times the estimate again, then from the centre, 1.2-2.1 times\n",
            cfg->reference.refine, MLC_MIN(32, 2 * cfg->subspace.skinning_modes));
    /* optimize_refine.c: only a search that would end with exit 3 pays for it (the scorpion's
     * seed 2: 1.9 times the first search, a gain being found and replayed). */
    if (mlc_optimize_retry_wanted(cfg, 0, -1))
        mlc_sink_say(&o->def.sink, 1,
                     "a further search when the search ends with no gain, going backward: "
                     "objective.whole_losses on, about the estimate again\n");
    /* That estimate is an upper bound: under robust_scope "improving" only a candidate that
     * would become the best pays for its replays, and they stop at the first that falls short.
     * Over 70 jobs with the defaults (the zoo, the held-out bodies, the Table 1 examples) the
     * rollouts came to 0.99-1.57 times the candidates' and means' own, median 1.19. */
    if (o->improving && R > 0) {
        mlc_sink_say(&o->def.sink, 1,
                     "typical wall time %.1f s (%.1f-%.1f s: the improving candidates' replays "
                     "measured at %.2f-%.2f times the candidates' rollouts)\n",
                     base + per * (double)nominal * MLC_DRY_RUN_REPLAYS_TYPICAL / nproc,
                     base + per * (double)nominal * MLC_DRY_RUN_REPLAYS_LOW / nproc,
                     base + per * (double)nominal * MLC_DRY_RUN_REPLAYS_HIGH / nproc,
                     MLC_DRY_RUN_REPLAYS_LOW, MLC_DRY_RUN_REPLAYS_HIGH);
    }
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
        if (o->def.resume) {
            snprintf(o->path, sizeof o->path, "%s/checkpoint.bin", o->dir);
            unsigned char *job = NULL;
            size_t job_len = 0;
            if ((s = mlc_checkpoint_read(o->path, o->fingerprint, &o->hist, &o->nhist, &o->es, &job,
                                         &job_len, &o->err)) != MLC_OK)
                return s;
            /* The fingerprint is only a hash: a doctored state of another size must not be
             * read as this run's population. */
            if (mlc_cmaes_dim(o->es) != n) {
                mlc_free(job);
                return mlc_errf(&o->err, MLC_EPARSE,
                                "--resume: %s: the optimizer state has %d "
                                "parameters, this configuration has %d (corrupt checkpoint)",
                                o->path, mlc_cmaes_dim(o->es), n);
            }
            s = mlc_optimize_rerank_load(o, job, job_len);
            mlc_free(job);
            if (s != MLC_OK) return s;
            if (o->nhist > 0) {
                o->t_offset = o->hist[o->nhist - 1].seconds;
                o->rollouts = o->hist[o->nhist - 1].rollouts;
            }
            if (!o->quiet)
                mlc_sink_say(&o->def.sink, 0, "modalloco: resuming %s at generation %d\n", o->dir,
                             o->nhist);
        } else {
            mlc_cmaes_settings cs;
            mlc_cmaes_settings_default(&cs, n);
            double *x0 = mlc_malloc(3 * (size_t)n * sizeof(double));
            if (!x0) return mlc_optimize_oom(o);
            double *lo = x0 + n, *hi = x0 + 2 * n;
            for (int i = 0; i < n; i++)
                x0[i] = cfg->cmaes.nstart > 0 ? cfg->cmaes.start[i] : 0.5, lo[i] = 0.0, hi[i] = 1.0;
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

        if ((s = mlc_prepare_out_dir(o->dir, cfg, o->def.force || o->def.resume, &o->err)) !=
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
        if (!nh) return mlc_optimize_oom(o);
        o->hist = nh;
    }
    if (o->in_setup && settled(o)) return MLC_OK;
    o->in_setup = 0;

    if (!o->quiet) {
        char procs[48] = "";
        if (o->nproc > 1) snprintf(procs, sizeof procs, "%d processes x ", o->nproc);
        mlc_sink_say(&o->def.sink, 0,
                     "modalloco: %d vertices, %d tets; r = %d, %d contact samples, %d modes x %d "
                     "sinusoids, %d parameters; population %d, %d generations, %s%d thread%s; "
                     "precompute %.2f s%s\n",
                     o->p.mesh.nv, o->p.mesh.nt, mlc_model_dim(o->p.model), o->p.sub.ns, o->g.m,
                     o->g.k, n, cfg->cmaes.population, cfg->cmaes.generations, procs, o->nthreads,
                     o->nthreads == 1 ? "" : "s", o->t_pre, o->p.cache_used ? " (cache)" : "");
        if (cfg->cmaes.sigma0 == 0)
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: sigma0 %.3g (cmaes.sigma0 = 0 chooses it for %d signals and "
                         "w = %d)\n",
                         initial_sigma(cfg, &o->g), (o->g.q > 0 ? o->g.q : o->g.m) * o->g.k,
                         cfg->subspace.skinning_modes);
        if (cfg->cmaes.diagonal < 0 && diagonal_generations(cfg, n) > 0)
            mlc_sink_say(
                &o->def.sink, 0,
                "modalloco: a diagonal covariance throughout (cmaes.diagonal = -1 chooses it "
                "for %d parameters, %d or more)\n",
                n, MLC_AUTO_DIAGONAL_DIMENSION);
        if (cfg->reference.rerank < 0 && o->rerank == 1)
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: the gait is replayed once in the full-space reference "
                         "before it is returned (reference.rerank = -1 chooses 1 for %d tets x "
                         "%d steps)\n",
                         o->p.mesh.nt, cfg->sim.steps);
        else if (cfg->reference.rerank < 0 && o->rerank > 0)
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: up to %d candidates replayed in the full-space reference "
                         "before the gait is returned (reference.rerank = -1 chooses %d for %d "
                         "tets x %d steps)\n",
                         o->rerank, o->rerank, o->p.mesh.nt, cfg->sim.steps);
        else if (cfg->reference.rerank < 0 && !cfg->reference.check) {
            char shared[128] = ""; /* processes replay their blocks of the candidates at once */
            if (o->nproc > 1)
                snprintf(shared, sizeof shared,
                         ", --set reference.rerank=%d replays %d candidates, one a process",
                         o->nproc, o->nproc);
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: the gait is not replayed in the full-space reference "
                         "(reference.rerank = -1 chooses none for %d tets x %d steps); "
                         "--set reference.check=1 replays it once%s\n",
                         o->p.mesh.nt, cfg->sim.steps, shared);
        }
        if (mlc_sim_fma_emulated()) mlc_sink_say(&o->def.sink, 0, "%s", MLC_FMA_NOTE);
        const mlc_objective_kind_info *kind = mlc_objective_kind_info_of(o->obj.kind);
        double up_min = o->passive_up_min, rest_up[3];
        memcpy(rest_up, o->passive_rest_up, sizeof rest_up);
        if (kind && kind->up) {
            if (!o->passive_known && (s = passive_up_min(o, &up_min, rest_up)) != MLC_OK) return s;
            if (!(up_min > MLC_CRED_UP_MIN))
                mlc_sink_say(&o->def.sink, 0,
                             "modalloco: note: left alone, this body falls over within %.1f s "
                             "(up_min %.2f with no actuation): a credible gait must keep it up "
                             "by actuating, which a finer model seldom reproduces; check the gait "
                             "with --set reference.check=1, give the body a wider stance, or lay "
                             "it down as it comes to rest: --set mesh.up=[%.3f,%.3f,%.3f]\n",
                             o->cfg.sim.steps * o->cfg.sim.dt, up_min, rest_up[0], rest_up[1],
                             rest_up[2]);
        }
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
        if (!nh) return mlc_optimize_oom(o);
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
    unsigned char *job;
    size_t job_len;
    if ((s = mlc_optimize_rerank_save(o, &job, &job_len)) != MLC_OK) return s;
    s = mlc_checkpoint_encode(&o->ckpt, o->fingerprint, o->hist, o->nhist, o->es, job, job_len,
                              &o->err);
    mlc_free(job);
    if (s != MLC_OK) return s;
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
            mlc_sink_say(&o->def.sink, 0,
                         "\rgen %4d/%d  evals %6ld  best %-11.5g mean %-11s median "
                         "%-11.5g sigma %-9.3g %6.1fs  left %s   ",
                         r->generation, gens, r->evaluations, r->best_ever_J, mean, r->median_J,
                         r->sigma, r->seconds, eta);
        else
            mlc_sink_say(&o->def.sink, 0,
                         "gen %d/%d evals %ld best %.6g mean %s median %.6g sigma "
                         "%.4g %.1fs left %s\n",
                         r->generation, gens, r->evaluations, r->best_ever_J, mean, r->median_J,
                         r->sigma, r->seconds, eta);
    }
    if (o->def.generation) o->def.generation(o->def.generation_user, r);
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

/* The generation at which a locomotion search that has found no gain yet (its best-ever J
 * still at or above 0) while its population went backward turns objective.whole_losses on: a
 * quarter of cmaes.generations, at least MLC_PLATEAU_MIN_GENERATIONS. */
#define MLC_PLATEAU_MIN_GENERATIONS 10

static int plateau_generation(const mlc_config *cfg) {
    return MLC_MAX(MLC_PLATEAU_MIN_GENERATIONS, cfg->cmaes.generations / 4);
}

/* Rank 0: whether the search is on the backward plateau. Under the paper's J a body whose
 * first gaits all go backward cuts its loss by turning away or tumbling, to exactly J = 0, and
 * every later candidate ties there (docs/method.md, "Alignment and credibility gates");
 * objective.whole_losses keeps a backward travel a whole loss, which gives the search its
 * direction back. The sign: no gain by the plateau generation, and a median J above 0 (most
 * of the population going backward, still aligned) in at least half of the generations up to
 * it. A search whose candidates leap or tip instead (median exactly 0: the gate) is a slow
 * start that whole losses would not help, and keeps its course. A gain scores the same either
 * way, so the best-ever stays comparable. Read off the history rows up to that generation
 * only, so a resumed run decides as the uninterrupted one did. */
static int on_plateau(const optimize_run *o) {
    const int g = plateau_generation(&o->cfg);
    if (o->obj.kind != MLC_OBJ_LOCOMOTION || o->nhist < g || o->hist[g - 1].best_ever_J < 0)
        return 0;
    int backward = 0;
    for (int i = 0; i < g; i++)
        backward += o->hist[i].median_J > 0;
    return 2 * backward >= g;
}

/* Every rank: turn objective.whole_losses on for the rest of the job (its rollouts, the
 * validation, params.json's configuration, so that a replay scores as the search did). */
static void leave_plateau(optimize_run *o) {
    if (o->obj.whole_losses) return;
    o->obj.whole_losses = 1;
    o->cfg.objective.whole_losses = 1;
    if (o->rank == 0 && !o->quiet)
        mlc_sink_say(&o->def.sink, 0,
                     "%smodalloco: no gain in the first %d generations, most of them going "
                     "backward: objective.whole_losses is now on (a backward travel counts whole, "
                     "so that turning away no longer pays); params.json records it\n",
                     o->def.sink.tty ? "\n" : "", plateau_generation(&o->cfg));
}

/* The generation loop, on every rank: rank 0 asks CMA-ES for a population and broadcasts it
 * with its mean, every rank scores its share, rank 0 tells, records and saves the checkpoint.
 * Ends on the budget, a stop criterion or SIGINT/SIGTERM (after the generation: a checkpoint
 * is always saved). */
static mlc_status generations(optimize_run *o) {
    mlc_status s = MLC_OK;
    const int rank = o->rank, nproc = o->nproc, n = o->g.n;
    /* SIGINT/SIGTERM: finish the generation, save, exit 130. */
    mlc_stop_signals signals;
    mlc_stop_signals_catch(&signals);
    const int tty = o->def.sink.tty;
    double t_loop = mlc_now();
    o->t_ckpt = t_loop;
    o->in_loop = nproc > 1;

    for (;;) {
        /* Rank 0 decides whether to go on (budget, stop criteria, a signal) and hands out
         * the population; lam = 0 ends every rank's loop. */
        double t_gen = mlc_now(), comm0 = mlc_dist_comm_seconds();
        /* population size (0 = stop), generations told before, on the plateau of no gain */
        int head[3] = {0, 0, rank == 0 && on_plateau(o)};
        int go = rank == 0 && !mlc_cmaes_stop(o->es, NULL) && !mlc_stop_signal();
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
        mlc_dist_bcast_int(head, 3, 0);
        const int lam = head[0], gen_before = head[1];
        if (head[2]) leave_plateau(o);
        if (lam == 0) break;
        if (lam > o->lam_max) {
            s = mlc_errf(&o->err, MLC_EINVAL, "population grew beyond %d", o->lam_max);
            break;
        }
        if (nproc > 1) mlc_dist_bcast_double(o->Xbuf, ((size_t)lam + 1) * (size_t)n, 0);
        const int with_mean = scores_mean(&o->cfg, gen_before), npts = lam + with_mean;
        int nreplays;
        double mine[2]; /* this rank's failure count and rollout seconds */
        const double best = o->rank == 0 ? mlc_cmaes_best_f(o->es) : HUGE_VAL;
        mine[0] =
            mlc_optimize_evaluate(o, o->Xbuf, npts, lam, gen_before, 1, best, &nreplays, &mine[1]);
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
        o->rollouts += npts + nreplays;
        if ((s = mlc_cmaes_tell_ties(o->es, o->f, o->tie)) != MLC_OK) {
            mlc_errf(&o->err, s, "optimizer update failed");
            break;
        }
        /* The candidates first: the checkpoint record_generation encodes carries them. */
        if (o->rerank > 0 && (s = mlc_optimize_rerank_note(o, o->Xbuf, lam)) != MLC_OK) break;
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
        if (!o->quiet && tty) mlc_sink_say(&o->def.sink, 0, "\n");
    }
    mlc_stop_signals_release(&signals);
    o->interrupted = mlc_stop_signal() != 0;
    return s;
}

int mlc_optimize_search(const mlc_optimize_def *def, mlc_optimize_result *out,
                        mlc_config *final_cfg) {
    memset(out, 0, sizeof *out);
    optimize_run *o = mlc_calloc(1, sizeof *o);
    if (!o) {
        out->status = mlc_errf(&out->err, MLC_ENOMEM, "out of memory");
        out->rc = mlc_sink_fail(&def->sink, out->status, &out->err);
        return out->rc;
    }
    o->def = *def;
    o->res = out;
    mlc_status s = setup(o);
    if (s == MLC_OK && !o->stop) s = o->def.dry_run ? dry_run(o) : start(o);
    if (s == MLC_OK && !o->stop) s = generations(o);
    if (s == MLC_OK && !o->stop) s = mlc_optimize_finish(o);
    if (s == MLC_OK && !o->stop && o->rank == 0 && (o->rc == 0 || o->rc == 3)) out->written = 1;
    if (s != MLC_OK) {
        if (o->in_setup) {
            o->rc = settle(o, s, &o->err);
        } else {
            o->rc = report(o, s, &o->err);
            if (o->in_loop) mlc_dist_abort(o->rc); /* the other ranks wait in a collective */
        }
        out->written = 0;
    }
    out->status = s;
    out->err = o->err;
    out->rc = o->rc;
    if (final_cfg) *final_cfg = o->cfg; /* as the search ran it (lay_down may have set mesh.up) */
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
    mlc_optimize_rerank_free(o);
    mlc_cmaes_destroy(o->es);
    mlc_pipeline_free(&o->p);
    mlc_free(o);
    return out->rc;
}

void mlc_optimize_result_free(mlc_optimize_result *r) {
    mlc_free(r->u);
    r->u = NULL;
}
