/* cmd_info.c: `modalloco info MESH [--json]`: read, validate, repair and describe a mesh. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "modalloco/commands.h"
#include "modalloco/mesh.h"

static cJSON *vec3(const double *v) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < 3; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[k]));
    return a;
}

int mlc_cmd_info(const mlc_cli_options *opt) {
    mlc_err err = {0};
    mlc_config cfg;
    mlc_status s = mlc_cli_load_config(opt, &cfg, &err);
    if (s != MLC_OK) return mlc_cli_fail(s, &err);
    mlc_mesh mesh = {0};
    mlc_mesh_report rep;
    memset(&rep, 0, sizeof rep);
    double t0 = mlc_now();
    s = mlc_mesh_read(opt->input, &mesh, &rep, &err);
    if (s == MLC_EIO) s = MLC_EINVAL; /* unreadable input is an input error (exit 2) */
    if (s != MLC_OK) return mlc_cli_fail(s, &err);
    double t_read = mlc_now() - t0;
    mlc_mesh_stats st;
    mlc_mesh_compute_stats(&mesh, &st);
    mlc_transform tf = mlc_mesh_prepare_transform(&mesh, cfg.mesh.normalize, cfg.mesh.extent);
    char checksum[32];
    snprintf(checksum, sizeof checksum, "%016" PRIx64, mlc_mesh_checksum(&mesh));
    if (opt->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", opt->input);
        cJSON_AddStringToObject(o, "format", rep.format);
        cJSON_AddBoolToObject(o, "tetrahedralized", rep.tetrahedralized);
        cJSON_AddNumberToObject(o, "vertices", mesh.nv);
        cJSON_AddNumberToObject(o, "tets", mesh.nt);
        cJSON_AddNumberToObject(o, "boundary_faces", mesh.nf);
        cJSON_AddNumberToObject(o, "volume", st.volume);
        cJSON_AddItemToObject(o, "bbox_min", vec3(st.bbox_min));
        cJSON_AddItemToObject(o, "bbox_max", vec3(st.bbox_max));
        cJSON_AddNumberToObject(o, "min_tet_volume", st.min_tet_volume);
        cJSON_AddNumberToObject(o, "max_tet_volume", st.max_tet_volume);
        cJSON_AddNumberToObject(o, "min_dihedral_deg", st.min_dihedral_deg);
        cJSON_AddNumberToObject(o, "max_dihedral_deg", st.max_dihedral_deg);
        cJSON_AddNumberToObject(o, "flipped_tets", rep.flipped_tets);
        cJSON_AddNumberToObject(o, "dropped_vertices", rep.dropped_vertices);
        cJSON_AddNumberToObject(o, "components", rep.components);
        cJSON_AddNumberToObject(o, "zero_volume_threshold", rep.min_volume_threshold);
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "scale", tf.scale);
        cJSON_AddItemToObject(t, "translate", vec3(tf.translate));
        cJSON_AddItemToObject(o, "transform", t);
        cJSON_AddStringToObject(o, "checksum", checksum);
        cJSON_AddNumberToObject(o, "read_seconds", t_read);
        char *text = cJSON_Print(o);
        if (text) {
            puts(text);
            cJSON_free(text);
        }
        cJSON_Delete(o);
    } else {
        printf("file              %s (%s%s)\n", opt->input, rep.format,
               rep.tetrahedralized ? ", tetrahedralized with tetgen" : "");
        printf("vertices          %d\n", mesh.nv);
        printf("tets              %d\n", mesh.nt);
        printf("boundary faces    %d\n", mesh.nf);
        printf("volume            %.6g\n", st.volume);
        printf("bounding box      [%.6g, %.6g, %.6g] .. [%.6g, %.6g, %.6g]\n", st.bbox_min[0],
               st.bbox_min[1], st.bbox_min[2], st.bbox_max[0], st.bbox_max[1], st.bbox_max[2]);
        printf("tet volume        min %.6g, max %.6g\n", st.min_tet_volume, st.max_tet_volume);
        printf("dihedral angle    min %.4g°, max %.4g°\n", st.min_dihedral_deg,
               st.max_dihedral_deg);
        printf("flipped tets      %d\n", rep.flipped_tets);
        printf("dropped vertices  %d (unreferenced)\n", rep.dropped_vertices);
        printf("components        %d\n", rep.components);
        printf("transform         x' = %.9g x + (%.9g, %.9g, %.9g)%s\n", tf.scale,
               tf.translate[0], tf.translate[1], tf.translate[2],
               cfg.mesh.normalize ? "" : " (mesh.normalize = false)");
        printf("checksum          %s\n", checksum);
    }
    mlc_mesh_free(&mesh);
    return 0;
}
