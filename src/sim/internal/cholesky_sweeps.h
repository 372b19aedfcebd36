/* cholesky_sweeps.h: the forward and backward sweeps of cholesky_solve.c, written once and
 * included there once per code path (cpu.h's one decision): the SSE2 baseline, where a row of y
 * is a pair of lanes and one more, and the AVX2 copy, where it is one vector of four lanes.
 * Both perform the same IEEE operations in the same order, lane by lane (a product, then a
 * difference: nothing is fused), so the two paths give the same bits. Before inclusion define
 *   SWEEP(f)     the name of f on this path;
 *   SWEEP_WIDE   1 for the four-lane row, 0 for the pair and one.
 * The file defines SWEEP(solve3) and SWEEP(unit3) (mlc_cholsolve_solve3's and _unit3's bodies)
 * and undefines its own names at its end. */

/* A run's blocks are at most SWEEP_BLOCK columns wide: eight four-lane rows of sums, or four
 * pairs and four ones, and the row they meet fill the sixteen vector registers. */
#define SWEEP_BLOCK (SWEEP_WIDE ? 8 : 4)
#define forward_column SWEEP(forward_column)
#define backward_column SWEEP(backward_column)
#define forward_row SWEEP(forward_row)
#define forward_block SWEEP(forward_block)
#define forward_run SWEEP(forward_run)
#define backward_row SWEEP(backward_row)
#define backward_block SWEEP(backward_block)
#define backward_run SWEEP(backward_run)
#define load_columns SWEEP(load_columns)
#define forward_positions SWEEP(forward_positions)
#define forward_run_shared SWEEP(forward_run_shared)
#define backward_positions SWEEP(backward_positions)
#define backward_run_shared SWEEP(backward_run_shared)
#define forward_range SWEEP(forward_range)
#define backward_range SWEEP(backward_range)
#define backward_split SWEEP(backward_split)
#define forward_steps SWEEP(forward_steps)
#define solve3 SWEEP(solve3)
#define unit3 SWEEP(unit3)
#define row_load SWEEP(row_load)
#define row_store SWEEP(row_store)
#define row_msub SWEEP(row_msub)
#define row_mul SWEEP(row_mul)
#define row SWEEP(row)

