/* test_polar.c: the batched polar decompositions (mlc_polar_n, mlc_polar_lanes) are
 * bit-identical to the one-at-a-time one, for every group size and mix of warm, cold, singular
 * and reflected problems (the simulator's determinism rests on it); all return proper rotations
 * that agree with LAPACK's SVD to rounding, to the accuracy the conditioning of the problem
 * allows, from any warm start. */
#include <float.h>

#include "test_rot_util.h"

#include "polar.h"

static void random_problem(mlc_rng *rng, int kind, double A[9], double q[4]) {
    for (int i = 0; i < 9; i++)
        A[i] = mlc_rng_normal(rng);
    if (kind == 1) /* near the identity, as in a simulation step */
        for (int i = 0; i < 9; i++)
            A[i] = 0.05 * A[i] + (i % 4 == 0);
    if (kind == 2) /* rank one */
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++)
                A[i + 3 * j] = A[i] * A[3 + j];
    if (kind == 3) /* reflected */
        for (int i = 0; i < 3; i++)
            A[i] = -A[i];
    if (kind == 4) memset(A, 0, 9 * sizeof(double));
    q[0] = 1, q[1] = q[2] = q[3] = 0;
    if (kind == 1) q[0] = 1, q[1] = 0.01 * mlc_rng_normal(rng), q[2] = 0.02, q[3] = -0.01;
}

static void batched_should_equal_single_bit_for_bit(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 42);
    enum { N = 37 };
    double A[9 * N], q1[4 * N], qn[4 * N], R1[9 * N], Rn[9 * N];
    int w1[N], wn[N];
    for (int n = 1; n <= N; n++) {
        for (int p = 0; p < n; p++)
            random_problem(&rng, (p * 7 + n) % 5, A + 9 * p, q1 + 4 * p);
        memcpy(qn, q1, sizeof(double) * 4 * (size_t)n);
        int total = 0;
        for (int p = 0; p < n; p++)
            total += w1[p] = mlc_polar(A + 9 * p, q1 + 4 * p, R1 + 9 * p);
        assert_int_equal(mlc_polar_n(n, A, qn, Rn, wn), total);
        assert_memory_equal(R1, Rn, sizeof(double) * 9 * (size_t)n);
        assert_memory_equal(q1, qn, sizeof(double) * 4 * (size_t)n);
        assert_memory_equal(w1, wn, sizeof(int) * (size_t)n);
    }
}

static void rotations_should_be_proper_and_optimal(void **state) {
    (void)state;
    mlc_rng rng;
    mlc_rng_seed(&rng, 7);
    for (int t = 0; t < 500; t++) {
        double A[9], q[4], R[9];
        random_problem(&rng, t % 4, A, q);
        mlc_polar(A, q, R);
        /* RᵀR = I and det R = +1. */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double d = 0;
                for (int k = 0; k < 3; k++)
                    d += R[k + 3 * i] * R[k + 3 * j];
                assert_near(d, i == j, 1e-12);
            }
        double det = R[0] * (R[4] * R[8] - R[7] * R[5]) - R[3] * (R[1] * R[8] - R[7] * R[2]) +
                     R[6] * (R[1] * R[5] - R[4] * R[2]);
        assert_near(det, 1.0, 1e-12);
        /* Optimal: no small rotation of R increases tr(Rᵀ A). */
        double best = 0;
        for (int i = 0; i < 9; i++)
            best += R[i] * A[i];
        for (int axis = 0; axis < 3; axis++)
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                double th = sgn * 1e-3, c = cos(th), s = sin(th), G[9] = {0}, RG[9];
                int a = (axis + 1) % 3, b = (axis + 2) % 3;
                G[axis + 3 * axis] = 1, G[a + 3 * a] = c, G[b + 3 * b] = c;
                G[a + 3 * b] = -s, G[b + 3 * a] = s;
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        RG[i + 3 * j] = 0;
                        for (int k = 0; k < 3; k++)
                            RG[i + 3 * j] += R[i + 3 * k] * G[k + 3 * j];
                    }
                double tr = 0;
                for (int i = 0; i < 9; i++)
                    tr += RG[i] * A[i];
                assert_true(tr <= best + 1e-12 * (1 + fabs(best)));
            }
    }
}

