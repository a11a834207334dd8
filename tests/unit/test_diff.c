/* Tests of the trace diff: identical traces agree, each metric moves when
 * the matching property of one trace changes, sub-tick differences are
 * ignored, and traces of different launches are refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctasim/tools.h"
#include "test_trace_synth.h"

static void diff_ok(struct cta_diff_result *r, const struct cta_trace *a, const struct cta_trace *b,
                    const struct cta_diff_tol *tol)
{
	char err[256] = "";
	int rc = cta_trace_diff(r, a, b, tol, err, sizeof(err));
	if (rc)
		fail_msg("diff failed: %d %s", rc, err);
}

/* A one-kernel trace of n blocks, block i starting at t[i] on sm[i] and
 * ending dur later. */
static void hand_trace(struct cta_trace *t, size_t n, const uint64_t *tm, const uint64_t *sm,
                       uint64_t dur, double tick)
{
	struct synth s = {.blocks = n, .tick_ns = tick};
	synth_make(t, &s);
	free(t->recs);
	t->recs = calloc(2 * n + 1, sizeof(*t->recs));
	t->count = 0;
	t->recs[t->count++] = (struct cta_trace_rec){.ev = CTA_TEV_LAUNCH,
	                                             .kernel = 0,
	                                             .block = CTA_TRACE_NONE,
	                                             .phys = CTA_TRACE_NONE,
	                                             .sm = CTA_TRACE_NONE};
	for (size_t i = 0; i < n; i++) {
		struct cta_trace_rec r = {.t_ns = tm[i],
		                          .ev = CTA_TEV_START,
		                          .kernel = 0,
		                          .block = i,
		                          .phys = i,
		                          .sm = sm[i],
		                          .arg = CTA_TRACE_NONE};
		t->recs[t->count++] = r;
		r.ev = CTA_TEV_END;
		r.t_ns += dur;
		t->recs[t->count++] = r;
	}
}

static void identical_traces_are_within_tolerance(void **state)
{
	struct synth s = {.sms = 8,
	                  .slots = 2,
	                  .blocks = 100,
	                  .launch_ns = 500,
	                  .dispatch_ns = 10,
	                  .retire_ns = 50,
	                  .jitter_ns = 300,
	                  .seed = 3};
	struct cta_trace a, b;
	synth_make(&a, &s);
	synth_make(&b, &s);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	assert_int_equal(r.within, 1);
	assert_int_equal(r.outside, 0);
	const struct cta_diff_kernel *d = &r.kernels[0];
	assert_int_equal(d->coverage[0].ok, 1);
	assert_int_equal(d->coverage[1].ok, 1);
	assert_true(d->bps_distance == 0);
	assert_true(d->first_wave == 1.0);
	assert_int_equal(d->first_wave_n[0], 16);
	assert_true(d->order_rho > 0.999999);
	assert_int_equal(d->order_n, 100);
	assert_true(r.makespan_ratio == 1.0);
	assert_int_equal(d->start_diff_ns, 0);
	/* Times count from the first block start; the launch latency is
	 * reported apart. */
	assert_int_equal(d->start_offset_ns[0], 0);
	assert_int_equal(r.launch_offset_ns[0], 500);
	assert_int_equal(r.launch_offset_ns[1], 500);
	synth_free(&a);
	synth_free(&b);
}

/* The host's launch latency is not the scheduler's doing: a trace whose
 * blocks start 10 us later after the launch has the same makespan. */
static void launch_latency_is_reported_not_compared(void **state)
{
	struct synth s = {.sms = 4, .slots = 2, .blocks = 32, .launch_ns = 500, .dur_ns = 2000};
	struct cta_trace a, b;
	synth_make(&a, &s);
	s.launch_ns = 10500;
	synth_make(&b, &s);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	assert_true(r.makespan_ratio == 1.0);
	assert_int_equal(r.makespan_ns[0], r.makespan_ns[1]);
	assert_int_equal(r.launch_offset_ns[0], 500);
	assert_int_equal(r.launch_offset_ns[1], 10500);
	assert_int_equal(r.kernels[0].start_diff_ns, 0);
	assert_int_equal(r.kernels[0].end_diff_ns, 0);
	assert_int_equal(r.within, 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(cta_diff_write_json(&r, f, "a", "b"), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"launch_offset_ns\":[500,10500]"));
	free(buf);
	synth_free(&a);
	synth_free(&b);
}

