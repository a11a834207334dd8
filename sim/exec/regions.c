/* Runs a block whose body the kernel compiler (compiler/) turned into
 * regions: each thread is a small frame (its live values and where it
 * stopped), and the block's threads run as loops of resumptions on one
 * lane, with no stack of their own. The order of threads and the barrier
 * bookkeeping are those of the fiber path (exec.c), step for step, so
 * traces, UB reports and results do not depend on the path. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/upcalls.h"
#include "exec/exec.h"
#include "exec/regions.h"

/* Registered compiled bodies (a few dozen at most: one per shipped kernel),
 * and their instrumented copies for --sanitize. */
static const struct cta__kc_def **defs, **san_defs;
static size_t ndefs, defs_cap, nsan_defs, san_defs_cap;

int cta__kc_enabled = 1;

void cta_sim_set_regions(int on)
{
	cta__kc_enabled = on != 0;
}

void cta__kc_register(const struct cta__kc_def *d)
{
	if (ndefs == defs_cap) {
		size_t cap = defs_cap ? defs_cap * 2 : 16;
		const struct cta__kc_def **n = realloc(defs, cap * sizeof(*n));
		if (!n)
			return; /* (the kernel then runs on fibers) */
		defs = n;
		defs_cap = cap;
	}
	defs[ndefs++] = d;
}

void cta__kc_register_sanitized(const struct cta__kc_def *d)
{
	if (nsan_defs == san_defs_cap) {
		size_t cap = san_defs_cap ? san_defs_cap * 2 : 16;
		const struct cta__kc_def **n = realloc(san_defs, cap * sizeof(*n));
		if (!n)
			return; /* (the sanitized kernel then runs on fibers) */
		san_defs = n;
		san_defs_cap = cap;
	}
	san_defs[nsan_defs++] = d;
}

size_t cta__regions_count(void)
{
	return ndefs;
}

const struct cta__kc_def *cta__regions_at(size_t i)
{
	return i < ndefs ? defs[i] : NULL;
}

