/* The block layout behind the timeline, the Perfetto export and the fuzz
 * target: pairs each physical block's start with its end, attaches the
 * stolen indices it processed, and gives overlapping blocks of one SM
 * separate sub-rows. Also the text escaping the exporters share. */
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

uint64_t cta__trace_kernel_blocks(const struct cta_trace_kernel *k)
{
	return (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
}

/* A start, end or steal record reduced to what the layout needs (40
 * bytes: a 2M-block trace has 4M of them). */
struct ev {
	uint64_t phys, t, block;
	uint32_t kernel;
	uint32_t seq; /* record index: ties keep file order */
	uint32_t sm;  /* UINT32_MAX: none */
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
	free(l->kernel_begins);
	l->spans = NULL;
	l->steals = NULL;
	l->slots = NULL;
	l->kernel_begins = NULL;
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

/* What the layout collects from the records, one at a time (from a
 * trace in memory or while one streams in). */
struct cta__layout_acc {
	struct cta__layout *l;
	struct ev *ev;
	size_t nev, cap, nstart, seq;
	uint64_t max_sm;
	int any_sm;
	uint32_t kernel_count;
};

int cta__layout_begin(struct cta__layout_acc **out, struct cta__layout *l, uint32_t kernel_count)
{
	memset(l, 0, sizeof(*l));
	struct cta__layout_acc *a = calloc(1, sizeof(*a));
	l->kernel_begins = calloc(kernel_count + 1, sizeof(*l->kernel_begins));
	if (!a || !l->kernel_begins) {
		free(a);
		free(l->kernel_begins);
		l->kernel_begins = NULL;
		return CTA_ENOMEM;
	}
	a->l = l;
	a->kernel_count = kernel_count;
	l->t_min = UINT64_MAX;
	l->first_begin = UINT64_MAX;
	*out = a;
	return 0;
}

int cta__layout_add(struct cta__layout_acc *a, const struct cta_trace_rec *r)
{
	struct cta__layout *l = a->l;
	/* ev.seq is 32 bits: a trace within CTA_TRACE_MAX_BYTES has far fewer
	 * records (a record line takes at least 18 bytes). */
	if (a->seq >= UINT32_MAX)
		return CTA_ERANGE;
	uint32_t seq = (uint32_t)a->seq++;
	if (r->t_ns < l->t_min)
		l->t_min = r->t_ns;
	if (r->t_ns > l->t_max)
		l->t_max = r->t_ns;
	if (r->sm != CTA_TRACE_NONE) {
		if (r->sm > CTA__MAX_SM_ID)
			return CTA_ERANGE;
		if (r->sm > a->max_sm)
			a->max_sm = r->sm;
		a->any_sm = 1;
	}
	int begin = r->ev == CTA_TEV_START || r->ev == CTA_TEV_STEAL;
	if ((begin || r->ev == CTA_TEV_DISPATCH) && r->t_ns < l->first_begin)
		l->first_begin = r->t_ns;
	if (r->ev == CTA_TEV_END && r->t_ns > l->last_end)
		l->last_end = r->t_ns;
	if (begin && r->kernel < a->kernel_count)
		l->kernel_begins[r->kernel]++;
	l->steal_records += r->ev == CTA_TEV_STEAL;
	if (r->kernel == UINT32_MAX || r->phys == CTA_TRACE_NONE)
		return 0;
	uint8_t kind;
	if (r->ev == CTA_TEV_START)
		kind = 0;
	else if (r->ev == CTA_TEV_STEAL)
		kind = 1;
	else if (r->ev == CTA_TEV_END)
		kind = 2;
	else
		return 0;
	if (a->nev == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 1024;
		struct ev *ne = realloc(a->ev, nc * sizeof(*ne));
		if (!ne)
			return CTA_ENOMEM;
		a->ev = ne;
		a->cap = nc;
	}
	a->nstart += kind == 0;
	a->ev[a->nev++] = (struct ev){.kernel = r->kernel,
	                              .kind = kind,
	                              .phys = r->phys,
	                              .t = r->t_ns,
	                              .block = r->block,
	                              .sm = r->sm == CTA_TRACE_NONE ? UINT32_MAX : (uint32_t)r->sm,
	                              .seq = seq};
	return 0;
}

void cta__layout_abort(struct cta__layout_acc *a)
{
	if (!a)
		return;
	free(a->ev);
	cta__layout_free(a->l);
	free(a);
}

int cta__layout_finish(struct cta__layout_acc *a, int per_kernel)
{
	struct cta__layout *l = a->l;
	if (l->t_min == UINT64_MAX)
		l->t_min = 0;
	l->sm_count = a->any_sm ? a->max_sm + 1 : 0;
	l->per_kernel = per_kernel;
	size_t nev = a->nev;
	struct ev *ev = a->ev;
	a->ev = NULL;
	free(a);
	l->spans = malloc((nev ? nev : 1) * sizeof(*l->spans));
	l->steals = malloc((l->steal_records ? l->steal_records : 1) * sizeof(*l->steals));
	l->slots = calloc(l->sm_count ? l->sm_count : 1, sizeof(*l->slots));
	if (!l->spans || !l->steals || !l->slots) {
		free(ev);
		cta__layout_free(l);
		return CTA_ENOMEM;
	}
	/* A trace with no block records has no array to sort (NULL). */
	if (nev)
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
			if (e->sm == UINT32_MAX) {
				cur = NULL;
				continue;
			}
			cur = &l->spans[ns++];
			*cur = (struct cta__span){.kernel = e->kernel,
			                          .block = e->block,
			                          .phys = e->phys,
			                          .sm = e->sm,
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
			l->steals[l->nsteals++] =
			    (struct cta__steal_seg){.block = e->block, .t0 = e->t, .t1 = l->t_max};
			cur->steal_count++;
		} else {
			cur->t1 = e->t;
			cur->open = 0;
		}
	}
	free(ev);
	l->nspans = ns;
	/* Give back what the spans did not use (ends and steals had room). */
	if (ns && ns < nev) {
		struct cta__span *sp = realloc(l->spans, ns * sizeof(*sp));
		if (sp)
			l->spans = sp;
	}

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

int cta__layout_build(struct cta__layout *l, const struct cta_trace *t, int per_kernel)
{
	struct cta__layout_acc *a = NULL;
	int rc = cta__layout_begin(&a, l, t->header.kernel_count);
	if (rc)
		return rc;
	for (size_t i = 0; !rc && i < t->count; i++)
		rc = cta__layout_add(a, &t->recs[i]);
	if (rc) {
		cta__layout_abort(a);
		return rc;
	}
	return cta__layout_finish(a, per_kernel);
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

void cta__trace_put_json_str(FILE *f, const char *str)
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

void cta__trace_put_xml_str(FILE *f, const char *str)
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
