/* Export of a trace to the Chrome trace-event JSON format, which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: blocks as complete events on
 * one track per SM slot, stolen indices nested inside them, cancels, UB and
 * warnings as instant events with their arguments named for what they are,
 * and a flow arrow from each successful cancel request to the slice of the
 * index it stole. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ctasim/tools.h"

struct pkey {
	uint32_t kernel;
	uint64_t phys, t0;
	size_t span;
};

struct px {
	FILE *f;
	const struct cta_trace *t;
	const struct cta__layout *l;
	int per_kernel;
	int first;            /* no event written yet: no comma before the next */
	struct pkey *by_phys; /* spans sorted by (kernel, phys, t0) */
};

/* Trace-event timestamps are microseconds; three decimals keep every ns. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void begin_event(struct px *x)
{
	fputs(x->first ? "\n" : ",\n", x->f);
	x->first = 0;
}

static unsigned pid_of(const struct px *x, uint32_t kernel)
{
	return x->per_kernel && kernel != UINT32_MAX ? kernel + 1 : 1;
}

/* Track 0 of each process is the scheduler track; SM slots follow. */
static uint64_t tid_of(const struct px *x, uint64_t sm, uint32_t slot)
{
	return sm * x->l->max_slots + slot + 1;
}

static int cmp_pkey(const void *pa, const void *pb)
{
	const struct pkey *a = pa, *b = pb;
	if (a->kernel != b->kernel)
		return a->kernel < b->kernel ? -1 : 1;
	if (a->phys != b->phys)
		return a->phys < b->phys ? -1 : 1;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return a->span < b->span ? -1 : a->span > b->span;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

/* The span of physical block phys that was resident at time t, or NULL. */
static const struct cta__span *find_span(const struct px *x, uint32_t kernel, uint64_t phys,
                                         uint64_t t)
{
	size_t lo = 0, hi = x->l->nspans;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pkey *s = &x->by_phys[mid];
		if (s->kernel < kernel || (s->kernel == kernel && s->phys < phys))
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct cta__span *best = NULL;
	for (size_t i = lo; i < x->l->nspans; i++) {
		const struct pkey *s = &x->by_phys[i];
		if (s->kernel != kernel || s->phys != phys)
			break;
		if (s->t0 <= t)
			best = &x->l->spans[s->span];
	}
	return best;
}

static const char *kernel_name(const struct cta_trace *t, uint32_t k)
{
	return k < t->header.kernel_count ? t->header.kernels[k].name : "?";
}

static void put_meta(struct px *x)
{
	const struct cta_trace_header *h = &x->t->header;
	unsigned npid = x->per_kernel ? (h->kernel_count ? h->kernel_count : 1) : 1;
	for (unsigned p = 1; p <= npid; p++) {
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,"
		        "\"args\":{\"name\":\"",
		        p);
		if (x->per_kernel && h->kernel_count) {
			fprintf(x->f, "kernel %u: ", p - 1);
			cta__trace_put_json_str(x->f, h->kernels[p - 1].name);
		} else {
			fputs("GPU ", x->f);
			cta__trace_put_json_str(x->f, h->device);
			fprintf(x->f, " (%s)", h->backend);
		}
		fputs("\"}}", x->f);
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"tid\":0,"
		        "\"args\":{\"sort_index\":%u}}",
		        p, p);
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":0,"
		        "\"args\":{\"name\":\"scheduler\"}}",
		        p);
	}
	/* Name only the tracks that carry blocks: with per-kernel groups a
	 * kernel that used 10 SMs should not show 132 empty tracks. */
	size_t n = x->l->nspans;
	uint64_t *keys = malloc((n ? n : 1) * sizeof(*keys));
	if (!keys)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct cta__span *s = &x->l->spans[i];
		keys[i] = ((uint64_t)pid_of(x, s->kernel) << 40) | tid_of(x, s->sm, s->slot);
	}
	qsort(keys, n, sizeof(*keys), cmp_u64);
	uint64_t prev = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		if (keys[i] == prev)
			continue;
		prev = keys[i];
		unsigned pid = (unsigned)(keys[i] >> 40);
		uint64_t tid = keys[i] & ((1ull << 40) - 1);
		uint64_t sm = (tid - 1) / x->l->max_slots, slot = (tid - 1) % x->l->max_slots;
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%" PRIu64
		        ",\"args\":{\"name\":\"SM %" PRIu64,
		        pid, tid, sm);
		if (slot)
			fprintf(x->f, "/%" PRIu64, slot);
		fputs("\"}}", x->f);
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%" PRIu64
		        ",\"args\":{\"sort_index\":%" PRIu64 "}}",
		        pid, tid, tid);
	}
	free(keys);
}

