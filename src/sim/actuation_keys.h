/* actuation_keys.h: the configuration keys actuation.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_ACTUATION_KEYS_H
#define MODALLOCO_ACTUATION_KEYS_H

#include "keys.h"

#define MLC_CONFIG_MAX_MODES 64    /* m, len(mode_list), number of parameter entries */
#define MLC_CONFIG_MAX_SINUSOIDS 8 /* k */
#define MLC_CONFIG_MAX_FIXED_PERIODS (MLC_CONFIG_MAX_MODES * MLC_CONFIG_MAX_SINUSOIDS)

/* actuation.amplitude_bound, in the order of its names "combined|per_signal". */
enum { MLC_BOUND_COMBINED = 0, MLC_BOUND_PER_SIGNAL = 1 };

/* One sinusoid of Eq. 6: A sin(2π (t / T + θ)). */
typedef struct mlc_config_sinusoid {
    double amplitude; /* A (mode coordinate units) */
    double period;    /* T, seconds, > 0 */
    double phase;     /* θ, cycles */
} mlc_config_sinusoid;

/* One entry of actuation.parameters / params.json "parameters". */
typedef struct mlc_config_param {
    int mode;       /* vibration mode index (0 = first non-rigid), ≥ 0 */
    int nsinusoids; /* 1..MLC_CONFIG_MAX_SINUSOIDS */
    mlc_config_sinusoid sinusoids[MLC_CONFIG_MAX_SINUSOIDS]; /* first nsinusoids used */
} mlc_config_param;

typedef struct mlc_config_actuation {
    int modes;                           /* actuation.modes: m, 0..64 (0 only with
                                          * local_modes > 0) */
    int local_modes;                     /* actuation.local_modes: m_r per region, 0 = off */
    double localization;                 /* actuation.localization: weight factor c, >= 0 */
    int mode_list[MLC_CONFIG_MAX_MODES]; /* actuation.mode_list: explicit indices, ≥ 0 */
    int nmode_list;                      /* its length; > 0 overrides `modes` */
    int sinusoids;                       /* actuation.sinusoids: k, 1..8 */
    double period_range[2];              /* actuation.period_range: [min, max] s */
    double phase_range[2];               /* actuation.phase_range: [min, max] cycles */
    double amplitude_p;                  /* actuation.amplitude_p: p of App. H, > 0 */
    int amplitude_bound;                 /* actuation.amplitude_bound: MLC_BOUND_COMBINED
                                          * (p bounds the sum of all signals, gait.h) or
                                          * MLC_BOUND_PER_SIGNAL (the paper: each signal) */
    double ramp;                         /* actuation.ramp: ramp-in seconds, ≥ 0 (0 off) */
    double fixed_periods[MLC_CONFIG_MAX_FIXED_PERIODS]; /* actuation.fixed_periods, > 0 each;
                                                         * one for all, or mode-major [i*k + j] */
    int nfixed_periods;                                 /* its length: 0, 1 or m·k */
    int select;                                         /* actuation.select: q, 0 = off, ≤ m */
    mlc_config_param parameters[MLC_CONFIG_MAX_MODES];  /* actuation.parameters */
    int nparameters;                                    /* its length, 0 = none */
} mlc_config_actuation;

extern const mlc_key_section mlc_actuation_key_section; /* keys actuation.* */

#endif
