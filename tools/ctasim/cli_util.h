/* Helpers shared by the subcommands. */
#ifndef CTASIM_CLI_UTIL_H
#define CTASIM_CLI_UTIL_H
#endif
