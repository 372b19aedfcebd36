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
 * expands the symmetric storage itself. Columns are sorted, every diagonal entry is present
 * and last in its column, and explicit zeros of the pattern are kept. Assembly writes into
 * the pattern of the mesh's vertex adjacency directly (upper_pattern).
 */
#include "fem.h"

#include <cholmod.h>

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

/* The upper vertex adjacency of the mesh: for each vertex v, the vertices u ≤ v that share a
 * tet with it, ascending, v itself last: adj[ptr[v] .. ptr[v + 1]). Both arrays are the
 * caller's (mlc_free). Returns 0 when out of memory. */
static int upper_adjacency(const mlc_mesh *mesh, int nv, int nt, int **ptr_out, int **adj_out) {
    int *ptr = mlc_calloc((size_t)nv + 1, sizeof(int));
    int *adj = mlc_malloc(((size_t)nt * 6 + (size_t)nv) * sizeof(int));
    int *fill = mlc_malloc((size_t)nv * sizeof(int));
    if (!ptr || !adj || !fill) {
        mlc_free(ptr), mlc_free(adj), mlc_free(fill);
        return 0;
    }
    /* every tet edge once per tet (duplicates across tets removed below), plus the vertex */
    for (int e = 0; e < nt; e++) {
        const int *t = mesh->T + 4 * (size_t)e;
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++)
                ptr[(t[a] > t[b] ? t[a] : t[b]) + 1]++;
    }
    for (int v = 0; v < nv; v++)
        ptr[v + 1] += ptr[v] + 1;
    for (int v = 0; v < nv; v++)
        fill[v] = ptr[v];
    for (int e = 0; e < nt; e++) {
        const int *t = mesh->T + 4 * (size_t)e;
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++) {
                int u = t[a] < t[b] ? t[a] : t[b], v = t[a] < t[b] ? t[b] : t[a];
                adj[fill[v]++] = u;
            }
    }
    /* sort each list (a few dozen entries), drop repeats, append v; compact in place */
    int out = 0;
    for (int v = 0; v < nv; v++) {
        int *l = adj + ptr[v], n = fill[v] - ptr[v];
        for (int i = 1; i < n; i++) {
            int x = l[i], j = i;
            for (; j > 0 && l[j - 1] > x; j--)
                l[j] = l[j - 1];
            l[j] = x;
        }
        const int start = out;
        for (int i = 0; i < n; i++)
            if (i == 0 || l[i] != l[i - 1]) adj[out++] = l[i];
        adj[out++] = v;
        ptr[v] = start;
    }
    ptr[nv] = out;
    mlc_free(fill);
    *ptr_out = ptr, *adj_out = adj;
    return 1;
}

