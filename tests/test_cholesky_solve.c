/* test_cholesky_solve.c: the full-space reference's global solve (cholesky_solve.h) split over
 * subtrees of the elimination tree gives the serial sweeps' bits for any thread count, the split
 * is a real one (most of the factor runs in parallel), and the answer solves the system (against
 * CHOLMOD's own solve and the residual). The matrix is a 3-D grid's graph Laplacian plus a
 * diagonal, the sparsity and conditioning of a tet mesh's Q = M/h² + k L. */
#include <cholmod.h>
#include <math.h>

#include "internal/cholesky_solve.h"
#include "test_util.h"

enum { GX = 24, GY = 18, GZ = 16, GN = GX * GY * GZ };

/* Upper triangle of L + diag(d): the 7-point stencil, every edge of weight w_e > 0. */
static cholmod_sparse *grid_matrix(cholmod_common *cc) {
    cholmod_triplet *T = cholmod_allocate_triplet(GN, GN, 4 * (size_t)GN, 1, CHOLMOD_REAL, cc);
    int *Ti = T->i, *Tj = T->j;
    double *Tx = T->x, *diag = calloc(GN, sizeof(double));
    size_t k = 0;
    for (int z = 0; z < GZ; z++)
        for (int y = 0; y < GY; y++)
            for (int x = 0; x < GX; x++) {
                const int v = x + GX * (y + GY * z);
                const int nb[3] = {x + 1 < GX ? v + 1 : -1, y + 1 < GY ? v + GX : -1,
                                   z + 1 < GZ ? v + GX * GY : -1};
                for (int a = 0; a < 3; a++) {
                    if (nb[a] < 0) continue;
                    const double w = 1 + 0.5 * sin(0.37 * v + a); /* uneven, positive */
                    Ti[k] = v, Tj[k] = nb[a], Tx[k] = -w, k++;
                    diag[v] += w, diag[nb[a]] += w;
                }
            }
    for (int v = 0; v < GN; v++)
        Ti[k] = Tj[k] = v, Tx[k] = diag[v] + 1e-3 * (1 + v % 7), k++;
    T->nnz = k;
    free(diag);
    cholmod_sparse *A = cholmod_triplet_to_sparse(T, 0, cc);
    cholmod_free_triplet(&T, cc);
    return A;
}

/* As the reference factors Q: simplicial LLᵀ, nested dissection (AMD without METIS). */
static cholmod_factor *factor(cholmod_sparse *A, int postorder, cholmod_common *cc) {
    cc->supernodal = CHOLMOD_SIMPLICIAL;
    cc->final_ll = 1;
    cc->nmethods = 1;
    cc->postorder = postorder;
    cc->method[0].ordering = CHOLMOD_NESDIS;
    cholmod_factor *L = cholmod_analyze(A, cc);
    if (!L && cc->status == CHOLMOD_NOT_INSTALLED) {
        cc->status = CHOLMOD_OK;
        cc->method[0].ordering = CHOLMOD_AMD;
        L = cholmod_analyze(A, cc);
    }
    assert_non_null(L);
    assert_true(cholmod_factorize(A, L, cc));
    return L;
}

static void random_rhs(double *b, int n, unsigned seed) {
    mlc_rng rng;
    mlc_rng_seed(&rng, seed);
    for (int i = 0; i < 3 * n; i++)
        b[i] = mlc_rng_normal(&rng);
}

static void split_solves_should_match_serial_bit_for_bit(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_matrix(&cc);
    for (int postorder = 1; postorder >= 0; postorder--) {
        cholmod_factor *L = factor(A, postorder, &cc);
        mlc_cholsolve cs;
        mlc_err err;
        assert_int_equal(mlc_cholsolve_create(&cs, L, &err), MLC_OK);
        if (postorder) assert_true(cs.tree_ok); /* CHOLMOD's factor can be split */
        double *b = malloc(sizeof(double) * 3 * GN), *x1 = malloc(sizeof(double) * 3 * GN),
               *xt = malloc(sizeof(double) * 3 * GN);
        random_rhs(b, GN, 7);
        mlc_cholsolve_solve3(&cs, b, x1);
        const int threads[] = {2, 3, 4, 7, 1, 2};
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            assert_int_equal(mlc_cholsolve_set_threads(&cs, threads[t], &err), MLC_OK);
            if (postorder && threads[t] == 2) {
                /* a real split: two threads, an estimate well under the serial sweeps' */
                assert_int_equal(cs.bins, 2);
                const double serial = GN + cs.lp[GN];
                assert_true(cs.top_work + cs.shared_work + cs.bin_work < 0.6 * serial);
                assert_true(cs.ntop > 0 && cs.ntop < GN / 4);
                /* the top's sweeps are shared too: by rows and by panels of a wide run */
                int kinds[3] = {0};
                for (int s = 0; s < cs.nsteps; s++)
                    kinds[cs.steps[3 * s]]++;
                assert_true(kinds[MLC_CHOLSOLVE_STEP_SHARED] > 0);
                assert_true(kinds[MLC_CHOLSOLVE_STEP_WIDE] > 0);
                /* every column in exactly one place: the top or one range */
                int *seen = calloc(GN, sizeof(int));
                for (int k = 0; k < cs.ntop; k++)
                    seen[cs.topcols[k]]++;
                for (int r = 0; r < cs.nranges; r++)
                    for (int j = cs.ranges[2 * r]; j <= cs.ranges[2 * r + 1]; j++)
                        seen[j]++;
                for (int j = 0; j < GN; j++)
                    assert_int_equal(seen[j], 1);
                free(seen);
            }
            memset(xt, 0, sizeof(double) * 3 * GN);
            mlc_cholsolve_solve3(&cs, b, xt);
            assert_memory_equal(x1, xt, sizeof(double) * 3 * GN);
        }
        free(b), free(x1), free(xt);
        mlc_cholsolve_destroy(&cs);
        cholmod_free_factor(&L, &cc);
    }
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
}

