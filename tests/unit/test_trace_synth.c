/* Synthetic traces for the trace-tool tests (see test_trace_synth.h): a
 * deterministic list scheduler over SM slots, optionally work-stealing,
 * emitting the records a backend would. */
#include <stdlib.h>
#include <string.h>

#include "test_trace_synth.h"

void synth_defaults(struct synth *s)
{
	if (!s->sms)
		s->sms = 4;
	if (!s->slots)
		s->slots = 2;
	if (!s->blocks)
		s->blocks = 32;
	if (!s->dur_ns)
		s->dur_ns = 1000;
	if (!s->tick_ns)
		s->tick_ns = 1;
	if (!s->backend)
		s->backend = "sim";
	if (!s->name)
		s->name = "synthetic";
	if (!s->device)
		s->device = "TEST-GPU";
}

struct rv {
	struct cta_trace_rec *r;
	size_t n, cap;
};

static void add(struct rv *v, struct cta_trace_rec r)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 256;
		v->r = realloc(v->r, v->cap * sizeof(*v->r));
	}
	v->r[v->n++] = r;
}

static uint64_t rng(uint64_t *st)
{
	/* splitmix64: tiny, and the same sequence everywhere. */
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct cta_trace_rec *a = pa, *b = pb;
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns ? -1 : 1;
	/* Ends before starts at one instant, like a real event queue. */
	int ra = a->ev == CTA_TEV_END ? 0 : 1, rb = b->ev == CTA_TEV_END ? 0 : 1;
	if (ra != rb)
		return ra - rb;
	if (a->phys != b->phys)
		return a->phys < b->phys ? -1 : 1;
	return (int)a->ev - (int)b->ev;
}

static struct cta_trace_rec rec(uint64_t t, cta_trace_event ev, uint64_t block, uint64_t phys,
                                uint64_t sm)
{
	return (struct cta_trace_rec){.t_ns = t,
	                              .ev = ev,
	                              .kernel = 0,
	                              .block = block,
	                              .phys = phys,
	                              .sm = sm,
	                              .arg = CTA_TRACE_NONE};
}

int synth_make(struct cta_trace *out, const struct synth *in)
{
	struct synth s = *in;
	synth_defaults(&s);
	memset(out, 0, sizeof(*out));
	struct cta_trace_header *h = &out->header;
	h->version = CTA_TRACE_VERSION;
	strcpy(h->backend, s.backend);
	strncpy(h->device, s.device, sizeof(h->device) - 1);
	strcpy(h->ctasim_version, "0.1.0");
	strcpy(h->clc, s.steal ? "model" : "none");
	h->seed = s.seed;
	h->tick_ns = s.tick_ns;
	h->deterministic = 1;
	h->kernel_count = 1;
	struct cta_trace_kernel *k = &h->kernels[0];
	strncpy(k->name, s.name, sizeof(k->name) - 1);
	k->grid[0] = (unsigned)s.blocks;
	k->grid[1] = k->grid[2] = 1;
	k->block[0] = 256; /* on a 2048-thread SM, the eighths of spin_by_threads count blocks */
	k->block[1] = k->block[2] = 1;
	k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;

	struct rv v = {0};
	uint64_t seed = s.seed;
	unsigned nslot = s.sms * s.slots;
	uint64_t *free_at = calloc(nslot, sizeof(*free_at));
	struct cta_trace_rec l =
	    rec(s.t0, CTA_TEV_LAUNCH, CTA_TRACE_NONE, CTA_TRACE_NONE, CTA_TRACE_NONE);
	l.arg = 0;
	add(&v, l);
	uint64_t last_start = 0, next_steal = nslot;
	uint64_t launched = s.steal ? (s.blocks < nslot ? s.blocks : nslot) : s.blocks;
	uint64_t kend = 0;
	for (uint64_t b = 0; b < launched; b++) {
		/* Slot j of the first wave is SM order[j % sms]; later blocks take
		 * the slot that frees first (ties: lower slot). */
		unsigned slot;
		uint64_t t;
		if (b < nslot) {
			slot = (unsigned)b;
			t = s.t0 + s.launch_ns + b * s.dispatch_ns;
		} else {
			slot = 0;
			for (unsigned j = 1; j < nslot; j++)
				if (free_at[j] < free_at[slot])
					slot = j;
			/* A freed slot takes the retire time, then the dispatch-to-start
			 * time, before the next block starts in it. */
			t = free_at[slot] + s.retire_ns + s.block_start_ns;
			if (t < last_start + s.dispatch_ns)
				t = last_start + s.dispatch_ns;
		}
		unsigned pos = slot % s.sms;
		uint64_t sm = s.order ? s.order[pos] : pos;
		last_start = t;
		if (s.dispatch_records)
			add(&v, rec(t - s.block_start_ns, CTA_TEV_DISPATCH, b, b, sm));
		add(&v, rec(t, CTA_TEV_START, b, b, sm));
		uint64_t d = s.dur_ns + (s.jitter_ns ? rng(&seed) % s.jitter_ns : 0);
		t += d;
		if (s.steal) {
			/* The work loop runs below, interleaved across blocks. */
			free_at[slot] = t;
			continue;
		}
		add(&v, rec(t, CTA_TEV_END, b, b, sm));
		free_at[slot] = t;
		if (t > kend)
			kend = t;
	}
	/* Steal mode: the first-wave block whose current index finishes first
	 * cancels next, which is how a work-stealing loop interleaves. */
	while (s.steal) {
		unsigned b = UINT32_MAX;
		for (unsigned j = 0; j < launched; j++)
			if (free_at[j] != UINT64_MAX &&
			    (b == UINT32_MAX || free_at[j] < free_at[b]))
				b = j;
		if (b == UINT32_MAX)
			break;
		uint64_t sm = s.order ? s.order[b % s.sms] : b % s.sms;
		uint64_t t = free_at[b];
		add(&v, rec(t, CTA_TEV_CANCEL, b, b, sm));
		t += s.cancel_ns;
		struct cta_trace_rec done = rec(t, CTA_TEV_CANCEL_DONE, b, b, sm);
		if (next_steal >= s.blocks) {
			done.code = CTA_CANCEL_FAIL_EMPTY;
			add(&v, done);
			add(&v, rec(t, CTA_TEV_END, b, b, sm));
			free_at[b] = UINT64_MAX;
			if (t > kend)
				kend = t;
			continue;
		}
		done.arg = next_steal;
		add(&v, done);
		add(&v, rec(t, CTA_TEV_STEAL, next_steal, b, sm));
		next_steal++;
		free_at[b] = t + s.dur_ns + (s.jitter_ns ? rng(&seed) % s.jitter_ns : 0);
	}
	add(&v, rec(kend, CTA_TEV_KERNEL_END, CTA_TRACE_NONE, CTA_TRACE_NONE, CTA_TRACE_NONE));
	free(free_at);
	qsort(v.r, v.n, sizeof(*v.r), cmp_rec);
	out->recs = v.r;
	out->count = v.n;
	out->complete = 1;
	return 0;
}

void synth_free(struct cta_trace *t)
{
	free(t->recs);
	t->recs = NULL;
	t->count = 0;
}

int synth_save(const struct cta_trace *t, const char *path)
{
	cta_trace_writer *w;
	int rc = cta_trace_writer_open(&w, path, &t->header);
	if (rc)
		return rc;
	for (size_t i = 0; i < t->count && !rc; i++)
		rc = cta_trace_writer_add(w, &t->recs[i]);
	int rc2 = cta_trace_writer_close(w, rc == 0);
	return rc ? rc : rc2;
}
