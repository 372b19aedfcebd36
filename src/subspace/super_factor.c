/* super_factor.c: CHOLMOD's supernodal factorization split over subtrees, with its bits
 * (super_factor.h). */
#include "internal/super_factor.h"

#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* The Fortran BLAS and LAPACK, as CHOLMOD calls them (32-bit integers, no hidden string
 * lengths). */
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *beta, double *c, const int *ldc);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
            const int *n, const double *alpha, const double *a, const int *lda, double *b,
            const int *ldb);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);

void mlc_superfactor_destroy(mlc_superfactor *sf) {
    if (!sf) return;
    mlc_free(sf->owner);
    mlc_free(sf->upd_ptr);
    mlc_free(sf->upd_super);
    mlc_free(sf->upd_offset);
    mlc_free(sf->ranges);
    mlc_free(sf->bin_ptr);
    memset(sf, 0, sizeof *sf);
    sf->bins = 1;
}

/* ---- Planning ---------------------------------------------------------------------------- */

/* One update of supernode s by descendant d, as the serial loop meets it. */
typedef struct update {
    int s, d, offset;          /* offset: d's first row that reaches s, counted in d's rows */
    int ndcol, ndrow1, ndrow2; /* d's columns; its rows in s's columns; its rows from there on */
} update;

/* Runs CHOLMOD's descendant lists without numbers (t_cholmod_super_numeric's loop): calls
 * visit(ctx, u) for every update in the order the serial factorization makes it. head, next,
 * lpos: nsuper each, scratch; super_of: n, each column's supernode. */
static void walk_updates(const cholmod_factor *L, const int *super_of, int *head, int *next,
                         int *lpos, void (*visit)(void *, const update *), void *ctx) {
    const int ns = (int)L->nsuper, *Super = L->super, *Lpi = L->pi, *Ls = L->s;
    for (int s = 0; s < ns; s++)
        head[s] = -1;
    for (int s = 0; s < ns; s++) {
        const int k2 = Super[s + 1];
        for (int d = head[s], dnext; d >= 0; d = dnext) {
            const int pdi = Lpi[d], pdend = Lpi[d + 1], ndrow = pdend - pdi;
            const int pdi1 = pdi + lpos[d];
            int pdi2 = pdi1;
            while (pdi2 < pdend && Ls[pdi2] < k2)
                pdi2++;
            const update u = {s, d, lpos[d], Super[d + 1] - Super[d], pdi2 - pdi1, pdend - pdi1};
            visit(ctx, &u);
            dnext = next[d];
            lpos[d] = pdi2 - pdi;
            if (lpos[d] < ndrow) { /* d waits for the next ancestor its rows reach */
                const int anc = super_of[Ls[pdi2]];
                next[d] = head[anc], head[anc] = d;
            }
        }
        const int nscol = k2 - Super[s], nsrow = Lpi[s + 1] - Lpi[s];
        if (nsrow > nscol) { /* s waits for its parent */
            const int pa = super_of[Ls[Lpi[s] + nscol]];
            lpos[s] = nscol, next[s] = head[pa], head[pa] = s;
        }
        head[s] = -1;
    }
}

/* The flops of one update (dsyrk of the rows in s's columns, dgemm of the rows below). */
static double update_flops(const update *u) {
    const double c = u->ndcol, r1 = u->ndrow1, r3 = u->ndrow2 - u->ndrow1;
    return c * r1 * (r1 + 1) + 2.0 * c * r1 * r3;
}

typedef struct counting {
    int *count;    /* nsuper: updates each supernode takes */
    double *flops; /* nsuper: their flops */
} counting;
static void count_update(void *ctx, const update *u) {
    counting *c = ctx;
    c->count[u->s]++;
    c->flops[u->s] += update_flops(u);
}

typedef struct recording {
    int *fill; /* nsuper: the next free entry of each supernode's updates */
    int *super, *offset;
} recording;
static void record_update(void *ctx, const update *u) {
    recording *r = ctx;
    const int k = r->fill[u->s]++;
    r->super[k] = u->d, r->offset[k] = u->offset;
}

/* The largest load when the candidates cand[0..nc) are dealt largest first over `bins`
 * threads; assign (may be NULL) gets each one's thread in cand's new (largest first) order. */
static double deal(int *cand, int nc, int bins, const double *sub, mlc_weighted *tmp, double *load,
                   int *assign) {
    mlc_sort_largest_first(sub, cand, nc, tmp);
    return mlc_deal_largest_first(sub, cand, nc, bins, load, assign);
}