/* The grid's matrix, its postordered factor and a serial solver of it. */
typedef struct grid_solver {
    cholmod_common cc;
    cholmod_sparse *A;
    cholmod_factor *L;
    mlc_cholsolve cs;
} grid_solver;

static void grid_open(grid_solver *g) {
    mlc_err err;
    cholmod_start(&g->cc);
    g->A = grid_matrix(&g->cc);
    g->L = factor(g->A, 1, &g->cc);
    assert_int_equal(mlc_cholsolve_create(&g->cs, g->L, &err), MLC_OK);
}

static void grid_close(grid_solver *g) {
    mlc_cholsolve_destroy(&g->cs);
    cholmod_free_factor(&g->L, &g->cc);
    cholmod_free_sparse(&g->A, &g->cc);
    cholmod_finish(&g->cc);
}

static void split_solves_should_solve_the_system(void **state) {
    (void)state;
    grid_solver g;
    grid_open(&g);
    mlc_cholsolve *cs = &g.cs;
    mlc_err err;
    assert_int_equal(mlc_cholsolve_set_threads(cs, 2, &err), MLC_OK);
    double *b = malloc(sizeof(double) * 3 * GN), *x = malloc(sizeof(double) * 3 * GN);
    random_rhs(b, GN, 11);
    mlc_cholsolve_solve3(cs, b, x);
    /* CHOLMOD's solve of each coordinate, and the residual of ours */
    cholmod_dense *B = cholmod_allocate_dense(GN, 3, GN, CHOLMOD_REAL, &g.cc);
    double *Bx = B->x;
    for (int i = 0; i < GN; i++)
        for (int k = 0; k < 3; k++)
            Bx[i + (size_t)GN * k] = b[3 * i + k];
    cholmod_dense *X = cholmod_solve(CHOLMOD_A, g.L, B, &g.cc);
    cholmod_dense *Xo = cholmod_allocate_dense(GN, 3, GN, CHOLMOD_REAL, &g.cc);
    cholmod_dense *R = cholmod_copy_dense(B, &g.cc);
    double *Xox = Xo->x;
    for (int i = 0; i < GN; i++)
        for (int k = 0; k < 3; k++)
            Xox[i + (size_t)GN * k] = x[3 * i + k];
    double one[2] = {1, 0}, minus[2] = {-1, 0};
    cholmod_sdmult(g.A, 0, minus, one, Xo, R, &g.cc); /* R = B − A x */
    const double *Xc = X->x, *Rx = R->x;
    double diff = 0, size = 0, res = 0, bsize = 0;
    for (size_t i = 0; i < 3 * (size_t)GN; i++) {
        diff = fmax(diff, fabs(Xox[i] - Xc[i])), size = fmax(size, fabs(Xc[i]));
        res = fmax(res, fabs(Rx[i])), bsize = fmax(bsize, fabs(Bx[i]));
    }
    assert_true(diff <= 1e-12 * size);
    assert_true(res <= 1e-12 * bsize);
    cholmod_free_dense(&B, &g.cc);
    cholmod_free_dense(&X, &g.cc);
    cholmod_free_dense(&Xo, &g.cc);
    cholmod_free_dense(&R, &g.cc);
    free(b), free(x);
    grid_close(&g);
}

/* Columns of Q⁻¹ from unit right-hand sides (the reach-limited forward sweep) are the
 * full solve's with those right-hand sides, bit for bit, on one thread and split. */
