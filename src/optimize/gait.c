/* gait.c: decoding a normalized CMA-ES point into sinusoid parameters (docs/method.md §4, App. H).
 * Everything reported is inside the bounds because CMA-ES hands us points in [0,1]^n (its
 * bound transform) and every map below is monotone from [0,1] onto the parameter's box. */
#include "gait.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

mlc_status mlc_gait_space_init(mlc_gait_space *g, const mlc_gait_def *def, mlc_err *err) {
    const int m = def->m, k = def->k, q = def->q, nfixed = def->nfixed;
    const double *a_max = def->a_max, *fixed_periods = def->fixed_periods;
    const double T_min = def->T_min, T_max = def->T_max, th_min = def->th_min, th_max = def->th_max;
    memset(g, 0, sizeof *g);
    if (m < 1 || m > MLC_GAIT_MAX_MODES)
        return mlc_errf(err, MLC_EINVAL, "actuation.modes: %d modes, expected 1..%d", m,
                        MLC_GAIT_MAX_MODES);
    if (k < 1 || k > MLC_GAIT_MAX_SINUSOIDS)
        return mlc_errf(err, MLC_EINVAL, "actuation.sinusoids: %d, expected 1..%d", k,
                        MLC_GAIT_MAX_SINUSOIDS);
    if (q < 0 || q > m)
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.select: %d slots but only %d modes; use "
                        "0..%d",
                        q, m, m);
    if (!(T_min > 0) || !(T_max >= T_min))
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.period_range: [%g, %g] must satisfy "
                        "0 < min <= max",
                        T_min, T_max);
    if (!(th_max >= th_min))
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.phase_range: [%g, %g] must satisfy "
                        "min <= max",
                        th_min, th_max);
    if (nfixed != 0 && nfixed != 1 && nfixed != m * k)
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.fixed_periods: %d values; give none, one "
                        "for all, or one per mode and sinusoid (%d × %d = %d)",
                        nfixed, m, k, m * k);
    for (int i = 0; i < nfixed; i++)
        if (!(fixed_periods[i] > 0))
            return mlc_errf(err, MLC_EINVAL, "actuation.fixed_periods[%d] = %g must be > 0", i,
                            fixed_periods[i]);
    for (int i = 0; i < m; i++)
        if (!(a_max[i] > 0))
            return mlc_errf(err, MLC_EINVAL,
                            "amplitude limit of mode %d is %g; the mode has "
                            "no strain (check the mesh)",
                            i, a_max[i]);
    g->m = m;
    g->k = k;
    g->q = q;
    g->fixed = nfixed > 0;
    for (int i = 0; i < m * k; i++)
        g->T_fixed[i] = nfixed == 1 ? fixed_periods[0] : nfixed > 1 ? fixed_periods[i] : 0.0;
    g->T_min = T_min;
    g->T_max = T_max;
    g->th_min = th_min;
    g->th_max = th_max;
    memcpy(g->a_max, a_max, (size_t)m * sizeof(double));
    int per = g->fixed ? 2 : 3;
    g->n = q > 0 ? m + per * q * k : per * m * k;
    return MLC_OK;
}

mlc_status mlc_gait_space_set_strain(mlc_gait_space *g, int nt, const double *strain, double p,
                                     int combined, mlc_err *err) {
    if (nt < 1 || !strain)
        return mlc_errf(err, MLC_EINVAL, "amplitude bound: no per-tet mode strains (%d tets)", nt);
    if (!(p > 0) || !isfinite(p))
        return mlc_errf(err, MLC_EINVAL, "actuation.amplitude_p = %g must be > 0", p);
    g->nt = nt;
    g->strain = strain;
    g->p = p;
    g->combined = combined != 0;
    return MLC_OK;
}

double mlc_gait_strain_bound(const mlc_gait_space *g, int k2, const double *A) {
    const int m = g->m;
    double alpha[MLC_GAIT_MAX_MODES];
    int idx[MLC_GAIT_MAX_MODES], na = 0;
    for (int i = 0; i < m; i++) {
        double s = 0;
        for (int j = 0; j < k2; j++)
            s += fabs(A[i * k2 + j]);
        if (s > 0) alpha[na] = s, idx[na++] = i;
    }
    if (na == 0) return 0.0;
    if (!g->strain) { /* no per-tet data: the looser sum of per-mode maxima (p / a_max,i) */
        double S = 0;
        for (int c = 0; c < na; c++)
            S += alpha[c] * g->p / g->a_max[idx[c]];
        return S;
    }
    /* Only the driven modes enter the tet loop (selection drives few of many). */
    double S = 0;
    for (int e = 0; e < g->nt; e++) {
        const double *n = g->strain + (size_t)e * m;
        double s = 0;
        for (int c = 0; c < na; c++)
            s += alpha[c] * n[idx[c]];
        S = fmax(S, s);
    }
    return S;
}

