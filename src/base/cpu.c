/* cpu.c: the kernel-path decision (cpu.h), made once per process. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#ifdef MLC_HAVE_AVX2_CLONES
/* MLC_NO_AVX2 or MLC_NO_FMA set to anything but "" or "0". */
static int env_on(const char *name) {
    const char *env = getenv(name);
    return env && *env && strcmp(env, "0") != 0;
}
#endif

/* Both decisions at once, on the first call of either (-1: not decided yet). */
static int use_fma = -1, use_avx2 = -1;

static void decide(void) {
    use_fma = use_avx2 = 0;
#ifdef MLC_HAVE_AVX2_CLONES
    __builtin_cpu_init();
    use_fma = !env_on("MLC_NO_FMA") && __builtin_cpu_supports("fma");
    use_avx2 = use_fma && !env_on("MLC_NO_AVX2") && __builtin_cpu_supports("avx2");
#endif
}

int mlc__cpu_use_fma(void) {
    if (use_fma < 0) decide();
    return use_fma;
}

int mlc__cpu_use_avx2(void) {
    if (use_avx2 < 0) decide();
    return use_avx2;
}
