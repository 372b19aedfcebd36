/* contact.c: exact contact solves on a precomputed Delassus matrix (contact.h).
 *
 * The normal problem, min ½λᵀAλ + cᵀλ over λ ≥ 0 with A = (D + εI)_CC and c = y* − g, is
 * solved by the active-set method of Lawson and Hanson (their NNLS, here for a general strictly
 * convex quadratic): keep a set P of positive forces whose unconstrained minimizer over P is
 * strictly positive; add the candidate whose gap w = Aλ + c is most negative; when the new
 * minimizer leaves the positive orthant, walk toward it until the first force reaches 0 and
 * drop it. Each step strictly decreases the objective, so it terminates; the iteration guard
 * only protects against rounding cycles. P holds the samples in contact of one step (tens),
 * so a solve factors A_PP by a dense Cholesky, and keeps the factor while the set stays the
 * same (the normal case within a solve, across the iterations of a step and across the steps
 * of a resting contact): a set seen again costs no factorization, with the same bits.
 *
 * Coulomb-limited friction is a box-constrained problem on the same A_PP, solved exactly by
 * principal pivoting (box_solve) from the sides of the box the previous solve left each force
 * on: across the iterations of a step they rarely change, so a solve is about one pass, and
 * the factor of the free forces' block is kept per axis while the contact set and the free
 * set stay.
 *
 * Most solves (90% of a walking synthetic body's, 98% of the cat's) end with the previous
 * solve's contact set: same_set_again confirms that case in one pass over the samples, with
 * the general path's bits, before the general path is tried.
 */
#include "internal/contact.h"

#include <math.h>
#include <string.h>

#include "cpu.h"
#include "dense.h"

/* The normal solve's hot path (the repeated-set check and its passes over the samples) is
 * compiled twice, for the baseline and for AVX2 (cpu.h), inlined into each copy of
 * the solve: wider vectors and blends, the same operations in the same order (no FMA: the file
 * is built without contraction), so the same bits. The friction solves work on a handful of
 * forces, where wider vectors buy nothing. no-trapping-math lets the passes' selects become
 * blends; no-tree-loop-distribute-patterns keeps GCC from turning the copy loops over a
 * handful of forces into memcpy calls. Neither changes a value. */
#pragma GCC optimize("no-trapping-math", "no-tree-loop-distribute-patterns")
#define MLC_HOT inline __attribute__((always_inline))

mlc_status mlc_contact_create(mlc_contact *cs, int ns, const double *D, double tol,
                              double friction) {
    memset(cs, 0, sizeof *cs);
    cs->ns = ns;
    cs->D = cs->D0 = D;
    cs->fnp = cs->anp = -1;
    cs->tol = tol;
    cs->friction = friction;
    size_t n = (size_t)(ns > 0 ? ns : 1);
    double dmax = 0;
    for (int s = 0; s < ns; s++)
        dmax = fmax(dmax, D[(size_t)s * (n + 1)]);
    cs->eps = MLC_CONTACT_EPS * (dmax > 0 ? dmax : 1);
    int ok = (cs->lam = mlc_calloc(3 * n, sizeof(double))) != NULL;
    /* The factors' columns a few entries longer than ns: a power-of-two stride (1,024 or
     * 2,048 slots) would map a block's columns onto the same cache sets. */
    cs->ldf = (n + 3) / 4 * 4 + 4;
    ok &= (cs->L = mlc_calloc(cs->ldf * n, sizeof(double))) != NULL;
    for (int a = 0; a < 2; a++) {
        ok &= (cs->Lb[a] = mlc_calloc(cs->ldf * n, sizeof(double))) != NULL;
        ok &= (cs->bkey[a] = mlc_calloc(n, sizeof(int))) != NULL;
        ok &= (cs->kprev[a] = mlc_calloc(n, sizeof(int))) != NULL;
        cs->bnf[a] = -1;
    }
    ok &= (cs->fside = mlc_calloc(3 * n, sizeof(int))) != NULL;
    ok &= (cs->fset = mlc_calloc(4 * n, sizeof(int))) != NULL;
    ok &= (cs->A = mlc_calloc(n * n, sizeof(double))) != NULL;
    ok &= (cs->upd = mlc_calloc(2 * n + 2, sizeof(double))) != NULL;
    ok &= (cs->mark = mlc_calloc(n, sizeof(int))) != NULL;
    ok &= (cs->cur = mlc_calloc(2 * n + 1, sizeof(int))) != NULL;
    double **vecs[] = {&cs->c, &cs->l, &cs->d,    &cs->x, &cs->bound,
                       &cs->s, &cs->t, &cs->base, &cs->w, &cs->res};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        ok &= (*vecs[i] = mlc_calloc(n, sizeof(double))) != NULL;
    ok &= (cs->coef = mlc_calloc(n, sizeof(double))) != NULL;
    ok &= (cs->cols = mlc_calloc(n, sizeof(double *))) != NULL;
    int **ivecs[] = {&cs->contact, &cs->cand, &cs->pset, &cs->iscand, &cs->fkey, &cs->akey};
    for (size_t i = 0; i < sizeof ivecs / sizeof ivecs[0]; i++)
        ok &= (*ivecs[i] = mlc_calloc(n, sizeof(int))) != NULL;
    if (!ok) {
        mlc_contact_destroy(cs);
        return MLC_ENOMEM;
    }
    return MLC_OK;
}

void mlc_contact_destroy(mlc_contact *cs) {
    if (!cs) return;
    double *bufs[] = {cs->lam,   cs->L, cs->A, cs->c,    cs->l, cs->d,     cs->x,
                      cs->bound, cs->s, cs->t, cs->base, cs->w, cs->Lb[0], cs->Lb[1]};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        mlc_free(bufs[i]);
    mlc_free(cs->coef);
    mlc_free(cs->upd);
    mlc_free(cs->mark);
    mlc_free(cs->cur);
    mlc_free(cs->res);
    mlc_free((void *)cs->cols);
    int *ibufs[] = {cs->contact, cs->cand, cs->pset,    cs->iscand,  cs->fkey,     cs->akey,
                    cs->fside,   cs->fset, cs->bkey[0], cs->bkey[1], cs->kprev[0], cs->kprev[1]};
    for (size_t i = 0; i < sizeof ibufs / sizeof ibufs[0]; i++)
        mlc_free(ibufs[i]);
    memset(cs, 0, sizeof *cs);
}

