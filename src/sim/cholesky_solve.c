/* cholesky_solve.c: solves with a sparse Cholesky factor, serial or split over the subtrees of
 * its elimination tree (cholesky_solve.h). */
#include "internal/cholesky_solve.h"

#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The top's runs at least WIDE_RUN columns wide are swept by every thread in panels of PANEL
 * columns (forward_run_shared); a stretch of subtree columns with at least SHARED_MIN entries
 * in the top's rows is swept by every thread, each its own rows. */
#define PANEL 32
#define WIDE_RUN (2 * PANEL)
#define SHARED_MIN 2048

void mlc_cholsolve_destroy(mlc_cholsolve *cs) {
    if (!cs) return;
    int *ints[] = {cs->perm,   cs->lp,      cs->li,       cs->parent,  cs->first, cs->split,
                   cs->serial, cs->topcols, cs->ranges,   cs->bin_ptr, cs->pcut,  cs->steps,
                   cs->pinv,   cs->mark,    cs->sn_first, cs->sn_end};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        mlc_free(ints[i]);
    double *dbl[] = {cs->lx, cs->dinv, cs->y, cs->work, cs->ext};
    for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
        mlc_free(dbl[i]);
    mlc_free(cs->top);
    memset(cs, 0, sizeof *cs);
}

/* The elimination tree read off the factor (the parent of j is the first row below its
 * diagonal), and whether a split is possible: every column's rows ascending and every subtree
 * a contiguous range of columns ending at its root (a postorder). */
static mlc_status read_tree(mlc_cholsolve *cs) {
    const int n = cs->n;
    cs->parent = mlc_malloc(sizeof(int) * (size_t)n);
    cs->first = mlc_malloc(sizeof(int) * (size_t)n);
    cs->work = mlc_calloc((size_t)n, sizeof(double));
    cs->ext = mlc_calloc((size_t)n, sizeof(double));
    int *count = mlc_malloc(sizeof(int) * (size_t)n);
    if (!cs->parent || !cs->first || !cs->work || !cs->ext || !count) {
        mlc_free(count);
        return MLC_ENOMEM;
    }
    int ok = 1;
    /* Over j's subtree: work, its columns' entries in rows of the subtree (plus one a column
     * for the diagonal), and ext, those in rows outside it. A column's rows are its ancestors,
     * so the entries in rows of a subtree all come from its columns: work sums each column's
     * row count, and ext each column's entries minus its row count. */
    for (int j = 0; j < n; j++) {
        const int p0 = cs->lp[j], p1 = cs->lp[j + 1];
        cs->parent[j] = p0 < p1 ? cs->li[p0] : -1;
        cs->first[j] = j, count[j] = 1;
        cs->work[j] += 1, cs->ext[j] += (double)(p1 - p0);
        for (int p = p0; p < p1; p++) {
            ok &= cs->li[p] > (p == p0 ? j : cs->li[p - 1]) && cs->li[p] < n;
            if (ok) cs->work[cs->li[p]] += 1, cs->ext[cs->li[p]] -= 1;
        }
    }
    for (int j = 0; j < n && ok; j++) { /* children before parents: j < parent[j] */
        const int pa = cs->parent[j];
        ok &= count[j] == j - cs->first[j] + 1;
        if (pa < 0) continue;
        count[pa] += count[j], cs->work[pa] += cs->work[j], cs->ext[pa] += cs->ext[j];
        if (cs->first[j] < cs->first[pa]) cs->first[pa] = cs->first[j];
    }
    mlc_free(count);
    cs->tree_ok = ok;
    return MLC_OK;
}

/* The runs of nested patterns: j and j+1 share a run when j+1 is j's parent and j's rows after
 * the first are exactly j+1's. */
static mlc_status read_runs(mlc_cholsolve *cs) {
    const int n = cs->n, *lp = cs->lp, *li = cs->li;
    cs->sn_first = mlc_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    cs->sn_end = mlc_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!cs->sn_first || !cs->sn_end) return MLC_ENOMEM;
    for (int j = n - 1; j >= 0; j--) {
        const int len = lp[j + 1] - lp[j];
        int nested = j + 1 < n && len > 0 && li[lp[j]] == j + 1 && len == lp[j + 2] - lp[j + 1] + 1;
        for (int p = 1; nested && p < len; p++)
            nested = li[lp[j] + p] == li[lp[j + 1] + p - 1];
        cs->sn_end[j] = nested ? cs->sn_end[j + 1] : j;
    }
    for (int j = 0; j < n; j++)
        cs->sn_first[j] = j > 0 && cs->sn_end[j - 1] >= j ? cs->sn_first[j - 1] : j;
    return MLC_OK;
}

