/* Cluster launch control in the simulator: try_cancel (and its cluster
 * multicast form), the mbarrier it completes on, the result queries, and
 * the high-level work-stealing loops built on them. Requests are resolved
 * by the engine at their issue time (under the sm_90 emulation a far GPC's
 * later, cta__clc_arrival), in global (time, sequence) order, so
 * "the next block not yet started" is exact. Each rule of the CUDA guide
 * and PTX ISA that users can break is checked here. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/upcalls.h"
#include "clc/clc.h"
#include "exec/exec.h"
#include "exec/regions.h"
#include "sched/sched.h"

#define RESULT_BYTES ((int64_t)sizeof(cta_clc_result))
#define RESULT_MAGIC 0xc1c00000u

uint64_t cta__exec_unit_logical(const struct cta__kernel *k, uint64_t unit, unsigned r);

/* Emulated CLC: a cost of the emulation's global atomics as paid by a
 * block on SM sm. The atomics go to the L2 slice that holds the emulation's
 * context and claim bitmap; from the GPCs on the far side of the L2
 * (clc_far_gpcs) every round trip takes clc_far_ppm / 1e6 as long
 * (docs/FIDELITY.md). */
static inline uint64_t emu_scale(const struct cta_device_model *d, int far, uint64_t ns)
{
	return far && d->clc_far_ppm ? (ns * d->clc_far_ppm + 500000) / 1000000 : ns;
}

/* The costs, each scaled once for a near and a far GPC, and the far SMs
 * as bits (a request pays six: finding each there took about 85 of its
 * 1,735 instructions). */
enum { EMU_REQUEST, EMU_REQUEST_TAIL, EMU_CLAIM, EMU_TURN, EMU_STEAL, EMU_EXIT, EMU_DRAIN };
_Static_assert(EMU_REQUEST == 0, "cta__clc_arrival (clc.h) reads the request's cost as cost 0");

static __attribute__((noinline, cold)) void emu_costs_make(struct cta_sim *s)
{
	const struct cta_device_model *d = &s->dev;
	for (int far = 0; far < 2; far++) {
		uint64_t *c = s->clc_cost[far];
		c[EMU_REQUEST] = emu_scale(d, far, d->clc_request_ns);
		/* (The request and its tail are scaled as one sum.) */
		c[EMU_REQUEST_TAIL] = emu_scale(d, far, d->clc_request_ns + d->clc_request_tail_ns);
		c[EMU_CLAIM] = emu_scale(d, far, d->clc_claim_ns);
		c[EMU_TURN] = emu_scale(d, far, d->clc_claim_turn_ns);
		c[EMU_STEAL] = emu_scale(d, far, d->clc_steal_ns);
		c[EMU_EXIT] = emu_scale(d, far, d->clc_exit_ns);
		c[EMU_DRAIN] = emu_scale(d, far, d->clc_drain_ns);
	}
	for (unsigned sm = 0; sm < d->sm_count && sm < CTA_DEVICE_MAX_SMS; sm++)
		if (d->gpc_of_sm[sm] < 32 && (d->clc_far_gpcs >> d->gpc_of_sm[sm] & 1))
			s->clc_far_sm[sm / 64] |= 1ull << (sm % 64);
	s->clc_costs_made = 1;
}

/* Whether SM sm is on a far GPC (sm is a placed CTA's SM: below
 * sm_count). A request finds it for its issuer once, at its issue (struct
 * cta__request's far), for the four costs it pays. */
static inline unsigned emu_far(const struct cta_sim *s, unsigned sm)
{
	return (unsigned)(s->clc_far_sm[sm / 64 % (CTA_DEVICE_MAX_SMS / 64)] >> (sm % 64) & 1);
}

static inline uint64_t emu_cost(const struct cta_sim *s, unsigned sm, int which)
{
	return s->clc_cost[emu_far(s, sm)][which];
}

/* A cost as request r's issuer pays it. */
static inline uint64_t emu_cost_r(const struct cta_sim *s, const struct cta__request *r, int which)
{
	return s->clc_cost[r->far][which];
}

/* mbarriers and requests, on cache lines of their own: their fields are
 * read and written at every request. */
__attribute__((noinline, cold)) static void *lines_alloc(size_t size)
{
	void *p = cta__exec_calloc_lines(1, size);
	if (!p)
		abort(); /* a few bytes; nothing sensible to do without them */
	return p;
}

/* The running lane and its CTA. exec.c exports the same as functions; these
 * are read several times per request, where the calls cost more than the
 * loads. */
static inline struct cta__lane_x *self(void)
{
	return (struct cta__lane_x *)cta__cur;
}

static inline struct cta__cta *lane_cta(struct cta__lane_x *x)
{
	return x->cta;
}

static size_t smem_off(const struct cta__cta *c, const void *p)
{
	return (size_t)((const unsigned char *)p - c->smem);
}

static struct cta__mbar *mbar_find(struct cta__cta *c, size_t off)
{
	for (struct cta__mbar *b = c->mbars; b; b = b->next)
		if ((size_t)((unsigned char *)b->addr - c->smem) == off)
			return b;
	return NULL;
}

static struct cta__rslot *slot_find(struct cta__cta *c, size_t off)
{
	/* Most CTAs have one result buffer: its slot is the first. */
	if (c->nrslots && c->rslots[0].off == off)
		return &c->rslots[0];
	for (unsigned i = 1; i < c->nrslots; i++)
		if (c->rslots[i].off == off)
			return &c->rslots[i];
	return NULL;
}

static struct cta__rslot *slot_get(struct cta__cta *c, size_t off)
{
	struct cta__rslot *sl = slot_find(c, off);
	if (sl)
		return sl;
	if (c->nrslots == sizeof(c->rslots) / sizeof(c->rslots[0]))
		return NULL;
	sl = &c->rslots[c->nrslots++];
	memset(sl, 0, sizeof(*sl));
	sl->off = off;
	return sl;
}

static unsigned lane_rank(const struct cta__lane_x *x)
{
	const struct cta__lane *l = &x->l;
	return l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
}

/* Identifies the thread a lane runs now (lanes run several in turn), its
 * rank in the block given. */
static uint64_t thread_key_of(const struct cta__lane_x *x, unsigned rank)
{
	return (uint64_t)x->l.cta_rank << 32 | rank;
}

static uint64_t thread_key(const struct cta__lane_x *x)
{
	return thread_key_of(x, lane_rank(x));
}

/* ---- mbarrier ------------------------------------------------------------ */

/* The CTA whose shared memory holds b, or NULL (an mbarrier outside shared
 * memory has no result slots). The arenas are separate allocations larger
 * than the range tested, so at most one CTA matches: `hint`, the caller's
 * own CTA, almost always is it, which spares the scan. */
static struct cta__cta *mbar_cta(struct cta__unit *u, const struct cta__mbar *b,
                                 struct cta__cta *hint)
{
	size_t span = u->k->smem_bytes + 64;
	const unsigned char *a = (const unsigned char *)b->addr;
	if (a >= hint->smem && a < hint->smem + span)
		return hint;
	for (unsigned i = 0; i < u->nctas; i++)
		if (a >= u->ctas[i].smem && a < u->ctas[i].smem + span)
			return &u->ctas[i];
	return NULL;
}

/* Completes the current phase when every arrival and every transaction byte
 * is in, and wakes the threads waiting for it. `hint` is the CTA the caller
 * expects b in (see mbar_cta). Returns 1 if it completed. */
