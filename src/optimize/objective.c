/* objective.c: the objective terms of a rollout (docs/method.md §7), shared by the reduced and
 * the full-space simulators. Allocation-free: it runs inside every rollout (the waypoint
 * reader at the end runs once, before any rollout). */
#include "objective.h"

#include "credibility.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"

void mlc_objective_settings_default(mlc_objective_settings *o) {
    memset(o, 0, sizeof *o);
    o->direction[0] = 1;
    o->forward[0] = 1;
    o->align = 1;
    o->credible_gate = 1;
}

static void normalize3(const double in[3], double out[3]) {
    double n = sqrt(in[0] * in[0] + in[1] * in[1] + in[2] * in[2]);
    if (!(n > 0) || !isfinite(n)) {
        out[0] = 1, out[1] = out[2] = 0;
        return;
    }
    for (int k = 0; k < 3; k++)
        out[k] = in[k] / n;
}

/* The registry of kinds (objective.h). Turn, roll and flip measure an angle, the others a
 * distance in extents. */
const mlc_objective_kind_info mlc_objective_kinds[] = {
    {"locomotion", MLC_OBJ_LOCOMOTION, NULL, 0, "", MLC_CRED_RISE_MAX, MLC_CRED_AIRBORNE_MAX, 0, 1,
     "extents"},
    /* Leaving the ground is the task: no rise or airborne limit. */
    {"jump", MLC_OBJ_JUMP, "target", 0, "", INFINITY, INFINITY, 0, 1, "extents"},
    {"turn", MLC_OBJ_TURN, "heading", 0, "", MLC_CRED_RISE_MAX, MLC_CRED_AIRBORNE_MAX, 0, 1, "rad"},
    {"target", MLC_OBJ_TARGET, "target", 1, " = [x,y,z], where the centre of mass should end",
     MLC_CRED_RISE_MAX, MLC_CRED_AIRBORNE_MAX, 0, 1, "extents"},
    {"path", MLC_OBJ_PATH, "path", 1, ": a CSV file time,x,y,z with a header line",
     MLC_CRED_RISE_MAX, MLC_CRED_AIRBORNE_MAX, 0, 1, "extents"},
    /* Turning over is the task: up_min does not apply. */
    {"roll", MLC_OBJ_ROLL, NULL, 0, "", MLC_CRED_RISE_MAX, MLC_CRED_AIRBORNE_MAX, 0, 0, "rad"},
    /* It must leave the ground, and a flight of more than 60% of the rollout is not a flip from
     * the ground. */
    {"flip", MLC_OBJ_FLIP, NULL, 0, "", MLC_CRED_FLIP_RISE_MAX, MLC_CRED_FLIP_AIRBORNE_MAX,
     MLC_CRED_FLIP_AIRBORNE_MIN, 0, "rad"},
};
const int mlc_objective_nkinds = (int)(sizeof mlc_objective_kinds / sizeof mlc_objective_kinds[0]);

const mlc_objective_kind_info *mlc_objective_kind_info_of(int kind) {
    return kind >= 0 && kind < mlc_objective_nkinds ? &mlc_objective_kinds[kind] : NULL;
}

