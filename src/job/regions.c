/* regions.c: body regions from label files, the mesh file or the skinning weights, and the
 * per-tet materials of material.regions (regions.h). */
#include "regions.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusters.h"
#include "subspace.h"

static int mlc_regions_find(const mlc_regions *r, int label);

#define LABEL_FILE_MAX ((size_t)256 << 20)

void mlc_regions_free(mlc_regions *r) {
    if (!r) return;
    mlc_free(r->tet_region);
    mlc_free(r->label);
    memset(r, 0, sizeof *r);
}

static int int_cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

mlc_status mlc_regions_from_labels(int nt, const int *tet_label, const char *source,
                                   mlc_regions *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    int *sorted = mlc_malloc((size_t)(nt > 0 ? nt : 1) * sizeof(int));
    out->tet_region = mlc_malloc((size_t)(nt > 0 ? nt : 1) * sizeof(int));
    if (!sorted || !out->tet_region) {
        mlc_free(sorted);
        mlc_regions_free(out);
        return mlc_errf(err, MLC_ENOMEM, "regions: out of memory (%d tets)", nt);
    }
    memcpy(sorted, tet_label, (size_t)nt * sizeof(int));
    qsort(sorted, (size_t)nt, sizeof(int), int_cmp);
    int k = 0;
    for (int i = 0; i < nt; i++)
        if (i == 0 || sorted[i] != sorted[k - 1]) sorted[k++] = sorted[i];
    out->label = mlc_realloc(sorted, (size_t)(k > 0 ? k : 1) * sizeof(int));
    if (!out->label) {
        mlc_free(sorted);
        mlc_regions_free(out);
        return mlc_errf(err, MLC_ENOMEM, "regions: out of memory");
    }
    out->nt = nt;
    out->nregions = k;
    for (int e = 0; e < nt; e++) /* binary search: the label's rank */
        out->tet_region[e] = mlc_regions_find(out, tet_label[e]);
    snprintf(out->source, sizeof out->source, "%s", source);
    return MLC_OK;
}

/* One region covering nt tets (source "none", label 0). */
static mlc_status mlc_regions_single(int nt, mlc_regions *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    out->tet_region = mlc_calloc((size_t)(nt > 0 ? nt : 1), sizeof(int));
    out->label = mlc_calloc(1, sizeof(int));
    if (!out->tet_region || !out->label) {
        mlc_regions_free(out);
        return mlc_errf(err, MLC_ENOMEM, "regions: out of memory (%d tets)", nt);
    }
    out->nt = nt;
    out->nregions = 1;
    snprintf(out->source, sizeof out->source, "none");
    return MLC_OK;
}

/* The region index of a user label, or -1. */
static int mlc_regions_find(const mlc_regions *r, int label) {
    int lo = 0, hi = r->nregions;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->label[mid] < label)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nregions && r->label[lo] == label ? lo : -1;
}

/* ---- label files ------------------------------------------------------------------------ */

/* Parse "one integer a line, # comments, blank lines ignored" into *labels (*n of them). */
static mlc_status parse_labels(const char *path, const char *buf, size_t size, int **labels, int *n,
                               mlc_err *err) {
    size_t cap = 1024;
    int count = 0;
    int *L = mlc_malloc(cap * sizeof(int));
    if (!L) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    long line = 0;
    for (size_t p = 0; p < size;) {
        size_t end = p;
        while (end < size && buf[end] != '\n')
            end++;
        line++;
        size_t stop = p; /* the line up to a comment */
        while (stop < end && buf[stop] != '#')
            stop++;
        size_t a = p, b = stop;
        while (a < b && isspace((unsigned char)buf[a]))
            a++;
        while (b > a && isspace((unsigned char)buf[b - 1]))
            b--;
        if (a < b) {
            char tok[64];
            size_t len = b - a;
            snprintf(tok, sizeof tok, "%.*s", (int)(len < 60 ? len : 60), buf + a);
            char *rest = NULL;
            errno = 0;
            long v = len < sizeof tok ? strtol(tok, &rest, 10) : 0;
            if (len >= sizeof tok || rest == tok || *rest || errno || v < INT_MIN || v > INT_MAX) {
                mlc_free(L);
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected one integer label on the line, found '%s'; "
                                "write one integer per tet (or per vertex), '#' starts a "
                                "comment",
                                path, line, tok);
            }
            if ((size_t)count == cap) {
                int *T = count < INT_MAX / 2 ? mlc_realloc(L, 2 * cap * sizeof(int)) : NULL;
                if (!T) {
                    mlc_free(L);
                    return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
                }
                L = T, cap *= 2;
            }
            L[count++] = (int)v;
        }
        p = end + 1;
    }
    *labels = L;
    *n = count;
    return MLC_OK;
}

