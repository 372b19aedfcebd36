/* budget.c: the memory bound of the precompute (budget.h, docs/scaling.md).
 *
 * The per-element sizes below follow the arrays the precompute allocates (mesh.h, fem.h,
 * fem.c's direct assembly, eigen.c, subspace.c, clusters.c); the edge count of a tet mesh is
 * taken as nv + nt (Euler's formula for a ball, V − E + F − T = 1 with F ≈ 2T).
 */
#include "budget.h"

#include <cholmod.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Nonzeros of the vibration factor per 9 nv^(4/3) in the model: nested dissection of a 3D mesh
 * gives nnz(L) ~ n^(4/3), and with 3×3 blocks the vector problem has 9 times the scalar one's.
 * Measured nnz(L) / (9 nv^(4/3)) (docs/scaling.md): 2.8 on spot (59k tets), 2.2 on the koala
 * (420k tets), 8.5 on spot refined to 1.0M tets (the fill grows faster than n^(4/3) there).
 * 1.0 keeps the first check below every measured case: it refuses only what cannot fit, and
 * the exact size from the analysis decides the rest. */
#define MODEL_FACTOR_COEF 1.0

/* Bytes per stored entry of a CHOLMOD sparse matrix or factor column: an int row index and a
 * double value. */
#define ENTRY_BYTES 12.0

/* Nonzeros of the vibration factor that the model expects for nv vertices (3 DOFs each): a
 * low estimate (a half to an eighth of what nested dissection gave on spot and the koala,
 * 60k to 1M tets), for the first check only. */
static double mlc_budget_model_factor_nnz(int nv) {
    return nv > 0 ? 9.0 * MODEL_FACTOR_COEF * pow((double)nv, 4.0 / 3.0) : 0;
}

double mlc_budget_factor_bytes(const cholmod_factor *L, const cholmod_common *cc) {
    if (!L) return 0;
    double n = (double)L->n;
    if (L->is_super)
        /* Lx (xsize values), Ls (ssize row indices), Lpi/Lpx/super per supernode (bounded by
         * n), and the dense update block C (maxcsize values) with its relative map (n ints). */
        return 8.0 * (double)L->xsize + 4.0 * (double)L->ssize + 8.0 * (double)L->maxcsize +
               16.0 * n + 16.0 * (double)L->nsuper;
    /* Simplicial: the predicted nonzeros (cc->lnz after the analysis), with the room CHOLMOD
     * leaves for growth (grow1/grow2 defaults: about 1.2 × + 5 per column). */
    double lnz = cc && cc->lnz > 0 ? cc->lnz : n;
    return ENTRY_BYTES * (1.2 * lnz + 5.0 * n) + 24.0 * n;
}

double mlc_budget_split_factor_bytes(const cholmod_factor *L, int threads) {
    if (!L || !L->is_super || threads < 2) return 0;
    return (threads - 1) * (8.0 * (double)L->maxcsize + 8.0 * (double)L->n);
}

void mlc_budget_precompute(int nv, int nt, int w, int nvib, double vib_factor_bytes,
                           double vib_factor_nnz, mlc_budget_estimate *out) {
    memset(out, 0, sizeof *out);
    double v = nv > 0 ? nv : 0, t = nt > 0 ? nt : 0, edges = v + t, n3 = 3 * v;
    if (w < 1) w = 1;
    if (nvib < 1) nvib = 1;
    /* Mesh: X (3 doubles) and T (4 ints) twice over (the reader's arrays and the prepared copy);
     * FEM: volumes and 12 shape gradients per tet, lumped mass per vertex; the assembly's
     * vertex adjacency (6 nt + nv ints). */
    out->mesh = 2 * (24 * v + 16 * t) + (8 + 96) * t + 8 * v + 4 * (6 * t + v);
    /* Laplacian (nv + E stored entries) and Hessian (6 nv + 9 E), the shifted copy of the
     * Hessian CHOLMOD factorizes, and the analysis's transposed pattern (another copy). */
    double lap = ENTRY_BYTES * (v + edges) + 4 * v,
           hess = ENTRY_BYTES * (6 * v + 9 * edges) + 4 * n3;
    out->operators = 2 * lap + 3 * hess;
    /* Factors: the vibration factor (given, or the model's nonzeros as supernodal values and
     * indices), and the skinning factor of the scalar problem beside it (the parallel path
     * holds both): a ninth of the vibration model's nonzeros. */
    double model = mlc_budget_model_factor_nnz(nv);
    double vib = vib_factor_bytes > 0 ? vib_factor_bytes : ENTRY_BYTES * model;
    out->factor = vib + ENTRY_BYTES * model / 9.0;
    out->factor_nnz = vib_factor_bytes > 0 ? vib_factor_nnz : model;
    out->factor_analyzed = vib_factor_bytes > 0;
    /* Lanczos (eigen.c): ncv = max(2 nev + 1, 20) basis vectors, workd (3), resid and the
     * sorted copy (2), the eigenvectors and the mass; for both problems. */
    int nev_v = nvib, ncv_v = nev_v * 2 + 1 > 20 ? nev_v * 2 + 1 : 20;
    int ncv_w = w * 2 + 1 > 20 ? w * 2 + 1 : 20;
    out->lanczos = 8 * n3 * (ncv_v + 5 + nev_v + 1) + 8 * v * (ncv_w + 5 + w + 1);
    /* W, D (nvib columns at most), the clusters' features and scratch (face keys: 4 faces of
     * 4 ints per tet while they are sorted). */
    out->outputs = 8 * v * w + 8 * n3 * nvib + t * (8.0 * w + 64 + 40);
    out->total = out->mesh + out->operators + out->factor + out->lanczos + out->outputs;
}

