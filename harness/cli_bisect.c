/* harness/cli_bisect.c — bisect and matrix (being written). */
#include "cli.h"

int cli_bisect(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "detgate bisect: not implemented yet\n"); return CLI_UNTESTED; }
int cli_bisect_step(int argc, char **argv) { (void)argc; (void)argv; return CLI_UNTESTED; }
int cli_matrix(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "detgate matrix: not implemented yet\n"); return CLI_UNTESTED; }
