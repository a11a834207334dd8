/* Execution of bodies (sim/exec/exec.c): units (a block or a cluster),
 * lanes, the lazy per-thread loop, barriers, shared memory, spinning and
 * the watchdog. Above base and ub; used by sched, clc, sanitize and the
 * engine. Its calls up the order are declared in base/upcalls.h. */
#ifndef CTASIM_EXEC_EXEC_H
#define CTASIM_EXEC_EXEC_H

#include "base/state.h"
#include "ub/ub.h"

/* Parks every worker's foreign runners in their own pools; only while no
 * segment runs (the engine thread, outside a parallel batch). */
void cta__exec_return_runners(struct cta_sim *s);
/* 0: cta__claim_next never moves a lane on to the next unit (the unit
 * tests compare both ways); 1 by default. */
extern int cta__exec_lane_moves;
/* 0: a waiting lane of a resumed unit never steps the engine before the
 * general pick and settle (lane_leave_slow; the unit tests compare both
 * ways); 1 by default. */
extern int cta__exec_quick_waits;
int cta__exec_lane_move_next(struct cta__lane *l);
struct cta__unit *cta__exec_unit_new(struct cta_sim *s, struct cta__kernel *k, uint64_t index,
                                     const unsigned *sms, uint64_t t);
/* cta__exec_unit_new in two steps: the duration model's scale and add for a
 * unit of k just placed on sms[] (their room taken), and later the unit
 * with them (struct cta__placed). first: the issue time (spin_issue_ps) of
 * one call, which the block's first call does not pay: the arithmetic a
 * launch declares comes between calls, and the entry before the first is
 * the per-block add's. */
void cta__exec_unit_spin(const struct cta_sim *s, const struct cta__kernel *k, const unsigned *sms,
                         uint32_t *spin, uint32_t *add, uint32_t *first);
struct cta__unit *cta__exec_unit_make(struct cta_sim *s, struct cta__kernel *k, uint64_t index,
                                      const unsigned *sms, uint64_t t, uint32_t spin, uint32_t add,
                                      uint32_t first);
/* Unit u of one CTA, its block done and committed and its one lane still
 * bound, becomes block `index` of its kernel on SM sm from t: what
 * cta__exec_unit_make sets for a unit of one block, on the same memory,
 * its first instruction at t (the period skip, sim/engine/period.h). */
void cta__exec_unit_retarget(struct cta_sim *s, struct cta__unit *u, uint64_t index, unsigned sm,
                             uint64_t t, uint32_t spin, uint32_t add);
/* Whether CTA c holds more than a block that crossed no barrier, placed
 * no shared variable and made no CLC object leaves behind (what
 * cta__exec_unit_retarget then clears). */
static inline int cta__exec_cta_dirty(const struct cta__cta *c)
{
	return (c->bar_arrived | c->bar_gen | (uintptr_t)c->mbars | (uintptr_t)c->reqs |
	        c->nrslots | c->observed_failure | c->cold_dirty | c->bar_max_t | c->nsites) != 0;
}
/* The issue gate (spin_gate_threads) and the register file's gate
 * (spin_regs_free; cta__exec_regs_waits: whether a block of k waits with
 * that many warps running on its SM besides it): whether a block of k
 * just placed on SM sm (its room taken) must wait for running blocks to
 * end; holding its
 * unit u on its SM's list; and letting u begin its work at t (not before
 * its start), with `before` threads running on its SM besides it, which
 * sets its duration model's index. The engine lets held units go
 * (gate_release in sim/engine/sim.c). */
int cta__exec_gate_holds(const struct cta_sim *s, const struct cta__kernel *k, unsigned sm,
                         uint64_t index);
/* The sub-partitions by placement order (spin_regs_order): where the rule
 * applies to block `index` of k on SM sm, its warps on each sub-partition
 * (want[4]) and 1, else 0; the most warps running on one of its
 * sub-partitions with its own (own_held: its warps are counted as held),
 * less those of a block leaving (lsub, or NULL); counting a block's warps
 * as held by the gates (held) or no longer (0); and whether a later block
 * of k with `fullest` warps so waits at the register file's gate, or
 * (late) is held by its late entry. */
int cta__exec_part_of(const struct cta_sim *s, unsigned sm, const struct cta__kernel *k,
                      uint64_t index, unsigned want[4]);
unsigned cta__exec_part_fullest(const struct cta_sim *s, unsigned sm, const unsigned want[4],
                                int own_held, const unsigned *lsub);
void cta__exec_part_gate(struct cta_sim *s, unsigned sm, const struct cta__kernel *k,
                         uint64_t index, int held);
/* The register file's draw for a block, in [0, 10^6) (spin_regs_pass_ppm,
 * spin_regs_stay_ppm). */
