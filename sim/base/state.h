/* The simulator core's shared state types (as Lua's lstate.h): the kernel,
 * the SM, mbarriers and requests, lanes, CTAs, units with their outboxes,
 * and struct cta_sim itself. Types only, and inline accessors of them;
 * each module's functions are declared in its own header. */
#ifndef CTASIM_BASE_STATE_H
#define CTASIM_BASE_STATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/coverage.h"
#include "base/event_queue.h"
#include "ctasim/device.h"
#include "ctasim/kernel.h"
#include "ctasim/sim.h"
#include "ctasim/trace.h"

struct cta__fiber;
struct cta__fiber_pool;
struct cta__period;

/* mbarriers a thread remembers observing (struct cta__lane_x). */
#define CTA__OBS_MAX 8
#define CTA__OBS_IN  2 /* of them in the lane itself (struct cta__lane_x) */

/* Stack of each simulated thread that has to wait (a barrier, an mbarrier). */
#define CTA__LANE_STACK (64 * 1024)

/* ---- a launched kernel -------------------------------------------------- */
enum kstate { K_WAITING = 0, K_ACTIVE, K_DONE };

struct cta__kernel {
	unsigned id;
	struct cta_launch l;
	void *args;
	char label[64];
	uint64_t nblocks;    /* logical blocks */
	unsigned csize;      /* CTAs per cluster (1 without clusters) */
	uint64_t nunits;     /* clusters (or blocks) */
	uint64_t next_unit;  /* pending range is [next_unit, nunits) */
	uint64_t units_done; /* units whose every CTA retired */
	uint64_t ctas_running;
	int priority;
	int stream;
	enum kstate state;
	uint64_t seq; /* activation order, for FIFO among equal priorities */
	/* Per-CTA resources, already rounded to allocation granularity. */
	unsigned threads, warps, regs, smem;
	unsigned occupancy; /* max blocks per SM alone on an SM */
	size_t smem_bytes;  /* static + dynamic bytes a CTA's arena holds */
	int uses_clc;       /* issued at least one cancel or for_each */
	int steals;         /* the engine resolved a cancel of it (the issue gate) */
	int never_waits;    /* CTA__KC_NO_WAIT of its body: its blocks may be sealed */
	int ran_batch;      /* ... once a batch of it ran at its own time */
	/* Warps a sub-partition's registers hold, where registers limit
	 * occupancy (the register file's gate, spin_regs_free); else 0. */
	unsigned part_warps;
	/* The SM's registers its blocks may take (fits in sim/sched). */
	unsigned regs_usable;
	/* Emulated CLC (clc_emulated): the claim-bitmap word of the last
	 * successful request, plus 1 (0: none yet), and when its claim
	 * completed. Units are handed out in order, so one word is enough. */
	uint64_t claim_word, claim_done;
	/* ... and a request's latency with the crowd of requesters
	 * (clc_crowd_units) for a near and a far issuer, computed for
	 * crowd_running - 1 running CTAs (0: not yet): the count changes only
	 * as blocks start and end, the latency is read at every request; and
	 * the issuer's wait for it, its growth plus the tail's share
	 * (clc_crowd_tail_ppm). */
	uint64_t crowd_running, crowd_lat[2], crowd_wait[2];
	/* ... and the emulation's context as a queue (clc_entry_ps,
	 * clc_sector_ps): when it is free (ps), the blocks whose entries it
	 * took, and when it last counted them (ns). */
	uint64_t sector_ps, sector_entries, sector_seen;
	uint64_t *fit;   /* SMs where one more block of this kernel fits (bwords words) */
	int fit_valid;   /* fit is kept current (the kernel is a dispatch candidate) */
	unsigned *sweep; /* placement = sweep: the first wave's SMs, in block order */
	unsigned sweep_len, sweep_pos;
	/* The sweep is computed (at launch, or with sweep_carry at the
	 * kernel's first dispatch), and the first SMs' half it started at. */
	int sweep_built;
	unsigned sweep_rot, sweep_gpc0;
	/* GPCs the next kernel's level-by-level deal moves its start on by
	 * (sweep_conc): 0 after a last pass that gave every SM a block, 1
	 * after one that gave TPCs one block each, 2 after one between. */
	unsigned conc_step;
	struct cta__cover cover;
	uint64_t *per_sm; /* blocks started per SM */
	struct cta_kernel_stats st;
	struct cta__kernel *next_in_stream;
	struct cta__cursor cursor0;   /* a new unit's cursor, less its start time */
	const struct cta__kc_def *kc; /* compiled region form (exec/regions.h), or NULL */
	cta_limiter limiter;          /* what limits occupancy */
	/* Blocks that wait for one another run on one host thread
	 * (docs/FORWARD_PROGRESS.md): 0 until its first batch ran, then 1
	 * (no thread spun yet) or 2 (a thread spun, or a cooperative launch). */
	int comm_state;
	/* cta_grid_sync: blocks arrived in this phase, and the phase. */
	uint64_t gsync_count, gsync_gen;
};

