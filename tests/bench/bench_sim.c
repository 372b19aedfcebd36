/* bench_sim.c: per-step cost of the reduced simulator (docs/method.md §11 estimate: ~0.2 Mflop a
 * step at the Bat settings). Times 300-step rollouts of an actuated body resting on the ground
 * (contacts active) and reports the median µs/step over runs, one thread.
 *
 * Default: a 20×8×10 voxel box with a synthetic subspace (exponential weights, polynomial
 * displacement fields, M-orthonormalized): the cost of a step depends only on the sizes
 * (w, m, |C_p|, |C_a|, |I|, iterations), not on the values. With --mesh the real precompute
 * (mlc_subspace_compute) runs on that mesh instead (normalized to extent 2, as the program
 * does), so the same sizes can be compared across meshes and resolutions.
 *
 *   bench_sim [runs] [--only I] [--profile] [--checksum] [--mesh PATH] [--config W,M,CP,NS[,ITER]]
 *             [--terrain] [--credibility]
 *     --only I      run only configuration I of the table (0 = Bat)
 *     --terrain     instead of the table: the Bat sizes with |I| = 64 (the default samples) on
 *                   the flat plane with backward Euler, then with BDF2, on a terrain (a bumpy
 *                   heightfield under the body, never above y = 0, and boxes: one flush with
 *                   the ground under the body's front half, three away from it), on the
 *                   terrain with BDF2, and on the flat plane through the terrain's contact path
 *                   (anisotropy 1 + 1e-9: the same dynamics as the first, so the path's own
 *                   overhead), each against the first, measured in one run
 *     --credibility instead of the table: 3,000-step rollouts at the Bat sizes (|I| = 64, or
 *                   NS of --config) alone, with the credibility measures of every frame (the
 *                   bounded lowest-vertex search) and with the exhaustive scan, in turn; use
 *                   with --mesh (the real subspace and surface)
 *     --config ...  run one custom configuration instead of the table
 *     --checksum    print a hash of the final state (bit-identity across builds/machines)
 *     --profile     also time the step components (local step maps, polar, right-hand side,
 *                   contact, per-step setup and finish) and count polar iterations and
 *                   contact factorizations; the clock reads slow the profiled runs a little
 *
 * Columns: median wall µs/step, median thread-CPU µs/step (steadier on a shared machine),
 * and the precompute time (model, or the whole subspace with --mesh).
 * The header names the kernel path (AVX2, or the SSE2 baseline: MLC_NO_AVX2=1 forces it; both
 * give the same checksums). Run with OPENBLAS_NUM_THREADS=1. For instruction counts independent
 * of machine load:
 *   valgrind --tool=callgrind ./bench_sim 1 --only 0 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "credibility.h"
#include "detmath.h"
#include "fem.h"
#include "mesh.h"
#include "sim.h"
#include "sim_testing.h"
#include "subspace.h"
#include "terrain.h"

#include "../test_synthetic.h" /* the synthetic subspace, shared with test_golden.c */

static int g_profile = 0, g_checksum = 0;
static const mlc_terrain *g_terrain = NULL; /* --terrain: the variant being measured */
static int g_integrator = MLC_INTEGRATOR_EULER;

const char *mlc__sim_kernel_path(void); /* src/sim/sim_internal.h */

/* CPU time of the calling thread: on a shared machine it excludes the time spent descheduled,
 * so it is a steadier measure than the wall clock (both are reported). */
static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double g_cpu_us;   /* median CPU µs/step of the last bench() */
static double g_contacts; /* samples in contact per step, mean over the last bench()'s runs */

