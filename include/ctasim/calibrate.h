/* Calibration of a device model from hardware traces: latencies, block
 * durations and the sweep rule's parameters.
 * Works on traces loaded with cta_trace_read() (ctasim/trace.h). */
#ifndef CTASIM_CALIBRATE_H
#define CTASIM_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctasim/device.h"
#include "ctasim/errors.h"
#include "ctasim/export.h"
#include "ctasim/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a calibration saw; the fitted values themselves are in the model. */
struct cta_calib_report {
	unsigned traces;
	unsigned kernels_used; /* kernels launched on an idle device, used for placement */
	unsigned sm_count;     /* highest SM id seen + 1 */
	double tick_ns;        /* the coarsest tick of the traces */
	/* Number of samples behind each latency; 0 means the base value was kept. */
	uint64_t n_launch, n_dispatch, n_block_start, n_retire, n_cancel;
	/* Block durations behind each fitted spin_scale entry, by resident
	 * count (cta_calib_opts.block_ns); all 0 when none was fitted. */
	uint64_t n_spin[CTA_DEVICE_MAX_RESIDENT + 1];
	/* Distinct requested times among them; where 2 or more, spin_add was
	 * fitted at that count, elsewhere it is taken from a fitted count. */
	unsigned n_spin_lengths[CTA_DEVICE_MAX_RESIDENT + 1];
	/* The sweep rule (placement = sweep): first-wave blocks of the
	 * idle-device launches it places on the recorded SM, of how many. */
	uint64_t sweep_placed, sweep_total;
	char note[256]; /* anything the caller should tell the user, or "" */
	/* Blocks of several calls that separated the per-call add from the
	 * per-block add (cta_calib_opts.work); 0: not separated. */
	uint64_t n_call_split;
	/* Blocks whose launch declared issue_ops behind spin_issue_ps; 0: the
	 * base's value was kept. */
	uint64_t n_issue;
	/* Launches on another stream than the launch before, released with
	 * it, behind launch_gap_ns; 0: the base's value was kept. */
	uint64_t n_launch_gap;
};

/* The time each block of the kernels named `name` (trace header) asked for
 * with one cta_spin_ns call. */
struct cta_calib_spin {
	const char *name;
	uint64_t ns;
};

/* What each block of a trace's kernel 0 asked for, indexed by linear
 * block id (n entries): the cta_spin_ns calls on its longest path and the
 * ns they asked for in all (calls 0: unknown), and (issue, or NULL) the
 * issue time its calls after the first charge at one ns per declared
 * instruction of each warp sharing its scheduler (the launch's issue_ops,
 * 0 where none was declared). `ctasim fidelity` gets it by simulating the
 * traced configuration. */
struct cta_calib_work {
	uint64_t n;
	const uint32_t *calls;
	const uint64_t *ns;
	const uint64_t *issue;
};

/* A blocking kernel's configuration as the simulator ran it with the
 * device's wait_* terms (docs/FIDELITY.md, *Blocking kernels*): at the
 * point `at` (wait_load_ns, wait_atomic_ns, wait_turn_ps, wait_sync_ps,
 * wait_hit_ns, wait_poll_ps) its busy span (first block start to last block end) was
 * busy0 ns, and busy[i] with term i at at[i] + step[i] (busy0 0: not run;
 * step[i] 0: term i not probed). `ctasim fidelity` gets it by simulating
 * the traced configuration (fit=wait). */
#define CTA_CALIB_WAIT_TERMS 6
struct cta_calib_wait {
	uint64_t at[CTA_CALIB_WAIT_TERMS], step[CTA_CALIB_WAIT_TERMS];
	uint64_t busy0, busy[CTA_CALIB_WAIT_TERMS];
};