struct cta__stream {
	int priority;
	struct cta__kernel *head, *tail; /* kernels not yet done, in order */
};

struct cta__part {
	uint64_t index;
	unsigned kid, base;
};

/* ---- per-SM resources ----------------------------------------------------- */
struct cta__sm {
	unsigned threads, warps, blocks, regs, smem;
	unsigned cblocks; /* blocks of clustered launches (cluster_max_blocks_per_sm) */
	unsigned gpc;
	unsigned sweep_first; /* one of the model's sweep_first SMs (placement rule 8) */
	/* The issue gate (spin_gate_threads): blocks resident here that wait
	 * for running ones to end, oldest first, and their threads. */
	struct cta__unit *gate_head, *gate_tail;
	/* ... as placement records, where units are made lazily (every run
	 * but --sanitize's: the two lists are never both in use). */
	struct cta__held *held_head, *held_tail;
	unsigned gate_threads, gate_warps;
	/* The sub-partitions by placement order (spin_regs_order): the warps
	 * of register-limited blocks resident on each, the sub-partition the
	 * next such block's first warp takes, and each resident block's
	 * kernel, index and first sub-partition. */
	unsigned char part_w[4], part_g[4]; /* resident; of them, held by the gates */
	unsigned part_next, npart;
	struct cta__part *part;
};

/* The register file's end hold (spin_regs_hold_warps): per SM, the last
 * COHORT_KEEP blocks of register-limited kernels to end there, as they
 * were committed: the blocks placed with them (one kernel, one start)
 * are each other's cohort (cohort_hold in sim/engine/sim.c). */
#define CTA__COHORT_KEEP 32
struct cta__cohort {
	uint64_t start_t, index, end_t;
	unsigned kid, warps, place;
};

/* ---- mbarriers and cancel requests -------------------------------------- */
struct cta__request;

struct cta__mbar {
	uint64_t *addr;       /* in a CTA's shared memory */
	unsigned count;       /* arrivals per phase */
	unsigned pending;     /* arrivals still missing in the current phase */
	int64_t tx;           /* transaction bytes still expected (may go negative first) */
	unsigned phase;       /* current phase number (parity = phase & 1) */
	uint64_t arrive_t;    /* latest arrival time in the current phase */
	uint64_t tx_t;        /* latest completion time of tx in the current phase */
	uint64_t completed_t; /* when the last phase completed */
	unsigned unresolved;  /* requests targeting it that the engine has not resolved */
	unsigned char pend_slots[8],
	    done_slots[8]; /* result slots completing in this / the last phase */
	unsigned npend, ndone;
	struct cta__lane_x *waiters; /* lanes blocked in try_wait */
	const char *init_file;
	int init_line;
	struct cta__mbar *next;
};

/* A cancellation request; one per try_cancel. 128 bytes, two cache lines
 * (requests sit on lines of their own): its issue, its resolution and its
 * reads come hundreds of other requests apart, each missing every line it
 * touches. */
struct cta__request {
	struct cta__unit *unit;
	struct cta__kernel *k;
	uint64_t issue_t, done_t;
	uint64_t unit_index; /* stolen unit when successful */
	uint64_t wait;       /* emulated CLC: how much longer than clc_request_ns it took */
	uint3 first;         /* its first block's index, which queries return */
	unsigned thread;     /* issuing thread's rank in its block */
	/* Second line. */
	size_t result_off; /* offset of the result in shared memory */
	size_t bar_off;
	struct cta__request *next_new; /* in the unit's list of new requests */
	struct cta__request *next;     /* in the CTA's request list */
	const char *file;
	int line;
	uint32_t counted; /* targets whose mbarrier counted it as unresolved */
	unsigned cta;     /* issuing CTA's rank */
	unsigned char multicast;
	unsigned char resolved;
	unsigned char outcome; /* cta_cancel_outcome */
	unsigned char far;     /* emulated CLC: the issuer's SM is on a far GPC */
	unsigned char own;     /* issued while its block still ran its own index */
};
_Static_assert(sizeof(struct cta__request) <= 128, "a request fits two cache lines");

/* Bytes of a CTA's arena a block of kernel k can write: its shared memory
 * and, after it, 64 hidden bytes for the work-stealing loop's state (80
 * with slack). Arenas are at least this large. */
static inline size_t cta__base_smem_need(const struct cta__kernel *k)
{
	return k->smem_bytes + 80;
}

/* ---- execution units: a block, or a whole cluster ----------------------- */
enum lstate { L_RUN = 0, L_BARRIER, L_CBARRIER, L_MBAR, L_ENGINE, L_SPIN, L_DONE };

/* A lane's fiber-side extension: the public struct cta__lane plus what the
 * scheduler of its unit needs. */
