/* output.c: atomic result files and the writers of output.h (OBJ, PC2, PLY, VTK, SVG).
 *
 * Atomicity: write to a mkstemp file in the destination's own directory (rename is atomic only
 * within one file system), fflush + fsync it, rename it over the final name, then fsync the
 * directory so the rename itself survives a crash. Any failure unlinks the temporary file.
 *
 * Binary formats are serialized byte by byte in little-endian order, so the files are the same
 * on any host. Text formats use the C locale's '.' (modules never call setlocale).
 */
#include "output.h"
#include "internal/vtk_name.h"
#include "number_text.h"
#include "testing/output_testing.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

/* ---- Atomic files ------------------------------------------------------------------------ */

/* Free the struct's strings and re-zero it (the FILE* is handled by the caller). */
static void afile_release(mlc_afile *af) {
    mlc_free(af->path);
    mlc_free(af->tmp);
    af->fp = NULL;
    af->path = af->tmp = NULL;
}

mlc_status mlc_afile_open(mlc_afile *af, const char *path, mlc_err *err) {
    af->fp = NULL;
    af->path = af->tmp = NULL;
    if (!path || !*path) return mlc_errf(err, MLC_EINVAL, "output: empty file name");
    size_t len = strlen(path);
    if (path[len - 1] == '/')
        return mlc_errf(err, MLC_EINVAL, "%s: names a directory, not a file", path);
    /* "DIR/NAME" -> "DIR/.NAME.XXXXXX": hidden, same directory, obviously related. */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    af->path = mlc_strdup(path);
    af->tmp = mlc_malloc(len + 2 + 7 + 1);
    if (!af->path || !af->tmp) {
        afile_release(af);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    }
    memcpy(af->tmp, path, dirlen);
    af->tmp[dirlen] = '.';
    memcpy(af->tmp + dirlen + 1, path + dirlen, len - dirlen);
    memcpy(af->tmp + len + 1, ".XXXXXX", 8);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        int e = errno;
        afile_release(af);
        return mlc_errf(err, MLC_EIO,
                        "%s: cannot create a temporary file beside it: %s (does "
                        "the directory exist and is it writable?)",
                        path, strerror(e));
    }
    /* mkstemp makes the file 0600; results are meant to be shared like any other file. */
    (void)fchmod(fd, 0644);
    af->fp = fdopen(fd, "wb");
    if (!af->fp) {
        int e = errno;
        close(fd);
        unlink(af->tmp);
        afile_release(af);
        return mlc_errf(err, MLC_EIO, "%s: %s", path, strerror(e));
    }
    return MLC_OK;
}

void mlc_afile_abort(mlc_afile *af) {
    if (!af) return;
    if (af->fp) fclose(af->fp);
    if (af->tmp) unlink(af->tmp);
    afile_release(af);
}

/* fsync the directory holding `path` so that a completed rename is durable. Best effort:
 * some file systems refuse fsync on directories, and the data itself is already safe. */
