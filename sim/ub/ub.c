/* The undefined-behaviour checker's reporting side: stable rule names, one
 * report per occurrence with its location, block, thread, virtual time and
 * the earlier event that made it UB, counts per rule, and the abort mode.
 * The checks themselves sit where the rules are (sim/exec, sim/clc). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
    NULL,
};

const char *const *cta_ub_rule_names(void)
{
	return rule_names;
}

/* Reports kept in full; beyond this only the counts grow. */
#define MAX_STORED 4096

void cta__ub(struct cta_sim *s, enum cta__ub_rule rule, struct cta__unit *u, struct cta__lane_x *x,
             const char *file, int line, const char *causefmt, ...)
{
	if (s->o.ub_mode == CTA_UB_OFF && rule != UB_BARRIER_DEADLOCK)
		return;
	/* Abort mode keeps only the first UB: threads of the segment that
	 * was running when it hit still finish, and must not add more. */
	if (s->aborted)
		return;
	int warning = rule == UB_BUILTIN_BLOCKIDX_IN_BODY;
	s->ub_counts[rule]++;
	if (s->o.ub_mode == CTA_UB_ABORT && !warning)
		s->aborted = 1;
	if (s->nubs >= MAX_STORED)
		return;
	if (s->nubs == s->ubcap) {
		size_t cap = s->ubcap ? s->ubcap * 2 : 16;
		struct cta_ub_report *n = realloc(s->ubs, cap * sizeof(*n));
		if (!n)
			return;
		s->ubs = n;
		s->ubcap = cap;
	}
	struct cta_ub_report *r = &s->ubs[s->nubs++];
	memset(r, 0, sizeof(*r));
	r->rule = rule_names[rule];
	r->warning = warning;
	r->file = file ? file : "?";
	r->line = line;
	r->kernel = u ? u->k->id : 0;
	struct cta__cta *c = NULL;
	if (x)
		c = cta__lane_cta(x);
	else if (u)
		c = &u->ctas[0];
	if (file && u && !x)
		for (unsigned i = 0; i < u->nctas; i++)
			if (u->ctas[i].foreach_file == file)
				c = &u->ctas[i];
	r->block = c ? c->steal_current : 0;
	r->phys = c ? c->logical : 0;
	if (x) {
		const struct cta__lane *l = &x->l;
		r->thread = l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
		r->t_ns = l->vtime;
	} else {
		r->thread = 0;
		r->t_ns = s->now;
	}
	va_list ap;
	va_start(ap, causefmt);
	vsnprintf(r->cause, sizeof(r->cause), causefmt, ap);
	va_end(ap);
	char text[400];
	snprintf(text, sizeof(text), "%s at %s:%d: %s", r->rule, r->file, r->line, r->cause);
	cta__trace(s, r->t_ns, warning ? CTA_TEV_WARN : CTA_TEV_UB, r->kernel, r->block, r->phys,
	           c ? c->sm : CTA_TRACE_NONE, r->thread, 0, text);
}
