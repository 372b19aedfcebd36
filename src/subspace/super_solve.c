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

static int ascending(const void *a, const void *b) {
    const int u = *(const int *)a, v = *(const int *)b;
    return (u > v) - (u < v);
}

/* A split of the candidate subtrees (roots cand[0..nc), sorted here by position) over `bins`
 * threads. Thread 0 takes the first k subtrees when they run from supernode 0 without a gap:
 * they come first in CHOLMOD's order, so they update the top's rows in their turn already and
 * repeat nothing. The others are dealt largest first to the other threads (to all of them when
 * k = 0) and repeat their products next to the top. Returns the estimate (top, repeats and the
 * largest thread's load, in entries read) of the best k; bin_of (may be NULL) gets each
 * candidate's thread in cand's new order, and kout that k. rest, dealt, tmp (nc each), load (bins):
 * scratch. */
static double split_estimate(int *cand, int nc, int bins, const int *first, const double *sub,
                             const double *rep, double top, int *bin_of, int *kout, int *rest,
                             int *dealt, mlc_weighted *tmp, double *load) {
    qsort(cand, (size_t)nc, sizeof *cand, ascending);
    int kmax = 0;
    while (kmax < nc && first[cand[kmax]] == (kmax == 0 ? 0 : cand[kmax - 1] + 1))
        kmax++;
    double best = -1, load0 = 0, rep_rest = 0;
    int kbest = 0;
    for (int i = 0; i < nc; i++)
        rep_rest += rep[cand[i]];
    for (int k = 0; k <= kmax; k++) {
        if (k > 0) load0 += sub[cand[k - 1]], rep_rest -= rep[cand[k - 1]];
        const int nr = nc - k, others = k == 0 ? bins : bins - 1;
        memcpy(rest, cand + k, sizeof(int) * (size_t)nr);
        mlc_sort_largest_first(sub, rest, nr, tmp);
        const double most = mlc_deal_largest_first(sub, rest, nr, others, load, NULL);
        const double est = top + rep_rest + (load0 > most ? load0 : most);
        if (best < 0 || est <= best) best = est, kbest = k;
    }
    if (kout) *kout = kbest;
    if (bin_of) {
        const int nr = nc - kbest, others = kbest == 0 ? bins : bins - 1, shift = kbest > 0;
        memcpy(rest, cand + kbest, sizeof(int) * (size_t)nr);
        mlc_sort_largest_first(sub, rest, nr, tmp);
        mlc_deal_largest_first(sub, rest, nr, others, load, dealt);
        for (int i = 0; i < kbest; i++)
            bin_of[i] = 0;
        for (int j = 0; j < nr; j++) { /* back to cand's ascending order */
            const int *at = bsearch(&rest[j], cand + kbest, (size_t)nr, sizeof *cand, ascending);
            bin_of[at - cand] = dealt[j] + shift;
        }
    }
    return best;
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
    int *cand = mlc_malloc(sizeof(int) * (size_t)ns), *rest = mlc_malloc(sizeof(int) * ns);
    int *dealt = mlc_malloc(sizeof(int) * (size_t)ns), *trial = mlc_malloc(sizeof(int) * ns);
    int *opened = mlc_malloc(sizeof(int) * (size_t)ns);
    mlc_weighted *tmp = mlc_malloc(sizeof(mlc_weighted) * (size_t)ns);
    int *best = mlc_malloc(sizeof(int) * (size_t)ns), *assign = mlc_malloc(sizeof(int) * ns);
    double *load = mlc_malloc(sizeof(double) * (size_t)bins);
    mlc_status st = MLC_OK;
    if (!col_super || !parent || !first || !reach || !count || !child_ptr || !child || !sub ||
        !rep || !cand || !rest || !dealt || !trial || !opened || !tmp || !best || !assign ||
        !load) {
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
        child_ptr[s + 1] += child_ptr[s], rep[s] = -1;
    for (int s = 0, *fill = count; s < ns; s++) /* count reused as the fill pointer */
        fill[s] = child_ptr[s];
    for (int s = 0; s < ns; s++)
        if (parent[s] >= 0) child[count[parent[s]]++] = s;

    /* From the roots down: each step opens the one of the largest few candidates whose opening
     * (it joins the top, its children become candidates) gives the lowest estimate, also when
     * none lowers it (one opening can pay only with the next); the best split seen is kept. */
    /* rep[s]: repeats_under(s), computed when s becomes a candidate or an opening is tried
     * (each call reads s's subtree: for every supernode it would cost the tree's depth). */
    int nc = 0, nbest = 0;
    double top = 0, top_best = 0, best_est = ss->serial_entries;
    for (int s = 0; s < ns; s++)
        if (parent[s] < 0) cand[nc++] = s, rep[s] = repeats_under(L, first, reach, s);
    for (int step = 0, since_best = 0; step < 32 * bins && since_best < 6; step++) {
        const double est = split_estimate(cand, nc, bins, first, sub, rep, top, NULL, NULL, rest,
                                          dealt, tmp, load);
        if (est < best_est) {
            best_est = est, nbest = nc, since_best = 0, top_best = top;
            memcpy(best, cand, sizeof(int) * (size_t)nc);
        } else {
            since_best++;
        }
        memcpy(trial, cand, sizeof(int) * (size_t)nc);
        mlc_sort_largest_first(sub, trial, nc, tmp);
        int open = -1;
        double open_est = 0;
        for (int t = 0; t < nc && t < MLC_SUPERSOLVE_TRIED; t++) {
            const int r = trial[t], nch = child_ptr[r + 1] - child_ptr[r];
            if (nch == 0) continue;
            for (int p = child_ptr[r]; p < child_ptr[r + 1]; p++)
                if (rep[child[p]] < 0) rep[child[p]] = repeats_under(L, first, reach, child[p]);
            int m = 0; /* the candidates without r, with its children */
            for (int c = 0; c < nc; c++)
                if (cand[c] != r) opened[m++] = cand[c];
            memcpy(opened + m, child + child_ptr[r], sizeof(int) * (size_t)nch);
            const double e = split_estimate(opened, m + nch, bins, first, sub, rep,
                                            top + 2.0 * (Lpx[r + 1] - Lpx[r]), NULL, NULL, rest,
                                            dealt, tmp, load);
            if (open < 0 || e < open_est) open = r, open_est = e;
        }
        if (open < 0) break;
        int m = 0;
        for (int c = 0; c < nc; c++)
            if (cand[c] != open) cand[m++] = cand[c];
        for (int p = child_ptr[open]; p < child_ptr[open + 1]; p++)
            cand[m++] = child[p];
        nc = m, top += 2.0 * (Lpx[open + 1] - Lpx[open]);
    }
    if (nbest == 0 || best_est > 0.9 * ss->serial_entries) goto done;

    /* The chosen split: each subtree's thread, in position order. */
    int kfirst = 0;
    split_estimate(best, nbest, bins, first, sub, rep, top_best, assign, &kfirst, rest, dealt, tmp,
                   load);
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
    for (int c = 0; c < nbest; c++) { /* ranges of thread b, ascending */
        const int r = best[c], b = assign[c], k = fill[b]++;
        ss->ranges[2 * k] = first[r], ss->ranges[2 * k + 1] = r;
        for (int s = first[r]; s <= r; s++) { /* the first kfirst update the top directly */
            ss->owner[s] = b, ss->row_end[s] = c < kfirst ? n : Super[r + 1];
            ss->repeat[s] = c >= kfirst && reach[s] > r;
        }
    }
    ss->nranges = nbest, ss->bins = bins, ss->split_entries = best_est;
done:
    mlc_free(col_super), mlc_free(parent), mlc_free(first), mlc_free(reach), mlc_free(count);
    mlc_free(child_ptr), mlc_free(child), mlc_free(sub), mlc_free(rep), mlc_free(cand);
    mlc_free(tmp), mlc_free(rest), mlc_free(dealt), mlc_free(trial), mlc_free(opened);
    mlc_free(best), mlc_free(assign), mlc_free(load);
    return st;
}

/* ---- Solving ----------------------------------------------------------------------------- */

static const double minus_one = -1.0, one = 1.0;
static const int inc1 = 1;

/* Forward step of supernode s as CHOLMOD's (nrhs = 1) for the rows below `row_end` (all rows:
 * n): the others are gathered as 0 and not scattered (each row of a dgemv is its own, so they
 * change nothing else). solve_diag = 0 repeats the dgemv alone (x₁ is final) over all rows and
 * scatters the rows from `row_end` up instead. */
static void forward_super(const cholmod_factor *L, int s, double *x, double *E, int row_end,
                          int solve_diag) {
    const shape h = shape_of(L, s);
    const int nsrow2 = h.nsrow - h.nscol, *rows = (const int *)L->s + h.psi + h.nscol;
    const double *Lx = L->x;
    if (solve_diag) /* the top's rows, which another thread may be writing: not read */
        for (int i = 0; i < nsrow2; i++)
            E[i] = rows[i] < row_end ? x[rows[i]] : 0.0;
    else
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

/* The bins' sweeps side by side on a team of `bins` threads, nested under an enclosing region
 * (the precompute's two branches) when there is one: nesting is allowed for the call. A team
 * given fewer threads runs several bins on one, with the same bits (no bin reads what another
 * writes). */
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