mlc_status mlc_cholsolve_create(mlc_cholsolve *cs, const cholmod_factor *L, mlc_err *err) {
    memset(cs, 0, sizeof *cs);
    if (L->is_super || !L->is_ll || L->xtype != CHOLMOD_REAL || L->itype != CHOLMOD_INT ||
        L->n > (size_t)INT_MAX / 3)
        return mlc_errf(err, MLC_ENUMERIC, "cholesky_solve: unexpected factor form from CHOLMOD");
    const int n = (int)L->n;
    const int *Lp = L->p, *Li = L->i, *Lnz = L->nz, *P = L->Perm;
    const double *Lx = L->x;
    size_t off = 0;
    for (int j = 0; j < n; j++)
        off += (size_t)Lnz[j] - 1;
    if (off > (size_t)INT_MAX)
        return mlc_errf(err, MLC_ENOMEM, "cholesky_solve: the factor has too many entries (%zu)",
                        off);
    cs->n = n, cs->bins = 1;
    int ok = (cs->perm = mlc_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1))) != NULL;
    ok &= (cs->lp = mlc_malloc(sizeof(int) * ((size_t)n + 1))) != NULL;
    ok &= (cs->li = mlc_malloc(sizeof(int) * (off > 0 ? off : 1))) != NULL;
    ok &= (cs->lx = mlc_malloc(sizeof(double) * (off > 0 ? off : 1))) != NULL;
    ok &= (cs->dinv = mlc_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1))) != NULL;
    ok &= (cs->y = mlc_calloc(3 * (size_t)(n > 0 ? n : 1), sizeof(double))) != NULL;
    ok &= (cs->pinv = mlc_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1))) != NULL;
    ok &= (cs->mark = mlc_calloc((size_t)(n > 0 ? n : 1), sizeof(int))) != NULL;
    if (!ok) {
        mlc_cholsolve_destroy(cs);
        return mlc_errf(err, MLC_ENOMEM, "cholesky_solve: out of memory for the factor");
    }
    int q = 0;
    for (int j = 0; j < n; j++) {
        const int p0 = Lp[j];
        if (Li[p0] != j || !(Lx[p0] > 0)) {
            mlc_cholsolve_destroy(cs);
            return mlc_errf(err, MLC_ENUMERIC,
                            "cholesky_solve: unexpected factor form from CHOLMOD");
        }
        cs->perm[j] = P ? P[j] : j;
        cs->pinv[cs->perm[j]] = j;
        cs->dinv[j] = 1.0 / Lx[p0];
        cs->lp[j] = q;
        for (int p = p0 + 1; p < p0 + Lnz[j]; p++, q++)
            cs->li[q] = Li[p], cs->lx[q] = Lx[p];
    }
    cs->lp[n] = q;
    if (read_tree(cs) != MLC_OK || read_runs(cs) != MLC_OK) {
        mlc_cholsolve_destroy(cs);
        return mlc_errf(err, MLC_ENOMEM, "cholesky_solve: out of memory for the factor");
    }
    return MLC_OK;
}

/* ---- the split --------------------------------------------------------------------------- */

/* Opens the largest candidate: its column joins the top, its children become candidates.
 * Returns 0 when the largest has no children (nothing left to split). */
static int open_largest(const mlc_cholsolve *cs, const int *child_ptr, const int *child, int *cand,
                        int *nc, double *top_work, double *ext_sum) {
    int big = 0;
    for (int c = 1; c < *nc; c++) {
        const double wc = cs->work[cand[c]], wb = cs->work[cand[big]];
        if (wc > wb || (wc == wb && cand[c] < cand[big])) big = c;
    }
    const int j = cand[big];
    if (child_ptr[j] == child_ptr[j + 1]) return 0;
    *top_work += 1 + (double)(cs->lp[j + 1] - cs->lp[j]);
    *ext_sum -= cs->ext[j];
    cand[big] = cand[--*nc];
    for (int p = child_ptr[j]; p < child_ptr[j + 1]; p++)
        cand[(*nc)++] = child[p], *ext_sum += cs->ext[child[p]];
    return 1;
}

static void make_serial(mlc_cholsolve *cs) {
    cs->bins = 1, cs->nranges = cs->ntop = cs->nserial = cs->nsteps = 0;
}

