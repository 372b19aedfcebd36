/* sim_model.c: precomputation of the reduced simulator (docs/method.md §5, §6, §11).
 *
 * With z = [t_x; t_y; t_z] (sim.h), row k of a tet's deformation gradient is t_kᵀ G_e with
 * G_e = Σ_{v∈e} (W_v ⊗ X̃_v) ∇φ_vᵀ ∈ ℝ^{4w×3}, and vertex i's coordinate k is t_kᵀ s_i with
 * s_i = W_i ⊗ X̃_i. Every operator of the incremental potential (Eq. 25/45 with the resolved
 * signs of docs/method.md §6) is therefore I₃ ⊗ (a 4w×4w matrix) or a small 4w×3 matrix:
 *   Qᵛ = μ I₃⊗Σ V G Gᵀ, Qᵃ = γ I₃⊗Σ V G Gᵀ, N = BᵀMB = I₃⊗Σ m s sᵀ (Eq. 24/41, 002 App. C.3),
 *   passive cluster map G_c = Σ_{e∈c} V G_e (F_c = Σ μV F_e has rows t_kᵀ μG_c),
 *   actuation tensor 𝒦_c[v] = Σ_{e∈c} V G_e Ŷ_vᵀ (H_c = Σ γV F Y(ā)ᵀ = rows t_kᵀ γΣ_v ā_v 𝒦_c[v],
 *   Eq. 12, 56–59 in block form), gravity Bᵀ M g = [g_x; g_y; g_z] ⊗ Σ m s, the mass-weighted
 *   centre of mass Σ m s / Σ m, the body rotation map Σ V G_e (Eq. 17's R(t)).
 * One streaming pass over the tets and one over the vertices; no 9|T|×r matrix is formed.
 * μ and γ are the settings' scalars, so the tensors are stored for unit stiffness; per-tet
 * materials (mlc_model_create_materials) weight every tet's contribution by μ_e/μ, γ_e/γ or
 * (μ_e + γ_e)/(μ + γ), and the mass by ρ_e, and leave the step unchanged.
 */
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dense.h"
#include "internal/polar.h"
#include "internal/sim_internal.h"
#include "internal/terrain_contact.h"
#include "testing/sim_testing.h"

void mlc_model_destroy(mlc_model *mod) {
    if (!mod) return;
    mlc_free(mod->Lap);
    mlc_free(mod->Lapv);
    mlc_free(mod->Lapa);
    mlc_free(mod->friction_s);
    mlc_free(mod->N);
    mlc_free(mod->Q);
    mlc_free(mod->Lq);
    mlc_free(mod->GS);
    mlc_free(mod->Gss);
    mlc_free(mod->QiS);
    mlc_free(mod->Dss);
    mlc_free(mod->Gp);
    mlc_free(mod->Ka);
    mlc_free(mod->Yg);
    mlc_free(mod->QiGp);
    mlc_free(mod->QiKa);
    mlc_free(mod->Gb);
    mlc_free(mod->gsum);
    mlc_free(mod->S);
    mlc_free(mod->GpT);
    mlc_free(mod->ST);
    mlc_free(mod->QiN);
    mlc_free(mod->QiC);
    mlc_free(mod->Qig);
    mlc_free(mod->zrest);
    mlc_free(mod->W);
    mlc_free(mod->X);
    mlc_terrain_free(&mod->terrain);
    mlc_free(mod);
}

