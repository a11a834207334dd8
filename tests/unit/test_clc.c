/* Tests of cluster launch control (sim/clc): exactly-once coverage holds
 * under fault injection and catches a kernel that loses an index; cancels
 * hand out the next pending block; failure reasons are counted; runs are
 * reproducible by seed. The UB rules are tested in test_ub.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/upcalls.h"
#include "clc/clc.h"
#include "ctasim/calibrate.h"
#include "ctasim/trace.h"
#include "engine/engine.h"
#include "exec/exec.h"
#include "exec/fiber.h"
#include "sched/sched.h"
#include "simtest.h"

#define UB_BODY "kernels/ub_body.h"

/* ---- test kernels ------------------------------------------------------- */

/* The guide's low-level loop with a bug: after a successful cancel the
 * block stops without reading the stolen index, so that block is lost. */
struct lose_args {
	unsigned *done; /* per block: tiles done */
};
CTA_KERNEL(clc_lose_index, struct lose_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	__syncthreads();
	if (cta_thread_rank() == 0) {
		atomicAdd(&p->done[blockIdx.x], 1u);
		cta_clc_try_cancel(result, bar);
		cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
	}
	while (!cta_mbarrier_try_wait_parity(bar, 0)) {
	}
	/* The bug: success or not, the block exits. */
	(void)cta_clc_query_cancel_is_canceled(result);
}

/* A for_each work-stealing kernel that records how often each logical
 * block was processed, for the priority test. */
struct fe_args {
	unsigned *count; /* per logical block */
	unsigned long long ns;
};
static void fe_body(dim3 b, void *arg)
{
	const struct fe_args *p = (const struct fe_args *)arg;
	if (cta_thread_rank() == 0)
		atomicAdd(&p->count[b.x], 1u);
	cta_spin_ns(p->ns);
}
CTA_KERNEL(clc_fe_count, struct fe_args, p)
{
	cta_for_each_canceled_block(1, fe_body, (void *)p);
}

/* ---- coverage under fault injection --------------------------------------- */

struct cov_kernel {
	const char *name;
	const char *args[5];
	unsigned sm_limit;
	unsigned csize;
};
static const struct cov_kernel cov_kernels[] = {
    /* Sizes and SM counts chosen so that at most half the blocks are
     * resident at once: the rest are stolen or launched later. */
    {"vec_add_clc", {"n=8192", "ns=500", NULL}, 1, 1},
    {"vec_add_clc_2d", {"nx=64", "ny=64", "ns=500"}, 1, 1},
    {"vec_add_clc_3d", {"nx=16", "ny=16", "nz=16", "ns=500"}, 1, 1},
    {"vec_add_try_cancel_blocks", {"n=8192", "ns=500", NULL}, 1, 1},
    {"vecscale_clc", {"n=16384", "ns=500", NULL}, 2, 1},
    {"vecscale_clc_cluster", {"n=16384", "ns=500", NULL}, 2, 2},
    {"spin_clc", {"grid=64", "ns=500", "imbalance=heavy_tail", NULL}, 2, 1},
};

struct fault {
	double rate;
	int64_t after;
};
static const struct fault faults[] = {{0, -1}, {0.5, -1}, {1.0, -1}, {0, 0}, {0, 1}, {0, 5}};

static void check_coverage(const struct cov_kernel *k, const struct fault *f, uint64_t seed)
{
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = k->sm_limit;
	o.cancel_fail_rate = f->rate;
	o.cancel_fail_after = f->after;
	o.seed = seed;
	struct cta_harness *h;
	int rc = st_run_harness(&h, k->name, &o, k->args);
	cta_sim *s = cta_harness_sim(h);
	if (rc != 0)
		fail_msg("%s rate %g after %lld: rc %d (%s)", k->name, f->rate, (long long)f->after,
		         rc, cta_harness_errmsg(h));
	assert_int_equal(cta_sim_ub_count(s), 0);
	assert_null(cta_harness_gpu(h)); /* the simulator names no GPU */
	if (cta_harness_verdict(h) != CTA_VERDICT_PASS)
		fail_msg("%s rate %g after %lld: %s", k->name, f->rate, (long long)f->after,
		         cta_harness_errmsg(h));
	const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, 0);
	assert_true(st->coverage_checked);
	assert_true(st->coverage_ok);
	assert_int_equal(st->lost, 0);
	assert_int_equal(st->duplicated, 0);
	/* Every logical block either started on its own or was stolen. */
	assert_int_equal(st->launched + st->stolen, st->blocks);
	assert_true(st->cancels > 0);
	uint64_t failed = st->cancel_fail[1] + st->cancel_fail[2] + st->cancel_fail[3];
	assert_int_equal((st->cancels - failed) * k->csize, st->stolen);
	if (f->rate == 0 && f->after < 0) {
		/* The setup must make stealing happen, or this proves nothing. */
		assert_true(st->stolen > 0);
		assert_int_equal(st->cancel_fail[CTA_CANCEL_FAIL_INJECTED], 0);
	}
	if (f->rate == 1.0 || f->after == 0) {
		assert_int_equal(st->stolen, 0);
		assert_true(st->cancel_fail[CTA_CANCEL_FAIL_INJECTED] > 0);
	}
	if (f->after > 0)
		assert_true(st->stolen <= (uint64_t)f->after * k->csize);
	cta_harness_free(h);
}

static void clc_kernels_cover_every_index_once_under_fault_injection(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cov_kernels) / sizeof(cov_kernels[0]); i++)
		for (size_t j = 0; j < sizeof(faults) / sizeof(faults[0]); j++)
			check_coverage(&cov_kernels[i], &faults[j], 1 + j);
}

static void clc_coverage_holds_for_many_seeds_at_half_failure_rate(void **state)
{
	(void)state;
	struct fault f = {0.5, -1};
	for (uint64_t seed = 100; seed < 106; seed++) {
		check_coverage(&cov_kernels[0], &f, seed);
		check_coverage(&cov_kernels[5], &f, seed);
	}
}

static void cancels_hand_out_the_next_pending_block_in_dispatch_order(void **state)
{
	(void)state;
	/* In the order the engine produced them, dispatch records and
	 * successful cancel_done records together hand out 0, 1, 2, ...:
	 * a cancel takes the next block not yet started, and that block is
	 * never dispatched on its own. */
	static const char *const kernels[] = {"vec_add_clc", "vecscale_clc",
	                                      "vecscale_clc_cluster"};
	static const unsigned csize[] = {1, 1, 2};
	static const char *const vargs[] = {ST_TSAN_SMALL("n=20000", "n=8192"), "ns=500", NULL};
	/* (ThreadSanitizer counts every waiting thread's stack as a thread and
	 * stops at 8128: smaller clusters of blocks there.) */
	static const char *const sargs[] = {ST_TSAN_SMALL("n=32768", "n=16384"), "ns=500", NULL};
	for (int i = 0; i < 3; i++) {
		char path[256];
		st_tmpname(path, sizeof(path), "handout.trace");
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 2;
		o.cancel_fail_rate = 0.3;
		o.seed = 11;
		o.trace_path = path;
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, kernels[i], &o, i ? sargs : vargs), 0);
		cta_harness_free(h);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		uint64_t next = 0, stolen = 0;
		for (size_t j = 0; j < t.count; j++) {
			const struct cta_trace_rec *r = &t.recs[j];
			uint64_t got, n = 1;
			if (r->ev == CTA_TEV_DISPATCH) {
				got = r->block;
			} else if (r->ev == CTA_TEV_CANCEL_DONE && r->code == CTA_CANCEL_SUCCESS) {
				got = r->arg;
				n = csize[i]; /* a whole cluster */
				stolen++;
			} else {
				continue;
			}
			if (got != next)
				fail_msg("%s: record %zu hands out block %llu, expected %llu",
				         kernels[i], j, (unsigned long long)got,
				         (unsigned long long)next);
			next += n;
		}
		assert_int_equal(next, (uint64_t)t.header.kernels[0].grid[0]);
		assert_true(stolen > 0);
		cta_trace_free(&t);
		remove(path);
	}
}

static void kernel_that_drops_a_stolen_index_violates_coverage(void **state)
{
	(void)state;
	/* Two blocks, one SM that holds one of them: block 0 steals block 1
	 * and exits without doing it. */
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 1;
	unsigned done[2] = {0, 0};
	struct lose_args a = {done};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = {0};
	l.kernel = &clc_lose_index;
	l.grid[0] = 2;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = 32;
	l.block[1] = l.block[2] = 1;
	l.smem_static = 32;
	l.smem_dynamic = 200000;
	l.args = &a;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), CTA_ECOVERAGE);
	assert_non_null(strstr(cta_sim_errmsg(s), "coverage"));
	assert_int_equal(cta_sim_ub_count(s), 0);
	const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, 0);
	assert_true(st->coverage_checked);
	assert_false(st->coverage_ok);
	assert_int_equal(st->stolen, 1);
	assert_int_equal(st->lost, 1);
	assert_int_equal(st->duplicated, 0);
	uint64_t lost[4];
	assert_int_equal(cta_sim_coverage_list(s, 0, 0, lost, 4), 1);
	assert_int_equal(lost[0], 1);
	assert_int_equal(done[0], 1);
	assert_int_equal(done[1], 0);
	cta_sim_free(s);
}

/* ---- failure reasons ---------------------------------------------------------- */

