/* terrain.c: ground geometry for contact (terrain.h). */
#include "terrain.h"
#include "internal/terrain_contact.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"

void mlc_terrain_flat(mlc_terrain *t, double ground, double friction) {
    memset(t, 0, sizeof *t);
    t->flat = 1;
    t->ground = ground;
    t->up[0] = 1;
    t->n[1] = 1;
    t->offset = ground;
    t->friction = friction;
    t->anisotropy = 1;
    t->dir[0] = 1;
}

mlc_status mlc_terrain_init(mlc_terrain *t, double ground, double friction, double slope_deg,
                            double anisotropy, const double direction[3],
                            const mlc_terrain_box *boxes, int nbox, mlc_err *err) {
    mlc_terrain_flat(t, ground, friction);
    if (!(slope_deg >= 0 && slope_deg < 90))
        return mlc_errf(err, MLC_EINVAL,
                        "contact.slope = %g degrees is out of range; valid: 0 <= slope < 90 "
                        "(the ground rises along objective.direction)",
                        slope_deg);
    if (!(anisotropy >= 1) || !isfinite(anisotropy))
        return mlc_errf(err, MLC_EINVAL,
                        "contact.anisotropy = %g is out of range; valid: >= 1 (backward / "
                        "forward friction; 1 = isotropic)",
                        anisotropy);
    double dn = sqrt(direction[0] * direction[0] + direction[1] * direction[1] +
                     direction[2] * direction[2]);
    if (dn > 0)
        for (int k = 0; k < 3; k++)
            t->dir[k] = direction[k] / dn;
    double hx = direction[0], hz = direction[2], hn = sqrt(hx * hx + hz * hz);
    if (hn > 0) t->up[0] = hx / hn, t->up[1] = 0, t->up[2] = hz / hn;
    t->slope = slope_deg;
    t->anisotropy = anisotropy;
    if (slope_deg > 0) {
        double th = slope_deg * MLC_PI / 180, c = mlc_cos(th), s = mlc_sin(th);
        t->n[0] = -s * t->up[0], t->n[1] = c, t->n[2] = -s * t->up[2];
        t->offset = c * ground; /* through (0, ground, 0) until settled */
    }
    for (int b = 0; b < nbox; b++)
        for (int k = 0; k < 3; k++)
            if (!(boxes[b].lo[k] < boxes[b].hi[k]) || !isfinite(boxes[b].lo[k]) ||
                !isfinite(boxes[b].hi[k]))
                return mlc_errf(err, MLC_EINVAL,
                                "contact.boxes[%d]: min[%d] = %g is not below max[%d] = %g; "
                                "give each box's smaller corner as \"min\" and the larger as "
                                "\"max\"",
                                b, k, boxes[b].lo[k], k, boxes[b].hi[k]);
    if (nbox > 0) {
        t->box = mlc_malloc(sizeof *t->box * (size_t)nbox);
        if (!t->box) return mlc_errf(err, MLC_ENOMEM, "out of memory for contact.boxes");
        memcpy(t->box, boxes, sizeof *t->box * (size_t)nbox);
        t->nbox = nbox;
    }
    t->flat = slope_deg == 0 && anisotropy == 1 && nbox == 0;
    return MLC_OK;
}

void mlc_terrain_free(mlc_terrain *t) {
    if (!t) return;
    mlc_free(t->h);
    mlc_free(t->box);
    t->h = NULL, t->box = NULL, t->nx = t->nz = t->nbox = 0;
}

/* Deep copy (dst uninitialized). MLC_ENOMEM on failure (dst then empty). */
static mlc_status mlc_terrain_copy(mlc_terrain *dst, const mlc_terrain *src) {
    *dst = *src;
    dst->h = NULL, dst->box = NULL;
    size_t nh = (size_t)src->nx * (size_t)src->nz;
    if (src->h && nh) {
        if (!(dst->h = mlc_malloc(sizeof(double) * nh))) goto oom;
        memcpy(dst->h, src->h, sizeof(double) * nh);
    }
    if (src->box && src->nbox) {
        if (!(dst->box = mlc_malloc(sizeof *dst->box * (size_t)src->nbox))) goto oom;
        memcpy(dst->box, src->box, sizeof *dst->box * (size_t)src->nbox);
    }
    return MLC_OK;
oom:
    mlc_terrain_free(dst);
    return MLC_ENOMEM;
}

