/* Events keyed by (time, sequence): a FIFO ring for events that arrive in
 * time order and a 4-ary min-heap for the others (see event_queue.h). The
 * sequence number is assigned at insertion, which makes ties break
 * first-in first-out. Four children per node halve the depth of a binary
 * heap and keep siblings in one or two cache lines. */
#include "engine/event_queue.h"

#include <stdlib.h>

#include "ctasim/errors.h"

void cta__evq_init(struct cta__evq *q)
{
	q->h = NULL;
	q->n = q->cap = 0;
	q->seq = 0;
	q->r = NULL;
	q->rhead = q->rn = q->rcap = 0;
}

void cta__evq_free(struct cta__evq *q)
{
	free(q->h);
	free(q->r);
	cta__evq_init(q);
}

#define before cta__evq_before

/* Appends to the ring: e is not earlier than any event in it. */
static int ring_push(struct cta__evq *q, const struct cta__event *e)
{
	if (q->rn == q->rcap) {
		size_t cap = q->rcap ? q->rcap * 2 : 1024;
		struct cta__event *r = malloc(cap * sizeof(*r));
		if (!r)
			return CTA_ENOMEM;
		for (size_t i = 0; i < q->rn; i++)
			r[i] = q->r[(q->rhead + i) & (q->rcap - 1)];
		free(q->r);
		q->r = r;
		q->rcap = cap;
		q->rhead = 0;
	}
	q->r[(q->rhead + q->rn++) & (q->rcap - 1)] = *e;
	return 0;
}

int cta__evq_push(struct cta__evq *q, uint64_t t, int type, void *p, uint64_t a)
{
	/* Not earlier than the ring's last event: its sequence number is
	 * larger, so appending keeps the ring sorted. */
	if (!q->rn || t >= q->r[(q->rhead + q->rn - 1) & (q->rcap - 1)].t) {
		struct cta__event e = {t, q->seq, p, (uint32_t)a, type};
		int rc = ring_push(q, &e);
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

int cta__evq_pop(struct cta__evq *q, struct cta__event *out)
{
	if (q->rn && (!q->n || before(&q->r[q->rhead], &q->h[0]))) {
		*out = q->r[q->rhead];
		q->rhead = (q->rhead + 1) & (q->rcap - 1);
		q->rn--;
		return 1;
	}
	if (!q->n)
		return 0;
	*out = q->h[0];
	struct cta__event last = q->h[--q->n];
	size_t n = q->n;
	if (!n)
		return 1;
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
	return 1;
}
