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

void cta__ub_run_at(struct cta_ub_report *d, const struct cta_ub_report *r, unsigned k,
                    const unsigned *block)
{
	*d = *r;
	if (k)
		set_thread(d,
		           (unsigned)(((uint64_t)r->thread + k) %
		                      ((uint64_t)block[0] * block[1] * block[2])),
		           block);
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
	const char *name = rule < UB__COUNT ? rule_names[rule] : san_rule_names[rule - UB__COUNT];
	const unsigned *bd = u->k->l.block;
	char cause[sizeof(o->ubs->cause)];
	vsnprintf(cause, sizeof(cause), causefmt, ap);
	file = file ? file : "?";
	struct cta_ub_report *r = o->nubs ? &o->ubs[o->nubs - 1] : NULL;
	/* The next thread of the last report's run, the same in all else:
	 * one more in the run (a block's threads breaking a rule one after
	 * another cost a report each, 600 bytes, in every resident block). */
	if (r && r->rule == name && r->file == file && r->line == line && r->t_ns == t_ns &&
	    r->block == c->steal_current && r->phys == c->logical && r->kernel == u->k->id &&
	    thread == (r->thread + o->ubrun[o->nubs - 1]) % ((uint64_t)bd[0] * bd[1] * bd[2]) &&
	    !strcmp(r->cause, cause)) {
		o->ubrun[o->nubs - 1]++;
	} else {
		if (o->nubs == o->capubs) {
			size_t cap = o->capubs ? o->capubs * 2 : 8;
			struct cta_ub_report *n = realloc(o->ubs, cap * sizeof(*n));
			if (n)
				o->ubs = n;
			unsigned *nr = realloc(o->ubrun, cap * sizeof(*nr));
			if (nr)
				o->ubrun = nr;
			if (!n || !nr)
				return;
			o->capubs = cap;
		}
		o->ubrun[o->nubs] = 1;
		r = &o->ubs[o->nubs++];
		memset(r, 0, sizeof(*r));
		r->rule = name;
		r->warning = warning;
		r->file = file;
		r->line = line;
		r->kernel = u->k->id;
		r->kernel_name = u->k->label;
		r->block = c->steal_current;
		r->phys = c->logical;
		r->t_ns = t_ns;
		/* Coordinates as CUDA names them: the block being processed (a
		 * stolen index, in a work-stealing loop) and the thread in its
		 * block. */
		uint3 b = cta__base_bid_of_logical(u->k, r->block);
		r->block_idx[0] = b.x, r->block_idx[1] = b.y, r->block_idx[2] = b.z;
		set_thread(r, thread, bd);
		memcpy(r->cause, cause, sizeof(cause));
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
