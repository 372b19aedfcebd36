/* pipeline.c: configuration → mesh → FEM → subspaces (cache) → reduced model. */
#include "pipeline.h"

#include "budget.h"

#include "objective.h"

#include <math.h>
#include <stdarg.h>
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
    s->guess_previous = cfg->sim.initial_guess == MLC_GUESS_PREVIOUS;
    memcpy(s->gravity, cfg->sim.gravity, sizeof s->gravity);
    s->contact = cfg->contact.enabled;
    s->damping = cfg->contact.damping;
    s->projection_velocity = cfg->contact.projection == MLC_PROJECTION_VELOCITY;
    s->contact_model = (mlc_contact_model)cfg->contact.model; /* the names are in its order */
    s->rayleigh[0] = cfg->sim.rayleigh[0], s->rayleigh[1] = cfg->sim.rayleigh[1];
    s->push_speed = cfg->contact.push_speed;
    s->friction = cfg->contact.friction;
    s->ground = cfg->contact.ground_height;
    s->density = cfg->material.density;
    s->mu = cfg->material.mu;
    s->gamma = cfg->material.gamma;
    s->ramp = cfg->actuation.ramp;
    s->integrator = cfg->sim.integrator; /* the names are in MLC_INTEGRATOR_*'s order */
    s->threads = cfg->parallel.threads;
}

mlc_status mlc_pipeline_terrain(const mlc_config *cfg, mlc_terrain *t, mlc_err *err) {
    const mlc_config_contact *c = &cfg->contact;
    mlc_terrain_box boxes[MLC_CONFIG_MAX_BOXES];
    for (int b = 0; b < c->nboxes; b++) {
        memcpy(boxes[b].lo, c->boxes[b].min, sizeof boxes[b].lo);
        memcpy(boxes[b].hi, c->boxes[b].max, sizeof boxes[b].hi);
        boxes[b].friction = c->boxes[b].has_friction ? c->boxes[b].friction : -1;
    }
    mlc_status s = mlc_terrain_init(t, c->ground_height, c->friction, c->slope, c->anisotropy,
                                    cfg->objective.direction, boxes, c->nboxes, err);
    if (s == MLC_OK && c->heightfield[0]) s = mlc_terrain_read_heightfield(t, c->heightfield, err);
    if (s != MLC_OK) mlc_terrain_free(t);
    return s;
}

void mlc_pipeline_objective_settings(const mlc_config *cfg, mlc_objective_settings *o) {
    memset(o, 0, sizeof *o);
    o->kind = cfg->objective.kind;
    /* The objective normalizes both vectors itself (objective.c). */
    memcpy(o->direction, cfg->objective.direction, sizeof o->direction);
    memcpy(o->forward,
           cfg->objective.forward_set ? cfg->objective.forward : cfg->objective.direction,
           sizeof o->forward);
    o->align = cfg->objective.align;
    o->upright = cfg->objective.upright;
    o->align_mean = cfg->objective.align_mode == MLC_ALIGN_MEAN;
    o->work_penalty = cfg->objective.work_penalty;
    o->work_abs = cfg->objective.work_abs;
    o->credible_gate = cfg->objective.credible_gate;
    o->whole_losses = cfg->objective.whole_losses;
    const mlc_config_objective *c = &cfg->objective;
    /* [x,z] or [x,y,z]: the ground components are the first and the last. */
    o->heading[0] = c->heading[0];
    o->heading[2] = c->nheading > 0 ? c->heading[c->nheading - 1] : 0;
    memcpy(o->target, c->target, sizeof o->target);
    o->target_set = c->target_set;
    o->effort = c->effort;
    o->vibration = c->vibration;
}

void mlc_pipeline_objective(const mlc_pipeline *p, const mlc_config *cfg,
                            mlc_objective_settings *o) {
    mlc_pipeline_objective_settings(cfg, o);
    o->path = p->path;
    o->npath = p->npath;
    mlc_subspace_amplitude_limits(&p->sub, cfg->actuation.amplitude_p, o->a_max);
}