/* Read a label file for `mesh` (format in docs/config.md). Per-vertex labels become per-tet
 * by the majority of the tet's 4 vertices; a tie goes to the smallest tied label. */
static mlc_status mlc_regions_read_file(const char *path, const mlc_mesh *mesh,
                                        int dropped_vertices, mlc_regions *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t size = 0;
    mlc_status s = mlc_file_read_all(path, LABEL_FILE_MAX, "give one label per tet or vertex", &buf,
                                     &size, err);
    if (s == MLC_EIO) {
        char inner[sizeof err->msg];
        snprintf(inner, sizeof inner, "%s", err ? err->msg : path);
        return mlc_errf(err, MLC_EINVAL,
                        "regions.file: %s; fix the path (it is relative to the "
                        "configuration's directory, or to the working directory with --set)",
                        inner);
    }
    if (s != MLC_OK) return s;
    int *L = NULL, n = 0;
    s = parse_labels(path, buf, size, &L, &n, err);
    mlc_free(buf);
    if (s != MLC_OK) return s;
    const int nt = mesh->nt, nv = mesh->nv;
    if (n == nt) { /* per tet (also when nt == nv: tets first) */
        s = mlc_regions_from_labels(nt, L, "file", out, err);
    } else if (n == nv) { /* per vertex: the majority of each tet's 4 vertices */
        int *tl = mlc_malloc((size_t)nt * sizeof(int));
        if (!tl) {
            mlc_free(L);
            return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
        }
        for (int e = 0; e < nt; e++) {
            int best = 0, bestn = 0;
            for (int a = 0; a < 4; a++) {
                int la = L[mesh->T[4 * e + a]], c = 0;
                for (int b = 0; b < 4; b++)
                    c += L[mesh->T[4 * e + b]] == la;
                if (c > bestn || (c == bestn && la < best)) best = la, bestn = c;
            }
            tl[e] = best;
        }
        s = mlc_regions_from_labels(nt, tl, "file", out, err);
        mlc_free(tl);
    } else if (dropped_vertices > 0 && n == nv + dropped_vertices) {
        s = mlc_errf(err, MLC_EINVAL,
                     "%s: %d labels, one per vertex of the mesh file, but %d of its vertices "
                     "belong to no tet and were dropped, so the labels cannot be matched to "
                     "the vertices; remove the unreferenced vertices or give one label per "
                     "tet (%d)",
                     path, n, dropped_vertices, nt);
    } else {
        s = mlc_errf(err, MLC_EINVAL,
                     "%s: %d labels; expected one per tet (%d) or one per vertex (%d) of the "
                     "mesh",
                     path, n, nt, nv);
    }
    mlc_free(L);
    return s;
}

/* ---- automatic regions ------------------------------------------------------------------ */

/* A max-heap of tets keyed by a score, for the best-first growth below. */
typedef struct tet_heap {
    int n, *tet;
    const double *key;
} tet_heap;

static void heap_push(tet_heap *h, int e) {
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (h->key[h->tet[p]] >= h->key[e]) break;
        h->tet[i] = h->tet[p], i = p;
    }
    h->tet[i] = e;
}

