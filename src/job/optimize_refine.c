/* optimize_refine.c: reference.refine, a second search in a finer model when the first one's
 * gait does not hold in the full-space reference.
 *
 * Why: the search finds what the reduced model rewards, and a coarse model can reward a motion
 * the full body does not make (docs/method.md, "A second search in a finer model"). Which
 * gaits are fooled is a matter of detail, so no finer default does better on every body; but
 * when the reference, the judge, has said that this gait does not hold, a search with twice the
 * skinning modes is a second, independent chance, and the reference chooses between the two.
 *
 * Layout: the first search runs in output.dir as always; the second in output.dir/finer, a
 * complete run of its own (config.json, checkpoint.bin, history, results) whose configuration
 * is the first's as it ran (mesh.up laid down included) with subspace.skinning_modes doubled and
 * reference.refine 0, so `modalloco optimize OUT/finer/config.json` repeats it alone. When its
 * gait does better in the reference, its results (params.json, result.json, the rollout's
 * files) are copied over the first's; config.json, checkpoint.bin and history.* in output.dir
 * stay the first search's, so --resume output.dir repeats both searches: the first resumes from
 * its checkpoint, its finish replays its gait again, and the second resumes from its own.
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
#include "internal/optimize_run_internal.h"
#include "judge.h"
#include "output.h"

#define REFINE_SKINNING_MAX 32 /* subspace.skinning_modes' upper bound (subspace_keys.c) */
#define REFINE_SUBDIR "finer"

/* Locomotion only: the share of travel kept is its measure of holding; a task's J measures
 * other things (a heading, a target, a height), and the validation already ranks its
 * candidates by their full-space J. */
int mlc_optimize_refine_wanted(const mlc_config *cfg, double share, int credible_full) {
    const double t = cfg->reference.refine;
    return t > 0 && cfg->objective.kind == MLC_OBJ_LOCOMOTION &&
           cfg->subspace.skinning_modes < REFINE_SKINNING_MAX && (!(share >= t) || !credible_full);
}

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
                 "modalloco: warning: the search in the finer model failed (%s); the first "
                 "search's gait is returned\n",
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
static cJSON *search_entry(const char *dir, int w, const mlc_optimize_result *r, int rc,
                           const char *error) {
    cJSON *e = cJSON_CreateObject();
    if (!e) return NULL;
    cJSON_AddStringToObject(e, "dir", dir);
    cJSON_AddNumberToObject(e, "skinning_modes", w);
    if (error) {
        cJSON_AddStringToObject(e, "error", error);
        return e;
    }
    cJSON_AddNumberToObject(e, "exit", rc);
    cJSON_AddBoolToObject(e, "found", r->found);
    if (rc == 0 && r->found) cJSON_AddNumberToObject(e, "J", r->J);
    if (r->transfer_known) {
        cJSON_AddNumberToObject(e, "fraction", r->transfer_fraction);
        cJSON_AddNumberToObject(e, "J_full", r->transfer_J);
        cJSON_AddBoolToObject(e, "credible_full", r->transfer_credible);
    }
    return e;
}

/* The finer gait does better in the reference: it holds (credible there, keeping at least
 * `share` of its travel) where the first does not; or as they hold alike, it is credible there
 * where the first is not; or as credible, its full-space J is lower (the validation's order,
 * optimize_rerank.c). Holding comes first because a gait is returned on the strength of its
 * reduced J: one that holds is one whose numbers the user can trust, and on the held-out
 * elephant the first gait's 3% lower full-space J came with 49% of its travel kept against
 * the finer one's 88%. */
static int holds(const mlc_optimize_result *r, double share) {
    return r->transfer_credible && r->transfer_fraction >= share;
}
static int finer_wins(const mlc_optimize_result *a, const mlc_optimize_result *b, int rc_b,
                      double share) {
    if (rc_b != 0 || !b->found || !b->transfer_known) return 0;
    if (holds(b, share) != holds(a, share)) return holds(b, share);
    if (b->transfer_credible != a->transfer_credible) return b->transfer_credible;
    return b->transfer_J < a->transfer_J;
}

