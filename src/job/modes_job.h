/* modes_job.h: what `modalloco modes` computes and writes (docs/method.md §3–5): the subspaces
 * of the configuration's body, and in output.dir modes.json, surface.obj, a surface cache
 * oscillating in each vibration mode (mode_I.pc2), vertex-coloured PLYs of the skinning
 * weights, cluster labels and regions, and subspace.vtk. Prints nothing. */
#ifndef MODALLOCO_MODES_JOB_H
#define MODALLOCO_MODES_JOB_H

#include "base.h"
#include "config.h"
#include "pipeline.h"

/* Fill *p (zeroed by the caller; mlc_pipeline_free it whatever the outcome) with the mesh, the
 * FEM operators and the subspaces of `cfg`, and write the files into cfg->output.dir (created;
 * a config.json of another run there is refused unless `force`). */
mlc_status mlc_modes_job(mlc_pipeline *p, const mlc_config *cfg, int force, mlc_err *err);

#endif
