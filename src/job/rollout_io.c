/* rollout_io.c: run one rollout and write what `simulate` (and `optimize`, for the best gait)
 * promise: trajectory.csv, surface.obj, animation.pc2 and result.json (docs/outputs.md),
 * and with output.vtk the ParaView series (vtkxml.h) of the same output frames. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "credibility.h"
#include "output.h"
#include "rollout_io.h"
#include "viewer.h"
#include "vtkxml.h"

/* The ParaView series of one rollout: per output frame the skinned surface (the points of
 * animation.pc2's frame) and, with output.vtk_volume, every mesh vertex, each with its
 * displacement from rest and the contact-sample flag. Buffers are sized once, before the
 * rollout. */
typedef struct vtk_frames {
    mlc_vtk_series series;
    const mlc_mesh *mesh;
    int nsv, nf;
    const int *sf;         /* 3×nf surface triangles into the nsv compacted vertices */
    double *rest;          /* 3×nsv rest surface positions */
    double *disp;          /* 3×nsv surface displacements, then 3×nv with volume */
    unsigned char *sample; /* nsv surface flags, then nv with volume: 1 on a contact sample */
    double *xv;            /* 3×nv skinned positions of every vertex (volume only) */
} vtk_frames;

typedef struct frame_writer {
    const mlc_model *model;
    FILE *csv;
    mlc_pc2_writer *pc2;
    int nsv;
    const int *sv;
    double *xyz; /* 3×nsv scratch for skinned surface positions */
    int every;
    int threads;     /* parallel.threads: the skinning of a frame takes two unless 1 */
    vtk_frames *vtk; /* NULL unless output.vtk */
    mlc_status status;
    mlc_err err;
} frame_writer;

/* Write one output frame of the series; fw->xyz holds the skinned surface. */
static mlc_status vtk_frame(frame_writer *fw, double time, const double *z) {
    vtk_frames *v = fw->vtk;
    for (int i = 0; i < 3 * v->nsv; i++)
        v->disp[i] = fw->xyz[i] - v->rest[i];
    mlc_vtk_field sf[2] = {{"displacement", 3, v->disp, NULL},
                           {"contact_sample", 1, NULL, v->sample}};
    mlc_vtk_piece surf = {fw->xyz, v->nsv, v->sf, v->nf, sf, 2};
    mlc_vtk_piece vol = {0};
    mlc_vtk_field vf[2];
    if (v->xv) {
        const mlc_mesh *m = v->mesh;
        double *dv = v->disp + 3 * (size_t)v->nsv;
        mlc_model_skin(fw->model, z, m->nv, NULL, v->xv);
        for (size_t i = 0; i < 3 * (size_t)m->nv; i++)
            dv[i] = v->xv[i] - m->X[i];
        vf[0] = (mlc_vtk_field){"displacement", 3, dv, NULL};
        vf[1] = (mlc_vtk_field){"contact_sample", 1, NULL, v->sample + v->nsv};
        vol = (mlc_vtk_piece){v->xv, m->nv, m->T, m->nt, vf, 2};
    }
    return mlc_vtk_series_frame(&v->series, time, &surf, v->xv ? &vol : NULL, &fw->err);
}

/* trajectory.csv's columns, shared by the reduced rollout and the full-space one
 * (fullspace_trajectory.csv), so the two files line up column for column. */
#define TRAJECTORY_HEADER                                                                          \
    "frame,time,com_x,com_y,com_z,forward_x,forward_y,forward_z,contacts,up_x,up_y,up_z\n"

static void trajectory_row(FILE *f, int frame, double time, const double com[3],
                           const double forward[3], int contacts, const double up[3]) {
    fprintf(f, "%d,%.9g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%.9g,%.9g,%.9g\n", frame, time,
            com[0], com[1], com[2], forward[0], forward[1], forward[2], contacts, up[0], up[1],
            up[2]);
}

