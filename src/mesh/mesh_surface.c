/* mesh_surface.c: surface meshes (.off, .obj, .stl and .ply, ASCII or binary) and their
 * tetrahedralization by the external `tetgen` program (which aborts on bad surfaces: checked
 * first).
 *
 * A surface is parsed into triangles (polygons fan-triangulated), checked (at least 4 vertices
 * and 4 faces, indices in range, finite coordinates), checked for the defects that would stop
 * tetgen or the method (surface_check.h: open, non-manifold, zero-area triangles, several
 * parts; each named on its own line, exit 2), written as OFF into a private temporary
 * directory and run through `tetgen -pYq1.414 -z -Q` with posix_spawn (no shell, so any path
 * works), output to a log file. The resulting .1.node/.1.ele are read with the TetGen reader.
 * TetGen aborts without explanation on self-intersecting input, so on an abnormal end we run
 * `tetgen -d` to count the intersecting face pairs and say so. */
#include "internal/mesh_internal.h"
#include "internal/mesh_lexer.h"
#include "internal/ply_binary.h"
#include "surface_check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- Surface container -------------------------------------------------------------------- */
typedef struct surf {
    int nv, nf;     /* vertices, triangles */
    int vcap, fcap; /* capacities */
    double *V;      /* 3×nv */
    int *F;         /* 3×nf, 0-based */
    int dropped;    /* degenerate triangles dropped */
} surf;

static void surf_free(surf *s) {
    mlc_free(s->V);
    mlc_free(s->F);
    memset(s, 0, sizeof *s);
}

/* Grow *p (items of 3 values of `size` bytes, capacity *cap) to hold n items (amortized
 * doubling, at least 16, at most INT_MAX / 4). Returns 0 when out of memory. */
static int grow3(void **p, int *cap, long long n, size_t size) {
    if (n <= *cap) return 1;
    long long c = MLC_MAX(n, 2LL * *cap);
    c = MLC_MIN(MLC_MAX(c, 16), INT_MAX / 4);
    void *q = mlc_realloc(*p, 3 * (size_t)c * size);
    if (!q) return 0;
    *p = q;
    *cap = (int)c;
    return 1;
}

/* Grow to hold `nv` vertices and `nf` triangles (amortized doubling). */
static mlc_status surf_reserve(surf *s, long long nv, long long nf, const char *path,
                               mlc_err *err) {
    if (nv > INT_MAX / 4 || nf > INT_MAX / 4)
        return mlc_errf(err, MLC_EPARSE, "%s: more than %d vertices or faces is not supported",
                        path, INT_MAX / 4);
    void *V = s->V, *F = s->F;
    int ok = grow3(&V, &s->vcap, nv, sizeof(double));
    s->V = V;
    ok = ok && grow3(&F, &s->fcap, nf, sizeof(int));
    s->F = F;
    if (!ok) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    return MLC_OK;
}

static mlc_status surf_push_tri(surf *s, int a, int b, int c, const char *path, mlc_err *err) {
    /* A triangle with a repeated corner has no area and carries no geometry; tetgen would
     * reject it, so drop it (STL files often have them after vertex merging). */
    if (a == b || b == c || a == c) {
        s->dropped++;
        return MLC_OK;
    }
    mlc_status st = surf_reserve(s, 0, (long long)s->nf + 1, path, err);
    if (st) return st;
    int *f = s->F + 3 * (size_t)s->nf++;
    f[0] = a, f[1] = b, f[2] = c;
    return MLC_OK;
}

/* Corner k (vertex v, already checked) of a polygon fanned into the triangles
 * (first, prev, v): the OFF and PLY face readers. */
static mlc_status fan_corner(surf *s, long long k, int v, int *first, int *prev, const char *path,
                             mlc_err *err) {
    mlc_status st = MLC_OK;
    if (k == 0)
        *first = v;
    else if (k >= 2)
        st = surf_push_tri(s, *first, *prev, v, path, err);
    *prev = v;
    return st;
}

/* Read three coordinates of one vertex and append it. */
static mlc_status surf_read_vertex(surf *s, mlc__lex *lx, int inline_only, const char *path,
                                   mlc_err *err) {
    mlc_status st = surf_reserve(s, (long long)s->nv + 1, 0, path, err);
    if (st) return st;
    double *x = s->V + 3 * (size_t)s->nv;
    for (int k = 0; k < 3; k++)
        if ((st = mlc__lex_double(lx, inline_only, "a vertex coordinate", &x[k], err))) return st;
    s->nv++;
    return MLC_OK;
}

static mlc_status index_error(const mlc__lex *lx, long line, long long v, int lo, int hi,
                              mlc_err *err) {
    return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected a vertex index in %d..%d, found %lld",
                    lx->path, line, lo, hi, v);
}

/* ---- OFF ------------------------------------------------------------------------------------ */
static mlc_status read_off(mlc__lex *lx, surf *s, mlc_err *err) {
    mlc__tok t;
    mlc_status st;
    long long nv = 0, nf = 0, ne = 0, v = 0;
    const char *path = lx->path;
    /* The header keyword; variants with colours/normals (COFF, NOFF) have the same layout for
     * the first three numbers of each vertex, which is all we read. */
    if (!mlc__lex_next(lx, &t) || t.n < 3 || t.n > 6 || strncasecmp(t.s + t.n - 3, "OFF", 3) != 0)
        return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected the 'OFF' header", path, lx->line);
    if ((st = mlc__lex_ll(lx, 0, "the number of vertices", &nv, err))) return st;
    long line = lx->line;
    if ((st = mlc__lex_ll(lx, 1, "the number of faces", &nf, err))) return st;
    /* The edge count is unused and some writers omit it. */
    if (mlc__lex_inline(lx, &t) && (st = mlc__tok_ll(lx, &t, "the number of edges", &ne, err)))
        return st;
    mlc__lex_skip_line(lx);
    if ((st = mlc__check_count(lx, line, nv, 3, "vertices", err))) return st;
    if ((st = mlc__check_count(lx, line, nf, 4, "faces", err))) return st;
    if ((st = surf_reserve(s, nv, nf, path, err))) return st;
    for (long long i = 0; i < nv; i++) {
        if ((st = surf_read_vertex(s, lx, 0, path, err))) return st;
        mlc__lex_skip_line(lx);
    }
    for (long long i = 0; i < nf; i++) {
        long long n;
        int first = -1, prev = -1;
        if ((st = mlc__lex_ll(lx, 0, "the number of corners of a face", &n, err))) return st;
        long fline = lx->line;
        if (n < 3)
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected a face with at least 3 corners, "
                            "found %lld",
                            path, fline, n);
        for (long long k = 0; k < n; k++) {
            if ((st = mlc__lex_ll(lx, 1, "a vertex index", &v, err))) return st;
            if (v < 0 || v >= s->nv) return index_error(lx, fline, v, 0, s->nv - 1, err);
            if ((st = fan_corner(s, k, (int)v, &first, &prev, path, err))) return st;
        }
        mlc__lex_skip_line(lx); /* optional colour */
    }
    return MLC_OK;
}