static void cancel_failures_are_counted_by_reason(void **state)
{
	(void)state;
	char path[256];
	st_tmpname(path, sizeof(path), "reasons.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 2;
	o.cancel_fail_rate = 0.5;
	o.seed = 3;
	o.trace_path = path;
	const char *args[] = {"n=20000", "ns=500", NULL};
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, "vec_add_clc", &o, args), 0);
	const struct cta_kernel_stats *st = cta_sim_kernel_stats(cta_harness_sim(h), 0);
	/* Each started block ends its loop at its first failure: some find
	 * nothing pending, some are injected; none here is a priority one. */
	assert_true(st->cancel_fail[CTA_CANCEL_FAIL_EMPTY] > 0);
	assert_true(st->cancel_fail[CTA_CANCEL_FAIL_INJECTED] > 0);
	assert_int_equal(st->cancel_fail[CTA_CANCEL_FAIL_PRIORITY], 0);
	assert_int_equal(st->cancel_fail[CTA_CANCEL_FAIL_EMPTY] +
	                     st->cancel_fail[CTA_CANCEL_FAIL_INJECTED],
	                 st->launched);
	uint64_t counts[4] = {st->cancels - st->cancel_fail[1] - st->cancel_fail[3],
	                      st->cancel_fail[1], st->cancel_fail[2], st->cancel_fail[3]};
	cta_harness_free(h);

	/* The trace's cancel_done records carry the same reasons. */
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	uint64_t seen[4] = {0};
	for (size_t i = 0; i < t.count; i++)
		if (t.recs[i].ev == CTA_TEV_CANCEL_DONE) {
			assert_true(t.recs[i].code >= 0 && t.recs[i].code < 4);
			seen[t.recs[i].code]++;
			if (t.recs[i].code == CTA_CANCEL_SUCCESS)
				assert_true(t.recs[i].arg != CTA_TRACE_NONE);
			else
				assert_true(t.recs[i].arg == CTA_TRACE_NONE);
		}
	for (int i = 0; i < 4; i++)
		assert_int_equal(seen[i], counts[i]);
	/* FORMAT.md's coverage rule holds on the trace alone: every index in
	 * exactly one start or steal record. */
	uint64_t nblocks = (uint64_t)t.header.kernels[0].grid[0];
	unsigned char *hits = calloc(nblocks, 1);
	for (size_t i = 0; i < t.count; i++)
		if (t.recs[i].ev == CTA_TEV_START || t.recs[i].ev == CTA_TEV_STEAL) {
			assert_true(t.recs[i].block < nblocks);
			hits[t.recs[i].block]++;
		}
	for (uint64_t i = 0; i < nblocks; i++)
		assert_int_equal(hits[i], 1);
	free(hits);
	cta_trace_free(&t);
	remove(path);
}

static void cancel_fails_while_a_higher_priority_kernel_waits(void **state)
{
	(void)state;
	/* A low-priority stealing kernel fills 2 SMs; a high-priority one is
	 * released while it still has pending blocks. Its cancels must then
	 * fail for priority, and both kernels still cover every index once. */
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 2;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	int hi;
	assert_int_equal(cta_sim_stream_new(s, &hi, o.device.priority_greatest), 0);
	enum { NB = 200 };
	unsigned lo_count[NB] = {0}, hi_count[NB] = {0};
	struct fe_args lo_a = {lo_count, 2000}, hi_a = {hi_count, 2000};
	struct cta_launch l = {0};
	l.kernel = &clc_fe_count;
	l.grid[0] = NB;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = 256;
	l.block[1] = l.block[2] = 1;
	l.args = &lo_a;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	l.args = &hi_a;
	l.stream = hi;
	l.release_ns = 20000;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	assert_int_equal(cta_sim_ub_count(s), 0);
	const struct cta_kernel_stats *lo = cta_sim_kernel_stats(s, 0);
	const struct cta_kernel_stats *hs = cta_sim_kernel_stats(s, 1);
	assert_true(lo->cancel_fail[CTA_CANCEL_FAIL_PRIORITY] > 0);
	assert_int_equal(hs->cancel_fail[CTA_CANCEL_FAIL_PRIORITY], 0);
	assert_true(lo->coverage_ok && hs->coverage_ok);
	for (int i = 0; i < NB; i++) {
		assert_int_equal(lo_count[i], 1);
		assert_int_equal(hi_count[i], 1);
	}
	/* The high-priority kernel finished first. */
	assert_true(hs->last_end_ns < lo->last_end_ns);
	cta_sim_free(s);
}

/* ---- determinism ------------------------------------------------------------------ */

/* Host threads for the next trace_of (0: all cores, the default). */
static unsigned trace_threads;
/* UB mode for the next trace_of (CTA_UB_REPORT, the default, is 0). */
static cta_ub_mode trace_ub;

/* The sm_90 emulation's costs (docs/FIDELITY.md), round numbers. */
static void emulated_clc(struct cta_device_model *d)
{
	d->clc_emulated = 1;
	d->clc_request_ns = 1000;
	d->clc_request_tail_ns = 100;
	d->clc_claim_ns = 300;
	d->clc_claim_turn_ns = 500;
	d->clc_steal_ns = 200;
	d->clc_exit_ns = 400;
	d->clc_far_gpcs = 0;
	d->clc_far_ppm = 0;
	d->clc_crowd_units = 0;
	d->clc_entry_ps = 0;
	d->clc_sector_ps = 0;
}

static int trace_emulated; /* trace_of: model the sm_90 emulation */

static char *trace_of(const char *kernel, const char *const *args, uint64_t seed, double rate,
                      uint64_t jitter, size_t *len)
{
	char path[256];
	st_tmpname(path, sizeof(path), "det.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	/* 16 blocks resident at most: every waiting thread holds a fiber,
	 * and ThreadSanitizer counts fibers against its thread limit. */
	o.sm_limit = 2;
	o.seed = seed;
	o.cancel_fail_rate = rate;
	o.jitter_ns = jitter;
	o.trace_path = path;
	o.threads = trace_threads;
	o.ub_mode = trace_ub;
	if (trace_emulated)
		emulated_clc(&o.device);
	struct cta_harness *h;
	int rc = st_run_harness(&h, kernel, &o, args);
	if (rc)
		fail_msg("%s: rc %d: %s", kernel, rc, cta_harness_errmsg(h));
	cta_harness_free(h);
	char *text = st_slurp(path, len);
	assert_non_null(text);
	remove(path);
	return text;
}

static void same_seed_gives_a_byte_identical_trace(void **state)
{
	(void)state;
	const char *vargs[] = {ST_TSAN_SMALL("n=20000", "n=4096"), "ns=500", NULL};
	const char *cargs[] = {ST_TSAN_SMALL("n=65536", "n=4096"), "ns=500", NULL};
	const char *sargs[] = {"n=100000", NULL};
	struct {
		const char *k;
		const char *const *args;
		double rate;
		uint64_t jitter;
	} runs[] = {
	    {"vec_add_clc", vargs, 0.3, 100},
	    {"vecscale_clc_cluster", cargs, 0.3, 100},
	    {"clc_two_requests", vargs, 0.3, 0},
	    {"saxpy", sargs, 0, 100},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		size_t la, lb;
		char *a = trace_of(runs[i].k, runs[i].args, 42, runs[i].rate, runs[i].jitter, &la);
		char *b = trace_of(runs[i].k, runs[i].args, 42, runs[i].rate, runs[i].jitter, &lb);
		assert_true(la > ST_TSAN_SMALL(1000, 300));
		assert_int_equal(la, lb);
		if (memcmp(a, b, la))
			fail_msg("%s: two runs with seed 42 differ", runs[i].k);
		free(a);
		free(b);
	}
}

/* Checking off keeps none of the state the rules need, and nothing else
 * changes: valid CLC kernels give the same trace, byte for byte, with
 * checking on and off (cluster multicast, the work-stealing loops, the
 * guide's two requests; with injected failures and jitter). */
static void trace_does_not_depend_on_checking(void **state)
{
	(void)state;
	const char *vargs[] = {ST_TSAN_SMALL("n=20000", "n=4096"), "ns=500", NULL};
	const char *cargs[] = {ST_TSAN_SMALL("n=65536", "n=4096"), "ns=500", NULL};
	static const char *const kernels[] = {"vec_add_clc", "vec_add_try_cancel_blocks",
	                                      "vecscale_clc", "vecscale_clc_cluster",
	                                      "clc_two_requests"};
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		const char *const *args = strstr(kernels[i], "vecscale") ? cargs : vargs;
		size_t la, lb;
		trace_ub = CTA_UB_REPORT;
		char *a = trace_of(kernels[i], args, 9, 0.3, 100, &la);
		trace_ub = CTA_UB_OFF;
		char *b = trace_of(kernels[i], args, 9, 0.3, 100, &lb);
		trace_ub = CTA_UB_REPORT;
		assert_true(la > 300);
		assert_int_equal(la, lb);
		if (memcmp(a, b, la))
			fail_msg("%s: traces with checking on and off differ", kernels[i]);
		free(a);
		free(b);
	}
}

static const char *events_of(const char *trace);

static void trace_does_not_depend_on_the_number_of_host_threads(void **state)
{
	(void)state;
	/* Kernels without atomics: byte-identical for 1, 2 and 7 host threads.
	 * compute_heavy's blocks are costly enough to run on the pool. */
	const char *vargs[] = {ST_TSAN_SMALL("n=20000", "n=4096"), "ns=500", NULL};
	const char *sargs[] = {"n=100000", NULL};
	const char *cargs[] = {"n=65536", ST_TSAN_SMALL("iters=200", "iters=20"), NULL};
	struct {
		const char *k;
		const char *const *args;
		double rate;
	} runs[] = {{"vec_add_clc", vargs, 0.3},
	            {"clc_two_requests", vargs, 0.3},
	            {"saxpy", sargs, 0},
	            {"compute_heavy", cargs, 0}};
	static const unsigned nthreads[] = {2, 7};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		size_t la, lb;
		trace_threads = 1;
		char *a = trace_of(runs[i].k, runs[i].args, 5, runs[i].rate, 100, &la);
		assert_non_null(strstr(a, "#deterministic 1"));
		for (size_t j = 0; j < 2; j++) {
			trace_threads = nthreads[j];
			char *b = trace_of(runs[i].k, runs[i].args, 5, runs[i].rate, 100, &lb);
			assert_int_equal(la, lb);
			if (memcmp(a, b, la))
				fail_msg("%s: traces with 1 and %u host threads differ", runs[i].k,
				         nthreads[j]);
			free(b);
		}
		trace_threads = 0;
		free(a);
	}
}

/* The emulated CLC's claim reads the issuing thread's time where it waits:
 * the same trace for any number of host threads. */
static void emulated_clc_trace_does_not_depend_on_the_number_of_host_threads(void **state)
{
	(void)state;
	const char *vargs[] = {ST_TSAN_SMALL("n=20000", "n=4096"), "ns=500", NULL};
	const char *const kernels[] = {"vec_add_clc", "clc_two_requests"};
	trace_emulated = 1;
	for (size_t i = 0; i < 2; i++) {
		size_t la, lb;
		trace_threads = 1;
		char *a = trace_of(kernels[i], vargs, 5, 0, 0, &la);
		trace_threads = 7;
		char *b = trace_of(kernels[i], vargs, 5, 0, 0, &lb);
		assert_int_equal(la, lb);
		if (memcmp(a, b, la))
			fail_msg("%s: emulated CLC traces with 1 and 7 host threads differ",
			         kernels[i]);
		free(a);
		free(b);
	}
	trace_threads = 0;
	trace_emulated = 0;
}

