/* Unit tests for the worker pool (sim/exec/pool.c): every index runs
 * exactly once whatever the count and thread count, and worker indices stay
 * within the pool's size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>

#include "exec/pool.h"

struct tally {
	atomic_uint *hits;
	atomic_uint bad_worker;
	atomic_uint per_worker[8];
	unsigned size;
};

static void tally_task(void *ctx, size_t index, unsigned worker)
{
	struct tally *t = ctx;
	atomic_fetch_add_explicit(&t->hits[index], 1, memory_order_relaxed);
	if (worker >= t->size || worker >= 8)
		atomic_fetch_add(&t->bad_worker, 1);
	else
		atomic_fetch_add_explicit(&t->per_worker[worker], 1, memory_order_relaxed);
}

static void check_exactly_once(unsigned nthreads, size_t count)
{
	struct cta__pool *p;
	assert_int_equal(cta__pool_new(&p, nthreads), 0);
	assert_int_equal(cta__pool_size(p), nthreads);
	struct tally t = {0};
	t.size = nthreads;
	t.hits = calloc(count ? count : 1, sizeof(*t.hits));
	assert_non_null(t.hits);
	/* Twice on the same pool: the second run must not see the first. */
	for (int round = 1; round <= 2; round++) {
		cta__pool_run(p, tally_task, &t, count);
		for (size_t i = 0; i < count; i++)
			assert_int_equal(atomic_load(&t.hits[i]), round);
	}
	assert_int_equal(atomic_load(&t.bad_worker), 0);
	size_t total = 0;
	for (unsigned w = 0; w < 8; w++)
		total += atomic_load(&t.per_worker[w]);
	assert_int_equal(total, 2 * count);
	free(t.hits);
	cta__pool_free(p);
}

static void pool_runs_every_index_exactly_once(void **state)
{
	static const unsigned threads[] = {1, 2, 7};
	static const size_t counts[] = {0, 1, 7, 100000};
	for (size_t a = 0; a < 3; a++)
		for (size_t b = 0; b < 4; b++)
			check_exactly_once(threads[a], counts[b]);
}

static void pool_many_small_runs_complete(void **state)
{
	struct cta__pool *p;
	assert_int_equal(cta__pool_new(&p, 3), 0);
	struct tally t = {0};
	t.size = 3;
	atomic_uint hits[16];
	t.hits = hits;
	for (int i = 0; i < 16; i++)
		atomic_init(&hits[i], 0);
	for (int r = 0; r < 2000; r++)
		cta__pool_run(p, tally_task, &t, 16);
	for (int i = 0; i < 16; i++)
		assert_int_equal(atomic_load(&hits[i]), 2000);
	cta__pool_free(p);
}

static void pool_zero_means_online_cpus(void **state)
{
	struct cta__pool *p;
	assert_int_equal(cta__pool_new(&p, 0), 0);
	assert_true(cta__pool_size(p) >= 1);
	cta__pool_free(p);
	cta__pool_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pool_runs_every_index_exactly_once),
	    cmocka_unit_test(pool_many_small_runs_complete),
	    cmocka_unit_test(pool_zero_means_online_cpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