/* A row of y (YS doubles: x, y, z and a slot that stays zero). */
#if SWEEP_WIDE
typedef double row __attribute__((vector_size(32)));
static inline row row_load(const double *p) {
    row v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void row_store(double *p, row v) {
    memcpy(p, &v, sizeof v);
}
static inline row row_msub(row v, double l, row c) { /* v − l·c */
    return v - l * c;
}
static inline row row_mul(row v, double d) {
    return v * d;
}
#else
typedef struct {
    pair xy;
    double z;
} row;
static inline row row_load(const double *p) {
    row v;
    memcpy(&v.xy, p, sizeof v.xy);
    v.z = p[2];
    return v;
}
static inline void row_store(double *p, row v) {
    memcpy(p, &v.xy, sizeof v.xy);
    p[2] = v.z;
}
static inline row row_msub(row v, double l, row c) { /* v − l·c */
    return (row){v.xy - l * c.xy, v.z - l * c.z};
}
static inline row row_mul(row v, double d) {
    return (row){v.xy * d, v.z * d};
}
#endif

/* ---- the sweeps ------------------------------------------------------------------------ */

/* Forward, column j: y_j scaled by 1/L_jj (when `scale`), then its entries p0 .. p1−1
 * subtracted from their rows. */
static inline void forward_column(const mlc_cholsolve *cs, double *restrict y, int j, int p0,
                                  int p1, int scale) {
    const int *restrict li = cs->li;
    const double *restrict lx = cs->lx;
    row yj = row_load(y + YS * (size_t)j);
    if (scale) {
        yj = row_mul(yj, cs->dinv[j]);
        row_store(y + YS * (size_t)j, yj);
    }
    for (int p = p0; p < p1; p++) {
        double *yi = y + YS * (size_t)li[p];
        row_store(yi, row_msub(row_load(yi), lx[p], yj));
    }
}

/* Backward, column j: y_j = (y_j − Σ_p L_pj y_p) / L_jj, the terms from the column's last row
 * to its first (so that in a run the rows it shares with its neighbours come first). */
static inline void backward_column(const mlc_cholsolve *cs, double *restrict y, int j) {
    const int *restrict li = cs->li;
    const double *restrict lx = cs->lx;
    row s = row_load(y + YS * (size_t)j);
    for (int p = cs->lp[j + 1] - 1; p >= cs->lp[j]; p--)
        s = row_msub(s, lx[p], row_load(y + YS * (size_t)li[p]));
    row_store(y + YS * (size_t)j, row_mul(s, cs->dinv[j]));
}

/* ---- runs of nested patterns: SWEEP_BLOCK columns at a time, the column sweeps' order ----- */

/* Forward: row yr takes the terms of w columns (entries l[c], their scaled values cv[c]) in
 * column order. */
static inline __attribute__((always_inline)) void forward_row(double *restrict yr, int w,
                                                              const double *l, const row *cv) {
    row v = row_load(yr);
    for (int c = 0; c < w; c++)
        v = row_msub(v, l[c], cv[c]);
    row_store(yr, v);
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
        const row yc = row_mul(row_load(y + YS * (size_t)c), cs->dinv[c]);
        row_store(y + YS * (size_t)c, yc);
        for (int c2 = c + 1; c2 < j + w; c2++) {
            double *y2 = y + YS * (size_t)c2;
            row_store(y2, row_msub(row_load(y2), lx[lp[c] + (c2 - c - 1)], yc));
        }
    }
    row cv[SWEEP_BLOCK];
    double l[SWEEP_BLOCK];
    /* column j+c's entry in row r (> j+w−1, of the run): col[c][r] */
    const double *col[SWEEP_BLOCK];
    for (int c = 0; c < w; c++) {
        cv[c] = row_load(y + YS * (size_t)(j + c));
        col[c] = lx + lp[j + c] - (j + c) - 1;
    }
    for (int r = j + w; r <= b; r++) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][r];
        forward_row(y + YS * (size_t)r, w, l, cv);
    }
    for (int i = 0; i < nr; i++) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][b + 1 + i];
        forward_row(y + YS * (size_t)R[i], w, l, cv);
    }
}

/* Forward over the run a..b (columns of one run, a ≤ b) whose shared rows are the first nr of
 * column b's, in blocks of SWEEP_BLOCK columns, then four, two, one. Every row gets its terms in
 * column order, as forward_column's over a..b. */
static void forward_run(const mlc_cholsolve *cs, double *restrict y, int a, int b, int nr) {
    const int *R = cs->li + cs->lp[b];
    int j = a;
#if SWEEP_BLOCK == 8
    for (; j + 7 <= b; j += 8)
        forward_block(cs, y, j, 8, b, R, nr);
#endif
    for (; j + 3 <= b; j += 4)
        forward_block(cs, y, j, 4, b, R, nr);
    if (j + 1 <= b) forward_block(cs, y, j, 2, b, R, nr), j += 2;
    if (j <= b) forward_column(cs, y, j, cs->lp[j], cs->lp[j] + nr, 1);
}

/* Backward: the w sums cv[c] take row yr's terms (entries l[c]). */
static inline __attribute__((always_inline)) void backward_row(const double *restrict yr, int w,
                                                               const double *l, row *cv) {
    const row v = row_load(yr);
    for (int c = 0; c < w; c++)
        cv[c] = row_msub(cv[c], l[c], v);
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
    row cv[SWEEP_BLOCK];
    double l[SWEEP_BLOCK];
    const double *col[SWEEP_BLOCK]; /* column f+c's entry in row r (> j, of the run): col[c][r] */
    for (int c = 0; c < w; c++) {
        cv[c] = row_load(y + YS * (size_t)(f + c));
        col[c] = lx + lp[f + c] - (f + c) - 1;
    }
    for (int i = nr - 1; i >= 0; i--) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][b + 1 + i];
        backward_row(y + YS * (size_t)R[i], w, l, cv);
    }
    for (int r = b; r > j; r--) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][r];
        backward_row(y + YS * (size_t)r, w, l, cv);
    }
    for (int c = j; c >= f; c--) {
        row s = cv[c - f];
        for (int c2 = j; c2 > c; c2--)
            s = row_msub(s, lx[lp[c] + (c2 - c - 1)], row_load(y + YS * (size_t)c2));
        row_store(y + YS * (size_t)c, row_mul(s, cs->dinv[c]));
    }
}

