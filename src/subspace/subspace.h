/* subspace.h: the precomputed subspaces of docs/method.md §3–5: skinning eigenmodes (simulation
 * subspace), vibration modes (actuation subspace) with their amplitude limits, passive and
 * actuation clusters, and contact samples; plus the reusable precompute cache.
 *
 * Ownership: an mlc_subspace owns every array (mlc_malloc); mlc_subspace_free releases them
 * and re-zeroes. A zeroed struct is empty.
 */
#ifndef MODALLOCO_SUBSPACE_H
#define MODALLOCO_SUBSPACE_H

#include "base.h"
#include "fem.h"
#include "mesh.h"

/* The most contact samples the spacing of the cover may add up to (each rollout keeps a few
 * ns×ns matrices: 2 MB each at the cap). */
#define MLC_CONTACT_SAMPLES_MAX 512

typedef struct mlc_subspace_settings {
    int w;                /* skinning modes, including the constant one (>= 1) */
    int m;                /* vibration modes kept: the first m non-rigid (ignored if nlist>0) */
    const int *mode_list; /* nlist explicit non-rigid mode indices (0 = first non-rigid) */
    int nlist;
    double poisson;         /* Poisson ratio ν of the Hessian whose modes drive actuation */
    int passive_clusters;   /* k-means k for |C_p| before component splitting */
    int actuation_clusters; /* |C_a| (1 = whole body) */
    int contact_samples;    /* |I|: the least number of contact samples */
    double contact_band;    /* lower band of the contact samples, × extent (clusters.h) */
    double contact_spacing; /* > 0: more samples until the surface that can reach the ground is
                               covered this densely, × extent, up to MLC_CONTACT_SAMPLES_MAX
                               (mlc_contact_samples_cover); 0: contact_samples exactly */
    uint64_t seed;          /* k-means++ seed */
    /* Per-region materials (regions.h), all NULL for one material: then every result is the
     * same, bit for bit, as without them. */
    const double *tet_stiffness;  /* nt: (μ_e + γ_e)/(μ + γ), scaling each tet's Laplacian and
                                     Hessian entries, or NULL (1 everywhere) */
    const double *vertex_mass;    /* nv: Σ_{e∋v} (ρ_e/ρ) V_e/4, the mass of both eigenproblems
                                     in place of fem.vmass, or NULL (fem.vmass) */
    const double *tet_mass_scale; /* nt: ρ_e/ρ that vertex_mass was summed with, or NULL (1):
                                     the outside mass of the local modes uses it too */
    const int *tet_region;        /* nt: region of every tet (0..nregions-1), or NULL */
    int nregions;                 /* regions; with > 1 the labels are part of the cache key */
    /* Localized modes (local_modes.h): local_modes = m_r per region (0 = none). They replace
     * nothing here: the actuation set is [m global modes (m may be 0 when local_modes > 0)] +
     * [m_r local modes per region]. localization = c >= 0: the weight is w = c·λ_ref with
     * λ_ref the first non-zero eigenvalue of the unit-μ scalar Laplacian (the skinning λ₁), so
     * c does not depend on mesh size or material. tet_region: nt labels 0..nregions−1, or
     * NULL with nregions 1 (one region: the whole body). Borrowed, read during the compute. */
    int local_modes;
    double localization;
    /* Threads of the compute (0 = the machine's cores): with two or more, the vibration
     * problem (its factorization the longest step) runs beside the skinning modes, clusters
     * and samples (not with local_modes, which need the skinning λ₁). Every result is the
     * same, bit for bit, for any value; not in the cache key. */
    int threads;
    /* The shift of the first vibration and skinning solves, 0 = mlc_eigen_default_shift
     * (eigen.h). For tests and diagnostics of the solves' check and recovery; not in the cache
     * key. */
    double first_shift;
    /* The limit of the vibration solve's check (eigen.h), 0 = MLC_EIGEN_CHECK_TOL; for tests
     * of the failure path; not in the cache key. */
    double check_tol;
    /* Memory bound of the compute in bytes (budget.h), 0 = none: checked from the mesh sizes
     * before anything big is allocated and from CHOLMOD's symbolic analysis before the
     * vibration factor is; over it the compute fails with MLC_EINVAL and a message naming the
     * estimate, the bound and the fixes. Not in the cache key. */
    double max_memory;
} mlc_subspace_settings;