/* Under the sm_90 emulation a failed request completes clc_request_ns after
 * its issue; a success claims its unit after the request and the work its
 * issuer does next (the rest of the warp's, which runs first), and claims
 * of units that share a 16-unit word of the claim bitmap complete one
 * clc_claim_turn_ns apart: 16 blocks that request at once take units 16-31,
 * one word, and their claims complete 3300 ns after the issue (1000 + 2000
 * of spin_clc's work + 300), then every 500 ns. */
static void emulated_claims_of_one_word_complete_a_turn_apart(void **state)
{
	(void)state;
	char path[256];
	st_tmpname(path, sizeof(path), "claims.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 8; /* 1024-thread blocks, 2 an SM: 16 requesters */
	o.timing_only = 1;
	o.trace_path = path;
	emulated_clc(&o.device);
	const char *args[] = {"grid=64", "ns=2000", NULL};
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, "spin_clc", &o, args), 0);
	cta_harness_free(h);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	uint64_t issue[64], done[64] = {0};
	unsigned nfail = 0;
	for (size_t j = 0; j < t.count; j++) {
		const struct cta_trace_rec *r = &t.recs[j];
		assert_true(r->phys == CTA_TRACE_NONE || r->phys < 64);
		if (r->ev == CTA_TEV_CANCEL)
			issue[r->phys] = r->t_ns;
		else if (r->ev == CTA_TEV_CANCEL_DONE && r->code != CTA_CANCEL_SUCCESS) {
			assert_int_equal(r->t_ns - issue[r->phys], 1000);
			nfail++;
		} else if (r->ev == CTA_TEV_CANCEL_DONE && r->arg >= 16 && r->arg < 32) {
			done[r->arg] = r->t_ns;
			issue[r->arg] = issue[r->phys];
		}
	}
	assert_int_equal(nfail, 16);
	uint64_t first = UINT64_MAX, last = 0;
	for (unsigned u = 16; u < 32; u++) {
		assert_true(done[u] > 0);
		if (done[u] < first)
			first = done[u];
		if (done[u] > last)
			last = done[u];
	}
	for (unsigned u = 16; u < 32; u++) {
		if (done[u] == first)
			assert_int_equal(first - issue[u], 3300);
		/* Every completion is a whole number of turns after the first. */
		assert_int_equal((done[u] - first) % 500, 0);
	}
	assert_int_equal(last - first, 15 * 500);
	cta_trace_free(&t);
	remove(path);
}

/* The emulation's atomics cost more from the GPCs on the far side of the
 * L2 (clc_far_gpcs, clc_far_ppm): on the first 8 SMs of an H100 (GPCs 0-3,
 * two SMs each), with GPC 1 far at 1.5x, the failed requests of the
 * blocks on SMs 2 and 3 complete 1500 ns after their issue and every
 * other one 1000 ns after; with the factor 0 all take 1000 ns. */
static void emulated_requests_from_far_gpcs_take_longer(void **state)
{
	(void)state;
	for (int far = 0; far < 2; far++) {
		char path[256];
		st_tmpname(path, sizeof(path), "far.trace");
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 8;
		o.timing_only = 1;
		o.trace_path = path;
		emulated_clc(&o.device);
		o.device.clc_far_gpcs = 1u << 1;
		o.device.clc_far_ppm = far ? 1500000 : 0;
		const char *args[] = {"grid=64", "ns=2000", NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "spin_clc", &o, args), 0);
		cta_harness_free(h);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		uint64_t issue[64] = {0};
		unsigned nfar = 0, nnear = 0;
		for (size_t j = 0; j < t.count; j++) {
			const struct cta_trace_rec *r = &t.recs[j];
			assert_true(r->phys == CTA_TRACE_NONE || r->phys < 64);
			if (r->ev == CTA_TEV_CANCEL) {
				issue[r->phys] = r->t_ns;
			} else if (r->ev == CTA_TEV_CANCEL_DONE && r->code != CTA_CANCEL_SUCCESS) {
				int on_far = r->sm == 2 || r->sm == 3;
				assert_int_equal(r->t_ns - issue[r->phys],
				                 far && on_far ? 1500 : 1000);
				nfar += on_far;
				nnear += !on_far;
			}
		}
		assert_int_equal(nfar + nnear, 16);
		assert_int_equal(nfar, 4);
		cta_trace_free(&t);
		remove(path);
	}
}

/* Requests issued at one instant take the units in the order their
 * atomics reach the emulation's cursor, the near GPCs' first
 * (cta__clc_arrival): 16 blocks of spin_clc resident on the first 8 SMs
 * of an H100, GPC 1 (SMs 2 and 3) far at 1.5x, 12 units left after the
 * first wave. With the far factor the 12 near blocks' first requests take
 * the 12 units and the 4 far blocks' fail; with the factor 0 the units go
 * in the blocks' order, and some far block's takes one. */
static void emulated_simultaneous_requests_go_to_the_near_gpcs_first(void **state)
{
	(void)state;
	for (int far = 0; far < 2; far++) {
		char path[256];
		st_tmpname(path, sizeof(path), "arrive.trace");
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 8;
		o.timing_only = 1;
		o.trace_path = path;
		emulated_clc(&o.device);
		o.device.clc_far_gpcs = 1u << 1;
		o.device.clc_far_ppm = far ? 1500000 : 0;
		const char *args[] = {"grid=28", "ns=2000", NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "spin_clc", &o, args), 0);
		cta_harness_free(h);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		int seen[28] = {0};
		uint64_t issue0 = UINT64_MAX, issue1 = 0;
		unsigned near_won = 0, far_won = 0, far_lost = 0, firsts = 0;
		for (size_t j = 0; j < t.count; j++) {
			const struct cta_trace_rec *r = &t.recs[j];
			if (r->ev == CTA_TEV_CANCEL && r->phys < 28 && !seen[r->phys]) {
				seen[r->phys] = 1; /* its first request */
				issue0 = r->t_ns < issue0 ? r->t_ns : issue0;
				issue1 = r->t_ns > issue1 ? r->t_ns : issue1;
			} else if (r->ev == CTA_TEV_CANCEL_DONE && r->phys < 28 &&
			           seen[r->phys] == 1) {
				seen[r->phys] = 2; /* its first completion */
				int on_far = r->sm == 2 || r->sm == 3;
				int won = r->code == CTA_CANCEL_SUCCESS;
				near_won += !on_far && won;
				far_won += on_far && won;
				far_lost += on_far && !won;
				firsts++;
			}
		}
		assert_int_equal(firsts, 16);
		assert_int_equal(issue0, issue1); /* one instant */
		if (far) {
			assert_int_equal(near_won, 12);
			assert_int_equal(far_lost, 4);
		} else {
			assert_true(far_won > 0);
		}
		cta_trace_free(&t);
		remove(path);
	}
}

/* The emulation's round trip grows with the requesters
 * (clc_crowd_units): with 16 blocks of spin_clc resident on 8 SMs and
 * clc_crowd_units 8, the first failed request, issued while all 16 are
 * resident, completes 1000 x (1 + (16 / 8)^2) = 5000 ns after its issue,
 * and every later one 1000 x (1 + (r / 8)^2) with r the blocks still
 * resident; with clc_crowd_units 0 every one takes 1000. */
static void emulated_requests_take_longer_with_more_requesters(void **state)
{
	(void)state;
	for (int crowd = 0; crowd < 2; crowd++) {
		char path[256];
		st_tmpname(path, sizeof(path), "crowd.trace");
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 8; /* 1024-thread blocks, 2 an SM: 16 requesters */
		o.timing_only = 1;
		o.trace_path = path;
		emulated_clc(&o.device);
		o.device.clc_crowd_units = crowd ? 8 : 0;
		const char *args[] = {"grid=64", "ns=2000", NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "spin_clc", &o, args), 0);
		cta_harness_free(h);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		uint64_t issue[64] = {0}, first_issue = UINT64_MAX, first_lat = 0;
		unsigned nfail = 0;
		for (size_t j = 0; j < t.count; j++) {
			const struct cta_trace_rec *r = &t.recs[j];
			assert_true(r->phys == CTA_TRACE_NONE || r->phys < 64);
			if (r->ev == CTA_TEV_CANCEL) {
				issue[r->phys] = r->t_ns;
			} else if (r->ev == CTA_TEV_CANCEL_DONE && r->code != CTA_CANCEL_SUCCESS) {
				uint64_t lat = r->t_ns - issue[r->phys];
				int ok = !crowd && lat == 1000;
				for (unsigned n = 1; n <= 16 && crowd && !ok; n++)
					ok = lat == (uint64_t)(1000 * (1 + n * n / 64.0) + 0.5);
				if (!ok)
					fail_msg("a failure took %llu ns", (unsigned long long)lat);
				if (issue[r->phys] < first_issue) {
					first_issue = issue[r->phys];
					first_lat = lat;
				}
				nfail++;
			}
		}
		assert_int_equal(nfail, 16);
		assert_int_equal(first_lat, crowd ? 5000 : 1000);
		cta_trace_free(&t);
		remove(path);
	}
}

/* After a completion the issuer's record of it pays clc_crowd_tail_ppm of
 * the request's growth again: 16 blocks of spin_clc resident on 8 SMs,
 * clc_crowd_units 8, each block's one request fails and the block ends
 * half of that request's growth later with a share of 500000 than with
 * none. */