static double bench(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *subp, int iters,
                    int runs, double *precompute) {
    const mlc_subspace sub = *subp;
    int m = sub.m;
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.iterations = iters;
    set.terrain = g_terrain;
    set.integrator = g_integrator;
    mlc_model *model;
    mlc_err err;
    double t0 = mlc_now();
    if (mlc_model_create(mesh, fem, &sub, &set, &model, &err) != MLC_OK) {
        fprintf(stderr, "model: %s\n", err.msg);
        exit(1);
    }
    *precompute = mlc_now() - t0;
    mlc_rollout *ro;
    mlc_rollout_create(model, &ro);
    double A[64], T[64], th[64];
    /* Half the default amplitude limit (p = 0.3) on every sinusoid. */
    for (int i = 0; i < m * 2; i++)
        A[i] = 0.15 / sub.grad_max[i / 2] / 2, T[i] = 0.2 + 0.05 * (i % 9), th[i] = 0.1 * i;
    mlc_actuation act = {m, 2, A, T, th};
    double *per = malloc(sizeof(double) * runs), *cpu = malloc(sizeof(double) * runs);
    long contacts = 0;
    mlc_step_profile prof;
    memset(&prof, 0, sizeof prof);
    for (int r = 0; r < runs; r++) {
        mlc_rollout_reset(ro);
        double ts = mlc_now(), tc = thread_cpu();
        for (int s = 0; s < 300; s++) {
            mlc_rollout_step(ro, &act);
            contacts += mlc_rollout_contacts(ro);
        }
        per[r] = (mlc_now() - ts) / 300 * 1e6;
        cpu[r] = (thread_cpu() - tc) / 300 * 1e6;
    }
    if (g_profile) { /* separate profiled runs, so the table's timings carry no clock reads */
        mlc_rollout_set_profile(ro, &prof);
        long skipped0 = mlc_rollout_contact_skipped(ro);
        double ts = mlc_now();
        for (int r = 0; r < runs; r++) {
            mlc_rollout_reset(ro);
            for (int s = 0; s < 300; s++)
                mlc_rollout_step(ro, &act);
        }
        double tot = mlc_now() - ts, st = (double)prof.steps;
        mlc_rollout_set_profile(ro, NULL);
        double parts[6] = {prof.t_setup, prof.t_maps,    prof.t_polar,
                           prof.t_rhs,   prof.t_contact, prof.t_finish};
        const char *names[6] = {"step setup (ā, 𝒦(ā), q, Q⁻¹b0)",
                                "cluster maps F_c, H_c",
                                "polar decompositions",
                                "rhs rotation terms (z*)",
                                "contact (active set, solve, correction)",
                                "finish (work term, advance)"};
        double sum = 0;
        for (int k = 0; k < 6; k++)
            sum += parts[k];
        printf("    profile over %ld steps (%.2f us/step profiled, %.2f iterations/step):\n",
               prof.steps, tot / st * 1e6, (double)prof.iterations / st);
        for (int k = 0; k < 6; k++)
            printf("      %-42s %8.3f us/step %5.1f%%\n", names[k], parts[k] / st * 1e6,
                   100 * parts[k] / sum);
        printf("      polar: %.1f calls/step, %.2f iterations/call; contact factorizations: "
               "%.3f/step, active samples %.1f/step\n",
               (double)prof.polar_calls / st,
               (double)prof.polar_iterations / (double)prof.polar_calls,
               (double)prof.contact_factorizations / st, (double)contacts / (300.0 * runs));
        printf("      contact samples ruled out by their bounds: %.1f of %d per iteration\n",
               (double)(mlc_rollout_contact_skipped(ro) - skipped0) / (double)prof.iterations,
               sub.ns);
    }
    for (int i = 1; i < runs; i++) /* insertion sort for the median */
        for (int j = i; j > 0 && per[j] < per[j - 1]; j--) {
            double tmp = per[j];
            per[j] = per[j - 1], per[j - 1] = tmp;
        }
    if (g_checksum) { /* FNV-1a of the final state's bytes: bit-identity across builds */
        const unsigned char *bytes = (const unsigned char *)mlc_rollout_state(ro);
        unsigned long long h = 1469598103934665603ULL;
        for (size_t i = 0; i < sizeof(double) * (size_t)mlc_model_dim(model); i++)
            h = (h ^ bytes[i]) * 1099511628211ULL;
        printf("    final state checksum %016llx\n", h);
    }
    double med = per[runs / 2];
    for (int i = 1; i < runs; i++)
        for (int j = i; j > 0 && cpu[j] < cpu[j - 1]; j--) {
            double tmp = cpu[j];
            cpu[j] = cpu[j - 1], cpu[j - 1] = tmp;
        }
    g_cpu_us = cpu[runs / 2];
    free(cpu);
    if (contacts == 0) fprintf(stderr, "warning: no contacts were active\n");
    g_contacts = (double)contacts / (300.0 * runs);
    free(per);
    mlc_rollout_destroy(ro);
    mlc_model_destroy(model);
    return med;
}