typedef struct mlc_subspace {
    int nv, nt;        /* mesh sizes it was computed for */
    int w;             /* skinning modes */
    double *W;         /* nv×w column-major weights; Wᵀ M_s W = I with M_s = fem.vmass
                          (unit density; settings.vertex_mass when given); column 0 is
                          exactly 1/sqrt(Σ M_s) */
    double *skin_eval; /* w eigenvalues of L W = M_s W Λ (unit μ), ascending, [0] = 0 */
    int m;             /* vibration modes kept */
    double *D;         /* 3nv×m column-major, DOF 3i+k; Dᵀ M D = I (M = vmass per DOF)
                          within the global and within the local modes; the two sets are
                          not orthogonalized against each other (docs/method.md) */
    double *vib_eval;  /* m eigenvalues (unit μ, λ = 2μν/(1-2ν), unit density); of
                          K + w M_out for a local mode */
    int *mode_index;   /* m: index among the non-rigid modes (0 = first non-rigid) for a
                          global mode; a local mode's is its position in the set counted
                          after the largest global index (the first local mode of a set
                          without global modes is 0), so indices are distinct */
    int *mode_region;  /* m: the region a local mode belongs to, −1 for a global mode */
    double *vib_frac;  /* m: local mode: √(φᵀM_outφ/φᵀMφ), its motion outside its region;
                          0 for a global mode */
    int nregions;      /* regions of the local modes (0 when there are none) */
    double local_weight;   /* w of the local modes (unit μ and density, as vib_eval), 0 if none */
    double local_gram_min; /* smallest eigenvalue of the local modes' Gram matrix ΦᵀMΦ before
                              their M-orthonormalization (1: already orthogonal) */
    double local_spread_max; /* largest ‖φ_after − φ_before‖_M of that step */
    double rigid_eval[6];    /* the 6 dropped near-zero eigenvalues */
    double *grad_max;        /* m: max over tets of ‖∇(D_i)_e‖_F; a_max,i = p / grad_max[i] */
    int ncp;                 /* passive clusters after splitting into face-connected parts */
    int *cluster;            /* nt passive cluster label in [0, ncp) */
    int nca;                 /* actuation clusters */
    int *acluster;           /* nt actuation cluster label in [0, nca) */
    int ns;                  /* contact samples */
    int *samples;            /* ns boundary vertex indices (farthest-point order) */
    uint64_t cluster_seed;   /* the k-means seed (settings.seed) cluster and acluster came from */
    int cluster_seed_known;  /* 0 for a cache of format 1 or 2, which did not record it */
    /* Diagnostics (not part of the physics): seconds per stage, CHOLMOD ordering used. */
    double t_skinning, t_vibration, t_clusters, t_samples;
    double t_local;              /* seconds of t_vibration spent on the local modes */
    double t_local_factor;       /* of t_local: the regions' numeric factorizations (not cached) */
    int skin_solves, vib_solves; /* ARPACK operator applications */
    /* The global solves' phases (the attempt that passed; 0 when dense, not solved or cached):
     * seconds in the fill-reducing ordering and symbolic analysis, in the numeric Cholesky
     * factorization of K − σM and in the Lanczos loop, and the factor's nonzeros. t_vib_order:
     * the vertex ordering (METIS on the Laplacian) computed once for both problems before they
     * run side by side (compute_parallel; also counted in t_skinning and t_vibration), else 0
     * (the skinning solve orders, within t_skin_analyze). vib_solve_threads: the threads each
     * of the vibration Lanczos loop's solves was split over (1: CHOLMOD's serial solve);
     * vib_factor_threads: those of its factorization (1: CHOLMOD's own). */
    double t_skin_analyze, t_skin_factor, t_skin_iterate, skin_factor_nnz;
    double t_vib_order, t_vib_analyze, t_vib_factor, t_vib_iterate, vib_factor_nnz;
    int vib_solve_threads, vib_factor_threads;
    char ordering[16];
    /* The global vibration solve's check (eigen.h, mlc_eigen_check): the attempt that passed
     * (1 = the first; 2 and 3 are solved again with other shifts), its shift, its ordering,
     * and the worst relative residual and M-orthogonality error of its pairs. Not cached:
     * 0 for a subspace read from the cache or without global modes. */
    int vib_attempts;
    double vib_shift, vib_residual, vib_orthogonality;
    char vib_ordering[16];
    char vib_note[200]; /* why the first attempt failed when vib_attempts > 1, else "" */
    /* The same for the skinning solve (two attempts at most; 0 when w = 1 or cached). */
    int skin_attempts;
    double skin_shift;
    char skin_note[200];
} mlc_subspace;

