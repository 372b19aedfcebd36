/* rollout_io.h: what the commands write for a rollout (src/job/rollout_io.c): a rollout's output
 * files, result.json and its JSON blocks, the credibility lines on stdout, the output
 * directory and the viewer page. */
#ifndef MODALLOCO_ROLLOUT_IO_H
#define MODALLOCO_ROLLOUT_IO_H

#include <stdio.h>

#include "base.h"
#include "config.h"
#include "credibility.h"
#include "pipeline.h"
#include "sim.h"

/* Write surface.obj, animation.pc2, trajectory.csv and result.json for one rollout of `act`
 * into `dir` (which must exist), fill `res`, and judge the rollout (credibility.h, with
 * parallel.threads for the replays) into `cred`, which result.json carries; with_found adds
 * optimize's "found" (mlc_credibility_found). */
mlc_status mlc_write_rollout(const mlc_pipeline *p, const mlc_config *cfg, const mlc_actuation *act,
                             const char *dir, int with_found, mlc_rollout_result *res,
                             mlc_credibility *cred, mlc_err *err);

/* The full-space rollout's own files beside a rollout's (`simulate --full-space`):
 * fullspace_trajectory.csv (trajectory.csv's columns) and fullspace.pc2 (the positions of
 * surface.obj's vertices, every output.every-th frame, as animation.pc2), so the two motions
 * play side by side in Blender or ParaView. Open before the rollout, pass mlc_full_frames_on
 * with it to mlc_judge_fullspace_watched, then commit (both files appear whole) or abort
 * (neither appears). The writer owns its buffers; mlc_full_frames_free releases them. */
typedef struct mlc_full_frames mlc_full_frames;
mlc_status mlc_full_frames_open(const mlc_pipeline *p, const mlc_config *cfg, const char *dir,
                                mlc_full_frames **out, mlc_err *err);
void mlc_full_frames_on(void *user, int frame, double time, const double *x, const double com[3],
                        const double forward[3], const double up[3], int contacts);
mlc_status mlc_full_frames_commit(mlc_full_frames *ff, mlc_err *err);
void mlc_full_frames_free(mlc_full_frames *ff); /* aborts unless committed; NULL is fine */

/* Create `dir` if needed and write config.json. If `dir` already holds a config.json of
 * another configuration and `force` is 0, fail (MLC_EINVAL) instead of overwriting a
 * different run's results. */
mlc_status mlc_prepare_out_dir(const char *dir, const mlc_config *cfg, int force, mlc_err *err);

/* Write DIR/view.html for a run directory (output.viewer), as `modalloco view DIR` does. */
mlc_status mlc_write_viewer(const char *dir, mlc_err *err);

/* Add the "credibility" object (the six keys of result.json) to the cJSON object o. */
struct cJSON;
void mlc_json_add_credibility(struct cJSON *o, const mlc_credibility *c);

/* Add the "transform" object of mesh preparation to the cJSON object o:
 * {"rotate": [[R00, R01, R02], [R10, ...], [R20, ...]], "scale": s, "translate": [tx, ty, tz]},
 * meaning x_prepared = s · R x_input + t (R by rows; the identity unless mesh.up is given), so
 * x_input = Rᵀ (x_prepared − t) / s maps results back to the input mesh. Numbers are written
 * with 17 digits, exact. */
void mlc_json_add_transform(struct cJSON *o, const mlc_transform *tf);

/* The credibility block on stdout, one "name value" line per measure (as the objective terms;
 * credible true|false). */
void mlc_print_credibility(FILE *f, const mlc_credibility *c);

#endif
