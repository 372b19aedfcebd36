/* fem.c: linear-tet finite-element operators of docs/method.md §2–4.
 *
 *  - Per tet e with vertices v_0..v_3: rest shape matrix Dm_e = [X_1−X_0, X_2−X_0, X_3−X_0],
 *    V_e = det(Dm_e)/6, and the P1 shape gradients ∇φ_a: rows 0..2 of Dm_e⁻¹ give ∇φ_1..∇φ_3
 *    and ∇φ_0 = −(∇φ_1 + ∇φ_2 + ∇φ_3) (partition of unity).
 *  - Lumped mass m_v = Σ_{e∋v} V_e/4 (unit density, docs/method.md §2).
 *  - Scalar Laplacian (App. A Eq. 20, 002 Eq. 18): L_ab = Σ_e μ_e V_e ∇φ_a·∇φ_b.
 *  - Linear-elasticity Hessian at rest (Eq. 4), energy density ψ = μ ε:ε + λ/2 tr(ε)²,
 *    ε = sym(∇u): K_{(a,i),(b,j)} = V_e [μ (δ_ij ∇φ_a·∇φ_b + ∂_jφ_a ∂_iφ_b) + λ ∂_iφ_a ∂_jφ_b],
 *    DOF 3v+i.
 *
 * Storage note: both sparse operators are returned with stype = 1 (only the upper triangle,
 * row <= column, is stored; CHOLMOD treats it as symmetric). That is what cholmod_analyze /
 * cholmod_factorize expect for a symmetric matrix; for products use cholmod_sdmult, which
 * expands the symmetric storage itself. Columns are sorted and duplicates summed
 * (cholmod_triplet_to_sparse), so every diagonal entry is present and last in its column.
 */
#include "fem.h"

#include <math.h>
#include <string.h>

void mlc_fem_free(mlc_fem *fem) {
    if (!fem) return;
    mlc_free(fem->vol);
    mlc_free(fem->grad);
    mlc_free(fem->vmass);
    memset(fem, 0, sizeof *fem);
}

mlc_status mlc_fem_init(mlc_fem *fem, const mlc_mesh *mesh, mlc_err *err) {
    memset(fem, 0, sizeof *fem);
    if (!mesh || mesh->nv <= 0 || mesh->nt <= 0 || !mesh->X || !mesh->T)
        return mlc_errf(err, MLC_EINVAL, "fem: empty mesh (no vertices or tets)");
    int nv = mesh->nv, nt = mesh->nt;
    fem->vol = mlc_malloc((size_t)nt * sizeof(double));
    fem->grad = mlc_malloc((size_t)nt * 12 * sizeof(double));
    fem->vmass = mlc_calloc((size_t)nv, sizeof(double));
    if (!fem->vol || !fem->grad || !fem->vmass) {
        mlc_fem_free(fem);
        return mlc_errf(err, MLC_ENOMEM, "fem: out of memory for %d tets", nt);
    }
    fem->nv = nv;
    fem->nt = nt;
    for (int e = 0; e < nt; e++) {
        const int *t = mesh->T + 4 * (size_t)e;
        for (int a = 0; a < 4; a++) {
            if (t[a] < 0 || t[a] >= nv) {
                mlc_fem_free(fem);
                return mlc_errf(err, MLC_EINVAL, "fem: tet %d has vertex index %d out of [0, %d)",
                                e, t[a], nv);
            }
        }
        const double *x0 = mesh->X + 3 * (size_t)t[0];
        double D[9]; /* column-major Dm: D[k + 3c] = (X_{c+1} − X_0)_k */
        for (int c = 0; c < 3; c++) {
            const double *xc = mesh->X + 3 * (size_t)t[c + 1];
            for (int k = 0; k < 3; k++)
                D[k + 3 * c] = xc[k] - x0[k];
        }
        /* Cofactors of Dm, row by row (det by expansion along row 0). */
        double c00 = D[4] * D[8] - D[7] * D[5], c01 = D[7] * D[2] - D[1] * D[8],
               c02 = D[1] * D[5] - D[4] * D[2];
        double c10 = D[6] * D[5] - D[3] * D[8], c11 = D[0] * D[8] - D[6] * D[2],
               c12 = D[3] * D[2] - D[0] * D[5];
        double c20 = D[3] * D[7] - D[6] * D[4], c21 = D[6] * D[1] - D[0] * D[7],
               c22 = D[0] * D[4] - D[3] * D[1];
        double det = D[0] * c00 + D[3] * c01 + D[6] * c02;
        if (!(det > 0) || !isfinite(det)) {
            mlc_fem_free(fem);
            return mlc_errf(err, MLC_EINVAL,
                            "fem: tet %d has non-positive volume %.3g; the mesh was not "
                            "finalized (inverted or degenerate tet)",
                            e, det / 6);
        }
        double inv = 1.0 / det;
        /* c_rk is the (r, k) cofactor of Dm, so Dm⁻¹[r][k] = c_kr / det (adjugate). Row r of
         * Dm⁻¹ (r = 0..2) is ∇φ_{r+1}. */
        double *g = fem->grad + 12 * (size_t)e;
        double I[3][3] = {{c00 * inv, c10 * inv, c20 * inv},
                          {c01 * inv, c11 * inv, c21 * inv},
                          {c02 * inv, c12 * inv, c22 * inv}};
        for (int k = 0; k < 3; k++) {
            g[3 + k] = I[0][k];
            g[6 + k] = I[1][k];
            g[9 + k] = I[2][k];
            g[k] = -(I[0][k] + I[1][k] + I[2][k]);
        }
        double V = det / 6.0;
        fem->vol[e] = V;
        for (int a = 0; a < 4; a++)
            fem->vmass[t[a]] += 0.25 * V;
    }
    return MLC_OK;
}

