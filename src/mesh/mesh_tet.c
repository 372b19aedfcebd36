/* mesh_tet.c: the readers of the tetrahedral formats: MEDIT .mesh (ASCII), TetGen .node/.ele,
 * Gmsh .msh 2.2 ASCII and binary and 4.1 ASCII (mesh_internal.h). Every reader fills X/T only;
 * the dispatch (mesh_read.c) ends in mlc_mesh_finalize (validation, repair, boundary).
 * The per-tet labels a format carries go to m->tet_tag: MEDIT's tetrahedron reference (the
 * fifth integer of a Tetrahedra record), Gmsh's physical tag (msh2: the first element tag, 0
 * when an element has none; msh4: the first physical tag of the tet's volume entity in
 * $Entities, 0 when it has none) and TetGen's first region attribute (.ele files with
 * attributes; integral values only).
 *
 * Robustness rules followed throughout: the file is read once into memory (mesh_lexer.h) and
 * parsed from the buffer without ever reading past its end; every count taken from a header is
 * checked against the bytes that remain before it sizes an allocation; every failure is
 * MLC_EPARSE with "path:line: expected ..." (or a byte offset inside binary data). */
#include "internal/mesh_internal.h"
#include "internal/mesh_lexer.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A label read from a file must be an int: labels are compared and printed as ints. */
static mlc_status tag_value(const char *path, long line, const char *where, long long v, int *out,
                            mlc_err *err) {
    if (v < INT_MIN || v > INT_MAX)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%s%ld: the tetrahedron label %lld does not fit in a 32-bit integer; "
                        "renumber the labels",
                        path, where, line, v);
    *out = (int)v;
    return MLC_OK;
}

/* ---- MEDIT .mesh -------------------------------------------------------------------------- */
mlc_status mlc__medit_read(const char *path, const char *buf, size_t size, mlc_mesh *m,
                           mlc_err *err) {
    mlc__lex lx;
    mlc__tok t;
    mlc_status st;
    long long v = 0;
    int have_v = 0, have_t = 0, tets_before_vertices = 0;
    mlc__lex_init(&lx, buf, size, path, '#');
    if (!mlc__lex_next(&lx, &t))
        return mlc_errf(err, MLC_EPARSE,
                        "%s:1: expected 'MeshVersionFormatted', found an empty "
                        "file",
                        path);
    if (!mlc__tok_is(&t, "MeshVersionFormatted"))
        return mlc__tok_bad(&lx, &t, "'MeshVersionFormatted' (the first keyword of a MEDIT .mesh)",
                            err);
    if ((st = mlc__lex_ll(&lx, 0, "the MEDIT format version", &v, err))) return st;
    while (mlc__lex_next(&lx, &t)) {
        long line = t.line;
        if (mlc__tok_is(&t, "End")) break;
        if (mlc__tok_is(&t, "Dimension")) {
            if ((st = mlc__lex_ll(&lx, 0, "the dimension (3)", &v, err))) return st;
            if (v != 3)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected dimension 3, found %lld; "
                                "only 3D tet meshes are supported",
                                path, line, v);
        } else if (mlc__tok_is(&t, "Vertices")) {
            long long n = 0;
            if (have_v)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: a second Vertices section; expected "
                                "one",
                                path, line);
            if ((st = mlc__lex_ll(&lx, 0, "the number of vertices", &n, err))) return st;
            if ((st = mlc__check_count(&lx, line, n, 4, "vertices", err))) return st;
            m->X = mlc_malloc(3 * (size_t)(n ? n : 1) * sizeof(double));
            if (!m->X) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
            m->nv = (int)n;
            for (long long i = 0; i < n; i++) {
                for (int k = 0; k < 3; k++)
                    if ((st =
                             mlc__lex_double(&lx, 0, "a vertex coordinate", &m->X[3 * i + k], err)))
                        return st;
                if ((st = mlc__lex_ll(&lx, 0, "a vertex reference number", &v, err))) return st;
            }
            have_v = 1;
        } else if (mlc__tok_is(&t, "Tetrahedra")) {
            long long n = 0;
            if (have_t)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: a second Tetrahedra section; expected "
                                "one",
                                path, line);
            if ((st = mlc__lex_ll(&lx, 0, "the number of tetrahedra", &n, err))) return st;
            if ((st = mlc__check_count(&lx, line, n, 5, "tetrahedra", err))) return st;
            m->T = mlc_malloc(4 * (size_t)(n ? n : 1) * sizeof(int));
            m->tet_tag = mlc_malloc((size_t)(n ? n : 1) * sizeof(int));
            if (!m->T || !m->tet_tag) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
            m->nt = (int)n;
            tets_before_vertices = !have_v;
            for (long long i = 0; i < n; i++) {
                for (int k = 0; k < 4; k++) {
                    if ((st = mlc__lex_ll(&lx, 0, "a vertex number", &v, err))) return st;
                    /* Range checked here when possible, so the message names the line. */
                    if (have_v && (v < 1 || v > m->nv))
                        return mlc_errf(err, MLC_EPARSE,
                                        "%s:%ld: expected a vertex number in "
                                        "1..%d, found %lld",
                                        path, lx.line, m->nv, v);
                    if (v < INT_MIN + 1 || v > INT_MAX) v = 0; /* out of range, caught below */
                    m->T[4 * i + k] = (int)(v - 1);
                }
                if ((st = mlc__lex_ll(&lx, 0, "a tetrahedron reference number", &v, err)))
                    return st;
                if ((st = tag_value(path, lx.line, "", v, &m->tet_tag[i], err))) return st;
            }
            have_t = 1;
        } else if (isalpha((unsigned char)t.s[0])) {
            /* Any other section (Triangles, Edges, Corners, Normals, ...): skip its count and
             * records, i.e. every token up to the next keyword. */
            mlc__lex save = lx;
            while (mlc__lex_next(&lx, &t) && !isalpha((unsigned char)t.s[0]))
                save = lx;
            lx = save;
        } else {
            return mlc__tok_bad(&lx, &t, "a section keyword (Vertices, Tetrahedra, End, ...)", err);
        }
    }
    if (!have_v || !have_t)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: expected a %s section, found the end of the "
                        "mesh",
                        path, lx.line, have_v ? "Tetrahedra" : "Vertices");
    if (tets_before_vertices)
        for (int i = 0; i < 4 * m->nt; i++)
            if (m->T[i] < 0 || m->T[i] >= m->nv)
                return mlc_errf(err, MLC_EPARSE,
                                "%s: tetrahedron %d refers to vertex %d; "
                                "expected a vertex number in 1..%d",
                                path, i / 4 + 1, m->T[i] + 1, m->nv);
    return MLC_OK;
}

