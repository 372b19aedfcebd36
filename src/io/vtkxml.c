/* vtkxml.c: VTK XML PolyData, UnstructuredGrid and ParaView collection writers (vtkxml.h).
 *
 * Binary data arrays are streamed: values are converted to little-endian bytes in small blocks
 * and fed through a base64 encoder that writes straight to the file, so a frame of any size
 * costs no heap beyond the stdio buffer. The UInt64 byte count that VTK expects before the
 * values is the first 8 bytes of the same base64 stream (the layout VTK's own writer uses
 * for uncompressed data).
 */
#include "vtkxml.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal/vtk_name.h"
#include "output.h"

/* ---- base64 ------------------------------------------------------------------------------ */

typedef struct b64 {
    FILE *fp;
    unsigned char in[3];
    int nin;
} b64;

static void b64_group(b64 *b, int n) {
    char out[4];
    mlc_base64_group(b->in, n, out);
    fwrite(out, 1, 4, b->fp);
}

static void b64_put(b64 *b, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        b->in[b->nin++] = p[i];
        if (b->nin == 3) {
            b64_group(b, 3);
            b->nin = 0;
        }
    }
}

static void b64_end(b64 *b) {
    if (b->nin) b64_group(b, b->nin);
    b->nin = 0;
}

/* ---- Little-endian values ------------------------------------------------------------------ */

