/* simulate_job.c: the simulate job (simulate_job.h): one rollout with given parameters, its
 * files, and optionally the full-space comparison and the check against a stored result. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gait.h"
#include "judge.h"
#include "output.h"
#include "rollout_io.h"
#include "simulate_job.h"

/* Map actuation.parameters onto the subspace's modes (A, T, th are m×k, k = *k_out). Any
 * physically valid values are simulated (the loader has checked: finite, periods > 0); values
 * outside the optimizer's search box (docs/method.md §4, App. H; gait.h) only draw a warning. */
static mlc_status params_to_actuation(mlc_pipeline *p, const mlc_config *cfg, const char *source,
                                      double *A, double *T, double *th, int *k_out,
                                      const mlc_sink *sink, mlc_err *err) {
    const mlc_config_actuation *ac = &cfg->actuation;
    const mlc_subspace *sub = &p->sub;
    int k = 1;
    for (int q = 0; q < ac->nparameters; q++)
        k = MLC_MAX(k, ac->parameters[q].nsinusoids);
    *k_out = k;
    for (int i = 0; i < sub->m * k; i++)
        A[i] = 0, T[i] = 1, th[i] = 0;
    for (int q = 0; q < ac->nparameters; q++) {
        const mlc_config_param *pp = &ac->parameters[q];
        int pos = -1;
        for (int i = 0; i < sub->m; i++)
            if (sub->mode_index[i] == pp->mode) pos = i;
        if (pos < 0)
            return mlc_errf(err, MLC_EINVAL,
                            "%s: parameters[%d] drives mode %d, which is not "
                            "among the %d actuated modes; raise actuation.modes or list it in "
                            "actuation.mode_list",
                            source, q, pp->mode, sub->m);
        for (int j = 0; j < pp->nsinusoids; j++) {
            A[pos * k + j] = pp->sinusoids[j].amplitude;
            T[pos * k + j] = pp->sinusoids[j].period;
            th[pos * k + j] = pp->sinusoids[j].phase;
        }
    }
    if (ac->nparameters == 0) return MLC_OK;
    mlc_gait_space g;
    mlc_status s = mlc_pipeline_gait_space(p, cfg, &g, err);
    if (s != MLC_OK) return s;
    char why[300];
    if (mlc_gait_outside(&g, k, A, T, th, sub->mode_index, why, sizeof why))
        mlc_sink_say(sink, 0,
                     "modalloco: warning: %s: the parameters lie outside the optimizer's "
                     "search box (%s); simulating them anyway\n",
                     source, why);
    return MLC_OK;
}

/* A params.json names the mesh it was optimized on; refuse to replay it on another. */
static mlc_status check_params_origin(const char *path, const mlc_pipeline *p, int *is_params,
                                      mlc_err *err) {
    *is_params = 0;
    char *buf = NULL;
    size_t n;
    /* The config loader already reported unreadable files; here only its origin matters. */
    if (mlc_file_read_all(path, (size_t)64 << 20, NULL, &buf, &n, NULL) != MLC_OK) return MLC_OK;
    cJSON *root = cJSON_Parse(buf);
    mlc_free(buf);
    mlc_status s = MLC_OK;
    *is_params = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "config"));
    const cJSON *mesh = cJSON_GetObjectItemCaseSensitive(root, "mesh");
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(mesh, "checksum");
    if (cJSON_IsString(sum)) {
        char mine[32];
        snprintf(mine, sizeof mine, "%016" PRIx64, p->mesh_checksum);
        if (strcmp(mine, sum->valuestring) != 0)
            s = mlc_errf(err, MLC_EINVAL,
                         "%s: these parameters were optimized on a mesh with "
                         "checksum %s, but %s has checksum %s; replay them on the same mesh "
                         "with the same mesh.up",
                         path, sum->valuestring, p->mesh_path, mine);
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (s == MLC_OK && cJSON_IsString(ver) && strncmp(ver->valuestring, MLC_VERSION, 2) != 0)
        s = mlc_errf(err, MLC_EINVAL,
                     "%s: written by modalloco %s, which is incompatible with "
                     "this version %s; re-run optimize",
                     path, ver->valuestring, MLC_VERSION);
    cJSON_Delete(root);
    return s;
}