const mlc_objective_kind_info *mlc_objective_kind_find(const char *name) {
    for (int i = 0; name && i < mlc_objective_nkinds; i++)
        if (!strcmp(name, mlc_objective_kinds[i].name)) return &mlc_objective_kinds[i];
    return NULL;
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

/* Signed angle from the heading ĥ to the body's forward axis on the ground (radians, about
 * +y); 0 when the forward axis points straight up or down. */
static double heading_error(const mlc_objective_acc *acc, const double fwd[3]) {
    double fx = fwd[0], fz = fwd[2];
    if (!(fx * fx + fz * fz > 0)) return 0;
    const double *hd = acc->hd;
    /* (ĥ × f)·ŷ = h_z f_x − h_x f_z */
    return mlc_atan2(hd[2] * fx - hd[0] * fz, hd[0] * fx + hd[2] * fz);
}

/* Centre-of-mass waypoint at time t: linear between the waypoints around t, the first or last
 * one outside their span. *cursor (a waypoint index) only moves forward as t grows. */
static void path_point(const mlc_objective_settings *o, double t, int *cursor, double p[3]) {
    const double *w = o->path;
    const int n = o->npath;
    if (t <= w[0] || n == 1) {
        memcpy(p, w + 1, 3 * sizeof(double));
        return;
    }
    if (t >= w[4 * (n - 1)]) {
        memcpy(p, w + 4 * (n - 1) + 1, 3 * sizeof(double));
        return;
    }
    int i = *cursor;
    while (i + 1 < n - 1 && w[4 * (i + 1)] <= t)
        i++;
    *cursor = i;
    const double *a = w + 4 * i, *b = w + 4 * (i + 1);
    double s = (t - a[0]) / (b[0] - a[0]);
    for (int k = 0; k < 3; k++)
        p[k] = a[k + 1] + s * (b[k + 1] - a[k + 1]);
}

static double dist3(const double a[3], const double b[3]) {
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The per-frame task terms of the new kinds (path distances, vibration), frame index f. */
static void task_frame(mlc_objective_acc *acc, const double com[3]) {
    const mlc_objective_settings *o = acc->obj;
    if (o->kind == MLC_OBJ_PATH && o->npath > 0) {
        double p[3];
        path_point(o, acc->frames * acc->dt, &acc->path_cursor, p);
        acc->path_sum += dist3(com, p);
        acc->path_rest += dist3(acc->res->com0, p);
    }
    if (o->vibration > 0) {
        if (acc->frames >= 2) {
            double s = 0;
            for (int k = 0; k < 3; k++) {
                double d2 = com[k] - 2 * acc->c_prev[k] + acc->c_prev2[k];
                s += d2 * d2;
            }
            acc->vib_sum += s;
            acc->vib_n++;
        }
        memcpy(acc->c_prev2, acc->c_prev, sizeof acc->c_prev);
        memcpy(acc->c_prev, com, sizeof acc->c_prev);
    }
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
    /* Lateral axis l = v̂ × ŷ = (−v_z, 0, v_x), and the heading on the ground. */
    double lat[3] = {-acc->v[2], 0, acc->v[0]};
    if (!(lat[0] * lat[0] + lat[2] * lat[2] > 0)) lat[2] = 1;
    normalize3(lat, acc->lat);
    double hd[3] = {obj->heading[0], 0, obj->heading[2]};
    normalize3(hd, acc->hd);
    memcpy(res->com0, com0, sizeof res->com0);
    memcpy(res->com1, com0, sizeof res->com1);
    memcpy(acc->R_prev, R0, sizeof acc->R_prev);
    acc->align = frame_alignment(acc, R0, fwd);
    acc->align_sum = fmax(0.0, acc->align);
    acc->up_min = R0[4];
    acc->heading0 = heading_error(acc, fwd);
    acc->heading1 = acc->heading0;
    memcpy(acc->c_prev, com0, sizeof acc->c_prev);
    task_frame(acc, com0);
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

/* The gate's fade-out measured without its clamp: 0 up to 60% of the limit, 1 at the limit,
 * growing on past it, so that among gaits the gate zeroes the nearer ones rank better. */
static double gate_excess(double x, double limit) {
    return fmax(0.0, (x - 0.6 * limit) / (0.4 * limit));
}

/* Rotation from R_prev to R about the lateral axis: the rotation vector of ΔR = R R_prevᵀ
 * (world frame), projected on l. */
static double lateral_increment(const mlc_objective_acc *acc, const double R[9]) {
    const double *P = acc->R_prev;
    double D[9]; /* row-major ΔR_ab = Σ_j R_aj P_bj */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            D[3 * a + b] = R[a] * P[b] + R[a + 3] * P[b + 3] + R[a + 6] * P[b + 6];
    double w[3] = {0.5 * (D[7] - D[5]), 0.5 * (D[2] - D[6]), 0.5 * (D[3] - D[1])};
    double s = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    double c = 0.5 * (D[0] + D[4] + D[8] - 1);
    double f = s > 1e-300 ? mlc_atan2(s, c) / s : 1.0;
    return f * (w[0] * acc->lat[0] + w[1] * acc->lat[1] + w[2] * acc->lat[2]);
}

void mlc_objective_frame(mlc_objective_acc *acc, const double com[3], const double R[9],
                         double step_work, double lowest, double fwd[3]) {
    /* Eq. 18 integrates the power over time: each step's work counts with the weight h, so
     * α means the same thing whatever the time step. */
    acc->work += acc->dt * (acc->obj->work_abs ? fabs(step_work) : step_work);
    double a = frame_alignment(acc, R, fwd);
    acc->align = fmin(acc->align, a);
    acc->align_sum += fmax(0.0, a);
    task_frame(acc, com);
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
    int air = lowest - acc->ground > MLC_CRED_CLEARANCE * acc->extent;
    if (air) acc->airborne_frames++;
    acc->up_min = fmin(acc->up_min, R[4]);
    acc->heading1 = heading_error(acc, fwd);
    double dth = lateral_increment(acc, R);
    acc->roll += dth;
    if (air) acc->flip += dth;
    memcpy(acc->R_prev, R, sizeof acc->R_prev);
    memcpy(acc->res->com1, com, sizeof acc->res->com1);
}

void mlc_objective_actuation(mlc_objective_acc *acc, const double *abar, int m) {
    const double *amax = acc->obj->a_max;
    double s = 0;
    for (int i = 0; i < m; i++) {
        double q = i < MLC_OBJ_MAX_MODES && amax[i] > 0 ? abar[i] / amax[i] : abar[i];
        s += q * q;
    }
    acc->effort += acc->dt * s;
}

/* The task term of the kinds beyond locomotion and jump (docs/method.md §7); also sets
 * task_error. e is the extent (1 when unknown). */
static double task_term(mlc_objective_acc *acc, double e) {
    const mlc_objective_settings *obj = acc->obj;
    mlc_rollout_result *res = acc->res;
    double up = obj->upright ? fmax(0.0, acc->up_min) : 1.0;
    switch (obj->kind) {
    case MLC_OBJ_TURN:
        res->task_error = fabs(acc->heading1);
        res->J_align = up;
        return 0.5 * (mlc_cos(acc->heading0) - mlc_cos(acc->heading1)) * up;
    case MLC_OBJ_TARGET: {
        double d1 = dist3(res->com1, obj->target), d0 = dist3(res->com0, obj->target);
        res->task_error = d1 / e;
        res->J_align = up;
        return (d1 - d0) / e * up;
    }
    case MLC_OBJ_PATH: {
        double n = acc->frames;
        res->task_error = acc->path_sum / (n * e);
        res->J_align = up;
        return (acc->path_sum - acc->path_rest) / (n * e) * up;
    }
    case MLC_OBJ_ROLL:
        res->task_error = acc->roll;
        res->J_align = 1;
        return acc->roll / (2 * M_PI) - res->displacement / (M_PI * e);
    case MLC_OBJ_FLIP:
        res->task_error = acc->flip;
        res->J_align = 1;
        return acc->flip / (2 * M_PI);
    default:
        return 0;
    }
}

void mlc_objective_end(mlc_objective_acc *acc, int steps, int done, int failed) {
    const mlc_objective_settings *obj = acc->obj;
    mlc_rollout_result *res = acc->res;
    res->steps_done = done;
    res->failed = failed;
    res->align_min = acc->align;
    res->roll_angle = acc->roll;
    res->flip_angle = acc->flip;
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
    const int kind = obj->kind;
    const double e = acc->extent > 0 ? acc->extent : 1.0;
    double J;
    if (kind == MLC_OBJ_JUMP) {
        J = -res->height_gain * res->J_align;
        if (obj->target_set) {
            /* Jump to a target: the jump term plus the target term. */
            double d1 = dist3(res->com1, obj->target), d0 = dist3(res->com0, obj->target);
            res->task_error = d1 / e;
            J += (d1 - d0) / e;
        }
    } else if (kind == MLC_OBJ_LOCOMOTION) {
        /* With whole_losses J_align fades a gain only and a backward travel (J_disp > 0)
         * stays a whole loss: scaled down, it lets a body whose first gaits go backward cut
         * its loss by turning away or tumbling (J 0), a plateau CMA-ES may not leave. */
        J = res->J_disp > 0 && obj->whole_losses ? res->J_disp : res->J_disp * res->J_align;
    } else {
        J = task_term(acc, e);
    }
    res->J_task = J;
    res->J_gate = 1;
    res->gate_excess = 0;
    if (acc->extent > 0 && kind != MLC_OBJ_JUMP && kind != MLC_OBJ_FLIP && obj->credible_gate) {
        /* Leaps and flights do not pay: the gain fades out as the rise or the airborne share
         * approaches the credibility limits (from 60% of each to the limit). */
        double rise = acc->rise / acc->extent;
        double air = acc->frames > 1 ? (double)acc->airborne_frames / (acc->frames - 1) : 0;
        res->J_gate = gate(rise, MLC_CRED_RISE_MAX) * gate(air, MLC_CRED_AIRBORNE_MAX);
        res->gate_excess =
            gate_excess(rise, MLC_CRED_RISE_MAX) + gate_excess(air, MLC_CRED_AIRBORNE_MAX);
        if (obj->upright && kind != MLC_OBJ_ROLL) {
            /* Nor does a tilt past the credible one: the tilt 1 − up_min fades the gain out
             * from 60% of its limit 1 − MLC_CRED_UP_MIN (up_min 0.7) to the limit (0.5).
             * J_align's factor up_min alone lets a long stride on its side pay. */
            const double tilt = 1.0 - acc->up_min, tilt_max = 1.0 - MLC_CRED_UP_MIN;
            res->J_gate *= gate(tilt, tilt_max);
            res->gate_excess += gate_excess(tilt, tilt_max);
        }
        /* So does the gate then: a leap does not turn a backward travel into J 0 either. */
        if (J <= 0 || kind != MLC_OBJ_LOCOMOTION || !obj->whole_losses) J *= res->J_gate;
    }
    res->J = J + res->J_work;
    /* The penalties, only when asked for (a weight of 0 leaves J's bits alone). */
    if (obj->effort > 0) {
        res->J_effort = obj->effort * acc->effort / (steps * acc->dt);
        res->J += res->J_effort;
    }
    if (obj->vibration > 0) {
        double h2 = acc->dt * acc->dt;
        res->J_vibration =
            acc->vib_n > 0 ? obj->vibration * acc->vib_sum / (acc->vib_n * h2 * h2 * e * e) : 0;
        res->J += res->J_vibration;
    }
    if (!isfinite(res->J)) {
        res->failed = 1;
        res->J = MLC_SIM_FAIL_PENALTY;
    }
}

/* ---- Waypoints of objective.path ------------------------------------------------------- */
mlc_status mlc_objective_path_read(const char *file, double **out, int *n, mlc_err *err) {
    *out = NULL;
    *n = 0;
    char *text = NULL;
    size_t size = 0;
    if (!file[0])
        return mlc_errf(err, MLC_EINVAL,
                        "objective.path is empty; give a CSV file time,x,y,z with a header line");
    mlc_err e2;
    if (mlc_file_read_all(file, (size_t)64 << 20, "use fewer waypoints", &text, &size, &e2) !=
        MLC_OK)
        return mlc_errf(err, MLC_EINVAL, "objective.path: %s (give a CSV file time,x,y,z)", e2.msg);
    int cap = 0, count = 0, line = 0;
    double *w = NULL;
    mlc_status s = MLC_OK;
    char *p = text;
    while (*p) {
        char *eol = strchr(p, '\n');
        if (eol) *eol = 0;
        line++;
        size_t len = strlen(p);
        if (len && p[len - 1] == '\r') p[len - 1] = 0;
        char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (line == 1) {
            if (strncmp(q, "time", 4) != 0) {
                s = mlc_errf(err, MLC_EINVAL,
                             "%s:1: expected the header line time,x,y,z, got '%.40s'", file, q);
                goto done;
            }
        } else if (*q) {
            double v[4];
            char *c = q;
            for (int k = 0; k < 4; k++) {
                char *end;
                errno = 0;
                v[k] = strtod(c, &end);
                while (*end == ' ' || *end == '\t')
                    end++;
                if (end == c || !isfinite(v[k]) || (k < 3 ? *end != ',' : *end != 0)) {
                    s = mlc_errf(err, MLC_EINVAL,
                                 "%s:%d: malformed waypoint '%.60s'; expected four numbers "
                                 "time,x,y,z",
                                 file, line, q);
                    goto done;
                }
                c = end + (k < 3);
            }
            if (count > 0 && !(v[0] > w[4 * (count - 1)])) {
                s = mlc_errf(err, MLC_EINVAL,
                             "%s:%d: time %g is not after the previous waypoint's %g; sort the "
                             "waypoints by increasing time",
                             file, line, v[0], w[4 * (count - 1)]);
                goto done;
            }
            if (count == cap) {
                cap = cap ? 2 * cap : 64;
                double *nw = mlc_realloc(w, 4 * (size_t)cap * sizeof(double));
                if (!nw) {
                    s = mlc_errf(err, MLC_ENOMEM, "out of memory reading %s", file);
                    goto done;
                }
                w = nw;
            }
            memcpy(w + 4 * count, v, sizeof v);
            count++;
        }
        if (!eol) break;
        p = eol + 1;
    }
    if (count == 0) {
        s = mlc_errf(err, MLC_EINVAL, "%s: no waypoints after the header line time,x,y,z", file);
        goto done;
    }
    *out = w;
    *n = count;
    w = NULL;
done:
    mlc_free(w);
    mlc_free(text);
    return s;
}
