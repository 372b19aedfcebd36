/* test_free_flight.c: the reduced simulator against an independent, straightforward
 * implementation of the same method (docs/method.md §5–7) on a spinning, deforming body in free
 * flight (no gravity, no contact), over 200 steps.
 *
 * The reference works at the level of the mesh: vertex positions x = B z, every tet's
 * deformation gradient from its vertices, cluster sums Σ V F_e and Σ V F_e Y_eᵀ, rotations by
 * LAPACK's SVD (R = U diag(1, 1, det UVᵀ) Vᵀ), forces per vertex mapped back by Bᵀ, and one
 * dense r×r Cholesky factor of the global matrix (no I₃ ⊗ structure, no precomputed Q⁻¹ maps,
 * no quaternions, no batching). Both take 10 local-global iterations per step from the
 * inertial prediction q = 2z_n − z_{n−1}. The body rotation R(t) = polar(Σ V F_e) of both is
 * compared (the objective's J_align reads it), and the centre of mass. */
#include "polar.h"
#include "test_rot_util.h"
#include "test_sim_util.h"

/* Angle (rad) of Raᵀ Rb, accurate for small angles (from the skew part, not the trace). */
static double rotation_distance(const double Ra[9], const double Rb[9]) {
    double M[9], Rt[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Rt[i + 3 * j] = Ra[j + 3 * i];
    mat3_mul(Rt, Rb, M);
    double c = (M[0] + M[4] + M[8] - 1) / 2;
    double sx = M[5] - M[7], sy = M[6] - M[2], sz = M[1] - M[3];
    return atan2(sqrt(sx * sx + sy * sy + sz * sz) / 2, c);
}

/* The reference simulator. */
typedef struct ref {
    const mlc_mesh *mesh;
    const mlc_fem *fem;
    const mlc_subspace *sub;
    mlc_sim_settings set;
    int nv, nt, r, n4;
    double *B;  /* 3nv×r: x_{3i+k} = Σ B z */
    double *L;  /* r×r Cholesky factor of Q = N/h² + (μ+γ) Bᵀ(L_v ⊗ I₃)B */
    double *N;  /* r×r: Bᵀ M B */
    double *Yh; /* nt × (m+1) × 9: per-tet mode gradients ∇D_v (v < m), I (v = m) */
    double *x, *f, *rhs, *zq;
} ref;

static void ref_init(ref *rf, const mlc_mesh *mesh, const mlc_fem *fem, const mlc_subspace *sub,
                     const mlc_sim_settings *set) {
    int nv = mesh->nv, nt = mesh->nt, w = sub->w, n4 = 4 * w, r = 3 * n4, m = sub->m;
    rf->mesh = mesh, rf->fem = fem, rf->sub = sub, rf->set = *set;
    rf->nv = nv, rf->nt = nt, rf->r = r, rf->n4 = n4;
    size_t n3v = 3 * (size_t)nv;
    rf->B = calloc(n3v * r, sizeof(double));
    for (int i = 0; i < nv; i++)
        for (int b = 0; b < w; b++) {
            double wb = sub->W[i + (size_t)nv * b];
            double Xt[4] = {mesh->X[3 * i], mesh->X[3 * i + 1], mesh->X[3 * i + 2], 1};
            for (int k = 0; k < 3; k++)
                for (int c = 0; c < 4; c++)
                    rf->B[3 * i + k + n3v * (k * n4 + 4 * b + c)] = wb * Xt[c];
        }
    /* H = M/h² + (μ+γ) L_v ⊗ I₃ per vertex DOF, then Q = Bᵀ H B and N = Bᵀ M B. */
    double *H = calloc(n3v * n3v, sizeof(double)), *Mv = calloc(n3v * n3v, sizeof(double));
    double ih2 = 1 / (set->dt * set->dt), stiff = set->mu + set->gamma;
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            size_t d = 3 * (size_t)i + k;
            Mv[d + n3v * d] = set->density * fem->vmass[i];
            H[d + n3v * d] = ih2 * Mv[d + n3v * d];
        }
    for (int e = 0; e < nt; e++)
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) {
                const double *ga = fem->grad + 12 * e + 3 * a, *gc = fem->grad + 12 * e + 3 * c;
                double v = stiff * fem->vol[e] * (ga[0] * gc[0] + ga[1] * gc[1] + ga[2] * gc[2]);
                for (int k = 0; k < 3; k++)
                    H[3 * (size_t)mesh->T[4 * e + a] + k +
                      n3v * (3 * (size_t)mesh->T[4 * e + c] + k)] += v;
            }
    double *HB = malloc(sizeof(double) * n3v * r), *MB = malloc(sizeof(double) * n3v * r);
    rf->L = malloc(sizeof(double) * (size_t)r * r);
    rf->N = malloc(sizeof(double) * (size_t)r * r);
    for (int j = 0; j < r; j++)
        for (size_t i = 0; i < n3v; i++) {
            double s = 0, t = 0;
            for (size_t l = 0; l < n3v; l++)
                s += H[i + n3v * l] * rf->B[l + n3v * j], t += Mv[i + n3v * l] * rf->B[l + n3v * j];
            HB[i + n3v * j] = s, MB[i + n3v * j] = t;
        }
    for (int j = 0; j < r; j++)
        for (int i = 0; i < r; i++) {
            double s = 0, t = 0;
            for (size_t l = 0; l < n3v; l++)
                s += rf->B[l + n3v * i] * HB[l + n3v * j],
                    t += rf->B[l + n3v * i] * MB[l + n3v * j];
            rf->L[i + (size_t)r * j] = s, rf->N[i + (size_t)r * j] = t;
        }
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', r, rf->L, r) != 0) fail_msg("reference: Q not SPD");
    free(H), free(Mv), free(HB), free(MB);
    rf->Yh = calloc((size_t)nt * (m + 1) * 9, sizeof(double));
    for (int e = 0; e < nt; e++)
        for (int v = 0; v <= m; v++) {
            double *Y = rf->Yh + ((size_t)e * (m + 1) + v) * 9;
            if (v == m) {
                Y[0] = Y[4] = Y[8] = 1;
                continue;
            }
            for (int a = 0; a < 4; a++) {
                int vi = mesh->T[4 * e + a];
                const double *g = fem->grad + 12 * e + 3 * a, *D = sub->D + 3 * (size_t)nv * v;
                for (int l = 0; l < 3; l++)
                    for (int j = 0; j < 3; j++)
                        Y[l + 3 * j] += D[3 * vi + l] * g[j];
            }
        }
    rf->x = malloc(sizeof(double) * n3v);
    rf->f = malloc(sizeof(double) * n3v);
    rf->rhs = malloc(sizeof(double) * r);
    rf->zq = malloc(sizeof(double) * r);
}