static void emulated_issuer_pays_the_crowd_share_after_a_completion(void **state)
{
	(void)state;
	uint64_t end[2][16] = {{0}}, growth[16] = {0};
	for (int share = 0; share < 2; share++) {
		char path[256];
		st_tmpname(path, sizeof(path), "ctail.trace");
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 8;
		o.timing_only = 1;
		o.trace_path = path;
		emulated_clc(&o.device);
		o.device.clc_crowd_units = 8;
		o.device.clc_crowd_tail_ppm = share ? 500000 : 0;
		const char *args[] = {"grid=16", "ns=2000", NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "spin_clc", &o, args), 0);
		cta_harness_free(h);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		uint64_t issue[16] = {0};
		for (size_t j = 0; j < t.count; j++) {
			const struct cta_trace_rec *r = &t.recs[j];
			assert_true(r->phys == CTA_TRACE_NONE || r->phys < 16);
			if (r->ev == CTA_TEV_CANCEL)
				issue[r->phys] = r->t_ns;
			else if (r->ev == CTA_TEV_CANCEL_DONE)
				growth[r->phys] = r->t_ns - issue[r->phys] - 1000;
			else if (r->ev == CTA_TEV_END)
				end[share][r->phys] = r->t_ns;
		}
		cta_trace_free(&t);
		remove(path);
	}
	for (unsigned b = 0; b < 16; b++) {
		assert_true(growth[b] > 0);
		assert_int_equal(end[1][b] - end[0][b], (growth[b] * 500000 + 500000) / 1000000);
	}
}

/* Simulates spin_clc (4 indices a block, 2 us each) under the emulation
 * on sms SMs (two 1024-thread blocks each: 2 x sms requesters) with a
 * crowd of 64 units and the given tail share, into *t, marked as a GPU's
 * emulated trace. */
static void crowd_loop_trace(struct cta_trace *t, unsigned sms, unsigned share)
{
	char path[256];
	st_tmpname(path, sizeof(path), "ctfit.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = sms;
	o.timing_only = 1;
	o.trace_path = path;
	emulated_clc(&o.device);
	o.device.clc_crowd_units = 64;
	o.device.clc_crowd_tail_ppm = share;
	char grid[32];
	snprintf(grid, sizeof(grid), "grid=%u", 8 * sms);
	const char *args[] = {grid, "ns=2000", NULL};
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, "spin_clc", &o, args), 0);
	cta_harness_free(h);
	char err[256];
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
	strcpy(t->header.clc, "emulated");
}

/* ctasim calibrate recovers the tail's share of the crowd
 * (clc_crowd_tail_ppm) from the steal loops of three crowds (32, 64 and
 * 128 requesters against a crowd of 64 units): the slope of the way out on the
 * request's growth; from one crowd alone it fits none. */
static void crowd_tail_share_is_recovered_from_simulated_loops(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	struct cta_trace t[3];
	for (unsigned i = 0; i < 3; i++)
		crowd_loop_trace(&t[i], 16u << i, 500000);
	const struct cta_trace *ts[3] = {&t[0], &t[1], &t[2]};
	uint64_t loop_ns[3] = {2000, 2000, 2000};
	struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
	co.clc_ns = loop_ns;
	struct cta_device_model m;
	struct cta_calib_report rep;
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 3, &co, err, sizeof(err)), 0);
	if (m.clc_crowd_units < 58 || m.clc_crowd_units > 70)
		fail_msg("crowd %u units, simulated with 64", m.clc_crowd_units);
	if (m.clc_crowd_tail_ppm < 450000 || m.clc_crowd_tail_ppm > 550000)
		fail_msg("tail share %u ppm, simulated with 500000", m.clc_crowd_tail_ppm);
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &co, err, sizeof(err)), 0);
	assert_int_equal(m.clc_crowd_tail_ppm, 0);
	for (unsigned i = 0; i < 3; i++)
		cta_trace_free(&t[i]);
}

/* The share pairs each loop's way out with its own crowd, whatever loops
 * are left out of it: a loop whose calls vary (cta_calib_opts.clc_stream
 * 2, as ctasim fidelity marks vecscale_clc with an imbalance pattern) gives
 * no way out, and listed before the three crowds of the test above (its
 * own the largest) it must move nothing. */
static void crowd_tail_share_skips_loops_whose_calls_vary(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	struct cta_trace t[4];
	for (unsigned i = 0; i < 4; i++)
		crowd_loop_trace(&t[i], i ? 16u << (i - 1) : 64, 500000);
	const struct cta_trace *ts[4] = {&t[0], &t[1], &t[2], &t[3]};
	uint64_t loop_ns[4] = {2000, 2000, 2000, 2000};
	unsigned char stream[4] = {2, 0, 0, 0};
	struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
	co.clc_ns = loop_ns;
	co.clc_stream = stream;
	struct cta_device_model m;
	struct cta_calib_report rep;
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 4, &co, err, sizeof(err)), 0);
	if (m.clc_crowd_tail_ppm < 450000 || m.clc_crowd_tail_ppm > 550000)
		fail_msg("tail share %u ppm, simulated with 500000", m.clc_crowd_tail_ppm);
	for (unsigned i = 0; i < 4; i++)
		cta_trace_free(&t[i]);
}

/* Simulates spin_clc (64 blocks of 1024 threads, 2 us an index) under the
 * emulation, in clusters of `cluster` CTAs (1, 2 or 4), with the given
 * cluster barrier cost and clc_multicast_ns, into *t, marked as a GPU's
 * emulated trace. */
static void cluster_loop_trace_mc(struct cta_trace *t, unsigned cluster, unsigned cost, unsigned mc)
{
	char path[256];
	st_tmpname(path, sizeof(path), "cbar.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 8;
	o.timing_only = 1;
	o.trace_path = path;
	emulated_clc(&o.device);
	/* A steal above the claim turn, which stands in for the issuer's
	 * tail where no trace has two requests back to back (fit_clc). */
	o.device.clc_steal_ns = 1500;
	o.device.cluster_barrier_ns = cost;
	o.device.clc_multicast_ns = mc;
	const char *args[] = {"grid=256", "ns=2000",
	                      cluster == 4  ? "cluster=4"
	                      : cluster > 1 ? "cluster=2"
	                                    : NULL,
	                      NULL};
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, "spin_clc", &o, args), 0);
	cta_harness_free(h);
	char err[256];
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
	strcpy(t->header.clc, "emulated");
}

static void cluster_loop_trace(struct cta_trace *t, unsigned cluster, unsigned cost)
{
	cluster_loop_trace_mc(t, cluster, cost, 0);
}

/* The median time from a request to its completion of the failed
 * requests of trace t. */
static uint64_t median_failure(const struct cta_trace *t)
{
	uint64_t issue[4096] = {0}, d[4096];
	size_t n = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->ev != CTA_TEV_CANCEL && r->ev != CTA_TEV_CANCEL_DONE)
			continue;
		assert_true(r->phys < 4096);
		if (r->ev == CTA_TEV_CANCEL)
			issue[r->phys] = r->t_ns;
		else if (r->ev == CTA_TEV_CANCEL_DONE && r->code != CTA_CANCEL_SUCCESS)
			d[n++] = r->t_ns - issue[r->phys];
	}
	assert_true(n > 0);
	for (size_t i = 1; i < n; i++) /* (a few dozen: insertion sort) */
		for (size_t j = i; j && d[j - 1] > d[j]; j--) {
			uint64_t x = d[j];
			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	return d[n / 2];
}

/* A clustered request stores its result into each CTA of its cluster
 * before it completes: with clc_multicast_ns its failures take that much
 * longer per CTA (clusters of 2 and 4), a one-CTA launch's not at all. */
static void emulated_multicast_pays_each_cta_of_the_cluster(void **state)
{
	(void)state;
	for (unsigned cluster = 1; cluster <= 4; cluster *= 2) {
		struct cta_trace a, b;
		cluster_loop_trace_mc(&a, cluster, 0, 0);
		cluster_loop_trace_mc(&b, cluster, 0, 300);
		uint64_t fa = median_failure(&a), fb = median_failure(&b);
		uint64_t want = cluster > 1 ? 300u * cluster : 0;
		if (fb != fa + want)
			fail_msg("clusters of %u: failure %" PRIu64 " ns with the stores, %" PRIu64
			         " without",
			         cluster, fb, fa);
		cta_trace_free(&a);
		cta_trace_free(&b);
	}
}

/* clc_multicast_ns comes back from traces the simulator made with it: a
 * one-CTA loop gives the request, the clustered loop (clusters of 2 and
 * of 4) its failures' excess over it per CTA; without a clustered loop,
 * or without the stores, none. */
static void multicast_is_recovered_from_simulated_steal_loops(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	for (unsigned cluster = 2; cluster <= 4; cluster *= 2)
		for (unsigned mc = 0; mc <= 400; mc += 400) {
			struct cta_trace t[2];
			cluster_loop_trace_mc(&t[0], 1, 600, mc);
			cluster_loop_trace_mc(&t[1], cluster, 600, mc);
			const struct cta_trace *ts[2] = {&t[0], &t[1]};
			uint64_t loop_ns[2] = {2000, 2000};
			struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
			co.clc_ns = loop_ns;
			struct cta_device_model m;
			struct cta_calib_report rep;
			char err[256] = "";
			assert_int_equal(
			    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)),
			    0);
			if (m.clc_multicast_ns < mc * 9 / 10 || m.clc_multicast_ns > mc * 11 / 10)
				fail_msg("clusters of %u: multicast %u ns, simulated with %u",
				         cluster, m.clc_multicast_ns, mc);
			assert_int_equal(
			    cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &co, err, sizeof(err)),
			    0);
			assert_int_equal(m.clc_multicast_ns, 0);
			cta_trace_free(&t[0]);
			cta_trace_free(&t[1]);
		}
}

/* The cluster barrier (cluster_barrier_ns) comes back from traces the
 * simulator made with it: a clustered steal loop's time from a success to
 * its next request is the one-CTA loop's with the cluster barrier in place
 * of the block's; the one-CTA loop gives the steal (with the tail, which
 * these traces cannot tell apart), the clustered one the barrier. Without
 * a clustered loop none is fitted (0: a block's). */
static void cluster_barrier_is_recovered_from_simulated_steal_loops(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	for (unsigned cost = 600; cost <= 1800; cost += 1200) {
		struct cta_trace t[2];
		cluster_loop_trace(&t[0], 1, cost);
		cluster_loop_trace(&t[1], 2, cost);
		const struct cta_trace *ts[2] = {&t[0], &t[1]};
		uint64_t loop_ns[2] = {2000, 2000};
		struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
		co.clc_ns = loop_ns;
		struct cta_device_model m;
		struct cta_calib_report rep;
		char err[256] = "";
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)), 0);
		if (m.cluster_barrier_ns < cost * 9 / 10 || m.cluster_barrier_ns > cost * 11 / 10)
			fail_msg("cluster barrier %u, simulated with %u", m.cluster_barrier_ns,
			         cost);
		/* The one-CTA loop alone: nothing to fit it on. */
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &co, err, sizeof(err)), 0);
		assert_int_equal(m.cluster_barrier_ns, 0);
		cta_trace_free(&t[0]);
		cta_trace_free(&t[1]);
	}
}