/* --full-space: the gait in the full-space reference (judge.h) beside the reduced model;
 * prints the comparison and writes DIR/fullspace.json. */
static mlc_status run_full_space(const mlc_pipeline *p, const mlc_config *cfg,
                                 const mlc_actuation *act, const mlc_credibility *cred,
                                 const mlc_sink *sink, mlc_err *err) {
    int fallback;
    const int nsamples = mlc_judge_contact_samples(p, cfg, &fallback);
    if (fallback)
        mlc_sink_say(sink, 0,
                     "modalloco: note: the full-space reference's contact covers every surface "
                     "vertex on the flat ground with complementarity contact only; with %s it "
                     "uses %d samples (reference.contact_samples)\n",
                     !mlc_contact_model_forces(mlc_model_settings(p->model)->contact_model)
                         ? "equality contact"
                         : "a terrain",
                     nsamples);
    mlc_sink_say(sink, 0,
                 "modalloco: full-space reference on %d vertices and %d tets, each step "
                 "iterated to %g of the extent, contact on %s\n",
                 p->mesh.nv, p->mesh.nt, cfg->reference.tolerance,
                 nsamples == 0  ? "every surface vertex"
                 : nsamples > 0 ? "its own samples"
                                : "the model's samples");
    mlc_judgement j;
    mlc_full_frames *ff = NULL;
    mlc_status s = mlc_full_frames_open(p, cfg, cfg->output.dir, &ff, err);
    if (s != MLC_OK) return s;
    s = mlc_judge_fullspace_watched(p, cfg, act, cred, mlc_full_frames_on, ff, &j, err);
    if (s == MLC_OK) s = mlc_full_frames_commit(ff, err);
    mlc_full_frames_free(ff);
    if (s != MLC_OK) return s;
    const mlc_fullspace_comparison *c = &j.c;
    const mlc_credibility *fcred = &j.cred;
    double rel = c->extent > 0 ? c->vertex_error_max / c->extent : 0;
    mlc_sink_say(sink, 1,
                 "full_J %.9g\nfull_J_disp %.9g\nfull_J_align %.9g\nfull_J_work %.9g\n"
                 "full_displacement %.9g\ncom_error_max %.9g\nvertex_error_relative %.9g\n",
                 c->full.J, c->full.J_disp, c->full.J_align, c->full.J_work, c->full.displacement,
                 c->com_error_max, rel);
    mlc_sink_say(sink, 1,
                 "full_rise %.6g\nfull_airborne %.6g\nfull_penetration %.6g\nfull_up_min %.6g\n"
                 "full_credible %s\n",
                 fcred->rise, fcred->airborne, fcred->penetration, fcred->up_min,
                 fcred->credible ? "true" : "false");
    const mlc_fullspace_convergence *cv = &c->convergence;
    double it_mean = cv->steps > 0 ? (double)cv->iterations / (double)cv->steps : 0;
    mlc_sink_say(sink, 1,
                 "full_iterations_mean %.6g\nfull_iterations_max %d\nfull_guard_steps %d\n",
                 it_mean, cv->most_iterations, cv->guard_steps);
    if (c->full.failed)
        mlc_sink_say(sink, 0, "modalloco: the full-space rollout blew up after %d steps\n",
                     c->full.steps_done);
    if (cv->guard_steps > 0 && cfg->reference.tolerance > 0)
        mlc_sink_say(sink, 0,
                     "modalloco: warning: %d of %ld full-space steps stopped at "
                     "reference.max_iterations = %d before reaching reference.tolerance = %g "
                     "(largest last change %.3g of the extent); the reference is not "
                     "converged there\n",
                     cv->guard_steps, cv->steps, cfg->reference.max_iterations,
                     cfg->reference.tolerance, cv->worst_change);
    cJSON *o = cJSON_CreateObject();
    cJSON *r = cJSON_AddObjectToObject(o, "reduced"), *f = cJSON_AddObjectToObject(o, "full");
    const mlc_rollout_result *res[2] = {&c->reduced, &c->full};
    cJSON *obs[2] = {r, f};
    for (int i = 0; i < 2; i++) {
        cJSON_AddNumberToObject(obs[i], "J", res[i]->J);
        cJSON_AddNumberToObject(obs[i], "J_disp", res[i]->J_disp);
        cJSON_AddNumberToObject(obs[i], "J_align", res[i]->J_align);
        cJSON_AddNumberToObject(obs[i], "J_work", res[i]->J_work);
        cJSON_AddNumberToObject(obs[i], "displacement", res[i]->displacement);
        cJSON_AddNumberToObject(obs[i], "steps_done", res[i]->steps_done);
        cJSON_AddBoolToObject(obs[i], "failed", res[i]->failed);
    }
    mlc_json_add_credibility(r, cred);
    mlc_json_add_credibility(f, fcred);
    cJSON_AddNumberToObject(r, "seconds", c->t_reduced);
    cJSON_AddNumberToObject(f, "seconds", c->t_full);
    cJSON_AddStringToObject(f, "passive_rotations", "per tet");
    cJSON *ct = cJSON_AddObjectToObject(f, "contact");
    cJSON_AddStringToObject(ct, "on",
                            j.samples == 0  ? "surface vertices"
                            : j.samples > 0 ? "own samples"
                                            : "model samples");
    cJSON_AddNumberToObject(ct, "vertices", j.contact_vertices);
    if (j.samples == 0) {
        cJSON_AddNumberToObject(ct, "columns_solved", (double)j.columns_solved);
        cJSON_AddNumberToObject(ct, "columns", j.columns); /* the cache at the end: it grows */
    }
    cJSON *conv = cJSON_AddObjectToObject(f, "convergence");
    cJSON_AddNumberToObject(conv, "tolerance", cfg->reference.tolerance);
    cJSON_AddNumberToObject(conv, "max_iterations", cfg->reference.max_iterations);
    cJSON_AddNumberToObject(conv, "acceleration", cfg->reference.acceleration);
    cJSON_AddNumberToObject(conv, "steps", (double)cv->steps);
    cJSON_AddNumberToObject(conv, "iterations_mean", it_mean);
    cJSON_AddNumberToObject(conv, "iterations_max", cv->most_iterations);
    cJSON_AddNumberToObject(conv, "guard_steps", cv->guard_steps);
    cJSON_AddNumberToObject(conv, "worst_change", cv->worst_change);
    cJSON_AddNumberToObject(o, "frames_compared", c->frames);
    cJSON_AddNumberToObject(o, "com_error_max", c->com_error_max);
    cJSON_AddNumberToObject(o, "com_error_final", c->com_error_final);
    cJSON_AddNumberToObject(o, "vertex_error_max", c->vertex_error_max);
    cJSON_AddNumberToObject(o, "vertex_error_rms", c->vertex_error_rms);
    cJSON_AddNumberToObject(o, "vertex_error_relative", rel);
    cJSON_AddNumberToObject(o, "extent", c->extent);
    /* every number with its bits, as result.json's: the two are compared */
    char *text = mlc_json_make_exact(o) ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text) return mlc_errf(err, MLC_ENOMEM, "out of memory writing fullspace.json");
    char path[MLC_CONFIG_PATH_MAX + 64], *nl = mlc_malloc(strlen(text) + 2);
    if (nl) sprintf(nl, "%s\n", text);
    cJSON_free(text);
    if (!nl) return mlc_errf(err, MLC_ENOMEM, "out of memory writing fullspace.json");
    snprintf(path, sizeof path, "%s/fullspace.json", cfg->output.dir);
    s = mlc_write_text_atomic(path, nl, err);
    mlc_free(nl);
    return s;
}

