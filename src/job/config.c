/* config.c: defaults, JSON loading, --set, validation and JSON output of the run configuration.
 *
 * Everything is driven by one table, mlc_config_keys[]: each row names a key, its JSON type,
 * where its field lives in mlc_config (offsetof), its numeric bounds and its documentation.
 * Loading walks the JSON document and dispatches on the row's type; validation and output walk
 * the table. Adding a key is one row plus one field plus one line in mlc_config_defaults.
 *
 * Loading works on a heap copy of the config and commits only on success, so a failed load or
 * --set leaves the caller's config untouched.
 */
#include "config.h"

#include "terrain.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fullspace.h"
#include "sim.h"

/* ---- The key table ---------------------------------------------------------------------- */
#define FIELD(f) .offset = offsetof(mlc_config, f)
#define COUNT(f) .count_offset = offsetof(mlc_config, f)
#define BYTES(f) .capacity = (int)sizeof(((mlc_config *)0)->f)
#define ELEMS(f) .capacity = (int)(sizeof(((mlc_config *)0)->f) / sizeof(((mlc_config *)0)->f[0]))
#define GT(x) .lo_kind = '(', .lo = (x)
#define GE(x) .lo_kind = '[', .lo = (x)
#define BETWEEN(lk, a, b, hk) .lo_kind = (lk), .lo = (a), .hi = (b), .hi_kind = (hk)

