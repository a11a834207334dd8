/* The region form of kernel bodies: what the kernel compiler (compiler/)
 * emits and registers, and the engine's entry to run a block that way
 * (sim/exec/regions.c). Not a public header. */
#ifndef CTASIM_EXEC_REGIONS_H
#define CTASIM_EXEC_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/export.h"

/* Where a barrier of a compiled body is written (its __syncthreads call),
 * and what it is: 0 a __syncthreads, 1 the entry of a work-stealing loop
 * (cta_for_each_canceled_block, cta_try_cancel_blocks), which the engine
 * then runs for the whole block (struct cta__kc_ws), 2 an mbarrier wait,
 * 3 a cluster barrier (cta_cluster_sync, CTA__KC_CLUSTER), 4 a yield point
 * where a thread spins (CTA__KC_SPIN). */
struct cta__kc_bar {
	const char *file;
	int line;
	int kind;
};
/* One compiled kernel body, registered at load time, in one of two forms:
 *  - fis (the loop form, preferred): fis(args, lane, ix, run) runs one
 *    region of the body (its start, or the code after barrier i) for the
 *    threads run->lo .. hi-1 as a loop, each thread to its next barrier or
 *    its end (struct cta__kc_run); values live across barriers sit in
 *    slot_bytes per thread and uni_bytes per block; bars[nbar] says where
 *    each barrier is written;
 *  - ramp (the coroutine form, where the loop form cannot be made: fis_why
 *    says why): ramp(args, lane, ix) runs a thread from its start to its
 *    first barrier or its end and returns its frame, a switch-resumed LLVM
 *    coroutine frame whose first word is the resume function (NULL once the
 *    thread exited).
 * why is NULL when the body was compiled, else the reason it stays on
 * fibers. The order of fields avoids padding: the pass sets them by index. */
struct cta__kc_def {
	const char *name;
	void *ramp;
	const char *why;
	const char *file;
	void *fis;
	const char *fis_why;
	const struct cta__kc_bar *bars;
	int line;
	uint32_t slot_bytes, uni_bytes, nbar;
	uint32_t flags; /* CTA__KC_* below */
	/* For CTA__KC_LOCAL_SMEM bodies (sim/exec/regions.c zeroes less of a
	 * block's shared memory with them; struct cta__kc_cover each):
	 * cover, what every thread writes in the body's first region, which
	 * reads no shared memory (it needs no zeroing before); write, when
	 * non-empty, the body's only writes to shared memory (what a block
	 * leaves non-zero). */
	const struct cta__kc_cover *cover, *write;
	uint32_t ncover, nwrite;
};
/* Thread of rank t stores size bytes at the address of site (a struct
 * cta__smem_site) + t * size, once, before its first barrier or its end. */
struct cta__kc_cover {
	const void *site;
	uint64_t size;
};
/* The body calls nothing that keeps an address of its shared memory past its
 * block (no CLC call, no wait: only cta__shared, cta__shared_dynamic,
 * cta__spin_poll and barriers), so a block that runs to its end in one go
 * may have its shared memory in an arena of the host thread's, which stays
 * in cache from block to block (sim/exec/regions.c). */
#define CTA__KC_LOCAL_SMEM 1u
/* No call the body can make reaches anything but shared memory and
 * __syncthreads (no spin or poll, CLC call, grid, cluster or mbarrier wait;
 * compiler/regions_pass.cpp's neverWaits): its blocks may be sealed
 * (sim/engine/sim.c's can_seal). Set for every body the pass saw, also
 * those left on fibers and those only analysed. */
#define CTA__KC_NO_WAIT 2u
/* The same but for yield points (cta__spin_poll: atomics, volatile
 * accesses): its blocks may be sealed where they run in region form, in
 * which a yield point never spins (cta__spin_poll in sim/exec/exec.c). */
#define CTA__KC_POLLS_ONLY 4u
/* The body has more than one mbarrier wait: the engine keeps each thread's
 * observations of mbarrier phases (the UB checker's read_before_complete)
 * per thread while the block runs and while it waits as a whole, where the
 * fiber path keeps them in each thread's lane (cta__regions_observe). */