struct cta__lane_x {
	struct cta__lane l; /* must be first */
	/* What a CTA barrier's crossing and a resumption touch, in the cache
	 * line that holds the end of l (lanes are allocated on cache lines):
	 * an arrival writes its place, state and the call it waits at, and
	 * the release each waiter's time, generation and state, so that a
	 * crossing touches the lane's first three lines only. */
	struct cta__fiber *fiber;
	struct cta__cta *cta; /* &l.unit->ctas[l.cta_rank], set with it */
	uint64_t bar_gen;     /* CTA barrier generation at its last crossing */
	/* In the run queue, or in a CTA barrier's list (which joins the run
	 * queue whole when the barrier completes). */
	struct cta__lane_x *next_run;
	const char *wait_file;
	int wait_line;
	unsigned char state; /* enum lstate */
	unsigned char wait_parity;
	unsigned char obs_used;  /* obs[] was written since the lane was new */
	unsigned char abandoned; /* retired by the deadlock handler while suspended */
	/* What an mbarrier wait adds, in the next line with its first
	 * observation. */
	struct cta__mbar *wait_bar;
	struct cta__lane_x *next_wait; /* in an mbarrier's or cluster barrier's list */
	unsigned worker;               /* the host thread whose spare lanes it returns to */
	/* A compiled block that waits as a whole (sim/exec/regions.c): its
	 * state, while the lane has no fiber. */
	struct cta__kc_park *kc_park;
	/* mbarrier phases this thread observed complete (for read_before_complete):
	 * as many as a CTA has result slots, so a thread that waits on every
	 * request it has in flight keeps every observation. The first shares
	 * a cache line with where the thread waits. Threads of the shipped
	 * kernels wait on one or two mbarriers: the others are in obs_more,
	 * made when a thread observes a third (cta__base_lane_obs), which keeps a
	 * lane at 320 bytes; on fibers every waiting thread has one. */
	struct cta__obs {
		struct cta__mbar *bar;
		uint64_t tseq;
		unsigned phase;
	} obs[CTA__OBS_IN];
	struct cta__obs *obs_more;        /* CTA__OBS_MAX - CTA__OBS_IN more, or NULL */
	const struct cta__kernel *dims_k; /* the kernel whose dimensions l holds */
	struct cta__lane_x *next_all;
	/* Spinning (cta__spin_poll), carved from the host thread's slabs when
	 * the lane first polls: most lanes never do, and on fibers every
	 * waiting thread has a lane (320 bytes with this apart, 384 with it
	 * inside: 17 MB of `vecscale_clc_cluster`'s 270,336 waiting threads). */
	struct cta__lane_spin *spin;
	/* The watchdog of a one-thread CTA's barriers (cta__exec_bar_idle). */
	uint64_t bar_rel_t, bar_idle_ns;
};

/* A lane's spinning state: the thread whose polls are counted, where it
 * last yielded, and since when it spins without a write. */
struct cta__lane_spin {
	const struct cta__unit *poll_unit;
	uint3 poll_tid, poll_bid;
	const char *spin_file;
	int spin_line;
	unsigned spin_rounds; /* suspensions since it last did anything else */
	uint64_t spin_since;
	uint64_t spin_resume_t; /* when an EV_POLL last resumed it */
	/* A blocking kernel's accesses in virtual-time order (device
	 * wait_*, wait_access in sim/exec/exec.c): its clock after its last
	 * yield point, the yield points since with nothing between them,
	 * the address of its last access (acc_addr: a round's back-off
	 * counts rounds on one address), and whether it waits for the
	 * engine's clock (not spinning). */
	uint64_t acc_end;
	uintptr_t acc_addr;
	unsigned acc_idle;
	unsigned char timed;
};

/* Observation i (< CTA__OBS_MAX) of lane x; NULL when it would be in
 * obs_more and none was made (an empty observation). */
static inline struct cta__obs *cta__base_lane_obs(struct cta__lane_x *x, unsigned i)
{
	if (i < CTA__OBS_IN)
		return &x->obs[i];
	return x->obs_more ? &x->obs_more[i - CTA__OBS_IN] : NULL;
}

