/* Events keyed by (time, sequence): FIFO rings for streams of events that
 * arrive in time order and a 4-ary min-heap for the others (see
 * event_queue.h). The
 * sequence number is assigned at insertion, which makes ties break
 * first-in first-out. Four children per node halve the depth of a binary
 * heap and keep siblings in one or two cache lines. */
#include "base/event_queue.h"

#include <stdlib.h>
#include <string.h>

#include "ctasim/errors.h"

void cta__evq_init(struct cta__evq *q)
{
	q->h = NULL;
	q->n = q->cap = 0;
	q->seq = 0;
	q->other = NULL;
	q->spares = 0;
	q->nspares = 0;
	for (int i = 0; i < CTA__EVQ_RINGS; i++)
		q->r[i] = (struct cta__ring){0};
	q->cal = NULL;
	q->cal_b = NULL;
	q->cal_cap = q->cal_n = 0;
	q->cal_free = q->cal_min = CTA__EVQ_NIL;
	q->cal_floor = 0;
	memset(q->cal_bits, 0, sizeof(q->cal_bits));
}

void cta__evq_free(struct cta__evq *q)
{
	free(q->h);
	for (int i = 0; i < CTA__EVQ_RINGS; i++)
		free(q->r[i].e);
	free(q->cal);
	free(q->cal_b);
	cta__evq_init(q);
}

#define before cta__evq_before

/* Appends to ring r: e is not earlier than any event in it. */
static int ring_push(struct cta__ring *r, const struct cta__event *e)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct cta__event *ne = malloc(cap * sizeof(*ne));
		if (!ne)
			return CTA_ENOMEM;
		for (size_t i = 0; i < r->n; i++)
			ne[i] = r->e[(r->head + i) & (r->cap - 1)];
		free(r->e);
		r->e = ne;
		r->cap = cap;
		r->head = 0;
	}
	r->e[(r->head + r->n++) & (r->cap - 1)] = *e;
	r->last_t = e->t;
	return 0;
}

/* q->other again, after the heap or the spares changed. */
static void set_other(struct cta__evq *q)
{
	const struct cta__event *o = q->n ? &q->h[0] : NULL;
	if (q->nspares) {
		const struct cta__ring *r = &q->r[q->order[0]];
		const struct cta__event *h = &r->e[r->head];
		if (!o || before(h, o))
			o = h;
	}
	if (q->cal_n) {
		const struct cta__event *h = &q->cal[q->cal_min].e;
		if (!o || before(h, o))
			o = h;
	}
	q->other = o;
}

/* Spare ring a's head comes before spare ring b's. */
static inline int head_before(const struct cta__ring *a, const struct cta__ring *b)
{
	return a->head_t < b->head_t || (a->head_t == b->head_t && a->head_seq < b->head_seq);
}

/* Spare ring r was empty and holds one event now: it joins the order of
 * heads (its event is the latest pushed, so after every head of its
 * time) and, its time earlier than every ring's last, the front of
 * by_last. */
static void spare_started(struct cta__evq *q, struct cta__ring *r)
{
	unsigned i = (unsigned)(r - q->r);
	r->head_t = r->e[r->head].t;
	r->head_seq = r->e[r->head].seq;
	q->spares |= 1u << (i - CTA__EVQ_FAST);
	unsigned n = q->nspares++;
	memmove(q->by_last + 1, q->by_last, n);
	q->by_last[0] = (unsigned char)i;
	unsigned j = n;
	while (j > 0 && head_before(r, &q->r[q->order[j - 1]])) {
		q->order[j] = q->order[j - 1];
		j--;
	}
	q->order[j] = (unsigned char)i;
}

/* After a pop from spare ring r, the first of the order: its new head
 * takes its place in the order (found by bisection: it passes 8 of 13
 * heads on average for spin_clc), or it leaves both orders when empty. */