#define CTA__KC_OBS 8u
/* The body never reaches the block's shared memory: it calls neither
 * cta__shared nor cta__shared_dynamic, nor anything but the library's
 * functions and its own (compiler/regions_pass.cpp's neverShared). Set for
 * every body the pass saw: racecheck and initcheck, which follow shared
 * memory only, then run its plain build (sim/engine/sim.c). */
#define CTA__KC_NO_SHARED 16u
/* The body waits at a cluster barrier (cta_cluster_sync; a kind-3 entry
 * of bars): the engine runs its cluster's threads as a whole, one at a
 * time in the fiber path's order, the cluster waiting as a whole at its
 * mbarriers (run_cluster in sim/exec/regions.c). Its other waits are
 * mbarrier waits, one in the body at most (the kernel compiler checks). */
#define CTA__KC_CLUSTER 32u
/* A loop of the body polls (yield points in a loop: it may spin on
 * memory): each yield point's slow call is cta__kc_spin_blocks, which ends
 * a spinning thread's region there (a kind-4 entry of bars), and the
 * engine runs the block's threads one at a time in the fiber path's order,
 * the block waiting for its spinning threads' polls as a whole (run_spin
 * in sim/exec/regions.c). Its other waits are __syncthreads (the kernel
 * compiler checks). */
#define CTA__KC_SPIN 64u
/* What the loop form reads and writes (every field 8 bytes: the pass
 * addresses them by offset). */
#define CTA__KC_EXITED 0xffu /* run->cont[t] of a thread that ended */
#define CTA__KC_NONE   (~(uint64_t)0)
struct cta__kc_run {
	unsigned char *slots; /* n * slot_bytes: the per-thread values, array by array */
	unsigned char *uin;   /* the block-uniform values where the threads start */
	unsigned char *uout;  /* ... and at each barrier i: uout + i * uni_bytes */
	unsigned char *cont;  /* per thread: the barrier it reached, or CTA__KC_EXITED */
	uint64_t t;           /* virtual time at which the threads start */
	uint64_t bar_max;     /* latest arrival at a barrier (in/out) */
	uint64_t end_max;     /* latest end of a thread (in/out) */
	uint64_t n;           /* threads in the block */
	uint64_t lo, hi;      /* the threads to run, by rank */
	uint64_t region;      /* 0: the body's start; i + 1: after barrier i */
	uint64_t arrived;     /* arrivals at barriers (in/out) */
	uint64_t exited;      /* threads that ended (in/out) */
	uint64_t want;        /* the barrier of the first arrival, or CTA__KC_NONE (in/out) */
	uint64_t first_vt;    /* the first arrival's virtual time (out) */
	uint64_t last_vt;     /* the latest arrival's virtual time (out) */
	uint64_t lo2, hi2;    /* then these threads (none when lo2 >= hi2): a second run
	                       * of the same region in one call, its prelude run once */
};
/* Called by the loop form when thread t arrives at barrier `bar` while the
 * block's first arrival waits at barrier `want` (the divergent-barrier rule). */
CTA_EXPORT void cta__kc_fis_mismatch(struct cta__kc_run *r, uint64_t t, uint64_t bar,
                                     uint64_t vtime, uint64_t want);
/* The same for the threads lo .. hi-1 of a loop that only counted its
 * arrivals (one whose threads make no call), in their order, at virtual
 * time vtime; returns the first arrival's barrier. */
CTA_EXPORT uint64_t cta__kc_fis_scan(struct cta__kc_run *r, uint64_t lo, uint64_t hi, uint64_t want,
                                     uint64_t vtime);
/* The i-th thread of a work-stealing loop's current iteration
 * (struct cta__kc_ws, below). */
struct cta__kc_ws;
static inline unsigned cta__regions_ws_at(const struct cta__kc_ws *w, unsigned i);
/* Called by the loop form at each thread's call of a work-stealing loop
 * (mode 0 cta_for_each_canceled_block, 1 cta_try_cancel_blocks): the loop's
 * entry for that thread; the thread then waits at the loop's barrier. */
CTA_EXPORT void cta__kc_ws_enter(int mode, int rank, int is_leader, void *fn, void *arg,
                                 const char *file, int line);
/* Called by the loop form where a thread calls cta_mbarrier_try_wait_parity:
 * 1 when the thread would block (its phase has not completed), and it is
 * then counted as waiting and ends its region there; 0 when it goes on. */
