/* viewer.c: load a run directory (surface.obj, animation.pc2 and the optional CSV/JSON files)
 * and write the self-contained HTML viewer view.html. See viewer.h.
 *
 * The page is a fixed HTML/CSS/JS template (src/job/viewer/viewer.html and viewer.js, embedded at
 * build time as C arrays by tools/embed_file.c) around the run's data: a JSON
 * <script> with the metadata, the trajectory and the history, the JSON files as they are, and
 * the faces and positions as base64 in several <script type="application/octet-stream">
 * elements of at most 4 MiB each, which the page decodes piece by piece so that loading a big
 * surface neither freezes the tab nor needs one giant string. */
#include "viewer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "objective.h"
#include "output.h"
#include "pipeline.h"
#include "render.h"
#include "sim.h"

/* The page template, embedded at build time from src/job/viewer/ (tools/embed_file.c): the HTML
 * and CSS up to the data, and the script after it. */
extern const char mlc__viewer_html[];
extern const char mlc__viewer_js[];

/* ---- Reading ------------------------------------------------------------------------------- */

/* Whole file as a NUL-terminated string (owned); NULL with *missing set if it does not exist. */
static mlc_status slurp(const char *path, char **text, size_t *len, int *missing, mlc_err *err) {
    *text = NULL;
    if (missing) *missing = 0;
    struct stat st;
    if (missing && stat(path, &st) != 0 && errno == ENOENT) {
        *missing = 1;
        return MLC_OK;
    }
    size_t n = 0;
    mlc_status s = mlc_file_read_all(path, (size_t)1 << 30, NULL, text, &n, err);
    if (s == MLC_OK && len) *len = n;
    return s;
}

/* Room for n + 1 items of `size` bytes in *buf (capacity *cap items, doubled when full). */
static int grow(void **buf, int *cap, int n, size_t size) {
    if (n < *cap) return 1;
    int c = *cap ? 2 * *cap : 1024;
    void *nb = mlc_realloc(*buf, (size_t)c * size);
    if (!nb) return 0;
    *buf = nb, *cap = c;
    return 1;
}

/* Parse surface.obj: `v x y z` and `f a b c ...` lines (1-based or negative indices, optional
 * /vt/vn parts, polygons fanned into triangles); everything else is ignored. The vertices go to
 * *v_out (3 per vertex, owned). */
static mlc_status parse_obj(const char *path, char *text, int *nv_out, double **v_out,
                            int **faces_out, int *nf_out, mlc_err *err) {
    int nv = 0, nf = 0, cap = 0, vcap = 0;
    int *faces = NULL;
    double *v = NULL;
    int line = 0;
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (eol) *eol = 0;
        line++;
        if (p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
            if (!grow((void **)&v, &vcap, nv, 3 * sizeof *v)) {
                mlc_free(v);
                mlc_free(faces);
                return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
            }
            char *q = p + 1;
            for (int k = 0; k < 3; k++)
                v[3 * (size_t)nv + k] = strtod(q, &q);
            nv++;
        } else if (p[0] == 'f' && (p[1] == ' ' || p[1] == '\t')) {
            int idx[3], k = 0;
            char *q = p + 1;
            for (;;) {
                char *end;
                long r = strtol(q, &end, 10);
                if (end == q) break;
                q = end;
                while (*q && *q != ' ' && *q != '\t' && *q != '\r')
                    q++; /* skip /vt/vn */
                long i = r > 0 ? r - 1 : nv + r;
                if (r == 0 || i < 0 || i >= nv) {
                    mlc_free(v);
                    mlc_free(faces);
                    return mlc_errf(err, MLC_EPARSE,
                                    "%s:%d: face index %ld out of range "
                                    "(%d vertices so far)",
                                    path, line, r, nv);
                }
                if (k < 3)
                    idx[k] = (int)i;
                else
                    idx[1] = idx[2], idx[2] = (int)i; /* fan: (first, previous, this) */
                k++;
                if (k >= 3) {
                    if (!grow((void **)&faces, &cap, nf, 3 * sizeof *faces)) {
                        mlc_free(v);
                        mlc_free(faces);
                        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
                    }
                    memcpy(faces + 3 * (size_t)nf, idx, sizeof idx);
                    nf++;
                }
            }
            if (k < 3) {
                mlc_free(v);
                mlc_free(faces);
                return mlc_errf(err, MLC_EPARSE, "%s:%d: a face needs at least 3 vertices", path,
                                line);
            }
        }
        if (!eol) break;
        p = eol + 1;
    }
    if (nv == 0 || nf == 0) {
        mlc_free(v);
        mlc_free(faces);
        return mlc_errf(err, MLC_EPARSE, "%s: no %s (is it the surface.obj of a run?)", path,
                        nv == 0 ? "vertices" : "faces");
    }
    *nv_out = nv;
    *nf_out = nf;
    *faces_out = faces;
    *v_out = v;
    return MLC_OK;
}

/* Parse a CSV with a header line, keeping the columns named in `want` (ncol of them, all
 * required) as doubles, ncol per row. */