const mlc_config_key mlc_config_keys[] = {
    {.name = "mesh.path",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "tet mesh or surface mesh (tetrahedralized with tetgen); \"\" = the bundled "
                "sample mesh",
     .type = MLC_CFG_STRING,
     FIELD(mesh.path),
     BYTES(mesh.path)},
    {.name = "mesh.normalize",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "centre in x,z, min y = 0, scale to mesh.extent",
     .type = MLC_CFG_BOOL,
     FIELD(mesh.normalize)},
    {.name = "mesh.extent",
     .type_name = "number",
     .default_json = "2.0",
     .range = "> 0",
     .meaning = "largest bounding-box extent after normalizing",
     .type = MLC_CFG_NUMBER,
     FIELD(mesh.extent),
     GT(0)},
    {.name = "mesh.min_tets",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "a surface mesh is tetrahedralized into at least this many tets (tetgen's volume "
                "bound: enclosed volume / N; 0 = no bound, tetgen -pYq1.414 alone); tet meshes "
                "ignore it",
     .type = MLC_CFG_INT,
     FIELD(mesh.min_tets),
     GE(0)},
    {.name = "mesh.up",
     .type_name = "string or [x,y,z]",
     .default_json = "\"+y\"",
     .range = "+x, -x, +y, -y, +z, -z or a nonzero [x,y,z]",
     .meaning = "the mesh's up axis, rotated to +y before preparation",
     .type = MLC_CFG_AXIS,
     FIELD(mesh.up),
     BYTES(mesh.up),
     .count_offset = offsetof(mlc_config, mesh.up_vector),
     .choices = "+x|-x|+y|-y|+z|-z"},

    {.name = "material.density",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_DENSITY),
     .range = "> 0",
     .meaning = "density ρ",
     .type = MLC_CFG_NUMBER,
     FIELD(material.density),
     GT(0)},
    {.name = "material.mu",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_MU),
     .range = "> 0",
     .meaning = "passive ARAP stiffness μ",
     .type = MLC_CFG_NUMBER,
     FIELD(material.mu),
     GT(0)},
    {.name = "material.gamma",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_GAMMA),
     .range = "> 0",
     .meaning = "actuation stiffness γ",
     .type = MLC_CFG_NUMBER,
     FIELD(material.gamma),
     GT(0)},
    {.name = "material.poisson_modes",
     .type_name = "number",
     .default_json = "0.25",
     .range = "in (-1, 0.5)",
     .meaning = "Poisson ratio of the Hessian whose modes drive actuation",
     .type = MLC_CFG_NUMBER,
     FIELD(material.poisson_modes),
     BETWEEN('(', -1, 0.5, ')')},
    {.name = "material.regions",
     .type_name = "object",
     .default_json = "{}",
     .range = "at most 64 region labels, each → {\"mu\" > 0, \"gamma\" > 0, \"density\" > 0, "
              "\"friction\" >= 0}, every member optional",
     .meaning = "per-region material: region label (as in the mesh or label file) → values "
                "replacing material.mu, material.gamma, material.density and contact.friction "
                "in that region",
     .type = MLC_CFG_REGION_MATERIALS,
     FIELD(material.regions),
     COUNT(material.nregions),
     ELEMS(material.regions)},

    {.name = "regions.file",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "label file: one integer per tet or per vertex (docs/config.md); \"\" = the "
                "mesh file's labels, if any",
     .type = MLC_CFG_STRING,
     FIELD(regions.file),
     BYTES(regions.file)},
    {.name = "regions.auto",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "K > 0: K regions found automatically from the skinning weights (limbs "
                "separate); 0 = off",
     .type = MLC_CFG_INT,
     FIELD(regions.automatic),
     GE(0)},

    {.name = "subspace.skinning_modes",
     .type_name = "int",
     .default_json = "5",
     .range = "1..32",
     .meaning = "skinning modes w (reduced size r = 12w)",
     .type = MLC_CFG_INT,
     FIELD(subspace.skinning_modes),
     BETWEEN('[', 1, 32, ']')},
    {.name = "subspace.passive_clusters",
     .type_name = "int",
     .default_json = "10",
     .range = ">= 1",
     .meaning = "passive clusters |C_p| before component splitting",
     .type = MLC_CFG_INT,
     FIELD(subspace.passive_clusters),
     GE(1)},
    {.name = "subspace.actuation_clusters",
     .type_name = "int",
     .default_json = "1",
     .range = ">= 1",
     .meaning = "actuation clusters |C_a|",
     .type = MLC_CFG_INT,
     FIELD(subspace.actuation_clusters),
     GE(1)},
    {.name = "subspace.contact_samples",
     .type_name = "int",
     .default_json = "64",
     .range = ">= 1",
     .meaning = "contact samples |I| (at least; subspace.contact_spacing may add more)",
     .type = MLC_CFG_INT,
     FIELD(subspace.contact_samples),
     GE(1)},
    {.name = "subspace.contact_band",
     .type_name = "number",
     .default_json = "0.01",
     .range = "in [0, 0.1]",
     .meaning = "half of the contact samples go to the soles, the boundary vertices at most "
                "this × extent above the lowest one, a quarter to the surface facing down (0 = "
                "farthest-point over the whole surface)",
     .type = MLC_CFG_NUMBER,
     FIELD(subspace.contact_band),
     BETWEEN('[', 0, 0.1, ']')},
    {.name = "subspace.contact_spacing",
     .type_name = "number",
     .default_json = "0.04",
     .range = "in [0, 1]",
     .meaning = "more contact samples (up to 512) until every vertex of the soles and of the "
                "surface facing down is within this × extent of one, height counting three "
                "times, so no thin part that can touch the ground goes without (0 = exactly "
                "subspace.contact_samples; needs subspace.contact_band > 0)",
     .type = MLC_CFG_NUMBER,
     FIELD(subspace.contact_spacing),
     BETWEEN('[', 0, 1, ']')},
    {.name = "subspace.cache",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "precompute cache file (\"\" = none)",
     .type = MLC_CFG_STRING,
     FIELD(subspace.cache),
     BYTES(subspace.cache)},

    {.name = "actuation.modes",
     .type_name = "int",
     .default_json = "4",
     .range = "1..64; 0 with actuation.local_modes",
     .meaning = "m, the first m non-rigid vibration modes (global); with actuation.local_modes "
                "> 0 they are replaced by the local modes (m = 0) unless actuation.modes or "
                "actuation.mode_list is given too",
     .type = MLC_CFG_INT,
     FIELD(actuation.modes),
     BETWEEN('[', 0, 64, ']')},
    {.name = "actuation.local_modes",
     .type_name = "int",
     .default_json = "0",
     .range = "0..64",
     .meaning = "m_r localized vibration modes per body region (0 = off): modes of K + w M_out "
                "that barely move the body outside their region (docs/method.md)",
     .type = MLC_CFG_INT,
     FIELD(actuation.local_modes),
     BETWEEN('[', 0, 64, ']')},
    {.name = "actuation.localization",
     .type_name = "number",
     .default_json = "30",
     .range = ">= 0",
     .meaning = "localization weight of actuation.local_modes as a multiple c of the first "
                "non-zero Laplacian eigenvalue (w = c·λ₁): a mode moves outside its region by "
                "at most √(λ/w) of its motion; 0 = none (one region only)",
     .type = MLC_CFG_NUMBER,
     FIELD(actuation.localization),
     GE(0)},
    {.name = "actuation.mode_list",
     .type_name = "int array",
     .default_json = "[]",
     .range = "at most 64 distinct indices, each >= 0",
     .meaning = "explicit mode indices (0 = first non-rigid), overrides actuation.modes",
     .type = MLC_CFG_INT_ARRAY,
     FIELD(actuation.mode_list),
     COUNT(actuation.nmode_list),
     ELEMS(actuation.mode_list),
     GE(0)},
    {.name = "actuation.sinusoids",
     .type_name = "int",
     .default_json = "2",
     .range = "1..8",
     .meaning = "k, sinusoids per mode",
     .type = MLC_CFG_INT,
     FIELD(actuation.sinusoids),
     BETWEEN('[', 1, 8, ']')},
    {.name = "actuation.period_range",
     .type_name = "[min,max]",
     .default_json = "[0.2, 0.6]",
     .range = "0 < min <= max",
     .meaning = "bounds of the periods T, seconds",
     .type = MLC_CFG_RANGE,
     FIELD(actuation.period_range),
     GT(0),
     .check = MLC_CFG_CHECK_ORDERED},
    {.name = "actuation.phase_range",
     .type_name = "[min,max]",
     .default_json = "[0, 1.5707963]",
     .range = "min <= max",
     .meaning = "bounds of the phases θ, cycles (as Eq. 6 is written)",
     .type = MLC_CFG_RANGE,
     FIELD(actuation.phase_range),
     .check = MLC_CFG_CHECK_ORDERED},
    {.name = "actuation.amplitude_p",
     .type_name = "number",
     .default_json = "0.7",
     .range = "> 0",
     .meaning = "p of App. H (the paper uses 1)",
     .type = MLC_CFG_NUMBER,
     FIELD(actuation.amplitude_p),
     GT(0)},
    {.name = "actuation.amplitude_bound",
     .type_name = "string",
     .default_json = "\"per_signal\"",
     .range = "\"combined\" or \"per_signal\"",
     .meaning = "what p bounds: \"combined\" (the strain of all signals together in the worst "
                "tet, Eq. 76; amplitudes are scaled down when their sum could exceed p) or "
                "\"per_signal\" (the paper's a_max,i: each sinusoid of each mode alone)",
     .type = MLC_CFG_STRING,
     FIELD(actuation.amplitude_bound),
     BYTES(actuation.amplitude_bound),
     .choices = "combined|per_signal"},
    {.name = "actuation.ramp",
     .type_name = "number",
     .default_json = "0.3",
     .range = ">= 0",
     .meaning = "seconds over which the actuation ramps in smoothly from 0 (C² smoothstep "
                "factor on every a_i(t)); 0 = off",
     .type = MLC_CFG_NUMBER,
     FIELD(actuation.ramp),
     GE(0)},
    {.name = "actuation.fixed_periods",
     .type_name = "number array",
     .default_json = "[]",
     .range = "each > 0; 0, 1 or m*k values",
     .meaning = "fix T: one value for all, or one per mode and sinusoid (mode-major)",
     .type = MLC_CFG_NUMBER_ARRAY,
     FIELD(actuation.fixed_periods),
     COUNT(actuation.nfixed_periods),
     ELEMS(actuation.fixed_periods),
     GT(0)},
    {.name = "actuation.select",
     .type_name = "int",
     .default_json = "0",
     .range = "0..m",
     .meaning = "q > 0: co-optimize which q modes are driven",
     .type = MLC_CFG_INT,
     FIELD(actuation.select),
     GE(0)},
    {.name = "actuation.parameters",
     .type_name = "array",
     .default_json = "[]",
     .range = "at most 64 entries with distinct modes >= 0, 1..8 sinusoids, periods > 0",
     .meaning = "explicit parameters for simulate (same layout as in params.json)",
     .type = MLC_CFG_PARAMETERS,
     FIELD(actuation.parameters),
     COUNT(actuation.nparameters),
     ELEMS(actuation.parameters)},

    {.name = "sim.dt",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_DT),
     .range = "> 0",
     .meaning = "time step h, seconds",
     .type = MLC_CFG_NUMBER,
     FIELD(sim.dt),
     GT(0)},
    {.name = "sim.steps",
     .type_name = "int",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_STEPS),
     .range = ">= 1",
     .meaning = "number of steps S",
     .type = MLC_CFG_INT,
     FIELD(sim.steps),
     GE(1)},
    {.name = "sim.iterations",
     .type_name = "int",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_ITERATIONS),
     .range = ">= 1",
     .meaning = "local-global iterations per step (the most)",
     .type = MLC_CFG_INT,
     FIELD(sim.iterations),
     GE(1)},
    {.name = "sim.tolerance",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "stop a step's iterations when ‖Δz‖ is below it (0 = never)",
     .type = MLC_CFG_NUMBER,
     FIELD(sim.tolerance),
     GE(0)},
    {.name = "sim.initial_guess",
     .type_name = "string",
     .default_json = "\"inertial\"",
     .range = "\"inertial\" or \"previous\"",
     .meaning = "start of a step's iterations: \"inertial\" (q) or \"previous\" (z_n)",
     .type = MLC_CFG_STRING,
     FIELD(sim.initial_guess),
     BYTES(sim.initial_guess),
     .choices = "inertial|previous"},
    {.name = "sim.rayleigh",
     .type_name = "[α,β]",
     .default_json = "[0, 0]",
     .range = "each >= 0",
     .meaning = "Rayleigh damping: force −(α M + β K) v, α in 1/s, β in s (K: rest stiffness)",
     .type = MLC_CFG_RANGE,
     FIELD(sim.rayleigh),
     GE(0)},
    {.name = "sim.gravity",
     .type_name = "[x,y,z]",
     .default_json = "[0, -" MLC_STR(MLC_SIM_DEFAULT_GRAVITY) ", 0]",
     .range = "",
     .meaning = "gravity, m/s²",
     .type = MLC_CFG_VEC3,
     FIELD(sim.gravity)},
    {.name = "sim.integrator",
     .type_name = "string",
     .default_json = "\"euler\"",
     .range = "\"euler\" or \"bdf2\"",
     .meaning = "time integration: backward Euler, or BDF2 (second order, less numerical "
                "damping; the same cost a step)",
     .type = MLC_CFG_STRING,
     FIELD(sim.integrator),
     BYTES(sim.integrator),
     .choices = "euler|bdf2"},

    {.name = "contact.enabled",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "ground contact",
     .type = MLC_CFG_BOOL,
     FIELD(contact.enabled)},
    {.name = "contact.damping",
     .type_name = "number",
     .default_json = "0",
     .range = "in [0, 1)",
     .meaning = "μ_c of Eq. 49: fraction of tangential velocity kept",
     .type = MLC_CFG_NUMBER,
     FIELD(contact.damping),
     BETWEEN('[', 0, 1, ')')},
    {.name = "contact.projection",
     .type_name = "string",
     .default_json = "\"position\"",
     .range = "\"position\" or \"velocity\"",
     .meaning = "\"position\" (active samples end the step on the ground) or \"velocity\" "
                "(paper: normal velocity 0)",
     .type = MLC_CFG_STRING,
     FIELD(contact.projection),
     BYTES(contact.projection),
     .choices = "position|velocity"},
    {.name = "contact.model",
     .type_name = "string",
     .default_json = "\"complementarity\"",
     .range = "\"complementarity\" or \"equality\"",
     .meaning = "\"complementarity\" (forces only push, solved exactly) or \"equality\" "
                "(the paper's constraints, which can pull; for comparisons)",
     .type = MLC_CFG_STRING,
     FIELD(contact.model),
     BYTES(contact.model),
     .choices = "complementarity|equality"},
    {.name = "contact.push_speed",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_PUSH_SPEED),
     .range = ">= 0",
     .meaning = "m/s: the fastest a sample below the ground is pushed back out",
     .type = MLC_CFG_NUMBER,
     FIELD(contact.push_speed),
     GE(0)},
    {.name = "contact.friction",
     .type_name = "number",
     .default_json = MLC_STR(MLC_SIM_DEFAULT_FRICTION),
     .range = ">= 0",
     .meaning = "Coulomb limit μ_f: friction force ≤ μ_f × normal force (0 = the paper's "
                "damping alone, unbounded)",
     .type = MLC_CFG_NUMBER,
     FIELD(contact.friction),
     GE(0)},
    {.name = "contact.ground_height",
     .type_name = "number",
     .default_json = "0",
     .range = "",
     .meaning = "y of the ground plane",
     .type = MLC_CFG_NUMBER,
     FIELD(contact.ground_height)},
    {.name = "contact.slope",
     .type_name = "number",
     .default_json = "0",
     .range = "in [0, 90)",
     .meaning = "degrees: the ground plane rises along objective.direction (gravity stays "
                "vertical), placed so that the rest body touches it",
     .type = MLC_CFG_NUMBER,
     FIELD(contact.slope),
     BETWEEN('[', 0, 90, ')')},
    {.name = "contact.heightfield",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "",
     .meaning = "heightfield file (\"nx nz x0 z0 dx dz\", then nz rows of nx heights; "
                "docs/config.md) replacing the ground plane; \"\" = none",
     .type = MLC_CFG_STRING,
     FIELD(contact.heightfield),
     BYTES(contact.heightfield)},
    {.name = "contact.boxes",
     .type_name = "array of boxes",
     .default_json = "[]",
     .range = "{\"min\": [x,y,z], \"max\": [x,y,z], \"friction\": μ (optional)}, min < max",
     .meaning = "solid axis-aligned boxes (steps, obstacles) on the ground; friction defaults "
                "to contact.friction",
     .type = MLC_CFG_BOXES,
     FIELD(contact.boxes),
     COUNT(contact.nboxes),
     ELEMS(contact.boxes)},
    {.name = "contact.anisotropy",
     .type_name = "number",
     .default_json = "1",
     .range = ">= 1",
     .meaning = "friction against sliding backward / forward along objective.direction "
                "(1 = isotropic)",
     .type = MLC_CFG_NUMBER,
     FIELD(contact.anisotropy),
     GE(1)},

    {.name = "reference.tolerance",
     .type_name = "number",
     .default_json = MLC_STR(MLC_FULLSPACE_TOLERANCE),
     .range = ">= 0",
     .meaning = "simulate --full-space: the reference iterates each step until no coordinate "
                "changes by more than this × the body extent in an iteration (0 = always "
                "reference.max_iterations); sim.iterations is the reduced model's",
     .type = MLC_CFG_NUMBER,
     FIELD(reference.tolerance),
     GE(0)},
    {.name = "reference.max_iterations",
     .type_name = "int",
     .default_json = MLC_STR(MLC_FULLSPACE_MAX_ITERATIONS),
     .range = ">= 1",
     .meaning = "simulate --full-space: the most iterations a step of the reference may take "
                "(steps that stop here are counted in fullspace.json)",
     .type = MLC_CFG_INT,
     FIELD(reference.max_iterations),
     GE(1)},
    {.name = "reference.contact_samples",
     .type_name = "int",
     .default_json = "0",
     .range = ">= -1",
     .meaning = "simulate --full-space: where the reference's contact acts: 0 = every surface "
                "vertex (terrain and equality contact: 512 samples), N > 0 = N samples placed "
                "like the reduced model's (subspace.contact_band), -1 = the reduced model's "
                "samples",
     .type = MLC_CFG_INT,
     FIELD(reference.contact_samples),
     GE(-1)},
    {.name = "reference.contact_columns",
     .type_name = "int",
     .default_json = MLC_STR(MLC_FULLSPACE_CONTACT_COLUMNS),
     .range = ">= 1",
     .meaning = "simulate --full-space with contact on every surface vertex: the most surface "
                "vertices whose columns of the inverse system matrix are kept (8 bytes × "
                "vertices each); more vertices near the ground at once stop the reference",
     .type = MLC_CFG_INT,
     FIELD(reference.contact_columns),
     GE(1)},
    {.name = "reference.threads",
     .type_name = "int",
     .default_json = "1",
     .range = ">= 0",
     .meaning = "simulate --full-space: threads of the reference's per-tet work (0 = all "
                "cores; the same bits for any count); its parallel parts are short, and on a "
                "busy machine waiting threads cost more than they save",
     .type = MLC_CFG_INT,
     FIELD(reference.threads),
     GE(0)},
    {.name = "reference.acceleration",
     .type_name = "int",
     .default_json = MLC_STR(MLC_FULLSPACE_ANDERSON),
     .range = "in [0, " MLC_STR(MLC_FULLSPACE_ANDERSON_MAX) "]",
     .meaning = "simulate --full-space: Anderson acceleration of the reference's iterations "
                "over this many past iterations (0 = plain local-global iterations; the "
                "stopping rule is the same)",
     .type = MLC_CFG_INT,
     FIELD(reference.acceleration),
     BETWEEN('[', 0, MLC_FULLSPACE_ANDERSON_MAX, ']')},
    {.name = "reference.check",
     .type_name = "int",
     .default_json = "0",
     .range = "0 or 1",
     .meaning = "optimize: 1 = replay the returned gait in the full-space reference (the "
                "settings above) and report the share of its travel it keeps there "
                "(result.json \"transfer\"); costs one full-space rollout",
     .type = MLC_CFG_INT,
     FIELD(reference.check),
     BETWEEN('[', 0, 1, ']')},

    {.name = "objective.kind",
     .type_name = "string",
     .default_json = "\"locomotion\"",
     .range = "\"locomotion\", \"jump\", \"turn\", \"target\", \"path\", \"roll\" or \"flip\"",
     .meaning = "what J measures (docs/method.md §7)",
     .type = MLC_CFG_STRING,
     FIELD(objective.kind),
     BYTES(objective.kind),
     .choices = "locomotion|jump|turn|target|path|roll|flip"},
    {.name = "objective.direction",
     .type_name = "[x,y,z]",
     .default_json = "[1, 0, 0]",
     .range = "nonzero length",
     .meaning = "target direction v̂",
     .type = MLC_CFG_VEC3,
     FIELD(objective.direction),
     .check = MLC_CFG_CHECK_NONZERO},
    {.name = "objective.forward",
     .type_name = "[x,y,z] or null",
     .default_json = "null",
     .range = "null or nonzero length",
     .meaning = "body forward û₀ at rest (null = objective.direction)",
     .type = MLC_CFG_VEC3_OR_NULL,
     FIELD(objective.forward),
     COUNT(objective.forward_set),
     .check = MLC_CFG_CHECK_NONZERO},
    {.name = "objective.align",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "multiply by J_align",
     .type = MLC_CFG_BOOL,
     FIELD(objective.align)},
    {.name = "objective.work_penalty",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "work penalty α (J += α Σ_s h·work_s, Eq. 18)",
     .type = MLC_CFG_NUMBER,
     FIELD(objective.work_penalty),
     GE(0)},
    {.name = "objective.align_mode",
     .type_name = "string",
     .default_json = "\"min\"",
     .range = "\"min\" or \"mean\"",
     .meaning = "J_align as the paper's max(0, min over frames) or the mean over frames of "
                "max(0, alignment), which rarely ties at 0; not in the paper",
     .type = MLC_CFG_STRING,
     FIELD(objective.align_mode),
     BYTES(objective.align_mode),
     .choices = "min|mean"},
    {.name = "objective.credible_gate",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "J fades to 0 as the centre of mass rises or the body flies toward the "
                "credibility limits (rise 0.25 extents, airborne 25% of the frames); not in the "
                "paper",
     .type = MLC_CFG_BOOL,
     FIELD(objective.credible_gate)},
    {.name = "objective.upright",
     .type_name = "bool",
     .default_json = "true",
     .range = "",
     .meaning = "J_align also takes the minimum of the body's up axis R(t)ŷ · ŷ (no rolling "
                "over); not in the paper",
     .type = MLC_CFG_BOOL,
     FIELD(objective.upright)},
    {.name = "objective.work_abs",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "penalize absolute work",
     .type = MLC_CFG_BOOL,
     FIELD(objective.work_abs)},
    {.name = "objective.heading",
     .type_name = "[x,z] or [x,y,z]",
     .default_json = "[1, 0]",
     .range = "2 or 3 numbers, nonzero on the ground (x, z)",
     .meaning = "turn: the final forward direction ĥ (projected on the ground)",
     .type = MLC_CFG_NUMBER_ARRAY,
     FIELD(objective.heading),
     COUNT(objective.nheading),
     ELEMS(objective.heading)},
    {.name = "objective.target",
     .type_name = "[x,y,z] or null",
     .default_json = "null",
     .range = "null or 3 numbers",
     .meaning = "target (and jump): where the centre of mass should end",
     .type = MLC_CFG_VEC3_OR_NULL,
     FIELD(objective.target),
     COUNT(objective.target_set)},
    {.name = "objective.path",
     .type_name = "string",
     .default_json = "\"\"",
     .range = "a CSV file time,x,y,z with a header line (kind \"path\")",
     .meaning = "path: the centre of mass's waypoints, linearly interpolated in time",
     .type = MLC_CFG_STRING,
     FIELD(objective.path),
     BYTES(objective.path)},
    {.name = "objective.effort",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "effort weight: J += weight × time mean of ‖a(t)/a_max‖² (any kind)",
     .type = MLC_CFG_NUMBER,
     FIELD(objective.effort),
     GE(0)},
    {.name = "objective.vibration",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "vibration weight: J += weight × mean squared centre-of-mass acceleration "
                "(second differences, extents/s²) (any kind)",
     .type = MLC_CFG_NUMBER,
     FIELD(objective.vibration),
     GE(0)},

    {.name = "cmaes.population",
     .type_name = "int",
     .default_json = "16",
     .range = ">= 2",
     .meaning = "population λ",
     .type = MLC_CFG_INT,
     FIELD(cmaes.population),
     GE(2)},
    {.name = "cmaes.generations",
     .type_name = "int",
     .default_json = "200",
     .range = ">= 1",
     .meaning = "generation budget",
     .type = MLC_CFG_INT,
     FIELD(cmaes.generations),
     GE(1)},
    {.name = "cmaes.sigma0",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "initial step size in the normalized [0,1] box; 0 = chosen from the number of "
                "driven signals s (modes × sinusoids): 0.3 × min(1, sqrt(8 / s)), so that the "
                "first guesses strain the body alike however many signals add up",
     .type = MLC_CFG_NUMBER,
     FIELD(cmaes.sigma0),
     GE(0)},
    {.name = "cmaes.seed",
     .type_name = "int",
     .default_json = "1",
     .range = "",
     .meaning = "seed of everything random",
     .type = MLC_CFG_INT,
     FIELD(cmaes.seed)},
    {.name = "cmaes.restarts",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "restarts after a run stops (on cmaes.restart_collapse, cmaes.restart_stall "
                "or, with cmaes.early_stop, pycma's criteria), within the budget; 0 = off",
     .type = MLC_CFG_INT,
     FIELD(cmaes.restarts),
     GE(0)},
    {.name = "cmaes.restart_strategy",
     .type_name = "string",
     .default_json = "\"ipop\"",
     .range = "\"ipop\" or \"bipop\"",
     .meaning = "\"ipop\": each restart doubles the population; \"bipop\": large IPOP runs "
                "interleaved with small runs of random population and step size (Hansen 2009)",
     .type = MLC_CFG_STRING,
     FIELD(cmaes.restart_strategy),
     BYTES(cmaes.restart_strategy),
     .choices = "ipop|bipop"},
    {.name = "cmaes.restart_collapse",
     .type_name = "number",
     .default_json = "0.005",
     .range = ">= 0",
     .meaning = "with restarts: a run ends when σ·max_i sqrt(C_ii), its widest spread in the "
                "normalized box, falls below this; 0 = off",
     .type = MLC_CFG_NUMBER,
     FIELD(cmaes.restart_collapse),
     GE(0)},
    {.name = "cmaes.restart_stall",
     .type_name = "int",
     .default_json = "80",
     .range = ">= 0",
     .meaning = "with restarts: a run ends when its best score has not improved for this many "
                "generations; 0 = off",
     .type = MLC_CFG_INT,
     FIELD(cmaes.restart_stall),
     GE(0)},
    {.name = "cmaes.restart_room",
     .type_name = "number",
     .default_json = "1",
     .range = ">= 0",
     .meaning = "with restarts: a restart begins only when the budget left is at least this many "
                "times the evaluations of the run that ended, else the job ends there; 0 = "
                "restart whatever is left",
     .type = MLC_CFG_NUMBER,
     FIELD(cmaes.restart_room),
     GE(0)},
    {.name = "cmaes.diagonal",
     .type_name = "int",
     .default_json = "-1",
     .range = ">= -1",
     .meaning = "generations at the start of every run with a diagonal covariance learned "
                "(n + 2)/3 times faster (sep-CMA-ES, pycma's CMA_diagonal), then full; 0 = off; "
                "-1 = chosen from the dimension: diagonal throughout with 100 parameters or "
                "more, where the full covariance barely adapts within the budget, else off",
     .type = MLC_CFG_INT,
     FIELD(cmaes.diagonal),
     GE(-1)},
    {.name = "cmaes.budget",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "rollouts the run may spend in all (generations, means, replays, restarts, the "
                "polish); 0 = cmaes.generations × cmaes.population candidate evaluations",
     .type = MLC_CFG_INT,
     FIELD(cmaes.budget),
     GE(0)},
    {.name = "cmaes.early_stop",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "let pycma's stop criteria (tolfun, tolx, tolflatfitness, ...) end a run "
                "before the generation budget",
     .type = MLC_CFG_BOOL,
     FIELD(cmaes.early_stop)},
    {.name = "cmaes.mean_every",
     .type_name = "int",
     .default_json = "10",
     .range = ">= 0",
     .meaning = "score the distribution mean every this many generations (history.csv mean_J, "
                "empty in the others): one more rollout in such a generation; 0 = never",
     .type = MLC_CFG_INT,
     FIELD(cmaes.mean_every),
     GE(0)},
    {.name = "cmaes.robust_samples",
     .type_name = "int",
     .default_json = "8",
     .range = "0..16",
     .meaning = "R: a candidate that walks scores the worst J of its rollout and R replays "
                "with perturbed parameters (robust gaits; costs up to R more rollouts each)",
     .type = MLC_CFG_INT,
     FIELD(cmaes.robust_samples),
     BETWEEN('[', 0, 16, ']')},
    {.name = "cmaes.robust_scope",
     .type_name = "string",
     .default_json = "\"improving\"",
     .range = "\"walkers\" or \"improving\"",
     .meaning = "which candidates pay for the cmaes.robust_samples replays: \"walkers\" (every "
                "candidate that walks) or \"improving\" (only a walker whose nominal J beats the "
                "best score so far, so the best-ever gait holds its gain under perturbation at a "
                "small share of the cost)",
     .type = MLC_CFG_STRING,
     FIELD(cmaes.robust_scope),
     BYTES(cmaes.robust_scope),
     .choices = "walkers|improving"},
    {.name = "cmaes.polish",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "steps of finite-difference gradient descent on the robust objective after "
                "CMA-ES (docs/method.md §8); never returns a worse gait; 0 = off",
     .type = MLC_CFG_INT,
     FIELD(cmaes.polish),
     GE(0)},

    {.name = "output.dir",
     .type_name = "string",
     .default_json = "\"modalloco-out\"",
     .range = "nonempty",
     .meaning = "output directory",
     .type = MLC_CFG_STRING,
     FIELD(output.dir),
     BYTES(output.dir),
     .check = MLC_CFG_CHECK_NONEMPTY},
    {.name = "output.every",
     .type_name = "int",
     .default_json = "1",
     .range = ">= 1",
     .meaning = "write every n-th frame to the vertex cache",
     .type = MLC_CFG_INT,
     FIELD(output.every),
     GE(1)},
    {.name = "output.viewer",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "simulate and optimize also write view.html (as `modalloco view DIR`)",
     .type = MLC_CFG_BOOL,
     FIELD(output.viewer)},
    {.name = "output.vtk",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "simulate and optimize also write frames.pvd and frames/frame_NNNN.vtp, the "
                "surface of every output frame (output.every), for ParaView",
     .type = MLC_CFG_BOOL,
     FIELD(output.vtk)},
    {.name = "output.vtk_volume",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "with output.vtk, also volume.pvd and frames/frame_NNNN.vtu, the whole tet "
                "mesh of every output frame",
     .type = MLC_CFG_BOOL,
     FIELD(output.vtk_volume)},

    {.name = "parallel.threads",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "worker threads, 0 = all cores",
     .type = MLC_CFG_INT,
     FIELD(parallel.threads),
     GE(0)},
};
const int mlc_config_nkeys = (int)(sizeof mlc_config_keys / sizeof mlc_config_keys[0]);