static int ascending_range(const void *a, const void *b) {
    const int u = *(const int *)a, v = *(const int *)b;
    return (u > v) - (u < v);
}

mlc_status mlc_superfactor_plan(mlc_superfactor *sf, const cholmod_factor *L, int threads,
                                double min_flops, mlc_err *err) {
    memset(sf, 0, sizeof *sf);
    sf->bins = 1;
    if (!L || !L->is_super || threads <= 1 || !L->super || !L->pi || !L->px || !L->s) return MLC_OK;
    const int n = (int)L->n, ns = (int)L->nsuper;
    const int *Super = L->super, *Lpi = L->pi, *Ls = L->s;
    sf->n = n, sf->nsuper = ns;
    if (ns < 2) return MLC_OK;
    const int bins = threads < MLC_SUPERFACTOR_MAX_THREADS ? threads : MLC_SUPERFACTOR_MAX_THREADS;

    int *super_of = mlc_malloc(sizeof(int) * (size_t)n);
    int *head = mlc_malloc(sizeof(int) * (size_t)ns), *next = mlc_malloc(sizeof(int) * ns);
    int *lpos = mlc_malloc(sizeof(int) * (size_t)ns), *count = mlc_calloc(ns, sizeof(int));
    int *parent = mlc_malloc(sizeof(int) * (size_t)ns), *first = mlc_malloc(sizeof(int) * ns);
    int *size = mlc_calloc((size_t)ns, sizeof(int));
    int *child_ptr = mlc_calloc((size_t)ns + 1, sizeof(int)), *child = mlc_malloc(sizeof(int) * ns);
    int *cand = mlc_malloc(sizeof(int) * (size_t)ns), *best = mlc_malloc(sizeof(int) * ns);
    int *assign = mlc_malloc(sizeof(int) * (size_t)ns);
    double *flops = mlc_calloc((size_t)ns, sizeof(double)), *sub = mlc_calloc(ns, sizeof(double));
    double *top_cost = mlc_malloc(sizeof(double) * (size_t)ns);
    double *load = mlc_malloc(sizeof(double) * (size_t)bins);
    mlc_weighted *tmp = mlc_malloc(sizeof(mlc_weighted) * (size_t)ns);
    mlc_status st = MLC_OK;
    if (!super_of || !head || !next || !lpos || !count || !parent || !first || !size ||
        !child_ptr || !child || !cand || !best || !assign || !flops || !sub || !top_cost || !load ||
        !tmp) {
        st = mlc_errf(err, MLC_ENOMEM, "eigen: out of memory planning the split factorization");
        goto done;
    }
    /* The walk needs each supernode's rows below its columns ascending, as CHOLMOD's symbolic
     * analysis makes them; and subtrees as contiguous ranges (a postorder). */
    int ok = 1, max_rows = 0;
    for (int s = 0; s < ns; s++) {
        const int nscol = Super[s + 1] - Super[s], nsrow = Lpi[s + 1] - Lpi[s];
        for (int k = Super[s]; k < Super[s + 1]; k++)
            super_of[k] = s;
        for (int p = Lpi[s] + nscol + 1; p < Lpi[s + 1]; p++)
            ok &= Ls[p] > Ls[p - 1];
        ok &= nsrow == nscol || Ls[Lpi[s] + nscol] >= Super[s + 1];
        max_rows = nsrow > max_rows ? nsrow : max_rows;
    }
    if (!ok) goto done;
    for (int s = 0; s < ns && ok; s++) {
        const int nscol = Super[s + 1] - Super[s], nsrow = Lpi[s + 1] - Lpi[s];
        parent[s] = nsrow > nscol ? super_of[Ls[Lpi[s] + nscol]] : -1;
        ok &= parent[s] < 0 || parent[s] > s;
        first[s] = s;
    }
    for (int s = 0; s < ns && ok; s++) { /* children before parents: a postorder check */
        size[s] += 1;
        ok &= size[s] == s - first[s] + 1;
        const int pa = parent[s];
        if (pa < 0) continue;
        size[pa] += size[s];
        if (first[s] < first[pa]) first[pa] = first[s];
        child_ptr[pa + 1]++;
    }
    if (!ok) goto done;

    /* Each supernode's flops: the updates it takes, then its dpotrf and dtrsm. */
    counting cnt = {count, flops};
    walk_updates(L, super_of, head, next, lpos, count_update, &cnt);
    /* On the top, a supernode's update products run side by side on the team and its own
     * dpotrf and dtrsm on one thread: top_cost counts them so. */
    double serial = 0;
    for (int s = 0; s < ns; s++) {
        const double c = Super[s + 1] - Super[s], r2 = (Lpi[s + 1] - Lpi[s]) - c;
        const double own = c * c * c / 3.0 + r2 * c * c;
        top_cost[s] = own + flops[s] / bins;
        flops[s] += own;
        serial += flops[s];
    }
    sf->serial_flops = serial;
    if (serial < min_flops) goto done;
    for (int s = 0; s < ns; s++) {
        sub[s] += flops[s];
        if (parent[s] >= 0) sub[parent[s]] += sub[s];
    }
    for (int s = 0; s < ns; s++)
        child_ptr[s + 1] += child_ptr[s];
    for (int s = 0; s < ns; s++) /* size reused as the fill pointer */
        size[s] = child_ptr[s];
    for (int s = 0; s < ns; s++)
        if (parent[s] >= 0) child[size[parent[s]]++] = s;

    /* From the roots down: open the largest candidate that has children (its root joins the
     * top), deal the candidates, keep the best split seen. */
    int nc = 0, nbest = 0;
    double top = 0, best_est = serial;
    for (int s = 0; s < ns; s++)
        if (parent[s] < 0) cand[nc++] = s;
    for (int step = 0, since_best = 0; step < 64 * bins && since_best < 8; step++) {
        const double est = top + deal(cand, nc, bins, sub, tmp, load, NULL);
        if (est < best_est) {
            best_est = est, nbest = nc, since_best = 0;
            memcpy(best, cand, sizeof(int) * (size_t)nc);
        } else {
            since_best++;
        }
        int open = -1; /* cand is largest first after deal */
        for (int c = 0; c < nc && open < 0; c++)
            if (child_ptr[cand[c] + 1] > child_ptr[cand[c]]) open = c;
        if (open < 0) break;
        const int r = cand[open];
        cand[open] = cand[--nc];
        for (int p = child_ptr[r]; p < child_ptr[r + 1]; p++)
            cand[nc++] = child[p];
        top += top_cost[r];
    }
    if (nbest == 0 || best_est > 0.9 * serial) goto done;

    /* The chosen split: each subtree's thread; each thread's ranges ascending. */
    deal(best, nbest, bins, sub, tmp, load, assign);
    sf->owner = mlc_malloc(sizeof(int) * (size_t)ns);
    sf->upd_ptr = mlc_malloc(sizeof(int) * ((size_t)ns + 1));
    sf->ranges = mlc_malloc(2 * sizeof(int) * (size_t)nbest);
    sf->bin_ptr = mlc_calloc((size_t)bins + 1, sizeof(int));
    size_t nupd = 0;
    for (int s = 0; s < ns; s++)
        nupd += (size_t)count[s];
    sf->upd_super = mlc_malloc(sizeof(int) * (nupd ? nupd : 1));
    sf->upd_offset = mlc_malloc(sizeof(int) * (nupd ? nupd : 1));
    if (!sf->owner || !sf->upd_ptr || !sf->ranges || !sf->bin_ptr || !sf->upd_super ||
        !sf->upd_offset || nupd > (size_t)0x7fffffff) {
        mlc_superfactor_destroy(sf);
        st = mlc_errf(err, MLC_ENOMEM, "eigen: out of memory planning the split factorization");
        goto done;
    }
    sf->upd_ptr[0] = 0;
    for (int s = 0; s < ns; s++)
        sf->upd_ptr[s + 1] = sf->upd_ptr[s] + count[s], head[s] = sf->upd_ptr[s];
    /* head is the walk's scratch: the fill pointers go in `count` */
    memcpy(count, head, sizeof(int) * (size_t)ns);
    recording rec = {count, sf->upd_super, sf->upd_offset};
    walk_updates(L, super_of, head, next, lpos, record_update, &rec);
    for (int s = 0; s < ns; s++)
        sf->owner[s] = -1;
    for (int c = 0; c < nbest; c++)
        sf->bin_ptr[assign[c] + 1]++;
    for (int b = 0; b < bins; b++)
        sf->bin_ptr[b + 1] += sf->bin_ptr[b];
    int fill[MLC_SUPERFACTOR_MAX_THREADS];
    for (int b = 0; b < bins; b++)
        fill[b] = sf->bin_ptr[b];
    for (int c = 0; c < nbest; c++) {
        const int r = best[c], b = assign[c], k = fill[b]++;
        sf->ranges[2 * k] = first[r], sf->ranges[2 * k + 1] = r;
        for (int s = first[r]; s <= r; s++)
            sf->owner[s] = b;
    }
    for (int b = 0; b < bins; b++) /* pairs sort by their first entry: ranges are disjoint */
        qsort(sf->ranges + 2 * sf->bin_ptr[b], (size_t)(sf->bin_ptr[b + 1] - sf->bin_ptr[b]),
              2 * sizeof(int), ascending_range);
    sf->nranges = nbest, sf->bins = bins, sf->split_flops = best_est;
    sf->max_rows = max_rows, sf->csize = L->maxcsize > 0 ? (size_t)L->maxcsize : 1;
done:
    mlc_free(super_of), mlc_free(head), mlc_free(next), mlc_free(lpos), mlc_free(count);
    mlc_free(parent), mlc_free(first), mlc_free(size), mlc_free(child_ptr), mlc_free(child);
    mlc_free(cand), mlc_free(best), mlc_free(assign), mlc_free(flops), mlc_free(sub);
    mlc_free(top_cost);
    mlc_free(load), mlc_free(tmp);
    return st;
}