mlc_status mlc_contact_grow(mlc_contact *cs, int ns, const double *D) {
    const int n0 = cs->ns;
    if (ns < n0) return MLC_EINVAL;
    mlc_contact g;
    if (mlc_contact_create(&g, ns, D, cs->tol, cs->friction) != MLC_OK) return MLC_ENOMEM;
    /* The warm start by sample: forces and box sides (axis k at k·ns), the contact set, the
     * samples the last friction solves may have left non-zero and the counters that say
     * whether those lists are current. */
    for (int k = 0; k < 3; k++) {
        memcpy(g.lam + (size_t)k * ns, cs->lam + (size_t)k * n0, sizeof(double) * (size_t)n0);
        memcpy(g.fside + (size_t)k * ns, cs->fside + (size_t)k * n0, sizeof(int) * (size_t)n0);
    }
    g.np = cs->np;
    memcpy(g.contact, cs->contact, sizeof(int) * (size_t)cs->np);
    for (int a = 0; a < 2; a++) {
        g.nkprev[a] = cs->nkprev[a], g.kgen[a] = cs->kgen[a];
        memcpy(g.kprev[a], cs->kprev[a], sizeof(int) * (size_t)cs->nkprev[a]);
    }
    g.cgen = cs->cgen, g.agen = cs->agen;
    g.updates = cs->updates;
    g.eps = cs->eps;
    g.friction_s = cs->friction_s;
    mlc_contact_destroy(cs);
    *cs = g; /* kept factors dropped (create's −1 keys); w_fresh 0: gaps recomputed */
    return MLC_OK;
}

void mlc_contact_set_updates(mlc_contact *cs, int on) {
    cs->updates = on != 0;
    cs->fnp = -1; /* the next factor is made afresh */
    cs->nupdates = 0;
}

void mlc_contact_reset(mlc_contact *cs) {
    if (cs->ns > 0) memset(cs->lam, 0, sizeof(double) * 3 * (size_t)cs->ns);
    if (cs->ns > 0) memset(cs->fside, 0, sizeof(int) * 3 * (size_t)cs->ns);
    cs->np = 0;
}

/* The entry of D + εI between samples s and t. */
static inline double sample_entry(const mlc_contact *cs, const double *D, int s, int t) {
    const double a = D[(size_t)s + (size_t)cs->ns * (size_t)t];
    return s == t ? a + cs->eps : a;
}

/* A_ij of candidates i, j. */
static inline double entry(const mlc_contact *cs, int i, int j) {
    return sample_entry(cs, cs->D, cs->cand[i], cs->cand[j]);
}

/* The length of the common start of key[0..knp) (samples) and set P (candidate indices, in
 * order). Only for the matrix given at creation, which stays constant: a factor's or A_PP's
 * entries over a leading part of a set are then functions of those samples alone, so reusing
 * them gives the bits a rebuild would. */
static int same_start(const mlc_contact *cs, const int *key, int knp, const int *P, int np) {
    if (cs->D != cs->D0) return 0;
    int p = 0, n = knp < np ? knp : np;
    while (p < n && key[p] == cs->cand[P[p]])
        p++;
    return p;
}

/* Remember which samples' matrix was just built from the current D (none when D is not the
 * creation's: a caller's own matrix may change between solves). */
static void record_set(const mlc_contact *cs, int *key, int *knp, const int *P, int np) {
    for (int a = 0; a < np; a++)
        key[a] = cs->cand[P[a]];
    *knp = cs->D == cs->D0 ? np : -1;
}

/* Row and column q of the factor L (n×n, ld) dropped in place: the factor of the matrix
 * without q. Rows below q move up one and columns right of q left one; the trailing block
 * L₃₃ then takes the rank-one update L₃₃L₃₃ᵀ + vvᵀ by q's old column v (rotations, always
 * stable). v: n scratch values. */
static void factor_drop(double *L, size_t ld, int n, int q, double *restrict v) {
    const int m = n - 1 - q;
    memcpy(v, L + ld * (size_t)q + q + 1, sizeof(double) * (size_t)m);
    for (int j = 0; j < q; j++) {
        double *Lj = L + ld * (size_t)j;
        memmove(Lj + q, Lj + q + 1, sizeof(double) * (size_t)m);
    }
    for (int j = q + 1; j < n; j++)
        memmove(L + ld * (size_t)(j - 1) + (j - 1), L + ld * (size_t)j + j,
                sizeof(double) * (size_t)(n - j));
    for (int k = 0; k < m; k++) {
        double *restrict Lk = L + ld * (size_t)(q + k) + q;
        const double lkk = 1 / Lk[k], r = sqrt(lkk * lkk + v[k] * v[k]);
        const double c = r / lkk, s = v[k] / lkk, ic = lkk / r;
        Lk[k] = 1 / r;
        for (int i = k + 1; i < m; i++) {
            const double li = (Lk[i] + s * v[i]) * ic;
            v[i] = c * v[i] - s * li;
            Lk[i] = li;
        }
    }
}

/* A row and column inserted at q: L (n×n) becomes the factor of the (n+1)×(n+1) matrix whose
 * new column, in the new order, is a (a[q] its diagonal). Row q of the leading columns solves
 * against them, the new column below follows, and the trailing block takes the rank-one
 * downdate by it. Returns 0 when a downdated pivot falls to ε or loses most of its digits
 * (the leading q columns then hold the new factor's rows; columns q.. must be refactored).
 * x: n + 1 scratch values. */