static int mbar_check(struct cta__unit *u, struct cta__cta *hint, struct cta__mbar *b)
{
	if (b->pending || b->tx)
		return 0;
	b->completed_t = b->arrive_t > b->tx_t ? b->arrive_t : b->tx_t;
	b->phase++;
	b->pending = b->count;
	b->arrive_t = b->tx_t = 0;
	/* Whole arrays: only the first ndone entries are ever read, and a
	 * fixed-size copy is one move instead of a call. */
	memcpy(b->done_slots, b->pend_slots, sizeof(b->done_slots));
	b->ndone = b->npend;
	b->npend = 0;
	struct cta__cta *c = b->ndone ? mbar_cta(u, b, hint) : NULL;
	for (unsigned i = 0; c && i < b->ndone; i++) {
		struct cta__rslot *sl = &c->rslots[b->done_slots[i]];
		sl->phase_done = 1;
		sl->bar = b;
		sl->done_phase = b->phase;
	}
	struct cta__lane_x **pp = &b->waiters;
	while (*pp) {
		struct cta__lane_x *w = *pp;
		if ((b->phase & 1) != w->wait_parity) {
			*pp = w->next_wait;
			if (b->completed_t > w->l.vtime)
				w->l.vtime = b->completed_t;
			cta__exec_lane_wake(u, w);
		} else {
			pp = &w->next_wait;
		}
	}
	return 1;
}

void cta__mbarrier_init(uint64_t *bar, unsigned count, const char *file, int line)
{
	struct cta__lane_x *x = self();
	struct cta__cta *c = lane_cta(x);
	struct cta__mbar *b = mbar_find(c, smem_off(c, bar));
	if (!b) {
		b = c->spare_mbars;
		if (b) {
			c->spare_mbars = b->next;
			memset(b, 0, sizeof(*b));
		} else {
			b = lines_alloc(sizeof(*b));
		}
		b->addr = bar;
		b->next = c->mbars;
		c->mbars = b;
		x->l.unit->clc_objs = 1;
	} else {
		unsigned unresolved = b->unresolved;
		struct cta__mbar *next = b->next;
		memset(b, 0, sizeof(*b));
		b->addr = bar;
		b->next = next;
		b->unresolved = unresolved;
	}
	b->count = count ? count : 1;
	b->pending = b->count;
	b->init_file = file;
	b->init_line = line;
	*bar = 0;
}

/* mbar_find for an address in the calling lane's own CTA: the same entry
 * (offsets from one base compare as the addresses do). */
static struct cta__mbar *mbar_self(struct cta__lane_x *x, const uint64_t *bar)
{
	for (struct cta__mbar *b = lane_cta(x)->mbars; b; b = b->next)
		if (b->addr == bar)
			return b;
	return NULL;
}

/* Lane x joins the waiters of mbarrier b for the phase of the given
 * parity, from file:line; it is woken when that phase completes. */
static inline void wait_on(struct cta__lane_x *x, struct cta__mbar *b, unsigned parity,
                           const char *file, int line)
{
	x->wait_bar = b;
	x->wait_parity = parity & 1;
	x->wait_file = file;
	x->wait_line = line;
	x->next_wait = b->waiters;
	b->waiters = x;
}

/* wait_on for a lane that leaves without a fiber switch (the loop form's
 * parked block), its clock at vt. */
static inline void park_on(struct cta__lane_x *x, struct cta__mbar *b, unsigned parity,
                           const char *file, int line, uint64_t vt)
{
	wait_on(x, b, parity, file, line);
	x->state = L_MBAR;
	x->l.vtime = vt;
}

static uint64_t arrive(struct cta__lane_x *x, struct cta__mbar *b)
{
	uint64_t state = b->phase;
	if (b->pending)
		b->pending--;
	if (x->l.vtime > b->arrive_t)
		b->arrive_t = x->l.vtime;
	mbar_check(x->l.unit, lane_cta(x), b);
	return state;
}

/* An arrive, wait or request on an mbarrier this block never initialised:
 * on a GPU its state is whatever the shared memory held (zero, or the last
 * block's), so the phase it completes is anyone's guess. The call then
 * goes on as it did before the rule existed (the arrive counts nothing,
 * the wait returns at once). */
static __attribute__((noinline, cold)) void uninitialised(struct cta__lane_x *x,
                                                          const uint64_t *bar, const char *what,
                                                          const char *file, int line)
{
	struct cta__unit *u = x->l.unit;
	struct cta__cta *c = lane_cta(x);
	const unsigned char *a = (const unsigned char *)bar;
	if (a >= c->smem && a < c->smem + u->k->smem_bytes)
		cta__ub(
		    u->sim, UB_MBARRIER_NOT_INITIALISED, u, x, file, line,
		    "%s on the mbarrier at shared memory offset %zu, which this block never "
		    "initialised (cta_mbarrier_init, then a barrier, before any thread uses it)",
		    what, smem_off(c, bar));
	else
		cta__ub(u->sim, UB_MBARRIER_NOT_INITIALISED, u, x, file, line,
		        "%s on an mbarrier at %p, outside this block's shared memory, which "
		        "cta_mbarrier_init never initialised",
		        what, (const void *)bar);
}

uint64_t cta__mbarrier_arrive(uint64_t *bar, const char *file, int line)
{
	struct cta__lane_x *x = self();
	struct cta__mbar *b = mbar_self(x, bar);
	if (!b) {
		uninitialised(x, bar, "arrive", file, line);
		return 0;
	}
	return arrive(x, b);
}

uint64_t cta__mbarrier_arrive_expect_tx(uint64_t *bar, unsigned bytes, const char *file, int line)
{
	struct cta__lane_x *x = self();
	struct cta__mbar *b = mbar_self(x, bar);
	if (!b) {
		uninitialised(x, bar, "arrive_expect_tx", file, line);
		return 0;
	}
	b->tx += bytes;
	return arrive(x, b);
}

static void observe(struct cta__lane_x *x, struct cta__mbar *b, unsigned rank)
{
	uint64_t key = thread_key_of(x, rank);
	struct cta__obs *o = NULL;
	/* (A compiled block with several waits keeps them per thread.) */
	if (__builtin_expect(x->l.unit->k->kc != NULL, 0) &&
	    cta__regions_observe(x, b, b->phase, rank))
		goto slots;
	for (unsigned i = 0; i < CTA__OBS_MAX && !o; i++) {
		o = cta__base_lane_obs(x, i);
		if (!o)
			o = cta__exec_lane_obs_more(x); /* NULL: out of memory */
		else if (o->bar != b && o->bar && o->tseq == key)
			o = NULL;
	}
	if (!o)
		o = &x->obs[0];
	x->obs_used = 1;
	o->bar = b;
	o->phase = b->phase;
	o->tseq = key;
	slots:
	;
	struct cta__cta *c = lane_cta(x);
	for (unsigned i = 0; i < b->ndone; i++) {
		struct cta__rslot *sl = &c->rslots[b->done_slots[i]];
		if (!sl->observed) {
			sl->observed = 1;
			sl->observer = rank;
			sl->observed_gen = x->bar_gen;
		}
	}
}

/* Emulated CLC: the thread that issued a request this phase completed was
 * in its atomics `wait` longer than the issue charged it (see emulated()),
 * so what it did after the request, until it waited (`before`), comes that
 * much later. */
static void issuer_waited(struct cta__lane_x *x, const struct cta__mbar *b, uint64_t before,
                          unsigned rank)
{
	struct cta__cta *c = lane_cta(x);
	for (unsigned i = 0; i < b->ndone; i++) {
		const struct cta__request *r = c->rslots[b->done_slots[i]].r;
		if (r && r->wait && r->thread == rank && r->cta == x->l.cta_rank &&
		    before + r->wait > x->l.vtime)
			x->l.vtime = before + r->wait;
	}
}

int cta__clc_quick_observe = 1;
_Thread_local uint64_t cta__clc_quick_observes;

