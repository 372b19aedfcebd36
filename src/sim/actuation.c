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
    const int k = act->k, nterms = MLC_MIN(act->m, m) * k;
    /* The phases of a chunk of terms, their sines in one call (mlc_sin_n: four at a time),
     * then each term added to its mode's sum in order, zero amplitudes skipped: the bits of a
     * sine and a sum per mode. */
    enum { CHUNK = 64 };
    double sn[CHUNK];
    for (int q0 = 0; q0 < nterms; q0 += CHUNK) {
        const int nq = MLC_MIN(CHUNK, nterms - q0);
        for (int q = 0; q < nq; q++)
            sn[q] = 2 * MLC_PI * (t / act->T[q0 + q] + act->theta[q0 + q]);
        mlc_sin_n(sn, sn, nq);
        for (int q = 0; q < nq; q++)
            if (act->A[q0 + q] != 0) abar[(q0 + q) / k] += act->A[q0 + q] * sn[q];
    }
    for (int i = 0; i < nterms / MLC_MAX(1, k); i++)
        abar[i] *= env;
}
