/* Synthetic traces for the trace-tool tests: a tiny stand-in scheduler
 * that places blocks on SMs in a given order with given latencies, so that
 * tests know exactly what the diff and the calibration should find. */
#ifndef CTASIM_TEST_TRACE_SYNTH_H
#define CTASIM_TEST_TRACE_SYNTH_H

#include <stdint.h>

#include "ctasim/trace.h"

struct synth {
	unsigned sms, slots;   /* SMs and resident blocks per SM */
	uint64_t blocks;       /* logical blocks in the grid */
	uint64_t launch_ns;    /* launch record to first start */
	uint64_t dispatch_ns;  /* between consecutive starts */
	uint64_t retire_ns;    /* end to the next start in that slot */
	uint64_t dur_ns;       /* block duration */
	uint64_t jitter_ns;    /* + uniform [0, jitter) on each duration */
	uint64_t cancel_ns;    /* cancel round trip (steal mode) */
	const uint16_t *order; /* SM order of the first wave; NULL: 0, 1, 2... */
	int steal;             /* 1: only the first wave launches, the rest is stolen */
	int dispatch_records;  /* 1: emit a dispatch record block_start_ns before each start */
	uint64_t block_start_ns;
	uint64_t seed;
	double tick_ns;
	const char *backend, *name, *device;
	uint64_t t0; /* time of the launch record */
};

/* Defaults for the fields left zero: 4 SMs x 2 slots, 32 blocks. */
void synth_defaults(struct synth *s);

/* Builds the trace in memory (records sorted by time); free with
 * synth_free. Returns 0 or a negative code. */
int synth_make(struct cta_trace *out, const struct synth *s);
void synth_free(struct cta_trace *t);

/* Writes t to path with the trace writer. */
int synth_save(const struct cta_trace *t, const char *path);

#endif
