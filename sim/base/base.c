/* The base module's services (base.h): error text, random numbers, a
 * unit's outbox, the ready list, and the segment's thread-local state.
 * Everything here is used by several core modules and calls none of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

_Thread_local struct cta__worker *cta__base_seg_worker __attribute__((tls_model("initial-exec")));
_Thread_local struct cta__unit *cta__base_seg_unit __attribute__((tls_model("initial-exec")));

int cta__base_exact_threads;
int cta__base_held_apart = 1;

void cta__base_errf(struct cta_sim *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
}

/* splitmix64: small, fast, and good enough for schedule exploration. */
uint64_t cta__base_rand(struct cta_sim *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void *cta__base_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	return cta__base_grow_from(p, cap, need, elem, 64);
}

void *cta__base_grow_from(void *p, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap * 2 : first;
	while (n < need)
		n *= 2;
	void *q = realloc(p, n * elem);
	if (!q)
		abort(); /* the run cannot continue without its outputs */
	*cap = n;
	return q;
}

void cta__base_out_error(struct cta__unit *u, const char *fmt, ...)
{
	if (u->out.error)
		return;
	u->out.error = 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->out.errmsg, sizeof(u->out.errmsg), fmt, ap);
	va_end(ap);
}

void cta__base_out_mark(struct cta__unit *u, uint64_t logical)
{
	if (u->sim->o.timing_only)
		return; /* coverage is checked on full runs only */
	struct cta__outbox *o = &u->out;
	o->marks = cta__base_grow(o->marks, &o->capmarks, o->nmarks + 1, sizeof(*o->marks));
	o->marks[o->nmarks++] = logical;
}

void cta__base_out_trace_rec(struct cta_sim *s, uint64_t t, cta_trace_event ev, unsigned kernel,
                             uint64_t block, uint64_t phys, uint64_t sm, uint64_t arg, int32_t code,
                             const char *text)
{
	if (!s->tw || s->io_error)
		return;
	struct cta__unit *u = cta__base_seg_unit;
	if (u) {
		/* Inside a segment: kept until the unit is committed. */
		struct cta__outbox *o = &u->out;
		o->recs = cta__base_grow(o->recs, &o->caprecs, o->nrecs + 1, sizeof(*o->recs));
		struct cta_trace_rec *r = &o->recs[o->nrecs++];
		*r = (struct cta_trace_rec){t, ev, kernel, block, phys, sm, arg, code, NULL};
		if (text) {
			size_t n = strlen(text) + 1;
			o->text = cta__base_grow(o->text, &o->captext, o->ntext + n, 1);
			memcpy(o->text + o->ntext, text, n);
			r->text = (const char *)(uintptr_t)(o->ntext + 1);
			o->ntext += n;
		}
		return;
	}
	struct cta_trace_rec r = {t, ev, kernel, block, phys, sm, arg, code, text};
	if (cta_trace_writer_add(s->tw, &r) < 0) {
		s->io_error = 1;
		cta__base_errf(s, "%s", cta_trace_writer_errmsg(s->tw));
	}
}

void cta__base_ready(struct cta_sim *s, struct cta__unit *u)
{
	cta__base_ready_from(s, u, u->start_t);
}

void cta__base_ready_from(struct cta_sim *s, struct cta__unit *u, uint64_t t)
{
	if ((s->nready == s->nsealed && !s->open_apart) || t < s->ready_min)
		s->ready_min = t;
	s->batch = cta__base_grow(s->batch, &s->batch_cap, s->nready + 1, sizeof(*s->batch));
	s->batch[s->nready++] = u;
}

/* The growth of the batch for cta__base_ready_placed_from (base.h). */
void cta__base_ready_grow(struct cta_sim *s)
{
	s->batch = cta__base_grow(s->batch, &s->batch_cap, s->nready + 1, sizeof(*s->batch));
	s->placed = cta__base_grow(s->placed, &s->placed_cap, s->nready + 1, sizeof(*s->placed));
}
