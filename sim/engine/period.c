/* The schedule's period (period.h): the canonical form of the engine's
 * state after a batch ran, the log of the bodies that ran between two such
 * cuts, and the shift of the live state by whole periods. What runs the
 * skipped bodies and hands the state back is in sim.c (skip_periods). */
#include <stdlib.h>
#include <string.h>

#include "ctasim/errors.h"
#include "engine/period.h"

int cta__engine_period = 1;
int cta__engine_period_fault = 0;

void cta_sim_set_period_skip(int on)
{
	cta__engine_period = on != 0;
}

int cta__engine_period_new(struct cta_sim *s)
{
	if (!cta__engine_period || s->nkernels != 1 || s->tw || s->o.jitter_ns ||
	    s->o.random_tiebreak || s->o.ub_mode == CTA_UB_ABORT || s->o.max_events ||
	    s->o.spin_sched == CTA_SPIN_ADVERSARIAL)
		return 0;
	struct cta__kernel *k = s->kernels[0];
	if (!k->never_waits || k->csize != 1 || k->l.cooperative || k->nunits < 4)
		return 0;
	/* The sub-partitions by placement order (spin_regs_order) are state
	 * the period's canonical form does not hold (blocks of 4k warps take
	 * every sub-partition alike: the rule leaves them be). */
	if (s->dev.spin_regs_order && k->part_warps && k->warps % 4)
		return 0;
	struct cta__period *p = calloc(1, sizeof(*p));
	if (!p)
		return CTA_ENOMEM;
	p->k = k;
	s->per = p;
	return 0;
}

void cta__engine_period_free(struct cta_sim *s)
{
	struct cta__period *p = s->per;
	if (!p)
		return;
	for (unsigned i = 0; i < CTA__PERIOD_CUTS; i++) {
		free(p->cuts[i].canon);
		free(p->cuts[i].per_sm);
		free(p->cuts[i].labels);
	}
	free(p->runs);
	free(p->ev);
	free(p->tmp);
	free(p->pre);
	free(p);
	s->per = NULL;
}

void cta__engine_period_made(struct cta_sim *s, const struct cta__unit *u)
{
	struct cta__period *p = s->per;
	if (p->n == p->cap) {
		/* Runs before the oldest cut kept are no longer needed. */
		uint64_t keep = UINT64_MAX;
		for (unsigned i = 0; i < CTA__PERIOD_CUTS; i++)
			if (p->cuts[i].valid && p->cuts[i].run < keep)
				keep = p->cuts[i].run;
		if (keep == UINT64_MAX || keep > p->committed)
			keep = p->committed;
		if (keep > p->base && keep - p->base >= p->n / 2) {
			size_t drop = (size_t)(keep - p->base);
			memmove(p->runs, p->runs + drop, (p->n - drop) * sizeof(*p->runs));
			p->n -= drop;
			p->base = keep;
		} else {
			size_t cap = p->cap ? p->cap * 2 : 4096;
			struct cta__period_run *r = realloc(p->runs, cap * sizeof(*r));
			if (!r) {
				p->off = 1;
				return;
			}
			p->runs = r;
			p->cap = cap;
		}
	}
	const struct cta__cta *c = &u->ctas[0];
	p->runs[p->n++] = (struct cta__period_run){
	    .index = u->index,
	    .start_t = u->start_t,
	    .t0 = u->cursor.t0,
	    .end0 = c->end_t,
	    .spin = u->cursor.spin,
	    .add = u->cursor.add,
	    .sm = c->sm,
	};
}

void cta__engine_period_committed(struct cta_sim *s, const struct cta__unit *u)
{
	struct cta__period *p = s->per;
	if (p->committed < p->base || p->committed - p->base >= p->n) {
		p->off = 1;
		return;
	}
	struct cta__period_run *r = &p->runs[p->committed - p->base];
	const struct cta__outbox *o = &u->out;
	if (r->index != u->index || u->k != p->k) {
		p->off = 1; /* a unit made some other way: not followed */
		return;
	}
	r->end = u->ctas[0].end_t;
	r->ok = !(o->nrecs | o->nubs | o->nmarks | o->ubtotal | o->error) && u->ctas[0].done == 1;
	p->committed++;
}