static void different_launch_configs_are_refused(void **state)
{
	struct synth s = {.blocks = 16};
	struct cta_trace a, b;
	synth_make(&a, &s);
	synth_make(&b, &s);
	struct cta_diff_result r;
	char err[256];
	b.header.kernels[0].grid[0] = 32;
	assert_int_equal(cta_trace_diff(&r, &a, &b, NULL, err, sizeof(err)), CTA_EINVAL);
	assert_non_null(strstr(err, "grid is 16,1,1 in A, 32,1,1 in B"));
	b.header.kernels[0].grid[0] = 16;
	strcpy(b.header.kernels[0].name, "other");
	assert_int_equal(cta_trace_diff(&r, &a, &b, NULL, err, sizeof(err)), CTA_EINVAL);
	assert_non_null(strstr(err, "'other'"));
	strcpy(b.header.kernels[0].name, a.header.kernels[0].name);
	b.header.kernel_count = 2;
	b.header.kernels[1] = b.header.kernels[0];
	assert_int_equal(cta_trace_diff(&r, &a, &b, NULL, err, sizeof(err)), CTA_EINVAL);
	assert_non_null(strstr(err, "1 kernels in A, 2 in B"));
	synth_free(&a);
	synth_free(&b);
}

static void lost_and_duplicated_blocks_break_coverage(void **state)
{
	struct synth s = {.blocks = 40};
	struct cta_trace a, b;
	synth_make(&a, &s);
	synth_make(&b, &s);
	/* Block 7 never starts in B; block 9 starts twice. */
	for (size_t i = 0; i < b.count; i++) {
		if (b.recs[i].ev == CTA_TEV_START && b.recs[i].block == 7)
			b.recs[i].ev = CTA_TEV_WARN;
		if (b.recs[i].ev == CTA_TEV_START && b.recs[i].block == 10)
			b.recs[i].block = 9;
	}
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	const struct cta_diff_kernel *d = &r.kernels[0];
	assert_int_equal(d->coverage[0].ok, 1);
	assert_int_equal(d->coverage[1].ok, 0);
	assert_int_equal(d->coverage[1].lost, 2); /* 7 and 10 */
	assert_int_equal(d->coverage[1].duplicated, 1);
	assert_true(d->outside & CTA_DIFF_M_COVERAGE);
	assert_int_equal(r.within, 0);
	synth_free(&a);
	synth_free(&b);
}

static void permuted_placement_loses_first_wave_agreement_not_balance(void **state)
{
	static const uint16_t rev[4] = {3, 2, 1, 0};
	struct synth s = {.sms = 4, .slots = 2, .blocks = 64, .dispatch_ns = 5};
	struct cta_trace a, b;
	synth_make(&a, &s);
	s.order = rev;
	synth_make(&b, &s);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	const struct cta_diff_kernel *d = &r.kernels[0];
	assert_int_equal(d->first_wave_n[0], 8);
	assert_int_equal(d->first_wave_same, 0);
	assert_true(d->first_wave == 0.0);
	assert_true(d->bps_distance == 0.0);
	assert_true(d->outside & CTA_DIFF_M_FIRST_WAVE);
	assert_false(d->outside & CTA_DIFF_M_BPS);

	/* A caller who does not care about placement loosens its tolerance. */
	struct cta_diff_tol tol = CTA_DIFF_TOL_INIT;
	tol.first_wave = 0;
	diff_ok(&r, &a, &b, &tol);
	assert_int_equal(r.within, 1);
	synth_free(&a);
	synth_free(&b);
}