#define CTA__SMEM_STALE 0x80000000u /* smem_dirty: left by an earlier block */
struct cta__cta {
	/* What a barrier of one thread and a cancel request touch, in the
	 * first cache line. */
	unsigned char *smem;
	unsigned nthreads; /* threads executed (blockDim, or 1 when timing-only) */
	/* __syncthreads state */
	unsigned bar_arrived;
	uint64_t bar_gen;
	uint64_t exited; /* threads that finished */
	/* CLC and UB tracking */
	struct cta__mbar *mbars;
	struct cta__request *reqs;
	uint64_t steal_current; /* logical index the block is processing now */
	/* Bytes of smem that may be non-zero: set when shared memory is
	 * handed to the body (or written for it). A new block on the arena
	 * marks them CTA__SMEM_STALE, and the first hand-out zeroes them.
	 * Blocks that never use shared memory skip the zeroing. */
	unsigned smem_dirty;
	unsigned char nrslots;
	unsigned char observed_failure;
	unsigned char done;
	/* Set by whoever writes the cold lines below (observed_failure_t up
	 * to the result slots); when clear they are all zero, and a new block
	 * need not clear them: most blocks never write them, and clearing
	 * them would fetch two lines the data stream evicted. */
	unsigned char cold_dirty;
	/* Set for every block: the second line. */
	uint64_t logical; /* logical block index */
	uint3 bid;
	unsigned sm;
	uint64_t end_t; /* latest thread exit */
	uint64_t bar_max_t;
	size_t smem_top;
	unsigned nsites; /* shared-memory sites placed so far (arrays below) */
	/* The cold lines. */
	uint64_t observed_failure_t;
	const char *observed_failure_file;
	int observed_failure_line;
	const char *bar_file;
	int bar_line;
	/* Barrier crossings with no work between them (the watchdog): the
	 * last release time and the idle time since work was done. (Written
	 * by the barriers, which set cold_dirty.) */
	uint64_t bar_rel_t, bar_idle_ns;
	int bar_divergent_reported;
	struct cta__lane_x *bar_waiters, *bar_waiters_tail; /* linked by next_run */
	unsigned foreach_calls; /* threads that called for_each / try_cancel_blocks */
	unsigned foreach_twice;
	unsigned leaders;
	const char *foreach_file;
	int foreach_line;
	int foreach_checked;
	uint64_t *fe_bits;  /* threads that called for_each (bitmap) */
	unsigned fe_leader; /* effective leader rank of try_cancel_blocks */
	int fe_leader_min;
	/* Everything above is reset for each new block (so a block's
	 * bookkeeping touches only these first four cache lines); the arrays
	 * below are only read up to their counts. A result slot is one cache
	 * line of its own: a request's issue, resolution, wait and reads each
	 * touch it, hundreds of other requests apart. */
	struct cta__rslot {
		_Alignas(64) size_t off; /* result buffer offset in shared memory */
		struct cta__request *r;
		struct cta__mbar *bar; /* the mbarrier it completed on */
		uint64_t observed_gen;
		/* thread_key + 1 of the last thread that passed checked_slot for r:
		 * what made the read defined stays true for that thread. */
		uint64_t ok_key;
		unsigned done_phase; /* that mbarrier's phase count after completion */
		unsigned observer;
		unsigned char phase_done; /* its mbarrier phase completed */
		unsigned char observed;
		unsigned char consumed;
		unsigned char reported;
	} rslots[8];
	/* mbarriers and requests of earlier blocks on this CTA's memory, to
	 * be used again (cta__exec_unit_free puts them here; cta__exec_cta_release
	 * frees them). */
	struct cta__mbar *spare_mbars;
	struct cta__request *spare_reqs;
	const void *sites[64];
	size_t site_off[64];
};

/* A run of UB reports kept compactly: `run` reports by the threads of
 * linear ranks thread, thread + 1, ... (mod the block's) that differ in
 * nothing else, as when every thread of a block reads blockIdx in a
 * work-stealing body. The cause's text is at offset `cause` of the text
 * that goes with the array (the outbox's, the run's store's); the rule's
 * name, the kernel's label and the blockIdx and threadIdx follow from the
 * rest (cta__ub_store_at spells a report out). 56 bytes, where a struct
 * cta_ub_report is 608. */
struct cta__ub_rec {
	uint64_t block, phys, t_ns;
	const char *file;
	uint32_t cause;
	uint32_t thread;
	uint32_t run;
	int32_t line;
	uint32_t kernel;
	uint32_t rule; /* enum cta__ub_rule */
};

/* The reports a run keeps (the first CTA__UB_MAX_STORED in commit order),
 * as runs with each distinct cause once; the reports that callers ask for
 * (cta_sim_ub_report) are spelled out in chunks on demand. */
struct cta__ub_store {
	struct cta__ub_rec *runs;
	uint64_t *first; /* index of each run's first report */
	size_t nruns, capruns;
	char *text; /* the causes, each once */
	size_t ntext, captext;
	uint32_t *hash; /* offsets + 1 into text by the cause's hash; 0 empty */
	size_t caphash, nhash;
	struct cta_ub_report **view; /* chunks of reports spelled out */
	size_t nview;
};

/* What a unit's segment produced that touches shared state. Segments may
 * run on several host threads at once; the engine applies each outbox when
 * it commits the unit, in dispatch order, so the result does not depend on
 * the number of threads. */
struct cta__outbox {
	/* The counts, read at every commit, share the first cache line. */
	size_t nrecs, ntext, nubs, nmarks;
	uint64_t crossings;
	uint64_t lanes;   /* lanes started (counted here: no shared counter) */
	unsigned ubtotal; /* sum of ubcount: most outboxes have none */
	int comm;         /* a global atomic ran */
	int error;        /* errmsg holds a message that stops the run */
	struct cta_trace_rec *recs;
	size_t caprecs;
	char *text; /* record texts, back to back; recs[i].text holds an offset + 1 */
	size_t captext;
	/* Reports in runs (struct cta__ub_rec), their causes back to back in
	 * ubtext; ubkept counts the reports of all the runs. */
	struct cta__ub_rec *ubs;
	char *ubtext;
	size_t capubs, ubkept, nubtext, capubtext;
	uint64_t *marks; /* logical blocks processed (coverage) */
	size_t capmarks;
	unsigned ubcount[24]; /* by enum cta__ub_rule (UB__ALL of them) */
	char errmsg[256];
};

