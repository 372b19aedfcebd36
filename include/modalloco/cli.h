/* cli.h: the command-line front end. Parses `modalloco COMMAND [options]`, prints results on
 * stdout and diagnostics on stderr, and returns the process exit code (README "Commands"). */
#ifndef MODALLOCO_CLI_H
#define MODALLOCO_CLI_H

int mlc_cli_main(int argc, char **argv);

#endif
