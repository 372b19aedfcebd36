/* parallel_keys.c: the rows of the keys parallel.* (keys.h). */
#include "parallel_keys.h"

#undef MLC_KEY_STRUCT
#define MLC_KEY_STRUCT mlc_config_parallel
static const mlc_key parallel_keys[] = {
    {.name = "parallel.threads",
     .type_name = "int",
     .default_json = "0",
     .range = ">= 0",
     .meaning = "worker threads, 0 = all cores (rollouts; the precompute runs 2 branches and "
                "splits a large factor's solves over all of them); results are the same for any "
                "count",
     .type = MLC_KEY_INT,
     MLC_KEY_FIELD(threads),
     MLC_KEY_GE(0)},
};

const mlc_key_section mlc_parallel_key_section = MLC_KEY_SECTION("parallel", parallel_keys, NULL);
