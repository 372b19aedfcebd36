/* test_super_factor.c: the supernodal factorization split over subtrees (super_factor.h) gives
 * cholmod_factorize's bits for any thread count, from a symbolic or a numeric factor, nested in a
 * parallel region, for either stored triangle; the split is a real one, with subtree updates of
 * the top; and where it cannot apply it leaves the work to CHOLMOD. The matrix has the vibration
 * Hessian's shape (test_grid_hessian.h). */
#include <cholmod.h>
#include <omp.h>

#include "internal/super_factor.h"
#include "test_grid_hessian.h"
#include "test_util.h"

/* L = chol(A) by cholmod_factorize, supernodal: the reference bits. */
static cholmod_factor *cholmod_reference(cholmod_sparse *A, cholmod_common *cc) {
    cc->supernodal = CHOLMOD_SUPERNODAL;
    cholmod_factor *L = cholmod_analyze(A, cc);
    assert_non_null(L);
    assert_true(cholmod_factorize(A, L, cc));
    assert_int_equal(cc->status, CHOLMOD_OK);
    assert_true(L->is_super);
    return L;
}

/* The symbolic factor a plan is made from. */
static cholmod_factor *symbolic(cholmod_sparse *A, cholmod_common *cc) {
    cc->supernodal = CHOLMOD_SUPERNODAL;
    cholmod_factor *L = cholmod_analyze(A, cc);
    assert_non_null(L);
    assert_int_equal(L->xtype, CHOLMOD_PATTERN);
    return L;
}

static void assert_same_factor(const cholmod_factor *L0, const cholmod_factor *L) {
    assert_int_equal(L->xtype, CHOLMOD_REAL);
    assert_true(L->is_super && L->is_ll);
    assert_int_equal(L->minor, L0->minor);
    assert_int_equal(L->nsuper, L0->nsuper);
    const int ns = (int)L->nsuper, *px0 = L0->px, *px = L->px;
    assert_memory_equal(px0, px, sizeof(int) * ((size_t)ns + 1));
    assert_memory_equal(L0->x, L->x, sizeof(double) * (size_t)px[ns]);
}

static void split_factorizations_should_give_cholmods_bits(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_hessian(1e-3, &cc);
    cholmod_factor *L0 = cholmod_reference(A, &cc);
    const int threads[] = {2, 3, 4, 7};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        cholmod_factor *L = symbolic(A, &cc);
        mlc_superfactor sf;
        mlc_err err;
        assert_int_equal(mlc_superfactor_plan(&sf, L, threads[t], 0, &err), MLC_OK);
        assert_int_equal(sf.bins, threads[t]);
        if (threads[t] == 2) {
            /* a real split: a critical path well under the serial flops (0.81 here: on so small a
             * grid the top's dense root block is a large share) */
            assert_true(sf.split_flops < 0.85 * sf.serial_flops);
            /* every supernode in the top or in exactly one range, of the thread it says */
            int *seen = calloc((size_t)sf.nsuper, sizeof(int));
            for (int bin = 0; bin < sf.bins; bin++)
                for (int r = sf.bin_ptr[bin]; r < sf.bin_ptr[bin + 1]; r++)
                    for (int s = sf.ranges[2 * r]; s <= sf.ranges[2 * r + 1]; s++) {
                        seen[s]++;
                        assert_int_equal(sf.owner[s], bin);
                    }
            int top = 0, from_subtrees = 0;
            for (int s = 0; s < sf.nsuper; s++) {
                assert_int_equal(seen[s], sf.owner[s] < 0 ? 0 : 1);
                top += sf.owner[s] < 0;
                for (int u = sf.upd_ptr[s]; u < sf.upd_ptr[s + 1]; u++) {
                    const int d = sf.upd_super[u];
                    assert_true(d < s); /* descendants come first in CHOLMOD's order */
                    /* a subtree takes updates only from itself; the top from anyone */
                    if (sf.owner[s] >= 0) assert_int_equal(sf.owner[d], sf.owner[s]);
                    from_subtrees += sf.owner[s] < 0 && sf.owner[d] >= 0;
                }
            }
            assert_true(top > 0 && top < sf.nsuper / 4);
            assert_true(from_subtrees > 0);
            free(seen);
        }
        assert_int_equal(mlc_superfactor_factorize(&sf, A, L, &cc), 1);
        assert_int_equal(cc.status, CHOLMOD_OK);
        assert_same_factor(L0, L);
        mlc_superfactor_destroy(&sf);
        cholmod_free_factor(&L, &cc);
    }
    cholmod_free_factor(&L0, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
}

