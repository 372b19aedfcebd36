/* optimize_refine.c: reference.refine, further searches in a finer model when the first one's
 * gait does not hold in the full-space reference.
 *
 * Why: the search finds what the reduced model rewards, and a coarse model can reward a motion
 * the full body does not make (docs/method.md, "A second search in a finer model"). Which
 * gaits are fooled is a matter of detail, so no finer default does better on every body; but
 * when the reference, the judge, has said that this gait does not hold, a search with twice the
 * skinning modes is another chance, and the reference chooses. A coarse model's gait is often a
 * real one pushed too far, so the finer search starts from it with 3/10 of the generations; when
 * its gait does not hold either, the first gait had no real one near it, and a search from the
 * box's centre with every generation follows ("From the first gait, then from the centre").
 *
 * Layout: the first search runs in output.dir as always; the others in output.dir/finer and
 * output.dir/finer_centre, each a complete run of its own (config.json, checkpoint.bin,
 * history, results) whose configuration is the first's as it ran (mesh.up laid down included)
 * with subspace.skinning_modes doubled and reference.refine 0, and for finer cmaes.start the
 * first gait and 3/10 of the generations, so `modalloco optimize OUT/finer/config.json` repeats it
 * alone. When a further gait does best in the reference, its results (params.json,
 * result.json, the rollout's files) are copied over the first's; config.json, checkpoint.bin
 * and history.* in output.dir stay the first search's, so --resume output.dir repeats every
 * search: the first resumes from its checkpoint, its finish replays its gait again, and the
 * others resume from their own.
 * params.json carries the configuration of the gait it holds, so it replays either way.
 *
 * Only one set of results reaches stdout: each search's stdout lines are held back and the
 * returned gait's are printed. Under MPI rank 0 decides and tells the others. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cJSON.h"
#include "dist.h"
#include "internal/optimize_job.h"
#include "judge.h"
#include "output.h"

#define REFINE_SUBDIR "finer" /* from the first gait */
/* The search from the first gait gets this share of the first search's generations: on the 11
 * zoo and held-out jobs that search again, 60 of 200 held 9 of them, 100 of 200 held 7, each at
 * about the same full-space J (docs/method.md, "From the first gait, then from the centre"). */
#define REFINE_NEAR_SHARE 0.3
#define REFINE_CENTRE_SUBDIR "finer_centre" /* from the box's centre */
#define RETRY_SUBDIR "whole_losses"         /* the first search again, with whole losses */

/* ---- a sink that holds back the results (stdout) and passes the rest on ------------------- */

typedef struct held_sink {
    mlc_sink real;
    char *buf; /* the stdout text said so far, NUL-terminated (NULL: none yet) */
    size_t len, cap;
    int lost;         /* out of memory while holding: said so when released */
    int warn_failure; /* a failure is reported as a warning (the second search's) */
} held_sink;

static void held_say(void *user, int to_stdout, const char *text) {
    held_sink *h = user;
    if (!to_stdout) {
        if (h->real.say) h->real.say(h->real.user, 0, text);
        return;
    }
    const size_t n = strlen(text);
    if (h->len + n + 1 > h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        while (cap < h->len + n + 1)
            cap *= 2;
        char *b = mlc_realloc(h->buf, cap);
        if (!b) {
            h->lost = 1;
            return;
        }
        h->buf = b, h->cap = cap;
    }
    memcpy(h->buf + h->len, text, n + 1);
    h->len += n;
}

static int held_fail(void *user, mlc_status s, const mlc_err *err) {
    held_sink *h = user;
    if (!h->warn_failure) return mlc_sink_fail(&h->real, s, err);
    mlc_sink_say(&h->real, 0,
                 "modalloco: warning: a further search failed (%s); the gait returned is "
                 "the best of the others\n",
                 err->msg);
    return mlc_exit_code(s);
}

static mlc_sink held_sink_of(held_sink *h) {
    mlc_sink s = {.user = h, .say = held_say, .fail = held_fail, .tty = h->real.tty};
    return s;
}

/* Print what h held back on the real stdout, and free it. */
static void held_release(held_sink *h, int print) {
    if (print && h->buf && h->real.say) h->real.say(h->real.user, 1, h->buf);
    if (print && h->lost)
        mlc_sink_say(&h->real, 0, "modalloco: warning: out of memory holding the results\n");
    mlc_free(h->buf);
    h->buf = NULL, h->len = h->cap = 0;
}