static mlc_status check_inputs(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                               const mlc_sim_settings *s, mlc_err *err) {
    if (!mesh || !fem || !sub || !s) return mlc_errf(err, MLC_EINVAL, "sim: NULL argument");
    if (fem->nv != mesh->nv || fem->nt != mesh->nt || sub->nv != mesh->nv || sub->nt != mesh->nt)
        return mlc_errf(err, MLC_EINVAL,
                        "sim: mesh (%d vertices, %d tets), FEM data (%d, %d) and subspace (%d, %d) "
                        "disagree; recompute the subspace for this mesh",
                        mesh->nv, mesh->nt, fem->nv, fem->nt, sub->nv, sub->nt);
    if (sub->w < 1 || !sub->W) return mlc_errf(err, MLC_EINVAL, "sim: subspace has no weights");
    if (sub->w > MLC_SIM_MAX_W)
        return mlc_errf(err, MLC_EINVAL, "sim: subspace has %d skinning weights, at most %d",
                        sub->w, MLC_SIM_MAX_W);
    if (sub->m < 0 || (sub->m > 0 && !sub->D))
        return mlc_errf(err, MLC_EINVAL, "sim: subspace has %d modes but no mode data", sub->m);
    if (sub->m > MLC_SIM_MAX_MODES)
        return mlc_errf(err, MLC_EINVAL, "sim: subspace has %d actuation modes, at most %d", sub->m,
                        MLC_SIM_MAX_MODES);
    if (sub->ncp < 1 || !sub->cluster || sub->nca < 1 || !sub->acluster)
        return mlc_errf(err, MLC_EINVAL, "sim: subspace has no passive or actuation clusters");
    for (int e = 0; e < mesh->nt; e++)
        if (sub->cluster[e] < 0 || sub->cluster[e] >= sub->ncp || sub->acluster[e] < 0 ||
            sub->acluster[e] >= sub->nca)
            return mlc_errf(err, MLC_EINVAL, "sim: cluster label of tet %d out of range", e);
    if (sub->ns < 0 || (sub->ns > 0 && !sub->samples))
        return mlc_errf(err, MLC_EINVAL, "sim: subspace has %d samples but no sample list",
                        sub->ns);
    for (int i = 0; i < sub->ns; i++)
        if (sub->samples[i] < 0 || sub->samples[i] >= mesh->nv)
            return mlc_errf(err, MLC_EINVAL, "sim: contact sample %d names vertex %d of %d", i,
                            sub->samples[i], mesh->nv);
    if (!(s->dt > 0) || !isfinite(s->dt))
        return mlc_errf(err, MLC_EINVAL, "sim: time step %g must be positive", s->dt);
    if (s->iterations < 1)
        return mlc_errf(err, MLC_EINVAL, "sim: iterations %d must be >= 1", s->iterations);
    if (!(s->density > 0) || !(s->mu >= 0) || !(s->gamma >= 0) || !isfinite(s->density) ||
        !isfinite(s->mu) || !isfinite(s->gamma) || !(s->mu + s->gamma > 0))
        return mlc_errf(err, MLC_EINVAL,
                        "sim: need density > 0, mu >= 0, gamma >= 0, mu + gamma > 0 "
                        "(got %g, %g, %g)",
                        s->density, s->mu, s->gamma);
    if (!(s->damping >= 0 && s->damping < 1))
        return mlc_errf(err, MLC_EINVAL, "sim: contact damping %g must be in [0, 1)", s->damping);
    if (!(s->rayleigh[0] >= 0) || !(s->rayleigh[1] >= 0) || !isfinite(s->rayleigh[0]) ||
        !isfinite(s->rayleigh[1]))
        return mlc_errf(err, MLC_EINVAL, "sim: Rayleigh damping [%g, %g] must be finite and >= 0",
                        s->rayleigh[0], s->rayleigh[1]);
    if (!(s->push_speed >= 0) || !isfinite(s->push_speed) || !(s->friction >= 0) ||
        !isfinite(s->friction))
        return mlc_errf(err, MLC_EINVAL,
                        "sim: contact push speed %g and friction %g must be finite and >= 0",
                        s->push_speed, s->friction);
    if ((unsigned)s->contact_model >= MLC_CONTACT_MODELS)
        return mlc_errf(err, MLC_EINVAL, "sim: unknown contact model %d", (int)s->contact_model);
    if (s->terrain && !s->terrain->flat && !mlc_contact_model_any_terrain(s->contact_model))
        return mlc_errf(err, MLC_EINVAL,
                        "sim: contact.model \"%s\" works on the flat ground only; use "
                        "\"complementarity\" with contact.slope, contact.heightfield, "
                        "contact.boxes or contact.anisotropy",
                        mlc_contact_model_name(s->contact_model));
    if (s->integrator != MLC_INTEGRATOR_EULER && s->integrator != MLC_INTEGRATOR_BDF2)
        return mlc_errf(err, MLC_EINVAL, "sim: unknown integrator %d", s->integrator);
    if (!mlc_all_finite(s->gravity, 3) || !isfinite(s->ground) || !(s->tolerance >= 0))
        return mlc_errf(err, MLC_EINVAL, "sim: gravity, ground and tolerance must be finite");
    /* The rest state T_0 = [I|0]/W_0 reproduces X only if column 0 is constant (docs/method.md §3).
     */
    double w0 = sub->W[0];
    if (!(fabs(w0) > 0)) return mlc_errf(err, MLC_EINVAL, "sim: skinning weight column 0 is zero");
    for (int i = 0; i < mesh->nv; i++)
        if (fabs(sub->W[i] - w0) > 1e-9 * fabs(w0))
            return mlc_errf(err, MLC_EINVAL,
                            "sim: skinning weight column 0 is not constant (vertex %d: %g vs %g); "
                            "the subspace must put the constant mode first",
                            i, sub->W[i], w0);
    return MLC_OK;
}

/* Σ_i a[i·sa] b[i] (a strided, e.g. a matrix row). */
static double dot_n(const double *a, int sa, const double *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[(size_t)i * sa] * b[i];
    return s;
}

/* G_e (n4×3, column-major) of tet e: G[4b+c, j] = Σ_a W_{v_a b} X̃_{v_a}[c] ∂φ_a/∂X_j. */
static void tet_G(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub, int e,
                  double *G) {
    int w = sub->w, n4 = 4 * w, nv = mesh->nv;
    memset(G, 0, sizeof(double) * (size_t)n4 * 3);
    for (int a = 0; a < 4; a++) {
        int v = mesh->T[4 * e + a];
        const double *g = fem->grad + 12 * e + 3 * a;
        double Xt[4] = {mesh->X[3 * v], mesh->X[3 * v + 1], mesh->X[3 * v + 2], 1.0};
        for (int b = 0; b < w; b++) {
            double wb = sub->W[v + (size_t)nv * b];
            for (int c = 0; c < 4; c++) {
                double s = wb * Xt[c];
                for (int j = 0; j < 3; j++)
                    G[4 * b + c + n4 * j] += s * g[j];
            }
        }
    }
}

/* col[a] += s·G[a + n4·j] for a ≤ b over the upper triangle: M += s_j G Gᵀ, one tet's part. */
static void add_ggt(double *M, const double *G, int n4, double V) {
    for (int j = 0; j < 3; j++)
        for (int b = 0; b < n4; b++) {
            double s = V * G[b + n4 * j];
            if (s == 0) continue;
            double *col = M + (size_t)n4 * b;
            for (int a = 0; a <= b; a++)
                col[a] += s * G[a + n4 * j];
        }
}