/* ---- TetGen .node / .ele ------------------------------------------------------------------ */
static mlc_status read_node(const char *path, const char *buf, size_t size, mlc_mesh *m, int *first,
                            mlc_err *err) {
    mlc__lex lx;
    mlc__tok t;
    mlc_status st;
    long long n = 0, dim = 0, id = 0;
    mlc__lex_init(&lx, buf, size, path, '#');
    if ((st = mlc__lex_ll(&lx, 0, "the number of nodes", &n, err))) return st;
    long line = lx.line;
    if ((st = mlc__lex_ll(&lx, 1, "the dimension (3) after the number of nodes", &dim, err)))
        return st;
    if (dim != 3)
        return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected dimension 3, found %lld", path, line,
                        dim);
    mlc__lex_skip_line(&lx); /* attribute and boundary-marker counts are not needed */
    if ((st = mlc__check_count(&lx, line, n, 4, "nodes", err))) return st;
    m->X = mlc_malloc(3 * (size_t)(n ? n : 1) * sizeof(double));
    if (!m->X) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    m->nv = (int)n;
    *first = 0;
    for (long long i = 0; i < n; i++) {
        if ((st = mlc__lex_ll(&lx, 0, "a node number", &id, err))) return st;
        if (i == 0) {
            if (id != 0 && id != 1)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected the first node number to be "
                                "0 or 1, found %lld",
                                path, lx.line, id);
            *first = (int)id;
        } else if (id != *first + i) {
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected node number %lld (nodes are "
                            "numbered consecutively), found %lld",
                            path, lx.line, *first + i, id);
        }
        for (int k = 0; k < 3; k++)
            if ((st = mlc__lex_double(&lx, 1, "a node coordinate", &m->X[3 * i + k], err)))
                return st;
        mlc__lex_skip_line(&lx);
    }
    if (mlc__lex_next(&lx, &t)) return mlc__tok_bad(&lx, &t, "the end of the node list", err);
    return MLC_OK;
}

