/* fuzz_params.c: libFuzzer target for params.json files, the {"config": {...}, "parameters":
 * [...], "J": ...} shape that optimize writes and simulate replays. The code path is the one of
 * fuzz_config.c (mlc_config_load_file, mlc_config_validate, print and read back), so this
 * target is that file under another name; its seed corpus differs, so the fuzzer starts deep
 * inside the "parameters" parser. */
#define FUZZ_NAME "params"
#include "fuzz_config.c"
