/* subspace_internal.h: what the precompute (subspace.c) gives the cache reader
 * (subspace_cache.c). Private to src/subspace. */
#ifndef MODALLOCO_SUBSPACE_INTERNAL_H
#define MODALLOCO_SUBSPACE_INTERNAL_H

#include "subspace.h"

/* The clusters of `settings` (its seed) in place of s's: what mlc_subspace_compute would give
 * with the same eigenmodes, bit for bit (the clustering reads only W, skin_eval, the mesh and the
 * FEM data). Sets cluster_seed. */
mlc_status mlc_subspace_recluster(const mlc_mesh *mesh, const mlc_fem *fem,
                                  const mlc_subspace_settings *settings, mlc_subspace *s,
                                  mlc_err *err);

#endif