bool cta__mbarrier_try_wait_parity(uint64_t *bar, unsigned parity, const char *file, int line)
{
	struct cta__lane_x *x = self();
	struct cta__mbar *b = mbar_self(x, bar);
	if (!b) {
		uninitialised(x, bar, "try_wait_parity", file, line);
		return true;
	}
	uint64_t before = x->l.vtime;
	while ((b->phase & 1) == (parity & 1)) {
		/* Like the hardware's potentially blocking try_wait, the thread
		 * sleeps until the phase completes instead of spinning. */
		wait_on(x, b, parity, file, line);
		cta__exec_lane_wait_mbar(x);
	}
	if (b->completed_t > x->l.vtime)
		x->l.vtime = b->completed_t;
	const struct cta_sim *s = x->l.unit->sim;
	if (s->dev.clc_emulated | s->checks) {
		unsigned rank = lane_rank(x); /* (once for both) */
		if (s->checks && b->ndone == 1 && x->obs[0].bar == b &&
		    x->obs[0].tseq == thread_key_of(x, rank) && cta__clc_quick_observe) {
			/* The usual wait: one request completed the phase, and
			 * this thread observed this mbarrier last time too
			 * (observe's choice of entry is its first): issuer_waited
			 * (a request's wait is 0 but on emulated CLC) and observe
			 * for that one slot. */
			struct cta__rslot *sl = &lane_cta(x)->rslots[b->done_slots[0]];
			const struct cta__request *r = sl->r;
			if (r && r->wait && r->thread == rank && r->cta == x->l.cta_rank &&
			    before + r->wait > x->l.vtime)
				x->l.vtime = before + r->wait;
			x->obs_used = 1;
			x->obs[0].phase = b->phase;
			if (!sl->observed) {
				sl->observed = 1;
				sl->observer = rank;
				sl->observed_gen = x->bar_gen;
			}
			/* Its reads of that result are defined now, and stay so
			 * (checked_slot_slow's test, which this observation makes
			 * true): they skip the test. The loop form keeps its
			 * observations apart (observed_by). */
			if (r && r->resolved && sl->phase_done && sl->bar == b &&
			    sl->done_phase <= b->phase && r->done_t <= x->l.vtime &&
			    !x->l.unit->k->kc)
				sl->ok_key = thread_key_of(x, rank) + 1;
			cta__clc_quick_observes++;
			return true;
		}
		if (s->dev.clc_emulated)
			issuer_waited(x, b, before, rank);
		if (s->checks)
			observe(x, b, rank);
	}
	return true;
}

/* ---- try_cancel ------------------------------------------------------------ */

/* Storage for a new request of CTA c (rank `rank`), out of c's list; the
 * caller fills it in and links it first. `own` is c's slot for the new
 * request's result buffer, if it has one: the request that last wrote it is
 * reused when nothing can read it any more, that is when it is resolved
 * (neither the engine nor the unit's list of new requests holds it) and not
 * multicast (it wrote this slot alone, which the new request overwrites, and
 * it issued from c; the end-of-CTA rules, which walk the lists, look at
 * multicast requests only). A block that steals many blocks so keeps one
 * request per result buffer instead of allocating one per steal. */
static struct cta__request *request_storage(struct cta__cta *c, unsigned rank,
                                            struct cta__rslot *own)
{
	struct cta__request *r = own ? own->r : NULL;
	if (r && r->resolved && !r->multicast && r->cta == rank) {
		struct cta__request **pp = &c->reqs;
		while (*pp != r)
			pp = &(*pp)->next;
		*pp = r->next;
		return r;
	}
	r = c->spare_reqs;
	if (r) {
		c->spare_reqs = r->next;
		return r;
	}
	return lines_alloc(sizeof(*r));
}

/* The rules a new request can break: a request after the block observed
 * a failure, a multicast to a cluster not (or no longer) running, and a
 * result buffer whose last request is still in flight. */
static inline __attribute__((always_inline)) void
check_request(struct cta_sim *s, struct cta__unit *u, struct cta__cta *c, struct cta__lane_x *x,
              int multicast, size_t roff, struct cta__rslot *own, const char *file, int line)
{
	/* (The caller's own first and last, computed again: passing them in
	 * costs the request path 5 instructions, checking off or on.) */
	unsigned first = multicast ? 0 : x->l.cta_rank, last = multicast ? u->nctas : first + 1;
	if (c->observed_failure && c->observed_failure_t <= x->l.vtime)
		cta__ub(s, UB_REQUEST_AFTER_OBSERVED_FAILURE, u, x, file, line,
		        "the block observed a failed cancellation at %s:%d (t=%" PRIu64 " ns)",
		        c->observed_failure_file, c->observed_failure_line, c->observed_failure_t);
	if (multicast && u->nctas > 1) {
		/* Exited in virtual time: a CTA whose threads all ended before
		 * the request. A CTA not yet retired by the executor (done) is
		 * checked when it is (cta__clc_cta_end), whatever the host
		 * order of its threads and this request. */
		for (unsigned i = 0; i < u->nctas; i++)
			if (u->ctas[i].done && u->ctas[i].end_t < x->l.vtime) {
				cta__ub(s, UB_MULTICAST_CLUSTER_NOT_RUNNING, u, x, file, line,
				        "CTA %u of the cluster (block %" PRIu64
				        ") has exited before this multicast cancel",
				        i, u->ctas[i].logical);
				break;
			}
		if (u->cbar_gen == 0)
			cta__ub(s, UB_MULTICAST_CLUSTER_NOT_RUNNING, u, x, file, line,
			        "no cluster barrier completed before this multicast cancel, so not "
			        "every CTA of the cluster is known to have started (sync the "
			        "cluster first)");
	}
	for (unsigned t = first; t < last; t++) {
		/* (The issuer's own slot without a search: the one target of
		 * a request that is not multicast.) */
		struct cta__rslot *sl =
		    !multicast || &u->ctas[t] == c ? own : slot_find(&u->ctas[t], roff);
		if (sl && sl->r && (!sl->r->resolved || sl->r->done_t > x->l.vtime)) {
			cta__ub(s, UB_RESULT_BUFFER_IN_FLIGHT, u, x, file, line,
			        "the request issued at %s:%d (t=%" PRIu64
			        " ns) on the same result buffer has not completed",
			        sl->r->file, sl->r->line, sl->r->issue_t);
			break;
		}
	}
}

/* New request r takes CTA t's slot for its result buffer and counts as
 * unresolved on t's mbarrier; own and ownb are t's slot and mbarrier when
 * the caller found them (the issuer's, NULL otherwise). (Inline: a loop
 * over one target cost a request 10 instructions.) */
static inline __attribute__((always_inline)) void target(struct cta__unit *u,
                                                         struct cta__request *r, unsigned t,
                                                         struct cta__rslot *own,
                                                         struct cta__mbar *ownb)
{
	struct cta__cta *tc = &u->ctas[t];
	struct cta__rslot *sl = own ? own : slot_get(tc, r->result_off);
	if (sl) {
		memset(sl, 0, sizeof(*sl));
		sl->off = r->result_off;
		sl->r = r;
	}
	struct cta__mbar *b = ownb ? ownb : mbar_find(tc, r->bar_off);
	if (b) {
		b->unresolved++;
		r->counted |= 1u << (t & 31);
	}
}

