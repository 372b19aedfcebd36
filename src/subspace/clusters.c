/* clusters.c: passive rotation clusters (docs/method.md §5; seed 002 Alg. 1) and contact samples
 * (docs/method.md §6).
 *
 * Clusters, in four phases:
 *  1. Features. Per tet, the mean over its 4 vertices of W[:,b] · λ_b^-2 for b = 1..w-1
 *     (002 Alg. 1: W Λ^-2 averaged onto the tets). The constant column b = 0 is dropped: λ_0 = 0
 *     would make its scale infinite, and it is the same on every tet, so it carries no
 *     information. Since the features are linear in W, averaging before or after scaling is the
 *     same; we scale after averaging.
 *  2. k-means++ seeding (Arthur & Vassilvitskii 2007) with the project's seeded generator, then
 *     Lloyd iterations (unweighted, as scipy's kmeans2 that the reference code uses) until no
 *     assignment changes or 100 iterations. An empty cluster is re-seeded with the point farthest
 *     from its own centre (taken from a cluster of more than one point), so none is ever empty.
 *  3. Every k-means cluster is split into face-connected components (tets sharing a triangle;
 *     the adjacency comes from sorting all 4·nt tet faces by their sorted vertex triples).
 *  4. A component whose volume is below 1% of its k-means cluster's volume is merged into the
 *     face-adjacent component it shares the most faces with (ties: smallest component number),
 *     preferring components that are not small themselves. Volume rather than tet count is the
 *     measure so that graded meshes behave like uniform ones. Labels are then renumbered in
 *     order of first tet.
 * Merging joins face-adjacent pieces, so every final cluster stays face-connected.
 *
 * Contact samples: farthest-point sampling (Euclidean) over the vertices of the boundary
 * triangles, starting from the lowest one. Ties are broken by the smallest vertex index so the
 * result depends only on the mesh.
 *
 * Everything here is setup work (run once per mesh); it allocates freely but deterministically.
 */
#include "clusters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KMEANS_MAX_ITER 100
#define MERGE_FRACTION 0.01

/* ---- Face adjacency ----------------------------------------------------------------------- */

/* One tet face: its sorted vertex triple and the tet it belongs to. */
typedef struct face_key {
    int v[3];
    int tet;
} face_key;

static int face_key_cmp(const void *pa, const void *pb) {
    const face_key *a = pa, *b = pb;
    for (int i = 0; i < 3; i++)
        if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
    return (a->tet > b->tet) - (a->tet < b->tet);
}

/* nbr[4e + f] = the tet sharing face f (the face opposite vertex f) of tet e, or -1 on the
 * boundary. Sorting the faces puts the (at most two, in a valid mesh) copies of a triangle next
 * to each other; a non-manifold triangle shared by more tets links them pairwise in sort order. */
static mlc_status face_neighbors(const mlc_mesh *mesh, int *nbr) {
    const int nt = mesh->nt;
    face_key *keys = mlc_malloc((size_t)4 * nt * sizeof *keys);
    if (!keys) return MLC_ENOMEM;
    for (int e = 0; e < nt; e++)
        for (int f = 0; f < 4; f++) {
            face_key *k = keys + 4 * e + f;
            for (int i = 0, n = 0; i < 4; i++)
                if (i != f) k->v[n++] = mesh->T[4 * e + i];
            mlc_sort3(k->v);
            /* Store 4e+f, the face's own slot, so a match can fill nbr directly. */
            k->tet = 4 * e + f;
        }
    qsort(keys, (size_t)4 * nt, sizeof *keys, face_key_cmp);
    for (int i = 0; i < 4 * nt; i++)
        nbr[i] = -1;
    for (int i = 0; i + 1 < 4 * nt; i++) {
        const face_key *a = keys + i, *b = keys + i + 1;
        if (a->v[0] == b->v[0] && a->v[1] == b->v[1] && a->v[2] == b->v[2]) {
            nbr[a->tet] = b->tet / 4;
            nbr[b->tet] = a->tet / 4;
            i++; /* each copy pairs once */
        }
    }
    mlc_free(keys);
    return MLC_OK;
}

