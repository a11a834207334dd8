/* Tests of the block layout behind the timeline and the Perfetto export:
 * overlapping blocks of one SM get separate sub-rows, steals become segments
 * of the block that ran them, and a block without an end stays open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trace/trace_internal.h"

static struct cta_trace_rec recs[32];
static struct cta_trace tr;

static void begin(unsigned kernels)
{
	memset(&tr, 0, sizeof(tr));
	tr.header.kernel_count = kernels;
	tr.recs = recs;
}

static void add(uint64_t t, cta_trace_event ev, uint32_t k, uint64_t block, uint64_t phys,
                uint64_t sm)
{
	recs[tr.count++] = (struct cta_trace_rec){.t_ns = t,
	                                          .ev = ev,
	                                          .kernel = k,
	                                          .block = block,
	                                          .phys = phys,
	                                          .sm = sm,
	                                          .arg = CTA_TRACE_NONE};
}

static const struct cta__span *span_of(const struct cta__layout *l, uint32_t k, uint64_t phys)
{
	for (size_t i = 0; i < l->nspans; i++)
		if (l->spans[i].kernel == k && l->spans[i].phys == phys)
			return &l->spans[i];
	fail_msg("no span for kernel %u phys %llu", k, (unsigned long long)phys);
	return NULL;
}

static void overlapping_blocks_get_separate_rows_and_adjacent_ones_share(void **state)
{
	begin(1);
	add(0, CTA_TEV_START, 0, 0, 0, 0);
	add(5, CTA_TEV_START, 0, 1, 1, 0);
	add(10, CTA_TEV_END, 0, 0, 0, 0);
	add(10, CTA_TEV_START, 0, 2, 2, 0); /* takes the row block 0 just left */
	add(15, CTA_TEV_END, 0, 1, 1, 0);
	add(20, CTA_TEV_END, 0, 2, 2, 0);
	add(3, CTA_TEV_START, 0, 3, 3, 2);
	add(4, CTA_TEV_END, 0, 3, 3, 2);
	struct cta__layout l;
	assert_int_equal(cta__layout_build(&l, &tr, 0), 0);
	assert_int_equal(l.nspans, 4);
	assert_int_equal(l.sm_count, 3);
	assert_int_equal(span_of(&l, 0, 0)->slot, 0);
	assert_int_equal(span_of(&l, 0, 1)->slot, 1);
	assert_int_equal(span_of(&l, 0, 2)->slot, 0);
	assert_int_equal(l.slots[0], 2);
	assert_int_equal(l.slots[1], 1); /* an SM without blocks still has a row */
	assert_int_equal(l.slots[2], 1);
	assert_int_equal(l.max_slots, 2);
	assert_int_equal(l.t_min, 0);
	assert_int_equal(l.t_max, 20);
	cta__layout_free(&l);
}

static void steals_become_segments_of_the_block_that_ran_them(void **state)
{
	begin(1);
	add(0, CTA_TEV_START, 0, 0, 0, 1);
	add(100, CTA_TEV_STEAL, 0, 7, 0, 1);
	add(250, CTA_TEV_STEAL, 0, 9, 0, 1);
	add(400, CTA_TEV_END, 0, 9, 0, 1);
	struct cta__layout l;
	assert_int_equal(cta__layout_build(&l, &tr, 0), 0);
	const struct cta__span *s = span_of(&l, 0, 0);
	assert_int_equal(s->t0, 0);
	assert_int_equal(s->t1, 400);
	assert_int_equal(s->block, 0);
	assert_int_equal(s->steal_count, 2);
	const struct cta__steal_seg *g = &l.steals[s->steal_first];
	assert_int_equal(g[0].block, 7);
	assert_int_equal(g[0].t0, 100);
	assert_int_equal(g[0].t1, 250);
	assert_int_equal(g[1].block, 9);
	assert_int_equal(g[1].t0, 250);
	assert_int_equal(g[1].t1, 400);
	cta__layout_free(&l);
}

static void block_without_end_stays_open_to_the_end_of_the_trace(void **state)
{
	begin(1);
	add(0, CTA_TEV_START, 0, 0, 0, 0);
	add(50, CTA_TEV_START, 0, 1, 1, 0);
	add(70, CTA_TEV_END, 0, 1, 1, 0);
	add(90, CTA_TEV_WARN, 0, 0, 0, 0);
	struct cta__layout l;
	assert_int_equal(cta__layout_build(&l, &tr, 0), 0);
	const struct cta__span *s = span_of(&l, 0, 0);
	assert_int_equal(s->open, 1);
	assert_int_equal(s->t1, 90);
	assert_int_equal(span_of(&l, 0, 1)->open, 0);
	cta__layout_free(&l);
}

static void per_kernel_rows_are_packed_per_kernel(void **state)
{
	begin(2);
	add(0, CTA_TEV_START, 0, 0, 0, 0);
	add(5, CTA_TEV_START, 1, 0, 0, 0);
	add(10, CTA_TEV_END, 0, 0, 0, 0);
	add(15, CTA_TEV_END, 1, 0, 0, 0);
	struct cta__layout l;
	assert_int_equal(cta__layout_build(&l, &tr, 0), 0);
	assert_int_equal(span_of(&l, 1, 0)->slot, 1);
	cta__layout_free(&l);
	assert_int_equal(cta__layout_build(&l, &tr, 1), 0);
	assert_int_equal(span_of(&l, 0, 0)->slot, 0);
	assert_int_equal(span_of(&l, 1, 0)->slot, 0);
	assert_int_equal(l.max_slots, 1);
	cta__layout_free(&l);
}

static void absurd_sm_id_is_a_range_error(void **state)
{
	begin(1);
	add(0, CTA_TEV_START, 0, 0, 0, CTA__MAX_SM_ID + 1);
	struct cta__layout l;
	assert_int_equal(cta__layout_build(&l, &tr, 0), CTA_ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(overlapping_blocks_get_separate_rows_and_adjacent_ones_share),
	    cmocka_unit_test(steals_become_segments_of_the_block_that_ran_them),
	    cmocka_unit_test(block_without_end_stays_open_to_the_end_of_the_trace),
	    cmocka_unit_test(per_kernel_rows_are_packed_per_kernel),
	    cmocka_unit_test(absurd_sm_id_is_a_range_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
