/* The discrete-event queue: a 4-ary min-heap ordered by (time, insertion
 * sequence), so events at the same virtual time run first-in first-out and
 * every run is reproducible. */
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
	struct cta__event *h;
	size_t n, cap;
	uint64_t seq;
};

void cta__evq_init(struct cta__evq *q);
void cta__evq_free(struct cta__evq *q);
/* Returns 0 or CTA_ENOMEM. */
int cta__evq_push(struct cta__evq *q, uint64_t t, int type, void *p, uint64_t a);
/* Pops the earliest event into *out; returns 0 when the queue is empty. */
int cta__evq_pop(struct cta__evq *q, struct cta__event *out);
/* Time of the earliest event, or UINT64_MAX when empty. */
static inline uint64_t cta__evq_next_t(const struct cta__evq *q)
{
	return q->n ? q->h[0].t : UINT64_MAX;
}

#endif