#define MAX_KEYS 96 /* bound for per-load bookkeeping; checked against mlc_config_nkeys */

const mlc_config_key *mlc_config_key_find(const char *name) {
    for (int i = 0; i < mlc_config_nkeys; i++)
        if (strcmp(mlc_config_keys[i].name, name) == 0) return &mlc_config_keys[i];
    return NULL;
}

/* ---- Defaults --------------------------------------------------------------------------- */
void mlc_config_defaults(mlc_config *cfg) {
    /* Zero everything, padding included, so equal settings mean equal bytes. */
    memset(cfg, 0, sizeof *cfg);
    cfg->mesh.path[0] = '\0';
    cfg->mesh.normalize = 1;
    cfg->mesh.extent = 2.0;
    strcpy(cfg->mesh.up, "+y");
    cfg->mesh.up_vector[1] = 1.0;

    cfg->material.density = MLC_SIM_DEFAULT_DENSITY;
    cfg->material.mu = MLC_SIM_DEFAULT_MU;
    cfg->material.gamma = MLC_SIM_DEFAULT_GAMMA;
    cfg->material.poisson_modes = 0.25;

    cfg->subspace.skinning_modes = 5;
    cfg->subspace.passive_clusters = 10;
    cfg->subspace.actuation_clusters = 1;
    cfg->subspace.contact_samples = 64;
    cfg->subspace.contact_band = 0.01;
    cfg->subspace.contact_spacing = 0.04;

    cfg->actuation.modes = 4;
    cfg->actuation.local_modes = 0;
    cfg->actuation.localization = 30;
    cfg->actuation.sinusoids = 2;
    cfg->actuation.period_range[0] = 0.2;
    cfg->actuation.period_range[1] = 0.6;
    cfg->actuation.phase_range[0] = 0.0;
    cfg->actuation.phase_range[1] = 1.5707963; /* π/2 written in cycles, as App. H's bound */
    cfg->actuation.amplitude_p = 0.7;
    strcpy(cfg->actuation.amplitude_bound, "per_signal");
    cfg->actuation.ramp = 0.3;
    cfg->actuation.select = 0;

    cfg->sim.dt = MLC_SIM_DEFAULT_DT;
    cfg->sim.steps = MLC_SIM_DEFAULT_STEPS;
    cfg->sim.iterations = MLC_SIM_DEFAULT_ITERATIONS;
    cfg->sim.tolerance = 0.0;
    strcpy(cfg->sim.initial_guess, "inertial");
    cfg->sim.gravity[1] = -MLC_SIM_DEFAULT_GRAVITY;

    cfg->contact.enabled = 1;
    cfg->contact.damping = 0.0;
    strcpy(cfg->contact.projection, "position");
    strcpy(cfg->contact.model, "complementarity");
    cfg->contact.push_speed = MLC_SIM_DEFAULT_PUSH_SPEED;
    cfg->contact.friction = MLC_SIM_DEFAULT_FRICTION;
    cfg->contact.ground_height = 0.0;
    cfg->contact.slope = 0.0;
    cfg->contact.anisotropy = 1.0;
    strcpy(cfg->sim.integrator, "euler");

    cfg->reference.tolerance = MLC_FULLSPACE_TOLERANCE;
    cfg->reference.max_iterations = MLC_FULLSPACE_MAX_ITERATIONS;
    cfg->reference.contact_samples = 0;
    cfg->reference.contact_columns = MLC_FULLSPACE_CONTACT_COLUMNS;
    cfg->reference.acceleration = MLC_FULLSPACE_ANDERSON;
    cfg->reference.threads = 1;
    cfg->reference.check = 0;

    strcpy(cfg->objective.kind, "locomotion");
    cfg->objective.direction[0] = 1.0;
    cfg->objective.forward_set = 0;
    cfg->objective.align = 1;
    cfg->objective.work_penalty = 0.0;
    cfg->objective.work_abs = 0;
    cfg->objective.upright = 1;
    cfg->objective.credible_gate = 1;
    strcpy(cfg->objective.align_mode, "min");
    cfg->objective.heading[0] = 1.0;
    cfg->objective.nheading = 2;
    cfg->objective.target_set = 0;
    cfg->objective.effort = 0.0;
    cfg->objective.vibration = 0.0;

    cfg->cmaes.population = 16;
    cfg->cmaes.generations = 200;
    cfg->cmaes.sigma0 = 0; /* chosen from the signals (cmd_optimize.c) */
    cfg->cmaes.seed = 1;
    cfg->cmaes.restarts = 0;
    strcpy(cfg->cmaes.restart_strategy, "ipop");
    cfg->cmaes.restart_collapse = 0.005;
    cfg->cmaes.restart_stall = 80;
    cfg->cmaes.restart_room = 1.0;
    cfg->cmaes.budget = 0;
    cfg->cmaes.early_stop = 0;
    cfg->cmaes.mean_every = 10;
    cfg->cmaes.diagonal = -1;
    cfg->cmaes.robust_samples = 8;
    strcpy(cfg->cmaes.robust_scope, "improving");
    cfg->cmaes.polish = 0;

    strcpy(cfg->output.dir, "modalloco-out");
    cfg->output.every = 1;
    cfg->output.viewer = 0;
    cfg->output.vtk = 0;
    cfg->output.vtk_volume = 0;

    cfg->parallel.threads = 0;
}

