/* A source of the optimize layer that includes only public headers of lower modules: it must
 * build (the doors_public_header test), so that the failures of the other door sources are the
 * include they try and nothing else. */
#include "fem.h"
#include "sim.h"

int mlc_door_public(void);
int mlc_door_public(void) {
    return (int)sizeof(mlc_sim_settings) > 0;
}