/* A clustered spin_clc of `grid` blocks of `threads` on device d (timing
 * only), read back; the most of its blocks on one SM at once in *most. */
static void cluster_run_trace(struct cta_trace *t, const struct cta_device_model *d,
                              unsigned threads, unsigned grid, unsigned *most)
{
	char path[256], ga[32];
	st_tmpname(path, sizeof(path), "cslots.trace");
	struct cta_harness_opts ho = {0};
	ho.version = CTA_HARNESS_OPTS_VERSION;
	ho.sim = st_opts("H100-SXM");
	ho.sim.device = *d;
	ho.sim.timing_only = 1;
	ho.sim.trace_path = path;
	snprintf(ga, sizeof(ga), "grid=%u", grid);
	const char *args[] = {ga, "ns=2000", "cluster=2"};
	ho.args = args;
	ho.nargs = 3;
	ho.block_set = 1;
	ho.block[0] = threads;
	ho.block[1] = ho.block[2] = 1;
	struct cta_harness *h;
	assert_int_equal(cta_harness_new(&h, cta_harness_find("spin_clc"), &ho), 0);
	assert_int_equal(cta_harness_run(h), 0);
	cta_harness_free(h);
	char err[256];
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
	unsigned cur[CTA_DEVICE_MAX_SMS] = {0};
	*most = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->ev == CTA_TEV_START && ++cur[r->sm] > *most)
			*most = cur[r->sm];
		else if (r->ev == CTA_TEV_END)
			cur[r->sm]--;
	}
}

/* A spin_clc of `grid` blocks of `threads` (clusters of `cluster`, 1:
 * none), 5 us a call, on 8 SMs of device d under the emulation, read
 * back as a GPU's emulated trace. */
static void late_run_trace(struct cta_trace *t, const struct cta_device_model *d, unsigned threads,
                           unsigned grid, unsigned cluster)
{
	char path[256], ga[32], ca[32];
	st_tmpname(path, sizeof(path), "late.trace");
	struct cta_harness_opts ho = {0};
	ho.version = CTA_HARNESS_OPTS_VERSION;
	ho.sim = st_opts("H100-SXM");
	ho.sim.device = *d;
	ho.sim.sm_limit = 8;
	ho.sim.timing_only = 1;
	ho.sim.trace_path = path;
	snprintf(ga, sizeof(ga), "grid=%u", grid);
	snprintf(ca, sizeof(ca), "cluster=%u", cluster);
	const char *args[] = {ga, "ns=5000", ca};
	ho.args = args;
	ho.nargs = cluster > 1 ? 3 : 2;
	ho.block_set = 1;
	ho.block[0] = threads;
	ho.block[1] = ho.block[2] = 1;
	struct cta_harness *h;
	assert_int_equal(cta_harness_new(&h, cta_harness_find("spin_clc"), &ho), 0);
	assert_int_equal(cta_harness_run(h), 0);
	cta_harness_free(h);
	char err[256];
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
	strcpy(t->header.clc, "emulated");
}

/* Per SM position (the SM's first-wave blocks in block order, 0-based),
 * the largest time from a block's start to its first request, into
 * worst[] (8 positions). */
static void late_by_position(const struct cta_trace *t, uint64_t worst[8])
{
	enum { MAXB = 4096 };
	static uint64_t start[MAXB], done[MAXB], sm[MAXB];
	uint64_t first_end = UINT64_MAX;
	memset(start, 0, sizeof(start));
	memset(done, 0, sizeof(done));
	for (size_t i = 0; i < t->count; i++)
		if (t->recs[i].ev == CTA_TEV_END && t->recs[i].t_ns < first_end)
			first_end = t->recs[i].t_ns;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->phys >= MAXB)
			continue;
		if (r->ev == CTA_TEV_START && r->t_ns < first_end) {
			start[r->phys] = r->t_ns + 1;
			sm[r->phys] = r->sm;
		} else if (r->ev == CTA_TEV_CANCEL && start[r->phys] && !done[r->phys]) {
			done[r->phys] = r->t_ns;
		}
	}
	unsigned pos[CTA_DEVICE_MAX_SMS] = {0};
	memset(worst, 0, 8 * sizeof(*worst));
	for (uint64_t b = 0; b < MAXB; b++) {
		if (!start[b])
			continue;
		unsigned p = pos[sm[b]]++;
		uint64_t d = done[b] ? done[b] - (start[b] - 1) : 0;
		if (p < 8 && d > worst[p])
			worst[p] = d;
	}
}

/* clc_late_ppm: on an SM its first wave fills (eight 256-thread blocks),
 * the blocks behind the issue gate's 1024 threads (the sixth to eighth)
 * make their first request that share of a call (5 us) later than the
 * first five, one-CTA and clustered alike; with 0 they are not late;
 * 1024-thread blocks (none behind the gate) never are. */
static void late_first_requests_wait_for_the_blocks_aheads_first_call(void **state)
{
	(void)state;
	struct cta_device_model d = *cta_device_find("H100");
	d.clc_crowd_units = 0;
	for (unsigned cl = 1; cl <= 2; cl++)
		for (unsigned ppm = 0; ppm <= 1000000; ppm += 1000000) {
			d.clc_late_ppm = ppm;
			struct cta_trace t;
			uint64_t w[8];
			late_run_trace(&t, &d, 256, 256, cl);
			late_by_position(&t, w);
			cta_trace_free(&t);
			uint64_t ontime = 0;
			for (int p = 0; p < 5; p++)
				ontime = w[p] > ontime ? w[p] : ontime;
			assert_true(ontime > 0);
			for (int p = 5; p < 8; p++) {
				if (ppm && w[p] < ontime + 4500)
					fail_msg("cluster %u: position %d requests after %" PRIu64
					         " ns, the first five %" PRIu64,
					         cl, p + 1, w[p], ontime);
				if (!ppm && w[p] > ontime + 1000)
					fail_msg("cluster %u, no rule: position %d late (%" PRIu64
					         " against %" PRIu64 ")",
					         cl, p + 1, w[p], ontime);
			}
		}
	d.clc_late_ppm = 1000000;
	struct cta_trace t;
	uint64_t w[8];
	late_run_trace(&t, &d, 1024, 64, 1);
	late_by_position(&t, w);
	cta_trace_free(&t);
	assert_true(w[1] > 0 && w[1] < w[0] + 1000);
}

/* A trace of `kernel` with `args` on the emulation's costs, with the
 * context's queue (clc_entry_ps, clc_sector_ps) as given, on `sms` SMs. */
static void burst_trace(struct cta_trace *t, const char *kernel, const char *const *args,
                        unsigned sms, unsigned entry_ps, unsigned sector_ps)
{
	char path[256];
	st_tmpname(path, sizeof(path), "burst.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = sms;
	o.timing_only = 1;
	o.trace_path = path;
	emulated_clc(&o.device);
	o.device.clc_entry_ps = entry_ps;
	o.device.clc_sector_ps = sector_ps;
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, kernel, &o, args), 0);
	cta_harness_free(h);
	char err[256];
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
	strcpy(t->header.clc, "emulated");
}

static int cmp_u64_test(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

/* The emulation's context as a queue: 16 blocks of spin_clc resident on 8
 * SMs whose first requests all fail at once pass it one at a time, 50 ns
 * apart, behind the 16 blocks' entries (100 ns each from the first start):
 * their failures complete at the first start + 1600 + 50 k + 1000
 * (clc_request_ns), k = 1 .. 16, where without the queue they all complete
 * at their issue + 1000. Successes do not wait: a grid of 64 gives the
 * same trace with the queue and without. */
static void emulated_failed_first_requests_queue_at_the_context(void **state)
{
	(void)state;
	const char *fargs[] = {"grid=16", "ns=2000", NULL};
	for (int q = 0; q < 2; q++) {
		struct cta_trace t;
		burst_trace(&t, "spin_clc", fargs, 8, q ? 100000 : 0, q ? 50000 : 0);
		uint64_t done[16], issue = 0, start = UINT64_MAX;
		unsigned n = 0;
		for (size_t j = 0; j < t.count; j++) {
			const struct cta_trace_rec *r = &t.recs[j];
			if (r->ev == CTA_TEV_START && r->t_ns < start)
				start = r->t_ns;
			if (r->ev == CTA_TEV_CANCEL)
				issue = r->t_ns; /* (all at one instant) */
			if (r->ev == CTA_TEV_CANCEL_DONE) {
				assert_int_not_equal(r->code, CTA_CANCEL_SUCCESS);
				assert_true(n < 16);
				done[n++] = r->t_ns;
			}
		}
		assert_int_equal(n, 16);
		qsort(done, n, sizeof(done[0]), cmp_u64_test);
		for (unsigned k = 0; k < n; k++) {
			uint64_t want = q ? start + 1600 + 50 * (k + 1) + 1000 : issue + 1000;
			if (done[k] != want)
				fail_msg("queue %d: failure %u completed at %llu, not %llu", q, k,
				         (unsigned long long)done[k], (unsigned long long)want);
		}
		cta_trace_free(&t);
	}
	const char *sargs[] = {"grid=64", "ns=2000", NULL};
	struct cta_trace a, b;
	burst_trace(&a, "spin_clc", sargs, 8, 0, 0);
	burst_trace(&b, "spin_clc", sargs, 8, 100000, 50000);
	assert_int_equal(a.count, b.count);
	for (size_t j = 0; j < a.count; j++)
		if (a.recs[j].t_ns != b.recs[j].t_ns || a.recs[j].ev != b.recs[j].ev)
			fail_msg("record %zu moved with the queue on successes", j);
	cta_trace_free(&a);
	cta_trace_free(&b);
}

/* `ctasim calibrate` finds clc_sector_ps and clc_entry_ps again, within
 * 10%, in traces the simulator made with them: a burst of 528 failed
 * first requests (vec_add_try_cancel_blocks, one wave of 4 SMs' worth
 * short of 132: every block resident) beside the 40-block kernel, whose
 * failures give the request; from traces made without them, none. */
static void context_queue_is_recovered_from_simulated_bursts(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	const char *bargs[] = {"n=135168", "ns=2000", NULL};
	const char *sargs[] = {"n=10000", "ns=2000", NULL};
	for (int q = 0; q < 2; q++) {
		struct cta_trace t[2];
		burst_trace(&t[0], "vec_add_try_cancel_blocks", bargs, 132, q ? 4000 : 0,
		            q ? 3000 : 0);
		burst_trace(&t[1], "vec_add_try_cancel_blocks", sargs, 132, q ? 4000 : 0,
		            q ? 3000 : 0);
		const struct cta_trace *ts[2] = {&t[0], &t[1]};
		struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
		struct cta_device_model m;
		struct cta_calib_report rep;
		char err[256] = "";
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)), 0);
		if (!q) {
			assert_int_equal(m.clc_sector_ps, 0);
			assert_int_equal(m.clc_entry_ps, 0);
		} else {
			if (m.clc_sector_ps < 2700 || m.clc_sector_ps > 3300)
				fail_msg("sector %u ps, simulated with 3000", m.clc_sector_ps);
			if (m.clc_entry_ps < 3600 || m.clc_entry_ps > 4400)
				fail_msg("entry %u ps, simulated with 4000", m.clc_entry_ps);
		}
		cta_trace_free(&t[0]);
		cta_trace_free(&t[1]);
	}
}

