/* Import of cuda_scheduling_examiner's per-benchmark JSON logs as one
 * hardware trace.
 * Works on traces loaded with cta_trace_read() (ctasim/trace.h). */
#ifndef CTASIM_IMPORT_CSE_H
#define CTASIM_IMPORT_CSE_H

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

#ifdef __cplusplus
}
#endif
#endif
