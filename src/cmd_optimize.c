/* cmd_optimize.c: `modalloco optimize`: CMA-ES over the actuation parameters (METHOD.md §8),
 * each candidate scored by a reduced rollout; OpenMP across the population; a checkpoint
 * after every generation; params.json, history.csv/.svg and the best gait's rollout.
 *
 * Determinism: CMA-ES owns its generator and linear algebra, every rollout is a pure function
 * of its parameters, and the population is scored into a fixed slot per candidate, so the run
 * is bit-identical for any thread count and across --resume.
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

#include "modalloco/cmaes.h"
#include "modalloco/commands.h"
#include "modalloco/gait.h"
#include "modalloco/output.h"

/* ---- Signals: finish the generation, save, exit 130 ------------------------------------- */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

/* ---- History rows ------------------------------------------------------------------------ */
typedef struct history_row {
    int generation;
    long evaluations;
    double best_J;   /* best of this generation */
    double median_J; /* median of this generation */
    double sigma;
    double best_ever_J;
    int failed;      /* rollouts of this generation that blew up */
    double seconds;  /* wall clock since the run started (not reproducible) */
} history_row;

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
    fprintf(f, "generation,evaluations,best_J,median_J,sigma,seconds,best_ever_J,failed\n");
}
static void history_line(FILE *f, const history_row *r) {
    fprintf(f, "%d,%ld,%.17g,%.17g,%.17g,%.3f,%.17g,%d\n", r->generation, r->evaluations,
            r->best_J, r->median_J, r->sigma, r->seconds, r->best_ever_J, r->failed);
}

/* ---- Resume compatibility: everything that changes results, and nothing that does not -- */
static uint64_t config_fingerprint(const mlc_config *cfg) {
    mlc_config c = *cfg;
    memset(c.output.dir, 0, sizeof c.output.dir);
    c.parallel.threads = 0;
    char *text = mlc_config_to_json(&c);
    uint64_t h = mlc_hash64(MLC_HASH_INIT, text ? text : "", text ? strlen(text) : 0);
    mlc_free(text);
    return h;
}

/* ---- Checkpoint: magic, fingerprint, history, CMA-ES state, checksum --------------------- */
#define CKPT_MAGIC "MLCCKPT1"

static mlc_status checkpoint_write(const char *path, uint64_t fingerprint,
                                   const history_row *hist, int nhist, const mlc_cmaes *es,
                                   mlc_err *err) {
    unsigned char *blob = NULL;
    size_t blen = 0;
    if (mlc_cmaes_save(es, &blob, &blen) != MLC_OK)
        return mlc_errf(err, MLC_ENOMEM, "out of memory saving the optimizer state");
    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) {
        mlc_free(blob);
        return s;
    }
    uint64_t h = MLC_HASH_INIT;
    uint64_t n64 = (uint64_t)nhist, b64 = (uint64_t)blen;
#define PUT(ptr, len)                                                                      \
    do {                                                                                   \
        fwrite((ptr), 1, (len), af.fp);                                                    \
        h = mlc_hash64(h, (ptr), (len));                                                   \
    } while (0)
    PUT(CKPT_MAGIC, 8);
    PUT(&fingerprint, 8);
    PUT(&n64, 8);
    if (nhist) PUT(hist, (size_t)nhist * sizeof *hist);
    PUT(&b64, 8);
    PUT(blob, blen);
#undef PUT
    fwrite(&h, 1, 8, af.fp);
    mlc_free(blob);
    return mlc_afile_commit(&af, err);
}

