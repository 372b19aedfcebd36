/* modes_job.c: the modes job (modes_job.h): the subspaces and the files to inspect them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "modes_job.h"
#include "output.h"
#include "rollout_io.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define MODE_FRAMES 48 /* frames of one oscillation cycle in mode_I.pc2 */
#define VTK_WEIGHTS 32 /* skinning weights subspace.vtk carries, at most */

static cJSON *num_array(const double *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}
static cJSON *int_array(const int *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static mlc_status write_modes_json(const char *path, const mlc_pipeline *p, const mlc_config *cfg,
                                   mlc_err *err) {
    const mlc_subspace *s = &p->sub;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mesh", p->mesh_path);
    cJSON_AddNumberToObject(o, "vertices", p->mesh.nv);
    cJSON_AddNumberToObject(o, "tets", p->mesh.nt);
    mlc_json_add_transform(o, &p->transform);
    cJSON_AddItemToObject(o, "skinning_eigenvalues", num_array(s->skin_eval, s->w));
    cJSON_AddItemToObject(o, "rigid_eigenvalues", num_array(s->rigid_eval, 6));
    cJSON_AddItemToObject(o, "vibration_modes", int_array(s->mode_index, s->m));
    cJSON_AddItemToObject(o, "vibration_eigenvalues", num_array(s->vib_eval, s->m));
    double fr[MLC_SUBSPACE_MAX_ACTUATED], amax[MLC_SUBSPACE_MAX_ACTUATED];
    int na = mlc_subspace_amplitude_limits(s, cfg->actuation.amplitude_p, amax);
    /* Eigenvalues are for unit μ and unit density: ω² = λ μ / ρ for the material given. */
    for (int i = 0; i < na; i++)
        fr[i] =
            sqrt(fmax(s->vib_eval[i], 0) * cfg->material.mu / cfg->material.density) / (2 * MLC_PI);
    cJSON_AddItemToObject(o, "frequencies_hz", num_array(fr, na));
    cJSON_AddItemToObject(o, "amplitude_limits", num_array(amax, na));
    /* Local modes (docs/method.md): the region of every actuation mode (−1 = global), the
     * number of regions, the weight w (unit material, and in 1/s² for this material) and each
     * mode's share of motion outside its region. */
    cJSON_AddItemToObject(o, "mode_regions", int_array(s->mode_region, s->m));
    cJSON_AddNumberToObject(o, "regions", s->nregions);
    if (s->nregions > 0) {
        cJSON_AddNumberToObject(o, "localization_weight", s->local_weight);
        cJSON_AddNumberToObject(o, "localization_weight_per_s2",
                                s->local_weight * cfg->material.mu / cfg->material.density);
        cJSON_AddItemToObject(o, "outside_fractions", num_array(s->vib_frac, s->m));
        cJSON_AddNumberToObject(o, "orthonormalization_gram_min", s->local_gram_min);
        cJSON_AddNumberToObject(o, "orthonormalization_spread_max", s->local_spread_max);
    }
    int sizes[4096];
    int nc = MLC_MIN(s->ncp, 4096);
    memset(sizes, 0, sizeof sizes);
    for (int e = 0; e < s->nt; e++)
        if (s->cluster[e] < nc) sizes[s->cluster[e]]++;
    cJSON_AddItemToObject(o, "cluster_sizes", int_array(sizes, nc));
    cJSON_AddNumberToObject(o, "actuation_clusters", s->nca);
    /* Body regions (regions.h): how many, where from, their labels and sizes in tets. */
    const mlc_regions *rg = &p->regions;
    cJSON_AddNumberToObject(o, "regions", rg->nregions);
    cJSON_AddStringToObject(o, "region_source", rg->source);
    cJSON_AddItemToObject(o, "region_labels", int_array(rg->label, rg->nregions));
    int *rsz = mlc_calloc((size_t)rg->nregions, sizeof(int));
    if (rsz) {
        for (int e = 0; e < rg->nt; e++)
            rsz[rg->tet_region[e]]++;
        cJSON_AddItemToObject(o, "region_tets", int_array(rsz, rg->nregions));
        mlc_free(rsz);
    }
    cJSON_AddItemToObject(o, "contact_samples", int_array(s->samples, s->ns));
    cJSON *t = cJSON_AddObjectToObject(o, "timings");
    const mlc_json_field f[] = {{"mesh", p->t_mesh},
                                {"fem", p->t_fem},
                                {"subspace_total", p->t_subspace},
                                {"skinning_modes", s->t_skinning},
                                {"vibration_modes", s->t_vibration}};
    mlc_json_add_numbers(t, f, (int)(sizeof f / sizeof f[0]));
    if (s->nregions > 0) cJSON_AddNumberToObject(t, "local_modes", s->t_local);
    cJSON_AddNumberToObject(t, "clusters", s->t_clusters);
    cJSON_AddNumberToObject(t, "contact_samples", s->t_samples);
    if (s->skin_attempts > 0 || s->vib_attempts > 0) { /* solved here (docs/scaling.md) */
        const mlc_json_field ph[] = {{"skinning_analyze", s->t_skin_analyze},
                                     {"skinning_factor", s->t_skin_factor},
                                     {"skinning_lanczos", s->t_skin_iterate},
                                     {"skinning_solves", s->skin_solves},
                                     {"skinning_factor_nnz", s->skin_factor_nnz},
                                     {"vertex_ordering", s->t_vib_order},
                                     {"vibration_analyze", s->t_vib_analyze},
                                     {"vibration_factor", s->t_vib_factor},
                                     {"vibration_lanczos", s->t_vib_iterate},
                                     {"vibration_solves", s->vib_solves},
                                     {"vibration_factor_nnz", s->vib_factor_nnz},
                                     {"vibration_solve_threads", s->vib_solve_threads},
                                     {"vibration_factor_threads", s->vib_factor_threads}};
        mlc_json_add_numbers(cJSON_AddObjectToObject(t, "phases"), ph,
                             (int)(sizeof ph / sizeof ph[0]));
    }
    cJSON_AddBoolToObject(o, "from_cache", p->cache_used);
    cJSON_AddStringToObject(o, "cholmod_ordering", s->ordering);
    if (s->vib_attempts > 0) { /* computed here, not read from the cache */
        cJSON *c = cJSON_AddObjectToObject(o, "vibration_check");
        const mlc_json_field cf[] = {{"attempts", s->vib_attempts},
                                     {"shift", s->vib_shift},
                                     {"residual", s->vib_residual},
                                     {"orthogonality", s->vib_orthogonality}};
        mlc_json_add_numbers(c, cf, (int)(sizeof cf / sizeof cf[0]));
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    char *full = mlc_malloc(strlen(text) + 2);
    if (!full) {
        cJSON_free(text);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    sprintf(full, "%s\n", text);
    cJSON_free(text);
    mlc_status st = mlc_write_text_atomic(path, full, err);
    mlc_free(full);
    return st;
}

/* What every file below the subspace reads: the surface (its vertices sv, triangles sf and rest
 * positions), the text of the vertices and of the skinning weights, formatted once for all the
 * text files (number_text.h), and where the files go. */
typedef struct modes_files {
    const mlc_pipeline *p;
    const mlc_config *cfg;
    const char *dir;
    int nsv;
    const int *sv, *sf;
    const double *rest;
    const mlc_number_text *points;  /* the mesh's nv vertices */
    const mlc_number_text *weights; /* min(w, VTK_WEIGHTS) texts of nv values */
} modes_files;

/* mode_I.pc2: one oscillation cycle of vibration mode i at its amplitude limit (strain p). */
static mlc_status write_mode_cycle(const modes_files *f, int i, double amp, mlc_err *err) {
    const mlc_mesh *m = &f->p->mesh;
    const mlc_subspace *sub = &f->p->sub;
    char path[MLC_CONFIG_PATH_MAX + 64];
    double *xyz = mlc_malloc(3 * (size_t)MLC_MAX(f->nsv, 1) * sizeof(double));
    if (!xyz) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    mlc_pc2_writer w;
    memset(&w, 0, sizeof w);
    snprintf(path, sizeof path, "%s/mode_%d.pc2", f->dir, sub->mode_index[i]);
    mlc_status s = mlc_pc2_begin(&w, path, f->nsv, err);
    const double *D = sub->D + (size_t)i * 3 * (size_t)m->nv;
    for (int fr = 0; fr < MODE_FRAMES && s == MLC_OK; fr++) {
        double a = amp * sin(2 * MLC_PI * fr / MODE_FRAMES);
        for (int v = 0; v < f->nsv; v++)
            for (int k = 0; k < 3; k++)
                xyz[3 * v + k] = f->rest[3 * v + k] + a * D[3 * (size_t)f->sv[v] + k];
        if ((s = mlc_pc2_frame(&w, xyz, err)) != MLC_OK) mlc_pc2_abort(&w);
    }
    if (s == MLC_OK) s = mlc_pc2_end(&w, err);
    mlc_free(xyz);
    return s;
}

/* weight_B.ply: skinning weight b as vertex colours on the surface. */
static mlc_status write_weight(const modes_files *f, int b, mlc_err *err) {
    const mlc_mesh *m = &f->p->mesh;
    char path[MLC_CONFIG_PATH_MAX + 64];
    double *scal = mlc_malloc((size_t)MLC_MAX(f->nsv, 1) * sizeof(double));
    unsigned char *rgb = mlc_malloc(3 * (size_t)MLC_MAX(f->nsv, 1));
    mlc_status s = MLC_OK;
    if (!scal || !rgb) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory");
    } else {
        for (int v = 0; v < f->nsv; v++)
            scal[v] = f->p->sub.W[(size_t)b * m->nv + f->sv[v]];
        mlc_colors_from_scalars(scal, f->nsv, 0, 0, rgb);
        snprintf(path, sizeof path, "%s/weight_%d.ply", f->dir, b);
        s = mlc_ply_write_text(path, f->points, f->sv, f->nsv, f->sf, m->nf, rgb, NULL, err);
    }
    mlc_free(scal);
    mlc_free(rgb);
    return s;
}

/* clusters.ply: a vertex takes the label of the first tet that uses it (clusters are
 * contiguous, so this shows their shapes; subspace.vtk has the exact per-tet labels).
 * regions.ply: a vertex takes the region holding most of the volume around it
 * (mlc_regions_vertex). */
static mlc_status write_labels(const modes_files *f, mlc_err *err) {
    const mlc_mesh *m = &f->p->mesh;
    char path[MLC_CONFIG_PATH_MAX + 64];
    int *vl = mlc_malloc((size_t)m->nv * sizeof(int));
    int *fl = mlc_malloc((size_t)MLC_MAX(f->nsv, 1) * sizeof(int));
    unsigned char *rgb = mlc_malloc(3 * (size_t)MLC_MAX(f->nsv, 1));
    mlc_status s = MLC_OK;
    if (!vl || !fl || !rgb) s = mlc_errf(err, MLC_ENOMEM, "out of memory");
    for (int v = 0; s == MLC_OK && v < m->nv; v++)
        vl[v] = -1;
    for (int e = 0; s == MLC_OK && e < m->nt; e++)
        for (int c = 0; c < 4; c++)
            if (vl[m->T[4 * e + c]] < 0) vl[m->T[4 * e + c]] = f->p->sub.cluster[e];
    for (int pass = 0; pass < 2 && s == MLC_OK; pass++) {
        if (pass == 1 && (s = mlc_regions_vertex(&f->p->regions, m, &f->p->fem, vl, err)) != MLC_OK)
            break;
        for (int v = 0; v < f->nsv; v++)
            fl[v] = vl[f->sv[v]];
        mlc_colors_from_labels(fl, f->nsv, rgb);
        snprintf(path, sizeof path, "%s/%s.ply", f->dir, pass ? "regions" : "clusters");
        s = mlc_ply_write_text(path, f->points, f->sv, f->nsv, f->sf, m->nf, rgb, NULL, err);
    }
    mlc_free(vl);
    mlc_free(fl);
    mlc_free(rgb);
    return s;
}

/* subspace.vtk: the tet mesh with the skinning weights and the clusters. */
static mlc_status write_vtk(const modes_files *f, mlc_err *err) {
    const mlc_mesh *m = &f->p->mesh;
    const mlc_subspace *sub = &f->p->sub;
    char path[MLC_CONFIG_PATH_MAX + 64];
    mlc_vtk_scalars fields[VTK_WEIGHTS];
    char names[VTK_WEIGHTS][16];
    int nfld = MLC_MIN(sub->w, VTK_WEIGHTS);
    for (int b = 0; b < nfld; b++) {
        snprintf(names[b], sizeof names[b], "weight_%d", b);
        fields[b].name = names[b];
        fields[b].values = sub->W + (size_t)b * m->nv;
        fields[b].text = &f->weights[b];
    }
    snprintf(path, sizeof path, "%s/subspace.vtk", f->dir);
    return mlc_vtk_write_text(path, f->points, m->T, m->nt, fields, nfld, "cluster", sub->cluster,
                              err);
}

/* Tuples per piece of the shared text, formatted side by side on the job's threads. */
#define TEXT_PIECE 4096

/* The text of the vertices (tuples of 3) and of the nw skinning weights (each nv values). */
static mlc_status format_texts(const mlc_mesh *m, const double *W, int nw, int threads,
                               mlc_number_text *points, mlc_number_text *weights, mlc_err *err) {
    mlc_status s = mlc_number_text_alloc(points, m->nv, 3, err);
    for (int b = 0; b < nw && s == MLC_OK; b++)
        s = mlc_number_text_alloc(&weights[b], m->nv, 1, err);
    if (s != MLC_OK) return s;
    const int pieces = (m->nv + TEXT_PIECE - 1) / TEXT_PIECE;
    (void)threads;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int task = 0; task < pieces * (1 + nw); task++) {
        const int which = task / pieces, lo = (task % pieces) * TEXT_PIECE;
        const int hi = MLC_MIN(m->nv, lo + TEXT_PIECE);
        if (which == 0)
            mlc_number_text_fill(points, m->X, lo, hi);
        else
            mlc_number_text_fill(&weights[which - 1], W + (size_t)(which - 1) * m->nv, lo, hi);
    }
    return MLC_OK;
}

mlc_status mlc_modes_job(mlc_pipeline *p, const mlc_config *cfg, int force, mlc_err *err) {
    int nsv = 0, *sv = NULL, *sf = NULL;
    double *rest = NULL;
    mlc_number_text points = {0}, weights[VTK_WEIGHTS] = {{0}};
    char path[MLC_CONFIG_PATH_MAX + 64];
    mlc_status s;
    if ((s = mlc_pipeline_subspaces(p, cfg, err)) != MLC_OK) goto done;
    const char *dir = cfg->output.dir;
    if ((s = mlc_prepare_out_dir(dir, cfg, force, err)) != MLC_OK) goto done;
    const double t0 = mlc_now();
    snprintf(path, sizeof path, "%s/modes.json", dir);
    if ((s = write_modes_json(path, p, cfg, err)) != MLC_OK) goto done;

    const mlc_mesh *m = &p->mesh;
    const mlc_subspace *sub = &p->sub;
    if ((s = mlc_mesh_surface(m, &nsv, &sv, &sf)) != MLC_OK) goto oom;
    rest = mlc_malloc(3 * (size_t)MLC_MAX(nsv, 1) * sizeof(double));
    if (!rest) goto oom;
    for (int i = 0; i < nsv; i++)
        for (int k = 0; k < 3; k++)
            rest[3 * i + k] = m->X[3 * sv[i] + k];
    int threads = cfg->parallel.threads > 0 ? cfg->parallel.threads : 1;
#ifdef _OPENMP
    if (cfg->parallel.threads <= 0) threads = omp_get_num_procs();
#endif
    const int nw = MLC_MIN(sub->w, VTK_WEIGHTS);
    if ((s = format_texts(m, sub->W, nw, threads, &points, weights, err)) != MLC_OK) goto done;

    /* The files are independent: written side by side on the job's threads, the largest first
     * (subspace.vtk, surface.obj, then the weights, the labels, the mode cycles), each task with
     * its own buffers; the first failure in task order is the one reported. */
    double amax[MLC_SUBSPACE_MAX_ACTUATED];
    const int na = mlc_subspace_amplitude_limits(sub, cfg->actuation.amplitude_p, amax);
    const modes_files f = {p, cfg, dir, nsv, sv, sf, rest, &points, weights};
    const int ntask = 3 + sub->w + na;
    mlc_status *st = mlc_calloc((size_t)ntask, sizeof *st);
    mlc_err *errs = mlc_calloc((size_t)ntask, sizeof *errs);
    if (!st || !errs) {
        mlc_free(st);
        mlc_free(errs);
        goto oom;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int t = 0; t < ntask; t++) {
        if (t == 0) {
            st[t] = write_vtk(&f, &errs[t]);
        } else if (t == 1) {
            char obj[MLC_CONFIG_PATH_MAX + 64];
            snprintf(obj, sizeof obj, "%s/surface.obj", dir);
            st[t] = mlc_obj_write_text(obj, &points, sv, nsv, sf, m->nf, "modalloco rest surface",
                                       &errs[t]);
        } else if (t <= sub->w + 1) {
            st[t] = write_weight(&f, t - 2, &errs[t]);
        } else if (t == sub->w + 2) {
            st[t] = write_labels(&f, &errs[t]);
        } else {
            st[t] = write_mode_cycle(&f, t - sub->w - 3, amax[t - sub->w - 3], &errs[t]);
        }
    }
    for (int t = 0; t < ntask && s == MLC_OK; t++)
        if ((s = st[t]) != MLC_OK && err) *err = errs[t];
    mlc_free(st);
    mlc_free(errs);
    p->t_files = mlc_now() - t0;
    goto done;
oom:
    s = mlc_errf(err, MLC_ENOMEM, "out of memory");
done:
    mlc_free(sv);
    mlc_free(sf);
    mlc_free(rest);
    mlc_number_text_free(&points);
    for (int b = 0; b < VTK_WEIGHTS; b++)
        mlc_number_text_free(&weights[b]);
    return s;
}
