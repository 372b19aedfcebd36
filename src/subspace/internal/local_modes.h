/* local_modes.h: localized vibration modes, m_r per body region (docs/method.md "Localized
 * actuation modes"; after Melzi et al. 2017, localized manifold harmonics).
 *
 * For region R (a set of tets given by per-tet labels) the modes solve
 *     (K + w M_out(R)) φ = λ M φ,
 * with K the unit-μ linear-elasticity Hessian of the vibration modes, M the lumped mass (unit
 * density, per DOF) and M_out(R) the lumped mass of the tets outside R only (vertex v gets
 * Σ_{e∋v, e∉R} V_e / 4). The penalty w M_out makes motion outside R cost w per unit of mass-
 * weighted squared displacement, so the lowest pairs are the vibration modes of R held by the
 * rest of the body. Since φᵀ(K + w M_out)φ = λ and K ≥ 0, the share of a mode's motion outside
 * its region is bounded a posteriori by
 *     f = √(φᵀ M_out φ) / √(φᵀ M φ) ≤ √(λ / w).
 * With w > 0 and tets outside R the operator is positive definite (a rigid motion moves the
 * outside mass); with w = 0 or R = everything it is K, whose 6 rigid modes are then deflated
 * exactly as for the global modes, so one region with w = 0 gives the global modes bit for bit.
 *
 * Every region's solve is ARPACK shift-invert on its own factor of K + w M_out − σM (eigen.h);
 * the pattern is K's for every region, so the fill-reducing ordering and symbolic analysis are
 * done once and shared (mlc_eigen_solve_shared), and on two threads the next region's
 * factorization runs beside the current one's Lanczos loop. The union of all regions' modes is then
 * M-orthonormalized by a symmetric (Löwdin) step, Φ ← Φ (ΦᵀMΦ)^(−1/2), the orthonormal set
 * nearest to Φ in the M-norm: the modes of different regions overlap only through their small
 * outside parts, so each moves little; `spread` reports how much.
 */
#ifndef MODALLOCO_LOCAL_MODES_H
#define MODALLOCO_LOCAL_MODES_H

#include <cholmod.h>

#include "base.h"
#include "fem.h"
#include "mesh.h"

#define MLC_LOCAL_MAX_MODES 64 /* regions × modes per region, as the gait's limit */

/* What the solve did and how local the result is (per mode arrays have nregions·per_region
 * entries, region-major). */
typedef struct mlc_local_modes_report {
    double weight;   /* w used (unit μ and density, the units of the eigenvalues) */
    double gram_min; /* smallest eigenvalue of ΦᵀMΦ before orthonormalization (1 = orthogonal) */
    double spread[MLC_LOCAL_MAX_MODES]; /* ‖φ_after − φ_before‖_M (φ_before M-normalized) */
    double fraction[MLC_LOCAL_MAX_MODES]; /* √(φᵀM_outφ / φᵀMφ) after orthonormalization */
    double bound[MLC_LOCAL_MAX_MODES];    /* √(λ/w) before it (1 when w = 0) */
    int solves;                           /* ARPACK operator applications, all regions */
    double t_factor, t_iterate;           /* seconds, all regions */
} mlc_local_modes_report;

/* Lumped mass of the tets outside region r (tet_region[e] != r), per DOF (3 per vertex, DOF
 * 3i+k): Σ_{e∋v, e∉R} s_e V_e / 4 with s_e = tet_mass_scale[e] (ρ_e/ρ, the scale of the mass
 * M of the eigenproblem), or 1 when tet_mass_scale is NULL (unit density). tet_region NULL:
 * one region, nothing outside (all zero). */
void mlc_local_outside_mass(const mlc_mesh *mesh, const mlc_fem *fem, const int *tet_region,
                            const double *tet_mass_scale, int r, double *out3);

/* Smallest eigenvalue of ΦᵀMΦ for Φ n×q (0 when the columns are linearly dependent, 1 for an
 * M-orthonormal set); −1 when out of memory or LAPACK fails. */
double mlc_local_gram_min(int n, int q, const double *mass3, const double *Phi);

/* What the localized modes are of, and how to solve for them.
 *  H:          the n×n (n = 3 nv) Hessian, symmetric storage with every diagonal entry (as
 *              mlc_fem_elasticity_hessian); not modified.
 *  mass3:      n lumped masses (unit density, or scaled per tet by tet_mass_scale).
 *  mesh, fem:  the body (borrowed).
 *  tet_region: nt labels in 0..nregions−1, or NULL (one region, nregions must be 1).
 *  tet_mass_scale: nt per-tet density scales ρ_e/ρ that mass3 was summed with, or NULL (1):
 *              M_out uses the same densities, so M_out ≤ M and f is a share of the motion.
 *  per_region: m_r >= 1 modes per region; nregions·m_r <= MLC_LOCAL_MAX_MODES.
 *  weight:     w >= 0; w = 0 needs nregions = 1 (every region would get the global modes).
 *  sigma:      the shift (mlc_eigen_default_shift of H: below every penalized spectrum too).
 *  perm:       NULL or an n-entry fill-reducing ordering for the shared analysis.
 *  Z:          the 6 M-orthonormal rigid modes (n×6), deflated where the operator is K itself.
 *  threads:    1 = the regions one after the other; otherwise, with two regions or more and
 *              two cores, two threads (region r's Lanczos loop beside region r + 1's
 *              factorization, in a second factor: twice the factor memory). The same bits.
 * Every pointer is borrowed for the call. */
typedef struct mlc_local_modes_def {
    cholmod_sparse *H;
    const double *mass3;
    const mlc_mesh *mesh;
    const mlc_fem *fem;
    const int *tet_region;
    const double *tet_mass_scale;
    int nregions, per_region;
    double weight, sigma;
    const int *perm;
    const double *Z;
    int threads;
} mlc_local_modes_def;

/* The localized modes of every region of `def`.
 *  evals:  out, nregions·m_r penalized eigenvalues, region-major, ascending per region.
 *  evecs:  out, n × (nregions·m_r), M-orthonormal as a whole.
 *  report: out (may be NULL).
 *  cc:     a started cholmod_common (its ordering settings are used).
 * Errors name the setting: MLC_EINVAL for bad labels (a region without tets, a label out of
 * range), for w < 0 or too many modes; the eigen-solver's errors otherwise. */
mlc_status mlc_local_modes_compute(const mlc_local_modes_def *def, double *evals, double *evecs,
                                   mlc_local_modes_report *report, cholmod_common *cc,
                                   mlc_err *err);

#endif
