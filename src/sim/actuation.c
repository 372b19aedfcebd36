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
    for (int i = 0; i < mm; i++) {
        double s = 0;
        for (int j = 0; j < act->k; j++) {
            double A = act->A[i * act->k + j];
            if (A == 0) continue;
            s +=
                A * mlc_sin(2 * MLC_PI * (t / act->T[i * act->k + j] + act->theta[i * act->k + j]));
        }
        abar[i] = env * s;
    }
}