/* --terrain: the four variants of the header on the synthetic body (x ∈ [−1, 1], z ∈ [−0.5,
 * 0.5], resting on y = 0), Bat sizes, |I| = 64. */
static int bench_terrain(const mlc_mesh *mesh, const mlc_fem *fem, int runs) {
    char path[] = "/tmp/bench_sim_hf_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "cannot write a temporary heightfield\n");
        return 1;
    }
    enum { N = 33 };
    fprintf(f, "%d %d -4 -4 0.25 0.25\n", N, N); /* 8 × 8 m, 0.25 m cells */
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            double x = -4 + 0.25 * i, z = -4 + 0.25 * j;
            fprintf(f, "%.6f%c", -0.01 * (1 + mlc_sin(2.1 * x) * mlc_sin(1.7 * z)),
                    i == N - 1 ? '\n' : ' ');
        }
    fclose(f);
    mlc_terrain ter;
    mlc_err err;
    const double dir[3] = {1, 0, 0};
    mlc_terrain_box boxes[4] = {{{0, -1, -1}, {3, 0, 1}, 0.7},
                                {{-3, -1, 2}, {-2, 0.3, 3}, -1},
                                {{2, -1, -3}, {3, 0.2, -2}, -1},
                                {{4, -1, -1}, {5, 0.1, 1}, 0.9}};
    if (mlc_terrain_init(&ter, 0, 0.5, 0, 1, dir, boxes, 4, &err) != MLC_OK ||
        mlc_terrain_read_heightfield(&ter, path, &err) != MLC_OK) {
        fprintf(stderr, "terrain: %s\n", err.msg);
        unlink(path);
        return 1;
    }
    unlink(path);
    mlc_terrain aniso;
    if (mlc_terrain_init(&aniso, 0, 0.5, 0, 1 + 1e-9, dir, NULL, 0, &err) != MLC_OK) return 1;
    mlc_subspace sub;
    synthetic_subspace(mesh, fem, 5, 3, 10, 64, &sub);
    struct {
        const mlc_terrain *t;
        int integrator;
        const char *name;
    } v[5] = {{NULL, MLC_INTEGRATOR_EULER, "flat plane, backward Euler"},
              {NULL, MLC_INTEGRATOR_BDF2, "flat plane, BDF2"},
              {&ter, MLC_INTEGRATOR_EULER, "heightfield + 4 boxes, backward Euler"},
              {&ter, MLC_INTEGRATOR_BDF2, "heightfield + 4 boxes, BDF2"},
              {&aniso, MLC_INTEGRATOR_EULER, "flat plane, terrain path, backward Euler"}};
    double base = 0, base_cpu = 0;
    printf("Bat sizes, |I| = 64: w=5 m=3 |Cp|=10, 10 iterations\n");
    printf("%-44s %10s %10s %12s %10s %9s\n", "variant", "us/step", "cpu us", "model s",
           "cpu ratio", "contacts");
    for (int i = 0; i < 5; i++) {
        g_terrain = v[i].t, g_integrator = v[i].integrator;
        double pre, us = bench(mesh, fem, &sub, 10, runs, &pre);
        if (i == 0) base = us, base_cpu = g_cpu_us;
        printf("%-44s %10.2f %10.2f %12.3f %10.3f %9.1f\n", v[i].name, us, g_cpu_us, pre,
               g_cpu_us / base_cpu, g_contacts);
    }
    (void)base;
    g_terrain = NULL, g_integrator = MLC_INTEGRATOR_EULER;
    free_synthetic(&sub);
    mlc_terrain_free(&ter);
    mlc_terrain_free(&aniso);
    return 0;
}

/* --credibility: what measuring a rollout's credibility (credibility.h: the lowest surface
 * vertex of every frame) adds to its steps, as `simulate` and optimize's final judgement do:
 * 3,000-step rollouts (mlc_rollout_run, actuated, from rest on the ground) alone, with the
 * meter's bounded search, and with the exhaustive scan, in turn; thread-CPU medians. */