unsigned cta__exec_regs_draw(const struct cta_sim *s, const struct cta__kernel *k, uint64_t index,
                             unsigned salt);
int cta__exec_regs_fills(const struct cta_sim *s, const struct cta__kernel *k, unsigned fullest,
                         int late);
int cta__exec_regs_waits(const struct cta_sim *s, const struct cta__kernel *k, unsigned running);
int cta__exec_regs_late(const struct cta_sim *s, const struct cta__kernel *k, unsigned running);
void cta__exec_gate_hold(struct cta_sim *s, struct cta__unit *u);
/* before, bwarps: the threads and warps running on its SM before it. */
void cta__exec_gate_open(struct cta_sim *s, struct cta__unit *u, unsigned before, unsigned bwarps,
                         uint64_t t);
/* The same for a block left to be made (struct cta__held): a record from
 * the run's free list, NULL when memory ran out; held on its SM; let go. */
struct cta__held *cta__exec_held_new(struct cta_sim *s);
void cta__exec_held_free(struct cta_sim *s, struct cta__held *h);
void cta__exec_gate_hold_placed(struct cta_sim *s, struct cta__held *h);
void cta__exec_gate_open_placed(struct cta_sim *s, struct cta__held *h, unsigned before,
                                unsigned bwarps, uint64_t t);
/* Runs the units' segments in order, each until every lane is done or
 * waits for the engine (cta__base_seg_worker set, cta__base_seg_unit the one
 * running). */
void cta__exec_units_run(struct cta_sim *s, struct cta__unit *const *v, size_t n);
/* Runs task t of a skipped period's chunk on this host thread (s->skip_par
 * set): its unit, then in place the following blocks of its range while
 * each ends as predicted (skip_move_par). */
void cta__exec_skip_task_run(struct cta_sim *s, struct cta__skip_task *t);
/* Sets what every new unit of k starts from (k->cursor0); once the run's
 * options are final, before its first unit. */
void cta__exec_unit_template(struct cta_sim *s, struct cta__kernel *k);
/* Frees what a CTA's memory holds: shared memory, spare mbarriers and
 * requests. */
void cta__exec_cta_release(struct cta__cta *c);
/* n objects of size bytes, zeroed, on whole cache lines of their own
 * (NULL when out of memory). */
void *cta__exec_calloc_lines(size_t n, size_t size);
void cta__exec_unit_free(struct cta_sim *s, struct cta__unit *u);
struct cta__lane_x *cta__exec_lane_self(void);
/* Makes x's observations past CTA__OBS_IN (all empty) and returns the
 * first of them; NULL when out of memory. Freed with the lanes
 * (cta__exec_lanes_free). */
struct cta__obs *cta__exec_lane_obs_more(struct cta__lane_x *x);
/* Frees every lane worker w made, all of them on its spare list. */
void cta__exec_lanes_free(struct cta__worker *w);
/* Marks c's shared memory as possibly written (see smem_dirty). */
void cta__exec_smem_handed_out(struct cta__unit *u, struct cta__cta *c);
struct cta__cta *cta__exec_lane_cta(struct cta__lane_x *x);
/* Suspends the calling lane in state st until the scheduler wakes it. */
void cta__exec_lane_block(struct cta__lane_x *x, enum lstate st);
/* cta__exec_lane_block(x, L_MBAR), with the quick wait of a CLC round trip
 * (sim/exec/exec.c). */
void cta__exec_lane_wait_mbar(struct cta__lane_x *x);
void cta__exec_lane_wake(struct cta__unit *u, struct cta__lane_x *x);
/* For a compiled cluster (sim/exec/regions.c): a lane of u without a fiber
 * (NULL when out of memory), which parks for a CTA's waiting threads; x
 * made the lane of CTA `rank`; a lane of u that takes no more part, retired
 * as a finished one (its unit's count of live lanes). */
struct cta__lane_x *cta__exec_lane_aux(struct cta__unit *u);
void cta__exec_lane_enter(struct cta__lane_x *x, unsigned rank);
void cta__exec_lane_retire(struct cta__lane_x *x);

/* A spinning lane's poll cost: each suspension stands for the
 * CTA__POLL_BUDGET polls before it, at this many virtual ns each. A thread
 * that keeps spinning polls less often, as a back-off would: its k-th
 * suspension in a row stands for k / CTA__SPIN_RAMP times as many polls
 * (at least once, at most CTA__SPIN_MAX times), so a wait of T is noticed
 * within about 2 / sqrt(T / 25.6 us) of T, and costs the host
 * O(sqrt(T)) suspensions instead of O(T). */