static void ref_free(ref *rf) {
    free(rf->B), free(rf->L), free(rf->N), free(rf->Yh), free(rf->x), free(rf->f), free(rf->rhs);
    free(rf->zq);
}

static void ref_positions(ref *rf, const double *z) {
    size_t n3v = 3 * (size_t)rf->nv;
    for (size_t i = 0; i < n3v; i++) {
        double s = 0;
        for (int j = 0; j < rf->r; j++)
            s += rf->B[i + n3v * j] * z[j];
        rf->x[i] = s;
    }
}

static void ref_F(const ref *rf, int e, double F[9]) { /* F[k + 3j] = Σ_a x_{a,k} ∂φ_a/∂X_j */
    memset(F, 0, 9 * sizeof(double));
    for (int a = 0; a < 4; a++) {
        const double *xa = rf->x + 3 * rf->mesh->T[4 * e + a], *g = rf->fem->grad + 12 * e + 3 * a;
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                F[k + 3 * j] += xa[k] * g[j];
    }
}

/* Body rotation polar(Σ V F_e) of z. */
static void ref_body_rotation(ref *rf, const double *z, double R[9]) {
    double A[9] = {0}, F[9];
    ref_positions(rf, z);
    for (int e = 0; e < rf->nt; e++) {
        ref_F(rf, e, F);
        for (int i = 0; i < 9; i++)
            A[i] += rf->fem->vol[e] * F[i];
    }
    svd_rotation(A, R, NULL);
}

