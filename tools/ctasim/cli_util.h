/* Helpers shared by the subcommands: option parsing with messages that
 * name the option, and the common run options (device, seed, checks). */
#ifndef CTASIM_CLI_UTIL_H
#define CTASIM_CLI_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "ctasim/harness.h"

/* Option values, parsed by the library's one number parser
 * (include/ctasim/io.h: decimal or 0x, K/M/G, A<<B; overflow and values
 * outside [min, max] refused). Print "ctasim CMD: OPT 'V': why" naming the
 * range and return -1 on bad input. */
int cli_parse_u64(const char *cmd, const char *opt, const char *v, uint64_t min, uint64_t max,
                  uint64_t *out);
int cli_parse_double(const char *cmd, const char *opt, const char *v, double min, double max,
                     double *out);
/* Parses "X[,Y[,Z]]" into d (missing entries are 1), each of 32 bits;
 * cta_sim_launch checks CUDA's limits (0 included) against the device. */
int cli_parse_dims(const char *cmd, const char *opt, const char *v, unsigned d[3]);
/* Resolves --device NAME|FILE into m (default H100-SXM); prints errors. */
int cli_device(const char *cmd, const char *name, struct cta_device_model *m);
/* The value of an option that takes one: "--opt V" or "--opt=V". Advances
 * *i. Returns NULL (after printing) when the value is missing. */
const char *cli_value(const char *cmd, int argc, char **argv, int *i, const char *opt);
/* 1 when argv[*i] is opt (as "--opt" or "--opt=..."). */
int cli_is(const char *arg, const char *opt);
/* 1 when path is "-": standard output (or input) for every command that
 * writes or reads a file (--trace -, view -o -, export -o -, ...). */
int cli_is_stdio(const char *path);
/* Removes (and notes on stderr) the temporaries of path that killed runs
 * left (cta_tmpfile_sweep). */
void cli_sweep_stale(const char *cmd, const char *path);

/* Standard streams that remember why a write failed and (stderr) escape
 * control bytes; called first thing in main. cli_stdio_finish flushes and
 * closes stdout at exit and turns a lost output into exit 2 with
 * "ctasim: <stdout>: No space left on device"; returns the exit code. */
void cli_stdio_init(void);
int cli_stdio_finish(int code);
extern int cli_stdout_err;
/* From now on what the command prints goes to stderr: stdout carries a
 * trace ("--trace -"). */
void cli_stdout_to_stderr(void); /* errno of stdout's first failed write, or 0 */
/* A write stream on fd that stores the first failure's errno in *err. */
FILE *cli_fd_stream(int fd, int *err);

/* An output file written atomically: "-" is stdout; a device or pipe
 * (/dev/stdout, a fifo) is written in place, since renaming onto it would
 * replace the node; anything else is written to a private temporary beside
 * PATH (cta_tmpfile_create) and renamed onto PATH only when everything was
 * written and synced. */
struct cli_out {
	FILE *f;
	const char *path;
	char *tmp;
	int to_stdout, direct;
	int fd;    /* the temporary's descriptor (for fsync) */
	int err;   /* errno of the first failure */
	int zkind; /* cta_trace_compression_of_name(path): 0, or compressed at close */
};
/* Opens o for path; prints the reason ("ctasim CMD: PATH: ...") and
 * returns -1 on failure. */
int cli_out_open(struct cli_out *o, const char *cmd, const char *path);
/* Finishes o; rc is the writer's result so far. Returns rc, or CTA_EIO
 * when writing, closing or renaming failed; on failure the temporary is
 * removed. */
int cli_out_close(struct cli_out *o, int rc);
/* Prints "ctasim CMD: PATH: strerror" for a failed cli_out_close. */
void cli_out_report(const char *cmd, const struct cli_out *o, int rc);
/* From a SIGINT/SIGTERM handler: removes the temporary of the output
 * being written, if any (async-signal-safe). */
void cli_interrupted_cleanup(void);
/* The trace the command writes (--trace), for the interruption message. */
extern const char *volatile cli_trace_path;

struct cta_trace;
/* Writes a trace to an output file. */
struct cta_trace_lean;
typedef int (*cli_trace_writer)(const struct cta_trace_lean *t, FILE *f, const void *opts);
/* With placement order, the model must have an order to replay: else
 * says so ("ctasim CMD: --placement order ...") and returns -1. */
struct cta_device_model;
int cli_placement_ok(const char *cmd, const struct cta_device_model *d);
/* A writer's return for "failed, and already said why on stderr". */
#define CLI_REPORTED 1
/* Reads trace `in` and writes it to `out` (through cli_out) with w(opts),
 * printing "ctasim CMD: ..." for what fails; with note_incomplete, says so
 * when the trace is marked incomplete. The trace is read lean
 * (cta_trace_read_lean with per_kernel_slots): the writers draw or export
 * it. Returns a CTA_EXIT_* code. */
int cli_trace_convert(const char *cmd, const char *in, const char *out, cli_trace_writer w,
                      const void *opts, int note_incomplete, int per_kernel_slots);

/* Loads a user's shared object of kernels (--load). */
int cli_load(const char *cmd, const char *path);
/* The objects loaded so far (for a reproducing command line). */
extern const char *cli_loaded[16];
extern size_t cli_loaded_count;

/* Defined in cmd_run.c, shared with the commands that run harnesses. */
struct cta_sim;
/* Parses the run options (see `ctasim run --help`) into o; the first
 * positional argument goes to *kernel. Returns 0, -1 on error (already
 * reported), -2 for --help. */
int cli_run_options(const char *cmd, int argc, char **argv, struct cta_harness_opts *o,
                    const char **kernel, const char ***args, int *quiet);
/* The first `max` UB reports of s in cause order: by virtual time, then
 * rules that cause others before the rules they cause (a divergent barrier
 * before the deadlock it leads to); returns how many went to idx. */
size_t cli_ub_order(struct cta_sim *s, size_t *idx, size_t max);
/* Prints the first `show` UB reports in cause order, each with kernel name,
 * block and thread coordinates, and which earlier report of the same block
 * it likely follows from. */
void cli_print_ub(struct cta_sim *s, size_t show);
/* Prints the summary lines of simulator kernel i (launch shape c may be
 * NULL). */
void cli_report_kernel(struct cta_sim *s, unsigned i, const struct cta_launch_cfg *c,
                       unsigned sm_count);
#endif