/* --expect: compare this rollout with a stored result.json, quantity by quantity, and
 * report every one that differs by more than tol × max(1, |expected|). A user's CI replays
 * a stored gait with it to catch regressions. */
static mlc_status check_expected(const char *path, const mlc_rollout_result *res, double tol,
                                 const mlc_sink *sink, int *differ, mlc_err *err) {
    char *buf = NULL;
    size_t n;
    mlc_err rerr;
    if (mlc_file_read_all(path, (size_t)64 << 20, "not a result.json", &buf, &n, &rerr) != MLC_OK)
        return mlc_errf(err, MLC_EINVAL, "--expect %s", rerr.msg);
    cJSON *root = cJSON_Parse(buf);
    mlc_free(buf);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return mlc_errf(err, MLC_EINVAL, "--expect %s: not a result.json (malformed JSON)", path);
    }
    struct {
        const char *name;
        double got;
    } q[] = {{"J", res->J},
             {"J_disp", res->J_disp},
             {"J_align", res->J_align},
             {"J_work", res->J_work},
             {"displacement", res->displacement}};
    int checked = 0;
    *differ = 0;
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, q[i].name);
        if (!cJSON_IsNumber(v)) continue;
        checked++;
        double want = v->valuedouble, d = fabs(q[i].got - want);
        if (!(d <= tol * fmax(1.0, fabs(want)))) {
            mlc_sink_say(sink, 1, "differs: %s expected %.17g got %.17g (|diff| %.3g)\n", q[i].name,
                         want, q[i].got, d);
            *differ = 1;
        }
    }
    const cJSON *c1 = cJSON_GetObjectItemCaseSensitive(root, "com_end");
    if (cJSON_IsArray(c1) && cJSON_GetArraySize(c1) == 3) {
        checked++;
        for (int k = 0; k < 3; k++) {
            const cJSON *v = cJSON_GetArrayItem(c1, k);
            double want = cJSON_IsNumber(v) ? v->valuedouble : (double)NAN,
                   d = fabs(res->com1[k] - want);
            if (!(d <= tol * fmax(1.0, fabs(want)))) {
                mlc_sink_say(sink, 1,
                             "differs: com_end[%d] expected %.17g got %.17g (|diff| %.3g)\n", k,
                             want, res->com1[k], d);
                *differ = 1;
            }
        }
    }
    cJSON_Delete(root);
    if (checked == 0)
        return mlc_errf(err, MLC_EINVAL,
                        "--expect %s: no J or com_end to compare (is it a "
                        "result.json?)",
                        path);
    mlc_sink_say(sink, 1, "%s: %s (tolerance %g)\n", path, *differ ? "DIFFERS" : "matches", tol);
    if (*differ)
        mlc_sink_say(sink, 0, "modalloco: the rollout differs from %s beyond the tolerance %g\n",
                     path, tol);
    return MLC_OK;
}