/* ---- k-means ------------------------------------------------------------------------------ */

static double dist2(const double *a, const double *b, int d) {
    double s = 0;
    for (int i = 0; i < d; i++) {
        double t = a[i] - b[i];
        s += t * t;
    }
    return s;
}

/* Index of the nearest centre (ties: smallest index) and its squared distance. */
static int nearest(const double *x, const double *C, int k, int d, double *d2out) {
    int best = 0;
    double bd = dist2(x, C, d);
    for (int c = 1; c < k; c++) {
        double t = dist2(x, C + (size_t)c * d, d);
        if (t < bd) bd = t, best = c;
    }
    if (d2out) *d2out = bd;
    return best;
}

/* k-means++ seeding: first centre uniform, each next one drawn with probability ∝ D², the
 * squared distance to the nearest centre chosen so far. D2 is nt scratch. */
static void kmeanspp_seed(const double *P, int n, int d, int k, mlc_rng *rng, double *C,
                          double *D2) {
    int first = mlc_rng_below(rng, n);
    memcpy(C, P + (size_t)first * d, (size_t)d * sizeof *C);
    for (int i = 0; i < n; i++)
        D2[i] = dist2(P + (size_t)i * d, C, d);
    for (int c = 1; c < k; c++) {
        double total = 0;
        for (int i = 0; i < n; i++)
            total += D2[i];
        int pick;
        if (!(total > 0)) {
            /* Every point coincides with a centre: any choice is equivalent; the empty-cluster
             * repair in Lloyd's loop will still give every cluster a point. */
            pick = mlc_rng_below(rng, n);
        } else {
            double r = mlc_rng_uniform(rng) * total, acc = 0;
            pick = -1;
            for (int i = 0; i < n; i++) {
                if (D2[i] <= 0) continue;
                acc += D2[i];
                pick = i;
                if (acc > r) break;
            }
        }
        double *cc = C + (size_t)c * d;
        memcpy(cc, P + (size_t)pick * d, (size_t)d * sizeof *cc);
        for (int i = 0; i < n; i++) {
            double t = dist2(P + (size_t)i * d, cc, d);
            if (t < D2[i]) D2[i] = t;
        }
    }
}

/* Give every empty cluster the point farthest from its own centre among clusters with more
 * than one point (ties: smallest index). Needs k <= n. Returns 1 if anything moved. */
static int repair_empty(const double *P, int n, int d, int k, double *C, int *assign, int *count) {
    int moved = 0;
    for (int c = 0; c < k; c++) {
        if (count[c] > 0) continue;
        int far = -1;
        double fd = -1;
        for (int i = 0; i < n; i++) {
            if (count[assign[i]] <= 1) continue;
            double t = dist2(P + (size_t)i * d, C + (size_t)assign[i] * d, d);
            if (t > fd) fd = t, far = i;
        }
        /* k <= n guarantees a donor while some cluster is empty. */
        count[assign[far]]--;
        assign[far] = c;
        count[c] = 1;
        memcpy(C + (size_t)c * d, P + (size_t)far * d, (size_t)d * sizeof *C);
        moved = 1;
    }
    return moved;
}

/* Lloyd's algorithm from the seeded centres C (k×d). assign[n] out. Scratch: count[k]. */
static void kmeans_lloyd(const double *P, int n, int d, int k, double *C, int *assign, int *count) {
    for (int i = 0; i < n; i++)
        assign[i] = -1;
    for (int it = 0; it < KMEANS_MAX_ITER; it++) {
        int changed = 0;
        memset(count, 0, (size_t)k * sizeof *count);
        for (int i = 0; i < n; i++) {
            int c = nearest(P + (size_t)i * d, C, k, d, NULL);
            if (c != assign[i]) changed = 1, assign[i] = c;
            count[c]++;
        }
        if (repair_empty(P, n, d, k, C, assign, count)) changed = 1;
        if (!changed) break;
        /* Centres = means of their points (every cluster is non-empty here). */
        memset(C, 0, (size_t)k * d * sizeof *C);
        for (int i = 0; i < n; i++) {
            double *cc = C + (size_t)assign[i] * d;
            const double *p = P + (size_t)i * d;
            for (int j = 0; j < d; j++)
                cc[j] += p[j];
        }
        for (int c = 0; c < k; c++)
            for (int j = 0; j < d; j++)
                C[(size_t)c * d + j] /= count[c];
    }
}