static mlc_status parse_csv(const char *path, char *text, const char *const *want, int ncol,
                            int *nrows, double **rows, mlc_err *err) {
    *nrows = 0;
    *rows = NULL;
    int col[8], header_cols = 0;
    for (int k = 0; k < ncol; k++)
        col[k] = -1;
    char *p = text, *eol = strchr(p, '\n');
    if (eol) *eol = 0;
    for (char *tok = p;; header_cols++) {
        char *comma = strchr(tok, ',');
        size_t len = comma ? (size_t)(comma - tok) : strcspn(tok, "\r");
        for (int k = 0; k < ncol; k++)
            if (strlen(want[k]) == len && strncmp(tok, want[k], len) == 0) col[k] = header_cols;
        if (!comma) break;
        tok = comma + 1;
    }
    for (int k = 0; k < ncol; k++)
        if (col[k] < 0)
            return mlc_errf(err, MLC_EPARSE, "%s:1: no column '%s' in the header", path, want[k]);
    int n = 0, cap = 0, line = 1;
    double *out = NULL;
    while (eol) {
        p = eol + 1;
        eol = strchr(p, '\n');
        if (eol) *eol = 0;
        line++;
        if (p[strspn(p, " \t\r")] == 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 512;
            double *no = mlc_realloc(out, (size_t)cap * ncol * sizeof *out);
            if (!no) {
                mlc_free(out);
                return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
            }
            out = no;
        }
        int c = 0, found = 0;
        for (char *tok = p;; c++) {
            for (int k = 0; k < ncol; k++)
                if (col[k] == c) {
                    char *end;
                    out[(size_t)n * ncol + k] = strtod(tok, &end);
                    if (end == tok) {
                        mlc_free(out);
                        return mlc_errf(err, MLC_EPARSE, "%s:%d: column '%s' is not a number", path,
                                        line, want[k]);
                    }
                    found++;
                }
            char *comma = strchr(tok, ',');
            if (!comma) break;
            tok = comma + 1;
        }
        if (found != ncol) {
            mlc_free(out);
            return mlc_errf(err, MLC_EPARSE, "%s:%d: %d fields, the header has %d", path, line,
                            c + 1, header_cols + 1);
        }
        n++;
    }
    *nrows = n;
    *rows = out;
    return MLC_OK;
}

/* root.group.key, or dflt. */
static double json_number(const cJSON *root, const char *group, const char *key, double dflt) {
    return mlc_json_number(cJSON_GetObjectItemCaseSensitive(root, group), key, dflt);
}

/* Append a sentence to run->note. */
static void add_note(mlc_run *run, const char *text) {
    size_t n = strlen(run->note);
    snprintf(run->note + n, sizeof run->note - n, "%s%s", n ? " " : "", text);
}

/* The task and the ground of DIR/config.json, read the way the simulator reads them: the
 * configuration loader (which resolves the files it names), mlc_pipeline_terrain and the slope
 * settled on the rest surface (the boundary of the rest mesh, whose lowest point along the
 * slope's normal is the mesh's: mlc_model_create). A file named by the configuration that
 * cannot be read is a note, not an error: the rest of the page still shows the run. */
static mlc_status load_task_terrain(mlc_run *run, const char *config_path) {
    mlc_config *cfg = mlc_malloc(sizeof *cfg);
    if (!cfg) return MLC_ENOMEM;
    mlc_config_defaults(cfg);
    mlc_err e = {0};
    if (mlc_config_load_file(cfg, config_path, &e) != MLC_OK) {
        mlc_free(cfg);
        add_note(run, "config.json does not load as a configuration: the task and the terrain "
                      "are not drawn.");
        return MLC_OK;
    }
    const mlc_config_objective *o = &cfg->objective;
    const mlc_objective_kind_info *kind = mlc_objective_kind_info_of(o->kind);
    snprintf(run->kind, sizeof run->kind, "%s", kind ? kind->name : "locomotion");
    run->target_set = o->target_set;
    memcpy(run->target, o->target, sizeof run->target);
    run->heading[0] = o->heading[0];
    run->heading[2] = o->nheading > 0 ? o->heading[o->nheading - 1] : 0;
    char buf[1200];
    if (o->kind == MLC_OBJ_PATH && o->path[0]) {
        if (mlc_objective_path_read(o->path, &run->path, &run->npath, &e) != MLC_OK) {
            run->path = NULL, run->npath = 0;
            snprintf(buf, sizeof buf, "The waypoints are not drawn: %s.", e.msg);
            add_note(run, buf);
        }
    }
    snprintf(run->heightfield, sizeof run->heightfield, "%.1000s", cfg->contact.heightfield);
    mlc_status s = mlc_pipeline_terrain(cfg, &run->terrain, &e);
    if (s != MLC_OK && cfg->contact.heightfield[0]) {
        snprintf(buf, sizeof buf, "The heightfield is not drawn (a flat ground instead): %s.",
                 e.msg);
        add_note(run, buf);
        cfg->contact.heightfield[0] = 0;
        run->heightfield[0] = 0;
        s = mlc_pipeline_terrain(cfg, &run->terrain, &e);
    }
    if (s == MLC_OK) {
        run->has_terrain = 1;
        mlc_terrain_settle(&run->terrain, run->rest, run->nv);
    } else if (s != MLC_ENOMEM) {
        snprintf(buf, sizeof buf, "The terrain is not drawn: %s.", e.msg);
        add_note(run, buf);
        s = MLC_OK;
    }
    mlc_free(cfg);
    return s;
}