static mlc_status checkpoint_read(const char *path, uint64_t fingerprint, history_row **hist,
                                  int *nhist, mlc_cmaes **es, mlc_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return mlc_errf(err, MLC_EINVAL, "--resume: %s: no checkpoint there (the run never "
                        "finished a generation, or this is not an optimize output directory)",
                        path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = len > 0 && len < (1L << 30) ? mlc_malloc((size_t)len) : NULL;
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        mlc_free(buf);
        return mlc_errf(err, MLC_EPARSE, "--resume: %s: unreadable or empty checkpoint", path);
    }
    fclose(f);
    mlc_status s = MLC_EPARSE;
    const char *why = "truncated";
    size_t L = (size_t)len, off = 0;
    uint64_t fp, n64, b64, sum;
    if (L < 40 || memcmp(buf, CKPT_MAGIC, 8) != 0) {
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
    if (n64 > (L - off) / sizeof(history_row)) goto out;
    size_t hbytes = (size_t)n64 * sizeof(history_row);
    if (off + hbytes + 8 > L - 8) goto out;
    const unsigned char *hp = buf + off;
    off += hbytes;
    memcpy(&b64, buf + off, 8), off += 8;
    if (b64 != L - 8 - off) goto out;
    if (fp != fingerprint) {
        s = MLC_EINVAL;
        mlc_errf(err, MLC_EINVAL, "--resume: %s was written by a run with another "
                 "configuration; resume with the same configuration and settings (only "
                 "output.dir and parallel.threads may differ)", path);
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
    mlc_free(buf);
    return MLC_OK;
out:
    mlc_errf(err, s, "--resume: %s: %s", path, why);
    mlc_free(buf);
    return s;
}

/* ---- params.json ---------------------------------------------------------------------------- */
/* cJSON prints doubles with 15 significant digits when they compare equal within a relative
 * epsilon, which can drop the last bit; replaying a gait bit for bit needs all 17. */
static cJSON *exact_number(double v) {
    char buf[40];
    if (isfinite(v)) snprintf(buf, sizeof buf, "%.17g", v);
    else snprintf(buf, sizeof buf, "null");
    return cJSON_CreateRaw(buf);
}
static void add_exact(cJSON *o, const char *name, double v) {
    cJSON_AddItemToObject(o, name, exact_number(v));
}
static char *params_json(const mlc_config *cfg, const mlc_pipeline *p, const mlc_gait_space *g,
                         const double *u, const double *A, const double *T, const double *th,
                         const mlc_rollout_result *res, const mlc_cmaes *es) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "program", "modalloco");
    cJSON_AddStringToObject(o, "version", MLC_VERSION);
    cJSON_AddNumberToObject(o, "seed", cfg->cmaes.seed);
    add_exact(o, "J", res->J);
    add_exact(o, "J_disp", res->J_disp);
    add_exact(o, "J_align", res->J_align);
    add_exact(o, "J_work", res->J_work);
    add_exact(o, "displacement", res->displacement);
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
    cJSON *tf = cJSON_AddObjectToObject(mesh, "transform");
    add_exact(tf, "scale", p->transform.scale);
    cJSON *tr = cJSON_AddArrayToObject(tf, "translate");
    for (int k = 0; k < 3; k++) cJSON_AddItemToArray(tr, exact_number(p->transform.translate[k]));
    cJSON *modes = cJSON_AddArrayToObject(o, "modes");
    for (int i = 0; i < p->sub.m; i++)
        cJSON_AddItemToArray(modes, cJSON_CreateNumber(p->sub.mode_index[i]));
    if (g->q > 0) {
        cJSON *part = cJSON_AddArrayToObject(o, "participation");
        for (int i = 0; i < g->m; i++) cJSON_AddItemToArray(part, exact_number(u[i]));
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

static void format_eta(double s, char *buf, size_t cap) {
    if (!(s >= 0) || s > 1e7) snprintf(buf, cap, "?");
    else if (s < 60) snprintf(buf, cap, "%.0fs", s);
    else snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

int mlc_cmd_optimize(const mlc_cli_options *opt_in) {
    mlc_cli_options opt = *opt_in;
    mlc_err err = {0};
    mlc_config cfg;
    mlc_pipeline p;
    memset(&p, 0, sizeof p);
    mlc_cmaes *es = NULL;
    worker *workers = NULL;
    history_row *hist = NULL;
    double *f = NULL, *scratch = NULL, *best = NULL;
    FILE *hf = NULL;
    int nworkers = 0, rc = 0;
    mlc_status s;
    char path[MLC_CONFIG_PATH_MAX + 64];
    char resume_cfg[MLC_CONFIG_PATH_MAX + 64];

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
        s = mlc_errf(&err, MLC_EINVAL, "--resume %s conflicts with output.dir %s; they must be "
                     "the same directory", opt.resume, cfg.output.dir);
        goto fail;
    }
    const uint64_t fingerprint = config_fingerprint(&cfg);
    const char *dir = cfg.output.dir;
    const int quiet = opt.quiet;

    double t_start = mlc_now();
    if ((s = mlc_pipeline_model(&p, &cfg, &err)) != MLC_OK) goto fail;
    double t_pre = mlc_now() - t_start;

    /* Search space. */
    mlc_gait_space g;
    double amax[MLC_GAIT_MAX_MODES];
    for (int i = 0; i < p.sub.m; i++) amax[i] = cfg.actuation.amplitude_p / p.sub.grad_max[i];
    if ((s = mlc_gait_space_init(&g, p.sub.m, cfg.actuation.sinusoids, cfg.actuation.select, amax,
                                 cfg.actuation.period_range[0], cfg.actuation.period_range[1],
                                 cfg.actuation.phase_range[0], cfg.actuation.phase_range[1],
                                 cfg.actuation.fixed_periods, cfg.actuation.nfixed_periods,
                                 &err)) != MLC_OK)
        goto fail;

    /* Workers: one rollout and parameter buffers per thread. */
    int nthreads = cfg.parallel.threads;
#ifdef _OPENMP
    if (nthreads <= 0) nthreads = omp_get_num_procs();
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

    /* Optimizer: fresh or resumed. */
    int nhist = 0;
    double t_offset = 0; /* wall time of earlier sessions of a resumed run */
    if (opt.resume) {
        snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
        if ((s = checkpoint_read(path, fingerprint, &hist, &nhist, &es, &err)) != MLC_OK)
            goto fail;
        if (nhist > 0) t_offset = hist[nhist - 1].seconds;
        if (!quiet)
            fprintf(stderr, "modalloco: resuming %s at generation %d\n", dir, nhist);
    } else {
        mlc_cmaes_settings cs;
        mlc_cmaes_settings_default(&cs, g.n);
        double *x0 = mlc_malloc(3 * (size_t)g.n * sizeof(double));
        if (!x0) goto oom;
        double *lo = x0 + g.n, *hi = x0 + 2 * g.n;
        for (int i = 0; i < g.n; i++) x0[i] = 0.5, lo[i] = 0.0, hi[i] = 1.0;
        cs.lambda = cfg.cmaes.population;
        cs.sigma0 = cfg.cmaes.sigma0;
        cs.x0 = x0;
        cs.lower = lo;
        cs.upper = hi;
        cs.seed = (uint64_t)(int64_t)cfg.cmaes.seed;
        cs.max_generations = cfg.cmaes.generations;
        cs.restarts = cfg.cmaes.restarts;
        s = mlc_cmaes_create(&cs, &es, &err);
        mlc_free(x0);
        if (s != MLC_OK) goto fail;
    }

    if ((s = mlc_prepare_out_dir(dir, &cfg, opt.force || opt.resume, &err)) != MLC_OK) goto fail;
    snprintf(path, sizeof path, "%s/history.csv", dir);
    hf = fopen(path, "w");
    if (!hf) {
        s = mlc_errf(&err, MLC_EIO, "cannot write %s", path);
        goto fail;
    }
    history_header(hf);
    for (int i = 0; i < nhist; i++) history_line(hf, &hist[i]);
    fflush(hf);

    int cap_hist = nhist + cfg.cmaes.generations + 1;
    history_row *nh = mlc_realloc(hist, (size_t)cap_hist * sizeof *hist);
    if (!nh) goto oom;
    hist = nh;
    int lam_max = cfg.cmaes.population << MLC_MIN(cfg.cmaes.restarts, 20);
    f = mlc_malloc(2 * (size_t)lam_max * sizeof(double));
    if (!f) goto oom;
    scratch = f + lam_max;

    if (!quiet)
        fprintf(stderr, "modalloco: %d vertices, %d tets; r = %d, %d modes x %d sinusoids, %d "
                        "parameters; population %d, %d generations, %d thread%s; precompute "
                        "%.2f s%s\n", p.mesh.nv, p.mesh.nt, mlc_model_dim(p.model), g.m, g.k,
                g.n, cfg.cmaes.population, cfg.cmaes.generations, nthreads,
                nthreads == 1 ? "" : "s", t_pre, p.cache_used ? " (cache)" : "");

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

    while (!mlc_cmaes_stop(es, NULL) && !interrupted) {
        const double *X = mlc_cmaes_ask(es);
        const int lam = mlc_cmaes_lambda(es);
        if (lam > lam_max) {
            s = mlc_errf(&err, MLC_EINVAL, "population grew beyond %d", lam_max);
            goto fail_restore;
        }
        int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads) reduction(+ : failed)
        for (int c = 0; c < lam; c++) {
#ifdef _OPENMP
            worker *w = &workers[omp_get_thread_num()];
#else
            worker *w = &workers[0];
#endif
            mlc_gait_decode(&g, X + (size_t)c * g.n, w->A, w->T, w->th);
            mlc_actuation act = {g.m, g.k, w->A, w->T, w->th};
            mlc_rollout_result r;
            mlc_rollout_run(w->ro, &act, &obj, NULL, NULL, &r);
            f[c] = r.J;
            failed += r.failed;
        }
        if ((s = mlc_cmaes_tell(es, f)) != MLC_OK) {
            mlc_errf(&err, s, "optimizer update failed");
            goto fail_restore;
        }
        history_row *r = &hist[nhist++];
        memset(r, 0, sizeof *r); /* padding too: the checkpoint hashes these bytes */
        r->generation = mlc_cmaes_generation(es);
        r->evaluations = mlc_cmaes_evaluations(es);
        double bj = f[0];
        for (int c = 1; c < lam; c++) bj = fmin(bj, f[c]);
        r->best_J = bj;
        r->median_J = median(f, lam, scratch);
        r->sigma = mlc_cmaes_sigma(es);
        r->best_ever_J = mlc_cmaes_best_f(es);
        r->failed = failed;
        r->seconds = t_offset + (mlc_now() - t_start);
        history_line(hf, r);
        fflush(hf);
        snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
        if ((s = checkpoint_write(path, fingerprint, hist, nhist, es, &err)) != MLC_OK)
            goto fail_restore;
        gens_this_session++;
        if (!quiet) {
            double per = (mlc_now() - t_loop) / gens_this_session;
            char eta[32];
            format_eta(per * (cfg.cmaes.generations - r->generation), eta, sizeof eta);
            if (tty)
                fprintf(stderr, "\rgen %4d/%d  evals %6ld  best %-11.5g median %-11.5g sigma "
                                "%-9.3g %6.1fs  left %s   ", r->generation,
                        cfg.cmaes.generations, r->evaluations, r->best_ever_J, r->median_J,
                        r->sigma, r->seconds, eta);
            else
                fprintf(stderr, "gen %d/%d evals %ld best %.6g median %.6g sigma %.4g %.1fs "
                                "left %s\n", r->generation, cfg.cmaes.generations,
                        r->evaluations, r->best_ever_J, r->median_J, r->sigma, r->seconds, eta);
        }
    }
    if (!quiet && tty) fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    fclose(hf);
    hf = NULL;
    if (interrupted) {
        fprintf(stderr, "modalloco: interrupted after generation %d; checkpoint saved. Continue "
                        "with: modalloco optimize --resume %s\n", nhist, dir);
        rc = 130;
        goto done;
    }

    /* Outputs: the best gait's rollout, params.json, history.svg. */
    {
        const double *u = mlc_cmaes_best_x(es);
        worker *w = &workers[0];
        mlc_gait_decode(&g, u, w->A, w->T, w->th);
        mlc_actuation act = {g.m, g.k, w->A, w->T, w->th};
        mlc_rollout_result res;
        if ((s = mlc_write_rollout(&p, &cfg, &act, dir, &res, &err)) != MLC_OK) goto fail;
        char *pj = params_json(&cfg, &p, &g, u, w->A, w->T, w->th, &res, es);
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
        const char *reason = NULL;
        mlc_cmaes_stop(es, &reason);
        printf("J %.9g\nJ_disp %.9g\nJ_align %.9g\nJ_work %.9g\ndisplacement %.9g\n"
               "generations %d\nevaluations %ld\n", res.J, res.J_disp, res.J_align, res.J_work,
               res.displacement, mlc_cmaes_generation(es), mlc_cmaes_evaluations(es));
        if (!quiet)
            fprintf(stderr, "modalloco: done in %.1f s (%s); outputs in %s\n",
                    mlc_now() - t_start, reason ? reason : "budget", dir);
    }
    goto done;
oom:
    s = mlc_errf(&err, MLC_ENOMEM, "out of memory");
    goto fail;
fail_restore:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
fail:
    rc = mlc_cli_fail(s, &err);
done:
    if (hf) fclose(hf);
    for (int t = 0; t < nworkers; t++) {
        mlc_rollout_destroy(workers[t].ro);
        mlc_free(workers[t].A);
    }
    mlc_free(workers);
    mlc_free(hist);
    mlc_free(f);
    mlc_free(best);
    mlc_cmaes_destroy(es);
    mlc_pipeline_free(&p);
    return rc;
}