/* ---- Components and merging --------------------------------------------------------------- */

/* Label face-connected components of equal `lab`; comp[nt] out, numbered by first tet.
 * Scratch: stack[nt]. Returns the number of components. */
static int split_components(int nt, const int *nbr, const int *lab, int *comp, int *stack) {
    for (int e = 0; e < nt; e++)
        comp[e] = -1;
    int nc = 0;
    for (int s = 0; s < nt; s++) {
        if (comp[s] >= 0) continue;
        int top = 0;
        stack[top++] = s;
        comp[s] = nc;
        while (top > 0) {
            int e = stack[--top];
            for (int f = 0; f < 4; f++) {
                int o = nbr[4 * e + f];
                if (o >= 0 && comp[o] < 0 && lab[o] == lab[e]) {
                    comp[o] = nc;
                    stack[top++] = o;
                }
            }
        }
        nc++;
    }
    return nc;
}

static double tet_volume(const mlc_mesh *mesh, int e) {
    const int *t = mesh->T + 4 * e;
    const double *a = mesh->X + 3 * t[0], *b = mesh->X + 3 * t[1], *c = mesh->X + 3 * t[2],
                 *d = mesh->X + 3 * t[3];
    double u[3], v[3], w[3];
    for (int i = 0; i < 3; i++)
        u[i] = b[i] - a[i], v[i] = c[i] - a[i], w[i] = d[i] - a[i];
    double det = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
                 u[2] * (v[0] * w[1] - v[1] * w[0]);
    return fabs(det) / 6.0;
}

/* Merge small components (phase 4) and write the final labels. km[nt] are the k-means labels,
 * comp[nt] the components (nc of them). */