/* ---- OBJ ------------------------------------------------------------------------------------ */
/* Parse the vertex part of an OBJ face corner "v", "v/t", "v//n", "v/t/n"; negative indices
 * count back from the last vertex defined so far. Returns the 0-based index or -1. */
static mlc_status obj_corner(const mlc__lex *lx, const mlc__tok *t, int nv, int *out,
                             mlc_err *err) {
    mlc__tok head = *t;
    const char *slash = memchr(t->s, '/', t->n);
    if (slash) head.n = (size_t)(slash - t->s);
    long long v;
    mlc_status st = mlc__tok_ll(lx, &head, "a vertex index (v, v/t, v//n or v/t/n)", &v, err);
    if (st) return st;
    long long idx = v > 0 ? v - 1 : v < 0 ? nv + v : -1;
    if (idx < 0 || idx >= nv)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: expected a vertex index in 1..%d or -%d..-1 "
                        "(vertices defined so far), found %lld",
                        lx->path, t->line, nv, nv, v);
    *out = (int)idx;
    return MLC_OK;
}

static mlc_status read_obj(mlc__lex *lx, surf *s, mlc_err *err) {
    mlc__tok t;
    mlc_status st;
    while (mlc__lex_next(lx, &t)) {
        if (t.n == 1 && t.s[0] == 'v') {
            if ((st = surf_read_vertex(s, lx, 1, lx->path, err))) return st;
        } else if (t.n == 1 && t.s[0] == 'f') {
            int first = -1, prev = -1, k = 0, idx = 0;
            long fline = t.line;
            while (mlc__lex_inline(lx, &t)) {
                if ((st = obj_corner(lx, &t, s->nv, &idx, err))) return st;
                if (k == 0)
                    first = idx;
                else if (k >= 2 && (st = surf_push_tri(s, first, prev, idx, lx->path, err)))
                    return st;
                prev = idx;
                k++;
            }
            if (k < 3)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected a face with at least 3 "
                                "corners, found %d",
                                lx->path, fline, k);
        }
        /* Everything else (vt, vn, o, g, s, usemtl, mtllib, l, ...) does not define the solid. */
        mlc__lex_skip_line(lx);
    }
    return MLC_OK;
}

/* ---- STL ------------------------------------------------------------------------------------ */
static mlc_status read_stl_ascii(mlc__lex *lx, surf *s, mlc_err *err) {
    mlc__tok t;
    mlc_status st;
    double dummy;
    if ((st = mlc__lex_expect(lx, "solid", err))) return st;
    mlc__lex_skip_line(lx); /* the solid's name */
    for (;;) {
        if (!mlc__lex_next(lx, &t))
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected 'facet' or 'endsolid', found the "
                            "end of the file (the file is truncated)",
                            lx->path, lx->line);
        if (mlc__tok_is(&t, "endsolid")) {
            mlc__lex_skip_line(lx);
            /* Some exporters put several solids in one file. */
            if (!mlc__lex_next(lx, &t)) break;
            if (!mlc__tok_is(&t, "solid"))
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected 'solid' or the end of the "
                                "file after 'endsolid'",
                                lx->path, t.line);
            mlc__lex_skip_line(lx);
            continue;
        }
        if (!mlc__tok_is(&t, "facet"))
            return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected 'facet' or 'endsolid'", lx->path,
                            t.line);
        if ((st = mlc__lex_expect(lx, "normal", err))) return st;
        for (int k = 0; k < 3; k++)
            if ((st = mlc__lex_double(lx, 0, "a normal component", &dummy, err))) return st;
        if ((st = mlc__lex_expect(lx, "outer", err)) || (st = mlc__lex_expect(lx, "loop", err)))
            return st;
        for (int k = 0; k < 3; k++) {
            if ((st = mlc__lex_expect(lx, "vertex", err))) return st;
            if ((st = surf_read_vertex(s, lx, 0, lx->path, err))) return st;
        }
        if ((st = mlc__lex_expect(lx, "endloop", err)) ||
            (st = mlc__lex_expect(lx, "endfacet", err)))
            return st;
        /* Merged later; keep the triangle as three fresh vertices for now. */
        int *f;
        if ((st = surf_reserve(s, 0, (long long)s->nf + 1, lx->path, err))) return st;
        f = s->F + 3 * (size_t)s->nf++;
        f[0] = s->nv - 3, f[1] = s->nv - 2, f[2] = s->nv - 1;
    }
    return MLC_OK;
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static mlc_status read_stl_binary(const char *path, const unsigned char *b, uint32_t n, surf *s,
                                  mlc_err *err) {
    mlc_status st = surf_reserve(s, 3LL * n, n, path, err);
    if (st) return st;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *rec = b + 84 + 50 * (size_t)i;
        for (int c = 0; c < 3; c++) {
            double *x = s->V + 3 * (size_t)s->nv;
            for (int k = 0; k < 3; k++) {
                uint32_t u = le32(rec + 12 + 12 * c + 4 * k);
                float f;
                memcpy(&f, &u, 4);
                if (!isfinite(f))
                    return mlc_errf(err, MLC_EPARSE,
                                    "%s:byte %zu: expected a finite vertex "
                                    "coordinate, found %g; fix the file",
                                    path, (size_t)(rec + 12 + 12 * c + 4 * k - b), (double)f);
                x[k] = (double)f;
            }
            s->nv++;
        }
        int *f = s->F + 3 * (size_t)s->nf++;
        f[0] = s->nv - 3, f[1] = s->nv - 2, f[2] = s->nv - 1;
    }
    return MLC_OK;
}