/* ---- Factorizing ------------------------------------------------------------------------- */

/* One thread's workspace: map (n) holds the row positions of the supernode being factorized,
 * rel (max_rows) an update's rows in it, C (csize) the update. */
typedef struct workspace {
    int *map, *rel;
    double *C;
} workspace;

static const double one = 1.0, zero = 0.0;

/* Supernode s's block cleared and its columns of S = tril(PAPᵀ) copied in (no arithmetic: the
 * copy assigns); map gets s's row positions. */
static void assemble_super(const cholmod_sparse *S, cholmod_factor *L, int s, int *map) {
    const int *Super = L->super, *Lpi = L->pi, *Lpx = L->px, *Ls = L->s;
    const int *Sp = S->p, *Si = S->i, *Snz = S->nz;
    const double *Sx = S->x;
    double *Lx = L->x;
    const int k1 = Super[s], k2 = Super[s + 1], nscol = k2 - k1;
    const int psi = Lpi[s], psx = Lpx[s], nsrow = Lpi[s + 1] - psi;
    memset(Lx + psx, 0, sizeof(double) * (size_t)nsrow * (size_t)nscol);
    for (int k = 0; k < nsrow; k++)
        map[Ls[psi + k]] = k;
    for (int k = k1; k < k2; k++) {
        const int pend = S->packed ? Sp[k + 1] : Sp[k] + Snz[k];
        for (int p = Sp[k]; p < pend; p++) {
            const int i = Si[p];
            if (i < k) continue;
            const int imap = map[i];
            if (imap >= 0 && imap < nsrow) Lx[imap + psx + (k - k1) * nsrow] = Sx[p];
        }
    }
}

