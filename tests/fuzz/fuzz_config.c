/* fuzz_config.c: libFuzzer target for JSON configuration files: mlc_config_load_file on top
 * of the defaults, then mlc_config_validate, as the CLI does. A configuration that loads and
 * validates must also print (mlc_config_to_json) and read back to the same printed text. */
#include "config.h"
#include "fuzz_util.h"

#ifndef FUZZ_NAME /* fuzz_params.c reuses this target under its own name */
#define FUZZ_NAME "config"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("in.json", data, size);
    long live = mlc_alloc_live();
    static mlc_config cfg, again;
    mlc_err err = {0};
    mlc_config_defaults(&cfg);
    mlc_status st = mlc_config_load_file(&cfg, path, &err);
    if (st == MLC_OK) st = mlc_config_validate(&cfg, &err);
    fuzz_check_msg(st, &err, FUZZ_NAME);
    if (st != MLC_OK && st != MLC_EPARSE && st != MLC_EINVAL) abort();
    if (st == MLC_OK) {
        char *text = mlc_config_to_json(&cfg);
        if (!text) abort();
        const char *p2 = fuzz_write("in.cache", (const uint8_t *)text, strlen(text));
        mlc_config_defaults(&again);
        if (mlc_config_load_file(&again, p2, &err) != MLC_OK) {
            fprintf(stderr, "printed configuration does not load back: %s\n%s\n", err.msg, text);
            abort();
        }
        char *text2 = mlc_config_to_json(&again);
        if (!text2 || strcmp(text, text2) != 0) {
            fprintf(stderr, "configuration changed on a round trip:\n%s\n%s\n", text,
                    text2 ? text2 : "(null)");
            abort();
        }
        mlc_free(text);
        mlc_free(text2);
    }
    fuzz_check_live(live, FUZZ_NAME);
    return 0;
}