/* ---- the files ---------------------------------------------------------------------------- */

/* Copy the regular file src over dst atomically. */
static mlc_status copy_file(const char *src, const char *dst, mlc_err *err) {
    FILE *in = fopen(src, "rb");
    if (!in) return mlc_errf(err, MLC_EIO, "cannot read %s: %s", src, strerror(errno));
    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, dst, err);
    if (s != MLC_OK) {
        fclose(in);
        return s;
    }
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, af.fp) != n) break;
    const int bad = ferror(in);
    fclose(in);
    if (bad) {
        mlc_afile_abort(&af);
        return mlc_errf(err, MLC_EIO, "cannot read %s", src);
    }
    return mlc_afile_commit(&af, err);
}

/* The files of a run that describe its search rather than its gait: they stay the first
 * search's in output.dir. */
static int search_file(const char *name) {
    static const char *const keep[] = {"config.json", "checkpoint.bin", "history.csv",
                                       "history.svg", "precompute.cache"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        if (strcmp(name, keep[i]) == 0) return 1;
    return name[0] == '.'; /* temporary files of atomic writes */
}

/* Copy the gait's files of run directory `from` into `to`: every regular file but the search's
 * (search_file), and those of its frames/ directory (output.vtk). */
static mlc_status copy_results(const char *from, const char *to, int depth, mlc_err *err) {
    DIR *d = opendir(from);
    if (!d) return mlc_errf(err, MLC_EIO, "cannot list %s: %s", from, strerror(errno));
    mlc_status s = MLC_OK;
    struct dirent *e;
    char src[MLC_CONFIG_PATH_MAX + 512], dst[MLC_CONFIG_PATH_MAX + 512];
    while (s == MLC_OK && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (depth == 0 && search_file(e->d_name)) continue;
        if (e->d_name[0] == '.') continue;
        if (snprintf(src, sizeof src, "%s/%s", from, e->d_name) >= (int)sizeof src ||
            snprintf(dst, sizeof dst, "%s/%s", to, e->d_name) >= (int)sizeof dst) {
            s = mlc_errf(err, MLC_EIO, "path too long under %s", from);
            break;
        }
        struct stat st;
        if (stat(src, &st) != 0) continue;
        if (S_ISREG(st.st_mode)) {
            s = copy_file(src, dst, err);
        } else if (S_ISDIR(st.st_mode) && depth == 0 && strcmp(e->d_name, "frames") == 0) {
            if ((s = mlc_mkdir_p(dst, err)) == MLC_OK) s = copy_results(src, dst, 1, err);
        }
    }
    closedir(d);
    return s;
}

/* One search's entry of the "refine" block. */
static cJSON *search_entry(const char *dir, const char *start, const mlc_config *cfg,
                           const mlc_optimize_result *r, int rc, const char *error) {
    cJSON *e = cJSON_CreateObject();
    if (!e) return NULL;
    cJSON_AddStringToObject(e, "dir", dir);
    cJSON_AddNumberToObject(e, "skinning_modes", cfg->subspace.skinning_modes);
    cJSON_AddStringToObject(e, "start", start);
    cJSON_AddNumberToObject(e, "generations", cfg->cmaes.generations);
    if (error) {
        cJSON_AddStringToObject(e, "error", error);
        return e;
    }
    cJSON_AddNumberToObject(e, "exit", rc);
    cJSON_AddBoolToObject(e, "found", r->found);
    if (rc == 0 && r->found) cJSON_AddNumberToObject(e, "J", r->J);
    if (r->transfer_known) {
        cJSON_AddNumberToObject(e, "fraction", r->transfer_fraction);
        cJSON_AddNumberToObject(e, "kept", r->transfer_kept);
        cJSON_AddNumberToObject(e, "J_full", r->transfer_J);
        cJSON_AddBoolToObject(e, "credible_full", r->transfer_credible);
    }
    return e;
}

/* Gait b does better in the reference than gait a: it holds (credible there, keeping at least
 * `share` of its travel and of its J: mlc_judgement_kept) where a does not; or as they hold alike,
 * it is credible there where a is not; or as credible, its full-space J is lower (the validation's
 * order, optimize_rerank.c). Holding comes first because a gait is returned on the strength of its
 * reduced J: one that holds is one whose numbers the user can trust, and on the held-out
 * elephant the first gait's 3% lower full-space J came with 49% of its travel kept against
 * the finer one's 88%. A search that failed, found nothing or has no verdict never wins. */
static int holds(const mlc_optimize_result *r, double share) {
    return r->transfer_credible && r->transfer_kept >= share;
}
static int judged(const mlc_optimize_result *r, int rc) {
    return rc == 0 && r->found && r->transfer_known;
}
static int does_better(const mlc_optimize_result *a, const mlc_optimize_result *b, double share) {
    if (holds(b, share) != holds(a, share)) return holds(b, share);
    if (b->transfer_credible != a->transfer_credible) return b->transfer_credible;
    return b->transfer_J < a->transfer_J;
}

/* One search after the first. */
typedef struct refine_search {
    const char *sub; /* its directory under output.dir */
    mlc_config cfg;  /* its configuration */
    char dir[MLC_CONFIG_PATH_MAX + 32];
    held_sink h;             /* its stdout, held back */
    mlc_optimize_result res; /* its result (rank 0) */
    int rc, ran;
} refine_search;

/* Drop search r's held stdout and result (r itself stays the caller's). */
static void refine_search_drop(refine_search *r) {
    held_release(&r->h, 0);
    mlc_optimize_result_free(&r->res);
}

/* *out takes over *from's result (emptied): its files were copied into out's directory, so out
 * keeps its own dir and written. */
static void adopt_result(mlc_optimize_result *out, mlc_optimize_result *from) {
    const int written = out->written;
    char dir[sizeof out->dir];
    memcpy(dir, out->dir, sizeof dir);
    mlc_optimize_result_free(out);
    *out = *from;
    memset(from, 0, sizeof *from);
    memcpy(out->dir, dir, sizeof dir);
    out->written = written;
}

/* The first search's configuration in the finer model: skinning modes doubled (at most 32),
 * reference.refine 0, in output.dir/sub. from_gait: CMA-ES starts at the first gait u (n values)
 * with 3/10 of the generations and of a budget (REFINE_NEAR_SHARE); else from the box's centre
 * with the first's. */
static int refine_config(refine_search *r, const mlc_config *cfg1, const char *sub, const double *u,
                         int n) {
    r->sub = sub;
    r->cfg = *cfg1;
    mlc_config *c = &r->cfg;
    c->subspace.skinning_modes =
        MLC_MIN(MLC_REFINE_SKINNING_MAX, 2 * cfg1->subspace.skinning_modes);
    c->reference.refine = 0;
    if (u) {
        memcpy(c->cmaes.start, u, (size_t)n * sizeof(double));
        c->cmaes.nstart = n;
        c->cmaes.generations = MLC_MAX(1, (int)lround(REFINE_NEAR_SHARE * cfg1->cmaes.generations));
        /* a budget stays at least one generation's worst case */
        const long gen_cost = mlc_cmaes_generation_cost(&c->cmaes);
        if (c->cmaes.budget > 0)
            c->cmaes.budget = (int)MLC_MAX(gen_cost, lround(REFINE_NEAR_SHARE * c->cmaes.budget));
    } else {
        c->cmaes.nstart = 0;
    }
    if (snprintf(r->dir, sizeof r->dir, "%s/%s", cfg1->output.dir, sub) >=
        (int)sizeof c->output.dir)
        return 0;
    memcpy(c->output.dir, r->dir, strlen(r->dir) + 1);
    if (c->subspace.cache[0] && /* the finer model's precompute beside the first's */
        snprintf(c->subspace.cache, sizeof c->subspace.cache, "%s.finer", cfg1->subspace.cache) >=
            (int)sizeof c->subspace.cache)
        c->subspace.cache[0] = '\0';
    return 1;
}

static int whole_losses_search(const mlc_optimize_def *def, mlc_config *cfg1,
                               mlc_optimize_result *out, held_sink *h1, int rc, cJSON **block);
static void add_retry_block(const mlc_optimize_def *def, const char *dir, mlc_optimize_result *out,
                            int *rc, cJSON *block);

/* Run search r (collective): resumed from its checkpoint when the job resumes and it has one;
 * then, as a job of its configuration alone would, once more with objective.whole_losses when
 * it ends with no gain going backward (only a finer search, never that one itself, follows so). */
static void refine_run(const mlc_optimize_def *def, const mlc_config *cfg1, refine_search *r,
                       int second_search) {
    int resume = 0;
    if (mlc_dist_rank() == 0 && def->resume) {
        char ck[sizeof r->dir + 32];
        struct stat st;
        snprintf(ck, sizeof ck, "%s/checkpoint.bin", r->dir);
        resume = stat(ck, &st) == 0;
    }
    if (mlc_dist_size() > 1) mlc_dist_bcast_int(&resume, 1, 0);
    r->h = (held_sink){.real = def->sink, .warn_failure = 1};
    mlc_optimize_def d = *def;
    d.config = &r->cfg;
    d.load = NULL, d.load_user = NULL;
    d.resume = resume ? r->dir : NULL;
    d.force = def->force || def->resume;
    d.resume_dir = def->resume_dir ? def->resume_dir : cfg1->output.dir;
    d.sink = held_sink_of(&r->h);
    d.second_search = second_search;
    mlc_config ran;
    r->rc = mlc_optimize_search(&d, &r->res, &ran);
    r->res.refined = r->res.retried = -1;
    r->ran = 1;
    if (second_search && r->rc != 130) {
        cJSON *block = NULL;
        r->rc = whole_losses_search(&d, &ran, &r->res, &r->h, r->rc, &block);
        if (r->rc != 130)
            add_retry_block(&d, r->dir, &r->res, &r->rc, block);
        else
            cJSON_Delete(block);
    }
}

static const char *verdict(const mlc_optimize_result *r, char *buf, size_t cap) {
    if (!r->transfer_credible)
        snprintf(buf, cap, "it is not credible there");
    else if (r->transfer_kept < r->transfer_fraction)
        snprintf(buf, cap, "it keeps %.0f%% of its travel but %.0f%% of its J",
                 100 * r->transfer_fraction, 100 * r->transfer_kept);
    else
        snprintf(buf, cap, "it keeps %.0f%% of its travel", 100 * r->transfer_fraction);
    return buf;
}

/* The searches in a finer model after the first gait, out (the results in output.dir, whose
 * stdout h1 holds), found in configuration cfg1 with exit code rc: none when it holds. */
static int finer_searches(const mlc_optimize_def *def, const mlc_config *cfg1,
                          mlc_optimize_result *out, held_sink *h1, int rc) {
    const double share = cfg1->reference.refine;
    const int quiet = def->quiet || mlc_dist_rank() != 0;

    /* Rank 0 decides whether the first gait holds; every process then needs that gait, the
     * second search's start. */
    int n = mlc_dist_rank() == 0 && rc == 0 && out->written && out->found && out->transfer_known &&
                    !def->dry_run &&
                    mlc_optimize_refine_wanted(cfg1, out->transfer_kept, out->transfer_credible)
                ? out->n
                : 0;
    if (mlc_dist_size() > 1) mlc_dist_bcast_int(&n, 1, 0);
    if (n <= 0 || n > MLC_CMAES_START_MAX) {
        held_release(h1, 1);
        return rc;
    }
    double *u = mlc_malloc((size_t)n * sizeof(double));
    refine_search *rs = mlc_calloc(2, sizeof *rs);
    int fits = u && rs;
    if (fits && mlc_dist_rank() == 0) memcpy(u, out->u, (size_t)n * sizeof(double));
    if (fits && mlc_dist_size() > 1) mlc_dist_bcast_double(u, (size_t)n, 0);
    /* The second search starts from the first gait: a coarse model's gait is often a real one
     * pushed too far, and a short search finds its finer neighbour. The third, when that
     * one does not hold either, starts afresh from the box's centre with the whole budget
     * (docs/method.md, "A second search in a finer model"). */
    const int oom = !fits;
    fits = fits && refine_config(&rs[0], cfg1, REFINE_SUBDIR, u, n) &&
           refine_config(&rs[1], cfg1, REFINE_CENTRE_SUBDIR, NULL, n);
    mlc_free(u);
    if (!fits) { /* out of memory or a path too long: the first gait, as without refine */
        if (!quiet)
            mlc_sink_say(&def->sink, 0,
                         "modalloco: warning: no search in a finer model (%s); the first "
                         "search's gait is returned\n",
                         oom ? "out of memory" : "output.dir is too long for its subdirectories");
        mlc_free(rs);
        held_release(h1, 1);
        return rc;
    }

    char how[64];
    if (!quiet)
        mlc_sink_say(&def->sink, 0,
                     "modalloco: the gait does not hold in the full-space reference (%s); "
                     "searching once more in a finer model, subspace.skinning_modes=%d, from that "
                     "gait with %d generations, in %s (--set reference.refine=0 returns the "
                     "first gait)\n",
                     verdict(out, how, sizeof how), rs[0].cfg.subspace.skinning_modes,
                     rs[0].cfg.cmaes.generations, rs[0].dir);
    refine_run(def, cfg1, &rs[0], 1);
    int go3 = mlc_dist_rank() == 0 && rs[0].rc != 130 &&
              !(judged(&rs[0].res, rs[0].rc) && holds(&rs[0].res, share));
    if (mlc_dist_size() > 1) mlc_dist_bcast_int(&go3, 1, 0);
    if (go3) {
        if (!quiet)
            mlc_sink_say(&def->sink, 0,
                         "modalloco: the finer model's gait from the first one does not hold "
                         "either (%s); searching the finer model from the centre of the box with "
                         "%d generations, in %s\n",
                         judged(&rs[0].res, rs[0].rc)     ? verdict(&rs[0].res, how, sizeof how)
                         : rs[0].rc == 0 || rs[0].rc == 3 ? "it has no verdict"
                                                          : "it failed",
                         rs[1].cfg.cmaes.generations, rs[1].dir);
        refine_run(def, cfg1, &rs[1], 1);
    }
    const int interrupted = rs[0].rc == 130 || (rs[1].ran && rs[1].rc == 130);
    if (mlc_dist_rank() != 0 || interrupted) { /* resume repeats every search */
        held_release(h1, 0);
        for (int i = 0; i < 2; i++)
            refine_search_drop(&rs[i]);
        mlc_free(rs);
        if (interrupted) out->rc = rc = 130;
        return rc;
    }

    /* The gait returned: 0 the first, i + 1 search rs[i]. */
    int best = 0;
    const mlc_optimize_result *b = out;
    for (int i = 0; i < 2; i++)
        if (rs[i].ran && judged(&rs[i].res, rs[i].rc) && does_better(b, &rs[i].res, share))
            best = i + 1, b = &rs[i].res;
    const char *best_dir = best ? rs[best - 1].sub : ".";

    mlc_err err = {0};
    mlc_status s = MLC_OK;
    if (best) s = copy_results(rs[best - 1].dir, cfg1->output.dir, 0, &err);
    cJSON *block = cJSON_CreateObject(), *searches = cJSON_CreateArray();
    if (block && searches) {
        cJSON_AddNumberToObject(block, "threshold", share);
        cJSON_AddItemToArray(searches,
                             search_entry(".", cfg1->cmaes.nstart > 0 ? "cmaes.start" : "centre",
                                          cfg1, out, rc, NULL));
        for (int i = 0; i < 2; i++) {
            if (!rs[i].ran) continue;
            const int failed = rs[i].rc != 0 && rs[i].rc != 3;
            cJSON_AddItemToArray(searches, search_entry(rs[i].sub, i == 0 ? "first gait" : "centre",
                                                        &rs[i].cfg, &rs[i].res, rs[i].rc,
                                                        failed ? rs[i].res.err.msg : NULL));
        }
        cJSON_AddItemToObject(block, "searches", searches);
        cJSON_AddStringToObject(block, "returned", best_dir);
        searches = NULL;
    }
    cJSON_Delete(searches);
    if (s == MLC_OK)
        s = block ? mlc_result_add_block(cfg1->output.dir, "refine", block, &err)
                  : mlc_errf(&err, MLC_ENOMEM, "out of memory");
    else
        cJSON_Delete(block);
    if (s != MLC_OK) {
        held_release(h1, 0);
        for (int i = 0; i < 2; i++)
            refine_search_drop(&rs[i]);
        mlc_free(rs);
        out->status = s, out->err = err;
        out->rc = mlc_sink_fail(&def->sink, s, &err);
        out->written = 0;
        return out->rc;
    }

    held_release(h1, best == 0);
    for (int i = 0; i < 2; i++)
        held_release(&rs[i].h, best == i + 1);
    mlc_sink_say(&def->sink, 1, "refined %s\n", best == 0 ? "first" : rs[best - 1].sub);
    if (!quiet) {
        char line[512];
        int len = snprintf(line, sizeof line,
                           "modalloco: in the full-space reference the first gait keeps %.0f%% "
                           "of its travel (J %.3g there%s)",
                           100 * out->transfer_fraction, out->transfer_J,
                           out->transfer_credible ? "" : ", not credible");
        for (int i = 0; i < 2 && len < (int)sizeof line; i++) {
            if (!rs[i].ran) continue;
            const mlc_optimize_result *r = &rs[i].res;
            if (judged(r, rs[i].rc))
                len += snprintf(line + len, sizeof line - (size_t)len, ", %s's %.0f%% (J %.3g%s)",
                                rs[i].sub, 100 * r->transfer_fraction, r->transfer_J,
                                r->transfer_credible ? "" : ", not credible");
            else if (rs[i].rc == 0 || rs[i].rc == 3)
                len += snprintf(line + len, sizeof line - (size_t)len, ", %s's %s", rs[i].sub,
                                rs[i].rc == 3 || !r->found ? "no credible gait" : "no verdict");
        }
        mlc_sink_say(&def->sink, 0, "%s: returning %s\n", line, best == 0 ? "the first" : best_dir);
        if (!holds(b, share))
            mlc_sink_say(&def->sink, 0,
                         "modalloco: warning: the gait returned does not hold in the full-space "
                         "reference either: the reduced model allows a motion the full body does "
                         "not make; %s\n",
                         mlc_optimize_hold_advice(b->rerank));
    }
    if (best) {
        adopt_result(out, &rs[best - 1].res);
        rc = out->rc = rs[best - 1].rc;
    }
    for (int i = 0; i < 2; i++)
        mlc_optimize_result_free(&rs[i].res);
    mlc_free(rs);
    out->refined = best;
    return rc;
}

/* ---- once more with objective.whole_losses ------------------------------------------------ */

/* A search that ends with no gain, its best gait going backward, has spent its generations on
 * the backward plateau (docs/method.md, "Alignment and credibility gates") without the switch
 * at a quarter of them: its candidates went backward in fewer than half of those generations,
 * the others tipping or leaping (the gate's J 0), as a slow start's do. Run it again from the
 * same start (the box's centre, or cmaes.start) with objective.whole_losses on, in
 * output.dir/whole_losses, whose config.json repeats it alone. Every job that finds a gait
 * keeps its bits: only one that would end with exit 3 pays. When that search finds a credible
 * gait its results replace the first's (and *cfg1 and *h1 become its own, so the finer searches
 * follow from it); *block receives result.json's "whole_losses" block (rank 0). Returns the
 * exit code. */
static int whole_losses_search(const mlc_optimize_def *def, mlc_config *cfg1,
                               mlc_optimize_result *out, held_sink *h1, int rc, cJSON **block) {
    int go = mlc_dist_rank() == 0 && rc == 3 && out->written && !def->dry_run &&
             mlc_optimize_retry_wanted(cfg1, out->J, out->displacement);
    if (mlc_dist_size() > 1) mlc_dist_bcast_int(&go, 1, 0);
    if (!go) return rc;
    const int quiet = def->quiet || mlc_dist_rank() != 0;
    refine_search *r = mlc_calloc(1, sizeof *r);
    int fits = r != NULL;
    if (fits) {
        r->sub = RETRY_SUBDIR;
        r->cfg = *cfg1;
        r->cfg.objective.whole_losses = 1;
        fits = snprintf(r->dir, sizeof r->dir, "%s/%s", cfg1->output.dir, RETRY_SUBDIR) <
               (int)sizeof r->cfg.output.dir;
        if (fits) memcpy(r->cfg.output.dir, r->dir, strlen(r->dir) + 1);
    }
    if (!fits) {
        if (!quiet)
            mlc_sink_say(&def->sink, 0,
                         "modalloco: warning: no search with objective.whole_losses (%s)\n",
                         r ? "output.dir is too long for its subdirectory" : "out of memory");
        mlc_free(r);
        return rc;
    }
    if (!quiet)
        mlc_sink_say(&def->sink, 0,
                     "modalloco: no gain in %d generations, the best gait going backward (%.3g "
                     "along objective.direction); searching once more from %s with "
                     "objective.whole_losses on (a backward travel counts whole, so that turning "
                     "away no longer pays), in %s\n",
                     out->generations, out->displacement,
                     cfg1->cmaes.nstart > 0 ? "the same cmaes.start" : "the centre of the box",
                     r->dir);
    refine_run(def, cfg1, r, def->second_search);
    int returned = mlc_dist_rank() == 0 && r->rc == 0 && r->res.found;
    if (mlc_dist_size() > 1) mlc_dist_bcast_int(&returned, 1, 0);
    if (r->rc == 130) { /* resume repeats both */
        refine_search_drop(r);
        mlc_free(r);
        return out->rc = 130;
    }
    if (mlc_dist_rank() == 0) {
        const int failed = r->rc != 0 && r->rc != 3;
        cJSON *e = search_entry(RETRY_SUBDIR, cfg1->cmaes.nstart > 0 ? "cmaes.start" : "centre",
                                &r->cfg, &r->res, r->rc, failed ? r->res.err.msg : NULL);
        if (e) cJSON_AddBoolToObject(e, "returned", returned);
        *block = e;
    }
    mlc_err err = {0};
    const mlc_status cs =
        returned && mlc_dist_rank() == 0 ? copy_results(r->dir, cfg1->output.dir, 0, &err) : MLC_OK;
    if (cs != MLC_OK) { /* output.dir holds a mix now: say so, and write no block */
        refine_search_drop(r);
        mlc_free(r);
        cJSON_Delete(*block);
        *block = NULL;
        out->status = cs, out->err = err;
        out->written = 0;
        out->retried = 0;
        return out->rc = mlc_sink_fail(&def->sink, cs, &err);
    }
    if (returned) {
        if (!quiet)
            mlc_sink_say(&def->sink, 0,
                         "modalloco: with objective.whole_losses the search found J %.6g, "
                         "credible: returning it (its files copied from %s)\n",
                         r->res.J, r->dir);
        adopt_result(out, &r->res);
        out->refined = -1;
        const mlc_sink real = h1->real; /* r->h's real sink may be *h1 itself */
        held_release(h1, 0);
        *h1 = r->h;
        h1->real = real;
        cfg1->objective.whole_losses = 1;
        rc = out->rc = r->rc;
    } else {
        /* the reason for exit 3, said even when quiet, as the search's own would be */
        if (mlc_dist_rank() == 0)
            mlc_sink_say(&def->sink, 0,
                         "modalloco: no credible gait found: no gain in %d generations, the best "
                         "gait going backward (%.3g along objective.direction), nor with "
                         "objective.whole_losses in %s; the first search's outputs stay, written "
                         "with \"found\": false\n",
                         out->generations, out->displacement, r->dir);
        held_release(&r->h, 0);
    }
    out->retried = returned;
    mlc_optimize_result_free(&r->res);
    mlc_free(r);
    return rc;
}

int mlc_optimize_run(const mlc_optimize_def *def, mlc_optimize_result *out) {
    held_sink h1 = {.real = def->sink};
    mlc_optimize_def d1 = *def;
    d1.sink = held_sink_of(&h1);
    mlc_config cfg1;
    memset(&cfg1, 0, sizeof cfg1);
    int rc = mlc_optimize_search(&d1, out, &cfg1);
    out->refined = -1;
    out->retried = -1;
    cJSON *retry_block = NULL;
    rc = whole_losses_search(def, &cfg1, out, &h1, rc, &retry_block);
    if (rc == 130 || (out->retried >= 0 && out->status != MLC_OK)) {
        held_release(&h1, 0);
        cJSON_Delete(retry_block);
        return rc;
    }
    rc = finer_searches(def, &cfg1, out, &h1, rc);
    /* The block goes in last: a finer search's results, copied over, bring their own file. */
    add_retry_block(def, cfg1.output.dir, out, &rc, retry_block);
    return rc;
}

/* Add `block` (owned; NULL: none) as result.json's "whole_losses" in dir, whose results out
 * describes (rank 0, when written). */
static void add_retry_block(const mlc_optimize_def *def, const char *dir, mlc_optimize_result *out,
                            int *rc, cJSON *block) {
    if (!block || mlc_dist_rank() != 0 || !out->written || (*rc != 0 && *rc != 3)) {
        cJSON_Delete(block);
        return;
    }
    mlc_err err = {0};
    mlc_status s = mlc_result_add_block(dir, "whole_losses", block, &err);
    if (s != MLC_OK) {
        out->status = s, out->err = err;
        out->written = 0;
        *rc = out->rc = mlc_sink_fail(&def->sink, s, &err);
    }
}