/* One step: z (in: z_n, out: z_{n+1}), zp = z_{n−1} (out: z_n); t = t_{n+1}. */
static void ref_step(ref *rf, const mlc_actuation *act, double t, double *z, double *zp) {
    const mlc_subspace *sub = rf->sub;
    int r = rf->r, m = sub->m, nt = rf->nt, ncp = sub->ncp, nca = sub->nca;
    double abar[16];
    mlc_actuation_eval(act, m, t, 0.0, abar);
    double *Fc = calloc((size_t)(ncp + nca) * 9, sizeof(double)),
           *Rc = calloc((size_t)(ncp + nca) * 9, sizeof(double));
    double *Ye = malloc(sizeof(double) * 9 * (size_t)nt);
    for (int e = 0; e < nt; e++) { /* Y_e(ā) = Σ_v ā_v Ŷ_v */
        double *Y = Ye + 9 * e;
        memset(Y, 0, 9 * sizeof(double));
        for (int v = 0; v <= m; v++)
            for (int i = 0; i < 9; i++)
                Y[i] += abar[v] * rf->Yh[((size_t)e * (m + 1) + v) * 9 + i];
    }
    for (int i = 0; i < r; i++)
        rf->zq[i] = 2 * z[i] - zp[i];
    memcpy(zp, z, sizeof(double) * r);
    memcpy(z, rf->zq, sizeof(double) * r);
    double ih2 = 1 / (rf->set.dt * rf->set.dt);
    size_t n3v = 3 * (size_t)rf->nv;
    for (int it = 0; it < rf->set.iterations; it++) {
        /* local: R_c = polar(Σ V F_e), Ω_c = polar(Σ V F_e Y_eᵀ) */
        ref_positions(rf, z);
        memset(Fc, 0, sizeof(double) * 9 * (size_t)(ncp + nca));
        for (int e = 0; e < nt; e++) {
            double F[9], FYt[9], Yt[9], V = rf->fem->vol[e];
            ref_F(rf, e, F);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    Yt[i + 3 * j] = Ye[9 * e + j + 3 * i];
            mat3_mul(F, Yt, FYt);
            double *P = Fc + 9 * sub->cluster[e], *H = Fc + 9 * (ncp + sub->acluster[e]);
            for (int i = 0; i < 9; i++)
                P[i] += V * F[i], H[i] += V * FYt[i];
        }
        for (int c = 0; c < ncp + nca; c++)
            svd_rotation(Fc + 9 * c, Rc + 9 * c, NULL);
        /* global: Q z = N q/h² + Bᵀ Σ_e V (μ R_c + γ Ω_c Y_e) ∇φᵀ (vertex forces) */
        memset(rf->f, 0, sizeof(double) * n3v);
        for (int e = 0; e < nt; e++) {
            double P[9], OY[9], V = rf->fem->vol[e];
            mat3_mul(Rc + 9 * (ncp + sub->acluster[e]), Ye + 9 * e, OY);
            for (int i = 0; i < 9; i++)
                P[i] = rf->set.mu * Rc[9 * sub->cluster[e] + i] + rf->set.gamma * OY[i];
            for (int a = 0; a < 4; a++) {
                const double *g = rf->fem->grad + 12 * e + 3 * a;
                double *fa = rf->f + 3 * rf->mesh->T[4 * e + a];
                for (int k = 0; k < 3; k++)
                    fa[k] += V * (P[k] * g[0] + P[k + 3] * g[1] + P[k + 6] * g[2]);
            }
        }
        for (int j = 0; j < r; j++) {
            double s = 0, u = 0;
            for (size_t l = 0; l < n3v; l++)
                s += rf->B[l + n3v * j] * rf->f[l];
            for (int l = 0; l < r; l++)
                u += rf->N[j + (size_t)r * l] * rf->zq[l];
            rf->rhs[j] = s + ih2 * u;
        }
        LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', r, 1, rf->L, r, rf->rhs, r);
        memcpy(z, rf->rhs, sizeof(double) * r);
    }
    free(Fc), free(Rc), free(Ye);
}

