/* pipeline.h: from a configuration to a ready simulator: find and read the mesh, prepare it
 * (docs/method.md §1), FEM operators, subspaces (or the precompute cache) and the reduced model.
 * Shared by every command so that `modes`, `simulate` and `optimize` compute the same thing.
 *
 * Ownership: an mlc_pipeline owns everything it holds; mlc_pipeline_free releases it. A
 * zeroed struct is empty.
 */
#ifndef MODALLOCO_PIPELINE_H
#define MODALLOCO_PIPELINE_H

#include "base.h"
#include "config.h"
#include "fem.h"
#include "gait.h"
#include "mesh.h"
#include "objective.h"
#include "regions.h"
#include "sim.h"
#include "subspace.h"

/* What the pipeline has to say that is not an error (a cache recomputed or not written, an
 * eigen-solve done twice): one line, without a prefix or newline, e.g. "note: vibration modes:
 * ...". Like every module below the commands, the pipeline prints nothing itself. */
typedef void (*mlc_pipeline_note_fn)(void *user, const char *line);

typedef struct mlc_pipeline {
    mlc_pipeline_note_fn note; /* set by the caller before the first stage; NULL: notes dropped */
    void *note_user;           /* passed to note */
    char mesh_path[MLC_CONFIG_PATH_MAX]; /* the file actually read (sample resolved) */
    mlc_mesh mesh;                       /* prepared (transformed) mesh */
    mlc_mesh_report report;
    uint64_t mesh_checksum;  /* of the mesh as read and repaired, with the mesh.up rotation
                              * (mlc_mesh_oriented_checksum) */
    mlc_transform transform; /* applied by preparation */
    mlc_fem fem;
    mlc_regions regions;            /* body regions (regions.h); resolved with the FEM data */
    mlc_region_materials materials; /* material.regions per tet (uniform: arrays NULL) */
    mlc_subspace sub;
    int cache_used; /* 1: subspaces came from the cache file */
    mlc_model *model;
    double *mode_strain; /* nt×m per-tet mode strains (mlc_pipeline_gait_space), or NULL */
    double *path;        /* objective.path's waypoints (t, x, y, z) for kind "path", or NULL */
    int npath;
    /* Seconds per stage; t_files: the modes job's result files. */
    double t_mesh, t_fem, t_subspace, t_model, t_files;
} mlc_pipeline;

/* Where the bundled sample mesh lives (source tree, install prefix, or next to the program);
 * returns MLC_OK and fills `path` (capacity cap) or MLC_EIO. */
mlc_status mlc_pipeline_sample_mesh(char *path, size_t cap, mlc_err *err);

/* Read and prepare the mesh only (for `info`-like uses). */
mlc_status mlc_pipeline_load_mesh(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err);

/* FEM data, then the regions and their materials (regions.h), unless already there. */
mlc_status mlc_pipeline_regions(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err);

/* The subspace settings of a configuration with the pipeline's regions and materials (needs
 * mlc_pipeline_regions): what the subspaces and their cache key are computed from. */
void mlc_pipeline_subspace_settings_for(const mlc_pipeline *p, const mlc_config *cfg,
                                        mlc_subspace_settings *s);

/* Everything up to the subspaces (reads/writes the cache when subspace.cache is set). */
mlc_status mlc_pipeline_subspaces(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err);

/* The contact geometry of the configuration (contact.slope, .heightfield, .boxes,
 * .anisotropy; reads the heightfield file). The caller frees it (mlc_terrain_free). */
mlc_status mlc_pipeline_terrain(const mlc_config *cfg, mlc_terrain *t, mlc_err *err);

/* Everything up to the reduced model. */
mlc_status mlc_pipeline_model(mlc_pipeline *p, const mlc_config *cfg, mlc_err *err);

/* The optimizer's search space (gait.h) for this configuration: per-mode limits
 * a_max,i = p / grad_max[i], the period and phase boxes, and the amplitude bound
 * (actuation.amplitude_bound; the per-tet mode strains are computed once and kept in p).
 * Needs the subspaces. */
mlc_status mlc_pipeline_gait_space(mlc_pipeline *p, const mlc_config *cfg, mlc_gait_space *g,
                                   mlc_err *err);

/* Simulator and objective settings from a configuration. */
void mlc_pipeline_sim_settings(const mlc_config *cfg, mlc_sim_settings *s);
void mlc_pipeline_objective_settings(const mlc_config *cfg, mlc_objective_settings *o);
/* The objective settings with what the pipeline holds: the waypoints of objective.path (read by
 * mlc_pipeline_model; borrowed, valid while p lives) and the per-mode amplitude limits
 * a_max,i = p / grad_max[i] of the effort penalty. Every rollout that scores J uses these. */
void mlc_pipeline_objective(const mlc_pipeline *p, const mlc_config *cfg,
                            mlc_objective_settings *o);
void mlc_pipeline_subspace_settings(const mlc_config *cfg, mlc_subspace_settings *s);
/* The job's memory bound in bytes: --max-memory, or its default (budget.h; 0: none known). */
double mlc_pipeline_memory_bound(const mlc_config *cfg);

void mlc_pipeline_free(mlc_pipeline *p);

#endif