static int heap_pop(tet_heap *h) {
    int top = h->tet[0], last = h->tet[--h->n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->key[h->tet[c + 1]] > h->key[h->tet[c]]) c++;
        if (h->key[last] >= h->key[h->tet[c]]) break;
        h->tet[i] = h->tet[c], i = c;
    }
    if (h->n) h->tet[i] = last;
    return top;
}

/* Move the boundary of each region c of lab[] to the neck of its limb. k-means in the embedding
 * cuts a limb where its features are halfway between the limb's centre and the body's, well
 * out along the limb, since the weights rise gradually from the body along a long limb. The
 * neck is where the cut is small for the volume it separates: from c, tets are added
 * best-first by the projection of their features on c's centroid (each next to the set, so the
 * set stays connected; at most until it holds half the volume), and the prefix with the lowest
 * conductance, interior faces cut / min(volume inside, volume outside), is kept if it is below
 * c's own. Along a limb the cut is its cross-section, which widens where it meets the body, so
 * the minimum is at the joint. Only tets of the body (the largest region, when it holds most
 * of the volume) are taken, so limbs never merge; regions grow from the smallest up and keep
 * the tets a smaller one took. Writes the new labels into out[]. */
static mlc_status grow_to_necks(const mlc_mesh *mesh, const mlc_fem *fem, const double *P, int d,
                                const int *nbr, const int *lab, int n, int *out, mlc_err *err) {
    const int nt = mesh->nt;
    double *vol = mlc_calloc((size_t)n, sizeof *vol), *mu = mlc_malloc((size_t)d * sizeof *mu);
    double *key = mlc_malloc((size_t)nt * sizeof *key);
    int *order = mlc_malloc((size_t)nt * sizeof *order);
    int *inset = mlc_malloc((size_t)nt * sizeof *inset),
        *seen = mlc_malloc((size_t)nt * sizeof *seen);
    int *byvol = mlc_malloc((size_t)n * sizeof *byvol);
    tet_heap h = {0, mlc_malloc((size_t)nt * sizeof(int)), key};
    mlc_status st = MLC_OK;
    if (!vol || !mu || !key || !order || !inset || !seen || !byvol || !h.tet) {
        st = mlc_errf(err, MLC_ENOMEM, "regions.auto: out of memory (%d tets)", nt);
        goto done;
    }
    double total = 0;
    for (int e = 0; e < nt; e++) {
        vol[lab[e]] += fem->vol[e], total += fem->vol[e];
        out[e] = lab[e];
        seen[e] = inset[e] = -1;
    }
    for (int c = 0; c < n; c++) { /* insertion sort by volume, ties by number */
        int j = c;
        while (j > 0 && vol[byvol[j - 1]] > vol[c])
            byvol[j] = byvol[j - 1], j--;
        byvol[j] = c;
    }
    /* Only a body with limbs has necks to find: the largest region must hold most of the volume
     * (otherwise it is one piece among several and the growth could swallow it whole). */
    const int body = byvol[n - 1], limbs = vol[body] > 0.5 * total ? n - 1 : 0;
    for (int r = 0; r < limbs; r++) {
        const int c = byvol[r];
        for (int j = 0; j < d; j++)
            mu[j] = 0;
        for (int e = 0; e < nt; e++)
            if (lab[e] == c)
                for (int j = 0; j < d; j++)
                    mu[j] += fem->vol[e] * P[(size_t)e * d + j];
        for (int e = 0; e < nt; e++) {
            double t = 0;
            for (int j = 0; j < d; j++)
                t += P[(size_t)e * d + j] * mu[j];
            key[e] = t;
        }
        /* inset[e] == c: in the set; seen[e] == c: in the set or queued. The set starts as c,
         * its cut the faces c shares with the rest. */
        long cut = 0;
        h.n = 0;
        for (int e = 0; e < nt; e++)
            if (lab[e] == c) seen[e] = inset[e] = c;
        for (int e = 0; e < nt; e++)
            for (int f = 0; lab[e] == c && f < 4; f++) {
                int o = nbr[4 * e + f];
                if (o < 0 || lab[o] == c) continue;
                cut++;
                if (lab[o] == body && seen[o] != c) seen[o] = c, heap_push(&h, o);
            }
        double in = vol[c], best = (double)cut / in;
        int added = 0, keep = 0;
        while (h.n && in < 0.5 * total) {
            int e = heap_pop(&h);
            order[added++] = e;
            inset[e] = c;
            in += fem->vol[e];
            for (int f = 0; f < 4; f++) {
                int o = nbr[4 * e + f];
                if (o < 0) continue;
                cut += inset[o] == c ? -1 : 1;
                if (lab[o] == body && seen[o] != c) seen[o] = c, heap_push(&h, o);
            }
            double phi = (double)cut / MLC_MIN(in, total - in);
            if (phi < best) best = phi, keep = added;
        }
        for (int i = 0; i < keep; i++)
            if (out[order[i]] == lab[order[i]]) out[order[i]] = c;
    }
done:
    mlc_free(vol), mlc_free(mu), mlc_free(key), mlc_free(order), mlc_free(inset);
    mlc_free(seen), mlc_free(byvol), mlc_free(h.tet);
    return st;
}