static void spare_popped(struct cta__evq *q, struct cta__ring *r)
{
	unsigned n = q->nspares;
	unsigned char id = (unsigned char)(r - q->r);
	if (!r->n) {
		q->spares &= ~(1u << (id - CTA__EVQ_FAST));
		memmove(q->order, q->order + 1, n - 1);
		unsigned j = 0;
		while (q->by_last[j] != id)
			j++;
		memmove(q->by_last + j, q->by_last + j + 1, n - 1 - j);
		q->nspares = n - 1;
		return;
	}
	const struct cta__event *h = &r->e[r->head];
	r->head_t = h->t;
	r->head_seq = h->seq;
	/* The first place in order[1, n) whose head is not before r's. */
	unsigned lo = 1, hi = n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (head_before(&q->r[q->order[mid]], r))
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(q->order, q->order + 1, lo - 1);
	q->order[lo - 1] = id;
}

/* The spare for an event at t: the ring whose last event is the latest
 * not after t (by bisection of by_last), or NULL when every ring's last
 * is later. */
static struct cta__ring *spare_for(struct cta__evq *q, uint64_t t)
{
	unsigned lo = 0, hi = q->nspares;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (q->r[q->by_last[mid]].last_t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &q->r[q->by_last[lo - 1]] : NULL;
}

/* Into the heap. */
static int heap_push(struct cta__evq *q, const struct cta__event *e)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;
		struct cta__event *h = realloc(q->h, cap * sizeof(*h));
		if (!h)
			return CTA_ENOMEM;
		q->h = h;
		q->cap = cap;
	}
	size_t i = q->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 4;
		if (!before(e, &q->h[parent]))
			break;
		q->h[i] = q->h[parent];
		i = parent;
	}
	q->h[i] = *e;
	set_other(q);
	return 0;
}

int cta__evq_push_slow(struct cta__evq *q, struct cta__ring *best, uint64_t t, int type, void *p,
                       uint64_t a)
{
	if (!best) {
		/* A spare: the closest fit (appending keeps by_last sorted),
		 * else an empty one. */
		best = spare_for(q, t);
		if (!best && ~q->spares & ((1u << (CTA__EVQ_RINGS - CTA__EVQ_FAST)) - 1))
			best = &q->r[CTA__EVQ_FAST + __builtin_ctz(~q->spares)];
	}
	if (best) {
		struct cta__event e = {t, q->seq, p, (uint32_t)a, type};
		const struct cta__event *was = best->e;
		int rc = ring_push(best, &e);
		if (rc == 0) {
			q->seq++;
			/* A spare that starts may hold the earliest event; one that
			 * grew moved its head. */
			if (best >= &q->r[CTA__EVQ_FAST] && (best->n == 1 || best->e != was)) {
				if (best->n == 1)
					spare_started(q, best);
				set_other(q);
			}
		}
		return rc;
	}
	struct cta__event e = {t, q->seq, p, (uint32_t)a, type};
	int rc = heap_push(q, &e);
	if (rc == 0)
		q->seq++;
	return rc;
}

/* Room for one more calendar node, and the bucket heads once. */
__attribute__((noinline, cold)) int cta__evq_cal_grow(struct cta__evq *q)
{
	if (!q->cal_b) {
		q->cal_b = malloc(CTA__EVQ_CAL_BUCKETS * sizeof(*q->cal_b));
		if (!q->cal_b)
			return CTA_ENOMEM;
		for (unsigned b = 0; b < CTA__EVQ_CAL_BUCKETS; b++)
			q->cal_b[b].head = CTA__EVQ_NIL;
	}
	uint32_t cap = q->cal_cap ? q->cal_cap * 2 : 1024;
	if (cap <= q->cal_cap || cap == CTA__EVQ_NIL)
		return CTA_ENOMEM;
	struct cta__evq_node *v = realloc(q->cal, cap * sizeof(*v));
	if (!v)
		return CTA_ENOMEM;
	for (uint32_t i = q->cal_cap; i < cap; i++)
		v[i].next = i + 1 < cap ? i + 1 : CTA__EVQ_NIL;
	q->cal_free = q->cal_cap;
	q->cal = v;
	q->cal_cap = cap;
	if (q->cal_n)
		set_other(q); /* it may have been a node's */
	return 0;
}