/* Backward over the run a..b (a ≤ b), from b down, in blocks of SWEEP_BLOCK columns, then four,
 * two, one. */
static void backward_run(const mlc_cholsolve *cs, double *restrict y, int a, int b) {
    const int nr = cs->lp[b + 1] - cs->lp[b];
    const int *R = cs->li + cs->lp[b];
    int j = b;
#if SWEEP_BLOCK == 8
    for (; j - 7 >= a; j -= 8)
        backward_block(cs, y, j - 7, 8, b, R, nr);
#endif
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

/* The values of the columns j .. j+w−1 (w ≤ SWEEP_BLOCK: cv[c]) and where their entries lie
 * (column j+c's entry at position pos is col[c][pos]). */
static inline void load_columns(const mlc_cholsolve *cs, const double *restrict y, int j, int w,
                                row *cv, const double **col) {
    for (int c = 0; c < w; c++) {
        cv[c] = row_load(y + YS * (size_t)(j + c));
        col[c] = cs->lx + cs->lp[j + c] - (j + c) - 1;
    }
}

/* Forward: the positions q0 .. q1−1 take the terms of the columns j .. j+w−1 (w ≤ SWEEP_BLOCK),
 * already scaled, in column order. */
static void forward_positions(const mlc_cholsolve *cs, double *restrict y, int j, int w, int b,
                              const int *R, int q0, int q1) {
    row cv[SWEEP_BLOCK];
    double l[SWEEP_BLOCK];
    const double *col[SWEEP_BLOCK];
    load_columns(cs, y, j, w, cv, col);
    for (int q = q0; q < q1; q++) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][q];
        forward_row(y + YS * (size_t)run_row(q, b, R), w, l, cv);
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
#if SWEEP_BLOCK == 8
            for (; j + 7 <= p1; j += 8)
                forward_block(cs, y, j, 8, p1, R, 0);
#endif
            for (; j + 3 <= p1; j += 4)
                forward_block(cs, y, j, 4, p1, R, 0);
            if (j + 1 <= p1) forward_block(cs, y, j, 2, p1, R, 0), j += 2;
            if (j <= p1) forward_column(cs, y, j, cs->lp[j], cs->lp[j], 1);
        }
#pragma omp barrier
        const long npos = (long)b + nr - p1;
        const int q0 = p1 + 1 + (int)(npos * t / T), q1 = p1 + 1 + (int)(npos * (t + 1) / T);
        for (int j = p0; j <= p1; j += SWEEP_BLOCK)
            forward_positions(cs, y, j, p1 - j + 1 < SWEEP_BLOCK ? p1 - j + 1 : SWEEP_BLOCK, b, R,
                              q0, q1);
        if (p1 < b) {
#pragma omp barrier
        }
    }
}

/* Backward: the sums of the columns f .. f+w−1 (w ≤ SWEEP_BLOCK) take the positions q1−1 down to
 * q0, starting from and returning to y. */
