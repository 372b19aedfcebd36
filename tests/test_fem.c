/* test_fem.c: FEM operators of docs/method.md §2–4 (volumes, lumped mass, Laplacian, elasticity
 * Hessian, deformation gradient) against invariants, finite differences of an independently
 * evaluated energy, and the patch test; their assembly against a plain triplet assembly. */
#include <cholmod.h>
#include <lapacke.h>

#include "fem.h"
#include "test_util.h"

/* ---- helpers -------------------------------------------------------------------------- */

/* Dense copy of a CHOLMOD symmetric (stype != 0) matrix, both halves filled. */
static double *dense_of(const cholmod_sparse *A) {
    int n = (int)A->ncol;
    double *D = calloc((size_t)n * n, sizeof(double));
    const int *Ap = A->p, *Ai = A->i;
    const double *Ax = A->x;
    for (int j = 0; j < n; j++)
        for (int p = Ap[j]; p < Ap[j + 1]; p++) {
            D[Ai[p] + (size_t)j * n] = Ax[p];
            D[j + (size_t)Ai[p] * n] = Ax[p];
        }
    return D;
}

/* y = A x through cholmod_sdmult (which expands the symmetric storage). */
static void spmv(cholmod_sparse *A, const double *x, double *y, cholmod_common *cc) {
    int n = (int)A->nrow;
    cholmod_dense *X = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, cc);
    cholmod_dense *Y = cholmod_zeros((size_t)n, 1, CHOLMOD_REAL, cc);
    memcpy(X->x, x, (size_t)n * sizeof(double));
    double one[2] = {1, 0}, zero[2] = {0, 0};
    cholmod_sdmult(A, 0, one, zero, X, Y, cc);
    memcpy(y, Y->x, (size_t)n * sizeof(double));
    cholmod_free_dense(&X, cc);
    cholmod_free_dense(&Y, cc);
}

/* Displacement gradient of tet e computed independently of fem.c: solve ∇u Dm = Ds, i.e.
 * Dmᵀ (∇u)ᵀ = Dsᵀ, with LAPACK. G[k + 3l] = ∂u_k/∂X_l. */
static void indep_grad(const mlc_mesh *m, int e, const double *u, int ncomp, double *G) {
    const int *t = m->T + 4 * e;
    double A[9], B[9];
    int ipiv[3];
    for (int c = 0; c < 3; c++)
        for (int l = 0; l < 3; l++) /* A = Dmᵀ: A[c + 3l] = (X_{c+1} − X_0)_l */
            A[c + 3 * l] = m->X[3 * t[c + 1] + l] - m->X[3 * t[0] + l];
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < ncomp; k++)
            B[c + 3 * k] = u[ncomp * t[c + 1] + k] - u[ncomp * t[0] + k];
    int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, 3, ncomp, A, 3, ipiv, B, 3);
    if (info != 0) fail_msg("dgesv info %d", info);
    /* B[l + 3k] = ∂u_k/∂X_l */
    for (int k = 0; k < ncomp; k++)
        for (int l = 0; l < 3; l++)
            G[k + 3 * l] = B[l + 3 * k];
}

/* Linear-elastic energy Σ_e V_e (μ ε:ε + λ/2 tr(ε)²) with volumes from the determinant. */
static double elastic_energy(const mlc_mesh *m, const double *u, double mu, double lambda) {
    double E = 0;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * e;
        double a[3], b[3], c[3];
        for (int k = 0; k < 3; k++) {
            a[k] = m->X[3 * t[1] + k] - m->X[3 * t[0] + k];
            b[k] = m->X[3 * t[2] + k] - m->X[3 * t[0] + k];
            c[k] = m->X[3 * t[3] + k] - m->X[3 * t[0] + k];
        }
        double V = (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                    a[2] * (b[0] * c[1] - b[1] * c[0])) /
                   6.0;
        double G[9], ee = 0, tr = 0;
        indep_grad(m, e, u, 3, G);
        for (int k = 0; k < 3; k++)
            for (int l = 0; l < 3; l++) {
                double eps = 0.5 * (G[k + 3 * l] + G[l + 3 * k]);
                ee += eps * eps;
            }
        tr = G[0] + G[4] + G[8];
        E += V * (mu * ee + 0.5 * lambda * tr * tr);
    }
    return E;
}