mlc_status mlc_cholsolve_set_threads(mlc_cholsolve *cs, int threads, mlc_err *err) {
    const int n = cs->n;
    make_serial(cs);
    if (threads <= 1 || !cs->tree_ok || n < 2) return MLC_OK;
    const int bins = threads < MLC_CHOLSOLVE_MAX_THREADS ? threads : MLC_CHOLSOLVE_MAX_THREADS;
    int *child_ptr = mlc_calloc((size_t)n + 1, sizeof(int));
    int *child = mlc_malloc(sizeof(int) * (size_t)n);
    int *cand = mlc_malloc(sizeof(int) * (size_t)n);
    int *assign = mlc_malloc(sizeof(int) * (size_t)n);
    double *load = mlc_malloc(sizeof(double) * (size_t)bins);
    mlc_weighted *tmp = mlc_malloc(sizeof(mlc_weighted) * (size_t)n);
    if (!cs->split) cs->split = mlc_malloc(sizeof(int) * (size_t)n);
    if (!cs->serial) cs->serial = mlc_malloc(sizeof(int) * (size_t)n);
    if (!cs->topcols) cs->topcols = mlc_malloc(sizeof(int) * (size_t)n);
    if (!cs->ranges) cs->ranges = mlc_malloc(sizeof(int) * 2 * (size_t)n);
    if (!cs->top) cs->top = mlc_malloc((size_t)n);
    mlc_free(cs->bin_ptr);
    cs->bin_ptr = mlc_calloc((size_t)bins + 1, sizeof(int));
    mlc_status st = MLC_OK;
    if (!child_ptr || !child || !cand || !assign || !load || !tmp || !cs->split || !cs->serial ||
        !cs->topcols || !cs->ranges || !cs->top || !cs->bin_ptr) {
        st = mlc_errf(err, MLC_ENOMEM, "cholesky_solve: out of memory for the split");
        goto done;
    }
    /* children of each column, ascending (a CSR by parent) */
    for (int j = 0; j < n; j++)
        if (cs->parent[j] >= 0) child_ptr[cs->parent[j] + 1]++;
    for (int j = 0; j < n; j++)
        child_ptr[j + 1] += child_ptr[j];
    for (int j = 0, *fill = assign; j < n; j++) /* assign: scratch fill pointers */
        fill[j] = child_ptr[j];
    for (int j = 0; j < n; j++)
        if (cs->parent[j] >= 0) child[assign[cs->parent[j]]++] = j;
    /* Open from the roots down while the estimate can still drop, remember how many openings
     * gave the best, then replay them. The estimate: the top's entries, which run serially,
     * plus the candidates' entries in rows above them, shared by the threads by rows, plus the
     * largest thread's share of the rest. */
    int nc = 0, opened = 0, best_opened = 0;
    double top_work = 0, ext_sum = 0, best = 0;
    for (int j = 0; j < n; j++)
        if (cs->parent[j] < 0) cand[nc++] = j;
    for (int j = 0; j < n; j++)
        best += cs->work[j] * (cs->parent[j] < 0); /* serial: all of it */
    for (;;) {
        mlc_sort_largest_first(cs->work, cand, nc, tmp);
        const double est = top_work + ext_sum / bins +
                           mlc_deal_largest_first(cs->work, cand, nc, bins, load, NULL);
        if (est < best) best = est, best_opened = opened;
        if (top_work + ext_sum >= best ||
            !open_largest(cs, child_ptr, child, cand, &nc, &top_work, &ext_sum))
            break;
        opened++;
    }
    nc = 0, top_work = 0, ext_sum = 0;
    for (int j = 0; j < n; j++)
        if (cs->parent[j] < 0) cand[nc++] = j;
    for (int k = 0; k < best_opened; k++)
        open_largest(cs, child_ptr, child, cand, &nc, &top_work, &ext_sum);
    mlc_sort_largest_first(cs->work, cand, nc, tmp);
    mlc_deal_largest_first(cs->work, cand, nc, bins, load, assign);
    if (best_opened == 0) goto done;
    /* Each thread's subtrees as column ranges, ascending; the top is what no subtree covers. */
    memset(cs->top, 1, (size_t)n);
    int nr = 0;
    for (int b = 0; b < bins; b++) {
        cs->bin_ptr[b] = nr;
        for (int c = 0; c < nc; c++)
            if (assign[c] == b) {
                cs->ranges[2 * nr] = cs->first[cand[c]], cs->ranges[2 * nr + 1] = cand[c];
                nr++;
            }
        /* ascending by first column (few ranges: insertion sort of the pairs) */
        for (int r = cs->bin_ptr[b] + 1; r < nr; r++)
            for (int q = r; q > cs->bin_ptr[b] && cs->ranges[2 * q] < cs->ranges[2 * q - 2]; q--)
                for (int k = 0; k < 2; k++) {
                    const int keep = cs->ranges[2 * q + k];
                    cs->ranges[2 * q + k] = cs->ranges[2 * q - 2 + k];
                    cs->ranges[2 * q - 2 + k] = keep;
                }
    }
    cs->bin_ptr[bins] = nr;
    for (int r = 0; r < nr; r++) {
        const int lo = cs->ranges[2 * r], hi = cs->ranges[2 * r + 1];
        for (int j = lo; j <= hi; j++) {
            int p = cs->lp[j];
            while (p < cs->lp[j + 1] && cs->li[p] <= hi)
                p++;
            cs->split[j] = p, cs->top[j] = 0;
        }
    }
    int ns = 0, nt = 0;
    double all = 0;
    for (int j = 0; j < n; j++) {
        if (cs->top[j]) cs->split[j] = cs->lp[j], cs->topcols[nt++] = j;
        if (cs->top[j] || cs->split[j] < cs->lp[j + 1]) cs->serial[ns++] = j;
        all += 1 + (cs->lp[j + 1] - cs->lp[j]);
    }
    /* The serial list as steps. A stretch of subtree columns with many entries in the top's
     * rows is shared by rows: thread b takes the rows cut[b] .. cut[b+1]−1 (about equal shares
     * of the stretch's entries), each row its terms in column order. A wide run of the top is
     * shared by panels. The rest runs on thread 0. */
    mlc_free(cs->pcut);
    mlc_free(cs->steps);
    cs->pcut = mlc_malloc(sizeof(int) * (size_t)(ns > 0 ? ns : 1) * ((size_t)bins + 1));
    cs->steps = mlc_malloc(sizeof(int) * 3 * (size_t)(ns > 0 ? ns : 1));
    int *rows = mlc_calloc((size_t)n + 1, sizeof(int)), cut[MLC_CHOLSOLVE_MAX_THREADS + 1];
    if (!rows || !cs->pcut || !cs->steps) {
        mlc_free(rows);
        st = mlc_errf(err, MLC_ENOMEM, "cholesky_solve: out of memory for the split");
        goto done;
    }
    int nsteps = 0;
    double serial_work = 0, shared_most = 0;
    for (int k = 0; k < ns;) {
        const int j = cs->serial[k];
        int kind = MLC_CHOLSOLVE_STEP_SERIAL, k1 = k + 1;
        double entries = 0;
        if (cs->top[j]) { /* a run of the top: its columns from j on are all in the top */
            k1 = k + (cs->sn_end[j] - j + 1);
            for (int q = k; q < k1; q++)
                entries += 1 + (cs->lp[cs->serial[q] + 1] - cs->lp[cs->serial[q]]);
            if (k1 - k >= WIDE_RUN) {
                const double own = (double)(k1 - k) * (PANEL + 1) / 2; /* the panels' triangles */
                kind = MLC_CHOLSOLVE_STEP_WIDE, serial_work += own,
                shared_most += (entries - own) / bins;
            }
        } else {
            while (k1 < ns && !cs->top[cs->serial[k1]])
                k1++;
            for (int q = k; q < k1; q++)
                entries += cs->lp[cs->serial[q] + 1] - cs->split[cs->serial[q]];
            if (entries >= SHARED_MIN) kind = MLC_CHOLSOLVE_STEP_SHARED;
        }
        if (kind == MLC_CHOLSOLVE_STEP_SERIAL) {
            serial_work += entries;
            if (nsteps > 0 && cs->steps[3 * nsteps - 3] == MLC_CHOLSOLVE_STEP_SERIAL) {
                cs->steps[3 * nsteps - 1] = k1;
                k = k1;
                continue;
            }
        }
        if (kind == MLC_CHOLSOLVE_STEP_SHARED) {
            int lo = n;
            for (int q = k; q < k1; q++) {
                const int c = cs->serial[q];
                for (int p = cs->split[c]; p < cs->lp[c + 1]; p++)
                    rows[cs->li[p]]++;
                if (cs->split[c] < cs->lp[c + 1] && cs->li[cs->split[c]] < lo)
                    lo = cs->li[cs->split[c]];
            }
            cut[0] = 0, cut[bins] = n;
            for (int b = 1, r = lo, acc = 0; b < bins; b++) {
                while (r < n && acc + rows[r] <= entries * b / bins)
                    acc += rows[r++];
                cut[b] = r;
            }
            double most_here = 0;
            for (int q = k; q < k1; q++) {
                const int c = cs->serial[q];
                int *pc = cs->pcut + (size_t)q * (bins + 1), p = cs->split[c];
                for (int b = 0; b < bins; b++) {
                    while (p < cs->lp[c + 1] && cs->li[p] < cut[b])
                        p++;
                    pc[b] = p;
                }
                pc[bins] = cs->lp[c + 1];
                for (int p2 = cs->split[c]; p2 < cs->lp[c + 1]; p2++)
                    rows[cs->li[p2]] = 0;
            }
            for (int b = 0; b < bins; b++) {
                double w = 0;
                for (int q = k; q < k1; q++) {
                    const int *pc = cs->pcut + (size_t)q * (bins + 1);
                    w += pc[b + 1] - pc[b];
                }
                most_here = w > most_here ? w : most_here;
            }
            shared_most += most_here;
        }
        cs->steps[3 * nsteps] = kind, cs->steps[3 * nsteps + 1] = k, cs->steps[3 * nsteps + 2] = k1;
        nsteps++;
        k = k1;
    }
    mlc_free(rows);
    double most = 0;
    for (int b = 0; b < bins; b++) {
        double w = 0;
        for (int r = cs->bin_ptr[b]; r < cs->bin_ptr[b + 1]; r++)
            for (int j = cs->ranges[2 * r]; j <= cs->ranges[2 * r + 1]; j++)
                w += 1 + (cs->split[j] - cs->lp[j]);
        most = w > most ? w : most;
    }
    /* The split pays when its estimate is at most 90% of the serial sweeps'. */
    if (serial_work + shared_most + most > 0.9 * all) goto done;
    cs->bins = bins, cs->nranges = nr, cs->nserial = ns, cs->nsteps = nsteps, cs->ntop = nt;
    cs->top_work = serial_work, cs->shared_work = shared_most, cs->bin_work = most;
done:
    mlc_free(child_ptr);
    mlc_free(child);
    mlc_free(cand);
    mlc_free(assign);
    mlc_free(load);
    mlc_free(tmp);
    return st;
}