static void backward_positions(const mlc_cholsolve *cs, double *restrict y, int f, int w, int b,
                               const int *R, int q0, int q1) {
    row cv[SWEEP_BLOCK];
    double l[SWEEP_BLOCK];
    const double *col[SWEEP_BLOCK];
    load_columns(cs, y, f, w, cv, col);
    for (int q = q1 - 1; q >= q0; q--) {
        for (int c = 0; c < w; c++)
            l[c] = col[c][q];
        backward_row(y + YS * (size_t)run_row(q, b, R), w, l, cv);
    }
    for (int c = 0; c < w; c++)
        row_store(y + YS * (size_t)(f + c), cv[c]);
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
        const int nblk = (p1 - p0 + SWEEP_BLOCK) / SWEEP_BLOCK;
        for (int k = nblk * t / T; k < nblk * (t + 1) / T; k++) {
            const int f = p0 + SWEEP_BLOCK * k;
            backward_positions(cs, y, f, p1 - f + 1 < SWEEP_BLOCK ? p1 - f + 1 : SWEEP_BLOCK, b, R,
                               p1 + 1, b + nr + 1);
        }
#pragma omp barrier
        if (t == 0) { /* the panel among its own rows, from its end */
            int j = p1;
#if SWEEP_BLOCK == 8
            for (; j - 7 >= p0; j -= 8)
                backward_block(cs, y, j - 7, 8, p1, R, 0);
#endif
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
             * the thread's rows are the same positions for each, swept SWEEP_BLOCK columns at a
             * time */
            for (int k = k0; k < k1;) {
                const int j = cs->serial[k];
                int e = j;
                while (e < cs->sn_end[j] && k + (e + 1 - j) < k1 &&
                       cs->serial[k + (e + 1 - j)] == e + 1)
                    e++;
                const int *pc = cs->pcut + (size_t)(k + e - j) * (bins + 1);
                const int q0 = e + 1 + (pc[t] - cs->lp[e]), q1 = e + 1 + (pc[t + 1] - cs->lp[e]);
                for (int c = j; c <= e; c += SWEEP_BLOCK)
                    forward_positions(cs, y, c, e - c + 1 < SWEEP_BLOCK ? e - c + 1 : SWEEP_BLOCK,
                                      e, cs->li + cs->lp[e], q0, q1);
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

static void solve3(mlc_cholsolve *cs, const double *restrict b, double *restrict x) {
    const int n = cs->n, bins = cs->bins;
    const int *restrict perm = cs->perm;
    double *restrict y = cs->y;
    if (bins <= 1) {
        for (int j = 0; j < n; j++) {
            const double *bj = b + 3 * (size_t)perm[j];
            y[YS * j] = bj[0], y[YS * j + 1] = bj[1], y[YS * j + 2] = bj[2];
        }
        forward_range(cs, y, 0, n - 1, 0);
        backward_range(cs, y, 0, n - 1);
        for (int j = 0; j < n; j++) {
            double *xj = x + 3 * (size_t)perm[j];
            xj[0] = y[YS * j], xj[1] = y[YS * j + 1], xj[2] = y[YS * j + 2];
        }
        return;
    }
    const int *ranges = cs->ranges, *bin_ptr = cs->bin_ptr;
#pragma omp parallel num_threads(bins)
    {
#pragma omp for schedule(static)
        for (int j = 0; j < n; j++) {
            const double *bj = b + 3 * (size_t)perm[j];
            y[YS * j] = bj[0], y[YS * j + 1] = bj[1], y[YS * j + 2] = bj[2];
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
            xj[0] = y[YS * j], xj[1] = y[YS * j + 1], xj[2] = y[YS * j + 2];
        }
    }
}

static void unit3(mlc_cholsolve *cs, const int *v, int nrhs, double *const *x) {
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
    memset(y, 0, sizeof(double) * YS * (size_t)n);
    for (int k = 0; k < nrhs; k++) {
        int j = cs->pinv[v[k]];
        y[YS * j + k] = 1;
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
                x[k][perm[j]] = y[YS * j + k];
        return;
    }
#pragma omp parallel num_threads(bins)
    {
        backward_split(cs, y);
        for (int k = 0; k < nrhs; k++) {
            double *restrict xk = x[k];
#pragma omp for schedule(static)
            for (int j = 0; j < n; j++)
                xk[perm[j]] = y[YS * j + k];
        }
    }
}

#undef forward_column
#undef backward_column
#undef forward_row
#undef forward_block
#undef forward_run
#undef backward_row
#undef backward_block
#undef backward_run
#undef load_columns
#undef forward_positions
#undef forward_run_shared
#undef backward_positions
#undef backward_run_shared
#undef forward_range
#undef backward_range
#undef backward_split
#undef forward_steps
#undef solve3
#undef unit3
#undef row_load
#undef row_store
#undef row_msub
#undef row_mul
#undef row
#undef SWEEP
#undef SWEEP_WIDE
#undef SWEEP_BLOCK