static mlc_status on_frame(void *user, int frame, double time, const double *z, const double com[3],
                           const double forward[3], int contacts) {
    frame_writer *fw = user;
    if (fw->status != MLC_OK) return fw->status;
    /* Extra columns: the body's up axis R(t)ŷ, which shows a roll or a tumble that the
     * forward direction alone does not (a body rolling about v̂ keeps J_align). */
    double R[9];
    mlc_model_rotation(fw->model, z, R);
    trajectory_row(fw->csv, frame, time, com, forward, contacts, R + 3);
    if (frame % fw->every == 0) {
        /* Each vertex is skinned alone, so the two halves on two threads give the same bits;
         * the frame's skinning was half of writing a 60k-tet character's outputs. */
        const int half = fw->nsv / 2, two = fw->threads != 1 && half >= 64;
#pragma omp parallel for num_threads(2) if (two)
        for (int part = 0; part < 2; part++) {
            const int lo = part ? half : 0, hi = part ? fw->nsv : half;
            mlc_model_skin(fw->model, z, hi - lo, fw->sv + lo, fw->xyz + 3 * (size_t)lo);
        }
        fw->status = mlc_pc2_frame(fw->pc2, fw->xyz, &fw->err);
        if (fw->status == MLC_OK && fw->vtk) fw->status = vtk_frame(fw, time, z);
    }
    return fw->status;
}

static void vtk_frames_free(vtk_frames *v) {
    mlc_vtk_series_free(&v->series);
    mlc_free(v->rest);
    mlc_free(v->disp);
    mlc_free(v->sample);
    mlc_free(v->xv);
    memset(v, 0, sizeof *v);
}

/* Size the buffers and create DIR/frames. rest is the compacted rest surface (3×nsv, copied),
 * sv its vertex indices into the mesh. */
static mlc_status vtk_frames_init(vtk_frames *v, const mlc_pipeline *p, const mlc_config *cfg,
                                  const char *dir, int nsv, const int *sv, const int *sf,
                                  const double *rest, mlc_err *err) {
    memset(v, 0, sizeof *v);
    const mlc_mesh *m = &p->mesh;
    int volume = cfg->output.vtk_volume;
    size_t nall = (size_t)nsv + (volume ? (size_t)m->nv : 0);
    v->mesh = m, v->nsv = nsv, v->nf = m->nf, v->sf = sf;
    v->rest = mlc_malloc(3 * (size_t)nsv * sizeof(double));
    v->disp = mlc_malloc(3 * nall * sizeof(double));
    v->sample = mlc_calloc(nall, 1);
    v->xv = volume ? mlc_malloc(3 * (size_t)m->nv * sizeof(double)) : NULL;
    if (!v->rest || !v->disp || !v->sample || (volume && !v->xv)) {
        vtk_frames_free(v);
        return mlc_errf(err, MLC_ENOMEM, "out of memory preparing the VTK frames");
    }
    memcpy(v->rest, rest, 3 * (size_t)nsv * sizeof(double));
    /* Contact samples are mesh vertices on the boundary; sv is ascending (mesh.h), so each
     * one's surface index is found by bisection. */
    for (int k = 0; k < p->sub.ns; k++) {
        int vert = p->sub.samples[k], lo = 0, hi = nsv - 1;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (sv[mid] < vert)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (nsv > 0 && sv[lo] == vert) v->sample[lo] = 1;
        if (volume) v->sample[nsv + vert] = 1;
    }
    mlc_status s = mlc_vtk_series_begin(&v->series, dir, volume, err);
    if (s != MLC_OK) vtk_frames_free(v);
    return s;
}

void mlc_json_add_credibility(cJSON *o, const mlc_credibility *c) {
    cJSON *b = cJSON_AddObjectToObject(o, "credibility");
    const mlc_json_field f[] = {{"rise", c->rise},
                                {"airborne", c->airborne},
                                {"penetration", c->penetration},
                                {"up_min", c->up_min},
                                {"robustness", c->robustness}};
    mlc_json_add_numbers(b, f, (int)(sizeof f / sizeof f[0]));
    cJSON_AddBoolToObject(b, "credible", c->credible);
}

static cJSON *exact_array(const double *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, mlc_json_exact_number(v[i]));
    return a;
}