/* ---- heightfield file ------------------------------------------------------------------- */

/* Next number of the file: skips blanks, newlines (counting them) and '#' comments. Returns
 * 1 with *v, 0 at the end, −1 on a token that is not a number (its text in tok). */
static int next_number(FILE *f, int *line, double *v, char *tok, size_t ntok) {
    int c;
    for (;;) {
        c = fgetc(f);
        if (c == EOF) return 0;
        if (c == '\n')
            (*line)++;
        else if (c == '#') {
            while ((c = fgetc(f)) != EOF && c != '\n') {
            }
            if (c == '\n') (*line)++;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != ',')
            break;
    }
    size_t n = 0;
    while (c != EOF && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' && c != '#') {
        if (n + 1 < ntok) tok[n++] = (char)c;
        c = fgetc(f);
    }
    tok[n] = '\0';
    if (c != EOF) ungetc(c, f);
    char *end;
    errno = 0;
    *v = strtod(tok, &end);
    return (*end == '\0' && n > 0 && isfinite(*v)) ? 1 : -1;
}

mlc_status mlc_terrain_read_heightfield(mlc_terrain *t, const char *path, mlc_err *err) {
    FILE *f = fopen(path, "r");
    if (!f)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: cannot open the heightfield (contact.heightfield): %s", path,
                        strerror(errno));
    int line = 1;
    double hdr[6];
    char tok[64];
    static const char *names[6] = {"nx", "nz", "x0", "z0", "dx", "dz"};
    mlc_status st = MLC_OK;
    double *h = NULL;
    for (int i = 0; i < 6; i++) {
        int r = next_number(f, &line, &hdr[i], tok, sizeof tok);
        if (r != 1) {
            st = mlc_errf(err, MLC_EINVAL,
                          "%s:%d: heightfield header: expected %s (the header is \"nx nz x0 z0 "
                          "dx dz\"), got %s%s%s",
                          path, line, names[i], r == 0 ? "the end of the file" : "'",
                          r == 0 ? "" : tok, r == 0 ? "" : "'");
            goto done;
        }
    }
    if (hdr[0] != floor(hdr[0]) || hdr[1] != floor(hdr[1]) || hdr[0] < 2 || hdr[1] < 2 ||
        hdr[0] > 4096 || hdr[1] > 4096 || !(hdr[4] > 0) || !(hdr[5] > 0)) {
        st = mlc_errf(err, MLC_EINVAL,
                      "%s:%d: heightfield header \"%g %g %g %g %g %g\" is invalid: nx and nz must "
                      "be whole numbers in 2..4096 and dx, dz > 0",
                      path, line, hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5]);
        goto done;
    }
    int nx = (int)hdr[0], nz = (int)hdr[1];
    h = mlc_malloc(sizeof(double) * (size_t)nx * (size_t)nz);
    if (!h) {
        st = mlc_errf(err, MLC_ENOMEM, "%s: out of memory for a %d×%d heightfield", path, nx, nz);
        goto done;
    }
    for (int j = 0; j < nz; j++)
        for (int i = 0; i < nx; i++) {
            int r = next_number(f, &line, &h[i + (size_t)nx * j], tok, sizeof tok);
            if (r != 1) {
                st = mlc_errf(err, MLC_EINVAL,
                              "%s:%d: heightfield row %d, column %d: expected a height, got "
                              "%s%s%s (the header promises %d rows of %d numbers)",
                              path, line, j + 1, i + 1, r == 0 ? "the end of the file" : "'",
                              r == 0 ? "" : tok, r == 0 ? "" : "'", nz, nx);
                goto done;
            }
        }
    double extra;
    int r = next_number(f, &line, &extra, tok, sizeof tok);
    if (r != 0) {
        st = mlc_errf(err, MLC_EINVAL,
                      "%s:%d: heightfield has more than the %d rows of %d heights its header "
                      "promises ('%s'); fix nx nz in the header",
                      path, line, nz, nx, tok);
        goto done;
    }
    mlc_free(t->h);
    t->h = h, h = NULL;
    t->nx = nx, t->nz = nz, t->x0 = hdr[2], t->z0 = hdr[3], t->dx = hdr[4], t->dz = hdr[5];
    t->flat = 0;
