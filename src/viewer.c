/* viewer.c: load a run directory (surface.obj, animation.pc2 and the optional CSV/JSON files)
 * and write the self-contained HTML viewer view.html. See viewer.h.
 *
 * The page is a fixed HTML/CSS/JS template (src/viewer/viewer.html and viewer.js, embedded at
 * build time as C arrays by tools/embed_file.c) around the run's data: a JSON
 * <script> with the metadata, the trajectory and the history, the JSON files as they are, and
 * the faces and positions as base64 in several <script type="application/octet-stream">
 * elements of at most 4 MiB each, which the page decodes piece by piece so that loading a big
 * surface neither freezes the tab nor needs one giant string. */
#include "modalloco/viewer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "modalloco/output.h"
#include "modalloco/sim.h"

/* The page template, embedded at build time from src/viewer/ (tools/embed_file.c): the HTML
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

/* Parse surface.obj: `v x y z` and `f a b c ...` lines (1-based or negative indices, optional
 * /vt/vn parts, polygons fanned into triangles); everything else is ignored. */
static mlc_status parse_obj(const char *path, char *text, int *nv_out, int **faces_out, int *nf_out,
                            mlc_err *err) {
    int nv = 0, nf = 0, cap = 0;
    int *faces = NULL;
    int line = 0;
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (eol) *eol = 0;
        line++;
        if (p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
            nv++;
        } else if (p[0] == 'f' && (p[1] == ' ' || p[1] == '\t')) {
            int idx[3], k = 0;
            char *q = p + 1;
            for (;;) {
                char *end;
                long v = strtol(q, &end, 10);
                if (end == q) break;
                q = end;
                while (*q && *q != ' ' && *q != '\t' && *q != '\r')
                    q++; /* skip /vt/vn */
                long i = v > 0 ? v - 1 : nv + v;
                if (v == 0 || i < 0 || i >= nv) {
                    mlc_free(faces);
                    return mlc_errf(err, MLC_EPARSE,
                                    "%s:%d: face index %ld out of range "
                                    "(%d vertices so far)",
                                    path, line, v, nv);
                }
                if (k < 3)
                    idx[k] = (int)i;
                else
                    idx[1] = idx[2], idx[2] = (int)i; /* fan: (first, previous, this) */
                k++;
                if (k >= 3) {
                    if (nf == cap) {
                        cap = cap ? 2 * cap : 1024;
                        int *nfc = mlc_realloc(faces, (size_t)cap * 3 * sizeof *faces);
                        if (!nfc) {
                            mlc_free(faces);
                            return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
                        }
                        faces = nfc;
                    }
                    memcpy(faces + 3 * (size_t)nf, idx, sizeof idx);
                    nf++;
                }
            }
            if (k < 3) {
                mlc_free(faces);
                return mlc_errf(err, MLC_EPARSE, "%s:%d: a face needs at least 3 vertices", path,
                                line);
            }
        }
        if (!eol) break;
        p = eol + 1;
    }
    if (nv == 0 || nf == 0) {
        mlc_free(faces);
        return mlc_errf(err, MLC_EPARSE, "%s: no %s (is it the surface.obj of a run?)", path,
                        nv == 0 ? "vertices" : "faces");
    }
    *nv_out = nv;
    *nf_out = nf;
    *faces_out = faces;
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

static double json_number(const cJSON *root, const char *group, const char *key, double dflt) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, group);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
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
    s = parse_obj(path, text, &nobj, &run->faces, &run->nf, err);
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
    }

    mlc_path_join(path, plen, dir, "trajectory.csv");
    if ((s = slurp(path, &text, NULL, &missing, err)) != MLC_OK) goto fail;
    if (text) {
        static const char *const cols[4] = {"time", "com_x", "com_y", "com_z"};
        s = parse_csv(path, text, cols, 4, &run->ntraj, &run->traj, err);
        mlc_free(text);
        text = NULL;
        if (s != MLC_OK) goto fail;
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

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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
    uint32_t v = (uint32_t)w->in[0] << 16 | (uint32_t)(n > 1 ? w->in[1] : 0) << 8 |
                 (uint32_t)(n > 2 ? w->in[2] : 0);
    char *o = w->out + w->nout;
    o[0] = b64chars[v >> 18];
    o[1] = b64chars[(v >> 12) & 63];
    o[2] = n > 1 ? b64chars[(v >> 6) & 63] : '=';
    o[3] = n > 2 ? b64chars[v & 63] : '=';
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
    fputs("],\"notes\":[", fp);
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
