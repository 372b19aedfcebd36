/* fullspace_keys.c: the rows of the keys reference.* (keys.h). */
#include "fullspace_keys.h"

#include "fullspace.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_reference
static const mlc_key reference_keys[] = {
    {.name = "reference.tolerance",
     .type_name = "number",
     .default_json = MLC_STR(MLC_FULLSPACE_TOLERANCE),
     .range = ">= 0",
     .meaning = "simulate --full-space: the reference iterates each step until no coordinate "
                "changes by more than this × the body extent in an iteration (0 = always "
                "reference.max_iterations); sim.iterations is the reduced model's",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(tolerance),
     MLC_KEY_GE(0)},
    {.name = "reference.max_iterations",
     .type_name = "int",
     .default_json = MLC_STR(MLC_FULLSPACE_MAX_ITERATIONS),
     .range = ">= 1",
     .meaning = "simulate --full-space: the most iterations a step of the reference may take "
                "(steps that stop here are counted in fullspace.json)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(max_iterations),
     MLC_KEY_GE(1)},
    {.name = "reference.contact_samples",
     .type_name = "int",
     .default_json = "0",
     .range = ">= -1",
     .meaning = "simulate --full-space: where the reference's contact acts: 0 = every surface "
                "vertex (terrain and equality contact: 512 samples), N > 0 = N samples placed "
                "like the reduced model's (subspace.contact_band), -1 = the reduced model's "
                "samples",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(contact_samples),
     MLC_KEY_GE(-1)},
    {.name = "reference.contact_columns",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "simulate --full-space with contact on every surface vertex: the surface "
                "vertices whose columns of the inverse system matrix are kept (8 bytes × "
                "vertices each); 0 = " MLC_STR(
                    MLC_FULLSPACE_CONTACT_COLUMNS) ", doubled when "
                                                   "more vertices are near the ground at once, up "
                                                   "to every surface vertex within "
                                                   "a quarter of --max-memory; N = N, and more "
                                                   "vertices near the ground at once "
                                                   "stop the reference",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(contact_columns),
     MLC_KEY_GE(0)},
    {.name = "reference.threads",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "threads of the full-space reference (its per-tet work and its sparse solve; "
                "the same bits for any count); 0 = the command's: optimize's --threads (shared "
                "among the candidates of reference.rerank, which are replayed side by side), "
                "simulate's every core, at most one per 4096 tets",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(threads),
     MLC_KEY_GE(0)},
    {.name = "reference.acceleration",
     .type_name = "int",
     .default_json = MLC_STR(MLC_FULLSPACE_ANDERSON),
     .range = "in [0, " MLC_STR(MLC_FULLSPACE_ANDERSON_MAX) "]",
     .meaning = "simulate --full-space: Anderson acceleration of the reference's iterations "
                "over this many past iterations (0 = plain local-global iterations; the "
                "stopping rule is the same)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(acceleration),
     MLC_KEY_BETWEEN('[', 0, MLC_FULLSPACE_ANDERSON_MAX, ']')},
    {.name = "reference.check",
     .type_name = "int",
     .default_json = "0",
     .range = "0 or 1",
     .meaning = "optimize: 1 = replay the returned gait in the full-space reference (the "
                "settings above) and report the share of its travel it keeps there "
                "(result.json \"transfer\"); costs one full-space rollout",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(check),
     MLC_KEY_BETWEEN('[', 0, 1, ']')},
    {.name = "reference.rerank",
     .type_name = "int",
     .default_json = "-1",
     .range = "in [-1, " MLC_STR(MLC_REFERENCE_RERANK_MAX) "]",
     .meaning = "optimize: K > 0 = replay up to K distinct candidates (the returned gait after "
                "the polish, the best-ever, the final mean, each CMA-ES run's best, the last "
                "generations' bests) in the full-space reference and return the credible one "
                "with the lowest full-space J (result.json \"rerank\"); 0 = off; costs K "
                "full-space rollouts; -1 = chosen from the body: as many as fit in 8e6 "
                "tet-steps (tets x sim.steps each, 4-7 CPU s in all), at most 16, and else the "
                "returned gait alone while its replay fits in 30e6 (at 300 steps: a 1k-tet "
                "body 16, 3k 8, 20k-100k 1, over 100k tets none; `optimize` says what it "
                "chose)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(rerank),
     MLC_KEY_BETWEEN('[', -1, MLC_REFERENCE_RERANK_MAX, ']')},
    {.name = "reference.refine",
     .type_name = "number",
     .default_json = "0.5",
     .range = "in [0, 100]",
     .meaning = "optimize, objective.kind locomotion: when the returned gait's full-space "
                "replay (reference.check, or reference.rerank's) keeps less than this share of "
                "its travel or of its J (full-space J / reduced J: a gait that turns from the "
                "walking direction keeps little), or is not credible there, search once more with "
                "subspace.skinning_modes doubled (at most 32), from that gait with 3/10 of the "
                "generations, in OUT/finer; when that gait does not hold either, once more in "
                "that model from the box's centre with every generation, in OUT/finer_centre; "
                "return the gait that does best in the reference (holding there first, then "
                "credible there, then the lower full-space J; result.json \"refine\"); 0 = "
                "never; costs one or two more searches at the finer model's price",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(refine),
     MLC_KEY_BETWEEN('[', 0, 100, ']')},
};

const mlc_key_section mlc_reference_key_section =
    MLC_KEY_SECTION("reference", reference_keys, NULL);