/* `ctasim calibrate` finds clc_late_ppm again in traces the simulator
 * made with it, within 10%; from traces made without it, none. */
static void late_share_is_recovered_from_simulated_first_waves(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	struct cta_device_model d = *h100;
	d.clc_crowd_units = 0;
	for (unsigned ppm = 0; ppm <= 1600000; ppm += 800000) {
		d.clc_late_ppm = ppm;
		struct cta_trace t[2];
		late_run_trace(&t[0], &d, 256, 256, 1);
		late_run_trace(&t[1], &d, 512, 128, 2);
		const struct cta_trace *ts[2] = {&t[0], &t[1]};
		uint64_t loop_ns[2] = {5000, 5000};
		struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
		co.clc_ns = loop_ns;
		struct cta_device_model m;
		struct cta_calib_report rep;
		char err[256] = "";
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)), 0);
		if (ppm ? m.clc_late_ppm < ppm * 9 / 10 || m.clc_late_ppm > ppm * 11 / 10
		        : m.clc_late_ppm != 0)
			fail_msg("clc_late_ppm %u, simulated with %u", m.clc_late_ppm, ppm);
		cta_trace_free(&t[0]);
		cta_trace_free(&t[1]);
	}
}

/* Clustered launches hold at most cluster_max_blocks_per_sm blocks an SM
 * (an H100's 2-CTA clusters of 64 to 192 threads ran 8), and `ctasim
 * calibrate` finds the limit again from launches that ran below their
 * occupancy; one that ran at it says nothing, and the base's stays. */
static void clustered_blocks_an_sm_holds_are_limited_and_fitted(void **state)
{
	(void)state;
	struct cta_device_model d = *cta_device_find("H100");
	for (unsigned lim = 6; lim <= 10; lim += 4) {
		d.cluster_max_blocks_per_sm = lim;
		struct cta_trace t;
		unsigned most = 0;
		cluster_run_trace(&t, &d, 128, 4224, &most);
		assert_int_equal(most, lim);
		struct cta_device_model base = *cta_device_find("H100"), m;
		base.cluster_max_blocks_per_sm = 0;
		struct cta_calib_report rep;
		char err[256] = "";
		const struct cta_trace *ts[1] = {&t};
		assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 1, err, sizeof(err)), 0);
		assert_int_equal(m.cluster_max_blocks_per_sm, lim);
		cta_trace_free(&t);
	}
	/* 1024-thread blocks fit two an SM either way: the base's limit stays. */
	d.cluster_max_blocks_per_sm = 0;
	struct cta_trace t;
	unsigned most = 0;
	cluster_run_trace(&t, &d, 1024, 1056, &most);
	assert_int_equal(most, 2);
	struct cta_device_model base = *cta_device_find("H100"), m;
	base.cluster_max_blocks_per_sm = 5;
	struct cta_calib_report rep;
	char err[256] = "";
	const struct cta_trace *ts[1] = {&t};
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 1, err, sizeof(err)), 0);
	assert_int_equal(m.cluster_max_blocks_per_sm, 5);
	cta_trace_free(&t);
}

/* The clustered sweep's start after the launch before (cluster_prior_rot)
 * comes back from first waves the simulator dealt with it: the turn of
 * the first TPCs for each clear size a wave was recorded after, none
 * where no wave says. */
static void cluster_sweep_start_is_recovered_from_simulated_waves(void **state)
{
	(void)state;
	struct cta_device_model d = *cta_device_find("H100");
	d.cluster_prior_len = 3;
	d.cluster_prior_rot[0] = 2;
	d.cluster_prior_rot[1] = 3;
	d.cluster_prior_rot[2] = 1;
	static const unsigned grids[] = {300, 800, 1320};
	struct cta_trace t[3];
	const struct cta_trace *ts[3];
	for (int i = 0; i < 3; i++) {
		unsigned most;
		cluster_run_trace(&t[i], &d, 1024, grids[i], &most);
		ts[i] = &t[i];
	}
	struct cta_device_model base = *cta_device_find("H100"), m;
	base.cluster_prior_len = 0;
	struct cta_calib_report rep;
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 3, err, sizeof(err)), 0);
	assert_int_equal(m.cluster_prior_len, 3);
	assert_int_equal(m.cluster_prior_rot[0], 2);
	assert_int_equal(m.cluster_prior_rot[1], 0); /* no grid of 512-767 blocks */
	assert_int_equal(m.cluster_prior_rot[2], 1);
	assert_int_equal(rep.sweep_placed, rep.sweep_total);
	for (int i = 0; i < 3; i++)
		cta_trace_free(&t[i]);
}

/* The H200 preset, whose traces hold no clustered grid below 1024
 * blocks, deals a clustered first wave after a record clear of 1 to 3
 * blocks (grids of 256 to 1023) as the H100-SXM preset does, the same
 * GH100 die: from the first SMs' TPC that cluster_prior_rot names, not
 * from an idle dispatcher's start, which is what the H200's own fit
 * gives there. */
static void h200_deals_small_clustered_grids_as_the_h100(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100-SXM");
	const struct cta_device_model *h200 = cta_device_find("H200");
	assert_non_null(h100);
	assert_non_null(h200);
	struct cta_device_model idle = *h200;
	idle.cluster_prior_len = 0;
	static const uint64_t grids[] = {264, 528, 800};
	static unsigned a[264], b[264], c[264];
	for (int i = 0; i < 3; i++) {
		unsigned la = 0, lb = 0, lc = 0;
		assert_int_equal(cta_device_cluster_sweep_order(h100, 132, grids[i], 264, a, &la),
		                 0);
		assert_int_equal(cta_device_cluster_sweep_order(h200, 132, grids[i], 264, b, &lb),
		                 0);
		assert_int_equal(cta_device_cluster_sweep_order(&idle, 132, grids[i], 264, c, &lc),
		                 0);
		assert_int_equal(la, 264);
		assert_int_equal(lb, la);
		assert_int_equal(lc, la);
		assert_memory_equal(a, b, la * sizeof a[0]);
		assert_memory_not_equal(a, c, la * sizeof a[0]);
	}
}

/* Every decode of a failed result pays the emulation's way out
 * (clc_exit_ns), as every decode of a success pays clc_steal_ns: the 40
 * blocks of clc_two_requests, all resident on 8 SMs, see both of their
 * requests fail and end 2 x 400 ns later with clc_exit_ns 400 than with 0. */
static void emulated_each_failed_result_decoded_pays_the_way_out(void **state)
{
	(void)state;
	uint64_t end[2][40] = {{0}};
	for (int exit_cost = 0; exit_cost < 2; exit_cost++) {
		char path[256];
		st_tmpname(path, sizeof(path), "exit.trace");
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 8;
		o.trace_path = path;
		emulated_clc(&o.device);
		o.device.clc_exit_ns = exit_cost ? 400 : 0;
		const char *args[] = {"n=10240", NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "clc_two_requests", &o, args), 0);
		cta_harness_free(h);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		unsigned nfail = 0;
		for (size_t j = 0; j < t.count; j++) {
			const struct cta_trace_rec *r = &t.recs[j];
			if (r->ev == CTA_TEV_CANCEL_DONE)
				assert_int_not_equal(r->code, CTA_CANCEL_SUCCESS);
			nfail += r->ev == CTA_TEV_CANCEL_DONE;
			if (r->ev == CTA_TEV_END) {
				assert_true(r->phys < 40);
				end[exit_cost][r->phys] = r->t_ns;
			}
		}
		assert_int_equal(nfail, 80);
		cta_trace_free(&t);
		remove(path);
	}
	for (unsigned b = 0; b < 40; b++)
		assert_int_equal(end[1][b] - end[0][b], 800);
}

/* Runs `kernel` with args once under the emulation on 8 SMs, with
 * clc_drain_ns drain and clc_drain_first_ns first, and gives each unit's
 * end time (end, nunits of them) and the successes its block decoded
 * (succ, added to); returns the number of blocks that ended. */
static unsigned drain_run(const char *kernel, const char *const *args, unsigned drain,
                          unsigned first, uint64_t *end, unsigned *succ, unsigned nunits)
{
	char path[256];
	st_tmpname(path, sizeof(path), "drain.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 8;
	o.trace_path = path;
	emulated_clc(&o.device);
	o.device.clc_drain_ns = drain;
	o.device.clc_drain_first_ns = first;
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, kernel, &o, args), 0);
	cta_harness_free(h);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	unsigned nend = 0;
	for (size_t j = 0; j < t.count; j++) {
		const struct cta_trace_rec *r = &t.recs[j];
		assert_true(r->phys == CTA_TRACE_NONE || r->phys < nunits);
		if (r->ev == CTA_TEV_CANCEL_DONE && r->code == CTA_CANCEL_SUCCESS)
			succ[r->phys]++;
		if (r->ev == CTA_TEV_END) {
			end[r->phys] = r->t_ns;
			nend++;
		}
	}
	cta_trace_free(&t);
	remove(path);
	return nend;
}

