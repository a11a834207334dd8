/* Events keyed by (time, sequence): FIFO rings for streams of events that
 * arrive in time order and a 4-ary min-heap for the others (see
 * event_queue.h). The
 * sequence number is assigned at insertion, which makes ties break
 * first-in first-out. Four children per node halve the depth of a binary
 * heap and keep siblings in one or two cache lines. */
#include "base/event_queue.h"

#include <stdlib.h>

#include "ctasim/errors.h"

void cta__evq_init(struct cta__evq *q)
{
	q->h = NULL;
	q->n = q->cap = 0;
	q->seq = 0;
	for (int i = 0; i < CTA__EVQ_RINGS; i++)
		q->r[i] = (struct cta__ring){NULL, 0, 0, 0, 0};
}

void cta__evq_free(struct cta__evq *q)
{
	free(q->h);
	for (int i = 0; i < CTA__EVQ_RINGS; i++)
		free(q->r[i].e);
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

int cta__evq_push_slow(struct cta__evq *q, struct cta__ring *best, uint64_t t, int type, void *p,
                       uint64_t a)
{
	if (best) {
		struct cta__event e = {t, q->seq, p, (uint32_t)a, type};
		int rc = ring_push(best, &e);
		if (rc == 0)
			q->seq++;
		return rc;
	}
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;
		struct cta__event *h = realloc(q->h, cap * sizeof(*h));
		if (!h)
			return CTA_ENOMEM;
		q->h = h;
		q->cap = cap;
	}
	struct cta__event e = {t, q->seq++, p, (uint32_t)a, type};
	size_t i = q->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 4;
		if (!before(&e, &q->h[parent]))
			break;
		q->h[i] = q->h[parent];
		i = parent;
	}
	q->h[i] = e;
	return 0;
}

void cta__evq_pop_heap(struct cta__evq *q, struct cta__event *out)
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
