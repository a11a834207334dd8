/* The undefined-behaviour checker's reporting side: stable rule names, one
 * report per occurrence with its location, block, thread, virtual time and
 * the earlier event that made it UB, counts per rule, and the abort mode.
 * The checks themselves sit where the rules are (sim/exec, sim/clc). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ub/ub.h"

/* Indexed by enum cta__ub_rule; these names are part of the interface. */
static const char *const rule_names[UB__COUNT + 1] = {
    "request_after_observed_failure",
    "read_failed_index",
    "read_before_complete",
    "result_buffer_in_flight",
    "for_each_called_twice",
    "for_each_not_all_threads",
    "leader_count",
    "multicast_cluster_not_running",
    "divergent_barrier",
    "barrier_deadlock",
    "builtin_blockidx_in_body",
    "mbarrier_not_initialised",
    "watchdog",
    "forward_progress",
    NULL,
};

const char *const *cta_ub_rule_names(void)
{
	return rule_names;
}

/* Indexed by enum cta__ub_rule from UB__COUNT (sim/sanitize reports them). */
static const char *const san_rule_names[UB__ALL - UB__COUNT + 1] = {
    "memcheck_oob",        "memcheck_use_after_free", "racecheck_shared_ww",
    "racecheck_shared_rw", "initcheck_shared",        NULL,
};

const char *const *cta_sanitize_rule_names(void)
{
	return san_rule_names;
}

static void set_thread(struct cta_ub_report *r, unsigned thread, const unsigned *bd)
{
	r->thread = thread;
	r->thread_idx[0] = thread % bd[0];
	r->thread_idx[1] = thread / bd[0] % bd[1];
	r->thread_idx[2] = thread / bd[0] / bd[1];
}

static const char *rule_name(unsigned rule)
{
	return rule < UB__COUNT ? rule_names[rule] : san_rule_names[rule - UB__COUNT];
}

static uint32_t text_hash(const char *t)
{
	uint32_t h = 2166136261u;
	for (; *t; t++)
		h = (h ^ (unsigned char)*t) * 16777619u;
	return h;
}

/* The offset of `cause` in the store's text, added there if new. */
static int store_cause(struct cta__ub_store *st, const char *cause, uint32_t *off)
{
	if (2 * (st->nhash + 1) > st->caphash) {
		size_t cap = st->caphash ? st->caphash * 2 : 64;
		uint32_t *h = calloc(cap, sizeof(*h));
		if (!h)
			return -1;
		for (size_t i = 0; i < st->caphash; i++)
			if (st->hash[i]) {
				size_t j = text_hash(st->text + st->hash[i] - 1) & (cap - 1);
				while (h[j])
					j = (j + 1) & (cap - 1);
				h[j] = st->hash[i];
			}
		free(st->hash);
		st->hash = h;
		st->caphash = cap;
	}
	size_t j = text_hash(cause) & (st->caphash - 1);
	for (; st->hash[j]; j = (j + 1) & (st->caphash - 1))
		if (!strcmp(st->text + st->hash[j] - 1, cause)) {
			*off = st->hash[j] - 1;
			return 0;
		}
	size_t n = strlen(cause) + 1;
	if (st->ntext + n > st->captext) {
		size_t cap = st->captext ? st->captext * 2 : 4096;
		while (cap < st->ntext + n)
			cap *= 2;
		char *t = realloc(st->text, cap);
		if (!t)
			return -1;
		st->text = t;
		st->captext = cap;
	}
	memcpy(st->text + st->ntext, cause, n);
	*off = (uint32_t)st->ntext;
	st->ntext += n;
	st->hash[j] = *off + 1;
	st->nhash++;
	return 0;
}

