/* credibility.c: the credibility block of result.json (credibility.h). */
#include "credibility.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "perturb.h"

/* Surface vertices per group of the lowest-vertex search (at most; a group is a box of the
 * rest shape split until it holds this many). */
#define CRED_GROUP 32

struct mlc_cred_meter {
    const mlc_model *model;
    int nsv;
    int *sv;     /* boundary vertices (owned) */
    double *xyz; /* 3×nsv skinned positions (owned scratch) */
    double extent, ground;
    /* The lowest-vertex search (flat ground): the surface in ng groups of nearby vertices,
     * group g = gv[gs[g] .. gs[g+1]) (a permutation of sv), each with a centre row gc and a
     * slack row ge (n4 = 4w values each, by group) such that every vertex i of the group has
     * φ_i = gc ± (ge's part without margin) componentwise (mlc_model_skin_row): its y under t_y
     * is at least gc·t_y − ge·|t_y|, rounding of both sides included. */
    int n4, ng, exhaustive;
    int *gs, *gv;
    double *gc, *ge, *gl; /* ng×n4, ng×n4, ng lower bounds of the current frame (scratch) */
    long skinned;         /* vertices skinned since the last reset */
    /* accumulators */
    int frames, after0, airborne;
    double com_y0, rise, depth, up_min;
};

/* Split the surface vertices v[lo..hi) (rest positions X) into boxes of at most CRED_GROUP:
 * halve the longest side of the bounding box (by count when every vertex falls on one side),
 * recording each group's start in gs. Only the speed of the search depends on the grouping. */
static void split_groups(const double *X, int *v, int lo, int hi, int *gs, int *ng) {
    if (hi - lo <= CRED_GROUP) {
        gs[(*ng)++] = lo;
        return;
    }
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = lo; i < hi; i++)
        for (int k = 0; k < 3; k++)
            mn[k] = fmin(mn[k], X[3 * v[i] + k]), mx[k] = fmax(mx[k], X[3 * v[i] + k]);
    int ax = 0;
    for (int k = 1; k < 3; k++)
        if (mx[k] - mn[k] > mx[ax] - mn[ax]) ax = k;
    double mid = 0.5 * (mn[ax] + mx[ax]);
    int i = lo, j = hi - 1;
    while (i <= j) {
        if (X[3 * v[i] + ax] < mid) {
            i++;
        } else {
            int t = v[i];
            v[i] = v[j], v[j--] = t;
        }
    }
    if (i == lo || i == hi) i = lo + (hi - lo) / 2;
    split_groups(X, v, lo, i, gs, ng);
    split_groups(X, v, i, hi, gs, ng);
}

/* Centre and slack rows of every group. With δ the half-range of φ over the group, every φ_i
 * is within δ of the centre c, so t·φ_i ≥ t·c − δ·|t|; the margin 1e-9 (|c| + δ) per entry
 * covers the rounding of the skinned value and of the bound (a few ε of the same sums). */
static mlc_status build_groups(mlc_cred_meter *m, const mlc_mesh *mesh) {
    const int n4 = m->n4 = mlc_model_dim(m->model) / 3;
    m->gs = mlc_malloc(sizeof(int) * (size_t)(m->nsv + 1));
    m->gv = mlc_malloc(sizeof(int) * (size_t)(m->nsv ? m->nsv : 1));
    double *phi = mlc_malloc(sizeof(double) * 3 * (size_t)n4);
    if (!m->gs || !m->gv || !phi) goto oom;
    memcpy(m->gv, m->sv, sizeof(int) * (size_t)m->nsv);
    m->ng = 0;
    if (m->nsv > 0) split_groups(mesh->X, m->gv, 0, m->nsv, m->gs, &m->ng);
    m->gs[m->ng] = m->nsv;
    size_t sz = (size_t)(m->ng ? m->ng : 1) * (size_t)n4;
    m->gc = mlc_malloc(sizeof(double) * sz);
    m->ge = mlc_malloc(sizeof(double) * sz);
    m->gl = mlc_malloc(sizeof(double) * (size_t)(m->ng ? m->ng : 1));
    if (!m->gc || !m->ge || !m->gl) goto oom;
    double *lo = phi + n4, *hi = phi + 2 * n4;
    for (int g = 0; g < m->ng; g++) {
        for (int j = 0; j < n4; j++)
            lo[j] = INFINITY, hi[j] = -INFINITY;
        for (int a = m->gs[g]; a < m->gs[g + 1]; a++) {
            mlc_model_skin_row(m->model, m->gv[a], phi);
            for (int j = 0; j < n4; j++)
                lo[j] = fmin(lo[j], phi[j]), hi[j] = fmax(hi[j], phi[j]);
        }
        double *c = m->gc + (size_t)g * n4, *e = m->ge + (size_t)g * n4;
        for (int j = 0; j < n4; j++) {
            c[j] = 0.5 * (lo[j] + hi[j]);
            double d = fmax(hi[j] - c[j], c[j] - lo[j]);
            e[j] = d + 1e-9 * (fabs(c[j]) + d);
        }
    }
    mlc_free(phi);
    return MLC_OK;
oom:
    mlc_free(phi);
    return MLC_ENOMEM;
}

