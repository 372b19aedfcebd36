/* contact.h: ground contact of one local-global iteration, solved exactly in the space of the
 * contact samples (docs/method.md, "Contact"). Shared by the reduced simulator (sim_step.c)
 * and the full-space reference (fullspace.c), which differ only in how a force moves the
 * state.
 *
 * With the rotations of the iteration fixed, the global step minimizes a quadratic with
 * Hessian Q; a contact force λ_s on sample s (newtons, along one axis) moves the solution by
 * Q⁻¹ J_sᵀ λ_s, and the samples' coordinate on that axis by D λ, where D = J Q⁻¹ Jᵀ is the
 * Delassus matrix of the samples (ns×ns, precomputed once: Q is constant; the same for the
 * three axes because Q is the same per coordinate block). The normal problem is then the
 * linear complementarity problem
 *
 *     y = y* + D_CC λ ≥ g,   λ ≥ 0,   λᵀ (y − g) = 0     over the candidates C,
 *
 * (y* the tentative positions, g the targets): samples end at or above their targets, forces
 * only push, and only a sample that ends exactly on its target is pushed. It is the KKT system
 * of min ½λᵀDλ + (y* − g)ᵀλ over λ ≥ 0. D is positive semi-definite (rank ≤ 4w in the reduced
 * model), so a Tikhonov term ε picks the least force among equivalent ones (a force along a
 * null direction of D moves nothing) and the problem is solved exactly by an active-set method
 * (Lawson–Hanson's): finite, no iteration count to tune, warm-started from the previous
 * solve's contact set. Candidates are the samples below their targets at y*; pushing some up
 * can push others down, so any sample that ends below its target joins and the problem is
 * solved again, until none does.
 *
 * Friction, on the samples in contact (λ > 0): tangential targets t (the paper's damping:
 * x_n + μ_c (x_n − x_{n−1})) reached by forces with D_PP λ_t = t − x*, the same matrix and
 * factor; with a Coulomb coefficient μ_f > 0 each axis' force is limited to μ_f λ_n (a box,
 * solved exactly by principal pivoting on the sides of the box the forces are on, starting
 * from the sides the previous solve left them on; forces inside the box are the unconstrained
 * solution).
 *
 * Ownership: the solver owns its scratch (allocated once by mlc_contact_create); D is borrowed.
 * The D given to mlc_contact_create must keep its values (factors of its submatrices are kept
 * between solves); a matrix that changes between solves (terrain frames) is set into `D`
 * after creation and is refactored every time.
 * Solving never allocates.
 */
#ifndef MODALLOCO_CONTACT_H
#define MODALLOCO_CONTACT_H

#include "base.h"

/* Tikhonov term relative to D's largest diagonal entry, and the most projected Gauss–Seidel
 * sweeps of Coulomb-limited friction should the exact pivoting not settle (rounding). */
#define MLC_CONTACT_EPS 1e-10
#define MLC_CONTACT_FRICTION_SWEEPS 20
/* Rank-one changes of the normal and friction factors (mlc_contact_set_updates): tried from
 * this many forces after the first change on (below it refactoring costs about as little) and
 * taken when they cost under half of refactoring, at most this many in a row before a factor
 * is made afresh, and a downdated pivot must keep this share of its square (else it would
 * have lost most of its digits). */
#define MLC_CONTACT_UPDATE_MIN 24
#define MLC_CONTACT_UPDATE_RUN 64
#define MLC_CONTACT_UPDATE_KEEP 1e-6

typedef struct mlc_contact {
    int ns;                   /* samples */
    const double *D;          /* ns×ns column-major Delassus matrix (borrowed) */
    double eps;               /* MLC_CONTACT_EPS × max diag D */
    double tol;               /* a sample at most tol below its target counts as on it (metres) */
    double friction;          /* μ_f (0 = unbounded) */
    const double *friction_s; /* ns: μ_f per sample (0 = unbounded), replacing `friction`;
                                 NULL = `friction` for all (borrowed, set after create) */
    double *lam;      /* 3 × ns: forces of the last solve per sample, axis k at k·ns (x and z
                         friction, y normal), zero off contact; the next solve's warm start (a
                         caller that writes it sets np = 0 or calls mlc_contact_reset) */
    int np;           /* samples in contact after the last solve */
    const double *D0; /* D as given to mlc_contact_create: constant, so factors of its
                         submatrices are kept between solves (a caller that changes D's values
                         points D at its own array instead, which is never cached) */
    int *fkey, fnp;   /* samples (fnp of them; −1 none) whose factor L holds */
    int *akey, anp;   /* samples (anp; −1 none) whose A_PP A holds */
    int *contact;     /* np sample indices in contact (ascending candidate order) */
    /* scratch */
    int *cand, *pset, *iscand;
    double *c, *l, *d, *x, *bound, *L, *A, *s, *t;
    double *res;         /* ns: the box solve's residuals rhs − Ax of its bound forces */
    double *base, *w;    /* ns: per sample y* − g (candidates) or y*, and that plus D λ */
    const double **cols; /* ns: the columns of D under the forces of a gap pass */
    double *coef;        /* ns: those forces */
    unsigned long agen;  /* counts the rebuilds of A (a factor of its blocks is kept per gen) */
    double *Lb[2];       /* per friction axis (x, z): ns×ns factor (ld ns) of the free forces'
                            block of A, for the free forces whose samples bkey lists (bnf; −1
                            none), taken from A's rebuild bgen: kept while the sides stay,
                            across the iterations of a step, and its leading columns while the
                            free forces start with the same samples */
    int *bkey[2], bnf[2];
    size_t ldf;   /* leading dimension of L and Lb: ns rounded up, plus a few */
    int updates;  /* mlc_contact_set_updates: L and Lb follow a changed set by rank-one changes */
    int nupdates; /* such changes since L was last made afresh */
    unsigned long updates_made; /* all such changes (tests, profiles) */
    double *upd;                /* 2 ns + 2 scratch of those changes */
    int *mark, *cur; /* ns (zero between changes) and 2 ns + 1 scratch of those changes */
    int bupdates[2]; /* per friction axis: changes of Lb since it was last made afresh */
    unsigned long bgen[2];
    int bd0[2];               /* per axis: Lb was factored from an A built from D0 (then bkey, its
                                 free forces' samples, says which entries it holds whatever the
                                 contact set) */
    int *kprev[2], nkprev[2]; /* per friction axis: the samples whose force (lam) or side
                                 (fside) the last solve may have left non-zero */
    unsigned long cgen;       /* counts the writes of `contact` */
    unsigned long kgen[2];    /* per friction axis: cgen when kprev was taken from `contact` */
    int *fside;               /* 3 × ns: per axis and sample, the side of the Coulomb box the last
                                 friction solve left the force on (−1, +1; 0 inside) */
    int *fset;                /* 4 × ns scratch (the box solve's free and bound forces, sides) */
    int w_fresh;              /* w holds the last lcp forces' gaps */
    /* The samples a solve reads (mlc_contact_solve_normal_live): nruns [begin, end) ranges at
     * runs, and the bounds that rule the others out (NULL: every sample) */
    const int *runs;
    int nruns, all_runs[2];
    const struct mlc_contact_live *live;
} mlc_contact;