static void sync_parent_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        strcpy(dir, ".");
    } else {
        size_t n = (size_t)(slash - path);
        if (n == 0) n = 1; /* "/name" -> "/" */
        if (n >= sizeof dir) return;
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

mlc_status mlc_afile_commit(mlc_afile *af, mlc_err *err) {
    if (!af || !af->fp) {
        mlc_afile_abort(af);
        return mlc_errf(err, MLC_EINVAL, "output: commit of a file that is not open");
    }
    const char *what = NULL;
    int e = 0;
    if (fflush(af->fp) != 0 || ferror(af->fp))
        what = "write failed", e = errno;
    else if (fsync(fileno(af->fp)) != 0)
        what = "fsync failed", e = errno;
    int closed = fclose(af->fp);
    af->fp = NULL;
    if (!what && closed != 0) what = "close failed", e = errno;
    if (!what && rename(af->tmp, af->path) != 0) what = "rename failed", e = errno;
    if (what) {
        unlink(af->tmp);
        mlc_status s = mlc_errf(err, MLC_EIO, "%s: %s: %s (disk full or not writable?)", af->path,
                                what, e ? strerror(e) : "unknown error");
        afile_release(af);
        return s;
    }
    sync_parent_dir(af->path);
    afile_release(af);
    return MLC_OK;
}

mlc_status mlc_write_text_atomic(const char *path, const char *text, mlc_err *err) {
    mlc_afile af;
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    fputs(text, af.fp);
    return mlc_afile_commit(&af, err);
}

mlc_status mlc_mkdir_p(const char *path, mlc_err *err) {
    if (!path || !*path) return mlc_errf(err, MLC_EINVAL, "output: empty directory name");
    char *buf = mlc_strdup(path);
    if (!buf) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    size_t len = strlen(buf);
    mlc_status s = MLC_OK;
    /* Create each prefix ending before a '/', then the whole path. */
    for (size_t i = 1; i <= len && s == MLC_OK; i++) {
        if (i < len && buf[i] != '/') continue;
        if (i < len && buf[i - 1] == '/') continue; /* repeated slashes */
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0) {
            int e = errno;
            struct stat st;
            if (e != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
                s = mlc_errf(err, MLC_EIO, "%s: cannot create directory %s: %s", path, buf,
                             e == EEXIST ? "exists and is not a directory" : strerror(e));
        }
        buf[i] = saved;
    }
    mlc_free(buf);
    return s;
}

/* ---- Shared checks ------------------------------------------------------------------------ */

static mlc_status check_indices(const char *path, const int *idx, int n, int per, int nv,
                                const char *what, mlc_err *err) {
    for (int i = 0; i < n * per; i++)
        if (idx[i] < 0 || idx[i] >= nv)
            return mlc_errf(err, MLC_EINVAL, "%s: %s %d has vertex index %d outside [0, %d)", path,
                            what, i / per, idx[i], nv);
    return MLC_OK;
}

/* ---- Buffered text ------------------------------------------------------------------------ */

/* The text writers put many short pieces (a preformatted tuple, a few integers, a newline):
 * gathered here and handed to stdio in blocks, not one locked call per piece. A write error
 * stays on the FILE and fails mlc_afile_commit. */
typedef struct text_out {
    FILE *fp;
    size_t n;
    char b[1 << 15];
} text_out;

static void out_flush(text_out *o) {
    if (o->n) fwrite(o->b, 1, o->n, o->fp);
    o->n = 0;
}

/* Room for `need` (at most the buffer's size) characters at o->b + o->n. */
static char *out_room(text_out *o, size_t need) {
    if (o->n + need > sizeof o->b) out_flush(o);
    return o->b + o->n;
}

static void out_put(text_out *o, const char *s, size_t len) {
    if (len > sizeof o->b) {
        out_flush(o);
        fwrite(s, 1, len, o->fp);
        return;
    }
    memcpy(out_room(o, len), s, len);
    o->n += len;
}

static void out_str(text_out *o, const char *s) {
    out_put(o, s, strlen(s));
}

static void out_char(text_out *o, char c) {
    *out_room(o, 1) = c;
    o->n++;
}

/* " %d" of each of the k values. */
static void out_ints(text_out *o, const int *v, int k) {
    char *p = out_room(o, (size_t)k * 12);
    size_t n = 0;
    for (int i = 0; i < k; i++) {
        p[n++] = ' ';
        n += mlc_format_int(p + n, v[i]);
    }
    o->n += n;
}

/* " %d %d %d" of an RGB triple. */
static void out_rgb(text_out *o, const unsigned char *rgb) {
    const int v[3] = {rgb[0], rgb[1], rgb[2]};
    out_ints(o, v, 3);
}

/* Tuple i of t (i already checked). */
static void out_tuple(text_out *o, const mlc_number_text *t, int i) {
    size_t len;
    const char *s = mlc_number_text_at(t, i, &len);
    out_put(o, s, len);
}

/* The points of a writer: nv tuples of 3, point i being tuple idx[i] (or i) of pts. */
static mlc_status check_points(const char *path, const mlc_number_text *pts, const int *idx, int nv,
                               mlc_err *err) {
    if (!pts || pts->dim != 3 || nv < 0 || (!idx && nv > pts->n))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid point text arguments", path);
    return idx ? check_indices(path, idx, nv, 1, pts->n, "point", err) : MLC_OK;
}

/* ---- surface.obj ------------------------------------------------------------------------- */

mlc_status mlc_obj_write_text(const char *path, const mlc_number_text *pts, const int *idx, int nv,
                              const int *F, int nf, const char *comment, mlc_err *err) {
    if (nf < 0 || (nf && !F))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid surface arguments", path);
    mlc_status s = check_points(path, pts, idx, nv, err);
    if (s == MLC_OK) s = check_indices(path, F, nf, 3, nv, "face", err);
    if (s != MLC_OK) return s;
    unsigned char *used = mlc_calloc((size_t)MLC_MAX(nv, 1), 1);
    if (!used) return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    for (int i = 0; i < 3 * nf; i++)
        used[F[i]] = 1;
    for (int i = 0; i < nv; i++)
        if (!used[i]) {
            mlc_free(used);
            return mlc_errf(err, MLC_EINVAL,
                            "%s: vertex %d is used by no face; Blender would "
                            "drop it and the point cache would not match",
                            path, i);
        }
    mlc_free(used);

    mlc_afile af;
    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) return s;
    text_out *o = mlc_malloc(sizeof *o);
    if (!o) {
        mlc_afile_abort(&af);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    }
    o->fp = af.fp;
    o->n = 0;
    /* The comment must stay one line: cut it at the first newline. */
    const char *c = comment ? comment : "modalloco " MLC_VERSION " surface";
    out_str(o, "# ");
    out_put(o, c, strcspn(c, "\r\n"));
    out_char(o, '\n');
    for (int i = 0; i < nv; i++) {
        out_str(o, "v ");
        out_tuple(o, pts, idx ? idx[i] : i);
        out_char(o, '\n');
    }
    for (int f = 0; f < nf; f++) {
        const int one_based[3] = {F[3 * f] + 1, F[3 * f + 1] + 1, F[3 * f + 2] + 1};
        out_char(o, 'f');
        out_ints(o, one_based, 3);
        out_char(o, '\n');
    }
    out_flush(o);
    mlc_free(o);
    return mlc_afile_commit(&af, err);
}

