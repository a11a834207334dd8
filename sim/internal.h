/* The simulator's internal state, shared by its modules: the engine
 * (sim/engine), dispatch and placement (sim/sched), body execution
 * (sim/exec), cluster launch control (sim/clc) and the UB checker (sim/ub).
 * Not a public header. */
#ifndef CTASIM_INTERNAL_H
#define CTASIM_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctasim/device.h"
#include "ctasim/kernel.h"
#include "ctasim/sim.h"
#include "ctasim/trace.h"
#include "engine/event_queue.h"

struct cta__fiber;
struct cta__fiber_pool;

/* mbarriers a thread remembers observing (struct cta__lane_x). */
#define CTA__OBS_MAX 8

/* Stack of each simulated thread that has to wait (a barrier, an mbarrier). */
#define CTA__LANE_STACK (64 * 1024)

/* ---- coverage: a set of logical block indices as sorted intervals ------ */
struct cta__cover {
	uint64_t (*iv)[2]; /* disjoint [lo, hi) intervals, sorted */
	size_t n, cap;
	uint64_t *dups; /* duplicated indices (first few) */
	size_t ndups, dups_cap;
	uint64_t dup_total;
};
void cta__cover_init(struct cta__cover *c);
void cta__cover_free(struct cta__cover *c);
/* Marks index i processed; returns 1 if it already was (a duplicate). */
int cta__cover_mark(struct cta__cover *c, uint64_t i);
/* cta__cover_mark, inline where i extends the last interval: blocks start
 * in dispatch order, so nearly every block's start does. */
static inline int cta__cover_add(struct cta__cover *c, uint64_t i)
{
	if (c->n && c->iv[c->n - 1][1] == i) {
		c->iv[c->n - 1][1] = i + 1;
		return 0;
	}
	return cta__cover_mark(c, i);
}
/* Lost indices in [0, n): writes up to max of them, returns how many. */
uint64_t cta__cover_lost(const struct cta__cover *c, uint64_t n, uint64_t *out, size_t max);

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
	uint64_t *fit;      /* SMs where one more block of this kernel fits (bwords words) */
	int fit_valid;      /* fit is kept current (the kernel is a dispatch candidate) */
	unsigned *sweep;    /* placement = sweep: the first wave's SMs, in block order */
	unsigned sweep_len, sweep_pos;
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

