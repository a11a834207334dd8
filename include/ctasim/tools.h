/* Trace tools: export to the Chrome trace-event JSON that Perfetto opens, an
 * SVG timeline with one lane per SM, the diff of two traces (simulator
 * against hardware), and the calibration of a device model from hardware
 * traces. All of them work on traces loaded with cta_trace_read(). */
#ifndef CTASIM_TOOLS_H
#define CTASIM_TOOLS_H

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

/* ---- Perfetto / Chrome trace-event export ---------------------------- */

typedef enum cta_perfetto_group {
	CTA_PERFETTO_GROUP_GPU = 0,    /* one process "GPU" holding every SM track */
	CTA_PERFETTO_GROUP_KERNEL = 1, /* one process per kernel, SM tracks under each */
} cta_perfetto_group;

#define CTA_PERFETTO_OPTS_VERSION 1
struct cta_perfetto_opts {
	unsigned version;
	cta_perfetto_group group;
};
#define CTA_PERFETTO_OPTS_INIT                                                                     \
	{                                                                                          \
		.version = CTA_PERFETTO_OPTS_VERSION                                               \
	}

/* Writes t as a JSON object {"traceEvents": [...]} to f. Every physical
 * block is a complete event ('X') on the track of its SM (an SM with several
 * resident blocks gets one track per slot, named "SM n" and "SM n/slot");
 * stolen indices are nested complete events inside the block that processed
 * them; cancels, UB and warnings are instant events ('i'); launches and
 * kernel ends are instant events on a "scheduler" track. opts may be NULL.
 * Returns 0, CTA_EIO when writing fails, CTA_ERANGE for an SM id above
 * 65535, CTA_ENOMEM. The output depends only on t. */
CTA_EXPORT int cta_trace_export_perfetto(const struct cta_trace *t, FILE *f,
                                         const struct cta_perfetto_opts *opts);

/* ---- SVG timeline ---------------------------------------------------- */

#define CTA_SVG_OPTS_VERSION 1
struct cta_svg_opts {
	unsigned version;
	unsigned width;       /* total width in pixels; 0: 1600 */
	unsigned lane_height; /* pixels per SM lane; 0: chosen from the SM and slot count */
	const char *title;    /* NULL: built from the header */
	/* What a lane is: CTA_SVG_LANES_AUTO (0) one per SM while lanes of at
	 * least 5 px fit in about 1200 px, else per TPC, else per GPC; or one
	 * of SM, TPC, GPC. TPCs and GPCs come from the device preset the
	 * header names (else 2 SMs a TPC, and GPC lanes are refused). */
	int lanes;
};
enum { CTA_SVG_LANES_AUTO, CTA_SVG_LANES_SM, CTA_SVG_LANES_TPC, CTA_SVG_LANES_GPC };
#define CTA_SVG_OPTS_INIT                                                                          \
	{                                                                                          \
		.version = CTA_SVG_OPTS_VERSION                                                    \
	}

/* Writes an SVG timeline of t to f: one lane per SM (split into sub-rows
 * when blocks overlap), blocks as rectangles coloured by kernel, the part
 * of a block spent on a stolen index hatched and outlined, failed cancels,
 * UB and warnings marked, a time axis with ticks and a legend; past 20000
 * blocks, or where blocks would be too thin or short to see, each lane shows
 * the share of its block slots in use, and lanes merge per TPC or GPC as
 * opts->lanes says. opts may be NULL. Returns 0, CTA_EIO, CTA_ERANGE (SM id
 * above 65535), CTA_ENOTFOUND (GPC lanes for a device that is no preset) or
 * CTA_ENOMEM. */
CTA_EXPORT int cta_trace_render_svg(const struct cta_trace *t, FILE *f,
                                    const struct cta_svg_opts *opts);

/* ---- Import of cuda_scheduling_examiner results ---------------------- */

struct cta_cse_opts {
	const char *device; /* the #device of the trace; NULL: a generic name */
	double tick_ns;     /* timer resolution; 0: the smallest step in the data */
};
struct cta_cse_stats {
	unsigned kernels;
	uint64_t blocks, records;
	double tick_ns;
	unsigned launches_dropped; /* launch times after their kernel's first block */
};
/* Converts the JSON logs of cuda_scheduling_examiner (one file per
 * benchmark; each becomes a stream, each kernel entry of its "times" a
 * kernel) into one hardware trace at out_path (written as by
 * cta_trace_writer_open: .gz/.zst compressed, "-" stdout). Bad input is
 * refused with "FILE:LINE: field 'times[2].block_times': ..." in err. */
CTA_EXPORT int cta_trace_import_cse(const char *const *paths, unsigned npaths, const char *out_path,
                                    const struct cta_cse_opts *opts, struct cta_cse_stats *stats,
                                    char *err, size_t errlen);

/* ---- Diff of two traces ---------------------------------------------- */

/* Tolerances of the verdict. A metric is within tolerance when it is on
 * the allowed side of its bound; docs/TOOLS.md defines each metric. */