/* ---- Small helpers ---------------------------------------------------------------------- */
/* Field access through the table's offsets. */
static void *field(mlc_config *cfg, size_t off) {
    return (char *)cfg + off;
}
static const void *cfield(const mlc_config *cfg, size_t off) {
    return (const char *)cfg + off;
}

/* The entry count of a list key (or the "given" flag of a VEC3_OR_NULL key). */
static int key_count(const mlc_config *cfg, const mlc_config_key *k) {
    return *(const int *)cfield(cfg, k->count_offset);
}

/* Shortest of %.15g / %.17g that reads back exactly, so messages say 0.1, not 0.1000...01. */
static const char *fmt_num(double x, char *buf, size_t n) {
    snprintf(buf, n, "%.15g", x);
    if (strtod(buf, NULL) != x) snprintf(buf, n, "%.17g", x);
    return buf;
}

/* "[a, b, c]" of n doubles. */
static const char *fmt_vec(const double *v, int n, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < cap; i++) {
        char num[32];
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "[",
                                 fmt_num(v[i], num, sizeof num));
    }
    if (used < cap) snprintf(buf + used, cap - used, n ? "]" : "[]");
    return buf;
}

/* What a JSON value is, for "got ..." in messages: "string \"abc\"", "number 3.5", ... */
static const char *describe(const cJSON *it, char *buf, size_t n) {
    char num[32];
    if (cJSON_IsString(it)) {
        const char *s = it->valuestring;
        if (strlen(s) > 60)
            snprintf(buf, n, "string \"%.60s...\"", s);
        else
            snprintf(buf, n, "string \"%s\"", s);
    } else if (cJSON_IsNumber(it)) {
        snprintf(buf, n, "number %s", fmt_num(it->valuedouble, num, sizeof num));
    } else if (cJSON_IsBool(it)) {
        snprintf(buf, n, "boolean %s", cJSON_IsTrue(it) ? "true" : "false");
    } else if (cJSON_IsNull(it)) {
        snprintf(buf, n, "null");
    } else if (cJSON_IsArray(it)) {
        snprintf(buf, n, "array of %d", cJSON_GetArraySize(it));
    } else if (cJSON_IsObject(it)) {
        snprintf(buf, n, "object");
    } else {
        snprintf(buf, n, "invalid value");
    }
    return buf;
}

/* Loading context: where the input came from and where errors go. */
typedef struct load_ctx {
    const char *source;
    mlc_err *err;
} load_ctx;

static mlc_status failf(const load_ctx *c, mlc_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mlc_status failf(const load_ctx *c, mlc_status code, const char *fmt, ...) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mlc_errf(c->err, code, "%s: %s", c->source, msg);
}

static mlc_status type_error(const load_ctx *c, const char *label, const char *want,
                             const cJSON *got) {
    char d[128];
    return failf(c, MLC_EINVAL, "key '%s' must be %s, got %s", label, want,
                 describe(got, d, sizeof d));
}

/* ---- Leaf parsers ----------------------------------------------------------------------- */
/* A JSON number that is finite. cJSON turns overflowing literals (1e999) into ±inf. */
static mlc_status get_number(const load_ctx *c, const char *label, const cJSON *it, double *out) {
    if (!cJSON_IsNumber(it)) return type_error(c, label, "a number", it);
    if (!isfinite(it->valuedouble))
        return failf(c, MLC_EINVAL, "key '%s' is not a finite number (the literal overflows)",
                     label);
    *out = it->valuedouble;
    return MLC_OK;
}

/* A JSON number with an integral value that fits in int: 3 and 3.0 pass, 3.5 and 1e20 fail.
 * cJSON's own valueint saturates silently, so we judge the double. */
static mlc_status get_int(const load_ctx *c, const char *label, const cJSON *it, int *out) {
    char num[32];
    if (!cJSON_IsNumber(it)) return type_error(c, label, "an integer", it);
    double d = it->valuedouble;
    if (!isfinite(d))
        return failf(c, MLC_EINVAL, "key '%s' must be an integer, got a number that overflows",
                     label);
    if (floor(d) != d)
        return failf(c, MLC_EINVAL, "key '%s' must be an integer, got %s", label,
                     fmt_num(d, num, sizeof num));
    if (d < (double)INT_MIN || d > (double)INT_MAX)
        return failf(c, MLC_EINVAL, "key '%s' = %s does not fit in an integer (%d..%d)", label,
                     fmt_num(d, num, sizeof num), INT_MIN, INT_MAX);
    *out = (int)d;
    return MLC_OK;
}

/* A fixed-length array of numbers ([min,max], [x,y,z]). */
static mlc_status get_fixed_vec(const load_ctx *c, const char *label, const cJSON *it, int n,
                                const char *want, double *out) {
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != n) return type_error(c, label, want, it);
    double tmp[3];
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, it) {
        char lab[160];
        snprintf(lab, sizeof lab, "%s[%d]", label, i);
        mlc_status s = get_number(c, lab, e, &tmp[i]);
        if (s != MLC_OK) return s;
        i++;
    }
    memcpy(out, tmp, (size_t)n * sizeof *out);
    return MLC_OK;
}

/* The members of an object of named numbers ({"amplitude": A, "period": T, ...}): member
 * names[q] goes to *dst[q] and sets have[q]; a member of another name is rejected, naming the
 * `expected` ones. */
static mlc_status get_number_members(const load_ctx *c, const char *label, const cJSON *obj,
                                     const char *const *names, int n, double *const *dst, int *have,
                                     const char *expected) {
    const cJSON *f;
    cJSON_ArrayForEach(f, obj) {
        int w = -1;
        for (int q = 0; q < n; q++)
            if (f->string && strcmp(f->string, names[q]) == 0) w = q;
        if (w < 0)
            return failf(c, MLC_EINVAL, "unknown member '%s' in '%s'; expected %s",
                         f->string ? f->string : "", label, expected);
        char flab[280];
        snprintf(flab, sizeof flab, "%s.%s", label, names[w]);
        mlc_status s = get_number(c, flab, f, dst[w]);
        if (s != MLC_OK) return s;
        have[w] = 1;
    }
    return MLC_OK;
}

/* One object of "parameters": {"mode": i, "sinusoids": [{"amplitude", "period", "phase"}]}.
 * Unknown members are rejected like unknown keys: a typo ("perod") must not silently vanish. */
static mlc_status get_param(const load_ctx *c, const char *label, const cJSON *it,
                            mlc_config_param *p) {
    if (!cJSON_IsObject(it))
        return type_error(c, label, "an object {\"mode\": i, \"sinusoids\": [...]}", it);
    memset(p, 0, sizeof *p);
    const cJSON *mode = NULL, *sins = NULL, *m;
    cJSON_ArrayForEach(m, it) {
        if (m->string && strcmp(m->string, "mode") == 0)
            mode = m;
        else if (m->string && strcmp(m->string, "sinusoids") == 0)
            sins = m;
        else
            return failf(c, MLC_EINVAL,
                         "unknown member '%s' in '%s'; expected 'mode' and 'sinusoids'",
                         m->string ? m->string : "", label);
    }
    char lab[200];
    if (!mode) return failf(c, MLC_EINVAL, "'%s' lacks member 'mode'", label);
    if (!sins) return failf(c, MLC_EINVAL, "'%s' lacks member 'sinusoids'", label);
    snprintf(lab, sizeof lab, "%s.mode", label);
    mlc_status s = get_int(c, lab, mode, &p->mode);
    if (s != MLC_OK) return s;
    snprintf(lab, sizeof lab, "%s.sinusoids", label);
    if (!cJSON_IsArray(sins)) return type_error(c, lab, "an array of sinusoids", sins);
    int ns = cJSON_GetArraySize(sins);
    if (ns < 1 || ns > MLC_CONFIG_MAX_SINUSOIDS)
        return failf(c, MLC_EINVAL, "key '%s' has %d sinusoids; valid: 1..%d", lab, ns,
                     MLC_CONFIG_MAX_SINUSOIDS);
    int j = 0;
    const cJSON *sj;
    cJSON_ArrayForEach(sj, sins) {
        char slab[240];
        snprintf(slab, sizeof slab, "%s[%d]", lab, j);
        if (!cJSON_IsObject(sj))
            return type_error(c, slab, "an object {\"amplitude\": A, \"period\": T, \"phase\": θ}",
                              sj);
        static const char *const names[3] = {"amplitude", "period", "phase"};
        double *dst[3] = {&p->sinusoids[j].amplitude, &p->sinusoids[j].period,
                          &p->sinusoids[j].phase};
        int have[3] = {0, 0, 0};
        s = get_number_members(c, slab, sj, names, 3, dst, have,
                               "'amplitude', 'period' and 'phase'");
        if (s != MLC_OK) return s;
        for (int q = 0; q < 3; q++)
            if (!have[q]) return failf(c, MLC_EINVAL, "'%s' lacks member '%s'", slab, names[q]);
        j++;
    }
    p->nsinusoids = ns;
    return MLC_OK;
}

