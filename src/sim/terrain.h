/* terrain.h: the ground as contact geometry (docs/method.md, "Terrain"): a plane (flat or a
 * slope rising along the objective's direction), or a heightfield, plus solid axis-aligned
 * boxes, with Coulomb friction per region and optional anisotropic friction.
 *
 * The solid is the union of the ground and the boxes. mlc_terrain_query gives, for a point,
 * the signed distance to that union (positive outside: the minimum over the features) and the
 * outward normal of the closest feature at its closest point, and the friction coefficient of
 * that feature. The simulator linearizes the contact of each sample once per step at its
 * position x_n: the half-space n·x ≥ n·(x_n − d n).
 *
 * Distances: exact for the plane and the boxes; for the heightfield, the distance to the
 * tangent plane of the bilinear surface at the point's (x, z), (y − h)/√(1 + |∇h|²), with
 * that plane's normal (exact on planar cells, first order on curved ones).
 *
 * Ownership: an mlc_terrain owns its heightfield and boxes (mlc_terrain_free); queries never
 * allocate and may run on any number of threads.
 */
#ifndef MODALLOCO_TERRAIN_H
#define MODALLOCO_TERRAIN_H

#include "base.h"

typedef struct mlc_terrain_box {
    double lo[3], hi[3]; /* corners, lo < hi per axis */
    double friction;     /* Coulomb μ of its faces; < 0: the ground's */
} mlc_terrain_box;

typedef struct mlc_terrain {
    int flat;          /* the plane y = ground alone with isotropic friction: the simulator
                          keeps its original (bit-identical) contact path */
    double ground;     /* contact.ground_height */
    double slope;      /* degrees, [0, 90) */
    double up[3];      /* unit horizontal direction the slope rises along (objective.direction
                          projected on the x-z plane; +x when it has none) */
    double n[3];       /* plane normal (cos θ ŷ − sin θ up) */
    double offset;     /* the plane is n·x = offset */
    double friction;   /* the ground's μ (contact.friction; 0 = unbounded) */
    double anisotropy; /* a ≥ 1: the friction bound against backward sliding is a·μ */
    double dir[3];     /* unit objective direction (anisotropy axis) */
    /* heightfield (replaces the plane when nx > 0): heights h[i + nx·j] at
       (x0 + i·dx, z0 + j·dz), plus ground */
    int nx, nz;
    double x0, z0, dx, dz;
    double *h;
    int nbox;
    mlc_terrain_box *box;
} mlc_terrain;

/* The flat plane y = ground with friction μ (anisotropy 1, no boxes). */
void mlc_terrain_flat(mlc_terrain *t, double ground, double friction);
/* Build from settings: slope in degrees rising along `direction` (any vector; its x-z part
 * is used), anisotropy a ≥ 1 along `direction`, boxes copied (may be NULL with nbox 0).
 * Heightfield: mlc_terrain_read_heightfield after this. Returns MLC_EINVAL with a message
 * for invalid values. */
mlc_status mlc_terrain_init(mlc_terrain *t, double ground, double friction, double slope_deg,
                            double anisotropy, const double direction[3],
                            const mlc_terrain_box *boxes, int nbox, mlc_err *err);
/* Read a heightfield text file (docs/config.md, "Heightfield files"): a header line
 * "nx nz x0 z0 dx dz" then nz rows of nx heights; '#' starts a comment. Errors name
 * PATH:LINE. Outside the grid the edge value holds (the field is clamped). */
mlc_status mlc_terrain_read_heightfield(mlc_terrain *t, const char *path, mlc_err *err);
void mlc_terrain_free(mlc_terrain *t);

/* Lower a slope plane so that it passes through the lowest of n points (3×n, by point)
 * measured along its normal: the body starts touching the slope instead of cutting into it.
 * No-op for a flat plane or a heightfield. */
void mlc_terrain_settle(mlc_terrain *t, const double *x, int n);

/* Signed distance of x to the solid (positive outside), the outward normal n of the closest
 * feature, and that feature's friction μ (may be NULL). */
double mlc_terrain_query(const mlc_terrain *t, const double x[3], double n[3], double *mu);

/* Height of the top surface above (x, z) (the ground, or a box top over it when higher). */
double mlc_terrain_height(const mlc_terrain *t, double x, double z);

#endif
