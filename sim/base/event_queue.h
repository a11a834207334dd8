/* The discrete-event queue, ordered by (time, insertion sequence), so events
 * at the same virtual time run first-in first-out and every run is
 * reproducible. FIFO rings, each holding events pushed in nondecreasing
 * time order (sequence numbers only grow, so such a run is already sorted),
 * and a 4-ary min-heap for the rest. Block ends of equal-length blocks form
 * one such stream and fixed-latency responses (cancels) another: two rings
 * take them, and most events never touch the heap. Streams that interleave
 * (emulated CLC's cancels, whose claims queue per bitmap word) take the
 * spare rings, tried only when neither of the two fits, or the calendar
 * (cta__evq_push_near), buckets of a few nanoseconds over the next 16 us;
 * popping takes the least of the heads. */
#ifndef CTASIM_EVENT_QUEUE_H
#define CTASIM_EVENT_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/errors.h"

/* 32 bytes: two events per cache line. */
struct cta__event {
	uint64_t t;
	uint64_t seq;
	void *p;
	uint32_t a;
	int type;
};

/* Events in time order: e[(head + i) & (cap - 1)], i < n; last_t is the
 * time of the last one while n > 0. A spare ring also keeps its head's
 * key (head_t, head_seq) while n > 0, so that finding the least head reads
 * the rings alone. */
struct cta__ring {
	struct cta__event *e;
	size_t head, n, cap;
	uint64_t last_t;
	uint64_t head_t, head_seq;
};

/* Rings 0 and 1 are the ones cta__evq_push tries inline; the others are
 * spares, tried before the heap (a spare costs memory only once used). A
 * run of spin_clc under the emulated-CLC model (--timing-only, 65,536
 * blocks) interleaves up to 14 streams of cancels, 6 on average (18
 * and 14 with the far GPCs' costs): 8 rings in all leave 340 of its
 * 65,802 events to the heap, 16 none (with 2, 49,212). */
#define CTA__EVQ_RINGS 32
#define CTA__EVQ_FAST  2

/* The calendar (cta__evq_push_near): events whose time falls within
 * CTA__EVQ_CAL_BUCKETS buckets of 2^CTA__EVQ_CAL_SHIFT ns from the
 * engine's time, each bucket a list in (time, sequence) order, the
 * non-empty ones as bits. An emulated-CLC cancel is queued 1.1-14.8 us
 * ahead of the engine (spin_clc --timing-only, 9.4 us median) among the
 * other resident blocks' 263: a bucket seldom holds two, and the next
 * non-empty one is a bit scan away. */
#define CTA__EVQ_CAL_SHIFT   4
#define CTA__EVQ_CAL_BUCKETS 1024
#define CTA__EVQ_NIL         UINT32_MAX

struct cta__evq_node {
	struct cta__event e;
	uint32_t next; /* in its bucket, or in the free list */
};

struct cta__evq {
	struct cta__event *h; /* the heap */
	size_t n, cap;
	uint64_t seq;
	/* The earliest of the heap's top and the spare rings' heads, or NULL
	 * when both are empty: finding the earliest event compares it with
	 * the two rings' heads, as it compared the heap's top alone, so runs
	 * that never need a spare pay nothing for them. */
	const struct cta__event *other;
	/* Bit i set: spare ring CTA__EVQ_FAST + i holds events. order[0,
	 * nspares) are those rings by their heads, least first: a pop from
	 * the first moves it back past the heads now before its new one.
	 * by_last[0, nspares) are the same rings by their last events'
	 * times: a push goes to the latest not after its time, which stays
	 * in its place, or starts a ring at the front. */
	uint32_t spares;
	unsigned nspares;
	unsigned char order[CTA__EVQ_RINGS - CTA__EVQ_FAST];
	unsigned char by_last[CTA__EVQ_RINGS - CTA__EVQ_FAST];
	struct cta__ring r[CTA__EVQ_RINGS];
	/* The calendar: cal_n events in nodes of cal (cal_cap of them, the
	 * unused ones from cal_free on), bucket b's first and last in
	 * cal_b[b % CTA__EVQ_CAL_BUCKETS], every one in buckets [cal_floor, cal_floor
	 * + CTA__EVQ_CAL_BUCKETS) (bucket = time >> CTA__EVQ_CAL_SHIFT);
	 * cal_min is the earliest's node while cal_n > 0. */
	struct cta__evq_node *cal;
	struct cta__evq_bucket {
		uint32_t head, tail; /* tail: while head is not CTA__EVQ_NIL */
	} * cal_b;
	uint32_t cal_cap, cal_free, cal_n, cal_min;
	uint64_t cal_floor;
	uint64_t cal_bits[CTA__EVQ_CAL_BUCKETS / 64];
};

