/* rollout_run.c: whole rollouts from rest, scored by the objective accumulator (objective.h),
 * for the reduced simulator (sim.h) and the full-space reference (fullspace.h), and the
 * comparison of the two.
 *
 * The simulators step and report what a frame looks like (mlc_frame_state); scoring lives
 * here, one layer above them, so both are scored by the same code and neither simulator knows
 * what J is. Each frame's state is taken exactly once and in order, because the body rotation
 * is warm-started from the previous frame's. */
#include "objective.h"

#include <math.h>
#include <string.h>

/* A rollout being scored: the accumulator, the current frame and the body's forward axis. */
typedef struct scoring {
    mlc_objective_acc acc;
    mlc_objective_settings dflt; /* the objective when the caller gives none */
    mlc_frame_state fr;          /* filled by the simulator before score_begin / score_frame */
    double fwd[3];
} scoring;

/* Start scoring at the rest frame sc->fr; obj = NULL scores with the default objective. */
static void score_begin(scoring *sc, const mlc_objective_settings *obj, const mlc_sim_settings *set,
                        double extent, const mlc_terrain *terrain, mlc_rollout_result *res) {
    if (!obj) {
        mlc_objective_settings_default(&sc->dflt);
        obj = &sc->dflt;
    }
    mlc_objective_begin(&sc->acc, obj, set->dt, sc->fr.com, sc->fr.R, res, sc->fwd);
    mlc_objective_set_body(&sc->acc, extent, set->ground);
    mlc_objective_set_terrain(&sc->acc, terrain);
}

/* Score the frame in sc->fr, the state after a step. */
static void score_frame(scoring *sc) {
    const mlc_frame_state *f = &sc->fr;
    if (sc->acc.obj->effort > 0) mlc_objective_actuation(&sc->acc, f->abar, f->m);
    mlc_objective_frame(&sc->acc, f->com, f->R, f->work, f->lowest, sc->fwd);
}

mlc_status mlc_rollout_run(mlc_rollout *ro, const mlc_actuation *act,
                           const mlc_objective_settings *obj, mlc_frame_fn frame, void *user,
                           mlc_rollout_result *res) {
    const mlc_model *mod = mlc_rollout_model(ro);
    const mlc_sim_settings *set = mlc_model_settings(mod);
    scoring sc;
    mlc_rollout_reset(ro);
    mlc_rollout_frame_state(ro, &sc.fr);
    score_begin(&sc, obj, set, mlc_model_extent(mod), mlc_model_terrain(mod), res);
    mlc_status st =
        frame ? frame(user, 0, 0.0, mlc_rollout_state(ro), sc.fr.com, sc.fwd, 0) : MLC_OK;
    int done = 0, failed = st != MLC_OK; /* a frame function's status stops the rollout */
    for (int s = 1; s <= set->steps && !failed; s++) {
        if (mlc_rollout_step(ro, act)) {
            failed = 1;
            break;
        }
        done = s;
        mlc_rollout_frame_state(ro, &sc.fr);
        score_frame(&sc);
        if (frame && (st = frame(user, s, s * set->dt, mlc_rollout_state(ro), sc.fr.com, sc.fwd,
                                 sc.fr.contacts)) != MLC_OK)
            failed = 1;
    }
    mlc_objective_end(&sc.acc, set->steps, done, failed);
    return st;
}

mlc_status mlc_fullspace_run(mlc_fullspace *fs, const mlc_actuation *act,
                             const mlc_objective_settings *obj, mlc_fullspace_frame_fn frame,
                             void *user, mlc_rollout_result *res, mlc_err *err) {
    const mlc_sim_settings *set = mlc_fullspace_settings(fs);
    const double h = set->dt;
    scoring sc;
    mlc_fullspace_reset(fs);
    mlc_fullspace_frame_state(fs, &sc.fr);
    score_begin(&sc, obj, set, mlc_fullspace_extent(fs), mlc_fullspace_terrain(fs), res);
    if (frame) frame(user, 0, 0.0, mlc_fullspace_state(fs), sc.fr.com, sc.fwd, 0);
    mlc_fullspace_notify(fs, 0, 0.0, sc.fr.com, sc.fwd);
    int s, failed = 0;
    for (s = 1; s <= set->steps; s++) {
        int rc = mlc_fullspace_step(fs, act);
        if (rc < 0)
            return mlc_fullspace_solver_status(fs) != 0
                       ? mlc_errf(err, (mlc_status)rc,
                                  "fullspace: %s at step %d (CHOLMOD status %d)",
                                  mlc_fullspace_failure(fs), s, mlc_fullspace_solver_status(fs))
                       : mlc_errf(err, (mlc_status)rc, "fullspace: %s at step %d",
                                  mlc_fullspace_failure(fs), s);
        if (rc) {
            failed = 1;
            break;
        }
        mlc_fullspace_frame_state(fs, &sc.fr);
        score_frame(&sc);
        if (frame)
            frame(user, s, s * h, mlc_fullspace_state(fs), sc.fr.com, sc.fwd, sc.fr.contacts);
        mlc_fullspace_notify(fs, s, s * h, sc.fr.com, sc.fwd);
    }
    mlc_objective_end(&sc.acc, set->steps, s - 1, failed);
    return MLC_OK;
}

