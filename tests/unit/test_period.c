/* Tests of the period skip (sim/engine/period.c and skip_periods in
 * sim/engine/sim.c): a run whose schedule repeats skips periods and ends
 * exactly as the run that simulates every block, whose bodies read their
 * SM and virtual time, whose costs change after the period was found, on
 * several devices and host threads; and a shift one nanosecond off is
 * seen by the same comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "engine/engine.h"
#include "engine/period.h"
#include "exec/exec.h"
#include "exec/fiber.h"
#include "exec/regions.h"
#include "simtest.h"

/* The first and last thread of each block record when their spin ended,
 * thread 0 its block's SM and start; from
 * block `from` on a block costs `more` ns more. */
struct per_args {
	unsigned long long *t_end; /* per block: its first and last thread */
	unsigned *sm;              /* per block */
	unsigned long long *t_start;
	unsigned long long ns, more;
	unsigned from;
};
CTA_KERNEL(per_kernel, struct per_args, p)
{
	if (threadIdx.x == 0) {
		p->sm[blockIdx.x] = cta_smid();
		p->t_start[blockIdx.x] = cta_globaltimer_ns();
	}
	cta_spin_ns(p->ns + (blockIdx.x >= p->from ? p->more : 0));
	if (threadIdx.x == 0 || threadIdx.x == blockDim.x - 1)
		p->t_end[2 * blockIdx.x + (threadIdx.x != 0)] = cta_globaltimer_ns();
}

/* Block `from`'s first thread overwrites the canary below its stack, as
 * a body that overran its stack would: the run stops there. */
CTA_KERNEL(per_smash, struct per_args, p)
{
	if (blockIdx.x == p->from && threadIdx.x == 0) {
		uint64_t *w = (uint64_t *)cta__fiber_canary(cta__exec_lane_self()->fiber);
		if (w)
			*w = 0;
	}
	cta_spin_ns(p->ns);
}

/* What the kernel compiler registers for a body it found never waits
 * (CTA__KC_NO_WAIT): this test's kernels, which gcc compiles, are told so. */
static void claim_never_waits(const struct cta_kernel_def *k)
{
	static const struct cta_kernel_def *done[2];
	if (done[0] == k || done[1] == k)
		return;
	done[done[0] != NULL] = k;
	struct cta__kc_def *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	*d = (struct cta__kc_def){.name = k->name,
	                          .why = "a test's claim",
	                          .file = k->file,
	                          .line = k->line,
	                          .flags = CTA__KC_NO_WAIT};
	cta__kc_register(d);
}

struct per_out {
	int rc;
	unsigned long long *t_end, *t_start;
	unsigned *sm;
	struct cta_kernel_stats st;
	uint64_t makespan, events, skipped, pre;
	int deterministic;
	char err[256];
};

enum { T = 256 };

static void per_run_of(const struct cta_kernel_def *kd, const struct cta_sim_opts *o, unsigned grid,
                       unsigned from, int skip, struct per_out *r)
{
	claim_never_waits(kd);
	memset(r, 0, sizeof(*r));
	r->t_end = calloc((size_t)grid * 2, sizeof(*r->t_end));
	r->t_start = calloc(grid, sizeof(*r->t_start));
	r->sm = calloc(grid, sizeof(*r->sm));
	assert_non_null(r->t_end);
	assert_non_null(r->t_start);
	assert_non_null(r->sm);
	struct per_args a = {r->t_end, r->sm, r->t_start, 300, 50, from};
	cta_sim_set_period_skip(skip);
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, o), 0);
	struct cta_launch l = {0};
	l.kernel = kd;
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = T;
	l.block[1] = l.block[2] = 1;
	l.args = &a;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	r->rc = cta_sim_run(s);
	cta_sim_set_period_skip(1);
	snprintf(r->err, sizeof(r->err), "%s", r->rc ? cta_sim_errmsg(s) : "");
	r->st = *cta_sim_kernel_stats(s, 0);
	r->st.label = NULL;
	r->makespan = cta_sim_makespan_ns(s);
	r->events = cta_sim_event_count(s);
	r->skipped = cta_sim_blocks_skipped(s);
	r->pre = s->per ? s->per->npre : 0;
	r->deterministic = cta_sim_deterministic(s);
	cta_sim_free(s);
}

static void per_run(const struct cta_sim_opts *o, unsigned grid, unsigned from, int skip,
                    struct per_out *r)
{
	per_run_of(&per_kernel, o, grid, from, skip, r);
}

static void per_free(struct per_out *r)
{
	free(r->t_end);
	free(r->t_start);
	free(r->sm);
}

/* 1 when runs a and b ended alike in everything observable. */
static int per_same(const struct per_out *a, const struct per_out *b, unsigned grid)
{
	return a->rc == b->rc && !memcmp(&a->st, &b->st, sizeof(a->st)) &&
	       a->makespan == b->makespan && a->events == b->events &&
	       a->deterministic == b->deterministic &&
	       !memcmp(a->t_end, b->t_end, (size_t)grid * 2 * sizeof(*a->t_end)) &&
	       !memcmp(a->t_start, b->t_start, grid * sizeof(*a->t_start)) &&
	       !memcmp(a->sm, b->sm, grid * sizeof(*a->sm));
}

