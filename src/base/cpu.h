/* cpu.h: the one place that decides which compiled copy of the vectorized kernels
 * runs (sim_step.c's step kernels, polar.c's lane loops). Public to the modules that
 * carry such kernels (sim); a CPU-dependent kernel path must follow this one decision. */
#ifndef MODALLOCO_CPU_H
#define MODALLOCO_CPU_H

/* Whether this build has AVX2 copies of the kernels at all: x86-64 with GCC, unless built with
 * -DMLC_NO_KERNEL_CLONES. Elsewhere only the 2-wide copy exists. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                             \
    !defined(MLC_NO_KERNEL_CLONES)
#define MLC_HAVE_AVX2_CLONES 1
#endif

/* 1 when the AVX2 copies run: the build has them (MLC_HAVE_AVX2_CLONES), the CPU supports AVX2
 * and FMA (mlc__cpu_use_fma), and MLC_NO_AVX2 is unset, empty or "0" in the environment
 * (MLC_NO_AVX2=1 forces the baseline, e.g. to measure it or to compare the paths). Decided on
 * the first call and fixed for the life of the process, so every module takes the same path;
 * the first call happens in the modules' load-time constructors, before any thread starts. */
int mlc__cpu_use_avx2(void);

/* 1 when the CPU's FMA instruction may be used (the build has the clones, the CPU has FMA and
 * MLC_NO_FMA is unset, empty or "0"): the step's kernels compute fused multiply-adds on every
 * path, with the instruction where this is 1 and emulated, to the same bits, where it is 0
 * (fma_exact.h; MLC_NO_FMA=1 forces that copy, and the baseline, to test or measure it). */
int mlc__cpu_use_fma(void);

#endif