/* A launch that declares stream_mem (vecscale_clc's) pays clc_drain_ns at
 * each decode of a success under the emulation, and nothing at a failure;
 * one that does not (spin_clc) pays nothing. 32 units on 16 blocks, all
 * resident on 8 SMs: each vecscale_clc block ends 300 ns later for each
 * success it decoded with clc_drain_ns 300 than with 0 (some blocks steal
 * none), each spin_clc block at the same time. */
static void emulated_storing_body_pays_the_drain_at_each_success(void **state)
{
	(void)state;
	const char *kernels[2] = {"vecscale_clc", "spin_clc"};
	const char *vargs[] = {"n=32768", NULL};
	const char *sargs[] = {"grid=32", "ns=1000", NULL};
	for (int k = 0; k < 2; k++) {
		const char *const *args = k ? sargs : vargs;
		uint64_t end[2][32] = {{0}};
		unsigned succ[2][32] = {{0}}, total = 0;
		for (int drain = 0; drain < 2; drain++)
			assert_int_equal(drain_run(kernels[k], args, drain ? 300 : 0, 0, end[drain],
			                           succ[drain], 32),
			                 16);
		for (unsigned b = 0; b < 32; b++) {
			total += succ[1][b];
			assert_int_equal(end[1][b] - end[0][b], k ? 0 : 300 * succ[1][b]);
		}
		assert_int_equal(total, 16);
	}
}

/* ... and clc_drain_first_ns more at the success of a block's first
 * request (the block still on its own index), once a block: 48 units on
 * 16 resident blocks, each vecscale_clc block that stole ends 500 ns
 * later with clc_drain_first_ns 500 than with 0, however many it stole;
 * spin_clc's blocks at the same time. */
static void emulated_storing_body_pays_the_first_drain_once(void **state)
{
	(void)state;
	const char *kernels[2] = {"vecscale_clc", "spin_clc"};
	const char *vargs[] = {"n=49152", NULL};
	const char *sargs[] = {"grid=48", "ns=1000", NULL};
	for (int k = 0; k < 2; k++) {
		const char *const *args = k ? sargs : vargs;
		uint64_t end[2][48] = {{0}};
		unsigned succ[2][48] = {{0}}, twice = 0;
		for (int first = 0; first < 2; first++)
			drain_run(kernels[k], args, 300, first ? 500 : 0, end[first], succ[first],
			          48);
		for (unsigned b = 0; b < 16; b++) {
			twice += succ[1][b] > 1;
			assert_int_equal(end[1][b] - end[0][b], !k && succ[1][b] ? 500 : 0);
		}
		/* (Blocks that stole twice pay it once.) */
		assert_true(twice > 0);
	}
}

/* Simulates `kernel` with args under the emulation (a steal of 1500 ns,
 * clc_drain_ns drain, clc_drain_first_ns first) into *t, marked as a
 * GPU's emulated trace. */
static void drain_loop_trace(struct cta_trace *t, const char *kernel, const char *const *args,
                             unsigned drain, unsigned first)
{
	char path[256];
	st_tmpname(path, sizeof(path), "drainfit.trace");
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 8;
	o.timing_only = 1;
	o.trace_path = path;
	emulated_clc(&o.device);
	o.device.clc_steal_ns = 1500;
	o.device.clc_drain_ns = drain;
	o.device.clc_drain_first_ns = first;
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, kernel, &o, args), 0);
	cta_harness_free(h);
	char err[256];
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
	strcpy(t->header.clc, "emulated");
}

/* clc_drain_ns comes back from traces the simulator made with it: the
 * storing loop (vecscale_clc, 64 tiles on 16 resident blocks) takes it
 * beyond the plain one's (spin_clc) from each success to its next
 * request; the plain loop gives the steal. Without the storing flag, or
 * without a plain loop, none is fitted. */
static void drain_is_recovered_from_simulated_steal_loops(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	const char *sargs[] = {"grid=64", "ns=2000", NULL};
	const char *vargs[] = {"n=65536", NULL};
	for (unsigned drain = 400; drain <= 1200; drain += 800) {
		struct cta_trace t[2];
		drain_loop_trace(&t[0], "spin_clc", sargs, drain, 0);
		drain_loop_trace(&t[1], "vecscale_clc", vargs, drain, 0);
		const struct cta_trace *ts[2] = {&t[0], &t[1]};
		uint64_t loop_ns[2] = {2000, CTA_CALIB_CLC_NS_ZERO};
		unsigned char stream[2] = {0, 1};
		struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
		co.clc_ns = loop_ns;
		co.clc_stream = stream;
		struct cta_device_model m;
		struct cta_calib_report rep;
		char err[256] = "";
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)), 0);
		if (m.clc_drain_ns < drain * 9 / 10 || m.clc_drain_ns > drain * 11 / 10)
			fail_msg("drain %u, simulated with %u", m.clc_drain_ns, drain);
		/* Not told which loop stores: no drain. */
		co.clc_stream = NULL;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)), 0);
		assert_int_equal(m.clc_drain_ns, 0);
		/* The storing loop alone: nothing to tell it from. */
		co.clc_stream = stream + 1;
		co.clc_ns = loop_ns + 1;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts + 1, 1, &co, err, sizeof(err)), 0);
		assert_int_equal(m.clc_drain_ns, 0);
		cta_trace_free(&t[0]);
		cta_trace_free(&t[1]);
	}
}

/* clc_drain_first_ns comes back from traces the simulator made with it
 * (and clc_drain_ns 400): the storing loop's (vecscale_clc, 64 tiles on
 * 16 resident blocks) first successes take it beyond its successes'
 * median to the next request; with none simulated none is fitted, nor
 * without the storing flag. */
static void first_drain_is_recovered_from_simulated_steal_loops(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	const char *sargs[] = {"grid=64", "ns=2000", NULL};
	const char *vargs[] = {"n=65536", NULL};
	for (unsigned first = 0; first <= 800; first += 800) {
		struct cta_trace t[2];
		drain_loop_trace(&t[0], "spin_clc", sargs, 400, first);
		drain_loop_trace(&t[1], "vecscale_clc", vargs, 400, first);
		const struct cta_trace *ts[2] = {&t[0], &t[1]};
		uint64_t loop_ns[2] = {2000, CTA_CALIB_CLC_NS_ZERO};
		unsigned char stream[2] = {0, 1};
		struct cta_calib_opts co = CTA_CALIB_OPTS_INIT;
		co.clc_ns = loop_ns;
		co.clc_stream = stream;
		struct cta_device_model m;
		struct cta_calib_report rep;
		char err[256] = "";
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)), 0);
		if (m.clc_drain_first_ns < first * 9 / 10 || m.clc_drain_first_ns > first * 11 / 10)
			fail_msg("first drain %u, simulated with %u", m.clc_drain_first_ns, first);
		/* The drain itself is the successes' median, as before. */
		if (m.clc_drain_ns < 360 || m.clc_drain_ns > 440)
			fail_msg("drain %u, simulated with 400", m.clc_drain_ns);
		co.clc_stream = NULL;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 2, &co, err, sizeof(err)), 0);
		assert_int_equal(m.clc_drain_first_ns, 0);
		cta_trace_free(&t[0]);
		cta_trace_free(&t[1]);
	}
}

/* Past cta__fiber_share_after stacks a host thread's fibers share them,
 * each switch to a fiber whose stack another holds copying bytes out and
 * in (sim/exec/fiber.c): nothing a run shows may change. With three stacks
 * a pool, every waiting thread of these kernels takes turns; with two host
 * threads, lanes of a worker's pool resume on the engine's thread. The
 * sanitizer builds keep a stack per fiber (-1). */
static void shared_stacks_change_no_trace(void **state)
{
	(void)state;
	if (cta__fiber_share_after < 0)
		skip();
	const char *vargs[] = {ST_TSAN_SMALL("n=20000", "n=4096"), "ns=500", NULL};
	const char *cargs[] = {"n=65536", "ns=500", NULL};
	const char *rargs[] = {"n=65536", NULL};
	struct {
		const char *k;
		const char *const *args;
		double rate;
		int regions;
	} runs[] = {{"vec_add_clc", vargs, 0.3, 1},
	            {"clc_two_requests", vargs, 0.3, 1},
	            {"vecscale_clc_cluster", cargs, 0.3, 1},
	            {"block_reduce", rargs, 0, 0}};
	int saved = cta__fiber_share_after;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		for (unsigned threads = 1; threads <= 2; threads++) {
			size_t la, lb;
			trace_threads = threads;
			cta_sim_set_regions(runs[i].regions);
			char *a = trace_of(runs[i].k, runs[i].args, 5, runs[i].rate, 100, &la);
			cta__fiber_share_after = 3;
			char *b = trace_of(runs[i].k, runs[i].args, 5, runs[i].rate, 100, &lb);
			cta__fiber_share_after = saved;
			cta_sim_set_regions(1);
			trace_threads = 0;
			assert_true(la > 1000);
			assert_int_equal(la, lb);
			if (memcmp(a, b, la))
				fail_msg("%s, %u host threads: traces with own and shared stacks "
				         "differ",
				         runs[i].k, threads);
			free(a);
			free(b);
		}
	}
}

/* The short forms of a cancel round trip (a resumed unit's waiting lane
 * stepping the engine at once, cta__exec_lane_wait_mbar and lane_leave_slow
 * in sim/exec/exec.c; a wait that one request completed observing it
 * without the general search,
 * cta__mbarrier_try_wait_parity) change nothing a run shows: the guide's
 * loops on fibers and timing-only, emulated, with injected failures and
 * --ub abort, give the same trace with them and without, and they do run. */
static uint64_t quick_waits_seen;
static int short_form_hardware; /* 1: B200, CLC in hardware (a fixed latency) */
static char *short_form_trace(const char *kernel, const char *const *args, int timing_only,
                              cta_ub_mode ub, size_t *len)
{
	char path[256];
	st_tmpname(path, sizeof(path), "short.trace");
	struct cta_sim_opts o = st_opts(short_form_hardware ? "B200" : "H100-SXM");
	o.sm_limit = 2;
	o.seed = 3;
	o.cancel_fail_rate = 0.05;
	o.trace_path = path;
	o.timing_only = timing_only;
	o.ub_mode = ub;
	if (!short_form_hardware)
		emulated_clc(&o.device);
	struct cta_harness *h;
	cta__clc_quick_observes = 0;
	int rc = st_run_harness(&h, kernel, &o, args);
	if (rc && ub != CTA_UB_ABORT && strncmp(kernel, "ub_", 3))
		fail_msg("%s: rc %d: %s", kernel, rc, cta_harness_errmsg(h));
	quick_waits_seen = cta_harness_sim(h)->quick_waits;
	cta_harness_free(h);
	char *text = st_slurp(path, len);
	assert_non_null(text);
	remove(path);
	return text;
}