done:
    mlc_free(h);
    fclose(f);
    return st;
}

mlc_status mlc_terrain_own(mlc_terrain *dst, const mlc_terrain *src, double ground, double friction,
                           const double *x, int n) {
    if (src) {
        mlc_status st = mlc_terrain_copy(dst, src);
        if (st != MLC_OK) return st;
    } else {
        mlc_terrain_flat(dst, ground, friction);
    }
    mlc_terrain_settle(dst, x, n);
    return MLC_OK;
}

/* ---- queries ---------------------------------------------------------------------------- */

void mlc_terrain_settle(mlc_terrain *t, const double *x, int n) {
    if (t->flat || t->nx > 0 || t->slope == 0 || n <= 0) return;
    double lo = INFINITY;
    for (int i = 0; i < n; i++)
        lo = fmin(lo, t->n[0] * x[3 * i] + t->n[1] * x[3 * i + 1] + t->n[2] * x[3 * i + 2]);
    t->offset = lo;
}

/* Heightfield height and gradient at (x, z), clamped to the grid (the edge value outside). */
static double field(const mlc_terrain *t, double x, double z, double *hx, double *hz) {
    double u = (x - t->x0) / t->dx, v = (z - t->z0) / t->dz;
    int outx = 0, outz = 0;
    if (u < 0) u = 0, outx = 1;
    if (u > t->nx - 1) u = t->nx - 1, outx = 1;
    if (v < 0) v = 0, outz = 1;
    if (v > t->nz - 1) v = t->nz - 1, outz = 1;
    int i = (int)u, j = (int)v;
    if (i > t->nx - 2) i = t->nx - 2;
    if (j > t->nz - 2) j = t->nz - 2;
    double fu = u - i, fv = v - j;
    const double *h = t->h;
    size_t nx = (size_t)t->nx;
    double h00 = h[i + nx * j], h10 = h[i + 1 + nx * j], h01 = h[i + nx * (j + 1)],
           h11 = h[i + 1 + nx * (j + 1)];
    *hx = outx ? 0 : ((1 - fv) * (h10 - h00) + fv * (h11 - h01)) / t->dx;
    *hz = outz ? 0 : ((1 - fu) * (h01 - h00) + fu * (h11 - h10)) / t->dz;
    return t->ground + (1 - fv) * ((1 - fu) * h00 + fu * h10) + fv * ((1 - fu) * h01 + fu * h11);
}

/* Signed distance to box b (positive outside) and its outward normal at the closest point. */
static double box_distance(const mlc_terrain_box *b, const double x[3], double n[3]) {
    double q[3], sg[3];
    for (int k = 0; k < 3; k++) {
        double c = 0.5 * (b->lo[k] + b->hi[k]), e = 0.5 * (b->hi[k] - b->lo[k]);
        double p = x[k] - c;
        sg[k] = p < 0 ? -1 : 1;
        q[k] = fabs(p) - e;
    }
    if (q[0] > 0 || q[1] > 0 || q[2] > 0) {
        double o[3], s = 0;
        for (int k = 0; k < 3; k++)
            o[k] = q[k] > 0 ? q[k] : 0, s += o[k] * o[k];
        double d = sqrt(s);
        for (int k = 0; k < 3; k++)
            n[k] = sg[k] * o[k] / d;
        return d;
    }
    /* inside: the nearest face (the top first on ties) */
    int best = 1;
    if (q[0] > q[best]) best = 0;
    if (q[2] > q[best]) best = 2;
    n[0] = n[1] = n[2] = 0;
    n[best] = sg[best];
    return q[best];
}

