/* Binary min-heap of events keyed by (time, sequence). The sequence number
 * is assigned at insertion, which makes ties break first-in first-out. */
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
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
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
	struct cta__event e = {t, q->seq++, p, a, type};
	size_t i = q->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
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
	size_t i = 0, n = q->n;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&q->h[c + 1], &q->h[c]))
			c++;
		if (!before(&q->h[c], &last))
			break;
		q->h[i] = q->h[c];
		i = c;
	}
	if (n)
		q->h[i] = last;
	return 1;
}
