/* mesh.c: validation and repair shared by every reader, boundary extraction, the preparation
 * transform (METHOD.md §1), statistics and checksums. File formats live in mesh_read.c. */
#include "modalloco/mesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void mlc_mesh_free(mlc_mesh *mesh) {
    if (!mesh) return;
    mlc_free(mesh->X);
    mlc_free(mesh->T);
    mlc_free(mesh->F);
    memset(mesh, 0, sizeof *mesh);
}

static double signed_volume6(const double *X, const int *t) {
    const double *a = X + 3 * t[0], *b = X + 3 * t[1], *c = X + 3 * t[2], *d = X + 3 * t[3];
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
        w[k] = d[k] - a[k];
    }
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
           u[2] * (v[0] * w[1] - v[1] * w[0]);
}

static void bbox(const mlc_mesh *m, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; k++) lo[k] = hi[k] = m->nv > 0 ? m->X[k] : 0.0;
    for (int i = 0; i < m->nv; i++)
        for (int k = 0; k < 3; k++) {
            double x = m->X[3 * i + k];
            if (x < lo[k]) lo[k] = x;
            if (x > hi[k]) hi[k] = x;
        }
}

/* ---- Boundary extraction ---------------------------------------------------------------- */
typedef struct face_rec {
    int key[3]; /* sorted vertex indices */
    int v[3];   /* outward winding */
} face_rec;

static int face_cmp(const void *pa, const void *pb) {
    const face_rec *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
    return 0;
}

static void sort3(int *k) {
    int t;
    if (k[0] > k[1]) t = k[0], k[0] = k[1], k[1] = t;
    if (k[1] > k[2]) t = k[1], k[1] = k[2], k[2] = t;
    if (k[0] > k[1]) t = k[0], k[0] = k[1], k[1] = t;
}

/* Faces of a positively oriented tet (a,b,c,d), each wound so its normal points out of it. */
static const int tet_faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

static mlc_status extract_boundary(mlc_mesh *m, const char *source, mlc_err *err) {
    size_t nfaces = 4 * (size_t)m->nt;
    face_rec *f = mlc_malloc(nfaces * sizeof *f);
    if (!f) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory extracting the boundary", source);
    for (int e = 0; e < m->nt; e++)
        for (int j = 0; j < 4; j++) {
            face_rec *r = f + 4 * (size_t)e + j;
            for (int k = 0; k < 3; k++) r->v[k] = r->key[k] = m->T[4 * e + tet_faces[j][k]];
            sort3(r->key);
        }
    qsort(f, nfaces, sizeof *f, face_cmp);
    size_t nb = 0;
    for (size_t i = 0; i < nfaces;) {
        size_t j = i + 1;
        while (j < nfaces && face_cmp(f + i, f + j) == 0) j++;
        if (j - i > 2) {
            int a = f[i].key[0], b = f[i].key[1], c = f[i].key[2];
            mlc_free(f);
            return mlc_errf(err, MLC_EINVAL,
                            "%s: the triangle (%d, %d, %d) is shared by more than two tets; the "
                            "mesh is not a valid tetrahedralization (re-mesh it, e.g. with tetgen)",
                            source, a, b, c);
        }
        if (j - i == 1) f[nb++] = f[i];
        i = j;
    }
    mlc_free(m->F);
    m->F = mlc_malloc((nb ? nb : 1) * 3 * sizeof(int));
    if (!m->F) {
        mlc_free(f);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory extracting the boundary", source);
    }
    for (size_t i = 0; i < nb; i++)
        for (int k = 0; k < 3; k++) m->F[3 * i + k] = f[i].v[k];
    m->nf = (int)nb;
    mlc_free(f);
    return MLC_OK;
}

