/* The block dispatcher: which kernel's pending block goes next (priority
 * first, then launch order, a later kernel getting only the room the
 * earlier ones cannot use), and on which SM (the placement policy). Also the
 * per-SM resource accounting. Running blocks are never preempted. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static unsigned round_up(unsigned v, unsigned unit)
{
	return unit ? (v + unit - 1) / unit * unit : v;
}

int cta__sched_kernel_init(struct cta_sim *s, struct cta__kernel *k)
{
	const struct cta_device_model *d = &s->dev;
	unsigned regs = k->l.regs_per_thread ? k->l.regs_per_thread : 32;
	struct cta_block_resources r = {k->l.block[0] * k->l.block[1] * k->l.block[2], regs,
					k->l.smem_static, k->l.smem_dynamic};
	cta_limiter lim = CTA_LIMIT_NONE;
	k->occupancy = cta_occupancy_max_blocks(d, &r, &lim);
	if (k->occupancy == 0) {
		cta__errf(s,
			  "too many resources requested for launch: kernel %s, block of %u "
			  "threads, %u registers per thread, %zu bytes of shared memory: the "
			  "limiting resource is %s",
			  k->label, r.threads, regs, k->l.smem_static + k->l.smem_dynamic,
			  cta_limiter_name(lim));
		return CTA_ERESOURCES;
	}
	k->threads = r.threads;
	k->warps = (r.threads + d->warp_size - 1) / d->warp_size;
	k->regs = k->warps * round_up(regs * d->warp_size, d->reg_alloc_unit);
	k->smem = round_up((unsigned)(k->l.smem_static + k->l.smem_dynamic) +
				   d->smem_reserved_per_block,
			   d->smem_alloc_unit);
	k->smem_bytes = k->l.smem_static + k->l.smem_dynamic;
	/* Clusters must fit on one GPC at once. */
	if (k->csize > 1) {
		unsigned best = 0;
		for (unsigned g = 0; g < d->gpc_count; g++) {
			unsigned n = 0;
			for (unsigned i = 0; i < s->nsms; i++)
				n += (d->gpc_of_sm[i] == g) * k->occupancy;
			if (n > best)
				best = n;
		}
		if (best < k->csize) {
			cta__errf(s,
				  "kernel %s: a cluster of %u blocks cannot be co-scheduled on one "
				  "GPC (at most %u such blocks fit on a GPC)",
				  k->label, k->csize, best);
			return CTA_ERESOURCES;
		}
	}
	return 0;
}

static int fits(const struct cta_sim *s, const struct cta__sm *m, const struct cta__kernel *k)
{
	const struct cta_device_model *d = &s->dev;
	return m->blocks + 1 <= d->max_blocks_per_sm && m->threads + k->threads <= d->max_threads_per_sm &&
	       m->warps + k->warps <= d->max_warps_per_sm && m->regs + k->regs <= d->regs_per_sm &&
	       m->smem + k->smem <= d->smem_per_sm;
}

static void take(struct cta__sm *m, const struct cta__kernel *k)
{
	m->blocks++;
	m->threads += k->threads;
	m->warps += k->warps;
	m->regs += k->regs;
	m->smem += k->smem;
}

void cta__sched_free_cta(struct cta_sim *s, struct cta__kernel *k, unsigned sm)
{
	struct cta__sm *m = &s->sms[sm];
	m->blocks--;
	m->threads -= k->threads;
	m->warps -= k->warps;
	m->regs -= k->regs;
	m->smem -= k->smem;
	k->ctas_running--;
}

/* Spread-first: the SM with the fewest resident blocks that fits; ties go
 * to the lowest SM id, or are broken by the seed when exploring. */
static int pick_spread(struct cta_sim *s, const struct cta__kernel *k, int gpc)
{
	int best = -1;
	unsigned best_blocks = UINT32_MAX, nties = 0;
	for (unsigned i = 0; i < s->nsms; i++) {
		const struct cta__sm *m = &s->sms[i];
		if (gpc >= 0 && m->gpc != (unsigned)gpc)
			continue;
		if (m->blocks > best_blocks || !fits(s, m, k))
			continue;
		if (m->blocks < best_blocks) {
			best = (int)i;
			best_blocks = m->blocks;
			nties = 1;
		} else if (s->o.random_tiebreak && cta__rand(s) % ++nties == 0) {
			best = (int)i;
		}
	}
	return best;
}

static int pick_round_robin(struct cta_sim *s, const struct cta__kernel *k)
{
	for (unsigned n = 0; n < s->nsms; n++) {
		unsigned i = (s->rr_next + n) % s->nsms;
		if (fits(s, &s->sms[i], k)) {
			s->rr_next = (i + 1) % s->nsms;
			return (int)i;
		}
	}
	return -1;
}

/* A calibrated order: the i-th block of a kernel's first wave goes to
 * placement_order[i] when it fits there; later blocks spread. */
static int pick_order(struct cta_sim *s, const struct cta__kernel *k)
{
	uint64_t i = k->next_unit;
	if (i < s->dev.placement_order_len) {
		unsigned sm = s->dev.placement_order[i];
		if (sm < s->nsms && fits(s, &s->sms[sm], k))
			return (int)sm;
	}
	return pick_spread(s, k, -1);
}

static int pick_sm(struct cta_sim *s, const struct cta__kernel *k)
{
	switch (s->dev.placement) {
	case CTA_PLACE_ROUND_ROBIN:
		return pick_round_robin(s, k);
	case CTA_PLACE_ORDER:
		return pick_order(s, k);
	default:
		return pick_spread(s, k, -1);
	}
}

