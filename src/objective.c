/* objective.c: the objective terms of a rollout (docs/method.md §7), shared by the reduced and
 * the full-space simulators. Allocation-free: it runs inside every rollout. */
#include "modalloco/objective.h"

#include "modalloco/credibility.h"

#include <math.h>
#include <string.h>

static void normalize3(const double in[3], double out[3]) {
    double n = sqrt(in[0] * in[0] + in[1] * in[1] + in[2] * in[2]);
    if (!(n > 0) || !isfinite(n)) {
        out[0] = 1, out[1] = out[2] = 0;
        return;
    }
    for (int k = 0; k < 3; k++)
        out[k] = in[k] / n;
}

/* Alignment of one frame; also hands back R û₀ for the caller's frame callback. */
static double frame_alignment(const mlc_objective_acc *acc, const double R[9], double fwd[3]) {
    const double *u0 = acc->u0, *v = acc->v;
    for (int k = 0; k < 3; k++)
        fwd[k] = R[k] * u0[0] + R[k + 3] * u0[1] + R[k + 6] * u0[2];
    double a = fwd[0] * v[0] + fwd[1] * v[1] + fwd[2] * v[2];
    /* (R ŷ)·ŷ is R_11: how far the body's up axis still points up. */
    return acc->obj->upright ? fmin(a, R[4]) : a;
}

void mlc_objective_begin(mlc_objective_acc *acc, const mlc_objective_settings *obj, double dt,
                         const double com0[3], const double R0[9], mlc_rollout_result *res,
                         double fwd[3]) {
    memset(acc, 0, sizeof *acc);
    memset(res, 0, sizeof *res);
    acc->obj = obj;
    acc->dt = dt;
    acc->res = res;
    normalize3(obj->direction, acc->v);
    normalize3(obj->forward, acc->u0);
    memcpy(res->com0, com0, sizeof res->com0);
    memcpy(res->com1, com0, sizeof res->com1);
    acc->align = frame_alignment(acc, R0, fwd);
    acc->align_sum = fmax(0.0, acc->align);
    acc->frames = 1;
    acc->extent = 0; /* no body scale: no credibility gate until mlc_objective_set_body */
}

void mlc_objective_set_body(mlc_objective_acc *acc, double extent, double ground) {
    acc->extent = extent;
    acc->ground = ground;
}

void mlc_objective_set_terrain(mlc_objective_acc *acc, const mlc_terrain *terrain) {
    acc->terrain = terrain && !terrain->flat ? terrain : NULL;
}

/* 1 up to 60% of the limit, falling linearly to 0 at the limit. */
static double gate(double x, double limit) {
    return fmin(1.0, fmax(0.0, (limit - x) / (0.4 * limit)));
}

void mlc_objective_frame(mlc_objective_acc *acc, const double com[3], const double R[9],
                         double step_work, double lowest, double fwd[3]) {
    /* Eq. 18 integrates the power over time: each step's work counts with the weight h, so
     * α means the same thing whatever the time step. */
    acc->work += acc->dt * (acc->obj->work_abs ? fabs(step_work) : step_work);
    double a = frame_alignment(acc, R, fwd);
    acc->align = fmin(acc->align, a);
    acc->align_sum += fmax(0.0, a);
    acc->frames++;
    acc->ysum += com[1];
    if (acc->terrain) {
        const double *c0 = acc->res->com0;
        double above = com[1] - mlc_terrain_height(acc->terrain, com[0], com[2]),
               above0 = c0[1] - mlc_terrain_height(acc->terrain, c0[0], c0[2]);
        acc->rise = fmax(acc->rise, above - above0);
    } else {
        acc->rise = fmax(acc->rise, com[1] - acc->res->com0[1]);
    }
    if (lowest - acc->ground > MLC_CRED_CLEARANCE * acc->extent) acc->airborne_frames++;
    memcpy(acc->res->com1, com, sizeof acc->res->com1);
}

void mlc_objective_end(mlc_objective_acc *acc, int steps, int done, int failed) {
    const mlc_objective_settings *obj = acc->obj;
    mlc_rollout_result *res = acc->res;
    res->steps_done = done;
    res->failed = failed;
    res->align_min = acc->align;
    if (failed) {
        res->J = MLC_SIM_FAIL_PENALTY;
        return;
    }
    double disp = 0;
    for (int k = 0; k < 3; k++)
        disp += (res->com1[k] - res->com0[k]) * acc->v[k];
    res->displacement = disp;
    res->J_disp = -disp;
    double align = obj->align_mean ? acc->align_sum / acc->frames : fmax(0.0, acc->align);
    res->J_align = obj->align ? align : 1.0;
    res->height_gain = (steps > 0 ? acc->ysum / steps : res->com0[1]) - res->com0[1];
    res->J_work = obj->work_penalty * acc->work;
    double J = obj->jump ? -res->height_gain * res->J_align : res->J_disp * res->J_align;
    res->J_gate = 1;
    if (acc->extent > 0 && !obj->jump && obj->credible_gate) {
        /* Leaps and flights do not pay: the gain fades out as the rise or the airborne share
         * approaches the credibility limits (from 60% of each to the limit). */
        double rise = acc->rise / acc->extent;
        double air = acc->frames > 1 ? (double)acc->airborne_frames / (acc->frames - 1) : 0;
        res->J_gate = gate(rise, MLC_CRED_RISE_MAX) * gate(air, MLC_CRED_AIRBORNE_MAX);
        J *= res->J_gate;
    }
    res->J = J + res->J_work;
    if (!isfinite(res->J)) {
        res->failed = 1;
        res->J = MLC_SIM_FAIL_PENALTY;
    }
}