static int bench_credibility(const mlc_mesh *mesh, const mlc_fem *fem, int runs, int ns) {
    enum { STEPS = 3000 };
    mlc_subspace sub;
    mlc_subspace_settings st = {0};
    st.w = 5, st.m = 3, st.poisson = 0.25, st.passive_clusters = 10, st.actuation_clusters = 1;
    st.contact_samples = ns, st.contact_band = 0.01, st.seed = 1;
    mlc_err err;
    if (mlc_subspace_compute(mesh, fem, &st, &sub, &err) != MLC_OK) {
        fprintf(stderr, "subspace: %s\n", err.msg);
        return 1;
    }
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.steps = STEPS;
    mlc_model *model;
    mlc_rollout *ro;
    mlc_cred_meter *meter;
    if (mlc_model_create(mesh, fem, &sub, &set, &model, &err) != MLC_OK ||
        mlc_rollout_create(model, &ro) != MLC_OK ||
        mlc_cred_meter_create(model, mesh, &meter, &err) != MLC_OK) {
        fprintf(stderr, "model: %s\n", err.msg);
        return 1;
    }
    double A[6], T[6], th[6];
    for (int i = 0; i < 6; i++)
        A[i] = 0.15 / sub.grad_max[i / 2] / 2, T[i] = 0.2 + 0.05 * i, th[i] = 0.1 * i;
    mlc_actuation act = {3, 2, A, T, th};
    const int *sv;
    printf("Bat sizes (w=5 m=3 |Cp|=10 |I|=%d), %d steps, %d surface vertices\n", ns, STEPS,
           mlc_cred_meter_surface(meter, &sv));
    const char *names[3] = {"steps alone (mlc_rollout_run)", "with the credibility measures",
                            "with the exhaustive scan"};
    double *cpu = malloc(sizeof(double) * 3 * (size_t)runs);
    long skinned[3] = {0};
    for (int r = 0; r < runs; r++) /* the variants in turn, so machine load hits all alike */
        for (int v = 0; v < 3; v++) {
            mlc_cred_meter_reset(meter);
            mlc_cred_meter_set_exhaustive(meter, v == 2);
            mlc_rollout_result res;
            double t0 = thread_cpu();
            mlc_rollout_run(ro, &act, NULL, v ? mlc_cred_meter_frame : NULL, meter, &res);
            cpu[v * runs + r] = (thread_cpu() - t0) / STEPS * 1e6;
            skinned[v] = mlc_cred_meter_skinned(meter);
        }
    printf("%-36s %12s %8s %18s\n", "variant", "cpu us/step", "ratio", "skinned/frame");
    double base = 0;
    for (int v = 0; v < 3; v++) {
        double *c = cpu + v * runs;
        for (int i = 1; i < runs; i++)
            for (int j = i; j > 0 && c[j] < c[j - 1]; j--) {
                double tmp = c[j];
                c[j] = c[j - 1], c[j - 1] = tmp;
            }
        if (v == 0) base = c[runs / 2];
        printf("%-36s %12.2f %8.2f %18.1f\n", names[v], c[runs / 2], c[runs / 2] / base,
               (double)skinned[v] / (STEPS + 1));
    }
    free(cpu);
    mlc_cred_meter_destroy(meter);
    mlc_rollout_destroy(ro);
    mlc_model_destroy(model);
    mlc_subspace_free(&sub);
    return 0;
}

