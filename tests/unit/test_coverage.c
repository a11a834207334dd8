/* Tests of the exactly-once coverage set (sim/base/coverage.c): in-order
 * and nearly in-order indices stay a few intervals whatever their number,
 * lost and duplicated indices are reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/coverage.h"

static void coverage_set_of_in_order_indices_stays_one_interval(void **state)
{
	(void)state;
	struct cta__cover c;
	cta__cover_init(&c);
	for (uint64_t i = 0; i < 10000000; i++)
		if (cta__cover_mark(&c, i))
			fail_msg("index %llu reported as a duplicate", (unsigned long long)i);
	assert_int_equal(c.n, 1);
	assert_true(c.cap <= 64);
	assert_int_equal(cta__cover_lost(&c, 10000000, NULL, 0), 0);
	assert_int_equal(c.dup_total, 0);
	cta__cover_free(&c);
}

static void coverage_set_of_nearly_in_order_indices_stays_small(void **state)
{
	(void)state;
	/* Blocks retire out of order inside a window of in-flight blocks: the
	 * set holds at most about a window's worth of intervals. */
	struct cta__cover c;
	cta__cover_init(&c);
	const uint64_t window = 256, total = 1000000;
	size_t maxn = 0;
	for (uint64_t base = 0; base < total; base += window) {
		/* Reverse-odd-then-even order inside each window. */
		for (uint64_t i = 1; i < window; i += 2)
			cta__cover_mark(&c, base + i);
		for (uint64_t i = 0; i < window; i += 2)
			cta__cover_mark(&c, base + i);
		if (c.n > maxn)
			maxn = c.n;
	}
	assert_true(maxn <= window);
	assert_int_equal(c.n, 1);
	assert_int_equal(cta__cover_lost(&c, total, NULL, 0), 0);
	cta__cover_free(&c);
}

static void coverage_set_reports_lost_and_duplicated_indices(void **state)
{
	(void)state;
	struct cta__cover c;
	cta__cover_init(&c);
	for (uint64_t i = 0; i < 100; i++)
		if (i != 7 && i != 42 && i != 99)
			assert_int_equal(cta__cover_mark(&c, i), 0);
	assert_int_equal(cta__cover_mark(&c, 5), 1);
	assert_int_equal(cta__cover_mark(&c, 5), 1);
	assert_int_equal(cta__cover_mark(&c, 60), 1);
	uint64_t lost[8];
	assert_int_equal(cta__cover_lost(&c, 100, lost, 8), 3);
	assert_int_equal(lost[0], 7);
	assert_int_equal(lost[1], 42);
	assert_int_equal(lost[2], 99);
	assert_int_equal(c.dup_total, 3);
	assert_int_equal(c.dups[0], 5);
	assert_int_equal(c.dups[2], 60);
	cta__cover_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(coverage_set_of_in_order_indices_stays_one_interval),
	    cmocka_unit_test(coverage_set_of_nearly_in_order_indices_stays_small),
	    cmocka_unit_test(coverage_set_reports_lost_and_duplicated_indices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
