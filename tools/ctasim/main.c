/* The ctasim command line: dispatches `ctasim VERB ...` to cmd_VERB.c.
 * Every subcommand is built over the public API only. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "ctasim/export.h"

struct command {
	const char *verb;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
#define CTA_CMD(verb, summary) {#verb, cta_cmd_##verb, summary},
#include "commands.def"
#undef CTA_CMD
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ctasim [--help] [--version] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].verb, commands[i].summary);
	fprintf(f,
	        "\n'ctasim COMMAND --help' describes a command.\n"
	        "exit codes: 0 success, 1 wrong result or rule violation, 2 usage or bad input\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CTA_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CTA_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ctasim %s\n", CTA_VERSION_STRING);
		return CTA_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].verb))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ctasim: unknown command '%s' (see 'ctasim --help')\n", argv[1]);
	return CTA_EXIT_USAGE;
}
