/* A source of the optimize layer that reaches for the simulator's private header: it must NOT
 * build, because src/sim/internal/ is no include directory of any module (only the sim sources
 * name it, by relative path). */
#include "sim_internal.h"

int mlc_door_private(void);
int mlc_door_private(void) {
    return 0;
}
