/* actuation.c: the actuation signal of Eq. 6, ā(t) = the sum of sinusoids per mode, with the
 * optional ramp-in (sim.h: mlc_actuation_eval, mlc_actuation_ramp). Its own file because both
 * the step (sim_step.c) and the energy ledger (sim_energy.c) evaluate it; neither needs the
 * other for that. */
#include <math.h>

#include "detmath.h"
#include "sim.h"

double mlc_actuation_ramp(double t, double ramp) {
    if (!(ramp > 0) || t >= ramp) return 1.0;
    if (t <= 0) return 0.0;
    double x = t / ramp;
    return x * x * x * (10 + x * (-15 + 6 * x)); /* quintic smoothstep: C² at both ends */
}

void mlc_actuation_eval(const mlc_actuation *act, int m, double t, double ramp, double *abar) {
    for (int i = 0; i < m; i++)
        abar[i] = 0;
    abar[m] = 1;
    if (!act) return;
    const double env = mlc_actuation_ramp(t, ramp);
    if (env == 0) return;
    int mm = MLC_MIN(act->m, m);
    /* The phases of every term of a chunk of modes, their sines in one call (mlc_sin_n: four
     * at a time), then each mode's sum over its terms in order, zero amplitudes skipped: the
     * bits of a sine per term. */
    enum { CHUNK = 64 };
    double arg[CHUNK];
    const int k = act->k, per = MLC_MAX(1, CHUNK / MLC_MAX(1, k));
    for (int i0 = 0; i0 < mm; i0 += per) {
        const int i1 = MLC_MIN(mm, i0 + per), nterms = (i1 - i0) * k;
        if (k > CHUNK) { /* more sinusoids than a chunk holds: one mode at a time, scalar */
            for (int i = i0; i < i1; i++) {
                double s = 0;
                for (int j = 0; j < k; j++) {
                    double A = act->A[i * k + j];
                    if (A == 0) continue;
                    s += A * mlc_sin(2 * MLC_PI * (t / act->T[i * k + j] + act->theta[i * k + j]));
                }
                abar[i] = env * s;
            }
            continue;
        }
        for (int q = 0; q < nterms; q++)
            arg[q] = 2 * MLC_PI * (t / act->T[i0 * k + q] + act->theta[i0 * k + q]);
        mlc_sin_n(arg, arg, nterms);
        for (int i = i0; i < i1; i++) {
            double s = 0;
            for (int j = 0; j < k; j++) {
                double A = act->A[i * k + j];
                if (A == 0) continue;
                s += A * arg[(i - i0) * k + j];
            }
            abar[i] = env * s;
        }
    }
}