mlc_status mlc_cred_meter_create(const mlc_model *model, const mlc_mesh *mesh, mlc_cred_meter **out,
                                 mlc_err *err) {
    *out = NULL;
    mlc_cred_meter *m = mlc_calloc(1, sizeof *m);
    int *sf = NULL;
    if (!m || mlc_mesh_surface(mesh, &m->nsv, &m->sv, &sf) != MLC_OK) goto oom;
    mlc_free(sf);
    m->xyz = mlc_malloc(3 * (size_t)(m->nsv ? m->nsv : 1) * sizeof(double));
    if (!m->xyz) goto oom;
    m->model = model;
    m->extent = mlc_model_extent(model);
    m->ground = mlc_model_settings(model)->ground;
    if (build_groups(m, mesh) != MLC_OK) goto oom;
    mlc_cred_meter_reset(m);
    *out = m;
    return MLC_OK;
oom:
    mlc_cred_meter_destroy(m);
    return mlc_errf(err, MLC_ENOMEM, "out of memory measuring the gait's credibility");
}

void mlc_cred_meter_destroy(mlc_cred_meter *m) {
    if (!m) return;
    mlc_free(m->sv);
    mlc_free(m->xyz);
    mlc_free(m->gs);
    mlc_free(m->gv);
    mlc_free(m->gc);
    mlc_free(m->ge);
    mlc_free(m->gl);
    mlc_free(m);
}

void mlc_cred_meter_set_exhaustive(mlc_cred_meter *m, int on) {
    m->exhaustive = on;
}

long mlc_cred_meter_skinned(const mlc_cred_meter *m) {
    return m->skinned;
}

void mlc_cred_meter_reset(mlc_cred_meter *m) {
    m->frames = m->after0 = m->airborne = 0;
    m->skinned = 0;
    m->com_y0 = 0;
    m->rise = 0;
    m->depth = 0;
    m->up_min = INFINITY;
}

/* Measure one frame given directly: centre-of-mass height, up_y = (R ŷ)_y and the lowest
 * surface height (relative to the flat ground). */
static void mlc_cred_meter_frame_values(mlc_cred_meter *m, int frame, double com_y, double up_y,
                                        double y_min) {
    if (frame == 0) m->com_y0 = com_y;
    /* Written so that a NaN propagates into the measure instead of being skipped: a state that
     * cannot be measured must not look credible. */
    double rise = com_y - m->com_y0, depth = m->ground - y_min;
    if (!(rise <= m->rise)) m->rise = rise;
    if (!(depth <= m->depth)) m->depth = depth;
    if (!(up_y >= m->up_min)) m->up_min = up_y;
    if (frame > 0) {
        m->after0++;
        if (!(y_min <= m->ground + MLC_CRED_CLEARANCE * m->extent)) m->airborne++;
    }
    m->frames++;
}