void cta__clc_try_cancel(cta_clc_result *result, uint64_t *bar, int multicast, const char *file,
                         int line)
{
	struct cta__lane_x *x = self();
	struct cta__unit *u = x->l.unit;
	struct cta_sim *s = u->sim;
	struct cta__kernel *k = u->k;
	struct cta__cta *c = lane_cta(x);
	/* Read first: a store on every call from every host thread would
	 * bounce the kernel's cache line between cores. */
	if (!__atomic_load_n(&k->uses_clc, __ATOMIC_RELAXED))
		__atomic_store_n(&k->uses_clc, 1, __ATOMIC_RELAXED);
	size_t roff = smem_off(c, result), boff = smem_off(c, bar);

	struct cta__rslot *own = slot_find(c, roff);
	if (s->checks)
		check_request(s, u, c, x, multicast, roff, own, file, line);
	unsigned first = multicast ? 0 : x->l.cta_rank, last = multicast ? u->nctas : first + 1;
	struct cta__mbar *ownb = mbar_self(x, bar);
	if (!ownb && s->checks)
		uninitialised(x, bar, multicast ? "try_cancel (multicast)" : "try_cancel", file,
		              line);
	struct cta__request *r = request_storage(c, x->l.cta_rank, own);
	/* Every field, one by one: gcc clears a struct of this size with `rep
	 * stos`, whose start-up costs more than these stores (see exec.c's
	 * zero()). */
	r->unit = u;
	r->k = k;
	r->cta = x->l.cta_rank;
	r->multicast = multicast != 0;
	r->result_off = roff;
	r->bar_off = boff;
	r->issue_t = x->l.vtime;
	r->done_t = 0;
	r->wait = 0;
	r->resolved = 0;
	r->outcome = 0;
	r->unit_index = 0;
	r->first = (uint3){0, 0, 0};
	r->thread = lane_rank(x);
	r->file = file;
	r->line = line;
	r->counted = 0;
	r->far = 0;
	/* (No success decoded yet: read_first moves steal_current.) */
	r->own = c->steal_current == c->logical;
	r->next_new = NULL;
	r->next = c->reqs;
	c->reqs = r;
	u->clc_objs = 1;
	if (u->new_reqs_tail)
		u->new_reqs_tail->next_new = r;
	else
		u->new_reqs = r;
	u->new_reqs_tail = r;
	if (multicast)
		for (unsigned t = first; t < last; t++)
			target(u, r, t, &u->ctas[t] == c ? own : NULL,
			       &u->ctas[t] == c ? ownb : NULL);
	else
		target(u, r, first, own, ownb);
	/* Checked here too: a call per request is a noticeable part of its
	 * cost in runs without a trace. */
	if (s->tw)
		cta__base_out_trace(s, x->l.vtime, CTA_TEV_CANCEL, k->id, c->steal_current,
		                    c->logical, c->sm, CTA_TRACE_NONE, 0, NULL);
	/* Emulated CLC: the request is the issuer's own atomics, done before
	 * it goes on (docs/FIDELITY.md). */
	if (s->dev.clc_emulated) {
		if (__builtin_expect(!s->clc_costs_made, 0))
			emu_costs_make(s);
		r->far = (unsigned char)emu_far(s, c->sm);
		x->l.vtime += emu_cost_r(s, r, EMU_REQUEST_TAIL);
	}
}

static void encode(cta_clc_result *res, int success, uint3 b)
{
	res->w[0] = RESULT_MAGIC | (success ? 1u : 0u);
	res->w[1] = success ? b.x : 0;
	res->w[2] = success ? b.y : 0;
	res->w[3] = success ? b.z : 0;
}

/* issuer_work's search of the waiters from w on, `since` its start. */
static __attribute__((noinline)) uint64_t issuer_waiting(const struct cta__request *r,
                                                         struct cta__lane_x *w, uint64_t since)
{
	for (; w; w = w->next_wait) {
		uint64_t vt;
		if (w->kc_park) { /* the loop form: the block waits as a whole */
			if (cta__regions_park_wait_time(w, r->thread, &vt))
				return vt > since ? vt - since : 0;
		} else if (w->l.cta_rank == r->cta && lane_rank(w) == r->thread) {
			return w->l.vtime > since ? w->l.vtime - since : 0;
		}
	}
	return 0;
}

/* Emulated CLC: the issuer's work since its request, if it already waits
 * for the request's completion (its lane is among the mbarrier's
 * waiters); 0 otherwise. */
static inline __attribute__((always_inline)) uint64_t issuer_work(struct cta_sim *s,
                                                                  const struct cta__request *r,
                                                                  const struct cta__cta *c,
                                                                  const struct cta__mbar *b)
{
	if (c->reqs != r) /* it issued another since: that is what it did */
		return 0;
	uint64_t since = r->issue_t + emu_cost_r(s, r, EMU_REQUEST_TAIL);
	/* Waiting for its block's previous request (issued back to back, whose
	 * result it waits for first) is not work: the claim of this one went
	 * on meanwhile. */
	if (r->next && r->next->resolved && r->next->done_t > since)
		since = r->next->done_t;
	/* The usual case, the issuer the first waiter on fibers, inline; the
	 * search (issuer_waiting, the same tests from the first waiter on)
	 * out of line: its call to the loop form kept about 25 instructions
	 * of saved and restored registers on every resolution. */
	struct cta__lane_x *w = b ? b->waiters : NULL;
	if (w && !w->kc_park && w->l.cta_rank == r->cta && lane_rank(w) == r->thread)
		return w->l.vtime > since ? w->l.vtime - since : 0;
	return w ? issuer_waiting(r, w, since) : 0;
}

uint64_t cta__clc_issuer_work(struct cta_sim *s, const struct cta__request *r)
{
	if (!s->dev.clc_emulated)
		return 0;
	if (__builtin_expect(!s->clc_costs_made, 0))
		emu_costs_make(s);
	struct cta__cta *c = &r->unit->ctas[r->cta];
	return issuer_work(s, r, c, mbar_find(c, r->bar_off));
}

/* Emulated CLC: ns (a request's atomics) as they take with the launch's
 * resident units all requesting: the emulation's context and claim
 * bitmap are single words that every requester's atomics go to, and their
 * round trip grows with the square of the requesters (clc_crowd_units,
 * docs/FIDELITY.md). Read at resolution, by the engine. */
static uint64_t emu_crowd(const struct cta_sim *s, const struct cta__kernel *k, uint64_t ns)
{
	unsigned r0 = s->dev.clc_crowd_units;
	if (!r0)
		return ns;
	double r = (double)(k->ctas_running / (k->csize ? k->csize : 1)) / r0;
	return (uint64_t)((double)ns * (1 + r * r) + 0.5);
}

/* Emulated CLC, a launch without clusters: the emulation's context (the
 * dispatch frontier and the cursor, one 32-byte sector) as a queue that
 * every block's entry (its atomicMax on the frontier) and every request
 * (its atomics on the frontier and the cursor) goes through in turn:
 * clc_entry_ps an entry, counted from the launch's first start for the
 * blocks that started before its first request and from the last request
 * for the later ones, and clc_sector_ps a request from when it gets there
 * (the engine resolves it then). Returns the earliest completion of the
 * request being resolved: its pass and the near GPCs' clc_request_ns after
 * it. Resolved in global (time, sequence) order, so the same at any
 * thread count (docs/FIDELITY.md, *Requests in a burst*). */
static uint64_t sector_pass(struct cta_sim *s, struct cta__kernel *k)
{
	uint64_t started = k->st.launched;
	if (started > k->sector_entries) {
		uint64_t from = k->sector_entries ? k->sector_seen : k->st.first_start_ns;
		if (k->sector_ps < from * 1000)
			k->sector_ps = from * 1000;
		k->sector_ps += (started - k->sector_entries) * s->dev.clc_entry_ps;
		k->sector_entries = started;
	}
	k->sector_seen = s->now;
	if (k->sector_ps < s->now * 1000)
		k->sector_ps = s->now * 1000;
	k->sector_ps += s->dev.clc_sector_ps;
	return (k->sector_ps + 999) / 1000 + s->clc_cost[0][EMU_REQUEST];
}

/* Emulated CLC (docs/FIDELITY.md): a request completes clc_request_ns
 * after its issue; a success then claims its unit with a compare-and-swap
 * on the 32-bit word of the claim bitmap that holds the unit's two bits
 * (16 units a word, include/ctasim/sys/kernel_cuda.h). The issuing
 * thread's loop there runs only after the rest of its warp has done the
 * work that follows the request (the lanes diverged; the others go
 * first), and requests whose units share a word win one per round trip:
 * the claim completes clc_claim_ns after the request and that work, or
 * clc_claim_turn_ns after the word's previous claim, whichever is later.
 * Units are handed out in order: the word's previous claim is the
 * launch's last one. With many requesters (emu_crowd) the issuer was in
 * its atomics `crowd` longer than its issue charged it: the request's
 * growth, and the share of it (clc_crowd_tail_ppm) that its record of the
 * completion, more round trips to the same atomics, adds before it goes
 * on. A clustered launch's request then stores its result into each CTA
 * it reaches, clc_multicast_ns each. */