static mlc_status read_ele(const char *path, const char *buf, size_t size, mlc_mesh *m, int first,
                           mlc_err *err) {
    mlc__lex lx;
    mlc__tok t;
    mlc_status st;
    long long n = 0, npt = 0, v = 0, nattr = 0;
    mlc__lex_init(&lx, buf, size, path, '#');
    if ((st = mlc__lex_ll(&lx, 0, "the number of tetrahedra", &n, err))) return st;
    long line = lx.line;
    if ((st = mlc__lex_ll(&lx, 1, "the number of nodes per tetrahedron (4 or 10)", &npt, err)))
        return st;
    if (npt != 4 && npt != 10)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: expected 4 or 10 nodes per tetrahedron, found "
                        "%lld",
                        path, line, npt);
    /* The optional third number counts the attributes per tet; the first is the region. */
    mlc__tok at;
    if (mlc__lex_inline(&lx, &at)) {
        if ((st = mlc__tok_ll(&lx, &at, "the number of attributes per tetrahedron", &nattr, err)))
            return st;
        if (nattr < 0 || nattr > 1000)
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected 0..1000 attributes per tetrahedron, found %lld", path,
                            line, nattr);
    }
    mlc__lex_skip_line(&lx);
    if ((st = mlc__check_count(&lx, line, n, 1 + (int)npt, "tetrahedra", err))) return st;
    m->T = mlc_malloc(4 * (size_t)(n ? n : 1) * sizeof(int));
    if (!m->T) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    if (nattr > 0 && !(m->tet_tag = mlc_malloc((size_t)(n ? n : 1) * sizeof(int))))
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    m->nt = (int)n;
    for (long long i = 0; i < n; i++) {
        if ((st = mlc__lex_ll(&lx, 0, "a tetrahedron number", &v, err))) return st;
        /* Only the 4 corners are used; a 10-node tet lists them first. */
        for (int k = 0; k < 4; k++) {
            if ((st = mlc__lex_ll(&lx, 1, "a node number", &v, err))) return st;
            if (v < first || v - first >= m->nv)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected a node number in %d..%d "
                                "(the .node file has %d nodes), found %lld",
                                path, lx.line, first, first + m->nv - 1, m->nv, v);
            m->T[4 * i + k] = (int)(v - first);
        }
        if (nattr > 0) {
            double a = 0;
            for (long long k = 4; k < npt; k++) /* the other nodes of a 10-node tet */
                if ((st = mlc__lex_ll(&lx, 1, "a node number", &v, err))) return st;
            if ((st = mlc__lex_double(&lx, 1, "the region attribute of the tetrahedron", &a, err)))
                return st;
            if (a != floor(a) || fabs(a) > INT_MAX)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected an integral region attribute, found %g; "
                                "region labels are integers",
                                path, lx.line, a);
            m->tet_tag[i] = (int)a;
        }
        mlc__lex_skip_line(&lx);
    }
    if (mlc__lex_next(&lx, &t))
        return mlc__tok_bad(&lx, &t, "the end of the tetrahedron list", err);
    return MLC_OK;
}

mlc_status mlc__tetgen_read(const char *node_path, const char *ele_path, mlc_mesh *m,
                            mlc_err *err) {
    char *buf = NULL;
    size_t size;
    int first = 0;
    memset(m, 0, sizeof *m);
    mlc_status st = mlc__file_load(node_path, &buf, &size, err);
    if (st == MLC_OK) st = read_node(node_path, buf, size, m, &first, err);
    mlc_free(buf);
    buf = NULL;
    if (st == MLC_OK) st = mlc__file_load(ele_path, &buf, &size, err);
    if (st == MLC_OK) st = read_ele(ele_path, buf, size, m, first, err);
    mlc_free(buf);
    if (st != MLC_OK) mlc_mesh_free(m);
    return st;
}

/* ---- Gmsh .msh ---------------------------------------------------------------------------- */
typedef struct tag_idx {
    long long tag;
    int idx;
} tag_idx;

typedef struct gmsh {
    mlc__lex lx;
    const char *path;
    int binary, swap; /* binary data; byte order differs from ours */
    mlc_mesh *m;
    tag_idx *map; /* nv entries sorted by tag: node tags may be sparse */
    int tcap;     /* capacity of m->T in tets */
    tag_idx *vol; /* msh4 $Entities: volume entity tag → its first physical tag (idx), sorted */
    int nvol;
} gmsh;

static int tag_cmp(const void *a, const void *b) {
    long long x = ((const tag_idx *)a)->tag, y = ((const tag_idx *)b)->tag;
    return x < y ? -1 : x > y;
}