static void put_spans(struct px *x)
{
	for (size_t i = 0; i < x->l->nspans; i++) {
		const struct cta__span *s = &x->l->spans[i];
		unsigned pid = pid_of(x, s->kernel);
		uint64_t tid = tid_of(x, s->sm, s->slot);
		begin_event(x);
		fputs("{\"ph\":\"X\",\"name\":\"", x->f);
		cta__trace_put_json_str(x->f, kernel_name(x->t, s->kernel));
		fprintf(x->f, "\",\"cat\":\"block\",\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":", pid,
		        tid);
		put_us(x->f, s->t0);
		fputs(",\"dur\":", x->f);
		put_us(x->f, s->t1 - s->t0);
		fprintf(x->f,
		        ",\"args\":{\"kernel\":%u,\"block\":%" PRIu64 ",\"phys\":%" PRIu64
		        ",\"sm\":%" PRIu64 ",\"steals\":%zu%s}}",
		        s->kernel, s->block, s->phys, s->sm, s->steal_count,
		        s->open ? ",\"open\":true" : "");
		for (size_t j = 0; j < s->steal_count; j++) {
			const struct cta__steal_seg *g = &x->l->steals[s->steal_first + j];
			begin_event(x);
			fprintf(x->f,
			        "{\"ph\":\"X\",\"name\":\"stolen\",\"cat\":\"steal\",\"pid\":%u,"
			        "\"tid\":%" PRIu64 ",\"ts\":",
			        pid, tid);
			put_us(x->f, g->t0);
			fputs(",\"dur\":", x->f);
			put_us(x->f, g->t1 > g->t0 ? g->t1 - g->t0 : 0);
			fprintf(x->f,
			        ",\"args\":{\"kernel\":%u,\"block\":%" PRIu64 ",\"phys\":%" PRIu64
			        "}}",
			        s->kernel, g->block, s->phys);
		}
	}
}

static void put_num_arg(FILE *f, const char *key, uint64_t v)
{
	if (v == CTA_TRACE_NONE)
		fprintf(f, ",\"%s\":null", key);
	else
		fprintf(f, ",\"%s\":%" PRIu64, key, v);
}