/* ---- Connected components (union-find over vertices of each tet) ------------------------- */
static int uf_find(int *p, int x) {
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

static int count_components(const mlc_mesh *m, int *parent) {
    for (int i = 0; i < m->nv; i++) parent[i] = i;
    for (int e = 0; e < m->nt; e++) {
        int r0 = uf_find(parent, m->T[4 * e]);
        for (int k = 1; k < 4; k++) {
            int r = uf_find(parent, m->T[4 * e + k]);
            if (r != r0) parent[r] = r0;
        }
    }
    int n = 0;
    for (int i = 0; i < m->nv; i++) n += uf_find(parent, i) == i;
    return n;
}

mlc_status mlc_mesh_finalize(mlc_mesh *m, const char *source, mlc_mesh_report *report,
                             mlc_err *err) {
    mlc_mesh_report local;
    if (!report) report = &local;
    report->flipped_tets = report->dropped_vertices = 0;
    report->components = 0;
    if (!source) source = "mesh";
    if (m->nv < 4 || m->nt < 1)
        return mlc_errf(err, MLC_EINVAL, "%s: the mesh has %d vertices and %d tets; at least 4 "
                        "vertices and 1 tet are needed", source, m->nv, m->nt);
    for (int i = 0; i < 3 * m->nv; i++)
        if (!isfinite(m->X[i]))
            return mlc_errf(err, MLC_EINVAL, "%s: vertex %d has a non-finite coordinate (NaN or "
                            "Inf); fix the file", source, i / 3);
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * e;
        for (int k = 0; k < 4; k++) {
            if (t[k] < 0 || t[k] >= m->nv)
                return mlc_errf(err, MLC_EINVAL, "%s: tet %d refers to vertex %d, but vertices "
                                "are numbered 0..%d", source, e, t[k], m->nv - 1);
            for (int j = 0; j < k; j++)
                if (t[j] == t[k])
                    return mlc_errf(err, MLC_EINVAL, "%s: tet %d uses vertex %d twice; remove "
                                    "the degenerate tet", source, e, t[k]);
        }
    }
    /* Zero-volume threshold relative to the bounding box, so it is unit-independent. */
    double lo[3], hi[3];
    bbox(m, lo, hi);
    double ext = MLC_MAX(hi[0] - lo[0], MLC_MAX(hi[1] - lo[1], hi[2] - lo[2]));
    double thr = 1e-12 * ext * ext * ext;
    report->min_volume_threshold = thr;
    for (int e = 0; e < m->nt; e++) {
        int *t = m->T + 4 * e;
        double v6 = signed_volume6(m->X, t);
        if (fabs(v6) / 6.0 <= thr)
            return mlc_errf(err, MLC_EINVAL, "%s: tet %d (vertices %d %d %d %d) has volume %.3g, "
                            "at or below the threshold %.3g (1e-12 × largest extent³); remove or "
                            "re-mesh it", source, e, t[0], t[1], t[2], t[3], fabs(v6) / 6.0, thr);
        if (v6 < 0) {
            int tmp = t[2];
            t[2] = t[3];
            t[3] = tmp;
            report->flipped_tets++;
        }
    }
    /* Drop unreferenced vertices, keeping the order of the rest. */
    int *map = mlc_malloc((size_t)m->nv * sizeof(int));
    if (!map) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", source);
    for (int i = 0; i < m->nv; i++) map[i] = -1;
    for (int i = 0; i < 4 * m->nt; i++) map[m->T[i]] = 0;
    int nv = 0;
    for (int i = 0; i < m->nv; i++)
        if (map[i] == 0) {
            map[i] = nv;
            for (int k = 0; k < 3; k++) m->X[3 * nv + k] = m->X[3 * i + k];
            nv++;
        }
    report->dropped_vertices = m->nv - nv;
    for (int i = 0; i < 4 * m->nt; i++) m->T[i] = map[m->T[i]];
    m->nv = nv;
    int nc = count_components(m, map);
    mlc_free(map);
    report->components = nc;
    if (nc != 1)
        return mlc_errf(err, MLC_EINVAL, "%s: the mesh has %d connected components; the method "
                        "needs one body (keep the largest component or join the parts)", source,
                        nc);
    return extract_boundary(m, source, err);
}

/* ---- Transform ------------------------------------------------------------------------- */
mlc_transform mlc_mesh_prepare_transform(const mlc_mesh *m, int normalize, double extent) {
    double lo[3], hi[3];
    bbox(m, lo, hi);
    mlc_transform tf;
    double ext = MLC_MAX(hi[0] - lo[0], MLC_MAX(hi[1] - lo[1], hi[2] - lo[2]));
    tf.scale = (normalize && ext > 0) ? extent / ext : 1.0;
    tf.translate[0] = -tf.scale * 0.5 * (lo[0] + hi[0]);
    tf.translate[1] = -tf.scale * lo[1];
    tf.translate[2] = -tf.scale * 0.5 * (lo[2] + hi[2]);
    return tf;
}

