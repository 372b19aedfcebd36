/* cmd_optimize.c: `modalloco optimize`: CMA-ES over the actuation parameters (docs/method.md §8),
 * each candidate scored by a reduced rollout; OpenMP across the population; a checkpoint
 * after every generation; params.json, history.csv/.svg and the best gait's rollout.
 *
 * Scoring: a candidate that walks (nominal J < 0) is replayed R times with perturbed
 * parameters (cmaes.robust_samples, run_batch) and scores the worst J of its R + 1 rollouts,
 * so the best-ever gait is one whose neighbourhood walks too, and its own J is never worse
 * than its score. Candidates with equal scores (every rollout that tumbles has J = 0) are
 * ranked by how far they stayed from tumbling (-align_min of the nominal rollout), a
 * tie-breaker inside CMA-ES's ranking that leaves the scores themselves untouched. Each
 * generation also scores the distribution mean it sampled around (history.csv mean_J).
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

#include "modalloco/checkpoint.h"
#include "modalloco/cmaes.h"
#include "modalloco/commands.h"
#include "modalloco/dist.h"
#include "modalloco/gait.h"
#include "modalloco/output.h"
#include "modalloco/perturb.h"
#include "modalloco/rollout_io.h"

/* ---- Signals: finish the generation, save, exit 130 ------------------------------------- */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

/* ---- History rows (mlc_history_row, checkpoint.h) ---------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *f, int n, double *scratch) {
    memcpy(scratch, f, (size_t)n * sizeof(double));
    qsort(scratch, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
}

static void history_header(FILE *f) {
    /* New columns go after the old ones: scripts read them by position. */
    fprintf(f, "generation,evaluations,best_J,median_J,sigma,seconds,best_ever_J,failed,mean_J,"
               "rollouts\n");
}
static void history_line(FILE *f, const mlc_history_row *r) {
    fprintf(f, "%d,%ld,%.17g,%.17g,%.17g,%.3f,%.17g,%d,%.17g,%ld\n", r->generation, r->evaluations,
            r->best_J, r->median_J, r->sigma, r->seconds, r->best_ever_J, r->failed, r->mean_J,
            r->rollouts);
}

/* ---- params.json ---------------------------------------------------------------------------- */
/* cJSON prints doubles with 15 significant digits when they compare equal within a relative
 * epsilon, which can drop the last bit; replaying a gait bit for bit needs all 17. */
static cJSON *exact_number(double v) {
    char buf[40];
    if (isfinite(v))
        snprintf(buf, sizeof buf, "%.17g", v);
    else
        snprintf(buf, sizeof buf, "null");
    return cJSON_CreateRaw(buf);
}
static void add_exact(cJSON *o, const char *name, double v) {
    cJSON_AddItemToObject(o, name, exact_number(v));
}
static char *params_json(const mlc_config *cfg, const mlc_pipeline *p, const mlc_gait_space *g,
                         const double *u, const double *A, const double *T, const double *th,
                         const mlc_rollout_result *res, int found, const mlc_cmaes *es,
                         double J_mean, int chose_mean) {
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
    const char *reason = NULL;
    mlc_cmaes_stop(es, &reason);
    cJSON_AddStringToObject(o, "stop_reason", reason ? reason : "");
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
            cJSON_AddItemToArray(part, exact_number(u[i]));
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

/* ---- The command --------------------------------------------------------------------------- */
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
 * tie[i] = -align_min (smaller = further from tumbling); returns how many candidates' nominal
 * rollouts blew up. Allocation-free; threads over rollouts. */
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
        tie[i] = -res.align_min;
        if (r == 0 && pt < ncand) failed += res.failed;
    }
    return failed;
}

/* Robust scores of `npts` points (columns of X), all of them in this process (the final mean):
 * the nominal rollouts, then the replays of the walkers, as the generation loop does it. */
