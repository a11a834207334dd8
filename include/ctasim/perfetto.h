/* Export of a trace to the Chrome trace-event JSON that Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: one track per SM.
 * Works on traces loaded with cta_trace_read() (ctasim/trace.h). */
#ifndef CTASIM_PERFETTO_H
#define CTASIM_PERFETTO_H

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
/* The same for a trace read with cta_trace_read_lean, whose
 * per_kernel_slots must match opts->group (else CTA_EINVAL). */
CTA_EXPORT int cta_trace_lean_export_perfetto(const cta_trace_lean *t, FILE *f,
                                              const struct cta_perfetto_opts *opts);
CTA_EXPORT int cta_trace_export_perfetto(const struct cta_trace *t, FILE *f,
                                         const struct cta_perfetto_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