static int factor_insert(double *L, size_t ld, int n, int q, const double *restrict a,
                         double *restrict x, double eps) {
    for (int j = 0; j < q; j++) /* x = L₁₁⁻¹ a₁, column by column */
        x[j] = a[j];
    for (int k = 0; k < q; k++) {
        const double *Lk = L + ld * (size_t)k;
        const double xk = x[k] *= Lk[k];
        for (int j = k + 1; j < q; j++)
            x[j] -= Lk[j] * xk;
    }
    double d2 = a[q];
    for (int k = 0; k < q; k++)
        d2 -= x[k] * x[k];
    if (!(d2 > eps)) return 0;
    const double d = sqrt(d2);
    double *restrict l = x + q; /* the new column below its diagonal: old rows q..n−1 */
    const int m = n - q;
    for (int i = 0; i < m; i++)
        l[i + 1] = a[q + 1 + i];
    for (int k = 0; k < q; k++) {
        const double *Lk = L + ld * (size_t)k + q, xk = x[k];
        for (int i = 0; i < m; i++)
            l[i + 1] -= Lk[i] * xk;
    }
    for (int i = 0; i < m; i++)
        l[i + 1] /= d;
    for (int j = 0; j < q; j++) { /* rows q.. of the leading columns down one, row q = x */
        double *Lj = L + ld * (size_t)j;
        memmove(Lj + q + 1, Lj + q, sizeof(double) * (size_t)m);
        Lj[q] = x[j];
    }
    for (int j = n - 1; j >= q; j--) /* columns q.. right one and down one */
        memmove(L + ld * (size_t)(j + 1) + (j + 1), L + ld * (size_t)j + j,
                sizeof(double) * (size_t)(n - j));
    double *Lq = L + ld * (size_t)q;
    Lq[q] = 1 / d;
    memcpy(Lq + q + 1, l + 1, sizeof(double) * (size_t)m);
    const double *restrict w = Lq + q + 1; /* the downdate's vector, consumed below */
    double *restrict u = l + 1;
    for (int i = 0; i < m; i++)
        u[i] = w[i];
    for (int k = 0; k < m; k++) {
        double *restrict Lk = L + ld * (size_t)(q + 1 + k) + q + 1;
        const double lkk = 1 / Lk[k], r2 = lkk * lkk - u[k] * u[k];
        if (!(r2 > eps) || !(r2 > MLC_CONTACT_UPDATE_KEEP * lkk * lkk)) return 0;
        const double r = sqrt(r2), c = r / lkk, s = u[k] / lkk, ic = lkk / r;
        Lk[k] = 1 / r;
        for (int i = k + 1; i < m; i++) {
            const double li = (Lk[i] - s * u[i]) * ic;
            u[i] = c * u[i] - s * li;
            Lk[i] = li;
        }
    }
    return 1;
}

/* With rank-one changes on (mlc_contact_set_updates): L (ld ldf), the factor of D0's block on
 * the samples K[0..n), turned into the factor of the block on S[0..m) (both sharing their
 * first p samples) by dropping and inserting forces in the order of a merge of the two lists.
 * Returns how many leading columns of L now hold S's factor in their leading rows: m when
 * done, less when the lists order a pair of common samples differently, the changes would
 * cost more than refactoring from p, or a downdate lost its pivot. The caller refactors the
 * rest (refilling the rows of the kept columns below that). *nops counts the changes made. */
static int factor_follow(mlc_contact *cs, double *L, const int *K, int n, const int *S, int m,
                         int p, int *nops) {
    int *mark = cs->mark, *cur = cs->cur;
    for (int a = p; a < m; a++)
        mark[S[a]] |= 1;
    for (int b = p; b < n; b++)
        mark[K[b]] |= 2;
    /* The plan's cost (flops of the rotations, the new rows and the moves) against a
     * refactorization's from p. */
    double cost = 0;
    int ok = 1;
    for (int a = p, b = p, len = n, at = p; ok && (a < m || b < n);) {
        if (a < m && b < n && S[a] == K[b]) {
            a++, b++, at++;
        } else if (b < n && !(mark[K[b]] & 1)) { /* K[b] leaves */
            b++, len--;
            cost += 3.0 * (len - at) * (len - at);
        } else if (a < m && !(mark[S[a]] & 2)) { /* S[a] enters */
            cost += (double)at * at + 2.0 * at * (len - at) + 3.0 * (len - at) * (len - at);
            a++, at++, len++;
        } else {
            ok = 0; /* the same samples in another order */
        }
    }
    const double refactor = 2.0 * (m - p) * (m - p) * (m - p) / 3 + 2.0 * p * (m - p) * (m - p);
    ok &= 2 * cost < refactor;
    int done = p;
    if (ok) {
        memcpy(cur, K, sizeof(int) * (size_t)n);
        const size_t ld = cs->ldf;
        double *a_new = cs->upd + cs->ns + 1;
        for (int a = p, b = p, len = n, at = p; a < m || b < n;) {
            if (a < m && b < n && S[a] == K[b]) {
                a++, b++, at++;
            } else if (b < n && !(mark[K[b]] & 1)) {
                factor_drop(L, ld, len, at, cs->upd);
                memmove(cur + at, cur + at + 1, sizeof(int) * (size_t)(len - at - 1));
                b++, len--, ++*nops;
            } else {
                memmove(cur + at + 1, cur + at, sizeof(int) * (size_t)(len - at));
                cur[at] = S[a];
                for (int i = 0; i <= len; i++)
                    a_new[i] = sample_entry(cs, cs->D0, cur[i], S[a]);
                ++*nops;
                if (!factor_insert(L, ld, len, at, a_new, cs->upd, cs->eps)) break;
                a++, at++, len++;
            }
            done = at; /* columns before `at` hold S's factor */
        }
    }
    for (int a = p; a < m; a++)
        mark[S[a]] = 0;
    for (int b = p; b < n; b++)
        mark[K[b]] = 0;
    return done;
}

/* Lower Cholesky factor of A_PP into L (ld ldf), with the reciprocal pivots on the diagonal
 * (the solves then multiply instead of dividing). A non-positive pivot (only by rounding: A
 * is positive definite) is replaced by √ε so the factor stays usable.
 *
 * Entry (i, j) of the factor is A_ij minus Σ_{k<j} L_jk L_ik, times the j-th reciprocal
 * pivot: it depends only on rows 0..j and i of the set. So when the set starts with the same
 * p samples as the set L holds (an entering sample appended, or inserted at p; a sample
 * dropped at p; the same set again, p = np), the leading p columns are kept, the new rows
 * below them are computed with the same operations in the same order, and only columns p.. are
 * factored: the bits of a full factorization at a fraction of its cost. Within a solve, across
 * the iterations of a step and across the steps of a resting contact the set rarely changes.
 * With rank-one changes on (factor_follow) a set that loses or gains forces far from its end
 * is followed in the square of its size instead of the cube, with bits of its history; a run
 * of MLC_CONTACT_UPDATE_RUN changes ends in a factorization afresh. */
static void factor_set(mlc_contact *cs, const int *P, int np) {
    const size_t ld = cs->ldf;
    int p = cs->fnp >= 0 ? same_start(cs, cs->fkey, cs->fnp, P, np) : 0;
    if (p == np && cs->fnp == np) return;
    const int follow = cs->updates && cs->fnp >= 0 && cs->D == cs->D0 &&
                       cs->nupdates < MLC_CONTACT_UPDATE_RUN && np - p >= MLC_CONTACT_UPDATE_MIN;
    if (follow) {
        int *S = cs->cur + cs->ns + 1, nops = 0; /* the new set's samples */
        for (int a = 0; a < np; a++)
            S[a] = cs->cand[P[a]];
        p = factor_follow(cs, cs->L, cs->fkey, cs->fnp, S, np, p, &nops);
        cs->nupdates += nops, cs->updates_made += (unsigned long)nops;
    }
    if (cs->nupdates >= MLC_CONTACT_UPDATE_RUN) p = 0; /* afresh */
    if (p == 0) cs->nupdates = 0;
    record_set(cs, cs->fkey, &cs->fnp, P, np);
    if (p == np) return;
    /* The matrix's entries in the new rows of the kept columns and in the new columns, then
     * the factor completed around the kept part (the bits of a whole factorization). */
    for (int j = 0; j < np; j++) {
        double *Lj = cs->L + ld * (size_t)j;
        for (int i = j < p ? p : j; i < np; i++)
            Lj[i] = entry(cs, P[i], P[j]);
    }
    mlc_dense_cholesky_rows(cs->L, ld, np, p, cs->eps);
}