mlc_status mlc_obj_write(const char *path, const double *X, int nv, const int *F, int nf,
                         const char *comment, mlc_err *err) {
    if (nv < 0 || nf < 0 || (nv && !X) || (nf && !F))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid surface arguments", path);
    mlc_number_text pts;
    mlc_status s = mlc_number_text_build(&pts, X, nv, 3, err);
    if (s == MLC_OK) s = mlc_obj_write_text(path, &pts, NULL, nv, F, nf, comment, err);
    mlc_number_text_free(&pts);
    return s;
}

/* ---- PC2 ---------------------------------------------------------------------------------- */

#define PC2_HEADER 32
#define PC2_COUNT_OFFSET 28

static void put_u32le(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)((v >> 8) & 0xff);
    p[2] = (unsigned char)((v >> 16) & 0xff);
    p[3] = (unsigned char)((v >> 24) & 0xff);
}

static uint32_t get_u32le(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_f32le(unsigned char *p, float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_u32le(p, u);
}

static float get_f32le(const unsigned char *p) {
    uint32_t u = get_u32le(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

mlc_status mlc_pc2_begin(mlc_pc2_writer *w, const char *path, int npoints, mlc_err *err) {
    memset(w, 0, sizeof *w);
    if (npoints < 1)
        return mlc_errf(err, MLC_EINVAL, "%s: a point cache needs at least one point", path);
    mlc_status s = mlc_afile_open(&w->file, path, err);
    if (s != MLC_OK) return s;
    unsigned char h[PC2_HEADER];
    memcpy(h, "POINTCACHE2", 12); /* 11 characters + the NUL Blender insists on */
    put_u32le(h + 12, 1);
    put_u32le(h + 16, (uint32_t)npoints);
    put_f32le(h + 20, 0.0f);
    put_f32le(h + 24, 1.0f);
    put_u32le(h + 28, 0);
    fwrite(h, 1, sizeof h, w->file.fp);
    w->npoints = npoints;
    return MLC_OK;
}

/* Convert and write in blocks through a stack buffer: no allocation per frame. */
static mlc_status pc2_frame(mlc_pc2_writer *w, const double *x, const int *idx, mlc_err *err) {
    if (!w->file.fp) return mlc_errf(err, MLC_EINVAL, "point cache: writer is not open");
    if (w->nsamples == INT32_MAX) /* the header's sample count is an int32 */
        return mlc_errf(err, MLC_EINVAL, "%s: too many samples", w->file.path);
    enum { BLOCK = 256 };
    unsigned char buf[12 * BLOCK];
    for (int i0 = 0; i0 < w->npoints; i0 += BLOCK) {
        int n = MLC_MIN(BLOCK, w->npoints - i0);
        for (int i = 0; i < n; i++) {
            const double *p = x + 3 * (size_t)(idx ? idx[i0 + i] : i0 + i);
            for (int k = 0; k < 3; k++)
                put_f32le(buf + 12 * i + 4 * k, (float)p[k]);
        }
        if (fwrite(buf, 12, (size_t)n, w->file.fp) != (size_t)n)
            return mlc_errf(err, MLC_EIO, "%s: write failed: %s", w->file.path, strerror(errno));
    }
    w->nsamples++;
    return MLC_OK;
}

mlc_status mlc_pc2_frame(mlc_pc2_writer *w, const double *xyz, mlc_err *err) {
    return pc2_frame(w, xyz, NULL, err);
}

mlc_status mlc_pc2_frame_indexed(mlc_pc2_writer *w, const double *x, const int *idx, mlc_err *err) {
    return pc2_frame(w, x, idx, err);
}

mlc_status mlc_pc2_end(mlc_pc2_writer *w, mlc_err *err) {
    if (!w->file.fp) return mlc_errf(err, MLC_EINVAL, "point cache: writer is not open");
    unsigned char c[4];
    put_u32le(c, (uint32_t)w->nsamples);
    if (fseek(w->file.fp, PC2_COUNT_OFFSET, SEEK_SET) != 0 || fwrite(c, 1, 4, w->file.fp) != 4) {
        mlc_status s = mlc_errf(err, MLC_EIO, "%s: cannot patch the sample count: %s", w->file.path,
                                strerror(errno));
        mlc_pc2_abort(w);
        return s;
    }
    mlc_status s = mlc_afile_commit(&w->file, err);
    memset(w, 0, sizeof *w);
    return s;
}

void mlc_pc2_abort(mlc_pc2_writer *w) {
    if (!w) return;
    mlc_afile_abort(&w->file);
    memset(w, 0, sizeof *w);
}

mlc_status mlc_pc2_read(const char *path, int *npoints, int *nsamples, float *start, float *rate,
                        float **xyz, mlc_err *err) {
    *xyz = NULL;
    *npoints = *nsamples = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return mlc_errf(err, MLC_EIO, "%s: %s", path, strerror(errno));
    mlc_status s = MLC_OK;
    unsigned char h[PC2_HEADER];
    long size = -1;
    if (fseek(fp, 0, SEEK_END) == 0) size = ftell(fp);
    if (size < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        s = mlc_errf(err, MLC_EIO, "%s: cannot determine the file size", path);
        goto done;
    }
    if (size < PC2_HEADER || fread(h, 1, sizeof h, fp) != sizeof h) {
        s = mlc_errf(err, MLC_EPARSE, "%s: shorter than the 32-byte PC2 header", path);
        goto done;
    }
    if (memcmp(h, "POINTCACHE2", 12) != 0) {
        s = mlc_errf(err, MLC_EPARSE,
                     "%s: not a PC2 file (signature must be "
                     "\"POINTCACHE2\" and a NUL byte)",
                     path);
        goto done;
    }
    uint32_t version = get_u32le(h + 12), np = get_u32le(h + 16), ns = get_u32le(h + 28);
    if (version != 1) {
        s = mlc_errf(err, MLC_EPARSE, "%s: PC2 version %u (expected 1)", path, (unsigned)version);
        goto done;
    }
    if (np > INT32_MAX || ns > INT32_MAX ||
        (uint64_t)PC2_HEADER + (uint64_t)12 * np * ns != (uint64_t)size) {
        s = mlc_errf(err, MLC_EPARSE,
                     "%s: header says %u points × %u samples = %llu bytes, "
                     "the file has %ld (truncated or corrupt)",
                     path, (unsigned)np, (unsigned)ns,
                     (unsigned long long)(PC2_HEADER + (uint64_t)12 * np * ns), size);
        goto done;
    }
    if (start) *start = get_f32le(h + 20);
    if (rate) *rate = get_f32le(h + 24);
    size_t count = (size_t)3 * np * ns;
    float *out = mlc_malloc(count * sizeof *out);
    unsigned char *raw = mlc_malloc(count * 4);
    if (!out || !raw) {
        mlc_free(out);
        mlc_free(raw);
        s = mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (fread(raw, 4, count, fp) != count) {
        mlc_free(out);
        mlc_free(raw);
        s = mlc_errf(err, MLC_EIO, "%s: read failed", path);
        goto done;
    }
    for (size_t i = 0; i < count; i++)
        out[i] = get_f32le(raw + 4 * i);
    mlc_free(raw);
    *xyz = out;
    *npoints = (int)np;
    *nsamples = (int)ns;
done:
    fclose(fp);
    return s;
}

/* ---- Colours ------------------------------------------------------------------------------ */

/* Nine anchors of a viridis-like ramp (dark purple, blue, teal, green, yellow): monotone in
 * lightness so that a scalar reads correctly in grey scale and for colour-blind viewers. */
static const unsigned char ramp[9][3] = {
    {68, 1, 84},    {71, 44, 122}, {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
    {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37},
};

/* Twelve categorical colours with distinct hues, mid-to-high saturation, no near-greys. */
static const unsigned char palette[12][3] = {
    {31, 119, 180},  {255, 127, 14},  {44, 160, 44},   {214, 39, 40},
    {148, 103, 189}, {140, 86, 75},   {227, 119, 194}, {188, 189, 34},
    {23, 190, 207},  {255, 187, 120}, {152, 223, 138}, {174, 199, 232},
};

void mlc_colormap(double t, unsigned char rgb[3]) {
    if (isnan(t)) {
        rgb[0] = rgb[1] = rgb[2] = 128;
        return;
    }
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double u = t * 8;
    int i = (int)u;
    if (i > 7) i = 7;
    double f = u - i;
    for (int k = 0; k < 3; k++)
        rgb[k] = (unsigned char)lround((1 - f) * ramp[i][k] + f * ramp[i + 1][k]);
}

void mlc_color_label(int label, unsigned char rgb[3]) {
    if (label < 0) {
        rgb[0] = rgb[1] = rgb[2] = 128;
        return;
    }
    memcpy(rgb, palette[label % 12], 3);
}

void mlc_colors_from_scalars(const double *s, int n, double lo, double hi, unsigned char *rgb) {
    if (!(lo < hi) || !isfinite(lo) || !isfinite(hi)) {
        lo = HUGE_VAL, hi = -HUGE_VAL;
        for (int i = 0; i < n; i++)
            if (isfinite(s[i])) lo = fmin(lo, s[i]), hi = fmax(hi, s[i]);
    }
    for (int i = 0; i < n; i++) {
        double t = !isfinite(s[i]) ? (double)NAN : (hi > lo) ? (s[i] - lo) / (hi - lo) : 0.5;
        mlc_colormap(t, rgb + 3 * i);
    }
}

void mlc_colors_from_labels(const int *label, int n, unsigned char *rgb) {
    for (int i = 0; i < n; i++)
        mlc_color_label(label[i], rgb + 3 * i);
}

/* ---- PLY ---------------------------------------------------------------------------------- */

mlc_status mlc_ply_write_text(const char *path, const mlc_number_text *pts, const int *idx, int nv,
                              const int *F, int nf, const unsigned char *vrgb,
                              const unsigned char *frgb, mlc_err *err) {
    if (nf < 0 || (nf && !F)) return mlc_errf(err, MLC_EINVAL, "%s: invalid mesh arguments", path);
    mlc_status s = check_points(path, pts, idx, nv, err);
    if (s == MLC_OK) s = check_indices(path, F, nf, 3, nv, "face", err);
    if (s != MLC_OK) return s;
    mlc_afile af;
    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) return s;
    text_out *o = mlc_malloc(sizeof *o);
    if (!o) {
        mlc_afile_abort(&af);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    }
    FILE *fp = af.fp;
    fprintf(fp, "ply\nformat ascii 1.0\ncomment modalloco %s\n", MLC_VERSION);
    fprintf(fp, "element vertex %d\nproperty double x\nproperty double y\nproperty double z\n", nv);
    if (vrgb) fputs("property uchar red\nproperty uchar green\nproperty uchar blue\n", fp);
    fprintf(fp, "element face %d\nproperty list uchar int vertex_indices\n", nf);
    if (frgb) fputs("property uchar red\nproperty uchar green\nproperty uchar blue\n", fp);
    fputs("end_header\n", fp);
    o->fp = fp;
    o->n = 0;
    for (int i = 0; i < nv; i++) {
        out_tuple(o, pts, idx ? idx[i] : i);
        if (vrgb) out_rgb(o, vrgb + 3 * i);
        out_char(o, '\n');
    }
    for (int f = 0; f < nf; f++) {
        out_char(o, '3');
        out_ints(o, F + 3 * f, 3);
        if (frgb) out_rgb(o, frgb + 3 * f);
        out_char(o, '\n');
    }
    out_flush(o);
    mlc_free(o);
    return mlc_afile_commit(&af, err);
}

mlc_status mlc_ply_write(const char *path, const double *X, int nv, const int *F, int nf,
                         const unsigned char *vrgb, const unsigned char *frgb, mlc_err *err) {
    if (nv < 0 || nf < 0 || (nv && !X) || (nf && !F))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid mesh arguments", path);
    mlc_number_text pts;
    mlc_status s = mlc_number_text_build(&pts, X, nv, 3, err);
    if (s == MLC_OK) s = mlc_ply_write_text(path, &pts, NULL, nv, F, nf, vrgb, frgb, err);
    mlc_number_text_free(&pts);
    return s;
}

/* ---- VTK ---------------------------------------------------------------------------------- */

/* Legacy VTK names are whitespace-delimited tokens and XML names are attribute values; keep
 * both to a safe character set. */
int mlc_vtk_name_ok(const char *s) {
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

mlc_status mlc_vtk_write_text(const char *path, const mlc_number_text *pts, const int *T, int nt,
                              const mlc_vtk_scalars *point, int npoint, const char *cell_name,
                              const int *cell_data, mlc_err *err) {
    if (nt < 0 || npoint < 0 || (nt && !T) || (npoint && !point))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid mesh arguments", path);
    mlc_status s = check_points(path, pts, NULL, pts ? pts->n : 0, err);
    if (s != MLC_OK) return s;
    const int nv = pts->n;
    if ((s = check_indices(path, T, nt, 4, nv, "tet", err)) != MLC_OK) return s;
    for (int a = 0; a < npoint; a++) {
        const mlc_number_text *ft = point[a].text;
        if (!mlc_vtk_name_ok(point[a].name) || (!point[a].values && !ft) ||
            (ft && (ft->dim != 1 || ft->n != nv)))
            return mlc_errf(err, MLC_EINVAL,
                            "%s: point field %d: name must be non-empty "
                            "letters, digits, '_', '-', '.' and values non-NULL",
                            path, a);
    }
    if (cell_data && !mlc_vtk_name_ok(cell_name))
        return mlc_errf(err, MLC_EINVAL,
                        "%s: cell field name must be non-empty letters, "
                        "digits, '_', '-', '.'",
                        path);
    mlc_afile af;
    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) return s;
    text_out *o = mlc_malloc(sizeof *o);
    if (!o) {
        mlc_afile_abort(&af);
        return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
    }
    FILE *fp = af.fp;
    o->fp = fp;
    o->n = 0;
    fprintf(fp,
            "# vtk DataFile Version 3.0\nmodalloco %s tet mesh\nASCII\n"
            "DATASET UNSTRUCTURED_GRID\nPOINTS %d double\n",
            MLC_VERSION, nv);
    for (int i = 0; i < nv; i++) {
        out_tuple(o, pts, i);
        out_char(o, '\n');
    }
    out_flush(o);
    fprintf(fp, "CELLS %d %lld\n", nt, 5LL * nt);
    for (int e = 0; e < nt; e++) {
        out_char(o, '4');
        out_ints(o, T + 4 * e, 4);
        out_char(o, '\n');
    }
    out_flush(o);
    fprintf(fp, "CELL_TYPES %d\n", nt);
    for (int e = 0; e < nt; e++)
        out_put(o, "10\n", 3); /* VTK_TETRA */
    out_flush(o);
    if (npoint > 0) {
        fprintf(fp, "POINT_DATA %d\n", nv);
        for (int a = 0; a < npoint; a++) {
            fprintf(fp, "SCALARS %s double 1\nLOOKUP_TABLE default\n", point[a].name);
            if (point[a].text) {
                for (int i = 0; i < nv; i++) {
                    out_tuple(o, point[a].text, i);
                    out_char(o, '\n');
                }
            } else {
                for (int i = 0; i < nv; i++) {
                    char *p = out_room(o, MLC_G15_MAX + 2);
                    o->n += mlc_format_g15(p, point[a].values[i]);
                    out_char(o, '\n');
                }
            }
            out_flush(o);
        }
    }
    if (cell_data) {
        fprintf(fp, "CELL_DATA %d\nSCALARS %s int 1\nLOOKUP_TABLE default\n", nt, cell_name);
        for (int e = 0; e < nt; e++) {
            char *p = out_room(o, 12);
            o->n += mlc_format_int(p, cell_data[e]);
            out_char(o, '\n');
        }
    }
    out_flush(o);
    mlc_free(o);
    return mlc_afile_commit(&af, err);
}

mlc_status mlc_vtk_write(const char *path, const double *X, int nv, const int *T, int nt,
                         const mlc_vtk_scalars *point, int npoint, const char *cell_name,
                         const int *cell_data, mlc_err *err) {
    if (nv < 0 || nt < 0 || npoint < 0 || (nv && !X) || (nt && !T) || (npoint && !point))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid mesh arguments", path);
    mlc_number_text pts;
    mlc_status s = mlc_number_text_build(&pts, X, nv, 3, err);
    if (s == MLC_OK)
        s = mlc_vtk_write_text(path, &pts, T, nt, point, npoint, cell_name, cell_data, err);
    mlc_number_text_free(&pts);
    return s;
}

/* ---- history.svg -------------------------------------------------------------------------- */

/* Plot geometry (SVG user units = pixels). */
#define SVG_W 720.0
#define SVG_H 440.0
#define SVG_L 80.0 /* left margin: y tick labels */
#define SVG_R 20.0
#define SVG_T 50.0 /* top: title */
#define SVG_B 60.0 /* bottom: x tick labels and axis label */

/* A "nice" tick step (1, 2 or 5 × 10^k) giving about `target` intervals over `span` > 0. */
static double nice_step(double span, int target) {
    double raw = span / target;
    double p = pow(10.0, floor(log10(raw)));
    double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* Make [*lo, *hi] non-degenerate and round it outward to the tick step. */
static double axis_range(double *lo, double *hi, int target) {
    if (!(*hi > *lo)) {
        double pad = fabs(*lo) > 0 ? 0.1 * fabs(*lo) : 1.0;
        *lo -= pad, *hi += pad;
    }
    double step = nice_step(*hi - *lo, target);
    *lo = floor(*lo / step) * step;
    *hi = ceil(*hi / step) * step;
    return step;
}

mlc_status mlc_svg_begin(mlc_afile *af, const char *path, double width, double height,
                         int font_size, mlc_err *err) {
    mlc_status st = mlc_afile_open(af, path, err);
    if (st != MLC_OK) return st;
    fprintf(af->fp,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"%d\">\n",
            width, height, width, height, font_size);
    fprintf(af->fp, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    return MLC_OK;
}

void mlc_xml_escape(FILE *fp, const char *s) {
    for (; *s; s++)
        switch (*s) {
        case '&':
            fputs("&amp;", fp);
            break;
        case '<':
            fputs("&lt;", fp);
            break;
        case '>':
            fputs("&gt;", fp);
            break;
        case '"':
            fputs("&quot;", fp);
            break;
        case '\n':
        case '\r':
            fputc(' ', fp);
            break;
        default:
            fputc(*s, fp);
        }
}

/* Tick label: the value rounded to the step's precision, with -0 shown as 0. */
static void tick_label(char *buf, size_t n, double v, double step) {
    if (fabs(v) < 1e-9 * step) v = 0;
    int digits = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 1e-4) || digits > 6)
        snprintf(buf, n, "%.3g", v);
    else
        snprintf(buf, n, "%.*f", digits, v);
}

mlc_status mlc_history_svg_write(const char *path, const int *generation, const double *best,
                                 const double *median, const double *sigma, const int *restart,
                                 int n, const char *title, mlc_err *err) {
    if (n < 0 || (n > 0 && (!best || !median)))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid history arguments", path);
    /* Data ranges over finite entries only. */
    double xlo = HUGE_VAL, xhi = -HUGE_VAL, ylo = HUGE_VAL, yhi = -HUGE_VAL;
    const double *series[2] = {best, median};
    for (int i = 0; i < n; i++) {
        double x = generation ? generation[i] : i;
        for (int s = 0; s < 2; s++) {
            double y = series[s][i];
            if (!isfinite(y)) continue;
            xlo = fmin(xlo, x), xhi = fmax(xhi, x);
            ylo = fmin(ylo, y), yhi = fmax(yhi, y);
        }
    }
    int have = isfinite(ylo);
    if (!have) xlo = 0, xhi = 1, ylo = 0, yhi = 1;
    double xstep = axis_range(&xlo, &xhi, 8);
    if (xstep < 1) { /* generations are integers: no fractional ticks */
        xstep = 1;
        xlo = floor(xlo), xhi = ceil(xhi);
    }
    double ystep = axis_range(&ylo, &yhi, 6);
    const double pw = SVG_W - SVG_L - SVG_R, ph = SVG_H - SVG_T - SVG_B;
#define PX(x) (SVG_L + ((x)-xlo) / (xhi - xlo) * pw)
#define PY(y) (SVG_T + (yhi - (y)) / (yhi - ylo) * ph)

    mlc_afile af;
    mlc_status st = mlc_svg_begin(&af, path, SVG_W, SVG_H, 12, err);
    if (st != MLC_OK) return st;
    FILE *fp = af.fp;
    fputs("<text x=\"360\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">", fp);
    mlc_xml_escape(fp, title ? title : "modalloco: best and median J per generation");
    fputs("</text>\n", fp);

    /* Grid, ticks and labels. Tick values are k·step (integer k) to avoid drift. */
    char lab[64];
    fputs("<g stroke=\"#dddddd\" stroke-width=\"1\">\n", fp);
    for (long k = lround(xlo / xstep); k * xstep <= xhi + 1e-9 * xstep; k++)
        fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", PX(k * xstep),
                SVG_T, PX(k * xstep), SVG_T + ph);
    for (long k = lround(ylo / ystep); k * ystep <= yhi + 1e-9 * ystep; k++)
        fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", SVG_L,
                PY(k * ystep), SVG_L + pw, PY(k * ystep));
    fputs("</g>\n<g fill=\"#333333\">\n", fp);
    for (long k = lround(xlo / xstep); k * xstep <= xhi + 1e-9 * xstep; k++) {
        tick_label(lab, sizeof lab, k * xstep, xstep);
        fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n", PX(k * xstep),
                SVG_T + ph + 18, lab);
    }
    for (long k = lround(ylo / ystep); k * ystep <= yhi + 1e-9 * ystep; k++) {
        tick_label(lab, sizeof lab, k * ystep, ystep);
        fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", SVG_L - 6,
                PY(k * ystep) + 4, lab);
    }
    fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">generation</text>\n",
            SVG_L + pw / 2, SVG_H - 15);
    fprintf(fp,
            "<text x=\"18\" y=\"%.2f\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 18 %.2f)\">J</text>\n",
            SVG_T + ph / 2, SVG_T + ph / 2);
    if (!have)
        fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">no finite data</text>\n",
                SVG_L + pw / 2, SVG_T + ph / 2);
    fputs("</g>\n", fp);
    fprintf(fp,
            "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
            "stroke=\"#333333\"/>\n",
            SVG_L, SVG_T, pw, ph);

    /* The two series: one polyline each over the finite points, plus markers when a series
     * has a single point (a one-point polyline draws nothing). */
    static const char *const colour[2] = {"#1f77b4", "#ff7f0e"};
    static const char *const name[2] = {"best J", "median J"};
    for (int s = 0; s < 2; s++) {
        int count = 0, last = -1;
        fprintf(fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                colour[s]);
        for (int i = 0; i < n; i++) {
            if (!isfinite(series[s][i])) continue;
            double x = generation ? generation[i] : i;
            fprintf(fp, "%s%.2f,%.2f", count ? " " : "", PX(x), PY(series[s][i]));
            count++, last = i;
        }
        fputs("\"/>\n", fp);
        if (count == 1) {
            double x = generation ? generation[last] : last;
            fprintf(fp, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", PX(x),
                    PY(series[s][last]), colour[s]);
        }
    }
    /* Restarts: a dashed vertical line before the first generation of each new run. */
    for (int i = 1; restart && i < n; i++) {
        if (restart[i] == restart[i - 1]) continue;
        double x = generation ? 0.5 * (generation[i] + generation[i - 1]) : i - 0.5;
        fprintf(fp,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
                "stroke-dasharray=\"4 3\"><title>restart %d</title></line>\n",
                PX(x), SVG_T, PX(x), SVG_T + ph, restart[i]);
    }
    /* Sigma on its own scale (0 at the bottom, its maximum at the top; the legend gives it):
     * the step size shows when a run converges and when a restart resets it. */
    double smax = 0;
    for (int i = 0; sigma && i < n; i++)
        if (isfinite(sigma[i])) smax = fmax(smax, sigma[i]);
    if (smax > 0) {
        fputs("<polyline fill=\"none\" stroke=\"#7f7f7f\" stroke-width=\"1\" "
              "stroke-dasharray=\"2 2\" points=\"",
              fp);
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (!isfinite(sigma[i])) continue;
            double x = generation ? generation[i] : i;
            fprintf(fp, "%s%.2f,%.2f", count++ ? " " : "", PX(x),
                    SVG_T + ph - sigma[i] / smax * ph);
        }
        fputs("\"/>\n", fp);
        double y = SVG_T + 16 + 18 * 2, x = SVG_L + pw - 120;
        fprintf(fp,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#7f7f7f\" "
                "stroke-dasharray=\"2 2\"/>\n",
                x, y, x + 24, y);
        fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\">σ (top %.3g)</text>\n", x + 30, y + 4, smax);
    }
    /* Legend, top right inside the plot. */
    for (int s = 0; s < 2; s++) {
        double y = SVG_T + 16 + 18 * s, x = SVG_L + pw - 120;
        fprintf(fp,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                "stroke-width=\"2\"/>\n",
                x, y, x + 24, y, colour[s]);
        fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\">%s</text>\n", x + 30, y + 4, name[s]);
    }
    fputs("</svg>\n", fp);
