/* cmaes_keys.c: the rows of the keys cmaes.* (keys.h) and the rules between them. */
#include "cmaes_keys.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_cmaes
static const mlc_key cmaes_keys[] = {
    {.name = "cmaes.population",
     .type_name = "int",
     .default_json = "16",
     .range = ">= 2",
     .meaning = "population λ",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(population),
     MLC_KEY_GE(2)},
    {.name = "cmaes.generations",
     .type_name = "int",
     .default_json = "200",
     .range = ">= 1",
     .meaning = "generation budget",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(generations),
     MLC_KEY_GE(1)},
    {.name = "cmaes.sigma0",
     .type_name = "number",
     .default_json = "0",
     .range = ">= 0",
     .meaning =
         "initial step size in the normalized [0,1] box; 0 = chosen from the number of driven "
         "signals s (modes × sinusoids) and the skinning modes w: 0.3 × min(1, 8 / s) × "
         "min(1, 5 / w) (sqrt(min(1, 8 / s)) for roll and flip, where turning over is the task), "
         "so that the first guesses strain the body alike however many signals add up and "
         "however finely the subspace resolves it (`optimize` prints the value)",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(sigma0),
     MLC_KEY_GE(0)},
    {.name = "cmaes.seed",
     .type_name = "int",
     .default_json = "1",
     .range = "",
     .meaning = "seed of everything random",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(seed)},
    {.name = "cmaes.restarts",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "restarts after a run stops (on cmaes.restart_collapse, cmaes.restart_stall "
                "or, with cmaes.early_stop, pycma's criteria), within the budget; 0 = off",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(restarts),
     MLC_KEY_GE(0)},
    {.name = "cmaes.restart_strategy",
     .type_name = "string",
     .default_json = "\"ipop\"",
     .range = "\"ipop\" or \"bipop\"",
     .meaning = "\"ipop\": each restart doubles the population; \"bipop\": large IPOP runs "
                "interleaved with small runs of random population and step size (Hansen 2009)",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(restart_strategy),
     MLC_KEY_BYTES(restart_strategy),
     .choices = "ipop|bipop"},
    {.name = "cmaes.restart_collapse",
     .type_name = "number",
     .default_json = "0.005",
     .range = ">= 0",
     .meaning = "with restarts: a run ends when σ·max_i sqrt(C_ii), its widest spread in the "
                "normalized box, falls below this; 0 = off",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(restart_collapse),
     MLC_KEY_GE(0)},
    {.name = "cmaes.restart_stall",
     .type_name = "int",
     .default_json = "80",
     .range = ">= 0",
     .meaning = "with restarts: a run ends when its best score has not improved for this many "
                "generations; 0 = off",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(restart_stall),
     MLC_KEY_GE(0)},
    {.name = "cmaes.restart_room",
     .type_name = "number",
     .default_json = "1",
     .range = ">= 0",
     .meaning = "with restarts: a restart begins only when the budget left is at least this many "
                "times the evaluations of the run that ended, else the job ends there "
                "(`stop_reason` `\"restart_room\"`); 0 = restart whatever is left",
     .type = MLC_KEY_NUMBER,
     MLC_KEY_FIELD(restart_room),
     MLC_KEY_GE(0)},
    {.name = "cmaes.diagonal",
     .type_name = "int",
     .default_json = "-1",
     .range = ">= -1",
     .meaning =
         "generations at the start of every run with a diagonal covariance learned (n + 2)/3 times "
         "faster (sep-CMA-ES, pycma's CMA_diagonal), then full; 0 = off; -1 = chosen from the "
         "dimension: diagonal throughout with 100 parameters or more, where the full covariance "
         "barely adapts within the budget, else off (`optimize` says when it chose it)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(diagonal),
     MLC_KEY_GE(-1)},
    {.name = "cmaes.budget",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "rollouts the run may spend in all (generations, means, replays, restarts, the "
                "polish); 0 = cmaes.generations × cmaes.population candidate evaluations",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(budget),
     MLC_KEY_GE(0)},
    {.name = "cmaes.early_stop",
     .type_name = "bool",
     .default_json = "false",
     .range = "",
     .meaning = "let pycma's stop criteria (tolfun, tolx, tolflatfitness, ...) end a run "
                "before the generation budget",
     .type = MLC_KEY_BOOL,
     MLC_KEY_FIELD(early_stop)},
    {.name = "cmaes.mean_every",
     .type_name = "int",
     .default_json = "10",
     .range = ">= 0",
     .meaning = "score the distribution mean every this many generations (generations 1, 1 + N, "
                "...; history.csv `mean_J`, empty in the others): one more rollout in such a "
                "generation; 0 = never",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(mean_every),
     MLC_KEY_GE(0)},
    {.name = "cmaes.robust_samples",
     .type_name = "int",
     .default_json = "8",
     .range = "0..16",
     .meaning = "R: a candidate that walks scores the worst J of its rollout and R replays "
                "with perturbed parameters (robust gaits; costs up to R more rollouts each)",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(robust_samples),
     MLC_KEY_BETWEEN('[', 0, 16, ']')},
    {.name = "cmaes.robust_scope",
     .type_name = "string",
     .default_json = "\"improving\"",
     .range = "\"walkers\" or \"improving\"",
     .meaning = "which candidates pay for the cmaes.robust_samples replays: \"walkers\" (every "
                "candidate that walks) or \"improving\" (only a walker whose nominal J beats the "
                "best score so far, its replays stopping once one reaches that score, so the "
                "best-ever gait holds its gain under perturbation at a small share of the cost)",
     .type = MLC_KEY_STRING,
     MLC_KEY_FIELD(robust_scope),
     MLC_KEY_BYTES(robust_scope),
     .choices = "walkers|improving"},
    {.name = "cmaes.polish",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "steps of finite-difference gradient descent on the robust objective after "
                "CMA-ES (docs/method.md §8); never returns a worse gait; 0 = off",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(polish),
     MLC_KEY_GE(0)},
    {.name = "cmaes.start",
     .type_name = "number array",
     .default_json = "[]",
     .range = "[] or one value in [0, 1] per parameter",
     .meaning = "the search's first mean in the normalized [0,1] box, in the order of "
                "the gait's parameters (per mode and sinusoid: amplitude, period, phase); [] = the "
                "box's centre (docs/method.md §8); reference.refine's second search starts from "
                "the first search's gait this way (its config.json)",
     .type = MLC_KEY_NUMBER_ARRAY,
     MLC_KEY_FIELD(start),
     MLC_KEY_COUNT(nstart),
     MLC_KEY_ELEMS(start),
     MLC_KEY_BETWEEN('[', 0, 1, ']')},
};

/* Rules between the CMA-ES keys. */
static mlc_status cmaes_check(const void *settings, mlc_err *err) {
    const mlc_config_cmaes *cm = settings;
    if (cm->restarts > 0 && !cm->early_stop && cm->restart_collapse <= 0 && cm->restart_stall <= 0)
        return mlc_errf(err, MLC_EINVAL,
                        "key 'cmaes.restarts' = %d has nothing to end a run: set "
                        "'cmaes.restart_collapse' or 'cmaes.restart_stall' > 0 (or "
                        "'cmaes.early_stop' = true), or restarts = 0",
                        cm->restarts);
    const long gen_cost = mlc_cmaes_generation_cost(cm);
    if (cm->budget > 0 && cm->budget < gen_cost)
        return mlc_errf(err, MLC_EINVAL,
                        "key 'cmaes.budget' = %d is below one generation's worst case, (population "
                        "+ 1) × (robust_samples + 1) = %ld rollouts; raise it, or 0 for "
                        "generations × population",
                        cm->budget, gen_cost);
    return MLC_OK;
}

const mlc_key_section mlc_cmaes_key_section = MLC_KEY_SECTION("cmaes", cmaes_keys, cmaes_check);
