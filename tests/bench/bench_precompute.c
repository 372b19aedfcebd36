/* bench_precompute.c: wall time of the precomputation (docs/method.md §2–6) per stage: FEM
 * operators, skinning eigenmodes, vibration modes, clusters, contact samples; median over N runs,
 * plus the CHOLMOD ordering, the ARPACK solve counts and the peak resident set size.
 *
 *   bench_precompute MESH [--runs N] [--w W] [--m M] [--clusters K] [--samples S]
 *   bench_precompute --box NX NY NZ [...]      (a generated voxel box of unit cells)
 *   --detail also splits the vibration solve into ordering, factorization and Lanczos iteration
 *   (with the ordering the subspace uses: METIS on the vertex graph, expanded to 3×3 blocks).
 * "model" is the simulator precompute (mlc_model_create: one streaming pass over the tets).
 *
 * The mesh is prepared as the program does (normalized to extent 2). Set OPENBLAS_NUM_THREADS=1
 * for stable timings (OpenBLAS threads change the last bits and do not help at these sizes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "eigen.h"
#include "fem.h"
#include "mesh.h"
#include "sim.h"
#include "sim_testing.h"
#include "subspace.h"

int main(int argc, char **argv) {
    const char *path = NULL;
    int box[3] = {0, 0, 0}, runs = 3, detail = 0;
    mlc_subspace_settings st = {0};
    st.w = 5;
    st.m = 10;
    st.poisson = 0.25;
    st.passive_clusters = 10;
    st.actuation_clusters = 1;
    st.contact_samples = 20;
    st.seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--box") && i + 3 < argc) {
            for (int k = 0; k < 3; k++)
                box[k] = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--w") && i + 1 < argc) {
            st.w = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--m") && i + 1 < argc) {
            st.m = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--clusters") && i + 1 < argc) {
            st.passive_clusters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
            st.contact_samples = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--detail")) {
            detail = 1;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr,
                    "usage: %s MESH | --box NX NY NZ [--runs N] [--w W] [--m M] [--clusters K] "
                    "[--samples S]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1 || (!path && box[0] <= 0)) {
        fprintf(stderr, "%s: give a mesh path or --box NX NY NZ (and --runs >= 1)\n", argv[0]);
        return 2;
    }

    mlc_mesh mesh = {0};
    mlc_err err = {0};
    double t0 = mlc_now();
    mlc_status s;
    if (path) {
        s = mlc_mesh_read(path, &mesh, NULL, &err);
    } else {
        size_t nvox = (size_t)box[0] * box[1] * box[2];
        unsigned char *occ = malloc(nvox);
        if (!occ) return 1;
        memset(occ, 1, nvox);
        double origin[3] = {0, 0, 0};
        s = mlc_mesh_from_voxels(box[0], box[1], box[2], occ, 1.0, origin, &mesh, &err);
        free(occ);
    }
    if (s != MLC_OK) {
        fprintf(stderr, "bench_precompute: %s\n", err.msg);
        return 1;
    }
    double t_read = mlc_now() - t0;
    mlc_mesh_apply_transform(&mesh, mlc_mesh_prepare_transform(&mesh, NULL, 1, 2.0));
    printf("mesh: %s, %d vertices, %d tets (read %.3f s); w = %d, m = %d, runs = %d\n",
           path ? path : "voxel box", mesh.nv, mesh.nt, t_read, st.w, st.m, runs);

    double *t[7];
    for (int k = 0; k < 7; k++)
        t[k] = calloc((size_t)runs, sizeof(double));
    mlc_subspace sub = {0};
    for (int r = 0; r < runs; r++) {
        mlc_fem fem = {0};
        double a = mlc_now();
        if ((s = mlc_fem_init(&fem, &mesh, &err)) != MLC_OK) break;
        t[0][r] = mlc_now() - a;
        mlc_subspace_free(&sub);
        a = mlc_now();
        s = mlc_subspace_compute(&mesh, &fem, &st, &sub, &err);
        double total = mlc_now() - a;
        if (s != MLC_OK) {
            mlc_fem_free(&fem);
            break;
        }
        mlc_sim_settings ss;
        mlc_sim_settings_default(&ss);
        mlc_model *model = NULL;
        a = mlc_now();
        s = mlc_model_create(&mesh, &fem, &sub, &ss, &model, &err);
        t[6][r] = mlc_now() - a;
        mlc_model_destroy(model);
        mlc_fem_free(&fem);
        if (s != MLC_OK) break;
        t[1][r] = sub.t_skinning;
        t[2][r] = sub.t_vibration;
        t[3][r] = sub.t_clusters;
        t[4][r] = sub.t_samples;
        t[5][r] = t[0][r] + total + t[6][r];
    }
    if (s != MLC_OK) {
        fprintf(stderr, "bench_precompute: %s\n", err.msg);
        return 1;
    }
    const char *names[7] = {"fem",     "skinning eig", "vibration eig", "clusters",
                            "samples", "total",        "model"};
    int order[7] = {0, 1, 2, 3, 4, 6, 5};
    for (int i = 0; i < 7; i++)
        printf("  %-14s %9.3f s (median)\n", names[order[i]],
               mlc_median(t[order[i]], runs, t[order[i]]));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("  ordering: %s; ARPACK solves: skinning %d, vibration %d; first elastic eigenvalue "
           "%.6g; passive clusters %d\n",
           sub.ordering, sub.skin_solves, sub.vib_solves, sub.vib_eval[0], sub.ncp);
    printf("  peak RSS: %.1f MiB; CPU time of the whole run (all threads, incl. reading): %.2f s "
           "user + %.2f s sys\n",
           (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec,
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec);
    if (detail) {
        /* The vibration solve once more, directly, for its factor/iteration split. */
        mlc_fem fem = {0};
        cholmod_common cc;
        cholmod_start(&cc);
        cc.print = 0;
        double nu = st.poisson;
        if (mlc_fem_init(&fem, &mesh, &err) == MLC_OK) {
            cholmod_sparse *H =
                mlc_fem_elasticity_hessian(&mesh, &fem, 1.0, 2 * nu / (1 - 2 * nu), &cc);
            int n = 3 * mesh.nv, nev = 6 + st.m;
            double *mass = malloc((size_t)n * sizeof(double));
            double *ev = malloc((size_t)nev * sizeof(double));
            double *X = malloc((size_t)n * nev * sizeof(double));
            for (int i = 0; i < n; i++)
                mass[i] = fem.vmass[i / 3];
            mlc_eigen_info info;
            double sigma = mlc_eigen_default_shift(H, mass);
            /* the subspace's ordering: METIS on the vertex graph, expanded to 3×3 blocks */
            double to = mlc_now();
            int *vp = malloc(sizeof(int) * (size_t)mesh.nv), *p3 = malloc(sizeof(int) * (size_t)n);
            cholmod_sparse *Lp = mlc_fem_laplacian(&mesh, &fem, NULL, &cc);
            cc.nmethods = 1;
            cc.method[0].ordering = CHOLMOD_METIS;
            cholmod_factor *Lf = cholmod_analyze(Lp, &cc);
            memcpy(vp, Lf->Perm, sizeof(int) * (size_t)mesh.nv);
            cholmod_free_factor(&Lf, &cc);
            cholmod_free_sparse(&Lp, &cc);
            cc.nmethods = 0;
            cc.method[0].ordering = CHOLMOD_GIVEN;
            for (int i = 0; i < mesh.nv; i++)
                for (int k = 0; k < 3; k++)
                    p3[3 * i + k] = 3 * vp[i] + k;
            to = mlc_now() - to;
            if (H && mass && ev && X &&
                mlc_eigen_solve_ordered(
                    &(mlc_eigen_problem){
                        .K = H, .mass = mass, .nev = nev, .sigma = sigma, .perm = p3},
                    NULL, ev, X, &info, &cc, &err) == MLC_OK)
                printf("  vibration detail: n = %d, nnz(H upper) = %zu, sigma = %.3g, "
                       "nnz(L) = %.3g, vertex ordering %.3f s, analyze %.3f s, analyze+factor "
                       "%.3f s, Lanczos %.3f s, %d solves, %d restarts, ncv %d\n",
                       n, cholmod_nnz(H, &cc), sigma, info.factor_nnz, to, info.t_analyze,
                       info.t_factor, info.t_iterate, info.solves, info.iterations, info.ncv);
            else
                printf("  vibration detail failed: %s\n", err.msg);
            cholmod_free_sparse(&H, &cc);
            free(mass);
            free(ev);
            free(X);
            free(vp);
            free(p3);
        }
        mlc_fem_free(&fem);
        cholmod_finish(&cc);
    }
    for (int k = 0; k < 7; k++)
        free(t[k]);
    mlc_subspace_free(&sub);
    mlc_mesh_free(&mesh);
    return 0;
}