/* As the precompute calls it: inside one section of a two-thread region (nested) beside other
 * work, then a refactorization of another matrix with the same pattern into the numeric factor,
 * the plan kept. */
static void nested_and_refactorized_factorizations_should_give_cholmods_bits(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_hessian(1e-3, &cc), *A2 = grid_hessian(0.5, &cc);
    cholmod_factor *L0 = cholmod_reference(A, &cc), *L2 = cholmod_reference(A2, &cc);
    cholmod_factor *L = symbolic(A, &cc);
    mlc_superfactor sf;
    mlc_err err;
    assert_int_equal(mlc_superfactor_plan(&sf, L, 2, 0, &err), MLC_OK);
    assert_int_equal(sf.bins, 2);
    int done = 0;
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        done = mlc_superfactor_factorize(&sf, A, L, &cc);
#pragma omp section
        {
            volatile double busy = 0; /* the other branch's work */
            for (int i = 0; i < 1000000; i++)
                busy += 1e-9 * i;
        }
    }
    assert_int_equal(done, 1);
    assert_same_factor(L0, L);
    assert_int_equal(mlc_superfactor_factorize(&sf, A2, L, &cc), 1);
    assert_same_factor(L2, L);
    mlc_superfactor_destroy(&sf);
    cholmod_free_factor(&L, &cc), cholmod_free_factor(&L0, &cc), cholmod_free_factor(&L2, &cc);
    cholmod_free_sparse(&A, &cc), cholmod_free_sparse(&A2, &cc);
    cholmod_finish(&cc);
}

/* The lower triangle stored instead of the upper: CHOLMOD permutes it in two transposes. */
static void lower_stored_matrices_should_give_cholmods_bits(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *U = grid_hessian(1e-2, &cc);
    cholmod_sparse *A = cholmod_copy(U, -1, 1, &cc);
    assert_non_null(A);
    assert_int_equal(A->stype, -1);
    cholmod_factor *L0 = cholmod_reference(A, &cc), *L = symbolic(A, &cc);
    mlc_superfactor sf;
    mlc_err err;
    assert_int_equal(mlc_superfactor_plan(&sf, L, 2, 0, &err), MLC_OK);
    assert_int_equal(sf.bins, 2);
    assert_int_equal(mlc_superfactor_factorize(&sf, A, L, &cc), 1);
    assert_same_factor(L0, L);
    mlc_superfactor_destroy(&sf);
    cholmod_free_factor(&L, &cc), cholmod_free_factor(&L0, &cc);
    cholmod_free_sparse(&A, &cc), cholmod_free_sparse(&U, &cc);
    cholmod_finish(&cc);
}

/* Two bodies in one matrix (block diagonal): the supernodes form a forest, whose two trees go to
 * the threads whole (here the top is empty). */