static inline __attribute__((always_inline)) void emulated(struct cta_sim *s, struct cta__kernel *k,
                                                           struct cta__request *r, uint64_t crowd,
                                                           const struct cta__cta *c,
                                                           const struct cta__mbar *b)
{
	uint64_t done = r->done_t;
	if (r->outcome == CTA_CANCEL_SUCCESS) {
		uint64_t word = r->unit_index / 16 + 1;
		uint64_t turn = emu_cost_r(s, r, EMU_TURN);
		done += issuer_work(s, r, c, b) + emu_cost_r(s, r, EMU_CLAIM);
		if (k->claim_word == word && k->claim_done + turn > done)
			done = k->claim_done + turn;
		k->claim_word = word;
		k->claim_done = done;
	}
	/* A clustered launch's result goes into each CTA the request reaches
	 * (st.async, one after the other, after the claim): every CTA of the
	 * cluster for a multicast, the issuer's alone otherwise. */
	if (k->csize > 1 && s->dev.clc_multicast_ns)
		done += (uint64_t)s->dev.clc_multicast_ns * (r->multicast ? r->unit->nctas : 1);
	r->wait = done - r->done_t + crowd;
	r->done_t = done;
}

/* Resolved request r writes its result into CTA t's buffer, if that
 * slot is still r's, and completes its transaction on t's mbarrier, b
 * (mbar_find's, the caller's for the issuer's CTA).
 * (Inline: a loop over one target cost a request 16 instructions.) */
static inline __attribute__((always_inline)) void
deliver(struct cta__unit *u, struct cta__request *r, unsigned t, int outcome, struct cta__mbar *b)
{
	struct cta__cta *tc = &u->ctas[t];
	struct cta__rslot *sl = slot_find(tc, r->result_off);
	if (sl && sl->r == r) {
		cta__exec_smem_handed_out(u, tc);
		encode((cta_clc_result *)(tc->smem + r->result_off), outcome == CTA_CANCEL_SUCCESS,
		       r->first);
	}
	if (!b)
		return;
	if ((r->counted & (1u << (t & 31))) && b->unresolved)
		b->unresolved--;
	b->tx -= RESULT_BYTES;
	if (r->done_t > b->tx_t)
		b->tx_t = r->done_t;
	if (sl && sl->r == r && b->npend < sizeof(b->pend_slots))
		b->pend_slots[b->npend++] = (unsigned char)(sl - tc->rslots);
	mbar_check(u, tc, b);
}

void cta__clc_resolve(struct cta_sim *s, struct cta__request *r)
{
	struct cta__kernel *k = r->k;
	struct cta__unit *u = r->unit;
	int outcome;
	if (k->next_unit >= k->nunits)
		outcome = CTA_CANCEL_FAIL_EMPTY;
	else if (cta__sched_higher_waiting(s, k))
		outcome = CTA_CANCEL_FAIL_PRIORITY;
	else if ((s->o.cancel_fail_after >= 0 &&
	          s->cancels_total >= (uint64_t)s->o.cancel_fail_after) ||
	         (s->o.cancel_fail_rate > 0 &&
	          (double)(cta__base_rand(s) >> 11) * 0x1.0p-53 < s->o.cancel_fail_rate))
		outcome = CTA_CANCEL_FAIL_INJECTED;
	else
		outcome = CTA_CANCEL_SUCCESS;
	s->cancels_total++;
	k->st.cancels++;
	r->resolved = 1;
	r->outcome = outcome;
	uint64_t lat =
	    s->dev.clc_emulated ? emu_cost_r(s, r, EMU_REQUEST) : s->dev.cancel_latency_ns;
	uint64_t crowd = 0;
	if (s->dev.clc_emulated && s->dev.clc_crowd_units) {
		/* (emu_crowd's division, square and rounding took 27 of a
		 * request's instructions; its inputs change as blocks start.) */
		if (__builtin_expect(k->crowd_running != k->ctas_running + 1, 0)) {
			for (int far = 0; far < 2; far++) {
				uint64_t base = s->clc_cost[far][EMU_REQUEST];
				uint64_t l = emu_crowd(s, k, base);
				k->crowd_lat[far] = l;
				/* (The share is fitted on kernels without clusters, whose
				 * result store and way out reach one CTA.) */
				uint64_t share = k->csize > 1 ? 0 : s->dev.clc_crowd_tail_ppm;
				k->crowd_wait[far] =
				    (l - base) + ((l - base) * share + 500000) / 1000000;
			}
			k->crowd_running = k->ctas_running + 1;
		}
		lat = k->crowd_lat[r->far];
		crowd = k->crowd_wait[r->far];
	}
	if (s->o.jitter_ns) {
		uint64_t j = s->o.jitter_ns;
		int64_t d = (int64_t)(cta__base_rand(s) % (2 * j + 1)) - (int64_t)j;
		lat = (int64_t)lat + d < 1 ? 1 : (uint64_t)((int64_t)lat + d);
	}
	/* (A far request is resolved cta__clc_arrival after its issue.) */
	r->done_t = s->now - cta__clc_arrival(s, r) + lat;
	/* A request that fails, issued while its block still runs its own
	 * index (its first, or the first two of a loop that issues two before
	 * it waits), waits its turn at the context (sector_pass): the bursts
	 * the queue was fitted on. */
	/* (The outcome first: nearly every request succeeds, and the model's
	 * fields are loads a success would not need.) */
	if (outcome != CTA_CANCEL_SUCCESS && r->own && s->dev.clc_emulated &&
	    (s->dev.clc_entry_ps | s->dev.clc_sector_ps) && k->csize <= 1) {
		uint64_t d = sector_pass(s, k);
		if (d > r->done_t) {
			crowd += d - r->done_t;
			r->done_t = d;
		}
	}
	if (outcome == CTA_CANCEL_SUCCESS) {
		r->unit_index = k->next_unit++;
		if (k->next_unit == k->nunits)
			s->cand_valid = 0;
		k->st.stolen += k->csize;
		r->first = cta__base_bid_of_logical(k, cta__exec_unit_logical(k, r->unit_index, 0));
	} else {
		k->st.cancel_fail[outcome]++;
	}
	/* The issuer's mbarrier, found once for the emulation's costs and
	 * the delivery. */
	struct cta__cta *c = &u->ctas[r->cta];
	struct cta__mbar *rb = mbar_find(c, r->bar_off);
	if (s->dev.clc_emulated)
		emulated(s, k, r, crowd, c, rb);
	if (r->multicast)
		for (unsigned t = 0; t < u->nctas; t++)
			deliver(u, r, t, outcome,
			        t == r->cta ? rb : mbar_find(&u->ctas[t], r->bar_off));
	else
		deliver(u, r, r->cta, outcome, rb);
	if (s->tw)
		cta__base_out_trace(
		    s, r->done_t, CTA_TEV_CANCEL_DONE, k->id, c->steal_current, c->logical, c->sm,
		    outcome == CTA_CANCEL_SUCCESS ? cta__exec_unit_logical(k, r->unit_index, 0)
		                                  : CTA_TRACE_NONE,
		    outcome, NULL);
	if (outcome == CTA_CANCEL_SUCCESS)
		cta__sched_request_inline(s); /* the pending range moved */
}

/* ---- queries ------------------------------------------------------------------ */

