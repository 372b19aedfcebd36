/* mesh_info.c: the info job (mesh_info.h): a mesh read, validated, repaired and described. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mesh_info.h"
#include "output.h"
#include "rollout_io.h"

static cJSON *vec3(const double *v) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < 3; k++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[k]));
    return a;
}

/* Guessing the up axis from the geometry: with each of the six axis directions up, does the
 * body stand, its centre of mass above the support polygon of its lowest region, and how far
 * is it from tipping over (mlc_mesh_support)? On the meshes tried (the bundled quadruped and
 * critter, cat, penguin, spot, blub) the largest margin is the axis they stand on; the area of
 * flat support is not (the voxel quadruped's flank has 4.5 times its feet's area). */
static const char *const axis_names[6] = {"+x", "-x", "+y", "-y", "+z", "-z"};
#define SUPPORT_BAND 0.02 /* the contact region: 2% of the extent above the lowest point */
/* A suggestion needs a body that clearly stands on it: blub, a round fish, balances on none
 * of the axes (its best margin is 0.0002 extents). */
#define SUPPORT_MIN_MARGIN 0.02 /* × extent */

/* Index into axis_names of the direction with the largest margin; -1 when out of memory. */
static int likely_up(const mlc_mesh *mesh, mlc_mesh_support sup[6]) {
    int best = 0;
    for (int i = 0; i < 6; i++) {
        double d[3] = {0, 0, 0};
        d[i / 2] = i % 2 ? -1.0 : 1.0;
        if (mlc_mesh_support_compute(mesh, d, SUPPORT_BAND, &sup[i]) != MLC_OK) return -1;
        if (sup[i].margin > sup[best].margin) best = i;
    }
    return best;
}

static void up_text(const mlc_config *cfg, char *buf, size_t cap) {
    const double *u = cfg->mesh.up_vector;
    if (cfg->mesh.up[0])
        snprintf(buf, cap, "%s", cfg->mesh.up);
    else
        snprintf(buf, cap, "[%.9g, %.9g, %.9g]", u[0], u[1], u[2]);
}

const char *mlc_mesh_info_axis(int i) {
    return axis_names[i];
}

/* The support with every axis up and with mesh.up up, the steadiest axis and whether the body
 * clearly stands on it; warns only when the body tips over on the configured axis and clearly
 * stands on another. */
static mlc_status assess_support(mlc_mesh_info *in, const mlc_sink *sink) {
    in->best = likely_up(&in->mesh, in->sup);
    if (in->best < 0 ||
        mlc_mesh_support_compute(&in->mesh, in->cfg->mesh.up_vector, SUPPORT_BAND, &in->sup_up))
        return MLC_ENOMEM;
    double ext = 0;
    for (int k = 0; k < 3; k++)
        ext = MLC_MAX(ext, in->st.bbox_max[k] - in->st.bbox_min[k]);
    in->clear = in->sup[in->best].margin > SUPPORT_MIN_MARGIN * ext;
    const char *b = axis_names[in->best];
    if (!(in->sup_up.margin > 0) && in->clear)
        mlc_sink_say(
            sink, 0,
            "modalloco: warning: %s: with mesh.up = %s the body tips over (its "
            "centre of mass is outside its support); the mesh may stand on %c%c: try --set "
            "mesh.up=%s\n",
            in->file, in->up, b[0] == '+' ? '-' : '+', b[1], b);
    return MLC_OK;
}

mlc_status mlc_mesh_info_run(const char *file, const mlc_config *cfg, const mlc_sink *sink,
                             mlc_mesh_info *in, mlc_err *err) {
    memset(in, 0, sizeof *in);
    in->file = file, in->cfg = cfg;
    double t0 = mlc_now();
    mlc_status s = mlc_mesh_read(file, &in->mesh, &in->rep, err);
    if (s == MLC_EIO) s = MLC_EINVAL; /* unreadable input is an input error (exit 2) */
    if (s != MLC_OK) return s;
    in->t_read = mlc_now() - t0;
    mlc_mesh_compute_stats(&in->mesh, &in->st);
    in->tf = mlc_mesh_prepare_transform(&in->mesh, cfg->mesh.up_vector, cfg->mesh.normalize,
                                        cfg->mesh.extent);
    snprintf(in->checksum, sizeof in->checksum, "%016" PRIx64,
             mlc_mesh_oriented_checksum(&in->mesh, &in->tf));
    up_text(cfg, in->up, sizeof in->up);
    /* The labels the file carries (regions.h: the body regions when no other source is set). */
    mlc_err ignored;
    if ((in->mesh.tet_tag && mlc_regions_from_labels(in->mesh.nt, in->mesh.tet_tag, "mesh",
                                                     &in->regions, &ignored) != MLC_OK) ||
        assess_support(in, sink) != MLC_OK)
        return mlc_errf(err, MLC_ENOMEM, "%s", mlc_strerror(MLC_ENOMEM));
    return MLC_OK;
}

