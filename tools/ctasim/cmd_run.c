/* `ctasim run`: runs one kernel harness on a backend and prints a summary. */
#include <stdio.h>

#include "cmd.h"

int cta_cmd_run(int argc, char **argv)
{
	fprintf(stderr, "ctasim run: not yet available\n");
	return CTA_EXIT_USAGE;
}
