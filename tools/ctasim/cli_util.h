/* Helpers shared by the subcommands: option parsing with messages that
 * name the option, and the common run options (device, seed, checks). */
#ifndef CTASIM_CLI_UTIL_H
#define CTASIM_CLI_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "ctasim/harness.h"

/* Parses "X[,Y[,Z]]" into d (missing entries are 1). Prints an error naming
 * `opt` and returns -1 on bad input. */
int cli_parse_dims(const char *cmd, const char *opt, const char *v, unsigned d[3]);
int cli_parse_u64(const char *cmd, const char *opt, const char *v, uint64_t *out);
int cli_parse_double(const char *cmd, const char *opt, const char *v, double *out);
/* Resolves --device NAME|FILE into m (default H100-SXM); prints errors. */
int cli_device(const char *cmd, const char *name, struct cta_device_model *m);
/* The value of an option that takes one: "--opt V" or "--opt=V". Advances
 * *i. Returns NULL (after printing) when the value is missing. */
const char *cli_value(const char *cmd, int argc, char **argv, int *i, const char *opt);
/* 1 when argv[*i] is opt (as "--opt" or "--opt=..."). */
int cli_is(const char *arg, const char *opt);
/* An output file written atomically: "-" is stdout; a device or pipe
 * (/dev/stdout, a fifo) is written in place, since renaming onto it would
 * replace the node; anything else is written to PATH.tmp.PID and renamed
 * onto PATH only when everything was written. */
struct cli_out {
	FILE *f;
	const char *path;
	char *tmp;
	int to_stdout, direct;
};
/* Opens o for path; prints the reason ("ctasim CMD: PATH: ...") and
 * returns -1 on failure. */
int cli_out_open(struct cli_out *o, const char *cmd, const char *path);
/* Finishes o; rc is the writer's result so far. Returns rc, or CTA_EIO
 * when closing or renaming failed; on failure the temporary is removed. */
int cli_out_close(struct cli_out *o, int rc);

struct cta_trace;
/* Writes a trace to an output file. */
typedef int (*cli_trace_writer)(const struct cta_trace *t, FILE *f, const void *opts);
/* Reads trace `in` and writes it to `out` (through cli_out) with w(opts),
 * printing "ctasim CMD: ..." for what fails; with note_incomplete, says so
 * when the trace is marked incomplete. Returns a CTA_EXIT_* code. */
int cli_trace_convert(const char *cmd, const char *in, const char *out, cli_trace_writer w,
                      const void *opts, int note_incomplete);

/* Loads a user's shared object of kernels (--load). */
int cli_load(const char *cmd, const char *path);

/* Defined in cmd_run.c, shared with the commands that run harnesses. */
struct cta_sim;
/* Parses the run options (see `ctasim run --help`) into o; the first
 * positional argument goes to *kernel. Returns 0, -1 on error (already
 * reported), -2 for --help. */
int cli_run_options(const char *cmd, int argc, char **argv, struct cta_harness_opts *o,
                    const char **kernel, const char ***args, int *quiet);
/* Prints the summary lines of simulator kernel i (launch shape c may be
 * NULL). */
void cli_report_kernel(struct cta_sim *s, unsigned i, const struct cta_launch_cfg *c,
                       unsigned sm_count);
#endif
