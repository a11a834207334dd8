/* Tests of placement (sim/sched/dispatch.c): blocks dispatched in linear
 * order, x fastest; spread-first and round-robin placement; the refill of
 * an ended block's slot makes the spread choice; the sweep of a launch
 * after another starts where that one left it; a kernel beside another
 * takes the emptier SMs first, launched the host's gap later. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ctasim/calibrate.h"
#include "ctasim/trace.h"
#include "simtest.h"

#include "eng_kernels.h"

static void blocks_dispatch_in_linear_order_x_fastest(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	char path[256];
	st_tmpname(path, sizeof(path), "linear.trace");
	o.trace_path = path;
	/* 5x4x3 = 60 blocks on 4 SMs, one block per SM at a time (each asks
	 * for 200000 bytes of shared memory): 15 waves, so the order holds
	 * across waves, not just within the first. */
	o.sm_limit = 4;
	unsigned long long t_start[60];
	memset(t_start, 0xff, sizeof(t_start));
	struct eng_order_args a = {t_start, 1000};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = launch_of(&eng_order, &a, 5, 4, 3, 64);
	l.smem_dynamic = 200000;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	/* Every block ran, and a block with a higher linear index never
	 * started before one with a lower index. */
	for (unsigned i = 0; i < 60; i++) {
		assert_true(t_start[i] != ~0ull);
		if (i)
			assert_true(t_start[i] >= t_start[i - 1]);
	}
	/* 15 waves of 4: block 4 waits for a slot that block 0 frees. */
	assert_true(t_start[4] >= t_start[0] + 1000);
	cta_sim_free(s);

	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	uint64_t next = 0;
	for (size_t i = 0; i < t.count; i++)
		if (t.recs[i].ev == CTA_TEV_DISPATCH) {
			assert_int_equal(t.recs[i].block, next);
			next++;
		}
	assert_int_equal(next, 60);
	cta_trace_free(&t);
	remove(path);
}

/* Runs n long blocks of 256 threads (timing-only) with a trace and returns
 * the SM of each dispatch, in dispatch order, in sm_of[0..n). */
static void dispatch_sms(cta_placement pol, unsigned n, unsigned long long ns, uint64_t *sm_of,
                         struct cta_kernel_stats *st)
{
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.device.placement = pol;
	o.timing_only = 1;
	char path[256];
	st_tmpname(path, sizeof(path), "place.trace");
	o.trace_path = path;
	struct eng_spin_args a = {ns};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = launch_of(&eng_spin, &a, n, 1, 1, 256);
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	*st = *cta_sim_kernel_stats(s, 0);
	cta_sim_free(s);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	unsigned k = 0;
	for (size_t i = 0; i < t.count; i++)
		if (t.recs[i].ev == CTA_TEV_DISPATCH) {
			assert_true(k < n);
			assert_int_equal(t.recs[i].block, k);
			sm_of[k++] = t.recs[i].sm;
		}
	assert_int_equal(k, n);
	cta_trace_free(&t);
	remove(path);
}

static void spread_places_one_block_on_every_sm_before_stacking(void **state)
{
	(void)state;
	uint64_t sm_of[264];
	struct cta_kernel_stats st;
	/* 132 long blocks on H100's 132 SMs: each SM exactly one. */
	dispatch_sms(CTA_PLACE_SPREAD, 132, 1000000, sm_of, &st);
	assert_int_equal(st.sms_used, 132);
	assert_int_equal(st.per_sm_min, 1);
	assert_int_equal(st.per_sm_max, 1);
	unsigned char seen[132] = {0};
	for (unsigned i = 0; i < 132; i++) {
		assert_true(sm_of[i] < 132);
		assert_int_equal(seen[sm_of[i]], 0);
		seen[sm_of[i]] = 1;
	}

	/* 264 (all resident at once: 8 such blocks fit per SM): two each, and
	 * the first 132 dispatches still cover every SM once. */
	dispatch_sms(CTA_PLACE_SPREAD, 264, 1000000, sm_of, &st);
	assert_int_equal(st.sms_used, 132);
	assert_int_equal(st.per_sm_min, 2);
	assert_int_equal(st.per_sm_max, 2);
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < 132; i++) {
		assert_int_equal(seen[sm_of[i]], 0);
		seen[sm_of[i]] = 1;
	}
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 132; i < 264; i++) {
		assert_int_equal(seen[sm_of[i]], 0);
		seen[sm_of[i]] = 1;
	}
}