/* Append the upper-triangle entry (min(r, c), max(r, c)) = v to a triplet with room for it. */
static void triplet_push_upper(cholmod_triplet *T, int r, int c, double v) {
    if (r > c) {
        int t = r;
        r = c, c = t;
    }
    ((int *)T->i)[T->nnz] = r;
    ((int *)T->j)[T->nnz] = c;
    ((double *)T->x)[T->nnz] = v;
    T->nnz++;
}

/* Convert a filled triplet (upper entries only) to a sorted, duplicate-summed stype=1 CSC. */
static cholmod_sparse *triplet_finish(cholmod_triplet *T, cholmod_common *cc) {
    cholmod_sparse *A = cholmod_triplet_to_sparse(T, T->nnz, cc);
    cholmod_free_triplet(&T, cc);
    return A;
}

cholmod_sparse *mlc_fem_laplacian(const mlc_mesh *mesh, const mlc_fem *fem, const double *mu,
                                  cholmod_common *cc) {
    int nv = fem->nv, nt = fem->nt;
    /* 10 upper entries (4 diagonal + 6 pairs) per tet. */
    cholmod_triplet *T =
        cholmod_allocate_triplet((size_t)nv, (size_t)nv, (size_t)nt * 10, 1, CHOLMOD_REAL, cc);
    if (!T) return NULL;
    T->nnz = 0;
    for (int e = 0; e < nt; e++) {
        const int *t = mesh->T + 4 * (size_t)e;
        const double *g = fem->grad + 12 * (size_t)e;
        double s = (mu ? mu[e] : 1.0) * fem->vol[e];
        for (int a = 0; a < 4; a++)
            for (int b = a; b < 4; b++)
                triplet_push_upper(T, t[a], t[b],
                                   s * (g[3 * a] * g[3 * b] + g[3 * a + 1] * g[3 * b + 1] +
                                        g[3 * a + 2] * g[3 * b + 2]));
    }
    return triplet_finish(T, cc);
}

cholmod_sparse *mlc_fem_elasticity_hessian(const mlc_mesh *mesh, const mlc_fem *fem, double mu,
                                           double lambda, cholmod_common *cc) {
    return mlc_fem_elasticity_hessian_scaled(mesh, fem, mu, lambda, NULL, cc);
}

cholmod_sparse *mlc_fem_elasticity_hessian_scaled(const mlc_mesh *mesh, const mlc_fem *fem,
                                                  double mu, double lambda, const double *scale,
                                                  cholmod_common *cc) {
    int nv = fem->nv, nt = fem->nt;
    size_t n = 3 * (size_t)nv;
    /* 12×12 element matrix, upper half: 78 entries per tet. */
    cholmod_triplet *T = cholmod_allocate_triplet(n, n, (size_t)nt * 78, 1, CHOLMOD_REAL, cc);
    if (!T) return NULL;
    T->nnz = 0;
    for (int e = 0; e < nt; e++) {
        const int *t = mesh->T + 4 * (size_t)e;
        const double *g = fem->grad + 12 * (size_t)e;
        double V = scale ? scale[e] * fem->vol[e] : fem->vol[e];
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                const double *ga = g + 3 * a, *gb = g + 3 * b;
                double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        int r = 3 * t[a] + i, c = 3 * t[b] + j;
                        /* Each unordered pair of distinct DOFs appears twice in the full
                         * element matrix; keeping only r <= c stores it once. */
                        if (r > c) continue;
                        triplet_push_upper(T, r, c,
                                           V * (mu * ((i == j ? dot : 0.0) + ga[j] * gb[i]) +
                                                lambda * ga[i] * gb[j]));
                    }
            }
    }
    return triplet_finish(T, cc);
}

void mlc_fem_deformation_gradient(const mlc_mesh *mesh, const mlc_fem *fem, int e, const double *x,
                                  double F[9]) {
    const int *t = mesh->T + 4 * (size_t)e;
    const double *g = fem->grad + 12 * (size_t)e;
    for (int i = 0; i < 9; i++)
        F[i] = 0;
    for (int a = 0; a < 4; a++) {
        const double *xa = x + 3 * (size_t)t[a];
        for (int l = 0; l < 3; l++)
            for (int k = 0; k < 3; k++)
                F[k + 3 * l] += xa[k] * g[3 * a + l];
    }
}
