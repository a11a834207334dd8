/* The block layout behind the timeline, the Perfetto export and the fuzz
 * target: pairs each physical block's start with its end, attaches the
 * stolen indices it processed, and gives overlapping blocks of one SM
 * separate sub-rows. Also the text escaping the exporters share. */
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

uint64_t cta__kernel_blocks(const struct cta_trace_kernel *k)
{
	return (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
}

/* A start, end or steal record reduced to what sorting needs (32 bytes:
 * a 2M-block trace has 4M of them); block and SM are read from the record
 * itself, recs[seq]. */
struct ev {
	uint64_t phys, t;
	uint32_t kernel;
	uint32_t seq; /* record index: ties keep file order */
	uint8_t kind; /* 0 start, 1 steal, 2 end: starts sort before steals at one time */
};

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;
	if (a->kernel != b->kernel)
		return a->kernel < b->kernel ? -1 : 1;
	if (a->phys != b->phys)
		return a->phys < b->phys ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_span_sm(const void *pa, const void *pb)
{
	const struct cta__span *a = pa, *b = pb;
	if (a->sm != b->sm)
		return a->sm < b->sm ? -1 : 1;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	if (a->kernel != b->kernel)
		return a->kernel < b->kernel ? -1 : 1;
	return a->phys < b->phys ? -1 : a->phys > b->phys;
}

void cta__layout_free(struct cta__layout *l)
{
	free(l->spans);
	free(l->steals);
	free(l->slots);
	memset(l, 0, sizeof(*l));
}

/* Gives every span of one SM (spans[lo..hi), sorted by start) the lowest
 * sub-row that is free at its start; ends[] is scratch of hi-lo entries. */
static uint32_t assign_slots(struct cta__span *s, size_t n, uint64_t *ends, int per_kernel)
{
	uint32_t used = 0, best = 0;
	/* With per-kernel groups each kernel packs its own rows. */
	uint32_t kernels_done = 0;
	for (;;) {
		uint32_t kmin = UINT32_MAX;
		for (size_t i = 0; i < n; i++)
			if (s[i].kernel >= kernels_done && s[i].kernel < kmin)
				kmin = s[i].kernel;
		if (kmin == UINT32_MAX)
			break;
		used = 0;
		for (size_t i = 0; i < n; i++) {
			if (per_kernel && s[i].kernel != kmin)
				continue;
			uint32_t j = 0;
			while (j < used && ends[j] > s[i].t0)
				j++;
			if (j == used)
				used++;
			ends[j] = s[i].t1;
			s[i].slot = j;
		}
		if (used > best)
			best = used;
		if (!per_kernel)
			break;
		kernels_done = kmin + 1;
	}
	return best ? best : 1;
}

int cta__layout_build(struct cta__layout *l, const struct cta_trace *t, int per_kernel)
{
	memset(l, 0, sizeof(*l));
	/* ev.seq is 32 bits: a trace within CTA_TRACE_MAX_BYTES has far fewer
	 * records (a record line takes at least 18 bytes). */
	if (t->count > UINT32_MAX)
		return CTA_ERANGE;
	size_t nev = 0, nsteal = 0, nstart = 0;
	uint64_t max_sm = 0;
	int any_sm = 0;
	l->t_min = t->count ? UINT64_MAX : 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->t_ns < l->t_min)
			l->t_min = r->t_ns;
		if (r->t_ns > l->t_max)
			l->t_max = r->t_ns;
		if (r->sm != CTA_TRACE_NONE) {
			if (r->sm > CTA__MAX_SM_ID)
				return CTA_ERANGE;
			if (r->sm > max_sm)
				max_sm = r->sm;
			any_sm = 1;
		}
		if ((r->ev == CTA_TEV_START || r->ev == CTA_TEV_END || r->ev == CTA_TEV_STEAL) &&
		    r->kernel != UINT32_MAX && r->phys != CTA_TRACE_NONE)
			nev++;
		if (r->ev == CTA_TEV_STEAL)
			nsteal++;
		if (r->ev == CTA_TEV_START)
			nstart++;
	}
	l->sm_count = any_sm ? max_sm + 1 : 0;

	struct ev *ev = malloc((nev ? nev : 1) * sizeof(*ev));
	l->spans = malloc((nstart ? nstart : 1) * sizeof(*l->spans));
	l->steals = malloc((nsteal ? nsteal : 1) * sizeof(*l->steals));
	l->slots = calloc(l->sm_count ? l->sm_count : 1, sizeof(*l->slots));
	if (!ev || !l->spans || !l->steals || !l->slots) {
		free(ev);
		cta__layout_free(l);
		return CTA_ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel == UINT32_MAX || r->phys == CTA_TRACE_NONE)
			continue;
		uint8_t kind;
		if (r->ev == CTA_TEV_START)
			kind = 0;
		else if (r->ev == CTA_TEV_STEAL)
			kind = 1;
		else if (r->ev == CTA_TEV_END)
			kind = 2;
		else
			continue;
		ev[k++] = (struct ev){.kernel = r->kernel,
		                      .kind = kind,
		                      .phys = r->phys,
		                      .t = r->t_ns,
		                      .seq = (uint32_t)i};
	}
	qsort(ev, nev, sizeof(*ev), cmp_ev);

	/* Walk each physical block's events in time order: its start opens a
	 * span, steals cut it into segments, its end closes it. A steal or
	 * end with no start (a trace cut at its head) is skipped. */
	size_t ns = 0;
	struct cta__span *cur = NULL;
	for (size_t i = 0; i < nev; i++) {
		const struct ev *e = &ev[i];
		if (cur && (cur->kernel != e->kernel || cur->phys != e->phys))
			cur = NULL;
		if (e->kind == 0) {
			const struct cta_trace_rec *r = &t->recs[e->seq];
			if (r->sm == CTA_TRACE_NONE) {
				cur = NULL;
				continue;
			}
			cur = &l->spans[ns++];
			*cur = (struct cta__span){.kernel = e->kernel,
			                          .block = r->block,
			                          .phys = e->phys,
			                          .sm = r->sm,
			                          .t0 = e->t,
			                          .t1 = l->t_max,
			                          .open = 1,
			                          .steal_first = l->nsteals};
			continue;
		}
		if (!cur || !cur->open)
			continue;
		if (cur->steal_count)
			l->steals[l->nsteals - 1].t1 = e->t;
		if (e->kind == 1) {
			l->steals[l->nsteals++] = (struct cta__steal_seg){
			    .block = t->recs[e->seq].block, .t0 = e->t, .t1 = l->t_max};
			cur->steal_count++;
		} else {
			cur->t1 = e->t;
			cur->open = 0;
		}
	}
	free(ev);
	l->nspans = ns;

	qsort(l->spans, ns, sizeof(*l->spans), cmp_span_sm);
	uint64_t *ends = malloc((ns ? ns : 1) * sizeof(*ends));
	if (!ends) {
		cta__layout_free(l);
		return CTA_ENOMEM;
	}
	l->max_slots = 1;
	for (size_t i = 0; i < ns;) {
		size_t j = i;
		while (j < ns && l->spans[j].sm == l->spans[i].sm)
			j++;
		uint32_t s = assign_slots(l->spans + i, j - i, ends, per_kernel);
		l->slots[l->spans[i].sm] = s;
		if (s > l->max_slots)
			l->max_slots = s;
		i = j;
	}
	for (uint64_t s = 0; s < l->sm_count; s++)
		if (!l->slots[s])
			l->slots[s] = 1;
	free(ends);
	return 0;
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n;
	uint32_t c;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

void cta__put_json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s++);
		} else {
			int n = utf8_len(s);
			if (!n) {
				fputc('?', f);
				s++;
			} else {
				fwrite(s, 1, (size_t)n, f);
				s += n;
			}
		}
	}
}

void cta__put_xml_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			s++;
			continue;
		case '<':
			fputs("&lt;", f);
			s++;
			continue;
		case '>':
			fputs("&gt;", f);
			s++;
			continue;
		case '"':
			fputs("&quot;", f);
			s++;
			continue;
		}
		/* XML 1.0 forbids most control characters even as references. */
		if (*s < 0x20 || *s == 0x7f) {
			fputc(' ', f);
			s++;
			continue;
		}
		int n = utf8_len(s);
		if (!n) {
			fputc('?', f);
			s++;
		} else {
			fwrite(s, 1, (size_t)n, f);
			s += n;
		}
	}
}
