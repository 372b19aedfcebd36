/* cpu.c: the kernel-path decision (cpu_internal.h), made once per process. */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* MLC_NO_AVX2 or MLC_NO_FMA set to anything but "" or "0". */
static int env_on(const char *name) {
    const char *env = getenv(name);
    return env && *env && strcmp(env, "0") != 0;
}

static int decide_fma(void) {
#ifdef MLC_HAVE_AVX2_CLONES
    if (env_on("MLC_NO_FMA")) return 0;
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") ? 1 : 0;
#else
    return 0;
#endif
}

int mlc__cpu_use_fma(void) {
    static int use = -1;
    if (use < 0) use = decide_fma();
    return use;
}

static int decide(void) {
#ifdef MLC_HAVE_AVX2_CLONES
    if (env_on("MLC_NO_AVX2") || !mlc__cpu_use_fma()) return 0;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}

int mlc__cpu_use_avx2(void) {
    static int use = -1;
    if (use < 0) use = decide();
    return use;
}