/* Runs with and without the skip end alike (every thread's end, every
 * block's SM and start as the body reads them, the statistics, makespan
 * and event count), and the skip ran most blocks; where the cost changes
 * after the period was found (from < grid), the block off its prediction
 * and those of its period before it are handed back to the engine. */
static void repeating_schedule_is_skipped_exactly(void **state)
{
	(void)state;
	static const struct {
		const char *device;
		int fitted; /* the preset's duration model and issue gate */
		unsigned grid, from, threads, sm_limit;
	} cfg[] = {
	    {"H100-SXM", 1, 40000, 40000, 1, 0},  {"H100-SXM", 1, 40000, 25000, 1, 0},
	    {"H100-SXM", 0, 30000, 30000, 1, 0},  {"H200", 1, 30000, 21111, 1, 0},
	    {"H100-PCIe", 1, 30000, 30000, 4, 0}, {"B200", 1, 30000, 20000, 1, 0},
	    {"H100-SXM", 1, 20000, 20000, 1, 5},
	};
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		struct cta_sim_opts o = st_opts(cfg[i].device);
		if (cfg[i].fitted)
			o.device = *cta_device_find(cfg[i].device);
		o.threads = cfg[i].threads;
		o.sm_limit = cfg[i].sm_limit;
		struct per_out r[2];
		per_run(&o, cfg[i].grid, cfg[i].from, 0, &r[0]);
		per_run(&o, cfg[i].grid, cfg[i].from, 1, &r[1]);
		assert_int_equal(r[0].rc, 0);
		assert_int_equal(r[0].skipped, 0);
		/* With several host threads the skip waits until the pool's
		 * estimate says batches run on the engine's thread anyway:
		 * a measured time, which a sanitizer's build can keep above. */
		if (cfg[i].threads == 1) {
			if (r[1].skipped <= cfg[i].grid / 3)
				print_message("%s, grid %u: %llu blocks skipped\n", cfg[i].device,
				              cfg[i].grid, (unsigned long long)r[1].skipped);
			assert_true(r[1].skipped > cfg[i].grid / 3);
			if (cfg[i].from < cfg[i].grid)
				assert_true(r[1].pre > 0);
		}
		assert_int_equal(r[1].st.launched, cfg[i].grid);
		assert_true(per_same(&r[0], &r[1], cfg[i].grid));
		per_free(&r[0]);
		per_free(&r[1]);
	}
}

/* The comparison above sees a skip that is wrong: the state shifted one
 * nanosecond too far changes what the bodies read and the makespan. */
static void skip_shifted_wrong_is_seen(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.device = *cta_device_find("H100-SXM");
	struct per_out r[2];
	per_run(&o, 30000, 30000, 0, &r[0]);
	cta__engine_period_fault = 1;
	per_run(&o, 30000, 30000, 1, &r[1]);
	cta__engine_period_fault = 0;
	assert_true(r[1].skipped > 0);
	assert_false(per_same(&r[0], &r[1], 30000));
	assert_int_not_equal(r[0].makespan, r[1].makespan);
	per_free(&r[0]);
	per_free(&r[1]);
}

/* A body that overran its stack in a block of a skipped period stops the
 * run where it stops without the skip, with the same message: each
 * skipped block's canary is checked before the next one is made. */
static void stack_overrun_in_a_skipped_block_is_seen(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.device = *cta_device_find("H100-SXM");
	o.threads = 1;
	struct per_out r[2];
	per_run_of(&per_smash, &o, 40000, 30000, 0, &r[0]);
	per_run_of(&per_smash, &o, 40000, 30000, 1, &r[1]);
	assert_int_not_equal(r[0].rc, 0);
	assert_non_null(strstr(r[0].err, "overflowed"));
	assert_string_equal(r[0].err, r[1].err);
	assert_true(r[1].skipped > 20000);
	assert_true(per_same(&r[0], &r[1], 40000));
	per_free(&r[0]);
	per_free(&r[1]);
}

/* Nothing to skip where the schedule does not repeat (jittered latencies)
 * or where the run keeps a trace. */
static void no_skip_without_a_period_or_with_a_trace(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.device = *cta_device_find("H100-SXM");
	o.jitter_ns = 20;
	struct per_out r;
	per_run(&o, 20000, 20000, 1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.skipped, 0);
	per_free(&r);
	o.jitter_ns = 0;
	char path[] = "/tmp/ctasim_period_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	o.trace_path = path;
	per_run(&o, 20000, 20000, 1, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.skipped, 0);
	per_free(&r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(repeating_schedule_is_skipped_exactly),
	    cmocka_unit_test(skip_shifted_wrong_is_seen),
	    cmocka_unit_test(stack_overrun_in_a_skipped_block_is_seen),
	    cmocka_unit_test(no_skip_without_a_period_or_with_a_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