/* ---- the sweeps ------------------------------------------------------------------------ */

/* Forward, column j: y_j scaled by 1/L_jj (when `scale`), then its entries p0 .. p1−1
 * subtracted from their rows. */
static inline void forward_column(const mlc_cholsolve *cs, double *restrict y, int j, int p0,
                                  int p1, int scale) {
    const int *restrict li = cs->li;
    const double *restrict lx = cs->lx;
    double y0 = y[3 * j], y1 = y[3 * j + 1], y2 = y[3 * j + 2];
    if (scale) {
        const double d = cs->dinv[j];
        y0 *= d, y1 *= d, y2 *= d;
        y[3 * j] = y0, y[3 * j + 1] = y1, y[3 * j + 2] = y2;
    }
    for (int p = p0; p < p1; p++) {
        double *yi = y + 3 * (size_t)li[p];
        const double l = lx[p];
        yi[0] -= l * y0, yi[1] -= l * y1, yi[2] -= l * y2;
    }
}

/* Backward, column j: y_j = (y_j − Σ_p L_pj y_p) / L_jj, the terms from the column's last row
 * to its first (so that in a run the rows it shares with its neighbours come first). */
static inline void backward_column(const mlc_cholsolve *cs, double *restrict y, int j) {
    const int *restrict li = cs->li;
    const double *restrict lx = cs->lx;
    double s0 = y[3 * j], s1 = y[3 * j + 1], s2 = y[3 * j + 2];
    for (int p = cs->lp[j + 1] - 1; p >= cs->lp[j]; p--) {
        const double *yi = y + 3 * (size_t)li[p];
        const double l = lx[p];
        s0 -= l * yi[0], s1 -= l * yi[1], s2 -= l * yi[2];
    }
    const double d = cs->dinv[j];
    y[3 * j] = s0 * d, y[3 * j + 1] = s1 * d, y[3 * j + 2] = s2 * d;
}