/* STL repeats every shared vertex; merge exact duplicates so tetgen sees a clean, indexed
 * surface: weld equal positions (mlc_surface_weld_map), then renumber. */
static mlc_status merge_vertices(surf *s, const char *path, mlc_err *err) {
    size_t nv = (size_t)(s->nv ? s->nv : 1);
    int *map = mlc_malloc(nv * sizeof(int));
    double *V = mlc_malloc(3 * nv * sizeof(double));
    mlc_status st = MLC_OK;
    if (!map || !V || mlc_surface_weld_map(s->nv, s->V, map) != MLC_OK) {
        st = mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    /* map[id] is the smallest id at the same position; number the survivors in order of first
     * appearance so the output follows the file. */
    int n = 0;
    for (int i = 0; i < s->nv; i++) {
        if (map[i] == i) {
            memcpy(V + 3 * (size_t)n, s->V + 3 * (size_t)i, 3 * sizeof(double));
            map[i] = n++;
        } else {
            map[i] = map[map[i]]; /* map[i] < i, already renumbered */
        }
    }
    /* Rewrite the triangles in place (entry i is read before anything at or after it is
     * written), dropping those that became degenerate. */
    int nf = s->nf;
    s->nf = 0;
    for (int i = 0; i < nf && st == MLC_OK; i++)
        st = surf_push_tri(s, map[s->F[3 * i]], map[s->F[3 * i + 1]], map[s->F[3 * i + 2]], path,
                           err);
    mlc_free(s->V);
    s->V = V;
    V = NULL;
    s->nv = s->vcap = n;
done:
    mlc_free(map);
    mlc_free(V);
    return st;
}

/* ---- PLY (ASCII and binary) ------------------------------------------------------------------
 * One header (text, read with the lexer) then the elements in header order: whitespace-separated
 * numbers (ascii), or packed values of the declared types (binary_little_endian,
 * binary_big_endian). Both bodies are read by one loop; ply_src supplies the values. */
enum { PLY_MAX_ELEMENTS = 16, PLY_MAX_PROPS = 64 };
enum { ROLE_NONE, ROLE_X, ROLE_Y, ROLE_Z, ROLE_INDICES };
enum { PLY_ASCII, PLY_BINARY_LE, PLY_BINARY_BE };

typedef struct ply_element {
    int kind;      /* 0 other, 1 vertex, 2 face */
    char name[48]; /* quoted, for messages */
    long long count;
    long line;
    int nprops;
    struct {
        int list, role;
        mlc__ply_type type, count_type; /* the value's (a list's items'), a list's length's */
        long line;
    } props[PLY_MAX_PROPS];
} ply_element;

/* The property's types from the header words after "property": "TYPE" or "list COUNT ITEM".
 * Unknown names are kept as MLC__PLY_NONE: only a binary body needs them (ply_check_types). */
static void ply_types(const mlc__tok *t, int list, const mlc__tok *count, ply_element *e) {
    e->props[e->nprops].type = mlc__ply_type_named(t->s, t->n);
    e->props[e->nprops].count_type = list ? mlc__ply_type_named(count->s, count->n) : MLC__PLY_NONE;
}

/* The header, after the 'ply' line, up to and with end_header: the body's format, the elements
 * (at most PLY_MAX_ELEMENTS) into el, their number into *nel. */
static mlc_status ply_header(mlc__lex *lx, int *format, ply_element *el, int *nel_out,
                             mlc_err *err) {
    mlc__tok t;
    mlc_status st;
    int nel = 0;
    const char *path = lx->path;
    *format = PLY_ASCII;
    for (;;) {
        if (!mlc__lex_next(lx, &t))
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected 'end_header', found the end of "
                            "the file (the file is truncated)",
                            path, lx->line);
        long line = t.line;
        if (mlc__tok_is(&t, "end_header")) {
            mlc__lex_skip_line(lx);
            *nel_out = nel;
            return MLC_OK;
        } else if (mlc__tok_is(&t, "format")) {
            int have = mlc__lex_inline(lx, &t);
            if (have && mlc__tok_is(&t, "ascii"))
                *format = PLY_ASCII;
            else if (have && mlc__tok_is(&t, "binary_little_endian"))
                *format = PLY_BINARY_LE;
            else if (have && mlc__tok_is(&t, "binary_big_endian"))
                *format = PLY_BINARY_BE;
            else
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected 'format ascii 1.0', 'format "
                                "binary_little_endian 1.0' or 'format binary_big_endian 1.0'; "
                                "save the surface as one of these PLY variants, or as OFF",
                                path, line);
        } else if (mlc__tok_is(&t, "element")) {
            if (nel == PLY_MAX_ELEMENTS)
                return mlc_errf(err, MLC_EPARSE, "%s:%ld: more than %d elements in the header",
                                path, line, PLY_MAX_ELEMENTS);
            ply_element *e = el + nel++;
            memset(e, 0, sizeof *e);
            e->line = line;
            if (!mlc__lex_inline(lx, &t))
                return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected an element name", path, line);
            e->kind = mlc__tok_is(&t, "vertex") ? 1 : mlc__tok_is(&t, "face") ? 2 : 0;
            mlc__tok_show(&t, e->name); /* quoted, bounded: for messages */
            if ((st = mlc__lex_ll(lx, 1, "the element count", &e->count, err))) return st;
        } else if (mlc__tok_is(&t, "property")) {
            if (nel == 0)
                return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected 'element' before 'property'",
                                path, line);
            ply_element *e = el + nel - 1;
            if (e->nprops == PLY_MAX_PROPS)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: more than %d properties in one "
                                "element",
                                path, line, PLY_MAX_PROPS);
            int list = 0;
            mlc__tok name, count = {0};
            if (!mlc__lex_inline(lx, &t))
                return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected a property type", path, line);
            if (mlc__tok_is(&t, "list")) {
                list = 1;
                /* count type and item type */
                if (!mlc__lex_inline(lx, &count) || !mlc__lex_inline(lx, &t))
                    return mlc_errf(err, MLC_EPARSE,
                                    "%s:%ld: expected 'property list "
                                    "<count type> <item type> <name>'",
                                    path, line);
            }
            ply_types(&t, list, &count, e);
            if (!mlc__lex_inline(lx, &name))
                return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected a property name", path, line);
            int role = ROLE_NONE;
            if (e->kind == 1 && !list)
                role = mlc__tok_is(&name, "x")   ? ROLE_X
                       : mlc__tok_is(&name, "y") ? ROLE_Y
                       : mlc__tok_is(&name, "z") ? ROLE_Z
                                                 : ROLE_NONE;
            if (e->kind == 2 && list &&
                (mlc__tok_is(&name, "vertex_indices") || mlc__tok_is(&name, "vertex_index")))
                role = ROLE_INDICES;
            e->props[e->nprops].list = list;
            e->props[e->nprops].role = role;
            e->props[e->nprops].line = line;
            e->nprops++;
        } else if (!mlc__tok_is(&t, "comment") && !mlc__tok_is(&t, "obj_info")) {
            char what[160];
            snprintf(what, sizeof what,
                     "a PLY header line (format, element, property, comment, "
                     "end_header), found '%.*s'",
                     (int)MLC_MIN(t.n, 40), t.s);
            return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected %s", path, line, what);
        }
        mlc__lex_skip_line(lx);
    }
}

