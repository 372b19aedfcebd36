/* output.h: writing result files (docs/outputs.md, with the Blender facts).
 *
 * Every file is written atomically: into a temporary file in the same directory, then flushed,
 * fsync'ed and renamed over the final name, so a reader (or a crash, or Ctrl-C) never sees a
 * half-written file and an aborted write leaves the previous version untouched. mlc_afile is
 * the primitive; every writer below uses it, and callers writing their own formats (CSV, JSON)
 * fprintf to mlc_afile.fp.
 *
 * Geometry is 3×n column-major doubles (xyz interleaved), faces 3×nf and tets 4×nt 0-based
 * vertex indices, as everywhere in the project. Files are written in the coordinates given
 * (y up, never rotated: Blender's importer converts the axes).
 *
 * Errors: MLC_EIO (with the path and strerror in err) for file-system failures, MLC_EINVAL for
 * bad arguments (index out of range, unreferenced vertex, bad name), MLC_ENOMEM.
 */
#ifndef MODALLOCO_OUTPUT_H
#define MODALLOCO_OUTPUT_H

#include <stdio.h>

#include "base.h"
#include "number_text.h"

/* ---- Atomic files ------------------------------------------------------------------------ */

/* An open atomic file. A zeroed struct is "not open"; commit and abort release everything
 * and re-zero it, whatever their outcome. */
typedef struct mlc_afile {
    FILE *fp;   /* write here (binary mode; no newline translation) */
    char *path; /* final path (owned) */
    char *tmp;  /* temporary path "DIR/.NAME.XXXXXX" in the same directory (owned) */
} mlc_afile;

/* Create the temporary file next to `path` (mkstemp; mode 0644 once committed). The directory
 * must exist (see mlc_mkdir_p). */
mlc_status mlc_afile_open(mlc_afile *af, const char *path, mlc_err *err);
/* Flush, fsync, close and rename over the final path (then fsync the directory, best effort).
 * On any failure (including an earlier write error on fp) the temporary file is removed, the
 * previous file at `path` is untouched, and MLC_EIO is returned. */
mlc_status mlc_afile_commit(mlc_afile *af, mlc_err *err);
/* Close and unlink the temporary file. Idempotent; safe on a zeroed struct. */
void mlc_afile_abort(mlc_afile *af);

/* Write s as XML character data or attribute text: & < > " escaped, line breaks as spaces
 * (an attribute value would have them normalized to spaces anyway). */
void mlc_xml_escape(FILE *fp, const char *s);

/* Write a NUL-terminated string to `path` atomically. */
mlc_status mlc_write_text_atomic(const char *path, const char *text, mlc_err *err);

/* mkdir -p: create `path` and its missing parents (mode 0777 minus umask). OK if it exists as a
 * directory; MLC_EIO if it (or a parent) exists as something else or cannot be created. */
mlc_status mlc_mkdir_p(const char *path, mlc_err *err);

/* ---- surface.obj ------------------------------------------------------------------------- */

/* Wavefront OBJ of a compact surface: one comment line ("# " + `comment`, or a default when
 * NULL), then `v x y z` for the nv points of X (3×nv) and `f a b c` (1-based) for the nf
 * triangles F (3×nf, 0-based into X). Every vertex must be used by a face and every index in
 * range (MLC_EINVAL otherwise): Blender's importer drops unused vertices, after which the PC2
 * cache no longer matches. Coordinates are printed with 15 significant digits. */
mlc_status mlc_obj_write(const char *path, const double *X, int nv, const int *F, int nf,
                         const char *comment, mlc_err *err);
/* The same file from points already formatted (number_text.h): point i is tuple idx[i] of pts
 * (tuples of 3), or tuple i when idx is NULL. The bytes are those mlc_obj_write prints. */
mlc_status mlc_obj_write_text(const char *path, const mlc_number_text *pts, const int *idx, int nv,
                              const int *F, int nf, const char *comment, mlc_err *err);

/* ---- animation.pc2 (Blender Point Cache 2) ------------------------------------------------ */

/* Streaming writer. Layout (little-endian, 32-byte header): "POINTCACHE2\0" (12 bytes), int32
 * version 1, int32 point count, float32 start frame 0.0, float32 sample rate 1.0, int32 sample
 * count, then float32 x, y, z per point per sample. File size = 32 + 12·points·samples. */
typedef struct mlc_pc2_writer {
    mlc_afile file;
    int npoints;
    int nsamples; /* frames written so far */
} mlc_pc2_writer;

/* Open the atomic temp file and write the header (sample count 0 until end). npoints >= 1. */
mlc_status mlc_pc2_begin(mlc_pc2_writer *w, const char *path, int npoints, mlc_err *err);
/* Append one sample: xyz is 3×npoints doubles, converted to float32 (values beyond the float
 * range become ±Inf; NaN is written as is). Does not allocate. */
mlc_status mlc_pc2_frame(mlc_pc2_writer *w, const double *xyz, mlc_err *err);
/* Patch the sample count into the header and commit. Releases the writer in all cases (on
 * failure the temp file is removed). */
mlc_status mlc_pc2_end(mlc_pc2_writer *w, mlc_err *err);
/* Discard everything written (the previous file at the path is untouched). Idempotent. */
void mlc_pc2_abort(mlc_pc2_writer *w);

/* Read a PC2 file (for tests and tools). Checks the signature, version 1, and that the file
 * length is exactly 32 + 12·points·samples (MLC_EPARSE otherwise). *xyz (owned, mlc_free) gets
 * 3·points·samples floats, sample-major. start/rate may be NULL. */
mlc_status mlc_pc2_read(const char *path, int *npoints, int *nsamples, float *start, float *rate,
                        float **xyz, mlc_err *err);