/* ---- the canonical form ------------------------------------------------ */

struct canon {
	uint64_t *v;
	size_t n, cap;
	int fail;
};

/* Room for n more words (c->fail when memory ran out). */
static __attribute__((noinline)) void reserve(struct canon *c, size_t n)
{
	if (c->n + n <= c->cap)
		return;
	size_t cap = c->cap ? c->cap : 4096;
	while (cap < c->n + n)
		cap *= 2;
	uint64_t *v = realloc(c->v, cap * sizeof(*v));
	if (!v) {
		c->fail = 1;
		c->n = 0;
		return;
	}
	c->v = v;
	c->cap = cap;
}

static inline __attribute__((always_inline)) void put(struct canon *c, uint64_t x)
{
	if (__builtin_expect(c->n == c->cap, 0)) {
		reserve(c, 1);
		if (c->fail)
			return;
	}
	c->v[c->n++] = x;
}

/* A time relative to the engine's: the difference modulo 2^64 is the
 * same for two states one shift apart, whatever its sign. */
#define REL_T(x) ((uint64_t)(x)-s->now)
#define REL_B(x) ((uint64_t)(x)-k->next_unit)

static inline void put_placed(struct canon *c, const struct cta_sim *s, const struct cta__kernel *k,
                              const struct cta__placed *pl)
{
	put(c, REL_B(pl->index));
	put(c, REL_T(pl->start_t));
	put(c, pl->sm);
	put(c, (uint64_t)pl->spin << 32 | pl->add);
	put(c, pl->first);
}

static inline void put_held(struct canon *c, const struct cta_sim *s, const struct cta__kernel *k,
                            const struct cta__held *h)
{
	put_placed(c, s, k, &h->p);
	put(c, h->rel_t ? REL_T(h->rel_t) : UINT64_MAX);
	put(c, (uint64_t)(uint32_t)h->state << 32 | (uint32_t)h->ins);
	put(c, (uint64_t)(uint32_t)(h->gen - s->open_gen) << 32 | h->pos);
	put(c, (uint32_t)(h->ord - s->held_ord));
}

static int ev_cmp(const void *a, const void *b)
{
	const struct cta__event *x = a, *y = b;
	return cta__evq_before(x, y) ? -1 : cta__evq_before(y, x) ? 1 : 0;
}

/* Gathers every queued event, in (time, sequence) order: the rings are
 * each in order, merged; the heap's events are sorted. -1 when the
 * calendar holds some (emulated CLC, never here) or memory ran out. */
static long gather_events(struct cta_sim *s)
{
	struct cta__period *p = s->per;
	struct cta__evq *q = &s->q;
	if (q->cal_n)
		return -1;
	size_t n = q->n;
	for (int i = 0; i < CTA__EVQ_RINGS; i++)
		n += q->r[i].n;
	if (!n)
		return 0;
	if (2 * n > p->ev_cap) {
		struct cta__event *v = realloc(p->ev, 2 * n * sizeof(*v));
		if (!v)
			return -1;
		p->ev = v;
		p->ev_cap = 2 * n;
	}
	struct cta__event *out = p->ev, *heap = p->ev + n;
	if (q->n) {
		memcpy(heap, q->h, q->n * sizeof(*heap));
		qsort(heap, q->n, sizeof(*heap), ev_cmp);
	}
	size_t pos[CTA__EVQ_RINGS] = {0}, hp = 0;
	int live[CTA__EVQ_RINGS], nlive = 0;
	for (int i = 0; i < CTA__EVQ_RINGS; i++)
		if (q->r[i].n)
			live[nlive++] = i;
	for (size_t m = 0; m < n; m++) {
		const struct cta__event *best = hp < q->n ? &heap[hp] : NULL;
		int from = -1;
		for (int li = 0; li < nlive; li++) {
			int i = live[li];
			const struct cta__ring *r = &q->r[i];
			if (pos[i] == r->n)
				continue;
			const struct cta__event *e = &r->e[(r->head + pos[i]) & (r->cap - 1)];
			if (!best || cta__evq_before(e, best)) {
				best = e;
				from = i;
			}
		}
		out[m] = *best;
		if (from < 0)
			hp++;
		else
			pos[from]++;
	}
	return (long)n;
}

