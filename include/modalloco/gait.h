/* gait.h: the search space of the optimizer (METHOD.md §4): how a point u ∈ [0,1]^n of the
 * normalized CMA-ES box maps to per-mode sinusoid parameters (A, T, θ).
 *
 * Layouts of u (all entries in [0,1]; x0 = box centre):
 *  - free (default): for each mode i, each sinusoid j: (A, T, θ) → n = 3mk;
 *  - fixed periods: (A, θ) per mode and sinusoid → n = 2mk;
 *  - selection (q > 0 slots): first m participations σ_i, then per slot s and sinusoid j
 *    (A, T, θ) or (A, θ) → n = m + 3qk or m + 2qk. Slot s drives the mode with the s-th
 *    largest σ (ties: smaller mode first); undriven modes have A = 0.
 * Maps: A = a_max,i (2u − 1), T = T_min + u (T_max − T_min), θ = θ_min + u (θ_max − θ_min).
 */
#ifndef MODALLOCO_GAIT_H
#define MODALLOCO_GAIT_H

#include "modalloco/base.h"

#define MLC_GAIT_MAX_MODES 64
#define MLC_GAIT_MAX_SINUSOIDS 8

typedef struct mlc_gait_space {
    int m, k;                /* modes of the subspace, sinusoids per mode */
    int q;                   /* selection slots (0 = every mode driven) */
    int fixed;               /* 1 when periods are fixed */
    double T_fixed[MLC_GAIT_MAX_MODES * MLC_GAIT_MAX_SINUSOIDS]; /* m×k periods when fixed */
    double T_min, T_max;     /* seconds */
    double th_min, th_max;   /* cycles */
    double a_max[MLC_GAIT_MAX_MODES]; /* per-mode amplitude limits */
    int n;                   /* dimension of u */
} mlc_gait_space;

/* Fill a gait space. `fixed_periods` has nfixed values: 0 (free), 1 (one for all) or m·k.
 * Returns MLC_EINVAL with a message naming the setting on inconsistent input. */
mlc_status mlc_gait_space_init(mlc_gait_space *g, int m, int k, int q, const double *a_max,
                               double T_min, double T_max, double th_min, double th_max,
                               const double *fixed_periods, int nfixed, mlc_err *err);

/* Decode u (n) into A, T, θ (m×k each, index i*k+j). Allocation-free. */
void mlc_gait_decode(const mlc_gait_space *g, const double *u, double *A, double *T,
                     double *theta);

/* The perturbation of a gait that robustness is measured with (and the optimizer's robust
 * scoring replays): in place on A, T, θ (n = m·k entries each), drawing three normals per
 * sinusoid in index order (A, T, θ) from rng:
 *   A += N·(MLC_GAIT_NOISE_A_REL |A| + MLC_GAIT_NOISE_A_MAX max_i |A_i|),
 *   T *= 1 + N·MLC_GAIT_NOISE_T_REL,   θ += N·MLC_GAIT_NOISE_PHASE (cycles).
 * Sinusoids with A = 0 (undriven modes) stay idle: they are not part of the gait. The result
 * may leave the search box slightly (periods stay positive: |N| would need to exceed 200).
 * Allocation-free. */
#define MLC_GAIT_NOISE_A_REL 0.01
#define MLC_GAIT_NOISE_A_MAX 0.001
#define MLC_GAIT_NOISE_T_REL 0.005
#define MLC_GAIT_NOISE_PHASE 0.005
void mlc_gait_perturb(int n, double *A, double *T, double *theta, mlc_rng *rng);

/* Modes driven by u (selection): writes up to q mode positions (0..m-1) into `modes`,
 * returns the count (m when q == 0, listing all modes). */
int mlc_gait_driven_modes(const mlc_gait_space *g, const double *u, int *modes);

#endif