static int node_index(const gmsh *g, long long tag) {
    size_t lo = 0, hi = (size_t)g->m->nv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->map[mid].tag < tag)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < (size_t)g->m->nv && g->map[lo].tag == tag) ? g->map[lo].idx : -1;
}

static mlc_status gmsh_finish_nodes(gmsh *g, mlc_err *err) {
    qsort(g->map, (size_t)g->m->nv, sizeof *g->map, tag_cmp);
    for (int i = 1; i < g->m->nv; i++)
        if (g->map[i].tag == g->map[i - 1].tag)
            return mlc_errf(err, MLC_EPARSE,
                            "%s: node tag %lld is defined twice in $Nodes; "
                            "expected unique tags",
                            g->path, g->map[i].tag);
    return MLC_OK;
}

static mlc_status gmsh_alloc_nodes(gmsh *g, long long n, mlc_err *err) {
    g->m->X = mlc_malloc(3 * (size_t)(n ? n : 1) * sizeof(double));
    g->map = mlc_malloc((size_t)(n ? n : 1) * sizeof *g->map);
    if (!g->m->X || !g->map) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", g->path);
    g->m->nv = (int)n;
    return MLC_OK;
}

/* Append one tet given by node tags and its label; `line` (or byte offset when binary) for
 * messages. */
static mlc_status gmsh_push_tet(gmsh *g, const long long tags[4], long long label, long where,
                                mlc_err *err) {
    mlc_mesh *m = g->m;
    if (m->nt == g->tcap) {
        int cap = g->tcap ? 2 * g->tcap : 64;
        if (g->tcap > INT_MAX / 8) return mlc_errf(err, MLC_EPARSE, "%s: too many tets", g->path);
        int *T = mlc_realloc(m->T, 4 * (size_t)cap * sizeof(int));
        if (T) m->T = T;
        int *L = T ? mlc_realloc(m->tet_tag, (size_t)cap * sizeof(int)) : NULL;
        if (!T || !L) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", g->path);
        m->tet_tag = L;
        g->tcap = cap;
    }
    mlc_status st =
        tag_value(g->path, where, g->binary ? "byte " : "", label, &m->tet_tag[m->nt], err);
    if (st) return st;
    for (int k = 0; k < 4; k++) {
        int idx = node_index(g, tags[k]);
        if (idx < 0)
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%s%ld: expected the tag of a node defined in "
                            "$Nodes, found %lld",
                            g->path, g->binary ? "byte " : "", where, tags[k]);
        m->T[4 * (size_t)m->nt + k] = idx;
    }
    m->nt++;
    return MLC_OK;
}