/* The layout we need: one vertex element with x, y, z and one face element with a list
 * property vertex_indices. */
static mlc_status ply_check_layout(const ply_element *el, int nel, const char *path, mlc_err *err) {
    int have_v = 0, have_f = 0;
    for (int i = 0; i < nel; i++) {
        /* One of each: the body's vertices are stored as one element announces them. */
        if ((el[i].kind == 1 && have_v) || (el[i].kind == 2 && have_f))
            return mlc_errf(err, MLC_EPARSE,
                            "%s:%ld: expected one 'element %s' in the header, found a second", path,
                            el[i].line, el[i].kind == 1 ? "vertex" : "face");
        int mask = 0;
        for (int p = 0; p < el[i].nprops; p++)
            if (el[i].props[p].role) mask |= 1 << el[i].props[p].role;
        if (el[i].kind == 1) {
            if (mask != ((1 << ROLE_X) | (1 << ROLE_Y) | (1 << ROLE_Z)))
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected the vertex element to have "
                                "properties x, y and z",
                                path, el[i].line);
            have_v = 1;
        } else if (el[i].kind == 2) {
            if (mask != 1 << ROLE_INDICES)
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected the face element to have a "
                                "list property vertex_indices",
                                path, el[i].line);
            have_f = 1;
        }
    }
    if (!have_v || !have_f)
        return mlc_errf(err, MLC_EPARSE,
                        "%s: expected 'element vertex' and 'element face' in "
                        "the header",
                        path);
    return MLC_OK;
}

/* A binary body is decoded by the declared types, so each must be a PLY type, and a list's
 * length an integer. */
static mlc_status ply_check_types(const ply_element *el, int nel, const char *path, mlc_err *err) {
    for (int i = 0; i < nel; i++)
        for (int p = 0; p < el[i].nprops; p++) {
            const int list = el[i].props[p].list;
            if (!el[i].props[p].type || (list && !el[i].props[p].count_type))
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: expected a PLY type (char, uchar, short, ushort, int, "
                                "uint, float, double, or int8 ... float64) for the %s of a "
                                "property of element %s; a binary body is decoded by them",
                                path, el[i].props[p].line,
                                !el[i].props[p].type ? (list ? "items" : "value") : "length",
                                el[i].name);
            if (list && !mlc__ply_type_is_integer(el[i].props[p].count_type))
                return mlc_errf(err, MLC_EPARSE,
                                "%s:%ld: a list length must have an integer type (e.g. 'property "
                                "list uchar int vertex_indices'), element %s has a floating-point "
                                "one",
                                path, el[i].props[p].line, el[i].name);
        }
    return MLC_OK;
}

/* The source of the body's values: the lexer (ascii) or the binary cursor. */
typedef struct ply_src {
    mlc__lex *lx;
    mlc__ply_bin *bin; /* NULL for an ascii body */
    const ply_element *e;
    long long item; /* index in e of the item being read */
} ply_src;

/* Where the cursor is, for messages: "LINE" (ascii) or "byte N" (binary). */
static const char *ply_where(const ply_src *src, char buf[32]) {
    if (src->bin)
        snprintf(buf, 32, "byte %zu", mlc__ply_bin_offset(src->bin));
    else
        snprintf(buf, 32, "%ld", src->lx->line);
    return buf;
}

/* A scalar property's value; a vertex coordinate (`coordinate`) must be finite. */
static mlc_status ply_number(ply_src *src, mlc__ply_type type, int coordinate, double *out,
                             mlc_err *err) {
    const char *what = coordinate ? "a vertex coordinate" : "a property value";
    if (!src->bin) return mlc__lex_double(src->lx, 0, what, out, err);
    char at[32];
    ply_where(src, at);
    mlc_status st = mlc__ply_bin_value(src->bin, type, what, src->e->name, src->item, out, err);
    if (st == MLC_OK && coordinate && !isfinite(*out))
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%s: a vertex coordinate of vertex %lld is not finite (%g); "
                        "coordinates must be finite numbers, fix the file",
                        src->lx->path, at, src->item, *out);
    return st;
}

static mlc_status ply_integer(ply_src *src, mlc__ply_type type, const char *what, long long *out,
                              mlc_err *err) {
    if (!src->bin) return mlc__lex_ll(src->lx, 0, what, out, err);
    char at[32];
    ply_where(src, at);
    double v;
    mlc_status st = mlc__ply_bin_value(src->bin, type, what, src->e->name, src->item, &v, err);
    if (st) return st;
    /* Integer types are exact; a float-typed list item must be a whole number to be an index. */
    if (!(v == floor(v) && fabs(v) < 9007199254740992.0))
        return mlc_errf(err, MLC_EPARSE, "%s:%s: expected %s (an integer) in %s %lld, found %g",
                        src->lx->path, at, what, src->e->name, src->item, v);
    *out = (long long)v;
    return MLC_OK;
}