/* K regions from the skinning weights W (nv × w) with eigenvalues ev: the features and
 * k-means of the passive clusters, every region grown to its limb's neck, then split into
 * face-connected parts again. */
static mlc_status auto_regions(const mlc_mesh *mesh, const mlc_fem *fem, const double *W, int w,
                               const double *ev, int K, uint64_t seed, int *lab, int *n,
                               mlc_err *err) {
    const int nt = mesh->nt, nv = mesh->nv, d = w - 1;
    if (d < 1 || K == 1) return mlc_clusters_passive(mesh, fem, W, w, ev, K, seed, lab, n, err);
    for (int b = 1; b < w; b++)
        if (!(ev[b] > 0) || !isfinite(ev[b]))
            return mlc_errf(err, MLC_EINVAL,
                            "regions.auto: skinning eigenvalue %d is %g; is the mesh connected?", b,
                            ev[b]);
    double *P = mlc_malloc((size_t)nt * d * sizeof *P);
    int *nbr = mlc_malloc((size_t)4 * nt * sizeof *nbr), *km = mlc_malloc((size_t)nt * sizeof *km);
    int *grown = mlc_malloc((size_t)nt * sizeof *grown);
    mlc_status s = MLC_OK;
    if (!P || !nbr || !km || !grown) {
        s = mlc_errf(err, MLC_ENOMEM, "regions.auto: out of memory (%d tets)", nt);
        goto done;
    }
    for (int e = 0; e < nt; e++) { /* as mlc_clusters_passive's */
        const int *t = mesh->T + 4 * e;
        for (int b = 1; b < w; b++) {
            const double *Wb = W + (size_t)b * nv;
            double v = 0.25 * (Wb[t[0]] + Wb[t[1]] + Wb[t[2]] + Wb[t[3]]);
            P[(size_t)e * d + b - 1] = v / (ev[b] * ev[b]);
        }
    }
    int k = 0;
    if ((s = mlc_clusters_of_features(mesh, fem, P, d, K, seed, km, &k, err)) != MLC_OK ||
        (s = mlc_clusters_face_neighbors(mesh, nbr, err)) != MLC_OK ||
        (s = grow_to_necks(mesh, fem, P, d, nbr, km, k, grown, err)) != MLC_OK)
        goto done;
    s = mlc_clusters_connect(mesh, fem, nbr, k, grown, lab, n, err);
done:
    mlc_free(P), mlc_free(nbr), mlc_free(km), mlc_free(grown);
    return s;
}

