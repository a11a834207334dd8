/* What the trace format (sim/trace) offers the modules above it beyond the
 * public ctasim/trace.h: the block layout of a trace (which the lean
 * reader builds as records stream in, and the trace tools of sim/analysis
 * draw and compare), output escaping, and the grid size of a kernel. */
#ifndef CTASIM_SIM_TRACE_FORMAT_H
#define CTASIM_SIM_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctasim/trace.h"

/* ---- Block layout (trace_layout.c): built by the lean reader, and by --- */
/* ---- the exporters and diff (sim/analysis) for whole traces ---------- */

/* The time a physical block spent processing one stolen index. */
struct cta__steal_seg {
	uint64_t block; /* the stolen logical index */
	uint64_t t0, t1;
};

/* One physical block's residency on an SM, from its start to its end. */
struct cta__span {
	uint32_t kernel;
	uint32_t slot;  /* sub-row of the SM lane, so overlapping blocks never share one */
	uint64_t block; /* logical index it started on */
	uint64_t phys;
	uint64_t sm;
	uint64_t t0, t1;
	int open;           /* no end record: t1 is the end of the trace */
	size_t steal_first; /* its segments are steals[steal_first .. +steal_count) */
	size_t steal_count;
};

#define CTA__MAX_SM_ID 65535

struct cta__layout {
	struct cta__span *spans; /* sorted by SM, then start time */
	size_t nspans;
	struct cta__steal_seg *steals;
	size_t nsteals;
	uint64_t sm_count; /* highest SM id in any record + 1 */
	uint32_t *slots;   /* slots[sm]: sub-rows that SM needs (at least 1) */
	uint32_t max_slots;
	int per_kernel;        /* slots allocated per kernel (see cta__layout_build) */
	uint64_t t_min, t_max; /* over all records */
	/* Over all records, so that a lean trace (no block records) still
	 * knows them: the first dispatch, start or steal (UINT64_MAX: none),
	 * the last end (0: none), start + steal records per kernel
	 * (kernel_begins[k], k < the header's kernel count), steal records. */
	uint64_t first_begin, last_end;
	uint64_t *kernel_begins;
	size_t steal_records;
};

/* Builds the layout; per_kernel=1 allocates slots separately for every
 * kernel (for per-kernel track groups). Returns 0, CTA_ENOMEM, or
 * CTA_ERANGE when an SM id exceeds CTA__MAX_SM_ID; CTA_EINVAL for a lean
 * trace (its layout is t->layout). */
int cta__layout_build(struct cta__layout *l, const struct cta_trace *t, int per_kernel);
void cta__layout_free(struct cta__layout *l);
/* A lean trace (cta_trace_read_lean): the kept records and the layout of
 * the others. */
struct cta_trace_lean {
	struct cta_trace t;
	struct cta__layout l;
};

/* The same a record at a time, for a trace that streams in: begin, add
 * every record in file order, then finish (frees the collector) or abort
 * (frees it and the layout). */
struct cta__layout_acc;
int cta__layout_begin(struct cta__layout_acc **out, struct cta__layout *l, uint32_t kernel_count);
int cta__layout_add(struct cta__layout_acc *a, const struct cta_trace_rec *r);
int cta__layout_finish(struct cta__layout_acc *a, int per_kernel);
void cta__layout_abort(struct cta__layout_acc *a);

/* Writes s escaped for a JSON string (without the quotes) or for XML
 * text and attributes; invalid UTF-8 bytes become '?'. */
void cta__trace_put_json_str(FILE *f, const char *s);
void cta__trace_put_xml_str(FILE *f, const char *s);

/* Logical blocks in a kernel's grid. */
uint64_t cta__trace_kernel_blocks(const struct cta_trace_kernel *k);

#endif