int mlc_gait_outside(const mlc_gait_space *g, int k2, const double *A, const double *T,
                     const double *theta, const int *names, char *msg, size_t cap) {
    const double tol = 1e-9;
    if (k2 > g->k) {
        snprintf(msg, cap, "%d sinusoids per mode, but actuation.sinusoids = %d", k2, g->k);
        return 1;
    }
    int driven = 0;
    for (int i = 0; i < g->m; i++) {
        const int name = names ? names[i] : i;
        int on = 0;
        for (int j = 0; j < k2; j++) {
            double a = A[i * k2 + j];
            if (a == 0) continue;
            on = 1;
            if (fabs(a) > g->a_max[i] * (1 + tol)) {
                snprintf(msg, cap,
                         "amplitude %g of mode %d, sinusoid %d exceeds its limit "
                         "a_max = %g (actuation.amplitude_p = %g)",
                         a, name, j, g->a_max[i], g->p);
                return 1;
            }
            double Tw = g->fixed ? g->T_fixed[i * g->k + j] : 0;
            if (g->fixed && fabs(T[i * k2 + j] - Tw) > tol * Tw) {
                snprintf(msg, cap,
                         "period %g of mode %d, sinusoid %d differs from "
                         "actuation.fixed_periods",
                         T[i * k2 + j], name, j);
                return 1;
            }
            if (!g->fixed &&
                (T[i * k2 + j] < g->T_min * (1 - tol) || T[i * k2 + j] > g->T_max * (1 + tol))) {
                snprintf(msg, cap,
                         "period %g of mode %d, sinusoid %d is outside "
                         "actuation.period_range [%g, %g]",
                         T[i * k2 + j], name, j, g->T_min, g->T_max);
                return 1;
            }
            if (theta[i * k2 + j] < g->th_min - tol || theta[i * k2 + j] > g->th_max + tol) {
                snprintf(msg, cap,
                         "phase %g of mode %d, sinusoid %d is outside "
                         "actuation.phase_range [%g, %g]",
                         theta[i * k2 + j], name, j, g->th_min, g->th_max);
                return 1;
            }
        }
        driven += on;
    }
    if (g->q > 0 && driven > g->q) {
        snprintf(msg, cap, "%d modes are driven, but actuation.select = %d", driven, g->q);
        return 1;
    }
    if (g->combined) {
        double S = mlc_gait_strain_bound(g, k2, A);
        if (S > g->p * (1 + tol)) {
            snprintf(msg, cap,
                     "the combined actuation may reach strain %g in the worst tet, "
                     "above actuation.amplitude_p = %g (actuation.amplitude_bound = "
                     "\"combined\")",
                     S, g->p);
            return 1;
        }
    }
    return 0;
}

int mlc_gait_driven_modes(const mlc_gait_space *g, const double *u, int *modes) {
    if (g->q == 0) {
        for (int i = 0; i < g->m; i++)
            modes[i] = i;
        return g->m;
    }
    /* Selection of the q largest participations; insertion order keeps ties by index. */
    int chosen = 0;
    for (int s = 0; s < g->q; s++) {
        int best = -1;
        for (int i = 0; i < g->m; i++) {
            int taken = 0;
            for (int c = 0; c < chosen; c++)
                taken |= modes[c] == i;
            if (taken) continue;
            if (best < 0 || u[i] > u[best]) best = i;
        }
        modes[chosen++] = best;
    }
    return chosen;
}

void mlc_gait_decode(const mlc_gait_space *g, const double *u, double *A, double *T,
                     double *theta) {
    const int m = g->m, k = g->k, per = g->fixed ? 2 : 3;
    for (int i = 0; i < m * k; i++) {
        A[i] = 0.0;
        T[i] = g->fixed ? g->T_fixed[i] : 0.5 * (g->T_min + g->T_max);
        theta[i] = g->th_min;
    }
    int modes[MLC_GAIT_MAX_MODES];
    int nd = mlc_gait_driven_modes(g, u, modes);
    const double *slots = g->q > 0 ? u + m : u;
    for (int s = 0; s < nd; s++) {
        int i = modes[s];
        for (int j = 0; j < k; j++) {
            const double *p = slots + per * (s * k + j);
            A[i * k + j] = g->a_max[i] * (2.0 * p[0] - 1.0);
            if (g->fixed) {
                theta[i * k + j] = g->th_min + p[1] * (g->th_max - g->th_min);
            } else {
                T[i * k + j] = g->T_min + p[1] * (g->T_max - g->T_min);
                theta[i * k + j] = g->th_min + p[2] * (g->th_max - g->th_min);
            }
        }
    }
    if (g->combined) {
        /* A radial projection onto {S ≤ p}: S is a maximum of linear functions of |A|, so the
         * scale is continuous in u; an exact factor p/S keeps S(A) = p up to rounding. */
        double S = mlc_gait_strain_bound(g, k, A);
        if (S > g->p) {
            double c = g->p / S;
            for (int i = 0; i < m * k; i++)
                A[i] *= c;
        }
    }
}
