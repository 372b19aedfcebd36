/* A source of the job layer that calls CHOLMOD directly: it must NOT build, because CHOLMOD is
 * linked PRIVATE to mesh, subspace and sim, so its headers are not on job's include path. */
#include <cholmod.h>

int mlc_door_third_party(void);
int mlc_door_third_party(void) {
    return CHOLMOD_MAIN_VERSION;
}