void mlc_run_free(mlc_run *run) {
    mlc_free(run->dir);
    mlc_free(run->faces);
    mlc_free(run->xyz);
    mlc_free(run->traj);
    mlc_free(run->hist);
    mlc_free(run->config_json);
    mlc_free(run->params_json);
    mlc_free(run->result_json);
    mlc_free(run->rest);
    mlc_free(run->fwd);
    mlc_free(run->path);
    if (run->has_terrain) mlc_terrain_free(&run->terrain);
    memset(run, 0, sizeof *run);
}

mlc_status mlc_run_load(const char *dir, mlc_run *run, mlc_err *err) {
    memset(run, 0, sizeof *run);
    struct stat st;
    if (stat(dir, &st) != 0)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: %s (expected the output directory of "
                        "`modalloco optimize` or `modalloco simulate`)",
                        dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return mlc_errf(err, MLC_EINVAL,
                        "%s is not a directory (expected the output directory "
                        "of `modalloco optimize` or `modalloco simulate`)",
                        dir);
    size_t plen = strlen(dir) + 32;
    char *path = mlc_malloc(plen);
    run->dir = mlc_strdup(dir);
    if (!path || !run->dir) {
        mlc_free(path);
        mlc_run_free(run);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    mlc_status s = MLC_OK;
    char *text = NULL;
    int missing = 0;
    static const char *const required[2] = {"surface.obj", "animation.pc2"};
    for (int k = 0; k < 2; k++) {
        mlc_path_join(path, plen, dir, required[k]);
        if (stat(path, &st) != 0) {
            s = mlc_errf(err, MLC_EINVAL,
                         "%s is not a run directory: %s is missing (it is "
                         "written by `modalloco optimize` and `modalloco simulate`)",
                         dir, required[k]);
            goto fail;
        }
    }

    mlc_path_join(path, plen, dir, "surface.obj");
    if ((s = slurp(path, &text, NULL, NULL, err)) != MLC_OK) goto fail;
    int nobj = 0;
    s = parse_obj(path, text, &nobj, &run->rest, &run->faces, &run->nf, err);
    mlc_free(text);
    text = NULL;
    if (s != MLC_OK) goto fail;

    mlc_path_join(path, plen, dir, "animation.pc2");
    if ((s = mlc_pc2_read(path, &run->nv, &run->nframes, NULL, NULL, &run->xyz, err)) != MLC_OK)
        goto fail;
    if (run->nv != nobj || run->nframes < 1) {
        s = run->nframes < 1 ? mlc_errf(err, MLC_EPARSE, "%s: the point cache holds no frame", path)
                             : mlc_errf(err, MLC_EPARSE,
                                        "%s has %d points but surface.obj has %d vertices "
                                        "(files of different runs?)",
                                        path, run->nv, nobj);
        goto fail;
    }

    run->frame_dt = MLC_SIM_DEFAULT_DT;
    run->traj_per_frame = 1;
    static const char *const json_names[3] = {"config.json", "params.json", "result.json"};
    char **json_text[3] = {&run->config_json, &run->params_json, &run->result_json};
    for (int k = 0; k < 3; k++) {
        mlc_path_join(path, plen, dir, json_names[k]);
        if ((s = slurp(path, json_text[k], NULL, &missing, err)) != MLC_OK) goto fail;
    }
    if (run->config_json) {
        /* Only the timing and the ground are needed here; the page shows the rest. A config
         * that does not parse leaves the defaults (the page notes it). */
        cJSON *root = cJSON_Parse(run->config_json);
        if (root) {
            double dt = json_number(root, "sim", "dt", MLC_SIM_DEFAULT_DT);
            double every = json_number(root, "output", "every", 1);
            if (dt > 0 && every >= 1 && every < 1e6) {
                run->traj_per_frame = (int)every;
                run->frame_dt = dt * every;
            }
            run->ground_y = json_number(root, "contact", "ground_height", 0);
            cJSON_Delete(root);
        }
        mlc_path_join(path, plen, dir, "config.json");
        if (load_task_terrain(run, path) != MLC_OK) {
            s = mlc_errf(err, MLC_ENOMEM, "out of memory");
            goto fail;
        }
    }

    mlc_path_join(path, plen, dir, "trajectory.csv");
    if ((s = slurp(path, &text, NULL, &missing, err)) != MLC_OK) goto fail;
    if (text) {
        static const char *const cols[4] = {"time", "com_x", "com_y", "com_z"};
        s = parse_csv(path, text, cols, 4, &run->ntraj, &run->traj, err);
        mlc_free(text);
        text = NULL;
        if (s != MLC_OK) goto fail;
        if (!strcmp(run->kind, "turn") && run->ntraj > 0) {
            /* The heading reached: the forward axis of the last row (older files lack it). */
            static const char *const fcols[3] = {"forward_x", "forward_y", "forward_z"};
            int nf = 0;
            mlc_err e = {0};
            if ((s = slurp(path, &text, NULL, NULL, err)) != MLC_OK) goto fail;
            if (parse_csv(path, text, fcols, 3, &nf, &run->fwd, &e) != MLC_OK || nf != run->ntraj) {
                mlc_free(run->fwd);
                run->fwd = NULL;
            }
            mlc_free(text);
            text = NULL;
        }
    }
    mlc_path_join(path, plen, dir, "history.csv");
    if ((s = slurp(path, &text, NULL, &missing, err)) != MLC_OK) goto fail;
    if (text) {
        static const char *const cols[3] = {"generation", "best_J", "median_J"};
        s = parse_csv(path, text, cols, 3, &run->nhist, &run->hist, err);
        mlc_free(text);
        text = NULL;
        if (s != MLC_OK) goto fail;
    }
    mlc_free(path);
    return MLC_OK;
fail:
    mlc_free(text);
    mlc_free(path);
    mlc_run_free(run);
    return s;
}

int mlc_run_task_segments(const mlc_run *run, double size, double **segs) {
    *segs = NULL;
    const char *k = run->kind;
    int target = (!strcmp(k, "target") || !strcmp(k, "jump")) && run->target_set;
    int turn = !strcmp(k, "turn") && run->ntraj > 0;
    int n = target ? 4 : !strcmp(k, "path") && run->npath > 1 ? 2 * (run->npath - 1) : turn ? 3 : 0;
    if (n == 0 || !(*segs = mlc_malloc(sizeof(double) * 6 * (size_t)n))) return 0;
    double *s = *segs;
    if (target) {
        const double *t = run->target;
        for (int a = 0; a < 3; a++)
            for (int e = 0; e < 2; e++)
                for (int c = 0; c < 3; c++)
                    s[6 * a + 3 * e + c] = t[c] + (c == a ? (e ? size : -size) : 0);
        double g = run->has_terrain ? mlc_terrain_height(&run->terrain, t[0], t[2]) : run->ground_y;
        double drop[6] = {t[0], g, t[2], t[0], t[1], t[2]};
        memcpy(s + 18, drop, sizeof drop);
    } else if (turn) {
        const double *c = run->traj + 4 * (size_t)(run->ntraj - 1) + 1;
        double hx = run->heading[0], hz = run->heading[2], hn = sqrt(hx * hx + hz * hz);
        if (!(hn > 0)) hn = 1;
        hx *= 4 * size / hn, hz *= 4 * size / hn;
        double y = run->has_terrain ? mlc_terrain_height(&run->terrain, c[0], c[2]) : run->ground_y;
        mlc_render_ground_arrow(c[0], c[2], hx, hz, y, 0.3, 0.18, s);
    } else { /* the waypoints, and below them on the ground (the body hides the former) */
        for (int i = 0; i < n / 2; i++)
            for (int e = 0; e < 2; e++) {
                const double *w = run->path + 4 * (i + e) + 1;
                double *a = s + 6 * i + 3 * e, *b = a + 3 * n;
                a[0] = b[0] = w[0], a[1] = w[1], a[2] = b[2] = w[2];
                b[1] = run->has_terrain ? mlc_terrain_height(&run->terrain, w[0], w[2])
                                        : run->ground_y;
            }
    }
    return n;
}

/* ---- Writing --------------------------------------------------------------------------------- */

/* Buffered base64 writer that splits its output into <script> parts of at most PART_CHARS
 * characters, each holding whole 3-byte groups so that the parts decode independently. */
enum { PART_CHARS = 4 << 20, OUTBUF = 1 << 16 };
typedef struct b64w {
    FILE *fp;
    const char *cls;
    unsigned char in[3];
    int nin;
    char out[OUTBUF];
    size_t nout;
    size_t part;  /* characters in the open part */
    size_t total; /* characters written */
    int open;
} b64w;

static void b64_flush_out(b64w *w) {
    if (w->nout) fwrite(w->out, 1, w->nout, w->fp);
    w->nout = 0;
}
static void b64_open(b64w *w) {
    b64_flush_out(w);
    fprintf(w->fp, "<script type=\"application/octet-stream\" class=\"%s\">", w->cls);
    w->open = 1;
    w->part = 0;
}
static void b64_close(b64w *w) {
    b64_flush_out(w);
    fputs("</script>\n", w->fp);
    w->open = 0;
}
static void b64_group(b64w *w, int n) {
    if (!w->open) b64_open(w);
    if (w->nout + 4 > OUTBUF) b64_flush_out(w);
    mlc_base64_group(w->in, n, w->out + w->nout);
    w->nout += 4;
    w->part += 4;
    w->total += 4;
    w->nin = 0;
    if (w->part >= PART_CHARS) b64_close(w);
}
static void b64_put(b64w *w, const void *data, size_t n) {
    const unsigned char *d = data;
    for (size_t i = 0; i < n; i++) {
        w->in[w->nin++] = d[i];
        if (w->nin == 3) b64_group(w, 3);
    }
}
static void b64_end(b64w *w) {
    if (w->nin) b64_group(w, w->nin);
    if (!w->open && w->total == 0) b64_open(w); /* an empty part still marks the data */
    if (w->open) b64_close(w);
}

static size_t b64_len(size_t bytes) {
    return 4 * ((bytes + 2) / 3);
}

static void put_le32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* JSON string with '<' escaped too, so no "</script>" can end the element early. */
static void json_string(FILE *fp, const char *s) {
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}
static void json_num(FILE *fp, double v) {
    if (isfinite(v))
        fprintf(fp, "%.9g", v);
    else
        fputs("null", fp);
}
static void json_vec3(FILE *fp, const double v[3]) {
    fputc('[', fp);
    for (int k = 0; k < 3; k++) {
        if (k) fputc(',', fp);
        json_num(fp, v[k]);
    }
    fputc(']', fp);
}

/* A JSON file as it is, inside a <script type="application/json">; '<' becomes \u003c (valid
 * inside JSON strings, the only place a well-formed file can have it). */
static void embed_json(FILE *fp, const char *id, const char *text) {
    if (!text) return;
    fprintf(fp, "<script type=\"application/json\" id=\"%s\">", id);
    for (const char *p = text; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", fp);
        else
            fputc(*p, fp);
    }
    fputs("</script>\n", fp);
}

static void bbox(const float *xyz, size_t npts, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t i = 0; i < npts; i++)
        for (int k = 0; k < 3; k++) {
            double v = (double)xyz[3 * i + k];
            if (isfinite(v)) {
                if (v < lo[k]) lo[k] = v;
                if (v > hi[k]) hi[k] = v;
            }
        }
    for (int k = 0; k < 3; k++)
        if (!(lo[k] <= hi[k])) lo[k] = hi[k] = 0; /* no finite value at all */
}

/* What the page embeds, and how: the encoding (float32 if it fits in max_data, else int16 over
 * the bounding box of the motion, else also every step-th frame), the sizes in base64
 * characters, and the bounding boxes (of the rest frame: lo0, hi0; of the frames shown: lo,
 * hi, centre c and half-extent h). */
typedef struct view_layout {
    int step, quant;
    size_t nshow, face_chars, data_chars;
    double lo[3], hi[3], lo0[3], hi0[3], c[3], h[3];
} view_layout;

static void choose_layout(const mlc_run *run, size_t max_data, view_layout *L) {
    const size_t nv = (size_t)run->nv, nframes = (size_t)run->nframes;
    size_t face_chars = b64_len(12 * (size_t)run->nf);
    int step = 1, quant = 0;
    if (face_chars + b64_len(12 * nv * nframes) > max_data) {
        quant = 1;
        while ((size_t)step < nframes &&
               face_chars + b64_len(6 * nv * ((nframes + step - 1) / step)) > max_data)
            step++;
    }
    size_t nshow = (nframes + step - 1) / step;
    L->step = step, L->quant = quant, L->nshow = nshow, L->face_chars = face_chars;
    L->data_chars = face_chars + b64_len((quant ? 6 : 12) * nv * nshow);
    double *lo = L->lo, *hi = L->hi, *c = L->c, *h = L->h;
    bbox(run->xyz, nv, L->lo0, L->hi0);
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t f = 0; f < nframes; f += step) {
        double l[3], u[3];
        bbox(run->xyz + 3 * nv * f, nv, l, u);
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], l[k]), hi[k] = fmax(hi[k], u[k]);
    }
    for (int k = 0; k < 3; k++) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        h[k] = fmax(0.5 * (hi[k] - lo[k]), 1e-12);
    }
}

