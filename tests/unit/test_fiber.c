/* Unit tests for fibers (sim/exec/fiber.c): switch ordering, return to the
 * named fiber, many live stacks, reuse after finish or release, state
 * that must survive a switch (deep frames, floating point), and stacks
 * shared by several fibers, whose suspended frames cost bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fenv.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctasim/errors.h"
#include "exec/fiber.h"
#include "exec/pool.h"

struct ping {
	struct cta__fiber *host, *self;
	int log[16];
	int n;
};

static void ping_body(void *arg)
{
	struct ping *s = arg;
	for (int i = 0; i < 3; i++) {
		s->log[s->n++] = 100 + i;
		cta__fiber_switch(s->self, s->host);
	}
	s->log[s->n++] = 199;
}

static void fiber_ping_pong_interleaves_in_switch_order(void **state)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 0), 0);
	struct ping s = {0};
	s.host = cta__fiber_host(p);
	s.self = cta__fiber_start(p, ping_body, &s, s.host);
	assert_non_null(s.self);
	for (int i = 0; i < 4; i++) {
		assert_false(cta__fiber_finished(s.self));
		s.log[s.n++] = i;
		cta__fiber_switch(s.host, s.self);
	}
	assert_true(cta__fiber_finished(s.self));
	int want[] = {0, 100, 1, 101, 2, 102, 3, 199};
	assert_int_equal(s.n, 8);
	assert_memory_equal(s.log, want, sizeof(want));
	cta__fiber_pool_free(p);
}

struct chain {
	struct cta__fiber *a, *b;
	int order[4];
	int n;
};

static void chain_b(void *arg)
{
	struct chain *c = arg;
	c->order[c->n++] = 2;
}

static void chain_a(void *arg)
{
	struct chain *c = arg;
	c->order[c->n++] = 1;
	cta__fiber_switch(c->a, c->b); /* b finishes and returns here */
	assert_true(cta__fiber_finished(c->b));
	c->order[c->n++] = 3;
}

static void fiber_return_switches_to_ret(void **state)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 0), 0);
	struct chain c = {0};
	struct cta__fiber *host = cta__fiber_host(p);
	c.a = cta__fiber_start(p, chain_a, &c, host);
	c.b = cta__fiber_start(p, chain_b, &c, c.a);
	assert_non_null(c.a);
	assert_non_null(c.b);
	cta__fiber_switch(host, c.a);
	assert_true(cta__fiber_finished(c.a));
	assert_int_equal(c.n, 3);
	assert_int_equal(c.order[0], 1);
	assert_int_equal(c.order[1], 2);
	assert_int_equal(c.order[2], 3);
	cta__fiber_pool_free(p);
}

/* A block of threads all waiting at a barrier: every fiber is alive at
 * once, each resumed twice from the host. */
#define MANY 2048
struct many {
	struct cta__fiber *host;
	struct cta__fiber *f[MANY];
	int phase[MANY];
};
struct many_arg {
	struct many *m;
	int i;
};

static void many_body(void *arg)
{
	struct many_arg *a = arg;
	volatile int local = a->i * 7; /* lives on this fiber's stack */
	a->m->phase[a->i] = 1;
	cta__fiber_switch(a->m->f[a->i], a->m->host);
	a->m->phase[a->i] = local == a->i * 7 ? 2 : -1;
}

static void fiber_thousands_alive_at_once(void **state)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 64 * 1024), 0);
	static struct many m;
	static struct many_arg args[MANY];
	memset(&m, 0, sizeof(m));
	m.host = cta__fiber_host(p);
	for (int i = 0; i < MANY; i++) {
		args[i] = (struct many_arg){&m, i};
		m.f[i] = cta__fiber_start(p, many_body, &args[i], m.host);
		assert_non_null(m.f[i]);
	}
	for (int i = 0; i < MANY; i++)
		cta__fiber_switch(m.host, m.f[i]);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(m.phase[i], 1);
	for (int i = MANY - 1; i >= 0; i--)
		cta__fiber_switch(m.host, m.f[i]);
	for (int i = 0; i < MANY; i++) {
		assert_int_equal(m.phase[i], 2);
		assert_true(cta__fiber_finished(m.f[i]));
	}
	cta__fiber_pool_free(p);
}

static void count_body(void *arg)
{
	++*(int *)arg;
}