/* ---- per-SM resources ----------------------------------------------------- */
struct cta__sm {
	unsigned threads, warps, blocks, regs, smem;
	unsigned gpc;
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

/* A cancellation request; one per try_cancel. */
struct cta__request {
	struct cta__unit *unit;
	struct cta__kernel *k;
	unsigned cta; /* issuing CTA's rank */
	int multicast;
	size_t result_off; /* offset of the result in shared memory */
	size_t bar_off;
	uint64_t issue_t, done_t;
	int resolved;
	int outcome;         /* cta_cancel_outcome */
	uint64_t unit_index; /* stolen unit when successful */
	uint3 first;         /* its first block's index, which queries return */
	unsigned thread;     /* issuing thread's rank in its block (in the padding) */
	const char *file;
	int line;
	uint32_t counted;              /* targets whose mbarrier counted it as unresolved */
	struct cta__request *next_new; /* in the unit's list of new requests */
	struct cta__request *next;     /* in the CTA's request list */
};

/* Bytes of a CTA's arena a block of kernel k can write: its shared memory
 * and, after it, 64 hidden bytes for the work-stealing loop's state (80
 * with slack). Arenas are at least this large. */
static inline size_t cta__smem_need(const struct cta__kernel *k)
{
	return k->smem_bytes + 80;
}

/* ---- execution units: a block, or a whole cluster ----------------------- */
enum lstate { L_RUN = 0, L_BARRIER, L_CBARRIER, L_MBAR, L_ENGINE, L_SPIN, L_DONE };

/* A lane's fiber-side extension: the public struct cta__lane plus what the
 * scheduler of its unit needs. */
struct cta__lane_x {
	struct cta__lane l; /* must be first */
	/* What a barrier, an mbarrier wait and a resumption touch, next to
	 * the end of l (lanes are allocated on cache lines). */
	struct cta__fiber *fiber;
	struct cta__cta *cta; /* &l.unit->ctas[l.cta_rank], set with it */
	uint64_t bar_gen;     /* CTA barrier generation at its last crossing */
	struct cta__mbar *wait_bar;
	struct cta__lane_x *next_wait; /* in a barrier's or mbarrier's list */
	struct cta__lane_x *next_run;
	unsigned char state; /* enum lstate */
	unsigned char wait_parity;
	unsigned char obs_used;  /* obs[] was written since the lane was new */
	unsigned char abandoned; /* retired by the deadlock handler while suspended */
	unsigned worker;         /* the host thread whose spare lanes it returns to */
	/* mbarrier phases this thread observed complete (for read_before_complete):
	 * as many as a CTA has result slots, so a thread that waits on every
	 * request it has in flight keeps every observation. The first shares
	 * a cache line with where the thread waits. */
	const char *wait_file;
	int wait_line;
	struct cta__obs {
		struct cta__mbar *bar;
		uint64_t tseq;
		unsigned phase;
	} obs[CTA__OBS_MAX];
	const struct cta__kernel *dims_k; /* the kernel whose dimensions l holds */
	struct cta__lane_x *next_all;
	/* Spinning (cta__spin_poll): the thread whose polls are counted, where
	 * it last yielded, and since when it spins without a write. */
	const struct cta__unit *poll_unit;
	uint3 poll_tid, poll_bid;
	const char *spin_file;
	int spin_line;
	uint64_t spin_since;
	uint64_t spin_resume_t; /* when an EV_POLL last resumed it */
	unsigned spin_rounds;   /* suspensions since it last did anything else */
	/* The watchdog of a one-thread CTA's barriers (bar_idle). */
	uint64_t bar_rel_t, bar_idle_ns;
};

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
	 * handed to the body (or written for it), read and cleared when a new
	 * block zeroes it. Blocks that never use shared memory skip the
	 * zeroing. */
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
	struct cta__lane_x *bar_waiters, *bar_waiters_tail;
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
	 * below are only read up to their counts. */
	struct cta__rslot {
		size_t off; /* result buffer offset in shared memory */
		struct cta__request *r;
		int phase_done;        /* its mbarrier phase completed */
		struct cta__mbar *bar; /* the mbarrier it completed on */
		unsigned done_phase;   /* that mbarrier's phase count after completion */
		int observed;
		unsigned observer;
		uint64_t observed_gen;
		int consumed;
		int reported;
		/* thread_key + 1 of the last thread that passed checked_slot for r:
		 * what made the read defined stays true for that thread. */
		uint64_t ok_key;
	} rslots[8];
	/* mbarriers and requests of earlier blocks on this CTA's memory, to
	 * be used again (cta__unit_free puts them here; cta__cta_release
	 * frees them). */
	struct cta__mbar *spare_mbars;
	struct cta__request *spare_reqs;
	const void *sites[64];
	size_t site_off[64];
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
	struct cta_ub_report *ubs;
	size_t capubs;
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
};
/* Parks every worker's foreign runners in their own pools; only while no
 * segment runs (the engine thread, outside a parallel batch). */
void cta__exec_return_runners(struct cta_sim *s);

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

/* ---- the simulator ----------------------------------------------------- */
enum evtype { EV_RELEASE = 1, EV_DISPATCH, EV_END, EV_CANCEL, EV_POLL };

struct cta_sim {
	struct cta_sim_opts o;
	struct cta_device_model dev;
	uint32_t spin_ppm[CTA_DEVICE_MAX_RESIDENT + 1]; /* the model's spin_scale per count */
	uint32_t spin_add[CTA_DEVICE_MAX_RESIDENT + 1]; /* the model's spin_add per count */
	int has_spin_scale;
	char errmsg[512];
	struct cta__evq q;
	uint64_t now;
	uint64_t rng;
	struct cta__kernel **kernels;
	unsigned nkernels, kcap;
	struct cta__stream *streams;
	unsigned nstreams;
	struct cta__sm *sms;
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
	int refill_ok;      /* the device and options allow cta__sched_refill */
	uint64_t room_gen;  /* bumped whenever room frees or a kernel activates */
	uint64_t nofit_gen; /* room_gen when nothing fitted; UINT64_MAX: unknown */
	cta_trace_writer *tw;
	struct cta_ub_report *ubs;
	size_t nubs, ubcap;
	size_t ub_counts[32];
	int aborted; /* ub_mode ABORT hit */
	int hung;
	uint64_t cancels_total;
	uint64_t barrier_crossings;
	uint64_t lanes_started; /* lanes started: one per unit without waits (from outboxes) */
	uint64_t events;
	struct cta__pool *pool; /* NULL when running on one host thread */
	struct cta__worker *workers;
	unsigned nworkers;
	double seg_ns; /* running estimate of one segment's host cost, ns */
	uint64_t batches;
	uint64_t batch_cpu_ns; /* CPU time of the segments of a parallel batch */
	struct cta__unit **batch;
	size_t batch_cap;
	struct cta__unit *free_units;
	/* A unit resumed by a resolved cancel runs alone (solo); a lane of it
	 * that waits may step the engine on itself (lane_engine in exec.c), and
	 * sets solo_done when it committed the unit and went back to the
	 * scheduler. solo_unit is the one-unit run such a lane switches to. */
	int solo, solo_done;
	/* While the engine thread runs a batch: its units before
	 * commit_next are committed (cta__commit_early). */
	int early_commit;
	/* ub_mode is not OFF: the CLC rules keep the state they check (what
	 * each thread observed, the work-stealing loop's callers, in-flight
	 * buffers). With checking off only what the semantics need is kept. */
	int checks;
	size_t commit_next;
	int lazy_start; /* ... and counts each unit's start (cta__unit_started) */
	struct cta__unit *solo_unit;
	/* Every unit ever made (live or on the free list), for cta_sim_free:
	 * a list of the live ones would touch two other units' memory at each
	 * block's end. */
	struct cta__unit **units;
	size_t nunits_made, units_cap;
	/* Units dispatched whose bodies have not run yet. They run, in dispatch
	 * order, before the engine passes the earliest of their start times:
	 * nothing they do can affect an earlier event. */
	size_t nready; /* they are batch[0..nready) */
	uint64_t ready_min;
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
	int batch_parallel;        /* the batch being committed ran on the pool */
	int stopped;               /* a watchdog or forward_progress report ended the run */
	int any_spin; /* a lane spun (cta__spin_poll): commits look at units' spinners */
};

