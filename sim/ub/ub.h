/* The UB checker's rules and reports (sim/ub/ub.c): each rule's stable
 * name, and the report of a rule broken by a lane (kept in the unit's
 * outbox inside a segment). Above base; below exec, clc and sanitize. */
#ifndef CTASIM_UB_UB_H
#define CTASIM_UB_UB_H

#include "base/state.h"

enum cta__ub_rule {
	UB_REQUEST_AFTER_OBSERVED_FAILURE = 0,
	UB_READ_FAILED_INDEX,
	UB_READ_BEFORE_COMPLETE,
	UB_RESULT_BUFFER_IN_FLIGHT,
	UB_FOR_EACH_CALLED_TWICE,
	UB_FOR_EACH_NOT_ALL_THREADS,
	UB_LEADER_COUNT,
	UB_MULTICAST_CLUSTER_NOT_RUNNING,
	UB_DIVERGENT_BARRIER,
	UB_BARRIER_DEADLOCK,
	UB_BUILTIN_BLOCKIDX_IN_BODY,
	UB_MBARRIER_NOT_INITIALISED,
	UB_WATCHDOG,
	UB_FORWARD_PROGRESS,
	UB__COUNT,
	/* The sanitizer's reports (sim/sanitize), through the same path. */
	UB_MEMCHECK_OOB = UB__COUNT,
	UB_MEMCHECK_USE_AFTER_FREE,
	UB_RACECHECK_SHARED_WW,
	UB_RACECHECK_SHARED_RW,
	UB_INITCHECK_SHARED,
	UB__ALL
};
_Static_assert(UB__ALL <= 24, "struct cta__outbox's ubcount[] holds every rule");
/* Reports a run keeps in full, the first in commit order; beyond them only
 * the counts grow. */
#define CTA__UB_MAX_STORED 4096
/* The longest cause a report keeps (the length of struct cta_ub_report's
 * cause, its end included). */
#define CTA__UB_CAUSE_MAX sizeof(((struct cta_ub_report *)0)->cause)
/* Adds the first n reports of run r (struct cta__ub_rec), its cause `cause`,
 * to the reports s keeps (s->ubs, s->nubs): one run more, its cause stored
 * once whatever runs share it. */
void cta__ub_store_add(struct cta_sim *s, const struct cta__ub_rec *r, const char *cause,
                       unsigned n);
/* Report i of those s keeps, spelled out (kept till cta__ub_store_free);
 * NULL past them or when memory runs out. */
const struct cta_ub_report *cta__ub_store_at(struct cta_sim *s, size_t i);
/* Bytes the store holds for its runs and causes (not the reports spelled
 * out on demand): the unit tests' measure of its size. */
size_t cta__ub_store_bytes(const struct cta__ub_store *st);
void cta__ub_store_free(struct cta__ub_store *st);
/* Reports a rule broken by lane x (or by the unit when x is NULL). */
void cta__ub(struct cta_sim *s, enum cta__ub_rule rule, struct cta__unit *u, struct cta__lane_x *x,
             const char *file, int line, const char *causefmt, ...)
    __attribute__((format(printf, 7, 8)));
/* The same for a rule found later than it was broken (at the end of a CTA):
 * names the thread of CTA `cta` that broke it, at t_ns. */
void cta__ub_by(struct cta_sim *s, enum cta__ub_rule rule, struct cta__unit *u, unsigned cta,
                unsigned thread, uint64_t t_ns, const char *file, int line, const char *causefmt,
                ...) __attribute__((format(printf, 9, 10)));

#endif