/* A cluster: the least loaded GPC that can hold all its CTAs at once, and
 * spread placement inside it. Returns 0 and fills sms[], or -1. */
static int pick_cluster(struct cta_sim *s, const struct cta__kernel *k, unsigned *sms)
{
	int best_gpc = -1;
	unsigned best_load = UINT32_MAX;
	for (unsigned g = 0; g < s->dev.gpc_count; g++) {
		unsigned room = 0, load = 0;
		for (unsigned i = 0; i < s->nsms; i++) {
			const struct cta__sm *m = &s->sms[i];
			if (m->gpc != g)
				continue;
			load += m->blocks;
			struct cta__sm t = *m;
			while (room < k->csize && fits(s, &t, k)) {
				take(&t, k);
				room++;
			}
		}
		if (room >= k->csize && load < best_load) {
			best_gpc = (int)g;
			best_load = load;
		}
	}
	if (best_gpc < 0)
		return -1;
	for (unsigned r = 0; r < k->csize; r++) {
		int sm = pick_spread(s, k, best_gpc);
		if (sm < 0)
			return -1; /* cannot happen: room was counted above */
		sms[r] = (unsigned)sm;
		take(&s->sms[sm], k);
	}
	/* The caller takes the resources again; give them back here. */
	for (unsigned r = 0; r < k->csize; r++) {
		struct cta__sm *m = &s->sms[sms[r]];
		m->blocks--;
		m->threads -= k->threads;
		m->warps -= k->warps;
		m->regs -= k->regs;
		m->smem -= k->smem;
	}
	return 0;
}

int cta__sched_higher_waiting(struct cta_sim *s, const struct cta__kernel *k)
{
	for (unsigned i = 0; i < s->nkernels; i++) {
		const struct cta__kernel *o = s->kernels[i];
		if (o->state == K_ACTIVE && o->priority < k->priority && o->next_unit < o->nunits)
			return 1;
	}
	return 0;
}

/* Kernels in dispatch preference: priority, then launch order. */
static struct cta__kernel *next_candidate(struct cta_sim *s, struct cta__kernel *after,
					  int *cursor)
{
	(void)after;
	struct cta__kernel *best = NULL;
	int idx = *cursor;
	/* cursor counts how many candidates were already tried; pick the
	 * idx-th best active kernel with pending units. Few kernels run at
	 * once, so a selection by repeated scans is cheap. */
	struct cta__kernel *order[64];
	unsigned n = 0;
	for (unsigned i = 0; i < s->nkernels && n < 64; i++) {
		struct cta__kernel *k = s->kernels[i];
		if (k->state != K_ACTIVE || k->next_unit >= k->nunits)
			continue;
		unsigned j = n++;
		while (j > 0 && (order[j - 1]->priority > k->priority ||
				 (order[j - 1]->priority == k->priority && order[j - 1]->seq > k->seq))) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = k;
	}
	if ((unsigned)idx < n)
		best = order[idx];
	(*cursor)++;
	return best;
}

static uint64_t jitter(struct cta_sim *s, uint64_t v)
{
	if (!s->o.jitter_ns)
		return v;
	uint64_t j = s->o.jitter_ns;
	int64_t d = (int64_t)(cta__rand(s) % (2 * j + 1)) - (int64_t)j;
	return (int64_t)v + d < 0 ? 0 : (uint64_t)((int64_t)v + d);
}

/* Dispatches one unit if any fits; returns 1 when it did. */
static int dispatch_one(struct cta_sim *s)
{
	int cursor = 0;
	for (;;) {
		struct cta__kernel *k = next_candidate(s, NULL, &cursor);
		if (!k)
			return 0;
		unsigned one, *sms = &one, buf[64];
		if (k->csize > 1) {
			sms = k->csize <= 64 ? buf : malloc(k->csize * sizeof(unsigned));
			if (!sms || pick_cluster(s, k, sms) < 0) {
				if (sms != buf)
					free(sms);
				continue;
			}
		} else {
			int sm = pick_sm(s, k);
			if (sm < 0)
				continue;
			one = (unsigned)sm;
		}
		uint64_t unit = k->next_unit++;
		uint64_t start = s->now + jitter(s, s->dev.block_start_ns);
		struct cta__unit *u = cta__unit_new(s, k, unit, sms, start);
		if (!u) {
			cta__errf(s, "out of memory for blocks");
			s->hung = 1;
			return 0;
		}
		for (unsigned r = 0; r < k->csize; r++) {
			take(&s->sms[sms[r]], k);
			k->ctas_running++;
			cta__trace(s, s->now, CTA_TEV_DISPATCH, k->id, u->ctas[r].logical,
				   u->ctas[r].logical, sms[r], CTA_TRACE_NONE, 0, NULL);
		}
		if (sms != &one && sms != buf)
			free(sms);
		cta__push(s, start, EV_START, u, 0);
		return 1;
	}
}

void cta__sched_dispatch(struct cta_sim *s)
{
	while (s->fe_free <= s->now) {
		if (!dispatch_one(s))
			return;
		uint64_t lat = jitter(s, s->dev.dispatch_latency_ns);
		s->fe_free = s->now + lat;
	}
	cta__sched_request(s);
}

void cta__sched_request(struct cta_sim *s)
{
	if (s->dispatch_pending)
		return;
	int any = 0;
	for (unsigned i = 0; i < s->nkernels && !any; i++) {
		const struct cta__kernel *k = s->kernels[i];
		any = k->state == K_ACTIVE && k->next_unit < k->nunits;
	}
	if (!any)
		return;
	s->dispatch_pending = 1;
	cta__push(s, s->fe_free > s->now ? s->fe_free : s->now, EV_DISPATCH, NULL, 0);
}
