/* cpu.c: the kernel-path decision (cpu_internal.h), made once per process. */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

static int decide(void) {
#ifdef MLC_HAVE_AVX2_CLONES
    const char *env = getenv("MLC_NO_AVX2");
    if (env && *env && strcmp(env, "0") != 0) return 0;
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
