/* sim_keys.h: the configuration keys material.*, sim.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_SIM_KEYS_H
#define MODALLOCO_SIM_KEYS_H

#include "keys.h"

#define MLC_CONFIG_MAX_REGIONS 64 /* entries of material.regions */

/* sim.initial_guess, in the order of its names "inertial|previous". */
enum { MLC_GUESS_INERTIAL = 0, MLC_GUESS_PREVIOUS = 1 };

/* One entry of material.regions: the material of the region with the user's label `label`.
 * A value whose bit is not in `set` is not given: the global one (material.*, contact.friction)
 * applies. Unset values are 0, so configs holding the same settings compare equal. */
#define MLC_REGION_MU 1
#define MLC_REGION_GAMMA 2
#define MLC_REGION_DENSITY 4
#define MLC_REGION_FRICTION 8
typedef struct mlc_config_region_material {
    int label;                           /* the region's label as the user numbers it */
    int set;                             /* MLC_REGION_* bits of the values given */
    double mu, gamma, density, friction; /* > 0, > 0, > 0, >= 0 when given */
} mlc_config_region_material;

typedef struct mlc_config_material {
    double density;       /* material.density: ρ, > 0 */
    double mu;            /* material.mu: passive ARAP stiffness μ, > 0 */
    double gamma;         /* material.gamma: actuation stiffness γ, > 0 */
    double poisson_modes; /* material.poisson_modes: Poisson ratio of the mode Hessian, (−1, 0.5) */
    mlc_config_region_material regions[MLC_CONFIG_MAX_REGIONS]; /* material.regions, by label */
    int nregions;                                               /* its length, 0 = none */
} mlc_config_material;

typedef struct mlc_config_sim {
    double dt;          /* sim.dt: h, seconds, > 0 */
    int steps;          /* sim.steps: S, ≥ 1 */
    int iterations;     /* sim.iterations: local-global per step, ≥ 1 */
    double tolerance;   /* sim.tolerance: ‖Δz‖ stop, ≥ 0 (0 = never) */
    int initial_guess;  /* sim.initial_guess: MLC_GUESS_INERTIAL | MLC_GUESS_PREVIOUS */
    double gravity[3];  /* sim.gravity: m/s² */
    double rayleigh[2]; /* sim.rayleigh: [α 1/s, β s], each ≥ 0 */
    int integrator;     /* sim.integrator: MLC_INTEGRATOR_EULER | MLC_INTEGRATOR_BDF2 (sim.h) */
} mlc_config_sim;

extern const mlc_key_section mlc_material_key_section; /* keys material.* */
extern const mlc_key_section mlc_sim_key_section;      /* keys sim.* */

#endif