/* The fewest bytes one item of e takes in a binary body (every list empty). */
static long long ply_min_item_bytes(const ply_element *e) {
    long long n = 0;
    for (int p = 0; p < e->nprops; p++)
        n += mlc__ply_type_size(e->props[p].list ? e->props[p].count_type : e->props[p].type);
    return n;
}

/* A header count must fit in what remains of the file before it sizes an allocation or a
 * loop: tokens for an ascii body, bytes for a binary one. */
static mlc_status ply_check_count(const ply_src *src, const ply_element *e, mlc_err *err) {
    const char *what = e->kind == 1 ? "vertices" : e->kind == 2 ? "faces" : "items";
    if (!src->bin)
        return mlc__check_count(src->lx, e->line, e->count, MLC_MAX(e->nprops, 1), what, err);
    const long long need = ply_min_item_bytes(e);
    const size_t left = (size_t)(src->bin->end - src->bin->p);
    if (e->count < 0)
        return mlc_errf(err, MLC_EPARSE, "%s:%ld: expected a non-negative number of %s, found %lld",
                        src->lx->path, e->line, what, e->count);
    if (need > 0 && (unsigned long long)e->count > left / (unsigned long long)need)
        return mlc_errf(err, MLC_EPARSE,
                        "%s:%ld: the header announces %lld %s of at least %lld bytes each, but "
                        "only %zu bytes follow; the file is truncated or the count is wrong",
                        src->lx->path, e->line, e->count, what, need, left);
    return MLC_OK;
}

static mlc_status ply_body(ply_src *src, const ply_element *el, int nel, surf *s, mlc_err *err) {
    mlc_status st;
    const char *path = src->lx->path;
    for (int i = 0; i < nel; i++) {
        const ply_element *e = el + i;
        src->e = e;
        if ((st = ply_check_count(src, e, err))) return st;
        if (e->kind == 1 && (st = surf_reserve(s, e->count, 0, path, err))) return st;
        if (e->kind == 2 && (st = surf_reserve(s, 0, e->count, path, err))) return st;
        if (e->nprops == 0) continue; /* items without data (the count was checked) */
        for (long long j = 0; j < e->count; j++) {
            double x[3] = {0, 0, 0};
            src->item = j;
            for (int p = 0; p < e->nprops; p++) {
                int role = e->props[p].role;
                if (!e->props[p].list) {
                    double v;
                    if ((st = ply_number(src, e->props[p].type, role != ROLE_NONE, &v, err)))
                        return st;
                    if (role >= ROLE_X && role <= ROLE_Z) x[role - ROLE_X] = v;
                    continue;
                }
                long long n = 0, v = 0;
                if ((st = ply_integer(src, e->props[p].count_type, "a list length", &n, err)))
                    return st;
                char at[32];
                ply_where(src, at);
                if (n < 0 || (role == ROLE_INDICES && n < 3))
                    return mlc_errf(err, MLC_EPARSE,
                                    "%s:%s: expected a list length%s, found "
                                    "%lld",
                                    path, at, role ? " of at least 3" : "", n);
                int first = -1, prev = -1;
                for (long long k = 0; k < n; k++) {
                    if ((st = ply_integer(src, e->props[p].type, "a list item", &v, err)))
                        return st;
                    if (role != ROLE_INDICES) continue;
                    if (v < 0 || v >= s->nv)
                        return mlc_errf(err, MLC_EPARSE,
                                        "%s:%s: expected a vertex index in %d..%d, found %lld",
                                        path, at, 0, s->nv - 1, v);
                    if ((st = fan_corner(s, k, (int)v, &first, &prev, path, err))) return st;
                }
            }
            if (e->kind == 1) {
                memcpy(s->V + 3 * (size_t)s->nv, x, sizeof x);
                s->nv++;
            }
        }
    }
    return MLC_OK;
}

static mlc_status read_ply(mlc__lex *lx, surf *s, mlc_err *err) {
    mlc__tok t;
    mlc_status st;
    ply_element el[PLY_MAX_ELEMENTS];
    int nel = 0, format = PLY_ASCII;
    const char *path = lx->path;
    if (!mlc__lex_next(lx, &t) || !mlc__tok_is(&t, "ply"))
        return mlc_errf(err, MLC_EPARSE, "%s:1: expected 'ply' (the first line of a PLY file)",
                        path);
    mlc__lex_skip_line(lx);
    if ((st = ply_header(lx, &format, el, &nel, err)) ||
        (st = ply_check_layout(el, nel, path, err)) ||
        (format != PLY_ASCII && (st = ply_check_types(el, nel, path, err))))
        return st;
    mlc__ply_bin bin = {(const unsigned char *)lx->begin, (const unsigned char *)lx->p,
                        (const unsigned char *)lx->end, format == PLY_BINARY_BE, path};
    ply_src src = {lx, format == PLY_ASCII ? NULL : &bin, NULL, 0};
    return ply_body(&src, el, nel, s, err);
}

/* ---- Running tetgen ----------------------------------------------------------------------------
 */
#define TG_PATH 4096

/* Find an executable: a name with a slash is taken as is, otherwise searched on PATH. */
static int find_program(const char *name, char out[TG_PATH]) {
    if (strchr(name, '/')) {
        if (snprintf(out, TG_PATH, "%s", name) >= TG_PATH) return 0;
        return access(out, X_OK) == 0;
    }
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs) dirs = "/usr/local/bin:/usr/bin:/bin";
    while (*dirs) {
        const char *colon = strchr(dirs, ':');
        size_t len = colon ? (size_t)(colon - dirs) : strlen(dirs);
        int n = snprintf(out, TG_PATH, "%.*s/%s", (int)len, len ? dirs : ".", name);
        if (len == 0) n = snprintf(out, TG_PATH, "./%s", name);
        if (n > 0 && n < TG_PATH && access(out, X_OK) == 0) return 1;
        dirs += len + (colon ? 1 : 0);
    }
    return 0;
}