/* x ↦ R(x − c) + c on a state (rotation about the centre of mass c). */
static void rotate_state(const double R[9], const double c[3], double w0, int n4, const double *z,
                         double *out) {
    double p[3];
    for (int k = 0; k < 3; k++)
        p[k] = c[k] - (R[k] * c[0] + R[k + 3] * c[1] + R[k + 6] * c[2]);
    test_transform_state(R, p, w0, n4, z, out);
}

static void spinning_free_flight_should_match_an_svd_reference(void **state) {
    (void)state;
    tsim t = {0};
    test_quadruped_mesh(0.25, &t.mesh);
    mlc_sim_settings set;
    mlc_sim_settings_default(&set);
    set.gravity[1] = 0;
    set.contact = 0;
    tsim_init(&t, &set, 5, 4, 5, 10);
    int r = mlc_model_dim(t.model), n4 = r / 3;
    /* every mode at p = 0.3 (large deformations), spun at 3 rad/s about a skew axis */
    double A[8], T[8], th[8];
    for (int i = 0; i < t.sub.m; i++)
        A[i] = 0.3 / t.sub.grad_max[i], T[i] = 0.2 + 0.1 * i, th[i] = 0.13 * i;
    mlc_actuation act = {.m = t.sub.m, .k = 1, .A = A, .T = T, .theta = th};
    double *z = malloc(sizeof(double) * r), *zp = malloc(sizeof(double) * r);
    double c0[3], c[3], cr[3], q[4], Rspin[9], R[9], Rr[9];
    mlc_model_rest_state(t.model, z);
    mlc_model_com(t.model, z, c0);
    double ax[3] = {1, 2, 3}, na = sqrt(14.0), h = -3.0 * set.dt / 2; /* z_{−1}: rotated back */
    q[0] = cos(h);
    for (int k = 0; k < 3; k++)
        q[k + 1] = sin(h) * ax[k] / na;
    mlc_quat_to_matrix(q, Rspin);
    rotate_state(Rspin, c0, t.sub.W[0], n4, z, zp);
    mlc_rollout_set_state(t.ro, z, zp);
    ref rf;
    ref_init(&rf, &t.mesh, &t.fem, &t.sub, &set);
    mlc_objective_settings obj;
    mlc_objective_settings_default(&obj);
    double worst_rot = 0, worst_com = 0, worst_z = 0, zscale = 0, total = 0;
    for (int s = 1; s <= 200; s++) {
        assert_int_equal(mlc_rollout_step(t.ro, &act), 0);
        ref_step(&rf, &act, s * set.dt, z, zp);
        const double *zs = mlc_rollout_state(t.ro);
        for (int i = 0; i < r; i++)
            worst_z = fmax(worst_z, fabs(zs[i] - z[i])), zscale = fmax(zscale, fabs(z[i]));
        mlc_model_com(t.model, zs, c);
        mlc_model_com(t.model, z, cr);
        for (int k = 0; k < 3; k++)
            worst_com = fmax(worst_com, fabs(c[k] - cr[k]));
        mlc_model_rotation(t.model, zs, R);
        ref_body_rotation(&rf, z, Rr);
        worst_rot = fmax(worst_rot, rotation_distance(R, Rr));
        if (s == 200) total = rotation_distance(Rr, (double[9]){1, 0, 0, 0, 1, 0, 0, 0, 1});
    }
    double ext = mlc_model_extent(t.model);
    print_message("free flight vs SVD reference, 200 steps (body turned %.1f deg): orientation "
                  "%.3e rad, centre of mass %.3e extents, max |dz| %.3e of max |z|\n",
                  total * 180 / MLC_PI, worst_rot, worst_com / ext, worst_z / zscale);
    assert_true(total > 0.5);      /* it did spin */
    assert_true(worst_rot < 1e-9); /* radians */
    assert_true(worst_com < 1e-9 * ext);
    assert_true(worst_z < 1e-9 * zscale);
    ref_free(&rf);
    free(z), free(zp);
    tsim_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spinning_free_flight_should_match_an_svd_reference),
    };
    return cmocka_run_group_tests_name("free_flight", tests, NULL, NULL);
}