/* This thread itself observed the phase that completed sl's request. */
static int observed_by(const struct cta__lane_x *x, const struct cta__rslot *sl, uint64_t key)
{
	if (x->l.unit->k->kc) {
		int kept = cta__regions_observed(x, sl->bar, sl->done_phase, (unsigned)key);
		if (kept >= 0)
			return kept;
	}
	for (unsigned i = 0; i < CTA__OBS_MAX; i++) {
		const struct cta__obs *o = cta__base_lane_obs((struct cta__lane_x *)x, i);
		if (!o)
			break;
		if (o->bar == sl->bar && o->tseq == key && o->phase >= sl->done_phase)
			return 1;
	}
	return 0;
}

/* The reports of checked_slot, out of its way. */
static __attribute__((noinline)) struct cta__rslot *report_unready(struct cta__lane_x *x,
                                                                   struct cta__rslot *sl,
                                                                   const char *file, int line,
                                                                   const char *what)
{
	struct cta__unit *u = x->l.unit;
	if (!sl || !sl->r) {
		/* Not "no request has written it": a request issued at the same
		 * virtual time by a thread that runs later in host order has not
		 * been seen yet, and the read is early all the same. */
		cta__ub(u->sim, UB_READ_BEFORE_COMPLETE, u, x, file, line,
		        "%s of a result buffer before this thread observed any cancellation "
		        "request on it complete (no request on it had been issued by t=%" PRIu64
		        " ns in simulation order; wait on the request's mbarrier first)",
		        what, x->l.vtime);
		return NULL;
	}
	sl->reported = 1;
	cta__ub(u->sim, UB_READ_BEFORE_COMPLETE, u, x, file, line,
	        "%s of the result of the request issued at %s:%d before this thread "
	        "observed its mbarrier phase complete (try_wait_parity, or a barrier after "
	        "another thread's)",
	        what, sl->r->file, sl->r->line);
	return sl;
}

static __attribute__((noinline)) struct cta__rslot *checked_slot_slow(struct cta__lane_x *x,
                                                                      const cta_clc_result *result,
                                                                      const char *file, int line,
                                                                      const char *what)
{
	struct cta__cta *c = lane_cta(x);
	struct cta__rslot *sl = slot_find(c, smem_off(c, result));
	if (!sl || !sl->r)
		return report_unready(x, sl, file, line, what);
	/* A thread reads a result several times (is_canceled, then the index):
	 * once its read was defined, later ones by the same thread are too
	 * (its clock, its observations and its barrier count only grow, and a
	 * new request on the buffer clears the slot). With checking off,
	 * nothing sets ok_key and nothing is checked. */
	uint64_t key = thread_key(x) + 1;
	if (sl->ok_key == key || sl->reported || !x->l.unit->sim->checks)
		return sl;
	if (sl->r->resolved && sl->phase_done && sl->r->done_t <= x->l.vtime &&
	    (observed_by(x, sl, key - 1) || (sl->observed && x->bar_gen > sl->observed_gen))) {
		sl->ok_key = key;
		return sl;
	}
	return report_unready(x, sl, file, line, what);
}

/* The result slot of a read, checked: the CTA's first slot read again by
 * the thread whose read of it was defined (ok_key, which the usual wait
 * sets: cta__mbarrier_try_wait_parity), or read with checking off, without
 * a call; the rest by checked_slot_slow. */
static inline __attribute__((always_inline)) struct cta__rslot *
checked_slot(struct cta__lane_x *x, const cta_clc_result *result, const char *file, int line,
             const char *what)
{
	struct cta__cta *c = lane_cta(x);
	struct cta__rslot *sl = &c->rslots[0];
	if (c->nrslots && sl->off == smem_off(c, result) && sl->r &&
	    (sl->ok_key == thread_key(x) + 1 || !x->l.unit->sim->checks))
		return sl;
	return checked_slot_slow(x, result, file, line, what);
}

/* A thread of x's block observed a failed cancellation: from then on, a
 * request from the block is UB (once per block and loop, out of the way). */
static __attribute__((noinline)) void observed_failure(struct cta__lane_x *x, const char *file,
                                                       int line)
{
	struct cta__cta *c = lane_cta(x);
	if (x->l.unit->sim->checks &&
	    (!c->observed_failure || x->l.vtime < c->observed_failure_t)) {
		c->observed_failure = 1;
		c->cold_dirty = 1;
		c->observed_failure_t = x->l.vtime;
		c->observed_failure_file = file;
		c->observed_failure_line = line;
	}
}

/* query_cancel_is_canceled once the read is defined (sl's request
 * resolved): the outcome, and what the emulation charges for it. */
static inline bool read_canceled(struct cta__lane_x *x, const struct cta__rslot *sl,
                                 const char *file, int line)
{
	bool ok = sl->r->outcome == CTA_CANCEL_SUCCESS;
	const struct cta_device_model *dev = &x->l.unit->sim->dev;
	if (!ok) {
		observed_failure(x, file, line);
		/* The emulation's way out, at every decode of a failure as at
		 * every decode of a success (EMU_STEAL): the backend's decode
		 * has every thread of the block record the result through the
		 * same shared-memory atomics (cta__cuda_note_result), so a block
		 * that issued two requests and sees both fail pays it twice. */
		if (dev->clc_emulated)
			x->l.vtime += emu_cost(x->l.unit->sim, lane_cta(x)->sm, EMU_EXIT);
	} else if (dev->clc_emulated) { /* the rest of an emulated steal */
		x->l.vtime += emu_cost(x->l.unit->sim, lane_cta(x)->sm, EMU_STEAL);
		/* ... whose release fence waits for a streaming body's global
		 * stores (clc_drain_ns). */
		if (x->l.unit->k->l.stream_mem) {
			x->l.vtime += emu_cost(x->l.unit->sim, lane_cta(x)->sm, EMU_DRAIN);
			/* ... longer at the block's first success, alike on every
			 * GPC (clc_drain_first_ns). */
			if (sl->r->own)
				x->l.vtime += dev->clc_drain_first_ns;
		}
	}
	return ok;
}

/* get_first_ctaid of a successful request, once the read is defined: the
 * first read of the result marks the stolen block as processed. */
static inline void read_first(struct cta__lane_x *x, struct cta__rslot *sl)
{
	if (sl->consumed)
		return;
	struct cta__unit *u = x->l.unit;
	struct cta__cta *c = lane_cta(x);
	struct cta__kernel *k = u->k;
	sl->consumed = 1;
	uint64_t logical = cta__exec_unit_logical(k, sl->r->unit_index, x->l.cta_rank);
	cta__base_out_mark(u, logical);
	c->steal_current = logical;
	if (u->sim->tw)
		cta__base_out_trace(u->sim, x->l.vtime, CTA_TEV_STEAL, k->id, logical, c->logical,
		                    c->sm, CTA_TRACE_NONE, 0, NULL);
}

bool cta__clc_is_canceled(const cta_clc_result *result, const char *file, int line)
{
	struct cta__lane_x *x = self();
	struct cta__rslot *sl = checked_slot(x, result, file, line, "query_cancel_is_canceled");
	if (!sl || !sl->r->resolved)
		return false;
	return read_canceled(x, sl, file, line);
}

/* get_first_ctaid's report of a failed request's index, out of its way. */
static __attribute__((noinline, cold)) int
read_failed_index(struct cta__lane_x *x, const struct cta__request *r, const char *file, int line)
{
	struct cta__unit *u = x->l.unit;
	cta__ub(u->sim, UB_READ_FAILED_INDEX, u, x, file, line,
	        "the request issued at %s:%d failed (%s): its block index is undefined", r->file,
	        r->line, cta_cancel_outcome_name(r->outcome));
	return 0;
}

int cta__clc_first_ctaid(const cta_clc_result *result, int dim, const char *file, int line)
{
	struct cta__lane_x *x = self();
	struct cta__rslot *sl = checked_slot(x, result, file, line, "get_first_ctaid");
	if (!sl || !sl->r->resolved)
		return 0;
	struct cta__request *r = sl->r;
	if (r->outcome != CTA_CANCEL_SUCCESS)
		return read_failed_index(x, r, file, line);
	read_first(x, sl);
	return (int)(dim == 0 ? r->first.x : dim == 1 ? r->first.y : r->first.z);
}