/* Set on the host thread that runs a segment: the worker, and the unit. */
extern _Thread_local struct cta__worker *cta__seg_worker __attribute__((tls_model("initial-exec")));
extern _Thread_local struct cta__unit *cta__seg_unit __attribute__((tls_model("initial-exec")));
void cta__out_error(struct cta__unit *u, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cta__out_mark(struct cta__unit *u, uint64_t logical);

/* engine */
extern struct cta_sim *volatile cta__running_sim;
/* cta_sim_set_exact_threads: every unit's cursor asks for exact threads. */
extern int cta__exact_threads;
/* 0: cta__claim_next never moves a lane on to the next unit (the unit
 * tests compare both ways); 1 by default. */
extern int cta__lane_moves;
int cta__lane_move_next(struct cta__lane *l);
/* 0: a batch commits its units only once all its bodies ran, and counts
 * their starts before (the unit tests compare both ways); 1 by default. */
extern int cta__early_commits;
uint64_t cta__rand(struct cta_sim *s);
void cta__push(struct cta_sim *s, uint64_t t, int type, void *p, uint64_t a);
void cta__trace_rec(struct cta_sim *s, uint64_t t, cta_trace_event ev, unsigned kernel,
                    uint64_t block, uint64_t phys, uint64_t sm, uint64_t arg, int32_t code,
                    const char *text);
/* A trace record (kept in the unit's outbox inside a segment); nothing
 * without a trace file, decided here so that untraced runs make no call. */
static inline void cta__trace(struct cta_sim *s, uint64_t t, cta_trace_event ev, unsigned kernel,
                              uint64_t block, uint64_t phys, uint64_t sm, uint64_t arg,
                              int32_t code, const char *text)
{
	if (s->tw)
		cta__trace_rec(s, t, ev, kernel, block, phys, sm, arg, code, text);
}
void cta__errf(struct cta_sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum { CTA__STEP_NEXT, CTA__STEP_STOP, CTA__STEP_READY, CTA__STEP_RESUME };
/* Never returns CTA__STEP_NEXT: see sim/engine/sim.c. */
int cta__engine_step(struct cta_sim *s, struct cta__unit **resume);
/* Applies a unit's segment: its outbox, new cancel requests, ended CTAs. */
void cta__engine_commit(struct cta_sim *s, struct cta__unit *u);
/* While a batch runs on the engine's thread (s->early_commit): commits its
 * units up to index upto, the segment having moved past them. */
void cta__commit_early(struct cta_sim *s, size_t upto);
/* While a batch runs without a trace (s->lazy_start): u's start, counted
 * as the segment comes to it. */
void cta__unit_started(struct cta_sim *s, struct cta__unit *u);

/* sched */
int cta__sched_init(struct cta_sim *s);
/* Queues a dispatched unit to run its body before the engine passes its
 * start time. */
void cta__ready(struct cta_sim *s, struct cta__unit *u);
int cta__sched_kernel_init(struct cta_sim *s, struct cta__kernel *k);
void cta__sched_request(struct cta_sim *s);
void cta__sched_dispatch(struct cta_sim *s);
void cta__sched_free_cta(struct cta_sim *s, struct cta__kernel *k, unsigned sm);
/* Whether a block of k ending now can be refilled by cta__sched_refill
 * (asked before anything of the block is freed). */
int cta__sched_can_refill(struct cta_sim *s, const struct cta__kernel *k);
/* Frees the ended block's room on sm and places k's next block there: the
 * same outcome as cta__sched_free_cta then cta__sched_request. */
void cta__sched_refill(struct cta_sim *s, struct cta__kernel *k, unsigned sm);
void cta__sched_kernel_done(struct cta_sim *s, struct cta__kernel *k);
/* k became visible to the dispatcher (after its launch latency). */
void cta__sched_release(struct cta_sim *s, struct cta__kernel *k);
/* A higher-priority kernel than k has blocks waiting. */
int cta__sched_higher_waiting(struct cta_sim *s, const struct cta__kernel *k);

/* exec */
struct cta__unit *cta__unit_new(struct cta_sim *s, struct cta__kernel *k, uint64_t index,
                                const unsigned *sms, uint64_t t);
/* Runs the units' segments in order, each until every lane is done or
 * waits for the engine (cta__seg_worker set, cta__seg_unit the one
 * running). */
void cta__units_run(struct cta_sim *s, struct cta__unit *const *v, size_t n);
/* Sets what every new unit of k starts from (k->cursor0); once the run's
 * options are final, before its first unit. */
void cta__unit_template(struct cta_sim *s, struct cta__kernel *k);
/* Frees what a CTA's memory holds: shared memory, spare mbarriers and
 * requests. */
void cta__cta_release(struct cta__cta *c);
/* n objects of size bytes, zeroed, on whole cache lines of their own
 * (NULL when out of memory). */
void *cta__calloc_lines(size_t n, size_t size);
void cta__unit_free(struct cta_sim *s, struct cta__unit *u);
struct cta__lane_x *cta__lane_self(void);
/* Marks c's shared memory as possibly written (see smem_dirty). */
void cta__smem_handed_out(struct cta__unit *u, struct cta__cta *c);
struct cta__cta *cta__lane_cta(struct cta__lane_x *x);
/* Suspends the calling lane in state st until the scheduler wakes it. */
void cta__lane_block(struct cta__lane_x *x, enum lstate st);
void cta__lane_wake(struct cta__unit *u, struct cta__lane_x *x);
/* Linear block index of blockIdx b, and back; inline, as every new block
 * and every successful cancel asks. */
static inline uint64_t cta__logical_of_bid(const struct cta__kernel *k, uint3 b)
{
	return b.x + (uint64_t)k->l.grid[0] * (b.y + (uint64_t)k->l.grid[1] * b.z);
}

static inline uint3 cta__bid_of_logical(const struct cta__kernel *k, uint64_t i)
{
	uint3 b;
	if (k->l.grid[1] == 1 && k->l.grid[2] == 1) {
		/* 1-D grids, the common case: no 64-bit divisions (tens of
		 * cycles each, on every block). */
		b.x = (unsigned)i;
		b.y = b.z = 0;
		return b;
	}
	b.x = (unsigned)(i % k->l.grid[0]);
	i /= k->l.grid[0];
	b.y = (unsigned)(i % k->l.grid[1]);
	b.z = (unsigned)(i / k->l.grid[1]);
	return b;
}

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
/* Stops the run at the watchdog: a report on lane x of unit u (UB_WATCHDOG
 * or UB_FORWARD_PROGRESS), which ends the run when the unit is committed,
 * and u's lanes given up silently once they settle. */
void cta__watchdog_stop(struct cta_sim *s, struct cta__unit *u, struct cta__lane_x *x, int rule,
                        const char *file, int line, const char *msg);

/* The watchdog's view of a CTA barrier about to complete (exec.c, and the
 * region form's in regions.c): 1 when the CTA crossed barriers with no work
 * between them for longer than the watchdog; then the report. */
int cta__bar_idle(struct cta_sim *s, struct cta__cta *c);
void cta__bar_watchdog_report(struct cta__unit *u, struct cta__lane_x *x, struct cta__cta *c,
                              const char *file, int line, uint64_t idle_ns);

/* An EV_POLL for u is due: its spinning lanes become runnable, at now at
 * the earliest. */
void cta__unit_poll_wake(struct cta__unit *u, uint64_t now);

/* clc */
void cta__clc_resolve(struct cta_sim *s, struct cta__request *r);
void cta__clc_cta_end(struct cta_sim *s, struct cta__unit *u, struct cta__cta *c);

/* ub */
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