/* -1, 0 or 1 as a is below, equal to or above b (as a word of a form). */
static inline uint64_t cmp3(uint64_t a, uint64_t b)
{
	return (uint64_t)((a > b) - (a < b) + 1);
}

/* A queued event's sequence number in a form: its order against the
 * pending dispatch's and the reservation's (the only numbers it is
 * compared with besides other events', whose order the form keeps). */
static inline uint64_t seq_rel(const struct cta_sim *s, uint64_t seq)
{
	return (s->dispatch_pending ? cmp3(seq, s->dispatch_seq) : 3) << 2 |
	       (s->resv_valid ? cmp3(seq, s->resv_seq) : 3);
}

/* Whether the state of a cut holds only what the canonical form
 * describes; 0, or -1 (then there is no cut). */
static int cut_simple(struct cta_sim *s)
{
	struct cta__kernel *k = s->per->k;
	if (k->state != K_ACTIVE || k->next_unit >= k->nunits || s->nsealed || s->any_spin ||
	    s->npolls || s->favored || s->starved || s->hung || s->aborted || s->stopped ||
	    s->io_error || s->in_dispatch || s->solo || k->uses_clc || k->steals ||
	    k->sweep_pos < k->sweep_len)
		return -1;
	if (s->dev.placement == CTA_PLACE_ORDER) {
		uint64_t len = s->dev.placement_order_len;
		for (unsigned j = 0; j < s->dev.wave_order_count; j++)
			len = s->dev.wave_order[j].len > len ? s->dev.wave_order[j].len : len;
		if (k->next_unit < len)
			return -1;
	}
	return s->nunits_live ? -1 : 0;
}

/* The state of a cut in canonical form; 0, or -1 when it holds something
 * the form does not describe (then there is no cut). */