static void round_robin_places_block_i_on_sm_i_mod_count(void **state)
{
	(void)state;
	uint64_t sm_of[300];
	struct cta_kernel_stats st;
	dispatch_sms(CTA_PLACE_ROUND_ROBIN, 300, 1000000, sm_of, &st);
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(sm_of[i], i % 132);
	assert_int_equal(st.per_sm_min, 2);
	assert_int_equal(st.per_sm_max, 3);
}

static void spread_prefers_the_sm_with_fewest_blocks(void **state)
{
	(void)state;
	/* 64 equal blocks on 2 SMs that hold 8 each: several waves, and each
	 * new block goes to the SM with the fewest resident blocks, so the
	 * split is even. */
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 2;
	o.timing_only = 1;
	struct eng_spin_args a = {100000};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = launch_of(&eng_spin, &a, 64, 1, 1, 256);
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, 0);
	assert_int_equal(st->per_sm_min, 32);
	assert_int_equal(st->per_sm_max, 32);
	cta_sim_free(s);
}

/* Every dispatch of a grid that keeps the GPU full, with blocks of unequal
 * length, goes to the spread-first choice: the SM with the fewest resident
 * blocks among those with room, the lowest such SM on ties. Replayed from
 * the trace, whose records come in the engine's order: a block's end record
 * comes just before its slot is freed and refilled. Without a dispatch
 * latency each freed slot is refilled at once, so there is one SM with room
 * at every dispatch after the first wave (the refill shortcut of
 * cta__sched_refill); with one, slots free while the front end is busy and
 * the dispatcher chooses among several. */
static void every_refill_is_the_spread_choice(void **state)
{
	(void)state;
	enum { NSM = 5, OCC = 8 }; /* 256-thread spin blocks: 8 per H100 SM */
	const char *imb[] = {"imbalance=one_in_seven", "imbalance=heavy_tail"};
	for (int v = 0; v < 4; v++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = NSM;
		o.timing_only = 1;
		o.device.dispatch_latency_ns = v < 2 ? 0 : 300;
		o.device.placement = CTA_PLACE_SPREAD; /* the sweep's first wave differs */
		char path[256];
		st_tmpname(path, sizeof(path), "refill.trace");
		o.trace_path = path;
		const char *args[] = {"grid=3000", "ns=1000", imb[v % 2], NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "spin", &o, args), 0);
		cta_harness_free(h);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		unsigned count[NSM] = {0};
		uint64_t dispatched = 0, singles = 0;
		for (size_t i = 0; i < t.count; i++) {
			const struct cta_trace_rec *r = &t.recs[i];
			if (r->ev == CTA_TEV_END) {
				assert_true(count[r->sm] > 0);
				count[r->sm]--;
			} else if (r->ev == CTA_TEV_DISPATCH) {
				unsigned best = NSM, room = 0;
				for (unsigned m = 0; m < NSM; m++)
					if (count[m] < OCC) {
						room++;
						if (best == NSM || count[m] < count[best])
							best = m;
					}
				assert_int_equal(r->sm, best);
				singles += room == 1;
				count[r->sm]++;
				dispatched++;
			}
		}
		assert_int_equal(dispatched, 3000);
		if (v < 2)
			assert_true(singles >= 3000 - NSM * OCC);
		else
			assert_true(singles < 2000);
		cta_trace_free(&t);
		remove(path);
	}
}

/* Runs launches of grids[i] blocks of 256 threads back to back on the
 * default stream of the H100-SXM preset and returns the SM of every block
 * of launch `which`'s first wave (its 1056 blocks at most). */