static mlc_status merge_small(const mlc_mesh *mesh, const mlc_fem *fem, const int *nbr, int k,
                              const int *km, const int *comp, int nc, int *label, int *ncluster) {
    const int nt = mesh->nt;
    mlc_status st = MLC_ENOMEM;
    double *cvol = mlc_calloc((size_t)nc, sizeof *cvol); /* component volume */
    double *kvol = mlc_calloc((size_t)k, sizeof *kvol);  /* k-means cluster volume */
    int *ckm = mlc_malloc((size_t)nc * sizeof *ckm);     /* k-means label of a component */
    int *parent = mlc_malloc((size_t)nc * sizeof *parent);
    unsigned char *small = mlc_calloc((size_t)nc, 1);
    int *shared = mlc_calloc((size_t)nc, sizeof *shared); /* faces shared with each root */
    int *touched = mlc_malloc((size_t)nc * sizeof *touched);
    int *members = mlc_malloc((size_t)nt * sizeof *members); /* tets grouped by component */
    int *start = mlc_calloc((size_t)nc + 1, sizeof *start);
    if (!cvol || !kvol || !ckm || !parent || !small || !shared || !touched || !members || !start)
        goto done;

    const int use_fem = fem && fem->vol && fem->nt == nt;
    for (int c = 0; c < nc; c++)
        parent[c] = c;
    for (int e = 0; e < nt; e++) {
        double v = use_fem ? fem->vol[e] : tet_volume(mesh, e);
        cvol[comp[e]] += v;
        kvol[km[e]] += v;
        ckm[comp[e]] = km[e];
        start[comp[e] + 1]++;
    }
    for (int c = 0; c < nc; c++)
        start[c + 1] += start[c];
    {
        /* Bucket the tets by component (counting sort), so each component's faces are cheap
         * to walk. `touched` doubles as the fill cursor here. */
        for (int c = 0; c < nc; c++)
            touched[c] = start[c];
        for (int e = 0; e < nt; e++)
            members[touched[comp[e]]++] = e;
    }
    for (int c = 0; c < nc; c++)
        small[c] = cvol[c] < MERGE_FRACTION * kvol[ckm[c]];

    /* Components are visited in first-tet order; a merged component points at its target. */
    for (int c = 0; c < nc; c++) {
        if (!small[c]) continue;
        int ntouched = 0;
        for (int m = start[c]; m < start[c + 1]; m++) {
            int e = members[m];
            for (int f = 0; f < 4; f++) {
                int o = nbr[4 * e + f];
                if (o < 0) continue;
                int r = mlc_uf_find(parent, comp[o]);
                if (r == c) continue;
                if (shared[r]++ == 0) touched[ntouched++] = r;
            }
        }
        /* Best target: most shared faces, non-small roots first, then smallest number. */
        int best = -1;
        for (int pass = 0; pass < 2 && best < 0; pass++)
            for (int t = 0; t < ntouched; t++) {
                int r = touched[t];
                if (pass == 0 && small[r]) continue;
                if (best < 0 || shared[r] > shared[best] || (shared[r] == shared[best] && r < best))
                    best = r;
            }
        for (int t = 0; t < ntouched; t++)
            shared[touched[t]] = 0;
        /* No neighbour only if the component is the whole mesh, which is never small. */
        if (best >= 0) parent[c] = best;
    }

    /* Renumber roots in order of first tet. `touched` now maps root -> final label. */
    for (int c = 0; c < nc; c++)
        touched[c] = -1;
    int n = 0;
    for (int e = 0; e < nt; e++) {
        int r = mlc_uf_find(parent, comp[e]);
        if (touched[r] < 0) touched[r] = n++;
        label[e] = touched[r];
    }
    *ncluster = n;
    st = MLC_OK;
done:
    mlc_free(cvol);
    mlc_free(kvol);
    mlc_free(ckm);
    mlc_free(parent);
    mlc_free(small);
    mlc_free(shared);
    mlc_free(touched);
    mlc_free(members);
    mlc_free(start);
    return st;
}

/* ---- Public: passive clusters ------------------------------------------------------------- */

mlc_status mlc_clusters_passive(const mlc_mesh *mesh, const mlc_fem *fem, const double *W, int w,
                                const double *eval, int k, uint64_t seed, int *label, int *ncluster,
                                mlc_err *err) {
    /* check */
    if (!mesh || !label || !ncluster || mesh->nt <= 0 || !mesh->T)
        return mlc_errf(err, MLC_EINVAL, "clusters: empty mesh");
    if (k < 1)
        return mlc_errf(err, MLC_EINVAL,
                        "clusters: the number of clusters is %d; set "
                        "subspace.passive_clusters to 1 or more",
                        k);
    if (w < 1) return mlc_errf(err, MLC_EINVAL, "clusters: %d skinning weights (need >= 1)", w);
    const int nt = mesh->nt, nv = mesh->nv, d = w - 1;
    if (k > nt) k = nt;
    *ncluster = 0;
    if (d == 0 || k == 1) {
        /* No features or a single cluster: the mesh is one connected component (finalize
         * guarantees it), so one label is already face-connected. */
        for (int e = 0; e < nt; e++)
            label[e] = 0;
        *ncluster = 1;
        return MLC_OK;
    }
    if (!W || !eval) return mlc_errf(err, MLC_EINVAL, "clusters: weights or eigenvalues missing");
    for (int b = 1; b < w; b++)
        if (!(eval[b] > 0) || !isfinite(eval[b]))
            return mlc_errf(err, MLC_EINVAL,
                            "clusters: skinning eigenvalue %d is %g; the non-constant weights "
                            "need positive finite eigenvalues (is the mesh connected?)",
                            b, eval[b]);

    double *P = mlc_malloc((size_t)nt * d * sizeof *P); /* features, d per tet */
    if (!P) return mlc_errf(err, MLC_ENOMEM, "clusters: out of memory (%d tets)", nt);
    for (int e = 0; e < nt; e++) {
        const int *t = mesh->T + 4 * e;
        for (int b = 1; b < w; b++) {
            const double *Wb = W + (size_t)b * nv;
            double s = 0.25 * (Wb[t[0]] + Wb[t[1]] + Wb[t[2]] + Wb[t[3]]);
            P[(size_t)e * d + (b - 1)] = s / (eval[b] * eval[b]);
        }
    }
    mlc_status st = mlc_clusters_of_features(mesh, fem, P, d, k, seed, label, ncluster, err);
    mlc_free(P);
    return st;
}