/* A positive byte count from a file holding a number (cgroup limits), 0 when absent or "max". */
static double read_limit_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[64] = "";
    double v = 0;
    if (fgets(buf, sizeof buf, f) && isdigit((unsigned char)buf[0])) v = strtod(buf, NULL);
    fclose(f);
    /* v1 reports "no limit" as a huge page-aligned number (about 2^63). */
    return v > 0 && v < 1e18 ? v : 0;
}

void mlc_budget_format(double bytes, char *out, size_t cap) {
    const char *unit[] = {"bytes", "KB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1024 && u < 5)
        bytes /= 1024, u++;
    if (u == 0)
        snprintf(out, cap, "%.0f bytes", bytes);
    else
        snprintf(out, cap,
                 bytes < 10    ? "%.2f %s"
                 : bytes < 100 ? "%.1f %s"
                               : "%.0f %s",
                 bytes, unit[u]);
}

double mlc_budget_default(char *what, size_t cap) {
    double best = 0;
    const char *from = "";
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0) best = (double)pages * (double)psize, from = "the physical memory";
    double cg = read_limit_file("/sys/fs/cgroup/memory.max");
    if (!(cg > 0)) cg = read_limit_file("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    if (cg > 0 && (!(best > 0) || cg < best)) best = cg, from = "the cgroup's memory limit";
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        double as = (double)rl.rlim_cur;
        if (!(best > 0) || as < best) best = as, from = "the address-space limit (ulimit -v)";
    }
    if (what && cap) {
        char size[32];
        mlc_budget_format(best, size, sizeof size);
        if (best > 0)
            snprintf(what, cap, "80%% of %s (%s)", from, size);
        else
            snprintf(what, cap, "none (the memory size could not be read)");
    }
    return 0.8 * best;
}

mlc_status mlc_budget_parse(const char *text, double *bytes, mlc_err *err) {
    const char *fix = "give a size such as 8G, 512M or 300000000 (bytes; K, M, G, T are powers "
                      "of 1024)";
    if (!text || !*text) return mlc_errf(err, MLC_EINVAL, "--max-memory: empty size; %s", fix);
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v <= 0)
        return mlc_errf(err, MLC_EINVAL, "--max-memory '%s': not a positive size; %s", text, fix);
    double mult = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K':
            mult = 1024.0;
            break;
        case 'M':
            mult = 1024.0 * 1024;
            break;
        case 'G':
            mult = 1024.0 * 1024 * 1024;
            break;
        case 'T':
            mult = 1024.0 * 1024 * 1024 * 1024;
            break;
        default:
            return mlc_errf(err, MLC_EINVAL, "--max-memory '%s': unknown unit '%s'; %s", text, end,
                            fix);
        }
        end++;
        if (toupper((unsigned char)*end) == 'B') end++; /* "8GB" as well as "8G" */
        if (*end)
            return mlc_errf(err, MLC_EINVAL,
                            "--max-memory '%s': unexpected '%s' after the unit; %s", text, end,
                            fix);
    }
    v *= mult;
    if (v < 1024 || v > 1024.0 * 1024 * 1024 * 1024 * 1024)
        return mlc_errf(err, MLC_EINVAL, "--max-memory '%s': must be between 1K and 1024T; %s",
                        text, fix);
    *bytes = v;
    return MLC_OK;
}

mlc_status mlc_budget_check(const mlc_budget_estimate *e, double limit, int n3, mlc_err *err) {
    if (!(limit > 0) || e->total <= limit) return MLC_OK;
    char tot[32], lim[32], fac[32], rest[32], ask[32];
    /* A bound that would pass: the estimate rounded up, as the option writes it. */
    double mb = e->total / (1024.0 * 1024);
    if (mb < 1024)
        snprintf(ask, sizeof ask, "%.0fM", ceil(mb));
    else
        snprintf(ask, sizeof ask, "%.1fG", ceil(mb / 1024 * 10) / 10);
    mlc_budget_format(e->total, tot, sizeof tot);
    mlc_budget_format(limit, lim, sizeof lim);
    mlc_budget_format(e->factor, fac, sizeof fac);
    mlc_budget_format(e->total - e->factor, rest, sizeof rest);
    return mlc_errf(err, MLC_EINVAL,
                    "the precompute needs about %s of memory (Cholesky factors %s, %.3g million "
                    "nonzeros in the vibration factor %s, n = %d DOFs; mesh, operators, Lanczos "
                    "bases and results %s), more than the memory bound of %s; use a coarser "
                    "tetrahedralization (a smaller mesh.min_tets for a surface, or a coarser tet "
                    "mesh), fewer modes (actuation.modes, subspace.skinning_modes), or raise the "
                    "bound with --max-memory (%s or more) if the machine has that memory free",
                    tot, fac, e->factor_nnz / 1e6,
                    e->factor_analyzed ? "from CHOLMOD's analysis" : "expected from the mesh size",
                    n3, rest, lim, ask);
}
