/* judge.c: a gait in the full-space reference beside the reduced model (judge.h). */
#include "judge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "clusters.h"
#include "fullspace.h"

/* The credibility measures of the full-space rollout, frame by frame: the same definitions as
 * for the reduced one (credibility.h), on the full positions of the same surface vertices. */
typedef struct full_meter {
    mlc_cred_meter *meter;
    const mlc_fullspace *fs;
    mlc_judge_frame_fn watch; /* the caller's, or NULL */
    void *watch_user;
} full_meter;

static void measure_full(void *user, int frame, double time, const double *x, const double com[3],
                         const double forward[3], int contacts) {
    full_meter *fm = user;
    const int *sv;
    int nsv = mlc_cred_meter_surface(fm->meter, &sv);
    double R[9];
    mlc_fullspace_rotation(fm->fs, x, R);
    mlc_cred_meter_frame_positions(fm->meter, frame, com, R[4], x, sv, nsv);
    if (fm->watch) {
        const double up[3] = {R[3], R[4], R[5]};
        fm->watch(fm->watch_user, frame, time, x, com, forward, up, contacts);
    }
}

int mlc_judge_contact_samples(const mlc_pipeline *p, const mlc_config *cfg, int *fallback) {
    const mlc_sim_settings *set = mlc_model_settings(p->model);
    const mlc_terrain *ter = mlc_model_terrain(p->model);
    const int surface_ok = (!ter || ter->flat) && mlc_contact_model_forces(set->contact_model);
    *fallback = cfg->reference.contact_samples == 0 && !surface_ok;
    return *fallback ? MLC_FULLSPACE_FALLBACK_SAMPLES : cfg->reference.contact_samples;
}

/* The reference with the configuration's contact (judge.h) and stopping rule. */
static mlc_status create_reference(const mlc_pipeline *p, const mlc_config *cfg, mlc_judgement *out,
                                   mlc_fullspace **fs_out, mlc_err *err) {
    const mlc_sim_settings *set = mlc_model_settings(p->model);
    const int nsamples = mlc_judge_contact_samples(p, cfg, &out->fallback);
    out->samples = nsamples;
    mlc_subspace sub = p->sub;
    int *samples = NULL;
    if (nsamples == 0) sub.ns = 0, sub.samples = NULL;
    if (nsamples > 0) {
        samples = mlc_malloc(sizeof(int) * (size_t)nsamples);
        if (!samples) return mlc_errf(err, MLC_ENOMEM, "out of memory for the reference's samples");
        mlc_status st = mlc_contact_samples(&p->mesh, nsamples, cfg->subspace.contact_band, samples,
                                            &sub.ns, err);
        if (st != MLC_OK) {
            mlc_free(samples);
            return st;
        }
        sub.samples = samples;
    }
    mlc_fullspace *fs = NULL;
    mlc_materials mat = mlc_region_materials_view(&p->materials);
    mlc_status s;
    /* One creation at a time: replays may run side by side (reference.rerank), and the
     * factorization's ordering library is not known to be reentrant. */
#pragma omp critical(mlc_judge_create)
    s = mlc_fullspace_create_materials(&p->mesh, &p->fem, &sub, set, 1, &mat, &fs, err);
    mlc_free(samples); /* the reference keeps its own copy */
    if (s != MLC_OK) return s;
    mlc_fullspace_stop stop = {cfg->reference.tolerance, cfg->reference.max_iterations};
    mlc_fullspace_set_threads(fs, cfg->reference.threads);
    if ((s = mlc_fullspace_set_stop(fs, &stop, err)) != MLC_OK ||
        (s = mlc_fullspace_set_acceleration(fs, cfg->reference.acceleration, err)) != MLC_OK ||
        (nsamples == 0 && (s = mlc_fullspace_use_surface_contact(fs, cfg->reference.contact_columns,
                                                                 err)) != MLC_OK)) {
        mlc_fullspace_destroy(fs);
        return s;
    }
    /* By default the cache of contact columns grows as a flat body's underside needs, within
     * its share of the job's memory bound; a count the user set is kept. */
    if (cfg->reference.contact_columns == 0)
        mlc_fullspace_set_contact_memory(fs, mlc_pipeline_memory_bound(cfg) *
                                                 MLC_JUDGE_COLUMNS_MEMORY_SHARE);
    out->contact_vertices = nsamples == 0 ? mlc_fullspace_surface_vertices(fs) : sub.ns;
    *fs_out = fs;
    return MLC_OK;
}

mlc_status mlc_judge_fullspace(const mlc_pipeline *p, const mlc_config *cfg,
                               const mlc_actuation *act, const mlc_credibility *reduced_cred,
                               mlc_judgement *out, mlc_err *err) {
    return mlc_judge_fullspace_watched(p, cfg, act, reduced_cred, NULL, NULL, out, err);
}

mlc_status mlc_judge_fullspace_watched(const mlc_pipeline *p, const mlc_config *cfg,
                                       const mlc_actuation *act,
                                       const mlc_credibility *reduced_cred, mlc_judge_frame_fn fn,
                                       void *user, mlc_judgement *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    mlc_fullspace *fs = NULL;
    mlc_status s = create_reference(p, cfg, out, &fs, err);
    if (s != MLC_OK) return s;
    mlc_objective_settings obj;
    mlc_pipeline_objective(p, cfg, &obj);
    full_meter fm = {NULL, fs, fn, user};
    if ((s = mlc_cred_meter_create(p->model, &p->mesh, &fm.meter, err)) != MLC_OK) {
        mlc_fullspace_destroy(fs);
        return s;
    }
    mlc_fullspace_observe(fs, measure_full, &fm);
    s = mlc_fullspace_compare(p->model, fs, act, &obj, &out->c, err);
    out->columns_solved = mlc_fullspace_columns_solved(fs);
    out->columns = mlc_fullspace_contact_columns(fs, NULL);
    if (s != MLC_OK && out->samples == 0 && strstr(err->msg, "contact columns")) {
        out->columns_exhausted = 1; /* the message names the fix for every caller */
        size_t len = strlen(err->msg);
        if (cfg->reference.contact_columns > 0) {
            snprintf(err->msg + len, sizeof err->msg - len,
                     "; raise reference.contact_columns (now %d)", cfg->reference.contact_columns);
        } else {
            char mem[32];
            mlc_budget_format(mlc_pipeline_memory_bound(cfg), mem, sizeof mem);
            snprintf(err->msg + len, sizeof err->msg - len,
                     " (%d, the most that fit in a quarter of the memory bound, %s); raise "
                     "--max-memory, or set reference.contact_columns above %d",
                     out->columns, mem, out->columns);
        }
    }
    mlc_fullspace_destroy(fs);
    out->cred = *reduced_cred;
    mlc_cred_meter_result(fm.meter, &out->cred);
    mlc_cred_meter_destroy(fm.meter);
    if (s != MLC_OK) return s;
    out->cred.failed = out->c.full.failed;
    mlc_credibility_judge(&out->cred, obj.kind);
    return MLC_OK;
}

double mlc_judgement_transfer(const mlc_judgement *j) {
    double red = j->c.reduced.displacement;
    return red != 0 ? j->c.full.displacement / red : 0;
}

double mlc_judgement_J_share(const mlc_judgement *j) {
    const double red = j->c.reduced.J;
    return red < 0 ? j->c.full.J / red : 1;
}

double mlc_judgement_kept(const mlc_judgement *j, mlc_objective_kind kind) {
    const double travel = mlc_judgement_transfer(j);
    return kind == MLC_OBJ_LOCOMOTION ? fmin(travel, mlc_judgement_J_share(j)) : travel;
}
