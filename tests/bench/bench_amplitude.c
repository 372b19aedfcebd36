/* bench_amplitude.c: how strong the optimizer's actuation really is. For points of the
 * normalized search box, decode them as `optimize` does (gait.h) and measure the realized
 * worst-tet actuation strain max_{e,t} ‖Σ_i a_i(t) ∇(D_i)_e‖_F over every tet and every step
 * time t = s·h of a rollout, as a fraction of p. Three kinds of points: uniform in the box,
 * random corners (every coordinate 0 or 1) and a first CMA-ES generation (0.5 + σ₀ N(0,1),
 * clipped).
 *
 *   bench_amplitude CONFIG|MESH [--set KEY=VALUE]... [--samples N]
 *
 * Prints, per kind, the largest and the median fraction, the largest bound S(A)/p, and the
 * median gain of the per-tet bound over the sum of per-mode maxima Σ_i α_i max_e ‖∇(D_i)_e‖
 * (a combined bound without per-tet data would give strains smaller by that factor). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gait.h"
#include "pipeline.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Realized worst-tet strain of the decoded A, T, θ over the rollout's step times. G holds
 * ∇(D_i)_e (nt×m×9), nrm the per-tet norms (nt×m): a tet whose triangle bound cannot beat
 * the current maximum is skipped. */
static double realized(const mlc_gait_space *g, const double *G, const double *nrm, int nt,
                       const double *A, const double *T, const double *th, double h, int S) {
    const int m = g->m, k = g->k;
    double best = 0, a[MLC_GAIT_MAX_MODES];
    mlc_actuation act = {m, k, A, T, th};
    for (int s = 1; s <= S; s++) {
        double abar[MLC_GAIT_MAX_MODES + 1];
        mlc_actuation_eval(&act, m, s * h, 0.0, abar);
        memcpy(a, abar, sizeof(double) * (size_t)m);
        for (int e = 0; e < nt; e++) {
            double ub = 0;
            for (int i = 0; i < m; i++)
                ub += fabs(a[i]) * nrm[(size_t)e * m + i];
            if (ub <= best) continue;
            double F[9] = {0}, f2 = 0;
            for (int i = 0; i < m; i++)
                for (int q = 0; q < 9; q++)
                    F[q] += a[i] * G[((size_t)e * m + i) * 9 + q];
            for (int q = 0; q < 9; q++)
                f2 += F[q] * F[q];
            best = fmax(best, sqrt(f2));
        }
    }
    return best;
}

int main(int argc, char **argv) {
    mlc_cli_options opt;
    memset(&opt, 0, sizeof opt);
    int samples = 50;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && opt.nsets < MLC_CLI_MAX_SETS)
            opt.sets[opt.nsets++] = argv[++i];
        else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]);
        else
            opt.input = argv[i];
    }
    mlc_config cfg;
    mlc_pipeline p;
    memset(&p, 0, sizeof p);
    mlc_err err = {0};
    mlc_gait_space g;
    if (mlc_cli_load_config(&opt, &cfg, &err) != MLC_OK ||
        mlc_pipeline_subspaces(&p, &cfg, &err) != MLC_OK ||
        mlc_pipeline_gait_space(&p, &cfg, &g, &err) != MLC_OK) {
        fprintf(stderr, "bench_amplitude: %s\n", err.msg);
        return 2;
    }
    const int m = g.m, k = g.k, nt = p.mesh.nt, n = g.n;
    double *G = malloc(sizeof(double) * (size_t)nt * m * 9);
    const size_t n3 = 3 * (size_t)p.mesh.nv;
    for (int e = 0; e < nt; e++)
        for (int i = 0; i < m; i++)
            mlc_fem_deformation_gradient(&p.mesh, &p.fem, e, p.sub.D + (size_t)i * n3,
                                         G + ((size_t)e * m + i) * 9);
    double *u = malloc(sizeof(double) * (size_t)n), *A = malloc(sizeof(double) * 3 * m * k);
    double *T = A + m * k, *th = A + 2 * m * k, *frac = malloc(sizeof(double) * samples);
    double *gain = malloc(sizeof(double) * samples);
    const char *kinds[3] = {"uniform", "corner", "cma-gen1"};
    printf("mesh %s: %d tets, m %d, k %d, p %g, bound %s, %d steps of %g s\n", p.mesh_path, nt, m,
           k, cfg.actuation.amplitude_p,
           cfg.actuation.amplitude_bound == MLC_BOUND_COMBINED ? "combined" : "per_signal",
           cfg.sim.steps, cfg.sim.dt);
    mlc_rng rng;
    mlc_rng_seed(&rng, 1);
    for (int kind = 0; kind < 3; kind++) {
        double smax = 0;
        for (int c = 0; c < samples; c++) {
            for (int i = 0; i < n; i++) {
                double x = kind == 0   ? mlc_rng_uniform(&rng)
                           : kind == 1 ? (mlc_rng_uniform(&rng) < 0.5 ? 0.0 : 1.0)
                                       : 0.5 + cfg.cmaes.sigma0 * mlc_rng_normal(&rng);
                u[i] = x < 0 ? 0 : x > 1 ? 1 : x;
            }
            mlc_gait_decode(&g, u, A, T, th);
            double S = mlc_gait_strain_bound(&g, k, A), Sg = 0;
            smax = fmax(smax, S / g.p);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < k; j++)
                    Sg += fabs(A[i * k + j]) * p.sub.grad_max[i];
            gain[c] = Sg > 0 ? Sg / S : 1;
            frac[c] = realized(&g, G, p.mode_strain, nt, A, T, th, cfg.sim.dt, cfg.sim.steps) / g.p;
        }
        qsort(frac, (size_t)samples, sizeof(double), cmp_double);
        qsort(gain, (size_t)samples, sizeof(double), cmp_double);
        printf("%-9s realized strain / p: max %.4f, median %.4f, min %.4f; bound S/p max %.4f; "
               "per-tet gain median %.3f\n",
               kinds[kind], frac[samples - 1], frac[samples / 2], frac[0], smax, gain[samples / 2]);
    }
    free(G), free(u), free(A), free(frac), free(gain);
    mlc_pipeline_free(&p);
    return 0;
}
