/* super_factor.h: A = P L Lᵀ Pᵀ, CHOLMOD's supernodal numeric factorization split over
 * independent subtrees of the supernodes' elimination tree, with cholmod_factorize's bits for
 * any thread count.
 *
 * Why: on large meshes the vibration factorization is the longest serial piece of the
 * precompute (the koala's 83M-entry factor: 2.9 s alone, more beside the other branch's
 * k-means), and CHOLMOD 3 runs it on one thread unless the BLAS is threaded, which changes the
 * bits with the thread count.
 *
 * How, keeping CHOLMOD's bits. CHOLMOD's supernodal LLᵀ (cholmod_super_numeric) takes the
 * supernodes in order. For supernode s it clears s's block, copies s's columns of PAPᵀ into it,
 * then takes its pending descendants d one by one from a linked list: C = L_d,1 L_d,1ᵀ (dsyrk)
 * and L_d,2 L_d,1ᵀ (dgemm), both with β = 0, then subtracts C entry by entry from s's block.
 * Then dpotrf on the diagonal block and dtrsm for the rows below, and s joins the list of its
 * parent. A descendant, once used, joins the list of the next ancestor its rows reach, at the
 * list's head.
 *  - The lists' order depends only on the order the supernodes are taken and on their row
 *    patterns, not on the numbers: the plan runs the serial loop once without numbers and keeps,
 *    for each s, its descendants in the order s takes them (with the offset of d's first row
 *    that reaches s).
 *  - Each block is then a function of the matrix's entries, its descendants' final columns
 *    and that order: the same BLAS calls with the same operands and the same subtractions in
 *    the same order give the same bits, whichever thread makes them and when.
 *  - A subtree's descendants are all inside it, so the chosen subtrees run side by side, each
 *    in CHOLMOD's order; then the top (every supernode outside them, an ancestor-closed set)
 *    runs in CHOLMOD's order on one thread, taking its updates, the subtrees' among them, in
 *    the recorded order.
 * The split is chosen from the roots down, as super_solve.h's: each step opens the largest
 * candidate subtree (its root joins the top, its children become candidates), the candidates are
 * dealt largest first to the threads, and the split with the lowest estimate (the top's flops
 * plus the most loaded thread's) is kept. A supernode's flops are its own dpotrf and dtrsm and
 * the products of the updates it takes; on the top the products count a thread's share (they
 * run side by side there), the dpotrf and dtrsm in full. On the koala's vibration factor (7.8e10
 * flops, 2 threads) the estimate is 0.56 of the serial flops, and the factorization alone took
 * 0.69 of CHOLMOD's time (docs/performance.md).
 *
 * Where it does not apply (a simplicial or unsymmetric factor, one thread, a factor under the
 * size limit, no split that pays, the matrix not positive definite, no memory for the
 * workspace) the caller factorizes with cholmod_factorize, whose failure messages and L->minor
 * are then CHOLMOD's own.
 */
#ifndef MODALLOCO_SUPER_FACTOR_H
#define MODALLOCO_SUPER_FACTOR_H

#include <cholmod.h>

#include "base.h"

/* At most this many threads share a factorization. */
#define MLC_SUPERFACTOR_MAX_THREADS 64

/* Factorizations of fewer flops run in cholmod_factorize (a split would not pay for its thread
 * team's start: about 5 ms). */
#define MLC_SUPERFACTOR_MIN_FLOPS 5e7

typedef struct mlc_superfactor {
    int n, nsuper;
    int bins;        /* 1: no split (the caller uses cholmod_factorize); else the threads */
    int *owner;      /* nsuper: the thread of a chosen subtree's supernode; −1 for the top */
    int *upd_ptr;    /* nsuper + 1: s's updates are entries upd_ptr[s] .. upd_ptr[s+1] − 1 of */
    int *upd_super;  /* the descendant supernode of each update, in the order s takes them, */
    int *upd_offset; /* and the offset in its rows of its first row that reaches s */
    int *ranges;     /* 2 × nranges: [first, last] supernode of each chosen subtree, by thread */
    int *bin_ptr;    /* bins + 1: thread b's ranges are bin_ptr[b] .. bin_ptr[b+1] − 1 */
    int nranges;
    int max_rows;        /* the most rows of any supernode (the relative map's length) */
    size_t csize;        /* doubles of each thread's update buffer C (L->maxcsize) */
    double serial_flops; /* estimates: the serial factorization, */
    double split_flops;  /* and the split's critical path (the top and the largest thread) */
} mlc_superfactor;

/* Plans the factorization of L's pattern (a supernodal symbolic or numeric factor from
 * cholmod_analyze; a plan serves every matrix with that analysis) for `threads` threads. A
 * factor that is not supernodal, has fewer than min_flops flops (MLC_SUPERFACTOR_MIN_FLOPS;
 * tests pass less), is not postordered, or that no split speeds up gets bins = 1.
 * Errors: MLC_ENOMEM (sf then holds nothing to free). */
mlc_status mlc_superfactor_plan(mlc_superfactor *sf, const cholmod_factor *L, int threads,
                                double min_flops, mlc_err *err);

/* Factorizes A (symmetric, stype ≠ 0, the pattern L was analyzed for) into L with the planned
 * split: afterwards L is what cholmod_factorize(A, L, cc) makes of it, to the bit (numeric
 * supernodal LLᵀ, minor = n, cc->status CHOLMOD_OK). Returns 1 when it factorized; 0 when the
 * caller must call cholmod_factorize (bins = 1, A unsymmetric, no memory for the permuted matrix
 * or the workspace, or a pivot not positive: L's values are then undefined, and CHOLMOD's own
 * factorization reports where). */
int mlc_superfactor_factorize(const mlc_superfactor *sf, cholmod_sparse *A, cholmod_factor *L,
                              cholmod_common *cc);

void mlc_superfactor_destroy(mlc_superfactor *sf);

#endif
