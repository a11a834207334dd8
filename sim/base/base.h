/* The base module: services every core module may use (sim/base/base.c):
 * random numbers, error text, a unit's outbox (trace records, coverage
 * marks, errors), the ready list, and the block-index arithmetic. Below
 * ub, exec, sched, clc and the engine (docs/ARCHITECTURE.md). */
#ifndef CTASIM_BASE_BASE_H
#define CTASIM_BASE_BASE_H

#include "base/state.h"

/* Set on the host thread that runs a segment: the worker, and the unit. */
extern _Thread_local struct cta__worker *cta__base_seg_worker
    __attribute__((tls_model("initial-exec")));
extern _Thread_local struct cta__unit *cta__base_seg_unit
    __attribute__((tls_model("initial-exec")));
void cta__base_out_error(struct cta__unit *u, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cta__base_out_mark(struct cta__unit *u, uint64_t logical);
/* cta_sim_set_exact_threads: every unit's cursor asks for exact threads. */
extern int cta__base_exact_threads;
/* splitmix64 of the seed, in engine order: all of a run's randomness. */
uint64_t cta__base_rand(struct cta_sim *s);
void cta__base_errf(struct cta_sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* realloc to at least need elements of elem bytes, doubling; aborts when
 * out of memory (a run cannot continue without its outputs). */
void *cta__base_grow(void *p, size_t *cap, size_t need, size_t elem);
/* The same, an empty array starting at `first` elements. */
void *cta__base_grow_from(void *p, size_t *cap, size_t need, size_t elem, size_t first);
void cta__base_out_trace_rec(struct cta_sim *s, uint64_t t, cta_trace_event ev, unsigned kernel,
                             uint64_t block, uint64_t phys, uint64_t sm, uint64_t arg, int32_t code,
                             const char *text);
/* A trace record (kept in the unit's outbox inside a segment); nothing
 * without a trace file, decided here so that untraced runs make no call. */
static inline void cta__base_out_trace(struct cta_sim *s, uint64_t t, cta_trace_event ev,
                                       unsigned kernel, uint64_t block, uint64_t phys, uint64_t sm,
                                       uint64_t arg, int32_t code, const char *text)
{
	if (s->tw)
		cta__base_out_trace_rec(s, t, ev, kernel, block, phys, sm, arg, code, text);
}
/* Queues a dispatched unit to run its body before the engine passes its
 * start time. */
void cta__base_ready(struct cta_sim *s, struct cta__unit *u);
/* The same for a unit whose body can do nothing before virtual time t
 * (a block the issue gate let go: its first instruction). */
void cta__base_ready_from(struct cta_sim *s, struct cta__unit *u, uint64_t t);
void cta__base_ready_grow(struct cta_sim *s);
/* A block of one CTA placed as p, queued as ready without a unit yet
 * (struct cta__placed), whose body can do nothing before virtual time t.
 * Inline: a held block of a timing-only grid is queued twice (placed, then
 * let go), and the call cost more than the copy. */
static inline void cta__base_ready_placed_from(struct cta_sim *s, const struct cta__placed *p,
                                               uint64_t t)
{
	if ((s->nready == s->nsealed && !s->open_apart) || t < s->ready_min)
		s->ready_min = t;
	if (s->nready == s->batch_cap || s->nready == s->placed_cap)
		cta__base_ready_grow(s);
	s->placed[s->nready] = *p;
	s->batch[s->nready++] = NULL;
}
/* The same, from its start time. */
static inline void cta__base_ready_placed(struct cta_sim *s, const struct cta__placed *p)
{
	cta__base_ready_placed_from(s, p, p->start_t);
}

/* A block of k starts on SM sm at t: its start record and counts, and
 * its coverage on full runs. */
static inline void cta__base_started(struct cta_sim *s, struct cta__kernel *k, uint64_t index,
                                     unsigned sm, uint64_t t)
{
	cta__base_out_trace(s, t, CTA_TEV_START, k->id, index, index, sm, CTA_TRACE_NONE, 0, NULL);
	if (k->st.launched == 0)
		k->st.first_start_ns = t;
	k->st.launched++;
	k->per_sm[sm]++;
	/* Coverage is checked on full runs only (finish_stats). */
	if (!s->o.timing_only)
		cta__cover_add(&k->cover, index);
}

/* A block held apart from time t on counts as an entry of the open batch
 * (struct cta_sim's open_apart). */
static inline void cta__base_ready_apart(struct cta_sim *s, uint64_t t)
{
	if ((s->nready == s->nsealed && !s->open_apart) || t < s->ready_min)
		s->ready_min = t;
	s->open_apart++;
}

/* Whether a block of k that the issue gate holds as a record may stay out
 * of the ready batch until it is let go, its start counted at once
 * (struct cta__held): all the batch would do with it is set it aside and
 * count its start, and nothing reads those counts before the batch runs
 * when no trace orders start records among the engine's, no stop at the
 * first UB can end the run before that batch (a sanitizer's report stops
 * nothing: it is a UB report in the outbox), the kernel's first start is
 * counted (its time is that of the first start in dispatch order) and its
 * body makes no CLC call (whose coverage marks interleave with the
 * starts). A run that stops otherwise before the
 * batch (out of memory, --max-events) counts the starts of the blocks
 * held then. */
extern int cta__base_held_apart; /* 0: never (tests compare the two) */
static inline int cta__base_hold_apart(const struct cta_sim *s, const struct cta__kernel *k)
{
	return cta__base_held_apart && !s->tw && s->o.ub_mode != CTA_UB_ABORT && k->never_waits &&
	       k->st.launched;
}

/* Linear block index of blockIdx b, and back; inline, as every new block
 * and every successful cancel asks. */
static inline uint64_t cta__base_logical_of_bid(const struct cta__kernel *k, uint3 b)
{
	return b.x + (uint64_t)k->l.grid[0] * (b.y + (uint64_t)k->l.grid[1] * b.z);
}

static inline uint3 cta__base_bid_of_logical(const struct cta__kernel *k, uint64_t i)
{
	uint3 b;
	if (k->l.grid[1] == 1 && k->l.grid[2] == 1) {
		/* 1-D grids, the common case: no 64-bit divisions (tens of
		 * cycles each, on every block). */
		b.x = (unsigned)i;
		b.y = b.z = 0;
		return b;
	}
	b.x = (unsigned)(i % k->l.grid[0]);
	i /= k->l.grid[0];
	b.y = (unsigned)(i % k->l.grid[1]);
	b.z = (unsigned)(i / k->l.grid[1]);
	return b;
}

#endif