/* ---- against the SVD ----------------------------------------------------------------------
 * Reference (svd_rotation): A = U Σ Vᵀ by LAPACK, R_svd = U diag(1, 1, d) Vᵀ, d = det(UVᵀ).
 * Write the signed singular values s1 ≥ s2 ≥ |s3| (s3 = d σ3). The rotation factor is unique
 * iff s2 + s3 > 0, and a perturbation δA moves it by about 2‖δA‖/(s2 + s3) at most (the
 * condition number of the polar factor, σ3 signed for SO(3)); equivalently the top eigenvalue of
 * Horn's K(A) is separated from the next by 2(s2 + s3). So the bound used is ‖R − R_exact‖_F ≤ C ε
 * κ with κ = σ1/(s2 + s3), asserted where κ ≤ 1e8. Beyond that the rotation itself is ill-posed
 * (rank one, or a reflection with σ2 ≈ σ3) and what remains meaningful is asserted: proper
 * orthogonality and the optimal value tr(Rᵀ A) = s1 + s2 + s3 to a few ε‖A‖.
 * LAPACK's UVᵀ is itself off by up to ~70 ε κ on these matrices (U and V are separately
 * ill-conditioned when singular values cluster, as near a rotation), so the tight bound is
 * checked against an extended-precision reference (Jacobi on K in long double, run to
 * convergence, where long double has at least 64 mantissa bits), and the SVD bound is C = 100. */

static void rand_quat(mlc_rng *rng, double q[4]) {
    double n = 0;
    for (int k = 0; k < 4; k++)
        q[k] = mlc_rng_normal(rng), n += q[k] * q[k];
    for (int k = 0; k < 4; k++)
        q[k] /= sqrt(n);
}

/* Extended-precision reference: top eigenvector of K(A) by cyclic Jacobi in long double until
 * every off-diagonal entry is exactly zero or 60 sweeps, then R(q) in long double. */