/* mlc_terrain_query, and *box the closest box (−1: the ground). */
static double query_feature(const mlc_terrain *t, const double x[3], double n[3], int *box) {
    double d;
    if (t->nx > 0) {
        double hx, hz, y = field(t, x[0], x[2], &hx, &hz);
        double s = 1 / sqrt(1 + hx * hx + hz * hz);
        n[0] = -hx * s, n[1] = s, n[2] = -hz * s;
        d = (x[1] - y) * s;
    } else {
        n[0] = t->n[0], n[1] = t->n[1], n[2] = t->n[2];
        d = n[0] * x[0] + n[1] * x[1] + n[2] * x[2] - t->offset;
    }
    *box = -1;
    for (int b = 0; b < t->nbox; b++) {
        double nb[3], db = box_distance(&t->box[b], x, nb);
        if (db < d) {
            d = db;
            n[0] = nb[0], n[1] = nb[1], n[2] = nb[2];
            *box = b;
        }
    }
    return d;
}

/* The friction at a feature: a box's own, else the ground's. With a per-sample body friction
 * (per-region materials) the body's replaces the ground's, and on a box with its own the
 * smaller of the two applies (a slippery side slips). */
static double feature_friction(const mlc_terrain *t, int box, const double *body_mu) {
    double own = box >= 0 ? t->box[box].friction : -1;
    if (body_mu) return own >= 0 ? fmin(own, *body_mu) : *body_mu;
    return own >= 0 ? own : t->friction;
}

double mlc_terrain_query(const mlc_terrain *t, const double x[3], double n[3], double *mu) {
    int box;
    double d = query_feature(t, x, n, &box);
    if (mu) *mu = feature_friction(t, box, NULL);
    return d;
}

double mlc_terrain_height(const mlc_terrain *t, double x, double z) {
    double y;
    if (t->nx > 0) {
        double hx, hz;
        y = field(t, x, z, &hx, &hz);
    } else {
        y = (t->offset - t->n[0] * x - t->n[2] * z) / t->n[1];
    }
    for (int b = 0; b < t->nbox; b++) {
        const mlc_terrain_box *bx = &t->box[b];
        if (x >= bx->lo[0] && x <= bx->hi[0] && z >= bx->lo[2] && z <= bx->hi[2])
            y = fmax(y, bx->hi[1]);
    }
    return y;
}

/* A contact sample's frame at x: f = [n, t1, t2] (9 values) with n the normal of
 * mlc_terrain_query, t1 the objective direction projected on the tangent plane and normalized
 * (another axis when the direction is along n) and t2 = n × t1; returns the signed distance,
 * *mu the feature's friction with the body's friction at the sample (body_mu, NULL: none). */
static double frame_at(const mlc_terrain *t, const double x[3], double f[9], const double *body_mu,
                       double *mu) {
    int box;
    double n[3], d = query_feature(t, x, n, &box);
    if (mu) *mu = feature_friction(t, box, body_mu);
    /* t1: the objective direction in the tangent plane (another axis when it is normal) */
    double t1[3], dn = 0, tn = 0;
    for (int k = 0; k < 3; k++)
        dn += t->dir[k] * n[k];
    for (int k = 0; k < 3; k++)
        t1[k] = t->dir[k] - dn * n[k], tn += t1[k] * t1[k];
    if (tn < 1e-12) {
        int a = fabs(n[0]) < 0.9 ? 0 : 2;
        tn = 0;
        for (int k = 0; k < 3; k++)
            t1[k] = (k == a) - n[a] * n[k], tn += t1[k] * t1[k];
    }
    tn = 1 / sqrt(tn);
    f[0] = n[0], f[1] = n[1], f[2] = n[2];
    f[3] = t1[0] * tn, f[4] = t1[1] * tn, f[5] = t1[2] * tn;
    f[6] = n[1] * f[5] - n[2] * f[4];
    f[7] = n[2] * f[3] - n[0] * f[5];
    f[8] = n[0] * f[4] - n[1] * f[3];
    return d;
}

/* The Delassus matrices of the frames' axes from D (ns×ns, the same for every world axis):
 * Dn_ij = D_ij nᵢ·nⱼ, Dt1_ij = D_ij t1ᵢ·t1ⱼ, Dt2_ij = D_ij t2ᵢ·t2ⱼ, rewritten in the rows and
 * columns of the samples with changed[i] ≠ 0 (frames: 9 × ns). */