mlc_status mlc_regions_auto(const mlc_mesh *mesh, const mlc_fem *fem, int K, uint64_t seed,
                            mlc_regions *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    if (K < 1 || K > mesh->nt)
        return mlc_errf(err, MLC_EINVAL,
                        "regions.auto = %d: the mesh has %d tets; give 1..%d regions (0 = off)", K,
                        mesh->nt, mesh->nt);
    int w = MLC_MIN(32, MLC_MAX(K + 1, 6));
    if (w >= mesh->nv) w = mesh->nv - 1;
    double *W = mlc_malloc((size_t)mesh->nv * w * sizeof(double));
    double *ev = mlc_malloc((size_t)w * sizeof(double));
    int *lab = mlc_malloc((size_t)mesh->nt * sizeof(int));
    mlc_status s = MLC_OK;
    if (!W || !ev || !lab) {
        s = mlc_errf(err, MLC_ENOMEM, "regions.auto: out of memory");
        goto done;
    }
    mlc_err e2 = {0};
    s = mlc_subspace_skinning_modes(mesh, fem, w, NULL, NULL, W, ev, &e2);
    if (s != MLC_OK) {
        s = mlc_errf(err, s, "regions.auto = %d: %s", K, e2.msg);
        goto done;
    }
    int n = 0;
    if ((s = auto_regions(mesh, fem, W, w, ev, K, seed, lab, &n, err)) != MLC_OK) goto done;
    out->tet_region = lab, lab = NULL;
    out->label = mlc_malloc((size_t)n * sizeof(int));
    if (!out->label) {
        mlc_regions_free(out);
        s = mlc_errf(err, MLC_ENOMEM, "regions.auto: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        out->label[i] = i;
    out->nt = mesh->nt;
    out->nregions = n;
    snprintf(out->source, sizeof out->source, "auto");
done:
    mlc_free(W);
    mlc_free(ev);
    mlc_free(lab);
    return s;
}

/* ---- resolving -------------------------------------------------------------------------- */

mlc_status mlc_regions_resolve(const mlc_config *cfg, const mlc_mesh *mesh,
                               const mlc_mesh_report *report, const mlc_fem *fem, mlc_regions *out,
                               mlc_err *err) {
    const char *file = cfg->regions.file;
    const int K = cfg->regions.automatic;
    if (file[0] && K > 0)
        return mlc_errf(err, MLC_EINVAL,
                        "regions.file (%s) and regions.auto (%d) are both given; give one of "
                        "them (regions.auto = 0 turns the automatic regions off)",
                        file, K);
    if (file[0] && report && report->tetrahedralized)
        return mlc_errf(err, MLC_EINVAL,
                        "regions.file (%s): the mesh was tetrahedralized from a surface, so "
                        "its tets and vertices are not known in advance; give a tet mesh or use "
                        "regions.auto",
                        file);
    if (file[0])
        return mlc_regions_read_file(file, mesh, report ? report->dropped_vertices : 0, out, err);
    if (K > 0) return mlc_regions_auto(mesh, fem, K, (uint64_t)(int64_t)cfg->cmaes.seed, out, err);
    /* Local modes are per region: on a body without regions they would be the whole body's
     * modes, i.e. global modes under another name. No K for regions.auto suits every body
     * (symmetric limbs share a cluster until K is well above their count), so the user
     * chooses. A MEDIT file carries a reference on every tet: one value throughout is no
     * labelling. */
    int uniform = mesh->tet_tag != NULL; /* the mesh file's labels are all one */
    for (int e = 1; uniform && e < mesh->nt; e++)
        uniform = mesh->tet_tag[e] == mesh->tet_tag[0];
    if (cfg->actuation.local_modes > 0 && (!mesh->tet_tag || uniform)) {
        char why[96] = "the mesh file carries no region labels";
        if (mesh->tet_tag)
            snprintf(why, sizeof why, "the mesh file labels every tet %d", mesh->tet_tag[0]);
        return mlc_errf(err, MLC_EINVAL,
                        "actuation.local_modes = %d gives each body region modes of its own, "
                        "but this body has no regions: %s and neither regions.file nor "
                        "regions.auto is given; set regions.auto=K (K regions found from the "
                        "shape, e.g. --set regions.auto=8 for a body with four legs, a head and "
                        "a tail; symmetric limbs may need a larger K) or regions.file=LABELS "
                        "(one integer per tet or vertex); regions.auto=1 makes the whole body "
                        "one region",
                        cfg->actuation.local_modes, why);
    }
    if (mesh->tet_tag) return mlc_regions_from_labels(mesh->nt, mesh->tet_tag, "mesh", out, err);
    return mlc_regions_single(mesh->nt, out, err);
}

/* ---- vertices and materials ------------------------------------------------------------- */

mlc_status mlc_regions_vertex(const mlc_regions *r, const mlc_mesh *mesh, const mlc_fem *fem,
                              int *vregion, mlc_err *err) {
    const int nv = mesh->nv, K = r->nregions;
    if (K == 1) {
        memset(vregion, 0, (size_t)nv * sizeof(int));
        return MLC_OK;
    }
    /* Tets grouped by vertex (CSR), then each vertex's volume per region. */
    int *start = mlc_calloc((size_t)nv + 1, sizeof(int));
    int *cur = mlc_malloc((size_t)nv * sizeof(int));
    int *list = mlc_malloc((size_t)4 * mesh->nt * sizeof(int));
    double *acc = mlc_calloc((size_t)K, sizeof(double));
    mlc_status s = MLC_OK;
    if (!start || !cur || !list || !acc) {
        s = mlc_errf(err, MLC_ENOMEM, "regions: out of memory (%d vertices)", nv);
        goto done;
    }
    for (int i = 0; i < 4 * mesh->nt; i++)
        start[mesh->T[i] + 1]++;
    for (int i = 0; i < nv; i++)
        start[i + 1] += start[i];
    memcpy(cur, start, (size_t)nv * sizeof(int));
    for (int e = 0; e < mesh->nt; e++)
        for (int a = 0; a < 4; a++)
            list[cur[mesh->T[4 * e + a]]++] = e;
    for (int i = 0; i < nv; i++) {
        for (int j = start[i]; j < start[i + 1]; j++)
            acc[r->tet_region[list[j]]] += fem ? fem->vol[list[j]] : 1.0;
        int best = 0;
        for (int k = 1; k < K; k++)
            if (acc[k] > acc[best]) best = k;
        vregion[i] = best;
        for (int j = start[i]; j < start[i + 1]; j++)
            acc[r->tet_region[list[j]]] = 0;
    }
done:
    mlc_free(start);
    mlc_free(cur);
    mlc_free(list);
    mlc_free(acc);
    return s;
}

void mlc_region_materials_free(mlc_region_materials *m) {
    if (!m) return;
    mlc_free(m->mu);
    mlc_free(m->gamma);
    mlc_free(m->density);
    mlc_free(m->friction);
    mlc_free(m->stiffness);
    mlc_free(m->vertex_mass);
    mlc_free(m->mass_scale);
    memset(m, 0, sizeof *m);
}

mlc_materials mlc_region_materials_view(const mlc_region_materials *m) {
    mlc_materials v = {m->mu, m->gamma, m->density, m->friction};
    return v;
}

mlc_status mlc_region_materials_build(const mlc_regions *r, const mlc_config *cfg,
                                      const mlc_mesh *mesh, const mlc_fem *fem,
                                      mlc_region_materials *out, mlc_err *err) {
    memset(out, 0, sizeof *out);
    const mlc_config_material *cm = &cfg->material;
    out->uniform = cm->nregions == 0;
    if (out->uniform) return MLC_OK;
    const int K = r->nregions, nt = mesh->nt, nv = mesh->nv;
    if (strcmp(r->source, "none") == 0)
        return mlc_errf(err, MLC_EINVAL,
                        "material.regions gives region %d, but the body has no regions: the "
                        "mesh file carries no labels and neither regions.file nor regions.auto "
                        "is given",
                        cm->regions[0].label);
    /* Region values: the globals, then the entries. */
    double *rv = mlc_malloc((size_t)K * 4 * sizeof(double));
    int *vreg = mlc_malloc((size_t)nv * sizeof(int));
    out->mu = mlc_malloc((size_t)nt * sizeof(double));
    out->gamma = mlc_malloc((size_t)nt * sizeof(double));
    out->density = mlc_malloc((size_t)nt * sizeof(double));
    out->stiffness = mlc_malloc((size_t)nt * sizeof(double));
    out->friction = mlc_malloc((size_t)nv * sizeof(double));
    out->vertex_mass = mlc_calloc((size_t)nv, sizeof(double));
    out->mass_scale = mlc_malloc((size_t)nt * sizeof(double));
    mlc_status s = MLC_OK;
    if (!rv || !vreg || !out->mu || !out->gamma || !out->density || !out->stiffness ||
        !out->friction || !out->vertex_mass || !out->mass_scale) {
        s = mlc_errf(err, MLC_ENOMEM, "material.regions: out of memory");
        goto done;
    }
    for (int k = 0; k < K; k++) {
        rv[4 * k] = cm->mu, rv[4 * k + 1] = cm->gamma, rv[4 * k + 2] = cm->density;
        rv[4 * k + 3] = cfg->contact.friction;
    }
    for (int i = 0; i < cm->nregions; i++) {
        const mlc_config_region_material *e = &cm->regions[i];
        int k = mlc_regions_find(r, e->label);
        if (k < 0) {
            char have[200];
            size_t used = 0;
            have[0] = 0;
            for (int j = 0; j < K && used + 16 < sizeof have; j++)
                used += (size_t)snprintf(have + used, sizeof have - used, "%s%d", j ? ", " : "",
                                         r->label[j]);
            if (used + 16 >= sizeof have) snprintf(have + used, sizeof have - used, ", ...");
            s = mlc_errf(err, MLC_EINVAL,
                         "material.regions gives region %d, but the body's regions (from the "
                         "%s) are labelled %s; use one of these labels",
                         e->label,
                         strcmp(r->source, "file") == 0   ? "label file"
                         : strcmp(r->source, "auto") == 0 ? "automatic regions"
                                                          : "mesh file",
                         have);
            goto done;
        }
        if (e->set & MLC_REGION_MU) rv[4 * k] = e->mu;
        if (e->set & MLC_REGION_GAMMA) rv[4 * k + 1] = e->gamma;
        if (e->set & MLC_REGION_DENSITY) rv[4 * k + 2] = e->density;
        if (e->set & MLC_REGION_FRICTION) rv[4 * k + 3] = e->friction;
    }
    for (int e = 0; e < nt; e++) {
        const double *v = rv + 4 * r->tet_region[e];
        out->mu[e] = v[0], out->gamma[e] = v[1], out->density[e] = v[2];
        out->stiffness[e] = (v[0] + v[1]) / (cm->mu + cm->gamma);
        out->mass_scale[e] = v[2] / cm->density;
        for (int a = 0; a < 4; a++)
            out->vertex_mass[mesh->T[4 * e + a]] += 0.25 * out->mass_scale[e] * fem->vol[e];
    }
    if ((s = mlc_regions_vertex(r, mesh, fem, vreg, err)) != MLC_OK) goto done;
    for (int i = 0; i < nv; i++)
        out->friction[i] = rv[4 * vreg[i] + 3];
done:
    mlc_free(rv);
    mlc_free(vreg);
    if (s != MLC_OK) mlc_region_materials_free(out);
    return s;
}
