/* cholesky_solve.c: solves with a sparse Cholesky factor, serial or split over the subtrees of
 * its elimination tree (cholesky_solve.h). */
#include "internal/cholesky_solve.h"

#include "cpu.h"

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

/* A row of the permuted work y holds a column's three coordinates and a fourth slot no answer
 * reads (YS doubles), so that on the AVX2 path a row is one 32-byte vector. */
#define YS 4

/* Two lanes of a row (its x and y) on the SSE2 path. */
typedef double pair __attribute__((vector_size(16)));

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
    ok &= (cs->y = mlc_calloc(YS * (size_t)(n > 0 ? n : 1), sizeof(double))) != NULL;
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

/* ---- the sweeps: one copy per code path (internal/cholesky_sweeps.h) ---------------------- */

/* Position pos (> the run's first column) of the run a..b with shared rows R: the run's own
 * row pos when pos ≤ b, else R[pos − b − 1]; column c's entry there is at lx[lp[c] − c − 1 +
 * pos] in both cases. */
static inline int run_row(int pos, int b, const int *R) {
    return pos <= b ? pos : R[pos - b - 1];
}

/* The baseline copy, and where cpu.h allows it the AVX2 copy: a row's three coordinates one
 * vector, so a term is one product and one difference where the baseline needs two of each,
 * and a run's blocks eight columns wide. Both give the column sweeps' bits
 * (tests/test_cholesky_solve.c runs on each path). */
#define SWEEP(f) f##_base
#define SWEEP_WIDE 0
#include "internal/cholesky_sweeps.h"

#ifdef MLC_HAVE_AVX2_CLONES
#pragma GCC push_options
#pragma GCC target("avx2")
#define SWEEP(f) f##_avx2
#define SWEEP_WIDE 1
#include "internal/cholesky_sweeps.h"
#pragma GCC pop_options
#endif

void mlc_cholsolve_solve3(mlc_cholsolve *cs, const double *restrict b, double *restrict x) {
#ifdef MLC_HAVE_AVX2_CLONES
    if (mlc__cpu_use_avx2()) {
        solve3_avx2(cs, b, x);
        return;
    }
#endif
    solve3_base(cs, b, x);
}

void mlc_cholsolve_unit3(mlc_cholsolve *cs, const int *v, int nrhs, double *const *x) {
#ifdef MLC_HAVE_AVX2_CLONES
    if (mlc__cpu_use_avx2()) {
        unit3_avx2(cs, v, nrhs, x);
        return;
    }
#endif
    unit3_base(cs, v, nrhs, x);
}