static void fiber_stack_is_reused_after_finish(void **state)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 0), 0);
	struct cta__fiber *host = cta__fiber_host(p);
	int runs = 0;
	struct cta__fiber *first = cta__fiber_start(p, count_body, &runs, host);
	cta__fiber_switch(host, first);
	for (int i = 0; i < 1000; i++) {
		struct cta__fiber *f = cta__fiber_start(p, count_body, &runs, host);
		assert_ptr_equal(f, first);
		cta__fiber_switch(host, f);
		assert_true(cta__fiber_finished(f));
	}
	assert_int_equal(runs, 1001);
	cta__fiber_pool_free(p);
}

static unsigned recurse(unsigned depth)
{
	volatile char pad[64];
	pad[0] = (char)depth;
	if (depth == 0)
		return 0;
	unsigned r = recurse(depth - 1);
	/* Reading pad after the call keeps every frame alive at once. */
	return r + 1 + (pad[0] != (char)depth);
}

static void deep_body(void *arg)
{
	*(unsigned *)arg = recurse(*(unsigned *)arg);
}

static void fiber_deep_recursion_fits_stack(void **state)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 0), 0);
	struct cta__fiber *host = cta__fiber_host(p);
	/* ~100 bytes a frame (more under sanitizers): about half of 256 KiB. */
	unsigned depth = 1000;
	struct cta__fiber *f = cta__fiber_start(p, deep_body, &depth, host);
	cta__fiber_switch(host, f);
	assert_true(cta__fiber_finished(f));
	assert_int_equal(depth, 1000);
	cta__fiber_pool_free(p);
}

struct fp {
	struct cta__fiber *host, *self;
	double acc;
	int round_seen;
};

static void fp_body(void *arg)
{
	struct fp *s = arg;
	volatile double x = 1.0;
	for (int i = 0; i < 3; i++) {
		/* The FP control state is the host thread's, shared by its
		 * fibers (fiber.h): the host's rounding mode is seen here. */
		s->round_seen = fegetround();
		x *= 1.5;
		cta__fiber_switch(s->self, s->host);
	}
	s->acc = x;
}

static void fiber_fp_results_and_rounding_survive_switches(void **state)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 0), 0);
	struct fp s = {0};
	s.host = cta__fiber_host(p);
	s.self = cta__fiber_start(p, fp_body, &s, s.host);
	volatile double h = 2.0;
	int old = fegetround();
	for (int i = 0; i < 4; i++) {
		fesetround(FE_TOWARDZERO);
		h *= 3.0;
		cta__fiber_switch(s.host, s.self);
#if defined(__x86_64__) || defined(__aarch64__)
		assert_int_equal(fegetround(), FE_TOWARDZERO);
#endif
		fesetround(old);
	}
	assert_true(cta__fiber_finished(s.self));
	assert_true(h == 162.0);
	assert_true(s.acc == 3.375);
#if defined(__x86_64__) && defined(CTA__FIBER_ASM)
	assert_int_equal(s.round_seen, FE_TOWARDZERO);
#endif
	cta__fiber_pool_free(p);
}

struct abandon {
	struct cta__fiber *host, *self;
	int reached_end;
};

static void abandon_body(void *arg)
{
	struct abandon *a = arg;
	cta__fiber_switch(a->self, a->host);
	a->reached_end = 1;
}

static void fiber_released_stack_is_reused(void **state)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 0), 0);
	struct abandon a = {0};
	a.host = cta__fiber_host(p);
	a.self = cta__fiber_start(p, abandon_body, &a, a.host);
	cta__fiber_switch(a.host, a.self);
	assert_false(cta__fiber_finished(a.self));
	struct cta__fiber *old = a.self;
	cta__fiber_release(p, a.self);
	cta__fiber_release(p, a.self); /* twice must not corrupt the free list */

	int runs = 0;
	struct cta__fiber *f = cta__fiber_start(p, count_body, &runs, a.host);
	assert_ptr_equal(f, old);
	struct cta__fiber *g = cta__fiber_start(p, count_body, &runs, a.host);
	assert_ptr_not_equal(g, f);
	cta__fiber_switch(a.host, f);
	cta__fiber_switch(a.host, g);
	assert_int_equal(runs, 2);
	assert_int_equal(a.reached_end, 0);
	cta__fiber_pool_free(p);
}

static void fiber_pool_free_accepts_null(void **state)
{
	cta__fiber_pool_free(NULL);
}

/* The executor's shape: one fiber pool per worker, made on the main thread
 * and used on whichever thread runs that worker. */