/* Update u of supernode s: C = L_d,1 L_d,1ᵀ (lower part) over L_d,2 L_d,1ᵀ, from d's final
 * columns alone (any thread, any time). Returns C's rows, ndrow2; *ndrow1 gets its columns. */
static int update_product(const mlc_superfactor *sf, const cholmod_factor *L, int s, int u,
                          double *C, int *ndrow1_out) {
    const int *Super = L->super, *Lpi = L->pi, *Lpx = L->px, *Ls = L->s;
    const double *Lx = L->x;
    const int k2 = Super[s + 1], d = sf->upd_super[u];
    const int ndcol = Super[d + 1] - Super[d], pdi = Lpi[d], pdend = Lpi[d + 1];
    const int ndrow = pdend - pdi, pdi1 = pdi + sf->upd_offset[u];
    const int pdx1 = Lpx[d] + sf->upd_offset[u];
    int pdi2 = pdi1;
    while (pdi2 < pdend && Ls[pdi2] < k2)
        pdi2++;
    const int ndrow1 = pdi2 - pdi1, ndrow2 = pdend - pdi1, ndrow3 = ndrow2 - ndrow1;
    dsyrk_("L", "N", &ndrow1, &ndcol, &one, Lx + pdx1, &ndrow, &zero, C, &ndrow2);
    if (ndrow3 > 0)
        dgemm_("N", "C", &ndrow3, &ndrow1, &ndcol, &one, Lx + pdx1 + ndrow1, &ndrow, Lx + pdx1,
               &ndrow, &zero, C + ndrow1, &ndrow2);
    *ndrow1_out = ndrow1;
    return ndrow2;
}

