/* objective_keys.c: the rows of the keys objective.* (keys.h) and the rules between them. */
#include "objective_keys.h"

#include <math.h>
#include <string.h>

#include "objective.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_objective
static const mlc_key objective_keys[] = {
    {.name = "objective.kind",
     .type_name = "string",
     .default_json = "\"locomotion\"",
     .range = "\"locomotion\" (also \"walk\"), \"jump\", \"turn\", \"target\", \"path\", "
              "\"roll\" or \"flip\"",
     .meaning = "what J measures (docs/method.md §7)",
     .type = MLC_KEY_ENUM,
     MLC_KEY_FIELD(kind),
     .choices = MLC_OBJECTIVE_KIND_NAMES,
     .aliases = MLC_OBJECTIVE_KIND_ALIASES},
    {.name = "objective.direction",
     .type_name = "[x,y,z]",
     .default_json = "[1, 0, 0]",
     .range = "nonzero length",
     .meaning = "target direction v̂",
     .type = MLC_KEY_VEC3,
     MLC_KEY_FIELD(direction),
     .check = MLC_KEY_CHECK_NONZERO},
    {.name = "objective.forward",
     .type_name = "[x,y,z] or null",
     .default_json = "null",
     .range = "null or nonzero length",
     .meaning = "body forward û₀ at rest (null = objective.direction)",
     .type = MLC_KEY_VEC3_OR_NULL,
     MLC_KEY_FIELD(forward),
     MLC_KEY_COUNT(forward_set),
     .check = MLC_KEY_CHECK_NONZERO},
    {.name = "objective.align",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "multiply by J_align",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(align)},
    {.name = "objective.work_penalty",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "work penalty α (J += α Σ_s h·work_s, Eq. 18)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(work_penalty),
     MLC_KEY_GE(0)},
    {.name = "objective.align_mode",
     .type_name = "string",
     .default_json = "\"min\"",
     .range = "\"min\" or \"mean\"",
     .meaning = "J_align as the paper's max(0, min over frames) or the mean over frames of "
                "max(0, alignment), which rarely ties at 0; not in the paper",
     .type = MLC_KEY_ENUM,
     MLC_KEY_FIELD(align_mode),
     .choices = "min|mean"},
    {.name = "objective.credible_gate",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "J fades to 0 as the centre of mass rises, the body flies or (with "
                "objective.upright) tilts toward the credibility limits (rise 0.25 extents, "
                "airborne 25% of the frames, up_min 0.5); not in the paper",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(credible_gate)},
    {.name = "objective.whole_losses",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "locomotion: a backward travel counts whole, not scaled by J_align or the gate, "
                "so a search whose first gaits go backward cannot settle on turning away or "
                "tumbling (J 0); false: the paper's J = J_disp·J_align whatever its sign, until "
                "a search has found no gain in a quarter of its generations (at least 10), most of "
                "them going backward, which then turns it on, says so and records it in "
                "params.json; a search that ends with no gain, its best gait going backward, runs "
                "once more from the start with it on (OUT/whole_losses, returned when it finds a "
                "credible gait); not in the paper (docs/method.md)",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(whole_losses)},
    {.name = "objective.upright",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "J_align also takes the minimum of the body's up axis R(t)ŷ · ŷ (no rolling "
                "over); not in the paper",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(upright)},
    {.name = "objective.work_abs",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "penalize absolute work",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(work_abs)},
    {.name = "objective.heading",
     .type_name = "[x,z] or [x,y,z]",
     .default_json = "[1, 0]",
     .range = "2 or 3 numbers, nonzero on the ground (x, z)",
     .meaning = "turn: the final forward direction ĥ (projected on the ground)",
     .type = MLC_KEY_NUMBER_ARRAY,
     MLC_KEY_FIELD(heading),
     MLC_KEY_COUNT(nheading),
     MLC_KEY_ELEMS(heading)},
    {.name = "objective.target",
     .type_name = "[x,y,z] or null",
     .default_json = "null",
     .range = "null or 3 numbers",
     .meaning = "target (and jump): where the centre of mass should end",
     .type = MLC_KEY_VEC3_OR_NULL,
     MLC_KEY_FIELD(target),
     MLC_KEY_COUNT(target_set)},
    {.name = "objective.path",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "a CSV file time,x,y,z with a header line (kind \"path\")",
     .meaning = "path: the centre of mass's waypoints, linearly interpolated in time",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(path),
     MLC_KEY_BYTES(path)},
    {.name = "objective.effort",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "effort weight: J += weight × time mean of ‖a(t)/a_max‖² (any kind)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(effort),
     MLC_KEY_GE(0)},
    {.name = "objective.vibration",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "vibration weight: J += weight × mean squared centre-of-mass acceleration "
                "(second differences, extents/s²) (any kind)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(vibration),
     MLC_KEY_GE(0)},
};

/* Rules between the objective keys: the goal each kind needs (objective.c's registry). */
static mlc_status objective_check(const void *settings, mlc_err *err) {
    const mlc_config_objective *ob = settings;
    const mlc_objective_kind_info *info = mlc_objective_kind_info_of(ob->kind);
    if (ob->kind == MLC_OBJ_TURN) {
        if (ob->nheading != 2 && ob->nheading != 3)
            return mlc_errf(err, MLC_EINVAL,
                            "key 'objective.heading' has %d values; valid: [x,z] or [x,y,z]",
                            ob->nheading);
        double hx = ob->heading[0], hz = ob->heading[ob->nheading - 1];
        if (!(hx * hx + hz * hz > 0) || !isfinite(hx * hx + hz * hz))
            return mlc_errf(err, MLC_EINVAL,
                            "key 'objective.heading' has zero length on the ground (x and z are "
                            "0); give the final forward direction, e.g. [0, 1] for +z");
    }
    if (info && info->goal_required) {
        /* Given means: a [x,y,z] that is not null, or a nonempty string. */
        const mlc_key *k = NULL;
        for (int i = 0; i < (int)(sizeof objective_keys / sizeof objective_keys[0]); i++)
            if (!strcmp(objective_keys[i].name + strlen("objective."), info->goal_key))
                k = &objective_keys[i];
        const char *f = (const char *)ob + (k ? k->offset : 0);
        int given = !k || (k->type == MLC_KEY_VEC3_OR_NULL
                               ? *(const int *)((const char *)ob + k->count_offset) != 0
                               : f[0] != '\0');
        if (!given)
            return mlc_errf(err, MLC_EINVAL, "objective.kind \"%s\" needs key 'objective.%s'%s",
                            info->name, info->goal_key, info->goal_hint);
    }
    return MLC_OK;
}

const mlc_key_section mlc_objective_key_section =
    MLC_KEY_SECTION("objective", objective_keys, objective_check);