/* x ← (L Lᵀ)⁻¹ x (np values). */
static MLC_HOT void solve_factored(const mlc_contact *cs, int np, double *x) {
    mlc_dense_cholesky_solve(cs->L, cs->ldf, np, x);
}

/* A = A_PP contiguous (np×np) and its reciprocal diagonal in t. */
static void build_app(mlc_contact *cs, const int *P, int np) {
    for (int b = 0; b < np; b++) {
        for (int e = 0; e < np; e++)
            cs->A[b + (size_t)np * e] = entry(cs, P[b], P[e]);
        cs->t[b] = 1 / cs->A[b + (size_t)np * b]; /* reciprocal diagonal */
    }
}

/* s = −A_PP⁻¹ c_P (P's order), refactoring A_PP. */
static void minimize_on_set(mlc_contact *cs, const int *P, int np) {
    factor_set(cs, P, np);
    for (int a = 0; a < np; a++)
        cs->s[a] = -cs->c[P[a]];
    solve_factored(cs, np, cs->s);
}

/* w[s] = base[s] + Σ_a D[s, cand[P[a]]] l[P[a]] for every sample s the solve reads (its
 * runs), the terms in P's order: each candidate's gap (base y* − g) and each other sample's
 * height (base y*) under the forces on P. The sums the per-sample loops formed (the same terms
 * in the same order, so the same bits), but column by column over contiguous samples, which
 * vectorizes, instead of a two-level gather per entry. Up to four columns are added in one
 * pass over w (each entry still gets its terms one at a time, in P's order: the same bits as
 * one pass a column), so w is loaded and stored once per four forces. */
static MLC_HOT void add_columns(double *restrict w, const double *const *restrict col, size_t off,
                                const double *restrict a, int nc, int n) {
    int c = 0;
    for (; c + 4 <= nc; c += 4) {
        const double *restrict x0 = col[c] + off, *restrict x1 = col[c + 1] + off,
                               *restrict x2 = col[c + 2] + off, *restrict x3 = col[c + 3] + off;
        const double a0 = a[c], a1 = a[c + 1], a2 = a[c + 2], a3 = a[c + 3];
        for (int s = 0; s < n; s++) {
            double v = w[s] + x0[s] * a0;
            v = v + x1[s] * a1;
            v = v + x2[s] * a2;
            w[s] = v + x3[s] * a3;
        }
    }
    if (c + 2 <= nc) {
        const double *restrict x0 = col[c] + off, *restrict x1 = col[c + 1] + off;
        const double a0 = a[c], a1 = a[c + 1];
        for (int s = 0; s < n; s++) {
            double v = w[s] + x0[s] * a0;
            w[s] = v + x1[s] * a1;
        }
        c += 2;
    }
    if (c < nc) {
        const double *restrict x0 = col[c] + off;
        const double a0 = a[c];
        for (int s = 0; s < n; s++)
            w[s] += x0[s] * a0;
    }
}

static void all_gaps(mlc_contact *cs, const int *P, int np) {
    const size_t ns = (size_t)cs->ns;
    const int *runs = cs->runs, nr = cs->nruns;
    for (int a = 0; a < np; a++) { /* P's columns of D and forces */
        cs->cols[a] = cs->D + ns * (size_t)cs->cand[P[a]];
        cs->coef[a] = cs->l[P[a]];
    }
    for (int r = 0; r < nr; r++) {
        const int b = runs[2 * r], n = runs[2 * r + 1] - b;
        double *w = cs->w + b;
        memcpy(w, cs->base + b, sizeof(double) * (size_t)n);
        add_columns(w, cs->cols, (size_t)b, cs->coef, np, n);
    }
}

/* The bounds failed: the caller makes every y* exact, and the solve reads every sample from
 * here on. The samples outside the runs were not candidates (the caller guaranteed it). */
static void read_all(mlc_contact *cs, const double *ystar) {
    const mlc_contact_live *lv = cs->live;
    lv->exact(lv->user);
    int s = 0;
    for (int r = 0; r <= cs->nruns; r++) {
        int end = r < cs->nruns ? cs->runs[2 * r] : cs->ns;
        for (; s < end; s++)
            cs->iscand[s] = 0, cs->base[s] = ystar[s];
        if (r < cs->nruns) s = cs->runs[2 * r + 1];
    }
    cs->live = NULL;
    cs->runs = cs->all_runs, cs->nruns = 1;
}

/* The LCP over the n candidates cand[0..n) with gaps c; l (n values) holds the warm start on
 * entry (its positive entries are the guessed set) and the forces on exit. Leaves the set in
 * pset[0..return) and its factor in L. */
