/* super_solve.c: solves with a CHOLMOD supernodal factor split over subtrees, with CHOLMOD's
 * bits (super_solve.h). */
#include "internal/super_solve.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* The Fortran BLAS, as CHOLMOD calls it (32-bit integers, no hidden string lengths). */
void dtrsv_(const char *uplo, const char *trans, const char *diag, const int *n, const double *a,
            const int *lda, double *x, const int *incx);
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy);

void mlc_supersolve_destroy(mlc_supersolve *ss) {
    if (!ss) return;
    mlc_free(ss->owner);
    mlc_free(ss->row_end);
    mlc_free(ss->repeat);
    mlc_free(ss->ranges);
    mlc_free(ss->bin_ptr);
    mlc_free(ss->xp);
    mlc_free(ss->ebuf_raw);
    memset(ss, 0, sizeof *ss);
    ss->bins = 1;
}

/* Supernode s's shape: columns k1 .. k2−1, nsrow rows (the first nscol are its columns) listed
 * at Ls[psi ..], values at Lx[psx ..] column by column with leading dimension nsrow. */
typedef struct shape {
    int k1, nscol, nsrow, psi, psx;
} shape;
static inline shape shape_of(const cholmod_factor *L, int s) {
    const int *Super = L->super, *Lpi = L->pi, *Lpx = L->px;
    shape h = {Super[s], Super[s + 1] - Super[s], Lpi[s + 1] - Lpi[s], Lpi[s], Lpx[s]};
    return h;
}

/* ---- Planning ---------------------------------------------------------------------------- */

/* The serial repeats of the subtree rooted at r when it is chosen: the products of its
 * supernodes whose rows reach above it, in entries read. */
static double repeats_under(const cholmod_factor *L, const int *first, const int *reach, int r) {
    double rep = 0;
    for (int s = first[r]; s <= r; s++)
        if (reach[s] > r) {
            const shape h = shape_of(L, s);
            rep += (double)(h.nsrow - h.nscol) * h.nscol;
        }
    return rep;
}