/* ---- runs of nested patterns: four columns at a time, the column sweeps' order ------------ */

/* A row's (x, y) as one pair of lanes and its z apart: lane by lane the same operations, and
 * the same roundings, as on three scalars. */
typedef double pair __attribute__((vector_size(16)));
static inline pair load_pair(const double *p) {
    pair v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void store_pair(double *p, pair v) {
    memcpy(p, &v, sizeof v);
}

/* Blocks of a run are at most this many columns wide (four pairs and four z sums fill the
 * sixteen SSE registers). */
#define RUN_BLOCK 4

/* Forward: row yr takes the terms of w columns (entries l[c], their scaled values xy[c], z[c])
 * in column order. */
static inline __attribute__((always_inline)) void
forward_row(double *restrict yr, int w, const double *l, const pair *xy, const double *z) {
    pair v = load_pair(yr);
    double u = yr[2];
    for (int c = 0; c < w; c++)
        v -= l[c] * xy[c], u -= l[c] * z[c];
    store_pair(yr, v);
    yr[2] = u;
}

/* Forward over the block j .. j+w−1 of a run ending at column b whose shared rows are R (nr of
 * them): the block's columns among themselves (each scaled, then its terms in the block's later
 * rows), then every later row once, taking the block's w terms in column order: the run's
 * columns after the block (rows of their own index), then R. */
static inline __attribute__((always_inline)) void forward_block(const mlc_cholsolve *cs,
                                                                double *restrict y, int j, int w,
                                                                int b, const int *R, int nr) {
    const double *restrict lx = cs->lx;
    const int *restrict lp = cs->lp;
    for (int c = j; c < j + w; c++) {
        const double d = cs->dinv[c];
        const double y0 = y[3 * c] * d, y1 = y[3 * c + 1] * d, y2 = y[3 * c + 2] * d;
        y[3 * c] = y0, y[3 * c + 1] = y1, y[3 * c + 2] = y2;
        for (int c2 = c + 1; c2 < j + w; c2++) {
            const double l = lx[lp[c] + (c2 - c - 1)];
            y[3 * c2] -= l * y0, y[3 * c2 + 1] -= l * y1, y[3 * c2 + 2] -= l * y2;
        }
    }
    pair xy[RUN_BLOCK];
    double z[RUN_BLOCK], l[RUN_BLOCK];
    const double *col[RUN_BLOCK]; /* column j+c's entry in row r (> j+w−1, of the run): col[c][r] */
    for (int c = 0; c < w; c++) {
        xy[c] = load_pair(y + 3 * (size_t)(j + c)), z[c] = y[3 * (j + c) + 2];
        col[c] = lx + lp[j + c] - (j + c) - 1;
    }
    for (int r = j + w; r <= b; r++) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][r];
        forward_row(y + 3 * (size_t)r, w, l, xy, z);
    }
    for (int i = 0; i < nr; i++) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][b + 1 + i];
        forward_row(y + 3 * (size_t)R[i], w, l, xy, z);
    }
}

/* Forward over the run a..b (columns of one run, a ≤ b) whose shared rows are the first nr of
 * column b's, in blocks of four columns, then two, then one. Every row gets its terms in column
 * order, as forward_column's over a..b. */
static void forward_run(const mlc_cholsolve *cs, double *restrict y, int a, int b, int nr) {
    const int *R = cs->li + cs->lp[b];
    int j = a;
    for (; j + 3 <= b; j += 4)
        forward_block(cs, y, j, 4, b, R, nr);
    if (j + 1 <= b) forward_block(cs, y, j, 2, b, R, nr), j += 2;
    if (j <= b) forward_column(cs, y, j, cs->lp[j], cs->lp[j] + nr, 1);
}

/* Backward: the w sums (xy[c], z[c]) take row yr's terms (entries l[c]). */
static inline __attribute__((always_inline)) void
backward_row(const double *restrict yr, int w, const double *l, pair *xy, double *z) {
    const pair v = load_pair(yr);
    const double u = yr[2];
    for (int c = 0; c < w; c++)
        xy[c] -= l[c] * v, z[c] -= l[c] * u;
}

/* Backward over the block f .. f+w−1 of a run ending at column b (rows R, nr of them): each
 * column's terms from its last row to its first (backward_column's order): the rows the block
 * shares (R, then the run's columns after the block), the w sums side by side, then the block's
 * own rows, column by column. */