static void mlc_terrain_delassus(int ns, const double *D, const double *frames, const int *changed,
                                 double *Dn, double *Dt1, double *Dt2) {
    for (int i = 0; i < ns; i++) {
        if (!changed[i]) continue;
        const double *fi = frames + 9 * (size_t)i;
        for (int j = 0; j < ns; j++) {
            const double *fj = frames + 9 * (size_t)j;
            double dij = D[(size_t)i + (size_t)ns * j];
            size_t ij = (size_t)i + (size_t)ns * j, ji = (size_t)j + (size_t)ns * i;
            Dn[ij] = Dn[ji] = dij * (fi[0] * fj[0] + fi[1] * fj[1] + fi[2] * fj[2]);
            Dt1[ij] = Dt1[ji] = dij * (fi[3] * fj[3] + fi[4] * fj[4] + fi[5] * fj[5]);
            Dt2[ij] = Dt2[ji] = dij * (fi[6] * fj[6] + fi[7] * fj[7] + fi[8] * fj[8]);
        }
    }
}

mlc_status mlc_terrain_contact_create(mlc_terrain_contact *tc, int ns) {
    memset(tc, 0, sizeof *tc);
    tc->ns = ns;
    size_t n = (size_t)(ns > 0 ? ns : 1);
    int ok = (tc->frame = mlc_malloc(sizeof(double) * 9 * n)) != NULL;
    double **v[] = {&tc->target, &tc->mu1l, &tc->mu1h, &tc->mu2};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        ok &= (*v[i] = mlc_calloc(n, sizeof(double))) != NULL;
    double **m[] = {&tc->Dn, &tc->Dt1, &tc->Dt2};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        ok &= (*m[i] = mlc_calloc(n * n, sizeof(double))) != NULL;
    ok &= (tc->changed = mlc_calloc(n, sizeof(int))) != NULL;
    if (!ok) {
        mlc_terrain_contact_destroy(tc);
        return MLC_ENOMEM;
    }
    mlc_terrain_contact_reset(tc);
    return MLC_OK;
}

void mlc_terrain_contact_destroy(mlc_terrain_contact *tc) {
    if (!tc) return;
    double *b[] = {tc->frame, tc->target, tc->mu1l, tc->mu1h, tc->mu2, tc->Dn, tc->Dt1, tc->Dt2};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        mlc_free(b[i]);
    mlc_free(tc->changed);
    memset(tc, 0, sizeof *tc);
}

void mlc_terrain_contact_reset(mlc_terrain_contact *tc) {
    if (!tc->frame) return;
    for (int i = 0; i < 9 * tc->ns; i++) /* NaN: differs from every frame */
        tc->frame[i] = NAN;
}

void mlc_terrain_contact_update(mlc_terrain_contact *tc, const mlc_terrain *t, const double *D,
                                const double *body_mu, const double *x, size_t ss, size_t ks,
                                double tol, double push_step, int velocity) {
    int nch = 0;
    for (int s = 0; s < tc->ns; s++) {
        const double *xs = x + ss * (size_t)s;
        double p[3] = {xs[0], xs[ks], xs[2 * ks]}, f[9], mu;
        double d = frame_at(t, p, f, body_mu ? body_mu + s : NULL, &mu);
        double *fs = tc->frame + 9 * (size_t)s;
        tc->changed[s] = memcmp(fs, f, sizeof f) != 0;
        if (tc->changed[s]) memcpy(fs, f, sizeof f), nch++;
        /* the target on u = n·x: u_n − d is the feature's surface */
        double un = f[0] * p[0] + f[1] * p[1] + f[2] * p[2], g = un - d;
        if (velocity)
            g = fmin(g, un);
        else if (un < g - tol)
            g = fmin(g, un + push_step);
        tc->target[s] = g;
        tc->mu1l[s] = mu, tc->mu1h[s] = mu * t->anisotropy, tc->mu2[s] = mu;
    }
    if (nch > 0) mlc_terrain_delassus(tc->ns, D, tc->frame, tc->changed, tc->Dn, tc->Dt1, tc->Dt2);
}