static int lcp_solve(mlc_contact *cs, int n) {
    double *l = cs->l, *s = cs->s;
    int *P = cs->pset, np = 0, changes = 0;
    /* Warm start: a set is kept only when its minimizer is strictly positive (a feasible
     * point of the method), else λ = 0. The first guess is the previous solve's contacts; when
     * some of their forces turn non-positive those are dropped and the rest tried again (each
     * try reuses the factor's leading columns), which stays close to the answer where falling
     * back to λ = 0 would add every contact again one at a time. Without previous contacts the
     * guess is every violated candidate, which saves one refactorization per contact when many
     * samples land at once (after contacts it rarely holds and costs a factorization of all
     * the candidates). */
    for (int i = 0; i < n; i++)
        if (l[i] > 0) P[np++] = i;
    const int first = np == 0;
    if (first)
        for (int i = 0; i < n; i++)
            if (cs->c[i] < -cs->tol) P[np++] = i;
    while (np > 0) {
        minimize_on_set(cs, P, np);
        int keep = 0;
        for (int a = 0; a < np; a++)
            if (s[a] > 0) P[keep++] = P[a];
        if (keep == np) break;
        np = first ? 0 : keep;
    }
    for (int i = 0; i < n; i++)
        l[i] = 0;
    for (int a = 0; a < np; a++)
        l[P[a]] = s[a];
    const int maxit = 3 * n + 10;
    cs->w_fresh = 0;
    while (changes < maxit) {
        /* The most violated candidate outside P enters. The gaps of all samples at once:
         * when none enters they are also the heights the caller checks the others by. */
        all_gaps(cs, P, np);
        int enter = -1;
        double worst = -cs->tol;
        for (int i = 0; i < n; i++) {
            if (l[i] > 0) continue;
            double w = cs->w[cs->cand[i]];
            if (w < worst) worst = w, enter = i;
        }
        if (enter < 0) {
            cs->w_fresh = 1;
            break;
        }
        /* Keep P ascending, so the factor's order (and its rounding) depends only on the set. */
        int pos = np;
        while (pos > 0 && P[pos - 1] > enter)
            P[pos] = P[pos - 1], pos--;
        P[pos] = enter;
        np++;
        changes++;
        for (;;) {
            minimize_on_set(cs, P, np);
            int feasible = 1;
            for (int a = 0; a < np; a++)
                feasible &= s[a] > 0;
            if (feasible) {
                for (int a = 0; a < np; a++)
                    l[P[a]] = s[a];
                break;
            }
            /* Walk from λ toward s until the first force reaches zero; drop it (and any other
             * that reaches zero on the way). */
            double alpha = 1;
            int hit = -1;
            for (int a = 0; a < np; a++) {
                if (s[a] > 0) continue;
                double la = l[P[a]], t = la / (la - s[a]);
                if (hit < 0 || t < alpha) alpha = t, hit = a;
            }
            int keep = 0;
            for (int a = 0; a < np; a++) {
                double la = l[P[a]] + alpha * (s[a] - l[P[a]]);
                if (a == hit || !(la > 0)) {
                    l[P[a]] = 0;
                } else {
                    l[P[a]] = la;
                    P[keep++] = P[a];
                }
            }
            np = keep;
            changes++;
            if (np == 0 || changes >= maxit) {
                if (np > 0) minimize_on_set(cs, P, np); /* leave P's factor in L */
                break;
            }
        }
        /* Rounding guard: an entering index dropped at once (α = 0) would re-enter forever. */
        if (l[enter] == 0) break;
    }
    return np;
}

/* The common case of a resting or walking contact, in one pass: the last solve's contact set
 * C again. mlc_contact_solve_normal_live's general path then takes the candidates with a
 * previous force (C, when every sample of C is still a candidate) as its first set, keeps C's
 * factor, finds every force positive, computes every read sample's gap under them and finds no
 * candidate outside C below its target and no other sample below its threshold: it returns
 * these forces. Here the same values (the same operations in the same order) without the
 * general path's bookkeeping: the set is checked first, then one pass over the read samples
 * computes the gaps and looks for any sample that would change the answer. Returns np, or −1
 * (nothing committed) when the general path must decide: C empty or not in ascending sample
 * order (the general path's order), its factor not kept, a sample of C no longer a candidate
 * or not read, a force not positive, a sample that would enter, or the caller's bounds not
 * holding under the new forces. The general path's first set is the candidates with a
 * previous force: C, because a solve leaves lam's y block positive on its contact set and
 * zero everywhere else (contact.h). */
static MLC_HOT int same_set_again(mlc_contact *cs, const double *ystar, const double *g) {
    const int np = cs->np, ns = cs->ns, *C = cs->contact;
    const double tol = cs->tol;
    double *lamy = cs->lam + ns;
    if (np <= 0 || cs->D != cs->D0 || cs->fnp != np) return -1;
    const int boxed = cs->friction > 0 || cs->friction_s; /* then A must hold C's A_PP too */
    if (boxed && cs->anp != np) return -1;
    for (int b = 0; b < np && boxed; b++)
        if (cs->akey[b] != C[b]) return -1;
    double *s = cs->s;
    for (int b = 0, r = 0; b < np; b++) {
        const int k = C[b];
        if (cs->fkey[b] != k || (b > 0 && C[b - 1] >= k) || !(lamy[k] > 0)) return -1;
        while (r < cs->nruns && cs->runs[2 * r + 1] <= k) /* k must be read */
            r++;
        if (r == cs->nruns || k < cs->runs[2 * r] || !(ystar[k] < g[k] - tol)) return -1;
        s[b] = -(ystar[k] - g[k]);
    }
    solve_factored(cs, np, s);
    int pos = 1;
    double lsum = 0;
    for (int b = 0; b < np; b++)
        pos &= s[b] > 0, lsum += s[b];
    if (!pos) return -1;
    const size_t nsz = (size_t)ns;
    /* The passes are branch-free (selects; a 64-bit integer count, which the compiler may sum
     * in any order, where a count in a double was added lane by lane in sequence) so that they
     * vectorize. y* − 0 is y* exactly: the general path's base, y* − g for a candidate, y* for
     * another. */
    long long wrong = 0;
    for (int b = 0; b < np; b++)
        cs->cols[b] = cs->D + nsz * (size_t)C[b];
    for (int r = 0; r < cs->nruns; r++) {
        const int b0 = cs->runs[2 * r], n = cs->runs[2 * r + 1] - b0;
        const double *restrict yr = ystar + b0, *restrict gr = g + b0;
        double *restrict w = cs->w + b0;
        for (int i = 0; i < n; i++)
            w[i] = yr[i] - (yr[i] < gr[i] - tol ? gr[i] : 0.0);
        add_columns(w, cs->cols, (size_t)b0, s, np, n);
        /* A candidate must not be below −tol (it would enter), another sample not below g − tol
         * (it would be added); C's samples are counted here too, and taken back below. */
        for (int i = 0; i < n; i++) {
            const double th = gr[i] - tol;
            wrong += w[i] < (yr[i] < th ? -tol : th);
        }
    }
    for (int b = 0; b < np; b++) /* C's samples are candidates (checked above) */
        wrong -= cs->w[C[b]] < -tol;
    if (wrong > 0) return -1;
    if (cs->live && !cs->live->hold(cs->live->user, lsum)) return -1;
    for (int b = 0; b < np; b++)
        lamy[C[b]] = s[b], cs->cand[b] = C[b], cs->pset[b] = b;
    return np;
}

int mlc_contact_solve_normal(mlc_contact *cs, const double *ystar, const double *g) {
    return mlc_contact_solve_normal_live(cs, ystar, g, NULL);
}