static uint32_t bswap32(uint32_t x) {
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

static int32_t rd_i32(const gmsh *g, const char *p) {
    uint32_t u;
    memcpy(&u, p, 4);
    if (g->swap) u = bswap32(u);
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

static double rd_f64(const gmsh *g, const char *p) {
    uint64_t u;
    memcpy(&u, p, 8);
    if (g->swap) u = ((uint64_t)bswap32((uint32_t)u) << 32) | bswap32((uint32_t)(u >> 32));
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* Byte offset of the cursor, for messages about binary data. */
static long gmsh_off(const gmsh *g, const char *p) {
    return (long)(p - g->lx.begin);
}

static mlc_status gmsh_truncated(const gmsh *g, const char *p, const char *what, mlc_err *err) {
    return mlc_errf(err, MLC_EPARSE,
                    "%s:byte %ld: expected %s, found the end of the file (the "
                    "file is truncated)",
                    g->path, gmsh_off(g, p), what);
}

static mlc_status gmsh_nodes_v2(gmsh *g, mlc_err *err) {
    mlc__lex *lx = &g->lx;
    mlc_status st;
    long long n = 0, tag = 0;
    if ((st = mlc__lex_ll(lx, 0, "the number of nodes", &n, err))) return st;
    long line = lx->line;
    if (g->binary) {
        mlc__lex_skip_line(lx);
        size_t left = (size_t)(lx->end - lx->p);
        if (n < 0 || n > INT_MAX / 4 || (unsigned long long)n > left / 28)
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: the header announces %lld nodes, but only "
                            "%zu bytes follow (28 per node); the file is truncated or the count "
                            "is wrong",
                            g->path, line, n, left);
        if ((st = gmsh_alloc_nodes(g, n, err))) return st;
        const char *p = lx->p;
        for (int i = 0; i < (int)n; i++, p += 28) {
            g->map[i].tag = rd_i32(g, p);
            g->map[i].idx = i;
            for (int k = 0; k < 3; k++) {
                double x = rd_f64(g, p + 4 + 8 * k);
                if (!isfinite(x))
                    return mlc_errf(err, MLC_EPARSE,
                                    "%s:byte %ld: expected a finite node "
                                    "coordinate, found %g; fix the file",
                                    g->path, gmsh_off(g, p + 4 + 8 * k), x);
                g->m->X[3 * i + k] = x;
            }
        }
        lx->p = p;
    } else {
        if ((st = mlc__check_count(lx, line, n, 4, "nodes", err))) return st;
        if ((st = gmsh_alloc_nodes(g, n, err))) return st;
        for (int i = 0; i < (int)n; i++) {
            if ((st = mlc__lex_ll(lx, 0, "a node tag", &tag, err))) return st;
            g->map[i].tag = tag;
            g->map[i].idx = i;
            for (int k = 0; k < 3; k++)
                if ((st = mlc__lex_double(lx, 1, "a node coordinate", &g->m->X[3 * i + k], err)))
                    return st;
        }
    }
    if ((st = mlc__lex_expect(lx, "$EndNodes", err))) return st;
    return gmsh_finish_nodes(g, err);
}

/* Nodes per element for the Gmsh element types 1..31, needed to skip binary records. */
static const int gmsh_type_nodes[32] = {0,  2,  3,  4,  4, 8, 6,  5,  3,  6, 9,
                                        10, 27, 18, 14, 1, 8, 20, 15, 13, 9, 10,
                                        12, 15, 15, 21, 4, 5, 6,  20, 35, 56};

static mlc_status gmsh_elements_v2(gmsh *g, mlc_err *err) {
    mlc__lex *lx = &g->lx;
    mlc_status st;
    long long n = 0, v = 0, tags[4] = {0, 0, 0, 0};
    if ((st = mlc__lex_ll(lx, 0, "the number of elements", &n, err))) return st;
    long line = lx->line;
    if (g->binary) {
        mlc__lex_skip_line(lx);
        const char *p = lx->p, *end = lx->end;
        size_t left = (size_t)(end - p);
        if (n < 0 || (unsigned long long)n > left / 8)
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: the header announces %lld elements, but "
                            "only %zu bytes follow; the file is truncated or the count is wrong",
                            g->path, line, n, left);
        long long done = 0;
        while (done < n) {
            if (end - p < 12) return gmsh_truncated(g, p, "an element block header", err);
            int32_t type = rd_i32(g, p), count = rd_i32(g, p + 4), ntags = rd_i32(g, p + 8);
            if (type < 1 || type > 31)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:byte %ld: expected a Gmsh element type "
                                "1..31, found %d",
                                g->path, gmsh_off(g, p), (int)type);
            if (count < 1 || count > n - done || ntags < 0 || ntags > 1000)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:byte %ld: expected an element block of "
                                "1..%lld elements with 0..1000 tags, found %d elements with %d "
                                "tags",
                                g->path, gmsh_off(g, p), n - done, (int)count, (int)ntags);
            p += 12;
            size_t rec = 4 * (size_t)(1 + ntags + gmsh_type_nodes[type]);
            if ((size_t)(end - p) / rec < (size_t)count)
                return gmsh_truncated(g, end, "the element records", err);
            for (int32_t i = 0; i < count; i++, p += rec) {
                if (type != 4) continue;
                for (int k = 0; k < 4; k++)
                    tags[k] = rd_i32(g, p + 4 * (1 + ntags + k));
                long long phys = ntags > 0 ? rd_i32(g, p + 4) : 0; /* the physical tag */
                if ((st = gmsh_push_tet(g, tags, phys, gmsh_off(g, p), err))) return st;
            }
            done += count;
        }
        lx->p = p;
    } else {
        if ((st = mlc__check_count(lx, line, n, 4, "elements", err))) return st;
        for (long long i = 0; i < n; i++) {
            long long type = 0, ntags = 0, phys = 0;
            if ((st = mlc__lex_ll(lx, 0, "an element number", &v, err))) return st;
            long eline = lx->line;
            if ((st = mlc__lex_ll(lx, 1, "an element type", &type, err))) return st;
            if ((st = mlc__lex_ll(lx, 1, "the number of element tags", &ntags, err))) return st;
            for (long long k = 0; k < ntags; k++) {
                if ((st = mlc__lex_ll(lx, 1, "an element tag", &v, err))) return st;
                if (k == 0) phys = v; /* the first tag is the physical tag */
            }
            if (type == 4) {
                for (int k = 0; k < 4; k++)
                    if ((st = mlc__lex_ll(lx, 1, "a node tag", &tags[k], err))) return st;
                if ((st = gmsh_push_tet(g, tags, phys, eline, err))) return st;
            }
            mlc__lex_skip_line(lx); /* other element types are not used */
        }
    }
    return mlc__lex_expect(lx, "$EndElements", err);
}