/* Per host thread: its fiber pool and spare lanes. */
/* A cache line each: workers update their free lists on every lane. */
struct cta__worker {
	_Alignas(64) struct cta__fiber_pool *fpool;
	struct cta__lane_x *free_lanes;
	struct cta__fiber *foreign; /* other pools' runners, to return to them */
	/* Lanes are carved from slabs (sim/exec/exec.c), freed with the sim
	 * (cta__exec_lanes_free): on fibers every waiting thread has one, and
	 * a 64-byte aligned allocation each cost about a fifth more. */
	struct cta__lane_slab *lane_slabs;
	unsigned lane_slab_used;
	/* The lanes' spinning states (struct cta__lane_spin), the same way. */
	struct cta__spin_slab *spin_slabs;
	unsigned spin_slab_used;
	uint64_t busy_ns; /* time in the segments of a parallel batch */
};

/* A run of threads a waiting lane handed back: x from tid.x to end-1. */
struct cta__run {
	unsigned cta;
	uint3 tid;
	unsigned end;
};

struct cta__unit {
	/* Everything up to ret is cleared for each new unit (ctas, cap_ctas
	 * and cap_smem are set again at once); what a resumed unit touches
	 * comes first. */
	struct cta__kernel *k;
	struct cta_sim *sim;
	struct cta__cta *ctas;
	struct cta__lane_x *runq, *runq_tail; /* lanes ready to continue */
	struct cta__fiber *host;              /* the scheduler's context */
	/* outputs of the last segment, applied by the engine */
	struct cta__request *new_reqs, *new_reqs_tail;
	struct cta__cursor cursor; /* the second line, whole */
	unsigned nctas;
	int clc_objs; /* a CTA of it holds mbarriers, requests or fe_bits */
	/* Dispatched and not yet freed: a run that stops early (hang, abort)
	 * frees such units when the simulator is freed. */
	int live;
	unsigned live_lanes;
	unsigned ctas_done;
	unsigned lane_worker; /* the worker that made the lanes, */
	int lanes_mixed;      /* ... unless several did */
	int lanes_abandoned;  /* unit_deadlock gave some up */
	/* cluster barrier */
	unsigned cbar_arrived;
	unsigned cap_ctas; /* allocated CTAs */
	uint64_t start_t;
	struct cta__lane_x *all;      /* every lane ever started */
	struct cta__lane_x *all_tail; /* the first one started */
	uint64_t index;               /* unit (cluster) index in the kernel */
	uint64_t cbar_max_t;
	uint64_t cbar_gen;
	struct cta__lane_x *cbar_waiters, *cbar_waiters_tail;
	struct cta__unit *next_free;
	size_t cap_smem; /* allocated shared memory per CTA */
	/* The issue gate: 0 runs; 1 waits, its batch not yet run; 2 waits,
	 * out of its batch (its start recorded); 3 let go after 2, in a batch
	 * again (its start not to be recorded twice). */
	int gate;
	struct cta__unit *gate_next; /* the next waiting on its SM */
	/* Kept while the unit waits on the free list. */
	struct cta__run *ret; /* runs handed back (cursor.nret of them) */
	unsigned ret_cap;
	/* Lanes suspended by cta__spin_poll, resumed by an EV_POLL. Not
	 * cleared for a new unit: all zero whenever a unit ends (and the
	 * watchdog flag ends the run), so most blocks never touch them. */
	struct cta__lane_x *spinners;
	unsigned nspin;
	int poll_queued;    /* an EV_POLL for it is in the queue */
	int starved;        /* adversarial scheduling holds its EV_POLL back */
	int watchdog;       /* the watchdog stopped it: its lanes are given up silently */
	uint64_t spin_wake; /* earliest time a spinner polls again */
	struct cta__unit *next_starved;
	_Alignas(64) struct cta__outbox out;
};

/* The period skip (sim/engine/period.h): a body that ran in a batch,
 * what its unit was made with (its start, its first instruction t0, its
 * CTA's end before the body, the duration model's scale and add) and the
 * CTA's end after it. */
struct cta__period_run {
	uint64_t index, start_t, t0, end0, end;
	uint32_t spin, add;
	unsigned sm;
	int ok;                 /* its outbox held nothing but counts */
	struct cta__unit *unit; /* a pre-run block kept made (the one off its prediction) */
};

/* A block whose body is done and whose retirement (EV_RETIRE) is still
 * ahead: what its end needs. A one-block unit that nothing else refers to
 * any more (no CLC objects, no lane left, no spinning, no sanitizer) is
 * freed when it is committed and leaves one of these in its place, so
 * that the next block placed reuses a unit still in cache: a wave of
 * 1,056 resident blocks then keeps 1,056 of these (40 bytes each) hot
 * where it kept as many units (a few KiB each) cold. */
