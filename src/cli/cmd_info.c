/* cmd_info.c: `modalloco info MESH [--json]`: read, validate, repair and describe a mesh
 * (job/mesh_info.h); a report or one JSON object on stdout. */
#include <stdio.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "mesh_info.h"

/* The text report's lines on the regions and the surface check. */
static void print_regions_surface(const mlc_mesh_info *in) {
    const mlc_mesh_report *rep = &in->rep;
    if (in->regions.nregions > 0) {
        printf("region labels     %d in the file:", in->regions.nregions);
        for (int i = 0; i < in->regions.nregions && i < 20; i++)
            printf(" %d", in->regions.label[i]);
        printf("%s\n", in->regions.nregions > 20 ? " ..." : "");
    } else {
        printf("region labels     none in the file\n");
    }
    if (rep->surface_checked) {
        /* A surface that got this far passed the check; say so, with what is not a defect
         * for tetgen but may matter to the user's other tools. */
        printf("surface check     closed, manifold, one part, no zero-area triangles");
        if (rep->dropped_triangles)
            printf("; %d triangles with a repeated vertex dropped", rep->dropped_triangles);
        if (rep->surface.misoriented_edges)
            printf("; %d edges where neighbouring triangles disagree on the outside "
                   "(harmless here: the tets are oriented from their volume)",
                   rep->surface.misoriented_edges);
        printf("\n");
    }
}

/* `info` without --json: a human-readable report on stdout. */
/* A value for the text report with negative zero shown as 0: "-0" (from a centring offset of
 * 0 negated, or a rotation entry) reads as a defect to users and differs from what they type. */
static double pz(double x) {
    return x == 0 ? 0.0 : x;
}

static void print_text(const mlc_mesh_info *in) {
    const mlc_mesh_report *rep = &in->rep;
    const mlc_mesh_stats *st = &in->st;
    const mlc_transform *tf = &in->tf;
    printf("file              %s (%s%s)\n", in->file, rep->format,
           rep->tetrahedralized ? ", tetrahedralized with tetgen" : "");
    printf("vertices          %d\n", in->mesh.nv);
    printf("tets              %d\n", in->mesh.nt);
    printf("boundary faces    %d\n", in->mesh.nf);
    printf("volume            %.6g\n", st->volume);
    printf("bounding box      [%.6g, %.6g, %.6g] .. [%.6g, %.6g, %.6g]\n", pz(st->bbox_min[0]),
           pz(st->bbox_min[1]), pz(st->bbox_min[2]), pz(st->bbox_max[0]), pz(st->bbox_max[1]),
           pz(st->bbox_max[2]));
    printf("tet volume        min %.6g, max %.6g\n", st->min_tet_volume, st->max_tet_volume);
    printf("dihedral angle    min %.4g°, max %.4g°\n", st->min_dihedral_deg, st->max_dihedral_deg);
    printf("flipped tets      %d\n", rep->flipped_tets);
    printf("dropped vertices  %d (unreferenced)\n", rep->dropped_vertices);
    printf("components        %d\n", rep->components);
    print_regions_surface(in);
    /* The steadiest axis is only reported: a body standing on its feet may also rest on
     * a flank a little more steadily (the voxel quadruped does). */
    char steadier[64] = "";
    if (in->clear && in->sup[in->best].margin > in->sup_up.margin)
        snprintf(steadier, sizeof steadier, "; steadiest on %s", mlc_mesh_info_axis(in->best));
    printf("up axis           %s (mesh.up; the body %s%s)\n", in->up,
           in->sup_up.margin > 0 ? "stands on it" : "tips over", steadier);
    const double *R = tf->rotate;
    const char *unnormalized = in->cfg->mesh.normalize ? "" : " (mesh.normalize = false)";
    if (mlc_transform_is_unrotated(tf))
        printf("transform         x' = %.9g x + (%.9g, %.9g, %.9g)%s\n", tf->scale,
               pz(tf->translate[0]), pz(tf->translate[1]), pz(tf->translate[2]), unnormalized);
    else
        printf("transform         x' = %.9g R x + (%.9g, %.9g, %.9g)%s,\n"
               "                  R = [[%.9g, %.9g, %.9g], [%.9g, %.9g, %.9g], "
               "[%.9g, %.9g, %.9g]]\n",
               tf->scale, pz(tf->translate[0]), pz(tf->translate[1]), pz(tf->translate[2]),
               unnormalized, pz(R[0]), pz(R[1]), pz(R[2]), pz(R[3]), pz(R[4]), pz(R[5]), pz(R[6]),
               pz(R[7]), pz(R[8]));
    printf("checksum          %s\n", in->checksum);
}

int mlc_cmd_info(const mlc_cli_options *opt) {
    mlc_err err = {0};
    mlc_config cfg;
    mlc_status s = mlc_cli_load_config(opt, &cfg, &err);
    if (s != MLC_OK) return mlc_cli_fail(s, &err);
    mlc_sink sink = mlc_cli_sink();
    mlc_mesh_info in;
    if ((s = mlc_mesh_info_run(opt->input, &cfg, &sink, &in, &err)) != MLC_OK) {
        mlc_mesh_info_free(&in);
        return mlc_cli_fail(s, &err);
    }
    if (opt->json) { /* everything as one JSON object */
        cJSON *o = mlc_mesh_info_json(&in);
        char *text = o ? cJSON_Print(o) : NULL;
        if (text) {
            puts(text);
            cJSON_free(text);
        }
        cJSON_Delete(o);
    } else {
        print_text(&in);
    }
    mlc_mesh_info_free(&in);
    return 0;
}
