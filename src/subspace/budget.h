/* budget.h: the memory bound of the precompute (docs/scaling.md).
 *
 * The precompute's peak is the Cholesky factor of the vibration problem K − σM (3 DOFs per
 * vertex) while the Lanczos basis and the operators are alive beside it. Its size grows faster
 * than the mesh (nnz(L) ~ n^(4/3) with nested dissection), so a mesh a few times finer can need
 * more memory than the machine has; without a bound that ends after minutes in CHOLMOD's "out of
 * memory" or in the kernel's OOM killer. The bound is checked twice, before anything big is
 * allocated:
 *  1. from the mesh sizes alone (mlc_budget_precompute with factor_nnz = 0: a model of nnz(L)
 *     that stays below what CHOLMOD finds on tet meshes, so a job that fits is not refused);
 *  2. after CHOLMOD's symbolic analysis, which gives the factor's exact size
 *     (mlc_budget_factor_bytes) before the numeric factorization allocates it.
 * Sizes are bytes, as doubles (no overflow on any mesh the program can read).
 */
#ifndef MODALLOCO_BUDGET_H
#define MODALLOCO_BUDGET_H

#include <stddef.h>

#include "base.h"

/* CHOLMOD's structs by their tags (cholmod_sparse is struct cholmod_sparse_struct, and so on),
 * so that this header does not pull <cholmod.h> into every file above it; a source that calls
 * CHOLMOD includes <cholmod.h> itself. */
struct cholmod_factor_struct;
struct cholmod_common_struct;

/* Where the precompute's memory goes, in bytes (an estimate of the peak: the parts that are
 * alive at once while the vibration problem is factorized and solved). */
typedef struct mlc_budget_estimate {
    double mesh;         /* the mesh and its FEM data (per vertex and per tet arrays) */
    double operators;    /* the Laplacian and the Hessian, the shifted copy CHOLMOD factorizes,
                            and CHOLMOD's analysis workspace */
    double factor;       /* the Cholesky factors of both problems (values, indices, workspace) */
    double lanczos;      /* ARPACK's Lanczos bases and the eigenvectors */
    double outputs;      /* W, D, clusters and their scratch */
    double total;        /* the sum */
    double factor_nnz;   /* nonzeros of the vibration factor used (model or CHOLMOD's analysis) */
    int factor_analyzed; /* 1 when factor_nnz comes from the analysis, 0 from the model */
} mlc_budget_estimate;

/* The precompute of a mesh with nv vertices and nt tets, w skinning modes and nvib vibration
 * pairs solved at once (the 6 rigid ones included). vib_factor_bytes and vib_factor_nnz: the
 * vibration factor's bytes (mlc_budget_factor_bytes) and nonzeros from CHOLMOD's analysis, or
 * 0 for the model (from nv alone). Monotone in nv, nt, w and nvib. */
void mlc_budget_precompute(int nv, int nt, int w, int nvib, double vib_factor_bytes,
                           double vib_factor_nnz, mlc_budget_estimate *out);

/* Bytes the numeric factorization of an analyzed (symbolic) factor L will hold: its values
 * (L->xsize for a supernodal factor, the predicted nonzeros for a simplicial one), row indices
 * and CHOLMOD's dense update workspace. Exact up to the small per-column arrays. */
double mlc_budget_factor_bytes(const struct cholmod_factor_struct *L,
                               const struct cholmod_common_struct *cc);

/* Bytes the factorization split over `threads` threads (super_factor.h) holds beyond
 * mlc_budget_factor_bytes: per thread past the first, an update block (maxcsize values) and a
 * row map and relative map (n ints each). 0 for a simplicial factor or one thread. */
double mlc_budget_split_factor_bytes(const struct cholmod_factor_struct *L, int threads);

/* The default bound: 80% of the smallest of the physical memory (sysconf), the cgroup's memory
 * limit (cgroup v2 memory.max or v1 memory.limit_in_bytes) and the address-space limit
 * (RLIMIT_AS). `what` (may be NULL) receives which one it came from, e.g. "80% of the physical
 * memory (23.4 GB)". Returns 0 when none can be read (no bound). */
double mlc_budget_default(char *what, size_t cap);

/* "8G", "512M", "1.5G", "300K", "1T" or a plain number of bytes (the suffixes are binary:
 * K = 1024) into *bytes. MLC_EINVAL with the reason on anything else or on a bound below 1 KB
 * or above 1 PB. */
mlc_status mlc_budget_parse(const char *text, double *bytes, mlc_err *err);

/* "1.2 GB", "340 MB", "12 KB": bytes for messages (binary units, 3 significant digits). */
void mlc_budget_format(double bytes, char *out, size_t cap);

/* MLC_OK when e->total fits under `limit` bytes (limit <= 0: no bound); else MLC_EINVAL with a
 * message that states the estimate and its largest part, the bound and the fixes (a coarser
 * tetrahedralization, fewer modes, --max-memory). `n3` is the vibration problem's size (3 nv). */
mlc_status mlc_budget_check(const mlc_budget_estimate *e, double limit, int n3, mlc_err *err);

#endif