void mlc_json_add_transform(cJSON *o, const mlc_transform *tf) {
    cJSON *t = cJSON_AddObjectToObject(o, "transform");
    cJSON *rows = cJSON_AddArrayToObject(t, "rotate");
    for (int i = 0; i < 3; i++)
        cJSON_AddItemToArray(rows, exact_array(tf->rotate + 3 * i, 3));
    cJSON_AddItemToObject(t, "scale", mlc_json_exact_number(tf->scale));
    cJSON_AddItemToObject(t, "translate", exact_array(tf->translate, 3));
}

/* result.json text for a rollout (owned, mlc_free), with the credibility block when cred is
 * not NULL and "found" when found >= 0. */
static char *mlc_result_json(const mlc_rollout_result *res, const mlc_credibility *cred,
                             int found) {
    cJSON *o = cJSON_CreateObject();
    const mlc_json_field f[] = {{"J", res->J},
                                {"J_disp", res->J_disp},
                                {"J_align", res->J_align},
                                {"J_work", res->J_work},
                                {"displacement", res->displacement},
                                {"height_gain", res->height_gain}};
    mlc_json_add_numbers(o, f, (int)(sizeof f / sizeof f[0]));
    /* The task term and the penalties of docs/method.md §7 (exact: re-derivable from
     * trajectory.csv). */
    cJSON_AddItemToObject(o, "J_task", mlc_json_exact_number(res->J_task));
    cJSON_AddItemToObject(o, "J_gate", mlc_json_exact_number(res->J_gate));
    cJSON_AddItemToObject(o, "task_error", mlc_json_exact_number(res->task_error));
    cJSON_AddItemToObject(o, "J_effort", mlc_json_exact_number(res->J_effort));
    cJSON_AddItemToObject(o, "J_vibration", mlc_json_exact_number(res->J_vibration));
    cJSON_AddItemToObject(o, "roll_angle", mlc_json_exact_number(res->roll_angle));
    cJSON_AddItemToObject(o, "flip_angle", mlc_json_exact_number(res->flip_angle));
    cJSON_AddItemToObject(o, "J_exact", mlc_json_exact_number(res->J));
    cJSON *c0 = cJSON_AddArrayToObject(o, "com_start");
    cJSON *c1 = cJSON_AddArrayToObject(o, "com_end");
    for (int k = 0; k < 3; k++) {
        cJSON_AddItemToArray(c0, cJSON_CreateNumber(res->com0[k]));
        cJSON_AddItemToArray(c1, cJSON_CreateNumber(res->com1[k]));
    }
    cJSON_AddNumberToObject(o, "steps_done", res->steps_done);
    cJSON_AddBoolToObject(o, "failed", res->failed);
    if (cred) mlc_json_add_credibility(o, cred);
    if (found >= 0) cJSON_AddBoolToObject(o, "found", found);
    /* every number with its bits (the credibility's too): as the document reads back when a
     * block is added to it later (mlc_optimize_add_result_block) */
    char *text = mlc_json_make_exact(o) ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text) return NULL;
    char *copy = mlc_malloc(strlen(text) + 2);
    if (copy) {
        strcpy(copy, text);
        strcat(copy, "\n");
    }
    cJSON_free(text);
    return copy;
}

void mlc_print_credibility(FILE *f, const mlc_credibility *c) {
    fprintf(f,
            "rise %.6g\nairborne %.6g\npenetration %.6g\nup_min %.6g\nrobustness %.6g\n"
            "credible %s\n",
            c->rise, c->airborne, c->penetration, c->up_min, c->robustness,
            c->credible ? "true" : "false");
}