mlc_status mlc_clusters_of_features(const mlc_mesh *mesh, const mlc_fem *fem, const double *P,
                                    int d, int k, uint64_t seed, int *label, int *ncluster,
                                    mlc_err *err) {
    const int nt = mesh->nt;
    if (k > nt) k = nt;
    *ncluster = 0;
    for (size_t i = 0; i < (size_t)nt * d; i++)
        if (!isfinite(P[i]))
            return mlc_errf(err, MLC_ENUMERIC,
                            "clusters: non-finite skinning weight feature "
                            "on tet %d",
                            (int)(i / d));

    /* workspace */
    mlc_status st = MLC_OK;
    double *C = mlc_malloc((size_t)k * d * sizeof *C); /* centres */
    double *D2 = mlc_malloc((size_t)nt * sizeof *D2);
    int *km = mlc_malloc((size_t)nt * sizeof *km); /* k-means labels */
    int *count = mlc_malloc((size_t)k * sizeof *count);
    int *nbr = mlc_malloc((size_t)4 * nt * sizeof *nbr);
    int *comp = mlc_malloc((size_t)nt * sizeof *comp);
    int *stack = mlc_malloc((size_t)nt * sizeof *stack);
    if (!C || !D2 || !km || !count || !nbr || !comp || !stack) {
        st = MLC_ENOMEM;
        goto fail;
    }

    mlc_rng rng;
    mlc_rng_seed(&rng, seed);
    kmeanspp_seed(P, nt, d, k, &rng, C, D2);
    kmeans_lloyd(P, nt, d, k, C, km, count);

    if ((st = face_neighbors(mesh, nbr)) != MLC_OK) goto fail;
    int nc = split_components(nt, nbr, km, comp, stack);
    st = merge_small(mesh, fem, nbr, k, km, comp, nc, label, ncluster);

fail:
    if (st == MLC_ENOMEM) mlc_errf(err, st, "clusters: out of memory (%d tets)", nt);
    mlc_free(C);
    mlc_free(D2);
    mlc_free(km);
    mlc_free(count);
    mlc_free(nbr);
    mlc_free(comp);
    mlc_free(stack);
    return st;
}

mlc_status mlc_clusters_face_neighbors(const mlc_mesh *mesh, int *nbr, mlc_err *err) {
    if (face_neighbors(mesh, nbr) != MLC_OK)
        return mlc_errf(err, MLC_ENOMEM, "clusters: out of memory (%d tets)", mesh->nt);
    return MLC_OK;
}

mlc_status mlc_clusters_connect(const mlc_mesh *mesh, const mlc_fem *fem, const int *nbr, int k,
                                const int *km, int *label, int *ncluster, mlc_err *err) {
    const int nt = mesh->nt;
    int *comp = mlc_malloc((size_t)nt * sizeof *comp);
    int *stack = mlc_malloc((size_t)nt * sizeof *stack);
    mlc_status st = MLC_ENOMEM;
    if (comp && stack) {
        int nc = split_components(nt, nbr, km, comp, stack);
        st = merge_small(mesh, fem, nbr, k, km, comp, nc, label, ncluster);
    }
    mlc_free(comp);
    mlc_free(stack);
    if (st == MLC_ENOMEM) return mlc_errf(err, st, "clusters: out of memory (%d tets)", nt);
    return st;
}

/* ---- Public: contact samples -------------------------------------------------------------- */

