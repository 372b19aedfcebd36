/* polish.c: projected finite-difference gradient descent in a box (polish.h). */
#include "polish.h"

#include <math.h>
#include <string.h>

typedef struct polish_ctx {
    int n;
    const double *lo, *hi;
    mlc_polish_eval eval;
    void *user;
    double *X; /* n × (2n or L) points in the caller's coordinates */
    double *f;
    long evaluations;
} polish_ctx;

static double clamp01(double y) {
    return y < 0 ? 0 : (y > 1 ? 1 : y);
}

/* Score the npts normalized points Y (n × npts); non-finite values become +∞. */
static void score(polish_ctx *c, const double *Y, int npts) {
    const int n = c->n;
    for (int q = 0; q < npts; q++)
        for (int i = 0; i < n; i++)
            c->X[(size_t)q * n + i] = c->lo[i] + Y[(size_t)q * n + i] * (c->hi[i] - c->lo[i]);
    c->eval(c->user, c->X, npts, c->f);
    for (int q = 0; q < npts; q++)
        if (!isfinite(c->f[q])) c->f[q] = INFINITY;
    c->evaluations += npts;
}

mlc_status mlc_polish_run(const mlc_polish_def *def, const double *x0, double f0, double *x_out,
                          double *trail, int *ntrail, mlc_polish_report *rep, mlc_err *err) {
    const int n = def->n, steps = def->steps;
    const double *lo = def->lo, *hi = def->hi;
    const mlc_polish_eval eval = def->eval;
    void *user = def->user;
    memset(rep, 0, sizeof *rep);
    const int L = MLC_POLISH_LINE, npts = MLC_MAX(2 * n, L);
    polish_ctx c = {n, lo, hi, eval, user, NULL, NULL, 0};
    double *Y = mlc_malloc((size_t)n * (size_t)npts * sizeof(double));
    double *y = mlc_malloc(3 * (size_t)n * sizeof(double)), *g = y + n, *d = y + 2 * n;
    c.X = mlc_malloc((size_t)n * (size_t)npts * sizeof(double));
    c.f = mlc_malloc((size_t)npts * sizeof(double));
    if (!Y || !y || !c.X || !c.f) {
        mlc_free(Y), mlc_free(y), mlc_free(c.X), mlc_free(c.f);
        return mlc_errf(err, MLC_ENOMEM, "out of memory for the polish");
    }
    for (int i = 0; i < n; i++)
        y[i] = clamp01((x0[i] - lo[i]) / (hi[i] - lo[i]));
    double fy = f0;
    if (!(fy == fy)) { /* NaN: score the start */
        memcpy(Y, y, (size_t)n * sizeof(double));
        score(&c, Y, 1);
        fy = c.f[0];
    } else if (!isfinite(fy)) {
        fy = INFINITY;
    }
    rep->f_before = fy;
    int nt = 0;
    if (trail) memcpy(trail + (size_t)n * nt++, x0, (size_t)n * sizeof(double));
    double alpha = MLC_POLISH_STEP0, delta = MLC_POLISH_DELTA;
    int need_gradient = 1;
    for (int step = 0; step < steps;) {
        if (need_gradient) {
            /* Central differences, the pair clamped into the box. */
            for (int i = 0; i < n; i++) {
                double *yp = Y + (size_t)(2 * i) * n, *ym = yp + n;
                memcpy(yp, y, (size_t)n * sizeof(double));
                memcpy(ym, y, (size_t)n * sizeof(double));
                yp[i] = clamp01(y[i] + delta);
                ym[i] = clamp01(y[i] - delta);
            }
            score(&c, Y, 2 * n);
            step++;
            rep->steps = step;
            double norm = 0;
            for (int i = 0; i < n; i++) {
                double w = Y[(size_t)(2 * i) * n + i] - Y[(size_t)(2 * i + 1) * n + i];
                double df = c.f[2 * i] - c.f[2 * i + 1];
                g[i] = w > 0 && isfinite(df) ? df / w : 0;
                d[i] = -g[i];
                /* Projected: no component that pushes out of the box at a bound. */
                if ((y[i] >= 1 && d[i] > 0) || (y[i] <= 0 && d[i] < 0)) d[i] = 0;
                norm += d[i] * d[i];
            }
            norm = sqrt(norm);
            if (!(norm > 0)) break;
            for (int i = 0; i < n; i++)
                d[i] /= norm;
            need_gradient = 0;
        }
        /* Backtracking line search: L lengths α 2^{−l}, scored together. */
        for (int l = 0; l < L; l++) {
            double a = ldexp(alpha, -l);
            double *yl = Y + (size_t)l * n;
            for (int i = 0; i < n; i++)
                yl[i] = clamp01(y[i] + a * d[i]);
        }
        score(&c, Y, L);
        int best = 0;
        for (int l = 1; l < L; l++)
            if (c.f[l] < c.f[best]) best = l;
        if (c.f[best] < fy) {
            memcpy(y, Y + (size_t)best * n, (size_t)n * sizeof(double));
            fy = c.f[best];
            rep->accepted++;
            alpha = best == 0 ? 2 * alpha : ldexp(alpha, -best);
            alpha = fmin(alpha, 1.0);
            need_gradient = 1;
            if (trail)
                for (int i = 0; i < n; i++)
                    trail[(size_t)n * nt + i] = lo[i] + y[i] * (hi[i] - lo[i]);
            nt += trail != NULL;
        } else {
            alpha = ldexp(alpha, -L);
            if (alpha < delta) break;
        }
    }
    /* The result: the start itself when nothing improved (bit for bit). */
    if (rep->accepted == 0)
        memcpy(x_out, x0, (size_t)n * sizeof(double));
    else
        for (int i = 0; i < n; i++)
            x_out[i] = lo[i] + y[i] * (hi[i] - lo[i]);
    rep->f_after = fy;
    rep->evaluations = c.evaluations;
    if (ntrail) *ntrail = nt;
    mlc_free(Y), mlc_free(y), mlc_free(c.X), mlc_free(c.f);
    return MLC_OK;
}