static void put_u32(unsigned char *p, uint32_t v) {
    for (int k = 0; k < 4; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

static void put_u64(unsigned char *p, uint64_t v) {
    for (int k = 0; k < 8; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

static void put_f32(unsigned char *p, float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_u32(p, u);
}

/* What one DataArray holds: count values of one kind, produced by index. */
typedef enum { ARR_F32, ARR_I32, ARR_U8 } arr_kind;

static const char *const kind_name[] = {"Float32", "Int32", "UInt8"};
static const int kind_size[] = {4, 4, 1};

typedef struct arr_src {
    arr_kind kind;
    size_t count;
    const double *f;        /* ARR_F32: values */
    const int *i;           /* ARR_I32: values, or NULL for a generated sequence */
    int step;               /* ARR_I32 with i == NULL: value j is (j + 1)·step (cell offsets) */
    const unsigned char *u; /* ARR_U8: values, or NULL for the constant `fill` */
    unsigned char fill;
} arr_src;

static void write_array(FILE *fp, const char *name, int ncomp, const arr_src *a) {
    fprintf(fp, "        <DataArray type=\"%s\" Name=\"%s\"", kind_name[a->kind], name);
    if (ncomp > 1) fprintf(fp, " NumberOfComponents=\"%d\"", ncomp);
    fputs(" format=\"binary\">\n          ", fp);
    b64 b = {fp, {0}, 0};
    unsigned char hdr[8];
    put_u64(hdr, (uint64_t)a->count * (uint64_t)kind_size[a->kind]);
    b64_put(&b, hdr, sizeof hdr);
    enum { BLOCK = 1024 };
    unsigned char buf[4 * BLOCK];
    for (size_t j0 = 0; j0 < a->count; j0 += BLOCK) {
        size_t n = MLC_MIN((size_t)BLOCK, a->count - j0);
        for (size_t j = 0; j < n; j++) {
            size_t at = j0 + j;
            switch (a->kind) {
            case ARR_F32:
                put_f32(buf + 4 * j, (float)a->f[at]);
                break;
            case ARR_I32:
                put_u32(buf + 4 * j, (uint32_t)(a->i ? a->i[at] : (int)(at + 1) * a->step));
                break;
            case ARR_U8:
                buf[j] = a->u ? a->u[at] : a->fill;
                break;
            }
        }
        b64_put(&b, buf, n * (size_t)kind_size[a->kind]);
    }
    b64_end(&b);
    fputs("\n        </DataArray>\n", fp);
}

/* ---- Checks ------------------------------------------------------------------------------ */

static mlc_status check_piece(const char *path, const mlc_vtk_piece *p, int per, mlc_err *err) {
    if (!p || p->n < 0 || p->ncell < 0 || p->nfield < 0 || (p->n && !p->X) ||
        (p->ncell && !p->cells) || (p->nfield && !p->fields))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid geometry arguments", path);
    /* Offsets are Int32: the last one is per·ncell. */
    if ((int64_t)p->ncell * per > INT32_MAX)
        return mlc_errf(err, MLC_EINVAL, "%s: %d cells are too many for Int32 offsets", path,
                        p->ncell);
    for (size_t j = 0; j < (size_t)p->ncell * (size_t)per; j++)
        if (p->cells[j] < 0 || p->cells[j] >= p->n)
            return mlc_errf(err, MLC_EINVAL, "%s: cell %zu has vertex index %d outside [0, %d)",
                            path, j / (size_t)per, p->cells[j], p->n);
    for (int a = 0; a < p->nfield; a++) {
        const mlc_vtk_field *f = &p->fields[a];
        int one = (f->f != NULL) + (f->u8 != NULL) == 1;
        if (!mlc_vtk_name_ok(f->name) || !one || (f->ncomp != 1 && f->ncomp != 3) ||
            (f->u8 && f->ncomp != 1))
            return mlc_errf(err, MLC_EINVAL,
                            "%s: point field %d: needs a name of letters, "
                            "digits, '_', '-', '.', 1 or 3 components, and exactly one of "
                            "float and byte values",
                            path, a);
    }
    return MLC_OK;
}

/* ---- PolyData and UnstructuredGrid --------------------------------------------------------- */

static void write_point_data(FILE *fp, const mlc_vtk_piece *p) {
    if (!p->nfield) return;
    fputs("      <PointData>\n", fp);
    for (int a = 0; a < p->nfield; a++) {
        const mlc_vtk_field *f = &p->fields[a];
        arr_src src = {
            f->u8 ? ARR_U8 : ARR_F32, (size_t)p->n * (size_t)f->ncomp, f->f, NULL, 0, f->u8, 0};
        write_array(fp, f->name, f->ncomp, &src);
    }
    fputs("      </PointData>\n", fp);
}

static void write_points(FILE *fp, const mlc_vtk_piece *p) {
    fputs("      <Points>\n", fp);
    arr_src src = {ARR_F32, 3 * (size_t)p->n, p->X, NULL, 0, NULL, 0};
    write_array(fp, "Points", 3, &src);
    fputs("      </Points>\n", fp);
}

/* The cell block common to both kinds: connectivity, then offsets (the end of each cell),
 * then, for an unstructured grid, the cell types. */
static void write_cells(FILE *fp, const mlc_vtk_piece *p, int per, int with_types) {
    arr_src conn = {ARR_I32, (size_t)p->ncell * (size_t)per, NULL, p->cells, 0, NULL, 0};
    arr_src offs = {ARR_I32, (size_t)p->ncell, NULL, NULL, per, NULL, 0};
    write_array(fp, "connectivity", 1, &conn);
    write_array(fp, "offsets", 1, &offs);
    if (with_types) {
        arr_src types = {ARR_U8, (size_t)p->ncell, NULL, NULL, 0, NULL, 10}; /* VTK_TETRA */
        write_array(fp, "types", 1, &types);
    }
}

static void write_head(FILE *fp, const char *type) {
    fprintf(fp,
            "<?xml version=\"1.0\"?>\n<!-- modalloco %s -->\n"
            "<VTKFile type=\"%s\" version=\"1.0\" byte_order=\"LittleEndian\" "
            "header_type=\"UInt64\">\n  <%s>\n",
            MLC_VERSION, type, type);
}

mlc_status mlc_vtp_write(const char *path, const mlc_vtk_piece *piece, mlc_err *err) {
    mlc_status s = check_piece(path, piece, 3, err);
    if (s != MLC_OK) return s;
    mlc_afile af;
    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) return s;
    FILE *fp = af.fp;
    write_head(fp, "PolyData");
    fprintf(fp,
            "    <Piece NumberOfPoints=\"%d\" NumberOfVerts=\"0\" NumberOfLines=\"0\" "
            "NumberOfStrips=\"0\" NumberOfPolys=\"%d\">\n",
            piece->n, piece->ncell);
    write_point_data(fp, piece);
    write_points(fp, piece);
    fputs("      <Polys>\n", fp);
    write_cells(fp, piece, 3, 0);
    fputs("      </Polys>\n    </Piece>\n  </PolyData>\n</VTKFile>\n", fp);
    return mlc_afile_commit(&af, err);
}

mlc_status mlc_vtu_write(const char *path, const mlc_vtk_piece *piece, mlc_err *err) {
    mlc_status s = check_piece(path, piece, 4, err);
    if (s != MLC_OK) return s;
    mlc_afile af;
    if ((s = mlc_afile_open(&af, path, err)) != MLC_OK) return s;
    FILE *fp = af.fp;
    write_head(fp, "UnstructuredGrid");
    fprintf(fp, "    <Piece NumberOfPoints=\"%d\" NumberOfCells=\"%d\">\n", piece->n, piece->ncell);
    write_point_data(fp, piece);
    write_points(fp, piece);
    fputs("      <Cells>\n", fp);
    write_cells(fp, piece, 4, 1);
    fputs("      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n", fp);
    return mlc_afile_commit(&af, err);
}

/* ---- Collections ------------------------------------------------------------------------- */

mlc_status mlc_pvd_write(const char *path, const double *time, const char *const *files, int n,
                         mlc_err *err) {
    if (n < 0 || (n && (!time || !files)))
        return mlc_errf(err, MLC_EINVAL, "%s: invalid collection arguments", path);
    mlc_afile af;
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    FILE *fp = af.fp;
    fprintf(fp,
            "<?xml version=\"1.0\"?>\n<!-- modalloco %s -->\n"
            "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\" "
            "header_type=\"UInt64\">\n  <Collection>\n",
            MLC_VERSION);
    for (int i = 0; i < n; i++) {
        /* %.17g: distinct steps keep distinct times however small sim.dt is. */
        fprintf(fp, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"", time[i]);
        mlc_xml_escape(fp, files[i]);
        fputs("\"/>\n", fp);
    }
    fputs("  </Collection>\n</VTKFile>\n", fp);
    return mlc_afile_commit(&af, err);
}

/* ---- Series ------------------------------------------------------------------------------ */

#define SERIES_PATH_MAX 4200

/* "frames/frame_0007.vtp" relative to the output directory. */
static void frame_name(char *out, size_t cap, int k, const char *ext) {
    snprintf(out, cap, "frames/frame_%04d.%s", k, ext);
}

static int series_path(char *out, size_t cap, const mlc_vtk_series *s, const char *rel) {
    return mlc_path_join(out, cap, s->dir, rel);
}

void mlc_vtk_series_free(mlc_vtk_series *s) {
    if (!s) return;
    mlc_free(s->dir);
    mlc_free(s->time);
    memset(s, 0, sizeof *s);
}

mlc_status mlc_vtk_series_begin(mlc_vtk_series *s, const char *dir, int volume, mlc_err *err) {
    memset(s, 0, sizeof *s);
    if (!dir || !*dir) return mlc_errf(err, MLC_EINVAL, "vtk: empty output directory");
    char path[SERIES_PATH_MAX];
    if (snprintf(path, sizeof path, "%s/frames", dir) >= (int)sizeof path)
        return mlc_errf(err, MLC_EINVAL, "%s: output directory name too long", dir);
    mlc_status st = mlc_mkdir_p(path, err);
    if (st != MLC_OK) return st;
    s->dir = mlc_strdup(dir);
    if (!s->dir) return mlc_errf(err, MLC_ENOMEM, "vtk: out of memory");
    s->volume = volume != 0;
    return MLC_OK;
}

mlc_status mlc_vtk_series_frame(mlc_vtk_series *s, double time, const mlc_vtk_piece *surface,
                                const mlc_vtk_piece *tets, mlc_err *err) {
    if (!s->dir) return mlc_errf(err, MLC_EINVAL, "vtk: series not begun");
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        double *t = mlc_realloc(s->time, (size_t)cap * sizeof *t);
        if (!t) return mlc_errf(err, MLC_ENOMEM, "vtk: out of memory");
        s->time = t, s->cap = cap;
    }
    char rel[64], path[SERIES_PATH_MAX];
    frame_name(rel, sizeof rel, s->n, "vtp");
    if (!series_path(path, sizeof path, s, rel))
        return mlc_errf(err, MLC_EINVAL, "%s: output directory name too long", s->dir);
    mlc_status st = mlc_vtp_write(path, surface, err);
    if (st != MLC_OK) return st;
    if (s->volume) {
        frame_name(rel, sizeof rel, s->n, "vtu");
        series_path(path, sizeof path, s, rel);
        if ((st = mlc_vtu_write(path, tets, err)) != MLC_OK) return st;
    }
    s->time[s->n++] = time;
    return MLC_OK;
}

/* Write one collection of the series' frames with extension ext. */
static mlc_status write_collection(const mlc_vtk_series *s, const char *name, const char *ext,
                                   mlc_err *err) {
    char path[SERIES_PATH_MAX];
    if (!series_path(path, sizeof path, s, name))
        return mlc_errf(err, MLC_EINVAL, "%s: output directory name too long", s->dir);
    /* One allocation: n pointers, then n names of at most 32 bytes. */
    enum { NAME = 32 };
    size_t n = (size_t)s->n;
    char **files = mlc_malloc(n * (sizeof(char *) + NAME) + 1);
    if (!files) return mlc_errf(err, MLC_ENOMEM, "vtk: out of memory");
    char *names = (char *)(files + n);
    for (size_t i = 0; i < n; i++) {
        files[i] = names + i * NAME;
        frame_name(files[i], NAME, (int)i, ext);
    }
    mlc_status st = mlc_pvd_write(path, s->time, (const char *const *)files, s->n, err);
    mlc_free(files);
    return st;
}

/* unlink DIR/rel; 1 when a file was removed. */
static int remove_rel(const mlc_vtk_series *s, const char *rel) {
    char path[SERIES_PATH_MAX];
    return series_path(path, sizeof path, s, rel) && unlink(path) == 0;
}

mlc_status mlc_vtk_series_end(mlc_vtk_series *s, mlc_err *err) {
    if (!s->dir) return mlc_errf(err, MLC_EINVAL, "vtk: series not begun");
    mlc_status st = write_collection(s, "frames.pvd", "vtp", err);
    if (st == MLC_OK && s->volume) st = write_collection(s, "volume.pvd", "vtu", err);
    if (st == MLC_OK) {
        /* Frames of an earlier run are numbered contiguously from 0, so stop at the first
         * number with neither file. Best effort: a leftover file is harmless to ParaView, which
         * reads only what the collections name. */
        char rel[64];
        if (!s->volume) {
            remove_rel(s, "volume.pvd");
            for (int k = 0;; k++) {
                frame_name(rel, sizeof rel, k, "vtu");
                if (!remove_rel(s, rel)) break;
            }
        }
        for (int k = s->n;; k++) {
            int gone = 0;
            frame_name(rel, sizeof rel, k, "vtp");
            gone += remove_rel(s, rel);
            frame_name(rel, sizeof rel, k, "vtu");
            gone += remove_rel(s, rel);
            if (!gone) break;
        }
    }
    mlc_vtk_series_free(s);
    return st;
}