static void mirror_upper(double *M, int n4) {
    for (int b = 0; b < n4; b++)
        for (int a = b + 1; a < n4; a++)
            M[a + (size_t)n4 * b] = M[b + (size_t)n4 * a];
}

static mlc_status check_materials(const mlc_mesh *mesh, const mlc_materials *mat, mlc_err *err) {
    const double *arr[4] = {mat->mu, mat->gamma, mat->density, mat->friction};
    const char *name[4] = {"mu", "gamma", "density", "friction"};
    for (int q = 0; q < 4; q++) {
        int n = q < 3 ? mesh->nt : mesh->nv;
        for (int i = 0; arr[q] && i < n; i++)
            if (!isfinite(arr[q][i]) || (q < 3 ? !(arr[q][i] > 0) : !(arr[q][i] >= 0)))
                return mlc_errf(err, MLC_EINVAL, "sim: per-%s %s %g of %s %d is not %s",
                                q < 3 ? "tet" : "vertex", name[q], arr[q][i],
                                q < 3 ? "tet" : "vertex", i, q < 3 ? "> 0" : ">= 0");
    }
    return MLC_OK;
}

mlc_status mlc_model_create(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                            const mlc_sim_settings *settings, mlc_model **out, mlc_err *err) {
    return mlc_model_create_materials(mesh, fem, sub, settings, NULL, out, err);
}

double mlc_model_mass(const mlc_model *mod) {
    return mod->mass;
}

/* A model holding a copy of the settings, its own (settled) terrain and the sizes, so every later
 * stage reads them from one place. */
static mlc_status model_new(const mlc_mesh *mesh, const mlc_subspace *sub,
                            const mlc_sim_settings *settings, mlc_model **out, mlc_err *err) {
    mlc_model *mod = mlc_calloc(1, sizeof *mod);
    if (!mod) return mlc_errf(err, MLC_ENOMEM, "sim: out of memory for the model");
    mod->set = *settings;
    if (mlc_terrain_own(&mod->terrain, settings->terrain, settings->ground, settings->friction,
                        mesh->X, mesh->nv) != MLC_OK) {
        mlc_free(mod);
        return mlc_errf(err, MLC_ENOMEM, "sim: out of memory for the terrain");
    }
    mod->set.terrain = &mod->terrain;
    mod->bdf2 = settings->integrator == MLC_INTEGRATOR_BDF2;
    /* check_inputs has refused a model that needs the flat ground on another terrain. */
    mod->contact_solve = settings->contact_model == MLC_CONTACT_EQUALITY ? CONTACT_SOLVE_EQUALITY
                         : mod->terrain.flat                             ? CONTACT_SOLVE_PLANE
                                                                         : CONTACT_SOLVE_TERRAIN;
    int w = sub->w, n4 = 4 * w, m = sub->m;
    mod->nv = mesh->nv, mod->nt = mesh->nt, mod->w = w, mod->n4 = n4, mod->r = 3 * n4;
    mod->m = m, mod->ma = m + 1, mod->ncp = sub->ncp, mod->nca = sub->nca, mod->ns = sub->ns;
    *out = mod;
    return MLC_OK;
}

/* The arrays the streams accumulate into (zeroed) and the copies of W and X the skinning reads;
 * per-tet stiffness adds Lapv and Lapa, per-vertex friction adds friction_s. 0 when out of
 * memory (mlc_model_destroy frees what was allocated). */
static int alloc_arrays(mlc_model *mod, const mlc_mesh *mesh, const mlc_subspace *sub,
                        const mlc_materials *mat, int stiff) {
    const int nv = mod->nv, w = mod->w, n4 = mod->n4, ma = mod->ma;
    const size_t nn = (size_t)n4 * n4, n3 = (size_t)n4 * 3;
    const int nsx = sub->ns > 0 ? sub->ns : 1;
    mod->Lap = mlc_calloc(nn, sizeof(double));
    mod->N = mlc_calloc(nn, sizeof(double));
    mod->Q = mlc_calloc(nn, sizeof(double));
    mod->Lq = mlc_calloc(nn, sizeof(double));
    mod->GS = mlc_calloc((size_t)nsx * n4, sizeof(double));
    mod->Gss = mlc_calloc((size_t)nsx * nsx, sizeof(double));
    mod->QiS = mlc_calloc((size_t)nsx * n4, sizeof(double));
    mod->Dss = mlc_calloc((size_t)nsx * nsx, sizeof(double));
    mod->Gp = mlc_calloc((size_t)sub->ncp * n3, sizeof(double));
    mod->Ka = mlc_calloc((size_t)sub->nca * ma * n3, sizeof(double));
    mod->Yg = mlc_calloc((size_t)sub->nca * ma * ma, sizeof(double));
    mod->Gb = mlc_calloc(n3, sizeof(double));
    mod->gsum = mlc_calloc((size_t)n4, sizeof(double));
    mod->S = mlc_calloc((size_t)nsx * n4, sizeof(double));
    mod->zrest = mlc_calloc((size_t)mod->r, sizeof(double));
    mod->W = mlc_malloc(sizeof(double) * (size_t)nv * w);
    mod->X = mlc_malloc(sizeof(double) * (size_t)nv * 3);
    if (stiff) {
        mod->Lapv = mlc_calloc(nn, sizeof(double));
        mod->Lapa = mlc_calloc(nn, sizeof(double));
    }
    if (mat->friction) mod->friction_s = mlc_calloc((size_t)nsx, sizeof(double));
    if (!mod->Lap || !mod->N || !mod->Q || !mod->Lq || !mod->GS || !mod->Gss || !mod->QiS ||
        !mod->Dss || !mod->Gp || !mod->Ka || !mod->Yg || !mod->Gb || !mod->gsum || !mod->S ||
        !mod->zrest || !mod->W || !mod->X || (stiff && (!mod->Lapv || !mod->Lapa)) ||
        (mat->friction && !mod->friction_s))
        return 0;
    memcpy(mod->W, sub->W, sizeof(double) * (size_t)nv * w);
    memcpy(mod->X, mesh->X, sizeof(double) * (size_t)nv * 3);
    return 1;
}