static void put_instants(struct px *x)
{
	const struct cta_trace *t = x->t;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		const char *name;
		char buf[64];
		switch (r->ev) {
		case CTA_TEV_LAUNCH:
			name = "launch";
			break;
		case CTA_TEV_KERNEL_END:
			name = "kernel_end";
			break;
		case CTA_TEV_CANCEL:
			name = "cancel";
			break;
		case CTA_TEV_CANCEL_DONE:
			snprintf(buf, sizeof(buf), "cancel %s", cta_cancel_outcome_name(r->code));
			name = buf;
			break;
		case CTA_TEV_UB:
			name = "UB";
			break;
		case CTA_TEV_WARN:
			name = "warning";
			break;
		default:
			continue;
		}
		unsigned pid = pid_of(x, r->kernel);
		uint64_t tid = 0;
		if (r->phys != CTA_TRACE_NONE && r->kernel != UINT32_MAX) {
			const struct cta__span *s = find_span(x, r->kernel, r->phys, r->t_ns);
			if (s)
				tid = tid_of(x, s->sm, s->slot);
		}
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%u,"
		        "\"tid\":%" PRIu64 ",\"ts\":",
		        name, cta_trace_event_name(r->ev), pid, tid);
		put_us(x->f, r->t_ns);
		fputs(",\"args\":{", x->f);
		if (r->kernel == UINT32_MAX)
			fputs("\"kernel\":null", x->f);
		else
			fprintf(x->f, "\"kernel\":%u", r->kernel);
		if (r->kernel != UINT32_MAX) {
			fputs(",\"kernel_name\":\"", x->f);
			cta__trace_put_json_str(x->f, kernel_name(t, r->kernel));
			fputc('"', x->f);
		}
		put_num_arg(x->f, "block", r->block);
		put_num_arg(x->f, "phys", r->phys);
		put_num_arg(x->f, "sm", r->sm);
		/* The generic arg and code columns under the name of what they
		 * hold for this event (traces/FORMAT.md, "Events"). */
		switch (r->ev) {
		case CTA_TEV_LAUNCH:
			put_num_arg(x->f, "stream", r->arg);
			fprintf(x->f, ",\"priority\":%d", (int)r->code);
			break;
		case CTA_TEV_CANCEL_DONE:
			put_num_arg(x->f, "stolen_block", r->arg);
			fprintf(x->f, ",\"outcome\":\"%s\"", cta_cancel_outcome_name(r->code));
			break;
		case CTA_TEV_UB:
			put_num_arg(x->f, "thread", r->arg);
			break;
		default:
			if (r->arg != CTA_TRACE_NONE)
				put_num_arg(x->f, "arg", r->arg);
			if (r->code)
				fprintf(x->f, ",\"code\":%d", (int)r->code);
			break;
		}
		if (r->text) {
			fputs(r->ev == CTA_TEV_UB ? ",\"rule\":\"" : ",\"text\":\"", x->f);
			cta__trace_put_json_str(x->f, r->text);
			fputc('"', x->f);
		}
		fputs("}}", x->f);
	}
}

/* Where each stolen index ran: its slice's track and start. */
struct stolen_at {
	uint32_t kernel;
	uint64_t block, tid, t0;
	unsigned pid;
};

static int cmp_stolen(const void *pa, const void *pb)
{
	const struct stolen_at *a = pa, *b = pb;
	if (a->kernel != b->kernel)
		return a->kernel < b->kernel ? -1 : 1;
	return a->block < b->block ? -1 : a->block > b->block;
}

/* A flow arrow ("s" at the request, "f" binding to the stolen slice) for
 * every successful cancel: from the block's last cancel request before the
 * result to the slice in which the stolen index ran. */
static int put_flows(struct px *x)
{
	const struct cta__layout *l = x->l;
	size_t n = 0;
	for (size_t i = 0; i < l->nspans; i++)
		n += l->spans[i].steal_count;
	struct stolen_at *st = malloc((n ? n : 1) * sizeof(*st));
	if (!st)
		return CTA_ENOMEM;
	n = 0;
	for (size_t i = 0; i < l->nspans; i++) {
		const struct cta__span *sp = &l->spans[i];
		for (size_t j = 0; j < sp->steal_count; j++) {
			const struct cta__steal_seg *g = &l->steals[sp->steal_first + j];
			st[n++] = (struct stolen_at){.kernel = sp->kernel,
			                             .block = g->block,
			                             .tid = tid_of(x, sp->sm, sp->slot),
			                             .t0 = g->t0,
			                             .pid = pid_of(x, sp->kernel)};
		}
	}
	qsort(st, n, sizeof(*st), cmp_stolen);
	const struct cta_trace *t = x->t;
	uint64_t id = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->ev != CTA_TEV_CANCEL_DONE || r->code != CTA_CANCEL_SUCCESS ||
		    r->arg == CTA_TRACE_NONE || r->kernel == UINT32_MAX ||
		    r->phys == CTA_TRACE_NONE)
			continue;
		/* The request: the same block's latest cancel before this result. */
		uint64_t treq = UINT64_MAX;
		for (size_t j = i; j-- > 0;) {
			const struct cta_trace_rec *q = &t->recs[j];
			if (q->ev == CTA_TEV_CANCEL && q->kernel == r->kernel &&
			    q->phys == r->phys && q->t_ns <= r->t_ns) {
				treq = q->t_ns;
				break;
			}
		}
		struct stolen_at key = {.kernel = r->kernel, .block = r->arg};
		const struct stolen_at *to =
		    n ? bsearch(&key, st, n, sizeof(*st), cmp_stolen) : NULL;
		const struct cta__span *from =
		    find_span(x, r->kernel, r->phys, treq != UINT64_MAX ? treq : r->t_ns);
		if (!to || !from)
			continue;
		uint64_t ts = treq != UINT64_MAX ? treq : r->t_ns;
		id++;
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"s\",\"id\":%" PRIu64 ",\"name\":\"steal\",\"cat\":\"flow\","
		        "\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":",
		        id, pid_of(x, r->kernel), tid_of(x, from->sm, from->slot));
		put_us(x->f, ts);
		fputs("}", x->f);
		begin_event(x);
		fprintf(x->f,
		        "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64
		        ",\"name\":\"steal\",\"cat\":\"flow\",\"pid\":%u,\"tid\":%" PRIu64
		        ",\"ts\":",
		        id, to->pid, to->tid);
		put_us(x->f, to->t0);
		fputs("}", x->f);
	}
	free(st);
	return 0;
}