/* ---- end of a CTA: rules that need every thread ------------------------------ */

void cta__clc_cta_end(struct cta_sim *s, struct cta__unit *u, struct cta__cta *c)
{
	/* Multicast requests issued earlier in host order but after this CTA
	 * ended in virtual time (see cta__clc_try_cancel). */
	for (unsigned i = 0; s->checks && u->nctas > 1 && i < u->nctas; i++)
		for (const struct cta__request *r = u->ctas[i].reqs; r; r = r->next)
			if (r->multicast && r->issue_t > c->end_t)
				/* Found now, broken by the issuer at its issue time. */
				cta__ub_by(
				    s, UB_MULTICAST_CLUSTER_NOT_RUNNING, u, r->cta, r->thread,
				    r->issue_t, r->file, r->line,
				    "CTA %u of the cluster (block %" PRIu64 ") exited at t=%" PRIu64
				    " ns, before this multicast cancel (t=%" PRIu64 " ns)",
				    (unsigned)(c - u->ctas), c->logical, c->end_t, r->issue_t);
	if (c->foreach_calls && c->foreach_calls < c->nthreads && !c->foreach_checked) {
		c->foreach_checked = 1;
		cta__ub(s, UB_FOR_EACH_NOT_ALL_THREADS, u, NULL, c->foreach_file, c->foreach_line,
		        "only %u of the block's %" PRIu64
		        " threads called the work-stealing loop; all must",
		        c->foreach_calls, (uint64_t)c->nthreads);
	}
	free(c->fe_bits);
	c->fe_bits = NULL;
}

/* ---- high level: for_each_canceled_block and try_cancel_blocks ---------------- */

struct fe_state {
	cta_clc_result result;
	uint64_t bar;
};

void cta__syncthreads_rule(const char *file, int line, int rule);

/* The loop's state lives in a hidden part of the CTA's shared memory
 * (the kernel's own __shared__ variables on a GPU). */
static struct fe_state *fe_state_of(struct cta__unit *u, struct cta__cta *c)
{
	return (struct fe_state *)(c->smem + u->k->smem_bytes +
	                           ((16 - u->k->smem_bytes % 16) % 16));
}

/* A thread's entry into the loop, before the loop's first barrier: the
 * rules' counts, the leader, the loop's mbarrier. */
static struct fe_state *work_steal_enter(struct cta__lane_x *x, int leader_mode, bool is_leader,
                                         const char *file, int line)
{
	struct cta__unit *u = x->l.unit;
	struct cta_sim *s = u->sim;
	struct cta__cta *c = lane_cta(x);
	unsigned me = lane_rank(x);
	if (!__atomic_load_n(&u->k->uses_clc, __ATOMIC_RELAXED))
		__atomic_store_n(&u->k->uses_clc, 1, __ATOMIC_RELAXED);
	c->cold_dirty = 1;
	if (!c->foreach_file) {
		c->foreach_file = file;
		c->foreach_line = line;
		c->fe_leader_min = -1;
	}
	if (!c->fe_bits && s->checks) {
		c->fe_bits = calloc((c->nthreads + 63) / 64 + 1, sizeof(uint64_t));
		u->clc_objs = 1;
	}
	if (c->fe_bits && me < c->nthreads) {
		uint64_t bit = 1ull << (me % 64);
		if (c->fe_bits[me / 64] & bit) {
			cta__ub(s, UB_FOR_EACH_CALLED_TWICE, u, x, file, line,
			        "this thread already called it at %s:%d; a block may run the "
			        "work-stealing loop once",
			        c->foreach_file, c->foreach_line);
		} else {
			c->fe_bits[me / 64] |= bit;
			c->foreach_calls++;
		}
	}
	if (leader_mode && is_leader) {
		c->leaders++;
		if (c->fe_leader_min < 0 || (int)me < c->fe_leader_min)
			c->fe_leader_min = (int)me;
	}
	struct fe_state *st = fe_state_of(u, c);
	cta__exec_smem_handed_out(u, c);
	if (me == 0)
		cta__mbarrier_init(&st->bar, 1, file, line);
	return st;
}

static void work_steal_loop(int rank, int leader_mode, bool is_leader, cta_block_fn fn, void *arg,
                            const char *file, int line)
{
	struct cta__lane_x *x = self();
	struct cta__unit *u = x->l.unit;
	struct cta_sim *s = u->sim;
	struct cta__cta *c = lane_cta(x);
	unsigned me = lane_rank(x);
	struct fe_state *st = work_steal_enter(x, leader_mode, is_leader, file, line);
	cta__syncthreads_rule(file, line, UB_FOR_EACH_NOT_ALL_THREADS);
	unsigned leader = 0;
	if (leader_mode) {
		/* Timing-only runs execute thread 0 alone: the leader may be a
		 * thread that never runs, so the count says nothing there. */
		if (c->leaders != 1 && me == 0 && !s->o.timing_only)
			cta__ub(s, UB_LEADER_COUNT, u, x, file, line,
			        "%u threads of the block passed is_leader=true; exactly one must",
			        c->leaders);
		leader = c->fe_leader_min >= 0 ? (unsigned)c->fe_leader_min : 0;
	}
	(void)rank;
	dim3 b = {x->l.bid.x, x->l.bid.y, x->l.bid.z};
	unsigned phase = 0;
	for (;;) {
		if (me == leader) {
			cta__clc_try_cancel(&st->result, &st->bar, 0, file, line);
			cta__mbarrier_arrive_expect_tx(&st->bar, (unsigned)RESULT_BYTES, file,
			                               line);
		}
		x->l.steal_depth++;
		fn(b, arg);
		x->l.steal_depth--;
		cta__mbarrier_try_wait_parity(&st->bar, phase, file, line);
		phase ^= 1;
		bool ok = cta__clc_is_canceled(&st->result, file, line);
		if (ok) {
			b.x = (unsigned)cta__clc_first_ctaid(&st->result, 0, file, line);
			b.y = (unsigned)cta__clc_first_ctaid(&st->result, 1, file, line);
			b.z = (unsigned)cta__clc_first_ctaid(&st->result, 2, file, line);
		}
		/* Every thread has read the result before the next request may
		 * overwrite it. */
		cta__syncthreads_rule(file, line, UB_FOR_EACH_NOT_ALL_THREADS);
		if (!ok)
			break;
	}
}

void cta__for_each_canceled_block(int rank, cta_block_fn fn, void *arg, const char *file, int line)
{
	work_steal_loop(rank, 0, false, fn, arg, file, line);
}

void cta__try_cancel_blocks(int rank, bool is_leader, cta_block_fn fn, void *arg, const char *file,
                            int line)
{
	work_steal_loop(rank, 1, is_leader, fn, arg, file, line);
}

/* ---- the loop for a whole compiled block ------------------------------------- */

void cta__clc_ws_enter(int leader_mode, bool is_leader, const char *file, int line)
{
	work_steal_enter(self(), leader_mode, is_leader, file, line);
}

/* The lane plays thread `rank` of its block at virtual time vt. */
static void ws_thread(struct cta__lane_x *x, unsigned rank, uint64_t vt)
{
	struct cta__lane *l = &x->l;
	l->tid.x = rank % l->bdim.x;
	l->tid.y = rank / l->bdim.x % l->bdim.y;
	l->tid.z = rank / (l->bdim.x * l->bdim.y);
	l->vtime = vt;
}

static uint64_t ws_vt(const struct cta__kc_ws *w, unsigned t)
{
	return t == w->leader ? w->vt_lead : w->vt_state == 2 ? w->vt[t] : w->vt_other;
}

/* Thread t's time after its body (the i-th of the iteration). The threads'
 * times are kept as one value (and the leader's, whose request adds to it)
 * until two differ (vt_state 0: none yet, 1: one value, 2: per rank). */