/* Tet e's per-mode target gradients Ŷ_v = ∇(D_v)_e, v < m, and Ŷ_m = I (Y[9v + l + 3j] =
 * ∂(D_v)_l/∂X_j), so that Y_e(ā) = Σ_v ā_v Ŷ_v. */
static void tet_mode_gradients(const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                               int e, int ma, double *Yv) {
    const int m = ma - 1, nv = mesh->nv;
    for (int v = 0; v < ma; v++) {
        double *Y = Yv + 9 * v;
        if (v == m) {
            for (int i = 0; i < 9; i++)
                Y[i] = (i % 4 == 0);
            continue;
        }
        memset(Y, 0, sizeof(double) * 9);
        const double *Dv = sub->D + (size_t)3 * nv * v;
        for (int a = 0; a < 4; a++) {
            int vi = mesh->T[4 * e + a];
            const double *g = fem->grad + 12 * e + 3 * a;
            for (int l = 0; l < 3; l++)
                for (int j = 0; j < 3; j++)
                    Y[l + 3 * j] += Dv[3 * vi + l] * g[j];
        }
    }
}

/* One tet's share of its actuation cluster, for the modes v in [v0, v1):
 * 𝒦_c[v] += Va G Ŷ_vᵀ and Yg_c[u, v] += Va Ŷ_u : Ŷ_v (every u), Va being the tet's volume
 * weighted by its γ_e/γ. */
static void add_actuation(double *ka, double *yg, const double *G, const double *Yv, double Va,
                          int n4, int ma, int v0, int v1) {
    const size_t n3 = (size_t)n4 * 3;
    for (int v = v0; v < v1; v++) {
        const double *Y = Yv + 9 * v;
        double *K = ka + (size_t)v * n3; /* K[:, l] += V Σ_j G[:, j] Y_lj */
        for (int l = 0; l < 3; l++)
            for (int j = 0; j < 3; j++) {
                double s = Va * Y[l + 3 * j];
                if (s == 0) continue;
                for (int i = 0; i < n4; i++)
                    K[i + n4 * l] += s * G[i + n4 * j];
            }
    }
    for (int u = 0; u < ma; u++)
        for (int v = v0; v < v1; v++) {
            double d = 0;
            for (int i = 0; i < 9; i++)
                d += Yv[9 * u + i] * Yv[9 * v + i];
            yg[u + ma * v] += Va * d;
        }
}

/* A pass over the tets accumulating part of the model: with `body`, Lap (and Lapv, Lapa), G_c,
 * the body map, the volumes and, with per-tet density, the lumped vertex masses vmass; and the
 * actuation terms 𝒦_c, Yg of the modes [v0, v1). Every term is weighted by the tet's material
 * (exactly V for one material). G is an n4×3 scratch. Each array is accumulated tet by tet in
 * mesh order, whichever pass does it, so the passes may run on separate threads and give the
 * bits of one pass. */
static mlc_status tets_pass(mlc_model *mod, const mlc_mesh *mesh, const mlc_fem *fem,
                            const mlc_subspace *sub, const mlc_materials *mat, int stiff, int body,
                            int v0, int v1, double *G, double *vmass) {
    const int n4 = mod->n4, ma = mod->ma;
    const size_t n3 = (size_t)n4 * 3;
    const double mu = mod->set.mu, gam = mod->set.gamma;
    double Yh[64 * 9], *Yv = Yh, *Yheap = NULL;
    if (v1 > v0 && ma > 64) {
        Yheap = mlc_malloc(sizeof(double) * 9 * (size_t)ma);
        if (!Yheap) return MLC_ENOMEM;
        Yv = Yheap;
    }
    for (int e = 0; e < mesh->nt; e++) {
        double V = fem->vol[e];
        double mue = mat->mu ? mat->mu[e] : mu, game = mat->gamma ? mat->gamma[e] : gam;
        double Vv = stiff ? V * (mue / mu) : V, Va = stiff ? V * (game / gam) : V;
        double Vl = stiff ? V * ((mue + game) / (mu + gam)) : V;
        tet_G(mesh, fem, sub, e, G);
        if (body) {
            mod->volume += V;
            mod->vol_mu += Vv;
            add_ggt(mod->Lap, G, n4, Vl); /* Lap += V G Gᵀ (upper triangle, mirrored below) */
            if (stiff) add_ggt(mod->Lapv, G, n4, Vv), add_ggt(mod->Lapa, G, n4, Va);
            if (vmass)
                for (int a = 0; a < 4; a++)
                    vmass[mesh->T[4 * e + a]] += 0.25 * mat->density[e] * V;
            double *gp = mod->Gp + (size_t)sub->cluster[e] * n3;
            for (size_t i = 0; i < n3; i++)
                gp[i] += Vv * G[i], mod->Gb[i] += V * G[i];
        }
        if (v1 > v0) {
            tet_mode_gradients(mesh, fem, sub, e, ma, Yv);
            add_actuation(mod->Ka + (size_t)sub->acluster[e] * ma * n3,
                          mod->Yg + (size_t)sub->acluster[e] * ma * ma, G, Yv, Va, n4, ma, v0, v1);
        }
    }
    mlc_free(Yheap);
    return MLC_OK;
}