/* Farthest-point steps from `cur` until n reaches `count`, choosing among the vertices with
 * allowed[v] (NULL: all); dist is the squared distance of every boundary vertex to the
 * nearest chosen sample (-1: not boundary, or chosen), with the height difference weighted:
 * dx² + wy2·dy² + dz². Returns the new count. */
static int farthest_points(const mlc_mesh *mesh, double *dist, const unsigned char *allowed,
                           double wy2, int cur, int n, int count, int *samples) {
    const int nv = mesh->nv;
    while (cur >= 0 && n < count) {
        samples[n++] = cur;
        dist[cur] = -1;
        const double *p = mesh->X + 3 * cur;
        int next = -1;
        for (int i = 0; i < nv; i++) {
            if (dist[i] < 0) continue;
            const double *q = mesh->X + 3 * i;
            double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
            double t = dx * dx + wy2 * dy * dy + dz * dz;
            if (t < dist[i]) dist[i] = t;
            /* Strict > keeps the smallest index among equally far vertices. */
            if ((!allowed || allowed[i]) && (next < 0 || dist[i] > dist[next])) next = i;
        }
        cur = next;
    }
    return n;
}

/* The next sample of the whole-surface stage: the boundary vertex farthest from every chosen
 * one (smallest index among ties), or -1. */
static int farthest_remaining(const double *dist, int nv) {
    int next = -1;
    for (int i = 0; i < nv; i++)
        if (dist[i] >= 0 && (next < 0 || dist[i] > dist[next])) next = i;
    return next;
}

/* The vertex of `reach` farthest from every sample (smallest index among ties), or -1. */
static int farthest_reach(const double *dist, const unsigned char *reach, int nv) {
    int next = -1;
    for (int i = 0; i < nv; i++)
        if (reach[i] && dist[i] >= 0 && (next < 0 || dist[i] > dist[next])) next = i;
    return next;
}

mlc_status mlc_contact_samples(const mlc_mesh *mesh, int count, double band, int *samples,
                               int *nsamples, mlc_err *err) {
    return mlc_contact_samples_cover(mesh, count, band, 0.0, count, samples, nsamples, NULL, err);
}