struct per_worker {
	struct cta__fiber_pool *fp[3];
	int done[64];
};
struct task_fiber {
	struct cta__fiber *host, *self;
	int steps;
};

static void two_step_body(void *arg)
{
	struct task_fiber *t = arg;
	t->steps++;
	cta__fiber_switch(t->self, t->host);
	t->steps++;
}

static void fiber_task(void *ctx, size_t index, unsigned worker)
{
	struct per_worker *w = ctx;
	struct cta__fiber_pool *fp = w->fp[worker];
	struct task_fiber t = {cta__fiber_host(fp), NULL, 0};
	t.self = cta__fiber_start(fp, two_step_body, &t, t.host);
	if (!t.self)
		return;
	cta__fiber_switch(t.host, t.self);
	cta__fiber_switch(t.host, t.self);
	w->done[index] = cta__fiber_finished(t.self) ? t.steps : -1;
}

static void fiber_pools_work_on_pool_workers(void **state)
{
	struct cta__pool *pool;
	assert_int_equal(cta__pool_new(&pool, 3), 0);
	struct per_worker w = {0};
	for (int i = 0; i < 3; i++)
		assert_int_equal(cta__fiber_pool_new(&w.fp[i], 64 * 1024), 0);
	cta__pool_run(pool, fiber_task, &w, 64);
	for (int i = 0; i < 64; i++)
		assert_int_equal(w.done[i], 2);
	cta__pool_free(pool);
	for (int i = 0; i < 3; i++)
		cta__fiber_pool_free(w.fp[i]);
}

/* Past cta__fiber_share_after stacks, fibers take turns on the pool's
 * stacks: each keeps its frames (locals, and pointers to them) through
 * switches straight from fiber to fiber, to one of its own stack (through
 * the trampoline) or of another, and a fiber that ends returns to one that
 * shares its stack. The sanitizer builds keep a stack per fiber (-1). */
#define SHARED 9
static const int shared_next[SHARED] = {2, 3, 4, 5, 6, 7, 8, -1, 1};
struct shared {
	struct cta__fiber *host, *f[SHARED];
	int bad, n;
	int order[4 * SHARED];
};
struct shared_arg {
	struct shared *s;
	int i;
};

static void shared_body(void *arg)
{
	struct shared_arg *a = arg;
	struct shared *s = a->s;
	volatile uint64_t pattern[32];
	volatile uint64_t *self = pattern; /* a pointer into this stack */
	for (int k = 0; k < 32; k++)
		pattern[k] = (uint64_t)a->i * 1000 + (uint64_t)k;
	for (int r = 0; r < 3; r++) {
		s->order[s->n++] = a->i;
		int nx = shared_next[a->i];
		cta__fiber_switch(s->f[a->i], nx < 0 ? s->host : s->f[nx]);
		for (int k = 0; k < 32; k++)
			s->bad += self[k] != (uint64_t)a->i * 1000 + (uint64_t)k;
	}
}

struct ret_pair {
	struct cta__fiber *a, *c;
	int local_ok, c_ran;
};

static void ret_c(void *arg)
{
	struct ret_pair *r = arg;
	volatile char big[512];
	memset((char *)big, 0x5a, sizeof(big)); /* over a's frames, had they stayed */
	r->c_ran = big[100] == 0x5a;
}

static void ret_a(void *arg)
{
	struct ret_pair *r = arg;
	volatile uint64_t mine[16];
	for (int k = 0; k < 16; k++)
		mine[k] = 0xa000 + (uint64_t)k;
	cta__fiber_switch(r->a, r->c); /* c shares a's stack and returns to a */
	r->local_ok = 1;
	for (int k = 0; k < 16; k++)
		r->local_ok &= mine[k] == 0xa000 + (uint64_t)k;
}