/* ---- reduced versus full --------------------------------------------------------------------- */

typedef struct com_log {
    double *com; /* 3 × (cap) */
    int cap, n;
} com_log;

static mlc_status log_reduced(void *user, int frame, double time, const double *z,
                              const double com[3], const double forward[3], int contacts) {
    MLC_UNUSED(time), MLC_UNUSED(z), MLC_UNUSED(forward), MLC_UNUSED(contacts);
    com_log *lg = user;
    if (frame < lg->cap) memcpy(lg->com + 3 * (size_t)frame, com, 3 * sizeof(double));
    lg->n = MLC_MAX(lg->n, frame + 1);
    return MLC_OK;
}

static void log_full(void *user, int frame, double time, const double *x, const double com[3],
                     const double forward[3], int contacts) {
    (void)log_reduced(user, frame, time, x, com, forward, contacts);
}

mlc_status mlc_fullspace_compare(const mlc_model *model, mlc_fullspace *fs,
                                 const mlc_actuation *act, const mlc_objective_settings *obj,
                                 mlc_fullspace_comparison *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    const mlc_sim_settings *ms = mlc_model_settings(model), *fset = mlc_fullspace_settings(fs);
    if (ms->steps != fset->steps || ms->dt != fset->dt)
        return mlc_errf(err, MLC_EINVAL,
                        "fullspace: the reduced model (%d steps of %g s) and "
                        "the full-space simulator (%d of %g s) disagree",
                        ms->steps, ms->dt, fset->steps, fset->dt);
    int S = fset->steps, nv = mlc_fullspace_nv(fs);
    mlc_status st = MLC_OK;
    mlc_rollout *ro = NULL;
    com_log lr = {0}, lf = {0};
    double *xr = NULL;
    lr.cap = lf.cap = S + 1;
    lr.com = mlc_malloc(sizeof(double) * 3 * (size_t)(S + 1));
    lf.com = mlc_malloc(sizeof(double) * 3 * (size_t)(S + 1));
    xr = mlc_malloc(sizeof(double) * 3 * (size_t)nv);
    if (!lr.com || !lf.com || !xr || mlc_rollout_create(model, &ro) != MLC_OK) {
        st = mlc_errf(err, MLC_ENOMEM, "fullspace: out of memory for the comparison");
        goto done;
    }
    double t0 = mlc_now();
    if ((st = mlc_rollout_run(ro, act, obj, log_reduced, &lr, &out->reduced)) != MLC_OK) {
        mlc_errf(err, st, "fullspace: the reduced rollout failed: %s", mlc_strerror(st));
        goto done;
    }
    out->t_reduced = mlc_now() - t0;
    t0 = mlc_now();
    if ((st = mlc_fullspace_run(fs, act, obj, log_full, &lf, &out->full, err)) != MLC_OK) goto done;
    out->t_full = mlc_now() - t0;
    mlc_fullspace_convergence_get(fs, &out->convergence);
    out->frames = MLC_MIN(lr.n, lf.n);
    for (int f = 0; f < out->frames; f++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++) {
            double d = lr.com[3 * f + k] - lf.com[3 * f + k];
            d2 += d * d;
        }
        out->com_error_max = fmax(out->com_error_max, sqrt(d2));
        if (f == out->frames - 1) out->com_error_final = sqrt(d2);
    }
    /* Final shapes: B z_S against x_S (meaningful only when both rollouts ran to the end). */
    mlc_model_skin(model, mlc_rollout_state(ro), nv, NULL, xr);
    const double *xf = mlc_fullspace_state(fs);
    double sum2 = 0;
    for (int i = 0; i < nv; i++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++)
            d2 += (xr[3 * i + k] - xf[3 * i + k]) * (xr[3 * i + k] - xf[3 * i + k]);
        out->vertex_error_max = fmax(out->vertex_error_max, sqrt(d2));
        sum2 += d2;
    }
    out->vertex_error_rms = sqrt(sum2 / nv);
    out->extent = mlc_fullspace_extent(fs);
done:
    mlc_rollout_destroy(ro);
    mlc_free(lr.com);
    mlc_free(lf.com);
    mlc_free(xr);
    return st;
}
