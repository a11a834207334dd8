/* The discrete-event queue, ordered by (time, insertion sequence), so events
 * at the same virtual time run first-in first-out and every run is
 * reproducible. Two parts: a FIFO ring of events pushed in nondecreasing
 * time order (sequence numbers only grow, so such a run is already sorted),
 * and a 4-ary min-heap for the rest. Block ends of equal-length blocks and
 * fixed-latency responses arrive in time order, so most events never touch
 * the heap; popping takes the smaller of the two heads. */
#ifndef CTASIM_EVENT_QUEUE_H
#define CTASIM_EVENT_QUEUE_H

#include <stddef.h>
#include <stdint.h>

/* 32 bytes: two events per cache line. */
struct cta__event {
	uint64_t t;
	uint64_t seq;
	void *p;
	uint32_t a;
	int type;
};

struct cta__evq {
	struct cta__event *h; /* the heap */
	size_t n, cap;
	uint64_t seq;
	struct cta__event *r; /* the ring: r[(rhead + i) & (rcap - 1)], i < rn */
	size_t rhead, rn, rcap;
};

void cta__evq_init(struct cta__evq *q);
void cta__evq_free(struct cta__evq *q);
/* Returns 0 or CTA_ENOMEM. */
int cta__evq_push(struct cta__evq *q, uint64_t t, int type, void *p, uint64_t a);
/* Pops the earliest event into *out; returns 0 when the queue is empty. */
int cta__evq_pop(struct cta__evq *q, struct cta__event *out);
static inline int cta__evq_before(const struct cta__event *a, const struct cta__event *b)
{
	/* One wide comparison instead of two dependent branches. */
	unsigned __int128 ka = (unsigned __int128)a->t << 64 | a->seq;
	unsigned __int128 kb = (unsigned __int128)b->t << 64 | b->seq;
	return ka < kb;
}

/* The earliest event, or NULL when the queue is empty. */
static inline const struct cta__event *cta__evq_head(const struct cta__evq *q)
{
	const struct cta__event *r = q->rn ? &q->r[q->rhead] : NULL;
	if (!q->n)
		return r;
	if (!r || cta__evq_before(&q->h[0], r))
		return &q->h[0];
	return r;
}

/* Time of the earliest event, or UINT64_MAX when empty. */
static inline uint64_t cta__evq_next_t(const struct cta__evq *q)
{
	const struct cta__event *e = cta__evq_head(q);
	return e ? e->t : UINT64_MAX;
}

#endif