/* The members of a material.regions entry, in MLC_REGION_* bit order. */
static const char *const region_members[4] = {"mu", "gamma", "density", "friction"};

static double region_get(const mlc_config_region_material *r, int q) {
    return q == 0 ? r->mu : q == 1 ? r->gamma : q == 2 ? r->density : r->friction;
}

/* material.regions: {"3": {"mu": 1e7, "friction": 0.1}, ...}. A label is an integer written
 * as a string (JSON member names are strings); unknown members are rejected. */
static mlc_status get_region_materials(const load_ctx *c, const char *label, const cJSON *it,
                                       mlc_config_region_material *out, int cap, int *count) {
    if (!cJSON_IsObject(it))
        return type_error(c, label,
                          "an object of region label → {\"mu\", \"gamma\", \"density\", "
                          "\"friction\"}",
                          it);
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, it) {
        const char *name = r->string ? r->string : "";
        char lab[200];
        snprintf(lab, sizeof lab, "%s.%s", label, name);
        char *end = NULL;
        errno = 0;
        long v = strtol(name, &end, 10);
        if (!name[0] || *end || errno || v < INT_MIN || v > INT_MAX)
            return failf(c, MLC_EINVAL,
                         "key '%s': region labels are integers written as strings (\"3\"), "
                         "got \"%.60s\"",
                         label, name);
        if (n == cap) return failf(c, MLC_EINVAL, "key '%s' has more than %d regions", label, cap);
        mlc_config_region_material *m = out + n;
        memset(m, 0, sizeof *m);
        m->label = (int)v;
        if (!cJSON_IsObject(r))
            return type_error(c, lab,
                              "an object {\"mu\", \"gamma\", \"density\", \"friction\"} "
                              "(each optional)",
                              r);
        double *const dst[4] = {&m->mu, &m->gamma, &m->density, &m->friction};
        int have[4] = {0, 0, 0, 0};
        mlc_status s = get_number_members(c, lab, r, region_members, 4, dst, have,
                                          "'mu', 'gamma', 'density' or 'friction'");
        if (s != MLC_OK) return s;
        for (int q = 0; q < 4; q++)
            m->set |= have[q] << q;
        n++;
    }
    /* Entries past n stay zero: configs holding the same settings compare equal. */
    memset(out + n, 0, (size_t)(cap - n) * sizeof *out);
    *count = n;
    return MLC_OK;
}

/* One object of contact.boxes: {"min": [x,y,z], "max": [x,y,z], "friction": μ}. */
static mlc_status get_box(const load_ctx *c, const char *label, const cJSON *it,
                          mlc_config_box *b) {
    if (!cJSON_IsObject(it))
        return type_error(c, label, "an object {\"min\": [x,y,z], \"max\": [x,y,z]}", it);
    memset(b, 0, sizeof *b);
    const cJSON *m;
    int have = 0;
    char lab[200];
    cJSON_ArrayForEach(m, it) {
        const char *name = m->string ? m->string : "";
        snprintf(lab, sizeof lab, "%s.%s", label, name);
        mlc_status s;
        if (strcmp(name, "min") == 0)
            s = get_fixed_vec(c, lab, m, 3, "[x, y, z] (3 numbers)", b->min), have |= 1;
        else if (strcmp(name, "max") == 0)
            s = get_fixed_vec(c, lab, m, 3, "[x, y, z] (3 numbers)", b->max), have |= 2;
        else if (strcmp(name, "friction") == 0)
            s = get_number(c, lab, m, &b->friction), b->has_friction = 1;
        else
            return failf(c, MLC_EINVAL,
                         "unknown member '%s' in '%s'; expected 'min', 'max' and optionally "
                         "'friction'",
                         name, label);
        if (s != MLC_OK) return s;
    }
    if (!(have & 1)) return failf(c, MLC_EINVAL, "'%s' lacks member 'min'", label);
    if (!(have & 2)) return failf(c, MLC_EINVAL, "'%s' lacks member 'max'", label);
    return MLC_OK;
}

/* ---- Range checks (shared by loading and mlc_config_validate) --------------------------- */
static int in_bounds(const mlc_config_key *k, double v) {
    if (k->lo_kind == '(' && !(v > k->lo)) return 0;
    if (k->lo_kind == '[' && !(v >= k->lo)) return 0;
    if (k->hi_kind == ')' && !(v < k->hi)) return 0;
    if (k->hi_kind == ']' && !(v <= k->hi)) return 0;
    return 1;
}

static int has_choice(const char *choices, const char *s) {
    size_t n = strlen(s);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

/* The unit vector of an axis name "+x" … "-z"; 0 when `s` is not one. */
static int axis_vector(const char *s, double v[3]) {
    if ((s[0] != '+' && s[0] != '-') || s[1] < 'x' || s[1] > 'z' || s[2] != '\0') return 0;
    v[0] = v[1] = v[2] = 0;
    v[s[1] - 'x'] = s[0] == '+' ? 1.0 : -1.0;
    return 1;
}

/* Each entry of an int list in range and none listed twice. */
static int check_int_array(const mlc_config *cfg, const mlc_config_key *k, const void *f, char *msg,
                           size_t n) {
    const int *a = f;
    int cnt = key_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        if (!in_bounds(k, a[i])) {
            snprintf(msg, n, "key '%s[%d]' = %d is out of range; valid: %s", k->name, i, a[i],
                     k->range);
            return 1;
        }
        for (int j = 0; j < i; j++)
            if (a[j] == a[i]) {
                snprintf(msg, n, "key '%s' lists %d twice (at %d and %d); valid: %s", k->name, a[i],
                         j, i, k->range);
                return 1;
            }
    }
    return 0;
}

/* An axis given by name must be a valid name that agrees with its vector (preparation reads the
 * vector); without a name the vector must be finite and nonzero. */
static int check_axis(const mlc_config *cfg, const mlc_config_key *k, const void *f, char *msg,
                      size_t n) {
    char v[200];
    const double *a = cfield(cfg, k->count_offset);
    double want[3];
    const char *name = f;
    if (name[0]) {
        if (!has_choice(k->choices, name) || !axis_vector(name, want)) {
            snprintf(msg, n,
                     "key '%s' = \"%.100s\" is invalid; valid: %s (e.g. --set "
                     "%s=+z for a mesh whose up axis is z)",
                     k->name, name, k->range, k->name);
            return 1;
        }
        /* Preparation reads the vector; a name that disagrees with it would be a lie in
         * config.json. */
        if (a[0] != want[0] || a[1] != want[1] || a[2] != want[2]) {
            snprintf(msg, n, "key '%s' = \"%s\" disagrees with its vector %s", k->name, name,
                     fmt_vec(a, 3, v, sizeof v));
            return 1;
        }
        return 0;
    }
    if (!isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2]) ||
        !(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] > 0)) {
        snprintf(msg, n, "key '%s' = %s is invalid; valid: %s", k->name, fmt_vec(a, 3, v, sizeof v),
                 k->range);
        return 1;
    }
    return 0;
}

/* Every terrain box has min below max on each axis and a friction >= 0 when it gives one. */
static int check_boxes(const mlc_config *cfg, const mlc_config_key *k, const void *f, char *msg,
                       size_t n) {
    char v[200];
    const mlc_config_box *b = f;
    int cnt = key_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        for (int a = 0; a < 3; a++)
            if (!(b[i].min[a] < b[i].max[a])) {
                snprintf(msg, n,
                         "key '%s[%d]': min[%d] = %s is not below max[%d] = %s; give the "
                         "box's smaller corner as \"min\" and the larger as \"max\"",
                         k->name, i, a, fmt_num(b[i].min[a], v, 32), a,
                         fmt_num(b[i].max[a], v + 32, 32));
                return 1;
            }
        if (b[i].has_friction && !(b[i].friction >= 0)) {
            snprintf(msg, n, "key '%s[%d].friction' = %s is out of range; valid: >= 0", k->name, i,
                     fmt_num(b[i].friction, v, 32));
            return 1;
        }
    }
    return 0;
}

/* Every actuated mode named once, with 1..MLC_CONFIG_MAX_SINUSOIDS finite sinusoids of positive
 * period. */
static int check_parameters(const mlc_config *cfg, const mlc_config_key *k, const void *f,
                            char *msg, size_t n) {
    char v[200];
    const mlc_config_param *p = f;
    int cnt = key_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        if (p[i].mode < 0) {
            snprintf(msg, n, "key '%s[%d].mode' = %d is out of range; valid: >= 0", k->name, i,
                     p[i].mode);
            return 1;
        }
        for (int j = 0; j < i; j++)
            if (p[j].mode == p[i].mode) {
                snprintf(msg, n, "key '%s' gives mode %d twice (entries %d and %d)", k->name,
                         p[i].mode, j, i);
                return 1;
            }
        if (p[i].nsinusoids < 1 || p[i].nsinusoids > MLC_CONFIG_MAX_SINUSOIDS) {
            snprintf(msg, n, "key '%s[%d].sinusoids' has %d entries; valid: 1..%d", k->name, i,
                     p[i].nsinusoids, MLC_CONFIG_MAX_SINUSOIDS);
            return 1;
        }
        for (int j = 0; j < p[i].nsinusoids; j++) {
            const mlc_config_sinusoid *s = &p[i].sinusoids[j];
            if (!isfinite(s->amplitude) || !isfinite(s->phase) || !isfinite(s->period) ||
                !(s->period > 0)) {
                snprintf(msg, n,
                         "key '%s[%d].sinusoids[%d]' = {amplitude %s, period %s, phase "
                         "%s} is invalid; valid: finite values, period > 0",
                         k->name, i, j, fmt_num(s->amplitude, v, 32),
                         fmt_num(s->period, v + 32, 32), fmt_num(s->phase, v + 64, 32));
                return 1;
            }
        }
    }
    return 0;
}

/* Every region named once, its given mu, gamma, density > 0 and friction >= 0. */
static int check_region_materials(const mlc_config *cfg, const mlc_config_key *k, const void *f,
                                  char *msg, size_t n) {
    char v[200];
    const mlc_config_region_material *r = f;
    int cnt = key_count(cfg, k);
    for (int i = 0; i < cnt; i++) {
        for (int j = 0; j < i; j++)
            if (r[j].label == r[i].label) {
                snprintf(msg, n, "key '%s' gives region %d twice", k->name, r[i].label);
                return 1;
            }
        for (int q = 0; q < 4; q++) {
            double x = region_get(&r[i], q);
            if (!(r[i].set & (1 << q))) continue;
            if (!isfinite(x) || (q < 3 ? !(x > 0) : !(x >= 0))) {
                snprintf(msg, n, "key '%s.%d.%s' = %s is out of range; valid: %s", k->name,
                         r[i].label, region_members[q], fmt_num(x, v, sizeof v),
                         q < 3 ? "> 0" : ">= 0");
                return 1;
            }
        }
    }
    return 0;
}