/* ---- Task and terrain --------------------------------------------------------------------- */

/* Whether the ground is more than the plane y = ground (which the page draws itself). */
static int terrain_shown(const mlc_run *run) {
    const mlc_terrain *t = &run->terrain;
    return run->has_terrain && (t->slope > 0 || t->nx > 0 || t->nbox > 0);
}

/* The square of ground the page draws, as the page computes it for the flat plane: around the
 * motion (and the target and the waypoints) with a margin of twice the body's size, on a grid
 * of round spacing. x0, z0, spacing and the number of cells. */
typedef struct ground_square {
    double x0, z0, s;
    int n;
} ground_square;

static ground_square ground_square_of(const mlc_run *run, const view_layout *L) {
    double lo[2] = {L->lo[0], L->lo[2]}, hi[2] = {L->hi[0], L->hi[2]};
    if (run->target_set && !strcmp(run->kind, "target"))
        for (int k = 0; k < 2; k++)
            lo[k] = fmin(lo[k], run->target[2 * k]), hi[k] = fmax(hi[k], run->target[2 * k]);
    for (int i = 0; i < run->npath; i++)
        for (int k = 0; k < 2; k++) {
            double v = run->path[4 * i + 1 + 2 * k];
            if (isfinite(v)) lo[k] = fmin(lo[k], v), hi[k] = fmax(hi[k], v);
        }
    double d[3], r2 = 0;
    for (int k = 0; k < 3; k++)
        d[k] = L->hi0[k] - L->lo0[k], r2 += d[k] * d[k];
    double radius0 = 0.5 * sqrt(r2);
    if (!(radius0 > 0)) radius0 = 1;
    double ext = fmax(hi[0] - lo[0], hi[1] - lo[1]) + 4 * radius0;
    double sp = pow(10, floor(log10(ext / 8)));
    if (ext / sp > 40)
        sp *= 5;
    else if (ext / sp > 16)
        sp *= 2;
    ground_square g;
    g.s = sp;
    g.x0 = floor((0.5 * (lo[0] + hi[0]) - ext / 2) / sp) * sp;
    g.z0 = floor((0.5 * (lo[1] + hi[1]) - ext / 2) / sp) * sp;
    g.n = (int)ceil(ext / sp) + 1;
    return g;
}