void mlc_mesh_info_free(mlc_mesh_info *in) {
    mlc_regions_free(&in->regions);
    mlc_mesh_free(&in->mesh);
}

cJSON *mlc_mesh_info_json(const mlc_mesh_info *in) {
    const mlc_mesh_report *rep = &in->rep;
    const mlc_mesh_stats *st = &in->st;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", in->file);
    cJSON_AddStringToObject(o, "format", rep->format);
    cJSON_AddBoolToObject(o, "tetrahedralized", rep->tetrahedralized);
    cJSON_AddNumberToObject(o, "vertices", in->mesh.nv);
    cJSON_AddNumberToObject(o, "tets", in->mesh.nt);
    cJSON_AddNumberToObject(o, "boundary_faces", in->mesh.nf);
    cJSON_AddNumberToObject(o, "volume", st->volume);
    cJSON_AddItemToObject(o, "bbox_min", vec3(st->bbox_min));
    cJSON_AddItemToObject(o, "bbox_max", vec3(st->bbox_max));
    const mlc_json_field quality[] = {{"min_tet_volume", st->min_tet_volume},
                                      {"max_tet_volume", st->max_tet_volume},
                                      {"min_dihedral_deg", st->min_dihedral_deg},
                                      {"max_dihedral_deg", st->max_dihedral_deg},
                                      {"flipped_tets", rep->flipped_tets},
                                      {"dropped_vertices", rep->dropped_vertices},
                                      {"components", rep->components}};
    mlc_json_add_numbers(o, quality, (int)(sizeof quality / sizeof quality[0]));
    if (in->regions.nregions > 0) { /* the file's tet labels, ascending */
        cJSON *lab = cJSON_AddArrayToObject(o, "region_labels");
        for (int i = 0; i < in->regions.nregions; i++)
            cJSON_AddItemToArray(lab, cJSON_CreateNumber(in->regions.label[i]));
    } else {
        cJSON_AddNullToObject(o, "region_labels");
    }
    cJSON_AddNumberToObject(o, "zero_volume_threshold", rep->min_volume_threshold);
    if (rep->surface_checked) {
        const mlc_surface_check *c = &rep->surface;
        cJSON *sc = cJSON_AddObjectToObject(o, "surface_check");
        const mlc_json_field f[] = {{"boundary_edges", c->boundary_edges},
                                    {"nonmanifold_edges", c->nonmanifold_edges},
                                    {"degenerate_triangles", c->degenerate},
                                    {"components", c->components},
                                    {"misoriented_edges", c->misoriented_edges},
                                    {"dropped_triangles", rep->dropped_triangles}};
        mlc_json_add_numbers(sc, f, (int)(sizeof f / sizeof f[0]));
    }
    if (in->cfg->mesh.up[0])
        cJSON_AddStringToObject(o, "up", in->cfg->mesh.up);
    else
        cJSON_AddItemToObject(o, "up", vec3(in->cfg->mesh.up_vector));
    cJSON *so = cJSON_AddObjectToObject(o, "support");
    for (int i = 0; i < 6; i++) {
        cJSON *e = cJSON_AddObjectToObject(so, axis_names[i]);
        cJSON_AddNumberToObject(e, "polygon", in->sup[i].polygon);
        cJSON_AddNumberToObject(e, "margin", in->sup[i].margin);
    }
    if (in->clear)
        cJSON_AddStringToObject(o, "likely_up", axis_names[in->best]);
    else
        cJSON_AddNullToObject(o, "likely_up");
    mlc_json_add_transform(o, &in->tf);
    cJSON_AddStringToObject(o, "checksum", in->checksum);
    cJSON_AddNumberToObject(o, "read_seconds", in->t_read);
    return o;
}