CTA_EXPORT int cta__kc_wait_blocks(uint64_t *bar, unsigned parity);
/* Called by the loop form of a CTA__KC_SPIN body where a thread made
 * CTA__POLL_BUDGET yield points (kernel.h's cta__spin_poll): 1 when the
 * thread spins, its clock a poll round on, and it then ends its region
 * there; 0 when it goes on. */
CTA_EXPORT int cta__kc_spin_blocks(const char *file, unsigned line);
/* cta_grid_sync's inline form (compiler/kc_kernel.h), which only runs in
 * the loop form of a CTA__KC_SPIN body (its wait is a loop of yield
 * points): cta__kc_grid_check, 1 when the launch is cooperative; else the
 * run stops (cta__exec_grid_sync_stop) and the thread stays where it is
 * for good: the cta__spin_poll the inline form calls next ends its region
 * (cta__kc_spin_blocks) and run_spin never runs it again. Thread 0's
 * arrival on the grid-wide count (cta__kc_grid_arrive: the phase it
 * arrived in, which the last block's arrival ends) and the phase now
 * (cta__kc_grid_phase), as cta__grid_sync has them on fibers. */
CTA_EXPORT int cta__kc_grid_check(const char *file, int line);
/* Under the device's wait_* (cta__exec_wait_model): 1, and the
 * cta__spin_poll the inline form calls next is thread 0's arrival
 * (cta__kc_grid_timed) or a poll of the phase (cta__kc_grid_timed_poll),
 * which waits for its time as on fibers; 0 otherwise. */
CTA_EXPORT int cta__kc_grid_timed(void);
CTA_EXPORT int cta__kc_grid_timed_poll(void);
CTA_EXPORT uint64_t cta__kc_grid_arrive(void);
CTA_EXPORT uint64_t cta__kc_grid_phase(void);
/* Stands for that barrier in the compiled code; never called. */
CTA_EXPORT void cta__kc_ws_point(const char *file, int line);
CTA_EXPORT void cta__kc_register(const struct cta__kc_def *d);
/* The instrumented copies --sanitize runs (compiler/kc_kernel.h). */
CTA_EXPORT void cta__kc_register_sanitized(const struct cta__kc_def *d);
/* Called by compiled bodies: the frame of the running thread (size bytes,
 * 16-byte aligned, from the block's slots), and a barrier arrival. */
CTA_EXPORT void *cta__kc_frame(uint64_t size);
CTA_EXPORT void cta__kc_arrive(const char *file, int line);

struct cta_sim;
struct cta__kernel;
struct cta__lane_x;

/* A work-stealing loop run for a whole compiled block (sim/clc/clc.c,
 * cta__clc_ws_run): its threads do each step one after another, in the
 * order the fiber path runs them, and the block waits for each request as
 * a whole. Every thread of the block takes part (the kernel compiler
 * checks it). An iteration's order is ranks rot, rot + 1, ... (mod n) when
 * iter is even, else rot, rot - 1, ... (the barrier that ends an iteration
 * releases its last arrival first, then the others in arrival order). */
struct cta__kc_ws {
	void *fn; /* cta_block_fn */
	void *arg;
	const char *file;
	int line;
	int mode;       /* 0 for_each_canceled_block, 1 try_cancel_blocks */
	unsigned n;     /* the block's threads */
	unsigned rot;   /* the first iteration's first thread */
	unsigned iter;  /* iterations done */
	unsigned phase; /* of the loop's mbarrier */
	int waiting;    /* every thread ran its body: the block waits for the request */
	unsigned bx, by, bz;
	uint64_t t;                /* when the threads begin the iteration */
	uint64_t vt_other;         /* after the bodies: the threads' time but the leader's */
	uint64_t vt_lead;          /* ... the leader's */
	uint64_t *vt;              /* per rank, when the other threads' times differ */
	unsigned leader, vt_state; /* vt_state: cta__clc_ws_run's */
};
static inline unsigned cta__regions_ws_at(const struct cta__kc_ws *w, unsigned i)
{
	if (w->iter % 2 == 0 || i == 0)
		return (w->rot + i) % w->n;
	return (w->rot + w->n - i) % w->n;
}

