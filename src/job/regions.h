/* regions.h: body regions (legs, shell, belly) and their materials.
 *
 * A region is a set of tets. Regions come from one of three sources, in this order:
 *   "file": regions.file, a label file (one integer per tet, or per vertex; docs/config.md);
 *   "auto": regions.auto = K, K regions from the skinning-weight features of the tets (the
 *           passive-cluster k-means of clusters.h, so limbs separate), face-connected;
 *   "mesh": the labels the mesh file carries (mesh.h tet_tag: MEDIT references, Gmsh physical
 *           tags, TetGen region attributes);
 *   "none": none of these: one region covering the body.
 * Labels are arbitrary integers as the user wrote them; internally regions are 0..K-1, in
 * ascending order of their labels ("auto": label = region index, numbered in order of first
 * tet). material.regions gives a region's material by its label.
 *
 * Ownership: an mlc_regions owns its arrays (mlc_regions_free). A zeroed struct is empty. */
#ifndef MODALLOCO_REGIONS_H
#define MODALLOCO_REGIONS_H

#include "base.h"
#include "config.h"
#include "fem.h"
#include "mesh.h"
#include "sim.h"

typedef struct mlc_regions {
    int nt;          /* tets of the mesh they belong to */
    int nregions;    /* K >= 1 */
    int *tet_region; /* nt: region of every tet, 0..K-1 */
    int *label;      /* K: the user's label of each region (ascending, except "auto") */
    char source[16]; /* "none", "mesh", "file" or "auto" */
} mlc_regions;

/* Per-tet materials of a body with regions (material.regions applied to the regions). */
typedef struct mlc_region_materials {
    int uniform;         /* 1: material.regions is empty: every array below is NULL */
    double *mu;          /* nt: μ_e */
    double *gamma;       /* nt: γ_e */
    double *density;     /* nt: ρ_e */
    double *friction;    /* nv: μ_f of each vertex's region (mlc_regions_vertex) */
    double *stiffness;   /* nt: (μ_e + γ_e)/(μ + γ), the subspace's per-tet scale */
    double *vertex_mass; /* nv: Σ_{e∋v} (ρ_e/ρ) V_e/4, the subspace's mass */
    double *mass_scale;  /* nt: ρ_e/ρ (the local modes' outside mass, local_modes.h) */
} mlc_region_materials;

/* Resolve the regions of a prepared mesh for a configuration (sources above). `report` (may be
 * NULL) tells whether the mesh was tetrahedralized from a surface or lost unreferenced
 * vertices, which per-vertex and per-tet label files cannot follow. Errors (MLC_EINVAL or
 * MLC_EPARSE, exit 2) name the file, the line and the fix: regions.file and regions.auto both
 * given, a missing or unreadable file, a count that is neither nt nor nv, a token that is not
 * an integer, regions.auto larger than the tets. */
mlc_status mlc_regions_resolve(const mlc_config *cfg, const mlc_mesh *mesh,
                               const mlc_mesh_report *report, const mlc_fem *fem, mlc_regions *out,
                               mlc_err *err);

/* Regions from per-tet labels (arbitrary ints): region i is the i-th smallest label. */
mlc_status mlc_regions_from_labels(int nt, const int *tet_label, const char *source,
                                   mlc_regions *out, mlc_err *err);
/* K automatic regions: k-means (seeded) on the tets' skinning-weight features with w =
 * min(32, max(K + 1, 6)) skinning modes of the geometry (uniform material), split into
 * face-connected parts (small parts merged), as mlc_clusters_passive. The count found can
 * differ from K (a cluster in two parts becomes two regions). Labels = region indices. */
mlc_status mlc_regions_auto(const mlc_mesh *mesh, const mlc_fem *fem, int K, uint64_t seed,
                            mlc_regions *out, mlc_err *err);

/* Region of every vertex (nv, caller-allocated): the region holding the most volume among the
 * tets around it (fem NULL: the most tets); a tie goes to the smallest region index.
 * MLC_ENOMEM only. */
mlc_status mlc_regions_vertex(const mlc_regions *r, const mlc_mesh *mesh, const mlc_fem *fem,
                              int *vregion, mlc_err *err);

/* material.regions applied to the regions: per-tet μ, γ, ρ and per-vertex friction (missing
 * values: material.*, contact.friction). An entry whose label no region has is an error naming
 * the label and the labels that exist (MLC_EINVAL). With no entries: uniform, arrays NULL. */
mlc_status mlc_region_materials_build(const mlc_regions *r, const mlc_config *cfg,
                                      const mlc_mesh *mesh, const mlc_fem *fem,
                                      mlc_region_materials *out, mlc_err *err);
void mlc_region_materials_free(mlc_region_materials *m);
/* The sim.h view of it (pointers into m; all NULL when uniform). */
mlc_materials mlc_region_materials_view(const mlc_region_materials *m);

void mlc_regions_free(mlc_regions *r);

#endif