static void fiber_shared_stacks_keep_every_fibers_frames(void **state)
{
	(void)state;
	if (cta__fiber_share_after < 0)
		skip();
	int saved = cta__fiber_share_after;
	cta__fiber_share_after = 2;
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 64 * 1024), 0);
	struct shared s = {0};
	struct shared_arg args[SHARED];
	s.host = cta__fiber_host(p);
	for (int i = 0; i < SHARED; i++) {
		args[i] = (struct shared_arg){&s, i};
		s.f[i] = cta__fiber_start(p, shared_body, &args[i], s.host);
		assert_non_null(s.f[i]);
	}
	/* Three rounds along 0, 2, 4, 6, 8, 1, 3, 5, 7 (stacks alternate
	 * between fibers, so most switches go to a fiber of the same stack),
	 * then each fiber checks its frames and ends. */
	for (int r = 0; r < 3; r++)
		cta__fiber_switch(s.host, s.f[0]);
	for (int i = 0; i < SHARED; i++) {
		cta__fiber_switch(s.host, s.f[i]);
		assert_true(cta__fiber_finished(s.f[i]));
	}
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.n, 3 * SHARED);
	for (int r = 0; r < 3; r++)
		for (int j = 0, i = 0; j < SHARED; j++, i = shared_next[i])
			assert_int_equal(s.order[r * SHARED + j], i);

	/* a on the first stack, b on the second, c on the first again. */
	struct ret_pair rp = {0};
	struct cta__fiber_pool *q;
	assert_int_equal(cta__fiber_pool_new(&q, 64 * 1024), 0);
	struct cta__fiber *host = cta__fiber_host(q);
	rp.a = cta__fiber_start(q, ret_a, &rp, host);
	struct cta__fiber *b = cta__fiber_start(q, ret_c, &rp, host);
	rp.c = cta__fiber_start(q, ret_c, &rp, rp.a);
	assert_non_null(rp.a);
	assert_non_null(b);
	assert_non_null(rp.c);
	cta__fiber_switch(host, rp.a);
	assert_true(cta__fiber_finished(rp.a));
	assert_true(cta__fiber_finished(rp.c));
	assert_true(rp.c_ran);
	assert_true(rp.local_ok);
	cta__fiber_pool_free(q);
	cta__fiber_pool_free(p);
	cta__fiber_share_after = saved;
}

/* Thousands of fibers suspended at once on two shared stacks keep their
 * frames as differences from one another's: well under a stack page each
 * (the fiber included), and every word comes back, whether it is the same
 * in every fiber, differs a little (an index, a pointer into the frame)
 * or entirely (a hash of the index). */
#define COMPACT 4000
struct compact {
	struct cta__fiber *host, *f[COMPACT];
	int bad, done;
};
struct compact_arg {
	struct compact *c;
	unsigned i;
};

static uint64_t compact_word(const volatile uint64_t *v, unsigned i, unsigned k)
{
	switch (k) {
	case 20:
		return i;
	case 21:
		return (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
	case 22:
		return (uint64_t)0 - i;
	case 23:
		return (uint64_t)(uintptr_t)&v[i % 20];
	default:
		return 0x1234 + k;
	}
}

static void compact_body(void *arg)
{
	struct compact_arg *a = arg;
	volatile uint64_t v[24];
	for (unsigned k = 0; k < 24; k++)
		v[k] = compact_word(v, a->i, k);
	cta__fiber_switch(a->c->f[a->i], a->c->host);
	for (unsigned k = 0; k < 24; k++)
		a->c->bad += v[k] != compact_word(v, a->i, k);
	a->c->done++;
}

static void fiber_suspended_on_shared_stacks_cost_bytes_not_pages(void **state)
{
	(void)state;
	if (cta__fiber_share_after < 0)
		skip();
	int saved = cta__fiber_share_after;
	cta__fiber_share_after = 2;
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 64 * 1024), 0);
	struct compact *c = calloc(1, sizeof(*c));
	struct compact_arg *args = calloc(COMPACT, sizeof(*args));
	assert_non_null(c);
	assert_non_null(args);
	c->host = cta__fiber_host(p);
	for (unsigned i = 0; i < COMPACT; i++) {
		args[i] = (struct compact_arg){c, i};
		c->f[i] = cta__fiber_start(p, compact_body, &args[i], c->host);
		assert_non_null(c->f[i]);
		cta__fiber_switch(c->host, c->f[i]);
	}
	size_t held = cta__fiber_pool_held(p);
	if (held > (size_t)COMPACT * 160)
		fail_msg("%u suspended fibers hold %zu bytes, %zu each", COMPACT, held,
		         held / COMPACT);
	for (unsigned i = COMPACT; i-- > 0;) {
		cta__fiber_switch(c->host, c->f[i]);
		assert_true(cta__fiber_finished(c->f[i]));
	}
	assert_int_equal(c->done, COMPACT);
	assert_int_equal(c->bad, 0);
	cta__fiber_pool_free(p);
	free(args);
	free(c);
	cta__fiber_share_after = saved;
}

