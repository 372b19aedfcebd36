/* vtkxml.h: VTK XML files for ParaView: one PolyData (.vtp) or UnstructuredGrid (.vtu) file per
 * frame, and a ParaView collection (.pvd) that lists the frames with their times.
 *
 * Encoding (stated in every file's <VTKFile> element): version "1.0", byte_order
 * "LittleEndian", header_type "UInt64", no compression. Each DataArray is format="binary":
 * inline base64 of one stream holding a UInt64 byte count followed by the values. Points and
 * float fields are Float32 (the precision of animation.pc2, so a frame's points equal the
 * point cache's frame bit for bit); connectivity and offsets are Int32; cell types UInt8.
 * Inline base64 was chosen over appended raw data because the files stay valid XML that any
 * XML tool can read, at 4/3 of the binary size.
 *
 * Geometry is 3×n column-major doubles (xyz interleaved) and 0-based index arrays, as
 * everywhere in the project. Every file is written atomically (output.h's mlc_afile).
 *
 * Errors: MLC_EINVAL for bad arguments (index out of range, bad field name, counts beyond
 * INT32_MAX), MLC_EIO with the path and strerror for file-system failures, MLC_ENOMEM.
 */
#ifndef MODALLOCO_VTKXML_H
#define MODALLOCO_VTKXML_H

#include "base.h"

/* A named per-point field. Exactly one of f (ncomp×n doubles, written as Float32) and u8 (n
 * bytes, UInt8, ncomp must be 1) is non-NULL. ncomp is 1 (scalar) or 3 (vector). Names:
 * letters, digits, '_', '-', '.' (they are XML attribute values and ParaView menu entries). */
typedef struct mlc_vtk_field {
    const char *name;
    int ncomp;
    const double *f;
    const unsigned char *u8;
} mlc_vtk_field;

/* One piece of geometry: n points X (3×n) and ncell cells of `per` vertex indices each (3:
 * triangles, 4: tets), with nfield point fields. All borrowed. */
typedef struct mlc_vtk_piece {
    const double *X;
    int n;
    const int *cells;
    int ncell;
    const mlc_vtk_field *fields;
    int nfield;
} mlc_vtk_piece;

/* PolyData with Points and Polys (triangles: cells are 3×ncell). */
mlc_status mlc_vtp_write(const char *path, const mlc_vtk_piece *piece, mlc_err *err);
/* UnstructuredGrid of linear tets (cell type 10: cells are 4×ncell). */
mlc_status mlc_vtu_write(const char *path, const mlc_vtk_piece *piece, mlc_err *err);
/* ParaView collection: one <DataSet timestep="time[i]" file="files[i]"/> per entry (files are
 * paths relative to the .pvd's directory; XML-escaped). n >= 0. */
mlc_status mlc_pvd_write(const char *path, const double *time, const char *const *files, int n,
                         mlc_err *err);

/* ---- A frame series in an output directory -------------------------------------------------
 *
 * DIR/frames/frame_NNNN.vtp (the surface) and, with volume, DIR/frames/frame_NNNN.vtu (the tet
 * mesh) for frames N = 0, 1, ..., at least four digits; then at the end DIR/frames.pvd (and
 * DIR/volume.pvd). The collections are written last, so a run that fails midway leaves the
 * previous collections (or none) and never one that names a missing frame. Surface and
 * volume get a collection each: in one collection they would be two parts of one multiblock
 * data set, which ParaView draws on top of each other with no way to show one alone short of
 * a filter. */
typedef struct mlc_vtk_series {
    char *dir;    /* output directory (owned) */
    int volume;   /* 1: also the .vtu files and volume.pvd */
    int n, cap;   /* frames written; capacity of time */
    double *time; /* n frame times, seconds (owned) */
} mlc_vtk_series;

/* Create DIR/frames. A zeroed struct is "not begun". */
mlc_status mlc_vtk_series_begin(mlc_vtk_series *s, const char *dir, int volume, mlc_err *err);
/* Write frame s->n: the surface piece (triangles) and, when the series has volume, the tet
 * piece (else `tets` is ignored and may be NULL). time in seconds. */
mlc_status mlc_vtk_series_frame(mlc_vtk_series *s, double time, const mlc_vtk_piece *surface,
                                const mlc_vtk_piece *tets, mlc_err *err);
/* Write the collections, then remove frame files of an earlier, longer run in the same
 * directory (frame numbers from s->n on; all .vtu files and volume.pvd when this series has
 * no volume), so the directory holds exactly what the collections list. Releases s. */
mlc_status mlc_vtk_series_end(mlc_vtk_series *s, mlc_err *err);
/* Release s without writing the collections. Idempotent; safe on a zeroed struct. */
void mlc_vtk_series_free(mlc_vtk_series *s);

#endif
