/* mesh_info.h: what `modalloco info MESH` finds: the mesh read, validated and repaired
 * (mesh_read.h), its statistics, the transform and checksum the configuration gives it, the
 * labels it carries, and how steadily it stands with each axis up. Prints nothing; the one
 * warning (the body tips over on mesh.up and clearly stands on another axis) goes through the
 * sink. */
#ifndef MODALLOCO_MESH_INFO_H
#define MODALLOCO_MESH_INFO_H

#include "base.h"
#include "config.h"
#include "mesh.h"
#include "regions.h"
#include "sink.h"

struct cJSON;

typedef struct mlc_mesh_info {
    const char *file;      /* as given (not owned) */
    const mlc_config *cfg; /* mesh.up, mesh.normalize, mesh.extent (not owned) */
    mlc_mesh mesh;         /* owned */
    mlc_mesh_report rep;
    mlc_mesh_stats st;
    mlc_transform tf;
    char checksum[32], up[96]; /* mlc_mesh_oriented_checksum in hex; mesh.up as text */
    mlc_regions regions;       /* the labels the file carries (owned) */
    mlc_mesh_support sup[6];   /* with each axis of mlc_mesh_info_axis up */
    mlc_mesh_support sup_up;   /* with mesh.up up */
    int best, clear;           /* the steadiest axis, and whether it clearly stands on it */
    double t_read;             /* seconds */
} mlc_mesh_info;

/* Read and describe `file` with cfg's mesh settings into *in (free it with mlc_mesh_info_free
 * whatever the outcome). An unreadable or invalid mesh is MLC_EINVAL (exit 2). */
mlc_status mlc_mesh_info_run(const char *file, const mlc_config *cfg, const mlc_sink *sink,
                             mlc_mesh_info *in, mlc_err *err);
void mlc_mesh_info_free(mlc_mesh_info *in);

/* "+x", "-x", "+y", "-y", "+z", "-z" for i = 0..5 (the order of sup[]). */
const char *mlc_mesh_info_axis(int i);

/* Everything as one JSON object (`info --json`); owned (cJSON_Delete), NULL when out of
 * memory. */
struct cJSON *mlc_mesh_info_json(const mlc_mesh_info *in);

#endif
