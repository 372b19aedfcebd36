/* cli.c: command-line front end (placeholder until the commands land). */
#include "modalloco/cli.h"

#include <stdio.h>
#include <string.h>

#include "modalloco/base.h"

int mlc_cli_main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("modalloco %s\n", MLC_VERSION);
        return 0;
    }
    fprintf(stderr, "usage: modalloco COMMAND [options]\n");
    return 2;
}