/* s's block −= update u's C, entry by entry in CHOLMOD's order; map holds s's row positions,
 * rel (ndrow2) is scratch. */
static void update_subtract(const mlc_superfactor *sf, cholmod_factor *L, int s, int u,
                            const double *C, int ndrow1, int ndrow2, const int *map, int *rel) {
    const int *Lpi = L->pi, *Lpx = L->px, *Ls = L->s;
    const int d = sf->upd_super[u], pdi1 = Lpi[d] + sf->upd_offset[u];
    const int psx = Lpx[s], nsrow = Lpi[s + 1] - Lpi[s];
    double *Lx = L->x;
    for (int i = 0; i < ndrow2; i++)
        rel[i] = map[Ls[pdi1 + i]];
    for (int j = 0; j < ndrow1; j++) {
        double *col = Lx + psx + (size_t)rel[j] * nsrow;
        const double *c = C + (size_t)ndrow2 * j;
        for (int i = j; i < ndrow2; i++)
            col[rel[i]] -= c[i];
    }
}

/* s's diagonal block factorized (dpotrf) and its rows below solved (dtrsm). Returns dpotrf's
 * info (0: positive definite). */
static int finish_super(cholmod_factor *L, int s) {
    const int *Super = L->super, *Lpi = L->pi, *Lpx = L->px;
    double *Lx = L->x;
    const int nscol = Super[s + 1] - Super[s], psx = Lpx[s], nsrow = Lpi[s + 1] - Lpi[s];
    int info = 0;
    dpotrf_("L", &nscol, Lx + psx, &nsrow, &info);
    if (info != 0) return info;
    const int nsrow2 = nsrow - nscol;
    if (nsrow2 > 0)
        dtrsm_("R", "L", "C", "N", &nsrow2, &nscol, &one, Lx + psx, &nsrow, Lx + psx + nscol,
               &nsrow);
    return 0;
}

/* Supernode s as t_cholmod_super_numeric makes it (real LLᵀ, β = 0), its updates in the
 * recorded order. Returns dpotrf's info. */
static int factor_super(const mlc_superfactor *sf, const cholmod_sparse *S, cholmod_factor *L,
                        int s, const workspace *w) {
    assemble_super(S, L, s, w->map);
    for (int u = sf->upd_ptr[s]; u < sf->upd_ptr[s + 1]; u++) {
        int ndrow1;
        const int ndrow2 = update_product(sf, L, s, u, w->C, &ndrow1);
        update_subtract(sf, L, s, u, w->C, ndrow1, ndrow2, w->map, w->rel);
    }
    return finish_super(L, s);
}

/* Thread b's subtrees, each in CHOLMOD's order. Returns 0, or 1 at a pivot not positive (or
 * when another thread met one: `failed`, read and written atomically). */
static int bin_factor(const mlc_superfactor *sf, const cholmod_sparse *S, cholmod_factor *L, int b,
                      const workspace *w, int *failed) {
    for (int k = sf->bin_ptr[b]; k < sf->bin_ptr[b + 1]; k++)
        for (int s = sf->ranges[2 * k]; s <= sf->ranges[2 * k + 1]; s++) {
            int stop;
#pragma omp atomic read
            stop = *failed;
            if (stop) return 1;
            if (factor_super(sf, S, L, s, w) != 0) {
#pragma omp atomic write
                *failed = 1;
                return 1;
            }
        }
    return 0;
}

#ifdef _OPENMP
/* The top in CHOLMOD's order, the subtrees' columns final, called by every thread of the team.
 * A supernode's updates are computed side by side (each C from its descendant's final columns
 * alone) and subtracted one after the other in the recorded order, so its block sees the serial
 * sums; its assembly and its dpotrf and dtrsm run on one thread. `failed` is written only
 * inside `single` (or before the caller's barrier), so every thread reads the same value after
 * the construct's barrier and all leave the loop together. */