static mlc_status gmsh_nodes_v4(gmsh *g, mlc_err *err) {
    mlc__lex *lx = &g->lx;
    mlc_status st;
    long long nblocks = 0, n = 0, v = 0;
    if ((st = mlc__lex_ll(lx, 0, "the number of node entity blocks", &nblocks, err))) return st;
    long line = lx->line;
    if ((st = mlc__lex_ll(lx, 1, "the number of nodes", &n, err))) return st;
    if ((st = mlc__lex_ll(lx, 1, "the minimum node tag", &v, err))) return st;
    if ((st = mlc__lex_ll(lx, 1, "the maximum node tag", &v, err))) return st;
    if ((st = mlc__check_count(lx, line, n, 4, "nodes", err))) return st;
    if ((st = mlc__check_count(lx, line, nblocks, 4, "node entity blocks", err))) return st;
    if ((st = gmsh_alloc_nodes(g, n, err))) return st;
    long long filled = 0;
    for (long long b = 0; b < nblocks; b++) {
        long long dim = 0, param = 0, cnt = 0;
        if ((st = mlc__lex_ll(lx, 0, "the entity dimension of a node block", &dim, err))) return st;
        long bline = lx->line;
        if ((st = mlc__lex_ll(lx, 1, "the entity tag", &v, err))) return st;
        if ((st = mlc__lex_ll(lx, 1, "the parametric flag", &param, err))) return st;
        if ((st = mlc__lex_ll(lx, 1, "the number of nodes in the block", &cnt, err))) return st;
        if (dim < 0 || dim > 3 || param < 0 || param > 1 || cnt < 0 || cnt > n - filled)
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected a node block header (dimension "
                            "0..3, parametric 0/1, at most %lld nodes), found %lld %lld %lld",
                            g->path, bline, n - filled, dim, param, cnt);
        for (long long i = 0; i < cnt; i++) {
            if ((st = mlc__lex_ll(lx, 0, "a node tag", &v, err))) return st;
            g->map[filled + i].tag = v;
            g->map[filled + i].idx = (int)(filled + i);
        }
        for (long long i = 0; i < cnt; i++) {
            double *x = g->m->X + 3 * (filled + i), u;
            for (int k = 0; k < 3; k++)
                if ((st = mlc__lex_double(lx, 0, "a node coordinate", &x[k], err))) return st;
            for (long long k = 0; k < param * dim; k++)
                if ((st = mlc__lex_double(lx, 0, "a parametric coordinate", &u, err))) return st;
        }
        filled += cnt;
    }
    if (filled != n)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: the header announces %lld nodes, but the "
                        "blocks hold %lld",
                        g->path, line, n, filled);
    if ((st = mlc__lex_expect(lx, "$EndNodes", err))) return st;
    return gmsh_finish_nodes(g, err);
}