/* Position of vertex u ≤ v in v's upper adjacency list. */
static inline int adjacency_slot(const int *ptr, const int *adj, int u, int v) {
    int lo = ptr[v], hi = ptr[v + 1] - 1; /* adj[hi] = v */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (adj[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - ptr[v];
}

/* An stype=1 CSC matrix with the upper pattern of the operator, every value −0: adding an
 * element contribution x to −0 gives x exactly, so each entry ends as the sum of its tets'
 * contributions in tet order, the bits the triplet assembly (cholmod_triplet_to_sparse sums
 * duplicates in the order given) gave, without its arrays of 16 bytes per contribution.
 * dof = 1 (a scalar per vertex) or 3 (DOF 3v+i; the diagonal block's upper half). */
static cholmod_sparse *upper_pattern(int nv, const int *ptr, const int *adj, int dof,
                                     cholmod_common *cc) {
    size_t nnz = 0;
    for (int v = 0; v < nv; v++) {
        size_t deg = (size_t)(ptr[v + 1] - ptr[v]);
        nnz += dof == 1 ? deg : 9 * (deg - 1) + 6;
    }
    size_t n = (size_t)dof * (size_t)nv;
    cholmod_sparse *A = cholmod_allocate_sparse(n, n, nnz, 1, 1, 1, CHOLMOD_REAL, cc);
    if (!A) return NULL;
    int *Ap = A->p, *Ai = A->i;
    double *Ax = A->x;
    int p = 0;
    for (int v = 0; v < nv; v++) {
        const int deg = ptr[v + 1] - ptr[v];
        for (int j = 0; j < dof; j++) {
            Ap[dof * v + j] = p;
            for (int k = 0; k < deg - 1; k++)
                for (int i = 0; i < dof; i++)
                    Ai[p++] = dof * adj[ptr[v] + k] + i;
            for (int i = 0; i <= j; i++)
                Ai[p++] = dof * v + i;
        }
    }
    Ap[n] = p;
    for (int q = 0; q < p; q++)
        Ax[q] = -0.0;
    return A;
}

/* One operator being assembled: the adjacency, and the matrix with its pattern (values −0). */
typedef struct assembly {
    int *ptr, *adj;
    cholmod_sparse *A;
    const int *Ap;
    double *Ax;
} assembly;

static int assembly_begin(assembly *as, const mlc_mesh *mesh, const mlc_fem *fem, int dof,
                          cholmod_common *cc) {
    memset(as, 0, sizeof *as);
    if (!upper_adjacency(mesh, fem->nv, fem->nt, &as->ptr, &as->adj)) return 0;
    as->A = upper_pattern(fem->nv, as->ptr, as->adj, dof, cc);
    if (!as->A) {
        mlc_free(as->ptr), mlc_free(as->adj);
        return 0;
    }
    as->Ap = as->A->p, as->Ax = as->A->x;
    return 1;
}

static cholmod_sparse *assembly_end(assembly *as) {
    mlc_free(as->ptr), mlc_free(as->adj);
    return as->A;
}

cholmod_sparse *mlc_fem_laplacian(const mlc_mesh *mesh, const mlc_fem *fem, const double *mu,
                                  cholmod_common *cc) {
    assembly as;
    if (!assembly_begin(&as, mesh, fem, 1, cc)) return NULL;
    for (int e = 0; e < fem->nt; e++) {
        const int *t = mesh->T + 4 * (size_t)e;
        const double *g = fem->grad + 12 * (size_t)e;
        double s = (mu ? mu[e] : 1.0) * fem->vol[e];
        for (int a = 0; a < 4; a++)
            for (int b = a; b < 4; b++) {
                int u = t[a] < t[b] ? t[a] : t[b], v = t[a] < t[b] ? t[b] : t[a];
                as.Ax[as.Ap[v] + adjacency_slot(as.ptr, as.adj, u, v)] +=
                    s * (g[3 * a] * g[3 * b] + g[3 * a + 1] * g[3 * b + 1] +
                         g[3 * a + 2] * g[3 * b + 2]);
            }
    }
    return assembly_end(&as);
}

cholmod_sparse *mlc_fem_elasticity_hessian(const mlc_mesh *mesh, const mlc_fem *fem, double mu,
                                           double lambda, cholmod_common *cc) {
    return mlc_fem_elasticity_hessian_scaled(mesh, fem, mu, lambda, NULL, cc);
}

cholmod_sparse *mlc_fem_elasticity_hessian_scaled(const mlc_mesh *mesh, const mlc_fem *fem,
                                                  double mu, double lambda, const double *scale,
                                                  cholmod_common *cc) {
    assembly as;
    if (!assembly_begin(&as, mesh, fem, 3, cc)) return NULL;
    for (int e = 0; e < fem->nt; e++) {
        const int *t = mesh->T + 4 * (size_t)e;
        const double *g = fem->grad + 12 * (size_t)e;
        double V = scale ? scale[e] * fem->vol[e] : fem->vol[e];
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                /* Each unordered pair of distinct DOFs appears twice in the full element
                 * matrix; only r = 3u + i <= c = 3v + j is stored, so a block with u > v holds
                 * nothing, and the diagonal block only i <= j. */
                const int u = t[a], v = t[b];
                if (u > v) continue;
                const double *ga = g + 3 * a, *gb = g + 3 * b;
                double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
                const int k = adjacency_slot(as.ptr, as.adj, u, v);
                for (int i = 0; i < 3; i++)
                    for (int j = u == v ? i : 0; j < 3; j++)
                        as.Ax[as.Ap[3 * v + j] + 3 * k + i] +=
                            V *
                            (mu * ((i == j ? dot : 0.0) + ga[j] * gb[i]) + lambda * ga[i] * gb[j]);
            }
    }
    return assembly_end(&as);
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