void cta__evq_init(struct cta__evq *q);
void cta__evq_free(struct cta__evq *q);
/* The rest of cta__evq_push: into ring `best` when not NULL (growing it),
 * else into a spare ring, else into the heap. */
int cta__evq_push_slow(struct cta__evq *q, struct cta__ring *best, uint64_t t, int type, void *p,
                       uint64_t a);

/* Returns 0 or CTA_ENOMEM. Inline: most events go to a ring with room. */
static inline int cta__evq_push(struct cta__evq *q, uint64_t t, int type, void *p, uint64_t a)
{
	/* The ring whose last event is the latest not after t (an empty ring
	 * takes anything): appending keeps it sorted, since the new sequence
	 * number is larger, and choosing the closest keeps the other ring free
	 * for a stream that runs behind. */
	struct cta__ring *r0 = &q->r[0], *r1 = &q->r[1];
	_Static_assert(CTA__EVQ_FAST == 2, "the two rings tried inline");
	uint64_t t0 = r0->n ? r0->last_t : 0;
	uint64_t t1 = r1->n ? r1->last_t : 0;
	int ok0 = t0 <= t, ok1 = t1 <= t;
	struct cta__ring *best = ok0 ? (ok1 && t1 > t0 ? r1 : r0) : ok1 ? r1 : NULL;
	if (best && best->n < best->cap) {
		best->e[(best->head + best->n++) & (best->cap - 1)] =
		    (struct cta__event){t, q->seq++, p, (uint32_t)a, type};
		best->last_t = t;
		return 0;
	}
	return cta__evq_push_slow(q, best, t, type, p, a);
}
int cta__evq_push_seq_slow(struct cta__evq *q, struct cta__ring *best, uint64_t t, uint64_t seq,
                           int type, void *p, uint64_t a);
/* Pushes an event with the sequence number seq, taken earlier (events
 * pushed since have larger ones): into one of the two rings only when its
 * last event comes before (t, seq), so that the ring stays sorted, else
 * into the heap. Every block of a sealed batch pushes its end so: the
 * append is inline, as cta__evq_push's. */
static inline int cta__evq_push_seq(struct cta__evq *q, uint64_t t, uint64_t seq, int type, void *p,
                                    uint64_t a)
{
	/* One of the two rings whose last event comes before (t, seq), the
	 * closest; not a spare, whose order assumes the latest number. */
	struct cta__ring *best = NULL;
	for (int i = 0; i < CTA__EVQ_FAST; i++) {
		struct cta__ring *r = &q->r[i];
		int fits = !r->n || r->last_t < t ||
		           (r->last_t == t && r->e[(r->head + r->n - 1) & (r->cap - 1)].seq < seq);
		if (fits && (!best || (r->n && (!best->n || r->last_t > best->last_t))))
			best = r;
	}
	if (best && best->n < best->cap) {
		best->e[(best->head + best->n++) & (best->cap - 1)] =
		    (struct cta__event){t, seq, p, (uint32_t)a, type};
		best->last_t = t;
		return 0;
	}
	return cta__evq_push_seq_slow(q, best, t, seq, type, p, a);
}
/* Pops q->other, the heap's top, a spare ring's head or the calendar's
 * earliest, into *out. */
void cta__evq_pop_other(struct cta__evq *q, struct cta__event *out);
static inline int cta__evq_before(const struct cta__event *a, const struct cta__event *b)
{
	/* One wide comparison instead of two dependent branches. */
	unsigned __int128 ka = (unsigned __int128)a->t << 64 | a->seq;
	unsigned __int128 kb = (unsigned __int128)b->t << 64 | b->seq;
	return ka < kb;
}

/* Room for one more calendar node, and the bucket heads once. */
int cta__evq_cal_grow(struct cta__evq *q);
/* cta__evq_push for an event at t >= now (the engine's time, no
 * earlier than any queued event), of a stream that interleaves with
 * others (an emulated-CLC cancel): into the calendar when t is within
 * its span of now, else as cta__evq_push would place it. Returns 0 or
 * CTA_ENOMEM. (Inline: its one caller, the engine's commit, pushes a
 * cancel a request, and the call and its saved registers were about 10
 * of a request's instructions.) */
