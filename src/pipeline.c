/* pipeline.c: configuration → mesh → FEM → subspaces (cache) → reduced model. */
#include "modalloco/pipeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

mlc_status mlc_pipeline_sample_mesh(char *path, size_t cap, mlc_err *err) {
    /* Installed layout: PREFIX/bin/modalloco and PREFIX/share/modalloco/data. */
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    /* An installed program looks next to itself first, so a build tree that still exists
     * on the machine is not used by mistake; the source tree comes last. */
    const char *candidates[3] = {NULL, MLC_INSTALL_DATA_DIR "/data", MLC_DATA_DIR};
    char rel[4200];
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(rel, sizeof rel, "%s/../share/modalloco/data", exe);
            candidates[0] = rel;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (!candidates[i]) continue;
        char p[4300];
        snprintf(p, sizeof p, "%s/quadruped.mesh", candidates[i]);
        if (access(p, R_OK) == 0 && strlen(p) < cap) {
            /* Report a clean path ("PREFIX/share/...", not "PREFIX/bin/../share/..."). */
            char *canon = realpath(p, NULL);
            snprintf(path, cap, "%s", canon && strlen(canon) < cap ? canon : p);
            free(canon);
            return MLC_OK;
        }
    }
    return mlc_errf(err, MLC_EIO,
                    "the bundled sample mesh quadruped.mesh was not found (looked "
                    "in %s and %s); give a mesh with mesh.path or as an argument",
                    MLC_DATA_DIR, MLC_INSTALL_DATA_DIR "/data");
}

void mlc_pipeline_sim_settings(const mlc_config *cfg, mlc_sim_settings *s) {
    memset(s, 0, sizeof *s);
    s->dt = cfg->sim.dt;
    s->steps = cfg->sim.steps;
    s->iterations = cfg->sim.iterations;
    s->tolerance = cfg->sim.tolerance;
    s->guess_previous = strcmp(cfg->sim.initial_guess, "previous") == 0;
    memcpy(s->gravity, cfg->sim.gravity, sizeof s->gravity);
    s->contact = cfg->contact.enabled;
    s->damping = cfg->contact.damping;
    s->projection_velocity = strcmp(cfg->contact.projection, "velocity") == 0;
    s->contact_equality = strcmp(cfg->contact.model, "equality") == 0;
    s->rayleigh[0] = cfg->sim.rayleigh[0], s->rayleigh[1] = cfg->sim.rayleigh[1];
    s->push_speed = cfg->contact.push_speed;
    s->friction = cfg->contact.friction;
    s->ground = cfg->contact.ground_height;
    s->density = cfg->material.density;
    s->mu = cfg->material.mu;
    s->gamma = cfg->material.gamma;
    s->ramp = cfg->actuation.ramp;
}

void mlc_pipeline_objective_settings(const mlc_config *cfg, mlc_objective_settings *o) {
    memset(o, 0, sizeof *o);
    o->jump = strcmp(cfg->objective.kind, "jump") == 0;
    /* The objective normalizes both vectors itself (objective.c). */
    memcpy(o->direction, cfg->objective.direction, sizeof o->direction);
    memcpy(o->forward,
           cfg->objective.forward_set ? cfg->objective.forward : cfg->objective.direction,
           sizeof o->forward);
    o->align = cfg->objective.align;
    o->upright = cfg->objective.upright;
    o->align_mean = strcmp(cfg->objective.align_mode, "mean") == 0;
    o->work_penalty = cfg->objective.work_penalty;
    o->work_abs = cfg->objective.work_abs;
    o->credible_gate = cfg->objective.credible_gate;
}

void mlc_pipeline_subspace_settings(const mlc_config *cfg, mlc_subspace_settings *s) {
    memset(s, 0, sizeof *s);
    s->w = cfg->subspace.skinning_modes;
    s->m = cfg->actuation.modes;
    s->mode_list = cfg->actuation.nmode_list > 0 ? cfg->actuation.mode_list : NULL;
    s->nlist = cfg->actuation.nmode_list;
    s->poisson = cfg->material.poisson_modes;
    s->passive_clusters = cfg->subspace.passive_clusters;
    s->actuation_clusters = cfg->subspace.actuation_clusters;
    s->contact_samples = cfg->subspace.contact_samples;
    s->contact_band = cfg->subspace.contact_band;
    s->seed = (uint64_t)(int64_t)cfg->cmaes.seed;
}