static MLC_HOT int solve_normal(mlc_contact *cs, const double *ystar, const double *g,
                                const mlc_contact_live *live) {
    const int ns = cs->ns;
    const double tol = cs->tol;
    int nc = 0;
    cs->all_runs[0] = 0, cs->all_runs[1] = ns;
    cs->live = live;
    cs->runs = live ? live->runs : cs->all_runs;
    cs->nruns = live ? live->nruns : 1;
    const int again = same_set_again(cs, ystar, g);
    if (again >= 0) return again;
    if (live && !live->hold(live->user, 0)) read_all(cs, ystar);
    for (int r = 0; r < cs->nruns; r++)
        for (int s = cs->runs[2 * r]; s < cs->runs[2 * r + 1]; s++) {
            cs->iscand[s] = ystar[s] < g[s] - tol;
            cs->base[s] = cs->iscand[s] ? ystar[s] - g[s] : ystar[s];
            if (cs->iscand[s]) cs->cand[nc++] = s;
        }
    double *lamy = cs->lam + ns;
    int np = 0;
    while (nc > 0) {
        for (int a = 0; a < nc; a++) {
            int s = cs->cand[a];
            cs->c[a] = ystar[s] - g[s];
            cs->l[a] = lamy[s]; /* warm start: the previous solve's forces */
        }
        np = lcp_solve(cs, nc);
        /* Does any other sample now end below its target? (y = y* + D λ over the set) */
        int added = 0;
        if (!cs->w_fresh) all_gaps(cs, cs->pset, np);
        if (cs->live) { /* are the samples outside the runs still ruled out? */
            double lsum = 0;
            for (int b = 0; b < np; b++)
                lsum += cs->l[cs->pset[b]];
            if (!cs->live->hold(cs->live->user, lsum)) {
                read_all(cs, ystar);
                all_gaps(cs, cs->pset, np);
            }
        }
        for (int r = 0; r < cs->nruns; r++)
            for (int s = cs->runs[2 * r]; s < cs->runs[2 * r + 1]; s++) {
                if (cs->iscand[s] || !(cs->w[s] < g[s] - tol)) continue;
                cs->iscand[s] = 1, cs->cand[nc++] = s, added = 1;
                cs->base[s] = ystar[s] - g[s];
            }
        if (!added) break;
        for (int a = 0; a < nc; a++)
            lamy[cs->cand[a]] = cs->l[a];
    }
    /* x and z keep the last forces as the friction solves' warm start, unless nothing is in
     * contact (then no friction solve follows) */
    memset(np > 0 ? lamy : cs->lam, 0, sizeof(double) * (size_t)ns * (np > 0 ? 1 : 3));
    for (int b = 0; b < np; b++) {
        int a = cs->pset[b];
        cs->contact[b] = cs->cand[a];
        lamy[cs->cand[a]] = cs->l[a];
    }
    cs->cgen++;
    cs->np = np;
    /* A_PP, contiguous, for Coulomb-limited friction (kept while the contact set stays) */
    if ((cs->friction > 0 || cs->friction_s) &&
        !(cs->anp == np && same_start(cs, cs->akey, cs->anp, cs->pset, np) == np)) {
        record_set(cs, cs->akey, &cs->anp, cs->pset, np);
        cs->agen++;
        build_app(cs, cs->pset, np);
    }
    return np;
}

static inline double clamp(double x, double lo, double hi) {
    return x < lo ? lo : x > hi ? hi : x;
}

/* The free forces F (nf < np of them) for the others, Bd (nb, ascending), at their sides'
 * bounds (x holds them): A_FF x_F = rhs_F − A_FC x_C, by Lf, the lower factor of A_FF
 * (reciprocal pivots), kept per axis slot while A and F stay (an all-free solve uses the
 * contact set's own factor and leaves Lf as it is). */
static void free_forces(mlc_contact *cs, int slot, int np, int nf, const int *restrict F, int nb,
                        const int *restrict Bd, const double *restrict rhs, double *restrict x,
                        double *restrict Lf, double *restrict y) {
    const double *A = cs->A;
    /* Each y[f] takes its terms one at a time in ascending bound order, as a pass over all
     * would; four forces' sums run side by side, so their dependent subtractions overlap. */
    int q = 0;
    for (; q + 4 <= nf; q += 4) {
        const double *A0 = A + (size_t)np * F[q], *A1 = A + (size_t)np * F[q + 1],
                     *A2 = A + (size_t)np * F[q + 2], *A3 = A + (size_t)np * F[q + 3];
        double r0 = rhs[F[q]], r1 = rhs[F[q + 1]], r2 = rhs[F[q + 2]], r3 = rhs[F[q + 3]];
        for (int i = 0; i < nb; i++) {
            const int e = Bd[i];
            const double xe = x[e];
            r0 -= A0[e] * xe, r1 -= A1[e] * xe, r2 -= A2[e] * xe, r3 -= A3[e] * xe;
        }
        y[q] = r0, y[q + 1] = r1, y[q + 2] = r2, y[q + 3] = r3;
    }
    for (; q < nf; q++) {
        const double *Ab = A + (size_t)np * F[q];
        double r = rhs[F[q]];
        for (int i = 0; i < nb; i++)
            r -= Ab[Bd[i]] * x[Bd[i]];
        y[q] = r;
    }
    /* The kept factor's leading columns serve while the free forces start with the same
     * samples (factor_set's rule: the bits of a whole factorization). Its entries are those
     * of the A it was factored from: the same A (a pivot of this solve or a later iteration
     * with the same contact set), or any A built from D0, whose entries are functions of the
     * two samples alone. */
    const size_t ld = cs->ldf;
    const int a_d0 = cs->anp >= 0; /* A was built from D0 (record_set's key) */
    int *key = cs->bkey[slot], p = 0;
    const int *C = cs->contact;
    if (cs->bnf[slot] >= 0 && (cs->bgen[slot] == cs->agen || (cs->bd0[slot] && a_d0))) {
        const int n = cs->bnf[slot] < nf ? cs->bnf[slot] : nf;
        while (p < n && key[p] == C[F[p]])
            p++;
    }
    if (p < nf || cs->bnf[slot] != nf) {
        /* With rank-one changes on, a factor of D0's entries follows the new free set. */
        if (cs->updates && a_d0 && cs->bd0[slot] && cs->bnf[slot] >= 0 &&
            cs->bupdates[slot] < MLC_CONTACT_UPDATE_RUN && nf - p >= MLC_CONTACT_UPDATE_MIN) {
            int *S = cs->cur + cs->ns + 1, nops = 0;
            for (int f = 0; f < nf; f++)
                S[f] = C[F[f]];
            p = factor_follow(cs, Lf, key, cs->bnf[slot], S, nf, p, &nops);
            cs->bupdates[slot] += nops, cs->updates_made += (unsigned long)nops;
        }
        if (cs->bupdates[slot] >= MLC_CONTACT_UPDATE_RUN) p = 0; /* afresh */
        if (p == 0) cs->bupdates[slot] = 0;
        for (int j = 0; j < nf && p < nf; j++) {
            double *Lj = Lf + ld * (size_t)j;
            const double *Aj = A + (size_t)np * F[j];
            for (int i = j < p ? p : j; i < nf; i++)
                Lj[i] = Aj[F[i]];
        }
        if (p < nf) mlc_dense_cholesky_rows(Lf, ld, nf, p, cs->eps);
        for (int f = 0; f < nf; f++)
            key[f] = C[F[f]];
        cs->bnf[slot] = nf, cs->bgen[slot] = cs->agen, cs->bd0[slot] = a_d0;
    }
    mlc_dense_cholesky_solve(Lf, ld, nf, y);
    for (int f = 0; f < nf; f++)
        x[F[f]] = y[f];
}