void mlc_cred_meter_frame_positions(mlc_cred_meter *m, int frame, const double com[3], double up_y,
                                    const double *x, const int *verts, int n) {
    double y_min = INFINITY, com_y = com[1];
    const mlc_terrain *ter = mlc_model_terrain(m->model);
    if (!ter->flat) {
        /* Terrain: the measures of the plane y = ground applied to the distances to the
         * terrain (penetration: depth below it; airborne: height above it) and to the centre
         * of mass's height above the terrain under it (rise). */
        for (int i = 0; i < n; i++) {
            double nrm[3],
                y = m->ground + mlc_terrain_query(ter, x + 3 * (verts ? verts[i] : i), nrm, NULL);
            if (!(y >= y_min)) y_min = y;
        }
        com_y = com[1] - mlc_terrain_height(ter, com[0], com[2]);
    } else {
        for (int i = 0; i < n; i++) {
            double y = x[3 * (verts ? verts[i] : i) + 1];
            if (!(y >= y_min)) y_min = y;
        }
    }
    mlc_cred_meter_frame_values(m, frame, com_y, up_y, y_min);
}

/* Skin group g's vertices (y alone: the same bits as mlc_model_skin's y) and lower y_min by
 * them (the exhaustive scan's update rule). */
static double group_min(mlc_cred_meter *m, const double *z, int g, double y_min) {
    int a0 = m->gs[g], n = m->gs[g + 1] - a0;
    mlc_model_skin_coord(m->model, z, 1, n, m->gv + a0, m->xyz);
    m->skinned += n;
    for (int a = 0; a < n; a++) {
        double y = m->xyz[a];
        if (!(y >= y_min)) y_min = y;
    }
    return y_min;
}

/* The lowest surface y of state z on the flat ground, skinning only the groups whose lower
 * bound does not exceed the lowest y found so far: first the group of least bound, then every
 * group that could still hold a lower vertex. A skipped group's vertices are all above the
 * minimum, so the result is the exhaustive scan's (the minimum of the same values, each
 * computed by mlc_model_skin). Returns NAN when the state is not finite (the caller then scans
 * everything, so a NaN is reported exactly as the exhaustive scan reports it). */
static double lowest_y(mlc_cred_meter *m, const double *z) {
    const int n4 = m->n4;
    const double *ty = z + n4;
    double size = 0;
    for (int j = 0; j < n4; j++)
        size += fabs(ty[j]);
    if (!(size < 1e300) || m->ng == 0) return (double)NAN;
    int first = 0;
    for (int g = 0; g < m->ng; g++) {
        const double *c = m->gc + (size_t)g * n4, *e = m->ge + (size_t)g * n4;
        double b = 0;
        for (int j = 0; j < n4; j++)
            b += c[j] * ty[j] - e[j] * fabs(ty[j]);
        m->gl[g] = b;
        if (b < m->gl[first]) first = g;
    }
    double y_min = group_min(m, z, first, INFINITY);
    for (int g = 0; g < m->ng; g++)
        if (g != first && !(m->gl[g] > y_min)) y_min = group_min(m, z, g, y_min);
    return y_min;
}

mlc_status mlc_cred_meter_frame(void *meter, int frame, double time, const double *z,
                                const double com[3], const double forward[3], int contacts) {
    MLC_UNUSED(time), MLC_UNUSED(forward), MLC_UNUSED(contacts);
    mlc_cred_meter *m = meter;
    double R[9];
    mlc_model_rotation(m->model, z, R);
    if (!m->exhaustive && mlc_model_terrain(m->model)->flat) {
        double y_min = lowest_y(m, z);
        if (y_min == y_min) { /* R ŷ: column 1 */
            mlc_cred_meter_frame_values(m, frame, com[1], R[4], y_min);
            return MLC_OK;
        }
    }
    mlc_model_skin(m->model, z, m->nsv, m->sv, m->xyz);
    m->skinned += m->nsv;
    mlc_cred_meter_frame_positions(m, frame, com, R[4], m->xyz, NULL, m->nsv); /* R ŷ: column 1 */
    return MLC_OK;
}

void mlc_cred_meter_result(const mlc_cred_meter *m, mlc_credibility *out) {
    double e = m->extent > 0 ? m->extent : 1;
    out->rise = m->rise / e;
    out->penetration = m->depth / e;
    out->airborne = m->after0 ? (double)m->airborne / m->after0 : 0;
    out->up_min = m->frames ? m->up_min : (double)NAN;
    out->frames = m->frames;
}