static void sequence_sms(const unsigned *grids, unsigned n, unsigned which, unsigned *sm_of,
                         int carry)
{
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.timing_only = 1;
	if (!carry)
		o.device.sweep_carry = 0;
	char path[256];
	st_tmpname(path, sizeof(path), "sequence.trace");
	o.trace_path = path;
	struct eng_spin_args a = {20000};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	for (unsigned i = 0; i < n; i++) {
		struct cta_launch l = launch_of(&eng_spin, &a, grids[i], 1, 1, 256);
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	}
	assert_int_equal(cta_sim_run(s), 0);
	cta_sim_free(s);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	for (size_t i = 0; i < t.count; i++)
		if (t.recs[i].ev == CTA_TEV_DISPATCH && t.recs[i].kernel == which &&
		    t.recs[i].block < 1056)
			sm_of[t.recs[i].block] = (unsigned)t.recs[i].sm;
	cta_trace_free(&t);
	remove(path);
}

/* Placement rule 8 (docs/FIDELITY.md): a launch after another starts where
 * that one left the dispatcher, as the H100 did in
 * traces/reference/h100-launches. */
static void a_launch_starts_where_the_launch_before_left_the_sweep(void **state)
{
	(void)state;
	static unsigned sm[1056], alone[1056];
	/* 12 blocks: 8 on SMs 124-131, then one on TPCs 0, 1, 2, 3 (GPCs 0-3);
	 * the next launch starts at GPC 4 (TPC 4: SM 8), after SMs 124-131
	 * from their first half (the 12 started at their second: the clears
	 * of 0 and 4 blocks flipped it once). */
	const unsigned g12[] = {12, 1056};
	sequence_sms(g12, 2, 0, sm, 1);
	assert_int_equal(sm[0], 128);
	assert_int_equal(sm[11], 6);
	sequence_sms(g12, 2, 1, sm, 1);
	assert_int_equal(sm[0], 124);
	assert_int_equal(sm[8], 8);
	/* Without the carried state each launch starts from its own clear:
	 * the 1056 blocks at SM 128 and GPC 0. */
	sequence_sms(g12, 2, 1, alone, 0);
	assert_int_equal(alone[0], 128);
	assert_int_equal(alone[8], 0);
	/* After a first wave of 132 blocks the turns of SMs 124-131 come every
	 * 6 GPC visits, the first after 5 (GPC 0's 8 other SMs, then 16 a
	 * GPC): blocks 80-87 are the turn; after 12 blocks or none before, the
	 * first turn comes after 3 visits and block 80 is in a GPC. */
	const unsigned g132[] = {132, 1056}, g1056[] = {1056};
	sequence_sms(g132, 2, 1, sm, 1);
	assert_int_equal(sm[0], 124);
	assert_int_equal(sm[8], 0);
	assert_int_equal(sm[79], 113); /* TPC 56, GPC 4's last */
	assert_int_equal(sm[80], 124);
	assert_int_equal(sm[87], 131);
	sequence_sms(g1056, 1, 0, alone, 1);
	assert_true(alone[80] < 124);
	assert_true(memcmp(sm, alone, sizeof(sm)) != 0);
	/* A one-block launch takes SM 124 and leaves the first half. */
	const unsigned g1[] = {1, 1056};
	sequence_sms(g1, 2, 0, sm, 1);
	assert_int_equal(sm[0], 124);
	sequence_sms(g1, 2, 1, sm, 1);
	assert_int_equal(sm[0], 124);
}

/* Runs kernels of grids[i] blocks of `threads` threads, each on a stream
 * of its own (all released at 0), on the H100-SXM preset or on dev, and
 * returns the SM of every block of kernel `which`'s first 264 and the
 * dispatch time of each kernel's first block. */
