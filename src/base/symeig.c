/* symeig.c: dense symmetric eigendecomposition for CMA-ES (see symeig.h). */
#include "symeig.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

#include "detmath.h"

/* Phase 1 of mlc_symeig on V (the lower triangle of A, n×n): the Householder reflectors in V
 * below the subdiagonal with their factors beta, the tridiagonal T in d (diagonal) and e
 * (subdiagonal, e[n−1] = 0). */
static void tridiagonalize(int n, double *V, double *d, double *e, double *beta) {
    size_t ld = (size_t)n;
    /* Phase 1: reduction. Step k zeroes column k below the subdiagonal with
     * H = I - beta v v^T, v stored in V[k+1:, k]. The trailing block (lower triangle only)
     * becomes H A22 H = A22 - v w^T - w v^T with p = beta A22 v, w = p - (beta/2)(p.v) v. */
    double *p = d; /* d is free until the end; n entries suffice */
    for (int k = 0; k + 2 < n; k++) {
        double *v = V + (k + 1) + k * ld;
        int m = n - k - 1;
        double xx = 0;
        for (int i = 0; i < m; i++)
            xx += v[i] * v[i];
        double xn = sqrt(xx);
        if (xn == 0.0) {
            beta[k] = 0.0;
            e[k] = 0.0;
            continue;
        }
        double alpha = v[0] >= 0 ? -xn : xn;
        double v0 = v[0];
        v[0] = v0 - alpha;
        double b = 1.0 / (xx - alpha * v0); /* 2 / (v.v) with v.v = 2(xx - alpha v0) */
        beta[k] = b;
        e[k] = alpha;
        double *A22 = V + (k + 1) + (k + 1) * ld;
        for (int i = 0; i < m; i++)
            p[i] = 0.0;
        for (int j = 0; j < m; j++) {
            const double *col = A22 + j * ld;
            double vj = v[j], t = col[j] * vj;
            for (int i = j + 1; i < m; i++) {
                t += col[i] * v[i];
                p[i] += col[i] * vj;
            }
            p[j] += t;
        }
        double pv = 0;
        for (int i = 0; i < m; i++) {
            p[i] *= b;
            pv += p[i] * v[i];
        }
        double K = 0.5 * b * pv;
        for (int i = 0; i < m; i++)
            p[i] -= K * v[i]; /* p is now w */
        for (int j = 0; j < m; j++) {
            double *col = A22 + j * ld;
            double vj = v[j], wj = p[j];
            for (int i = j; i < m; i++)
                col[i] -= v[i] * wj + p[i] * vj;
        }
    }
    /* Tridiagonal T: diagonal from V, last subdiagonal entry. */
    for (int k = 0; k < n; k++)
        d[k] = V[k + k * ld];
    if (n >= 2) e[n - 2] = V[(n - 1) + (n - 2) * ld];
    e[n - 1] = 0.0;
}

int mlc_symeig(int n, const double *A, double *V, double *d, double *work) {
    double *e = work;        /* n: subdiagonal, e[i] couples i and i+1 */
    double *beta = work + n; /* n: reflector factors */
    size_t ld = (size_t)n;
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++)
            V[i + j * ld] = A[i + j * ld];

    tridiagonalize(n, V, d, e, beta);

    /* Phase 2: Q = H_0 H_1 ... H_{n-3}, built in place from the last reflector backwards. The
     * block Q[k+1:, k+1:] holds H_{k+1}...H_{n-3} (row/column k+1 being a unit vector) when
     * H_k is applied from the left. */
    for (int j = n - 2 > 0 ? n - 2 : 0; j < n; j++)
        for (int i = 0; i < n; i++)
            V[i + j * ld] = (i == j);
    for (int k = n - 3; k >= 0; k--) {
        double *v = V + (k + 1) + k * ld; /* reflector, m entries */
        int m = n - k - 1;
        double b = beta[k];
        if (b != 0.0) {
            for (int j = k + 1; j < n; j++) {
                double *col = V + (k + 1) + j * ld;
                double s = 0;
                for (int i = 0; i < m; i++)
                    s += v[i] * col[i];
                s *= b;
                for (int i = 0; i < m; i++)
                    col[i] -= s * v[i];
            }
        }
        for (int i = 0; i < n; i++)
            V[i + k * ld] = (i == k);
        for (int j = k + 1; j < n; j++)
            V[k + j * ld] = 0.0;
    }

    /* Phase 3: implicit QR on the tridiagonal (d, e), rotations accumulated into V. */
    int budget = 60 * n + 60;
    int hi = n - 1;
    while (hi > 0) {
        if (fabs(e[hi - 1]) <= DBL_EPSILON * (fabs(d[hi - 1]) + fabs(d[hi])) ||
            fabs(e[hi - 1]) < DBL_MIN) {
            e[hi - 1] = 0.0;
            hi--;
            continue;
        }
        if (budget-- <= 0) return -1;
        int lo = hi - 1;
        while (lo > 0 && !(fabs(e[lo - 1]) <= DBL_EPSILON * (fabs(d[lo - 1]) + fabs(d[lo])) ||
                           fabs(e[lo - 1]) < DBL_MIN))
            lo--;
        /* Wilkinson shift from the trailing 2 x 2 block. */
        double g = 0.5 * (d[hi - 1] - d[hi]), eh = e[hi - 1];
        double mu = d[hi] - eh * eh / (g + copysign(mlc_hypot(g, eh), g));
        double x = d[lo] - mu, z = e[lo];
        for (int k = lo; k < hi; k++) {
            /* Rotation G with (c x - s z, s x + c z) = (r, 0). sqrt of the sum is much cheaper
             * than hypot; fall back to mlc_hypot where it could under- or overflow. */
            double r = x * x + z * z, c = 1.0, s = 0.0;
            r = (r > DBL_MIN && r < DBL_MAX) ? sqrt(r) : mlc_hypot(x, z);
            if (r != 0.0) {
                c = x / r;
                s = -z / r;
            }
            if (k > lo) e[k - 1] = r;
            double a = d[k], bk = e[k], a1 = d[k + 1];
            d[k] = c * c * a - 2.0 * c * s * bk + s * s * a1;
            d[k + 1] = s * s * a + 2.0 * c * s * bk + c * c * a1;
            e[k] = c * s * (a - a1) + (c * c - s * s) * bk;
            if (k + 1 < hi) {
                z = -s * e[k + 1]; /* bulge at (k+2, k) */
                e[k + 1] *= c;
                x = e[k];
            }
            double *q0 = V + k * ld, *q1 = V + (k + 1) * ld;
            for (int i = 0; i < n; i++) {
                double u = q0[i], t = q1[i];
                q0[i] = c * u - s * t;
                q1[i] = s * u + c * t;
            }
        }
    }

    /* Ascending order (selection sort; n swaps of columns at most). */
    for (int i = 0; i + 1 < n; i++) {
        int kmin = i;
        for (int k = i + 1; k < n; k++)
            if (d[k] < d[kmin]) kmin = k;
        if (kmin != i) {
            double t = d[i];
            d[i] = d[kmin];
            d[kmin] = t;
            double *a = V + i * ld, *b = V + kmin * ld;
            for (int r = 0; r < n; r++) {
                double u = a[r];
                a[r] = b[r];
                b[r] = u;
            }
        }
    }
    return 0;
}