/* The Coulomb box problem exactly: min ½xᵀAx − rhsᵀx over lo ≤ x ≤ hi (A = A_PP, np×np,
 * symmetric positive definite), by principal pivoting on the sides side[b] ∈ {−1, 0, +1}
 * (at lo, free, at hi), warm-started from the last solve's. For the sides, the free forces
 * solve A_FF x_F = rhs_F − A_FC x_C (a dense Cholesky of the few free ones); a free force
 * outside its box, or a bound one whose residual rhs − Ax pulls it back inside, changes side.
 * All of them change at once while that shrinks the number wrong, then one at a time, the
 * last by index (Murty's rule: finite for positive definite A). Sides seen again give the same
 * x whatever the path. Returns 0 when it did not settle (rounding), for the caller's fallback.
 * The caller gives no side on an infinite bound. */
static int box_solve(mlc_contact *cs, int slot, int np, const double *restrict rhs,
                     const double *restrict lo, const double *restrict hi, int *restrict side,
                     double *restrict x) {
    const double *A = cs->A;
    double *Lf = cs->Lb[slot], *y = cs->s;
    int *F = cs->fset, *to = cs->fset + cs->ns, *Bd = cs->fset + 3 * (size_t)cs->ns;
    int best = np + 1, stall = 0;
    for (int it = 0; it < 3 * np + 10; it++) {
        /* Branch-free (the sides mix): a free force's x is written here too, and then
         * overwritten by its solve below before anything reads it. */
        int nf = 0, nb = 0;
        for (int b = 0; b < np; b++) {
            const int sb = side[b];
            F[nf] = b, Bd[nb] = b;
            nf += sb == 0, nb += sb != 0;
            x[b] = sb < 0 ? lo[b] : hi[b];
        }
        if (nf == np) { /* all free: the unconstrained forces, with the set's factor L */
            for (int b = 0; b < np; b++)
                x[b] = rhs[b];
            solve_factored(cs, np, x);
        } else {
            free_forces(cs, slot, np, nf, F, nb, Bd, rhs, x, Lf, y);
        }
        /* The bound forces' residuals rhs − Ax, each summed over all forces in order; four
         * rows side by side, so their dependent subtractions overlap. */
        double *res = cs->res;
        int i = 0;
        for (; i + 4 <= nb; i += 4) {
            const int b0 = Bd[i], b1 = Bd[i + 1], b2 = Bd[i + 2], b3 = Bd[i + 3];
            const double *A0 = A + (size_t)np * b0, *A1 = A + (size_t)np * b1,
                         *A2 = A + (size_t)np * b2, *A3 = A + (size_t)np * b3;
            double r0 = rhs[b0], r1 = rhs[b1], r2 = rhs[b2], r3 = rhs[b3];
            for (int e = 0; e < np; e++) {
                const double xe = x[e];
                r0 -= A0[e] * xe, r1 -= A1[e] * xe, r2 -= A2[e] * xe, r3 -= A3[e] * xe;
            }
            res[b0] = r0, res[b1] = r1, res[b2] = r2, res[b3] = r3;
        }
        for (; i < nb; i++) {
            const double *Ab = A + (size_t)np * Bd[i];
            double r = rhs[Bd[i]];
            for (int e = 0; e < np; e++)
                r -= Ab[e] * x[e];
            res[Bd[i]] = r;
        }
        /* Wrong sides, and the side each force should move to */
        int nwrong = 0, last = -1;
        for (int b = 0; b < np; b++) {
            to[b] = side[b];
            if (side[b] == 0) {
                to[b] = x[b] > hi[b] ? 1 : x[b] < lo[b] ? -1 : 0;
            } else {
                const double *Ab = A + (size_t)np * b;
                const double r = res[b];
                /* at hi the residual must push up (r ≥ 0), at lo down; rounding-level
                 * residuals count as zero. The scale is needed only when the residual points
                 * the wrong way (the usual force that stays bound has side·r ≥ 0). */
                if (side[b] * r < 0) {
                    double size = fabs(rhs[b]);
                    for (int e = 0; e < np; e++)
                        size += fabs(Ab[e] * x[e]);
                    if (side[b] * r < -1e-13 * size) to[b] = 0;
                }
            }
            if (to[b] != side[b]) nwrong++, last = b;
        }
        if (nwrong == 0) return 1;
        if (nwrong < best)
            best = nwrong, stall = 0;
        else
            stall++;
        if (stall < 3)
            for (int b = 0; b < np; b++) /* a few entries: no memcpy call */
                side[b] = to[b];
        else
            side[last] = to[last];
    }
    return 0;
}

/* The Coulomb box of every force of the contact set: −μ_lo λ_n ≤ λ_t ≤ μ_hi λ_n (μ_lo = μ_hi
 * = μ_f unless given per sample) into cs->d (lower) and cs->bound (upper); an infinite side
 * where the coefficient is ≤ 0. */
static void friction_bounds(mlc_contact *cs, const double *mu_lo, const double *mu_hi) {
    const int np = cs->np;
    const double *lamy = cs->lam + cs->ns;
    double *bound = cs->bound, *blo = cs->d;
    for (int b = 0; b < np; b++) {
        int s = cs->contact[b];
        if (mu_hi) {
            bound[b] = mu_hi[s] > 0 ? mu_hi[s] * lamy[s] : (double)INFINITY;
            blo[b] = mu_lo[s] > 0 ? -(mu_lo[s] * lamy[s]) : -(double)INFINITY;
        } else { /* per-region friction per sample, or the one μ_f */
            double mf = cs->friction_s ? cs->friction_s[s] : cs->friction;
            bound[b] = mf > 0 ? mf * lamy[s] : (double)INFINITY;
            blo[b] = -bound[b];
        }
    }
}