static void streams_sms(const struct cta_device_model *dev, const unsigned *grids, unsigned n,
                        unsigned threads, unsigned which, unsigned *sm_of, uint64_t *first)
{
	struct cta_sim_opts o = st_opts("H100-SXM");
	if (dev)
		o.device = *dev;
	o.timing_only = 1;
	char path[256];
	st_tmpname(path, sizeof(path), "streams.trace");
	o.trace_path = path;
	struct eng_spin_args a = {20000};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	for (unsigned i = 0; i < n; i++) {
		struct cta_launch l = launch_of(&eng_spin, &a, grids[i], 1, 1, threads);
		assert_int_equal(cta_sim_stream_new(s, &l.stream, 0), 0);
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	}
	assert_int_equal(cta_sim_run(s), 0);
	cta_sim_free(s);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	for (unsigned i = 0; i < n; i++)
		first[i] = UINT64_MAX;
	for (size_t i = 0; i < t.count; i++) {
		const struct cta_trace_rec *r = &t.recs[i];
		if (r->ev != CTA_TEV_DISPATCH || r->kernel >= n)
			continue;
		if (r->t_ns < first[r->kernel])
			first[r->kernel] = r->t_ns;
		if (r->kernel == which && r->block < 264)
			sm_of[r->block] = (unsigned)r->sm;
	}
	cta_trace_free(&t);
	remove(path);
}

/* Placement rule 9 (docs/FIDELITY.md): a kernel dealt while another's
 * blocks hold the SMs unevenly takes the SMs that hold fewer first, as the
 * H100 did in traces/reference/h100-launches/conc_b1024_g100_g132: the
 * first kernel's 100 blocks of 1024 threads (two an SM) leave the second
 * SMs of TPCs 30-61 empty, and the second kernel's first 32 blocks go
 * there GPC by GPC from GPC 2 (its last block in GPC 7, a pass with TPCs
 * given two: two GPCs on), GPC 1 last; then SMs 124-131 from the half the
 * first started at, then every SM holding one block, TPCs 0-29 both SMs.
 * The host issues the second launch launch_gap_ns after the first. */
static void a_concurrent_kernel_takes_the_emptier_sms_first(void **state)
{
	(void)state;
	static unsigned sm[264];
	uint64_t first[2];
	const unsigned g[] = {100, 132};
	streams_sms(NULL, g, 2, 1024, 1, sm, first);
	static const unsigned want[] = {67, 81, 95, 109, 69, 83, 97, 111};
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(sm[i], want[i]);
	assert_int_equal(sm[28], 65); /* GPC 1 last */
	assert_int_equal(sm[31], 107);
	assert_int_equal(sm[32], 124);
	assert_int_equal(sm[39], 131);
	assert_int_equal(sm[40], 4); /* TPC 2, both SMs */
	assert_int_equal(sm[41], 5);
	assert_int_equal(sm[48], 66); /* TPC 33: its first SM only */
	assert_int_equal(sm[49], 80);
	const struct cta_device_model *h = cta_device_find("H100-SXM");
	assert_true(h->launch_gap_ns > 0);
	assert_int_equal(first[1] - first[0], h->launch_gap_ns);
	/* Off: the second kernel's sweep passes over the SMs without room
	 * (SMs 124-131 first), and both launches go at once. */
	struct cta_device_model d = *h;
	d.sweep_conc = 0;
	d.launch_gap_ns = 0;
	streams_sms(&d, g, 2, 1024, 1, sm, first);
	assert_true(sm[0] >= 124);
	assert_true(first[1] - first[0] < h->launch_gap_ns / 10);
	/* Even room (132 blocks, one an SM, then 132 more): the sweep of
	 * rule 8, from the other half of SMs 124-131. */
	const unsigned e[] = {132, 132};
	streams_sms(NULL, e, 2, 1024, 1, sm, first);
	assert_int_equal(sm[0], 128);
	assert_int_equal(sm[8], 0);
}

/* A timing-only simulator of device d on H100-SXM's options, tracing to
 * a temporary file named after name (its path in path). */
static cta_sim *traced_sim_new(const struct cta_device_model *d, char *path, size_t n,
                               const char *name)
{
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.device = *d;
	o.timing_only = 1;
	st_tmpname(path, n, name);
	o.trace_path = path;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	return s;
}