/* Grid coordinates along one axis: the square's lines for a plane; for a heightfield its own
 * nodes (every stride-th, at most ~256) over the union of the square and the field, whose
 * edge values hold beyond it. Returns the count (out has room for 600). */
static int ground_nodes(double a0, double a1, double s, int n_sq, int hf, double h0, double dh,
                        int nh, double *out) {
    int n = 0;
    if (!hf) {
        for (int i = 0; i <= n_sq; i++)
            out[n++] = a0 + i * s;
        return n;
    }
    double h1 = h0 + (nh - 1) * dh, lo = fmin(a0, h0), hi = fmax(a1, h1);
    int stride = (nh + 255) / 256;
    if (lo < h0 - 1e-9 * dh) out[n++] = lo;
    for (int i = 0; i < nh; i += stride)
        out[n++] = h0 + i * dh;
    if (out[n - 1] < h1 - 1e-9 * dh) out[n++] = h1;
    if (hi > h1 + 1e-9 * dh) out[n++] = hi;
    return n;
}

static void put_xyz(FILE *fp, int *first, double x, double y, double z) {
    fprintf(fp, *first ? "%.6g,%.6g,%.6g" : ",%.6g,%.6g,%.6g", x, y, z);
    *first = 0;
}

/* The corners of box bx in the order of idx (bit k of an index: hi along axis k). */
static void put_box(FILE *fp, int *first, const mlc_terrain_box *bx, const int *idx, int n) {
    for (int c = 0; c < n; c++)
        put_xyz(fp, first, idx[c] & 1 ? bx->hi[0] : bx->lo[0], idx[c] & 2 ? bx->hi[1] : bx->lo[1],
                idx[c] & 4 ? bx->hi[2] : bx->lo[2]);
}

