/* A one-line progress bar with rate and ETA on stderr, for commands that
 * can take a while (explore, calibrate, long views). Silent unless stderr
 * is a terminal (or CTASIM_PROGRESS=1), and with --quiet. */
#ifndef CTASIM_CLI_PROGRESS_H
#define CTASIM_CLI_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct cli_progress {
	int on;
	const char *what; /* "schedules", "traces" */
	uint64_t total, done;
	double t0, last;
	int drawn;
};

void cli_progress_start(struct cli_progress *p, const char *what, uint64_t total, int quiet);
/* Records done units; redraws at most about ten times a second. */
void cli_progress_step(struct cli_progress *p, uint64_t done);
/* Clears the line for a line of output on the terminal; the next step
 * draws the bar again below it. */
void cli_progress_clear(struct cli_progress *p);
/* Clears the line, so what follows starts on a clean one. */
void cli_progress_end(struct cli_progress *p);

/* The progress line of a simulation (run, scenario): blocks retired of
 * those launched, drawn once the run has taken a second (from the first
 * report with CTASIM_PROGRESS=1). Attach sets o->progress where a line can
 * be shown at all, so a run whose stderr is a file or pipe pays nothing. */
struct cta_sim_opts;
struct cli_run_progress {
	struct cli_progress p;
	int quiet, started, forced;
	double t0, delay_s;
};
void cli_run_progress_attach(struct cli_run_progress *rp, struct cta_sim_opts *o, int quiet);
/* Clears the line before the run's report. */
void cli_run_progress_end(struct cli_run_progress *rp);

/* cta_trace_read with a progress line (MiB parsed) for traces big enough
 * to take a while (from 65536 lines on); same returns. */
struct cta_trace;
struct cta_trace_lean;
int cli_trace_read(struct cta_trace *t, const char *path, char *err, size_t errlen, int quiet);
/* The same with cta_trace_read_lean. */
int cli_trace_read_lean(struct cta_trace_lean **t, const char *path, int per_kernel_slots,
                        char *err, size_t errlen, int quiet);

#endif