/* The other ways a suspended frame is kept: one deeper than the encoder
 * takes (kept whole), and ones that share nothing with the reference
 * (each word a hash: a new reference each), mixed with alike ones, every
 * word back after the switches. */
#define UNLIKE 600
static uint64_t unlike_word(unsigned i, unsigned k)
{
	uint64_t h = ((uint64_t)i << 32 | k) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static void unlike_body(void *arg)
{
	struct compact_arg *a = arg;
	unsigned n = a->i % 3 == 0 ? 700 : 24; /* 700 words: past REF_MAX_WORDS */
	volatile uint64_t v[700];
	for (unsigned k = 0; k < n; k++)
		v[k] = a->i % 3 == 2 ? 0x77 + k : unlike_word(a->i, k);
	for (int r = 0; r < 2; r++) {
		cta__fiber_switch(a->c->f[a->i], a->c->host);
		for (unsigned k = 0; k < n; k++)
			a->c->bad += v[k] != (a->i % 3 == 2 ? 0x77 + k : unlike_word(a->i, k));
	}
	a->c->done++;
}

static void fiber_shared_stacks_keep_deep_and_unlike_frames(void **state)
{
	(void)state;
	if (cta__fiber_share_after < 0)
		skip();
	int saved = cta__fiber_share_after;
	cta__fiber_share_after = 2;
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 64 * 1024), 0);
	struct compact *c = calloc(1, sizeof(*c));
	struct compact_arg *args = calloc(UNLIKE, sizeof(*args));
	assert_non_null(c);
	assert_non_null(args);
	c->host = cta__fiber_host(p);
	for (unsigned i = 0; i < UNLIKE; i++) {
		args[i] = (struct compact_arg){c, i};
		c->f[i] = cta__fiber_start(p, unlike_body, &args[i], c->host);
		assert_non_null(c->f[i]);
		cta__fiber_switch(c->host, c->f[i]);
	}
	/* Back in another order (each eviction now against other
	 * references), then to the end. */
	for (unsigned i = 0; i < UNLIKE; i++)
		cta__fiber_switch(c->host, c->f[(i * 7) % UNLIKE]);
	for (unsigned i = UNLIKE; i-- > 0;) {
		cta__fiber_switch(c->host, c->f[i]);
		assert_true(cta__fiber_finished(c->f[i]));
	}
	assert_int_equal(c->done, UNLIKE);
	assert_int_equal(c->bad, 0);
	cta__fiber_pool_free(p);
	free(args);
	free(c);
	cta__fiber_share_after = saved;
}

/* The pools of a simulation's host threads split the stacks between
 * them (cta__fiber_pool_share): a pool that is one of four makes a
 * quarter of cta__fiber_share_after, never less than the floor, and its
 * further fibers take turns on those, every frame kept. */
#define SPLIT_FIBERS 300
static void split_body(void *arg)
{
	struct compact_arg *a = arg;
	volatile uint64_t v[8];
	for (unsigned k = 0; k < 8; k++)
		v[k] = a->i * 100u + k;
	cta__fiber_switch(a->c->f[a->i], a->c->host);
	for (unsigned k = 0; k < 8; k++)
		a->c->bad += v[k] != a->i * 100u + k;
	a->c->done++;
}

static size_t split_run(unsigned npools, int *bad)
{
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 64 * 1024), 0);
	cta__fiber_pool_share(p, npools);
	struct compact *c = calloc(1, sizeof(*c));
	struct compact_arg *args = calloc(SPLIT_FIBERS, sizeof(*args));
	assert_non_null(c);
	assert_non_null(args);
	c->host = cta__fiber_host(p);
	for (unsigned i = 0; i < SPLIT_FIBERS; i++) {
		args[i] = (struct compact_arg){c, i};
		c->f[i] = cta__fiber_start(p, split_body, &args[i], c->host);
		assert_non_null(c->f[i]);
		cta__fiber_switch(c->host, c->f[i]);
	}
	for (unsigned i = 0; i < SPLIT_FIBERS; i++) {
		cta__fiber_switch(c->host, c->f[i]);
		assert_true(cta__fiber_finished(c->f[i]));
	}
	assert_int_equal(c->done, SPLIT_FIBERS);
	*bad = c->bad;
	size_t stacks = cta__fiber_pool_stacks(p);
	cta__fiber_pool_free(p);
	free(args);
	free(c);
	return stacks;
}