/* The compiled form of kernel k, or NULL when it has none or its launch
 * cannot use it (clusters but for CTA__KC_CLUSTER bodies, timing-only
 * runs, one-thread blocks; CTA__KC_CLUSTER bodies under --sanitize; blocks
 * one thread wide of a body with yield points, whose threads kernel.h's
 * cta__poll cannot tell apart by tid.x within a loop).
 * Under --sanitize, its instrumented copy. */
const struct cta__kc_def *cta__regions_for(struct cta_sim *s, const struct cta__kernel *k);
/* Whether the kernel compiler found that kernel k's body never waits
 * (CTA__KC_NO_WAIT, or CTA__KC_POLLS_ONLY where k runs in region form:
 * call after k->kc is set); 0 for a body it did not see (a gcc-only
 * build, a --load'ed kernel built without it). */
int cta__regions_never_waits(const struct cta__kernel *k);
/* Whether the kernel compiler found that kd never reaches shared memory
 * (CTA__KC_NO_SHARED); 0 where it did not see kd. */
int cta__regions_no_shared(const struct cta_kernel_def *kd);
/* Runs the lane's unit, and the units it moves on to, in region form;
 * 0 when the unit must run on the thread loop instead, CTA__KC_PARKED when
 * the block waits as a whole (a request of its work-stealing loop): the
 * lane, in a waiting state, keeps the block's state (kc_park) and needs no
 * fiber until it is woken, when this is called again to go on. */
#define CTA__KC_PARKED 2
int cta__regions_threads(struct cta__lane_x *x);
/* kernel.h's cta__poll_thread where lane l runs a compiled block's threads
 * on this host thread: the count of the thread it ran last is kept, the
 * running thread's comes back (1); 0 where l does not (the fiber path). */
struct cta__lane;
int cta__regions_poll_thread(struct cta__lane *l);
/* A CTA__KC_SPIN block parked on lane x, woken by an EV_POLL at `now`
 * (cta__exec_unit_poll_wake). */
void cta__regions_spin_wake(struct cta__lane_x *x, uint64_t now);
/* Whether that block stays parked at an EV_POLL at `now`: every one of
 * its spinning threads waits for a later time of its own (a blocking
 * kernel's access under the device's wait_*), the earliest then in *t. */
int cta__regions_spin_kept(const struct cta__lane_x *x, uint64_t now, uint64_t *t);
/* How many of its threads spin. */
unsigned cta__regions_nspin(const struct cta__lane_x *x);
/* Its i-th spinning thread (0: the latest to spin, as the head of a unit's
 * spinners): rank, since when it spins, where; the lane then names that
 * thread (its tid). 0 when there is none (or x is no such block). */
int cta__regions_spinner(struct cta__lane_x *x, unsigned i, unsigned *rank, uint64_t *since,
                         const char **file, int *line);
/* Frees the state of a lane's waiting block (a lane given up). */
void cta__regions_park_free(struct cta__lane_x *x);
/* The threads of a lane's waiting block (a deadlock report's count). */
unsigned cta__regions_park_waiting(const struct cta__lane_x *x);
/* A block parked as a whole at an mbarrier: the time thread `rank` waits
 * from (*vt, returning 1), or 0 if that thread does not wait there (the
 * emulated CLC's claim reads its issuer's, sim/clc/clc.c). */
int cta__regions_park_wait_time(const struct cta__lane_x *x, unsigned rank, uint64_t *vt);
/* The UB checker's observation by thread `rank` of the lane's block of
 * mbarrier `bar` at phase `phase` (sim/clc/clc.c's observe), kept per
 * thread when a CTA__KC_OBS body runs on lane x in region form: 1 when kept
 * so, 0 when the lane keeps it (the fiber path). Its entries are replaced as
 * the lane's are: the first that is on `bar` or free, else the first. */
int cta__regions_observe(struct cta__lane_x *x, const void *bar, unsigned phase, unsigned rank);
/* Whether thread `rank` observed `bar` at phase `phase` or later: 0 or 1
 * where the observations are kept per thread, -1 where the lane keeps them. */
int cta__regions_observed(const struct cta__lane_x *x, const void *bar, unsigned phase,
                          unsigned rank);
/* Registered descriptors, for `ctasim kernels`-style listings and tests. */
size_t cta__regions_count(void);
const struct cta__kc_def *cta__regions_at(size_t i);

#endif