static inline __attribute__((always_inline)) void backward_block(const mlc_cholsolve *cs,
                                                                 double *restrict y, int f, int w,
                                                                 int b, const int *R, int nr) {
    const double *restrict lx = cs->lx;
    const int *restrict lp = cs->lp;
    const int j = f + w - 1;
    pair xy[RUN_BLOCK];
    double z[RUN_BLOCK], l[RUN_BLOCK];
    const double *col[RUN_BLOCK]; /* column f+c's entry in row r (> j, of the run): col[c][r] */
    for (int c = 0; c < w; c++) {
        xy[c] = load_pair(y + 3 * (size_t)(f + c)), z[c] = y[3 * (f + c) + 2];
        col[c] = lx + lp[f + c] - (f + c) - 1;
    }
    for (int i = nr - 1; i >= 0; i--) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][b + 1 + i];
        backward_row(y + 3 * (size_t)R[i], w, l, xy, z);
    }
    for (int r = b; r > j; r--) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][r];
        backward_row(y + 3 * (size_t)r, w, l, xy, z);
    }
    for (int c = j; c >= f; c--) {
        pair sxy = xy[c - f];
        double sz = z[c - f];
        for (int c2 = j; c2 > c; c2--) {
            const double lc = lx[lp[c] + (c2 - c - 1)];
            sxy -= lc * load_pair(y + 3 * (size_t)c2), sz -= lc * y[3 * c2 + 2];
        }
        const double d = cs->dinv[c];
        store_pair(y + 3 * (size_t)c, sxy * d);
        y[3 * c + 2] = sz * d;
    }
}

/* Backward over the run a..b (a ≤ b), from b down, in blocks of four columns, then two, then
 * one. */
static void backward_run(const mlc_cholsolve *cs, double *restrict y, int a, int b) {
    const int nr = cs->lp[b + 1] - cs->lp[b];
    const int *R = cs->li + cs->lp[b];
    int j = b;
    for (; j - 3 >= a; j -= 4)
        backward_block(cs, y, j - 3, 4, b, R, nr);
    if (j - 1 >= a) backward_block(cs, y, j - 1, 2, b, R, nr), j -= 2;
    if (j >= a) backward_column(cs, y, j);
}

/* ---- wide runs of the top: every thread of the split shares them --------------------------- */

/* Of the top's own columns, the wide runs are shared too (the separators near the root: on the
 * 59k-tet spot the root's run alone is 590 columns and most of the top's entries). Such a run
 * is cut into panels of PANEL columns. Forward, a panel's columns among its own rows run on
 * one thread; then the rows after the panel are dealt to the threads in contiguous ranges,
 * each row taking the panel's terms in column order. Backward, the panel's columns are dealt
 * to the threads, each column's sum taking the rows after the panel from the last up; then
 * one thread finishes the panel's columns among its own rows. Every row and every sum gets
 * its terms in the serial sweeps' order, so the bits are the same. */

/* Position pos (> the run's first column) of the run a..b with shared rows R: the run's own
 * row pos when pos ≤ b, else R[pos − b − 1]; column c's entry there is at lx[lp[c] − c − 1 +
 * pos] in both cases. */
static inline int run_row(int pos, int b, const int *R) {
    return pos <= b ? pos : R[pos - b - 1];
}

/* The values of the columns j .. j+w−1 (w ≤ 4: xy[c], z[c]) and where their entries lie
 * (column j+c's entry at position pos is col[c][pos]). */
static inline void load_columns(const mlc_cholsolve *cs, const double *restrict y, int j, int w,
                                pair *xy, double *z, const double **col) {
    for (int c = 0; c < w; c++) {
        xy[c] = load_pair(y + 3 * (size_t)(j + c)), z[c] = y[3 * (j + c) + 2];
        col[c] = cs->lx + cs->lp[j + c] - (j + c) - 1;
    }
}

/* Forward: the positions q0 .. q1−1 take the terms of the columns j .. j+w−1 (w ≤ 4), already
 * scaled, in column order. */
static void forward_positions(const mlc_cholsolve *cs, double *restrict y, int j, int w, int b,
                              const int *R, int q0, int q1) {
    pair xy[RUN_BLOCK];
    double z[RUN_BLOCK], l[RUN_BLOCK];
    const double *col[RUN_BLOCK];
    load_columns(cs, y, j, w, xy, z, col);
    for (int q = q0; q < q1; q++) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][q];
        forward_row(y + 3 * (size_t)run_row(q, b, R), w, l, xy, z);
    }
}

/* Forward over the wide run a..b (nr shared rows), called by every thread of the parallel
 * region at the same point, after a barrier; the caller's barrier ends it. */
static void forward_run_shared(const mlc_cholsolve *cs, double *restrict y, int a, int b, int nr) {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    const int *R = cs->li + cs->lp[b];
    for (int p0 = a; p0 <= b; p0 += PANEL) {
        const int p1 = p0 + PANEL - 1 < b ? p0 + PANEL - 1 : b;
        if (t == 0) { /* the panel among its own rows */
            int j = p0;
            for (; j + 3 <= p1; j += 4)
                forward_block(cs, y, j, 4, p1, R, 0);
            if (j + 1 <= p1) forward_block(cs, y, j, 2, p1, R, 0), j += 2;
            if (j <= p1) forward_column(cs, y, j, cs->lp[j], cs->lp[j], 1);
        }
#pragma omp barrier
        const long npos = (long)b + nr - p1;
        const int q0 = p1 + 1 + (int)(npos * t / T), q1 = p1 + 1 + (int)(npos * (t + 1) / T);
        for (int j = p0; j <= p1; j += RUN_BLOCK)
            forward_positions(cs, y, j, p1 - j + 1 < RUN_BLOCK ? p1 - j + 1 : RUN_BLOCK, b, R, q0,
                              q1);
        if (p1 < b) {
#pragma omp barrier
        }
    }
}

/* Backward: the sums of the columns f .. f+w−1 (w ≤ 4) take the positions q1−1 down to q0,
 * starting from and returning to y. */
