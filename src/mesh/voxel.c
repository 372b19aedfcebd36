/* voxel.c: tet meshes from voxel occupancy grids (test fixtures and the bundled samples).
 *
 * Each voxel is split into the 6 tets of the Freudenthal (Kuhn) triangulation: all six share
 * the voxel's main diagonal (0,0,0)-(1,1,1), and tet p walks from corner 000 to 111 along the
 * axes in the order of permutation p. Every face of a voxel is then split along the diagonal
 * from its lowest to its highest corner, the same choice its neighbour makes, so the mesh is
 * conforming without any bookkeeping.
 */
#include "internal/mesh_internal.h"
#include "mesh.h"

#include <string.h>

static const int axis_orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                      {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

mlc_status mlc_mesh_from_voxels(int nx, int ny, int nz, const unsigned char *occ, double h,
                                const double origin[3], mlc_mesh *mesh, mlc_err *err) {
    if (nx <= 0 || ny <= 0 || nz <= 0 || !(h > 0))
        return mlc_errf(err, MLC_EINVAL, "voxel grid: dimensions and voxel size must be > 0");
    const size_t gx = (size_t)nx + 1, gy = (size_t)ny + 1, gz = (size_t)nz + 1;
    const size_t ngrid = gx * gy * gz;
    size_t nvox = 0;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++)
        nvox += occ[i] != 0;
    if (nvox == 0) return mlc_errf(err, MLC_EINVAL, "voxel grid: no voxel is filled");
    if (ngrid > 0x7fffffff || nvox * 6 > 0x7fffffff)
        return mlc_errf(err, MLC_EINVAL, "voxel grid: too large");

    mlc_mesh_free(mesh);
    /* All grid points become vertices; finalize drops the unreferenced ones. */
    mesh->X = mlc_malloc(3 * ngrid * sizeof(double));
    mesh->T = mlc_malloc(4 * 6 * nvox * sizeof(int));
    if (!mesh->X || !mesh->T) {
        mlc_mesh_free(mesh);
        return mlc_errf(err, MLC_ENOMEM, "voxel grid: out of memory");
    }
    mesh->nv = (int)ngrid;
    for (size_t k = 0; k < gz; k++)
        for (size_t j = 0; j < gy; j++)
            for (size_t i = 0; i < gx; i++) {
                size_t v = i + gx * (j + gy * k);
                mesh->X[3 * v + 0] = origin[0] + h * (double)i;
                mesh->X[3 * v + 1] = origin[1] + h * (double)j;
                mesh->X[3 * v + 2] = origin[2] + h * (double)k;
            }
    size_t t = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                if (!occ[i + (size_t)nx * (j + (size_t)ny * k)]) continue;
                for (int p = 0; p < 6; p++) {
                    int c[3] = {i, j, k};
                    int *tet = mesh->T + 4 * t++;
                    tet[0] = (int)(c[0] + gx * (c[1] + gy * c[2]));
                    for (int s = 0; s < 3; s++) {
                        c[axis_orders[p][s]]++;
                        tet[s + 1] = (int)(c[0] + gx * (c[1] + gy * c[2]));
                    }
                    /* Odd permutations give negative orientation: swap to make det > 0. */
                    if (p == 1 || p == 2 || p == 5) {
                        int tmp = tet[1];
                        tet[1] = tet[2];
                        tet[2] = tmp;
                    }
                }
            }
    mesh->nt = (int)t;
    mlc_mesh_report rep;
    mlc_status s = mlc_mesh_finalize(mesh, "voxel grid", &rep, err);
    if (s != MLC_OK) mlc_mesh_free(mesh);
    return s;
}