/* The pass over the tets (tets_pass), on two threads where allowed (settings.threads != 1, two
 * cores): one takes the body terms and the first modes, the other the remaining modes, split so
 * that their work is about even. G2 is a second n4×3 scratch. */
static mlc_status stream_tets(mlc_model *mod, const mlc_mesh *mesh, const mlc_fem *fem,
                              const mlc_subspace *sub, const mlc_materials *mat, int stiff,
                              double *G, double *G2, double *vmass, mlc_err *err) {
    const int n4 = mod->n4, ma = mod->ma;
    mlc_status s1 = MLC_OK, s2 = MLC_OK;
    int two = mod->set.threads != 1;
#ifdef _OPENMP
    two = two && omp_get_num_procs() > 1 && !omp_in_parallel();
#else
    two = 0;
#endif
    if (!two) {
        s1 = tets_pass(mod, mesh, fem, sub, mat, stiff, 1, 0, ma, G, vmass);
    } else {
        /* Per tet and mode the actuation costs about 3·n4·3 + 9·ma + 36 multiply-adds; the body
         * terms about 3·n4·n4/2 (three times with per-tet stiffness) + 3·n4. */
        double per_mode = 9.0 * n4 + 9.0 * ma + 36, body = (stiff ? 4.5 : 1.5) * n4 * n4 + 3.0 * n4;
        int vs = (int)((per_mode * ma - body) / (2 * per_mode) + 0.5);
        vs = MLC_MAX(0, MLC_MIN(ma, vs));
#pragma omp parallel sections num_threads(2)
        {
#pragma omp section
            s1 = tets_pass(mod, mesh, fem, sub, mat, stiff, 1, 0, vs, G, vmass);
#pragma omp section
            s2 = tets_pass(mod, mesh, fem, sub, mat, stiff, 0, vs, ma, G2, NULL);
        }
    }
    if (s1 != MLC_OK || s2 != MLC_OK) return mlc_errf(err, MLC_ENOMEM, "sim: out of memory");
    mirror_upper(mod->Lap, n4);
    if (stiff) mirror_upper(mod->Lapv, n4), mirror_upper(mod->Lapa, n4);
    return MLC_OK;
}

/* The one pass over the vertices: N = Σ m s sᵀ, Σ m s, the mass and the extent (vertex masses
 * from vmass when the density is per tet, else the settings' density). */
static mlc_status stream_vertices(mlc_model *mod, const mlc_mesh *mesh, const mlc_fem *fem,
                                  const mlc_subspace *sub, const double *vmass, mlc_err *err) {
    const int nv = mesh->nv, w = mod->w, n4 = mod->n4;
    double s[4 * 64], *sp = s, *sheap = NULL;
    if (n4 > 4 * 64) {
        sheap = mlc_malloc(sizeof(double) * (size_t)n4);
        if (!sheap) return mlc_errf(err, MLC_ENOMEM, "sim: out of memory");
        sp = sheap;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < nv; i++) {
        double mi = vmass ? vmass[i] : mod->set.density * fem->vmass[i];
        const double *Xi = mesh->X + 3 * i;
        for (int b = 0; b < w; b++) {
            double wb = sub->W[i + (size_t)nv * b];
            sp[4 * b] = wb * Xi[0], sp[4 * b + 1] = wb * Xi[1], sp[4 * b + 2] = wb * Xi[2];
            sp[4 * b + 3] = wb;
        }
        for (int b = 0; b < n4; b++) {
            mod->gsum[b] += mi * sp[b];
            double s2 = mi * sp[b];
            for (int a = 0; a < n4; a++)
                mod->N[a + (size_t)n4 * b] += s2 * sp[a];
        }
        mod->mass += mi;
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], Xi[k]), hi[k] = fmax(hi[k], Xi[k]);
    }
    mlc_free(sheap);
    mod->extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    mod->ground_tol = 1e-9 * mod->extent;
    return MLC_OK;
}

/* The contact samples' rows s_i of S and, with per-vertex friction, each sample's μ_f. */
static void sample_rows(mlc_model *mod, const mlc_mesh *mesh, const mlc_subspace *sub,
                        const mlc_materials *mat) {
    const int nv = mesh->nv, w = mod->w, n4 = mod->n4;
    for (int s = 0; s < sub->ns; s++) {
        int i = sub->samples[s];
        if (mod->friction_s) mod->friction_s[s] = mat->friction[i];
        for (int b = 0; b < w; b++) {
            double wb = sub->W[i + (size_t)nv * b];
            double *row = mod->S + (size_t)s * n4 + 4 * b;
            row[0] = wb * mesh->X[3 * i], row[1] = wb * mesh->X[3 * i + 1];
            row[2] = wb * mesh->X[3 * i + 2], row[3] = wb;
        }
    }
}

/* Q = (μ+γ) Lap + N/h² (+ the Rayleigh term C/h; BDF2 scales them by 9/4 and 3/2) and its
 * Cholesky factor Lq; returns the Rayleigh coefficients the step layouts reuse. */