struct cta__retiring {
	struct cta__kernel *k;
	uint64_t logical, start_t, end_t;
	unsigned sm;
	struct cta__retiring *next; /* on the free list */
};

/* A block placed whose unit is made only when its batch comes to it
 * (cta__engine_unit_at): a batch of a wave (1,056 blocks of saxpy on an
 * H100) is then a run of these, 48 bytes each, and the blocks take turns
 * on the one or two units the previous blocks freed at their commit
 * (struct cta__retiring), in cache, instead of touching a unit each at
 * placement and again, evicted by the bodies' data, when it runs. What the
 * placement decides is all here: the duration model's scale and add are
 * those of the SM's load at placement. */
struct cta__placed {
	struct cta__kernel *k;
	uint64_t index, start_t;
	unsigned sm;
	uint32_t spin, add;
	uint32_t first;      /* cta__exec_unit_spin's: the issue time its first call skips */
	struct cta__held *h; /* the issue gate holds or held it, or NULL */
};

/* A block of one CTA the issue gate holds, left to be made: its
 * placement (p.h unused), and once let go, when (rel_t) and at what
 * duration index (p.spin, p.add), which make_placed (sim/engine/sim.c)
 * gives its unit. state as struct cta__unit's gate: 1 waits, its batch not
 * yet run; 2 waits, set aside (its start counted); 3 let go after 2, in a
 * batch again; 0 let go before its batch ran, where it runs. A block held
 * apart (never in a batch until let go: cta__base_hold_apart) is 2 from
 * its placement, and keeps where it would have stood in the open batch:
 * `gen` (struct cta_sim's open_gen then), `pos` (the entries of the open
 * batch before it, less those let go into it as below) and `ord` (the
 * order of such blocks), so that one let
 * go before that batch is sealed or run takes its place there (`ins`). */
struct cta__held {
	struct cta__placed p;
	struct cta__held *next; /* the next held on its SM, or free */
	uint64_t rel_t;
	int state;
	uint32_t gen, pos, ord;
	int ins;
};

/* A batch whose time to run came and that the engine left to run later
 * (seal_ready in sim/engine/sim.c): its entries end at batch[end], its
 * commits see the engine's time `now` and push events with the sequence
 * numbers from `seq` on, one a unit, as they would have then. */
struct cta__sealed {
	size_t end;
	uint64_t now, seq;
};

/* ---- the simulator ----------------------------------------------------- */
/* EV_GATE_WAIT: a block the register file's gate holds on SM `a` has
 * waited its longest (spin_regs_wait_ns). */
enum evtype { EV_RELEASE = 1, EV_DISPATCH, EV_END, EV_CANCEL, EV_POLL, EV_RETIRE, EV_GATE_WAIT };