#undef PX
#undef PY
    return mlc_afile_commit(&af, err);
}

void mlc_base64_group(const unsigned char in[3], int n, char out[4]) {
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned v =
        (unsigned)in[0] << 16 | (unsigned)(n > 1 ? in[1] : 0) << 8 | (unsigned)(n > 2 ? in[2] : 0);
    out[0] = alphabet[(v >> 18) & 63];
    out[1] = alphabet[(v >> 12) & 63];
    out[2] = n > 1 ? alphabet[(v >> 6) & 63] : '=';
    out[3] = n > 2 ? alphabet[v & 63] : '=';
}

void mlc_json_add_numbers(struct cJSON *o, const mlc_json_field *f, int n) {
    for (int i = 0; i < n; i++)
        cJSON_AddNumberToObject(o, f[i].name, f[i].value);
}

cJSON *mlc_json_exact_number(double v) {
    char buf[40];
    if (isfinite(v))
        snprintf(buf, sizeof buf, "%.17g", v);
    else
        snprintf(buf, sizeof buf, "null");
    return cJSON_CreateRaw(buf);
}

int mlc_json_make_exact(cJSON *o) {
    for (cJSON *c = o ? o->child : NULL; c; c = c->next) {
        if (c->child && !mlc_json_make_exact(c)) return 0;
        if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble)) continue;
        char buf[40];
        snprintf(buf, sizeof buf, "%1.15g", c->valuedouble);
        if (strtod(buf, NULL) == c->valuedouble && !signbit(c->valuedouble)) continue; /* −0: "0" */
        snprintf(buf, sizeof buf, "%.17g", c->valuedouble);
        char *text = cJSON_malloc(strlen(buf) + 1);
        if (!text) return 0;
        strcpy(text, buf);
        c->type = cJSON_Raw | (c->type & cJSON_StringIsConst);
        c->valuestring = text;
    }
    return 1;
}

double mlc_json_number(const struct cJSON *o, const char *name, double dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}
