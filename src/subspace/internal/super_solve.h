/* super_solve.h: x = A⁻¹ b with a CHOLMOD supernodal factor A = P L Lᵀ Pᵀ, split over
 * independent subtrees of the supernodes' elimination tree, with cholmod_solve2's bits for any
 * thread count.
 *
 * Why: the vibration modes' Lanczos loop (eigen.c) applies (K − σM)⁻¹ once per iteration, and
 * on large meshes those solves are half of the precompute's critical path (the koala's 36 solves
 * with an 83M-entry factor, 4.9 s), run on one thread while the other one has finished its
 * branch. A solve reads the whole factor twice and does little arithmetic per entry, so two
 * threads reading two halves of it go nearly twice as fast.
 *
 * How, keeping CHOLMOD's bits. Per supernode s, CHOLMOD's solve (nrhs = 1) does, forward:
 * gather the entries of x in the rows below s's columns into E, x₁ ← L₁⁻¹ x₁ (dtrsv),
 * E ← E − L₂ x₁ (dgemv with β = 1), scatter E back; backward: gather, x₁ ← x₁ − L₂ᵀ E (dgemv),
 * x₁ ← L₁⁻ᵀ x₁ (dtrsv). This module makes exactly these BLAS calls with the same operands.
 *  - Backward, each supernode reads only its ancestors' entries of x, which are final once the
 *    ancestors are done: the top (the supernodes outside the chosen subtrees, an ancestor-closed
 *    set) runs first, then the subtrees side by side. Each call is the serial one.
 *  - Forward, a subtree's supernodes write rows of their own subtree and rows of the top. The
 *    subtrees run side by side and scatter only their own rows. Then one thread walks all
 *    supernodes in CHOLMOD's order: a top supernode runs as in the serial solve; a subtree
 *    supernode with rows in the top repeats its dgemv (the same call: x₁ is final, and the rows
 *    of the top hold what the serial solve had there at that point) and scatters only those
 *    rows. OpenBLAS's dgemv rounds each row from that row's own entry of y, row by row, but not
 *    as y + (the product computed apart) (its kernels add partial sums into y), so a row's bits
 *    need the same y and the same call, not just the same product: hence the repeated call
 *    rather than a product kept aside. The subtrees at the very start of CHOLMOD's order
 *    (from supernode 0 on, without a gap) are the exception: nothing comes before them, so
 *    the first thread runs them scattering every row, the top's included, and they repeat
 *    nothing; the other threads then gather the top's rows as 0 (their rows of a dgemv are
 *    their own) rather than read what the first thread is writing.
 * The repeated dgemvs are the price (the subtrees' supernodes next to the top); the split is
 * chosen to keep the serial part (top, repeats) plus the largest thread's subtrees smallest.
 *
 * The split is found from the roots down, as cholesky_solve.h's: a subtree is opened (its root
 * joins the top, its children become candidates), each step the one of the largest few whose
 * opening gives the lowest estimate, and the best split seen is kept. The estimate counts the
 * entries read: the top's twice, the repeats once, and the most loaded thread's subtrees twice,
 * thread 0 taking the best run of subtrees at the start and the rest dealt largest first.
 * Supernodes must be postordered (every subtree a contiguous range ending at its root), as
 * CHOLMOD's analysis makes them; otherwise, or when no split pays (an estimate above 0.9 of a
 * serial solve), the solve is cholmod_solve2's own. On the koala's vibration factor (83M
 * entries, 2 threads) the estimate is 0.66 of a serial solve and a solve takes 88 ms against
 * CHOLMOD's 123 ms.
 */
#ifndef MODALLOCO_SUPER_SOLVE_H
#define MODALLOCO_SUPER_SOLVE_H

#include <cholmod.h>

#include "base.h"

/* At most this many threads share a solve. */
#define MLC_SUPERSOLVE_MAX_THREADS 64

/* Factors with fewer entries are solved by cholmod_solve2 (a split would not pay for its
 * thread team's start). */
#define MLC_SUPERSOLVE_MIN_ENTRIES 2000000.0

/* Each step of the split's search tries opening this many of the largest candidates. */
#define MLC_SUPERSOLVE_TRIED 8

typedef struct mlc_supersolve {
    int n, nsuper;
    int bins;     /* 1: cholmod_solve2 (no split); else the threads of the split */
    int *owner;   /* nsuper: the thread of a chosen subtree's supernode; −1 for the top */
    int *row_end; /* nsuper: a subtree supernode's rows from here up are the top's */
    char *repeat; /* nsuper: 1 for a subtree supernode with rows in the top */
    int *ranges;  /* 2 × nranges: [first, last] supernode of each chosen subtree, by thread */
    int *bin_ptr; /* bins + 1: thread b's ranges are bin_ptr[b] .. bin_ptr[b+1] − 1 */
    int nranges;
    size_t esize;          /* doubles of each thread's gather buffer (L->maxesize, rounded) */
    double *xp;            /* n: the permuted right-hand side, then solution */
    double *ebuf;          /* bins × esize, each 64-byte aligned (inside `ebuf_raw`) */
    void *ebuf_raw;        /* the allocation behind ebuf */
    double serial_entries; /* estimates in factor entries read: a serial solve, */
    double split_entries;  /* and the split's critical path (top, repeats, largest thread) */
} mlc_supersolve;

/* Plans solves with L (supernodal, LLᵀ, real; numeric values are read at solve time, so a
 * refactorization with the same analysis keeps the plan) for `threads` threads. A factor that
 * is not supernodal, has fewer than min_entries entries (MLC_SUPERSOLVE_MIN_ENTRIES; tests
 * pass less), is not postordered, or that no split speeds up gets bins = 1. Errors:
 * MLC_ENOMEM (ss then holds nothing to free). */
mlc_status mlc_supersolve_plan(mlc_supersolve *ss, const cholmod_factor *L, int threads,
                               double min_entries, mlc_err *err);

/* x = A⁻¹ b (n entries each; b and x may be the same array) with the planned split, the bits
 * of cholmod_solve2(CHOLMOD_A, L, b) for any thread count. bins = 1: returns 0 and does
 * nothing (the caller solves with CHOLMOD). Returns 1 when it solved. Allocates nothing. */
int mlc_supersolve_solve(mlc_supersolve *ss, const cholmod_factor *L, const double *b, double *x);

void mlc_supersolve_destroy(mlc_supersolve *ss);

#endif