/* Axis k's forces, for the box in cs->d and cs->bound when `boxed` (else unbounded), into
 * lam's block k, with the sides each force ends on. */
static void friction_axis(mlc_contact *cs, int k, const double *rhs, int boxed) {
    const int np = cs->np, ns = cs->ns;
    double *x = cs->x, *lamk = cs->lam + (size_t)k * ns;
    if (!boxed) {
        for (int b = 0; b < np; b++)
            x[b] = rhs[b];
        solve_factored(cs, np, x); /* L holds the factor of the final contact set */
    } else {
        /* Solved exactly on A_PP (kept by mlc_contact_solve_normal, or built for Dk) by
         * box_solve: when the unconstrained (sticking) forces are inside the box they are the
         * answer, computed with L as without a box. The sides of the box the forces were left
         * on by this axis' previous solve (the last local-global iteration's: they rarely
         * change) are the exact solve's start; an infinite side cannot hold a force. */
        const double *bound = cs->bound, *blo = cs->d;
        int *side = cs->fset + 2 * (size_t)ns, *fside = cs->fside + (size_t)k * ns;
        int bound_any = 0;
        for (int b = 0; b < np; b++) {
            const int sb = fside[cs->contact[b]];
            const int open = (sb < 0) & !(blo[b] > -(double)INFINITY),
                      high = (sb > 0) & !(bound[b] < (double)INFINITY);
            side[b] = open | high ? 0 : sb;
            bound_any |= side[b];
        }
        /* Every force free and the sticking forces inside the box: box_solve's first pass,
         * which would end there (the same x, every side 0), without its bookkeeping. */
        int inside = 0;
        if (!bound_any) {
            for (int b = 0; b < np; b++)
                x[b] = rhs[b];
            solve_factored(cs, np, x);
            inside = 1;
            for (int b = 0; b < np; b++)
                inside &= !(x[b] > bound[b]) & !(x[b] < blo[b]);
        }
        if (!inside && !box_solve(cs, k > 0, np, rhs, blo, bound, side, x)) {
            /* Rounding kept the pivoting from settling: projected Gauss–Seidel sweeps on A_PP
             * from the previous solve's forces, clamped to the new box, until they stop
             * changing. */
            const double *A = cs->A;
            for (int b = 0; b < np; b++)
                x[b] = clamp(lamk[cs->contact[b]], blo[b], bound[b]);
            for (int sweep = 0; sweep < MLC_CONTACT_FRICTION_SWEEPS; sweep++) {
                double change = 0, size = 0;
                for (int b = 0; b < np; b++) {
                    const double *Ab = A + (size_t)np * b; /* column b = row b (symmetric) */
                    double r = rhs[b];
                    for (int e = 0; e < np; e++)
                        r -= Ab[e] * x[e];
                    double v = clamp(x[b] + r * cs->t[b], blo[b], bound[b]);
                    change += fabs(v - x[b]), size += fabs(v);
                    x[b] = v;
                }
                if (change <= 1e-10 * size) break;
            }
            for (int b = 0; b < np; b++)
                side[b] = x[b] >= bound[b] ? 1 : x[b] <= blo[b] ? -1 : 0;
        }
    }
    /* Only the contact set carries friction (and sides): clear the last solve's samples
     * unless the contact set was not written since they were taken from it (the usual case;
     * clearing a set that was written again with the same samples leaves the same values),
     * then set. */
    const int kk = k > 0;
    int *prev = cs->kprev[kk], *fside = cs->fside + (size_t)k * ns;
    if (cs->nkprev[kk] != np || cs->kgen[kk] != cs->cgen) {
        for (int a = 0; a < cs->nkprev[kk]; a++)
            lamk[prev[a]] = 0, fside[prev[a]] = 0;
        memcpy(prev, cs->contact, sizeof(int) * (size_t)np);
        cs->nkprev[kk] = np, cs->kgen[kk] = cs->cgen;
    }
    const int *side = cs->fset + 2 * (size_t)ns;
    for (int b = 0; b < np; b++) {
        lamk[cs->contact[b]] = x[b];
        fside[cs->contact[b]] = boxed ? side[b] : 0;
    }
}

void mlc_contact_solve_friction(mlc_contact *cs, int k, const double *rhs) {
    mlc_contact_solve_friction_box(cs, k, rhs, NULL, NULL, NULL);
}

void mlc_contact_solve_friction_xz(mlc_contact *cs, const double *rhs_x, const double *rhs_z) {
    int boxed = cs->friction > 0 || cs->friction_s;
    if (boxed) friction_bounds(cs, NULL, NULL); /* the same box for both axes */
    friction_axis(cs, 0, rhs_x, boxed);
    friction_axis(cs, 2, rhs_z, boxed);
}

void mlc_contact_solve_friction_box(mlc_contact *cs, int k, const double *rhs, const double *Dk,
                                    const double *mu_lo, const double *mu_hi) {
    const int np = cs->np;
    int boxed = cs->friction > 0 || cs->friction_s || mu_hi;
    if (Dk) { /* this axis' own matrix: its factor and A_PP over the contact set */
        const double *D = cs->D;
        cs->D = Dk;
        factor_set(cs, cs->pset, np);
        build_app(cs, cs->pset, np);
        cs->D = D;
        cs->fnp = cs->anp = -1; /* L and A now hold Dk's */
        cs->agen++;
    }
    if (boxed) friction_bounds(cs, mu_lo, mu_hi);
    friction_axis(cs, k, rhs, boxed);
}

/* ---- the two copies of the normal solve, one chosen at load (cpu.h) -------------- */

static int solve_normal_base(mlc_contact *cs, const double *ystar, const double *g,
                             const mlc_contact_live *live) {
    return solve_normal(cs, ystar, g, live);
}
static int (*solve_normal_impl)(mlc_contact *, const double *, const double *,
                                const mlc_contact_live *) = solve_normal_base;

#ifdef MLC_HAVE_AVX2_CLONES
__attribute__((target("avx2"))) static int solve_normal_avx2(mlc_contact *cs, const double *ystar,
                                                             const double *g,
                                                             const mlc_contact_live *live) {
    return solve_normal(cs, ystar, g, live);
}
#endif

__attribute__((constructor)) static void select_contact_path(void) {
#ifdef MLC_HAVE_AVX2_CLONES
    if (mlc__cpu_use_avx2()) solve_normal_impl = solve_normal_avx2;
#endif
}

int mlc_contact_solve_normal_live(mlc_contact *cs, const double *ystar, const double *g,
                                  const mlc_contact_live *live) {
    return solve_normal_impl(cs, ystar, g, live);
}
