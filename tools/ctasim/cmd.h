/* Declarations of the ctasim subcommands and the helpers they share. Each
 * subcommand returns an exit code from enum cta_exit. */
#ifndef CTASIM_CLI_CMD_H
#define CTASIM_CLI_CMD_H

/* Named exit codes of the command line. */
enum cta_exit {
	CTA_EXIT_OK = 0,    /* success */
	CTA_EXIT_FAIL = 1,  /* wrong result, rule violation, or differences beyond tolerance */
	CTA_EXIT_USAGE = 2, /* usage error or bad input */
};

#define CTA_CMD(verb, summary) int cta_cmd_##verb(int argc, char **argv);
#include "commands.def"
#undef CTA_CMD

#endif