int cta_kernel_regions(const char *name, const char **why)
{
	for (size_t i = 0; i < ndefs; i++)
		if (!strcmp(defs[i]->name, name)) {
			if (why)
				*why = defs[i]->why;
			return !defs[i]->why && (defs[i]->ramp || defs[i]->fis);
		}
	return -1;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

int cta__regions_never_waits(const struct cta__kernel *k)
{
	const struct cta_kernel_def *kd = k->l.kernel;
	for (size_t i = 0; i < ndefs; i++) {
		const struct cta__kc_def *d = defs[i];
		if (d->line == kd->line && !strcmp(d->name, kd->name) &&
		    !strcmp(base_name(d->file), base_name(kd->file)))
			return (d->flags & CTA__KC_NO_WAIT) ||
			       ((d->flags & CTA__KC_POLLS_ONLY) && k->kc);
	}
	return 0;
}

int cta__regions_no_shared(const struct cta_kernel_def *kd)
{
	for (size_t i = 0; i < ndefs; i++) {
		const struct cta__kc_def *d = defs[i];
		if (d->line == kd->line && !strcmp(d->name, kd->name) &&
		    !strcmp(base_name(d->file), base_name(kd->file)))
			return (d->flags & CTA__KC_NO_SHARED) != 0;
	}
	return 0;
}

const struct cta__kc_def *cta__regions_for(struct cta_sim *s, const struct cta__kernel *k)
{
	const struct cta_kernel_def *kd = k->l.kernel;
	if (!cta__kc_enabled || s->o.timing_only || k->threads < 2)
		return NULL;
	/* (--sanitize runs the instrumented copies.) */
	const struct cta__kc_def *const *tab = s->o.sanitize ? san_defs : defs;
	size_t n = s->o.sanitize ? nsan_defs : ndefs;
	for (size_t i = 0; i < n; i++) {
		const struct cta__kc_def *d = tab[i];
		/* The same CTA_KERNEL: its name, and where it is written. */
		if (!d->why && (d->ramp || d->fis) && d->line == kd->line &&
		    !strcmp(d->name, kd->name) &&
		    !strcmp(base_name(d->file), base_name(kd->file))) {
			/* Clusters as a whole (run_cluster), not under --sanitize;
			 * other bodies one CTA at a time. */
			if (k->l.block[0] == 1 && !(d->flags & CTA__KC_NO_WAIT))
				return NULL;
			if (d->flags & CTA__KC_CLUSTER)
				return d->fis && !s->o.sanitize ? d : NULL;
			if (d->flags & CTA__KC_SPIN)
				return d->fis && k->csize == 1 && !s->o.sanitize ? d : NULL;
			return k->csize == 1 ? d : NULL;
		}
	}
	return NULL;
}

/* The most ranges of struct cta__kc_cover a descriptor's list may name
 * for the engine to use it (compiler/regions_pass.cpp stops there too). */
#define KC_COVER_MAX 8

typedef void *(*kc_ramp_fn)(const void *args, struct cta__lane *l, const struct cta__idx *ix);
typedef void (*kc_resume_fn)(void *frame);

/* An observation of an mbarrier's phase by a thread (struct cta__obs of the
 * lane, less the thread: one list per thread). */
struct kc_obs {
	const void *bar;
	uint64_t phase;
};

/* The block being run on this host thread, and its slots (kept from block
 * to block: a block of 1024 threads needs a few tens of KiB). */
struct kc_block {
	struct cta__lane_x *x;
	struct cta__cta *c;
	struct cta__unit *u;
	unsigned n;
	unsigned cur;     /* the running thread (rank) */
	int released;     /* its arrival completed the barrier */
	void **frame;     /* per thread; NULL before it starts */
	uint64_t *vt;     /* per thread: virtual time while it does not run */
	unsigned *waiter; /* threads waiting at the barrier, in arrival order */
	unsigned nwait;
	const char *wait_file; /* where the first waiter waits */
	int wait_line;
	unsigned *runq; /* woken threads, in wake order */
	unsigned rq_head, rq_tail;
	uint64_t wake_t;      /* when the threads of runq continue */
	int one_row;          /* blockDim.y = blockDim.z = 1: threadIdx.x is the rank */
	unsigned char *arena; /* the frames */
	size_t arena_cap, used;
	unsigned cap; /* threads the per-thread arrays hold */
	/* The loop form (run_block_fis). */
	const struct cta__kc_def *d;
	int mixed;            /* threads waited at different barriers: per-thread mode */
	unsigned char *cont;  /* per thread: where it waits */
	unsigned char *slots; /* the per-thread values */
	size_t slots_cap;
	unsigned char *ubuf; /* block-uniform values: two rounds' worth, and zeros */
	size_t ubuf_cap;
	unsigned char *urep; /* the same per thread, in per-thread mode */
	size_t urep_cap;
	/* The work-stealing loop the threads enter (cta__kc_ws_enter). */
	void *ws_fn, *ws_arg;
	int ws_mode;
	struct cta__kc_park *spare_park; /* kept for the next wait */
	/* Shared memory of the blocks that run here to their end in one go
	 * (CTA__KC_LOCAL_SMEM), and the bytes of it that may be non-zero:
	 * hot_nr ranges [hot_lo, hot_hi), in order. */
	unsigned char *hot;
	size_t hot_cap;
	size_t hot_lo[KC_COVER_MAX], hot_hi[KC_COVER_MAX];
	unsigned hot_nr;
	/* Threads of the round that stopped at an mbarrier wait, in the order
	 * they stopped, with their times (cta__kc_wait_blocks). */
	unsigned *wrank;
	uint64_t *wvt;
	unsigned nw, wcap;
	uint64_t *wbar;
	unsigned wpar;
	int wmixed; /* not all on one mbarrier and phase */
	/* Each thread's observations of mbarrier phases, for a CTA__KC_OBS
	 * body (cta__regions_observe): obs_n[t] entries at obs_e + t *
	 * CTA__OBS_MAX, while obs_on. */
	int obs_on;
	unsigned char *obs_n;
	struct kc_obs *obs_e;
	unsigned obs_cap;
	/* Each thread's count of yield points (kernel.h's cta__poll), while
	 * poll_on: the lane's polls is thread poll_owner's (UINT32_MAX: none),
	 * the others' are in polls[] (cta__regions_poll_thread). */
	int poll_on;
	unsigned poll_owner;
	uint16_t *polls;
	size_t polls_cap;
	/* A CTA__KC_SPIN body's threads' spinning states (run_spin), and
	 * whether the thread just run suspended at a yield point (at spun_vt). */
	struct kc_spin *spins;
	size_t spins_cap;
	int spun;
	uint64_t spun_vt;
	/* The thread just run stopped for good (cta__kc_grid_check). */
	int stopped;
	/* The next cta__kc_spin_blocks is a cta_grid_sync's arrival (1) or
	 * poll of its phase (2) under the device's wait_* (cta__kc_grid_timed). */
	int grid_op;
};
static _Thread_local struct kc_block kcb;

/* A thread's spinning state (struct cta__lane_spin of a lane on fibers):
 * its suspensions in a row, since when it spins with no write, when an
 * EV_POLL last resumed it, where it last suspended. Its padding is zero:
 * equal states compare equal (a park keeps runs of them). */
struct kc_spin {
	uint64_t since, resume_t;
	const char *file;
	int line;
	unsigned rounds;
	uint32_t started; /* it reached CTA__POLL_BUDGET once: the next time it spins */
	/* A blocking kernel's thread under the device's wait_* (exec.c's
	 * wait_access): its yield points with nothing between them, where
	 * its last access left its clock, the access it waits to make
	 * (cta__acc), whether it waits for its time (timed), at which step
	 * (1: its time, 2: its turn's start), whether the access is a
	 * cta_grid_sync arrival, whether this state is its own yet. In a
	 * park (spin_wait_pack) acc_end is at_end: whether it is the
	 * thread's time, or 0 and never again. */
	uint32_t acc_idle;
	uint64_t acc_end;
	uint64_t acc;
	uint64_t acc_addr; /* exec.c's: the address of its last access */
	uint8_t timed, stage, grid, own, at_end, seen, poll, pad;
};

/* A count of a thread that made no yield point yet (run_spin's threads,
 * whose first count depends on the device's wait_*). */
#define KC_POLLS_FRESH 0xffffu

/* Room for n threads' counts of yield points, all 0, the lane's count
 * no thread's; 0 or -1. */
static int polls_start(struct kc_block *b, struct cta__lane_x *x, size_t n)
{
	if (n > b->polls_cap) {
		free(b->polls);
		b->polls = malloc(n * sizeof(*b->polls));
		b->polls_cap = b->polls ? n : 0;
		if (!b->polls)
			return -1;
	}
	memset(b->polls, 0, n * sizeof(*b->polls));
	b->poll_owner = UINT32_MAX;
	x->l.poll_x = UINT32_MAX;
	b->poll_on = 1;
	return 0;
}

/* The lane's count back to its thread, and the lane's count no thread's:
 * before a call of the loop form that may run a thread whose tid.x is the
 * last one's (cta__poll tells threads apart by tid.x alone). */
static inline void polls_flush(struct kc_block *b)
{
	struct cta__lane *l = &b->x->l;
	if (b->poll_owner != UINT32_MAX) {
		b->polls[b->poll_owner] = l->polls;
		b->poll_owner = UINT32_MAX;
	}
	l->poll_x = UINT32_MAX;
}

int cta__regions_poll_thread(struct cta__lane *l)
{
	struct kc_block *b = &kcb;
	if (!b->poll_on || &b->x->l != l)
		return 0;
	if (b->poll_owner != UINT32_MAX)
		b->polls[b->poll_owner] = l->polls;
	unsigned r = l->cta_rank * b->n + l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
	b->poll_owner = r;
	l->polls = b->polls[r];
	if (l->polls == KC_POLLS_FRESH) {
		/* A thread's first yield point (run_spin), as cta__poll_thread
		 * starts a lane's count on fibers. */
		const struct cta__kernel *k = l->unit->k;
		l->polls = k->comm_state != 0 && cta__exec_wait_model(l->unit->sim, k)
		               ? CTA__POLL_BUDGET - 1
		               : 0;
	}
	l->poll_x = l->tid.x;
	return 1;
}

void *cta__kc_frame(uint64_t size)
{
	struct kc_block *b = &kcb;
	size_t fs = ((size_t)size + 15) & ~(size_t)15;
	if (b->used == 0) {
		/* The block's first frame: every frame of a body has the same
		 * size, so the arena is sized for all of them now. */
		size_t cap = (fs * b->n + 63) / 64 * 64;
		if (cap > b->arena_cap) {
			free(b->arena);
			b->arena = aligned_alloc(64, cap);
			if (!b->arena)
				abort(); /* as for a fiber stack that cannot be made */
			b->arena_cap = cap;
		}
	} else if (b->used + fs > b->arena_cap) {
		abort(); /* frames of two sizes in one body: cannot happen */
	}
	void *p = b->arena + b->used;
	b->used += fs;
	return p;
}

static inline uint3 tid_of(const struct kc_block *b, const struct cta__lane *l, unsigned r)
{
	uint3 t;
	if (b->one_row) {
		t.x = r;
		t.y = t.z = 0;
	} else {
		t.x = r % l->bdim.x;
		t.y = (r / l->bdim.x) % l->bdim.y;
		t.z = r / (l->bdim.x * l->bdim.y);
	}
	return t;
}

/* Makes the lane thread r's, for the UB reports that name a thread. */
static void lane_as(struct kc_block *b, unsigned r)
{
	b->x->l.tid = tid_of(b, &b->x->l, r);
	b->x->l.vtime = b->vt[r];
}

/* barrier_release of exec.c: every waiter continues at the latest arrival
 * plus the barrier's cost, the releasing thread (if any) first. A barrier
 * completes only once no thread can run (each waits or exited), so the run
 * queue is empty: the waiters become the run queue, all woken at one time. */
static void release(struct kc_block *b, int self)
{
	struct cta__cta *c = b->c;
	uint64_t t = c->bar_max_t + b->u->sim->dev.barrier_ns;
	c->bar_rel_t = t;
	c->bar_gen++;
	unsigned *q = b->runq;
	b->runq = b->waiter;
	b->waiter = q;
	b->rq_head = 0;
	b->rq_tail = b->nwait;
	b->wake_t = t;
	b->nwait = 0;
	if (self)
		b->x->l.vtime = t;
	b->x->bar_gen = c->bar_gen;
	c->bar_arrived = 0;
	c->bar_max_t = 0;
	c->bar_file = NULL;
	c->bar_divergent_reported = 0;
}

/* cta__syncthreads_rule of exec.c for a compiled body: the same counts and
 * reports, but the thread does not block here (it suspends on return). */
void cta__kc_arrive(const char *file, int line)
{
	struct kc_block *b = &kcb;
	struct cta__lane_x *x = b->x;
	struct cta__unit *u = b->u;
	struct cta__cta *c = b->c;
	u->out.crossings++;
	c->cold_dirty = 1;
	if (c->bar_arrived == 0) {
		c->bar_file = file;
		c->bar_line = line;
	} else if ((c->bar_line != line || (c->bar_file != file && strcmp(c->bar_file, file))) &&
	           !c->bar_divergent_reported) {
		c->bar_divergent_reported = 1;
		cta__ub(u->sim, UB_DIVERGENT_BARRIER, u, x, file, line,
		        "other threads of the block wait at the __syncthreads at %s:%d",
		        c->bar_file, c->bar_line);
	}
	c->bar_arrived++;
	if (x->l.vtime > c->bar_max_t)
		c->bar_max_t = x->l.vtime;
	if (c->bar_arrived + c->exited == c->nthreads) {
		if (c->exited && !c->bar_divergent_reported)
			cta__ub(u->sim, UB_DIVERGENT_BARRIER, u, x, file, line,
			        "%" PRIu64 " of the block's %" PRIu64
			        " threads exited without reaching this barrier",
			        c->exited, (uint64_t)c->nthreads);
		if (!cta__exec_bar_idle(u->sim, c)) {
			release(b, 1);
			b->released = 1;
			return;
		}
		/* The watchdog: the block loops at barriers and nothing else.
		 * Every thread stays waiting, and run_block gives the block up. */
		cta__exec_bar_watchdog_report(u, x, c, file, line, c->bar_idle_ns);
	}
	if (b->nwait == 0) {
		b->wait_file = file;
		b->wait_line = line;
	}
	b->waiter[b->nwait++] = b->cur;
}

static int grow(struct kc_block *b, unsigned n)
{
	if (n <= b->cap)
		return 0;
	void **f = realloc(b->frame, n * sizeof(*f));
	if (f)
		b->frame = f;
	uint64_t *vt = realloc(b->vt, n * sizeof(*vt));
	if (vt)
		b->vt = vt;
	unsigned *w = realloc(b->waiter, n * sizeof(*w));
	if (w)
		b->waiter = w;
	unsigned *q = realloc(b->runq, n * sizeof(*q));
	if (q)
		b->runq = q;
	unsigned char *ct = realloc(b->cont, n);
	if (ct)
		b->cont = ct;
	if (!f || !vt || !w || !q || !ct)
		return -1;
	b->cap = n;
	return 0;
}

/* Thread `r` runs from where it stopped (at virtual time vt) to its next
 * barrier or its end. */
static inline void run_thread(struct kc_block *b, const struct cta__kc_def *d, const void *args,
                              struct cta__idx *ix, unsigned r, uint64_t vt)
{
	struct cta__lane *l = &b->x->l;
	b->cur = r;
	/* Field by field: a struct copy would reload the three 4-byte
	 * stores as one 8-byte load, which store forwarding cannot serve. */
	if (b->one_row) {
		ix->tid.x = l->tid.x = r; /* (y and z stay 0) */
	} else {
		uint3 t = tid_of(b, l, r);
		ix->tid.x = l->tid.x = t.x;
		ix->tid.y = l->tid.y = t.y;
		ix->tid.z = l->tid.z = t.z;
	}
	l->vtime = vt;
	polls_flush(b);
	void *f = b->frame[r];
	for (;;) {
		b->released = 0;
		if (!f)
			f = b->frame[r] = ((kc_ramp_fn)d->ramp)(args, l, ix);
		else
			(*(kc_resume_fn *)f)(f);
		if (__builtin_expect(!b->released, 1))
			break;
		/* It completed the barrier: it goes on at once, as the fiber
		 * path's releasing thread does. */
	}
	b->vt[r] = l->vtime;
	if (!*(void **)f) {
		/* Exited: counted at once (the fiber path counts it before
		 * any later arrival can look). */
		struct cta__cta *c = b->c;
		c->exited++;
		if (l->vtime > c->end_t)
			c->end_t = l->vtime;
	}
}

/* One block of unit u (fresh: no thread started) on lane x. */
static int run_block(struct cta__lane_x *x, const struct cta__kc_def *d)
{
	struct cta__lane *l = &x->l;
	struct cta__unit *u = l->unit;
	struct cta__kernel *k = u->k;
	struct kc_block *b = &kcb;
	unsigned n = (unsigned)l->cursor->left;
	if (grow(b, n) || polls_start(b, x, n))
		return -1;
	/* Claim every thread of the block (cta__claim, row after row). */
	struct cta__cursor *cur = l->cursor;
	cur->left = 0;
	cur->tid.x = cur->tid.y = cur->tid.z = 0;
	if (cur->cta != l->cta_rank || !l->smem)
		cta__lane_enter_cta(l);
	cur->cta++;
	b->x = x;
	b->u = u;
	b->c = x->cta;
	b->n = n;
	b->used = 0;
	b->nwait = 0;
	b->rq_head = b->rq_tail = 0;
	b->one_row = l->bdim.y == 1 && l->bdim.z == 1;
	memset(b->frame, 0, n * sizeof(*b->frame));
	struct cta__idx ix;
	ix.tid.x = ix.tid.y = ix.tid.z = 0;
	l->tid = ix.tid;
	ix.bid = l->bid;
	ix.bdim = l->bdim;
	ix.gdim = l->gdim;
	ix.spin = cur->spin;
	ix.add = cur->add;
	l->active = 1;
	l->run_x0 = 0;
	l->row_end = l->bdim.x;
	const void *args = k->args;
	unsigned next_new = 0;
	struct cta__cta *c = b->c;
	for (;;) {
		unsigned r;
		uint64_t vt;
		if (b->rq_head != b->rq_tail) {
			r = b->runq[b->rq_head++];
			vt = b->wake_t;
		} else if (next_new < n) {
			r = next_new++;
			vt = cur->t0;
		} else if (c->bar_arrived && c->bar_arrived + c->exited == c->nthreads &&
		           !u->watchdog) {
			/* settle_barriers of exec.c: the missing threads exited. */
			if (!c->bar_divergent_reported) {
				lane_as(b, b->waiter[0]);
				cta__ub(u->sim, UB_DIVERGENT_BARRIER, u, x, b->wait_file,
				        b->wait_line,
				        "%" PRIu64 " of the block's %" PRIu64
				        " threads exited without reaching this barrier",
				        c->exited, (uint64_t)c->nthreads);
			}
			release(b, 0);
			continue;
		} else {
			break;
		}
		run_thread(b, d, args, &ix, r, vt);
	}
	polls_flush(b);
	b->poll_on = 0;
	l->active = 0;
	if (b->nwait && u->watchdog) {
		c->exited = c->nthreads; /* given up (cta__exec_bar_watchdog_report) */
	} else if (b->nwait) {
		/* Cannot happen with __syncthreads alone (a barrier completes
		 * once every thread arrived or exited); stop cleanly. */
		cta__base_out_error(u, "kernel %s: compiled block ended with %u waiting threads",
		                    k->label, b->nwait);
		c->exited = c->nthreads;
	}
	return 0;
}

/* ---- the loop form ---------------------------------------------------- */

/* The pass addresses these by fixed offsets (compiler/regions_pass.cpp). */
_Static_assert(offsetof(struct cta__lane, vtime) == 64, "cta__lane.vtime moved");
_Static_assert(offsetof(struct cta__lane, tid) == 0, "cta__lane.tid moved");
/* (The pass reads a spinning body's threadIdx, blockIdx, blockDim and
 * gridDim of the lane as of the index block, and its steal_depth as 0.) */
_Static_assert(offsetof(struct cta__lane, bid) == offsetof(struct cta__idx, bid) &&
                   offsetof(struct cta__lane, bdim) == offsetof(struct cta__idx, bdim) &&
                   offsetof(struct cta__lane, gdim) == offsetof(struct cta__idx, gdim) &&
                   offsetof(struct cta__idx, gdim) == 36,
               "cta__lane's indices moved");
_Static_assert(offsetof(struct cta__lane, steal_depth) == 72, "cta__lane.steal_depth moved");
_Static_assert(sizeof(struct cta__idx) == 56 && offsetof(struct cta__idx, bdim) == 24,
               "cta__idx changed");
_Static_assert(sizeof(struct cta__kc_run) == 18 * 8, "cta__kc_run changed");

typedef void (*kc_fis_fn)(const void *args, struct cta__lane *l, const struct cta__idx *ix,
                          struct cta__kc_run *r);

/* Makes the lane thread r's at virtual time vt, for a report. */
static void lane_at(struct kc_block *b, unsigned r, uint64_t vt)
{
	b->x->l.tid = tid_of(b, &b->x->l, r);
	b->x->l.vtime = vt;
}

void cta__kc_fis_mismatch(struct cta__kc_run *r, uint64_t t, uint64_t bar, uint64_t vtime,
                          uint64_t want)
{
	struct kc_block *b = &kcb;
	struct cta__cta *c = b->c;
	const struct cta__kc_bar *w = &b->d->bars[want], *m = &b->d->bars[bar];
	(void)r;
	b->mixed = 1;
	if (c->bar_divergent_reported ||
	    (w->line == m->line && (w->file == m->file || !strcmp(w->file, m->file))))
		return;
	c->bar_divergent_reported = 1;
	lane_at(b, (unsigned)t, vtime);
	cta__ub(b->u->sim, UB_DIVERGENT_BARRIER, b->u, b->x, m->file, m->line,
	        "other threads of the block wait at the __syncthreads at %s:%d", w->file, w->line);
}

uint64_t cta__kc_fis_scan(struct cta__kc_run *r, uint64_t lo, uint64_t hi, uint64_t want,
                          uint64_t vtime)
{
	for (uint64_t t = lo; t < hi; t++) {
		uint64_t c = r->cont[t];
		if (c == CTA__KC_EXITED)
			continue;
		if (want == CTA__KC_NONE)
			want = c;
		else if (c != want)
			cta__kc_fis_mismatch(r, t, c, vtime, want);
	}
	return want;
}

void cta__kc_ws_enter(int mode, int rank, int is_leader, void *fn, void *arg, const char *file,
                      int line)
{
	struct kc_block *b = &kcb;
	(void)rank;    /* (as work_steal_loop: the rank only shapes the index on a GPU) */
	b->ws_fn = fn; /* (the same for every thread: the kernel compiler checks it) */
	b->ws_arg = arg;
	b->ws_mode = mode;
	cta__clc_ws_enter(mode, is_leader != 0, file, line);
}

void cta__kc_ws_point(const char *file, int line)
{
	(void)file;
	(void)line;
	abort(); /* a marker the loop form never runs */
}

/* What run_block_fis keeps from round to round: on its stack, or in the
 * lane's park while the block waits as a whole. */
struct fis_loc {
	struct cta__idx ix;
	uint64_t T;
	unsigned rot, region;
	int ucur;
};
/* A block waiting as a whole for a request of its work-stealing loop: a
 * few hundred bytes where the fiber path keeps a lane and a stack per
 * thread. data holds the block-uniform values at the loop's barrier, then
 * the per-thread slots. */
struct kc_cpark;
struct cta__kc_park {
	/* A lane of a compiled cluster (run_cluster): cl, the cluster's state,
	 * and the CTA whose waiting threads the lane stands for on its
	 * mbarrier (KC_IDLE: none); nothing else is used. */
	struct kc_cpark *cl;
	unsigned cl_cta;
	struct fis_loc loc;
	struct cta__kc_ws ws;
	size_t cap;
	/* A block waiting at an mbarrier: its nw waiting threads, on wbar's
	 * phase wpar. */
	unsigned nw, wpar;
	uint64_t *wbar;
	/* data: the block-uniform values (ub bytes, padded to 8), the slots
	 * as nsr runs of equal 16-byte chunks (a slot's element size and
	 * alignment, its padding zero: the value, then the count in 8 bytes)
	 * or as they are when that is no smaller (nsr = SIZE_MAX), the waiting
	 * threads as nwr runs of consecutive ranks, up or down, at one time
	 * (struct wrun, wait_runs):
	 * a value every thread holds alike, as the CLC loop's phase and block
	 * index, costs a run, not a slot per thread. */
	size_t nsr, nwr;
	/* Then, for a CTA__KC_OBS body, the threads' observations as nor runs
	 * of threads that hold the same (struct orun, its entries). Last, the
	 * threads' counts of yield points as runs of equal ones (rle_put). */
	size_t nor;
	/* A block of a CTA__KC_SPIN body (run_spin; then nothing above but
	 * loc and nwr is used): data holds its state at these offsets, its
	 * ncw threads at the barrier (as nwr runs, item_runs) and nsp that
	 * spin (as the runs from off_sp to off_pl), each in the order they
	 * came, and the EV_POLL's time once one woke it. */
	int spin;
	unsigned ncw, nsp;
	size_t off_cw, off_sp, off_pl, off_ss;
	uint64_t wake_t;
	/* Its spinning threads that do not wait for a time of their own, and
	 * the earliest such time (cta__regions_spin_kept). */
	unsigned untimed;
	uint64_t timed_min;
	int model; /* its barrier's waiters packed as spin_wait_pack does under the wait_* */
	unsigned char data[];
};
struct wrun {
	uint32_t rank, count;
	uint64_t vt;
};
struct orun {
	uint32_t count, nobs;
};
/* A struct wrun of park_new whose ranks go down from `rank` (the waits'
 * order reverses at each request): the top bit of its count. */
#define WRUN_DOWN 0x80000000u

/* The waiting threads of b as runs of consecutive ranks at one time, in
 * their order, each going up or down (WRUN_DOWN); written to o unless it
 * is NULL. Returns the number of runs. */
static size_t wait_runs(const struct kc_block *b, unsigned char *o)
{
	size_t nr = 0;
	for (unsigned i = 0; i < b->nw;) {
		struct wrun r = {b->wrank[i], 1, b->wvt[i]};
		int down = i + 1 < b->nw && b->wvt[i + 1] == r.vt && r.rank &&
		           b->wrank[i + 1] == r.rank - 1;
		while (i + r.count < b->nw && b->wvt[i + r.count] == r.vt &&
		       b->wrank[i + r.count] == (down ? r.rank - r.count : r.rank + r.count))
			r.count++;
		i += r.count;
		if (down)
			r.count |= WRUN_DOWN;
		if (o) {
			memcpy(o, &r, sizeof(r));
			o += sizeof(r);
		}
		nr++;
	}
	return nr;
}

static size_t rle_len(const unsigned char *p, size_t nrec, size_t rec);
static unsigned char *rle_put(unsigned char *o, const unsigned char *p, size_t nrec, size_t rec);
static const unsigned char *rle_get(const unsigned char *in, unsigned char *p, size_t nrec,
                                    size_t rec);

/* Threads t and t - 1 observed the same (a parked block keeps runs). */
static int obs_same(const struct kc_block *b, unsigned t)
{
	return b->obs_n[t] == b->obs_n[t - 1] && !memcmp(b->obs_e + (size_t)t * CTA__OBS_MAX,
	                                                 b->obs_e + (size_t)(t - 1) * CTA__OBS_MAX,
	                                                 b->obs_n[t] * sizeof(struct kc_obs));
}

/* The park of b's block (n threads, uniform values uin), with its waiting
 * threads when `waits`; NULL when out of memory. */
static struct cta__kc_park *park_new(struct kc_block *b, const struct cta__kc_def *d, unsigned n,
                                     const unsigned char *uin, size_t ub, int waits)
{
	size_t raw = (size_t)n * d->slot_bytes, chunks = raw / 16, ubp = (ub + 7) & ~(size_t)7;
	size_t nsr = 0, nwr = 0;
	for (size_t i = 0; i < chunks; i++)
		nsr += i == 0 || memcmp(b->slots + i * 16, b->slots + (i - 1) * 16, 16);
	size_t sbytes = nsr * 24;
	if (sbytes >= raw) {
		nsr = SIZE_MAX;
		sbytes = raw;
	}
	if (waits)
		nwr = wait_runs(b, NULL);
	size_t nor = 0, obytes = 0;
	for (unsigned t = 0; b->obs_on && t < n; t++)
		if (t == 0 || !obs_same(b, t)) {
			nor++;
			obytes += sizeof(struct orun) + b->obs_n[t] * sizeof(struct kc_obs);
		}
	const unsigned char *pc = (const unsigned char *)b->polls;
	size_t need =
	    ubp + sbytes + nwr * sizeof(struct wrun) + obytes + rle_len(pc, n, sizeof(*b->polls));
	struct cta__kc_park *pk = b->spare_park;
	b->spare_park = NULL;
	if (!pk || pk->cap < need) {
		free(pk);
		pk = malloc(sizeof(*pk) + need);
		if (!pk)
			return NULL;
		pk->cap = need;
	}
	pk->cl = NULL;
	pk->spin = 0;
	pk->nsr = nsr;
	pk->nwr = nwr;
	pk->nor = nor;
	memcpy(pk->data, uin, ub);
	unsigned char *o = pk->data + ubp;
	if (nsr == SIZE_MAX) {
		memcpy(o, b->slots, raw);
		o += raw;
	} else {
		for (size_t i = 0; i < chunks;) {
			uint64_t count = 1;
			while (i + count < chunks &&
			       !memcmp(b->slots + (i + count) * 16, b->slots + i * 16, 16))
				count++;
			memcpy(o, b->slots + i * 16, 16);
			memcpy(o + 16, &count, 8);
			o += 24;
			i += count;
		}
	}
	if (waits) {
		wait_runs(b, o);
		o += nwr * sizeof(struct wrun);
	}
	for (unsigned t = 0; b->obs_on && t < n;) {
		struct orun q = {1, b->obs_n[t]};
		while (t + q.count < n && obs_same(b, t + q.count))
			q.count++;
		memcpy(o, &q, sizeof(q));
		memcpy(o + sizeof(q), b->obs_e + (size_t)t * CTA__OBS_MAX,
		       q.nobs * sizeof(struct kc_obs));
		o += sizeof(q) + q.nobs * sizeof(struct kc_obs);
		t += q.count;
	}
	rle_put(o, pc, n, sizeof(*b->polls));
	return pk;
}

/* What park_new kept, back into b's buffers. */
static void park_restore(struct kc_block *b, const struct cta__kc_park *pk, unsigned char *uin,
                         size_t ub)
{
	size_t ubp = (ub + 7) & ~(size_t)7;
	memcpy(uin, pk->data, ub);
	const unsigned char *in = pk->data + ubp;
	unsigned char *sl = b->slots;
	if (pk->nsr == SIZE_MAX) {
		memcpy(sl, in, (size_t)b->n * b->d->slot_bytes);
		in += (size_t)b->n * b->d->slot_bytes;
	}
	for (size_t k = 0; pk->nsr != SIZE_MAX && k < pk->nsr; k++, in += 24) {
		uint64_t count;
		memcpy(&count, in + 16, 8);
		for (uint64_t i = 0; i < count; i++, sl += 16)
			memcpy(sl, in, 16);
	}
	b->nw = 0;
	for (size_t k = 0; k < pk->nwr; k++, in += sizeof(struct wrun)) {
		struct wrun r;
		memcpy(&r, in, sizeof(r));
		uint32_t count = r.count & ~WRUN_DOWN;
		for (uint32_t i = 0; i < count; i++) {
			b->wrank[b->nw] = r.count & WRUN_DOWN ? r.rank - i : r.rank + i;
			b->wvt[b->nw++] = r.vt;
		}
	}
	unsigned t = 0;
	for (size_t k = 0; k < pk->nor; k++) {
		struct orun q;
		memcpy(&q, in, sizeof(q));
		for (uint32_t i = 0; i < q.count; i++, t++) {
			b->obs_n[t] = (unsigned char)q.nobs;
			memcpy(b->obs_e + (size_t)t * CTA__OBS_MAX, in + sizeof(q),
			       q.nobs * sizeof(struct kc_obs));
		}
		in += sizeof(q) + q.nobs * sizeof(struct kc_obs);
	}
	rle_get(in, (unsigned char *)b->polls, b->n, sizeof(*b->polls));
}

static unsigned cluster_waiting(const struct cta__kc_park *pk);
static int cluster_wait_time(const struct cta__kc_park *pk, unsigned rank, uint64_t *vt);
static void cluster_proxy_free(struct cta__kc_park *pk);

unsigned cta__regions_park_waiting(const struct cta__lane_x *x)
{
	if (x->kc_park->cl)
		return cluster_waiting(x->kc_park);
	if (x->kc_park->spin)
		return x->kc_park->ncw + x->kc_park->nsp;
	return x->kc_park->nw ? x->kc_park->nw : x->kc_park->ws.n;
}

int cta__regions_park_wait_time(const struct cta__lane_x *x, unsigned rank, uint64_t *vt)
{
	const struct cta__kc_park *pk = x->kc_park;
	const struct cta__kc_def *d = x->l.unit->k->kc;
	if (!pk || !d)
		return 0;
	if (pk->cl)
		return cluster_wait_time(pk, rank, vt);
	if (pk->spin)
		return 0;
	if (!pk->nw) {
		/* A work-stealing loop's block (cta__clc_ws_run): every thread
		 * waits for the request right after its body, at the time its
		 * body left it, as on fibers. */
		const struct cta__kc_ws *w = &pk->ws;
		if (!w->fn || rank >= w->n)
			return 0;
		*vt = rank == w->leader ? w->vt_lead : w->vt_state == 2 ? w->vt[rank] : w->vt_other;
		return 1;
	}
	/* park_new's layout: uniform values, slots, then the runs of waiters. */
	const unsigned char *in = pk->data + ((d->uni_bytes + 7) & ~(size_t)7);
	in += pk->nsr == SIZE_MAX ? (size_t)x->cta->nthreads * d->slot_bytes : pk->nsr * 24;
	for (size_t k = 0; k < pk->nwr; k++, in += sizeof(struct wrun)) {
		struct wrun r;
		memcpy(&r, in, sizeof(r));
		uint32_t count = r.count & ~WRUN_DOWN;
		if (r.count & WRUN_DOWN ? rank <= r.rank && r.rank - rank < count
		                        : rank >= r.rank && rank - r.rank < count) {
			*vt = r.vt;
			return 1;
		}
	}
	return 0;
}

/* Room for `need` waiting threads in b's wait list. */
static void wait_room(struct kc_block *b, unsigned need)
{
	if (need <= b->wcap)
		return;
	unsigned cap = need > 256 ? need : 256;
	unsigned *r = realloc(b->wrank, cap * sizeof(*r));
	if (r)
		b->wrank = r;
	uint64_t *v = realloc(b->wvt, cap * sizeof(*v));
	if (v)
		b->wvt = v;
	if (!r || !v)
		abort(); /* a few bytes per thread; nothing sensible without them */
	b->wcap = cap;
}

int cta__kc_wait_blocks(uint64_t *bar, unsigned parity)
{
	struct kc_block *b = &kcb;
	if (!cta__clc_wait_blocks(bar, parity))
		return 0;
	if (b->nw == b->wcap)
		wait_room(b, b->wcap * 2 + 1);
	const struct cta__lane *l = &b->x->l;
	if (!b->nw) {
		b->wbar = bar;
		b->wpar = parity & 1;
	} else if (bar != b->wbar || (parity & 1) != b->wpar) {
		b->wmixed = 1;
	}
	b->wrank[b->nw] = l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
	b->wvt[b->nw++] = l->vtime;
	return 1;
}

int cta__regions_observe(struct cta__lane_x *x, const void *bar, unsigned phase, unsigned rank)
{
	struct kc_block *b = &kcb;
	if (!b->obs_on || b->x != x || rank >= b->n)
		return 0;
	/* observe() of sim/clc/clc.c on a lane: a thread's own observations
	 * are the first of the lane's (another thread's are free to take). */
	struct kc_obs *e = b->obs_e + (size_t)rank * CTA__OBS_MAX;
	unsigned m = b->obs_n[rank], i = 0;
	while (i < m && e[i].bar != bar)
		i++;
	if (i == CTA__OBS_MAX)
		i = 0;
	else if (i == m)
		b->obs_n[rank] = (unsigned char)(m + 1);
	e[i].bar = bar;
	e[i].phase = phase;
	return 1;
}

int cta__regions_observed(const struct cta__lane_x *x, const void *bar, unsigned phase,
                          unsigned rank)
{
	const struct kc_block *b = &kcb;
	if (!b->obs_on || b->x != x || rank >= b->n)
		return -1;
	const struct kc_obs *e = b->obs_e + (size_t)rank * CTA__OBS_MAX;
	for (unsigned i = 0; i < b->obs_n[rank]; i++)
		if (e[i].bar == bar && e[i].phase >= phase)
			return 1;
	return 0;
}

void cta__regions_park_free(struct cta__lane_x *x)
{
	if (x->kc_park->cl) {
		cluster_proxy_free(x->kc_park);
		x->kc_park = NULL;
		return;
	}
	free(x->kc_park->ws.vt);
	free(x->kc_park);
	x->kc_park = NULL;
}

static void *grow_buf(unsigned char **p, size_t *cap, size_t want)
{
	if (want <= *cap)
		return *p;
	want = (want + 63) / 64 * 64;
	free(*p);
	*p = aligned_alloc(64, want);
	*cap = *p ? want : 0;
	/* (Zeroed: a slot's padding then stays zero, which lets a parked
	 * block's equal slots compare equal.) */
	if (*p)
		memset(*p, 0, want);
	return *p;
}

/* Zeroes the ranges of the hot arena that may be non-zero, but for what
 * every thread of the block wrote (d->cover, at the offsets this block's
 * declarations got) when `covered`: after the block's first round, before
 * any thread can read. */
static void zero_hot(const struct kc_block *b, const struct cta__kc_def *d, struct cta__cta *c,
                     int covered)
{
	size_t lo[KC_COVER_MAX], hi[KC_COVER_MAX];
	unsigned m = 0;
	for (uint32_t i = 0; covered && i < d->ncover; i++)
		for (unsigned k = 0; k < c->nsites; k++)
			if (c->sites[k] == d->cover[i].site) {
				size_t a = c->site_off[k], e = a + (size_t)b->n * d->cover[i].size;
				unsigned j = m++;
				for (; j > 0 && lo[j - 1] > a; j--) {
					lo[j] = lo[j - 1];
					hi[j] = hi[j - 1];
				}
				lo[j] = a;
				hi[j] = e;
				break;
			}
	for (unsigned r = 0; r < b->hot_nr; r++) {
		size_t at = b->hot_lo[r], end = b->hot_hi[r];
		for (unsigned i = 0; i < m && at < end; i++) {
			if (lo[i] > at)
				memset(c->smem + at, 0, (lo[i] < end ? lo[i] : end) - at);
			if (hi[i] > at)
				at = hi[i];
		}
		if (at < end)
			memset(c->smem + at, 0, end - at);
	}
}

/* At the end of a block on the hot arena: what it may have left non-zero
 * (dirty: its CTA's smem_dirty), by the body's writes where the kernel
 * compiler knows them all (d->write). */
static void hot_left(struct kc_block *b, const struct cta__kc_def *d, const struct cta__cta *c,
                     unsigned dirty)
{
	b->hot_nr = 0;
	if (!dirty)
		return;
	if (!d->nwrite || d->nwrite > KC_COVER_MAX) {
		b->hot_lo[0] = 0;
		b->hot_hi[0] = dirty;
		b->hot_nr = 1;
		return;
	}
	for (uint32_t i = 0; i < d->nwrite; i++)
		for (unsigned k = 0; k < c->nsites; k++)
			if (c->sites[k] == d->write[i].site) {
				size_t a = c->site_off[k], e = a + (size_t)b->n * d->write[i].size;
				/* (Writes past the arena corrupted the heap already;
				 * zeroing stays inside it.) */
				e = e < b->hot_cap ? e : b->hot_cap;
				a = a < e ? a : e;
				unsigned j = b->hot_nr++;
				for (; j > 0 && b->hot_lo[j - 1] > a; j--) {
					b->hot_lo[j] = b->hot_lo[j - 1];
					b->hot_hi[j] = b->hot_hi[j - 1];
				}
				b->hot_lo[j] = a;
				b->hot_hi[j] = e;
				break;
			}
}

/* One block of unit u (fresh) on lane x, in the loop form: rounds of
 * region loops, the barrier's bookkeeping once per round. The order of
 * threads in a round is the fiber path's (exec.c): rank order at the start,
 * then the thread whose arrival completed the barrier first and the other
 * waiters in arrival order: while no thread ended early, a rotation by
 * one, run as two ascending loops. */
/* The common end of a rotation's round: every thread reached one
 * __syncthreads (no end, no wait, no divergence), and the release of
 * run_block_fis's general path has nothing to report; done with only what
 * it changes. 1 and the threads' next start in *T, or 0 (the general path,
 * with nothing changed). */
static inline int release_fast(struct kc_block *b, const struct cta__kc_run *r, uint64_t *T)
{
	struct cta__cta *c = b->c;
	struct cta__unit *u = b->u;
	struct cta_sim *s = u->sim;
	if (r->arrived != b->n || r->exited || b->nw || b->mixed || b->d->bars[r->want].kind != 0)
		return 0;
	uint64_t idle = 0;
	if (r->bar_max == c->bar_rel_t) {
		idle = c->bar_idle_ns + s->dev.barrier_ns;
		if (idle > s->watchdog_ns)
			return 0; /* (the watchdog's report) */
	}
	c->bar_idle_ns = idle;
	u->out.crossings += r->arrived;
	c->cold_dirty = 1;
	*T = r->bar_max + s->dev.barrier_ns;
	c->bar_rel_t = *T;
	b->x->bar_gen = ++c->bar_gen;
	b->x->l.vtime = *T;
	c->bar_arrived = 0;
	c->bar_max_t = 0;
	c->bar_file = NULL;
	c->bar_divergent_reported = 0;
	return 1;
}

static int run_block_fis(struct cta__lane_x *x, const struct cta__kc_def *d,
                         struct cta__kc_park *pk)
{
	struct cta__lane *l = &x->l;
	struct cta__unit *u = l->unit;
	struct cta__kernel *k = u->k;
	struct kc_block *b = &kcb;
	unsigned n = pk ? pk->ws.n : (unsigned)l->cursor->left;
	size_t ub = d->uni_bytes, stride = (size_t)d->nbar * ub;
	if (grow(b, n) || !grow_buf(&b->slots, &b->slots_cap, (size_t)n * d->slot_bytes + 64) ||
	    !grow_buf(&b->ubuf, &b->ubuf_cap, 2 * stride + ub + 64) || polls_start(b, x, n))
		return -1;
	b->obs_on = 0;
	if ((d->flags & CTA__KC_OBS) && n > b->obs_cap) {
		free(b->obs_n);
		free(b->obs_e);
		b->obs_n = malloc(n);
		b->obs_e = malloc((size_t)n * CTA__OBS_MAX * sizeof(*b->obs_e));
		b->obs_cap = b->obs_n && b->obs_e ? n : 0;
		if (!b->obs_cap)
			return -1;
	}
	struct cta__cursor *cur = l->cursor;
	if (!pk) {
		cur->left = 0;
		cur->tid.x = cur->tid.y = cur->tid.z = 0;
		if (cur->cta != l->cta_rank || !l->smem)
			cta__lane_enter_cta(l);
		cur->cta++;
	}
	b->x = x;
	b->u = u;
	b->c = x->cta;
	b->n = n;
	b->d = d;
	b->mixed = 0;
	b->one_row = l->bdim.y == 1 && l->bdim.z == 1;
	b->nw = 0;
	b->wmixed = 0;
	if (d->flags & CTA__KC_OBS) {
		b->obs_on = 1;
		if (!pk)
			memset(b->obs_n, 0, n); /* (a parked block's come back below) */
	}
	/* A block that runs to its end here and keeps no address of its shared
	 * memory past it uses the host thread's arena, in cache from block to
	 * block, not its CTA's: the CTAs of a device's resident blocks are
	 * megabytes, and zeroing a cold one cost about as much as the block's
	 * work (block_reduce). The arena is zeroed as the CTA's would be (only
	 * what the last block on it may have written, only when the block
	 * takes shared memory); the CTA's is left as it was. */
	unsigned char *cta_smem = NULL;
	unsigned cta_dirty = 0, zero_later = 0;
	if (!pk && (d->flags & CTA__KC_LOCAL_SMEM)) {
		size_t need = cta__base_smem_need(k);
		/* Under --sanitize the arena's marks in the shadow outlive it
		 * until the simulator ends: it is made, never moved. */
		const int san = u->sim->o.sanitize != CTA_SANITIZE_NONE;
		if (need > b->hot_cap && (!san || !b->hot)) {
			b->hot_nr = 0; /* (grow_buf's arena is zeroed) */
			grow_buf(&b->hot, &b->hot_cap, need);
		}
		if (need <= b->hot_cap && (!san || cta__san_arena(u->sim, u, b->hot) == 0)) {
			cta_smem = b->c->smem;
			cta_dirty = b->c->smem_dirty;
			b->c->smem = l->smem = b->hot;
			size_t top = b->hot_nr ? b->hot_hi[b->hot_nr - 1] : 0;
			for (unsigned i = 0; i < b->hot_nr; i++)
				top = b->hot_hi[i] > top ? b->hot_hi[i] : top;
			b->c->smem_dirty = top ? (unsigned)top | CTA__SMEM_STALE : 0;
			if (top && d->ncover && d->ncover <= KC_COVER_MAX) {
				/* What the first region writes whole needs no
				 * zeroing before it (struct cta__kc_cover): the rest
				 * is zeroed once it ran, before any thread reads. */
				zero_later = 1;
				b->c->smem_dirty = 0;
			} else if (top && (b->hot_nr > 1 || b->hot_lo[0])) {
				/* Only what the last block wrote (d->write). */
				zero_hot(b, d, b->c, 0);
				b->c->smem_dirty = 0;
			}
		}
	}
	struct cta__idx ix;
	ix.tid.x = ix.tid.y = ix.tid.z = 0;
	l->tid = ix.tid;
	ix.bid = l->bid;
	ix.bdim = l->bdim;
	ix.gdim = l->gdim;
	ix.spin = cur->spin;
	ix.add = cur->add;
	l->active = 1;
	l->run_x0 = 0;
	l->row_end = l->bdim.x;
	kc_fis_fn fn = (kc_fis_fn)d->fis;
	const void *args = k->args;
	struct cta__cta *c = b->c;
	struct cta_sim *s = u->sim;
	unsigned char *uin = b->ubuf + 2 * stride; /* the first round's: zeros */
	memset(uin, 0, ub);
	int ucur = 0, rotating = 1, perthread = 0, pervt = 0;
	unsigned rot = 0, cnt = n, region = 0;
	unsigned *ord = b->runq, *nxt = b->waiter;
	struct cta__kc_run r;
	r.slots = b->slots;
	r.cont = b->cont;
	r.n = n;
	r.lo2 = r.hi2 = 0;
	uint64_t T = cur->t0;
	struct cta__kc_ws ws;
	if (pk) {
		/* Woken: the block goes on in its work-stealing loop, with
		 * what it kept (the other blocks this host thread ran since
		 * reused the buffers). */
		ix = pk->loc.ix;
		T = pk->loc.T;
		rot = pk->loc.rot;
		region = pk->loc.region;
		ucur = pk->loc.ucur;
		ws = pk->ws;
		unsigned nw = pk->nw;
		wait_room(b, nw);
		park_restore(b, pk, uin, ub);
		if (nw) {
			b->wbar = pk->wbar;
			b->wpar = pk->wpar;
		}
		if (!b->spare_park || b->spare_park->cap < pk->cap) {
			free(b->spare_park);
			b->spare_park = pk;
		} else {
			free(pk);
		}
		if (nw)
			goto wait_resume;
		goto ws_resume;
	}
	for (;;) {
		r.t = T;
		r.bar_max = r.end_max = r.arrived = r.exited = 0;
		r.want = CTA__KC_NONE;
		r.first_vt = r.last_vt = 0;
		unsigned last;
		if (perthread) {
			for (unsigned i = 0; i < cnt; i++) {
				unsigned t = ord[i];
				unsigned char *mine = b->urep + t * stride;
				r.region = b->cont[t] + 1u;
				r.uin = mine + b->cont[t] * ub;
				r.uout = mine;
				r.lo = t;
				r.hi = t + 1;
				polls_flush(b);
				fn(args, l, &ix, &r);
			}
			last = ord[cnt - 1];
		} else {
			r.region = region;
			r.uin = uin;
			r.uout = b->ubuf + ucur * stride;
			if (rotating) {
				/* One call for both runs of the rotation. */
				r.lo = rot;
				r.hi = n;
				r.lo2 = 0;
				r.hi2 = rot;
				polls_flush(b);
				fn(args, l, &ix, &r);
				r.lo2 = r.hi2 = 0;
				last = rot ? rot - 1 : n - 1;
			} else if (pervt) {
				/* Woken from an mbarrier wait: each thread from its
				 * own time. */
				for (unsigned i = 0; i < cnt; i++) {
					r.lo = ord[i];
					r.hi = ord[i] + 1u;
					r.t = b->vt[i];
					polls_flush(b);
					fn(args, l, &ix, &r);
				}
				last = ord[cnt - 1];
				pervt = 0;
			} else {
				/* Runs of consecutive ranks, one loop each. */
				for (unsigned i = 0; i < cnt;) {
					unsigned j = i + 1;
					while (j < cnt && ord[j] == ord[j - 1] + 1)
						j++;
					r.lo = ord[i];
					r.hi = ord[j - 1] + 1u;
					polls_flush(b);
					fn(args, l, &ix, &r);
					i = j;
				}
				last = ord[cnt - 1];
			}
		}
		if (__builtin_expect(zero_later != 0, 0)) {
			zero_hot(b, d, c, 1);
			zero_later = 0;
		}
		/* The common round (release_fast): block_reduce's ten a
		 * block. */
		if (rotating && release_fast(b, &r, &T)) {
			rot = rot ? rot - 1 : n - 1;
			uin = b->ubuf + ucur * stride + r.want * ub;
			ucur ^= 1;
			region = (unsigned)r.want + 1;
			continue;
		}
		/* What the fiber path counts at each end and arrival. */
		c->exited += r.exited;
		if (r.exited && r.end_max > c->end_t)
			c->end_t = r.end_max;
		if (b->nw) {
			/* Threads stopped at an mbarrier wait whose phase had not
			 * completed: the block waits as a whole. */
			unsigned j = b->cont[b->wrank[0]];
			if (r.arrived || b->wmixed || perthread) {
				cta__base_out_error(
				    u,
				    "kernel %s: a compiled block waits at an mbarrier while "
				    "other threads wait elsewhere (not in the loop form)",
				    k->label);
				c->exited = c->nthreads;
				break;
			}
			uin = b->ubuf + ucur * stride + j * ub;
			ucur ^= 1;
			region = j + 1;
			uint64_t vmax = 0;
			unsigned top = 0;
			for (unsigned i = 0; i < b->nw; i++) {
				vmax = b->wvt[i] > vmax ? b->wvt[i] : vmax;
				top = b->wrank[i] > top ? b->wrank[i] : top;
			}
			if (!cta__clc_wait_park(b->wbar, b->wpar, d->bars[j].file, d->bars[j].line,
			                        vmax)) {
				polls_flush(b);
				pk = park_new(b, d, n, uin, ub, 1);
				if (!pk) {
					cta__base_out_error(u, "kernel %s: out of memory",
					                    k->label);
					c->exited = c->nthreads;
					break;
				}
				/* (The thread a fiber-path deadlock report would name.) */
				l->tid = tid_of(b, l, top);
				pk->loc.ix = ix;
				pk->loc.T = T;
				pk->loc.rot = rot;
				pk->loc.region = region;
				pk->loc.ucur = ucur;
				memset(&pk->ws, 0, sizeof(pk->ws));
				pk->ws.n = n;
				pk->nw = b->nw;
				pk->wbar = b->wbar;
				pk->wpar = b->wpar;
				x->kc_park = pk;
				b->obs_on = 0;
				b->poll_on = 0;
				return CTA__KC_PARKED;
			}
		wait_resume:
			/* The phase completed: the threads go on in wake order
			 * (the reverse of their waits'), each from its own time,
			 * the wait done again in their region (its observation). */
			ord = b->runq;
			nxt = b->waiter;
			r.slots = b->slots;
			r.cont = b->cont;
			for (unsigned i = 0; i < b->nw; i++) {
				ord[i] = b->wrank[b->nw - 1 - i];
				b->vt[i] = b->wvt[b->nw - 1 - i];
			}
			cnt = b->nw;
			b->nw = 0;
			rotating = 0;
			pervt = 1;
			continue;
		}
		if (r.arrived == 0)
			break;
		u->out.crossings += r.arrived;
		c->cold_dirty = 1;
		c->bar_arrived = (unsigned)r.arrived;
		c->bar_max_t = r.bar_max;
		c->bar_file = d->bars[r.want].file;
		c->bar_line = d->bars[r.want].line;
		int self = b->cont[last] != CTA__KC_EXITED;
		if (self) {
			/* The last arrival completed the barrier. */
			const struct cta__kc_bar *at = &d->bars[b->cont[last]];
			if (c->exited && !c->bar_divergent_reported) {
				lane_at(b, last, r.last_vt);
				cta__ub(s, UB_DIVERGENT_BARRIER, u, x, at->file, at->line,
				        "%" PRIu64 " of the block's %" PRIu64
				        " threads exited without reaching this barrier",
				        c->exited, (uint64_t)c->nthreads);
			}
			if (cta__exec_bar_idle(s, c)) {
				lane_at(b, last, r.last_vt);
				cta__exec_bar_watchdog_report(u, x, c, at->file, at->line,
				                              c->bar_idle_ns);
				c->exited = c->nthreads; /* given up */
				break;
			}
		} else if (!c->bar_divergent_reported) {
			/* settle_barriers of exec.c: the missing threads ended;
			 * reported at the first waiter. */
			unsigned first = 0;
			for (unsigned i = 0; i < cnt; i++) {
				unsigned t = rotating ? (rot + i) % n : ord[i];
				if (b->cont[t] != CTA__KC_EXITED) {
					first = t;
					break;
				}
			}
			lane_at(b, first, r.first_vt);
			cta__ub(s, UB_DIVERGENT_BARRIER, u, x, d->bars[r.want].file,
			        d->bars[r.want].line,
			        "%" PRIu64 " of the block's %" PRIu64
			        " threads exited without reaching this barrier",
			        c->exited, (uint64_t)c->nthreads);
		}
		/* release() */
		T = c->bar_max_t + s->dev.barrier_ns;
		c->bar_rel_t = T;
		c->bar_gen++;
		x->bar_gen = c->bar_gen;
		if (self)
			l->vtime = T;
		c->bar_arrived = 0;
		c->bar_max_t = 0;
		c->bar_file = NULL;
		c->bar_divergent_reported = 0;
		if (rotating && r.exited == 0 && !b->mixed) {
			rot = last;
		} else {
			unsigned m = 0;
			if (self)
				nxt[m++] = last;
			for (unsigned i = 0; i < cnt; i++) {
				unsigned t = rotating ? (rot + i) % n : ord[i];
				if (b->cont[t] != CTA__KC_EXITED && !(self && t == last))
					nxt[m++] = t;
			}
			unsigned *tmp = ord;
			ord = nxt;
			nxt = tmp;
			cnt = m;
			rotating = 0;
		}
		if (b->mixed && !perthread) {
			/* Threads wait at different barriers (reported as UB): each
			 * goes on with its own copy of the block-uniform values. */
			if (!grow_buf(&b->urep, &b->urep_cap, (size_t)n * stride + 64)) {
				cta__base_out_error(u, "kernel %s: out of memory", k->label);
				c->exited = c->nthreads;
				break;
			}
			for (unsigned i = 0; i < cnt; i++) {
				unsigned t = ord[i];
				size_t o = b->cont[t] * ub;
				memcpy(b->urep + t * stride + o, b->ubuf + ucur * stride + o, ub);
			}
			perthread = 1;
		} else if (!perthread) {
			uin = b->ubuf + ucur * stride + r.want * ub;
			ucur ^= 1;
			region = (unsigned)r.want + 1;
		}
		if (perthread || d->bars[r.want].kind != 1)
			continue;
		/* Every thread entered the work-stealing loop and crossed its
		 * first barrier: the engine runs the loop for the whole block
		 * (the kernel compiler made sure every thread takes part). */
		if (!rotating || c->exited) {
			cta__base_out_error(
			    u,
			    "kernel %s: compiled work-stealing loop entered by part of the "
			    "block (a kernel compiler bug)",
			    k->label);
			c->exited = c->nthreads;
			break;
		}
		memset(&ws, 0, sizeof(ws));
		ws.fn = b->ws_fn;
		ws.arg = b->ws_arg;
		ws.mode = b->ws_mode;
		ws.file = d->bars[r.want].file;
		ws.line = d->bars[r.want].line;
		ws.n = n;
		ws.rot = rot;
		ws.t = T;
	ws_resume:;
		int wr = cta__clc_ws_run(&ws);
		if (wr == 0) {
			/* The block waits for the request as a whole. */
			polls_flush(b);
			pk = park_new(b, d, n, uin, ub, 0);
			if (!pk) {
				free(ws.vt);
				cta__base_out_error(u, "kernel %s: out of memory", k->label);
				c->exited = c->nthreads;
				break;
			}
			pk->loc.ix = ix;
			pk->loc.T = T;
			pk->loc.rot = rot;
			pk->loc.region = region;
			pk->loc.ucur = ucur;
			pk->ws = ws;
			pk->nw = 0;
			x->kc_park = pk;
			b->obs_on = 0;
			b->poll_on = 0;
			return CTA__KC_PARKED;
		}
		free(ws.vt);
		if (wr < 0) {
			c->exited = c->nthreads; /* given up */
			break;
		}
		/* The loop ended: the threads leave it in its last order, at
		 * its last barrier's release. */
		ord = b->runq;
		nxt = b->waiter;
		r.slots = b->slots;
		r.cont = b->cont;
		for (unsigned i = 0; i < n; i++)
			ord[i] = cta__regions_ws_at(&ws, i);
		cnt = n;
		rotating = 0;
		T = ws.t;
		if (uin != b->ubuf + 2 * stride) {
			memcpy(b->ubuf + 2 * stride, uin, ub);
			uin = b->ubuf + 2 * stride;
		}
	}
	if (cta_smem) {
		/* (Still stale: no thread took shared memory, and the arena
		 * holds what it held.) */
		if (!(c->smem_dirty & CTA__SMEM_STALE))
			hot_left(b, d, c, c->smem_dirty);
		c->smem = l->smem = cta_smem;
		c->smem_dirty = cta_dirty;
	}
	l->active = 0;
	b->obs_on = 0;
	b->poll_on = 0;
	return 0;
}

/* ---- clusters ---------------------------------------------------------- */

/* A body with a cluster barrier (CTA__KC_CLUSTER) runs its cluster's
 * threads one at a time, each a call of the loop form for one thread, in
 * the order the fiber path runs them (exec.c): new threads in rank order,
 * CTA after CTA; after a thread that waits, the woken threads first (the
 * unit's run queue), then new ones; after a thread that ended, new ones
 * first (its lane's thread loop claims them), then the woken; the thread
 * whose arrival completes the cluster barrier goes on at once, the others
 * after it in their arrival order; threads woken at an mbarrier go on in
 * the reverse of their waits, CTA by CTA in the order their mbarriers
 * completed. Each thread keeps its own copy of the block-uniform values
 * (as run_block_fis's per-thread mode), its CTA its own slots. While the
 * cluster waits for mbarriers, its state is a few hundred bytes (struct
 * kc_cpark), and one lane per CTA whose threads wait stands for them on
 * that CTA's mbarrier: each is woken as the fiber path's lanes of that
 * CTA would be, in the same place of the unit's run queue. */

#define KC_IDLE UINT32_MAX /* a cluster's lane that stands for no CTA */

/* A thread of the cluster: its CTA, its rank, the time it goes on from. */
struct kc_item {
	uint32_t cta, rank;
	uint64_t vt;
};

/* The cluster being run on this host thread (buffers kept from cluster to
 * cluster). */
struct kc_cl {
	unsigned char *cont, *slots, *urep, *zero;
	size_t cont_cap, slots_cap, urep_cap, zero_cap;
	struct kc_item *q, *cw, *mw; /* run queue (a ring), cluster barrier, mbarriers */
	unsigned qh, qn, ncw, icap;
	unsigned *nmw;   /* per CTA: its threads at mbar[c], at mw + c * n in wait order */
	unsigned *mpar;  /* per CTA: the phase parity they wait for */
	uint64_t **mbar; /* per CTA: the mbarrier */
	unsigned ccap;
};
static _Thread_local struct kc_cl kcl;

/* A waiting cluster: its state (data: run_cluster's buffers, compacted),
 * and the lanes it made. */
struct kc_chead {
	uint64_t *bar;
	unsigned par, nw;
	size_t off, nruns; /* its waiters: runs at data + off */
};
struct kc_cpark {
	unsigned nctas, n, nref, nlanes; /* nref: proxies (struct cta__kc_park) of its lanes */
	struct cta__lane_x **lanes;      /* nctas + 1 at most */
	struct kc_chead *head;           /* per CTA */
	size_t cw_off, cw_nruns;         /* the cluster barrier's waiters */
	size_t pl_off;                   /* the threads' counts of yield points (rle_put) */
	unsigned char *data;
	size_t cap;
};
/* A run of items: ranks of one CTA at one time, each one more than the
 * one before (dir 1) or one less (dir -1: the wake order of an mbarrier's
 * waiters is the reverse of their waits, and so the next waits' order). */
struct kc_irun {
	uint32_t cta, rank, count;
	int32_t dir;
	uint64_t vt;
};

/* The run of v from i on: its length and direction. */
static struct kc_irun irun_at(const struct kc_item *v, unsigned m, unsigned i)
{
	struct kc_irun r = {v[i].cta, v[i].rank, 1, 1, v[i].vt};
	if (i + 1 < m && v[i + 1].rank + 1 == r.rank)
		r.dir = -1;
	while (i + r.count < m && v[i + r.count].cta == r.cta &&
	       v[i + r.count].rank == r.rank + (uint32_t)r.dir * r.count &&
	       v[i + r.count].vt == r.vt)
		r.count++;
	return r;
}

static size_t irun_count(const struct kc_item *v, unsigned m)
{
	size_t k = 0;
	for (unsigned i = 0; i < m; k++)
		i += irun_at(v, m, i).count;
	return k;
}

static unsigned char *irun_put(unsigned char *o, const struct kc_item *v, unsigned m)
{
	for (unsigned i = 0; i < m;) {
		struct kc_irun r = irun_at(v, m, i);
		memcpy(o, &r, sizeof(r));
		o += sizeof(r);
		i += r.count;
	}
	return o;
}

static unsigned irun_get(const unsigned char *in, size_t nruns, struct kc_item *v)
{
	unsigned m = 0;
	for (size_t k = 0; k < nruns; k++, in += sizeof(struct kc_irun)) {
		struct kc_irun r;
		memcpy(&r, in, sizeof(r));
		for (uint32_t i = 0; i < r.count; i++)
			v[m++] = (struct kc_item){r.cta, r.rank + (uint32_t)r.dir * i, r.vt};
	}
	return m;
}

/* Runs of equal records of rec bytes (nrec of them at p): a count of 8
 * bytes, then the record. */
static size_t rle_len(const unsigned char *p, size_t nrec, size_t rec)
{
	size_t k = 0;
	for (size_t i = 0; i < nrec; i++)
		k += i == 0 || memcmp(p + i * rec, p + (i - 1) * rec, rec);
	return k * (8 + rec);
}

static unsigned char *rle_put(unsigned char *o, const unsigned char *p, size_t nrec, size_t rec)
{
	for (size_t i = 0; i < nrec;) {
		uint64_t count = 1;
		while (i + count < nrec && !memcmp(p + (i + count) * rec, p + i * rec, rec))
			count++;
		memcpy(o, &count, 8);
		memcpy(o + 8, p + i * rec, rec);
		o += 8 + rec;
		i += count;
	}
	return o;
}

static const unsigned char *rle_get(const unsigned char *in, unsigned char *p, size_t nrec,
                                    size_t rec)
{
	for (size_t i = 0; i < nrec;) {
		uint64_t count;
		memcpy(&count, in, 8);
		for (uint64_t j = 0; j < count; j++, i++)
			memcpy(p + i * rec, in + 8, rec);
		in += 8 + rec;
	}
	return in;
}

static unsigned cluster_waiting(const struct cta__kc_park *pk)
{
	return pk->cl_cta == KC_IDLE ? 0 : pk->cl->head[pk->cl_cta].nw;
}

static int cluster_wait_time(const struct cta__kc_park *pk, unsigned rank, uint64_t *vt)
{
	if (pk->cl_cta == KC_IDLE)
		return 0;
	const struct kc_chead *h = &pk->cl->head[pk->cl_cta];
	const unsigned char *in = pk->cl->data + h->off;
	for (size_t k = 0; k < h->nruns; k++, in += sizeof(struct kc_irun)) {
		struct kc_irun r;
		memcpy(&r, in, sizeof(r));
		uint32_t lo = r.dir > 0 ? r.rank : r.rank - (r.count - 1);
		if (rank >= lo && rank - lo < r.count) {
			*vt = r.vt;
			return 1;
		}
	}
	return 0;
}

static void cluster_free(struct kc_cpark *cl)
{
	free(cl->lanes);
	free(cl->head);
	free(cl->data);
	free(cl);
}

static void cluster_proxy_free(struct cta__kc_park *pk)
{
	struct kc_cpark *cl = pk->cl;
	free(pk);
	if (--cl->nref == 0)
		cluster_free(cl);
}

/* Lane y stands for CTA cta of cl (KC_IDLE: none); 0, or -1 when out of
 * memory. */
static int cluster_proxy(struct kc_cpark *cl, struct cta__lane_x *y, unsigned cta)
{
	struct cta__kc_park *pk = malloc(sizeof(*pk));
	if (!pk)
		return -1;
	memset(pk, 0, sizeof(*pk));
	pk->cl = cl;
	pk->cl_cta = cta;
	cl->nref++;
	y->kc_park = pk;
	return 0;
}

/* Room in kcl for a cluster of nctas CTAs of n threads; 0 or -1. */
static int cluster_room(struct kc_cl *K, const struct cta__kc_def *d, unsigned nctas, unsigned n)
{
	size_t N = (size_t)nctas * n, ub = d->uni_bytes, stride = (size_t)d->nbar * ub;
	if (!grow_buf(&K->cont, &K->cont_cap, N + 64) ||
	    !grow_buf(&K->slots, &K->slots_cap, N * d->slot_bytes + 64) ||
	    !grow_buf(&K->urep, &K->urep_cap, N * stride + 64) ||
	    !grow_buf(&K->zero, &K->zero_cap, ub + 64))
		return -1;
	if (N > K->icap) {
		struct kc_item *q = realloc(K->q, N * sizeof(*q));
		if (q)
			K->q = q;
		struct kc_item *cw = realloc(K->cw, N * sizeof(*cw));
		if (cw)
			K->cw = cw;
		struct kc_item *mw = realloc(K->mw, N * sizeof(*mw));
		if (mw)
			K->mw = mw;
		if (!q || !cw || !mw)
			return -1;
		K->icap = (unsigned)N;
	}
	if (nctas > K->ccap) {
		unsigned *nmw = realloc(K->nmw, nctas * sizeof(*nmw));
		if (nmw)
			K->nmw = nmw;
		unsigned *mpar = realloc(K->mpar, nctas * sizeof(*mpar));
		if (mpar)
			K->mpar = mpar;
		uint64_t **mbar = realloc(K->mbar, nctas * sizeof(*mbar));
		if (mbar)
			K->mbar = mbar;
		if (!nmw || !mpar || !mbar)
			return -1;
		K->ccap = nctas;
	}
	return 0;
}

static inline void q_push(struct kc_cl *K, unsigned N, struct kc_item it)
{
	K->q[(K->qh + K->qn++) % N] = it;
}

static inline struct kc_item q_pop(struct kc_cl *K, unsigned N)
{
	struct kc_item it = K->q[K->qh];
	K->qh = (K->qh + 1) % N;
	K->qn--;
	return it;
}

/* CTA c's threads at its mbarrier go on, in the reverse of their waits. */
static void cluster_wake(struct kc_cl *K, unsigned N, unsigned n, unsigned c)
{
	for (unsigned i = K->nmw[c]; i-- > 0;)
		q_push(K, N, K->mw[(size_t)c * n + i]);
	K->nmw[c] = 0;
}

/* kcl's state into cl->data; 0 or -1. */
static int cluster_pack(struct kc_cpark *cl, const struct cta__kc_def *d)
{
	struct kc_cl *K = &kcl;
	size_t N = (size_t)cl->nctas * cl->n, stride = (size_t)d->nbar * d->uni_bytes;
	size_t sb = N * d->slot_bytes;
	size_t need = rle_len(K->cont, N, 1) + rle_len(K->slots, sb / 16, 16) +
	              (stride ? rle_len(K->urep, N, stride) : 0) +
	              irun_count(K->cw, K->ncw) * sizeof(struct kc_irun);
	for (unsigned c = 0; c < cl->nctas; c++)
		need += irun_count(K->mw + (size_t)c * cl->n, K->nmw[c]) * sizeof(struct kc_irun);
	const unsigned char *pc = (const unsigned char *)kcb.polls;
	need += rle_len(pc, N, sizeof(*kcb.polls));
	if (need > cl->cap || need < cl->cap / 4) {
		unsigned char *p = malloc(need ? need : 1);
		if (!p)
			return -1;
		free(cl->data);
		cl->data = p;
		cl->cap = need;
	}
	unsigned char *o = rle_put(cl->data, K->cont, N, 1);
	o = rle_put(o, K->slots, sb / 16, 16);
	if (stride)
		o = rle_put(o, K->urep, N, stride);
	cl->cw_off = (size_t)(o - cl->data);
	cl->cw_nruns = irun_count(K->cw, K->ncw);
	o = irun_put(o, K->cw, K->ncw);
	for (unsigned c = 0; c < cl->nctas; c++) {
		struct kc_chead *h = &cl->head[c];
		const struct kc_item *v = K->mw + (size_t)c * cl->n;
		h->bar = K->mbar[c];
		h->par = K->mpar[c];
		h->nw = K->nmw[c];
		h->off = (size_t)(o - cl->data);
		h->nruns = irun_count(v, K->nmw[c]);
		o = irun_put(o, v, K->nmw[c]);
	}
	cl->pl_off = (size_t)(o - cl->data);
	rle_put(o, pc, N, sizeof(*kcb.polls));
	return 0;
}

/* What cluster_pack kept, back into kcl. */
static void cluster_unpack(const struct kc_cpark *cl, const struct cta__kc_def *d)
{
	struct kc_cl *K = &kcl;
	size_t N = (size_t)cl->nctas * cl->n, stride = (size_t)d->nbar * d->uni_bytes;
	const unsigned char *in = rle_get(cl->data, K->cont, N, 1);
	in = rle_get(in, K->slots, N * d->slot_bytes / 16, 16);
	if (stride)
		rle_get(in, K->urep, N, stride);
	K->ncw = irun_get(cl->data + cl->cw_off, cl->cw_nruns, K->cw);
	for (unsigned c = 0; c < cl->nctas; c++) {
		const struct kc_chead *h = &cl->head[c];
		K->mbar[c] = h->bar;
		K->mpar[c] = h->par;
		K->nmw[c] = irun_get(cl->data + h->off, h->nruns, K->mw + (size_t)c * cl->n);
	}
	rle_get(cl->data + cl->pl_off, (unsigned char *)kcb.polls, N, sizeof(*kcb.polls));
}

static uint64_t cluster_exited(const struct cta__unit *u)
{
	uint64_t e = 0;
	for (unsigned i = 0; i < u->nctas; i++)
		e += u->ctas[i].exited;
	return e;
}

/* The lane as thread `rank` of CTA `cta` at virtual time vt (a report). */
static void cluster_lane_at(struct kc_block *b, unsigned *in, unsigned cta, unsigned rank,
                            uint64_t vt)
{
	if (*in != cta) {
		cta__exec_lane_enter(b->x, cta);
		*in = cta;
	}
	lane_at(b, rank, vt);
}

/* cluster_release of exec.c: the waiters go on at the latest arrival plus
 * the barrier's cost, in their arrival order. */
static uint64_t cluster_release(struct kc_cl *K, unsigned N, struct cta__unit *u)
{
	const struct cta_sim *s = u->sim;
	uint64_t t = u->cbar_max_t +
	             (s->dev.cluster_barrier_ns ? s->dev.cluster_barrier_ns : s->dev.barrier_ns);
	u->cbar_gen++;
	for (unsigned i = 0; i < K->ncw; i++) {
		struct kc_item it = K->cw[i];
		it.vt = t;
		q_push(K, N, it);
	}
	K->ncw = 0;
	u->cbar_arrived = 0;
	u->cbar_max_t = 0;
	return t;
}

/* The lanes of cl in u's run queue (woken: their mbarrier's phase
 * completed), out of it in its order: their CTAs' threads go on (when
 * `wake`), and the lanes wait no more; idle lanes lose their proxies too. */
static void cluster_drain(struct kc_cpark *cl, struct cta__unit *u, unsigned N, unsigned n,
                          int wake)
{
	struct kc_cl *K = &kcl;
	for (struct cta__lane_x **pp = &u->runq; *pp;) {
		struct cta__lane_x *y = *pp;
		if (!y->kc_park || y->kc_park->cl != cl) {
			pp = &y->next_run;
			continue;
		}
		*pp = y->next_run;
		unsigned c = y->kc_park->cl_cta;
		free(y->kc_park);
		cl->nref--;
		y->kc_park = NULL;
		y->l.active = 0;
		if (wake && c != KC_IDLE)
			cluster_wake(K, N, n, c);
	}
	u->runq_tail = NULL;
	for (struct cta__lane_x *z = u->runq; z; z = z->next_run)
		u->runq_tail = z;
	for (unsigned i = 0; i < cl->nlanes; i++) {
		struct cta__lane_x *y = cl->lanes[i];
		if (y->kc_park && y->kc_park->cl_cta == KC_IDLE) {
			free(y->kc_park);
			cl->nref--;
			y->kc_park = NULL;
		}
	}
}

/* Nothing of the cluster can run: threads whose mbarrier phase completed
 * meanwhile go on (the fiber path woke them as it completed); 1 when some
 * do. */
static int cluster_catch_up(struct cta__lane_x *x, struct kc_cpark *cl, unsigned *in, unsigned N,
                            unsigned n)
{
	struct kc_cl *K = &kcl;
	struct cta__unit *u = x->l.unit;
	if (cl)
		cluster_drain(cl, u, N, n, 1);
	for (unsigned c = 0; c < u->nctas; c++) {
		if (!K->nmw[c])
			continue;
		int parked = 0;
		for (unsigned i = 0; cl && i < cl->nlanes; i++)
			parked |= cl->lanes[i]->kc_park && cl->lanes[i]->kc_park->cl_cta == c;
		if (parked)
			continue;
		if (*in != c) {
			cta__exec_lane_enter(x, c);
			*in = c;
		}
		if (!cta__clc_wait_blocks(K->mbar[c], K->mpar[c]))
			cluster_wake(K, N, n, c);
	}
	return K->qn != 0;
}

/* The cluster of lane x ended (or was given up): its other lanes take no
 * more part (off the run queue and any mbarrier: a given-up cluster may
 * leave some there), x ends as runner_main has it, and cl goes once no
 * proxy holds it. */
static void cluster_retire(struct kc_cpark *cl, struct cta__lane_x *x, unsigned N, unsigned n)
{
	cluster_drain(cl, x->l.unit, N, n, 0);
	for (unsigned i = 0; i < cl->nlanes; i++) {
		struct cta__lane_x *y = cl->lanes[i];
		if (y == x)
			continue;
		if (y->kc_park) {
			cta__clc_unpark_lane(y);
			free(y->kc_park);
			y->kc_park = NULL;
			cl->nref--;
		}
		if (y->state != L_DONE)
			cta__exec_lane_retire(y);
	}
	if (cl->nref == 0)
		cluster_free(cl);
}

/* Cluster unit of lane x (fresh when cl is NULL, else woken: `woke`, the
 * proxy of the lane x that was woken, taken from x already), as described
 * above. 0 once every thread ended, CTA__KC_PARKED when it waits, -1 when
 * out of memory before anything ran. */
static int run_cluster(struct cta__lane_x *x, const struct cta__kc_def *d, struct kc_cpark *cl,
                       unsigned woke)
{
	struct cta__lane *l = &x->l;
	struct cta__unit *u = l->unit;
	struct cta__kernel *k = u->k;
	struct cta_sim *s = u->sim;
	struct kc_block *b = &kcb;
	struct kc_cl *K = &kcl;
	const unsigned nctas = u->nctas, n = (unsigned)u->ctas[0].nthreads, N = nctas * n;
	const size_t ub = d->uni_bytes, stride = (size_t)d->nbar * ub;
	if (cluster_room(K, d, nctas, n)) {
		if (!cl)
			return -1; /* (the thread loop takes over) */
		/* Woken, its state in cl: given up. */
		cta__base_out_error(u, "kernel %s: out of memory", k->label);
		for (unsigned c = 0; c < nctas; c++)
			u->ctas[c].exited = u->ctas[c].nthreads;
		cluster_retire(cl, x, N, n);
		l->active = 0;
		return 0;
	}
	if (b->wcap < 1)
		wait_room(b, 1);
	if (polls_start(b, x, N)) {
		if (!cl)
			return -1;
		cta__base_out_error(u, "kernel %s: out of memory", k->label);
		for (unsigned c = 0; c < nctas; c++)
			u->ctas[c].exited = u->ctas[c].nthreads;
		cluster_retire(cl, x, N, n);
		l->active = 0;
		return 0;
	}
	struct cta__cursor *cur = l->cursor;
	unsigned next_new = N;
	K->qh = K->qn = 0;
	if (!cl) {
		cur->left = 0;
		cur->tid.x = cur->tid.y = cur->tid.z = 0;
		cur->cta = nctas;
		next_new = 0;
		K->ncw = 0;
		for (unsigned c = 0; c < nctas; c++)
			K->nmw[c] = 0;
	} else {
		cluster_unpack(cl, d);
		/* x's CTA's threads first, then those of the lanes woken after
		 * x, in the run queue's order. */
		cluster_wake(K, N, n, woke);
		cluster_drain(cl, u, N, n, 1);
	}
	b->x = x;
	b->u = u;
	b->d = d;
	b->n = n;
	b->obs_on = 0;
	b->mixed = 0;
	b->one_row = l->bdim.y == 1 && l->bdim.z == 1;
	struct cta__idx ix;
	ix.tid.x = ix.tid.y = ix.tid.z = 0;
	l->tid = ix.tid;
	ix.bdim = l->bdim;
	ix.gdim = l->gdim;
	ix.spin = cur->spin;
	ix.add = cur->add;
	l->active = 1;
	l->run_x0 = 0;
	l->row_end = l->bdim.x;
	kc_fis_fn fn = (kc_fis_fn)d->fis;
	const void *args = k->args;
	const uint64_t total = (uint64_t)N;
	unsigned in = UINT32_MAX; /* the CTA the lane is in */
	int ended = 0, self = 0;  /* the last thread ended; its arrival released */
	struct kc_item it = {0, 0, 0};
	struct cta__kc_run r;
	r.lo2 = r.hi2 = 0;
	r.n = n;
	for (;;) {
		int fresh = 0;
		if (self) {
			self = 0; /* it: the releasing thread, at the release */
		} else if (ended && next_new < N) {
			it = (struct kc_item){next_new / n, next_new % n, cur->t0};
			next_new++;
			fresh = 1;
		} else if (K->qn) {
			it = q_pop(K, N);
		} else if (next_new < N) {
			it = (struct kc_item){next_new / n, next_new % n, cur->t0};
			next_new++;
			fresh = 1;
		} else if (cluster_catch_up(x, cl, &in, N, n)) {
			continue;
		} else if (u->cbar_arrived && u->cbar_arrived + cluster_exited(u) == total &&
		           !u->watchdog) {
			/* settle_barriers: the missing threads ended; reported at the
			 * first waiter. */
			struct kc_item w = K->cw[0];
			const struct cta__kc_bar *at =
			    &d->bars[K->cont[(size_t)w.cta * n + w.rank]];
			cluster_lane_at(b, &in, w.cta, w.rank, w.vt);
			cta__ub(s, UB_DIVERGENT_BARRIER, u, x, at->file, at->line,
			        "%" PRIu64 " threads of the cluster exited without reaching this "
			        "cluster barrier",
			        cluster_exited(u));
			cluster_release(K, N, u);
			ended = 0;
			continue;
		} else {
			break;
		}
		ended = 0;
		if (it.cta != in) {
			cta__exec_lane_enter(x, it.cta);
			in = it.cta;
		}
		ix.bid = l->bid;
		b->c = x->cta;
		struct cta__cta *c = x->cta;
		unsigned char *cont = K->cont + (size_t)it.cta * n;
		unsigned char *mine = K->urep + ((size_t)it.cta * n + it.rank) * stride;
		r.slots = K->slots + (size_t)it.cta * n * d->slot_bytes;
		r.cont = cont;
		r.region = fresh ? 0 : cont[it.rank] + 1u;
		r.uin = fresh ? K->zero : mine + cont[it.rank] * ub;
		r.uout = mine;
		r.lo = it.rank;
		r.hi = it.rank + 1u;
		r.t = it.vt;
		r.bar_max = r.end_max = r.arrived = r.exited = 0;
		r.want = CTA__KC_NONE;
		r.first_vt = r.last_vt = 0;
		b->nw = 0;
		polls_flush(b);
		fn(args, l, &ix, &r);
		if (r.exited) {
			c->exited++;
			if (r.end_max > c->end_t)
				c->end_t = r.end_max;
			ended = 1;
		} else if (b->nw) {
			/* At an mbarrier whose phase has not completed. */
			unsigned m = K->nmw[it.cta];
			if (m && (K->mbar[it.cta] != b->wbar || K->mpar[it.cta] != b->wpar)) {
				cta__base_out_error(
				    u,
				    "kernel %s: threads of a compiled cluster's CTA wait at two "
				    "mbarriers or phases (not in the loop form)",
				    k->label);
				goto given_up;
			}
			K->mbar[it.cta] = b->wbar;
			K->mpar[it.cta] = b->wpar;
			K->mw[(size_t)it.cta * n + m] =
			    (struct kc_item){it.cta, it.rank, b->wvt[0]};
			K->nmw[it.cta] = m + 1;
		} else if (r.arrived && d->bars[cont[it.rank]].kind == 3) {
			/* cta__cluster_sync. */
			const struct cta__kc_bar *at = &d->bars[cont[it.rank]];
			uint64_t vt = r.bar_max;
			u->out.crossings++;
			u->cbar_arrived++;
			if (vt > u->cbar_max_t)
				u->cbar_max_t = vt;
			uint64_t exited = cluster_exited(u);
			if (u->cbar_arrived + exited == total) {
				if (exited) {
					lane_at(b, it.rank, vt);
					cta__ub(s, UB_DIVERGENT_BARRIER, u, x, at->file, at->line,
					        "%" PRIu64 " threads of the cluster exited without "
					        "reaching this cluster barrier",
					        exited);
				}
				it.vt = cluster_release(K, N, u);
				self = 1;
			} else {
				K->cw[K->ncw++] = (struct kc_item){it.cta, it.rank, vt};
			}
		} else {
			cta__base_out_error(
			    u,
			    "kernel %s: a compiled cluster's thread stopped "
			    "where the loop form cannot go on (a kernel compiler bug)",
			    k->label);
			goto given_up;
		}
	}
	if (cluster_exited(u) < total) {
		int waits = 0;
		for (unsigned cc = 0; cc < nctas; cc++)
			waits |= K->nmw[cc] != 0;
		if (!waits) {
			cta__base_out_error(u,
			                    "kernel %s: a compiled cluster can never continue (its "
			                    "threads wait at the cluster barrier)",
			                    k->label);
			goto given_up;
		}
		/* The cluster waits: its state into the park, and a lane on each
		 * mbarrier its threads wait at (this one first). */
		if (!cl) {
			cl = calloc(1, sizeof(*cl));
			if (cl) {
				cl->lanes = malloc((nctas + 1) * sizeof(*cl->lanes));
				cl->head = calloc(nctas, sizeof(*cl->head));
			}
			if (!cl || !cl->lanes || !cl->head) {
				if (cl)
					cluster_free(cl);
				cl = NULL;
				cta__base_out_error(u, "kernel %s: out of memory", k->label);
				goto given_up;
			}
			cl->nctas = nctas;
			cl->n = n;
			cl->lanes[cl->nlanes++] = x;
		}
		polls_flush(b);
		b->poll_on = 0;
		if (cluster_pack(cl, d)) {
			cta__base_out_error(u, "kernel %s: out of memory", k->label);
			goto given_up;
		}
		cl->nref++; /* (held while the lanes are given their parts) */
		int x_used = 0;
		for (unsigned cc = 0; cc < nctas; cc++) {
			if (!K->nmw[cc])
				continue;
			struct cta__lane_x *y = NULL;
			for (unsigned i = 0; i < cl->nlanes && !y; i++) {
				struct cta__lane_x *z = cl->lanes[i];
				if (z != x && z->kc_park && z->kc_park->cl_cta == cc)
					y = z; /* still waiting there, woken by the next phase */
			}
			if (y)
				continue;
			if (!x_used) {
				y = x;
				x_used = 1;
			}
			for (unsigned i = 0; i < cl->nlanes && !y; i++)
				if (cl->lanes[i] != x && !cl->lanes[i]->kc_park &&
				    cl->lanes[i]->state != L_DONE)
					y = cl->lanes[i];
			if (!y) {
				y = cta__exec_lane_aux(u);
				if (!y) {
					cl->nref--;
					cta__base_out_error(u, "kernel %s: out of memory",
					                    k->label);
					goto given_up;
				}
				cl->lanes[cl->nlanes++] = y;
			}
			if (cluster_proxy(cl, y, cc)) {
				cl->nref--;
				cta__base_out_error(u, "kernel %s: out of memory", k->label);
				goto given_up;
			}
			const struct kc_item *v = K->mw + (size_t)cc * n;
			uint64_t vmax = 0;
			unsigned top = 0;
			for (unsigned i = 0; i < K->nmw[cc]; i++) {
				vmax = v[i].vt > vmax ? v[i].vt : vmax;
				top = v[i].rank > top ? v[i].rank : top;
			}
			const struct cta__kc_bar *at =
			    &d->bars[K->cont[(size_t)cc * n + v[0].rank]];
			cta__exec_lane_enter(y, cc);
			y->l.active = 1;
			/* (The thread a fiber-path deadlock report would name.) */
			y->l.tid = tid_of(b, &y->l, top);
			cta__clc_park_lane(y, K->mbar[cc], K->mpar[cc], at->file, at->line, vmax);
		}
		if (!x_used) {
			/* Every CTA that waits has its lane: this one only gives up
			 * its runner (runner_main). */
			if (cluster_proxy(cl, x, KC_IDLE)) {
				cl->nref--;
				cta__base_out_error(u, "kernel %s: out of memory", k->label);
				goto given_up;
			}
			l->active = 0;
		}
		cl->nref--;
		return CTA__KC_PARKED;
	}
	goto done;
given_up:
	for (unsigned cc = 0; cc < nctas; cc++)
		u->ctas[cc].exited = u->ctas[cc].nthreads;
done:
	b->poll_on = 0;
	if (cl)
		cluster_retire(cl, x, N, n);
	l->active = 0;
	return 0;
}

/* ---- spinning threads ------------------------------------------------- */

/* A body with yield points in a loop (CTA__KC_SPIN) runs its block's
 * threads one at a time, each a call of the loop form for one thread, in
 * the order the fiber path runs them (exec.c), as run_cluster does a
 * cluster's: new threads in rank order; after a thread that waits, the
 * woken threads first (the run queue), then new ones; after a thread that
 * ended, new ones first; the thread whose arrival completes the
 * __syncthreads goes on at once, the others after it in their arrival
 * order. A thread that spins at a yield point (cta__kc_spin_blocks, as
 * cta__spin_poll on fibers) ends its call there. Once nothing can run,
 * the block waits as one lane on its unit's spinners (its state a few
 * hundred bytes, struct cta__kc_park), where the fiber path keeps a lane
 * and a stack per thread; the EV_POLL that wakes the lane wakes its
 * spinning threads as it would their lanes: in the reverse of their
 * suspensions, each at the later of its time and the poll's. */

/* ---- a blocking kernel's accesses (device wait_*) ----------------------
 * exec.c's wait_access and the arrival of cta__grid_sync, for the thread
 * b->cur of a CTA__KC_SPIN block: where the fiber path suspends the
 * thread until the engine's clock reaches its own (wait_for_time), the
 * thread ends its call here as a spinning one does, marked timed, at
 * step 1 (before the access's turn) or 2 (before its cost); run_spin
 * keeps it parked until an EV_POLL at its time, then does the rest of
 * the step (kc_wait_go) before the thread goes on after its yield point.
 * Byte-identical to the fiber path (tests/cli/regions.sh). */

/* The state becomes the thread's own (exec.c's spin_of, which starts it
 * for a thread the lane did not run; a thread that spun before the model
 * applied keeps its rounds and its since, and an access end it never
 * had). */
static void kc_wait_own(struct kc_spin *sp, uint64_t vt)
{
	if (sp->own)
		return;
	sp->own = 1;
	if (sp->started) {
		sp->acc_end = UINT64_MAX;
		return;
	}
	sp->since = vt;
	sp->rounds = 0;
	sp->acc_end = vt;
	sp->acc_idle = 0;
	sp->acc_addr = 0;
}

static int kc_wait_park(struct kc_block *b, struct kc_spin *sp, struct cta__lane *l, unsigned stage)
{
	sp->stage = (uint8_t)stage;
	sp->timed = 1;
	__atomic_store_n(&l->unit->sim->any_spin, 1, __ATOMIC_RELAXED);
	b->spun = 1;
	b->spun_vt = l->vtime;
	return 1;
}

/* The access from step `stage` on, the engine's clock at the thread's:
 * 1 when the thread waits again (for its turn's start). */
static int kc_wait_go(struct kc_block *b, struct kc_spin *sp, struct cta__lane *l, unsigned stage)
{
	struct cta__unit *u = l->unit;
	struct cta_sim *s = u->sim;
	const struct cta_device_model *d = &s->dev;
	unsigned kind = (unsigned)(sp->acc & 3);
	if (stage == 1) {
		int atomic = sp->grid || kind == CTA__ACC_ATOMIC;
		unsigned turn = sp->grid                            ? d->wait_sync_ps
		                : kind == CTA__ACC_ATOMIC           ? d->wait_turn_ps
		                : kind == CTA__ACC_LOAD && sp->poll ? d->wait_poll_ps
		                                                    : 0;
		uintptr_t a = sp->grid ? (uintptr_t)&u->k->gsync_count : (uintptr_t)(sp->acc >> 2);
		sp->seen = 0;
		if (atomic ? turn || d->wait_hit_ns : turn != 0) {
			unsigned seen;
			l->vtime = cta__exec_wait_turn(s, u->k, l->bid, l->cta_rank, b->cur, a,
			                               l->vtime, turn, &seen);
			sp->seen = (uint8_t)seen;
			if (l->vtime > s->now)
				return kc_wait_park(b, sp, l, 2);
		}
		if (atomic)
			l->vtime += cta__exec_wait_cost(d, sp->seen);
		else if (kind == CTA__ACC_LOAD)
			l->vtime += d->wait_load_ns;
	} else {
		l->vtime += sp->grid || kind == CTA__ACC_ATOMIC ? cta__exec_wait_cost(d, sp->seen)
		                                                : d->wait_load_ns;
	}
	sp->stage = 0;
	sp->acc_end = l->vtime;
	return 0;
}

/* A yield point making access acc (exec.c's wait_access). */
static int kc_wait_access(struct kc_block *b, struct kc_spin *sp, struct cta__lane *l, uint64_t acc,
                          const char *file, unsigned line)
{
	l->polls = CTA__POLL_BUDGET - 1;
	kc_wait_own(sp, l->vtime);
	unsigned kind = (unsigned)(acc & 3);
	if (l->vtime != sp->acc_end) {
		sp->acc_idle = 0;
		sp->rounds = 0;
	} else {
		sp->acc_idle++;
	}
	int same = (acc >> 2) == sp->acc_addr;
	if (kind != CTA__ACC_NONE) {
		if (!same)
			sp->rounds = 0;
		sp->acc_addr = acc >> 2;
	}
	int wait = kind == CTA__ACC_ATOMIC || kind == CTA__ACC_STORE;
	sp->poll = (uint8_t)cta__exec_wait_polls(kind, acc, same, sp->acc_idle, l->unit->k);
	if (sp->acc_idle && !(sp->acc_idle % CTA__POLL_BUDGET)) {
		sp->rounds++;
		uint64_t mult = sp->rounds / CTA__SPIN_RAMP;
		mult = mult < 1 ? 1 : mult > CTA__SPIN_MAX ? CTA__SPIN_MAX : mult;
		const uint64_t round = (uint64_t)CTA__POLL_BUDGET * CTA__POLL_NS;
		l->vtime += kind == CTA__ACC_NONE ? round * mult : round * (mult - 1);
		sp->file = file;
		sp->line = (int)line;
		wait = 1;
	}
	sp->acc = acc;
	sp->grid = 0;
	if ((wait || (kind == CTA__ACC_LOAD && sp->acc_idle >= 2)) && l->vtime > l->unit->sim->now)
		return kc_wait_park(b, sp, l, 1);
	return kc_wait_go(b, sp, l, 1);
}

/* Thread 0's arrival at a cta_grid_sync (cta__grid_sync's). */
static int kc_wait_arrive(struct kc_block *b, struct kc_spin *sp, struct cta__lane *l)
{
	kc_wait_own(sp, l->vtime);
	sp->acc = 0;
	sp->grid = 1;
	if (l->vtime > l->unit->sim->now)
		return kc_wait_park(b, sp, l, 1);
	return kc_wait_go(b, sp, l, 1);
}

static int kc_grid_timed(int op)
{
	struct kc_block *b = &kcb;
	struct cta__lane *l = &b->x->l;
	if (!cta__exec_wait_model(l->unit->sim, l->unit->k))
		return 0;
	b->grid_op = op;
	return 1;
}

int cta__kc_grid_timed(void)
{
	return kc_grid_timed(1);
}

int cta__kc_grid_timed_poll(void)
{
	return kc_grid_timed(2);
}

int cta__regions_spin_kept(const struct cta__lane_x *x, uint64_t now, uint64_t *t)
{
	const struct cta__kc_park *pk = x->kc_park;
	if (!pk->spin || pk->untimed || pk->timed_min <= now)
		return 0;
	*t = pk->timed_min;
	return 1;
}

int cta__kc_spin_blocks(const char *file, unsigned line)
{
	struct kc_block *b = &kcb;
	struct cta__lane *l = &b->x->l;
	struct cta__unit *u = l->unit;
	struct cta_sim *s = u->sim;
	struct kc_spin *sp = &b->spins[b->cur];
	if (b->stopped)
		return 1; /* (cta__kc_grid_check) */
	if (b->grid_op) {
		int op = b->grid_op;
		b->grid_op = 0;
		return op == 1 ? kc_wait_arrive(b, sp, l)
		               : kc_wait_access(b, sp, l,
		                                (uint64_t)(uintptr_t)&u->k->gsync_gen << 2 |
		                                    CTA__ACC_LOAD,
		                                file, line);
	}
	l->polls = 0;
	if (l->comm & 2) {
		/* A write another thread may wait for: progress. */
		l->comm = 1;
		if (sp->started || sp->own)
			sp->since = l->vtime;
		if (l->vtime > __atomic_load_n(&s->progress_t, __ATOMIC_RELAXED))
			__atomic_store_n(&s->progress_t, l->vtime, __ATOMIC_RELAXED);
	}
	if (cta__exec_wait_model(s, u->k))
		return kc_wait_access(b, sp, l, cta__acc, file, line);
	if (!sp->started) {
		sp->started = 1;
		sp->since = l->vtime;
		sp->rounds = 0;
		return 0;
	}
	cta__exec_spin_backoff(&l->vtime, sp->resume_t, &sp->rounds);
	sp->file = file;
	sp->line = (int)line;
	__atomic_store_n(&s->any_spin, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&u->k->comm_state, 2, __ATOMIC_RELAXED);
	b->spun = 1;
	b->spun_vt = l->vtime;
	return 1;
}

int cta__kc_grid_check(const char *file, int line)
{
	struct kc_block *b = &kcb;
	struct cta__unit *u = b->x->l.unit;
	if (u->k->l.cooperative)
		return 1;
	cta__exec_grid_sync_stop(u, b->x, file, line);
	b->stopped = 1;
	return 0;
}

uint64_t cta__kc_grid_arrive(void)
{
	struct cta__lane *l = &kcb.x->l;
	struct cta__kernel *k = l->unit->k;
	uint64_t gen = k->gsync_gen;
	l->comm = 3;
	if (++k->gsync_count == k->nblocks) {
		k->gsync_count = 0;
		k->gsync_gen++;
	}
	return gen;
}

uint64_t cta__kc_grid_phase(void)
{
	return kcb.x->l.unit->k->gsync_gen;
}

/* Room for n threads' spinning states in b; 0 or -1. */
static int spins_room(struct kc_block *b, size_t n)
{
	if (n <= b->spins_cap)
		return 0;
	free(b->spins);
	b->spins = malloc(n * sizeof(*b->spins));
	b->spins_cap = b->spins ? n : 0;
	return b->spins ? 0 : -1;
}

/* The CTA barrier completes (barrier_release of exec.c): its waiters go on
 * at the latest arrival plus the barrier's cost, in their arrival order;
 * returns that time. */
static uint64_t spin_release(struct kc_cl *K, unsigned n, struct cta__lane_x *x, struct cta__cta *c)
{
	uint64_t t = c->bar_max_t + x->l.unit->sim->dev.barrier_ns;
	c->bar_rel_t = t;
	c->bar_gen++;
	for (unsigned i = 0; i < K->ncw; i++) {
		struct kc_item it = K->cw[i];
		it.vt = t;
		q_push(K, n, it);
	}
	K->ncw = 0;
	x->bar_gen = c->bar_gen;
	c->bar_arrived = 0;
	c->bar_max_t = 0;
	c->bar_file = NULL;
	c->bar_divergent_reported = 0;
	return t;
}

/* A spinning block's waiting threads (K->cw: at the CTA barrier; K->mw:
 * spinning), m of them in their order, as runs of consecutive ranks,
 * going up or down (WRUN_DOWN), at one time (struct wrun): the threads of
 * a block that wait together cost a run, in either order (they spin in
 * ascending rank order and reach the barrier in descending order, the
 * woken threads going on in the reverse of their suspensions). item_runs
 * counts them (written to o unless it is NULL), item_get reads nr back,
 * item_at reads the i-th thread. */
static size_t item_runs(const struct kc_item *v, unsigned m, unsigned char *o)
{
	size_t nr = 0;
	for (unsigned i = 0; i < m;) {
		struct wrun w = {v[i].rank, 1, v[i].vt};
		int down =
		    i + 1 < m && v[i + 1].vt == w.vt && w.rank && v[i + 1].rank == w.rank - 1;
		while (i + w.count < m && v[i + w.count].vt == w.vt &&
		       v[i + w.count].rank == (down ? w.rank - w.count : w.rank + w.count))
			w.count++;
		i += w.count;
		if (down)
			w.count |= WRUN_DOWN;
		if (o) {
			memcpy(o, &w, sizeof(w));
			o += sizeof(w);
		}
		nr++;
	}
	return nr;
}

static void item_get(const unsigned char *in, struct kc_item *v, size_t nr)
{
	for (size_t r = 0; r < nr; r++) {
		struct wrun w;
		memcpy(&w, in + r * sizeof(w), sizeof(w));
		uint32_t count = w.count & ~WRUN_DOWN;
		for (uint32_t i = 0; i < count; i++)
			*v++ = (struct kc_item){0, w.count & WRUN_DOWN ? w.rank - i : w.rank + i,
			                        w.vt};
	}
}

static struct kc_item item_at(const unsigned char *in, size_t i)
{
	for (;; in += sizeof(struct wrun)) {
		struct wrun w;
		memcpy(&w, in, sizeof(w));
		uint32_t count = w.count & ~WRUN_DOWN;
		if (i < count)
			return (struct kc_item){
			    0, w.count & WRUN_DOWN ? w.rank - (uint32_t)i : w.rank + (uint32_t)i,
			    w.vt};
		i -= count;
	}
}

/* The state of a waiting CTA__KC_SPIN block (n threads, nsp of them
 * spinning, on K->mw) into a park, in old's memory where it fits (the
 * park the block last woke from, or NULL; freed otherwise); NULL when out
 * of memory. */
static struct cta__kc_park *spin_pack(struct kc_block *b, struct kc_cl *K,
                                      const struct cta__kc_def *d, unsigned n, unsigned nsp,
                                      struct cta__kc_park *old)
{
	size_t stride = (size_t)d->nbar * d->uni_bytes, sb = (size_t)n * d->slot_bytes;
	const unsigned char *pl = (const unsigned char *)b->polls;
	const unsigned char *ss = (const unsigned char *)b->spins;
	size_t ncwr = item_runs(K->cw, K->ncw, NULL), nspr = item_runs(K->mw, nsp, NULL);
	size_t need = rle_len(K->cont, n, 1) + rle_len(K->slots, sb / 16, 16) +
	              (stride ? rle_len(K->urep, n, stride) : 0) + ncwr * sizeof(struct wrun) +
	              nspr * sizeof(struct wrun) + rle_len(pl, n, sizeof(*b->polls)) +
	              rle_len(ss, n, sizeof(*b->spins));
	/* (Blocks of a spinning kernel wake and wait again many times: the
	 * same memory, where a new allocation each time left the heap's
	 * peak well above what the parks hold.) */
	struct cta_sim *s = b->x->l.unit->sim;
	__atomic_add_fetch(&s->spin_parks, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->spin_park_bytes, sizeof(struct cta__kc_park) + need,
	                   __ATOMIC_RELAXED);
	struct cta__kc_park *pk = old;
	if (!pk || pk->cap < need || pk->cap / 2 > need) {
		free(old);
		pk = malloc(sizeof(*pk) + need);
		if (!pk)
			return NULL;
		pk->cap = need;
	}
	size_t cap = pk->cap;
	memset(pk, 0, sizeof(*pk));
	pk->cap = cap;
	pk->spin = 1;
	pk->ncw = K->ncw;
	pk->nwr = ncwr;
	pk->nsp = nsp;
	unsigned char *o = rle_put(pk->data, K->cont, n, 1);
	o = rle_put(o, K->slots, sb / 16, 16);
	if (stride)
		o = rle_put(o, K->urep, n, stride);
	pk->off_cw = (size_t)(o - pk->data);
	item_runs(K->cw, K->ncw, o);
	o += ncwr * sizeof(struct wrun);
	pk->off_sp = (size_t)(o - pk->data);
	item_runs(K->mw, nsp, o);
	o += nspr * sizeof(struct wrun);
	pk->off_pl = (size_t)(o - pk->data);
	o = rle_put(o, pl, n, sizeof(*b->polls));
	pk->off_ss = (size_t)(o - pk->data);
	rle_put(o, ss, n, sizeof(*b->spins));
	return pk;
}

/* The wait_* states of a parking block (m threads spinning, on K->mw, and
 * those at the barrier, K->cw) as few runs as may be: the access end of a
 * thread that waits at the barrier or spins (its time now: it.vt) becomes
 * at_end, since its clock never goes back; the access a timed thread
 * waits to make is kept, the others' dropped. */
static void spin_wait_one(struct kc_block *b, struct kc_item it)
{
	struct kc_spin *sp = &b->spins[it.rank];
	sp->at_end = sp->own && !sp->stage && sp->acc_end == it.vt;
	if (!sp->stage)
		sp->acc_end = sp->acc = sp->grid = sp->seen = sp->poll = 0;
	if (!sp->stage && !sp->at_end)
		sp->acc_addr = 0;
}

static void spin_wait_pack(struct kc_block *b, struct kc_cl *K, unsigned m,
                           const struct cta__cta *c, int model)
{
	for (unsigned i = 0; i < m; i++)
		spin_wait_one(b, K->mw[i]);
	if (!model) {
		for (unsigned i = 0; i < K->ncw; i++)
			spin_wait_one(b, K->cw[i]);
		return;
	}
	/* The barrier's waiters go on at its release, T = c->bar_max_t + the
	 * barrier's cost or later: an access end can be their time then only
	 * if it is bar_max_t (kept as at_end, spin_wait_back), and but for
	 * the first waiter's, which a report may name, their arrival times
	 * are read by nothing else: one time, runs of waiters instead of one
	 * a waiter. */
	for (unsigned i = 0; i < K->ncw; i++) {
		struct kc_spin *sp = &b->spins[K->cw[i].rank];
		sp->at_end = sp->own && sp->acc_end == K->cw[i].vt && K->cw[i].vt == c->bar_max_t;
		sp->acc_end = sp->acc = sp->grid = sp->seen = sp->poll = 0;
		if (!sp->at_end)
			sp->acc_addr = 0;
		if (i)
			K->cw[i].vt = K->cw[0].vt;
	}
}

static void spin_wait_back(struct kc_block *b, struct kc_item it)
{
	struct kc_spin *sp = &b->spins[it.rank];
	if (sp->at_end) {
		sp->acc_end = it.vt;
		sp->at_end = 0;
	} else if (sp->own && !sp->stage) {
		sp->acc_end = UINT64_MAX;
	}
}

/* ... back as they were for the block's threads (spin_unpack first). */
static void spin_wait_unpack(struct kc_block *b, const struct kc_cl *K, unsigned m,
                             const struct cta__cta *c, int model)
{
	for (unsigned i = 0; i < m; i++)
		spin_wait_back(b, K->mw[i]);
	for (unsigned i = 0; i < K->ncw; i++) {
		struct kc_item it = K->cw[i];
		if (model)
			it.vt = c->bar_max_t;
		spin_wait_back(b, it);
	}
}

/* What spin_pack kept, back into K and b; the spinning threads' count. */
static unsigned spin_unpack(struct kc_block *b, struct kc_cl *K, const struct cta__kc_def *d,
                            unsigned n, const struct cta__kc_park *pk)
{
	size_t stride = (size_t)d->nbar * d->uni_bytes, sb = (size_t)n * d->slot_bytes;
	const unsigned char *in = rle_get(pk->data, K->cont, n, 1);
	in = rle_get(in, K->slots, sb / 16, 16);
	if (stride)
		rle_get(in, K->urep, n, stride);
	K->ncw = pk->ncw;
	item_get(pk->data + pk->off_cw, K->cw, pk->nwr);
	item_get(pk->data + pk->off_sp, K->mw, (pk->off_pl - pk->off_sp) / sizeof(struct wrun));
	rle_get(pk->data + pk->off_pl, (unsigned char *)b->polls, n, sizeof(*b->polls));
	rle_get(pk->data + pk->off_ss, (unsigned char *)b->spins, n, sizeof(*b->spins));
	return pk->nsp;
}

void cta__regions_spin_wake(struct cta__lane_x *x, uint64_t now)
{
	x->kc_park->wake_t = now;
}

unsigned cta__regions_nspin(const struct cta__lane_x *x)
{
	return x->kc_park && x->kc_park->spin ? x->kc_park->nsp : 0;
}

int cta__regions_spinner(struct cta__lane_x *x, unsigned i, unsigned *rank, uint64_t *since,
                         const char **file, int *line)
{
	const struct cta__kc_park *pk = x->kc_park;
	if (!pk || !pk->spin || i >= pk->nsp)
		return 0;
	struct kc_item it = item_at(pk->data + pk->off_sp, pk->nsp - 1 - i);
	/* Its state: the run of the park's states that holds it. */
	const unsigned char *in = pk->data + pk->off_ss;
	for (uint64_t t = 0;;) {
		uint64_t count;
		memcpy(&count, in, 8);
		if (it.rank < t + count) {
			struct kc_spin sp;
			memcpy(&sp, in + 8, sizeof(sp));
			*rank = it.rank;
			*since = sp.since;
			*file = sp.file;
			*line = sp.line;
			/* (The lane names it in reports.) */
			struct cta__lane *l = &x->l;
			l->tid.x = it.rank % l->bdim.x;
			l->tid.y = it.rank / l->bdim.x % l->bdim.y;
			l->tid.z = it.rank / (l->bdim.x * l->bdim.y);
			l->vtime = it.vt;
			return 1;
		}
		t += count;
		in += 8 + sizeof(struct kc_spin);
	}
}

/* The block of lane x of a CTA__KC_SPIN body (fresh when pk is NULL, else
 * woken by an EV_POLL: its park, taken from x), as described above. 0 once
 * every thread ended, CTA__KC_PARKED when it waits, -1 when out of memory
 * before anything ran. */
static int run_spin(struct cta__lane_x *x, const struct cta__kc_def *d, struct cta__kc_park *pk)
{
	struct cta__lane *l = &x->l;
	struct cta__unit *u = l->unit;
	struct cta__kernel *k = u->k;
	struct cta_sim *s = u->sim;
	struct kc_block *b = &kcb;
	struct kc_cl *K = &kcl;
	const unsigned n = (unsigned)u->ctas[0].nthreads;
	const size_t ub = d->uni_bytes, stride = (size_t)d->nbar * ub;
	if (cluster_room(K, d, 1, n) || spins_room(b, n) || polls_start(b, x, n)) {
		if (!pk)
			return -1; /* (the thread loop takes over) */
		free(pk);
		cta__base_out_error(u, "kernel %s: out of memory", k->label);
		x->cta->exited = x->cta->nthreads;
		l->active = 0;
		return 0;
	}
	struct cta__cursor *cur = l->cursor;
	unsigned next_new = n, nsp = 0;
	K->qh = K->qn = 0;
	if (!pk) {
		cur->left = 0;
		cur->tid.x = cur->tid.y = cur->tid.z = 0;
		if (cur->cta != l->cta_rank || !l->smem)
			cta__lane_enter_cta(l);
		cur->cta++;
		next_new = 0;
		K->ncw = 0;
		memset(b->spins, 0, n * sizeof(*b->spins));
		memset(b->polls, 0xff, n * sizeof(*b->polls));
	} else {
		unsigned m = spin_unpack(b, K, d, n, pk);
		spin_wait_unpack(b, K, m, x->cta, pk->model);
		/* The EV_POLL (cta__exec_unit_poll_wake): the spinning threads
		 * go on in the reverse of their suspensions, each at the later of
		 * its time and the poll's; those that wait for a later time of
		 * their own (kc_wait_park) stay, in their order. */
		for (unsigned i = m; i-- > 0;) {
			struct kc_item it = K->mw[i];
			struct kc_spin *ws = &b->spins[it.rank];
			if (ws->timed && it.vt > pk->wake_t)
				continue;
			if (it.vt < pk->wake_t)
				it.vt = pk->wake_t;
			/* (Not read under the wait_*: kept 0 for the park.) */
			if (!ws->own)
				ws->resume_t = it.vt;
			ws->timed = 0;
			q_push(K, n, it);
		}
		for (unsigned i = 0; i < m; i++)
			if (b->spins[K->mw[i].rank].timed)
				K->mw[nsp++] = K->mw[i];
		/* (Its memory holds the block's next park: spin_pack.) */
	}
	b->x = x;
	b->u = u;
	b->d = d;
	b->n = n;
	b->c = x->cta;
	b->stopped = 0;
	b->grid_op = 0;
	b->obs_on = 0;
	b->mixed = 0;
	b->one_row = l->bdim.y == 1 && l->bdim.z == 1;
	struct cta__idx ix;
	ix.tid.x = ix.tid.y = ix.tid.z = 0;
	l->tid = ix.tid;
	ix.bid = l->bid;
	ix.bdim = l->bdim;
	ix.gdim = l->gdim;
	ix.spin = cur->spin;
	ix.add = cur->add;
	l->active = 1;
	l->run_x0 = 0;
	l->row_end = l->bdim.x;
	kc_fis_fn fn = (kc_fis_fn)d->fis;
	const void *args = k->args;
	struct cta__cta *c = x->cta;
	int ended = 0, self = 0; /* the last thread ended; its arrival released */
	struct kc_item it = {0, 0, 0};
	struct cta__kc_run r;
	r.lo2 = r.hi2 = 0;
	r.n = n;
	r.slots = K->slots;
	r.cont = K->cont;
	for (;;) {
		int fresh = 0;
		if (self) {
			self = 0; /* it: the releasing thread, at the release */
		} else if (ended && next_new < n) {
			it = (struct kc_item){0, next_new++, cur->t0};
			fresh = 1;
		} else if (K->qn) {
			it = q_pop(K, n);
			struct kc_spin *ws = &b->spins[it.rank];
			if (ws->stage) {
				/* Woken at its time: the rest of its access. */
				l->vtime = it.vt;
				b->cur = it.rank;
				b->spun = 0;
				if (kc_wait_go(b, ws, l, ws->stage)) {
					K->mw[nsp++] = (struct kc_item){0, it.rank, b->spun_vt};
					ended = 0;
					continue;
				}
				it.vt = l->vtime;
			}
		} else if (next_new < n) {
			it = (struct kc_item){0, next_new++, cur->t0};
			fresh = 1;
		} else if (c->bar_arrived && c->bar_arrived + c->exited == c->nthreads &&
		           !u->watchdog) {
			/* settle_barriers: the missing threads exited; reported at
			 * the first waiter. */
			if (!c->bar_divergent_reported && !c->foreach_calls) {
				struct kc_item w = K->cw[0];
				const struct cta__kc_bar *at = &d->bars[K->cont[w.rank]];
				lane_at(b, w.rank, w.vt);
				cta__ub(s, UB_DIVERGENT_BARRIER, u, x, at->file, at->line,
				        "%" PRIu64 " of the block's %" PRIu64
				        " threads exited without reaching this barrier",
				        c->exited, (uint64_t)c->nthreads);
			}
			spin_release(K, n, x, c);
			ended = 0;
			continue;
		} else {
			break;
		}
		ended = 0;
		unsigned char *mine = K->urep + (size_t)it.rank * stride;
		r.region = fresh ? 0 : K->cont[it.rank] + 1u;
		r.uin = fresh ? K->zero : mine + K->cont[it.rank] * ub;
		r.uout = mine;
		r.lo = it.rank;
		r.hi = it.rank + 1u;
		r.t = it.vt;
		r.bar_max = r.end_max = r.arrived = r.exited = 0;
		r.want = CTA__KC_NONE;
		r.first_vt = r.last_vt = 0;
		b->cur = it.rank;
		b->spun = 0;
		polls_flush(b);
		fn(args, l, &ix, &r);
		if (b->stopped) {
			/* The run stops (cta__kc_grid_check): the thread stays
			 * where it is, as its lane on fibers. */
			b->stopped = 0;
		} else if (r.exited) {
			c->exited++;
			if (r.end_max > c->end_t)
				c->end_t = r.end_max;
			ended = 1;
			/* (Never read again: a park keeps one run of such.) */
			memset(&b->spins[it.rank], 0, sizeof(b->spins[it.rank]));
		} else if (b->spun) {
			K->mw[nsp++] = (struct kc_item){0, it.rank, b->spun_vt};
		} else if (r.arrived && d->bars[K->cont[it.rank]].kind == 0) {
			/* cta__syncthreads_rule. */
			const struct cta__kc_bar *at = &d->bars[K->cont[it.rank]];
			uint64_t vt = r.bar_max;
			u->out.crossings++;
			c->cold_dirty = 1;
			if (c->bar_arrived == 0) {
				c->bar_file = at->file;
				c->bar_line = at->line;
			} else if ((c->bar_line != at->line ||
			            (c->bar_file != at->file && strcmp(c->bar_file, at->file))) &&
			           !c->bar_divergent_reported) {
				c->bar_divergent_reported = 1;
				lane_at(b, it.rank, vt);
				cta__ub(
				    s, UB_DIVERGENT_BARRIER, u, x, at->file, at->line,
				    "other threads of the block wait at the __syncthreads at %s:%d",
				    c->bar_file, c->bar_line);
			}
			c->bar_arrived++;
			if (vt > c->bar_max_t)
				c->bar_max_t = vt;
			if (c->bar_arrived + c->exited == c->nthreads) {
				if (c->exited && !c->bar_divergent_reported) {
					lane_at(b, it.rank, vt);
					cta__ub(s, UB_DIVERGENT_BARRIER, u, x, at->file, at->line,
					        "%" PRIu64 " of the block's %" PRIu64
					        " threads exited without reaching this barrier",
					        c->exited, (uint64_t)c->nthreads);
				}
				if (cta__exec_bar_idle(s, c)) {
					lane_at(b, it.rank, vt);
					cta__exec_bar_watchdog_report(u, x, c, at->file, at->line,
					                              c->bar_idle_ns);
					goto given_up;
				}
				it.vt = spin_release(K, n, x, c);
				self = 1;
			} else {
				K->cw[K->ncw++] = (struct kc_item){0, it.rank, vt};
			}
		} else {
			cta__base_out_error(
			    u,
			    "kernel %s: a compiled block's thread stopped "
			    "where the loop form cannot go on (a kernel compiler bug)",
			    k->label);
			goto given_up;
		}
	}
	if (c->exited < c->nthreads) {
		if (!nsp) {
			if (!u->watchdog)
				cta__base_out_error(
				    u,
				    "kernel %s: a compiled block can never continue (its "
				    "threads wait at __syncthreads)",
				    k->label);
			goto given_up;
		}
		/* The block waits for its spinning threads' next poll:
		 * cta__spin_poll's suspension, once for all of them. */
		polls_flush(b);
		unsigned untimed = 0;
		int pk_model;
		uint64_t timed_min = UINT64_MAX;
		for (unsigned i = 0; i < nsp; i++) {
			if (!b->spins[K->mw[i].rank].timed)
				untimed++;
			else if (K->mw[i].vt < timed_min)
				timed_min = K->mw[i].vt;
		}
		pk_model = cta__exec_wait_model(s, k);
		spin_wait_pack(b, K, nsp, c, pk_model);
		pk = spin_pack(b, K, d, n, nsp, pk);
		if (!pk) {
			cta__base_out_error(u, "kernel %s: out of memory", k->label);
			goto given_up;
		}
		pk->untimed = untimed;
		pk->timed_min = timed_min;
		pk->model = pk_model;
		uint64_t wake = K->mw[0].vt;
		for (unsigned i = 1; i < nsp; i++)
			wake = K->mw[i].vt < wake ? K->mw[i].vt : wake;
		if (!u->nspin || wake < u->spin_wake)
			u->spin_wake = wake;
		x->kc_park = pk;
		x->next_wait = u->spinners;
		u->spinners = x;
		u->nspin++;
		x->state = L_SPIN;
		/* (The thread a report names: the latest to spin.) */
		l->tid = tid_of(b, l, K->mw[nsp - 1].rank);
		x->wait_file = b->spins[K->mw[nsp - 1].rank].file;
		x->wait_line = b->spins[K->mw[nsp - 1].rank].line;
		b->poll_on = 0;
		return CTA__KC_PARKED;
	}
	goto done;
given_up:
	c->exited = c->nthreads;
done:
	free(pk);
	b->poll_on = 0;
	l->active = 0;
	return 0;
}

int cta__regions_threads(struct cta__lane_x *x)
{
	struct cta__lane *l = &x->l;
	const struct cta__kc_def *d = l->unit->k->kc;
	int r;
	const int cluster = d && (d->flags & CTA__KC_CLUSTER);
	if (x->kc_park && x->kc_park->cl) {
		/* A cluster that waited, woken at x's mbarrier. */
		struct cta__kc_park *pk = x->kc_park;
		struct kc_cpark *cl = pk->cl;
		unsigned woke = pk->cl_cta;
		x->kc_park = NULL;
		free(pk);
		cl->nref--;
		r = run_cluster(x, d, cl, woke);
		if (r == CTA__KC_PARKED)
			return r;
	} else if (x->kc_park) {
		/* A block that waited as a whole, woken. */
		struct cta__kc_park *pk = x->kc_park;
		x->kc_park = NULL;
		if (pk->spin) {
			r = run_spin(x, d, pk);
			if (r == CTA__KC_PARKED)
				return r;
			goto next;
		}
		r = run_block_fis(x, d, pk);
		if (r == CTA__KC_PARKED)
			return r;
		if (r) {
			x->kc_park = pk;
			cta__regions_park_free(x);
			cta__base_out_error(l->unit, "kernel %s: out of memory", l->unit->k->label);
			x->cta->exited = x->cta->nthreads;
			l->active = 0;
		}
	} else {
		/* Only a unit none of whose threads started: its first lane. */
		const struct cta__unit *u = l->unit;
		if (!d || l->cursor->nret ||
		    l->cursor->left != (uint64_t)u->ctas[0].nthreads * u->nctas ||
		    u->ctas[0].nthreads < 2)
			return 0;
		r = cluster                     ? run_cluster(x, d, NULL, 0)
		    : (d->flags & CTA__KC_SPIN) ? run_spin(x, d, NULL)
		    : d->fis                    ? run_block_fis(x, d, NULL)
		                                : run_block(x, d);
		if (r == CTA__KC_PARKED)
			return r;
		if (r)
			return 0; /* out of memory: the thread loop takes over */
	}
next:
	while (cta__exec_lane_move_next(l)) {
		r = cluster                     ? run_cluster(x, d, NULL, 0)
		    : (d->flags & CTA__KC_SPIN) ? run_spin(x, d, NULL)
		    : d->fis                    ? run_block_fis(x, d, NULL)
		                                : run_block(x, d);
		if (r == CTA__KC_PARKED)
			return r;
		if (r)
			return 0;
	}
	return 1;
}