/* Options of cta_trace_calibrate_opts. */
struct cta_calib_opts {
	/* The time every block of the traces asked for with one cta_spin_ns
	 * call (the `spin` kernel's ns), or 0; kernels named in `named` use
	 * their entry instead. When any is set, the duration model is fitted:
	 * per count of blocks resident on the SM at a block's start, the
	 * quantile `quantile` of first-wave block durations of each requested
	 * time; with two or more times at a count, a line through them gives
	 * spin_scale (slope) and spin_add (intercept), otherwise spin_scale
	 * alone, less a spin_add fitted at another count (docs/TOOLS.md). */
	uint64_t block_ns;
	double quantile; /* 0 .. 1; 0.5 is the (lower) median */
	const struct cta_calib_spin *named;
	size_t n_named;
	/* Per trace (NULL: none): nonzero when the trace feeds the duration
	 * model only, not placement or latencies (a multi-kernel scenario). */
	const unsigned char *duration_only;
	/* Per trace (NULL: none): the time every block of its kernels asked
	 * for with one cta_spin_ns call, or 0; overrides block_ns, not
	 * `named`. */
	const uint64_t *trace_ns;
	/* Nonzero: placement = order, replaying the recorded first waves by
	 * grid size (wave_order), instead of fitting the sweep rule. */
	int replay_waves;
	/* Per trace (NULL: none): the work of its blocks. Blocks of two or
	 * more calls separate the per-call add (spin_add) from the per-block
	 * add (spin_block_add_ns); without them the add is all per call. */
	const struct cta_calib_work *work;
	/* Per trace (NULL: none): for a CLC kernel recorded under emulation,
	 * the ns of the one cta_spin_ns call of each iteration of its steal
	 * loop, or 0; with it the emulated steal's cost is fitted per
	 * iteration (clc_steal_ns); CTA_CALIB_CLC_NS_ZERO for a call of 0 ns. */
	const uint64_t *clc_ns;
	/* Per trace (NULL: none): 1 where that steal loop's calls come with a
	 * global store (the launch's stream_mem, sim.h): its loop fits
	 * clc_drain_ns instead of clc_steal_ns; 2 the same for a loop whose
	 * clc_ns is its calls' usual ns (an imbalance pattern: it gives
	 * nothing else). */
	const unsigned char *clc_stream;
	/* Per trace (NULL: none): its blocking-kernel probes, or busy0 0;
	 * with any, the wait_* terms are fitted to the traces' busy spans by
	 * least squares over the probes' slopes (fit_wait). */
	const struct cta_calib_wait *wait;
};
/* A clc_ns entry for a steal loop whose one call asks for 0 ns (0 itself
 * says the loop's work is not known). */
#define CTA_CALIB_CLC_NS_ZERO UINT64_MAX
#define CTA_CALIB_OPTS_INIT                                                                        \
	{                                                                                          \
		.block_ns = 0, .quantile = 0.99, .named = NULL, .n_named = 0,                      \
		.duration_only = NULL, .trace_ns = NULL, .replay_waves = 0, .work = NULL,          \
		.clc_ns = NULL, .clc_stream = NULL, .wait = NULL                                   \
	}

/* Fits a device model to one or more traces (normally hardware traces of
 * one GPU). Starts from *base and sets: sm_count (as observed, unless
 * no kernel filled the GPU; then the base's stays),
 * placement = CTA_PLACE_ORDER with placement_order (the SM order of the
 * first wave, averaged over kernels launched on an idle device),
 * launch_latency_ns, dispatch_latency_ns, block_start_ns (when the traces
 * have dispatch records), block_retire_ns and cancel_latency_ns (when they
 * have cancels); docs/TOOLS.md gives each estimator. Returns CTA_EINVAL
 * when the traces name different devices or hold no block starts,
 * CTA_ERANGE when an SM id exceeds CTA_DEVICE_MAX_SMS, with a message in
 * errbuf. report may be NULL. */
CTA_EXPORT int cta_trace_calibrate(struct cta_device_model *out, struct cta_calib_report *report,
                                   const struct cta_device_model *base,
                                   const struct cta_trace *const *traces, size_t n, char *errbuf,
                                   size_t errlen);

/* cta_trace_calibrate with options (opts may be NULL for the defaults,
 * which fit no duration model). CTA_EINVAL also for a quantile outside
 * 0 .. 1. */
CTA_EXPORT int
cta_trace_calibrate_opts(struct cta_device_model *out, struct cta_calib_report *report,
                         const struct cta_device_model *base, const struct cta_trace *const *traces,
                         size_t n, const struct cta_calib_opts *opts, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