/* Dirichlet energy ½ Σ_e V_e |∇f|² (so that its Hessian is the unit-μ Laplacian). */
static double dirichlet_energy(const mlc_mesh *m, const mlc_fem *fem, const double *f) {
    double E = 0;
    for (int e = 0; e < m->nt; e++) {
        double G[9];
        indep_grad(m, e, f, 1, G);
        E += 0.5 * fem->vol[e] * (G[0] * G[0] + G[3] * G[3] + G[6] * G[6]);
    }
    return E;
}

/* A box with every vertex moved by up to 10% of h (keeps every tet positive), so that the
 * checks do not rely on the regular grid's symmetries. */
static void perturbed_box(int nx, int ny, int nz, double h, mlc_mesh *m) {
    test_box_mesh(nx, ny, nz, h, m);
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    for (int i = 0; i < 3 * m->nv; i++)
        m->X[i] += 0.1 * h * (2 * mlc_rng_uniform(&rng) - 1);
}

/* The operators assembled the plain way, for comparison: one triplet per element
 * contribution (upper entries), summed by cholmod_triplet_to_sparse in the order given. */
static cholmod_sparse *triplet_reference(const mlc_mesh *m, const mlc_fem *fem, int hessian,
                                         const double *scale, double mu, double lambda,
                                         cholmod_common *cc) {
    size_t n = (size_t)(hessian ? 3 : 1) * (size_t)m->nv;
    cholmod_triplet *T =
        cholmod_allocate_triplet(n, n, (size_t)m->nt * (hessian ? 78 : 10), 1, CHOLMOD_REAL, cc);
    int *Ti = T->i, *Tj = T->j;
    double *Tx = T->x;
    size_t k = 0;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * (size_t)e;
        const double *g = fem->grad + 12 * (size_t)e;
        double V = (scale ? scale[e] : 1.0) * fem->vol[e];
        for (int a = 0; a < 4; a++)
            for (int b = hessian ? 0 : a; b < 4; b++) {
                const double *ga = g + 3 * a, *gb = g + 3 * b;
                double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
                if (!hessian) {
                    Ti[k] = t[a] < t[b] ? t[a] : t[b], Tj[k] = t[a] < t[b] ? t[b] : t[a];
                    Tx[k++] = V * dot;
                    continue;
                }
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        int r = 3 * t[a] + i, c = 3 * t[b] + j;
                        if (r > c) continue;
                        Ti[k] = r, Tj[k] = c;
                        Tx[k++] = V * (mu * ((i == j ? dot : 0.0) + ga[j] * gb[i]) +
                                       lambda * ga[i] * gb[j]);
                    }
            }
    }
    T->nnz = k;
    cholmod_sparse *A = cholmod_triplet_to_sparse(T, T->nnz, cc);
    cholmod_free_triplet(&T, cc);
    return A;
}

/* ---- tests ---------------------------------------------------------------------------- */