/* Samples a caller proved cannot touch: their y* is not computed, and a solve reads only the
 * others (runs), so its passes scale with the samples near the ground. The caller guarantees
 * that every other sample's y* (as the solve would compute it) is at least g − tol: none is a
 * candidate. Forces on the candidates can lower it, so each check of the other samples asks
 * hold(user, Λ) whether the caller's bounds still keep them all at or above g − tol under
 * forces of total Λ (pushing force c lowers sample s by at most max(0, −D_sc) λ_c); where they
 * do not, exact(user) makes every sample's y* exact and the solve goes on over all samples. So
 * the contact set and the forces are the bits of a solve without the skip. hold must be
 * monotone (true for Λ, true for every smaller Λ ≥ 0): a solve that keeps the last contact set
 * asks only for its final Λ. */
typedef struct mlc_contact_live {
    const int *runs; /* nruns [runs[2i], runs[2i+1]) ranges, ascending and disjoint */
    int nruns;
    int (*hold)(void *user, double lsum);
    void (*exact)(void *user);
    void *user;
} mlc_contact_live;

/* ns ≥ 0 samples; D as above (not copied). Returns MLC_ENOMEM on allocation failure. */
mlc_status mlc_contact_create(mlc_contact *cs, int ns, const double *D, double tol,
                              double friction);
void mlc_contact_destroy(mlc_contact *cs);
/* The same solver on ns ≥ cs->ns samples (more slots of a growing cache, fullspace.c): D is
 * the new ns×ns matrix, its leading cs->ns × cs->ns block the old matrix's entries. The warm
 * start (forces, box sides, contact set) moves over; kept factors are dropped and rebuilt by
 * the next solve, which gives the bits of reusing them. friction_s is kept (a caller that
 * reallocates it sets it again). Errors: MLC_EINVAL (ns smaller), MLC_ENOMEM (cs unchanged). */
mlc_status mlc_contact_grow(mlc_contact *cs, int ns, const double *D);
/* on = 1: the normal solve's factor, and the friction solves' factors of their free forces,
 * follow a set that gains or loses forces by rank-one changes of the trailing block (its size
 * squared each) instead of refactoring that block (its cube) — a large gain for sets of hundreds of
 * forces (a body lying flat on every surface vertex), at the price of bits that depend on the order
 * the set was reached in (still the same for any thread count and every run), where a refactored
 * factor's depend on the set alone. Off by default (the reduced model keeps the set-only bits). */
void mlc_contact_set_updates(mlc_contact *cs, int on);
/* Forget the warm start (λ = 0), e.g. when a rollout restarts. */
void mlc_contact_reset(mlc_contact *cs);

/* The normal problem for tentative positions ystar and targets g (ns values each, by sample).
 * Fills lam's y block and the contact set; returns np. */
int mlc_contact_solve_normal(mlc_contact *cs, const double *ystar, const double *g);
/* The same reading y* only in live's runs (live = NULL: every sample; see mlc_contact_live):
 * the same contact set and forces. */
int mlc_contact_solve_normal_live(mlc_contact *cs, const double *ystar, const double *g,
                                  const mlc_contact_live *live);

/* Friction on axis k (0 = x, 2 = z) after mlc_contact_solve_normal: rhs[a] is the wanted
 * motion (target − x*) of the a-th sample of the contact set. Fills lam's block k. */
void mlc_contact_solve_friction(mlc_contact *cs, int k, const double *rhs);
/* Both axes (x, then z) with the one Coulomb box: the forces of the two calls above, the box
 * formed once. */
void mlc_contact_solve_friction_xz(mlc_contact *cs, const double *rhs_x, const double *rhs_z);
/* The same with this axis' own Delassus matrix Dk (ns×ns like D; NULL = D and the normal
 * problem's factor) and per-sample Coulomb coefficients (ns values by sample; NULL = μ_f both
 * ways): the force of sample s is kept in [−mu_lo[s] λ_n, mu_hi[s] λ_n], a coefficient ≤ 0
 * leaving that side unbounded. Terrain contact (sim_step.c): tangent axes of per-sample
 * normals, anisotropic and per-region friction. */
void mlc_contact_solve_friction_box(mlc_contact *cs, int k, const double *rhs, const double *Dk,
                                    const double *mu_lo, const double *mu_hi);

#endif
