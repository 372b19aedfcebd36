/* optimize_finish.c: the end of an optimize job (optimize_run.h), on rank 0: the final mean's
 * score, the gait returned (the best-ever point, or the final mean when only it is credible),
 * the gradient polish (cmaes.polish), and the files and summary of that gait: its rollout,
 * params.json, history.svg, the viewer, result.json's "polish" and "transfer" blocks. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal/optimize_job.h"
#include "judge.h"
#include "output.h"
#include "polish.h"
#include "rollout_io.h"

/* ---- params.json ---------------------------------------------------------------------------- */
/* Every number of params.json with all 17 digits (mlc_json_exact_number): a gait replays bit
 * for bit. */
static void add_exact(cJSON *o, const char *name, double v) {
    cJSON_AddItemToObject(o, name, mlc_json_exact_number(v));
}
static char *params_json(const mlc_config *cfg, const mlc_pipeline *p, const mlc_gait_space *g,
                         const double *u, const double *A, const double *T, const double *th,
                         const mlc_rollout_result *res, int found, const mlc_cmaes *es,
                         const char *stop_reason, double J_mean, const char *gait) {
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
    /* which point the parameters are: the best-ever candidate, the final mean, or with
     * reference.rerank the candidate that held best in full space ("run 2", "generation 57") */
    cJSON_AddStringToObject(o, "gait", gait);
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
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: the best-ever point is not a credible gait; "
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
        int nq = MLC_MIN(chunk, npts - q0), nreplays;
        double seconds;
        /* Past the budget, points are not scored: +inf is never accepted, so the polish ends
         * (its gradient and line search see no finite difference). */
        if (pc->limit >= 0 && pc->rollouts + (long)nq * (o->R + 1) > pc->limit) {
            for (int q = 0; q < nq; q++)
                f[q0 + q] = INFINITY;
            continue;
        }
        mlc_optimize_evaluate(o, X + (size_t)q0 * n, nq, 0, POLISH_GEN, 0, HUGE_VAL, &nreplays,
                              &seconds);
        memcpy(f + q0, o->f, (size_t)nq * sizeof(double));
        pc->rollouts += nq + nreplays;
    }
}