int cta_trace_export_perfetto(const struct cta_trace *t, FILE *f,
                              const struct cta_perfetto_opts *opts)
{
	return cta__analysis_perfetto(t, NULL, f, opts);
}

int cta_trace_lean_export_perfetto(const cta_trace_lean *t, FILE *f,
                                   const struct cta_perfetto_opts *opts)
{
	return cta__analysis_perfetto(&t->t, &t->l, f, opts);
}

int cta__analysis_perfetto(const struct cta_trace *t, const struct cta__layout *given, FILE *f,
                           const struct cta_perfetto_opts *opts)
{
	struct cta__layout l;
	int per_kernel = opts && opts->group == CTA_PERFETTO_GROUP_KERNEL;
	/* A lean trace (cta_trace_read_lean) brings its layout: its block
	 * records were not kept, and none of the events below needs them. */
	int owned = !given, rc;
	if (!owned) {
		l = *given;
		if (l.per_kernel != per_kernel)
			return CTA_EINVAL;
	} else if ((rc = cta__layout_build(&l, t, per_kernel)) != 0) {
		return rc;
	}
	struct px x = {.f = f, .t = t, .l = &l, .per_kernel = per_kernel, .first = 1};
	x.by_phys = malloc((l.nspans ? l.nspans : 1) * sizeof(*x.by_phys));
	if (!x.by_phys) {
		if (owned)
			cta__layout_free(&l);
		return CTA_ENOMEM;
	}
	for (size_t i = 0; i < l.nspans; i++)
		x.by_phys[i] = (struct pkey){.kernel = l.spans[i].kernel,
		                             .phys = l.spans[i].phys,
		                             .t0 = l.spans[i].t0,
		                             .span = i};
	qsort(x.by_phys, l.nspans, sizeof(*x.by_phys), cmp_pkey);

	const struct cta_trace_header *h = &t->header;
	/* No "displayTimeUnit": Perfetto has at times read it as the unit of
	 * "ts" instead of a display hint (google/perfetto issues 106, 274), so
	 * timestamps stay in the format's default microseconds. */
	fputs("{\"otherData\":{\"format\":\"ctasim-trace\",\"backend\":\"", f);
	cta__trace_put_json_str(f, h->backend);
	fputs("\",\"device\":\"", f);
	cta__trace_put_json_str(f, h->device);
	fprintf(f, "\",\"seed\":\"%" PRIu64 "\",\"clc\":\"", h->seed);
	cta__trace_put_json_str(f, h->clc);
	fprintf(f, "\",\"tick_ns\":%.17g,\"complete\":%s},\n\"traceEvents\":[", h->tick_ns,
	        t->complete ? "true" : "false");
	put_meta(&x);
	put_spans(&x);
	put_instants(&x);
	rc = put_flows(&x);
	fputs("\n]}\n", f);
	free(x.by_phys);
	if (owned)
		cta__layout_free(&l);
	return rc ? rc : ferror(f) ? CTA_EIO : 0;
}