static void fiber_pools_split_the_stacks_of_a_simulation(void **state)
{
	(void)state;
	if (cta__fiber_share_after < 0)
		skip();
	int saved = cta__fiber_share_after, bad = 0;
	cta__fiber_share_after = 1024;
	assert_int_equal(split_run(1, &bad), SPLIT_FIBERS);
	assert_int_equal(bad, 0);
	assert_int_equal(split_run(4, &bad), 256);
	assert_int_equal(bad, 0);
	assert_int_equal(split_run(16, &bad), CTA__FIBER_SHARE_FLOOR);
	assert_int_equal(bad, 0);
	cta__fiber_share_after = 512;
	assert_int_equal(split_run(2, &bad), 256);
	assert_int_equal(bad, 0);
	cta__fiber_share_after = saved;
}

/* A stack's canary lies just below it (in the colour of the stack
 * beneath, or in its own lowest word for a slab's first stack): a body
 * that runs past the bottom of its stack overwrites it, and only its own
 * fiber is reported. */
struct overrun {
	struct cta__fiber *host, *f[2];
	int smash;
	size_t left;
};

static void overrun_body(void *arg)
{
	struct overrun *o = arg;
	struct cta__fiber *self = o->f[o->smash >= 0 ? o->smash : 0];
	o->left = cta__fiber_stack_left(self);
	if (o->smash >= 0 && o->left) {
		/* What a frame too large for the stack would write last. The
		 * stack starts on a page (its bottom is a little below what
		 * the callee's frame address gives). */
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
		char *lo = (char *)(((uintptr_t)__builtin_frame_address(0) - o->left) & ~(pg - 1));
		memset(lo - 8, 0, 8);
	}
}

static void fiber_overrun_below_the_stack_is_reported(void **state)
{
	(void)state;
	if (cta__fiber_share_after < 0)
		skip(); /* ASan's frames may lie off the stack */
	struct cta__fiber_pool *p;
	assert_int_equal(cta__fiber_pool_new(&p, 64 * 1024), 0);
	struct overrun o = {.smash = -1};
	o.host = cta__fiber_host(p);
	/* Three stacks alive at once: the second and third lie above another
	 * (the first, a slab's lowest, has its guard page below it). */
	struct cta__fiber *keep[3];
	for (int i = 0; i < 3; i++) {
		keep[i] = cta__fiber_start(p, overrun_body, &o, o.host);
		assert_non_null(keep[i]);
	}
	for (int i = 0; i < 3; i++)
		cta__fiber_release(p, keep[i]);
	/* Reused last released first: f[0] on the third stack, f[1] on the
	 * second. */
	for (int i = 0; i < 2; i++) {
		o.f[i] = cta__fiber_start(p, overrun_body, &o, o.host);
		assert_non_null(o.f[i]);
	}
	cta__fiber_switch(o.host, o.f[0]);
	assert_true(cta__fiber_finished(o.f[0]));
	assert_false(cta__fiber_overflowed(o.f[0]));
	assert_true(o.left > 0);
	o.smash = 1;
	cta__fiber_switch(o.host, o.f[1]);
	assert_true(cta__fiber_finished(o.f[1]));
	assert_true(o.left > 0);
	assert_true(cta__fiber_overflowed(o.f[1]));
	assert_false(cta__fiber_overflowed(o.f[0]));
	cta__fiber_pool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fiber_ping_pong_interleaves_in_switch_order),
	    cmocka_unit_test(fiber_return_switches_to_ret),
	    cmocka_unit_test(fiber_thousands_alive_at_once),
	    cmocka_unit_test(fiber_stack_is_reused_after_finish),
	    cmocka_unit_test(fiber_deep_recursion_fits_stack),
	    cmocka_unit_test(fiber_fp_results_and_rounding_survive_switches),
	    cmocka_unit_test(fiber_released_stack_is_reused),
	    cmocka_unit_test(fiber_pool_free_accepts_null),
	    cmocka_unit_test(fiber_pools_work_on_pool_workers),
	    cmocka_unit_test(fiber_shared_stacks_keep_every_fibers_frames),
	    cmocka_unit_test(fiber_suspended_on_shared_stacks_cost_bytes_not_pages),
	    cmocka_unit_test(fiber_shared_stacks_keep_deep_and_unlike_frames),
	    cmocka_unit_test(fiber_pools_split_the_stacks_of_a_simulation),
	    cmocka_unit_test(fiber_overrun_below_the_stack_is_reported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
