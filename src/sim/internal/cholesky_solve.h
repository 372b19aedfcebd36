/* cholesky_solve.h: x = Q⁻¹ b with three right-hand sides from a sparse Cholesky factor
 * Q = P L Lᵀ Pᵀ (CHOLMOD's simplicial LLᵀ), on one thread or split over the subtrees of the
 * factor's elimination tree, with the same bits for any thread count.
 *
 * Why split this way: the full-space reference solves one n×n system per iteration (three
 * coordinates at once), and that solve was its one serial part. Column j of L has entries only
 * in rows that are ancestors of j in the elimination tree, so the columns of two disjoint
 * subtrees never touch each other's rows. With a postordered factor (CHOLMOD's default) each
 * subtree is a contiguous range of columns ending at its root. The forward sweep therefore runs
 * the chosen subtrees side by side, each updating only its own rows, and then, in column order,
 * the updates the subtrees' columns make to the rows above them (the "top": the ancestors of the
 * chosen subtrees) together with the top's own columns; the backward sweep runs the top first,
 * then the subtrees side by side. The top is shared too: a stretch of subtree columns with many
 * entries in the top's rows by rows (each thread its own range of rows), and a wide run of the
 * top (the separators near the root, most of the top's entries) by panels of columns: forward,
 * one thread sweeps a panel among its own rows and then the threads share the rows below it;
 * backward, the threads share the panel's columns' sums over the rows below it and one thread
 * finishes the panel. Every entry of y receives its terms in the same order as in the serial
 * sweeps, so the result is bit-identical to them.
 *
 * The order of the terms is fixed: in the forward sweep every entry of y receives its terms in
 * column order, and in the backward sweep every column takes its terms from its last row to its
 * first. Runs of columns with nested patterns (a fundamental supernode: column j's rows are j+1
 * and then column j+1's rows, its parent being j+1) are swept a block of columns at a time
 * within that order (four; eight on the AVX2 path): forward, a row shared by the block is loaded
 * once and takes its terms in column order; backward, the rows the block shares come first in
 * each of its sums (they are the columns' last rows), so the sums run side by side instead of
 * one after the other.
 *
 * The sweeps exist twice (internal/cholesky_sweeps.h), on the path cpu.h chooses: the SSE2
 * baseline, a row's three coordinates as a pair of lanes and one more, and the AVX2 copy, a row
 * as one four-lane vector (y keeps four slots a row for it). Both do the same products and
 * differences, lane by lane and unfused, so either gives the bits of the other.
 *
 * The split is chosen from the columns' entry counts: subtrees are opened from the roots down
 * (an opened root joins the top) while that lowers the estimated time, the serial top plus the
 * largest thread's share when the subtrees are dealt to the threads largest first. A factor
 * whose columns are not sorted or not postordered is solved serially.
 */
#ifndef MODALLOCO_CHOLESKY_SOLVE_H
#define MODALLOCO_CHOLESKY_SOLVE_H

#include <cholmod.h>

#include "base.h"

/* At most this many threads share a solve (more are not used). */
#define MLC_CHOLSOLVE_MAX_THREADS 64

/* The kinds of the forward sweep's steps over the serial list (mlc_cholsolve.steps): on thread
 * 0; shared by rows (subtree columns' entries in the top's rows); a wide run of the top shared
 * by panels. */
enum { MLC_CHOLSOLVE_STEP_SERIAL, MLC_CHOLSOLVE_STEP_SHARED, MLC_CHOLSOLVE_STEP_WIDE };