/* Whether gait u is credible and gains (mlc_credibility_found), by the full evaluation. */
static mlc_status gait_found(optimize_run *o, const double *u, int *found) {
    mlc_actuation a;
    mlc_rollout_result r;
    mlc_credibility c;
    mlc_status s = mlc_optimize_evaluate_gait(o, u, &a, &r, &c);
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
        return mlc_optimize_oom(o);
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
                mlc_sink_say(
                    &o->def.sink, 0,
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

mlc_status mlc_result_add_block(const char *dir, const char *name, cJSON *block, mlc_err *err) {
    char path[MLC_CONFIG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/result.json", dir);
    char *text = NULL;
    size_t len = 0;
    mlc_status s = mlc_file_read_all(path, (size_t)16 << 20, NULL, &text, &len, err);
    cJSON *root = s == MLC_OK ? cJSON_Parse(text) : NULL;
    mlc_free(text);
    if (!root) {
        cJSON_Delete(block);
        return s != MLC_OK ? s : mlc_errf(err, MLC_EIO, "%s: cannot read back result.json", path);
    }
    cJSON_AddItemToObject(root, name, block);
    /* Read back, the earlier blocks' numbers would print with 15 digits where those are close,
     * not equal (the rerank candidates' against the transfer block's). */
    char *out = mlc_json_make_exact(root) ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!out) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    char *copy = mlc_malloc(strlen(out) + 2);
    if (copy) sprintf(copy, "%s\n", out);
    cJSON_free(out);
    if (!copy) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    s = mlc_write_text_atomic(path, copy, err);
    mlc_free(copy);
    return s;
}

mlc_status mlc_optimize_add_result_block(optimize_run *o, const char *name, cJSON *block) {
    return mlc_result_add_block(o->dir, name, block, &o->err);
}

static mlc_status add_polish_block(optimize_run *o, const mlc_polish_report *rep, long rollouts) {
    cJSON *b = cJSON_CreateObject();
    if (!b) return mlc_optimize_oom(o);
    cJSON_AddNumberToObject(b, "steps", rep->steps);
    cJSON_AddNumberToObject(b, "accepted", rep->accepted);
    add_exact(b, "J_before", rep->f_before);
    add_exact(b, "J_after", rep->f_after);
    cJSON_AddNumberToObject(b, "rollouts", (double)rollouts);
    return mlc_optimize_add_result_block(o, "polish", b);
}

/* A replay of the returned gait that stopped with an error: a warning naming it, and a
 * "transfer" block that carries the error instead of the measures. The job's results stand. */
static mlc_status transfer_failed(optimize_run *o, const char *error) {
    mlc_sink_say(&o->def.sink, 0,
                 "modalloco: warning: the gait's full-space replay failed, so it is returned "
                 "unchecked: %s\n",
                 error);
    cJSON *b = cJSON_CreateObject();
    if (!b) return mlc_optimize_oom(o);
    cJSON_AddStringToObject(b, "model", "fullspace");
    cJSON_AddStringToObject(b, "error", error);
    return mlc_optimize_add_result_block(o, "transfer", b);
}

const char *mlc_optimize_hold_advice(int rerank) {
    return rerank >= 8 ? "try another seed"
                       : "try another seed, or --set reference.rerank=8 to replay 8 candidates and "
                         "return the one that holds best";
}

/* reference.check: the returned gait replayed in the full-space reference (judge.h); prints the
 * share of the travel it kept and adds result.json's "transfer" block. A gait that does not
 * hold there (MLC_JUDGE_HOLD_SHARE) is reported with a warning, not rejected: the reduced
 * model's credibility decides the exit code (docs/outputs.md);
 * a replay that fails is reported too (transfer_failed). `known` (NULL: replay it here, unless
 * o->replay_error says the validation's replay of it failed) is its replay measured already by
 * the validation, which took `known_seconds`. */
static mlc_status check_transfer(optimize_run *o, const mlc_actuation *act,
                                 const mlc_credibility *cred, const mlc_judgement *known,
                                 double known_seconds) {
    double t0 = mlc_now(), seconds = known_seconds;
    mlc_judgement j;
    if (known) {
        j = *known;
    } else if (o->replay_error) {
        return transfer_failed(o, o->replay_error);
    } else {
        mlc_config cfg = o->cfg; /* reference.threads 0: the job's threads */
        if (cfg.reference.threads == 0) cfg.reference.threads = o->nthreads;
        mlc_err err;
        if (mlc_judge_fullspace(&o->p, &cfg, act, cred, &j, &err) != MLC_OK)
            return transfer_failed(o, err.msg);
        seconds = mlc_now() - t0;
    }
    const double share = mlc_judgement_transfer(&j), J_share = mlc_judgement_J_share(&j);
    const double kept = mlc_judgement_kept(&j, o->obj.kind);
    const int locomotion = o->obj.kind == MLC_OBJ_LOCOMOTION;
    const int guard = j.c.convergence.guard_steps;
    mlc_optimize_result *r = o->res;
    r->transfer_known = guard == 0;
    r->rerank = o->rerank;
    r->transfer_fraction = share, r->transfer_J = j.c.full.J, r->transfer_kept = kept;
    r->transfer_credible = j.cred.credible;
    /* reference.refine follows with a second search and says so itself */
    const int refine =
        guard == 0 && cred->credible && mlc_optimize_refine_wanted(&o->cfg, kept, j.cred.credible);
    mlc_sink_say(&o->def.sink, 1,
                 "transfer_displacement %.9g\ntransfer_fraction %.6g\ntransfer_credible %s\n",
                 j.c.full.displacement, share, j.cred.credible ? "true" : "false");
    char of_J[48] = "";
    if (locomotion && j.cred.credible)
        snprintf(of_J, sizeof of_J, " and %.0f%% of its J", 100 * J_share);
    if (!o->quiet)
        mlc_sink_say(&o->def.sink, 0,
                     "modalloco: in the full-space reference the gait keeps %.0f%% of its travel "
                     "(%.3g of %.3g)%s%s, %.1f s\n",
                     100 * share, j.c.full.displacement, j.c.reduced.displacement, of_J,
                     j.cred.credible     ? ""
                     : j.cred.up_min < 0 ? " and tips over"
                                         : " and is not credible there",
                     seconds);
    /* A gait credible in the reduced model only: the reduced model allowed what the full body
     * does not (a gait that is not credible in either has its own message). */
    if (!o->quiet && guard == 0 && cred->credible && !refine && !o->def.second_search &&
        !(kept >= MLC_JUDGE_HOLD_SHARE && j.cred.credible)) {
        char how[128];
        if (!j.cred.credible && j.cred.up_min < 0)
            snprintf(how, sizeof how, "it tips over there");
        else if (!j.cred.credible)
            snprintf(how, sizeof how, "it is not credible there");
        else if (!(share >= 0))
            snprintf(how, sizeof how, "it goes the other way there");
        else if (share >= MLC_JUDGE_HOLD_SHARE)
            snprintf(how, sizeof how,
                     "it keeps %.0f%% of its travel but %.0f%% of its J, less than %.0f%%",
                     100 * share, 100 * J_share, 100 * MLC_JUDGE_HOLD_SHARE);
        else
            snprintf(how, sizeof how, "it keeps %.0f%% of its travel, less than %.0f%%",
                     100 * share, 100 * MLC_JUDGE_HOLD_SHARE);
        mlc_sink_say(&o->def.sink, 0,
                     "modalloco: warning: the gait does not hold in the full-space reference (%s): "
                     "the reduced model allows a motion the full body does not make; %s\n",
                     how, mlc_optimize_hold_advice(o->rerank));
    }
    if (!o->quiet && guard > 0)
        mlc_sink_say(&o->def.sink, 0,
                     "modalloco: warning: the full-space reference did not converge in %d of its "
                     "steps (%d iterations a step at most), so that share is no verdict; "
                     "`simulate --full-space` with a larger reference.max_iterations replays it "
                     "to the tolerance\n",
                     guard, j.c.convergence.most_iterations);
    cJSON *b = cJSON_CreateObject();
    if (!b) return mlc_optimize_oom(o);
    cJSON_AddStringToObject(b, "model", "fullspace");
    add_exact(b, "displacement", j.c.full.displacement);
    add_exact(b, "fraction", share);
    add_exact(b, "J", j.c.full.J);
    if (locomotion) add_exact(b, "J_fraction", J_share);
    mlc_json_add_credibility(b, &j.cred);
    cJSON_AddNumberToObject(b, "contact_vertices", j.contact_vertices);
    cJSON_AddBoolToObject(b, "converged", guard == 0);
    /* No wall time here (it is on stderr): result.json is the same bits for any thread count
     * and machine load. */
    return mlc_optimize_add_result_block(o, "transfer", b);
}

/* The result the caller gets: what params.json says of gait u. */
static mlc_status fill_result(optimize_run *o, const double *u, const mlc_rollout_result *res,
                              int found, const char *reason, double J_mean, int chose_mean) {
    mlc_optimize_result *r = o->res;
    const int n = o->g.n;
    mlc_free(r->u);
    if (!(r->u = mlc_malloc((size_t)n * sizeof(double)))) return mlc_optimize_oom(o);
    memcpy(r->u, u, (size_t)n * sizeof(double));
    r->n = n;
    r->J = res->J;
    r->displacement = res->displacement;
    r->J_robust = mlc_cmaes_best_f(o->es);
    r->J_mean = J_mean;
    r->found = found;
    r->chose_mean = chose_mean;
    r->generations = mlc_cmaes_generation(o->es);
    r->restarts = mlc_cmaes_restarts_done(o->es);
    r->evaluations = mlc_cmaes_evaluations(o->es);
    r->rollouts = o->rollouts;
    snprintf(r->stop_reason, sizeof r->stop_reason, "%s", reason ? reason : "");
    return MLC_OK;
}

/* The outputs of gait u: its rollout (mlc_write_rollout), params.json, history.svg and the
 * viewer; the summary on stdout, and exit code 3 when it is not a credible gait that gains. */
/* `gait`: params.json's name of the point (NULL: "best" or "mean" after chose_mean); `known`:
 * the gait's full-space replay when the validation measured it (check_transfer). */
static mlc_status write_results(optimize_run *o, const double *u, double J_mean, int chose_mean,
                                const char *gait, const mlc_judgement *known,
                                double known_seconds) {
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
                           reason ? reason : "", J_mean,
                           gait         ? gait
                           : chose_mean ? "mean"
                                        : "best");
    if (!pj) return mlc_optimize_oom(o);
    snprintf(o->path, sizeof o->path, "%s/params.json", o->dir);
    s = mlc_write_text_atomic(o->path, pj, &o->err);
    mlc_free(pj);
    if (s != MLC_OK) return s;
    int *gen = mlc_malloc(2 * (size_t)(nhist ? nhist : 1) * sizeof(int));
    double *best = mlc_malloc(3 * (size_t)(nhist ? nhist : 1) * sizeof(double));
    if (!gen || !best) {
        mlc_free(gen);
        mlc_free(best);
        return mlc_optimize_oom(o);
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
    if ((s = fill_result(o, u, &res, found, reason, J_mean, chose_mean)) != MLC_OK) return s;
    mlc_sink_say(&o->def.sink, 1,
                 "J %.9g\nJ_disp %.9g\nJ_align %.9g\nJ_work %.9g\ndisplacement %.9g\n"
                 "generations %d\nevaluations %ld\n",
                 res.J, res.J_disp, res.J_align, res.J_work, res.displacement,
                 mlc_cmaes_generation(o->es), mlc_cmaes_evaluations(o->es));
    if (o->obj.kind != MLC_OBJ_LOCOMOTION || o->obj.effort > 0 || o->obj.vibration > 0)
        mlc_sink_say(&o->def.sink, 1,
                     "J_task %.9g\ntask_error %.9g\nJ_effort %.9g\nJ_vibration %.9g\n", res.J_task,
                     res.task_error, res.J_effort, res.J_vibration);
    if ((s = mlc_sink_credibility(&o->def.sink, &cred, &o->err)) != MLC_OK) return s;
    mlc_sink_say(&o->def.sink, 1, "found %s\n", found ? "true" : "false");
    /* The validation measured the returned gait's replay already: report it as the check
     * would, at no cost. */
    if ((cfg->reference.check || known || o->replay_error) &&
        (s = check_transfer(o, &act, &cred, known, known_seconds)) != MLC_OK)
        return s;
    if (!o->quiet)
        mlc_sink_say(&o->def.sink, 0, "modalloco: done in %.1f s (%s); outputs in %s\n",
                     mlc_now() - o->t_start, reason ? reason : "budget", o->dir);
    /* Ran to the end but nothing credible that gains: say so plainly, exit 3. */
    if (!found) {
        char why[512];
        mlc_credibility_explain(&cred, o->obj.kind, why, sizeof why);
        if (mlc_optimize_retry_wanted(&o->cfg, res.J, res.displacement)) {
            /* no gain, going backward: the search once more with objective.whole_losses
             * follows (optimize_refine.c) and says why, and what came of it */
        } else if (!(res.J < 0))
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: no credible gait found: the best gait does not "
                         "gain (J = %.6g); outputs are written with \"found\": false\n",
                         res.J);
        else
            mlc_sink_say(&o->def.sink, 0,
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
static mlc_status finish_root(optimize_run *o) {
    mlc_status s;
    fclose(o->hf);
    o->hf = NULL;
    const int nproc = o->nproc;
    if (!o->quiet && o->gens_this_session > 0 && (nproc > 1 || getenv("MLC_TIMING"))) {
        double n = o->gens_this_session;
        mlc_sink_say(&o->def.sink, 0,
                     "modalloco: timing per generation: %.4f s total, rollouts %.4f s "
                     "(slowest of %d process%s; mean %.4f s), communication %.6f s, "
                     "waiting for the slowest %.4f s\n",
                     o->sum_gen / n, o->sum_roll_max / n, nproc, nproc == 1 ? "" : "es",
                     o->sum_roll_mean / n, fmax(o->sum_comm, 0) / n, o->sum_wait / n);
    }
    if (o->interrupted) {
        mlc_sink_say(&o->def.sink, 0,
                     "modalloco: interrupted after generation %d; checkpoint saved. Continue "
                     "with: modalloco optimize --resume %s\n",
                     o->nhist, o->def.resume_dir ? o->def.resume_dir : o->dir);
        o->rc = 130;
        return MLC_OK;
    }

    /* The final distribution mean's score (params.json J_mean), as the generations score it,
     * all in this process. */
    int nreplays;
    double seconds;
    mlc_optimize_evaluate(o, mlc_cmaes_mean(o->es), 1, 0, mlc_cmaes_generation(o->es), 0, HUGE_VAL,
                          &nreplays, &seconds);
    const double J_mean = o->f[0];

    const double *u;
    int chose_mean;
    if ((s = choose_gait(o, &u, &chose_mean)) != MLC_OK) return s;
    const int polish = o->cfg.cmaes.polish > 0;
    if (!polish && o->rerank <= 0) return write_results(o, u, J_mean, chose_mean, NULL, NULL, 0);

    double *up = mlc_malloc((size_t)o->g.n * sizeof(double));
    if (!up) return mlc_optimize_oom(o);
    mlc_polish_report rep;
    long rollouts = 0;
    if (polish) {
        double t0 = mlc_now();
        s = polish_gait(o, u, up, &rep, &rollouts);
        if (s == MLC_OK && !o->quiet)
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: polish: J %.9g -> %.9g in %d gradient steps (%d accepted), "
                         "%ld rollouts, %.1f s\n",
                         rep.f_before, rep.f_after, rep.steps, rep.accepted, rollouts,
                         mlc_now() - t0);
    } else {
        memcpy(up, u, (size_t)o->g.n * sizeof(double));
    }
    /* The validation after the polish: the polished gait is candidate 0, so the gait returned
     * is always one whose full-space replay was measured. */
    mlc_rerank_choice rc = {0};
    if (s == MLC_OK && o->rerank > 0) s = mlc_optimize_rerank(o, up, &rc);
    if (s == MLC_OK && rc.u) {
        if (rc.index > 0) chose_mean = strcmp(rc.source, "mean") == 0;
        o->replay_error = rc.error[0] ? rc.error : NULL;
        s = write_results(o, rc.u, J_mean, chose_mean, rc.index > 0 ? rc.source : NULL,
                          rc.judged ? rc.j : NULL, rc.seconds);
    } else if (s == MLC_OK) {
        s = write_results(o, up, J_mean, chose_mean, NULL, NULL, 0);
    }
    if (s == MLC_OK && rc.block) {
        s = mlc_optimize_add_result_block(o, "rerank", rc.block);
        rc.block = NULL; /* consumed */
    }
    o->replay_error = NULL; /* pointed into rc */
    mlc_rerank_choice_free(&rc);
    if (s == MLC_OK && polish) {
        mlc_sink_say(
            &o->def.sink, 1,
            "polish_steps %d\npolish_J_before %.9g\npolish_J_after %.9g\npolish_rollouts %ld\n",
            rep.steps, rep.f_before, rep.f_after, rollouts);
        s = add_polish_block(o, &rep, rollouts);
    }
    mlc_free(up);
    return s;
}

mlc_status mlc_optimize_finish(optimize_run *o) {
    if (o->rank != 0) return o->nproc > 1 && o->rerank > 0 ? mlc_optimize_rerank_serve(o) : MLC_OK;
    mlc_status s = finish_root(o);
    mlc_optimize_rerank_release(o); /* the others wait for replays on every path out */
    return s;
}
