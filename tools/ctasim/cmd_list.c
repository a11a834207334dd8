/* `ctasim list`: lists kernels and device models. */
#include <stdio.h>

#include "cmd.h"

int cta_cmd_list(int argc, char **argv)
{
	fprintf(stderr, "ctasim list: not yet available\n");
	return CTA_EXIT_USAGE;
}