void cta__ub_store_add(struct cta_sim *s, const struct cta__ub_rec *r, const char *cause,
                       unsigned n)
{
	struct cta__ub_store *st = &s->ubs;
	if (!n)
		return;
	if (st->nruns == st->capruns) {
		size_t cap = st->capruns ? st->capruns * 2 : 16;
		struct cta__ub_rec *nr = realloc(st->runs, cap * sizeof(*nr));
		if (nr)
			st->runs = nr;
		uint64_t *nf = realloc(st->first, cap * sizeof(*nf));
		if (nf)
			st->first = nf;
		if (!nr || !nf)
			return;
		st->capruns = cap;
	}
	uint32_t off;
	if (store_cause(st, cause, &off) < 0)
		return;
	struct cta__ub_rec *d = &st->runs[st->nruns];
	*d = *r;
	d->cause = off;
	d->run = n;
	st->first[st->nruns++] = s->nubs;
	s->nubs += n;
}

/* Reports spelled out a chunk at a time. */
#define VIEW_CHUNK 64

const struct cta_ub_report *cta__ub_store_at(struct cta_sim *s, size_t i)
{
	struct cta__ub_store *st = &s->ubs;
	if (i >= s->nubs)
		return NULL;
	size_t c = i / VIEW_CHUNK;
	if (!st->view) {
		size_t n = (CTA__UB_MAX_STORED + VIEW_CHUNK - 1) / VIEW_CHUNK;
		if (!(st->view = calloc(n, sizeof(*st->view))))
			return NULL;
		st->nview = n;
	}
	if (c >= st->nview)
		return NULL;
	if (!st->view[c] && !(st->view[c] = calloc(VIEW_CHUNK, sizeof(*st->view[c]))))
		return NULL;
	struct cta_ub_report *d = &st->view[c][i % VIEW_CHUNK];
	if (d->rule)
		return d;
	/* The run that holds report i: the last that begins at or before it. */
	size_t lo = 0, hi = st->nruns;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->first[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	const struct cta__ub_rec *r = &st->runs[lo];
	const struct cta__kernel *k = s->kernels[r->kernel];
	const unsigned *bd = k->l.block;
	d->warning = r->rule == UB_BUILTIN_BLOCKIDX_IN_BODY;
	d->file = r->file;
	d->line = r->line;
	d->kernel = r->kernel;
	d->kernel_name = k->label;
	d->block = r->block;
	d->phys = r->phys;
	d->t_ns = r->t_ns;
	uint3 b = cta__base_bid_of_logical(k, r->block);
	d->block_idx[0] = b.x, d->block_idx[1] = b.y, d->block_idx[2] = b.z;
	set_thread(d,
	           (unsigned)(((uint64_t)r->thread + (i - st->first[lo])) %
	                      ((uint64_t)bd[0] * bd[1] * bd[2])),
	           bd);
	snprintf(d->cause, sizeof(d->cause), "%s", st->text + r->cause);
	d->rule = rule_name(r->rule);
	return d;
}

size_t cta__ub_store_bytes(const struct cta__ub_store *st)
{
	return st->capruns * (sizeof(*st->runs) + sizeof(*st->first)) + st->captext +
	       st->caphash * sizeof(*st->hash);
}

void cta__ub_store_free(struct cta__ub_store *st)
{
	for (size_t c = 0; c < st->nview; c++)
		free(st->view[c]);
	free(st->view);
	free(st->runs);
	free(st->first);
	free(st->text);
	free(st->hash);
	memset(st, 0, sizeof(*st));
}

/* One report: rule broken in CTA c of unit u by thread `thread` (linear
 * rank; its threadIdx from the block's shape) at t_ns. */
static void report(struct cta_sim *s, enum cta__ub_rule rule, struct cta__unit *u,
                   struct cta__cta *c, unsigned thread, uint64_t t_ns, const char *file, int line,
                   const char *causefmt, va_list ap)
{
	if (s->o.ub_mode == CTA_UB_OFF && rule != UB_BARRIER_DEADLOCK && rule != UB_WATCHDOG &&
	    rule != UB_FORWARD_PROGRESS && rule < UB__COUNT)
		return;
	if (s->aborted)
		return;
	int warning = rule == UB_BUILTIN_BLOCKIDX_IN_BODY;
	/* Reports go to the unit's outbox: the engine adds them to the run's
	 * list in commit order, so they do not depend on host threads. */
	struct cta__outbox *o = &u->out;
	/* Abort mode keeps only the first UB: the threads of the segment that
	 * hit it still run to their next wait, and must not add more. */
	if (s->o.ub_mode == CTA_UB_ABORT && !warning)
		for (unsigned r = 0; r < UB__COUNT; r++)
			if (r != UB_BUILTIN_BLOCKIDX_IN_BODY && o->ubcount[r])
				return;
	o->ubcount[rule]++;
	o->ubtotal++;
	if (s->nubs + o->ubkept >= CTA__UB_MAX_STORED)
		return;
	const char *name = rule_name(rule);
	const unsigned *bd = u->k->l.block;
	char cause[CTA__UB_CAUSE_MAX];
	vsnprintf(cause, sizeof(cause), causefmt, ap);
	file = file ? file : "?";
	struct cta__ub_rec *r = o->nubs ? &o->ubs[o->nubs - 1] : NULL;
	/* The next thread of the last report's run, the same in all else:
	 * one more in the run (a block's threads breaking a rule one after
	 * another cost a report each in every resident block). */
	if (r && r->rule == (uint32_t)rule && r->file == file && r->line == line &&
	    r->t_ns == t_ns && r->block == c->steal_current && r->phys == c->logical &&
	    r->kernel == u->k->id &&
	    thread == (r->thread + r->run) % ((uint64_t)bd[0] * bd[1] * bd[2]) &&
	    !strcmp(o->ubtext + r->cause, cause)) {
		r->run++;
	} else {
		size_t n = strlen(cause) + 1;
		/* Few runs a segment (every resident block may hold its runs
		 * until its commit): the arrays start small. */
		if (o->nubs == o->capubs)
			o->ubs = cta__base_grow_from(o->ubs, &o->capubs, o->nubs + 1,
			                             sizeof(*o->ubs), 2);
		if (o->nubtext + n > o->capubtext)
			o->ubtext =
			    cta__base_grow_from(o->ubtext, &o->capubtext, o->nubtext + n, 1, 256);
		memcpy(o->ubtext + o->nubtext, cause, n);
		r = &o->ubs[o->nubs++];
		*r = (struct cta__ub_rec){
		    .block = c->steal_current,
		    .phys = c->logical,
		    .t_ns = t_ns,
		    .file = file,
		    .cause = (uint32_t)o->nubtext,
		    .thread = thread,
		    .run = 1,
		    .line = line,
		    .kernel = u->k->id,
		    .rule = (uint32_t)rule,
		};
		o->nubtext += n;
	}
	o->ubkept++;
	char text[sizeof(cause) + 256];
	snprintf(text, sizeof(text), "%s at %s:%d: %s", name, file, line, cause);
	cta__base_out_trace(s, t_ns, warning ? CTA_TEV_WARN : CTA_TEV_UB, u->k->id,
	                    c->steal_current, c->logical, c->sm, thread, 0, text);
}

void cta__ub(struct cta_sim *s, enum cta__ub_rule rule, struct cta__unit *u, struct cta__lane_x *x,
             const char *file, int line, const char *causefmt, ...)
{
	struct cta__cta *c = x && x->cta ? x->cta : &u->ctas[0];
	if (file && !x)
		for (unsigned i = 0; i < u->nctas; i++)
			if (u->ctas[i].foreach_file == file)
				c = &u->ctas[i];
	unsigned thread = 0;
	uint64_t t = c->end_t;
	if (x) {
		const struct cta__lane *l = &x->l;
		thread = l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
		t = l->vtime;
	}
	va_list ap;
	va_start(ap, causefmt);
	report(s, rule, u, c, thread, t, file, line, causefmt, ap);
	va_end(ap);
}

void cta__ub_by(struct cta_sim *s, enum cta__ub_rule rule, struct cta__unit *u, unsigned cta,
                unsigned thread, uint64_t t_ns, const char *file, int line, const char *causefmt,
                ...)
{
	va_list ap;
	va_start(ap, causefmt);
	report(s, rule, u, &u->ctas[cta < u->nctas ? cta : 0], thread, t_ns, file, line, causefmt,
	       ap);
	va_end(ap);
}