static double score_point(const mlc_gait_space *g, worker *workers, int nthreads,
                          const mlc_objective_settings *obj, const double *u, int R, int seed,
                          int gen, double *J, double *tie) {
    int zero = 0;
    run_batch(g, workers, nthreads, obj, u, &zero, 0, 0, 1, seed, gen, 0, 1, J, tie);
    double score = J[0];
    if (R > 0 && score < 0) {
        run_batch(g, workers, nthreads, obj, u, &zero, 0, 1, R, seed, gen, 0, R, J + 1, tie + 1);
        for (int r = 1; r <= R; r++)
            score = fmax(score, J[r]);
    }
    return score;
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

/* Hidden test hook: MLC_TEST_FAIL_RANK=R makes rank R's precompute fail (tests/cli_mpi.sh
 * checks that a failing rank ends the whole job with its message, without a hang). */
static mlc_status test_fail_hook(mlc_err *err) {
    const char *v = getenv("MLC_TEST_FAIL_RANK");
    if (v && *v && atoi(v) == mlc_dist_rank())
        return mlc_errf(err, MLC_EIO, "precompute failed on purpose (MLC_TEST_FAIL_RANK=%s)", v);
    return MLC_OK;
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
    if ((s = mlc_pipeline_load_mesh(p, cfg, err)) != MLC_OK) return s;
    if ((s = mlc_fem_init(&p->fem, &p->mesh, err)) != MLC_OK) return s;
    mlc_subspace_settings ss;
    mlc_pipeline_subspace_settings(cfg, &ss);
    mlc_err cerr;
    if (mlc_subspace_cache_read(cache, mlc_subspace_cache_key(&p->mesh, &ss), &p->sub, &cerr) !=
        MLC_OK)
        return mlc_errf(err, MLC_EIO,
                        "cannot use the precompute cache %s that rank 0 wrote "
                        "(%s); the output directory must be on a file system every process "
                        "sees",
                        cache, cerr.msg);
    p->cache_used = 1;
    return mlc_pipeline_model(p, cfg, err);
}

int mlc_cmd_optimize(const mlc_cli_options *opt_in) {
    mlc_cli_options opt = *opt_in;
    mlc_err err = {0};
    mlc_config cfg;
    mlc_pipeline p;
    memset(&p, 0, sizeof p);
    mlc_cmaes *es = NULL;
    worker *workers = NULL;
    mlc_history_row *hist = NULL;
    double *f = NULL, *scratch = NULL, *best = NULL, *Xbuf = NULL, *stats = NULL;
    double *tie = NULL, *Jv = NULL;
    int *pts = NULL;
    FILE *hf = NULL;
    int nworkers = 0, rc = 0;
    mlc_status s;
    char path[MLC_CONFIG_PATH_MAX + 64];
    char resume_cfg[MLC_CONFIG_PATH_MAX + 64];
    /* With several processes, failures before the loop are settled collectively (settle), and
     * a failure of rank 0 inside the loop aborts the job (the others wait in a broadcast). */
    int in_setup = 0, in_loop = 0;

    if ((s = mlc_dist_init(&err)) != MLC_OK) goto fail;
    const int rank = mlc_dist_rank(), nproc = mlc_dist_size();
    in_setup = nproc > 1;

    /* --resume DIR without a config: take the configuration the run wrote. */
    if (opt.resume) {
        if (!opt.out) opt.out = opt.resume;
        if (!opt.input) {
            snprintf(resume_cfg, sizeof resume_cfg, "%s/config.json", opt.resume);
            opt.input = resume_cfg;
        }
    }
    if ((s = mlc_cli_load_config(&opt, &cfg, &err)) != MLC_OK) goto fail;
    if (opt.resume && strcmp(cfg.output.dir, opt.resume) != 0) {
        s = mlc_errf(&err, MLC_EINVAL,
                     "--resume %s conflicts with output.dir %s; they must be "
                     "the same directory",
                     opt.resume, cfg.output.dir);
        goto fail;
    }
    if (in_setup && (rc = settle(MLC_OK, &err)) != 0) goto done;
    const uint64_t fingerprint = mlc_checkpoint_fingerprint(&cfg);
    const char *dir = cfg.output.dir;
    const int quiet = opt.quiet || rank != 0; /* one voice: rank 0's */

    double t_start = mlc_now();
    if (nproc == 1) {
        if ((s = test_fail_hook(&err)) != MLC_OK ||
            (s = mlc_pipeline_model(&p, &cfg, &err)) != MLC_OK)
            goto fail;
    } else {
        /* Rank 0 precomputes and writes the cache; after the agreement (a barrier) the others
         * read it. */
        if (rank == 0 && (s = model_root(&p, &cfg, &err)) != MLC_OK) goto fail;
        if ((rc = settle(MLC_OK, &err)) != 0) goto done;
        if (rank != 0 && (s = model_worker(&p, &cfg, &err)) != MLC_OK) goto fail;
        if ((rc = settle(MLC_OK, &err)) != 0) goto done;
    }
    double t_pre = mlc_now() - t_start;

    /* Search space. */
    mlc_gait_space g;
    if ((s = mlc_pipeline_gait_space(&p, &cfg, &g, &err)) != MLC_OK) goto fail;

    /* Workers: one rollout and parameter buffers per thread. Processes sharing a node share
     * its cores unless --threads says otherwise. */
    int nthreads = cfg.parallel.threads;
#ifdef _OPENMP
    if (nthreads <= 0) nthreads = MLC_MAX(1, omp_get_num_procs() / mlc_dist_local_size());
#else
    nthreads = 1;
#endif
    nworkers = nthreads;
    workers = mlc_calloc((size_t)nworkers, sizeof *workers);
    if (!workers) goto oom;
    const size_t mk = (size_t)g.m * (size_t)g.k;
    for (int t = 0; t < nworkers; t++) {
        workers[t].A = mlc_malloc(3 * mk * sizeof(double));
        if (!workers[t].A || mlc_rollout_create(p.model, &workers[t].ro) != MLC_OK) goto oom;
        workers[t].T = workers[t].A + mk;
        workers[t].th = workers[t].A + 2 * mk;
    }
    int lam_max = cfg.cmaes.population << MLC_MIN(cfg.cmaes.restarts, 20);
    const int R = cfg.cmaes.robust_samples;
    /* A generation scores lam candidates and the distribution mean (points): one nominal
     * rollout each, then R replays of each point that walks. */
    const size_t npts_max = (size_t)lam_max + 1;
    f = mlc_malloc((3 * npts_max) * sizeof(double)); /* scores (npts), median scratch, ties */
    Jv = mlc_malloc(2 * npts_max * (size_t)(R + 1) * sizeof(double));
    pts = mlc_malloc(npts_max * sizeof(int));
    /* The points as scored (the population, then the mean) and broadcast. */
    Xbuf = mlc_malloc(npts_max * (size_t)g.n * sizeof(double));
    if (!f || !Jv || !pts || !Xbuf) goto oom;
    scratch = f + npts_max;
    tie = f + 2 * npts_max;
    /* Rollout values: nominal J and tie per point, then J and tie per replay. */
    double *J0 = Jv, *T0 = Jv + npts_max, *J2 = Jv + 2 * npts_max;
    double *T2 = J2 + npts_max * (size_t)R;
    if (nproc > 1) {
        /* Per rank its failure count and rollout seconds. */
        stats = mlc_malloc(2 * (size_t)nproc * sizeof(double));
        if (!stats) goto oom;
    }

    /* --dry-run: everything above has validated the settings and run (or read) the
     * precompute; time a batch of rollouts at the requested thread count, estimate the whole
     * run, and stop before writing anything. */
    if (opt.dry_run) {
        if (rank == 0) {
            const int nbatch = MLC_MAX(cfg.cmaes.population, 2 * nthreads); /* one generation */
            mlc_rng rng;
            mlc_rng_seed(&rng, (uint64_t)(int64_t)cfg.cmaes.seed);
            double *U = mlc_malloc((size_t)nbatch * (size_t)g.n * sizeof(double));
            if (!U) goto oom;
            /* Candidates like a first generation: around the box centre, sigma0 wide. */
            for (size_t i = 0; i < (size_t)nbatch * (size_t)g.n; i++) {
                double u = 0.5 + cfg.cmaes.sigma0 * mlc_rng_normal(&rng);
                U[i] = u < 0 ? 0 : u > 1 ? 1 : u;
            }
            mlc_objective_settings dobj;
            mlc_pipeline_objective_settings(&cfg, &dobj);
            double t0 = mlc_now();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
            for (int c = 0; c < nbatch; c++) {
#ifdef _OPENMP
                worker *w = &workers[omp_get_thread_num()];
#else
                worker *w = &workers[0];
#endif
                mlc_gait_decode(&g, U + (size_t)c * g.n, w->A, w->T, w->th);
                mlc_actuation act = {g.m, g.k, w->A, w->T, w->th};
                mlc_rollout_result r;
                mlc_rollout_run(w->ro, &act, &dobj, NULL, NULL, &r);
            }
            double per = (mlc_now() - t0) / nbatch; /* wall seconds per rollout, all threads */
            mlc_free(U);
            /* Each generation: the candidates and the mean, R + 1 rollouts each. */
            long rollouts = ((long)cfg.cmaes.population + 1) * (R + 1) * cfg.cmaes.generations;
            double est = t_pre + per * (double)rollouts / nproc + 2 * per * nthreads;
            printf("mesh %s: %d vertices, %d tets\n", p.mesh_path, p.mesh.nv, p.mesh.nt);
            printf("reduced dimension r %d, modes %d, sinusoids %d, parameters %d\n",
                   mlc_model_dim(p.model), g.m, g.k, g.n);
            printf("rollouts %ld ((population %d + mean) x %d replays x %d generations), steps "
                   "per rollout %d\n",
                   rollouts, cfg.cmaes.population, R + 1, cfg.cmaes.generations, cfg.sim.steps);
            printf("precompute %.3f s%s\n", t_pre, p.cache_used ? " (cache)" : "");
            printf("rollout %.4f s per rollout at %d thread%s x %d process%s (%.2f us per step)\n",
                   per, nthreads, nthreads == 1 ? "" : "s", nproc, nproc == 1 ? "" : "es",
                   1e6 * per * nthreads / cfg.sim.steps);
            printf("estimated wall time %.1f s\n", est);
        }
        rc = 0;
        goto done;
    }

    /* Optimizer (rank 0 only): fresh or resumed. */
    int nhist = 0;
    long rollouts = 0;   /* rollouts of the run so far (history.csv) */
    double t_offset = 0; /* wall time of earlier sessions of a resumed run */
    if (rank == 0) {
        if (opt.resume) {
            snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
            if ((s = mlc_checkpoint_read(path, fingerprint, &hist, &nhist, &es, &err)) != MLC_OK)
                goto fail;
            /* The fingerprint is only a hash: a doctored state of another size must not be
             * read as this run's population. */
            if (mlc_cmaes_dim(es) != g.n) {
                s = mlc_errf(&err, MLC_EPARSE,
                             "--resume: %s: the optimizer state has %d "
                             "parameters, this configuration has %d (corrupt checkpoint)",
                             path, mlc_cmaes_dim(es), g.n);
                goto fail;
            }
            if (nhist > 0) {
                t_offset = hist[nhist - 1].seconds;
                rollouts = hist[nhist - 1].rollouts;
            }
            if (!quiet) fprintf(stderr, "modalloco: resuming %s at generation %d\n", dir, nhist);
        } else {
            mlc_cmaes_settings cs;
            mlc_cmaes_settings_default(&cs, g.n);
            double *x0 = mlc_malloc(3 * (size_t)g.n * sizeof(double));
            if (!x0) goto oom;
            double *lo = x0 + g.n, *hi = x0 + 2 * g.n;
            for (int i = 0; i < g.n; i++)
                x0[i] = 0.5, lo[i] = 0.0, hi[i] = 1.0;
            cs.lambda = cfg.cmaes.population;
            cs.sigma0 = cfg.cmaes.sigma0;
            cs.x0 = x0;
            cs.lower = lo;
            cs.upper = hi;
            cs.seed = (uint64_t)(int64_t)cfg.cmaes.seed;
            cs.max_generations = cfg.cmaes.generations;
            cs.restarts = cfg.cmaes.restarts;
            cs.early_stop = cfg.cmaes.early_stop;
            s = mlc_cmaes_create(&cs, &es, &err);
            mlc_free(x0);
            if (s != MLC_OK) goto fail;
        }

        if ((s = mlc_prepare_out_dir(dir, &cfg, opt.force || opt.resume, &err)) != MLC_OK)
            goto fail;
        snprintf(path, sizeof path, "%s/history.csv", dir);
        hf = fopen(path, "w");
        if (!hf) {
            s = mlc_errf(&err, MLC_EIO, "cannot write %s", path);
            goto fail;
        }
        history_header(hf);
        for (int i = 0; i < nhist; i++)
            history_line(hf, &hist[i]);
        fflush(hf);

        int cap_hist = nhist + cfg.cmaes.generations + 1;
        mlc_history_row *nh = mlc_realloc(hist, (size_t)cap_hist * sizeof *hist);
        if (!nh) goto oom;
        hist = nh;
    }
    if (in_setup && (rc = settle(MLC_OK, &err)) != 0) goto done;
    in_setup = 0;

    if (!quiet) {
        char procs[48] = "";
        if (nproc > 1) snprintf(procs, sizeof procs, "%d processes x ", nproc);
        fprintf(stderr,
                "modalloco: %d vertices, %d tets; r = %d, %d modes x %d sinusoids, %d "
                "parameters; population %d, %d generations, %s%d thread%s; precompute "
                "%.2f s%s\n",
                p.mesh.nv, p.mesh.nt, mlc_model_dim(p.model), g.m, g.k, g.n, cfg.cmaes.population,
                cfg.cmaes.generations, procs, nthreads, nthreads == 1 ? "" : "s", t_pre,
                p.cache_used ? " (cache)" : "");
    }

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    const int tty = isatty(STDERR_FILENO);
    mlc_objective_settings obj;
    mlc_pipeline_objective_settings(&cfg, &obj);
    double t_loop = mlc_now();
    int gens_this_session = 0;
    /* Timing of this session's generations (rank 0): rollouts of the slowest rank, their mean
     * over ranks, and rank 0's time inside broadcasts and gathers. */
    double sum_roll_max = 0, sum_roll_mean = 0, sum_comm = 0, sum_wait = 0, sum_gen = 0;
    in_loop = nproc > 1;

    for (;;) {
        /* Rank 0 decides whether to go on (budget, stop criteria, a signal) and hands out
         * the population; lam = 0 ends every rank's loop. */
        double t_gen = mlc_now(), comm0 = mlc_dist_comm_seconds();
        int head[2] = {0, 0}; /* population size (0 = stop), generations told before */
        if (rank == 0 && !mlc_cmaes_stop(es, NULL) && !interrupted) {
            const double *X = mlc_cmaes_ask(es);
            head[0] = X ? mlc_cmaes_lambda(es) : 0;
            head[1] = mlc_cmaes_generation(es);
            if (head[0] > 0 && head[0] <= lam_max) {
                /* The population, then the mean it was sampled around (after ask: a pending
                 * restart moves it). */
                memcpy(Xbuf, X, (size_t)head[0] * (size_t)g.n * sizeof(double));
                memcpy(Xbuf + (size_t)head[0] * g.n, mlc_cmaes_mean(es),
                       (size_t)g.n * sizeof(double));
            }
        }
        mlc_dist_bcast_int(head, 2, 0);
        const int lam = head[0], gen_before = head[1];
        if (lam == 0) break;
        if (lam > lam_max) {
            s = mlc_errf(&err, MLC_EINVAL, "population grew beyond %d", lam_max);
            goto fail_restore;
        }
        if (nproc > 1) mlc_dist_bcast_double(Xbuf, ((size_t)lam + 1) * (size_t)g.n, 0);
        /* Phase 1: every point's nominal rollout. Rollout values are gathered by index,
         * whatever rank computed them. */
        const int npts = lam + 1;
        for (int q = 0; q < npts; q++)
            pts[q] = q;
        int c_lo, c_hi;
        mlc_dist_block(npts, rank, nproc, &c_lo, &c_hi);
        double t_roll = mlc_now(), t_comm = 0;
        int failed = run_batch(&g, workers, nthreads, &obj, Xbuf, pts, lam, 0, 1, cfg.cmaes.seed,
                               gen_before, c_lo, c_hi, J0, T0);
        double t_c = mlc_now();
        mlc_dist_gather_blocks(J0 + c_lo, J0, npts);
        mlc_dist_gather_blocks(T0 + c_lo, T0, npts);
        /* Phase 2: R perturbed replays of the points that walk (nominal J < 0). The score is
         * the worst J of a point's rollouts, so a point that does not walk keeps its nominal
         * J either way: replays could only raise it further above the walkers. */
        int nwalk = 0;
        if (R > 0) {
            if (rank == 0)
                for (int q = 0; q < npts; q++)
                    if (J0[q] < 0) pts[nwalk++] = q;
            mlc_dist_bcast_int(&nwalk, 1, 0);
            if (nwalk > 0) {
                mlc_dist_bcast_int(pts, nwalk, 0);
                t_comm += mlc_now() - t_c;
                mlc_dist_block(nwalk * R, rank, nproc, &c_lo, &c_hi);
                run_batch(&g, workers, nthreads, &obj, Xbuf, pts, lam, 1, R, cfg.cmaes.seed,
                          gen_before, c_lo, c_hi, J2, T2);
                t_c = mlc_now();
                mlc_dist_gather_blocks(J2 + c_lo, J2, nwalk * R);
            }
        }
        t_comm += mlc_now() - t_c;
        /* Per rank its failure count and rollout seconds. */
        double mine[2] = {(double)failed, mlc_now() - t_roll - t_comm};
        if (nproc > 1) mlc_dist_gather_fixed(mine, stats, 2);
        if (rank != 0) continue;
        double roll_max = mine[1], roll_sum = mine[1];
        if (nproc > 1) {
            failed = 0;
            roll_max = roll_sum = 0;
            for (int q = 0; q < nproc; q++) {
                failed += (int)stats[2 * q];
                roll_max = fmax(roll_max, stats[2 * q + 1]);
                roll_sum += stats[2 * q + 1];
            }
        }
        sum_roll_max += roll_max;
        sum_roll_mean += roll_sum / nproc;
        /* Rank 0's time in collectives includes its wait for the slowest rank, which is load
         * imbalance rather than communication: count it apart. */
        sum_wait += roll_max - mine[1];
        sum_comm += mlc_dist_comm_seconds() - comm0 - (roll_max - mine[1]);
        /* Scores: the worst J over a point's rollouts (f[lam] is the mean's); ties are broken
         * by the nominal rollout's alignment. */
        for (int q = 0; q < npts; q++)
            f[q] = J0[q];
        for (int w = 0; w < nwalk; w++)
            for (int r = 0; r < R; r++)
                f[pts[w]] = fmax(f[pts[w]], J2[(size_t)w * R + r]);
        for (int c = 0; c < lam; c++)
            tie[c] = T0[c];
        rollouts += npts + (long)nwalk * R;
        if ((s = mlc_cmaes_tell_ties(es, f, tie)) != MLC_OK) {
            mlc_errf(&err, s, "optimizer update failed");
            goto fail_restore;
        }
        mlc_history_row *r = &hist[nhist++];
        memset(r, 0, sizeof *r); /* padding too: the checkpoint hashes these bytes */
        r->generation = mlc_cmaes_generation(es);
        r->evaluations = mlc_cmaes_evaluations(es);
        double bj = f[0];
        for (int c = 1; c < lam; c++)
            bj = fmin(bj, f[c]);
        r->best_J = bj;
        r->median_J = median(f, lam, scratch);
        r->sigma = mlc_cmaes_sigma(es);
        r->best_ever_J = mlc_cmaes_best_f(es);
        r->failed = failed;
        r->seconds = t_offset + (mlc_now() - t_start);
        r->mean_J = f[lam];
        r->rollouts = rollouts;
        history_line(hf, r);
        fflush(hf);
        snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
        if ((s = mlc_checkpoint_write(path, fingerprint, hist, nhist, es, &err)) != MLC_OK)
            goto fail_restore;
        gens_this_session++;
        sum_gen += mlc_now() - t_gen;
        if (!quiet) {
            double per = (mlc_now() - t_loop) / gens_this_session;
            char eta[32];
            format_eta(per * (cfg.cmaes.generations - r->generation), eta, sizeof eta);
            if (tty)
                fprintf(stderr,
                        "\rgen %4d/%d  evals %6ld  best %-11.5g mean %-11.5g median "
                        "%-11.5g sigma %-9.3g %6.1fs  left %s   ",
                        r->generation, cfg.cmaes.generations, r->evaluations, r->best_ever_J,
                        r->mean_J, r->median_J, r->sigma, r->seconds, eta);
            else
                fprintf(stderr,
                        "gen %d/%d evals %ld best %.6g mean %.6g median %.6g sigma "
                        "%.4g %.1fs left %s\n",
                        r->generation, cfg.cmaes.generations, r->evaluations, r->best_ever_J,
                        r->mean_J, r->median_J, r->sigma, r->seconds, eta);
        }
    }
    in_loop = 0;
    if (!quiet && tty) fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rank != 0) goto done; /* the files and the report are rank 0's */
    fclose(hf);
    hf = NULL;
    if (!quiet && gens_this_session > 0 && (nproc > 1 || getenv("MLC_TIMING"))) {
        double n = gens_this_session;
        fprintf(stderr,
                "modalloco: timing per generation: %.4f s total, rollouts %.4f s "
                "(slowest of %d process%s; mean %.4f s), communication %.6f s, "
                "waiting for the slowest %.4f s\n",
                sum_gen / n, sum_roll_max / n, nproc, nproc == 1 ? "" : "es", sum_roll_mean / n,
                fmax(sum_comm, 0) / n, sum_wait / n);
    }
    if (interrupted) {
        fprintf(stderr,
                "modalloco: interrupted after generation %d; checkpoint saved. Continue "
                "with: modalloco optimize --resume %s\n",
                nhist, dir);
        rc = 130;
        goto done;
    }

    /* The final distribution mean's score (params.json J_mean), as the generations score it. */
    const double J_mean = score_point(&g, workers, nthreads, &obj, mlc_cmaes_mean(es), R,
                                      cfg.cmaes.seed, mlc_cmaes_generation(es), J0, T0);

    /* The gait returned: the best-ever point when it is a credible gain; else the final
     * distribution mean when that one is (the search's centre, whose neighbourhood every
     * generation sampled, is often the steadier gait); else the best-ever point, reported as
     * not found. */
    const double *u = mlc_cmaes_best_x(es);
    int chose_mean = 0;
    {
        worker *w = &workers[0];
        mlc_rollout_result r1;
        mlc_credibility c1;
        mlc_gait_decode(&g, u, w->A, w->T, w->th);
        mlc_actuation a1 = {g.m, g.k, w->A, w->T, w->th};
        if ((s = mlc_credibility_evaluate(p.model, &p.mesh, &a1, &obj, nthreads, NULL, NULL, &r1,
                                          &c1, &err)) != MLC_OK)
            goto fail;
        if (!mlc_credibility_found(&r1, &c1)) {
            mlc_gait_decode(&g, mlc_cmaes_mean(es), w->A, w->T, w->th);
            if ((s = mlc_credibility_evaluate(p.model, &p.mesh, &a1, &obj, nthreads, NULL, NULL,
                                              &r1, &c1, &err)) != MLC_OK)
                goto fail;
            if (mlc_credibility_found(&r1, &c1)) {
                u = mlc_cmaes_mean(es), chose_mean = 1;
                if (!quiet)
                    fprintf(stderr, "modalloco: the best-ever point is not a credible gait; "
                                    "returning the final distribution mean, which is\n");
            }
        }
    }

    /* Outputs: the chosen gait's rollout, params.json, history.svg. */
    {
        worker *w = &workers[0];
        mlc_gait_decode(&g, u, w->A, w->T, w->th);
        mlc_actuation act = {g.m, g.k, w->A, w->T, w->th};
        mlc_rollout_result res;
        mlc_credibility cred;
        if ((s = mlc_write_rollout(&p, &cfg, &act, dir, 1, &res, &cred, &err)) != MLC_OK) goto fail;
        const int found = mlc_credibility_found(&res, &cred);
        char *pj =
            params_json(&cfg, &p, &g, u, w->A, w->T, w->th, &res, found, es, J_mean, chose_mean);
        if (!pj) goto oom;
        snprintf(path, sizeof path, "%s/params.json", dir);
        s = mlc_write_text_atomic(path, pj, &err);
        mlc_free(pj);
        if (s != MLC_OK) goto fail;
        int *gen = mlc_malloc((size_t)(nhist ? nhist : 1) * sizeof(int));
        best = mlc_malloc(2 * (size_t)(nhist ? nhist : 1) * sizeof(double));
        if (!gen || !best) {
            mlc_free(gen);
            goto oom;
        }
        for (int i = 0; i < nhist; i++) {
            gen[i] = hist[i].generation;
            best[i] = hist[i].best_J;
            best[nhist + i] = hist[i].median_J;
        }
        snprintf(path, sizeof path, "%s/history.svg", dir);
        s = mlc_history_svg_write(path, gen, best, best + nhist, nhist,
                                  "modalloco: best and median J per generation", &err);
        mlc_free(gen);
        if (s != MLC_OK) goto fail;
        if (cfg.output.viewer && (s = mlc_write_viewer(dir, &err)) != MLC_OK) goto fail;
        const char *reason = NULL;
        mlc_cmaes_stop(es, &reason);
        printf("J %.9g\nJ_disp %.9g\nJ_align %.9g\nJ_work %.9g\ndisplacement %.9g\n"
               "generations %d\nevaluations %ld\n",
               res.J, res.J_disp, res.J_align, res.J_work, res.displacement,
               mlc_cmaes_generation(es), mlc_cmaes_evaluations(es));
        mlc_print_credibility(stdout, &cred);
        printf("found %s\n", found ? "true" : "false");
        if (!quiet)
            fprintf(stderr, "modalloco: done in %.1f s (%s); outputs in %s\n", mlc_now() - t_start,
                    reason ? reason : "budget", dir);
        /* Ran to the end but nothing credible that gains: say so plainly, exit 3. */
        if (!found) {
            char why[512];
            mlc_credibility_explain(&cred, obj.jump, why, sizeof why);
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
            rc = 3;
        }
    }
    goto done;
oom:
    s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
    goto fail;
fail_restore:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
fail:
    if (in_setup) {
        rc = settle(s, &err);
        goto done;
    }
    rc = mlc_cli_fail(s, &err);
    if (in_loop) mlc_dist_abort(rc); /* the other ranks wait in a collective */
done:
    if (hf) fclose(hf);
    for (int t = 0; t < nworkers; t++) {
        mlc_rollout_destroy(workers[t].ro);
        mlc_free(workers[t].A);
    }
    mlc_free(workers);
    mlc_free(hist);
    mlc_free(f);
    mlc_free(Xbuf);
    mlc_free(Jv);
    mlc_free(pts);
    mlc_free(stats);
    mlc_free(best);
    mlc_cmaes_destroy(es);
    mlc_pipeline_free(&p);
    return rc;
}