static void unit_columns_should_match_full_solves(void **state) {
    (void)state;
    grid_solver g;
    grid_open(&g);
    mlc_cholsolve *cs = &g.cs;
    mlc_err err;
    double *b = calloc(3 * GN, sizeof(double)), *xf = malloc(sizeof(double) * 3 * GN);
    double *col[3];
    for (int k = 0; k < 3; k++)
        col[k] = malloc(sizeof(double) * GN);
    const int sets[][3] = {{0, GN / 2, GN - 1}, {17, 17 + GX, 4000}, {GN / 3, 5, 6}};
    const int threads[] = {1, 2, 3};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        assert_int_equal(mlc_cholsolve_set_threads(cs, threads[t], &err), MLC_OK);
        if (threads[t] == 2) assert_int_equal(cs->bins, 2);
        for (size_t q = 0; q < sizeof sets / sizeof sets[0]; q++)
            for (int nrhs = 1; nrhs <= 3; nrhs++) {
                memset(b, 0, sizeof(double) * 3 * GN);
                for (int k = 0; k < nrhs; k++)
                    b[3 * sets[q][k] + k] = 1;
                mlc_cholsolve_solve3(cs, b, xf);
                mlc_cholsolve_unit3(cs, sets[q], nrhs, col);
                for (int k = 0; k < nrhs; k++) {
                    assert_true(col[k][sets[q][k]] > 0); /* Q⁻¹'s diagonal */
                    for (int i = 0; i < GN; i++)
                        assert_memory_equal(&col[k][i], &xf[3 * i + k], sizeof(double));
                }
            }
    }
    free(b), free(xf);
    for (int k = 0; k < 3; k++)
        free(col[k]);
    grid_close(&g);
}

/* The plain column-by-column sweeps over cs's copy of the factor, in the order of terms the
 * solver promises (cholesky_solve.h): forward, each row its terms in column order; backward,
 * each column its terms from its last row to its first. */
static void column_sweeps(const mlc_cholsolve *cs, const double *b, double *x) {
    const int n = cs->n;
    double *y = malloc(sizeof(double) * 3 * (size_t)n);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 3; k++)
            y[3 * j + k] = b[3 * cs->perm[j] + k];
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 3; k++) {
            y[3 * j + k] *= cs->dinv[j];
            for (int p = cs->lp[j]; p < cs->lp[j + 1]; p++)
                y[3 * cs->li[p] + k] -= cs->lx[p] * y[3 * j + k];
        }
    for (int j = n - 1; j >= 0; j--)
        for (int k = 0; k < 3; k++) {
            double s = y[3 * j + k];
            for (int p = cs->lp[j + 1] - 1; p >= cs->lp[j]; p--) /* last row first */
                s -= cs->lx[p] * y[3 * cs->li[p] + k];
            y[3 * j + k] = s * cs->dinv[j];
        }
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 3; k++)
            x[3 * cs->perm[j] + k] = y[3 * j + k];
    free(y);
}

/* The sweeps by runs of nested patterns (and split over threads) give the column sweeps' bits;
 * and the runs are real: nested dissection leaves most of the factor's entries in runs of
 * several columns (the separators). */
static void runs_should_give_the_column_sweeps_bits(void **state) {
    (void)state;
    grid_solver g;
    grid_open(&g);
    mlc_cholsolve *cs = &g.cs;
    mlc_err err;
    long in_runs = 0, all = 0;
    for (int j = 0; j < GN; j++) {
        assert_true(cs->sn_first[j] <= j && j <= cs->sn_end[j]);
        const long len = cs->lp[j + 1] - cs->lp[j];
        all += len;
        if (cs->sn_end[j] > cs->sn_first[j]) in_runs += len;
        if (j < cs->sn_end[j]) { /* nested: j's rows are j+1, then j+1's */
            assert_int_equal(cs->li[cs->lp[j]], j + 1);
            assert_int_equal(len, cs->lp[j + 2] - cs->lp[j + 1] + 1);
            assert_memory_equal(cs->li + cs->lp[j] + 1, cs->li + cs->lp[j + 1],
                                sizeof(int) * (size_t)(len - 1));
        }
    }
    assert_true(in_runs > all / 2);
    double *b = malloc(sizeof(double) * 3 * GN), *x0 = malloc(sizeof(double) * 3 * GN),
           *x = malloc(sizeof(double) * 3 * GN);
    random_rhs(b, GN, 23);
    column_sweeps(cs, b, x0);
    const int threads[] = {1, 2, 3, 5};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        assert_int_equal(mlc_cholsolve_set_threads(cs, threads[t], &err), MLC_OK);
        mlc_cholsolve_solve3(cs, b, x);
        assert_memory_equal(x0, x, sizeof(double) * 3 * GN);
    }
    free(b), free(x0), free(x);
    grid_close(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_solves_should_match_serial_bit_for_bit),
        cmocka_unit_test(split_solves_should_solve_the_system),
        cmocka_unit_test(unit_columns_should_match_full_solves),
        cmocka_unit_test(runs_should_give_the_column_sweeps_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