/* Run prog with argv, stdin from /dev/null, stdout+stderr to `log`; *wstatus from waitpid. */
static mlc_status run_program(const char *prog, char *const argv[], const char *log, int *wstatus,
                              const char *path, mlc_err *err) {
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory starting tetgen", path);
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (!rc) rc = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    /* tetgen aborts on bad input; keep it from leaving a core file in the caller's directory.
     * The child inherits the limit; ours is restored right after the spawn. */
    struct rlimit core, nocore;
    int have_core = getrlimit(RLIMIT_CORE, &core) == 0;
    if (have_core) {
        nocore = core;
        nocore.rlim_cur = 0;
        setrlimit(RLIMIT_CORE, &nocore);
    }
    pid_t pid = 0;
    if (!rc) rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
    if (have_core) setrlimit(RLIMIT_CORE, &core);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) return mlc_errf(err, MLC_ETOOL, "%s: cannot run %s: %s", path, prog, strerror(rc));
    for (;;) {
        if (waitpid(pid, wstatus, 0) == pid) break;
        if (errno != EINTR)
            return mlc_errf(err, MLC_ETOOL, "%s: waiting for %s failed: %s", path, prog,
                            strerror(errno));
    }
    return MLC_OK;
}

/* The last few non-empty lines of a log, joined with " | ", for messages. */
static void log_tail(const char *log, char *out, size_t cap) {
    char *buf = NULL;
    size_t size = 0;
    out[0] = '\0';
    if (mlc__file_load(log, &buf, &size, NULL) != MLC_OK) return;
    enum { LINES = 3 };
    const char *starts[LINES];
    size_t lens[LINES];
    int count = 0;
    const char *p = buf, *end = buf + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t len = (size_t)(e - p);
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' '))
            len--;
        if (len) {
            if (count == LINES) {
                memmove(starts, starts + 1, (LINES - 1) * sizeof *starts);
                memmove(lens, lens + 1, (LINES - 1) * sizeof *lens);
                count--;
            }
            starts[count] = p;
            lens[count++] = len;
        }
        p = nl ? nl + 1 : end;
    }
    size_t used = 0;
    for (int i = 0; i < count && used + 1 < cap; i++) {
        int n = snprintf(out + used, cap - used, "%s%.*s", i ? " | " : "",
                         (int)MLC_MIN(lens[i], 200), starts[i]);
        if (n < 0) break;
        used += (size_t)n < cap - used ? (size_t)n : cap - used - 1;
    }
    if (count == 0) snprintf(out, cap, "(empty log)");
    mlc_free(buf);
}

/* tetgen's own account of a failed run: the run is repeated without -Q and with unbuffered
 * output (coreutils' stdbuf, when it is there: tetgen's stdio buffer is lost when it aborts,
 * and with it the reason it printed), and the last lines of that log are returned in `out`
 * (empty when nothing could be learned). */
static void tetgen_reason(const char *prog, const char *off, const char *dir, const char *path,
                          char *out, size_t cap) {
    char vlog[TG_PATH], sb[TG_PATH];
    out[0] = '\0';
    if (snprintf(vlog, sizeof vlog, "%s/verbose.log", dir) >= (int)sizeof vlog) return;
    char a_flags[] = "-pYq1.414", a_z[] = "-z", a_o[] = "-o0", a_e[] = "-e0";
    char *progc = (char *)(uintptr_t)prog, *offc = (char *)(uintptr_t)off;
    int ws = 0, ran = 0;
    if (find_program("stdbuf", sb)) {
        char *argv[] = {sb, a_o, a_e, progc, a_flags, a_z, offc, NULL};
        ran = run_program(sb, argv, vlog, &ws, path, NULL) == MLC_OK;
    }
    if (!ran) { /* no stdbuf, or it could not be started: tetgen alone (buffered) */
        char *argv[] = {progc, a_flags, a_z, offc, NULL};
        if (run_program(prog, argv, vlog, &ws, path, NULL) != MLC_OK) return;
    }
    log_tail(vlog, out, cap);
}

/* "!! Found K pairs of faces are intersecting." in a `tetgen -d` log; -1 when absent. */
static long count_intersections(const char *log) {
    char *buf = NULL;
    size_t size = 0;
    long k = -1;
    if (mlc__file_load(log, &buf, &size, NULL) != MLC_OK) return -1;
    const char *p = strstr(buf, "Found ");
    if (p && strstr(p, "pairs of faces")) k = strtol(p + 6, NULL, 10);
    mlc_free(buf);
    return k;
}

