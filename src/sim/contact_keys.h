/* contact_keys.h: the configuration keys contact.* (docs/config.md) and the settings they fill.
 *
 * The table is the keys' only description: defaults, bounds, documentation (keys.h).
 */
#ifndef MODALLOCO_CONTACT_KEYS_H
#define MODALLOCO_CONTACT_KEYS_H

#include "keys.h"

#define MLC_CONFIG_MAX_BOXES 64 /* contact.boxes */

/* contact.projection, in the order of its names. contact.model's values are mlc_contact_model's
 * (sim.h), in the same order. */
enum { MLC_PROJECTION_POSITION = 0, MLC_PROJECTION_VELOCITY = 1 };

/* One entry of contact.boxes: {"min": [x,y,z], "max": [x,y,z], "friction": μ (optional)}. */
typedef struct mlc_config_box {
    double min[3], max[3]; /* corners, min < max per axis */
    double friction;       /* Coulomb μ ≥ 0 of its faces when has_friction */
    int has_friction;      /* 0: the ground's contact.friction */
} mlc_config_box;

typedef struct mlc_config_contact {
    int enabled;       /* contact.enabled (bool) */
    double damping;    /* contact.damping: μ_c in [0, 1) */
    int projection;    /* contact.projection: MLC_PROJECTION_POSITION | MLC_PROJECTION_VELOCITY */
    int model;         /* contact.model: an mlc_contact_model (sim.h) */
    double push_speed; /* contact.push_speed: m/s, ≥ 0 */
    double friction;   /* contact.friction: Coulomb μ_f, ≥ 0 (0 = off) */
    double ground_height;                       /* contact.ground_height: y of the ground */
    double slope;                               /* contact.slope: degrees in [0, 90), rising along
                                                 * objective.direction */
    char heightfield[MLC_CONFIG_PATH_MAX];      /* contact.heightfield: file, "" = none */
    mlc_config_box boxes[MLC_CONFIG_MAX_BOXES]; /* contact.boxes */
    int nboxes;
    double anisotropy; /* contact.anisotropy: backward / forward friction, ≥ 1 */
} mlc_config_contact;

extern const mlc_key_section mlc_contact_key_section; /* keys contact.* */

#endif
