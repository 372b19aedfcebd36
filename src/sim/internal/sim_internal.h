/* sim_internal.h: the layout of mlc_model and mlc_rollout, shared by sim_model.c (precompute)
 * and sim_step.c (stepping, contact, objective). Not installed; nothing else includes it.
 *
 * Block notation (docs/method.md §11): n4 = 4w. Every "n4×3" matrix is column-major with leading
 * dimension n4; every reduced vector of length r = 3·n4 is [t_x; t_y; t_z].
 */
#ifndef MODALLOCO_SIM_INTERNAL_H
#define MODALLOCO_SIM_INTERNAL_H

#include "contact.h"
#include "sim.h"
#include "terrain_contact.h"

/* Contact factors kept per rollout (keyed by the active set; measured at the Bat settings:
 * 1.83 factorizations a step with one entry, 1.06 with four, 1.04 with eight). */
#define MLC_CONTACT_CACHE 4

/* Which contact solve a step runs (sim_step.c): set.contact_model's on the model's terrain,
 * decided once when the model is made (model_new), so the step has one switch and no tests of
 * the settings. */
typedef enum mlc_contact_solve {
    CONTACT_SOLVE_PLANE = 0,    /* complementarity on the flat ground (contact.h) */
    CONTACT_SOLVE_TERRAIN = 1,  /* complementarity on a terrain, in each sample's frame */
    CONTACT_SOLVE_EQUALITY = 2, /* the paper's equality constraints (flat ground only) */
} mlc_contact_solve;

struct mlc_model {
    mlc_sim_settings set;
    int nv, nt, w, n4, r;
    int m, ma;        /* actuation modes and m + 1 (ā = [a; 1]) */
    int ncp, nca, ns; /* passive clusters, actuation clusters, contact samples */
    int nsp;          /* ns rounded up to a multiple of 4 (at least 4): ld of ST */
    double *Lap; /* n4×n4: Σ_e V_e G_e G_eᵀ (Qᵛ = μ I₃⊗Lap, Qᵃ = γ I₃⊗Lap); with
                    per-tet materials Σ_e (μ_e + γ_e)/(μ + γ) V_e G_e G_eᵀ, so that
                    Q = (μ + γ) Lap + N/h² still */
    double *Lapv, *Lapa; /* per-tet materials only (else NULL: Lap): Σ (μ_e/μ) V G Gᵀ and
                            Σ (γ_e/γ) V G Gᵀ, so Qᵛ = μ I₃⊗Lapv, Qᵃ = γ I₃⊗Lapa */
    double vol_mu;       /* Σ_e (μ_e/μ) V_e (= volume for one material) */
    double *friction_s;  /* ns: each sample's μ_f (per-region friction), or NULL */
    double *N;           /* n4×n4: Σ_i m_i s_i s_iᵀ, s_i = W_i ⊗ X̃_i (N = I₃⊗ this) */
    double *Q;           /* n4×n4: (μ + γ) Lap + N/h² */
    double *Lq;          /* n4×n4: lower Cholesky factor of Q (upper part zero) */
    double *GS;  /* n4×ns: Q⁻¹ N Q⁻¹ S (equality contact: correction per multiplier) */
    double *Gss; /* ns×ns: Sᵀ Q⁻¹ N Q⁻¹ S (equality contact: its Gram matrix) */
    double *QiS; /* n4×ns: Q₄⁻¹ s_s, the motion of z per unit contact force on sample s
                    (complementarity contact; the same in every block) */
    double *Dss; /* ns×ns: s_uᵀ Q₄⁻¹ s_s, the Delassus matrix of the samples */
    double *Gp;  /* ncp × (n4×3): G_c = Σ_{e∈c} (μ_e/μ) V_e G_e (unit μ) */
    double *Ka; /* nca × ma × (n4×3): 𝒦_c[v] = Σ_{e∈c} (γ_e/γ) V_e G_e Ŷ_{e,v}ᵀ, Ŷ_v = ∇(D_v)_e
                   for v < m and Ŷ_m = I (unit γ) */
    double *QiGp; /* ncp × (n4×3): Q₄⁻¹ G_c (the global solve applied to each rhs term) */
    double *QiKa; /* nca × ma × (n4×3): Q₄⁻¹ 𝒦_c[v] */
    double *Yg;   /* nca × ma × ma: Σ_{e∈c} V_e ⟨Ŷ_{e,u}, Ŷ_{e,v}⟩_F (energy constant) */
    double *Gb;   /* n4×3: Σ_e V_e G_e, the body rotation map */
    double *gsum; /* n4: Σ_i m_i s_i (gravity and centre of mass) */
    double mass;  /* Σ_i m_i */
    double volume; /* Σ_e V_e */
    double *S;     /* ns × n4 (row i contiguous): contact sample rows s_i */
    /* Layouts for the step's small dense kernels: "transposed" maps are stored so that the
     * innermost loop runs over contiguous columns (an axpy the compiler vectorizes without
     * reassociating sums, so results do not depend on the vector width). */
    double *GpT; /* (3ncp) × n4: GpT[col + 3ncp·i] = Gp[i + n4·col], col = 3c + j */
    double *ST;  /* n4 × nsp: ST[s + nsp·i] = S[s·n4 + i], zero for s ≥ ns */
    double *QiN; /* n4×n4: Q₄⁻¹ N (so Q⁻¹ b0 = Q₄⁻¹N q/h² + g ⊗ Q₄⁻¹Σ m s, no solve) */
    double *Qig;   /* n4: Q₄⁻¹ Σ_i m_i s_i */
    double *QiC;   /* n4×n4: Q₄⁻¹ C/h with C = αN + β(μ+γ)Lap, the Rayleigh damping
                      (NULL when off): its rhs term is C z_n / h */
    double *zrest; /* r */
    double com_rest[3];
    double extent;                   /* largest bounding-box extent of the rest mesh */
    double ground_tol;               /* 1e-9 × extent: "below the ground" threshold */
    double *W, *X;                   /* copies for output skinning: nv×w, 3×nv */
    mlc_terrain terrain;             /* contact geometry (owned copy; set.terrain points here) */
    int bdf2;                        /* set.integrator == MLC_INTEGRATOR_BDF2 */
    mlc_contact_solve contact_solve; /* the step's contact solve (above) */
};