mlc_status mlc_write_rollout(const mlc_pipeline *p, const mlc_config *cfg, const mlc_actuation *act,
                             const char *dir, int with_found, mlc_rollout_result *res,
                             mlc_credibility *cred, mlc_err *err) {
    char path[MLC_CONFIG_PATH_MAX + 64];
    mlc_status s;
    int nsv = 0, *sv = NULL, *sf = NULL;
    double *xyz = NULL;
    mlc_afile csv = {0};
    mlc_pc2_writer pc2;
    memset(&pc2, 0, sizeof pc2);
    vtk_frames vtk;
    memset(&vtk, 0, sizeof vtk);

    if ((s = mlc_mesh_surface(&p->mesh, &nsv, &sv, &sf)) != MLC_OK) {
        mlc_errf(err, s, "out of memory extracting the surface");
        goto done;
    }
    xyz = mlc_malloc(3 * (size_t)nsv * sizeof(double));
    if (!xyz) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory preparing the rollout");
        goto done;
    }
    /* Rest surface: the prepared mesh's boundary, compacted in the order of the point cache. */
    for (int i = 0; i < nsv; i++)
        for (int k = 0; k < 3; k++)
            xyz[3 * i + k] = p->mesh.X[3 * sv[i] + k];
    mlc_path_join(path, sizeof path, dir, "surface.obj");
    if ((s = mlc_obj_write(path, xyz, nsv, sf, p->mesh.nf, "modalloco rest surface", err)) !=
        MLC_OK)
        goto done;
    mlc_path_join(path, sizeof path, dir, "trajectory.csv");
    if ((s = mlc_afile_open(&csv, path, err)) != MLC_OK) goto done;
    fputs(TRAJECTORY_HEADER, csv.fp);
    mlc_path_join(path, sizeof path, dir, "animation.pc2");
    if ((s = mlc_pc2_begin(&pc2, path, nsv, err)) != MLC_OK) goto done;
    if (cfg->output.vtk &&
        (s = vtk_frames_init(&vtk, p, cfg, dir, nsv, sv, sf, xyz, err)) != MLC_OK)
        goto done;

    frame_writer fw = {p->model,
                       csv.fp,
                       &pc2,
                       nsv,
                       sv,
                       xyz,
                       cfg->output.every,
                       cfg->parallel.threads,
                       cfg->output.vtk ? &vtk : NULL,
                       MLC_OK,
                       {0}};
    mlc_objective_settings obj;
    mlc_pipeline_objective(p, cfg, &obj);
    /* The files and the credibility measures come from the same rollout; a failed frame write
     * stops it. */
    const mlc_credibility_def def = {p->model, &p->mesh, &obj, cfg->parallel.threads,
                                     on_frame, &fw};
    s = mlc_credibility_evaluate(&def, act, res, cred, err);
    if (fw.status != MLC_OK) {
        s = fw.status;
        if (err) *err = fw.err;
    }
    if (s != MLC_OK) goto done;
    if ((s = mlc_pc2_end(&pc2, err)) != MLC_OK) goto done;
    if (cfg->output.vtk && (s = mlc_vtk_series_end(&vtk.series, err)) != MLC_OK) goto done;
    if ((s = mlc_afile_commit(&csv, err)) != MLC_OK) goto done;
    char *rj = mlc_result_json(res, cred, with_found ? mlc_credibility_found(res, cred) : -1);
    if (!rj) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory writing result.json");
        goto done;
    }
    mlc_path_join(path, sizeof path, dir, "result.json");
    s = mlc_write_text_atomic(path, rj, err);
    mlc_free(rj);
done:
    vtk_frames_free(&vtk);
    mlc_pc2_abort(&pc2);
    mlc_afile_abort(&csv);
    mlc_free(xyz);
    mlc_free(sv);
    mlc_free(sf);
    return s;
}

struct mlc_full_frames {
    mlc_afile csv;
    mlc_pc2_writer pc2;
    int nsv, every;
    int *sv, *sf;
    double *xyz; /* 3×nsv positions of the surface vertices this frame */
    mlc_status status;
    mlc_err err;
};

void mlc_full_frames_free(mlc_full_frames *ff) {
    if (!ff) return;
    mlc_pc2_abort(&ff->pc2);
    mlc_afile_abort(&ff->csv);
    mlc_free(ff->sv);
    mlc_free(ff->sf);
    mlc_free(ff->xyz);
    mlc_free(ff);
}