/* "terrain": a description, the triangles (9 numbers each: the ground as a grid of cells, two
 * triangles a cell, then 12 per box), the lines drawn over them (6 numbers a segment: the
 * grid and the box edges) and the terrain's height under every trajectory row. */
static void write_terrain(FILE *fp, const mlc_run *run, const view_layout *L) {
    const mlc_terrain *t = &run->terrain;
    mlc_terrain ground = *t;
    ground.nbox = 0; /* the ground alone: the boxes are drawn as boxes */
    ground_square g = ground_square_of(run, L);
    int hf = t->nx > 0;
    double xs[600], zs[600];
    int nx = ground_nodes(g.x0, g.x0 + g.n * g.s, g.s, g.n, hf, t->x0, t->dx, t->nx, xs);
    int nz = ground_nodes(g.z0, g.z0 + g.n * g.s, g.s, g.n, hf, t->z0, t->dz, t->nz, zs);
    char desc[1400];
    int len = 0;
    if (hf)
        len =
            snprintf(desc, sizeof desc, "heightfield %s (%d x %d)", run->heightfield, t->nx, t->nz);
    else if (t->slope > 0)
        len = snprintf(desc, sizeof desc, "slope %g degrees rising along [%g, %g]", t->slope,
                       t->up[0], t->up[2]);
    else
        len = snprintf(desc, sizeof desc, "flat ground");
    if (t->nbox > 0 && len > 0 && (size_t)len < sizeof desc)
        snprintf(desc + len, sizeof desc - (size_t)len, ", %d box%s", t->nbox,
                 t->nbox == 1 ? "" : "es");
    fputs(",\"terrain\":{\"desc\":", fp);
    json_string(fp, desc);
    int nground = 2 * (nx - 1) * (nz - 1);
    fprintf(fp, ",\"nground\":%d,\"nbox\":%d,\"ntri\":%d,\"tris\":[", nground, t->nbox,
            nground + 12 * t->nbox);
    int first = 1;
    for (int j = 0; j + 1 < nz; j++)
        for (int i = 0; i + 1 < nx; i++) {
            double x[4] = {xs[i], xs[i + 1], xs[i + 1], xs[i]};
            double z[4] = {zs[j], zs[j], zs[j + 1], zs[j + 1]};
            double y[4];
            for (int c = 0; c < 4; c++)
                y[c] = mlc_terrain_height(&ground, x[c], z[c]);
            static const int tri[6] = {0, 2, 1, 0, 3, 2};
            for (int c = 0; c < 6; c++)
                put_xyz(fp, &first, x[tri[c]], y[tri[c]], z[tri[c]]);
        }
    /* A box's 12 triangles and 12 edges by the indices of its corners (put_box). */
    static const int box_tri[36] = {0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1,
                                    2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4, 1, 5, 7, 1, 7, 3};
    static const int box_edge[24] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3,
                                     4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7};
    for (int b = 0; b < t->nbox; b++)
        put_box(fp, &first, &t->box[b], box_tri, 36);
    fputs("],\"lines\":[", fp);
    first = 1;
    for (int j = 0; j < nz; j++)
        for (int i = 0; i + 1 < nx; i++) {
            put_xyz(fp, &first, xs[i], mlc_terrain_height(&ground, xs[i], zs[j]), zs[j]);
            put_xyz(fp, &first, xs[i + 1], mlc_terrain_height(&ground, xs[i + 1], zs[j]), zs[j]);
        }
    for (int i = 0; i < nx; i++)
        for (int j = 0; j + 1 < nz; j++) {
            put_xyz(fp, &first, xs[i], mlc_terrain_height(&ground, xs[i], zs[j]), zs[j]);
            put_xyz(fp, &first, xs[i], mlc_terrain_height(&ground, xs[i], zs[j + 1]), zs[j + 1]);
        }
    for (int b = 0; b < t->nbox; b++)
        put_box(fp, &first, &t->box[b], box_edge, 24);
    fputs("],\"shadow\":[", fp);
    for (int i = 0; i < run->ntraj; i++) {
        if (i) fputc(',', fp);
        json_num(fp, mlc_terrain_height(t, run->traj[4 * i + 1], run->traj[4 * i + 3]));
    }
    fputs("]}", fp);
}