static void top_factor(const mlc_superfactor *sf, const cholmod_sparse *S, cholmod_factor *L,
                       const workspace *w, int *failed) {
    const int id = omp_get_thread_num();
    const int *map = w[0].map; /* the top's rows, built by one thread, read by all */
    for (int s = 0; s < sf->nsuper; s++) {
        if (sf->owner[s] >= 0) continue;
        if (*failed) break;
#pragma omp single
        assemble_super(S, L, s, w[0].map);
#pragma omp for ordered schedule(static, 1)
        for (int u = sf->upd_ptr[s]; u < sf->upd_ptr[s + 1]; u++) {
            int ndrow1;
            const int ndrow2 = update_product(sf, L, s, u, w[id].C, &ndrow1);
#pragma omp ordered
            update_subtract(sf, L, s, u, w[id].C, ndrow1, ndrow2, map, w[id].rel);
        }
#pragma omp single
        if (finish_super(L, s) != 0) *failed = 1;
    }
}
#endif

int mlc_superfactor_factorize(const mlc_superfactor *sf, cholmod_sparse *A, cholmod_factor *L,
                              cholmod_common *cc) {
    if (sf->bins <= 1 || !A || !L || !L->is_super || A->stype == 0 || A->xtype != CHOLMOD_REAL ||
        A->dtype != CHOLMOD_DOUBLE || (int)A->nrow != sf->n || (int)L->n != sf->n ||
        (int)L->nsuper != sf->nsuper || !cc->final_asis)
        return 0;
    /* S = tril(PAPᵀ), made as cholmod_factorize makes it */
    int *perm = L->ordering == CHOLMOD_NATURAL ? NULL : L->Perm;
    cholmod_sparse *S = NULL, *owned = NULL;
    if (A->stype > 0) {
        S = owned = cholmod_ptranspose(A, 2, perm, NULL, 0, cc);
    } else if (perm) {
        cholmod_sparse *U = cholmod_ptranspose(A, 2, perm, NULL, 0, cc);
        if (U) S = owned = cholmod_ptranspose(U, 2, NULL, NULL, 0, cc);
        cholmod_free_sparse(&U, cc);
    } else {
        S = A;
    }
    const int bins = sf->bins;
    workspace w[MLC_SUPERFACTOR_MAX_THREADS] = {{0}};
    int ok = S != NULL, failed = 0;
    for (int b = 0; b < bins && ok; b++) {
        w[b].map = mlc_malloc(sizeof(int) * (size_t)sf->n);
        w[b].rel = mlc_malloc(sizeof(int) * (size_t)(sf->max_rows > 0 ? sf->max_rows : 1));
        w[b].C = mlc_malloc(sizeof(double) * sf->csize);
        ok = w[b].map && w[b].rel && w[b].C;
        if (ok)
            for (int i = 0; i < sf->n; i++)
                w[b].map[i] = -1;
    }
    /* L numeric, as cholmod_super_numeric makes a symbolic factor numeric */
    if (ok && L->xtype == CHOLMOD_PATTERN)
        ok = cholmod_change_factor(CHOLMOD_REAL, 1, 1, 1, 1, L, cc) && L->xtype == CHOLMOD_REAL;
    if (ok) {
        L->is_ll = 1;
#ifdef _OPENMP
        /* nested under an enclosing region (the precompute's two branches) when there is one */
        const int level = omp_get_active_level(), saved = omp_get_max_active_levels();
        if (saved < level + 1) omp_set_max_active_levels(level + 1);
#pragma omp parallel num_threads(bins)
        {
            const int nth = omp_get_num_threads(), id = omp_get_thread_num();
            for (int b = id; b < bins; b += nth)
                if (bin_factor(sf, S, L, b, &w[id], &failed)) break;
#pragma omp barrier
            top_factor(sf, S, L, w, &failed);
        }
        if (saved < level + 1) omp_set_max_active_levels(saved);
#else
        for (int b = 0; b < bins && !failed; b++)
            bin_factor(sf, S, L, b, &w[0], &failed);
        for (int s = 0; s < sf->nsuper && !failed; s++) /* the top in CHOLMOD's order */
            if (sf->owner[s] < 0 && factor_super(sf, S, L, s, &w[0]) != 0) failed = 1;
#endif
        ok = !failed;
    }
    for (int b = 0; b < bins; b++)
        mlc_free(w[b].map), mlc_free(w[b].rel), mlc_free(w[b].C);
    cholmod_free_sparse(&owned, cc);
    if (!ok) return 0;
    L->minor = L->n;
    cc->status = CHOLMOD_OK;
    return 1;
}