static int canon_build(struct cta_sim *s, struct canon *c, struct cta__period_cut *cut)
{
	struct cta__kernel *k = s->per->k;
	c->n = 0;
	c->fail = 0;
	reserve(c, 32 + 8 * (size_t)s->nsms + 12 * s->gate_waiting + 14 * s->nready +
	               6 * cta__evq_size(&s->q));
	if (c->fail)
		return -1;
	put(c, (uint64_t)k->state << 32 | (uint32_t)k->comm_state);
	put(c, k->ctas_running);
	put(c, (uint64_t)k->ran_batch << 32 | (uint32_t)k->fit_valid);
	put(c, (uint64_t)(k->units_done != 0) << 1 | (k->st.launched != 0));
	put(c, REL_T(k->st.last_end_ns));
	put(c, (uint64_t)s->cand_valid << 32 | s->ncand);
	put(c, s->nofit_gen == s->room_gen);
	/* Sequence numbers only order events of equal times (the queue's,
	 * and the dispatch's and reservation's tests against the head): the
	 * form holds the events in order, and each event's order against
	 * these two (seq_rel), not the numbers. */
	put(c, s->dispatch_pending ? 0 : UINT64_MAX);
	put(c, s->fe_free > s->now ? s->fe_free - s->now : 0);
	put(c, s->resv_valid ? REL_T(s->resv_t) : UINT64_MAX);
	put(c, s->resv_valid ? (s->dispatch_pending ? cmp3(s->resv_seq, s->dispatch_seq) : 3)
	                     : UINT64_MAX);
	put(c, s->rr_next);
	put(c, s->rng);
	put(c, s->gate_waiting);
	put(c, (uint64_t)s->seal_off << 32 | (uint32_t)s->deterministic);
	put(c, (uint64_t)s->open_ins << 32 | s->open_apart);
	put(c, s->open_held);
	put(c, s->nready);
	put(c, s->nready || s->open_apart ? REL_T(s->ready_min) : UINT64_MAX);
	for (unsigned i = 0; i < s->nsms; i++) {
		const struct cta__sm *m = &s->sms[i];
		if (m->gate_head)
			return -1;
		put(c, (uint64_t)m->threads << 32 | m->warps);
		put(c, (uint64_t)m->blocks << 32 | m->regs);
		put(c, (uint64_t)m->smem << 32 | m->gate_threads);
		put(c, m->gate_warps);
		for (const struct cta__held *h = m->held_head; h; h = h->next)
			put_held(c, s, k, h);
		put(c, UINT64_MAX - 1);
	}
	for (size_t i = 0; i < s->nready; i++) {
		if (s->batch[i])
			return -1;
		const struct cta__placed *pl = &s->placed[i];
		if (pl->k != k)
			return -1;
		put_placed(c, s, k, pl);
		if (pl->h)
			put_held(c, s, k, pl->h);
		else
			put(c, UINT64_MAX - 2);
	}
	long n = gather_events(s);
	if (n < 0)
		return -1;
	if ((size_t)n > cut->labels_cap) {
		uint64_t *v = realloc(cut->labels, (size_t)n * sizeof(*v));
		if (!v)
			return -1;
		cut->labels = v;
		cut->labels_cap = (size_t)n;
	}
	cut->nlabels = 0;
	for (long i = 0; i < n; i++) {
		const struct cta__event *e = &s->per->ev[i];
		if (e->type == EV_GATE_WAIT) {
			/* A held block's longest wait on SM a (the register
			 * file's gate): its time, order and SM. */
			put(c, UINT64_MAX - 3);
			put(c, REL_T(e->t));
			put(c, seq_rel(s, e->seq));
			put(c, e->a);
			continue;
		}
		if (e->type != EV_RETIRE)
			return -1;
		const struct cta__retiring *r = e->p;
		if (r->k != k)
			return -1;
		/* Not the block's index: the engine only passes it on (the
		 * trace, off here; the sub-partitions' records, not in the
		 * form), and two cuts whose retiring blocks ran in other
		 * orders on the same SMs and times are one period apart when
		 * those blocks ran between them (cta__engine_period_cut checks
		 * that). */
		put(c, REL_T(e->t));
		put(c, seq_rel(s, e->seq));
		put(c, (uint64_t)e->a << 32 | r->sm);
		put(c, REL_T(r->start_t));
		put(c, REL_T(r->end_t));
		cut->labels[cut->nlabels++] = REL_B(r->logical);
	}
	return c->fail ? -1 : 0;
}

/* A cheap summary of a cut's state, the same for two cuts whose forms are
 * equal: the counts of the batch, the gate, the queue and the dispatcher,
 * each SM's blocks and held threads, the queue's first time. */