mlc_status mlc_full_frames_open(const mlc_pipeline *p, const mlc_config *cfg, const char *dir,
                                mlc_full_frames **out, mlc_err *err) {
    char path[MLC_CONFIG_PATH_MAX + 64];
    mlc_status s;
    *out = NULL;
    mlc_full_frames *ff = mlc_calloc(1, sizeof *ff);
    if (!ff) return mlc_errf(err, MLC_ENOMEM, "out of memory preparing the full-space frames");
    ff->every = cfg->output.every;
    /* The same surface, in the same order, as surface.obj and animation.pc2. */
    if ((s = mlc_mesh_surface(&p->mesh, &ff->nsv, &ff->sv, &ff->sf)) != MLC_OK ||
        !(ff->xyz = mlc_malloc(3 * (size_t)ff->nsv * sizeof(double)))) {
        mlc_full_frames_free(ff);
        return mlc_errf(err, MLC_ENOMEM, "out of memory preparing the full-space frames");
    }
    mlc_path_join(path, sizeof path, dir, "fullspace_trajectory.csv");
    if ((s = mlc_afile_open(&ff->csv, path, err)) != MLC_OK) {
        mlc_full_frames_free(ff);
        return s;
    }
    fputs(TRAJECTORY_HEADER, ff->csv.fp);
    mlc_path_join(path, sizeof path, dir, "fullspace.pc2");
    if ((s = mlc_pc2_begin(&ff->pc2, path, ff->nsv, err)) != MLC_OK) {
        mlc_full_frames_free(ff);
        return s;
    }
    *out = ff;
    return MLC_OK;
}

void mlc_full_frames_on(void *user, int frame, double time, const double *x, const double com[3],
                        const double forward[3], const double up[3], int contacts) {
    mlc_full_frames *ff = user;
    if (ff->status != MLC_OK) return; /* the first failure is the one reported */
    trajectory_row(ff->csv.fp, frame, time, com, forward, contacts, up);
    if (frame % ff->every != 0) return;
    for (int i = 0; i < ff->nsv; i++)
        for (int k = 0; k < 3; k++)
            ff->xyz[3 * i + k] = x[3 * (size_t)ff->sv[i] + k];
    ff->status = mlc_pc2_frame(&ff->pc2, ff->xyz, &ff->err);
}

mlc_status mlc_full_frames_commit(mlc_full_frames *ff, mlc_err *err) {
    mlc_status s = ff->status;
    if (s != MLC_OK) {
        if (err) *err = ff->err;
        return s;
    }
    if ((s = mlc_pc2_end(&ff->pc2, err)) != MLC_OK) return s;
    return mlc_afile_commit(&ff->csv, err);
}

mlc_status mlc_prepare_out_dir(const char *dir, const mlc_config *cfg, int force, mlc_err *err) {
    mlc_status s = mlc_mkdir_p(dir, err);
    if (s != MLC_OK) return s;
    char *text = mlc_config_to_json(cfg);
    if (!text) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    char path[MLC_CONFIG_PATH_MAX + 64];
    mlc_path_join(path, sizeof path, dir, "config.json");
    char *old = mlc_file_read_text(path);
    if (old && strcmp(old, text) != 0 && !force) {
        mlc_free(old);
        mlc_free(text);
        return mlc_errf(err, MLC_EINVAL,
                        "%s holds the output of a run with another "
                        "configuration (its config.json differs); choose another --out, or "
                        "pass --force to overwrite it",
                        dir);
    }
    mlc_free(old);
    s = mlc_write_text_atomic(path, text, err);
    mlc_free(text);
    return s;
}

mlc_status mlc_write_viewer(const char *dir, mlc_err *err) {
    mlc_run run;
    memset(&run, 0, sizeof run);
    mlc_status s = mlc_run_load(dir, &run, err);
    if (s == MLC_OK) {
        char path[MLC_CONFIG_PATH_MAX + 64];
        mlc_path_join(path, sizeof path, dir, "view.html");
        mlc_view_html_info info;
        s = mlc_view_html_write(&run, path, MLC_VIEW_MAX_DATA, &info, err);
    }
    mlc_run_free(&run);
    return s;
}