struct mlc_rollout {
    const mlc_model *mod;
    int step;         /* steps taken since reset */
    int contacts;     /* active samples in the last iteration of the last step */
    double last_work; /* Δzᵀ(bᵃ − Qᵃ z) of the last step */
    int last_iterations;
    double *zc, *zp, *zn; /* current, previous, next state (r each; rotated by pointer swap) */
    double *q, *b0, *zs0, *ba, *zs, *zi; /* r each: prediction, constant rhs, Q⁻¹ b0, actuation
                                            rhs, tentative solution, previous iterate */
    double *ys;                          /* ns: y of the active samples at z* */
    double *abar;                        /* ma */
    double *Kc;  /* nca × (n4×3): 𝒦_c contracted with ā for this step */
    int npad;    /* ncp + nca rounded up to a multiple of 4: lanes of the polar batch */
    int ldc;     /* 3·npad */
    double *GT;  /* n4 × ldc (row i at ldc·i): the cluster maps of the step transposed,
                    lane by lane: column npad·j + c is column j of cluster c's map,
                    G_c (c < ncp, constant, copied at creation) or 𝒦_{c−ncp}(ā) (set
                    per step); padding columns zero. So the local step's output F (row k
                    at k·ldc) holds F_c[k][j] at (3k + j)·npad + c, mlc_polar_lanes'
                    layout */
    double *QG;  /* n4 × 3(ncp + nca) column-major: Q₄⁻¹ G_c (constant), then
                    Q₄⁻¹ 𝒦_c(ā) for this step */
    double *PR;  /* 9 × npad, lane by lane: rotations R_c, Ω_c (passive first) of the
                    last iteration, entry (k, j) of cluster c at (3k + j)·npad + c */
    double *qs;  /* 4 × npad: warm-start quaternions of R_c and Ω_c, lane by lane */
    double *scl; /* npad: each lane's rotation coefficient scale (μ or γ) */
    double qbody[4];
    double *xc, *xp; /* nsp×3 (block k at k·nsp): sample positions at z_n and z_{n−1} */
    int x_valid;     /* xc holds S z_n of the current zc (so the next step's xp is xc) */
    double *xs;      /* nsp×3 (block k at k·nsp): sample positions at the tentative z*
                        (the complementarity contact fills y only; x and z of its samples in
                        contact are in xpack) */
    double *Fall;    /* 3 × ldc (row k at k·ldc): F_c, then H_c, of every cluster (GT's
                        column order) */
    double *coef;    /* 3 × ldc: scaled rotations, rhs coefficients, column 3c + j (QG's
                        order) */
    int *active;     /* ns */
    double *Gm, *Ym; /* MLC_CONTACT_CACHE × (ns×ns): damped Gram factors of recent active
                        sets (na×na, ld ns; the diagonal holds the reciprocal pivots);
                        ns×4 multipliers/residuals (Y[4a + k]) */
    int *cact;       /* MLC_CONTACT_CACHE × ns: the active set of each cached factor */
    int cna[MLC_CONTACT_CACHE]; /* its size (-1: empty). A factor depends only on the set, so
                           it is reused across iterations, steps and rollouts (bit-identical
                           to refactoring) */
    int cnext;                  /* next entry to replace (round robin) */
    mlc_contact cs;             /* complementarity contact: solver, scratch and last forces */
    double *yt;                 /* ns: each sample's normal target this step */
    /* Samples ruled out of the contact solve (contact_complementarity), by 4-sample group:
     * gcoup, the most any of its samples is lowered per unit of total force over its row's
     * norm (constant); grad, from the step's first z*, the least distance its samples' rows
     * can move before one could reach its threshold; zref, that z*'s y-block, and its norm;
     * smove, the distance z*'s y-block has moved since, plus the rounding allowance. */
    double *gcoup, *grad, *zref, zref_norm, smove;
    double skip_grad, skip_coup; /* the least grad and the largest gcoup of the groups ruled
                                    out in this iteration */
    double *srnorm, *srad;       /* per sample: 1/‖S_s‖ rounded down; its distance (scratch) */
    int *sruns, *sskip, *sfar;   /* the live groups' sample ranges (mlc_contact_live), the
                                    groups ruled out, the groups that may be (this step) */
    int nskip, nfar;
    int skip_off;      /* tests: every sample read in every iteration */
    long skip_samples; /* samples ruled out, summed over iterations (tests, --profile) */
    double *ct;        /* 2 ns: friction right-hand sides of the samples in contact (x, z) */
    /* The columns of S (ST's) of the samples in contact, packed side by side (n4 × nsp, ld
     * nsp; np of them, the rest up to a multiple of 4 padding), for the samples listed in
     * pkey (npk; −1 none), and the rows kernel's output over them (3 × nsp) */
    double *spack, *xpack;
    int *pkey, npk;
    /* Terrain contact (only when the terrain is not the flat plane; tc.frame = NULL
     * otherwise): per-sample frames, targets, bounds and matrices (terrain.h), and the
     * world-frame forces of the last step (3 × ns). */
    mlc_terrain_contact tc;
    double *fw;
    double *vc, *vp;           /* BDF2: v_n and v_{n−1} (r each) */
    mlc_energy_ledger *ledger; /* optional energy bookkeeping (mlc_rollout_set_ledger) */
    mlc_step_profile *prof;    /* optional timing (bench_sim --profile) */
    double *trace;             /* optional: iterations × r iterates of the last step (tests) */
    int trace_cap;
};

static inline double mlc__dot(const double *restrict a, const double *restrict b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* M (3×3, M[k + 3j] = t_kᵀ G[:, j]) for a 4w×3 map G. */
static inline void mlc__block_map(const double *restrict z, const double *restrict G, int n4,
                                  double M[9]) {
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++)
            M[k + 3 * j] = mlc__dot(z + k * n4, G + n4 * j, n4);
}

/* Σ_e V_e F_e(z) (3×3 column-major), whose rotation is the body rotation R(t) of Eq. 17. */
void mlc__model_body_matrix(const mlc_model *mod, const double *z, double A[9]);

void mlc__ledger_before_step(mlc_rollout *ro);
void mlc__ledger_after_step(mlc_rollout *ro);

/* Which copy of the step kernels runs: "avx2 (4-wide)", "sse2 (2-wide, FMA)" (no AVX2, or
 * MLC_NO_AVX2=1 in the environment), "sse2 (2-wide, emulated FMA)" (no FMA, or MLC_NO_FMA=1)
 * or "generic (2-wide)" (not x86-64 GCC). */
const char *mlc__sim_kernel_path(void);

#endif
