/* Cluster launch control (sim/clc/clc.c): the engine's side of a cancel
 * request. Above exec and sched; used by the engine. (clc_cta_end, which
 * exec calls, is an upward call: base/upcalls.h.) */
#ifndef CTASIM_CLC_CLC_H
#define CTASIM_CLC_CLC_H

#include "base/state.h"

/* Emulated CLC: the work r's issuing thread did after r before it
 * waited for r's result (0 when it does not wait for it yet): what the
 * blocks ahead of a late block run before their first wait (clc_late_ppm,
 * docs/FIDELITY.md). Called before r is resolved. */
uint64_t cta__clc_issuer_work(struct cta_sim *s, const struct cta__request *r);
void cta__clc_resolve(struct cta_sim *s, struct cta__request *r);
/* Emulated CLC: the unit a request takes is its place in the order in
 * which the requests' atomics reach the emulation's cursor, and a far
 * GPC's atomics take clc_far_ppm as long to get there: the engine resolves
 * a far block's request that much later than its issue (the request's
 * extra on the far side), so that of requests issued at one instant the
 * near GPCs' take the units first, as the GPU's do (docs/FIDELITY.md).
 * Its completion stays its issue plus its latency. r->far is set only
 * under the emulation, once the costs are made; 0 for any other request.
 * (Inline: the engine asks twice a request.) */
static inline uint64_t cta__clc_arrival(const struct cta_sim *s, const struct cta__request *r)
{
	return r->far ? s->clc_cost[1][0] - s->clc_cost[0][0] : 0; /* (0: the request's cost) */
}

/* 0: a wait whose phase one request completed always takes the general
 * issuer_waited and observe (the unit tests compare both ways); 1 by
 * default. cta__clc_quick_observes counts, per host thread, the waits
 * that took the short form. */
extern int cta__clc_quick_observe;
extern _Thread_local uint64_t cta__clc_quick_observes;

#endif
