/* perturb.c: the robustness noise of perturb.h. */
#include "perturb.h"

#include <math.h>

void mlc_gait_perturb(mlc_rng *rng, int m, int k, const double *A, const double *T,
                      const double *theta, double *outA, double *outT, double *outTheta) {
    const int n = m * k;
    /* The largest amplitude first: outA may alias A. */
    double big = 0;
    for (int i = 0; i < n; i++)
        big = fmax(big, fabs(A[i]));
    for (int i = 0; i < n; i++) {
        double na = mlc_rng_normal(rng), nt = mlc_rng_normal(rng), nth = mlc_rng_normal(rng);
        outA[i] = A[i] + na * (MLC_PERTURB_AMP_REL * fabs(A[i]) + MLC_PERTURB_AMP_BIG * big);
        outT[i] = T[i] * fmax(1 + MLC_PERTURB_PERIOD_REL * nt, MLC_PERTURB_PERIOD_FLOOR);
        outTheta[i] = theta[i] + MLC_PERTURB_PHASE * nth;
    }
}