int mlc_optimize_run(const mlc_optimize_def *def, mlc_optimize_result *out) {
    held_sink h1 = {.real = def->sink};
    mlc_optimize_def d1 = *def;
    d1.sink = held_sink_of(&h1);
    mlc_config cfg1;
    memset(&cfg1, 0, sizeof cfg1);
    int rc = mlc_optimize_search(&d1, out, &cfg1);
    out->refined = -1;

    /* Rank 0 decides: 0 = no second search, 1 = a fresh one, 2 = one resumed from its
     * checkpoint. */
    char dir2[MLC_CONFIG_PATH_MAX + 16];
    const int fits = snprintf(dir2, sizeof dir2, "%s/" REFINE_SUBDIR, cfg1.output.dir) <
                     (int)sizeof cfg1.output.dir;
    int go = mlc_dist_rank() == 0 && rc == 0 && out->written && out->found && out->transfer_known &&
             !def->dry_run && fits &&
             mlc_optimize_refine_wanted(&cfg1, out->transfer_fraction, out->transfer_credible);
    if (go && def->resume) {
        char ck[sizeof dir2 + 32];
        struct stat st;
        snprintf(ck, sizeof ck, "%s/checkpoint.bin", dir2);
        if (stat(ck, &st) == 0) go = 2;
    }
    if (mlc_dist_size() > 1) mlc_dist_bcast_int(&go, 1, 0);
    if (!go) {
        held_release(&h1, 1);
        return rc;
    }

    const int w1 = cfg1.subspace.skinning_modes;
    mlc_config cfg2 = cfg1;
    cfg2.subspace.skinning_modes = MLC_MIN(REFINE_SKINNING_MAX, 2 * w1);
    cfg2.reference.refine = 0;
    memcpy(cfg2.output.dir, dir2, strlen(dir2) + 1); /* fits: checked above */
    if (cfg2.subspace.cache[0] && /* the finer model's precompute beside the first's */
        snprintf(cfg2.subspace.cache, sizeof cfg2.subspace.cache, "%s.finer",
                 cfg1.subspace.cache) >= (int)sizeof cfg2.subspace.cache)
        cfg2.subspace.cache[0] = '\0';
    const int quiet = def->quiet || mlc_dist_rank() != 0;
    if (!quiet) {
        char how[64];
        if (!out->transfer_credible)
            snprintf(how, sizeof how, "it is not credible there");
        else
            snprintf(how, sizeof how, "it keeps %.0f%% of its travel",
                     100 * out->transfer_fraction);
        mlc_sink_say(&def->sink, 0,
                     "modalloco: the gait does not hold in the full-space reference (%s); "
                     "searching once more in a finer model, subspace.skinning_modes=%d, in %s "
                     "(--set reference.refine=0 returns the first gait)\n",
                     how, cfg2.subspace.skinning_modes, dir2);
    }

    held_sink h2 = {.real = def->sink, .warn_failure = 1};
    mlc_optimize_def d2 = *def;
    d2.config = &cfg2;
    d2.load = NULL, d2.load_user = NULL;
    d2.resume = go == 2 ? dir2 : NULL;
    d2.force = def->force || def->resume;
    d2.resume_dir = def->resume_dir ? def->resume_dir : cfg1.output.dir;
    d2.sink = held_sink_of(&h2);
    d2.second_search = 1;
    mlc_optimize_result out2;
    const int rc2 = mlc_optimize_search(&d2, &out2, NULL);
    if (mlc_dist_rank() != 0 || rc2 == 130) { /* interrupted: resume repeats both searches */
        held_release(&h1, 0);
        held_release(&h2, 0);
        mlc_optimize_result_free(&out2);
        if (rc2 == 130) out->rc = rc = 130;
        return rc;
    }

    const int finer = finer_wins(out, &out2, rc2, cfg1.reference.refine);
    mlc_err err = {0};
    mlc_status s = MLC_OK;
    if (finer) s = copy_results(dir2, cfg1.output.dir, 0, &err);
    cJSON *block = cJSON_CreateObject(), *searches = cJSON_CreateArray();
    if (block && searches) {
        cJSON_AddNumberToObject(block, "threshold", cfg1.reference.refine);
        cJSON_AddItemToArray(searches, search_entry(".", w1, out, rc, NULL));
        const int failed = rc2 != 0 && rc2 != 3;
        cJSON_AddItemToArray(searches, search_entry(REFINE_SUBDIR, cfg2.subspace.skinning_modes,
                                                    &out2, rc2, failed ? out2.err.msg : NULL));
        cJSON_AddItemToObject(block, "searches", searches);
        cJSON_AddStringToObject(block, "returned", finer ? REFINE_SUBDIR : ".");
        searches = NULL;
    }
    cJSON_Delete(searches);
    if (s == MLC_OK)
        s = block ? mlc_result_add_block(cfg1.output.dir, "refine", block, &err)
                  : mlc_errf(&err, MLC_ENOMEM, "out of memory");
    else
        cJSON_Delete(block);
    if (s != MLC_OK) {
        held_release(&h1, 0);
        held_release(&h2, 0);
        mlc_optimize_result_free(&out2);
        out->status = s, out->err = err;
        out->rc = mlc_sink_fail(&def->sink, s, &err);
        out->written = 0;
        return out->rc;
    }

    held_release(&h1, !finer);
    held_release(&h2, finer);
    mlc_sink_say(&def->sink, 1, "refined %s\n", finer ? "finer" : "first");
    if (!quiet) {
        const mlc_optimize_result *r = finer ? &out2 : out;
        if (out2.transfer_known && rc2 == 0 && out2.found)
            mlc_sink_say(&def->sink, 0,
                         "modalloco: in the full-space reference the finer model's gait keeps "
                         "%.0f%% of its travel (J %.3g there%s), the first %.0f%% (J %.3g%s): "
                         "returning the %s one\n",
                         100 * out2.transfer_fraction, out2.transfer_J,
                         out2.transfer_credible ? "" : ", not credible",
                         100 * out->transfer_fraction, out->transfer_J,
                         out->transfer_credible ? "" : ", not credible", finer ? "finer" : "first");
        else if (rc2 == 0 || rc2 == 3)
            mlc_sink_say(&def->sink, 0,
                         "modalloco: the finer model's search %s; returning the first gait\n",
                         rc2 == 3 || !out2.found ? "found no credible gait"
                                                 : "has no verdict in the reference");
        if (!(r->transfer_fraction >= MLC_JUDGE_HOLD_SHARE && r->transfer_credible))
            mlc_sink_say(&def->sink, 0,
                         "modalloco: warning: the gait returned does not hold in the full-space "
                         "reference either: the reduced model allows a motion the full body does "
                         "not make; %s\n",
                         mlc_optimize_hold_advice(r->rerank));
    }
    if (finer) {
        const int written = out->written;
        char dir[sizeof out->dir];
        memcpy(dir, out->dir, sizeof dir);
        mlc_optimize_result_free(out);
        *out = out2;
        memcpy(out->dir, dir, sizeof dir);
        out->written = written;
        rc = out->rc = rc2;
    } else {
        mlc_optimize_result_free(&out2);
    }
    out->refined = finer;
    return rc;
}