typedef struct mlc_cholsolve {
    int n;
    /* Row k of the permuted system is unknown perm[k]; column j of L holds 1/L_jj in dinv[j]
     * and its entries below the diagonal at lp[j] .. lp[j+1]−1 (rows li, values lx), in
     * CHOLMOD's order. Owned. */
    int *perm, *lp, *li;
    double *lx, *dinv;
    double *y; /* 4n: permuted work, row j at 4j (x, y, z, and a slot no answer reads) */
    int *pinv; /* n: the permuted row of unknown i (perm's inverse) */
    int *mark; /* n: the last unit solve whose forward reach held column j (mlc_cholsolve_unit3) */
    int stamp; /* that solve's number */
    /* Column j's run of nested patterns is sn_first[j] .. sn_end[j] (cholesky_solve.c). */
    int *sn_first, *sn_end;
    /* The split for `bins` threads (bins = 1: serial; the arrays are then unused). */
    int bins;
    int tree_ok;  /* the columns are sorted and postordered: a split is possible */
    int *parent;  /* n: parent of column j in the elimination tree, −1 at a root */
    int *first;   /* n: the first (lowest) column of j's subtree: it is first[j] .. j */
    double *work; /* n: entries of j's subtree in its own rows, plus one a column */
    double *ext;  /* n: entries of j's subtree in rows above it (serial in a split) */
    int *split;   /* n: a subtree column's entries below split[j] are rows of its subtree */
    char *top;    /* n: 1 for the top's columns */
    int *serial;  /* the columns with work in the top's rows, ascending: the top's columns */
    int nserial;  /* and the subtree columns with entries in the top's rows */
    int *steps; /* nsteps × 3: the forward sweep of the serial list, as (kind, k0, k1): serial[k0]
                 * .. serial[k1−1] on thread 0, shared by rows, or a wide run shared by panels */
    int nsteps;
    int *pcut;    /* nserial × (bins+1): in a step shared by rows, thread b's entries of serial[k]
                   * are pcut[k(bins+1)+b] .. pcut[k(bins+1)+b+1]−1 */
    int *topcols; /* the top's columns, ascending */
    int ntop;
    int *ranges;  /* 2 × nranges: [first, last] of each chosen subtree, thread by thread */
    int *bin_ptr; /* bins + 1: thread b's ranges are bin_ptr[b] .. bin_ptr[b+1]−1, ascending */
    int nranges;
    /* the split's estimate in entries: on thread 0 alone, the largest thread's share of the
     * steps shared by rows or panels, the largest thread's subtrees */
    double top_work, shared_work, bin_work;
} mlc_cholsolve;

/* Copies L (simplicial, LLᵀ, n×n, positive diagonal) and its permutation into cs, ready for
 * serial solves. Errors: MLC_ENUMERIC for another factor form, MLC_ENOMEM. On failure cs holds
 * nothing to free. */
mlc_status mlc_cholsolve_create(mlc_cholsolve *cs, const cholmod_factor *L, mlc_err *err);
void mlc_cholsolve_destroy(mlc_cholsolve *cs);

/* Chooses the split for `threads` threads (≤ 1: serial). A factor that cannot be split, or
 * where splitting would not pay, stays serial (cs->bins = 1). MLC_ENOMEM on allocation failure
 * (cs then stays serial and usable). */
mlc_status mlc_cholsolve_set_threads(mlc_cholsolve *cs, int threads, mlc_err *err);

/* x = Q⁻¹ b for three right-hand sides (b, x: n×3 interleaved, unknown i at 3i..3i+2; they may
 * not overlap), on cs->bins threads; the same bits for any split. Uses cs->y: one solve at a
 * time per mlc_cholsolve. */
void mlc_cholsolve_solve3(mlc_cholsolve *cs, const double *restrict b, double *restrict x);

/* Columns of Q⁻¹: x[k] = Q⁻¹ e_{v[k]} for k < nrhs (1 ≤ nrhs ≤ 3; x[k] holds n values, v[k] in
 * [0, n)). The forward sweep runs over the columns on the paths from the v[k] to the root of
 * the elimination tree only (every other entry of L⁻¹ e_v is zero, so the full sweep would add
 * exact zeros: the same values), the backward sweep as mlc_cholsolve_solve3's, on cs->bins
 * threads: the same bits for any split. Uses cs->y: one solve at a time per mlc_cholsolve. */
void mlc_cholsolve_unit3(mlc_cholsolve *cs, const int *v, int nrhs, double *const *x);

#endif