/* Runs s to its end, frees it and reads its trace from path into t. */
static void traced_sim_finish(cta_sim *s, const char *path, struct cta_trace *t)
{
	assert_int_equal(cta_sim_run(s), 0);
	cta_sim_free(s);
	char err[256] = "";
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
}

/* ctasim calibrate fits launch_gap_ns from kernels of two streams
 * released together: the time between their first blocks. */
static void launch_gap_is_recovered_from_simulated_runs(void **state)
{
	(void)state;
	struct cta_device_model d = *cta_device_find("H100");
	d.launch_gap_ns = 7000;
	char path[256];
	struct eng_spin_args a = {20000};
	cta_sim *s = traced_sim_new(&d, path, sizeof(path), "gap.trace");
	for (int i = 0; i < 2; i++) {
		struct cta_launch l = launch_of(&eng_spin, &a, 100, 1, 1, 256);
		assert_int_equal(cta_sim_stream_new(s, &l.stream, 0), 0);
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	}
	struct cta_trace t;
	traced_sim_finish(s, path, &t);
	const struct cta_trace *ts[1] = {&t};
	char err[256] = "";
	struct cta_device_model base = *cta_device_find("H100"), m;
	base.launch_gap_ns = 0;
	struct cta_calib_report rep;
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 1, err, sizeof(err)), 0);
	assert_int_equal(rep.n_launch_gap, 1);
	assert_int_equal(m.launch_gap_ns, 7000);
	cta_trace_free(&t);
}

/* ctasim calibrate finds rule 8's thresholds again from simulated runs of
 * two launches: each one past the longest first wave recorded below it. */
static void launch_carry_is_recovered_from_simulated_runs(void **state)
{
	(void)state;
	struct cta_device_model d = *cta_device_find("H100");
	d.sweep_carry_late = 20;
	d.sweep_carry_mid = 50;
	d.sweep_carry_steady = 100;
	static const unsigned firsts[] = {10, 30, 60, 132};
	struct cta_trace t[4];
	const struct cta_trace *ts[4];
	for (int i = 0; i < 4; i++) {
		char path[256];
		struct eng_spin_args a = {20000};
		cta_sim *s = traced_sim_new(&d, path, sizeof(path), "carry.trace");
		struct cta_launch l = launch_of(&eng_spin, &a, firsts[i], 1, 1, 256);
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
		l = launch_of(&eng_spin, &a, 1056, 1, 1, 256);
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
		traced_sim_finish(s, path, &t[i]);
		ts[i] = &t[i];
	}
	struct cta_device_model base = *cta_device_find("H100"), m;
	base.sweep_carry = base.sweep_carry_late = base.sweep_carry_mid = 0;
	base.sweep_carry_steady = 0;
	struct cta_calib_report rep;
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 4, err, sizeof(err)), 0);
	assert_int_equal(m.sweep_carry, 1);
	assert_int_equal(m.sweep_carry_late, 11);
	assert_int_equal(m.sweep_carry_mid, 31);
	assert_int_equal(m.sweep_carry_steady, 61);
	for (int i = 0; i < 4; i++)
		cta_trace_free(&t[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(blocks_dispatch_in_linear_order_x_fastest),
	    cmocka_unit_test(spread_places_one_block_on_every_sm_before_stacking),
	    cmocka_unit_test(round_robin_places_block_i_on_sm_i_mod_count),
	    cmocka_unit_test(spread_prefers_the_sm_with_fewest_blocks),
	    cmocka_unit_test(every_refill_is_the_spread_choice),
	    cmocka_unit_test(a_launch_starts_where_the_launch_before_left_the_sweep),
	    cmocka_unit_test(launch_carry_is_recovered_from_simulated_runs),
	    cmocka_unit_test(a_concurrent_kernel_takes_the_emptier_sms_first),
	    cmocka_unit_test(launch_gap_is_recovered_from_simulated_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
