/* main.c: the program entry point; everything else lives in the core library (cli.c). */
#include "modalloco/cli.h"

int main(int argc, char **argv) {
    return mlc_cli_main(argc, argv);
}