mlc_status mlc_supersolve_plan(mlc_supersolve *ss, const cholmod_factor *L, int threads,
                               double min_entries, mlc_err *err) {
    memset(ss, 0, sizeof *ss);
    ss->bins = 1;
    if (!L || !L->is_super || !L->is_ll || L->xtype != CHOLMOD_REAL || !L->Perm || threads <= 1)
        return MLC_OK;
    const int n = (int)L->n, ns = (int)L->nsuper;
    const int *Super = L->super, *Ls = L->s, *Lpx = L->px;
    ss->n = n, ss->nsuper = ns;
    ss->serial_entries = 2.0 * Lpx[ns];
    if (ns < 2 || (double)Lpx[ns] < min_entries) return MLC_OK;
    const int bins = threads < MLC_SUPERSOLVE_MAX_THREADS ? threads : MLC_SUPERSOLVE_MAX_THREADS;

    int *col_super = mlc_malloc(sizeof(int) * (size_t)n);
    int *parent = mlc_malloc(sizeof(int) * (size_t)ns), *first = mlc_malloc(sizeof(int) * ns);
    int *reach = mlc_malloc(sizeof(int) * (size_t)ns), *count = mlc_calloc(ns, sizeof(int));
    int *child_ptr = mlc_calloc((size_t)ns + 1, sizeof(int)), *child = mlc_malloc(sizeof(int) * ns);
    double *sub = mlc_calloc((size_t)ns, sizeof(double)), *rep = mlc_calloc(ns, sizeof(double));
    int *cand = mlc_malloc(sizeof(int) * (size_t)ns);
    mlc_weighted *tmp = mlc_malloc(sizeof(mlc_weighted) * (size_t)ns);
    int *best = mlc_malloc(sizeof(int) * (size_t)ns), *assign = mlc_malloc(sizeof(int) * ns);
    double *load = mlc_malloc(sizeof(double) * (size_t)bins);
    mlc_status st = MLC_OK;
    if (!col_super || !parent || !first || !reach || !count || !child_ptr || !child || !sub ||
        !rep || !cand || !tmp || !best || !assign || !load) {
        st = mlc_errf(err, MLC_ENOMEM, "eigen: out of memory planning the split solve");
        goto done;
    }
    /* The supernodes' tree: s's parent holds its first row below its columns; its reach is
     * the supernode of its last row (rows need not be sorted: the largest). */
    for (int s = 0; s < ns; s++)
        for (int k = Super[s]; k < Super[s + 1]; k++)
            col_super[k] = s;
    int ok = 1;
    for (int s = 0; s < ns && ok; s++) {
        const shape h = shape_of(L, s);
        int lo = n, hi = -1;
        for (int p = h.psi + h.nscol; p < h.psi + h.nsrow; p++) {
            lo = Ls[p] < lo ? Ls[p] : lo;
            hi = Ls[p] > hi ? Ls[p] : hi;
        }
        parent[s] = hi < 0 ? -1 : col_super[lo];
        reach[s] = hi < 0 ? s : col_super[hi];
        ok &= parent[s] < 0 || parent[s] > s;
        first[s] = s, count[s] += 1;
        sub[s] += 2.0 * (Lpx[s + 1] - Lpx[s]);
    }
    for (int s = 0; s < ns && ok; s++) { /* children before parents: a postorder check */
        ok &= count[s] == s - first[s] + 1;
        const int pa = parent[s];
        if (pa < 0) continue;
        count[pa] += count[s], sub[pa] += sub[s];
        if (first[s] < first[pa]) first[pa] = first[s];
        child_ptr[pa + 1]++;
    }
    if (!ok) goto done;
    for (int s = 0; s < ns; s++)
        child_ptr[s + 1] += child_ptr[s];
    for (int s = 0, *fill = count; s < ns; s++) /* count reused as the fill pointer */
        fill[s] = child_ptr[s];
    for (int s = 0; s < ns; s++)
        if (parent[s] >= 0) child[count[parent[s]]++] = s;

    /* Open the largest candidate while the estimate falls (a few steps past the best, since one
     * opening can pay only with the next). */
    int nc = 0, nbest = 0;
    double top = 0, rep_sum = 0, best_est = ss->serial_entries;
    for (int s = 0; s < ns; s++)
        if (parent[s] < 0) {
            rep[s] = repeats_under(L, first, reach, s);
            cand[nc++] = s, rep_sum += rep[s];
        }
    for (int step = 0, since_best = 0; step < 64 * bins && since_best < 8; step++) {
        mlc_sort_largest_first(sub, cand, nc, tmp);
        const double est = top + rep_sum + mlc_deal_largest_first(sub, cand, nc, bins, load, NULL);
        if (est < best_est) {
            best_est = est, nbest = nc, since_best = 0;
            memcpy(best, cand, sizeof(int) * (size_t)nc);
        } else {
            since_best++;
        }
        const int r = cand[0]; /* the largest */
        if (child_ptr[r] == child_ptr[r + 1]) break;
        top += 2.0 * (Lpx[r + 1] - Lpx[r]), rep_sum -= rep[r];
        cand[0] = cand[--nc];
        for (int p = child_ptr[r]; p < child_ptr[r + 1]; p++) {
            const int c = child[p];
            rep[c] = repeats_under(L, first, reach, c);
            cand[nc++] = c, rep_sum += rep[c];
        }
    }
    if (nbest == 0 || best_est > 0.9 * ss->serial_entries) goto done;

    /* The chosen split: the subtrees dealt to the threads, largest first. */
    mlc_sort_largest_first(sub, best, nbest, tmp);
    mlc_deal_largest_first(sub, best, nbest, bins, load, assign);
    ss->owner = mlc_malloc(sizeof(int) * (size_t)ns);
    ss->row_end = mlc_malloc(sizeof(int) * (size_t)ns);
    ss->repeat = mlc_calloc((size_t)ns, 1);
    ss->ranges = mlc_malloc(2 * sizeof(int) * (size_t)nbest);
    ss->bin_ptr = mlc_calloc((size_t)bins + 1, sizeof(int));
    ss->xp = mlc_malloc(sizeof(double) * (size_t)n);
    ss->esize = ((size_t)L->maxesize + 7) / 8 * 8;
    if (ss->esize == 0) ss->esize = 8;
    ss->ebuf_raw = mlc_malloc(sizeof(double) * (ss->esize * (size_t)bins + 8));
    if (!ss->owner || !ss->row_end || !ss->repeat || !ss->ranges || !ss->bin_ptr || !ss->xp ||
        !ss->ebuf_raw) {
        mlc_supersolve_destroy(ss);
        st = mlc_errf(err, MLC_ENOMEM, "eigen: out of memory planning the split solve");
        goto done;
    }
    ss->n = n, ss->nsuper = ns;
    ss->ebuf = (double *)(((uintptr_t)ss->ebuf_raw + 63) & ~(uintptr_t)63);
    for (int s = 0; s < ns; s++)
        ss->owner[s] = -1, ss->row_end[s] = n;
    for (int c = 0; c < nbest; c++)
        ss->bin_ptr[assign[c] + 1]++;
    for (int b = 0; b < bins; b++)
        ss->bin_ptr[b + 1] += ss->bin_ptr[b];
    int fill[MLC_SUPERSOLVE_MAX_THREADS];
    for (int b = 0; b < bins; b++)
        fill[b] = ss->bin_ptr[b];
    for (int c = 0; c < nbest; c++) { /* ranges of thread b, in the order dealt */
        const int r = best[c], b = assign[c], k = fill[b]++;
        ss->ranges[2 * k] = first[r], ss->ranges[2 * k + 1] = r;
        for (int s = first[r]; s <= r; s++) {
            ss->owner[s] = b, ss->row_end[s] = Super[r + 1];
            ss->repeat[s] = reach[s] > r;
        }
    }
    ss->nranges = nbest, ss->bins = bins, ss->split_entries = best_est;
done:
    mlc_free(col_super), mlc_free(parent), mlc_free(first), mlc_free(reach), mlc_free(count);
    mlc_free(child_ptr), mlc_free(child), mlc_free(sub), mlc_free(rep), mlc_free(cand);
    mlc_free(tmp);
    mlc_free(best), mlc_free(assign), mlc_free(load);
    return st;
}

