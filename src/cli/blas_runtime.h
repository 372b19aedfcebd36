/* blas_runtime.h: what the program settles about the system BLAS before a command runs.
 *
 * Debian's libblas.so.3 is usually OpenBLAS (through the alternatives system). Its symbols
 * below are looked up at run time, not linked: the library we link against is the generic
 * libblas, which forwards to libopenblas.so.0. With another BLAS these calls do nothing. */
#ifndef MODALLOCO_BLAS_RUNTIME_H
#define MODALLOCO_BLAS_RUNTIME_H

/* Pins OpenBLAS to one thread: its threaded kernels sum in an order that depends on the thread
 * count, so the precompute (and every result) would differ between machines. */
void mlc_blas_pin_threads(void);

/* OpenBLAS picks its kernels for the CPU model when it loads. A release that does not know the
 * model (Debian 12's 0.3.21 on Intel Sapphire and Emerald Rapids, for one) falls back to its
 * SSE3 kernels, "Prescott", which run the precompute's factorizations at about 0.6 times the
 * speed of the AVX-512 ones. When that happened and the CPU has AVX-512 (or AVX2 with FMA),
 * this restarts the program, with the same arguments, with OPENBLAS_CORETYPE naming those
 * kernels ("SkylakeX", "Haswell"): the variable is read only as the library loads, so a
 * restart is the one way to choose. It returns when nothing is to be done or the restart
 * failed (the program then goes on with the fallback kernels). OPENBLAS_CORETYPE set by the
 * user, including to "Prescott", is left alone. Call it first, before any thread or file.
 * Programs that link the library without the CLI (the test tools) choose nothing: give them
 * and the program the same OPENBLAS_CORETYPE where their bits are compared. */
void mlc_blas_choose_kernels(char **argv);

/* The name of the kernels OpenBLAS runs ("SkylakeX", "Zen", "Prescott", ...), or NULL when the
 * BLAS is not OpenBLAS. The string is the library's. */
const char *mlc_blas_core_name(void);

#endif