/* Pops the calendar's earliest event into *out and finds the next. */
static void cal_pop(struct cta__evq *q, struct cta__event *out)
{
	uint32_t i = q->cal_min;
	struct cta__evq_node *nd = &q->cal[i];
	*out = nd->e;
	uint64_t bt = nd->e.t >> CTA__EVQ_CAL_SHIFT;
	unsigned b = (unsigned)(bt % CTA__EVQ_CAL_BUCKETS);
	/* The earliest is its bucket's first. */
	q->cal_b[b].head = nd->next;
	nd->next = q->cal_free;
	q->cal_free = i;
	q->cal_floor = bt;
	if (!--q->cal_n) {
		q->cal_bits[b / 64] &= ~(1ull << (b % 64));
		return;
	}
	if (q->cal_b[b].head != CTA__EVQ_NIL) {
		q->cal_min = q->cal_b[b].head;
		return;
	}
	q->cal_bits[b / 64] &= ~(1ull << (b % 64));
	/* The next non-empty bucket after b, round the calendar. */
	unsigned w = b / 64;
	uint64_t m = q->cal_bits[w] & (~1ull << (b % 64));
	while (!m) {
		w = (w + 1) % (CTA__EVQ_CAL_BUCKETS / 64);
		m = q->cal_bits[w];
	}
	q->cal_min = q->cal_b[w * 64 + (unsigned)__builtin_ctzll(m)].head;
}

int cta__evq_push_seq_slow(struct cta__evq *q, struct cta__ring *best, uint64_t t, uint64_t seq,
                           int type, void *p, uint64_t a)
{
	struct cta__event e = {t, seq, p, (uint32_t)a, type};
	return best ? ring_push(best, &e) : heap_push(q, &e);
}

/* Pops the heap's top into *out (the heap is not empty). */
static void pop_heap(struct cta__evq *q, struct cta__event *out)
{
	*out = q->h[0];
	struct cta__event last = q->h[--q->n];
	size_t n = q->n;
	if (!n)
		return;
	/* Floyd's trick: move the hole down along the smaller children to a
	 * leaf without comparing against `last`, then sift `last` up from
	 * there. The last element usually belongs near the bottom, so this
	 * saves a comparison per level. */
	size_t i = 0;
	for (;;) {
		size_t c = 4 * i + 1;
		if (c >= n)
			break;
		size_t best = c, end = c + 4 < n ? c + 4 : n;
		for (size_t j = c + 1; j < end; j++)
			if (before(&q->h[j], &q->h[best]))
				best = j;
		q->h[i] = q->h[best];
		i = best;
	}
	while (i > 0) {
		size_t parent = (i - 1) / 4;
		if (!before(&last, &q->h[parent]))
			break;
		q->h[i] = q->h[parent];
		i = parent;
	}
	q->h[i] = last;
}

void cta__evq_pop_other(struct cta__evq *q, struct cta__event *out)
{
	if (q->other == &q->h[0]) {
		pop_heap(q, out);
	} else if (q->cal_n && q->other == &q->cal[q->cal_min].e) {
		cal_pop(q, out);
		/* With the heap and the spares empty (an emulated-CLC run's
		 * steady state) the calendar's next is the earliest: set_other
		 * without its call and tests. */
		if (!(q->n | q->nspares)) {
			q->other = q->cal_n ? &q->cal[q->cal_min].e : NULL;
			return;
		}
	} else {
		struct cta__ring *r = &q->r[q->order[0]];
		*out = r->e[r->head];
		r->head = (r->head + 1) & (r->cap - 1);
		r->n--;
		spare_popped(q, r);
	}
	set_other(q);
}
