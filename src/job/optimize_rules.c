/* optimize_rules.c: whether a further search follows a search (optimize_job.h). The
 * dry run names the searches that may follow, the finish says which will, and the job runs
 * them (optimize_refine.c); all three ask here, so they cannot disagree. */
#include "internal/optimize_job.h"

/* Locomotion only: the share of travel kept is its measure of holding; a task's J measures
 * other things (a heading, a target, a height), and the validation already ranks its
 * candidates by their full-space J. */
int mlc_optimize_refine_wanted(const mlc_config *cfg, double share, int credible_full) {
    const double t = cfg->reference.refine;
    return t > 0 && cfg->objective.kind == MLC_OBJ_LOCOMOTION &&
           cfg->subspace.skinning_modes < MLC_REFINE_SKINNING_MAX &&
           (!(share >= t) || !credible_full);
}

/* The whole-losses retry: a locomotion search that ends without a gain, its best gait going
 * backward, with the key still off (docs/method.md, "A search that ends on the plateau runs
 * once more with whole losses"). */
int mlc_optimize_retry_wanted(const mlc_config *cfg, double J, double displacement) {
    return cfg->objective.kind == MLC_OBJ_LOCOMOTION && !cfg->objective.whole_losses && !(J < 0) &&
           displacement < 0;
}