#define CTA_DIFF_TOL_VERSION 1
struct cta_diff_tol {
	unsigned version;
	double bps_distance;     /* max normalised earth mover's distance of blocks per SM */
	double first_wave;       /* min share of first-wave blocks placed on the same SM */
	double order_rho;        /* min Spearman correlation of the start order */
	double makespan;         /* max |makespan B / makespan A - 1| */
	double offset;           /* max |start or end offset difference| / makespan A */
	double steals_per_block; /* max |steals per block B - A| */
};
#define CTA_DIFF_TOL_INIT                                                                          \
	{                                                                                          \
		.version = CTA_DIFF_TOL_VERSION, .bps_distance = 0.25, .first_wave = 0.8,          \
		.order_rho = 0.9, .makespan = 0.2, .offset = 0.1, .steals_per_block = 0.1          \
	}

/* Exactly-once coverage of one kernel in one trace. */
struct cta_diff_coverage {
	uint64_t blocks;       /* logical blocks in the grid */
	uint64_t lost;         /* indices never started or stolen */
	uint64_t duplicated;   /* indices started or stolen more than once */
	uint64_t out_of_range; /* records naming an index outside the grid */
	int ok;
};

/* Metrics of one kernel; [0] is trace A, [1] is trace B. */
struct cta_diff_kernel {
	char name[64];
	struct cta_diff_coverage coverage[2];
	unsigned sms;       /* SMs compared (highest SM id in either trace + 1) */
	double bps_mean[2]; /* blocks per SM: mean, min, max over the SMs */
	uint64_t bps_min[2], bps_max[2];
	double bps_distance;                /* normalised earth mover's distance, identity-free */
	double bps_share_distance;          /* total variation of per-SM shares, by SM id */
	uint64_t first_wave_n[2];           /* blocks that started before the kernel's first end */
	uint64_t first_wave_same;           /* of those in both first waves, on the same SM */
	double first_wave;                  /* first_wave_same / max(first_wave_n) */
	uint64_t order_n;                   /* blocks ranked in both traces */
	double order_rho;                   /* Spearman correlation of start ranks */
	int64_t start_offset_ns[2];         /* first begin minus the trace's origin */
	int64_t end_offset_ns[2];           /* last end minus the trace's origin */
	int64_t start_diff_ns, end_diff_ns; /* B - A, 0 when within one tick */
	double steals_per_block[2];
	/* Which metrics broke their tolerance (bits of enum cta_diff_metric). */
	unsigned outside;
};

enum cta_diff_metric {
	CTA_DIFF_M_COVERAGE = 1u << 0,
	CTA_DIFF_M_BPS = 1u << 1,
	CTA_DIFF_M_FIRST_WAVE = 1u << 2,
	CTA_DIFF_M_ORDER = 1u << 3,
	CTA_DIFF_M_MAKESPAN = 1u << 4,
	CTA_DIFF_M_OFFSET = 1u << 5,
	CTA_DIFF_M_STEALS = 1u << 6,
};

struct cta_diff_result {
	struct cta_diff_tol tol;
	double tick_ns; /* the coarser timer tick of the two traces */
	/* The kernels' own span: last block end minus the trace's origin, the
	 * first block begin (docs/TOOLS.md gives the fallbacks). */
	uint64_t makespan_ns[2];
	double makespan_ratio; /* B / A; 1 when they differ by less than one tick */
	/* The host's share, reported apart: first block begin minus the first
	 * launch record; -1 when the trace has no launch record or no begin. */
	int64_t launch_offset_ns[2];
	unsigned kernel_count;
	struct cta_diff_kernel kernels[CTA_TRACE_MAX_KERNELS];
	unsigned outside; /* union of the kernels' bits and the makespan bit */
	int within;       /* 1 when every metric is within tolerance */
	/* What each side is, from its header's backend: "hardware" (cuda) or
	 * "simulator" (sim); static strings. */
	const char *side[2];
};

/* Compares trace a against trace b. tol may be NULL for the defaults.
 * Traces of different kernels or launch configurations (kernel count,
 * name, grid, block, cluster, shared memory, stream, priority) cannot be
 * compared: returns CTA_EINVAL with the difference named in errbuf. */
CTA_EXPORT int cta_trace_diff(struct cta_diff_result *out, const struct cta_trace *a,
                              const struct cta_trace *b, const struct cta_diff_tol *tol,
                              char *errbuf, size_t errlen);

/* The report for people, and the same numbers as one JSON object. names
 * label the two traces (NULL: "A" and "B"). Return 0 or CTA_EIO. */
CTA_EXPORT int cta_diff_write_text(const struct cta_diff_result *r, FILE *f, const char *name_a,
                                   const char *name_b);
CTA_EXPORT int cta_diff_write_json(const struct cta_diff_result *r, FILE *f, const char *name_a,
                                   const char *name_b);

/* Name of one metric bit ("coverage", "blocks_per_sm", ...). */
CTA_EXPORT const char *cta_diff_metric_name(unsigned metric_bit);

/* ---- Calibration ----------------------------------------------------- */

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
};

/* The time each block of the kernels named `name` (trace header) asked for
 * with one cta_spin_ns call. */
struct cta_calib_spin {
	const char *name;
	uint64_t ns;
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
};
#define CTA_CALIB_OPTS_INIT                                                                        \
	{                                                                                          \
		.block_ns = 0, .quantile = 0.99, .named = NULL, .n_named = 0,                      \
		.duration_only = NULL, .trace_ns = NULL, .replay_waves = 0                         \
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
