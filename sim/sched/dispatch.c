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
	k->smem =
	    round_up((unsigned)(k->l.smem_static + k->l.smem_dynamic) + d->smem_reserved_per_block,
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
	return m->blocks + 1 <= d->max_blocks_per_sm &&
	       m->threads + k->threads <= d->max_threads_per_sm &&
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

/* The ready list holds the active kernels that may still have pending
 * units, in dispatch preference: priority first, then activation order
 * (FIFO among equal priorities). A kernel is inserted when it becomes
 * active and dropped lazily once its pending range is empty (dispatch or a
 * successful cancel empties it), so every query is a walk from the front
 * instead of a sort of every kernel ever launched. */
static int before(const struct cta__kernel *a, const struct cta__kernel *b)
{
	return a->priority < b->priority || (a->priority == b->priority && a->seq < b->seq);
}

void cta__sched_release(struct cta_sim *s, struct cta__kernel *k)
{
	k->seq = s->activations++;
	if (k->next_unit >= k->nunits)
		return;
	if (s->nready == s->ready_cap) {
		unsigned cap = s->ready_cap ? s->ready_cap * 2 : 16;
		struct cta__kernel **nr = realloc(s->ready, cap * sizeof(*nr));
		if (!nr) {
			cta__errf(s, "out of memory for the dispatch list");
			s->hung = 1;
			return;
		}
		s->ready = nr;
		s->ready_cap = cap;
	}
	unsigned j = s->nready++;
	while (j > 0 && before(k, s->ready[j - 1])) {
		s->ready[j] = s->ready[j - 1];
		j--;
	}
	s->ready[j] = k;
}

/* Drops kernels whose pending range is empty; keeps the order. */
static void ready_compact(struct cta_sim *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->nready; i++) {
		struct cta__kernel *k = s->ready[i];
		if (k->next_unit < k->nunits)
			s->ready[n++] = k;
	}
	s->nready = n;
}

int cta__sched_higher_waiting(struct cta_sim *s, const struct cta__kernel *k)
{
	/* The list is sorted by priority: only its front can be higher. */
	for (unsigned i = 0; i < s->nready && s->ready[i]->priority < k->priority; i++)
		if (s->ready[i]->next_unit < s->ready[i]->nunits)
			return 1;
	return 0;
}

static uint64_t jitter(struct cta_sim *s, uint64_t v)
{
	if (!s->o.jitter_ns)
		return v;
	uint64_t j = s->o.jitter_ns;
	int64_t d = (int64_t)(cta__rand(s) % (2 * j + 1)) - (int64_t)j;
	return (int64_t)v + d < 0 ? 0 : (uint64_t)((int64_t)v + d);
}

/* Dispatches one unit of the first kernel in the ready list that fits
 * anywhere; returns 1 when it did. A kernel that cannot fit gives its turn
 * to the next one (a lower-priority or later kernel cuts ahead only into
 * room the earlier ones cannot use). */
static int dispatch_one(struct cta_sim *s)
{
	ready_compact(s);
	for (unsigned c = 0; c < s->nready; c++) {
		struct cta__kernel *k = s->ready[c];
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
	return 0;
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
	ready_compact(s);
	if (!s->nready)
		return;
	s->dispatch_pending = 1;
	cta__push(s, s->fe_free > s->now ? s->fe_free : s->now, EV_DISPATCH, NULL, 0);
}