mlc_status mlc_simulate_job(const mlc_simulate_def *d, mlc_config *cfg, mlc_pipeline *p,
                            int *differ, mlc_err *err) {
    const mlc_sink *sink = &d->sink;
    mlc_status s;
    double *A = NULL;
    *differ = 0;
    const char *source = d->input ? d->input : "actuation.parameters";
    if ((s = mlc_pipeline_model(p, cfg, err)) != MLC_OK) goto done;
    int is_params = 0;
    if (d->input && (s = check_params_origin(d->input, p, &is_params, err)) != MLC_OK) goto done;
    /* Replaying DIR/params.json without --out writes to DIR/replay, never over the
     * optimizer's own outputs. */
    if (is_params && !d->out_given) {
        const char *slash = strrchr(d->input, '/');
        int len = slash ? (int)(slash - d->input) : 1;
        snprintf(cfg->output.dir, sizeof cfg->output.dir, "%.*s/replay", len,
                 slash ? d->input : ".");
    }
    size_t mk = (size_t)p->sub.m * MLC_GAIT_MAX_SINUSOIDS;
    A = mlc_calloc(3 * mk, sizeof(double));
    if (!A) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory");
        goto done;
    }
    int k;
    if ((s = params_to_actuation(p, cfg, source, A, A + mk, A + 2 * mk, &k, sink, err)) != MLC_OK)
        goto done;
    if (cfg->actuation.nparameters == 0)
        mlc_sink_say(sink, 0,
                     "modalloco: no actuation.parameters given; simulating the passive "
                     "body\n");
    mlc_actuation act = {p->sub.m, k, A, A + mk, A + 2 * mk};
    if (d->full_space && cfg->sim.integrator != MLC_INTEGRATOR_EULER) {
        s = mlc_errf(err, MLC_EINVAL,
                     "--full-space: the full-space reference integrates with backward Euler "
                     "only; compare with --set sim.integrator=euler");
        goto done;
    }
    if ((s = mlc_prepare_out_dir(cfg->output.dir, cfg, d->force, err)) != MLC_OK) goto done;
    mlc_rollout_result res;
    mlc_credibility cred;
    double t0 = mlc_now();
    if ((s = mlc_write_rollout(p, cfg, &act, cfg->output.dir, 0, &res, &cred, err)) != MLC_OK)
        goto done;
    double t_roll = mlc_now() - t0;
    mlc_sink_say(sink, 1, "J %.9g\nJ_disp %.9g\nJ_align %.9g\nJ_work %.9g\ndisplacement %.9g\n",
                 res.J, res.J_disp, res.J_align, res.J_work, res.displacement);
    if (cfg->objective.kind != MLC_OBJ_LOCOMOTION || cfg->objective.effort > 0 ||
        cfg->objective.vibration > 0)
        mlc_sink_say(sink, 1, "J_task %.9g\ntask_error %.9g\nJ_effort %.9g\nJ_vibration %.9g\n",
                     res.J_task, res.task_error, res.J_effort, res.J_vibration);
    if ((s = mlc_sink_credibility(sink, &cred, err)) != MLC_OK) goto done;
    if (!cred.credible) {
        char why[512];
        mlc_objective_settings obj;
        mlc_pipeline_objective_settings(cfg, &obj);
        mlc_credibility_explain(&cred, obj.kind, why, sizeof why);
        mlc_sink_say(sink, 0, "modalloco: warning: this gait is not credible (%s)\n", why);
    }
    if (res.failed)
        mlc_sink_say(sink, 0,
                     "modalloco: the rollout blew up after %d of %d steps (NaN or runaway "
                     "state); try a smaller sim.dt or smaller amplitudes\n",
                     res.steps_done, cfg->sim.steps);
    if (!d->quiet)
        mlc_sink_say(sink, 0,
                     "modalloco: precompute %.2f s (%s), rollout of %d steps and its "
                     "credibility %.3f s, outputs in %s\n",
                     p->t_mesh + p->t_fem + p->t_subspace + p->t_model,
                     p->cache_used ? "cache" : "computed", cfg->sim.steps, t_roll, cfg->output.dir);
    if (!d->quiet && mlc_sim_fma_emulated()) mlc_sink_say(sink, 0, "%s", MLC_FMA_NOTE);
    if (d->full_space && (s = run_full_space(p, cfg, &act, &cred, sink, err)) != MLC_OK) goto done;
    if (cfg->output.viewer && (s = mlc_write_viewer(cfg->output.dir, err)) != MLC_OK) goto done;
    if (d->expect) {
        if ((s = check_expected(d->expect, &res, d->tolerance, sink, differ, err)) != MLC_OK)
            goto done;
    }
done:
    mlc_free(A);
    return s;
}