static mlc_status write_off(const surf *s, const char *file, const char *path, mlc_err *err) {
    FILE *f = fopen(file, "w");
    if (!f) return mlc_errf(err, MLC_EIO, "%s: cannot write %s: %s", path, file, strerror(errno));
    fprintf(f, "OFF\n%d %d 0\n", s->nv, s->nf);
    /* %.17g round-trips doubles exactly, so tetgen sees the same coordinates we read. */
    for (int i = 0; i < s->nv; i++)
        fprintf(f, "%.17g %.17g %.17g\n", s->V[3 * i], s->V[3 * i + 1], s->V[3 * i + 2]);
    for (int i = 0; i < s->nf; i++)
        fprintf(f, "3 %d %d %d\n", s->F[3 * i], s->F[3 * i + 1], s->F[3 * i + 2]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return mlc_errf(err, MLC_EIO, "%s: cannot write %s", path, file);
    return MLC_OK;
}

/* Remove the private temporary directory and the files tetgen left in it. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[TG_PATH];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p) unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* The volume the closed surface encloses (divergence theorem over its triangles); its sign
 * follows the winding, so the magnitude is returned. */
static double enclosed_volume(const surf *s) {
    double v6 = 0;
    for (int f = 0; f < s->nf; f++) {
        const double *a = s->V + 3 * s->F[3 * f], *b = s->V + 3 * s->F[3 * f + 1],
                     *c = s->V + 3 * s->F[3 * f + 2];
        v6 += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
              a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return fabs(v6) / 6.0;
}

/* tets_cache: the file of tetgen_cache.c, or NULL. min_tets > 0: tetgen's volume bound -a is
 * the enclosed volume / min_tets, so at least that many tets (quality refinement adds more). */
static mlc_status tetrahedralize(const surf *s, const char *path, const char *tets_cache,
                                 int min_tets, mlc_mesh *m, mlc_err *err) {
    char prog[TG_PATH], dir[TG_PATH - 64], off[TG_PATH], log[TG_PATH], node[TG_PATH], ele[TG_PATH];
    const char *want = getenv("MLC_TETGEN");
    int from_env = want && *want;
    if (!find_program(from_env ? want : "tetgen", prog))
        return mlc_errf(err, MLC_ETOOL,
                        "%s: cannot tetrahedralize the surface: %s; install the "
                        "Debian package `tetgen` (apt-get install tetgen), set MLC_TETGEN to the "
                        "tetgen program, or give a tet mesh (.mesh, .node/.ele, .msh)",
                        path,
                        from_env ? "the program named by MLC_TETGEN was not found or is not "
                                   "executable"
                                 : "tetgen was not found on PATH");
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    if (snprintf(dir, sizeof dir, "%s/modalloco-tetgen-XXXXXX", tmp) >= (int)sizeof dir)
        return mlc_errf(err, MLC_EIO, "%s: TMPDIR is too long", path);
    if (!mkdtemp(dir))
        return mlc_errf(err, MLC_EIO, "%s: cannot create a temporary directory in %s: %s", path,
                        tmp, strerror(errno));
    snprintf(off, sizeof off, "%s/surface.off", dir);
    snprintf(log, sizeof log, "%s/tetgen.log", dir);
    snprintf(node, sizeof node, "%s/surface.1.node", dir);
    snprintf(ele, sizeof ele, "%s/surface.1.ele", dir);

    int ws = 0;
    char a_flags[48] = "-pYq1.414", a_z[] = "-z", a_q[] = "-Q", a_d[] = "-d";
    if (min_tets > 0) /* %.6g: tetgen reads it back as the same bound on every run */
        snprintf(a_flags, sizeof a_flags, "-pYq1.414a%.6g", enclosed_volume(s) / min_tets);
    char *argv[] = {prog, a_flags, a_z, a_q, off, NULL};
    mlc_status st = write_off(s, off, path, err);
    uint64_t key = 0;
    if (st == MLC_OK && tets_cache && tets_cache[0]) {
        char switches[64]; /* the run's own switches (argv above) */
        snprintf(switches, sizeof switches, "%s %s %s", a_flags, a_z, a_q);
        key = mlc__tetgen_cache_key(off, prog, switches);
        /* A restored pair is the bytes tetgen wrote: the reader gives the same mesh. */
        if (mlc__tetgen_cache_get(tets_cache, key, node, ele)) {
            if ((st = mlc__tetgen_read(node, ele, m, err)) == MLC_OK) {
                mlc_free(m->tet_tag), m->tet_tag = NULL;
                goto done;
            }
            if (st == MLC_ENOMEM) goto done;
            st = MLC_OK; /* unreadable (cannot happen for a checked file): run tetgen */
        }
    }
    if (st == MLC_OK) st = run_program(prog, argv, log, &ws, path, err);
    if (st != MLC_OK) goto done;
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        st = mlc__tetgen_read(node, ele, m, err);
        if (st == MLC_OK && key) mlc__tetgen_cache_put(tets_cache, key, node, ele);
        /* Labels do not apply to a tetrahedralized surface (tetgen runs without -A). */
        if (st == MLC_OK) mlc_free(m->tet_tag), m->tet_tag = NULL;
        /* Out of memory is ours, not tetgen's: keep the status (and its message). */
        if (st == MLC_ENOMEM) goto done;
        if (st != MLC_OK && err) {
            char inner[sizeof err->msg];
            memcpy(inner, err->msg, sizeof inner);
            st = mlc_errf(err, MLC_ETOOL,
                          "%s: tetgen ran but its output could not be read "
                          "(%s)",
                          path, inner);
        } else if (st != MLC_OK) {
            st = MLC_ETOOL;
        }
        goto done;
    }
    char tail[512], reason[512];
    log_tail(log, tail, sizeof tail);
    int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (sig || code == 128 + SIGABRT) {
        /* tetgen aborts without explanation on self-intersecting input: ask it. */
        char dlog[TG_PATH];
        snprintf(dlog, sizeof dlog, "%s/detect.log", dir);
        char *dargv[] = {prog, a_d, off, NULL};
        int dws = 0;
        long k = -1;
        if (run_program(prog, dargv, dlog, &dws, path, NULL) == MLC_OK)
            k = count_intersections(dlog);
        if (k > 0) {
            st = mlc_errf(err, MLC_EINVAL,
                          "%s: surface self-intersects (%ld pairs of faces "
                          "intersect); repair the surface (e.g. remove overlapping parts) or "
                          "give a tet mesh",
                          path, k);
            goto done;
        }
        tetgen_reason(prog, off, dir, path, reason, sizeof reason);
        st = mlc_errf(err, MLC_ETOOL, "%s: tetgen %s %d; tetgen says: %s", path,
                      sig ? "was killed by signal" : "aborted with exit status", sig ? sig : code,
                      reason[0] ? reason : tail);
        goto done;
    }
    tetgen_reason(prog, off, dir, path, reason, sizeof reason);
    st = mlc_errf(err, MLC_ETOOL, "%s: tetgen failed with exit status %d; tetgen says: %s", path,
                  code, reason[0] ? reason : tail);
done:
    remove_dir(dir);
    return st;
}

/* ---- Checking the surface before tetgen ---------------------------------------------------- */
/* A vertex for messages: its number in the file's own numbering (OBJ counts from 1; STL has no
 * numbers, its vertices are merged by position) and its position. */
static void vertex_text(const surf *s, const char *fmt, int v, char *out, size_t cap) {
    const double *x = s->V + 3 * (size_t)v;
    if (!strcmp(fmt, "stl"))
        snprintf(out, cap, "(%.6g, %.6g, %.6g)", x[0], x[1], x[2]);
    else
        snprintf(out, cap, "%d (%.6g, %.6g, %.6g)", v + !strcmp(fmt, "obj"), x[0], x[1], x[2]);
}

/* Append a printf-style line to buf (cap bytes), separated from the previous one by '\n'. */
static void __attribute__((format(printf, 3, 4)))
add_line(char *buf, size_t cap, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used && used + 1 < cap) buf[used++] = '\n', buf[used] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

/* Run surface_check.h on the surface about to go to tetgen, keep the result in the report, and
 * fail with MLC_EINVAL naming every defect found, one line each, with what to do: tetgen would
 * abort without a reason on most of them, or exit 0 having made no tets on an open surface. */
static mlc_status check_surface(const surf *s, const char *path, const char *fmt,
                                mlc_mesh_report *report, mlc_err *err) {
    mlc_surface_check c;
    if (mlc_surface_check_compute(s->nv, s->V, s->nf, s->F, &c) != MLC_OK)
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    if (report) {
        report->surface_checked = 1;
        report->surface = c;
        report->dropped_triangles = s->dropped;
    }
    if (mlc_surface_check_ok(&c)) return MLC_OK;
    char msg[sizeof err->msg] = "", v0[96], v1[96];
    if (c.boundary_edges) {
        vertex_text(s, fmt, c.boundary_vertex, v0, sizeof v0);
        add_line(msg, sizeof msg,
                 "%s: the surface is open: %d boundary edges (edges of only one triangle), one "
                 "at vertex %s; close the holes in a mesh editor (Blender: Select > Select All by "
                 "Trait > Non Manifold, then Face > Fill) or give a tet mesh",
                 path, c.boundary_edges, v0);
    }
    if (c.nonmanifold_edges) {
        vertex_text(s, fmt, c.nonmanifold_edge[0], v0, sizeof v0);
        vertex_text(s, fmt, c.nonmanifold_edge[1], v1, sizeof v1);
        add_line(msg, sizeof msg,
                 "%s: the surface is not manifold: %d edges are shared by more than two "
                 "triangles, e.g. the edge from vertex %s to vertex %s (%d triangles); separate "
                 "the parts that meet there or delete the extra faces",
                 path, c.nonmanifold_edges, v0, v1, c.nonmanifold_count);
    }
    if (c.degenerate) {
        const int *f = s->F + 3 * (size_t)c.degenerate_triangle;
        const double *a = s->V + 3 * (size_t)f[0], *b = s->V + 3 * (size_t)f[1],
                     *d = s->V + 3 * (size_t)f[2];
        add_line(msg, sizeof msg,
                 "%s: %d degenerate triangles (zero area), e.g. the one with corners (%.6g, "
                 "%.6g, %.6g), (%.6g, %.6g, %.6g), (%.6g, %.6g, %.6g); remove them (Blender: "
                 "Mesh > Clean Up > Degenerate Dissolve) or give a tet mesh",
                 path, c.degenerate, a[0], a[1], a[2], b[0], b[1], b[2], d[0], d[1], d[2]);
    }
    if (c.components > 1) {
        char sizes[96] = "";
        size_t used = 0;
        int shown = MLC_MIN(c.components, MLC_SURFACE_CHECK_PARTS);
        for (int i = 0; i < shown && used < sizeof sizes; i++)
            used += (size_t)snprintf(sizes + used, sizeof sizes - used, "%s%d",
                                     i == 0                 ? ""
                                     : i + 1 < c.components ? ", "
                                                            : " and ",
                                     c.component_sizes[i]);
        if (c.components > shown && used < sizeof sizes)
            snprintf(sizes + used, sizeof sizes - used, ", ...");
        add_line(msg, sizeof msg,
                 "%s: the surface has %d separate parts (connected components) of %s triangles; "
                 "the method needs one body: remove the small parts or join them (Blender: Mesh "
                 "> Separate > By Loose Parts)",
                 path, c.components, sizes);
    }
    return mlc_errf(err, MLC_EINVAL, "%s", msg);
}

/* ---- Entry -------------------------------------------------------------------------------------
 */
mlc_status mlc__surface_read(const char *path, const char *fmt, const char *tets_cache,
                             int min_tets, mlc_mesh *m, mlc_mesh_report *report, mlc_err *err) {
    char *buf = NULL;
    size_t size = 0;
    surf s;
    memset(&s, 0, sizeof s);
    memset(m, 0, sizeof *m);
    mlc_status st = mlc__file_load(path, &buf, &size, err);
    if (st) return st;
    mlc__lex lx;
    if (!strcmp(fmt, "off")) {
        mlc__lex_init(&lx, buf, size, path, '#');
        st = read_off(&lx, &s, err);
    } else if (!strcmp(fmt, "obj")) {
        mlc__lex_init(&lx, buf, size, path, '#');
        st = read_obj(&lx, &s, err);
    } else if (!strcmp(fmt, "ply")) {
        mlc__lex_init(&lx, buf, size, path, 0);
        st = read_ply(&lx, &s, err);
    } else {
        /* Binary STL is recognized by its exact size; ASCII STL starts with "solid". */
        uint32_t n = size >= 84 ? le32((const unsigned char *)buf + 80) : 0;
        if (size >= 84 && (unsigned long long)size == 84ULL + 50ULL * n) {
            st = read_stl_binary(path, (const unsigned char *)buf, n, &s, err);
        } else {
            mlc__lex_init(&lx, buf, size, path, 0);
            mlc__tok t;
            if (mlc__lex_next(&lx, &t) && mlc__tok_is(&t, "solid")) {
                mlc__lex_init(&lx, buf, size, path, 0);
                st = read_stl_ascii(&lx, &s, err);
            } else if (size >= 84) {
                st = mlc_errf(err, MLC_EPARSE,
                              "%s:byte 0: expected an STL file: not ASCII (no "
                              "'solid' at the start) and not binary (%zu bytes, but a binary STL "
                              "with the %u triangles its header announces has %llu bytes)",
                              path, size, (unsigned)n, 84ULL + 50ULL * n);
            } else {
                st = mlc_errf(err, MLC_EPARSE,
                              "%s:byte 0: expected an STL file: not ASCII (no "
                              "'solid' at the start) and too short (%zu bytes) for a binary STL",
                              path, size);
            }
        }
        if (st == MLC_OK) st = merge_vertices(&s, path, err);
    }
    mlc_free(buf);
    if (st == MLC_OK && (s.nv < 4 || s.nf < 4))
        st = mlc_errf(err, MLC_EINVAL,
                      "%s: the surface has %d vertices and %d triangles; a "
                      "closed surface needs at least 4 of each",
                      path, s.nv, s.nf);
    if (st == MLC_OK) st = check_surface(&s, path, fmt, report, err);
    if (st == MLC_OK) st = tetrahedralize(&s, path, tets_cache, min_tets, m, err);
    surf_free(&s);
    if (st != MLC_OK) mlc_mesh_free(m);
    return st;
}