static inline int cta__evq_push_near(struct cta__evq *q, uint64_t now, uint64_t t, int type,
                                     void *p, uint64_t a)
{
	/* The span starts at now's bucket when no queued event is earlier
	 * (none is: the engine pops in order; the test keeps the order
	 * exact should one be). */
	uint64_t nb = now >> CTA__EVQ_CAL_SHIFT;
	if (nb > q->cal_floor && (!q->cal_n || q->cal[q->cal_min].e.t >> CTA__EVQ_CAL_SHIFT >= nb))
		q->cal_floor = nb;
	uint64_t bt = t >> CTA__EVQ_CAL_SHIFT;
	if (bt < q->cal_floor || bt - q->cal_floor >= CTA__EVQ_CAL_BUCKETS)
		return cta__evq_push(q, t, type, p, a);
	if (q->cal_free == CTA__EVQ_NIL && cta__evq_cal_grow(q) < 0)
		return CTA_ENOMEM;
	uint32_t i = q->cal_free;
	struct cta__evq_node *nd = &q->cal[i];
	q->cal_free = nd->next;
	nd->e = (struct cta__event){t, q->seq++, p, (uint32_t)a, type};
	/* Into its bucket after every event not later (sequence numbers
	 * only grow): most buckets are empty, and events at one time (every
	 * cancel of a wave, with a fixed latency) append. */
	unsigned b = (unsigned)(bt % CTA__EVQ_CAL_BUCKETS);
	struct cta__evq_bucket *bk = &q->cal_b[b];
	if (bk->head == CTA__EVQ_NIL) {
		q->cal_bits[b / 64] |= 1ull << (b % 64);
		nd->next = CTA__EVQ_NIL;
		bk->head = bk->tail = i;
	} else if (q->cal[bk->tail].e.t <= t) {
		nd->next = CTA__EVQ_NIL;
		q->cal[bk->tail].next = i;
		bk->tail = i;
	} else {
		uint32_t *pp = &bk->head;
		while (q->cal[*pp].e.t <= t)
			pp = &q->cal[*pp].next;
		nd->next = *pp;
		*pp = i;
	}
	if (!q->cal_n++ || t < q->cal[q->cal_min].e.t) {
		q->cal_min = i;
		if (!q->other || cta__evq_before(&nd->e, q->other))
			q->other = &nd->e;
	}
	/* (A later event leaves q->other as it was: cal_min's, the heap's
	 * or a spare's, none of which moved.) */
	return 0;
}

/* Ring 0 or 1 when it holds the earliest event, else NULL (the earliest is
 * q->other, or the queue is empty); *head is that event, or NULL when
 * empty. */
static inline struct cta__ring *cta__evq_first(const struct cta__evq *q,
                                               const struct cta__event **head)
{
	const struct cta__event *best = q->other;
	const struct cta__ring *from = NULL;
	for (int i = 0; i < CTA__EVQ_FAST; i++) {
		const struct cta__ring *r = &q->r[i];
		if (r->n && (!best || cta__evq_before(&r->e[r->head], best))) {
			best = &r->e[r->head];
			from = r;
		}
	}
	*head = best;
	return (struct cta__ring *)from;
}

/* The earliest event, or NULL when the queue is empty. */
static inline const struct cta__event *cta__evq_head(const struct cta__evq *q)
{
	const struct cta__event *h;
	cta__evq_first(q, &h);
	return h;
}

/* Pops into *out the earliest event h, which cta__evq_first found in ring
 * r (NULL: q->other), the queue unchanged since. */
static inline void cta__evq_pop_first(struct cta__evq *q, struct cta__ring *r,
                                      const struct cta__event *h, struct cta__event *out)
{
	if (!r) {
		cta__evq_pop_other(q, out);
		return;
	}
	*out = *h;
	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
}

/* Pops the earliest event into *out; returns 0 when the queue is empty. */
static inline int cta__evq_pop(struct cta__evq *q, struct cta__event *out)
{
	const struct cta__event *h;
	struct cta__ring *r = cta__evq_first(q, &h);
	if (!h)
		return 0;
	cta__evq_pop_first(q, r, h, out);
	return 1;
}

/* The number of events queued. */
static inline size_t cta__evq_size(const struct cta__evq *q)
{
	size_t n = q->n + q->cal_n;
	for (int i = 0; i < CTA__EVQ_RINGS; i++)
		n += q->r[i].n;
	return n;
}

/* Time of the earliest event, or UINT64_MAX when empty. */
static inline uint64_t cta__evq_next_t(const struct cta__evq *q)
{
	const struct cta__event *e = cta__evq_head(q);
	return e ? e->t : UINT64_MAX;
}

#endif
