/* The scheduler benchmark (issue 4, item 6): simulated blocks per second
 * per host core for the 16-kernel, 6-priority scenario, next to the
 * single-kernel figure. Called by `ctasim bench`. */
#ifndef CTASIM_CLI_BENCH_SCHED_H
#define CTASIM_CLI_BENCH_SCHED_H

/* Runs, on one host thread, in timing-only mode on the H100 preset:
 * (multi) tests/golden/scenarios/bench_16k6p.json -- 16 spin kernels of
 * 62500 blocks on 6 priorities, released every 50 us -- built in memory,
 * and (single) one spin kernel of the same million blocks and base cost.
 * Writes simulated blocks per wall-clock second of each. Returns 0, or a
 * negative CTA_E* code (a message on stderr). */
int cta_bench_scenario(double *multi_bps, double *single_bps);

/* The multi-kernel scenario as JSON text (the same as bench_16k6p.json);
 * returns the length written, or the length needed when it does not fit. */
int cta_bench_scenario_json(char *buf, unsigned long size);

#endif
