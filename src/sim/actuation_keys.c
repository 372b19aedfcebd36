/* actuation_keys.c: the rows of the keys actuation.* (keys.h) and the rules between them. */
#include "actuation_keys.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_actuation
static const mlc_key actuation_keys[] = {
    {.name = "actuation.modes",
     .type_name = "int",
     .default_json = "4",
     .range = "1..64; 0 with actuation.local_modes",
     .meaning = "m, the first m non-rigid vibration modes (global); with actuation.local_modes "
                "> 0 they are replaced by the local modes (m = 0) unless actuation.modes or "
                "actuation.mode_list is given too",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(modes),
     MLC_KEY_BETWEEN('[', 0, 64, ']')},
    {.name = "actuation.local_modes",
     .type_name = "int",
     .default_json = "0",
     .range = "0..64",
     .meaning = "m_r localized vibration modes per body region (0 = off): modes of K + w M_out "
                "that barely move the body outside their region (docs/method.md)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(local_modes),
     MLC_KEY_BETWEEN('[', 0, 64, ']')},
    {.name = "actuation.localization",
     .type_name = "number",
     .default_json = "30",
     .range = ">= 0",
     .meaning = "localization weight of actuation.local_modes as a multiple c of the first "
                "non-zero Laplacian eigenvalue (w = c·λ₁): a mode moves outside its region by "
                "at most √(λ/w) of its motion; 0 = none (one region only)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(localization),
     MLC_KEY_GE(0)},
    {.name = "actuation.mode_list",
     .type_name = "int array",
     .default_json = "[]",
     .range = "at most 64 distinct indices, each >= 0",
     .meaning = "explicit mode indices (0 = first non-rigid), overrides actuation.modes",
     .type = MLC_KEY_INT_ARRAY,
     MLC_KEY_FIELD(mode_list),
     MLC_KEY_COUNT(nmode_list),
     MLC_KEY_ELEMS(mode_list),
     MLC_KEY_GE(0)},
    {.name = "actuation.sinusoids",
     .type_name = "int",
     .default_json = "2",
     .range = "1..8",
     .meaning = "k, sinusoids per mode",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(sinusoids),
     MLC_KEY_BETWEEN('[', 1, 8, ']')},
    {.name = "actuation.period_range",
     .type_name = "[min,max]",
     .default_json = "[0.2, 0.6]",
     .range = "0 < min <= max",
     .meaning = "bounds of the periods T, seconds",
     .type = MLC_KEY_RANGE,
     MLC_KEY_FIELD(period_range),
     MLC_KEY_GT(0),
     .check = MLC_KEY_CHECK_ORDERED},
    {.name = "actuation.phase_range",
     .type_name = "[min,max]",
     .default_json = "[0, 1.5707963]",
     .range = "min <= max",
     .meaning = "bounds of the phases θ, cycles (as Eq. 6 is written)",
     .type = MLC_KEY_RANGE,
     MLC_KEY_FIELD(phase_range),
     .check = MLC_KEY_CHECK_ORDERED},
    {.name = "actuation.amplitude_p",
     .type_name = "number",
     .default_json = "0.7",
     .range = "> 0",
     .meaning = "p of App. H (the paper uses 1)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(amplitude_p),
     MLC_KEY_GT(0)},
    {.name = "actuation.amplitude_bound",
     .type_name = "string",
     .default_json = "\"per_signal\"",
     .range = "\"combined\" or \"per_signal\"",
     .meaning = "what p bounds: \"per_signal\" (the paper's Eq. 75/78: each sinusoid of each mode "
                "alone; the Table 1 examples) or \"combined\" (the strain of all signals together "
                "in the worst tet, a stricter reading of Eq. 76; amplitudes are scaled down when "
                "their sum could exceed p)",
     .type = MLC_KEY_ENUM,
     MLC_KEY_FIELD(amplitude_bound),
     .choices = "combined|per_signal"},
    {.name = "actuation.ramp",
     .type_name = "number",
     .default_json = "0.3",
     .range = ">= 0",
     .meaning = "seconds over which the actuation ramps in smoothly from 0 (C² smoothstep "
                "factor on every a_i(t)); 0 = off",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(ramp),
     MLC_KEY_GE(0)},
    {.name = "actuation.fixed_periods",
     .type_name = "number array",
     .default_json = "[]",
     .range = "each > 0; 0, 1 or m*k values",
     .meaning = "fix T: one value for all, or one per mode and sinusoid (mode-major)",
     .type = MLC_KEY_NUMBER_ARRAY,
     MLC_KEY_FIELD(fixed_periods),
     MLC_KEY_COUNT(nfixed_periods),
     MLC_KEY_ELEMS(fixed_periods),
     MLC_KEY_GT(0)},
    {.name = "actuation.select",
     .type_name = "int",
     .default_json = "0",
     .range = "0..m",
     .meaning = "q > 0: co-optimize which q modes are driven",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(select),
     MLC_KEY_GE(0)},
    {.name = "actuation.parameters",
     .type_name = "array",
     .default_json = "[]",
     .range = "at most 64 entries with distinct modes >= 0, 1..8 sinusoids, periods > 0",
     .meaning = "explicit parameters for simulate (same layout as in params.json)",
     .type = MLC_KEY_PARAMETERS,
     MLC_KEY_FIELD(parameters),
     MLC_KEY_COUNT(nparameters),
     MLC_KEY_ELEMS(parameters)},
};

/* Rules between the actuation keys. m is the number of driven modes. */
static mlc_status actuation_check(const void *settings, mlc_err *err) {
    const mlc_config_actuation *a = settings;
    if (a->modes == 0 && a->nmode_list == 0 && a->local_modes == 0)
        return mlc_errf(err, MLC_EINVAL,
                        "key 'actuation.modes' = 0 leaves nothing to drive; valid: 1..64, or 0 "
                        "together with actuation.local_modes > 0");
    /* With local modes the count depends on the regions, known only when the subspace is
     * built: the gait space checks fixed_periods and select then. */
    if (a->local_modes == 0) {
        int m = a->nmode_list > 0 ? a->nmode_list : a->modes;
        int k = a->sinusoids;
        int nf = a->nfixed_periods;
        if (nf != 0 && nf != 1 && nf != m * k)
            return mlc_errf(err, MLC_EINVAL,
                            "key 'actuation.fixed_periods' has %d values; valid: 0, 1 or m*k = %d "
                            "(m = %d modes, k = %d sinusoids)",
                            nf, m * k, m, k);
        if (a->select > m)
            return mlc_errf(err, MLC_EINVAL,
                            "key 'actuation.select' = %d is out of range; valid: 0..m = 0..%d",
                            a->select, m);
    }
    return MLC_OK;
}

const mlc_key_section mlc_actuation_key_section =
    MLC_KEY_SECTION("actuation", actuation_keys, actuation_check);