void mlc_mesh_apply_transform(mlc_mesh *m, mlc_transform tf) {
    for (int i = 0; i < m->nv; i++)
        for (int k = 0; k < 3; k++) m->X[3 * i + k] = tf.scale * m->X[3 * i + k] + tf.translate[k];
}

/* ---- Statistics ------------------------------------------------------------------------- */
static void cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

void mlc_mesh_compute_stats(const mlc_mesh *m, mlc_mesh_stats *s) {
    memset(s, 0, sizeof *s);
    bbox(m, s->bbox_min, s->bbox_max);
    s->min_tet_volume = HUGE_VAL;
    s->max_tet_volume = 0;
    s->min_dihedral_deg = 180;
    s->max_dihedral_deg = 0;
    /* Edges (i,j) of a tet and the opposite edge (k,l): the dihedral angle at edge (i,j) is the
     * angle between the two faces (i,j,k) and (i,j,l). */
    static const int edges[6][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2},
                                    {1, 2, 0, 3}, {1, 3, 0, 2}, {2, 3, 0, 1}};
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->T + 4 * e;
        double v = fabs(signed_volume6(m->X, t)) / 6.0;
        s->volume += v;
        if (v < s->min_tet_volume) s->min_tet_volume = v;
        if (v > s->max_tet_volume) s->max_tet_volume = v;
        for (int q = 0; q < 6; q++) {
            const double *a = m->X + 3 * t[edges[q][0]], *b = m->X + 3 * t[edges[q][1]];
            const double *c = m->X + 3 * t[edges[q][2]], *d = m->X + 3 * t[edges[q][3]];
            double ab[3], ac[3], ad[3], n1[3], n2[3];
            for (int k = 0; k < 3; k++) {
                ab[k] = b[k] - a[k];
                ac[k] = c[k] - a[k];
                ad[k] = d[k] - a[k];
            }
            cross(ab, ac, n1);
            cross(ab, ad, n2);
            double l1 = sqrt(n1[0] * n1[0] + n1[1] * n1[1] + n1[2] * n1[2]);
            double l2 = sqrt(n2[0] * n2[0] + n2[1] * n2[1] + n2[2] * n2[2]);
            if (l1 == 0 || l2 == 0) continue;
            double cs = (n1[0] * n2[0] + n1[1] * n2[1] + n1[2] * n2[2]) / (l1 * l2);
            cs = cs > 1 ? 1 : cs < -1 ? -1 : cs;
            double ang = acos(cs) * 180.0 / MLC_PI;
            if (ang < s->min_dihedral_deg) s->min_dihedral_deg = ang;
            if (ang > s->max_dihedral_deg) s->max_dihedral_deg = ang;
        }
    }
    if (m->nt == 0) s->min_tet_volume = 0;
}

uint64_t mlc_mesh_checksum(const mlc_mesh *m) {
    uint64_t h = MLC_HASH_INIT;
    h = mlc_hash64(h, &m->nv, sizeof m->nv);
    h = mlc_hash64(h, &m->nt, sizeof m->nt);
    if (m->X) h = mlc_hash64(h, m->X, 3 * (size_t)m->nv * sizeof(double));
    if (m->T) h = mlc_hash64(h, m->T, 4 * (size_t)m->nt * sizeof(int));
    return h;
}

mlc_status mlc_mesh_surface(const mlc_mesh *m, int *nsv, int **sv, int **sf) {
    *nsv = 0;
    *sv = *sf = NULL;
    int *map = mlc_malloc((size_t)(m->nv ? m->nv : 1) * sizeof(int));
    int *faces = mlc_malloc((size_t)(m->nf ? m->nf : 1) * 3 * sizeof(int));
    if (!map || !faces) goto fail;
    for (int i = 0; i < m->nv; i++) map[i] = -1;
    for (int i = 0; i < 3 * m->nf; i++) map[m->F[i]] = 0;
    int n = 0;
    for (int i = 0; i < m->nv; i++)
        if (map[i] == 0) map[i] = n++;
    int *verts = mlc_malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!verts) goto fail;
    for (int i = 0; i < m->nv; i++)
        if (map[i] >= 0) verts[map[i]] = i;
    for (int i = 0; i < 3 * m->nf; i++) faces[i] = map[m->F[i]];
    mlc_free(map);
    *nsv = n;
    *sv = verts;
    *sf = faces;
    return MLC_OK;
fail:
    mlc_free(map);
    mlc_free(faces);
    return MLC_ENOMEM;
}