/* Check one key of *cfg alone. Returns 0, or 1 with `msg` saying key, value and range. */
static int check_key(const mlc_config *cfg, const mlc_config_key *k, char *msg, size_t n) {
    const void *f = cfield(cfg, k->offset);
    char v[200];
    switch (k->type) {
    case MLC_CFG_STRING: {
        const char *s = f;
        if (k->choices && !has_choice(k->choices, s)) {
            snprintf(msg, n, "key '%s' = \"%.100s\" is invalid; valid: %s", k->name, s, k->range);
            return 1;
        }
        if (k->check == MLC_CFG_CHECK_NONEMPTY && s[0] == '\0') {
            snprintf(msg, n, "key '%s' = \"\" is invalid; valid: %s", k->name, k->range);
            return 1;
        }
        return 0;
    }
    case MLC_CFG_BOOL:
        return 0;
    case MLC_CFG_INT: {
        int x = *(const int *)f;
        if (!in_bounds(k, x)) {
            snprintf(msg, n, "key '%s' = %d is out of range; valid: %s", k->name, x, k->range);
            return 1;
        }
        return 0;
    }
    case MLC_CFG_NUMBER: {
        double x = *(const double *)f;
        if (!isfinite(x) || !in_bounds(k, x)) {
            snprintf(msg, n, "key '%s' = %s is out of range; valid: %s", k->name,
                     fmt_num(x, v, sizeof v), k->range);
            return 1;
        }
        return 0;
    }
    case MLC_CFG_INT_ARRAY:
        return check_int_array(cfg, k, f, msg, n);
    case MLC_CFG_NUMBER_ARRAY: {
        const double *a = f;
        int cnt = key_count(cfg, k);
        for (int i = 0; i < cnt; i++)
            if (!isfinite(a[i]) || !in_bounds(k, a[i])) {
                snprintf(msg, n, "key '%s[%d]' = %s is out of range; valid: %s", k->name, i,
                         fmt_num(a[i], v, sizeof v), k->range);
                return 1;
            }
        return 0;
    }
    case MLC_CFG_RANGE: {
        const double *a = f;
        int bad = !isfinite(a[0]) || !isfinite(a[1]) || !in_bounds(k, a[0]) ||
                  !in_bounds(k, a[1]) || (k->check == MLC_CFG_CHECK_ORDERED && a[0] > a[1]);
        if (bad) {
            snprintf(msg, n, "key '%s' = %s is invalid; valid: %s", k->name,
                     fmt_vec(a, 2, v, sizeof v), k->range);
            return 1;
        }
        return 0;
    }
    case MLC_CFG_VEC3:
    case MLC_CFG_VEC3_OR_NULL: {
        const double *a = f;
        if (k->type == MLC_CFG_VEC3_OR_NULL && !key_count(cfg, k)) return 0;
        int bad = !isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2]);
        if (k->check == MLC_CFG_CHECK_NONZERO && !(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] > 0))
            bad = 1;
        if (bad) {
            snprintf(msg, n, "key '%s' = %s is invalid; valid: %s", k->name,
                     fmt_vec(a, 3, v, sizeof v), k->range);
            return 1;
        }
        return 0;
    }
    case MLC_CFG_AXIS:
        return check_axis(cfg, k, f, msg, n);
    case MLC_CFG_BOXES:
        return check_boxes(cfg, k, f, msg, n);
    case MLC_CFG_PARAMETERS:
        return check_parameters(cfg, k, f, msg, n);
    case MLC_CFG_REGION_MATERIALS:
        return check_region_materials(cfg, k, f, msg, n);
    }
    return 0;
}

/* ---- Applying one value ----------------------------------------------------------------- */
static mlc_status apply_value(const load_ctx *c, mlc_config *cfg, const mlc_config_key *k,
                              const char *label, const cJSON *it) {
    void *f = field(cfg, k->offset);
    mlc_status s = MLC_OK;
    char lab[160];
    switch (k->type) {
    case MLC_CFG_STRING: {
        if (!cJSON_IsString(it)) return type_error(c, label, "a string", it);
        size_t len = strlen(it->valuestring);
        if (len >= (size_t)k->capacity)
            return failf(c, MLC_EINVAL, "key '%s' is too long (%zu bytes; at most %d)", label, len,
                         k->capacity - 1);
        memset(f, 0, (size_t)k->capacity); /* keep the tail zero: configs compare by bytes */
        memcpy(f, it->valuestring, len);
        break;
    }
    case MLC_CFG_BOOL:
        if (!cJSON_IsBool(it)) return type_error(c, label, "a boolean (true or false)", it);
        *(int *)f = cJSON_IsTrue(it) ? 1 : 0;
        break;
    case MLC_CFG_INT:
        s = get_int(c, label, it, f);
        break;
    case MLC_CFG_NUMBER:
        s = get_number(c, label, it, f);
        break;
    case MLC_CFG_INT_ARRAY:
    case MLC_CFG_NUMBER_ARRAY:
    case MLC_CFG_BOXES:
    case MLC_CFG_PARAMETERS: {
        const char *want = k->type == MLC_CFG_INT_ARRAY      ? "an array of integers"
                           : k->type == MLC_CFG_NUMBER_ARRAY ? "a number or an array of numbers"
                           : k->type == MLC_CFG_BOXES        ? "an array of box objects"
                                                             : "an array of parameter objects";
        int *count = field(cfg, k->count_offset);
        /* "one value for all" reads naturally as a bare number. */
        if (k->type == MLC_CFG_NUMBER_ARRAY && cJSON_IsNumber(it)) {
            double x;
            s = get_number(c, label, it, &x);
            if (s != MLC_OK) return s;
            memset(f, 0, (size_t)k->capacity * sizeof(double));
            ((double *)f)[0] = x;
            *count = 1;
            break;
        }
        if (!cJSON_IsArray(it)) return type_error(c, label, want, it);
        int n = cJSON_GetArraySize(it);
        if (n > k->capacity)
            return failf(c, MLC_EINVAL, "key '%s' has %d elements; at most %d", label, n,
                         k->capacity);
        size_t elem = k->type == MLC_CFG_INT_ARRAY      ? sizeof(int)
                      : k->type == MLC_CFG_NUMBER_ARRAY ? sizeof(double)
                      : k->type == MLC_CFG_BOXES        ? sizeof(mlc_config_box)
                                                        : sizeof(mlc_config_param);
        memset(f, 0, (size_t)k->capacity * elem);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, it) {
            snprintf(lab, sizeof lab, "%s[%d]", label, i);
            if (k->type == MLC_CFG_INT_ARRAY)
                s = get_int(c, lab, e, (int *)f + i);
            else if (k->type == MLC_CFG_NUMBER_ARRAY)
                s = get_number(c, lab, e, (double *)f + i);
            else if (k->type == MLC_CFG_BOXES)
                s = get_box(c, lab, e, (mlc_config_box *)f + i);
            else
                s = get_param(c, lab, e, (mlc_config_param *)f + i);
            if (s != MLC_OK) return s;
            i++;
        }
        *count = n;
        break;
    }
    case MLC_CFG_REGION_MATERIALS:
        s = get_region_materials(c, label, it, f, k->capacity, field(cfg, k->count_offset));
        break;
    case MLC_CFG_RANGE:
        s = get_fixed_vec(c, label, it, 2, "[min, max] (an array of 2 numbers)", f);
        break;
    case MLC_CFG_VEC3:
        s = get_fixed_vec(c, label, it, 3, "[x, y, z] (3 numbers)", f);
        break;
    case MLC_CFG_VEC3_OR_NULL: {
        int *set = field(cfg, k->count_offset);
        if (cJSON_IsNull(it)) {
            memset(f, 0, 3 * sizeof(double));
            *set = 0;
            break;
        }
        s = get_fixed_vec(c, label, it, 3, "[x, y, z] (3 numbers) or null", f);
        if (s == MLC_OK) *set = 1;
        break;
    }
    case MLC_CFG_AXIS: {
        double *vec = field(cfg, k->count_offset);
        memset(f, 0, (size_t)k->capacity); /* keep the tail zero: configs compare by bytes */
        if (cJSON_IsString(it)) {
            const char *name = it->valuestring;
            if (strlen(name) >= (size_t)k->capacity || !axis_vector(name, vec))
                return failf(c, MLC_EINVAL,
                             "key '%s' = \"%.100s\" is invalid; valid: %s (e.g. "
                             "--set %s=+z for a mesh whose up axis is z)",
                             label, name, k->range, label);
            memcpy(f, name, strlen(name));
            break;
        }
        s = get_fixed_vec(c, label, it, 3, "an axis name (\"+z\") or [x, y, z] (3 numbers)", vec);
        break;
    }
    }
    if (s != MLC_OK) return s;
    /* Per-key ranges are checked here too, so the message can name the file or --set. */
    char msg[800];
    if (check_key(cfg, k, msg, sizeof msg)) return failf(c, MLC_EINVAL, "%s", msg);
    return MLC_OK;
}