/* ---- Colours, PLY --------------------------------------------------------------------------- */

/* Perceptual sequential colormap (a viridis-like ramp from dark purple to yellow), t clamped
 * to [0, 1]; NaN gives mid grey. */
void mlc_colormap(double t, unsigned char rgb[3]);
/* Categorical palette for labels (12 distinct colours, cycling); a negative label is grey. */
void mlc_color_label(int label, unsigned char rgb[3]);
/* rgb (3×n) for n scalars mapped linearly from [lo, hi] through mlc_colormap. If lo >= hi (or
 * either is not finite) the range is the finite min/max of s; a constant field maps to the
 * middle colour. */
void mlc_colors_from_scalars(const double *s, int n, double lo, double hi, unsigned char *rgb);
/* rgb (3×n) for n integer labels through mlc_color_label. */
void mlc_colors_from_labels(const int *label, int n, unsigned char *rgb);

/* ASCII PLY of a triangle mesh with optional per-vertex colours vrgb (3×nv, uchar red green
 * blue) and optional per-face colours frgb (3×nf); either may be NULL. Indices are checked. */
mlc_status mlc_ply_write(const char *path, const double *X, int nv, const int *F, int nf,
                         const unsigned char *vrgb, const unsigned char *frgb, mlc_err *err);
/* The same file from points already formatted, as mlc_obj_write_text takes them. */
mlc_status mlc_ply_write_text(const char *path, const mlc_number_text *pts, const int *idx, int nv,
                              const int *F, int nf, const unsigned char *vrgb,
                              const unsigned char *frgb, mlc_err *err);

/* ---- Legacy VTK (ParaView) ---------------------------------------------------------------- */

/* A named per-point scalar field (nv values). Names: letters, digits, '_', '-', '.' only. */
typedef struct mlc_vtk_scalars {
    const char *name;
    const double *values;
    const mlc_number_text *text; /* the values already formatted (nv tuples of 1), or NULL */
} mlc_vtk_scalars;

/* ASCII legacy VTK unstructured grid of linear tets (cell type 10), with `npoint` point scalar
 * fields (may be 0) and an optional integer cell field (`cell_name`, `cell_data` nt values;
 * NULL for none). */
mlc_status mlc_vtk_write(const char *path, const double *X, int nv, const int *T, int nt,
                         const mlc_vtk_scalars *point, int npoint, const char *cell_name,
                         const int *cell_data, mlc_err *err);
/* The same file from points already formatted (pts: nv = pts->n tuples of 3). */
mlc_status mlc_vtk_write_text(const char *path, const mlc_number_text *pts, const int *T, int nt,
                              const mlc_vtk_scalars *point, int npoint, const char *cell_name,
                              const int *cell_data, mlc_err *err);

/* ---- history.svg ------------------------------------------------------------------------- */

/* Open `path` as an mlc_afile and write the opening <svg> element (width × height, whole
 * numbers of pixels, sans-serif at font_size) and a white background; the caller writes the
 * rest, closes the element and commits. The one header of the program's plots. */
mlc_status mlc_svg_begin(mlc_afile *af, const char *path, double width, double height,
                         int font_size, mlc_err *err);

/* Self-contained SVG line plot of best J and median J against the generation number (x =
 * generation[i], or i when `generation` is NULL), n >= 0 entries. Axes with "nice" ticks and
 * labels, a legend and a title (`title` NULL gives a default; it is XML-escaped). NaN/Inf
 * entries are skipped; a constant series or a single point still plots (the range is padded).
 * Contains the two <polyline> elements of J (best first), then, when `sigma` (nullable, n
 * values) has a positive finite entry, a third for sigma scaled to the plot's height. With
 * `restart` (nullable, n run indices) a dashed vertical line marks each change of run. */
mlc_status mlc_history_svg_write(const char *path, const int *generation, const double *best,
                                 const double *median, const double *sigma, const int *restart,
                                 int n, const char *title, mlc_err *err);

/* A named number for mlc_json_add_numbers. */
typedef struct mlc_json_field {
    const char *name;
    double value;
} mlc_json_field;
struct cJSON;
/* Add n number members {name: value} to the JSON object o, in order (cJSON's printing). */
void mlc_json_add_numbers(struct cJSON *o, const mlc_json_field *f, int n);

/* A JSON number that reads back as exactly v: printed with 17 significant digits ("%.17g"),
 * where cJSON's own printing keeps 15 when they compare equal within a relative epsilon and
 * so can drop the last bit (a replayed gait must get every bit back). null for NaN and ±∞.
 * The item is owned by the caller (cJSON_Delete, or the object it is added to); NULL when out
 * of memory. */
struct cJSON *mlc_json_exact_number(double v);
/* Every number of the tree `o` that cJSON would print inexactly (it prints 15 digits whenever
 * they read back within an epsilon, not exactly) becomes raw text with all 17 digits, so a
 * document read back and printed again keeps every number's bits; numbers whose 15 digits are
 * exact print as before. Returns 0 when out of memory (the tree then partly converted). */
int mlc_json_make_exact(struct cJSON *o);

/* The number member `name` of the JSON object o (NULL o: none), or dflt when it is missing or
 * not a number. Names are case-sensitive. */
double mlc_json_number(const struct cJSON *o, const char *name, double dflt);

/* One base64 group (RFC 4648 alphabet): n = 1..3 input bytes in[0..n−1] become 4 characters,
 * '=' padded when n < 3. The streaming writers (vtkxml.c, the viewer) call it per group. */
void mlc_base64_group(const unsigned char in[3], int n, char out[4]);

#endif