int main(int argc, char **argv) {
    int runs = 21, only = -1, custom = 0, terrain = 0, cred = 0;
    int cw = 5, cm = 3, ccp = 10, cns = 20, cit = 10;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--checksum")) {
            g_checksum = 1;
        } else if (!strcmp(argv[i], "--profile")) {
            g_profile = 1;
        } else if (!strcmp(argv[i], "--terrain")) {
            terrain = 1;
        } else if (!strcmp(argv[i], "--credibility")) {
            cred = 1;
        } else if (!strcmp(argv[i], "--mesh") && i + 1 < argc) {
            path = argv[++i];
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d,%d,%d,%d,%d", &cw, &cm, &ccp, &cns, &cit) < 4) {
                fprintf(stderr, "--config W,M,CP,NS[,ITER]\n");
                return 2;
            }
            custom = 1;
        } else if (argv[i][0] != '-') {
            runs = atoi(argv[i]);
        } else {
            fprintf(stderr,
                    "usage: %s [runs] [--only I] [--profile] [--mesh PATH] "
                    "[--config W,M,CP,NS[,ITER]] [--terrain] [--credibility]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    mlc_mesh mesh = {0};
    mlc_fem fem = {0};
    mlc_err err;
    if (path) {
        if (mlc_mesh_read(path, &mesh, NULL, &err) != MLC_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        mlc_mesh_apply_transform(&mesh, mlc_mesh_prepare_transform(&mesh, NULL, 1, 2.0));
    } else {
        enum { NX = 20, NY = 8, NZ = 10 };
        static unsigned char occ[NX * NY * NZ];
        memset(occ, 1, sizeof occ);
        double origin[3] = {-1, 0, -0.5};
        if (mlc_mesh_from_voxels(NX, NY, NZ, occ, 0.1, origin, &mesh, &err) != MLC_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    }
    if (mlc_fem_init(&fem, &mesh, &err) != MLC_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("kernels: %s\n", mlc__sim_kernel_path());
    printf("mesh: %s, %d vertices, %d tets; %s subspace; 300-step rollouts, median of %d runs\n",
           path ? path : "voxel box", mesh.nv, mesh.nt, path ? "computed" : "synthetic", runs);
    if (cred || terrain) {
        int rc = cred ? bench_credibility(&mesh, &fem, runs, custom ? cns : 64)
                      : bench_terrain(&mesh, &fem, runs);
        mlc_fem_free(&fem);
        mlc_mesh_free(&mesh);
        return rc;
    }
    printf("%-44s %10s %10s %12s\n", "configuration", "us/step", "cpu us",
           path ? "subspace s" : "model s");
    struct {
        int w, m, ncp, ns, it;
        const char *name;
    } cfg[] = {
        {5, 3, 10, 20, 10, "Bat: w=5 (r=60) m=3 k=2 |Cp|=10 |I|=20"},
        {6, 3, 10, 20, 10, "r=72"},
        {7, 3, 10, 20, 10, "r=84"},
        {5, 3, 5, 20, 10, "r=60 |Cp|=5"},
        {5, 3, 20, 20, 10, "r=60 |Cp|=20"},
        {5, 10, 10, 20, 10, "r=60 m=10 (default m)"},
        {7, 16, 20, 40, 10, "r=84 m=16 |Cp|=20 |I|=40 (octopus-like)"},
    };
    int ncfg = (int)(sizeof cfg / sizeof cfg[0]);
    if (custom) {
        cfg[0].w = cw, cfg[0].m = cm, cfg[0].ncp = ccp, cfg[0].ns = cns, cfg[0].it = cit;
        cfg[0].name = "custom";
        only = 0;
    }
    for (int c = 0; c < ncfg; c++) {
        if (only >= 0 && c != only) continue;
        mlc_subspace sub;
        double pre = 0, sub_t = 0;
        if (path) {
            mlc_subspace_settings st = {0};
            st.w = cfg[c].w, st.m = cfg[c].m, st.poisson = 0.25, st.passive_clusters = cfg[c].ncp;
            st.actuation_clusters = 1, st.contact_samples = cfg[c].ns, st.contact_band = 0.01,
            st.seed = 1;
            double t0 = mlc_now();
            if (mlc_subspace_compute(&mesh, &fem, &st, &sub, &err) != MLC_OK) {
                fprintf(stderr, "subspace: %s\n", err.msg);
                return 1;
            }
            sub_t = mlc_now() - t0;
        } else {
            synthetic_subspace(&mesh, &fem, cfg[c].w, cfg[c].m, cfg[c].ncp, cfg[c].ns, &sub);
        }
        char name[96];
        if (custom)
            snprintf(name, sizeof name, "w=%d (r=%d) m=%d |Cp|=%d |I|=%d it=%d", cfg[c].w,
                     12 * cfg[c].w, cfg[c].m, sub.ncp, sub.ns, cfg[c].it);
        else
            snprintf(name, sizeof name, "%s", cfg[c].name);
        double us = bench(&mesh, &fem, &sub, cfg[c].it, runs, &pre);
        printf("%-44s %10.2f %10.2f %12.3f\n", name, us, g_cpu_us, path ? sub_t : pre);
        if (path)
            mlc_subspace_free(&sub);
        else
            free_synthetic(&sub);
    }
    mlc_fem_free(&fem);
    mlc_mesh_free(&mesh);
    return 0;
}