static void cancel_round_trip_short_forms_change_no_trace(void **state)
{
	(void)state;
	const char *sargs[] = {"grid=2048", "ns=700", NULL};
	const char *vargs[] = {ST_TSAN_SMALL("n=20000", "n=8192"), "ns=500", NULL};
	struct {
		const char *k;
		const char *const *args;
		int timing_only;
		cta_ub_mode ub;
	} runs[] = {{"spin_clc", sargs, 1, CTA_UB_REPORT},
	            {"spin_clc", sargs, 0, CTA_UB_REPORT},
	            {"spin_clc", sargs, 1, CTA_UB_ABORT},
	            {"vecscale_clc", vargs, 0, CTA_UB_REPORT},
	            {"ub_read_before_complete", NULL, 0, CTA_UB_REPORT}};
	cta_sim_set_regions(0);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		size_t la, lb;
		char *a =
		    short_form_trace(runs[i].k, runs[i].args, runs[i].timing_only, runs[i].ub, &la);
		uint64_t waits = quick_waits_seen, observes = cta__clc_quick_observes;
		cta__exec_quick_waits = 0;
		cta__clc_quick_observe = 0;
		char *b =
		    short_form_trace(runs[i].k, runs[i].args, runs[i].timing_only, runs[i].ub, &lb);
		cta__exec_quick_waits = 1;
		cta__clc_quick_observe = 1;
		assert_int_equal(quick_waits_seen, 0);
		assert_int_equal(cta__clc_quick_observes, 0);
		/* Most round trips of the guide's loop take them: the short wait
		 * where the block's last waiting thread steps the engine (not a
		 * block whose lanes hand threads back, vecscale_clc's: 14 of
		 * its waits), the short observation everywhere. */
		if ((i < 3 && waits < 100) || (i < 4 && observes < 100))
			fail_msg("%s (run %zu): %llu short waits, %llu short observations",
			         runs[i].k, i, (unsigned long long)waits,
			         (unsigned long long)observes);
		assert_true(la > 600);
		assert_int_equal(la, lb);
		if (memcmp(a, b, la))
			fail_msg("%s: traces with and without the short forms differ", runs[i].k);
		free(a);
		free(b);
	}
	cta_sim_set_regions(1);
}

/* The same on CLC hardware (B200: no emulation, a fixed latency), where
 * the short observation runs too (its issuer part does nothing there: a
 * request waits no longer than its latency), and a read it made defined
 * (the result slot's ok_key) skips the checker's test: the same traces,
 * UB reports included, with both short forms and without. */
static void cancel_round_trip_short_forms_change_no_trace_on_hardware_clc(void **state)
{
	(void)state;
	const char *sargs[] = {"grid=2048", "ns=700", NULL};
	struct {
		const char *k;
		const char *const *args;
		int timing_only;
	} runs[] = {{"spin_clc", sargs, 1},
	            {"spin_clc", sargs, 0},
	            {"ub_read_before_complete", NULL, 0},
	            {"ub_read_failed_index", NULL, 0}};
	cta_sim_set_regions(0);
	short_form_hardware = 1;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		size_t la, lb;
		char *a = short_form_trace(runs[i].k, runs[i].args, runs[i].timing_only,
		                           CTA_UB_REPORT, &la);
		uint64_t observes = cta__clc_quick_observes;
		cta__exec_quick_waits = 0;
		cta__clc_quick_observe = 0;
		char *b = short_form_trace(runs[i].k, runs[i].args, runs[i].timing_only,
		                           CTA_UB_REPORT, &lb);
		cta__exec_quick_waits = 1;
		cta__clc_quick_observe = 1;
		assert_int_equal(cta__clc_quick_observes, 0);
		if (i < 2 && observes < 100)
			fail_msg("%s (run %zu): %llu short observations", runs[i].k, i,
			         (unsigned long long)observes);
		assert_true(la > 600);
		assert_int_equal(la, lb);
		if (memcmp(a, b, la))
			fail_msg("%s: traces with and without the short forms differ", runs[i].k);
		if (i >= 2 && !strstr(a, runs[i].k + 3))
			fail_msg("%s: the trace names no %s", runs[i].k, runs[i].k + 3);
		free(a);
		free(b);
	}
	short_form_hardware = 0;
	cta_sim_set_regions(1);
}

/* A kernel whose blocks use global atomics but never wait for one another
 * (block_reduce's total) keeps running on several host threads: the trace
 * says it is not reproducible, though its events (and result) are the same
 * here; with one it is. Kernels whose threads spin run on one host thread
 * (test_progress checks their traces across --threads). */
static void atomics_on_several_host_threads_mark_the_trace_nondeterministic(void **state)
{
	(void)state;
	/* Under ThreadSanitizer every fiber switch costs time in proportion to
	 * the fibers alive: a smaller grid keeps the test in minutes. */
	const char *args[] = {ST_TSAN_SMALL("n=262144", "n=16384"), NULL};
	size_t la, lb;
	trace_threads = 1;
	char *a = trace_of("block_reduce", args, 5, 0, 0, &la);
	trace_threads = 2;
	char *b = trace_of("block_reduce", args, 5, 0, 0, &lb);
	trace_threads = 0;
	assert_non_null(strstr(a, "#deterministic 1"));
	assert_non_null(strstr(b, "#deterministic 0"));
	assert_string_equal(events_of(a), events_of(b));
	free(a);
	free(b);
}

/* Drops the header lines (which name the seed) so only events compare. */
static const char *events_of(const char *trace)
{
	const char *p = strstr(trace, "\nt_ns,");
	return p ? p : trace;
}

static void different_seeds_with_injected_failures_give_different_traces(void **state)
{
	(void)state;
	const char *vargs[] = {"n=20000", "ns=500", NULL};
	size_t la, lb;
	char *a = trace_of("vec_add_clc", vargs, 1, 0.5, 0, &la);
	char *b = trace_of("vec_add_clc", vargs, 2, 0.5, 0, &lb);
	assert_true(strcmp(events_of(a), events_of(b)) != 0);
	free(a);
	free(b);
	/* Without any randomness the seed changes nothing but the header. */
	a = trace_of("vec_add_clc", vargs, 1, 0, 0, &la);
	b = trace_of("vec_add_clc", vargs, 2, 0, 0, &lb);
	assert_string_equal(events_of(a), events_of(b));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(clc_kernels_cover_every_index_once_under_fault_injection),
	    cmocka_unit_test(clc_coverage_holds_for_many_seeds_at_half_failure_rate),
	    cmocka_unit_test(cancels_hand_out_the_next_pending_block_in_dispatch_order),
	    cmocka_unit_test(kernel_that_drops_a_stolen_index_violates_coverage),
	    cmocka_unit_test(cancel_failures_are_counted_by_reason),
	    cmocka_unit_test(cancel_fails_while_a_higher_priority_kernel_waits),
	    cmocka_unit_test(trace_does_not_depend_on_checking),
	    cmocka_unit_test(same_seed_gives_a_byte_identical_trace),
	    cmocka_unit_test(trace_does_not_depend_on_the_number_of_host_threads),
	    cmocka_unit_test(emulated_clc_trace_does_not_depend_on_the_number_of_host_threads),
	    cmocka_unit_test(emulated_claims_of_one_word_complete_a_turn_apart),
	    cmocka_unit_test(emulated_requests_from_far_gpcs_take_longer),
	    cmocka_unit_test(emulated_simultaneous_requests_go_to_the_near_gpcs_first),
	    cmocka_unit_test(emulated_requests_take_longer_with_more_requesters),
	    cmocka_unit_test(emulated_issuer_pays_the_crowd_share_after_a_completion),
	    cmocka_unit_test(crowd_tail_share_is_recovered_from_simulated_loops),
	    cmocka_unit_test(crowd_tail_share_skips_loops_whose_calls_vary),
	    cmocka_unit_test(cluster_barrier_is_recovered_from_simulated_steal_loops),
	    cmocka_unit_test(emulated_multicast_pays_each_cta_of_the_cluster),
	    cmocka_unit_test(multicast_is_recovered_from_simulated_steal_loops),
	    cmocka_unit_test(clustered_blocks_an_sm_holds_are_limited_and_fitted),
	    cmocka_unit_test(cluster_sweep_start_is_recovered_from_simulated_waves),
	    cmocka_unit_test(h200_deals_small_clustered_grids_as_the_h100),
	    cmocka_unit_test(emulated_each_failed_result_decoded_pays_the_way_out),
	    cmocka_unit_test(emulated_storing_body_pays_the_drain_at_each_success),
	    cmocka_unit_test(drain_is_recovered_from_simulated_steal_loops),
	    cmocka_unit_test(emulated_storing_body_pays_the_first_drain_once),
	    cmocka_unit_test(first_drain_is_recovered_from_simulated_steal_loops),
	    cmocka_unit_test(late_first_requests_wait_for_the_blocks_aheads_first_call),
	    cmocka_unit_test(late_share_is_recovered_from_simulated_first_waves),
	    cmocka_unit_test(emulated_failed_first_requests_queue_at_the_context),
	    cmocka_unit_test(context_queue_is_recovered_from_simulated_bursts),
	    cmocka_unit_test(shared_stacks_change_no_trace),
	    cmocka_unit_test(cancel_round_trip_short_forms_change_no_trace),
	    cmocka_unit_test(cancel_round_trip_short_forms_change_no_trace_on_hardware_clc),
	    cmocka_unit_test(atomics_on_several_host_threads_mark_the_trace_nondeterministic),
	    cmocka_unit_test(different_seeds_with_injected_failures_give_different_traces),
	};
	/* CMOCKA_TEST_FILTER=pattern runs only the matching tests. */
	if (getenv("CMOCKA_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CMOCKA_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
