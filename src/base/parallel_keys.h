/* parallel_keys.h: the configuration keys parallel.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_PARALLEL_KEYS_H
#define MODALLOCO_PARALLEL_KEYS_H

#include "keys.h"

typedef struct mlc_config_parallel {
    int threads; /* parallel.threads: 0 = all cores, ≥ 0 */
    /* --max-memory (not a key: a bound of the machine, not of the run): bytes the precompute
     * may use, 0 = the default bound (budget.h: 80% of the physical, cgroup or address-space
     * limit). */
    double max_memory;
} mlc_config_parallel;

extern const mlc_key_section mlc_parallel_key_section; /* keys parallel.* */

#endif
