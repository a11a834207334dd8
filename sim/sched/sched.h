/* The dispatcher (sim/sched/dispatch.c): candidate kernels, per-SM
 * accounting and placement. Above exec (it creates the units it places);
 * used by clc and the engine. */
#ifndef CTASIM_SCHED_SCHED_H
#define CTASIM_SCHED_SCHED_H

#include "base/state.h"

int cta__sched_init(struct cta_sim *s);
int cta__sched_kernel_init(struct cta_sim *s, struct cta__kernel *k);
void cta__sched_request(struct cta_sim *s);
/* cta__sched_request with its two ways out that do nothing inline: a
 * dispatch already asked for, or nothing fitted at the last try and no
 * room freed since (a successful cancel asks, the GPU usually full: the
 * call cost a request about 10 instructions). */
static inline void cta__sched_request_inline(struct cta_sim *s)
{
	if (s->dispatch_pending || s->in_dispatch)
		return;
	if (s->cand_valid && s->nofit_gen == s->room_gen && !s->resv_valid &&
	    s->fe_free <= s->now) {
		if (!s->ncand)
			s->cand_valid = 0;
		return;
	}
	cta__sched_request(s);
}
void cta__sched_dispatch(struct cta_sim *s);
void cta__sched_free_cta(struct cta_sim *s, struct cta__kernel *k, unsigned sm, uint64_t index);
/* Whether a block of k ending now can be refilled by cta__sched_refill
 * (asked before anything of the block is freed). */
int cta__sched_can_refill(struct cta_sim *s, const struct cta__kernel *k);
/* Frees the ended block's room on sm and places k's next block there: the
 * same outcome as cta__sched_free_cta then cta__sched_request. */
void cta__sched_refill(struct cta_sim *s, struct cta__kernel *k, unsigned sm);
/* k became visible to the dispatcher (after its launch latency). */
void cta__sched_release(struct cta_sim *s, struct cta__kernel *k);
/* A higher-priority kernel than k has blocks waiting. */
int cta__sched_higher_waiting(struct cta_sim *s, const struct cta__kernel *k);

#endif