static mlc_status gmsh_elements_v4(gmsh *g, mlc_err *err) {
    mlc__lex *lx = &g->lx;
    mlc_status st;
    mlc__tok t;
    long long nblocks = 0, n = 0, v = 0, tags[4] = {0, 0, 0, 0};
    if ((st = mlc__lex_ll(lx, 0, "the number of element entity blocks", &nblocks, err))) return st;
    long line = lx->line;
    if ((st = mlc__lex_ll(lx, 1, "the number of elements", &n, err))) return st;
    if ((st = mlc__lex_ll(lx, 1, "the minimum element tag", &v, err))) return st;
    if ((st = mlc__lex_ll(lx, 1, "the maximum element tag", &v, err))) return st;
    if ((st = mlc__check_count(lx, line, n, 2, "elements", err))) return st;
    if ((st = mlc__check_count(lx, line, nblocks, 4, "element entity blocks", err))) return st;
    long long done = 0;
    for (long long b = 0; b < nblocks; b++) {
        long long type = 0, cnt = 0, entity = 0;
        if ((st = mlc__lex_ll(lx, 0, "the entity dimension of an element block", &v, err)))
            return st;
        long bline = lx->line;
        if ((st = mlc__lex_ll(lx, 1, "the entity tag", &entity, err))) return st;
        long long phys = 0; /* the volume's first physical tag, 0 when it has none */
        for (int i = 0; i < g->nvol; i++)
            if (g->vol[i].tag == entity) phys = g->vol[i].idx;
        if ((st = mlc__lex_ll(lx, 1, "the element type", &type, err))) return st;
        if ((st = mlc__lex_ll(lx, 1, "the number of elements in the block", &cnt, err))) return st;
        if (cnt < 0 || cnt > n - done)
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected at most %lld elements in the "
                            "block, found %lld",
                            g->path, bline, n - done, cnt);
        mlc__lex_skip_line(lx);
        for (long long i = 0; i < cnt; i++) {
            /* One element per line: tets are read, every other type is skipped whole. */
            if (!mlc__lex_next(lx, &t)) return mlc__lex_missing(lx, 0, "an element line", err);
            if (type == 4) {
                long eline = lx->line;
                if ((st = mlc__tok_ll(lx, &t, "an element tag", &v, err))) return st;
                for (int k = 0; k < 4; k++)
                    if ((st = mlc__lex_ll(lx, 1, "a node tag", &tags[k], err))) return st;
                if ((st = gmsh_push_tet(g, tags, phys, eline, err))) return st;
            }
            mlc__lex_skip_line(lx);
        }
        done += cnt;
    }
    return mlc__lex_expect(lx, "$EndElements", err);
}

/* msh4 $Entities: points, curves and surfaces are skipped (one line each); of every volume
 * the tag and its first physical tag are kept (0 when it has none). */
static mlc_status gmsh_entities_v4(gmsh *g, mlc_err *err) {
    mlc__lex *lx = &g->lx;
    mlc_status st;
    long long cnt[4] = {0, 0, 0, 0};
    for (int d = 0; d < 4; d++)
        if ((st = mlc__lex_ll(lx, d > 0, "an entity count", &cnt[d], err))) return st;
    long line = lx->line;
    for (int d = 0; d < 4; d++)
        if ((st = mlc__check_count(lx, line, cnt[d], 1, "entities", err))) return st;
    mlc__lex_skip_line(lx);
    for (long long i = 0; i < cnt[0] + cnt[1] + cnt[2]; i++)
        mlc__lex_skip_line(lx);
    g->vol = mlc_malloc((size_t)(cnt[3] ? cnt[3] : 1) * sizeof *g->vol);
    if (!g->vol) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", g->path);
    for (long long i = 0; i < cnt[3]; i++) {
        long long tag = 0, nphys = 0, phys = 0;
        double x;
        if ((st = mlc__lex_ll(lx, 0, "a volume entity tag", &tag, err))) return st;
        for (int k = 0; k < 6; k++)
            if ((st = mlc__lex_double(lx, 1, "a bounding-box coordinate", &x, err))) return st;
        if ((st = mlc__lex_ll(lx, 1, "the number of physical tags", &nphys, err))) return st;
        if (nphys > 0 && (st = mlc__lex_ll(lx, 1, "a physical tag", &phys, err))) return st;
        if ((st = tag_value(g->path, lx->line, "", phys, &g->vol[i].idx, err))) return st;
        g->vol[i].tag = tag;
        g->nvol = (int)i + 1;
        mlc__lex_skip_line(lx);
    }
    return mlc__lex_expect(lx, "$EndEntities", err);
}

/* Skip an unused section "$Name ... $EndName" by searching for its end marker; works for
 * binary content too. */
static mlc_status gmsh_skip_section(gmsh *g, const mlc__tok *t, mlc_err *err) {
    char marker[72];
    char show[48];
    if (t->n > 60) return mlc__tok_bad(&g->lx, t, "a section name", err);
    snprintf(marker, sizeof marker, "$End%.*s", (int)t->n - 1, t->s + 1);
    size_t ml = strlen(marker);
    for (const char *p = g->lx.p; (size_t)(g->lx.end - p) >= ml; p++) {
        if (*p == '\n') g->lx.line++;
        if (*p == '$' && memcmp(p, marker, ml) == 0) {
            g->lx.p = p + ml;
            return MLC_OK;
        }
    }
    return mlc_errf(err, MLC_EPARSE,
                    "%s:%ld: expected %s to close the section %s, found the end "
                    "of the file (the file is truncated)",
                    g->path, t->line, marker, mlc__tok_show(t, show));
}