/* Format one note and hand it to the caller's callback (pipeline.h). */
static void note(const mlc_pipeline *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const mlc_pipeline *p, const char *fmt, ...) {
    if (!p->note) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->note(p->note_user, line);
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
    s->contact_spacing = cfg->subspace.contact_spacing;
    s->seed = (uint64_t)(int64_t)cfg->cmaes.seed;
    s->local_modes = cfg->actuation.local_modes;
    s->localization = cfg->actuation.localization;
    s->nregions = 1; /* one region; mlc_pipeline_subspace_settings_for adds the body's */
    s->threads = cfg->parallel.threads;
    s->max_memory = mlc_pipeline_memory_bound(cfg);
}

double mlc_pipeline_memory_bound(const mlc_config *cfg) {
    return cfg->parallel.max_memory > 0 ? cfg->parallel.max_memory : mlc_budget_default(NULL, 0);
}

mlc_status mlc_pipeline_load_mesh(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    if (cfg->mesh.path[0]) {
        snprintf(p->mesh_path, sizeof p->mesh_path, "%s", cfg->mesh.path);
    } else if ((s = mlc_pipeline_sample_mesh(p->mesh_path, sizeof p->mesh_path, err)) != MLC_OK) {
        return s;
    }
    double t0 = mlc_now();
    /* A surface's tets are kept beside the precompute cache, as CACHE.tets: a sweep over seeds
     * then runs tetgen once, as it runs the eigen-solves once. */
    char tets[MLC_CONFIG_PATH_MAX + 8] = "";
    if (cfg->subspace.cache[0]) snprintf(tets, sizeof tets, "%s.tets", cfg->subspace.cache);
    s = mlc_mesh_read_sized(p->mesh_path, tets, cfg->mesh.min_tets, &p->mesh, &p->report, err);
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

mlc_status mlc_pipeline_regions(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    if (!p->mesh.X && (s = mlc_pipeline_load_mesh(p, cfg, err)) != MLC_OK) return s;
    if (!p->fem.vol) {
        double t0 = mlc_now();
        if ((s = mlc_fem_init(&p->fem, &p->mesh, err)) != MLC_OK) return s;
        p->t_fem = mlc_now() - t0;
    }
    if (p->regions.tet_region) return MLC_OK;
    s = mlc_regions_resolve(cfg, &p->mesh, &p->report, &p->fem, &p->regions, err);
    if (s == MLC_OK)
        s = mlc_region_materials_build(&p->regions, cfg, &p->mesh, &p->fem, &p->materials, err);
    if (s != MLC_OK) mlc_regions_free(&p->regions);
    return s;
}

void mlc_pipeline_subspace_settings_for(const mlc_pipeline *p, const mlc_config *cfg,
                                        mlc_subspace_settings *s) {
    mlc_pipeline_subspace_settings(cfg, s);
    s->tet_stiffness = p->materials.stiffness;
    s->vertex_mass = p->materials.vertex_mass;
    s->tet_mass_scale = p->materials.mass_scale;
    s->tet_region = p->regions.tet_region;
    s->nregions = p->regions.nregions;
}

mlc_status mlc_pipeline_subspaces(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    if ((s = mlc_pipeline_regions(p, cfg, err)) != MLC_OK) return s;
    double t0 = mlc_now();
    mlc_subspace_settings ss;
    mlc_pipeline_subspace_settings_for(p, cfg, &ss);
    uint64_t key = mlc_subspace_cache_key(&p->mesh, &ss);
    const char *cache = cfg->subspace.cache;
    if (cache[0]) {
        mlc_err cerr;
        if (mlc_subspace_cache_load(cache, &p->mesh, &p->fem, &ss, &p->sub, &cerr) == MLC_OK) {
            p->cache_used = 1;
            p->t_subspace = mlc_now() - t0;
            return MLC_OK;
        }
        if (mlc_file_exists(cache)) note(p, "recomputing the precompute cache: %s", cerr.msg);
    }
    if ((s = mlc_subspace_compute(&p->mesh, &p->fem, &ss, &p->sub, err)) != MLC_OK) return s;
    p->t_subspace = mlc_now() - t0;
    if (p->sub.skin_attempts > 1)
        note(p,
             "note: skinning modes: the first solve failed its check (%s); "
             "solved again with shift %.3g",
             p->sub.skin_note, p->sub.skin_shift);
    if (p->sub.vib_attempts > 1)
        note(p,
             "note: vibration modes: the first solve failed its check (%s); "
             "solved again with shift %.3g, relative residual %.1e",
             p->sub.vib_note, p->sub.vib_shift, p->sub.vib_residual);
    if (cache[0]) {
        mlc_err werr;
        if (mlc_subspace_cache_write(cache, key, &p->sub, &werr) != MLC_OK)
            note(p, "warning: could not write the cache: %s", werr.msg);
    }
    return MLC_OK;
}

mlc_status mlc_pipeline_model(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    /* The waypoints first: a bad path file fails before the precompute. */
    if (cfg->objective.kind == MLC_OBJ_PATH && !p->path &&
        (s = mlc_objective_path_read(cfg->objective.path, &p->path, &p->npath, err)) != MLC_OK)
        return s;
    if (!p->sub.W && (s = mlc_pipeline_subspaces(p, cfg, err)) != MLC_OK) return s;
    double t0 = mlc_now();
    mlc_sim_settings ss;
    mlc_pipeline_sim_settings(cfg, &ss);
    mlc_terrain ter;
    if ((s = mlc_pipeline_terrain(cfg, &ter, err)) != MLC_OK) return s;
    ss.terrain = &ter;
    mlc_materials mat = mlc_region_materials_view(&p->materials);
    s = mlc_model_create_materials(&p->mesh, &p->fem, &p->sub, &ss, &mat, &p->model, err);
    mlc_terrain_free(&ter);
    if (s != MLC_OK) return s;
    p->t_model = mlc_now() - t0;
    return MLC_OK;
}

mlc_status mlc_pipeline_gait_space(mlc_pipeline *p, const mlc_config *cfg, mlc_gait_space *g,
                                   mlc_err *err) {
    const mlc_subspace *sub = &p->sub;
    if (sub->m > MLC_GAIT_MAX_MODES)
        return mlc_errf(err, MLC_EINVAL, "actuation.modes: %d modes, expected 1..%d", sub->m,
                        MLC_GAIT_MAX_MODES);
    double amax[MLC_SUBSPACE_MAX_ACTUATED];
    mlc_subspace_amplitude_limits(sub, cfg->actuation.amplitude_p, amax);
    const mlc_gait_def def = {.m = sub->m,
                              .k = cfg->actuation.sinusoids,
                              .q = cfg->actuation.select,
                              .a_max = amax,
                              .T_min = cfg->actuation.period_range[0],
                              .T_max = cfg->actuation.period_range[1],
                              .th_min = cfg->actuation.phase_range[0],
                              .th_max = cfg->actuation.phase_range[1],
                              .fixed_periods = cfg->actuation.fixed_periods,
                              .nfixed = cfg->actuation.nfixed_periods};
    mlc_status s = mlc_gait_space_init(g, &def, err);
    if (s != MLC_OK) return s;
    if (!p->mode_strain) {
        p->mode_strain = mlc_malloc((size_t)sub->nt * (size_t)sub->m * sizeof(double));
        if (!p->mode_strain) return mlc_errf(err, MLC_ENOMEM, "out of memory");
        mlc_subspace_mode_strains(&p->mesh, &p->fem, sub, cfg->parallel.threads, p->mode_strain);
    }
    return mlc_gait_space_set_strain(g, sub->nt, p->mode_strain, cfg->actuation.amplitude_p,
                                     cfg->actuation.amplitude_bound == MLC_BOUND_COMBINED, err);
}

void mlc_pipeline_free(mlc_pipeline *p) {
    if (!p) return;
    mlc_free(p->mode_strain);
    mlc_free(p->path);
    mlc_model_destroy(p->model);
    mlc_subspace_free(&p->sub);
    mlc_region_materials_free(&p->materials);
    mlc_regions_free(&p->regions);
    mlc_fem_free(&p->fem);
    mlc_mesh_free(&p->mesh);
    /* Empty again, but still reporting where the caller asked. */
    const mlc_pipeline_note_fn fn = p->note;
    void *user = p->note_user;
    memset(p, 0, sizeof *p);
    p->note = fn, p->note_user = user;
}
