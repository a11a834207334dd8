/* The one keying, sort and per-kernel scan of records that the trace
 * analyses share (trace_calibrate.c; trace_diff.c the per-kernel facts, a
 * record at a time as it streams): records referenced by
 * a key, sorted by (a, b, time) and then file order, so that equal keys
 * keep the trace's order and every result is reproducible; and the
 * message of an input they refuse. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ctasim/errors.h"

int cta__analysis_fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
	if (errbuf && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return CTA_EINVAL;
}

int cta__analysis_rec_key_cmp(const void *pa, const void *pb)
{
	const struct cta__rec_key *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int cta__analysis_rec_keys(struct cta__rec_key **out, size_t *n, const struct cta_trace *t,
                           cta__rec_key_fn keep, void *ctx)
{
	struct cta__rec_key k;
	size_t m = 0;
	/* Two passes: the count, then the keys, so that a large trace's keys
	 * take one allocation of their exact size. */
	for (size_t i = 0; i < t->count; i++)
		m += keep(&t->recs[i], ctx, &k) != 0;
	struct cta__rec_key *v = malloc((m ? m : 1) * sizeof(*v));
	if (!v)
		return CTA_ENOMEM;
	m = 0;
	for (size_t i = 0; i < t->count; i++) {
		k = (struct cta__rec_key){0, 0, t->recs[i].t_ns, i};
		if (keep(&t->recs[i], ctx, &k))
			v[m++] = k;
	}
	qsort(v, m, sizeof(*v), cta__analysis_rec_key_cmp);
	*out = v;
	*n = m;
	return 0;
}

void cta__analysis_kfacts_add(struct cta__kfacts *f, const struct cta_trace_rec *r)
{
	if (r->ev == CTA_TEV_START) {
		if (!f->has_start || r->t_ns < f->first_start)
			f->first_start = r->t_ns;
		if (!f->has_start || r->t_ns > f->last_start)
			f->last_start = r->t_ns;
		f->has_start = 1;
	} else if (r->ev == CTA_TEV_END) {
		if (!f->has_end || r->t_ns < f->first_end)
			f->first_end = r->t_ns;
		if (!f->has_end || r->t_ns > f->last_end)
			f->last_end = r->t_ns;
		f->has_end = 1;
	} else if (r->ev == CTA_TEV_LAUNCH) {
		if (!f->has_launch || r->t_ns < f->launch)
			f->launch = r->t_ns;
		f->has_launch = 1;
	}
}

void cta__analysis_kernel_facts(struct cta__kfacts *kf, const struct cta_trace *t)
{
	memset(kf, 0, CTA_TRACE_MAX_KERNELS * sizeof(*kf));
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel < t->header.kernel_count && r->kernel < CTA_TRACE_MAX_KERNELS)
			cta__analysis_kfacts_add(&kf[r->kernel], r);
	}
}