static mlc_status factor_system(mlc_model *mod, double *ra_out, double *rb_out, mlc_err *err) {
    const mlc_sim_settings *set = &mod->set;
    const int n4 = mod->n4;
    const size_t nn = (size_t)n4 * n4;
    double ih2 = 1.0 / (set->dt * set->dt);
    /* Rayleigh damping (1/2h)‖z − z_n‖²_C, C = αN + β(μ+γ)Lap, adds C/h to Q. */
    double ra = set->rayleigh[0] / set->dt,
           rb = set->rayleigh[1] * (set->mu + set->gamma) / set->dt;
    if (mod->bdf2) /* BDF2 (sim.h): (9/4) N/h² and (3/2) C/h */
        ih2 *= 2.25, ra *= 1.5, rb *= 1.5;
    for (size_t i = 0; i < nn; i++)
        mod->Q[i] = (set->mu + set->gamma) * mod->Lap[i] + ih2 * mod->N[i] + ra * mod->N[i] +
                    rb * mod->Lap[i];
    memcpy(mod->Lq, mod->Q, sizeof(double) * nn);
    int info = mlc_dense_cholesky_spd(mod->Lq, (size_t)n4, n4);
    if (info != 0)
        return mlc_errf(err, MLC_ENOTSPD,
                        "sim: the reduced system matrix (4w = %d) is not positive definite "
                        "(pivot %d of its Cholesky factorization); the skinning weights are "
                        "probably linearly dependent on the vertices (too many weights for the "
                        "mesh: lower subspace.skinning_modes)",
                        n4, info);
    for (int b = 0; b < n4; b++)
        for (int a = 0; a < b; a++)
            mod->Lq[a + (size_t)n4 * b] = 0;
    *ra_out = ra, *rb_out = rb;
    return MLC_OK;
}

/* B ← Q⁻¹ B for nrhs columns of n4 values (contiguous), by the factor Lq. */
static void lq_solve(const mlc_model *mod, double *B, int nrhs) {
    mlc_dense_cholesky_spd_solve(mod->Lq, (size_t)mod->n4, mod->n4, B, (size_t)mod->n4, nrhs);
}

/* The global solve applied once to every rhs term: z* = Q⁻¹b0 + Σ_c (Q⁻¹G_c) μR_cᵀ
 * + Σ_c (Q⁻¹𝒦_c(ā)) γΩ_cᵀ, so iterations need no triangular solves (§11). */
static mlc_status solve_rhs_terms(mlc_model *mod, const mlc_subspace *sub, mlc_err *err) {
    const int n4 = mod->n4, ma = mod->ma;
    const size_t n3 = (size_t)n4 * 3;
    mod->QiGp = mlc_malloc(sizeof(double) * (size_t)sub->ncp * n3);
    mod->QiKa = mlc_malloc(sizeof(double) * (size_t)sub->nca * ma * n3);
    if (!mod->QiGp || !mod->QiKa)
        return mlc_errf(err, MLC_ENOMEM, "sim: out of memory for the model");
    memcpy(mod->QiGp, mod->Gp, sizeof(double) * (size_t)sub->ncp * n3);
    memcpy(mod->QiKa, mod->Ka, sizeof(double) * (size_t)sub->nca * ma * n3);
    lq_solve(mod, mod->QiGp, 3 * sub->ncp);
    lq_solve(mod, mod->QiKa, 3 * sub->nca * ma);
    return MLC_OK;
}

/* The contact operators, so a step only picks rows. Equality contact (docs/method.md §6): with
 * L = Jᶜ Q⁻¹ = S_aᵀ Q⁻¹ per block, the force of least fᵀ N⁻¹ f with L f = d is f = N Lᵀ y,
 * (L N Lᵀ) y = d, and the state correction is Q⁻¹ f = (Q⁻¹ N Q⁻¹) S_a y; both L N Lᵀ = S_aᵀ G S_a
 * and G S_a are submatrices of the precomputed Gss = Sᵀ G S and GS = G S (G = Q⁻¹ N Q⁻¹).
 * Complementarity contact (contact.h): a force λ on sample s moves every block by Q₄⁻¹ s_s λ, and
 * the samples by the Delassus matrix D = S Q₄⁻¹ Sᵀ; S (ns rows of n4, contiguous) is Sᵀ
 * column-major, so one multi-rhs solve gives Q₄⁻¹ Sᵀ. C is an n4×n4 scratch. */
static void contact_operators(mlc_model *mod, const mlc_subspace *sub, double *C) {
    const int n4 = mod->n4;
    const size_t nn = (size_t)n4 * n4;
    memcpy(C, mod->N, sizeof(double) * nn); /* C ← Q⁻¹ N, then G = Q⁻¹ (Q⁻¹ N)ᵀ */
    lq_solve(mod, C, n4);
    for (int b = 0; b < n4; b++)
        for (int a = b + 1; a < n4; a++) {
            double tmp = C[a + (size_t)n4 * b];
            C[a + (size_t)n4 * b] = C[b + (size_t)n4 * a];
            C[b + (size_t)n4 * a] = tmp;
        }
    lq_solve(mod, C, n4);
    for (int s = 0; s < sub->ns; s++)
        for (int i = 0; i < n4; i++)
            mod->GS[i + (size_t)n4 * s] = dot_n(C + i, n4, mod->S + (size_t)s * n4, n4);
    for (int s = 0; s < sub->ns; s++)
        for (int u = 0; u < sub->ns; u++)
            mod->Gss[u + (size_t)sub->ns * s] =
                dot_n(mod->S + (size_t)u * n4, 1, mod->GS + (size_t)n4 * s, n4);
    if (sub->ns > 0) {
        memcpy(mod->QiS, mod->S, sizeof(double) * (size_t)sub->ns * n4);
        lq_solve(mod, mod->QiS, sub->ns);
        for (int s = 0; s < sub->ns; s++)
            for (int u = 0; u < sub->ns; u++)
                mod->Dss[u + (size_t)sub->ns * s] =
                    dot_n(mod->S + (size_t)u * n4, 1, mod->QiS + (size_t)n4 * s, n4);
    }
}

