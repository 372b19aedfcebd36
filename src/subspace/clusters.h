/* clusters.h: passive/actuation clusters (docs/method.md §5; seed 002 Alg. 1) and contact samples
 * (docs/method.md §6). Deterministic for a given seed. */
#ifndef MODALLOCO_CLUSTERS_H
#define MODALLOCO_CLUSTERS_H

#include "base.h"
#include "fem.h"
#include "mesh.h"

/* Passive clusters: k-means++ (seeded) on per-tet averages of the non-constant skinning
 * weights (columns 1..w-1 of W, nv×w column-major) scaled by eval[b]^-2 (eval = skinning
 * eigenvalues, w), then every cluster split into face-connected components, and components
 * smaller than 1% of their k-means cluster merged into the face-adjacent cluster sharing the
 * most faces. Writes label[nt] in [0, *ncluster), numbered in order of first tet, none empty.
 * With w == 1 (no features) or k == 1 every tet is in cluster 0. k is clamped to nt. */
mlc_status mlc_clusters_passive(const mlc_mesh *mesh, const mlc_fem *fem, const double *W, int w,
                                const double *eval, int k, uint64_t seed, int *label, int *ncluster,
                                mlc_err *err);

/* The clustering step of mlc_clusters_passive on any per-tet features: P holds d values per tet
 * (row e at P + e*d, all finite); k-means++ seeded from `seed`, Lloyd iterations, the split into
 * face-connected parts and the merge of small parts, as above. Requires d >= 1, k >= 1. */
mlc_status mlc_clusters_of_features(const mlc_mesh *mesh, const mlc_fem *fem, const double *P,
                                    int d, int k, uint64_t seed, int *label, int *ncluster,
                                    mlc_err *err);

/* nbr[4e + f] = the tet across face f of tet e (the face opposite its vertex f), -1 on the
 * boundary. */
mlc_status mlc_clusters_face_neighbors(const mlc_mesh *mesh, int *nbr, mlc_err *err);

/* The last steps of mlc_clusters_of_features on labels km[nt] in [0, k): split every label
 * into face-connected parts, merge the small parts (nbr from mlc_clusters_face_neighbors) and
 * number the result in order of first tet into label[nt]. */
mlc_status mlc_clusters_connect(const mlc_mesh *mesh, const mlc_fem *fem, const int *nbr, int k,
                                const int *km, int *label, int *ncluster, mlc_err *err);

/* Contact samples: farthest-point sampling (Euclidean) over boundary vertices, starting from
 * the lowest vertex (min y; ties by smallest index). With band > 0 the sampling runs in three
 * stages that continue one distance field, in which a height difference counts
 * MLC_CONTACT_HEIGHT_WEIGHT times (a sample holds up what is beside it, not what is below it): half
 * of the samples (MLC_CONTACT_BAND_SHARE) go to the soles, the boundary vertices at most band ×
 * extent (largest bounding-box side) above the lowest one; a quarter (MLC_CONTACT_BAND_SHARE_WIDE)
 * to the surface that faces down (area-weighted vertex normal with n_y < −1/2: where a body tilted
 * by up to 60°, the credible range, can touch the ground); the rest to the whole surface, where
 * they fill what the first stages left far away. A stage with fewer vertices than its share takes
 * them all. band = 0 is plain farthest-point sampling. Writes min(count, #boundary vertices) vertex
 * indices into samples[] and their number into *nsamples. */
#define MLC_CONTACT_BAND_SHARE 0.5
#define MLC_CONTACT_HEIGHT_WEIGHT 3.0 /* band > 0: distances weigh height differences 3× */
#define MLC_CONTACT_BAND_SHARE_WIDE 0.25
mlc_status mlc_contact_samples(const mlc_mesh *mesh, int count, double band, int *samples,
                               int *nsamples, mlc_err *err);

/* The same with a cover of the surface that can reach the ground (band > 0 and spacing > 0):
 * after the first two stages, samples are added to the soles and the surface facing down (the
 * vertices stages 1 and 2 choose from) until every one of those vertices lies within spacing ×
 * extent of a sample in the height-weighted distance above, or max_count samples are taken;
 * then the last quarter of count goes to the whole surface as before. So a thin part that can
 * touch the ground (a toe pad, a fingertip, a tail tip) always has a sample near it, however
 * many it takes, and a vertex within the spacing of a sample lies at most spacing / 3 × extent
 * below it at rest (the height counts three times). samples[] must hold max(count, max_count)
 * indices; *covered receives the spacing reached, × extent (the largest weighted distance from
 * a vertex of the cover's surface to its nearest sample; NULL: not wanted). spacing = 0 is
 * mlc_contact_samples exactly. */
mlc_status mlc_contact_samples_cover(const mlc_mesh *mesh, int count, double band, double spacing,
                                     int max_count, int *samples, int *nsamples, double *covered,
                                     mlc_err *err);

#endif
