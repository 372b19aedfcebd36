/* A source of the job layer, not a test, that reaches for the simulator's test hooks: it must
 * NOT build, because src/sim/testing/ is an include directory of the test targets alone. */
#include "sim_testing.h"

int mlc_door_testing(void);
int mlc_door_testing(void) {
    return 0;
}
