/* gait.c: decoding a normalized CMA-ES point into sinusoid parameters (METHOD.md §4, App. H).
 * Everything reported is inside the bounds because CMA-ES hands us points in [0,1]^n (its
 * bound transform) and every map below is monotone from [0,1] onto the parameter's box. */
#include "modalloco/gait.h"

#include <math.h>
#include <string.h>

mlc_status mlc_gait_space_init(mlc_gait_space *g, int m, int k, int q, const double *a_max,
                               double T_min, double T_max, double th_min, double th_max,
                               const double *fixed_periods, int nfixed, mlc_err *err) {
    memset(g, 0, sizeof *g);
    if (m < 1 || m > MLC_GAIT_MAX_MODES)
        return mlc_errf(err, MLC_EINVAL, "actuation.modes: %d modes, expected 1..%d", m,
                        MLC_GAIT_MAX_MODES);
    if (k < 1 || k > MLC_GAIT_MAX_SINUSOIDS)
        return mlc_errf(err, MLC_EINVAL, "actuation.sinusoids: %d, expected 1..%d", k,
                        MLC_GAIT_MAX_SINUSOIDS);
    if (q < 0 || q > m)
        return mlc_errf(err, MLC_EINVAL, "actuation.select: %d slots but only %d modes; use "
                        "0..%d", q, m, m);
    if (!(T_min > 0) || !(T_max >= T_min))
        return mlc_errf(err, MLC_EINVAL, "actuation.period_range: [%g, %g] must satisfy "
                        "0 < min <= max", T_min, T_max);
    if (!(th_max >= th_min))
        return mlc_errf(err, MLC_EINVAL, "actuation.phase_range: [%g, %g] must satisfy "
                        "min <= max", th_min, th_max);
    if (nfixed != 0 && nfixed != 1 && nfixed != m * k)
        return mlc_errf(err, MLC_EINVAL, "actuation.fixed_periods: %d values; give none, one "
                        "for all, or one per mode and sinusoid (%d × %d = %d)", nfixed, m, k,
                        m * k);
    for (int i = 0; i < nfixed; i++)
        if (!(fixed_periods[i] > 0))
            return mlc_errf(err, MLC_EINVAL, "actuation.fixed_periods[%d] = %g must be > 0", i,
                            fixed_periods[i]);
    for (int i = 0; i < m; i++)
        if (!(a_max[i] > 0))
            return mlc_errf(err, MLC_EINVAL, "amplitude limit of mode %d is %g; the mode has "
                            "no strain (check the mesh)", i, a_max[i]);
    g->m = m;
    g->k = k;
    g->q = q;
    g->fixed = nfixed > 0;
    for (int i = 0; i < m * k; i++) g->T_fixed[i] = nfixed == 1 ? fixed_periods[0]
                                                   : nfixed > 1 ? fixed_periods[i] : 0.0;
    g->T_min = T_min;
    g->T_max = T_max;
    g->th_min = th_min;
    g->th_max = th_max;
    memcpy(g->a_max, a_max, (size_t)m * sizeof(double));
    int per = g->fixed ? 2 : 3;
    g->n = q > 0 ? m + per * q * k : per * m * k;
    return MLC_OK;
}

int mlc_gait_driven_modes(const mlc_gait_space *g, const double *u, int *modes) {
    if (g->q == 0) {
        for (int i = 0; i < g->m; i++) modes[i] = i;
        return g->m;
    }
    /* Selection of the q largest participations; insertion order keeps ties by index. */
    int chosen = 0;
    for (int s = 0; s < g->q; s++) {
        int best = -1;
        for (int i = 0; i < g->m; i++) {
            int taken = 0;
            for (int c = 0; c < chosen; c++) taken |= modes[c] == i;
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
}

void mlc_gait_perturb(int n, double *A, double *T, double *theta, mlc_rng *rng) {
    double amax = 0.0;
    for (int i = 0; i < n; i++) amax = fmax(amax, fabs(A[i]));
    for (int i = 0; i < n; i++) {
        /* Always three draws, so sinusoid i sees the same numbers whatever the others are. */
        double na = mlc_rng_normal(rng), nt = mlc_rng_normal(rng), np = mlc_rng_normal(rng);
        if (A[i] == 0.0) continue;
        A[i] += na * (MLC_GAIT_NOISE_A_REL * fabs(A[i]) + MLC_GAIT_NOISE_A_MAX * amax);
        T[i] *= 1.0 + MLC_GAIT_NOISE_T_REL * nt;
        theta[i] += MLC_GAIT_NOISE_PHASE * np;
    }
}