mlc_status mlc__gmsh_read(const char *path, const char *buf, size_t size, mlc_mesh *m,
                          char format[16], mlc_err *err) {
    gmsh g;
    mlc__tok t;
    mlc_status st;
    memset(&g, 0, sizeof g);
    g.path = path;
    g.m = m;
    mlc__lex *lx = &g.lx;
    mlc__lex_init(lx, buf, size, path, 0);
    if (!mlc__lex_next(lx, &t) || !mlc__tok_is(&t, "$MeshFormat")) {
        st = mlc_errf(err, MLC_EPARSE,
                      "%s:%ld: expected '$MeshFormat' (the start of a Gmsh "
                      ".msh file)",
                      path, lx->line);
        goto done;
    }
    double version = 0;
    long long ftype = 0, dsize = 0;
    long line = lx->line;
    if ((st = mlc__lex_double(lx, 0, "the Gmsh format version", &version, err))) goto done;
    if ((st = mlc__lex_ll(lx, 1, "the file type (0 ASCII, 1 binary)", &ftype, err))) goto done;
    if ((st = mlc__lex_ll(lx, 1, "the data size (8)", &dsize, err))) goto done;
    int v2 = version >= 2.0 && version<3.0, v41 = version> 4.05 && version < 4.15;
    if (!(v2 || v41) || ftype < 0 || ftype > 1 || (v41 && ftype == 1) || dsize != 8) {
        st = mlc_errf(err, MLC_EPARSE,
                      "%s:%ld: expected Gmsh format 2.2 (ASCII or binary) or "
                      "4.1 ASCII with 8-byte doubles, found version %g, %s, data size %lld; "
                      "re-export the mesh from Gmsh as 2.2 or 4.1 ASCII",
                      path, line, version, ftype == 1 ? "binary" : "ASCII", dsize);
        goto done;
    }
    snprintf(format, 16, "%s", v2 ? "gmsh2" : "gmsh4");
    g.binary = ftype == 1;
    if (g.binary) {
        mlc__lex_skip_line(lx);
        if (lx->end - lx->p < 4) {
            st = gmsh_truncated(&g, lx->p, "the binary integer 1", err);
            goto done;
        }
        int32_t one;
        memcpy(&one, lx->p, 4);
        if (one != 1) {
            g.swap = 1;
            if (rd_i32(&g, lx->p) != 1) {
                st = mlc_errf(err, MLC_EPARSE,
                              "%s:byte %ld: expected the binary integer 1 "
                              "(byte-order check), found 0x%08x",
                              path, gmsh_off(&g, lx->p), (unsigned)one);
                goto done;
            }
        }
        lx->p += 4;
    }
    if ((st = mlc__lex_expect(lx, "$EndMeshFormat", err))) goto done;
    int have_nodes = 0, have_elems = 0;
    while (mlc__lex_next(lx, &t)) {
        if (mlc__tok_is(&t, "$Nodes")) {
            if (have_nodes) {
                st = mlc_errf(err, MLC_EPARSE, "%s:%ld: a second $Nodes section; expected one",
                              path, t.line);
                goto done;
            }
            st = v2 ? gmsh_nodes_v2(&g, err) : gmsh_nodes_v4(&g, err);
            if (st) goto done;
            have_nodes = 1;
        } else if (mlc__tok_is(&t, "$Elements")) {
            if (!have_nodes || have_elems) {
                st = mlc_errf(err, MLC_EPARSE,
                              "%s:%ld: expected one $Elements section after "
                              "$Nodes",
                              path, t.line);
                goto done;
            }
            st = v2 ? gmsh_elements_v2(&g, err) : gmsh_elements_v4(&g, err);
            if (st) goto done;
            have_elems = 1;
        } else if (v41 && mlc__tok_is(&t, "$Entities") && !g.vol) {
            if ((st = gmsh_entities_v4(&g, err))) goto done;
        } else if (t.n >= 2 && t.s[0] == '$') {
            if ((st = gmsh_skip_section(&g, &t, err))) goto done;
        } else {
            st = mlc__tok_bad(lx, &t, "a section ($Nodes, $Elements, ...)", err);
            goto done;
        }
    }
    if (!have_elems)
        st = mlc_errf(err, MLC_EPARSE, "%s:%ld: expected a %s section, found the end of the file",
                      path, lx->line, have_nodes ? "$Elements" : "$Nodes");
done:
    mlc_free(g.map);
    mlc_free(g.vol);
    return st;
}