static void backward_positions(const mlc_cholsolve *cs, double *restrict y, int f, int w, int b,
                               const int *R, int q0, int q1) {
    pair xy[RUN_BLOCK];
    double z[RUN_BLOCK], l[RUN_BLOCK];
    const double *col[RUN_BLOCK];
    load_columns(cs, y, f, w, xy, z, col);
    for (int q = q1 - 1; q >= q0; q--) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][q];
        backward_row(y + 3 * (size_t)run_row(q, b, R), w, l, xy, z);
    }
    for (int c = 0; c < w; c++) {
        store_pair(y + 3 * (size_t)(f + c), xy[c]);
        y[3 * (f + c) + 2] = z[c];
    }
}

/* Backward over the wide run a..b, called by every thread at the same point; returns after a
 * barrier. Panels from the run's end, so that each is whole where the run is. */
static void backward_run_shared(const mlc_cholsolve *cs, double *restrict y, int a, int b) {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    const int nr = cs->lp[b + 1] - cs->lp[b];
    const int *R = cs->li + cs->lp[b];
    for (int p1 = b; p1 >= a; p1 -= PANEL) {
        const int p0 = p1 - PANEL + 1 > a ? p1 - PANEL + 1 : a;
        /* the panel's blocks of four (from p0), dealt to the threads */
        const int nblk = (p1 - p0 + RUN_BLOCK) / RUN_BLOCK;
        for (int k = nblk * t / T; k < nblk * (t + 1) / T; k++) {
            const int f = p0 + RUN_BLOCK * k;
            backward_positions(cs, y, f, p1 - f + 1 < RUN_BLOCK ? p1 - f + 1 : RUN_BLOCK, b, R,
                               p1 + 1, b + nr + 1);
        }
#pragma omp barrier
        if (t == 0) { /* the panel among its own rows, from its end */
            int j = p1;
            for (; j - 3 >= p0; j -= 4)
                backward_block(cs, y, j - 3, 4, p1, R, 0);
            if (j - 1 >= p0) backward_block(cs, y, j - 1, 2, p1, R, 0), j -= 2;
            if (j >= p0) backward_block(cs, y, j, 1, p1, R, 0);
        }
#pragma omp barrier
    }
}

/* Forward over the columns lo .. hi, by runs clipped to them; with `in_split` each column's
 * terms stop at split[j] (a subtree's own rows: the run's shared rows are then the first
 * split[b] − lp[b] of column b's, the same cut for every column of the run). */
static void forward_range(const mlc_cholsolve *cs, double *restrict y, int lo, int hi,
                          int in_split) {
    for (int j = lo; j <= hi;) {
        const int b = cs->sn_end[j] < hi ? cs->sn_end[j] : hi;
        forward_run(cs, y, j, b, (in_split ? cs->split[b] : cs->lp[b + 1]) - cs->lp[b]);
        j = b + 1;
    }
}

/* Backward over the columns hi down to lo, by runs clipped to them. */
static void backward_range(const mlc_cholsolve *cs, double *restrict y, int lo, int hi) {
    for (int j = hi; j >= lo;) {
        const int a = cs->sn_first[j] > lo ? cs->sn_first[j] : lo;
        backward_run(cs, y, a, j);
        j = a - 1;
    }
}

/* The backward sweep of a split solve, inside its parallel region (every thread calls it):
 * the top's columns on one thread, then the subtrees side by side. The top's columns come in
 * runs too: a top column's ancestors are all in the top. */
static void backward_split(const mlc_cholsolve *cs, double *restrict y) {
    const int bins = cs->bins, *ranges = cs->ranges, *bin_ptr = cs->bin_ptr;
    const int t = omp_get_thread_num();
    for (int k = cs->ntop - 1; k >= 0;) {
        const int j = cs->topcols[k];
        int a = j;
        while (a > cs->sn_first[j] && k - (j - a) > 0 && cs->topcols[k - (j - a) - 1] == a - 1)
            a--;
        if (j - a + 1 >= WIDE_RUN) {
#pragma omp barrier
            backward_run_shared(cs, y, a, j);
        } else if (t == 0) {
            backward_run(cs, y, a, j);
        }
        k -= j - a + 1;
    }
#pragma omp barrier
#pragma omp for schedule(static, 1)
    for (int th = 0; th < bins; th++)
        for (int r = bin_ptr[th + 1] - 1; r >= bin_ptr[th]; r--)
            backward_range(cs, y, ranges[2 * r], ranges[2 * r + 1]);
}

/* The forward sweep's serial list (the subtrees' entries in the top's rows and the top's own
 * columns) step by step, inside the parallel region (every thread calls it, after the
 * subtrees' sweep and its barrier); the caller's barrier ends it. */
