/* contact_keys.c: the rows of the keys contact.* (keys.h) and the rules between them. */
#include "contact_keys.h"

#include "sim.h"
#include "terrain.h"
#include <string.h>

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_contact
static const mlc_key contact_keys[] = {
    {.name = "contact.enabled",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "ground contact",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(enabled)},
    {.name = "contact.damping",
     .type_name = "number",
     .default_json = "0",
     .range = "in [0, 1)",
     .meaning = "μ_c of Eq. 49: fraction of tangential velocity kept",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(damping),
     MLC_KEY_BETWEEN('[', 0, 1, ')')},
    {.name = "contact.projection",
     .type_name = "string",
     .default_json = "\"position\"",
     .range = "\"position\" or \"velocity\"",
     .meaning = "\"position\" (active samples end the step on the ground) or \"velocity\" "
                "(paper: normal velocity 0)",
     .type = MLC_KEY_ENUM,
     MLC_KEY_FIELD(projection),
     .choices = "position|velocity"},
    {.name = "contact.model",
     .type_name = "string",
     .default_json = "\"complementarity\"",
     .range = "\"complementarity\" or \"equality\"",
     .meaning = "\"complementarity\" (forces only push, solved exactly) or \"equality\" "
                "(the paper's constraints, which can pull; for comparisons)",
     .type = MLC_KEY_ENUM,
     MLC_KEY_FIELD(model),
     .choices = "complementarity|equality"},
    {.name = "contact.push_speed",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_PUSH_SPEED),
     .range = ">= 0",
     .meaning = "m/s: the fastest a sample below the ground is pushed back out",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(push_speed),
     MLC_KEY_GE(0)},
    {.name = "contact.friction",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_FRICTION),
     .range = ">= 0",
     .meaning = "Coulomb limit μ_f: friction force ≤ μ_f × normal force (0 = the paper's "
                "damping alone, unbounded)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(friction),
     MLC_KEY_GE(0)},
    {.name = "contact.ground_height",
     .type_name = "number",
     .default_json = "0",
     .range = "",
     .meaning = "y of the ground plane",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(ground_height)},
    {.name = "contact.slope",
     .type_name = "number",
     .default_json = "0",
     .range = "in [0, 90)",
     .meaning = "degrees: the ground plane rises along objective.direction (gravity stays "
                "vertical), placed so that the rest body touches it",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(slope),
     MLC_KEY_BETWEEN('[', 0, 90, ')')},
    {.name = "contact.heightfield",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "heightfield file (\"nx nz x0 z0 dx dz\", then nz rows of nx heights; "
                "docs/config.md) replacing the ground plane; \"\" = none",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(heightfield),
     MLC_KEY_BYTES(heightfield)},
    {.name = "contact.boxes",
     .type_name = "array of boxes",
     .default_json = "[]",
     .range = "{\"min\": [x,y,z], \"max\": [x,y,z], \"friction\": μ (optional)}, min < max",
     .meaning = "solid axis-aligned boxes (steps, obstacles) on the ground; friction defaults "
                "to contact.friction",
     .type = MLC_KEY_BOXES,
     MLC_KEY_FIELD(boxes),
     MLC_KEY_COUNT(nboxes),
     MLC_KEY_ELEMS(boxes)},
    {.name = "contact.anisotropy",
     .type_name = "number",
     .default_json = "1",
     .range = ">= 1",
     .meaning = "friction against sliding backward / forward along objective.direction "
                "(1 = isotropic)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(anisotropy),
     MLC_KEY_GE(1)},
};

/* Rules between the contact keys; a heightfield file is read now, so a bad file is an input
 * error before any work. */
static mlc_status contact_check(const void *settings, mlc_err *err) {
    const mlc_config_contact *ct = settings;
    int terrain = ct->slope > 0 || ct->heightfield[0] || ct->nboxes > 0 || ct->anisotropy != 1;
    if (ct->slope > 0 && ct->heightfield[0])
        return mlc_errf(err, MLC_EINVAL,
                        "keys 'contact.slope' = %g and 'contact.heightfield' = \"%s\" both set "
                        "the ground; give the slope in the heightfield's heights, or drop one",
                        ct->slope, ct->heightfield);
    if (terrain && !mlc_contact_model_any_terrain((mlc_contact_model)ct->model))
        return mlc_errf(err, MLC_EINVAL,
                        "key 'contact.model' = \"%s\" works on the flat ground only; use "
                        "\"complementarity\" with contact.slope, contact.heightfield, "
                        "contact.boxes or contact.anisotropy",
                        mlc_contact_model_name((mlc_contact_model)ct->model));
    if (ct->heightfield[0]) {
        mlc_terrain t;
        mlc_terrain_flat(&t, 0, 0);
        mlc_status s = mlc_terrain_read_heightfield(&t, ct->heightfield, err);
        mlc_terrain_free(&t);
        if (s != MLC_OK) return s;
    }
    return MLC_OK;
}

const mlc_key_section mlc_contact_key_section =
    MLC_KEY_SECTION("contact", contact_keys, contact_check);