/* "task": the kind and what the page draws of it: the target (and the height of the ground
 * under it, and the final distance of the centre of mass), the waypoints, or the heading wanted
 * with the forward axis at the start and at the end. Nothing for the kinds without geometry. */
static void write_task(FILE *fp, const mlc_run *run) {
    const char *k = run->kind;
    int target = !strcmp(k, "target") || (!strcmp(k, "jump") && run->target_set);
    int path = !strcmp(k, "path"), turn = !strcmp(k, "turn");
    if (!target && !path && !turn) return;
    fputs(",\"task\":{\"kind\":", fp);
    json_string(fp, k);
    if (target) {
        fputs(",\"target\":", fp);
        json_vec3(fp, run->target);
        if (run->has_terrain) {
            fputs(",\"targetGround\":", fp);
            json_num(fp, mlc_terrain_height(&run->terrain, run->target[0], run->target[2]));
        }
        if (run->ntraj > 0) {
            const double *c = run->traj + 4 * (size_t)(run->ntraj - 1) + 1;
            double d = sqrt((c[0] - run->target[0]) * (c[0] - run->target[0]) +
                            (c[1] - run->target[1]) * (c[1] - run->target[1]) +
                            (c[2] - run->target[2]) * (c[2] - run->target[2]));
            fputs(",\"finalDist\":", fp);
            json_num(fp, d);
        }
    }
    if (path) {
        fprintf(fp, ",\"npath\":%d,\"path\":[", run->npath);
        for (int i = 0; i < run->npath; i++)
            for (int c = 0; c < 4; c++) {
                if (i || c) fputc(',', fp);
                json_num(fp, run->path[4 * i + c]);
            }
        fputc(']', fp);
    }
    if (turn) {
        fputs(",\"heading\":", fp);
        json_vec3(fp, run->heading);
        if (run->fwd) {
            fputs(",\"forward0\":", fp);
            json_vec3(fp, run->fwd);
            fputs(",\"forward1\":", fp);
            json_vec3(fp, run->fwd + 3 * (size_t)(run->ntraj - 1));
        }
    }
    fputc('}', fp);
}

/* The metadata <script>: sizes, encoding, bounding boxes, trajectory, history and notes; then
 * the run's JSON files as they are. */
