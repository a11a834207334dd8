/* A 4-ary min-heap of events keyed by (time, sequence). The sequence number
 * is assigned at insertion, which makes ties break first-in first-out. Four
 * children per node halve the depth of a binary heap and keep siblings in
 * one or two cache lines: the heap is the engine's hottest structure. */
#include "engine/event_queue.h"

#include <stdlib.h>

#include "ctasim/errors.h"

void cta__evq_init(struct cta__evq *q)
{
	q->h = NULL;
	q->n = q->cap = 0;
	q->seq = 0;
}

void cta__evq_free(struct cta__evq *q)
{
	free(q->h);
	cta__evq_init(q);
}

static inline int before(const struct cta__event *a, const struct cta__event *b)
{
	/* One wide comparison instead of two dependent branches. */
	unsigned __int128 ka = (unsigned __int128)a->t << 64 | a->seq;
	unsigned __int128 kb = (unsigned __int128)b->t << 64 | b->seq;
	return ka < kb;
}

int cta__evq_push(struct cta__evq *q, uint64_t t, int type, void *p, uint64_t a)
{
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