int mlc_cred_meter_surface(const mlc_cred_meter *m, const int **verts) {
    *verts = m->sv;
    return m->nsv;
}

mlc_status mlc_credibility_robustness(const mlc_model *model, const mlc_actuation *act,
                                      const mlc_objective_settings *obj, double J, int threads,
                                      mlc_credibility *out, double *J_replay, mlc_err *err) {
    enum { NR = MLC_CRED_REPLAYS };
    double Jr[NR];
    for (int r = 0; r < NR; r++)
        Jr[r] = (double)NAN;
    out->kept = 0;
    out->robustness = 0;
    int m = act ? act->m : 0, k = act ? act->k : 0;
    /* No gain to keep (or nothing actuated): robustness 0, nothing to replay. */
    if (!(J < 0) || m * k == 0) {
        if (J_replay) memcpy(J_replay, Jr, sizeof Jr);
        return MLC_OK;
    }
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_num_procs();
#endif
    threads = MLC_MAX(1, MLC_MIN(threads, NR));
#ifndef _OPENMP
    threads = 1;
#endif
    const size_t mk = (size_t)m * (size_t)k;
    double *par = mlc_malloc(3 * NR * mk * sizeof(double));
    mlc_rollout **ro = mlc_calloc((size_t)threads, sizeof *ro);
    mlc_status s = MLC_OK;
    if (!par || !ro) goto oom;
    for (int t = 0; t < threads; t++)
        if (mlc_rollout_create(model, &ro[t]) != MLC_OK) goto oom;
    /* All the noise first, in replay order, so no replay depends on which thread runs it. */
    mlc_rng rng;
    mlc_rng_seed(&rng, MLC_CRED_SEED);
    for (int r = 0; r < NR; r++) {
        double *p = par + 3 * (size_t)r * mk;
        mlc_gait_perturb(&rng, m, k, act->A, act->T, act->theta, p, p + mk, p + 2 * mk);
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int r = 0; r < NR; r++) {
#ifdef _OPENMP
        mlc_rollout *mine = ro[omp_get_thread_num()];
#else
        mlc_rollout *mine = ro[0];
#endif
        const double *p = par + 3 * (size_t)r * mk;
        mlc_actuation pa = {m, k, p, p + mk, p + 2 * mk};
        mlc_rollout_result rr;
        mlc_rollout_run(mine, &pa, obj, NULL, NULL, &rr);
        Jr[r] = rr.J;
    }
    for (int r = 0; r < NR; r++)
        out->kept += Jr[r] <= 0.5 * J;
    out->robustness = (double)out->kept / NR;
    if (J_replay) memcpy(J_replay, Jr, sizeof Jr);
    goto done;
oom:
    s = mlc_errf(err, MLC_ENOMEM, "out of memory for the robustness replays");
done:
    if (ro)
        for (int t = 0; t < threads; t++)
            mlc_rollout_destroy(ro[t]);
    mlc_free(ro);
    mlc_free(par);
    return s;
}

/* The limits of each objective kind (credibility.h): which apply and how far, from the
 * kinds' registry (objective.h); an unknown kind is judged like locomotion. */
typedef struct cred_limits {
    double rise_max, airborne_max, airborne_min; /* airborne_min: flip must leave the ground */
    int up;                                      /* up_min applies */
} cred_limits;

static cred_limits limits_of(int kind) {
    const mlc_objective_kind_info *k = mlc_objective_kind_info_of(kind);
    if (!k) k = &mlc_objective_kinds[MLC_OBJ_LOCOMOTION];
    cred_limits L = {k->rise_max, k->airborne_max, k->airborne_min, k->up};
    return L;
}

/* x ≤ limit; an infinite limit does not apply (not even to NaN). */
static int within(double x, double limit) {
    return isinf(limit) || x <= limit;
}

void mlc_credibility_judge(mlc_credibility *c, int kind) {
    cred_limits L = limits_of(kind);
    int ok = !c->failed && c->penetration <= MLC_CRED_PENETRATION_MAX &&
             c->robustness >= MLC_CRED_ROBUSTNESS_MIN && within(c->rise, L.rise_max) &&
             within(c->airborne, L.airborne_max) &&
             (L.airborne_min <= 0 || c->airborne >= L.airborne_min);
    if (L.up) ok = ok && c->up_min > MLC_CRED_UP_MIN;
    c->credible = ok;
}

