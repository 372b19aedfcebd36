/* test_sim_util.h: a subspace built inside the tests (so the simulator tests do not depend on
 * the ARPACK eigen-solver): skinning eigenmodes and vibration modes by dense LAPACK
 * generalized eigen-solves on small meshes, x-slab or per-tet clusters, farthest-point
 * contact samples from the lowest boundary vertex. */
#ifndef MODALLOCO_TEST_SIM_UTIL_H
#define MODALLOCO_TEST_SIM_UTIL_H

#include <lapacke.h>

#include "fem.h"
#include "objective.h"
#include "sim.h"
#include "subspace.h"
#include "test_util.h"

static inline void tsub_free(mlc_subspace *s) {
    mlc_free(s->W), mlc_free(s->skin_eval), mlc_free(s->D), mlc_free(s->vib_eval);
    mlc_free(s->mode_index), mlc_free(s->grad_max), mlc_free(s->cluster), mlc_free(s->acluster);
    mlc_free(s->samples);
    memset(s, 0, sizeof *s);
}

/* Lowest n eigenpairs of A x = λ B x (dense n×n column-major, B diagonal b), columns
 * B-orthonormal, deterministic sign (largest-magnitude entry positive). */
static inline void tsub_geig(int n, double *A, const double *b, int il, int iu, double *evec,
                             double *eval) {
    double *B = calloc((size_t)n * n, sizeof(double));
    for (int i = 0; i < n; i++)
        B[i + (size_t)n * i] = b[i];
    int found = 0;
    int *ifail = malloc(sizeof(int) * (size_t)n);
    double *wv = malloc(sizeof(double) * (size_t)n);
    int info = LAPACKE_dsygvx(LAPACK_COL_MAJOR, 1, 'V', 'I', 'U', n, A, n, B, n, 0, 0, il, iu, 0.0,
                              &found, wv, evec, n, ifail);
    if (info != 0 || found != iu - il + 1) fail_msg("dsygvx failed: info %d", info);
    for (int j = 0; j < found; j++) {
        eval[j] = wv[j];
        double *v = evec + (size_t)n * j;
        int im = 0;
        for (int i = 1; i < n; i++)
            if (fabs(v[i]) > fabs(v[im]) + 1e-12) im = i;
        if (v[im] < 0)
            for (int i = 0; i < n; i++)
                v[i] = -v[i];
    }
    free(B), free(ifail), free(wv);
}