mlc_status mlc_contact_samples_cover(const mlc_mesh *mesh, int count, double band, double spacing,
                                     int max_count, int *samples, int *nsamples, double *covered,
                                     mlc_err *err) {
    if (!mesh || !nsamples || count < 0 || (count > 0 && !samples) || !(band >= 0) ||
        !(spacing >= 0) || (spacing > 0 && (max_count < count || !samples)))
        return mlc_errf(err, MLC_EINVAL, "contact samples: invalid arguments (count %d)", count);
    *nsamples = 0;
    if (covered) *covered = 0;
    if ((count == 0 && spacing == 0) || mesh->nf == 0) return MLC_OK;
    const int nv = mesh->nv;
    /* dist[v] = squared distance to the nearest sample for boundary vertices, -1 otherwise
     * (and -1 again once chosen, so a chosen vertex is never picked twice even if two
     * vertices coincide). */
    double *dist = mlc_malloc((size_t)nv * sizeof *dist);
    unsigned char *low = band > 0 ? mlc_calloc((size_t)nv, 1) : NULL;
    if (!dist || (band > 0 && !low)) {
        mlc_free(dist);
        mlc_free(low);
        return mlc_errf(err, MLC_ENOMEM, "contact samples: out of memory");
    }
    for (int i = 0; i < nv; i++)
        dist[i] = -1;
    for (int i = 0; i < 3 * mesh->nf; i++)
        dist[mesh->F[i]] = HUGE_VAL;

    int cur = -1;
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (int i = 0; i < nv; i++) {
        if (dist[i] < 0) continue;
        if (cur < 0 || mesh->X[3 * i + 1] < mesh->X[3 * cur + 1]) cur = i;
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], mesh->X[3 * i + k]), hi[k] = fmax(hi[k], mesh->X[3 * i + k]);
    }
    /* With the ground in view (band > 0), a sample protects the vertices beside it far
     * better than those above or below it: a tail tip whose only sample sat on its top edge
     * sank by its own thickness (3.3% of the extent) whatever the sample count. Heights count
     * MLC_CONTACT_HEIGHT_WEIGHT times over in the distance. */
    const double wy2 = band > 0 ? MLC_CONTACT_HEIGHT_WEIGHT * MLC_CONTACT_HEIGHT_WEIGHT : 1.0;
    int n = 0;
    unsigned char *reach = band > 0 && spacing > 0 ? mlc_calloc((size_t)nv, 1) : NULL;
    if (band > 0 && spacing > 0 && !reach) {
        mlc_free(dist), mlc_free(low);
        return mlc_errf(err, MLC_ENOMEM, "contact samples: out of memory");
    }
    if (band > 0) {
        /* Stage 1: the soles (band). Stage 2: the surface that faces down, where a body
         * tilted by up to 60° (the credible range) can touch the ground: vertices whose
         * area-weighted normal has n_y < −1/2. */
        double extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
        const double ymin = mesh->X[3 * cur + 1];
        double *nrm = mlc_calloc(3 * (size_t)nv, sizeof *nrm); /* Σ of the faces' normals */
        if (!nrm) {
            mlc_free(dist), mlc_free(low), mlc_free(reach);
            return mlc_errf(err, MLC_ENOMEM, "contact samples: out of memory");
        }
        for (int f = 0; f < mesh->nf; f++) { /* area-weighted normals: cross products */
            const int *t = mesh->F + 3 * f;
            const double *a = mesh->X + 3 * t[0], *b = mesh->X + 3 * t[1], *c = mesh->X + 3 * t[2];
            double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double fn[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                            u[0] * v[1] - u[1] * v[0]};
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++)
                    nrm[3 * t[k] + j] += fn[j];
        }
        const double shares[2] = {MLC_CONTACT_BAND_SHARE, MLC_CONTACT_BAND_SHARE_WIDE};
        int goal = 0;
        for (int stage = 0; stage < 2 && cur >= 0; stage++) {
            double top = ymin + band * extent;
            for (int i = 0; i < nv; i++) {
                const double *m = nrm + 3 * i; /* n_y < −|n|/2 */
                low[i] = dist[i] >= 0 &&
                         (stage == 0 ? mesh->X[3 * i + 1] <= top
                                     : m[1] < 0 && 4 * m[1] * m[1] >
                                                       m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
            }
            if (reach)
                for (int i = 0; i < nv; i++)
                    reach[i] |= low[i];
            goal += (int)(shares[stage] * count + 0.5);
            n = farthest_points(mesh, dist, low, wy2, cur, n, MLC_MIN(MLC_MAX(goal, n + 1), count),
                                samples);
            cur = farthest_remaining(dist, nv);
        }
        mlc_free(nrm);
    }
    int total = count;
    if (reach) {
        /* The cover: the soles and the surface facing down, until every vertex of theirs is
         * within the spacing of a sample (weighted as the distances are) or the cap. The
         * whole-surface quarter then comes on top of what the cover took. */
        double extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
        const double r2 = spacing * extent * spacing * extent;
        int added = 0, next;
        while (n < max_count && (next = farthest_reach(dist, reach, nv)) >= 0 && dist[next] > r2) {
            n = farthest_points(mesh, dist, NULL, wy2, next, n, n + 1, samples);
            added++;
        }
        next = farthest_reach(dist, reach, nv);
        if (covered) *covered = next >= 0 ? sqrt(fmax(dist[next], 0)) / extent : 0;
        total = MLC_MIN(count + added, max_count);
        cur = farthest_remaining(dist, nv);
    }
    /* Stage 3 (or the only stage): the whole surface, continuing the same distances. */
    n = farthest_points(mesh, dist, NULL, wy2, cur, n, total, samples);
    *nsamples = n;
    mlc_free(dist);
    mlc_free(low);
    mlc_free(reach);
    return MLC_OK;
}