static void write_meta(FILE *fp, const mlc_run *run, const view_layout *L, size_t max_data) {
    fputs("<script type=\"application/json\" id=\"meta\">{\"dir\":", fp);
    json_string(fp, run->dir ? run->dir : "");
    fprintf(fp,
            ",\"version\":\"%s\",\"nv\":%d,\"nf\":%d,\"frames\":%zu,\"framesTotal\":%d,"
            "\"step\":%d,\"frameDt\":",
            MLC_VERSION, run->nv, run->nf, L->nshow, run->nframes, L->step * run->traj_per_frame);
    json_num(fp, run->frame_dt * L->step);
    fprintf(fp, ",\"trajPerFrame\":%d,\"enc\":\"%s\",\"ground\":", run->traj_per_frame * L->step,
            L->quant ? "i16" : "f32");
    json_num(fp, run->ground_y);
    static const char *const box_names[6] = {"lo", "hi", "lo0", "hi0", "c", "h"};
    const double *const box[6] = {L->lo, L->hi, L->lo0, L->hi0, L->c, L->h};
    for (int k = 0; k < 6; k++) {
        fprintf(fp, ",\"%s\":", box_names[k]);
        json_vec3(fp, box[k]);
    }
    fputs(",\"traj\":[", fp);
    for (int i = 0; i < run->ntraj; i++)
        for (int k = 1; k < 4; k++) {
            if (i || k > 1) fputc(',', fp);
            double v = run->traj[4 * i + k];
            if (isfinite(v))
                fprintf(fp, "%.7g", v);
            else
                fputs("null", fp);
        }
    fputs("],\"hist\":[", fp);
    for (int i = 0; i < run->nhist; i++) {
        fputs(i ? ",[" : "[", fp);
        for (int k = 0; k < 3; k++) {
            if (k) fputc(',', fp);
            json_num(fp, run->hist[3 * i + k]);
        }
        fputc(']', fp);
    }
    fputc(']', fp);
    write_task(fp, run);
    /* The unit of result.json task_error, from the kinds' registry, so the page needs no list
     * of kinds of its own. */
    const mlc_objective_kind_info *ki = mlc_objective_kind_find(run->kind);
    if (ki) fprintf(fp, ",\"taskErrorUnit\":\"%s\"", ki->task_error_unit);
    if (terrain_shown(run)) write_terrain(fp, run, L);
    fputs(",\"notes\":[", fp);
    char buf[512];
    double mb = (double)max_data / (1 << 20);
    if (L->quant) {
        double res = 2 * fmax(L->h[0], fmax(L->h[1], L->h[2])) / 65534;
        snprintf(buf, sizeof buf,
                 "Positions are quantized to 16 bits over the bounding box of "
                 "the motion (resolution %.3g mm) instead of float32, to keep the embedded data "
                 "under %.0f MB.",
                 1000 * res, mb);
    } else {
        snprintf(buf, sizeof buf,
                 "Positions are embedded as float32, exactly as in "
                 "animation.pc2.");
    }
    json_string(fp, buf);
    if (L->step > 1) {
        snprintf(buf, sizeof buf,
                 "Only one frame in %d of the %d in animation.pc2 is "
                 "embedded (%zu frames) to keep the data under %.0f MB; playback speed is "
                 "unchanged.",
                 L->step, run->nframes, L->nshow, mb);
        fputc(',', fp);
        json_string(fp, buf);
    }
    snprintf(buf, sizeof buf,
             "%d surface vertices, %d triangles, %zu frames (%.1f MB of "
             "embedded data).",
             run->nv, run->nf, L->nshow, (double)L->data_chars / (1 << 20));
    fputc(',', fp);
    json_string(fp, buf);
    if (run->ntraj == 0) {
        fputc(',', fp);
        json_string(fp, "No trajectory.csv: the centre-of-mass path is not drawn.");
    }
    if (run->note[0]) {
        fputc(',', fp);
        json_string(fp, run->note);
    }
    fputs("]}</script>\n", fp);
    embed_json(fp, "config", run->config_json);
    embed_json(fp, "params", run->params_json);
    embed_json(fp, "result", run->result_json);
}

/* Faces as little-endian uint32, then the positions of the frames shown (int16 or float32). */
static void write_data(FILE *fp, const mlc_run *run, const view_layout *L) {
    const size_t nv = (size_t)run->nv, nframes = (size_t)run->nframes;
    b64w w;
    memset(&w, 0, sizeof w);
    w.fp = fp;
    w.cls = "mlc-faces";
    for (int t = 0; t < 3 * run->nf; t++) {
        unsigned char q[4];
        put_le32(q, (uint32_t)run->faces[t]);
        b64_put(&w, q, 4);
    }
    b64_end(&w);
    memset(&w, 0, sizeof w);
    w.fp = fp;
    w.cls = "mlc-pos";
    for (size_t f = 0; f < nframes; f += L->step) {
        const float *x = run->xyz + 3 * nv * f;
        for (size_t i = 0; i < 3 * nv; i++) {
            if (L->quant) {
                double v = ((double)x[i] - L->c[i % 3]) / L->h[i % 3] * 32767.0;
                long q = isfinite(v) ? lrint(fmax(-32767.0, fmin(32767.0, v))) : 0;
                uint16_t u = (uint16_t)(int16_t)q;
                unsigned char b[2] = {(unsigned char)u, (unsigned char)(u >> 8)};
                b64_put(&w, b, 2);
            } else {
                uint32_t u;
                memcpy(&u, &x[i], 4);
                unsigned char b[4];
                put_le32(b, u);
                b64_put(&w, b, 4);
            }
        }
    }
    b64_end(&w);
}

mlc_status mlc_view_html_write(const mlc_run *run, const char *path, size_t max_data,
                               mlc_view_html_info *info, mlc_err *err) {
    mlc_view_html_info inf;
    memset(&inf, 0, sizeof inf);
    if (run->nv == 0 || run->nframes == 0 || run->nf < 1)
        return mlc_errf(err, MLC_EINVAL, "%s: nothing to view (empty surface or animation)", path);
    view_layout L;
    choose_layout(run, max_data, &L);

    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    FILE *fp = af.fp;
    fputs(mlc__viewer_html, fp);

    write_meta(fp, run, &L, max_data);
    write_data(fp, run, &L);

    fputs("<script>\n", fp);
    fputs(mlc__viewer_js, fp);
    fputs("</script>\n</body>\n</html>\n", fp);
    long size = ftell(fp);
    if ((s = mlc_afile_commit(&af, err)) != MLC_OK) return s;
    inf.bytes = size > 0 ? (size_t)size : 0;
    inf.data_bytes = L.data_chars;
    inf.frames = (int)L.nshow;
    inf.step = L.step;
    inf.quantized = L.quant;
    if (info) *info = inf;
    return MLC_OK;
}
