/* test_grid_hessian.h: a matrix with the vibration Hessian's shape for the supernodal tests
 * (test_super_solve.c, test_super_factor.c): 3×3 blocks on the edges of a 3-D grid, uneven
 * weights, plus a diagonal shift; the grid is long, so that its top separators are small, as a
 * body's are against its size. */
#ifndef MODALLOCO_TEST_GRID_HESSIAN_H
#define MODALLOCO_TEST_GRID_HESSIAN_H

#include <cholmod.h>
#include <math.h>
#include <stdlib.h>

enum { GX = 40, GY = 11, GZ = 9, GV = GX * GY * GZ, GN = 3 * GV };

/* Upper triangle of Σ_edges w_e (I + 0.3 d dᵀ) ⊗ (the edge's Laplacian) + shift·I. */
static cholmod_sparse *grid_hessian(double shift, cholmod_common *cc) {
    cholmod_triplet *T = cholmod_allocate_triplet(GN, GN, 36 * (size_t)GV, 1, CHOLMOD_REAL, cc);
    int *Ti = T->i, *Tj = T->j;
    double *Tx = T->x, *diag = calloc(9 * (size_t)GV, sizeof(double));
    size_t k = 0;
    for (int z = 0; z < GZ; z++)
        for (int y = 0; y < GY; y++)
            for (int x = 0; x < GX; x++) {
                const int v = x + GX * (y + GY * z);
                const int nb[3] = {x + 1 < GX ? v + 1 : -1, y + 1 < GY ? v + GX : -1,
                                   z + 1 < GZ ? v + GX * GY : -1};
                for (int a = 0; a < 3; a++) {
                    if (nb[a] < 0) continue;
                    const double w = 1 + 0.5 * sin(0.37 * v + a);
                    double B[9];
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            B[3 * i + j] = w * ((i == j) + 0.3 * (i == a) * (j == a));
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++) {
                            Ti[k] = 3 * v + i, Tj[k] = 3 * nb[a] + j, Tx[k] = -B[3 * i + j], k++;
                            diag[9 * v + 3 * i + j] += B[3 * i + j];
                            diag[9 * nb[a] + 3 * i + j] += B[3 * i + j];
                        }
                }
            }
    for (int v = 0; v < GV; v++)
        for (int i = 0; i < 3; i++)
            for (int j = i; j < 3; j++) {
                Ti[k] = 3 * v + i, Tj[k] = 3 * v + j;
                Tx[k] = diag[9 * v + 3 * i + j] + (i == j ? shift * (1 + v % 5) : 0), k++;
            }
    T->nnz = k;
    free(diag);
    cholmod_sparse *A = cholmod_triplet_to_sparse(T, 0, cc);
    cholmod_free_triplet(&T, cc);
    return A;
}

#endif