static void blocks_per_sm_distance_has_documented_value(void **state)
{
	/* A: 2 blocks on each of 4 SMs. B: 4 on SMs 0 and 1, none on 2 and 3.
	 * Sorted counts 2,2,2,2 vs 0,0,4,4: mean |difference| 2 over mean 2 =
	 * 1.0; shares .25 each vs .5,.5,0,0: total variation 0.5. */
	uint64_t t[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	uint64_t sa[8] = {0, 1, 2, 3, 0, 1, 2, 3}, sb[8] = {0, 1, 0, 1, 0, 1, 0, 1};
	struct cta_trace a, b;
	hand_trace(&a, 8, t, sa, 100, 1);
	hand_trace(&b, 8, t, sb, 100, 1);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	const struct cta_diff_kernel *d = &r.kernels[0];
	assert_int_equal(d->sms, 4);
	assert_true(d->bps_distance > 0.999 && d->bps_distance < 1.001);
	assert_true(d->bps_share_distance > 0.499 && d->bps_share_distance < 0.501);
	assert_int_equal(d->bps_max[1], 4);
	assert_int_equal(d->bps_min[1], 0);
	assert_true(d->outside & CTA_DIFF_M_BPS);
	synth_free(&a);
	synth_free(&b);
}

static void spearman_matches_textbook_value(void **state)
{
	/* Start orders 0,1,2,3,4 and 0,1,2,4,3: sum of squared rank
	 * differences 2, rho = 1 - 6*2/(5*24) = 0.9. */
	uint64_t ta[5] = {10, 20, 30, 40, 50}, tb[5] = {10, 20, 30, 50, 40};
	uint64_t sm[5] = {0, 1, 2, 3, 4};
	struct cta_trace a, b;
	hand_trace(&a, 5, ta, sm, 1000, 1);
	hand_trace(&b, 5, tb, sm, 1000, 1);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	assert_true(fabs(r.kernels[0].order_rho - 0.9) < 1e-9);
	struct cta_diff_tol tol = CTA_DIFF_TOL_INIT;
	tol.order_rho = 0.95;
	diff_ok(&r, &a, &b, &tol);
	assert_true(r.kernels[0].outside & CTA_DIFF_M_ORDER);
	synth_free(&a);
	synth_free(&b);
}

static void differences_below_the_tick_are_not_differences(void **state)
{
	/* B starts the same blocks in reverse order, all within 8 ns, and
	 * ends 20 ns later than A. With a 1 ns tick that is a full reversal;
	 * with a 32 ns tick none of it can be told apart. */
	uint64_t ta[8], tb[8], sm[8];
	for (int i = 0; i < 8; i++) {
		ta[i] = 100 + (uint64_t)i;
		tb[i] = 107 - (uint64_t)i;
		sm[i] = (uint64_t)i;
	}
	struct cta_trace a, b;
	hand_trace(&a, 8, ta, sm, 1000, 1);
	hand_trace(&b, 8, tb, sm, 1020, 1);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	assert_true(r.kernels[0].order_rho < -0.999);
	assert_int_equal(r.kernels[0].end_diff_ns, 20);

	b.header.tick_ns = 32; /* the coarser tick of the two applies */
	diff_ok(&r, &a, &b, NULL);
	assert_true(r.tick_ns == 32);
	assert_true(r.kernels[0].order_rho == 1.0);
	assert_int_equal(r.kernels[0].end_diff_ns, 0);
	assert_int_equal(r.kernels[0].start_diff_ns, 0);
	assert_true(r.makespan_ratio == 1.0);
	assert_int_equal(r.within, 1);
	synth_free(&a);
	synth_free(&b);
}

static void slower_trace_is_outside_makespan_tolerance(void **state)
{
	struct synth s = {.sms = 4, .slots = 2, .blocks = 64, .dur_ns = 1000};
	struct cta_trace a, b;
	synth_make(&a, &s);
	s.dur_ns = 2000;
	synth_make(&b, &s);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	assert_true(r.makespan_ratio > 1.9 && r.makespan_ratio < 2.1);
	assert_true(r.outside & CTA_DIFF_M_MAKESPAN);
	assert_true(r.kernels[0].outside & CTA_DIFF_M_OFFSET);
	assert_int_equal(r.within, 0);
	synth_free(&a);
	synth_free(&b);
}

static void steals_per_block_counts_stolen_indices(void **state)
{
	struct synth s = {.sms = 4, .slots = 2, .blocks = 40, .steal = 1, .cancel_ns = 10};
	struct cta_trace a, b;
	synth_make(&a, &s);
	s.steal = 0;
	synth_make(&b, &s);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	const struct cta_diff_kernel *d = &r.kernels[0];
	assert_true(fabs(d->steals_per_block[0] - 32.0 / 40) < 1e-12);
	assert_true(d->steals_per_block[1] == 0);
	assert_int_equal(d->coverage[0].ok, 1);
	assert_int_equal(d->coverage[1].ok, 1);
	assert_true(d->outside & CTA_DIFF_M_STEALS);
	synth_free(&a);
	synth_free(&b);
}

static void reports_state_the_verdict(void **state)
{
	struct synth s = {.blocks = 16};
	struct cta_trace a, b;
	synth_make(&a, &s);
	s.dur_ns = 5000;
	synth_make(&b, &s);
	struct cta_diff_result r;
	diff_ok(&r, &a, &b, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(cta_diff_write_text(&r, f, "sim.trace", "hw.trace"), 0);
	fclose(f);
	assert_non_null(strstr(buf, "A: sim.trace"));
	assert_non_null(strstr(buf, "verdict: OUTSIDE tolerance: busy_span"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(cta_diff_write_json(&r, f, "sim.trace", "hw.trace"), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"within\":false"));
	assert_non_null(strstr(buf, "\"outside\":[\"busy_span\""));
	free(buf);
	synth_free(&a);
	synth_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(identical_traces_are_within_tolerance),
	    cmocka_unit_test(different_launch_configs_are_refused),
	    cmocka_unit_test(lost_and_duplicated_blocks_break_coverage),
	    cmocka_unit_test(permuted_placement_loses_first_wave_agreement_not_balance),
	    cmocka_unit_test(blocks_per_sm_distance_has_documented_value),
	    cmocka_unit_test(spearman_matches_textbook_value),
	    cmocka_unit_test(differences_below_the_tick_are_not_differences),
	    cmocka_unit_test(slower_trace_is_outside_makespan_tolerance),
	    cmocka_unit_test(launch_latency_is_reported_not_compared),
	    cmocka_unit_test(steals_per_block_counts_stolen_indices),
	    cmocka_unit_test(reports_state_the_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