static void forests_should_give_cholmods_bits(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A1 = grid_hessian(1e-3, &cc), *A2 = grid_hessian(0.2, &cc);
    cholmod_sparse *Z = cholmod_spzeros(GN, GN, 0, CHOLMOD_REAL, &cc);
    cholmod_sparse *upper = cholmod_horzcat(A1, Z, 1, &cc), *lower = cholmod_horzcat(Z, A2, 1, &cc);
    cholmod_sparse *both = cholmod_vertcat(upper, lower, 1, &cc);
    cholmod_sparse *A = cholmod_copy(both, 1, 1, &cc);
    assert_non_null(A);
    cholmod_factor *L0 = cholmod_reference(A, &cc), *L = symbolic(A, &cc);
    int roots = 0;
    for (int s = 0, *Lpi = L->pi, *Super = L->super; s < (int)L->nsuper; s++)
        roots += Lpi[s + 1] - Lpi[s] == Super[s + 1] - Super[s];
    assert_true(roots >= 2);
    mlc_superfactor sf;
    mlc_err err;
    assert_int_equal(mlc_superfactor_plan(&sf, L, 2, 0, &err), MLC_OK);
    assert_int_equal(sf.bins, 2);
    assert_true(sf.split_flops <= 0.55 * sf.serial_flops); /* the two trees side by side */
    assert_int_equal(mlc_superfactor_factorize(&sf, A, L, &cc), 1);
    assert_same_factor(L0, L);
    mlc_superfactor_destroy(&sf);
    cholmod_free_factor(&L, &cc), cholmod_free_factor(&L0, &cc);
    cholmod_free_sparse(&A, &cc), cholmod_free_sparse(&both, &cc);
    cholmod_free_sparse(&upper, &cc), cholmod_free_sparse(&lower, &cc);
    cholmod_free_sparse(&Z, &cc), cholmod_free_sparse(&A1, &cc), cholmod_free_sparse(&A2, &cc);
    cholmod_finish(&cc);
}

/* An indefinite matrix: the split stops and says so; CHOLMOD's own factorization then reports
 * where, as without the split. */
static void indefinite_matrices_should_be_left_to_cholmod(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_hessian(-0.05, &cc);
    cholmod_factor *L = symbolic(A, &cc);
    mlc_superfactor sf;
    mlc_err err;
    assert_int_equal(mlc_superfactor_plan(&sf, L, 2, 0, &err), MLC_OK);
    assert_int_equal(sf.bins, 2);
    assert_int_equal(mlc_superfactor_factorize(&sf, A, L, &cc), 0);
    cholmod_factorize(A, L, &cc);
    assert_int_equal(cc.status, CHOLMOD_NOT_POSDEF);
    assert_true(L->minor < L->n);
    mlc_superfactor_destroy(&sf);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
}

/* No split where it cannot pay or is not asked for: one thread, a small factorization (under
 * the flop limit), a simplicial factor. */
static void plans_should_fall_back_to_cholmod(void **state) {
    (void)state;
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *A = grid_hessian(1e-3, &cc);
    cholmod_factor *L = symbolic(A, &cc);
    mlc_superfactor sf;
    mlc_err err;
    assert_int_equal(mlc_superfactor_plan(&sf, L, 1, 0, &err), MLC_OK);
    assert_int_equal(sf.bins, 1);
    assert_int_equal(mlc_superfactor_factorize(&sf, A, L, &cc), 0);
    assert_int_equal(L->xtype, CHOLMOD_PATTERN); /* untouched */
    mlc_superfactor_destroy(&sf);
    assert_int_equal(mlc_superfactor_plan(&sf, L, 2, 1e15, &err), MLC_OK);
    assert_int_equal(sf.bins, 1);
    assert_true(sf.serial_flops > 0 && sf.serial_flops < 1e15);
    mlc_superfactor_destroy(&sf);
    cholmod_free_factor(&L, &cc);
    cc.supernodal = CHOLMOD_SIMPLICIAL;
    L = cholmod_analyze(A, &cc);
    assert_int_equal(mlc_superfactor_plan(&sf, L, 2, 0, &err), MLC_OK);
    assert_int_equal(sf.bins, 1);
    mlc_superfactor_destroy(&sf);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&A, &cc);
    cholmod_finish(&cc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_factorizations_should_give_cholmods_bits),
        cmocka_unit_test(nested_and_refactorized_factorizations_should_give_cholmods_bits),
        cmocka_unit_test(lower_stored_matrices_should_give_cholmods_bits),
        cmocka_unit_test(forests_should_give_cholmods_bits),
        cmocka_unit_test(indefinite_matrices_should_be_left_to_cholmod),
        cmocka_unit_test(plans_should_fall_back_to_cholmod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