static int ws_vt_set(struct cta__kc_ws *w, unsigned i, unsigned t, uint64_t vt)
{
	if (t == w->leader) {
		w->vt_lead = vt;
		return 0;
	}
	if (w->vt_state == 0 || (w->vt_state == 1 && vt == w->vt_other)) {
		w->vt_other = vt;
		w->vt_state = 1;
		return 0;
	}
	if (w->vt_state == 1) {
		if (!w->vt) {
			w->vt = malloc((size_t)w->n * sizeof(*w->vt));
			if (!w->vt)
				return -1;
		}
		for (unsigned j = 0; j < i; j++)
			w->vt[cta__regions_ws_at(w, j)] = w->vt_other;
		w->vt_state = 2;
	}
	w->vt[t] = vt;
	return 0;
}

/* work_steal_loop after its first barrier, for every thread of the block
 * at once: what each thread does there, in the order the fiber path runs
 * them (each body, then the wait, for every thread; once the request
 * completed, each thread's reads and the barrier, in wake order, which is
 * the reverse of the waits'). Returns 1 when the loop ended (the threads
 * go on in iteration w->iter's order at w->t), 0 when the block waits for
 * the request (the lane is on the mbarrier's waiters, in state L_MBAR), -1
 * when the block was given up (the watchdog, out of memory). */
int cta__clc_ws_run(struct cta__kc_ws *w)
{
	struct cta__lane_x *x = self();
	struct cta__unit *u = x->l.unit;
	struct cta_sim *s = u->sim;
	struct cta__cta *c = lane_cta(x);
	struct fe_state *st = fe_state_of(u, c);
	const char *file = w->file;
	int line = w->line;
	if (w->waiting)
		goto woken;
	if (w->iter == 0) {
		w->bx = x->l.bid.x;
		w->by = x->l.bid.y;
		w->bz = x->l.bid.z;
		w->leader = w->mode && c->fe_leader_min >= 0 ? (unsigned)c->fe_leader_min : 0;
	}
	for (;;) {
		uint64_t vmax = 0;
		w->vt_state = 0;
		for (unsigned i = 0; i < w->n; i++) {
			unsigned t = cta__regions_ws_at(w, i);
			ws_thread(x, t, w->t);
			if (w->iter == 0 && w->mode && t == 0 && c->leaders != 1 &&
			    !s->o.timing_only)
				cta__ub(s, UB_LEADER_COUNT, u, x, file, line,
				        "%u threads of the block passed is_leader=true; exactly "
				        "one must",
				        c->leaders);
			if (t == w->leader) {
				cta__clc_try_cancel(&st->result, &st->bar, 0, file, line);
				cta__mbarrier_arrive_expect_tx(&st->bar, (unsigned)RESULT_BYTES,
				                               file, line);
			}
			x->l.steal_depth++;
			((cta_block_fn)w->fn)((dim3){w->bx, w->by, w->bz}, w->arg);
			x->l.steal_depth--;
			if (ws_vt_set(w, i, t, x->l.vtime)) {
				cta__base_out_error(u, "kernel %s: out of memory", u->k->label);
				return -1;
			}
			vmax = x->l.vtime > vmax ? x->l.vtime : vmax;
		}
		struct cta__mbar *mb = mbar_self(x, &st->bar);
		if (mb && (mb->phase & 1) == (w->phase & 1)) {
			/* Every thread waits for the request: the block waits as
			 * one lane, its threads' state in w. */
			park_on(x, mb, w->phase, file, line, vmax);
			w->waiting = 1;
			return 0;
		}
	woken:
		mb = mbar_self(x, &st->bar);
		if (mb && (mb->phase & 1) == (w->phase & 1))
			return 0; /* (not the phase it waits for: still on the list) */
		w->waiting = 0;
		bool ok = false;
		/* Every thread reads the result after it waited for the phase
		 * that completed its request: each read is defined, so the
		 * checker's per-thread work (its observation of the phase, the
		 * check of each read) is left out when the slot says so; the
		 * reads' effects stay. Otherwise each thread goes through the
		 * checked calls, as on fibers. */
		struct cta__rslot *sl = mb ? slot_find(c, smem_off(c, &st->result)) : NULL;
		if (sl &&
		    !(sl->r && sl->r->resolved && sl->phase_done && sl->bar == mb && !sl->reported))
			sl = NULL;
		for (unsigned i = w->n; i-- > 0;) {
			unsigned t = cta__regions_ws_at(w, i);
			uint64_t vt = ws_vt(w, t);
			if (mb && mb->completed_t > vt)
				vt = mb->completed_t;
			ws_thread(x, t, vt);
			/* The issuer's atomics, as cta__mbarrier_try_wait_parity
			 * charges them on fibers. */
			if (mb && s->dev.clc_emulated && t == w->leader) {
				issuer_waited(x, mb, ws_vt(w, t), lane_rank(x));
				vt = x->l.vtime;
			}
			if (sl && sl->r->done_t <= vt) {
				ok = read_canceled(x, sl, file, line);
				if (ok) {
					read_first(x, sl);
					w->bx = sl->r->first.x;
					w->by = sl->r->first.y;
					w->bz = sl->r->first.z;
				}
			} else {
				if (mb && s->checks)
					observe(x, mb, lane_rank(x));
				ok = cta__clc_is_canceled(&st->result, file, line);
				if (ok) {
					w->bx = (unsigned)cta__clc_first_ctaid(&st->result, 0, file,
					                                       line);
					w->by = (unsigned)cta__clc_first_ctaid(&st->result, 1, file,
					                                       line);
					w->bz = (unsigned)cta__clc_first_ctaid(&st->result, 2, file,
					                                       line);
				}
			}
			/* The loop's barrier (cta__syncthreads_rule): every thread
			 * arrives at the same one. */
			u->out.crossings++;
			c->cold_dirty = 1;
			if (c->bar_arrived == 0) {
				c->bar_file = file;
				c->bar_line = line;
			}
			c->bar_arrived++;
			if (x->l.vtime > c->bar_max_t)
				c->bar_max_t = x->l.vtime;
		}
		if (cta__exec_bar_idle(s, c)) {
			cta__exec_bar_watchdog_report(u, x, c, file, line, c->bar_idle_ns);
			return -1;
		}
		uint64_t t = c->bar_max_t + s->dev.barrier_ns;
		c->bar_rel_t = t;
		c->bar_gen++;
		x->bar_gen = c->bar_gen;
		x->l.vtime = t;
		c->bar_arrived = 0;
		c->bar_max_t = 0;
		c->bar_file = NULL;
		c->bar_divergent_reported = 0;
		w->t = t;
		w->phase ^= 1;
		w->iter++;
		if (!ok)
			return 1;
	}
}

int cta__clc_wait_blocks(uint64_t *bar, unsigned parity)
{
	struct cta__mbar *b = mbar_self(self(), bar);
	return b && (b->phase & 1) == (parity & 1);
}

int cta__clc_wait_park(uint64_t *bar, unsigned parity, const char *file, int line, uint64_t vt)
{
	return cta__clc_park_lane(self(), bar, parity, file, line, vt);
}

void cta__clc_unpark_lane(struct cta__lane_x *x)
{
	struct cta__mbar *b = x->wait_bar;
	for (struct cta__lane_x **pp = b ? &b->waiters : NULL; pp && *pp; pp = &(*pp)->next_wait)
		if (*pp == x) {
			*pp = x->next_wait;
			break;
		}
}

int cta__clc_park_lane(struct cta__lane_x *x, uint64_t *bar, unsigned parity, const char *file,
                       int line, uint64_t vt)
{
	struct cta__mbar *b = mbar_self(x, bar);
	if (!b || (b->phase & 1) != (parity & 1))
		return 1;
	park_on(x, b, parity, file, line, vt);
	return 0;
}
