/* The engine (sim/engine/sim.c, crash.c): the event loop, commits and
 * verdicts, over every other core module. What exec calls back into the
 * engine is declared in base/upcalls.h. */
#ifndef CTASIM_ENGINE_ENGINE_H
#define CTASIM_ENGINE_ENGINE_H

#include "base/state.h"

extern struct cta_sim *volatile cta__engine_running_sim;
/* 0: a batch commits its units only once all its bodies ran, and counts
 * their starts before (the unit tests compare both ways); 1 by default. */
extern int cta__engine_early_commits;
/* 0: a batch runs when its time comes, never sealed to run later with
 * others (seal_ready in sim.c; the unit tests compare both ways); 1 by
 * default. */
extern int cta__engine_seal;
/* Queues an event (sim/base/event_queue.c); out of memory ends the run as
 * hung, with a message. */
void cta__engine_push(struct cta_sim *s, uint64_t t, int type, void *p, uint64_t a);
void cta__engine_kernel_done(struct cta_sim *s, struct cta__kernel *k);

#endif