void mlc_credibility_explain(const mlc_credibility *c, int kind, char *buf, size_t cap) {
    cred_limits L = limits_of(kind);
    size_t n = 0;
    if (cap == 0) return;
    buf[0] = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (n < cap) {                                                                             \
            int w_ = snprintf(buf + n, cap - n, "%s", n ? ", " : "");                              \
            if (w_ > 0) n += (size_t)w_;                                                           \
        }                                                                                          \
        if (n < cap) {                                                                             \
            int w_ = snprintf(buf + n, cap - n, __VA_ARGS__);                                      \
            if (w_ > 0) n += (size_t)w_;                                                           \
        }                                                                                          \
    } while (0)
    if (c->failed) ADD("the rollout blew up");
    if (!within(c->rise, L.rise_max)) ADD("rise %.3g > %g extents", c->rise, L.rise_max);
    if (!within(c->airborne, L.airborne_max))
        ADD("airborne %.3g > %g", c->airborne, L.airborne_max);
    if (L.airborne_min > 0 && !(c->airborne >= L.airborne_min))
        ADD("airborne %.3g < %g (a flip leaves the ground)", c->airborne, L.airborne_min);
    if (!(c->penetration <= MLC_CRED_PENETRATION_MAX))
        ADD("penetration %.3g > %g extents", c->penetration, MLC_CRED_PENETRATION_MAX);
    if (L.up && !(c->up_min > MLC_CRED_UP_MIN))
        ADD("up_min %.3g <= %g", c->up_min, MLC_CRED_UP_MIN);
    if (!(c->robustness >= MLC_CRED_ROBUSTNESS_MIN))
        ADD("robustness %.3g < %g", c->robustness, MLC_CRED_ROBUSTNESS_MIN);
#undef ADD
}

int mlc_credibility_found(const mlc_rollout_result *res, const mlc_credibility *c) {
    return c->credible && res->J < 0;
}

/* Both the caller's frame function and the meter see every frame of the one rollout. */
typedef struct frame_tee {
    mlc_cred_meter *meter;
    mlc_frame_fn frame;
    void *user;
} frame_tee;

static mlc_status tee_frame(void *user, int frame, double time, const double *z,
                            const double com[3], const double forward[3], int contacts) {
    frame_tee *t = user;
    mlc_cred_meter_frame(t->meter, frame, time, z, com, forward, contacts);
    return t->frame ? t->frame(t->user, frame, time, z, com, forward, contacts) : MLC_OK;
}

mlc_status mlc_credibility_evaluate(const mlc_credibility_def *def, const mlc_actuation *act,
                                    mlc_rollout_result *res, mlc_credibility *out, mlc_err *err) {
    const mlc_model *model = def->model;
    const mlc_mesh *mesh = def->mesh;
    const mlc_objective_settings *obj = def->obj;
    const int threads = def->threads;
    const mlc_frame_fn frame = def->frame;
    void *user = def->user;
    memset(out, 0, sizeof *out);
    out->robustness = (double)NAN;
    out->kept = -1;
    mlc_cred_meter *meter = NULL;
    mlc_rollout *ro = NULL;
    mlc_status s = mlc_cred_meter_create(model, mesh, &meter, err);
    if (s != MLC_OK) return s;
    if (mlc_rollout_create(model, &ro) != MLC_OK) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory preparing the rollout");
        goto done;
    }
    frame_tee tee = {meter, frame, user};
    if ((s = mlc_rollout_run(ro, act, obj, tee_frame, &tee, res)) != MLC_OK) {
        mlc_errf(err, s, "rollout stopped by its frame function: %s", mlc_strerror(s));
        goto done;
    }
    mlc_cred_meter_result(meter, out);
    out->failed = res->failed;
    if ((s = mlc_credibility_robustness(model, act, obj, res->J, threads, out, NULL, err)) !=
        MLC_OK)
        goto done;
    mlc_credibility_judge(out, obj ? obj->kind : 0);
done:
    mlc_rollout_destroy(ro);
    mlc_cred_meter_destroy(meter);
    return s;
}