static void forward_steps(const mlc_cholsolve *cs, double *restrict y) {
    const int t = omp_get_thread_num(), bins = cs->bins;
    for (int s = 0; s < cs->nsteps; s++) {
        const int kind = cs->steps[3 * s], k0 = cs->steps[3 * s + 1], k1 = cs->steps[3 * s + 2];
        if (s > 0) {
#pragma omp barrier
        }
        if (kind == MLC_CHOLSOLVE_STEP_SHARED) {
            /* by pieces of runs: a piece j..e's columns all have column e's rows beyond e, so
             * the thread's rows are the same positions for each, swept four columns at a time */
            for (int k = k0; k < k1;) {
                const int j = cs->serial[k];
                int e = j;
                while (e < cs->sn_end[j] && k + (e + 1 - j) < k1 &&
                       cs->serial[k + (e + 1 - j)] == e + 1)
                    e++;
                const int *pc = cs->pcut + (size_t)(k + e - j) * (bins + 1);
                const int q0 = e + 1 + (pc[t] - cs->lp[e]), q1 = e + 1 + (pc[t + 1] - cs->lp[e]);
                for (int c = j; c <= e; c += RUN_BLOCK)
                    forward_positions(cs, y, c, e - c + 1 < RUN_BLOCK ? e - c + 1 : RUN_BLOCK, e,
                                      cs->li + cs->lp[e], q0, q1);
                k += e - j + 1;
            }
        } else if (kind == MLC_CHOLSOLVE_STEP_WIDE) {
            const int a = cs->serial[k0], e = cs->sn_end[a];
            forward_run_shared(cs, y, a, e, cs->lp[e + 1] - cs->lp[e]);
        } else if (t == 0) {
            /* the top's own columns by runs (their ancestors, the rest of a run, are in the top
             * too) */
            for (int k = k0; k < k1; k++) {
                const int j = cs->serial[k];
                if (cs->top[j] && cs->sn_end[j] > j) {
                    const int e = cs->sn_end[j];
                    forward_run(cs, y, j, e, cs->lp[e + 1] - cs->lp[e]);
                    k += e - j;
                } else {
                    forward_column(cs, y, j, cs->split[j], cs->lp[j + 1], cs->top[j]);
                }
            }
        }
    }
}

void mlc_cholsolve_solve3(mlc_cholsolve *cs, const double *restrict b, double *restrict x) {
    const int n = cs->n, bins = cs->bins;
    const int *restrict perm = cs->perm;
    double *restrict y = cs->y;
    if (bins <= 1) {
        for (int j = 0; j < n; j++) {
            const double *bj = b + 3 * (size_t)perm[j];
            y[3 * j] = bj[0], y[3 * j + 1] = bj[1], y[3 * j + 2] = bj[2];
        }
        forward_range(cs, y, 0, n - 1, 0);
        backward_range(cs, y, 0, n - 1);
        for (int j = 0; j < n; j++) {
            double *xj = x + 3 * (size_t)perm[j];
            xj[0] = y[3 * j], xj[1] = y[3 * j + 1], xj[2] = y[3 * j + 2];
        }
        return;
    }
    const int *ranges = cs->ranges, *bin_ptr = cs->bin_ptr;
#pragma omp parallel num_threads(bins)
    {
#pragma omp for schedule(static)
        for (int j = 0; j < n; j++) {
            const double *bj = b + 3 * (size_t)perm[j];
            y[3 * j] = bj[0], y[3 * j + 1] = bj[1], y[3 * j + 2] = bj[2];
        }
        /* the subtrees, each updating only its own rows */
#pragma omp for schedule(static, 1)
        for (int t = 0; t < bins; t++)
            for (int r = bin_ptr[t]; r < bin_ptr[t + 1]; r++)
                forward_range(cs, y, ranges[2 * r], ranges[2 * r + 1], 1);
        /* the subtrees' entries in the top's rows and the top's own columns */
        forward_steps(cs, y);
#pragma omp barrier
        backward_split(cs, y);
#pragma omp for schedule(static)
        for (int j = 0; j < n; j++) {
            double *xj = x + 3 * (size_t)perm[j];
            xj[0] = y[3 * j], xj[1] = y[3 * j + 1], xj[2] = y[3 * j + 2];
        }
    }
}

void mlc_cholsolve_unit3(mlc_cholsolve *cs, const int *v, int nrhs, double *const *x) {
    const int n = cs->n, bins = cs->bins;
    const int *restrict perm = cs->perm;
    double *restrict y = cs->y;
    /* the forward reach: every column on a path from a v[k] to its root */
    if (cs->stamp == INT_MAX) { /* marks start over rather than wrap */
        memset(cs->mark, 0, sizeof(int) * (size_t)n);
        cs->stamp = 0;
    }
    const int stamp = ++cs->stamp;
    int first = n;
    memset(y, 0, sizeof(double) * 3 * (size_t)n);
    for (int k = 0; k < nrhs; k++) {
        int j = cs->pinv[v[k]];
        y[3 * j + k] = 1;
        first = j < first ? j : first;
        for (; j >= 0 && cs->mark[j] != stamp; j = cs->parent[j])
            cs->mark[j] = stamp;
    }
    /* a marked column's run from it on is marked too: its ancestors */
    for (int j = first; j < n; j++)
        if (cs->mark[j] == stamp) {
            const int e = cs->sn_end[j];
            forward_run(cs, y, j, e, cs->lp[e + 1] - cs->lp[e]);
            j = e;
        }
    if (bins <= 1) {
        backward_range(cs, y, 0, n - 1);
        for (int k = 0; k < nrhs; k++)
            for (int j = 0; j < n; j++)
                x[k][perm[j]] = y[3 * j + k];
        return;
    }
#pragma omp parallel num_threads(bins)
    {
        backward_split(cs, y);
        for (int k = 0; k < nrhs; k++) {
            double *restrict xk = x[k];
#pragma omp for schedule(static)
            for (int j = 0; j < n; j++)
                xk[perm[j]] = y[3 * j + k];
        }
    }
}