mlc_status mlc_pipeline_load_mesh(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    if (cfg->mesh.path[0]) {
        snprintf(p->mesh_path, sizeof p->mesh_path, "%s", cfg->mesh.path);
    } else if ((s = mlc_pipeline_sample_mesh(p->mesh_path, sizeof p->mesh_path, err)) != MLC_OK) {
        return s;
    }
    double t0 = mlc_now();
    s = mlc_mesh_read(p->mesh_path, &p->mesh, &p->report, err);
    /* A mesh that cannot be read is bad input (exit 2), not a runtime failure. */
    if (s == MLC_EIO) s = err ? (err->code = MLC_EINVAL) : MLC_EINVAL;
    if (s != MLC_OK) return s;
    p->transform = mlc_mesh_prepare_transform(&p->mesh, cfg->mesh.up_vector, cfg->mesh.normalize,
                                              cfg->mesh.extent);
    p->mesh_checksum = mlc_mesh_oriented_checksum(&p->mesh, &p->transform);
    mlc_mesh_apply_transform(&p->mesh, p->transform);
    p->t_mesh = mlc_now() - t0;
    return MLC_OK;
}

mlc_status mlc_pipeline_subspaces(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    if (!p->mesh.X && (s = mlc_pipeline_load_mesh(p, cfg, err)) != MLC_OK) return s;
    double t0 = mlc_now();
    if ((s = mlc_fem_init(&p->fem, &p->mesh, err)) != MLC_OK) return s;
    p->t_fem = mlc_now() - t0;
    t0 = mlc_now();
    mlc_subspace_settings ss;
    mlc_pipeline_subspace_settings(cfg, &ss);
    uint64_t key = mlc_subspace_cache_key(&p->mesh, &ss);
    const char *cache = cfg->subspace.cache;
    if (cache[0]) {
        mlc_err cerr;
        if (mlc_subspace_cache_read(cache, key, &p->sub, &cerr) == MLC_OK) {
            p->cache_used = 1;
            p->t_subspace = mlc_now() - t0;
            return MLC_OK;
        }
        if (mlc_file_exists(cache))
            fprintf(stderr, "modalloco: recomputing the precompute cache: %s\n", cerr.msg);
    }
    if ((s = mlc_subspace_compute(&p->mesh, &p->fem, &ss, &p->sub, err)) != MLC_OK) return s;
    p->t_subspace = mlc_now() - t0;
    if (cache[0]) {
        mlc_err werr;
        if (mlc_subspace_cache_write(cache, key, &p->sub, &werr) != MLC_OK)
            fprintf(stderr, "modalloco: warning: could not write the cache: %s\n", werr.msg);
    }
    return MLC_OK;
}

mlc_status mlc_pipeline_model(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    if (!p->sub.W && (s = mlc_pipeline_subspaces(p, cfg, err)) != MLC_OK) return s;
    double t0 = mlc_now();
    mlc_sim_settings ss;
    mlc_pipeline_sim_settings(cfg, &ss);
    if ((s = mlc_model_create(&p->mesh, &p->fem, &p->sub, &ss, &p->model, err)) != MLC_OK) return s;
    p->t_model = mlc_now() - t0;
    return MLC_OK;
}

mlc_status mlc_pipeline_gait_space(mlc_pipeline *p, const mlc_config *cfg, mlc_gait_space *g,
                                   mlc_err *err) {
    const mlc_subspace *sub = &p->sub;
    if (sub->m > MLC_GAIT_MAX_MODES)
        return mlc_errf(err, MLC_EINVAL, "actuation.modes: %d modes, expected 1..%d", sub->m,
                        MLC_GAIT_MAX_MODES);
    double amax[MLC_GAIT_MAX_MODES];
    for (int i = 0; i < sub->m; i++)
        amax[i] = cfg->actuation.amplitude_p / sub->grad_max[i];
    mlc_status s =
        mlc_gait_space_init(g, sub->m, cfg->actuation.sinusoids, cfg->actuation.select, amax,
                            cfg->actuation.period_range[0], cfg->actuation.period_range[1],
                            cfg->actuation.phase_range[0], cfg->actuation.phase_range[1],
                            cfg->actuation.fixed_periods, cfg->actuation.nfixed_periods, err);
    if (s != MLC_OK) return s;
    if (!p->mode_strain) {
        p->mode_strain = mlc_malloc((size_t)sub->nt * (size_t)sub->m * sizeof(double));
        if (!p->mode_strain) return mlc_errf(err, MLC_ENOMEM, "out of memory");
        mlc_subspace_mode_strains(&p->mesh, &p->fem, sub, p->mode_strain);
    }
    return mlc_gait_space_set_strain(g, sub->nt, p->mode_strain, cfg->actuation.amplitude_p,
                                     strcmp(cfg->actuation.amplitude_bound, "combined") == 0, err);
}

void mlc_pipeline_free(mlc_pipeline *p) {
    if (!p) return;
    mlc_free(p->mode_strain);
    mlc_model_destroy(p->model);
    mlc_subspace_free(&p->sub);
    mlc_fem_free(&p->fem);
    mlc_mesh_free(&p->mesh);
    memset(p, 0, sizeof *p);
}