/* ncp < 0: every tet its own passive cluster; otherwise ncp x-slabs. */
static inline void tsub_build(const mlc_mesh *mesh, const mlc_fem *fem, int w, int m, int ncp,
                              int ns, mlc_subspace *s) {
    int nv = mesh->nv, nt = mesh->nt;
    memset(s, 0, sizeof *s);
    s->nv = nv, s->nt = nt, s->w = w, s->m = m;
    /* Skinning eigenmodes: L = Σ V G_eᵀ G_e (unit μ), M_s = vmass. */
    double *L = calloc((size_t)nv * nv, sizeof(double));
    for (int e = 0; e < nt; e++)
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) {
                const double *ga = fem->grad + 12 * e + 3 * a, *gc = fem->grad + 12 * e + 3 * c;
                L[mesh->T[4 * e + a] + (size_t)nv * mesh->T[4 * e + c]] +=
                    fem->vol[e] * (ga[0] * gc[0] + ga[1] * gc[1] + ga[2] * gc[2]);
            }
    s->W = mlc_malloc(sizeof(double) * (size_t)nv * w);
    s->skin_eval = mlc_malloc(sizeof(double) * (size_t)w);
    tsub_geig(nv, L, fem->vmass, 1, w, s->W, s->skin_eval);
    double msum = 0;
    for (int i = 0; i < nv; i++)
        msum += fem->vmass[i];
    for (int i = 0; i < nv; i++)
        s->W[i] = 1 / sqrt(msum);
    free(L);
    /* Vibration modes of linear elasticity (μ = 1, λ = 1), 6 rigid modes dropped. */
    if (m > 0) {
        int n = 3 * nv;
        double *H = calloc((size_t)n * n, sizeof(double)), *mv = malloc(sizeof(double) * n);
        for (int i = 0; i < n; i++)
            mv[i] = fem->vmass[i / 3];
        for (int e = 0; e < nt; e++)
            for (int a = 0; a < 4; a++)
                for (int c = 0; c < 4; c++) {
                    const double *ga = fem->grad + 12 * e + 3 * a, *gc = fem->grad + 12 * e + 3 * c;
                    double gg = ga[0] * gc[0] + ga[1] * gc[1] + ga[2] * gc[2];
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            H[3 * mesh->T[4 * e + a] + i +
                              (size_t)n * (3 * mesh->T[4 * e + c] + j)] +=
                                fem->vol[e] * ((i == j) * gg + ga[j] * gc[i] + ga[i] * gc[j]);
                }
        s->D = mlc_malloc(sizeof(double) * (size_t)n * m);
        s->vib_eval = mlc_malloc(sizeof(double) * (size_t)m);
        s->mode_index = mlc_malloc(sizeof(int) * (size_t)m);
        tsub_geig(n, H, mv, 7, 6 + m, s->D, s->vib_eval);
        for (int i = 0; i < m; i++)
            s->mode_index[i] = i;
        free(H), free(mv);
        s->grad_max = mlc_calloc((size_t)m, sizeof(double));
        for (int i = 0; i < m; i++)
            for (int e = 0; e < nt; e++) {
                double Y[9] = {0};
                for (int a = 0; a < 4; a++)
                    for (int l = 0; l < 3; l++)
                        for (int j = 0; j < 3; j++)
                            Y[l + 3 * j] += s->D[(size_t)n * i + 3 * mesh->T[4 * e + a] + l] *
                                            fem->grad[12 * e + 3 * a + j];
                double f = 0;
                for (int k = 0; k < 9; k++)
                    f += Y[k] * Y[k];
                if (sqrt(f) > s->grad_max[i]) s->grad_max[i] = sqrt(f);
            }
    }
    /* Clusters. */
    s->cluster = mlc_malloc(sizeof(int) * (size_t)nt);
    s->acluster = mlc_calloc((size_t)nt, sizeof(int));
    s->nca = 1;
    double lo = 1e300, hi = -1e300;
    for (int i = 0; i < nv; i++)
        lo = fmin(lo, mesh->X[3 * i]), hi = fmax(hi, mesh->X[3 * i]);
    if (ncp < 0) {
        s->ncp = nt;
        for (int e = 0; e < nt; e++)
            s->cluster[e] = e;
    } else {
        int used[256] = {0};
        for (int e = 0; e < nt; e++) {
            double cx = 0;
            for (int a = 0; a < 4; a++)
                cx += mesh->X[3 * mesh->T[4 * e + a]] / 4;
            int c = (int)((cx - lo) / (hi - lo) * ncp);
            s->cluster[e] = MLC_MIN(MLC_MAX(c, 0), ncp - 1);
            used[s->cluster[e]] = 1;
        }
        int map[256], k = 0; /* drop empty slabs */
        for (int c = 0; c < ncp; c++)
            map[c] = used[c] ? k++ : -1;
        for (int e = 0; e < nt; e++)
            s->cluster[e] = map[s->cluster[e]];
        s->ncp = k;
    }
    /* Farthest-point samples on boundary vertices from the lowest one (ties by index). */
    unsigned char *bnd = calloc((size_t)nv, 1);
    for (int f = 0; f < 3 * mesh->nf; f++)
        bnd[mesh->F[f]] = 1;
    double *dist = malloc(sizeof(double) * (size_t)nv);
    s->samples = mlc_malloc(sizeof(int) * (size_t)(ns > 0 ? ns : 1));
    s->ns = ns;
    int first = -1;
    for (int i = 0; i < nv; i++)
        if (bnd[i] && (first < 0 || mesh->X[3 * i + 1] < mesh->X[3 * first + 1])) first = i;
    for (int i = 0; i < nv; i++)
        dist[i] = 1e300;
    int cur = first;
    for (int k = 0; k < ns; k++) {
        s->samples[k] = cur;
        int best = -1;
        for (int i = 0; i < nv; i++) {
            if (!bnd[i]) continue;
            double d = 0;
            for (int j = 0; j < 3; j++)
                d += pow(mesh->X[3 * i + j] - mesh->X[3 * cur + j], 2);
            dist[i] = fmin(dist[i], d);
            if (best < 0 || dist[i] > dist[best]) best = i;
        }
        cur = best;
    }
    free(bnd), free(dist);
}

/* Mesh + FEM + subspace + model in one, for the tests. */
typedef struct tsim {
    mlc_mesh mesh;
    mlc_fem fem;
    mlc_subspace sub;
    mlc_model *model;
    mlc_rollout *ro;
} tsim;

static inline void tsim_init(tsim *t, const mlc_sim_settings *set, int w, int m, int ncp, int ns) {
    mlc_err err;
    if (mlc_fem_init(&t->fem, &t->mesh, &err) != MLC_OK) fail_msg("fem: %s", err.msg);
    tsub_build(&t->mesh, &t->fem, w, m, ncp, ns, &t->sub);
    if (mlc_model_create(&t->mesh, &t->fem, &t->sub, set, &t->model, &err) != MLC_OK)
        fail_msg("model: %s", err.msg);
    if (mlc_rollout_create(t->model, &t->ro) != MLC_OK) fail_msg("rollout: out of memory");
}

/* The quadruped test mesh (h = 0.25) and a model of the default settings but `steps`. */
static inline void tsim_quadruped(tsim *t, int steps, int w, int m, int ncp, int ns) {
    test_quadruped_mesh(0.25, &t->mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = steps;
    tsim_init(t, &set, w, m, ncp, ns);
}

static inline void tsim_free(tsim *t) {
    mlc_rollout_destroy(t->ro);
    mlc_model_destroy(t->model);
    tsub_free(&t->sub);
    mlc_fem_free(&t->fem);
    mlc_mesh_free(&t->mesh);
}

/* x ↦ Rx + p on a state: t'_k = Σ_l R_kl t_l, then p/W_0 on the translation of weight 0. */
static inline void test_transform_state(const double R[9], const double p[3], double w0, int n4,
                                        const double *z, double *out) {
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n4; i++)
            out[k * n4 + i] = R[k] * z[i] + R[k + 3] * z[n4 + i] + R[k + 6] * z[2 * n4 + i];
    for (int k = 0; k < 3; k++)
        out[k * n4 + 3] += p[k] / w0;
}

#endif