/* Compute everything for a prepared mesh. Errors (MLC_EINVAL) name the setting to change:
 * w or m out of range, fewer vertices than modes asked, a mode_list index too large;
 * MLC_ENOCONV/MLC_ENOTSPD for eigen-solver trouble with the likely cause. */
mlc_status mlc_subspace_compute(const mlc_mesh *mesh, const mlc_fem *fem,
                                const mlc_subspace_settings *settings, mlc_subspace *out,
                                mlc_err *err);
void mlc_subspace_free(mlc_subspace *s);

/* Most actuation modes any amplitude table holds (the configuration allows actuation.modes ≤ 64;
 * gait.h and objective.h size theirs by it). */
#define MLC_SUBSPACE_MAX_ACTUATED 64
/* Amplitude limits a_max,i = p / max_e ‖∇(D_i)_e‖_F (docs/method.md App. H, Eq. 76) of the
 * first min(m, MLC_SUBSPACE_MAX_ACTUATED) modes into a_max; returns that count. */
int mlc_subspace_amplitude_limits(const mlc_subspace *sub, double p, double *a_max);

/* The skinning eigenmodes alone (step 1 of mlc_subspace_compute): the w smallest pairs of
 * L W = M W Λ with L the Laplacian scaled per tet by `stiffness` (nt, NULL = 1) and M =
 * `mass` (nv, NULL = fem.vmass); W (nv×w) and eval (w) caller-allocated. Column 0 is the
 * exact constant. Used by the automatic regions (regions.h). */
mlc_status mlc_subspace_skinning_modes(const mlc_mesh *mesh, const mlc_fem *fem, int w,
                                       const double *stiffness, const double *mass, double *W,
                                       double *eval, mlc_err *err);

/* Per-tet strain of every vibration mode, out[e·m + i] = ‖∇(D_i)_e‖_F (nt×m, tet-major,
 * caller-allocated): the data of the combined amplitude bound (gait.h). grad_max[i] is the
 * maximum of column i. O(nt·m); works on a subspace read from the cache too. Two threads on
 * a large mesh unless threads = 1 (every value is computed alone: the same bits). */
void mlc_subspace_mode_strains(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *s,
                               int threads, double *out);

/* Cache key: mesh checksum and every setting the result depends on, with a format version;
 * not the clustering seed (see mlc_subspace_cache_load). */
uint64_t mlc_subspace_cache_key(const mlc_mesh *mesh, const mlc_subspace_settings *settings);

/* mlc_subspace_cache_read with the key of `settings`, then, when the cache's clusters are of
 * another seed (or of an unknown one), mlc_subspace_recluster: every seed shares the
 * eigen-solves of one cache file, which stays as it is. */
mlc_status mlc_subspace_cache_load(const char *path, const mlc_mesh *mesh, const mlc_fem *fem,
                                   const mlc_subspace_settings *settings, mlc_subspace *out,
                                   mlc_err *err);

/* Read a cache file. Returns MLC_OK and fills `out` only if the file is complete, its
 * checksum matches and its key equals `key`; otherwise a non-OK status with the reason in err
 * (missing file: MLC_EIO; stale key, truncated, corrupt or foreign: MLC_EPARSE). Callers
 * recompute on any failure. Never trusts sizes without checking them against the file. */
mlc_status mlc_subspace_cache_read(const char *path, uint64_t key, mlc_subspace *out, mlc_err *err);
/* Write atomically (temporary file in the same directory, then rename). */
mlc_status mlc_subspace_cache_write(const char *path, uint64_t key, const mlc_subspace *s,
                                    mlc_err *err);

#endif