struct cta_sim {
	struct cta_sim_opts o;
	struct cta_device_model dev;
	uint32_t spin_ppm[CTA_DEVICE_MAX_RESIDENT + 1]; /* the model's spin_scale per count */
	uint32_t spin_add[CTA_DEVICE_MAX_RESIDENT + 1]; /* the model's spin_add per count */
	int has_spin_scale;
	/* Emulated CLC: each of its costs as a block on a near (0) and a far
	 * (1) GPC pays it, and a bit per SM set when its GPC is far, made at
	 * the first request (sim/clc). */
	int clc_costs_made;
	uint64_t clc_cost[2][7];
	uint64_t clc_far_sm[CTA_DEVICE_MAX_SMS / 64];
	size_t gate_waiting; /* units the issue gate holds, on every SM */
	char errmsg[512];
	struct cta__evq q;
	uint64_t now;
	uint64_t rng;
	struct cta__kernel **kernels;
	unsigned nkernels, kcap;
	struct cta__stream *streams;
	unsigned nstreams;
	struct cta__sm *sms;
	/* nsms x CTA__COHORT_KEEP, a ring per SM (cohort_next[sm] its next
	 * slot); NULL without an end hold. */
	struct cta__cohort *cohorts;
	unsigned *cohort_next;
	unsigned nsms;
	unsigned rr_next;      /* round-robin cursor */
	uint64_t fe_free;      /* dispatcher front end busy until */
	int dispatch_pending;  /* an EV_DISPATCH is queued */
	int in_dispatch;       /* cta__sched_dispatch is running */
	uint64_t dispatch_seq; /* sequence number of the pending dispatch */
	/* A pending dispatch that could not have placed anything is not armed;
	 * its place in (time, sequence) order is kept here, so that a request
	 * before that place arms it exactly where it would have been. */
	int resv_valid;
	uint64_t resv_t, resv_seq;
	/* Placement rule 8 (sweep_carry): 1 + the GPC of the last block
	 * placed outside the first SMs (0: none yet), the kernel whose sweep
	 * was computed last, and the turns the longest first wave so far
	 * leaves (0 none, 1 late, 2 mid, 3 steady). */
	unsigned carry_gpc;
	struct cta__kernel *carry_prev;
	unsigned carry_turns;
	int refill_ok;      /* the device and options allow cta__sched_refill */
	uint64_t room_gen;  /* bumped whenever room frees or a kernel activates */
	uint64_t nofit_gen; /* room_gen when nothing fitted; UINT64_MAX: unknown */
	cta_trace_writer *tw;
	struct cta__ub_store ubs;
	size_t nubs; /* reports kept in ubs */
	size_t ub_counts[32];
	int aborted; /* ub_mode ABORT hit */
	int hung;
	uint64_t cancels_total;
	uint64_t barrier_crossings;
	uint64_t lanes_started; /* lanes started: one per unit without waits (from outboxes) */
	/* Waits of a resumed unit's lane that stepped the engine at once
	 * (lane_leave_slow in sim/exec/exec.c): the unit tests' evidence. */
	uint64_t quick_waits;
	uint64_t events;
	struct cta__pool *pool; /* NULL when running on one host thread */
	struct cta__worker *workers;
	unsigned nworkers;
	double seg_ns;  /* running estimate of one segment's host cost, ns */
	int seg_probed; /* ... measured on a probe only (run_ready) */
	/* Running estimates of the wall time a unit takes from its making
	 * to its commit, ns, run on this thread (ser_wall) and on the pool
	 * (par_wall); 0 until measured, ser_probed while ser_wall comes
	 * from a probe only, par_timed the batches the pool was timed on
	 * (run_ready, pool_pays). */
	double ser_wall, par_wall;
	int ser_probed;
	unsigned par_timed;
	unsigned since_other; /* batches since the way not taken was timed */
	uint64_t slices;      /* ... slices of batches timed here (run_ready) */
	uint64_t batches;
	uint64_t pool_units; /* units whose bodies ran on the pool */
	struct cta__unit **batch;
	size_t batch_cap;
	/* batch[i] is NULL while its unit is not made: placed[i] says what
	 * to make (a block of one CTA, cta__base_ready_placed). */
	struct cta__placed *placed;
	size_t placed_cap;
	int lazy_units; /* placement may leave units to be made (cta_sim_run) */
	struct cta__unit *free_units;
	/* A unit resumed by a resolved cancel runs alone (solo); a lane of it
	 * that waits may step the engine on itself (lane_engine in exec.c), and
	 * sets solo_done when it committed the unit and went back to the
	 * scheduler. solo_unit is the one-unit run such a lane switches to. */
	int solo, solo_done;
	/* While the engine thread runs a batch: its units before
	 * commit_next are committed (cta__engine_commit_early). */
	int early_commit;
	/* ub_mode is not OFF: the CLC rules keep the state they check (what
	 * each thread observed, the work-stealing loop's callers, in-flight
	 * buffers). With checking off only what the semantics need is kept. */
	int checks;
	size_t commit_next;
	size_t seg_base; /* the serial part of the batch starts at batch[seg_base] */
	size_t par_base; /* the parallel part starts at batch[par_base] */
	int lazy_start;  /* ... and counts each unit's start (cta__engine_unit_started) */
	struct cta__unit *solo_unit;
	/* Every unit ever made (live or on the free list), for cta_sim_free:
	 * a list of the live ones would touch two other units' memory at each
	 * block's end. */
	struct cta__unit **units;
	size_t nunits_made, units_cap;
	size_t nunits_live; /* of them made and not freed (the period skip's cuts) */
	/* Units dispatched whose bodies have not run yet. They run, in dispatch
	 * order, before the engine passes the earliest of their start times:
	 * nothing they do can affect an earlier event. */
	size_t nready;      /* they are batch[0..nready) */
	uint64_t ready_min; /* of batch[nsealed..nready), the open batch */
	/* batch[0..nsealed): batches sealed at their time to run, that run
	 * before the engine reaches seal_h (the earliest event their commits
	 * could push); seal_off once a sealed block did what sealing cannot
	 * keep exact (sim.c, seal_ready). While a sealed batch commits,
	 * sealed_run is set and seal_seq is the sequence number its unit's
	 * event takes. */
	size_t nsealed, nseals, seals_cap, seal_cur;
	struct cta__sealed *seals;
	uint64_t seal_h, seal_seq;
	int sealed_run, seal_push, seal_off;
	uint64_t batches_sealed;
	/* The open batch's generation (one more each time it is sealed or
	 * run), the blocks held apart placed so far, those of them let go
	 * into the open batch at their place, and those that would stand in
	 * it still waiting (struct cta__held): they count as its entries
	 * (ready_min, its time to run, and GATE_BATCH), so that batches are
	 * sealed and run when they would be with them in it. */
	uint32_t open_gen, held_ord, open_ins, open_apart;
	/* Entries of the open batch the issue gate holds (state 1 records,
	 * gate 1 units): without any, sealing it sets nothing aside. */
	size_t open_held;
	/* can_seal's conditions fixed for the run (no trace, abort mode or
	 * sanitizer), and whether a kernel may make CLC calls (one not known
	 * never to wait). */
	int seal_static, seal_clc;
	int seal_known;                   /* can_seal's run-wide part in this engine call */
	const struct cta__kernel *seal_k; /* ... and a kernel that passed it */
	uint64_t held_inserted;           /* blocks held apart let go into their place */
	/* SMs by resident-block count: bit i of bucket b (bwords words each)
	 * is set when SM i holds b blocks. Spread placement scans upwards. */
	uint64_t *bucket;
	unsigned bwords, nbuckets;
	unsigned *bcount;          /* SMs per bucket */
	unsigned bmin;             /* no SM sits in a bucket below this */
	uint64_t *gpcmask;         /* bwords words per GPC */
	uint64_t *allmask;         /* bwords words of all ones */
	struct cta__kernel **cand; /* active kernels with pending units, in preference order */
	unsigned ncand;
	int cand_valid;
	int ran;
	int deterministic;
	int io_error;
	int bad_smem;         /* a body used more shared memory than declared */
	struct cta__san *san; /* --sanitize: the sanitizer's state (sim/sanitize) */
	uint64_t activations; /* kernels made active so far: the FIFO key */
	/* Forward progress (docs/FORWARD_PROGRESS.md). */
	uint64_t watchdog_ns;
	uint64_t progress_t;       /* latest virtual time something other than a spin happened */
	size_t npolls;             /* EV_POLL events in the queue */
	struct cta__unit *favored; /* adversarial: the spinning unit that runs */
	struct cta__unit *starved; /* adversarial: units whose polls are held back */
	uint64_t polls_done;       /* EV_POLL events taken */
	uint64_t others_mark;      /* events other than polls, as of mark_t */
	uint64_t mark_t;           /* when the last event other than a poll was noticed */
	int stopped;               /* a watchdog or forward_progress report ended the run */
	int any_spin; /* a lane spun (cta__spin_poll): commits look at units' spinners */
	int in_pool;  /* a batch runs on the worker pool */
	/* A blocking kernel's atomics by address (device wait_turn_ps,
	 * wait_sync_ps; sim/exec/exec.c), made when first needed. */
	struct cta__wait_table *wait_slots;
	/* The parks of spinning blocks made (sim/exec/regions.c's spin_pack)
	 * and their bytes (struct cta__kc_park and its data) together: what
	 * a waiting block costs on average (test_progress). */
	uint64_t spin_parks, spin_park_bytes;
	/* Free struct cta__retiring records, and the slabs they come from. */
	struct cta__retiring *free_retiring;
	void *retiring_slabs;
	struct cta__held *free_held; /* and their slabs (cta__exec_held_new) */
	void *held_slabs;
	/* The period skip (sim/engine/period.h): its state, NULL when the run
	 * cannot skip; per_hook while it logs bodies or hands blocks back,
	 * skip_run while the bodies of skipped periods run. */
	struct cta__period *per;
	int per_hook, skip_run;
	/* While they run: the run whose counterpart the running block is,
	 * and the period's shifts (struct cta__period's dt and db);
	 * skip_last, the period's last run where its blocks are one CTA of
	 * one row of threads in a 1-D grid and no sanitizer runs (else
	 * NULL), so that a block before it that ran as predicted and left
	 * its CTA clean moves on in place in a few stores (skip_move in
	 * sim/exec/exec.c). */
	const struct cta__period_run *skip_r, *skip_last;
	uint64_t skip_dt, skip_db;
	/* The lane that moved on so last, and the canary of its fiber's
	 * stack (cta__fiber_canary): kept while the lane goes from block to
	 * block, its fiber never suspended between (each of those blocks
	 * left its CTA clean: no barrier or other wait). Cleared by every
	 * other way out of skip_move and at each segment. */
	const struct cta__lane_x *skip_lane;
	const uint64_t *skip_canary;
	/* Blocks that lane moved on so since the batch's entries and the
	 * lanes' count were last brought up to date (skip_sync in
	 * sim/exec/exec.c): once a run of them, not once a block. */
	size_t skip_moved;
	/* skip_par while a chunk of a skipped period runs on the pool
	 * (skip_chunk_par in sim/engine/sim.c): each task of skip_tasks
	 * moves its own unit through its range of runs (skip_move_par in
	 * sim/exec/exec.c); skip_chunk[a], the end of the chunk that begins
	 * at run a; skip_par_ok while chunks may go to the pool. */
	int skip_par, skip_par_ok;
	struct cta__skip_task *skip_tasks;
	size_t skip_tasks_cap;
	size_t *skip_chunk;
};

/* A range of a skipped period's chunk that one host thread runs on one
 * unit: runs [a, b) of the period, u the block of run `at` (made for run
 * a on the engine's thread; left, once the task stopped, on the run it
 * stopped at), and the counts of the blocks it moved past (ended as
 * predicted, their outboxes holding counts alone). A line of its own:
 * the workers write them. */
struct cta__skip_task {
	struct cta__unit *u;
	size_t a, b, at;
	uint64_t crossings, lanes;
	int comm;
} __attribute__((aligned(64)));

#endif
