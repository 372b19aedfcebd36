/* mesh_read.c: mlc_mesh_read, the entry point for every mesh file: dispatch by extension
 * (case-insensitive, before a final ".gz") to the tetrahedral readers (mesh_tet.c) or the
 * surface reader (mesh_surface.c), then mlc_mesh_finalize (validation, repair, boundary). */
#include "internal/mesh_internal.h"
#include "internal/mesh_lexer.h"

#include "gzip.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- Dispatch ----------------------------------------------------------------------------- */
static const char *supported =
    ".mesh (MEDIT), .node/.ele (TetGen), .msh (Gmsh 2.2/4.1), .off, .obj, .stl, .ply (surfaces, "
    "tetrahedralized with tetgen)";

/* The file of a TetGen pair: stem + ext, compressed like the file the user named (gz) when
 * that exists, else the other way (foo.ele.gz finds foo.node.gz, or foo.node if only that is
 * there). Fresh string (mlc_free); NULL when out of memory. */
static char *tetgen_partner(const char *stem, size_t stem_len, const char *ext, int gz) {
    size_t n = stem_len + strlen(ext);
    char *t = mlc_malloc(n + 4);
    if (!t) return NULL;
    memcpy(t, stem, stem_len);
    memcpy(t + stem_len, ext, n - stem_len);
    memcpy(t + n, ".gz", 4); /* t is the compressed name; t[n] = 0 makes it the plain one */
    if (!gz) t[n] = '\0';
    if (!mlc_file_exists(t)) {
        char keep = t[n];
        t[n] = gz ? '\0' : '.';
        if (!mlc_file_exists(t)) t[n] = keep;
    }
    return t;
}

static mlc_status read_tetgen_path(const char *path, size_t stem_len, int upper, int gz,
                                   mlc_mesh *m, mlc_err *err) {
    /* Keep the case of the given extension for its partner (CUBE.NODE -> CUBE.ELE). */
    char *node = tetgen_partner(path, stem_len, upper ? ".NODE" : ".node", gz);
    char *ele = tetgen_partner(path, stem_len, upper ? ".ELE" : ".ele", gz);
    mlc_status st;
    if (!node || !ele)
        st = mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    else
        st = mlc__tetgen_read(node, ele, m, err);
    mlc_free(node);
    mlc_free(ele);
    return st;
}

mlc_status mlc_mesh_read(const char *path, mlc_mesh *mesh, mlc_mesh_report *report, mlc_err *err) {
    return mlc_mesh_read_cached(path, NULL, mesh, report, err);
}

mlc_status mlc_mesh_read_cached(const char *path, const char *tets_cache, mlc_mesh *mesh,
                                mlc_mesh_report *report, mlc_err *err) {
    return mlc_mesh_read_sized(path, tets_cache, 0, mesh, report, err);
}

mlc_status mlc_mesh_read_sized(const char *path, const char *tets_cache, int min_tets,
                               mlc_mesh *mesh, mlc_mesh_report *report, mlc_err *err) {
    mlc_mesh_report local;
    if (!report) report = &local;
    memset(report, 0, sizeof *report);
    memset(mesh, 0, sizeof *mesh);
    if (!path || !*path) return mlc_errf(err, MLC_EINVAL, "no mesh path given");

    /* The format is the extension before a final ".gz" (cube.off.gz is an OFF file). */
    int gz = mlc_gz_name(path);
    size_t name_len = strlen(path) - (gz ? 3 : 0);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *ext = NULL;
    for (const char *q = base; q < path + name_len; q++)
        if (*q == '.') ext = q;
    size_t ext_len = ext ? (size_t)(path + name_len - ext) - 1 : 0;
    char lower[8] = "";
    if (ext && ext_len < sizeof lower) {
        for (size_t i = 0; i < ext_len; i++)
            lower[i] = (char)tolower((unsigned char)ext[1 + i]);
        lower[ext_len] = '\0';
    }
    mlc_status st;
    char *buf = NULL;
    size_t size = 0;
    if (!strcmp(lower, "node") || !strcmp(lower, "ele")) {
        snprintf(report->format, sizeof report->format, "tetgen");
        st = read_tetgen_path(path, (size_t)(ext - path), isupper((unsigned char)ext[1]), gz, mesh,
                              err);
    } else if (!strcmp(lower, "mesh") || !strcmp(lower, "msh")) {
        st = mlc__file_load(path, &buf, &size, err);
        if (st == MLC_OK && lower[1] == 'e') {
            snprintf(report->format, sizeof report->format, "medit");
            st = mlc__medit_read(path, buf, size, mesh, err);
        } else if (st == MLC_OK) {
            st = mlc__gmsh_read(path, buf, size, mesh, report->format, err);
        }
        mlc_free(buf);
    } else if (!strcmp(lower, "off") || !strcmp(lower, "obj") || !strcmp(lower, "stl") ||
               !strcmp(lower, "ply")) {
        snprintf(report->format, sizeof report->format, "%s", lower);
        report->tetrahedralized = 1;
        st = mlc__surface_read(path, lower, tets_cache, min_tets, mesh, report, err);
    } else {
        /* A TetGen stem such as "cube.1" names cube.1.node + cube.1.ele (or their .gz). */
        char *node = gz ? NULL : tetgen_partner(path, strlen(path), ".node", 0);
        int stem = node && mlc_file_exists(node);
        mlc_free(node);
        if (!stem && gz && !ext)
            return mlc_errf(err, MLC_EINVAL,
                            "%s: a compressed file needs the format's extension before .gz "
                            "(e.g. body.off.gz); supported: %s",
                            path, supported);
        if (!stem)
            return mlc_errf(err, MLC_EINVAL,
                            "%s: unknown mesh file extension '%.*s%s'; supported: "
                            "%s, each also compressed as NAME.EXT.gz",
                            path, ext ? (int)ext_len + 1 : 6, ext ? ext : "(none)", gz ? ".gz" : "",
                            supported);
        snprintf(report->format, sizeof report->format, "tetgen");
        st = read_tetgen_path(path, strlen(path), 0, 0, mesh, err);
    }
    if (st == MLC_OK) st = mlc_mesh_finalize(mesh, path, report, err);
    if (st != MLC_OK) mlc_mesh_free(mesh);
    return st;
}
