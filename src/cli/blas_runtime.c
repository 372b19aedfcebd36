/* blas_runtime.c: OpenBLAS's thread count and kernels (blas_runtime.h). */
#include "blas_runtime.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* A symbol of the process (OpenBLAS's, when libblas.so.3 forwards to it), or NULL. */
static void *process_symbol(const char *name) {
    void *self = dlopen(NULL, RTLD_LAZY);
    if (!self) return NULL;
    void *sym = dlsym(self, name);
    dlclose(self); /* the main program's handle: its symbols stay mapped */
    return sym;
}

void mlc_blas_pin_threads(void) {
    void *sym = process_symbol("openblas_set_num_threads");
    if (sym) {
        void (*set_threads)(int);
        memcpy(&set_threads, &sym, sizeof set_threads); /* object → function pointer, portably */
        set_threads(1);
    }
}

const char *mlc_blas_core_name(void) {
    void *sym = process_symbol("openblas_get_corename");
    if (!sym) return NULL;
    char *(*corename)(void);
    memcpy(&corename, &sym, sizeof corename);
    return corename();
}

/* The best kernels OpenBLAS has for what this CPU (and its operating system) supports, or NULL
 * when there is nothing better than the fallback. */
static const char *kernels_for_this_cpu(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512cd"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

void mlc_blas_choose_kernels(char **argv) {
    const char *set = getenv("OPENBLAS_CORETYPE");
    if (set && *set) return; /* the user's choice, or this function's own restart */
    const char *core = mlc_blas_core_name();
    if (!core || strcasecmp(core, "Prescott") != 0) return; /* another BLAS, or a known CPU */
    const char *want = kernels_for_this_cpu();
    if (!want || setenv("OPENBLAS_CORETYPE", want, 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* no restart: do not pass the choice on to children */
}