/* ---- Unknown keys: suggest the nearest valid one ---------------------------------------- */
static const char *leaf(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

/* Names other tools give these settings (pycma's popsize, maxiter and maxfevals, the λ and σ
 * of the CMA-ES papers, common simulator and CLI words), which no edit distance would lead to
 * our key. Only for the hint: the configuration never accepts them. */
static const struct {
    const char *key, *aliases; /* aliases: space-separated */
} key_aliases[] = {
    {"cmaes.population", "popsize pop_size population_size lambda lambda_ lam"},
    {"cmaes.sigma0", "sigma sigma_0 step_size stepsize"},
    {"cmaes.seed", "random_seed rng_seed"},
    {"cmaes.generations", "maxiter max_iter maxiters max_iterations maxgen max_generations ngen"},
    {"cmaes.budget", "maxfevals max_fevals maxevals max_evals evaluations"},
    {"parallel.threads", "nthreads num_threads n_jobs jobs"},
    {"sim.dt", "timestep time_step"},
    {"sim.steps", "nsteps num_steps"},
    {"material.density", "rho"},
    {"output.dir", "outdir output_dir"},
    {"mesh.path", "mesh"},
};

/* Whether `word` is one of the space-separated words of `list`. */
static int in_word_list(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; n && (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

/* The key nearest to `name`: a known name from another tool (for the whole name or its last
 * component), else by edit distance of the dotted names, or of the last components plus a
 * small charge, so "simulation.steps" and a misplaced "dt" still find their key. NULL when
 * nothing is near enough to be a plausible typo. */
static const char *suggest(const char *name) {
    for (size_t i = 0; i < sizeof key_aliases / sizeof key_aliases[0]; i++)
        if (in_word_list(key_aliases[i].aliases, name) ||
            in_word_list(key_aliases[i].aliases, leaf(name)))
            return key_aliases[i].key;
    int best = INT_MAX;
    const char *arg = NULL;
    for (int i = 0; i < mlc_config_nkeys; i++) {
        const char *kn = mlc_config_keys[i].name;
        int d = MLC_MIN(mlc_edit_distance(name, kn), mlc_edit_distance(leaf(name), leaf(kn)) + 2);
        if (d < best) best = d, arg = kn;
    }
    int limit = MLC_MAX(2, (int)strlen(name) / 3);
    return best <= limit ? arg : NULL;
}

static mlc_status unknown_key(const load_ctx *c, const char *name) {
    const char *s = suggest(name);
    if (s) return failf(c, MLC_EINVAL, "unknown key '%s'; did you mean '%s'?", name, s);
    return failf(c, MLC_EINVAL,
                 "unknown key '%s' (sections: mesh, material, regions, subspace, actuation, "
                 "sim, contact, reference, objective, cmaes, output, parallel)",
                 name);
}

static int is_section(const char *name) {
    size_t n = strlen(name);
    for (int i = 0; i < mlc_config_nkeys; i++)
        if (strncmp(mlc_config_keys[i].name, name, n) == 0 && mlc_config_keys[i].name[n] == '.')
            return 1;
    return 0;
}

/* Apply an object of sections, {"sim": {"dt": ...}, ...}. */
static mlc_status apply_sections(const load_ctx *c, mlc_config *cfg, const cJSON *obj) {
    unsigned char seen[MAX_KEYS] = {0}; /* a key given twice is almost surely a mistake */
    const cJSON *sec;
    cJSON_ArrayForEach(sec, obj) {
        const char *sname = sec->string ? sec->string : "";
        /* "comment": free text (a string or an array of strings) describing the file, since
         * JSON has no comments; example configurations say there what they reproduce. */
        if (strcmp(sname, "comment") == 0) {
            int ok = cJSON_IsString(sec);
            if (cJSON_IsArray(sec)) {
                const cJSON *line;
                ok = 1;
                cJSON_ArrayForEach(line, sec) ok &= cJSON_IsString(line);
            }
            if (!ok) return type_error(c, "comment", "a string or an array of strings", sec);
            continue;
        }
        if (!is_section(sname)) {
            /* Report the first full key inside, so a wrong section still gets a suggestion. */
            if (cJSON_IsObject(sec) && sec->child && sec->child->string) {
                char full[300];
                snprintf(full, sizeof full, "%s.%s", sname, sec->child->string);
                return unknown_key(c, full);
            }
            return unknown_key(c, sname);
        }
        if (!cJSON_IsObject(sec)) {
            char lab[160];
            snprintf(lab, sizeof lab, "%s", sname);
            return type_error(c, lab, "an object of settings", sec);
        }
        const cJSON *item;
        cJSON_ArrayForEach(item, sec) {
            char full[300];
            snprintf(full, sizeof full, "%s.%s", sname, item->string ? item->string : "");
            const mlc_config_key *k = mlc_config_key_find(full);
            if (!k) return unknown_key(c, full);
            int idx = (int)(k - mlc_config_keys);
            if (seen[idx]) return failf(c, MLC_EINVAL, "key '%s' is given twice", full);
            seen[idx] = 1;
            mlc_status s = apply_value(c, cfg, k, k->name, item);
            if (s != MLC_OK) return s;
        }
    }
    return MLC_OK;
}

static mlc_status apply_root(const load_ctx *c, mlc_config *cfg, const cJSON *root) {
    char d[128];
    if (!cJSON_IsObject(root))
        return failf(c, MLC_EINVAL, "the top level must be a JSON object of sections, got %s",
                     describe(root, d, sizeof d));
    /* A params.json from optimize: {"config": {...effective config...}, "parameters": [...],
     * "J": ..., "seed": ..., ...}. "config" is not a section name, so the shapes cannot be
     * confused. */
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(root, "config");
    if (conf) {
        if (!cJSON_IsObject(conf)) return type_error(c, "config", "an object", conf);
        mlc_status s = apply_sections(c, cfg, conf);
        if (s != MLC_OK) return s;
        const cJSON *par = cJSON_GetObjectItemCaseSensitive(root, "parameters");
        if (par) {
            const mlc_config_key *k = mlc_config_key_find("actuation.parameters");
            s = apply_value(c, cfg, k, "parameters", par);
        }
        return s;
    }
    return apply_sections(c, cfg, root);
}

mlc_status mlc_config_apply_json(mlc_config *cfg, const cJSON *root, const char *source,
                                 mlc_err *err) {
    load_ctx c = {source ? source : "(config)", err};
    if (mlc_config_nkeys > MAX_KEYS) return failf(&c, MLC_EINVAL, "internal: key table too big");
    /* Work on a copy (memcpy keeps the zeroed padding) and commit only on success. */
    mlc_config *work = mlc_malloc(sizeof *work);
    if (!work) return failf(&c, MLC_ENOMEM, "out of memory");
    memcpy(work, cfg, sizeof *work);
    mlc_status s = apply_root(&c, work, root);
    if (s == MLC_OK) memcpy(cfg, work, sizeof *cfg);
    mlc_free(work);
    return s;
}

/* ---- Files ------------------------------------------------------------------------------ */
#define MAX_FILE_BYTES ((size_t)64 << 20) /* a config is kilobytes; refuse to slurp a disk */

/* Read a whole file into a NUL-terminated mlc_malloc buffer. */
static mlc_status read_all(const char *path, char **out, size_t *len, mlc_err *err) {
    mlc_status s = mlc_file_read_all(path, MAX_FILE_BYTES, "not a configuration", out, len, err);
    /* A configuration that cannot be read is a usage error (exit 2), not a runtime one. */
    if (s == MLC_EIO) s = err ? (err->code = MLC_EINVAL) : MLC_EINVAL;
    return s;
}

/* "PATH:LINE:COL: malformed JSON near '...'" for a parse failure at byte `pos`. */
static mlc_status syntax_error(const char *path, const char *text, size_t len, size_t pos,
                               mlc_err *err) {
    if (pos > len) pos = len;
    int line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n')
            line++, col = 1;
        else
            col++;
    }
    /* cJSON reports the byte where it gave up, which is often just past the culprit (after
     * "0.01,}" it points at the newline), so show a little of the line before it too. */
    size_t line_start = pos;
    while (line_start > 0 && text[line_start - 1] != '\n')
        line_start--;
    size_t from = pos - MLC_MIN(pos - line_start, (size_t)12);
    char near[40];
    size_t m = 0;
    while (from + m < len && m < 32 && text[from + m] != '\n' && text[from + m] != '\r') {
        unsigned char ch = (unsigned char)text[from + m];
        near[m] = (ch < 32 || ch == 127) ? ' ' : (char)ch;
        m++;
    }
    near[m] = '\0';
    if (m == 0 && pos >= len)
        return mlc_errf(err, MLC_EPARSE, "%s:%d:%d: malformed JSON near end of input", path, line,
                        col);
    return mlc_errf(err, MLC_EPARSE, "%s:%d:%d: malformed JSON near '%s'", path, line, col, near);
}

/* A relative mesh.path written in a configuration file is looked up next to the configuration
 * first, so a config and its mesh travel together and run from any directory
 * (examples/table1_bat.json says "../data/cat.off.gz"), the way #include resolves. It becomes
 * DIR/PATH, DIR being the config's directory as given, so the result is again relative to the
 * working directory like every other path. When nothing is there the path stays relative to
 * the working directory: that is how the configurations modalloco writes (config.json, the
 * "config" of a params.json) record it, and how earlier versions read it, so both keep
 * working (`--resume DIR` loads DIR/config.json). Paths from the command line (--set, a mesh
 * argument) are never rewritten. */
static mlc_status resolve_file_path(char *dst, const cJSON *root, const char *section,
                                    const char *key, const char *path, mlc_err *err) {
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, section);
    const cJSON *mp = sec ? cJSON_GetObjectItemCaseSensitive(sec, key) : NULL;
    if (!cJSON_IsString(mp) || !mp->valuestring[0] || mp->valuestring[0] == '/') return MLC_OK;
    const char *slash = strrchr(path, '/');
    if (!slash) return MLC_OK;             /* the config is in the working directory */
    int dir_len = (int)(slash - path) + 1; /* keep the slash ("/x.json" -> "/") */
    char joined[MLC_CONFIG_PATH_MAX];
    int n = snprintf(joined, sizeof joined, "%.*s%s", dir_len, path, mp->valuestring);
    if (n < 0 || (size_t)n >= sizeof joined)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: %s.%s taken relative to the configuration's directory is "
                        "longer than %zu bytes; give a shorter or absolute path",
                        path, section, key, sizeof joined - 1);
    /* A TetGen stem ("body.1") names body.1.node. */
    char node[sizeof joined + 8];
    snprintf(node, sizeof node, "%s.node", joined);
    if (mlc_file_exists(joined) || mlc_file_exists(node)) memcpy(dst, joined, (size_t)n + 1);
    return MLC_OK;
}

/* mesh.path, regions.file (a label file travels with its mesh), contact.heightfield and
 * objective.path resolve the same way. */
static mlc_status resolve_mesh_path(mlc_config *cfg, const cJSON *root, const char *path,
                                    mlc_err *err) {
    mlc_status s = resolve_file_path(cfg->mesh.path, root, "mesh", "path", path, err);
    if (s == MLC_OK) s = resolve_file_path(cfg->regions.file, root, "regions", "file", path, err);
    if (s == MLC_OK)
        s = resolve_file_path(cfg->contact.heightfield, root, "contact", "heightfield", path, err);
    if (s == MLC_OK)
        s = resolve_file_path(cfg->objective.path, root, "objective", "path", path, err);
    return s;
}

mlc_status mlc_config_load_file(mlc_config *cfg, const char *path, mlc_err *err) {
    char *text = NULL;
    size_t len = 0;
    mlc_status s = read_all(path, &text, &len, err);
    if (s != MLC_OK) return s;
    /* Editors on some systems prepend a UTF-8 byte-order mark; cJSON does not skip it. */
    size_t skip = (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
    /* The length includes the NUL: with require_null_terminated cJSON looks for it inside the
     * buffer, which is also what rejects trailing garbage ("{} x"). */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text + skip, len - skip + 1, &end, 1);
    if (!root) {
        size_t pos = end ? (size_t)(end - text) : skip;
        s = syntax_error(path, text, len, pos, err);
    } else {
        s = mlc_config_apply_json(cfg, root, path, err);
        if (s == MLC_OK) s = resolve_mesh_path(cfg, root, path, err);
        cJSON_Delete(root);
    }
    mlc_free(text);
    return s;
}

/* ---- --set ------------------------------------------------------------------------------ */
mlc_status mlc_config_set(mlc_config *cfg, const char *assignment, mlc_err *err) {
    load_ctx c = {"--set", err};
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return failf(&c, MLC_EINVAL, "expected KEY=VALUE (e.g. sim.steps=500), got '%s'",
                     assignment);
    size_t klen = (size_t)(eq - assignment);
    if (klen >= 256) return failf(&c, MLC_EINVAL, "key '%.40s...' is too long", assignment);
    char key[256];
    memcpy(key, assignment, klen);
    key[klen] = '\0';
    const char *text = eq + 1;

    /* JSON when it parses as a whole, else a bare string; string keys take any non-string
     * literal verbatim (output.dir=123 means the directory "123"). */
    cJSON *value = cJSON_ParseWithOpts(text, NULL, 1);
    const mlc_config_key *k = mlc_config_key_find(key);
    if (!value || (k && k->type == MLC_CFG_STRING && !cJSON_IsString(value))) {
        cJSON_Delete(value);
        value = cJSON_CreateString(text);
    }
    cJSON *root = cJSON_CreateObject();
    mlc_status s = MLC_OK;
    if (!value || !root) {
        cJSON_Delete(value);
        s = failf(&c, MLC_ENOMEM, "out of memory");
        goto done;
    }
    /* Build {"section": {"rest": value}} (or {"key": value} for a bare section) and reuse the
     * file path, so --set gets the same checks and messages as a file. */
    char *dot = strchr(key, '.');
    if (dot) {
        *dot = '\0';
        cJSON *sec = cJSON_CreateObject();
        if (!sec || !cJSON_AddItemToObject(root, key, sec)) {
            cJSON_Delete(sec);
            cJSON_Delete(value);
            s = failf(&c, MLC_ENOMEM, "out of memory");
            goto done;
        }
        if (!cJSON_AddItemToObject(sec, dot + 1, value)) {
            cJSON_Delete(value);
            s = failf(&c, MLC_ENOMEM, "out of memory");
            goto done;
        }
    } else if (!cJSON_AddItemToObject(root, key, value)) {
        cJSON_Delete(value);
        s = failf(&c, MLC_ENOMEM, "out of memory");
        goto done;
    }
    s = mlc_config_apply_json(cfg, root, "--set", err);
done:
    cJSON_Delete(root);
    return s;
}