#define CTA__POLL_NS   100
#define CTA__SPIN_RAMP 8
#define CTA__SPIN_MAX  64
/* A spinning thread suspends at *vtime, after *rounds suspensions in a row,
 * the last EV_POLL having resumed it at resume_t (cta__spin_poll on
 * fibers, cta__kc_spin_blocks in region form: one rule, byte-identical
 * traces): more than a round's polls since then was work, and the count
 * starts again; the suspension stands for the round's polls times the
 * back-off's multiplier, added to *vtime. */
static inline void cta__exec_spin_backoff(uint64_t *vtime, uint64_t resume_t, unsigned *rounds)
{
	const uint64_t round = (uint64_t)CTA__POLL_BUDGET * CTA__POLL_NS;
	if (*vtime - resume_t > round || *vtime < resume_t)
		*rounds = 0;
	++*rounds;
	uint64_t mult = *rounds / CTA__SPIN_RAMP;
	mult = mult < 1 ? 1 : mult > CTA__SPIN_MAX ? CTA__SPIN_MAX : mult;
	*vtime += round * mult;
}
/* Stops the run at the watchdog: a report on lane x of unit u (UB_WATCHDOG
 * or UB_FORWARD_PROGRESS), which ends the run when the unit is committed,
 * and u's lanes given up silently once they settle. */
void cta__exec_watchdog_stop(struct cta_sim *s, struct cta__unit *u, struct cta__lane_x *x,
                             int rule, const char *file, int line, const char *msg);

/* cta_grid_sync outside a cooperative launch, on lane x of unit u: the run
 * stops (cta__exec_watchdog_stop's forward_progress report). The caller
 * parks the thread for good: cta__grid_sync on fibers, the kernel
 * compiler's inline form (cta__kc_grid_check) in region form. */
void cta__exec_grid_sync_stop(struct cta__unit *u, struct cta__lane_x *x, const char *file,
                              int line);

/* The watchdog's view of a CTA barrier about to complete (exec.c, and the
 * region form's in regions.c): 1 when the CTA crossed barriers with no work
 * between them for longer than the watchdog; then the report. */
int cta__exec_bar_idle(struct cta_sim *s, struct cta__cta *c);
void cta__exec_bar_watchdog_report(struct cta__unit *u, struct cta__lane_x *x, struct cta__cta *c,
                                   const char *file, int line, uint64_t idle_ns);

/* An EV_POLL for u is due: its spinning lanes become runnable, at now at
 * the earliest. */
void cta__exec_unit_poll_wake(struct cta__unit *u, uint64_t now);
/* Whether k's threads' global accesses go in virtual-time order with the
 * device's wait_* costs (sim/exec/exec.c). */
int cta__exec_wait_model(const struct cta_sim *s, const struct cta__kernel *k);
/* The turn of an atomic on address a (<< 2) at time vtime (ns) of the
 * thread of rank `rank` of CTA cta_rank of block bid of k, turn_ps a turn
 * (device wait_turn_ps, wait_sync_ps): the time its turn starts; *seen 1
 * when an atomic took a turn on a before. */
uint64_t cta__exec_wait_turn(struct cta_sim *s, const struct cta__kernel *k, uint3 bid,
                             unsigned cta_rank, unsigned rank, uintptr_t a, uint64_t vtime,
                             unsigned turn_ps, unsigned *seen);
/* Whether a volatile load (kind, access acc) takes a turn (device
 * wait_poll_ps): the third or later of a poll on one address (same: the
 * thread's last access was to it; idle: its yield points with nothing
 * between), not a poll of a cta_grid_sync's phase. */
int cta__exec_wait_polls(unsigned kind, uint64_t acc, int same, unsigned idle,
                         const struct cta__kernel *k);
/* What an atomic costs its thread after its turn: wait_hit_ns when its
 * address was seen (cta__exec_wait_turn) and the device has hits, else
 * wait_atomic_ns. */
uint64_t cta__exec_wait_cost(const struct cta_device_model *d, unsigned seen);
/* The bytes the blocking kernels' turns by address hold (s->wait_slots),
 * and the addresses there. */
size_t cta__exec_wait_bytes(const struct cta_sim *s, size_t *addresses);
/* Frees the blocking kernels' turns by address (s->wait_slots). */
void cta__exec_wait_free(struct cta_sim *s);
/* A spinning thread of a unit: the lane that stands for it (set to name
 * it in a report), its rank, since when it spins, where it last spun. */
struct cta__exec_spinner {
	struct cta__lane_x *x;
	unsigned rank;
	uint64_t since;
	const char *file;
	int line;
};
/* The i-th spinning thread of u in the order of u->spinners (a lane's
 * thread, or each of a compiled block's: cta__regions_spinner), into *sp;
 * 0 when there is none. */
int cta__exec_unit_spinner(struct cta__unit *u, unsigned i, struct cta__exec_spinner *sp);

#endif
