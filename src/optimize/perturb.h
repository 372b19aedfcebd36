/* perturb.h: the fixed parameter noise that judges how robust a gait is (the credibility
 * block's `robustness`, credibility.h), exposed on its own so an optimizer can score candidates
 * under the same noise.
 *
 * For m modes × k sinusoids (index i*k+j, as mlc_actuation), with a_big = max |A| over all
 * m·k amplitudes and independent standard normals N drawn from `rng`:
 *   A'     = A + N · (0.01 |A| + 0.001 a_big)     (idle sinusoids, A = 0, get the second term)
 *   T'     = T · max(1 + 0.005 N, 0.5)            (periods stay > 0; the floor needs N < −100)
 *   θ'     = θ + 0.005 N                          (cycles)
 * Draw order, which fixes the result for a given generator state: for each index in order,
 * the amplitude's, the period's, then the phase's normal. 3·m·k normals in all.
 */
#ifndef MODALLOCO_PERTURB_H
#define MODALLOCO_PERTURB_H

#include "base.h"

#define MLC_PERTURB_AMP_REL 0.01     /* amplitude noise, fraction of |A| */
#define MLC_PERTURB_AMP_BIG 0.001    /* amplitude noise, fraction of the largest |A| */
#define MLC_PERTURB_PERIOD_REL 0.005 /* period noise, relative */
#define MLC_PERTURB_PHASE 0.005      /* phase noise, cycles */
#define MLC_PERTURB_PERIOD_FLOOR 0.5 /* smallest factor a period may be multiplied by */

/* Perturb m·k sinusoids (A, T, θ: m×k each) into outA, outT, outθ (m×k each; may alias the
 * inputs). Advances rng by 3·m·k normals. Allocation-free. */
void mlc_gait_perturb(mlc_rng *rng, int m, int k, const double *A, const double *T,
                      const double *theta, double *outA, double *outT, double *outTheta);

#endif
