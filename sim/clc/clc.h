/* Cluster launch control (sim/clc/clc.c): the engine's side of a cancel
 * request. Above exec and sched; used by the engine. (clc_cta_end, which
 * exec calls, is an upward call: base/upcalls.h.) */
#ifndef CTASIM_CLC_CLC_H
#define CTASIM_CLC_CLC_H

#include "base/state.h"

void cta__clc_resolve(struct cta_sim *s, struct cta__request *r);

#endif
