/* gait.h: the search space of the optimizer (docs/method.md §4): how a point u ∈ [0,1]^n of the
 * normalized CMA-ES box maps to per-mode sinusoid parameters (A, T, θ).
 *
 * Layouts of u (all entries in [0,1]; x0 = box centre):
 *  - free (default): for each mode i, each sinusoid j: (A, T, θ) → n = 3mk;
 *  - fixed periods: (A, θ) per mode and sinusoid → n = 2mk;
 *  - selection (q > 0 slots): first m participations σ_i, then per slot s and sinusoid j
 *    (A, T, θ) or (A, θ) → n = m + 3qk or m + 2qk. Slot s drives the mode with the s-th
 *    largest σ (ties: smaller mode first); undriven modes have A = 0.
 * Maps: A = a_max,i (2u − 1), T = T_min + u (T_max − T_min), θ = θ_min + u (θ_max − θ_min).
 *
 * Amplitude bound (App. H, Eq. 76). a_max,i = p / max_e ‖∇(D_i)_e‖_F lets each signal alone
 * reach strain p in its worst tet; the m·k signals add up, so on their own these per-signal
 * limits ("per_signal", the paper's) allow strains of several p. With a combined bound the
 * decoded amplitudes are then scaled by min(1, p / S(A)), where
 *   S(A) = max_e Σ_i (Σ_j |A_ij|) ‖∇(D_i)_e‖_F
 * is a bound on the worst tet's actuation strain max_{e,t} ‖Σ_i a_i(t) ∇(D_i)_e‖_F over all
 * times (|a_i(t)| ≤ Σ_j |A_ij|, then the triangle inequality in each tet). Every decoded
 * point then satisfies S ≤ p, a single signal still reaches its a_max,i, and the map stays
 * continuous (piecewise smooth) in u, as CMA-ES needs.
 */
#ifndef MODALLOCO_GAIT_H
#define MODALLOCO_GAIT_H

#include "base.h"

#define MLC_GAIT_MAX_MODES 64
#define MLC_GAIT_MAX_SINUSOIDS 8

typedef struct mlc_gait_space {
    int m, k;  /* modes of the subspace, sinusoids per mode */
    int q;     /* selection slots (0 = every mode driven) */
    int fixed; /* 1 when periods are fixed */
    double T_fixed[MLC_GAIT_MAX_MODES * MLC_GAIT_MAX_SINUSOIDS]; /* m×k periods when fixed */
    double T_min, T_max;                                         /* seconds */
    double th_min, th_max;                                       /* cycles */
    double a_max[MLC_GAIT_MAX_MODES];                            /* per-mode amplitude limits */
    int n;                                                       /* dimension of u */
    /* Combined bound (mlc_gait_space_set_strain): p, and the per-tet strain of every mode,
     * strain[e·m + i] = ‖∇(D_i)_e‖_F (nt×m, tet-major, borrowed: the caller keeps it alive
     * as long as the space is used). strain = NULL: no combined bound. */
    int combined; /* 1: scale decoded amplitudes so that S(A) ≤ p */
    double p;
    int nt;
    const double *strain;
} mlc_gait_space;

/* What a gait space is made from (the actuation.* settings; the arrays are borrowed for the
 * call, mlc_gait_space_init copies them). */
typedef struct mlc_gait_def {
    int m, k;                    /* modes of the subspace, sinusoids per mode */
    int q;                       /* selection slots (0 = every mode driven) */
    const double *a_max;         /* m per-mode amplitude limits */
    double T_min, T_max;         /* period range, seconds */
    double th_min, th_max;       /* phase range, cycles */
    const double *fixed_periods; /* nfixed values: 0 (free), 1 (one for all) or m·k */
    int nfixed;
} mlc_gait_def;

/* Fill a gait space from `def`. Returns MLC_EINVAL with a message naming the setting on
 * inconsistent input. */
mlc_status mlc_gait_space_init(mlc_gait_space *g, const mlc_gait_def *def, mlc_err *err);

/* Attach the per-tet mode strains (see above; nt×m, borrowed) and the strain limit p > 0;
 * `combined` = 1 makes decode enforce S(A) ≤ p. Returns MLC_EINVAL on bad sizes or p. */
mlc_status mlc_gait_space_set_strain(mlc_gait_space *g, int nt, const double *strain, double p,
                                     int combined, mlc_err *err);

/* S(A) of the amplitudes A (m×k2, index i*k2+j; any k2 ≥ 1): the bound above on the worst
 * tet's actuation strain over all times. Needs the strains attached; O(nt·m). */
double mlc_gait_strain_bound(const mlc_gait_space *g, int k2, const double *A);

/* Whether parameters (m×k2 each) lie in the optimizer's search box: amplitudes within
 * a_max,i (and S(A) ≤ p with the combined bound), periods in the range (or the fixed values),
 * phases in the range, at most q driven modes. Returns 1 and a description of the first
 * violation in msg (capacity cap) when outside. Modes are named names[i] in the message
 * (NULL: their position 0..m-1). */
int mlc_gait_outside(const mlc_gait_space *g, int k2, const double *A, const double *T,
                     const double *theta, const int *names, char *msg, size_t cap);

/* Decode u (n) into A, T, θ (m×k each, index i*k+j). Allocation-free; O(nt·m) with the
 * combined bound. */
void mlc_gait_decode(const mlc_gait_space *g, const double *u, double *A, double *T, double *theta);

/* Modes driven by u (selection): writes up to q mode positions (0..m-1) into `modes`,
 * returns the count (m when q == 0, listing all modes). */
int mlc_gait_driven_modes(const mlc_gait_space *g, const double *u, int *modes);

#endif