/* The step's layouts (sim_internal.h): transposed maps GpT and ST, and Q₄⁻¹ N, Q₄⁻¹ Σ m s and,
 * with Rayleigh damping, Q₄⁻¹ C. */
static mlc_status step_layouts(mlc_model *mod, const mlc_subspace *sub, double ra, double rb,
                               mlc_err *err) {
    const int n4 = mod->n4, nsx = sub->ns > 0 ? sub->ns : 1;
    const size_t nn = (size_t)n4 * n4, n3 = (size_t)n4 * 3;
    const int ncp = sub->ncp, ns = sub->ns, ncol = 3 * ncp;
    mod->GpT = mlc_malloc(sizeof(double) * (size_t)ncp * n3);
    mod->nsp = (nsx + 3) & ~3;
    mod->ST = mlc_malloc(sizeof(double) * (size_t)mod->nsp * n4);
    mod->QiN = mlc_malloc(sizeof(double) * nn);
    mod->Qig = mlc_malloc(sizeof(double) * (size_t)n4);
    if (ra != 0 || rb != 0) mod->QiC = mlc_malloc(sizeof(double) * nn);
    if (!mod->GpT || !mod->ST || !mod->QiN || !mod->Qig || ((ra != 0 || rb != 0) && !mod->QiC))
        return mlc_errf(err, MLC_ENOMEM, "sim: out of memory for the model");
    for (int col = 0; col < ncol; col++)
        for (int i = 0; i < n4; i++)
            mod->GpT[col + (size_t)ncol * i] = mod->Gp[i + (size_t)n4 * col];
    for (int i = 0; i < n4; i++)
        for (int q = 0; q < mod->nsp; q++)
            mod->ST[q + (size_t)mod->nsp * i] = q < ns ? mod->S[(size_t)q * n4 + i] : 0;
    if (mod->QiC) {
        for (size_t i = 0; i < nn; i++)
            mod->QiC[i] = ra * mod->N[i] + rb * mod->Lap[i];
        lq_solve(mod, mod->QiC, n4);
    }
    memcpy(mod->QiN, mod->N, sizeof(double) * nn);
    memcpy(mod->Qig, mod->gsum, sizeof(double) * (size_t)n4);
    lq_solve(mod, mod->QiN, n4);
    lq_solve(mod, mod->Qig, 1);
    return MLC_OK;
}

mlc_status mlc_model_create_materials(const mlc_mesh *mesh, const mlc_fem *fem,
                                      const mlc_subspace *sub, const mlc_sim_settings *settings,
                                      const mlc_materials *mat, mlc_model **out, mlc_err *err) {
    /* ---- check ---- */
    *out = NULL;
    mlc_status st = check_inputs(mesh, fem, sub, settings, err);
    if (st != MLC_OK) return st;
    static const mlc_materials uniform = {0};
    if (!mat) mat = &uniform;
    if ((st = check_materials(mesh, mat, err)) != MLC_OK) return st;
    const int stiff = mat->mu || mat->gamma; /* per-tet stiffness */

    /* ---- model, arrays and scratch ---- */
    mlc_model *mod = NULL;
    if ((st = model_new(mesh, sub, settings, &mod, err)) != MLC_OK) return st;
    const int n4 = mod->n4;
    double *G = mlc_malloc(sizeof(double) * (size_t)n4 * 6); /* two n4×3 scratches */
    double *C = mlc_malloc(sizeof(double) * (size_t)n4 * n4);
    double *vmass = mat->density ? mlc_calloc((size_t)mesh->nv, sizeof(double)) : NULL;
    if (!alloc_arrays(mod, mesh, sub, mat, stiff) || !G || !C || (mat->density && !vmass)) {
        st = mlc_errf(err, MLC_ENOMEM, "sim: out of memory for the model (w = %d, m = %d)", mod->w,
                      mod->m);
        goto fail;
    }

    /* ---- the precompute, in the order of the functions above ---- */
    double ra = 0, rb = 0;
    if ((st = stream_tets(mod, mesh, fem, sub, mat, stiff, G, G + (size_t)n4 * 3, vmass, err)) !=
            MLC_OK ||
        (st = stream_vertices(mod, mesh, fem, sub, vmass, err)) != MLC_OK)
        goto fail;
    sample_rows(mod, mesh, sub, mat);
    if ((st = factor_system(mod, &ra, &rb, err)) != MLC_OK ||
        (st = solve_rhs_terms(mod, sub, err)) != MLC_OK)
        goto fail;
    contact_operators(mod, sub, C);
    if ((st = step_layouts(mod, sub, ra, rb, err)) != MLC_OK) goto fail;

    /* ---- rest state T_0 = [I|0]/W_0 and its centre of mass ---- */
    double iw0 = 1.0 / sub->W[0];
    for (int k = 0; k < 3; k++)
        mod->zrest[k * n4 + k] = iw0;
    mlc_model_com(mod, mod->zrest, mod->com_rest);
    *out = mod;
fail:
    mlc_free(G);
    mlc_free(C);
    mlc_free(vmass);
    if (st != MLC_OK) mlc_model_destroy(mod);
    return st;
}

