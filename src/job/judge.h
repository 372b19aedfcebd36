/* judge.h: a gait replayed in the full-space reference (fullspace.h), the judge of whether a
 * gait found in the reduced model is real: the reduced and the full-space rollouts of the same
 * actuation side by side, and the full-space rollout judged by the same credibility measures.
 * Used by `simulate --full-space` and by `optimize` (reference.check).
 *
 * The reference takes the model's physical settings and its own stopping rule and contact from
 * the configuration (reference.*): contact on every surface vertex (reference.contact_samples
 * = 0) where the flat ground and complementarity contact allow it, else its own denser samples
 * (MLC_FULLSPACE_FALLBACK_SAMPLES; `fallback` says so), N > 0 samples placed as the reduced
 * model's, or −1 the model's own.
 *
 * Ownership: the result holds values only. Nothing here prints. */
#ifndef MODALLOCO_JUDGE_H
#define MODALLOCO_JUDGE_H

#include "base.h"
#include "config.h"
#include "credibility.h"
#include "objective.h"
#include "pipeline.h"
#include "sim.h"

typedef struct mlc_judgement {
    mlc_fullspace_comparison c; /* reduced and full rollouts, their distance, convergence */
    mlc_credibility cred;       /* of the full-space rollout (robustness: the caller's) */
    int samples;           /* contact: 0 = every surface vertex, > 0 own samples, < 0 the model's */
    int fallback;          /* 1: every surface vertex was asked but a terrain or equality
                            * contact needs samples (then samples = the fallback count) */
    int contact_vertices;  /* the vertices contact acts on */
    long columns_solved;   /* surface contact: sparse solves of columns of Q⁻¹ */
    int columns;           /* surface contact: the cache's columns at the end (it grows) */
    int columns_exhausted; /* the step failed for lack of contact columns: the count set by
                              reference.contact_columns, or by default the most that fit in
                              the memory bound's share (MLC_JUDGE_COLUMNS_MEMORY_SHARE) */
} mlc_judgement;

/* With reference.contact_columns = 0 (the default), the share of the job's memory bound
 * (--max-memory, or its default; replays side by side, reference.rerank, divide it among them)
 * the cache of surface contact columns may grow into from its first
 * MLC_FULLSPACE_CONTACT_COLUMNS: a flat body's underside may need a column per vertex. */
#define MLC_JUDGE_COLUMNS_MEMORY_SHARE 0.25

/* The reference's contact for pipeline `p` under `cfg`: 0 = every surface vertex, N > 0 its
 * own N samples, −1 the model's; *fallback = 1 when every surface vertex was asked but the
 * terrain or equality contact needs samples. */
int mlc_judge_contact_samples(const mlc_pipeline *p, const mlc_config *cfg, int *fallback);

/* Replay `act` in the full-space reference of pipeline `p` (a built model) with the settings of
 * `cfg`, and in the reduced model beside it. `reduced_cred` is the reduced rollout's judgement,
 * whose robustness the full-space one takes over (more full-space rollouts would multiply the
 * cost of the slowest part). Errors: those of the reference (MLC_ENOMEM, MLC_ENOTSPD, a CHOLMOD
 * failure); `out->columns_exhausted` then says whether more contact columns would help (the
 * message names the key or --max-memory). */
mlc_status mlc_judge_fullspace(const mlc_pipeline *p, const mlc_config *cfg,
                               const mlc_actuation *act, const mlc_credibility *reduced_cred,
                               mlc_judgement *out, mlc_err *err);

/* Called for frame 0 (rest) and after every step of the full-space rollout with the full
 * positions x (3×nv, mesh vertex order), the centre of mass, the forward axis, the body's up
 * axis R(t)ŷ (the row trajectory.csv writes) and the number of vertices in contact. */
typedef void (*mlc_judge_frame_fn)(void *user, int frame, double time, const double *x,
                                   const double com[3], const double forward[3], const double up[3],
                                   int contacts);

/* mlc_judge_fullspace that also calls `fn` (NULL: nobody) for every full-space frame. */
mlc_status mlc_judge_fullspace_watched(const mlc_pipeline *p, const mlc_config *cfg,
                                       const mlc_actuation *act,
                                       const mlc_credibility *reduced_cred, mlc_judge_frame_fn fn,
                                       void *user, mlc_judgement *out, mlc_err *err);

/* The share of the reduced travel the full-space rollout kept: full displacement / reduced
 * displacement (negative: it went the other way; 0 when the reduced one did not move). */
double mlc_judgement_transfer(const mlc_judgement *j);

/* The share of the reduced J the full-space rollout kept: full-space J / reduced J while the
 * reduced J gains (is negative), else 1 (nothing to keep). A locomotion J is the travel times
 * the heading term (objective.h), so a gait that keeps its travel but turns from the walking
 * direction in full space keeps little of its J. */
double mlc_judgement_J_share(const mlc_judgement *j);

/* What a gait of objective `kind` kept in the full-space reference: for locomotion the lesser
 * of its travel's share and its J's (both are what the user asked for: going that far, that
 * way); for a task its travel's share (its J measures a heading, a target, a height, which the
 * validation ranks by itself). */
double mlc_judgement_kept(const mlc_judgement *j, mlc_objective_kind kind);

/* A gait holds in the full-space reference when it stays credible there and keeps at least this
 * share (mlc_judgement_kept: of its reduced travel, the same way, and for locomotion of its J)
 * (docs/method.md, "One recipe for any body"). */
#define MLC_JUDGE_HOLD_SHARE 0.5

#endif