/* ---- Solving ----------------------------------------------------------------------------- */

static const double minus_one = -1.0, one = 1.0;
static const int inc1 = 1;

/* Forward step of supernode s as CHOLMOD's (nrhs = 1), keeping from E only the rows below
 * `row_end` (all rows: n). solve_diag = 0 repeats the dgemv alone (x₁ is final) and keeps the
 * rows from `row_end` up instead. */
static void forward_super(const cholmod_factor *L, int s, double *x, double *E, int row_end,
                          int solve_diag) {
    const shape h = shape_of(L, s);
    const int nsrow2 = h.nsrow - h.nscol, *rows = (const int *)L->s + h.psi + h.nscol;
    const double *Lx = L->x;
    for (int i = 0; i < nsrow2; i++)
        E[i] = x[rows[i]];
    if (solve_diag) dtrsv_("L", "N", "N", &h.nscol, Lx + h.psx, &h.nsrow, x + h.k1, &inc1);
    if (nsrow2 > 0)
        dgemv_("N", &nsrow2, &h.nscol, &minus_one, Lx + h.psx + h.nscol, &h.nsrow, x + h.k1, &inc1,
               &one, E, &inc1);
    if (solve_diag) {
        for (int i = 0; i < nsrow2; i++)
            if (rows[i] < row_end) x[rows[i]] = E[i];
    } else {
        for (int i = 0; i < nsrow2; i++)
            if (rows[i] >= row_end) x[rows[i]] = E[i];
    }
}

/* Backward step of supernode s as CHOLMOD's (nrhs = 1). */
static void backward_super(const cholmod_factor *L, int s, double *x, double *E) {
    const shape h = shape_of(L, s);
    const int nsrow2 = h.nsrow - h.nscol, *rows = (const int *)L->s + h.psi + h.nscol;
    const double *Lx = L->x;
    for (int i = 0; i < nsrow2; i++)
        E[i] = x[rows[i]];
    if (nsrow2 > 0)
        dgemv_("C", &nsrow2, &h.nscol, &minus_one, Lx + h.psx + h.nscol, &h.nsrow, E, &inc1, &one,
               x + h.k1, &inc1);
    dtrsv_("L", "C", "N", &h.nscol, Lx + h.psx, &h.nsrow, x + h.k1, &inc1);
}

/* Thread b's subtrees: forward (ascending within each) or backward (descending). */
static void bin_sweep(const mlc_supersolve *ss, const cholmod_factor *L, int b, int forward) {
    double *x = ss->xp, *E = ss->ebuf + (size_t)b * ss->esize;
    for (int k = ss->bin_ptr[b]; k < ss->bin_ptr[b + 1]; k++) {
        const int f = ss->ranges[2 * k], r = ss->ranges[2 * k + 1];
        if (forward)
            for (int s = f; s <= r; s++)
                forward_super(L, s, x, E, ss->row_end[s], 1);
        else
            for (int s = r; s >= f; s--)
                backward_super(L, s, x, E);
    }
}

/* The bins' sweeps side by side: the calling thread's team when it has one free, else a team
 * of bins threads (nested under an enclosing region when need be); with fewer threads each
 * takes several bins, the same bits. */
static void bins_parallel(const mlc_supersolve *ss, const cholmod_factor *L, int forward) {
#ifdef _OPENMP
    const int level = omp_get_active_level(), saved = omp_get_max_active_levels();
    if (saved < level + 1) omp_set_max_active_levels(level + 1);
#pragma omp parallel num_threads(ss->bins)
    {
        const int nth = omp_get_num_threads(), id = omp_get_thread_num();
        for (int b = id; b < ss->bins; b += nth)
            bin_sweep(ss, L, b, forward);
    }
    if (saved < level + 1) omp_set_max_active_levels(saved);
#else
    for (int b = 0; b < ss->bins; b++)
        bin_sweep(ss, L, b, forward);
#endif
}

int mlc_supersolve_solve(mlc_supersolve *ss, const cholmod_factor *L, const double *b, double *x) {
    if (ss->bins <= 1) return 0;
    const int n = ss->n, ns = ss->nsuper, *Perm = L->Perm;
    double *xp = ss->xp, *E = ss->ebuf;
    for (int k = 0; k < n; k++) /* xp = P b, as cholmod_solve2 permutes */
        xp[k] = b[Perm[k]];
    bins_parallel(ss, L, 1);
    /* The top in CHOLMOD's order, with the subtrees' updates of its rows in their turn. */
    for (int s = 0; s < ns; s++) {
        if (ss->owner[s] < 0)
            forward_super(L, s, xp, E, n, 1);
        else if (ss->repeat[s])
            forward_super(L, s, xp, E, ss->row_end[s], 0);
    }
    for (int s = ns - 1; s >= 0; s--)
        if (ss->owner[s] < 0) backward_super(L, s, xp, E);
    bins_parallel(ss, L, 0);
    for (int k = 0; k < n; k++)
        x[Perm[k]] = xp[k];
    return 1;
}
