/* fem.h: linear-tet finite-element operators (docs/method.md §2).
 *
 * Shape gradients: for tet e with vertices v_0..v_3, φ_a is the P1 shape function of v_a and
 * grad[12e + 3a + k] = ∂φ_a/∂X_k (constant per tet). The deformation gradient of a displacement
 * field is F_e = Σ_a x_{v_a} ∇φ_aᵀ.
 *
 * Ownership: an mlc_fem owns its arrays; mlc_fem_free releases them. Sparse matrices returned
 * are owned by the caller (cholmod_free_sparse with the same cholmod_common).
 */
#ifndef MODALLOCO_FEM_H
#define MODALLOCO_FEM_H

#include "base.h"
#include "mesh.h"

/* CHOLMOD's structs by their tags (cholmod_sparse is struct cholmod_sparse_struct, and so on),
 * so that this header does not pull <cholmod.h> into every file above it; a source that calls
 * CHOLMOD includes <cholmod.h> itself. */
struct cholmod_sparse_struct;
struct cholmod_common_struct;

typedef struct mlc_fem {
    int nv, nt;
    double *vol;   /* nt: rest volumes V_e > 0 */
    double *grad;  /* 12×nt: shape gradients as above */
    double *vmass; /* nv: volume-lumped mass Σ_{e∋v} V_e/4 (unit density); multiply by ρ */
} mlc_fem;

mlc_status mlc_fem_init(mlc_fem *fem, const mlc_mesh *mesh, mlc_err *err);
void mlc_fem_free(mlc_fem *fem);

/* Scalar Laplacian L = Σ_e μ_e V_e G_eᵀ G_e (nv×nv, symmetric, stype = 1 upper stored, or
 * both halves: see implementation note). `mu` is per tet (nt) or NULL for 1. */
struct cholmod_sparse_struct *mlc_fem_laplacian(const mlc_mesh *mesh, const mlc_fem *fem,
                                                const double *mu, struct cholmod_common_struct *cc);

/* Linear-elasticity Hessian at rest (3nv×3nv, DOF 3i+k), Lamé parameters μ, λ (scalars). */
struct cholmod_sparse_struct *mlc_fem_elasticity_hessian(const mlc_mesh *mesh, const mlc_fem *fem,
                                                         double mu, double lambda,
                                                         struct cholmod_common_struct *cc);
/* The same with tet e's Lamé parameters scaled by scale[e] (nt; NULL = 1, then bit-identical
 * to mlc_fem_elasticity_hessian): per-region stiffness at one Poisson ratio. */
struct cholmod_sparse_struct *mlc_fem_elasticity_hessian_scaled(const mlc_mesh *mesh,
                                                                const mlc_fem *fem, double mu,
                                                                double lambda, const double *scale,
                                                                struct cholmod_common_struct *cc);

/* Deformation gradient F (3×3 column-major) of tet e for positions x (3×nv). */
void mlc_fem_deformation_gradient(const mlc_mesh *mesh, const mlc_fem *fem, int e, const double *x,
                                  double F[9]);

#endif
