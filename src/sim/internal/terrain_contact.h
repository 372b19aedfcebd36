/* terrain_contact.h: what the two simulators (sim_step.c, fullspace.c) share to set up and
 * solve contact on a terrain: their own copy of the terrain and the per-sample contact state.
 * Private to src/sim; the public terrain (its description and queries) is terrain.h. */
#ifndef MODALLOCO_TERRAIN_CONTACT_H
#define MODALLOCO_TERRAIN_CONTACT_H

#include <stddef.h>

#include "terrain.h"

/* A simulator's own terrain (dst uninitialized): a deep copy of src, or the flat ground at
 * `ground` with `friction` when src is NULL, settled under the body's rest shape x (3×n). The
 * reduced model and the full-space simulator set up their terrains alike through this.
 * MLC_ENOMEM when the copy fails (dst then empty, not settled). */
mlc_status mlc_terrain_own(mlc_terrain *dst, const mlc_terrain *src, double ground, double friction,
                           const double *x, int n);

/* Per-sample contact state on a terrain, shared by the reduced simulator and the full-space
 * reference (docs/method.md, "Terrain"): once a step each sample's frame [n, t1, t2] at x_n,
 * its normal target on u = n·x (the closest feature's surface n·x_n − d; a sample already
 * below it rises at most push_step, or with `velocity` keeps u_n), its friction bounds
 * along t1 (forward μ, backward a·μ) and t2 (μ), and the Delassus matrices of the three
 * axes (rewritten only in the rows and columns of the samples whose frame changed). */
typedef struct mlc_terrain_contact {
    int ns;
    double *frame;             /* 9 × ns */
    double *target;            /* ns */
    double *mu1l, *mu1h, *mu2; /* ns each */
    double *Dn, *Dt1, *Dt2;    /* ns×ns each */
    int *changed;              /* ns */
} mlc_terrain_contact;
/* Allocates (MLC_ENOMEM) and resets. */
mlc_status mlc_terrain_contact_create(mlc_terrain_contact *tc, int ns);
void mlc_terrain_contact_destroy(mlc_terrain_contact *tc);
/* Forget the frames (the next update rebuilds every row of the matrices). */
void mlc_terrain_contact_reset(mlc_terrain_contact *tc);
/* Update at the sample positions x_n: coordinate k of sample s at x[s·ss + k·ks]. D is the
 * samples' Delassus matrix (ns×ns); tol the "below" tolerance (metres). body_mu (ns, or NULL)
 * is each sample's own friction (per-region materials): it replaces the ground's, and on a box
 * with its own friction the smaller of the two applies. */
void mlc_terrain_contact_update(mlc_terrain_contact *tc, const mlc_terrain *t, const double *D,
                                const double *body_mu, const double *x, size_t ss, size_t ks,
                                double tol, double push_step, int velocity);

#endif