mlc_status mlc_config_resolve_local_modes(mlc_config *cfg, const cJSON *base_obj,
                                          const char *base_path, const char *source,
                                          const char *const *sets, int nsets, mlc_err *err) {
    if (cfg->actuation.local_modes <= 0 || cfg->actuation.nmode_list > 0) return MLC_OK;
    mlc_config *probe = mlc_malloc(sizeof *probe);
    if (!probe) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    mlc_config_defaults(probe);
    probe->actuation.modes = -1; /* unset: a layer that gives actuation.modes overwrites it */
    mlc_status s = MLC_OK;
    size_t n = base_path ? strlen(base_path) : 0;
    if (base_obj)
        s = mlc_config_apply_json(probe, base_obj, source, err);
    else if (n >= 5 && strcmp(base_path + n - 5, ".json") == 0)
        s = mlc_config_load_file(probe, base_path, err);
    for (int i = 0; s == MLC_OK && i < nsets; i++)
        s = mlc_config_set(probe, sets[i], err);
    if (s == MLC_OK && probe->actuation.modes == -1) cfg->actuation.modes = 0;
    mlc_free(probe);
    return s;
}

/* ---- Validation ------------------------------------------------------------------------- */
mlc_status mlc_config_validate(const mlc_config *cfg, mlc_err *err) {
    char msg[800];
    for (int i = 0; i < mlc_config_nkeys; i++)
        if (check_key(cfg, &mlc_config_keys[i], msg, sizeof msg))
            return mlc_errf(err, MLC_EINVAL, "%s", msg);

    /* Checks that involve several keys. m is the number of driven modes. */
    const mlc_config_actuation *a = &cfg->actuation;
    if (a->modes == 0 && a->nmode_list == 0 && a->local_modes == 0)
        return mlc_errf(err, MLC_EINVAL,
                        "key 'actuation.modes' = 0 leaves nothing to drive; valid: 1..64, or 0 "
                        "together with actuation.local_modes > 0");
    /* With local modes the count depends on the regions, known only when the subspace is
     * built: the gait space checks fixed_periods and select then. */
    if (a->local_modes == 0) {
        int m = a->nmode_list > 0 ? a->nmode_list : a->modes;
        int k = a->sinusoids;
        int nf = a->nfixed_periods;
        if (nf != 0 && nf != 1 && nf != m * k)
            return mlc_errf(err, MLC_EINVAL,
                            "key 'actuation.fixed_periods' has %d values; valid: 0, 1 or m*k = %d "
                            "(m = %d modes, k = %d sinusoids)",
                            nf, m * k, m, k);
        if (a->select > m)
            return mlc_errf(err, MLC_EINVAL,
                            "key 'actuation.select' = %d is out of range; valid: 0..m = 0..%d",
                            a->select, m);
    }
    const mlc_config_objective *ob = &cfg->objective;
    if (!strcmp(ob->kind, "turn")) {
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
    if (!strcmp(ob->kind, "target") && !ob->target_set)
        return mlc_errf(err, MLC_EINVAL,
                        "objective.kind \"target\" needs key 'objective.target' = [x,y,z], "
                        "where the centre of mass should end");
    if (!strcmp(ob->kind, "path") && !ob->path[0])
        return mlc_errf(err, MLC_EINVAL,
                        "objective.kind \"path\" needs key 'objective.path': a CSV file "
                        "time,x,y,z with a header line");
    const mlc_config_cmaes *cm = &cfg->cmaes;
    if (cm->restarts > 0 && !cm->early_stop && cm->restart_collapse <= 0 && cm->restart_stall <= 0)
        return mlc_errf(err, MLC_EINVAL,
                        "key 'cmaes.restarts' = %d has nothing to end a run: set "
                        "'cmaes.restart_collapse' or 'cmaes.restart_stall' > 0 (or "
                        "'cmaes.early_stop' = true), or restarts = 0",
                        cm->restarts);
    /* A budget below one generation's worst case (every candidate and the mean walk and are
     * replayed) would end the run before it started. */
    long gen_cost = ((long)cm->population + 1) * (cm->robust_samples + 1);
    if (cm->budget > 0 && cm->budget < gen_cost)
        return mlc_errf(err, MLC_EINVAL,
                        "key 'cmaes.budget' = %d is below one generation's worst case, (population "
                        "+ 1) × (robust_samples + 1) = %ld rollouts; raise it, or 0 for "
                        "generations × population",
                        cm->budget, gen_cost);
    const mlc_config_contact *ct = &cfg->contact;
    int terrain = ct->slope > 0 || ct->heightfield[0] || ct->nboxes > 0 || ct->anisotropy != 1;
    if (ct->slope > 0 && ct->heightfield[0])
        return mlc_errf(err, MLC_EINVAL,
                        "keys 'contact.slope' = %g and 'contact.heightfield' = \"%s\" both set "
                        "the ground; give the slope in the heightfield's heights, or drop one",
                        ct->slope, ct->heightfield);
    if (terrain && strcmp(ct->model, "equality") == 0)
        return mlc_errf(err, MLC_EINVAL,
                        "key 'contact.model' = \"equality\" works on the flat ground only; use "
                        "\"complementarity\" with contact.slope, contact.heightfield, "
                        "contact.boxes or contact.anisotropy");
    if (ct->heightfield[0]) { /* read it now: a bad file is an input error before any work */
        mlc_terrain t;
        mlc_terrain_flat(&t, 0, 0);
        mlc_status s = mlc_terrain_read_heightfield(&t, ct->heightfield, err);
        mlc_terrain_free(&t);
        if (s != MLC_OK) return s;
    }
    return MLC_OK;
}

/* ---- Output ----------------------------------------------------------------------------- */
/* Add `item` to `obj`; deletes it and returns 0 when either allocation failed. */
static int add(cJSON *obj, const char *name, cJSON *item) {
    if (!item) return 0;
    if (obj == NULL ||
        !(name ? cJSON_AddItemToObject(obj, name, item) : cJSON_AddItemToArray(obj, item))) {
        cJSON_Delete(item);
        return 0;
    }
    return 1;
}

/* cJSON prints a double with %.15g and keeps that when it reads back within an epsilon, which
 * can lose the last bit (-1.0000000000000002 becomes -1). For the text form we print numbers
 * ourselves, shortest exact form, as raw items; the tree form keeps ordinary numbers so that
 * callers can read it. Non-finite values (never valid) print as null, as cJSON would. */
static cJSON *num(double x, int exact) {
    if (!exact) return cJSON_CreateNumber(x);
    if (!isfinite(x)) return cJSON_CreateNull();
    char buf[32];
    return cJSON_CreateRaw(fmt_num(x, buf, sizeof buf));
}

static cJSON *number_array(const double *v, int n, int exact) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++)
        if (!add(arr, NULL, num(v[i], exact))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

static cJSON *params_to_cjson(const mlc_config_param *p, int n, int exact) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!add(arr, NULL, o)) goto fail;
        cJSON *sins = cJSON_CreateArray();
        if (!add(o, "mode", cJSON_CreateNumber(p[i].mode)) || !add(o, "sinusoids", sins)) goto fail;
        for (int j = 0; j < p[i].nsinusoids; j++) {
            const mlc_config_sinusoid *s = &p[i].sinusoids[j];
            cJSON *so = cJSON_CreateObject();
            if (!add(sins, NULL, so) || !add(so, "amplitude", num(s->amplitude, exact)) ||
                !add(so, "period", num(s->period, exact)) ||
                !add(so, "phase", num(s->phase, exact)))
                goto fail;
        }
    }
    return arr;
fail:
    cJSON_Delete(arr);
    return NULL;
}

static cJSON *value_to_cjson(const mlc_config *cfg, const mlc_config_key *k, int exact) {
    const void *f = cfield(cfg, k->offset);
    switch (k->type) {
    case MLC_CFG_STRING:
        return cJSON_CreateString(f);
    case MLC_CFG_BOOL:
        return cJSON_CreateBool(*(const int *)f != 0);
    case MLC_CFG_INT:
        return cJSON_CreateNumber(*(const int *)f);
    case MLC_CFG_NUMBER:
        return num(*(const double *)f, exact);
    case MLC_CFG_INT_ARRAY: {
        const int *a = f;
        int n = key_count(cfg, k);
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; arr && i < n; i++)
            if (!add(arr, NULL, cJSON_CreateNumber(a[i]))) {
                cJSON_Delete(arr);
                return NULL;
            }
        return arr;
    }
    case MLC_CFG_NUMBER_ARRAY:
        return number_array(f, key_count(cfg, k), exact);
    case MLC_CFG_RANGE:
        return number_array(f, 2, exact);
    case MLC_CFG_VEC3:
        return number_array(f, 3, exact);
    case MLC_CFG_VEC3_OR_NULL:
        if (!key_count(cfg, k)) return cJSON_CreateNull();
        return number_array(f, 3, exact);
    case MLC_CFG_AXIS:
        if (((const char *)f)[0]) return cJSON_CreateString(f);
        return number_array(cfield(cfg, k->count_offset), 3, exact);
    case MLC_CFG_PARAMETERS:
        return params_to_cjson(f, key_count(cfg, k), exact);
    case MLC_CFG_REGION_MATERIALS: {
        const mlc_config_region_material *r = f;
        int n = key_count(cfg, k);
        cJSON *obj = cJSON_CreateObject();
        for (int i = 0; obj && i < n; i++) {
            char name[16];
            snprintf(name, sizeof name, "%d", r[i].label);
            cJSON *o = cJSON_CreateObject();
            if (!add(obj, name, o)) goto fail_regions;
            for (int q = 0; q < 4; q++)
                if ((r[i].set & (1 << q)) &&
                    !add(o, region_members[q], num(region_get(&r[i], q), exact)))
                    goto fail_regions;
        }
        return obj;
    fail_regions:
        cJSON_Delete(obj);
        return NULL;
    }
    case MLC_CFG_BOXES: {
        const mlc_config_box *b = f;
        int n = key_count(cfg, k);
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; arr && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            if (!add(arr, NULL, o) || !add(o, "min", number_array(b[i].min, 3, exact)) ||
                !add(o, "max", number_array(b[i].max, 3, exact)) ||
                (b[i].has_friction && !add(o, "friction", num(b[i].friction, exact)))) {
                cJSON_Delete(arr);
                return NULL;
            }
        }
        return arr;
    }
    }
    return NULL;
}

static cJSON *to_tree(const mlc_config *cfg, int exact) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON *sec = NULL;
    char sname[32] = "";
    for (int i = 0; i < mlc_config_nkeys; i++) {
        const mlc_config_key *k = &mlc_config_keys[i];
        const char *dot = strchr(k->name, '.');
        size_t sl = (size_t)(dot - k->name);
        /* The table lists keys grouped by section, so a new prefix starts a new object. */
        if (strlen(sname) != sl || strncmp(sname, k->name, sl) != 0) {
            memcpy(sname, k->name, sl);
            sname[sl] = '\0';
            sec = cJSON_CreateObject();
            if (!add(root, sname, sec)) goto fail;
        }
        if (!add(sec, dot + 1, value_to_cjson(cfg, k, exact))) goto fail;
    }
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}

cJSON *mlc_config_to_cjson(const mlc_config *cfg) {
    return to_tree(cfg, 0);
}

char *mlc_config_to_json(const mlc_config *cfg) {
    cJSON *root = to_tree(cfg, 1);
    if (!root) return NULL;
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return NULL;
    /* Copy into our allocator so callers free everything the same way (mlc_free). */
    size_t n = strlen(text);
    char *out = mlc_malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        out[n] = '\n';
        out[n + 1] = '\0';
    }
    cJSON_free(text);
    return out;
}