static void mass_should_sum_to_volume_and_gradients_to_zero(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_box_mesh(3, 2, 2, 0.5, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    double mv = 0, vv = 0;
    for (int i = 0; i < m.nv; i++)
        mv += fem.vmass[i];
    for (int e = 0; e < m.nt; e++)
        vv += fem.vol[e];
    assert_near(mv, 1.5, 1e-13);
    assert_near(vv, 1.5, 1e-13);
    /* Partition of unity: Σ_a ∇φ_a = 0 and Σ_a X_a ∇φ_aᵀ = I (identity deformation). */
    for (int e = 0; e < m.nt; e++) {
        double F[9];
        mlc_fem_deformation_gradient(&m, &fem, e, m.X, F);
        for (int q = 0; q < 9; q++)
            assert_near(F[q], (q % 4 == 0) ? 1.0 : 0.0, 1e-13);
        for (int k = 0; k < 3; k++) {
            const double *g = fem.grad + 12 * e;
            assert_near(g[k] + g[3 + k] + g[6 + k] + g[9 + k], 0.0, 1e-12);
        }
    }
    mlc_fem_free(&fem);
    mlc_fem_free(&fem); /* idempotent */
    mlc_mesh_free(&m);
}

static void laplacian_should_annihilate_constants_and_match_energy_hessian(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    perturbed_box(2, 2, 1, 0.5, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *L = mlc_fem_laplacian(&m, &fem, NULL, &cc);
    assert_non_null(L);
    assert_int_equal(L->stype, 1);
    int n = m.nv;
    double *one = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        one[i] = 1;
    spmv(L, one, y, &cc);
    for (int i = 0; i < n; i++)
        assert_near(y[i], 0.0, 1e-12);
    /* Hessian of the Dirichlet energy by central second differences (exact for a quadratic up
     * to rounding). */
    double *Ld = dense_of(L), *f = calloc(n, sizeof(double)), d = 1e-3;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double e4[4];
            for (int s = 0; s < 4; s++) {
                f[i] += (s < 2 ? d : -d);
                f[j] += (s % 2 == 0 ? d : -d);
                e4[s] = dirichlet_energy(&m, &fem, f);
                f[i] -= (s < 2 ? d : -d);
                f[j] -= (s % 2 == 0 ? d : -d);
            }
            double fd = (e4[0] - e4[1] - e4[2] + e4[3]) / (4 * d * d);
            assert_near(Ld[i + (size_t)j * n], fd, 1e-7);
        }
    /* Per-tet μ scales the operator linearly. */
    double *mu = malloc(m.nt * sizeof(double));
    for (int e = 0; e < m.nt; e++)
        mu[e] = 3.0;
    cholmod_sparse *L3 = mlc_fem_laplacian(&m, &fem, mu, &cc);
    double *L3d = dense_of(L3);
    for (int q = 0; q < n * n; q++)
        assert_near(L3d[q], 3 * Ld[q], 1e-12);
    free(L3d);
    free(mu);
    free(Ld);
    free(f);
    free(one);
    free(y);
    cholmod_free_sparse(&L3, &cc);
    cholmod_free_sparse(&L, &cc);
    cholmod_finish(&cc);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

static void hessian_should_annihilate_six_rigid_modes(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_quadruped_mesh(0.1, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *H = mlc_fem_elasticity_hessian(&m, &fem, 1.0, 1.7, &cc);
    assert_non_null(H);
    int n = 3 * m.nv;
    double *u = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    /* Scale of H·u for a non-rigid field, to make the tolerance relative. */
    double hscale = 0;
    for (int r = 0; r < 6; r++) {
        for (int i = 0; i < m.nv; i++) {
            const double *X = m.X + 3 * i;
            double *ui = u + 3 * i;
            if (r < 3) {
                ui[0] = ui[1] = ui[2] = 0;
                ui[r] = 1;
            } else { /* ω × X with ω = e_{r-3} */
                double w[3] = {0, 0, 0};
                w[r - 3] = 1;
                ui[0] = w[1] * X[2] - w[2] * X[1];
                ui[1] = w[2] * X[0] - w[0] * X[2];
                ui[2] = w[0] * X[1] - w[1] * X[0];
            }
        }
        spmv(H, u, y, &cc);
        if (hscale == 0) {
            const int *Ap = H->p;
            const double *Ax = H->x;
            for (int p = 0; p < Ap[n]; p++)
                hscale = fmax(hscale, fabs(Ax[p]));
        }
        for (int i = 0; i < n; i++)
            assert_near(y[i], 0.0, 1e-12 * hscale);
    }
    free(u);
    free(y);
    cholmod_free_sparse(&H, &cc);
    cholmod_finish(&cc);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

static void hessian_should_be_symmetric_and_match_energy_derivatives(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    perturbed_box(2, 1, 1, 0.5, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    cholmod_common cc;
    cholmod_start(&cc);
    double mu = 1.3, lambda = 2.1;
    cholmod_sparse *H = mlc_fem_elasticity_hessian(&m, &fem, mu, lambda, &cc);
    int n = 3 * m.nv;
    /* Upper storage only. */
    assert_int_equal(H->stype, 1);
    const int *Ap = H->p, *Ai = H->i;
    for (int j = 0; j < n; j++)
        for (int p = Ap[j]; p < Ap[j + 1]; p++)
            assert_true(Ai[p] <= j);
    double *Hd = dense_of(H);
    /* Symmetry through the product: uᵀ(Hv) = vᵀ(Hu). */
    double *u = malloc(n * sizeof(double)), *v = malloc(n * sizeof(double));
    double *Hu = malloc(n * sizeof(double)), *Hv = malloc(n * sizeof(double));
    mlc_rng rng;
    mlc_rng_seed(&rng, 3);
    for (int i = 0; i < n; i++)
        u[i] = mlc_rng_normal(&rng), v[i] = mlc_rng_normal(&rng);
    spmv(H, u, Hu, &cc);
    spmv(H, v, Hv, &cc);
    double uHv = 0, vHu = 0;
    for (int i = 0; i < n; i++)
        uHv += u[i] * Hv[i], vHu += v[i] * Hu[i];
    assert_rel(uHv, vHu, 1e-13, 1e-12);
    /* Energy ½uᵀHu equals the independent energy; gradient H u by central differences. */
    double e_ind = elastic_energy(&m, u, mu, lambda), e_h = 0;
    for (int i = 0; i < n; i++)
        e_h += 0.5 * u[i] * Hu[i];
    assert_rel(e_h, e_ind, 1e-12, 1e-12);
    double d = 1e-4;
    for (int i = 0; i < n; i++) {
        double s = u[i];
        u[i] = s + d;
        double ep = elastic_energy(&m, u, mu, lambda);
        u[i] = s - d;
        double em = elastic_energy(&m, u, mu, lambda);
        u[i] = s;
        assert_near(Hu[i], (ep - em) / (2 * d), 1e-6 * fmax(1, fabs(Hu[i])));
    }
    /* Hessian entries by central second differences around 0. */
    double *z = calloc(n, sizeof(double)), dd = 1e-3;
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            double e4[4];
            for (int s = 0; s < 4; s++) {
                z[i] += (s < 2 ? dd : -dd);
                z[j] += (s % 2 == 0 ? dd : -dd);
                e4[s] = elastic_energy(&m, z, mu, lambda);
                z[i] -= (s < 2 ? dd : -dd);
                z[j] -= (s % 2 == 0 ? dd : -dd);
            }
            double fd = (e4[0] - e4[1] - e4[2] + e4[3]) / (4 * dd * dd);
            assert_near(Hd[i + (size_t)j * n], fd, 1e-6);
        }
    free(z);
    free(u);
    free(v);
    free(Hu);
    free(Hv);
    free(Hd);
    cholmod_free_sparse(&H, &cc);
    cholmod_finish(&cc);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

static void linear_field_should_pass_the_patch_test(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    perturbed_box(3, 3, 3, 0.4, &m);
    assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
    double A[9] = {0.3, -0.2, 0.7, 0.1, -0.4, 0.25, 0.05, 0.6, 0.15}; /* column-major */
    double b[3] = {0.5, -1.0, 2.0};
    int n = 3 * m.nv;
    double *u = malloc(n * sizeof(double)), *f = malloc(n * sizeof(double));
    for (int i = 0; i < m.nv; i++)
        for (int k = 0; k < 3; k++) {
            u[3 * i + k] = b[k];
            for (int l = 0; l < 3; l++)
                u[3 * i + k] += A[k + 3 * l] * m.X[3 * i + l];
        }
    for (int e = 0; e < m.nt; e++) {
        double F[9];
        mlc_fem_deformation_gradient(&m, &fem, e, u, F);
        for (int q = 0; q < 9; q++)
            assert_near(F[q], A[q], 1e-12);
    }
    cholmod_common cc;
    cholmod_start(&cc);
    cholmod_sparse *H = mlc_fem_elasticity_hessian(&m, &fem, 1.0, 1.0, &cc);
    spmv(H, u, f, &cc);
    /* Constant stress: the internal forces cancel at every interior vertex. */
    unsigned char *bnd = calloc(m.nv, 1);
    for (int q = 0; q < 3 * m.nf; q++)
        bnd[m.F[q]] = 1;
    int interior = 0;
    for (int i = 0; i < m.nv; i++) {
        if (bnd[i]) continue;
        interior++;
        for (int k = 0; k < 3; k++)
            assert_near(f[3 * i + k], 0.0, 1e-12);
    }
    assert_int_equal(interior, 8); /* (3+1-2)³ interior vertices */
    free(bnd);
    free(u);
    free(f);
    cholmod_free_sparse(&H, &cc);
    cholmod_finish(&cc);
    mlc_fem_free(&fem);
    mlc_mesh_free(&m);
}

/* The operators are assembled straight into the mesh's adjacency pattern (fem.c): the same
 * pattern, explicit zeros included, and the same bits as summing one triplet per element
 * contribution, on a graded body and on a box whose vertices are numbered at random. */
static void direct_assembly_should_give_the_triplet_bits(void **state) {
    (void)state;
    for (int body = 0; body < 2; body++) {
        mlc_mesh m = {0};
        mlc_fem fem = {0};
        if (body == 0) {
            test_quadruped_mesh(0.1, &m);
        } else { /* random vertex numbering: adjacency lists far from sorted by tet order */
            perturbed_box(5, 4, 3, 0.2, &m);
            int *perm = malloc(sizeof(int) * (size_t)m.nv);
            double *X = malloc(sizeof(double) * 3 * (size_t)m.nv);
            mlc_rng rng;
            mlc_rng_seed(&rng, 11);
            for (int i = 0; i < m.nv; i++)
                perm[i] = i;
            for (int i = m.nv - 1; i > 0; i--) {
                int j = (int)(mlc_rng_uniform(&rng) * (i + 1)), t = perm[i];
                perm[i] = perm[j], perm[j] = t;
            }
            for (int i = 0; i < m.nv; i++)
                memcpy(X + 3 * (size_t)perm[i], m.X + 3 * (size_t)i, sizeof(double) * 3);
            for (int i = 0; i < 4 * m.nt; i++)
                m.T[i] = perm[m.T[i]];
            memcpy(m.X, X, sizeof(double) * 3 * (size_t)m.nv);
            free(perm), free(X);
        }
        assert_int_equal(mlc_fem_init(&fem, &m, NULL), MLC_OK);
        double *scale = malloc(sizeof(double) * (size_t)m.nt);
        for (int e = 0; e < m.nt; e++)
            scale[e] = 0.5 + (e % 7) * 0.37;
        cholmod_common cc;
        cholmod_start(&cc);
        for (int op = 0; op < 3; op++) {
            cholmod_sparse *A =
                op == 0   ? mlc_fem_laplacian(&m, &fem, scale, &cc)
                : op == 1 ? mlc_fem_elasticity_hessian(&m, &fem, 1.3, 2.1, &cc)
                          : mlc_fem_elasticity_hessian_scaled(&m, &fem, 1.0, 0.8, scale, &cc);
            cholmod_sparse *R = triplet_reference(&m, &fem, op > 0, op == 1 ? NULL : scale,
                                                  op == 1 ? 1.3 : 1.0, op == 1 ? 2.1 : 0.8, &cc);
            assert_non_null(A);
            assert_non_null(R);
            assert_int_equal(A->ncol, R->ncol);
            assert_int_equal(A->stype, 1);
            assert_true(A->sorted && A->packed);
            size_t n = A->ncol, nz = (size_t)((int *)R->p)[n];
            assert_memory_equal(A->p, R->p, sizeof(int) * (n + 1));
            assert_memory_equal(A->i, R->i, sizeof(int) * nz);
            assert_memory_equal(A->x, R->x, sizeof(double) * nz);
            cholmod_free_sparse(&A, &cc);
            cholmod_free_sparse(&R, &cc);
        }
        cholmod_finish(&cc);
        free(scale);
        mlc_fem_free(&fem);
        mlc_mesh_free(&m);
    }
}

static void inverted_tet_should_be_rejected(void **state) {
    (void)state;
    mlc_mesh m = {0};
    mlc_fem fem = {0};
    test_box_mesh(1, 1, 1, 1.0, &m);
    int tmp = m.T[0];
    m.T[0] = m.T[1];
    m.T[1] = tmp;
    mlc_err err;
    long live = mlc_alloc_live();
    assert_int_equal(mlc_fem_init(&fem, &m, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "tet 0"));
    assert_null(fem.vol);
    assert_int_equal(mlc_alloc_live(), live);
    mlc_mesh_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mass_should_sum_to_volume_and_gradients_to_zero),
        cmocka_unit_test(laplacian_should_annihilate_constants_and_match_energy_hessian),
        cmocka_unit_test(hessian_should_annihilate_six_rigid_modes),
        cmocka_unit_test(hessian_should_be_symmetric_and_match_energy_derivatives),
        cmocka_unit_test(linear_field_should_pass_the_patch_test),
        cmocka_unit_test(direct_assembly_should_give_the_triplet_bits),
        cmocka_unit_test(inverted_tet_should_be_rejected),
    };
    return cmocka_run_group_tests_name("fem", tests, NULL, NULL);
}