const mlc_terrain *mlc_model_terrain(const mlc_model *mod) {
    return &mod->terrain;
}

int mlc_model_dim(const mlc_model *mod) {
    return mod->r;
}
const mlc_sim_settings *mlc_model_settings(const mlc_model *mod) {
    return &mod->set;
}

void mlc_model_rest_state(const mlc_model *mod, double *z) {
    memcpy(z, mod->zrest, sizeof(double) * (size_t)mod->r);
}

/* The sums of these two run side by side (one accumulator each, every sum's terms in index
 * order): the same bits as one sum after another, without waiting on each addition in turn. */
void mlc_model_com(const mlc_model *mod, const double *z, double com[3]) {
    const int n4 = mod->n4;
    const double *g = mod->gsum;
    double c0 = 0, c1 = 0, c2 = 0;
    for (int i = 0; i < n4; i++)
        c0 += z[i] * g[i], c1 += z[n4 + i] * g[i], c2 += z[2 * n4 + i] * g[i];
    com[0] = c0 / mod->mass, com[1] = c1 / mod->mass, com[2] = c2 / mod->mass;
}

void mlc__model_body_matrix(const mlc_model *mod, const double *z, double A[9]) {
    const int n4 = mod->n4;
    const double *G = mod->Gb;
    double s[9] = {0};
    for (int i = 0; i < n4; i++)
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                s[k + 3 * j] += z[k * n4 + i] * G[i + n4 * j];
    memcpy(A, s, sizeof s);
}

void mlc_model_rotation(const mlc_model *mod, const double *z, double R[9]) {
    double A[9], q[4] = {1, 0, 0, 0};
    mlc__model_body_matrix(mod, z, A);
    mlc_polar(A, q, R);
}

/* Coordinate of vertex i for one block t_k of the state: Σ_b W_ib (t_k,b · [X_i; 1]), the
 * sum of mlc_model_skin_coord, and mlc_model_skin's for all three at once (the same bits). */
static inline double skin_coord(const mlc_model *mod, const double *tk, int i) {
    const double *Xi = mod->X + 3 * i;
    double x = 0;
    for (int b = 0; b < mod->w; b++) {
        double wb = mod->W[i + (size_t)mod->nv * b];
        if (wb == 0) continue;
        const double *t = tk + 4 * b;
        x += wb * (t[0] * Xi[0] + t[1] * Xi[1] + t[2] * Xi[2] + t[3]);
    }
    return x;
}

/* The three coordinates in one pass over the weights (each W_ib and X_i read once): each
 * coordinate's sum is skin_coord's, term by term in the same order. */
void mlc_model_skin(const mlc_model *mod, const double *z, int n, const int *verts, double *out) {
    const double *tx = z, *ty = z + mod->n4, *tz = z + 2 * mod->n4;
    for (int p = 0; p < n; p++) {
        const int i = verts ? verts[p] : p;
        const double X0 = mod->X[3 * i], X1 = mod->X[3 * i + 1], X2 = mod->X[3 * i + 2];
        double x = 0, y = 0, w = 0;
        for (int b = 0; b < mod->w; b++) {
            const double wb = mod->W[i + (size_t)mod->nv * b];
            if (wb == 0) continue;
            const double *a = tx + 4 * b, *c = ty + 4 * b, *d = tz + 4 * b;
            x += wb * (a[0] * X0 + a[1] * X1 + a[2] * X2 + a[3]);
            y += wb * (c[0] * X0 + c[1] * X1 + c[2] * X2 + c[3]);
            w += wb * (d[0] * X0 + d[1] * X1 + d[2] * X2 + d[3]);
        }
        out[3 * p] = x, out[3 * p + 1] = y, out[3 * p + 2] = w;
    }
}

void mlc_model_skin_coord(const mlc_model *mod, const double *z, int k, int n, const int *verts,
                          double *out) {
    for (int p = 0; p < n; p++)
        out[p] = skin_coord(mod, z + k * mod->n4, verts ? verts[p] : p);
}

void mlc_model_skin_row(const mlc_model *mod, int i, double *phi) {
    const double *Xi = mod->X + 3 * i;
    for (int b = 0; b < mod->w; b++) {
        double wb = mod->W[i + (size_t)mod->nv * b];
        for (int c = 0; c < 4; c++)
            phi[4 * b + c] = wb * (c < 3 ? Xi[c] : 1);
    }
}

void mlc_model_angular_momentum(const mlc_model *mod, const double *z, const double *zp,
                                double L[3]) {
    int n4 = mod->n4;
    double ih = 1.0 / mod->set.dt, P[3][3]; /* P[b][c] = t_bᵀ N v_c */
    for (int b = 0; b < 3; b++)
        for (int c = 0; c < 3; c++) {
            double s = 0;
            for (int j = 0; j < n4; j++) {
                double vj = (z[c * n4 + j] - zp[c * n4 + j]) * ih, Nt = 0;
                for (int i = 0; i < n4; i++)
                    Nt += mod->N[i + (size_t)n4 * j] * z[b * n4 + i];
                s += Nt * vj;
            }
            P[b][c] = s;
        }
    L[0] = P[1][2] - P[2][1];
    L[1] = P[2][0] - P[0][2];
    L[2] = P[0][1] - P[1][0];
}