static uint64_t signature(struct cta_sim *s)
{
	const struct cta__kernel *k = s->per->k;
	uint64_t h = s->nready ^ (uint64_t)s->gate_waiting << 20 ^ k->ctas_running << 40;
	h = h * 0xff51afd7ed558ccdull ^ cta__evq_size(&s->q) ^ (uint64_t)s->open_apart << 32;
	h = h * 0xff51afd7ed558ccdull ^ s->open_held ^ (uint64_t)s->open_ins << 32;
	h = h * 0xff51afd7ed558ccdull ^ (uint64_t)s->dispatch_pending << 1 ^ s->resv_valid;
	const struct cta__event *e = cta__evq_head(&s->q);
	h = h * 0xff51afd7ed558ccdull ^ (e ? e->t - s->now : UINT64_MAX);
	for (unsigned i = 0; i < s->nsms; i++) {
		const struct cta__sm *m = &s->sms[i];
		h ^= (uint64_t)m->blocks << 32 | m->gate_threads;
		if (m->held_head)
			h ^= (m->held_head->p.index - k->next_unit) << 20 ^
			     (m->held_head->p.start_t - s->now);
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	/* The queued events' times, in any order (not their sequence
	 * numbers, which the form does not hold either). */
	uint64_t st = 0;
	const struct cta__evq *q = &s->q;
	for (int i = 0; i < CTA__EVQ_RINGS; i++) {
		const struct cta__ring *r = &q->r[i];
		for (size_t j = 0; j < r->n; j++) {
			const struct cta__event *x = &r->e[(r->head + j) & (r->cap - 1)];
			st += (x->t - s->now) * 0x9e3779b97f4a7c15ull ^ (x->t - s->now);
		}
	}
	for (size_t j = 0; j < q->n; j++)
		st += (q->h[j].t - s->now) * 0x9e3779b97f4a7c15ull ^ (q->h[j].t - s->now);
	return (h ^ st) * 0xff51afd7ed558ccdull;
}

/* Whether every block retiring at this cut (queued events: the state the
 * live queue holds now) ran between cut o and this one, whose runs are
 * [o->run, run): then each retiring block's counterpart one period later
 * is that block shifted, which the form, holding no index of a retiring
 * block, does not say by itself. The runs must be the blocks [lo, lo + n)
 * in some order, as the engine's dispatch makes them in every shipped
 * kernel; otherwise no. */
static int retiring_ran_since(struct cta_sim *s, const struct cta__period_cut *o, uint64_t run)
{
	const struct cta__period *p = s->per;
	uint64_t n = run - o->run, lo = UINT64_MAX, hi = 0;
	if (!n)
		return 0;
	for (uint64_t r = o->run; r < run; r++) {
		uint64_t b = p->runs[r - p->base].index;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	if (hi - lo + 1 != n)
		return 0;
	const struct cta__evq *q = &s->q;
	for (int i = 0; i < CTA__EVQ_RINGS; i++) {
		const struct cta__ring *r = &q->r[i];
		for (size_t j = 0; j < r->n; j++) {
			const struct cta__event *x = &r->e[(r->head + j) & (r->cap - 1)];
			const struct cta__retiring *rt = x->p;
			if (x->type == EV_RETIRE && (rt->logical < lo || rt->logical > hi))
				return 0;
		}
	}
	for (size_t j = 0; j < q->n; j++) {
		const struct cta__retiring *rt = q->h[j].p;
		if (q->h[j].type == EV_RETIRE && (rt->logical < lo || rt->logical > hi))
			return 0;
	}
	return 1;
}

/* A summary of a form, compared before the forms' memcmp: every 16th word
 * and the last. A multiply chain over every word cost about 50,000
 * instructions a form of saxpy's (10,300 words); two forms it does not
 * tell apart cost a memcmp, which stops at their first difference. */
static uint64_t hash_words(const uint64_t *v, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (size_t i = 0; i < n; i += 16) {
		h ^= v[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return n ? (h ^ v[n - 1]) * 0xff51afd7ed558ccdull : h;
}

int cta__engine_period_cut(struct cta_sim *s)
{
	struct cta__period *p = s->per;
	struct cta__kernel *k = p->k;
	/* Every body made ran and committed (no open batch of made units). */
	if (p->committed != p->base + p->n)
		return 0;
	if (cut_simple(s) < 0)
		return 0;
	/* A form costs about 60 instructions a resident block, a cut comes
	 * every few hundred blocks: a form at every cut would cost more than
	 * the engine. Each cut leaves its signature; a form is built at a cut
	 * whose signature an earlier cut had (at the second of two cuts one
	 * period apart, and at the third, whose form then equals the
	 * second's). A run whose schedule has not repeated after
	 * CTA__PERIOD_TRIES forms gives up. */
	uint64_t sig = signature(s);
	int seen = 0;
	uint64_t dist = 0;
	for (unsigned i = 0; i < CTA__PERIOD_SIGS && !seen; i++)
		if (p->sigs[i] == sig && p->sig_unit[i] < k->next_unit) {
			seen = 1;
			dist = k->next_unit - p->sig_unit[i];
		}
	p->sigs[p->next_sig] = sig;
	p->sig_unit[p->next_sig] = k->next_unit;
	p->next_sig = (p->next_sig + 1) % CTA__PERIOD_SIGS;
	/* A signature first seen may still be the period's first state: the
	 * transient's last trace (blocks placed before the schedule repeats,
	 * still held or queued) changes the signature too. A cut one
	 * signature's distance after a cut with a form gets one as well, so
	 * the period is found at its second cut in phase, where the
	 * signature alone may find it at the third (saxpy on H100-SXM, with
	 * the retiring blocks' indices in the form: at block 6,996 instead
	 * of 8,052). Only forms asked for by a signature make
	 * such a cut due: at most twice the forms. */
	unsigned nd = 0;
	int due = 0;
	for (unsigned i = 0; i < p->ndue; i++) {
		due |= p->due[i] == k->next_unit;
		if (p->due[i] >= k->next_unit)
			p->due[nd++] = p->due[i];
	}
	p->ndue = nd;
	if (seen && p->ndue < CTA__PERIOD_DUE)
		p->due[p->ndue++] = k->next_unit + dist;
	if (!seen && !due)
		return 0;
	if (++p->forms > CTA__PERIOD_TRIES) {
		p->off = 1;
		return 0;
	}
	struct cta__period_cut *cut = &p->cuts[p->next_cut];
	cut->valid = 0;
	struct canon c = {cut->canon, 0, cut->cap, 0};
	int rc = canon_build(s, &c, cut);
	cut->canon = c.v;
	cut->cap = c.cap;
	if (rc < 0)
		return 0;
	if (!cut->per_sm && !(cut->per_sm = malloc(s->nsms * sizeof(*cut->per_sm)))) {
		p->off = 1;
		return 0;
	}
	cut->valid = 1;
	/* A period starts at a cut with a form: the bodies run before the
	 * first are never logged (about 100 instructions a block: saxpy's
	 * first 4,224 on H100-SXM). */
	p->logging = 1;
	cut->len = c.n;
	cut->hash = hash_words(c.v, c.n);
	cut->run = p->committed;
	cut->now = s->now;
	cut->seq = s->q.seq;
	cut->next_unit = k->next_unit;
	cut->events = s->events;
	cut->batches = s->batches;
	cut->sealed = s->batches_sealed;
	cut->held_inserted = s->held_inserted;
	cut->launched = k->st.launched;
	cut->units_done = k->units_done;
	cut->busy = k->st.busy_ns;
	memcpy(cut->per_sm, k->per_sm, s->nsms * sizeof(*cut->per_sm));
	p->next_cut = (p->next_cut + 1) % CTA__PERIOD_CUTS;
	/* The latest earlier cut of the same form: the shortest period. */
	for (unsigned d = 1; d < CTA__PERIOD_CUTS; d++) {
		const struct cta__period_cut *o =
		    &p->cuts[(p->next_cut + CTA__PERIOD_CUTS - 1 - d) % CTA__PERIOD_CUTS];
		if (!o->valid || o->hash != cut->hash || o->len != cut->len ||
		    o->next_unit >= cut->next_unit || o->now >= cut->now || o->run >= cut->run ||
		    o->run < p->base || memcmp(o->canon, cut->canon, c.n * sizeof(*c.v)))
			continue;
		int ok = 1;
		for (uint64_t r = o->run; ok && r < cut->run; r++)
			ok = p->runs[r - p->base].ok;
		/* Each retiring block retires one period later as itself
		 * shifted: it ran between the two cuts, or, as a form with
		 * the indices would say, its counterpart at cut o was the
		 * block one period before it. */
		if (!ok ||
		    !(retiring_ran_since(s, o, cut->run) ||
		      (o->nlabels == cut->nlabels &&
		       !memcmp(o->labels, cut->labels, cut->nlabels * sizeof(*cut->labels)))))
			continue;
		p->from = o;
		p->to = cut;
		p->P = cut->next_unit - o->next_unit;
		p->D = cut->now - o->now;
		p->E = cut->seq - o->seq;
		p->r0 = o->run;
		p->nr = cut->run - o->run;
		return 1;
	}
	return 0;
}

/* ---- the shift --------------------------------------------------------- */

static void shift_held(struct cta__held *h, uint64_t db, uint64_t dt)
{
	h->p.index += db;
	h->p.start_t += dt;
	if (h->rel_t)
		h->rel_t += dt;
}

/* A queued event (canon_build: a block's retirement, or a held block's
 * longest wait, which names its SM alone). */
static void shift_event(struct cta__event *e, uint64_t db, uint64_t dt, uint64_t dq)
{
	e->t += dt;
	e->seq += dq;
	if (e->type == EV_RETIRE) {
		struct cta__retiring *rt = e->p;
		rt->logical += db;
		rt->start_t += dt;
		rt->end_t += dt;
	}
}

void cta__engine_period_shift(struct cta_sim *s, uint64_t n)
{
	struct cta__period *p = s->per;
	struct cta__kernel *k = p->k;
	const struct cta__period_cut *a = p->from, *b = p->to;
	uint64_t db = n * p->P, dt = n * p->D, dq = n * p->E;
	if (cta__engine_period_fault)
		dt += 1;
	s->now += dt;
	s->q.seq += dq;
	/* The queue: every ring's and the heap's events move alike, so each
	 * stays in order (the calendar is empty: canon_build). */
	struct cta__evq *q = &s->q;
	for (int i = 0; i < CTA__EVQ_RINGS; i++) {
		struct cta__ring *r = &q->r[i];
		for (size_t j = 0; j < r->n; j++)
			shift_event(&r->e[(r->head + j) & (r->cap - 1)], db, dt, dq);
		if (r->n) {
			r->last_t += dt;
			r->head_t += dt;
			r->head_seq += dq;
		}
	}
	for (size_t j = 0; j < q->n; j++)
		shift_event(&q->h[j], db, dt, dq);
	s->fe_free += dt;
	if (s->resv_valid) {
		s->resv_t += dt;
		s->resv_seq += dq;
	}
	if (s->dispatch_pending)
		s->dispatch_seq += dq;
	if (s->nready || s->open_apart)
		s->ready_min += dt;
	/* Held records: those on an SM's list (waiting, states 1 and 2), and
	 * those the open batch refers to that were let go (0 and 3). */
	for (unsigned i = 0; i < s->nsms; i++)
		for (struct cta__held *h = s->sms[i].held_head; h; h = h->next)
			shift_held(h, db, dt);
	for (size_t i = 0; i < s->nready; i++) {
		struct cta__placed *pl = &s->placed[i];
		pl->index += db;
		pl->start_t += dt;
		if (pl->h && (pl->h->state == 0 || pl->h->state == 3))
			shift_held(pl->h, db, dt);
	}
	k->next_unit += db;
	k->units_done += n * (b->units_done - a->units_done);
	k->st.launched += n * (b->launched - a->launched);
	k->st.busy_ns += n * (b->busy - a->busy);
	k->st.last_end_ns += dt;
	for (unsigned i = 0; i < s->nsms; i++)
		k->per_sm[i] += n * (b->per_sm[i] - a->per_sm[i]);
	s->events += n * (b->events - a->events);
	s->batches += n * (b->batches - a->batches);
	s->batches_sealed += n * (b->sealed - a->sealed);
	s->held_inserted += n * (b->held_inserted - a->held_inserted);
}

void cta__engine_period_cover_all(struct cta__kernel *k)
{
	struct cta__cover *c = &k->cover;
	if (!c->cap) {
		uint64_t(*iv)[2] = malloc(sizeof(*iv));
		if (!iv)
			return;
		c->iv = iv;
		c->cap = 1;
	}
	c->iv[0][0] = 0;
	c->iv[0][1] = k->nblocks;
	c->n = 1;
}
