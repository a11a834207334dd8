/* Runs a block whose body the kernel compiler (compiler/) turned into
 * regions: each thread is a small frame (its live values and where it
 * stopped), and the block's threads run as loops of resumptions on one
 * lane, with no stack of their own. The order of threads and the barrier
 * bookkeeping are those of the fiber path (exec.c), step for step, so
 * traces, UB reports and results do not depend on the path. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "exec/exec.h"
#include "exec/regions.h"

/* Registered compiled bodies (a few dozen at most: one per shipped kernel). */
static const struct cta__kc_def **defs;
static size_t ndefs, defs_cap;

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

size_t cta__kc_count(void)
{
	return ndefs;
}

const struct cta__kc_def *cta__kc_at(size_t i)
{
	return i < ndefs ? defs[i] : NULL;
}

int cta_kernel_regions(const char *name, const char **why)
{
	for (size_t i = 0; i < ndefs; i++)
		if (!strcmp(defs[i]->name, name)) {
			if (why)
				*why = defs[i]->why;
			return !defs[i]->why && defs[i]->ramp;
		}
	return -1;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

const struct cta__kc_def *cta__kc_for(struct cta_sim *s, const struct cta__kernel *k)
{
	const struct cta_kernel_def *kd = k->l.kernel;
	/* (--sanitize runs the instrumented build of the bodies: not this.) */
	if (!cta__kc_enabled || s->o.timing_only || s->o.sanitize || k->csize != 1 ||
	    k->threads < 2)
		return NULL;
	for (size_t i = 0; i < ndefs; i++) {
		const struct cta__kc_def *d = defs[i];
		/* The same CTA_KERNEL: its name, and where it is written. */
		if (!d->why && d->ramp && d->line == kd->line && !strcmp(d->name, kd->name) &&
		    !strcmp(base_name(d->file), base_name(kd->file)))
			return d;
	}
	return NULL;
}

typedef void *(*kc_ramp_fn)(const void *args, struct cta__lane *l, const struct cta__idx *ix);
typedef void (*kc_resume_fn)(void *frame);

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
};
static _Thread_local struct kc_block kcb;

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
		if (!cta__bar_idle(u->sim, c)) {
			release(b, 1);
			b->released = 1;
			return;
		}
		/* The watchdog: the block loops at barriers and nothing else.
		 * Every thread stays waiting, and run_block gives the block up. */
		cta__bar_watchdog_report(u, x, c, file, line, c->bar_idle_ns);
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
	if (!f || !vt || !w || !q)
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
	if (grow(b, n))
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
	l->active = 0;
	if (b->nwait && u->watchdog) {
		c->exited = c->nthreads; /* given up (cta__bar_watchdog_report) */
	} else if (b->nwait) {
		/* Cannot happen with __syncthreads alone (a barrier completes
		 * once every thread arrived or exited); stop cleanly. */
		cta__out_error(u, "kernel %s: compiled block ended with %u waiting threads",
		               k->label, b->nwait);
		c->exited = c->nthreads;
	}
	return 0;
}

int cta__kc_threads(struct cta__lane_x *x)
{
	struct cta__lane *l = &x->l;
	const struct cta__kc_def *d = l->unit->k->kc;
	/* Only a unit none of whose threads started: its first lane. */
	if (!d || l->cursor->nret || l->cursor->left != l->unit->ctas[0].nthreads ||
	    l->unit->ctas[0].nthreads < 2)
		return 0;
	do {
		if (run_block(x, d))
			return 0; /* out of memory: the thread loop takes over */
	} while (cta__lane_move_next(l));
	return 1;
}
