/* Every call that runs up the module order of the simulator core
 * (docs/ARCHITECTURE.md), in one place, each with why it stays. The
 * callers include this header; the modules that define them include it
 * too, so the prototypes are checked against the definitions. Nothing else
 * may call upwards: tests/arch/include_order.py fails the build when an
 * include does. */
#ifndef CTASIM_BASE_UPCALLS_H
#define CTASIM_BASE_UPCALLS_H

#include "base/state.h"

/* exec -> engine. A lane whose solo unit waits for the engine again steps
 * the engine itself, on its own stack (lane_engine in sim/exec/exec.c),
 * and switches straight to the next resumed lane: one switch per cancel
 * round trip instead of two through the scheduler (docs/PERFORMANCE.md). */
enum { CTA__STEP_NEXT, CTA__STEP_STOP, CTA__STEP_READY, CTA__STEP_RESUME };
/* Never returns CTA__STEP_NEXT: see sim/engine/sim.c. */
int cta__engine_step(struct cta_sim *s, struct cta__unit **resume);
/* Applies a unit's segment: its outbox, new cancel requests, ended CTAs. */
void cta__engine_commit(struct cta_sim *s, struct cta__unit *u);
/* cta__engine_commit of u (unless NULL), then cta__engine_step: what a
 * waiting lane of a resumed unit does at each cancel round trip, in one
 * call. */
int cta__engine_commit_step(struct cta_sim *s, struct cta__unit *u, struct cta__unit **resume);
/* exec -> engine. A batch on the engine's thread commits each unit as the
 * segment moves past it, and counts untraced units' starts as it comes to
 * them, while the unit is in cache (one pass over a batch, not three). */
/* While a batch runs on the engine's thread (s->early_commit): commits its
 * units up to index upto, the segment having moved past them. */
void cta__engine_commit_early(struct cta_sim *s, size_t upto);
/* While a batch runs without a trace (s->lazy_start): u's start, counted
 * as the segment comes to it. */
void cta__engine_unit_started(struct cta_sim *s, struct cta__unit *u);
/* exec -> engine. A serial batch on the engine's thread makes the unit of
 * each block left to be made (struct cta__placed) as the segment comes
 * to it, on the memory the block before it freed at its commit: unit i of
 * the segment, or NULL when memory ran out (the run then stops as hung). */
struct cta__unit *cta__engine_unit_at(struct cta_sim *s, size_t i);
/* exec -> engine. While the bodies of skipped periods run (s->skip_run,
 * sim/engine/period.h): the block of unit u, batch entry i, is done and
 * its lane alone: 1 when u became the block of entry i + 1 (checked,
 * committed and made again in place: cta__exec_unit_retarget), 0 when the
 * lane stops there. (skip_move in sim/exec/exec.c does the same for the
 * common block itself, through s->skip_r.) */
int cta__engine_skip_next(struct cta_sim *s, struct cta__unit *u, size_t i);

/* exec -> clc. A CTA that ends settles its CLC state (outstanding
 * requests, the for_each rules checked at the CTA's end) where it ends,
 * inside the segment, so that the reports carry the thread and time. */
void cta__clc_cta_end(struct cta_sim *s, struct cta__unit *u, struct cta__cta *c);
/* exec -> clc. A compiled block runs its work-stealing loop as a whole
 * (sim/exec/regions.c): each thread's entry into the loop, then the loop
 * for every thread at once, which returns when the block must wait for a
 * request (struct cta__kc_ws in sim/exec/regions.h). */
struct cta__kc_ws;
void cta__clc_ws_enter(int leader_mode, bool is_leader, const char *file, int line);
int cta__clc_ws_run(struct cta__kc_ws *w);
/* exec -> clc. A compiled thread at an mbarrier wait that would block
 * ends its region there; once every live thread of the block waits on the
 * same phase, the block waits as one lane (registered as the mbarrier's
 * waiter at time vt: 0), or goes on when the phase completed (1). */
int cta__clc_wait_blocks(uint64_t *bar, unsigned parity);
int cta__clc_wait_park(uint64_t *bar, unsigned parity, const char *file, int line, uint64_t vt);
/* The same for lane x (in the CTA whose mbarrier bar is), not the running
 * one: a compiled cluster parks a lane per CTA whose threads wait. */
int cta__clc_park_lane(struct cta__lane_x *x, uint64_t *bar, unsigned parity, const char *file,
                       int line, uint64_t vt);
/* Takes lane x off the waiters of the mbarrier it was parked on (a cluster
 * given up). */
void cta__clc_unpark_lane(struct cta__lane_x *x);

/* exec -> sanitize. Under --sanitize a block's shared memory is marked in
 * the shadow the instrumented kernels test (what to mark depends on the
 * tool and on the kernel now using the arena) as its unit is made, before
 * any of its threads runs (sim/sanitize/sanitize.c). */
void cta__san_unit_start(struct cta_sim *s, const struct cta__unit *u);
/* exec -> sanitize. The same for the host thread's arena that a compiled
 * block running to its end in one go uses instead of its CTA's (sim/exec/
 * regions.c), as that block starts: 0 when marked (or nothing to mark),
 * else the block keeps its CTA's. */
int cta__san_arena(struct cta_sim *s, const struct cta__unit *u, const unsigned char *arena);

#endif