static void ld_polar(const double A[9], double Rout[9]) {
    typedef long double ld;
    ld a00 = A[0], a10 = A[1], a20 = A[2], a01 = A[3], a11 = A[4], a21 = A[5], a02 = A[6],
       a12 = A[7], a22 = A[8];
    ld K[4][4], V[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
    K[0][0] = a00 + a11 + a22, K[1][1] = a00 - a11 - a22;
    K[2][2] = -a00 + a11 - a22, K[3][3] = -a00 - a11 + a22;
    K[0][1] = K[1][0] = a21 - a12, K[0][2] = K[2][0] = a02 - a20;
    K[0][3] = K[3][0] = a10 - a01, K[1][2] = K[2][1] = a01 + a10;
    K[1][3] = K[3][1] = a02 + a20, K[2][3] = K[3][2] = a12 + a21;
    for (int sweep = 0, rotated = 1; sweep < 60 && rotated; sweep++) {
        rotated = 0;
        for (int p = 0; p < 3; p++)
            for (int r = p + 1; r < 4; r++) {
                if (K[p][r] == 0) continue;
                rotated = 1;
                ld th = (K[r][r] - K[p][p]) / (2 * K[p][r]);
                ld t = (th >= 0 ? 1 : -1) / (fabsl(th) + sqrtl(th * th + 1));
                ld c = 1 / sqrtl(t * t + 1), sn = t * c;
                for (int k = 0; k < 4; k++) {
                    ld x = K[k][p], y = K[k][r];
                    K[k][p] = c * x - sn * y, K[k][r] = sn * x + c * y;
                }
                for (int k = 0; k < 4; k++) {
                    ld x = K[p][k], y = K[r][k];
                    K[p][k] = c * x - sn * y, K[r][k] = sn * x + c * y;
                }
                K[p][r] = K[r][p] = 0;
                for (int k = 0; k < 4; k++) {
                    ld x = V[k][p], y = V[k][r];
                    V[k][p] = c * x - sn * y, V[k][r] = sn * x + c * y;
                }
            }
    }
    int b = 0;
    for (int j = 1; j < 4; j++)
        if (K[j][j] > K[b][b]) b = j;
    ld w = V[0][b], x = V[1][b], y = V[2][b], z = V[3][b];
    ld s = 2 / (w * w + x * x + y * y + z * z);
    ld R[9] = {1 - s * (y * y + z * z), s * (x * y + w * z),     s * (x * z - w * y),
               s * (x * y - w * z),     1 - s * (x * x + z * z), s * (y * z + w * x),
               s * (x * z + w * y),     s * (y * z - w * x),     1 - s * (x * x + y * y)};
    for (int i = 0; i < 9; i++)
        Rout[i] = (double)R[i];
}

/* Test matrices by kind, A = scale · U diag(σ) Vᵀ (U, V random rotations), and warm starts. */
enum { KINDS = 11 };
static const char *kind_name[KINDS] = {
    "gaussian",   "near rotation",  "stale warm start", "anisotropic", "rank two",      "rank one",
    "reflection", "ill reflection", "tiny (1e-6)",      "huge (1e6)",  "extreme scales"};

static void make_problem(mlc_rng *rng, int kind, double A[9], double q[4]) {
    double qu[4], qv[4], U[9], V[9], Vt[9], sg[3], SV[9] = {0}, T[9];
    rand_quat(rng, qu), rand_quat(rng, qv);
    mlc_quat_to_matrix(qu, U), mlc_quat_to_matrix(qv, V);
    double u1 = mlc_rng_uniform(rng), u2 = mlc_rng_uniform(rng), scale = 1;
    sg[0] = 1, sg[1] = 0.1 + 0.9 * u1, sg[2] = sg[1] * (0.1 + 0.9 * u2);
    switch (kind) {
    case 1:
        sg[0] = 1 + 1e-3 * u1, sg[1] = 1, sg[2] = 1 - 1e-3 * u2;
        break;
    case 3:
        sg[1] = pow(10, -3 - 3 * u1), sg[2] = sg[1] * pow(10, -3 * u2);
        break;
    case 4:
        sg[2] = 1e-16 * u2;
        break;
    case 5:
        sg[1] = 1e-12 * u1, sg[2] = 1e-13 * u2;
        break;
    case 6:
        sg[2] = -sg[2];
        break;
    case 7:
        sg[2] = -sg[1] * (1 - pow(10, -6 - 8 * u2));
        break; /* s2 + s3 from 1e-6 to 1e-14 */
    case 8:
        scale = 1e-6;
        break;
    case 9:
        scale = 1e6;
        break;
    case 10:
        scale = pow(10, -150 + 300 * u1);
        break;
    }
    for (int i = 0; i < 3; i++)
        SV[i + 3 * i] = sg[i];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Vt[i + 3 * j] = V[j + 3 * i];
    mat3_mul(U, SV, T), mat3_mul(T, Vt, A);
    for (int i = 0; i < 9; i++)
        A[i] *= scale;
    if (kind == 0)
        for (int i = 0; i < 9; i++)
            A[i] = mlc_rng_normal(rng);
    /* qa: a quaternion of U Vᵀ (the answer when det = +1; some nearby rotation otherwise). */
    double qa[4], UVt[9];
    mat3_mul(U, Vt, UVt);
    double w = sqrt(fmax(0, 1 + UVt[0] + UVt[4] + UVt[8])) / 2;
    if (w > 0.1)
        qa[0] = w, qa[1] = (UVt[5] - UVt[7]) / (4 * w), qa[2] = (UVt[6] - UVt[2]) / (4 * w),
        qa[3] = (UVt[1] - UVt[3]) / (4 * w);
    else
        rand_quat(rng, qa);
    /* Warm start: cold, near the answer (a simulation step), random, 179° away, antipodal (the
     * same rotation), or unnormalized. "Stale" problems get only the far ones. */
    int ws = kind == 2 ? 2 + mlc_rng_below(rng, 2) : mlc_rng_below(rng, 6);
    switch (ws) {
    case 0:
        q[0] = 1, q[1] = q[2] = q[3] = 0;
        break;
    case 1:
        for (int k = 0; k < 4; k++)
            q[k] = qa[k] + 1e-3 * mlc_rng_normal(rng);
        break;
    case 2:
        rand_quat(rng, q);
        break;
    case 3: { /* qa ⊗ p, p a rotation by 179° about a random axis n */
        double n[4], p[4];
        rand_quat(rng, n);
        double c = cos(89.5 * MLC_PI / 180), sn = sin(89.5 * MLC_PI / 180);
        double nn = sqrt(n[1] * n[1] + n[2] * n[2] + n[3] * n[3]);
        p[0] = c, p[1] = sn * n[1] / nn, p[2] = sn * n[2] / nn, p[3] = sn * n[3] / nn;
        q[0] = qa[0] * p[0] - qa[1] * p[1] - qa[2] * p[2] - qa[3] * p[3];
        q[1] = qa[0] * p[1] + qa[1] * p[0] + qa[2] * p[3] - qa[3] * p[2];
        q[2] = qa[0] * p[2] - qa[1] * p[3] + qa[2] * p[0] + qa[3] * p[1];
        q[3] = qa[0] * p[3] + qa[1] * p[2] - qa[2] * p[1] + qa[3] * p[0];
        break;
    }
    case 4:
        for (int k = 0; k < 4; k++)
            q[k] = -qa[k];
        break;
    default:
        for (int k = 0; k < 4; k++)
            q[k] = 1e3 * qa[k] + mlc_rng_normal(rng);
        break;
    }
}

static void polar_should_match_svd_to_rounding(void **state) {
    (void)state;
    const double eps = DBL_EPSILON, C_exact = 16, C_svd = 100;
    /* Extended precision where long double has 64 mantissa bits AND the arithmetic really
     * carries them (under valgrind x87 long doubles are computed in double precision). */
    volatile long double one = 1, tiny = LDBL_EPSILON;
    const int extended = LDBL_MANT_DIG >= 64 && one + tiny != one;
    mlc_rng rng;
    mlc_rng_seed(&rng, 2024);
    enum { N = 4070, B = 37, LD = 40 }; /* batches of 37 (8 + 8 + 16 + 5 lanes) */
    double worst_x[KINDS] = {0}, worst_s[KINDS] = {0}, worst_tr[KINDS] = {0}, worst_orth = 0;
    double A[9 * B], q0[4 * B], q1[4 * B], R1[9 * B], qn[4 * B], Rn[9 * B];
    double Al[9 * LD], ql[4 * LD], Rl[9 * LD];
    /* The padding lanes (B..LD) are scratch for mlc_polar_lanes: give them defined values. */
    memset(Al, 0, sizeof Al), memset(ql, 0, sizeof ql), memset(Rl, 0, sizeof Rl);
    for (int t = 0; t < N; t += B) {
        for (int p = 0; p < B; p++)
            make_problem(&rng, (t + p) % KINDS, A + 9 * p, q0 + 4 * p);
        memcpy(q1, q0, sizeof q1), memcpy(qn, q0, sizeof qn);
        for (int p = 0; p < B; p++)
            mlc_polar(A + 9 * p, q1 + 4 * p, R1 + 9 * p);
        /* The batched forms give the same bits. */
        mlc_polar_n(B, A, qn, Rn, NULL);
        assert_memory_equal(R1, Rn, sizeof Rn);
        assert_memory_equal(q1, qn, sizeof qn);
        for (int p = 0; p < B; p++) {
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++)
                    Al[(3 * k + j) * LD + p] = A[9 * p + k + 3 * j];
            for (int k = 0; k < 4; k++)
                ql[k * LD + p] = q0[4 * p + k];
        }
        mlc_polar_lanes(B, Al, LD, ql, LD, Rl, LD, NULL);
        for (int p = 0; p < B; p++) {
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++)
                    assert_memory_equal(&Rl[(3 * k + j) * LD + p], &R1[9 * p + k + 3 * j],
                                        sizeof(double));
            for (int k = 0; k < 4; k++)
                assert_memory_equal(&ql[k * LD + p], &q1[4 * p + k], sizeof(double));
        }
        for (int p = 0; p < B; p++) {
            int kind = (t + p) % KINDS;
            const double *Ap = A + 9 * p, *R = R1 + 9 * p;
            double Rs[9], Rx[9], s[3], Rt[9], RtR[9], nA = 0, ds = 0, dx = 0, tr = 0;
            svd_rotation(Ap, Rs, s);
            ld_polar(Ap, Rx);
            for (int i = 0; i < 9; i++) {
                nA += Ap[i] * Ap[i], tr += R[i] * Ap[i];
                ds += (R[i] - Rs[i]) * (R[i] - Rs[i]), dx += (R[i] - Rx[i]) * (R[i] - Rx[i]);
            }
            nA = sqrt(nA), ds = sqrt(ds), dx = sqrt(dx);
            /* a proper rotation to rounding */
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    Rt[i + 3 * j] = R[j + 3 * i];
            mat3_mul(Rt, R, RtR);
            for (int i = 0; i < 9; i++)
                worst_orth = fmax(worst_orth, fabs(RtR[i] - (i % 4 == 0)) / eps);
            worst_orth = fmax(worst_orth, fabs(mat3_det(R) - 1) / eps);
            /* the optimal value, always */
            double etr = fabs(tr - (s[0] + s[1] + s[2])) / (eps * nA);
            worst_tr[kind] = fmax(worst_tr[kind], etr);
            if (!(etr <= 8)) fail_msg("%s: tr(RᵀA) off by %.3g ε‖A‖", kind_name[kind], etr);
            /* the rotation, where it is well defined */
            if (!(s[1] + s[2] > 1e-8 * s[0])) continue;
            double kappa = s[0] / (s[1] + s[2]), ex = dx / (eps * kappa), es = ds / (eps * kappa);
            worst_x[kind] = fmax(worst_x[kind], ex), worst_s[kind] = fmax(worst_s[kind], es);
            if (!(es <= C_svd) || (extended && !(ex <= C_exact)))
                fail_msg("%s (problem %d): ‖R − R_svd‖ = %.3g ε κ, ‖R − R_exact‖ = %.3g ε κ "
                         "(κ = %.3g, s = %.3g %.3g %.3g)",
                         kind_name[kind], t + p, es, ex, kappa, s[0], s[1], s[2]);
            /* A warm restart from the answer returns it, to rounding, in one Newton step
             * (well clear of the Jacobi fallback's gap threshold, 1e-9‖K‖, and of scales where
             * the cubic products of the Newton solve under- or overflow, ‖A‖ beyond ~1e±100,
             * which Jacobi answers). */
            double qw[4] = {q1[4 * p], q1[4 * p + 1], q1[4 * p + 2], q1[4 * p + 3]}, R2[9], d2 = 0;
            int work = mlc_polar(Ap, qw, R2);
            if (kappa < 1e6 && kind != 10) assert_int_equal(work, 1);
            for (int i = 0; i < 9; i++)
                d2 += (R2[i] - R[i]) * (R2[i] - R[i]);
            if (!(sqrt(d2) <= C_exact * eps * kappa))
                fail_msg("%s: restart moved R by %.3g ε κ", kind_name[kind],
                         sqrt(d2) / (eps * kappa));
        }
    }
    for (int k = 0; k < KINDS; k++)
        print_message("%-16s ‖R − R_exact‖ ≤ %5.2f ε κ, ‖R − R_svd‖ ≤ %6.2f ε κ, "
                      "|tr(RᵀA) − Σs| ≤ %5.2f ε‖A‖\n",
                      kind_name[k], worst_x[k], worst_s[k], worst_tr[k]);
    print_message("orthogonality and det: %.2f ε%s\n", worst_orth,
                  extended ? "" : " (no extended precision: exact bound not checked)");
    assert_true(worst_orth <= 8);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batched_should_equal_single_bit_for_bit),
        cmocka_unit_test(rotations_should_be_proper_and_optimal),
        cmocka_unit_test(polar_should_match_svd_to_rounding),
    };
    return cmocka_run_group_tests_name("polar", tests, NULL, NULL);
}
