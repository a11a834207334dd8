/* The diff of two traces of the same launches (typically the simulator
 * against hardware): placement, start order, durations, coverage.
 * Works on traces loaded with cta_trace_read() (ctasim/trace.h). */
#ifndef CTASIM_TRACE_DIFF_H
#define CTASIM_TRACE_DIFF_H

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

/* The same, reading the two trace files (path "-": stdin) as streams:
 * their records are not kept, only one 24-byte entry per block start or
 * steal (doubling arrays: up to 48 bytes while they grow) and a few
 * numbers per kernel, so two traces of 2 M blocks each take about 100 MB
 * rather than the 64 bytes per record of cta_trace_read (1 GB). Input
 * errors as cta_trace_stream's, with "FILE:LINE: what" in errbuf;
 * complete (may be NULL) receives each trace's complete flag. */
CTA_EXPORT int cta_trace_diff_files(struct cta_diff_result *out, const char *path_a,
                                    const char *path_b, const struct cta_diff_tol *tol,
                                    int complete[2], char *errbuf, size_t errlen);

/* The report for people, and the same numbers as one JSON object. names
 * label the two traces (NULL: "A" and "B"). Return 0 or CTA_EIO. */
CTA_EXPORT int cta_diff_write_text(const struct cta_diff_result *r, FILE *f, const char *name_a,
                                   const char *name_b);
CTA_EXPORT int cta_diff_write_json(const struct cta_diff_result *r, FILE *f, const char *name_a,
                                   const char *name_b);

/* Name of one metric bit ("coverage", "blocks_per_sm", ...). */
CTA_EXPORT const char *cta_diff_metric_name(unsigned metric_bit);

#ifdef __cplusplus
}
#endif
#endif
