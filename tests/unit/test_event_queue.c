/* Tests of the event queue (sim/base/event_queue.c): events pop in (time,
 * insertion sequence) order, ties stay first-in first-out, the rings, heap
 * and calendar together match a reference queue driven like the engine, and
 * events pushed with sequence numbers kept earlier pop in their place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/event_queue.h"

static void event_queue_pops_by_time_then_insertion_order(void **state)
{
	(void)state;
	struct cta__evq q;
	cta__evq_init(&q);
	/* 5000 events over only 7 distinct times: many ties, pushed in an
	 * order unrelated to time. The payload `a` is the insertion index. */
	uint64_t x = 12345;
	for (uint64_t i = 0; i < 5000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		assert_int_equal(cta__evq_push(&q, (x >> 33) % 7, 1, NULL, i), 0);
	}
	struct cta__event e, prev = {0};
	size_t n = 0;
	while (cta__evq_pop(&q, &e)) {
		if (n) {
			assert_true(e.t >= prev.t);
			if (e.t == prev.t)
				assert_true(e.a > prev.a); /* ties first-in first-out */
		}
		prev = e;
		n++;
	}
	assert_int_equal(n, 5000);
	assert_int_equal(cta__evq_next_t(&q), UINT64_MAX);
	cta__evq_free(&q);
}

static void event_queue_ties_stay_fifo_when_pushed_between_pops(void **state)
{
	(void)state;
	struct cta__evq q;
	cta__evq_init(&q);
	/* Events at one time, some pushed while others are being popped, as
	 * the engine does when handling an event schedules another at now. */
	for (uint64_t i = 0; i < 10; i++)
		cta__evq_push(&q, 100, 1, NULL, i);
	cta__evq_push(&q, 50, 1, NULL, 1000);
	struct cta__event e;
	assert_true(cta__evq_pop(&q, &e));
	assert_int_equal(e.a, 1000);
	uint64_t expect = 0, pushed = 10;
	while (cta__evq_pop(&q, &e)) {
		assert_int_equal(e.t, 100);
		assert_int_equal(e.a, expect);
		expect++;
		if (pushed < 20)
			cta__evq_push(&q, 100, 1, NULL, pushed++);
	}
	assert_int_equal(expect, 20);
	cta__evq_free(&q);
}

/* The queue keeps events that arrive in time order in a ring and the rest
 * in a heap: drive it as the engine does (pops interleaved with pushes at
 * "now" plus a delay, mostly one fixed delay, sometimes another) and check
 * every pop against a plain scan for the least (time, insertion) pair. The
 * ring wraps and grows many times. */
static void event_queue_matches_a_reference_when_driven_like_the_engine(void **state)
{
	(void)state;
	enum { N = 60000 };
	struct cta__evq q;
	cta__evq_init(&q);
	struct ref {
		uint64_t t, a;
	} *pend = calloc(N, sizeof(*pend));
	assert_non_null(pend);
	size_t npend = 0;
	uint64_t x = 99, now = 0, pushed = 0, popped = 0;
	while (popped < N) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int burst = pushed < 3000 ? 2 : pushed < N ? (int)((x >> 40) % 3) : 0;
		for (int b = 0; b < burst && pushed < N; b++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t d = (x >> 33) % 10 ? 1000 : (x >> 20) % 3000;
			assert_int_equal(cta__evq_push(&q, now + d, 1, NULL, pushed), 0);
			pend[npend].t = now + d;
			pend[npend++].a = pushed++;
		}
		if (!npend) {
			if (pushed == N)
				break;
			continue;
		}
		size_t best = 0;
		for (size_t i = 1; i < npend; i++)
			if (pend[i].t < pend[best].t ||
			    (pend[i].t == pend[best].t && pend[i].a < pend[best].a))
				best = i;
		assert_int_equal(cta__evq_next_t(&q), pend[best].t);
		struct cta__event e;
		assert_true(cta__evq_pop(&q, &e));
		assert_int_equal(e.t, pend[best].t);
		assert_int_equal(e.a, pend[best].a);
		now = e.t;
		pend[best] = pend[--npend];
		popped++;
	}
	assert_int_equal(popped, N);
	struct cta__event e;
	assert_false(cta__evq_pop(&q, &e));
	free(pend);
	cta__evq_free(&q);
}

/* Twelve streams, each in time order but interleaved with the others (as
 * emulated CLC's cancels are, their claims queued per bitmap word): the
 * spare rings take them all, so the heap stays empty, and the pops still
 * match a plain scan for the least (time, insertion) pair. */
static void event_queue_interleaved_streams_use_the_spare_rings(void **state)
{
	(void)state;
	enum { STREAMS = 12, N = 24000 };
	struct cta__evq q;
	cta__evq_init(&q);
	struct ref {
		uint64_t t, a;
	} *pend = calloc(N, sizeof(*pend));
	assert_non_null(pend);
	uint64_t last[STREAMS] = {0}, x = 7, now = 0;
	size_t npend = 0, pushed = 0, popped = 0, most_spares = 0;
	while (popped < N) {
		/* Each stream's next event is later than its last one and than
		 * now; streams are far apart, so no two rings could share. */
		while (pushed < N && npend < 4 * STREAMS) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			unsigned s = (unsigned)(x >> 60) % STREAMS;
			uint64_t base = last[s] > now ? last[s] : now;
			uint64_t t = base + 1 + (x >> 20) % 50 + (STREAMS - s) * 1000;
			last[s] = t;
			assert_int_equal(cta__evq_push(&q, t, 1, NULL, pushed), 0);
			pend[npend].t = t;
			pend[npend++].a = pushed++;
		}
		assert_int_equal(q.n, 0); /* nothing in the heap */
		size_t used = (size_t)__builtin_popcount(q.spares);
		most_spares = used > most_spares ? used : most_spares;
		size_t best = 0;
		for (size_t i = 1; i < npend; i++)
			if (pend[i].t < pend[best].t ||
			    (pend[i].t == pend[best].t && pend[i].a < pend[best].a))
				best = i;
		struct cta__event e;
		assert_true(cta__evq_pop(&q, &e));
		assert_int_equal(e.t, pend[best].t);
		assert_int_equal(e.a, pend[best].a);
		now = e.t;
		pend[best] = pend[--npend];
		popped++;
	}
	assert_true(most_spares >= 4); /* the streams did need the spares */
	assert_int_equal(q.spares, 0);
	assert_int_equal(cta__evq_size(&q), 0);
	free(pend);
	cta__evq_free(&q);
}

/* Interleaved events pushed near the engine's time (cta__evq_push_near,
 * as emulated CLC's cancels are) go to the calendar: ties at one time,
 * several in a bucket, times past its span (which go where
 * cta__evq_push puts them), plain pushes between them and more than its
 * first 1,024 nodes in flight. Every pop matches a plain scan for the
 * least (time, insertion) pair. */
static void event_queue_near_events_pop_in_order_from_the_calendar(void **state)
{
	(void)state;
	enum { N = 40000 };
	struct cta__evq q;
	cta__evq_init(&q);
	struct ref {
		uint64_t t, a;
	} *pend = calloc(N, sizeof(*pend));
	assert_non_null(pend);
	uint64_t x = 3, now = 5;
	size_t npend = 0, pushed = 0, popped = 0, most_cal = 0, beyond = 0;
	const uint64_t span = (uint64_t)CTA__EVQ_CAL_BUCKETS << CTA__EVQ_CAL_SHIFT;
	while (popped < N) {
		size_t want = popped < N / 2 ? 1500 : 200;
		while (pushed < N && npend < want) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			unsigned kind = (unsigned)(x >> 59) % 16;
			uint64_t t = kind == 0   ? now                          /* a tie at now */
			             : kind == 1 ? now + span + (x >> 30) % 999 /* past the span */
			             : kind == 2 ? now + (x >> 30) % 40 /* crowded buckets */
			                         : now + (x >> 30) % (span - 16);
			beyond += t - now >= span - (1u << CTA__EVQ_CAL_SHIFT);
			int rc = kind == 3 ? cta__evq_push(&q, t, 1, NULL, pushed)
			                   : cta__evq_push_near(&q, now, t, 1, NULL, pushed);
			assert_int_equal(rc, 0);
			pend[npend].t = t;
			pend[npend++].a = pushed++;
		}
		most_cal = q.cal_n > most_cal ? q.cal_n : most_cal;
		assert_int_equal(cta__evq_size(&q), npend);
		size_t best = 0;
		for (size_t i = 1; i < npend; i++)
			if (pend[i].t < pend[best].t ||
			    (pend[i].t == pend[best].t && pend[i].a < pend[best].a))
				best = i;
		assert_int_equal(cta__evq_next_t(&q), pend[best].t);
		struct cta__event e;
		assert_true(cta__evq_pop(&q, &e));
		assert_int_equal(e.t, pend[best].t);
		assert_int_equal(e.a, pend[best].a);
		now = e.t;
		pend[best] = pend[--npend];
		popped++;
	}
	assert_true(most_cal > 1024); /* the calendar's nodes grew */
	assert_true(beyond > 1000);   /* and events past its span went elsewhere */
	assert_int_equal(q.cal_n, 0);
	assert_int_equal(cta__evq_size(&q), 0);
	free(pend);
	cta__evq_free(&q);
}

/* A sealed batch's events take sequence numbers kept when it was sealed
 * (cta__evq_push_seq), pushed later, after events pushed meanwhile with
 * larger ones: they still pop in (time, sequence) order. Kept numbers at
 * the rings' last times (appended), before them (the heap), and enough
 * in flight that the rings grow past their first 1,024 events. */
static void event_queue_kept_sequence_numbers_pop_in_their_place(void **state)
{
	(void)state;
	enum { N = 40000 };
	struct cta__evq q;
	cta__evq_init(&q);
	struct ref {
		uint64_t t, seq, a;
	} *pend = calloc(N, sizeof(*pend));
	assert_non_null(pend);
	size_t npend = 0, pushed = 0, popped = 0, kept_in_heap = 0;
	uint64_t x = 31, now = 0;
	while (popped < N) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* Pushes outrun pops for the first half: thousands in flight. */
		int rounds = pushed < N / 2 ? 3 : (int)((x >> 50) % 2);
		for (int r = 0; r < rounds && pushed < N; r++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			size_t kept = 1 + (size_t)((x >> 40) % 8);
			uint64_t base = q.seq;
			q.seq += kept; /* the seal: numbers kept */
			/* Events pushed meanwhile take the numbers after them. */
			for (int m = 0; m < 2 && pushed < N; m++) {
				uint64_t t = now + 500 + (uint64_t)m;
				pend[npend++] = (struct ref){t, q.seq, pushed};
				assert_int_equal(cta__evq_push(&q, t, 1, NULL, pushed++), 0);
			}
			for (size_t j = 0; j < kept && pushed < N; j++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				/* Mostly ends after the ones pushed meanwhile, some
				 * at the same time, a few before. */
				uint64_t t = now + ((x >> 33) % 16 ? 500 + (x >> 20) % 3 : 100);
				kept_in_heap += t == now + 100;
				pend[npend++] = (struct ref){t, base + j, pushed};
				assert_int_equal(
				    cta__evq_push_seq(&q, t, base + j, 1, NULL, pushed++), 0);
			}
		}
		if (!npend)
			continue;
		size_t best = 0;
		for (size_t i = 1; i < npend; i++)
			if (pend[i].t < pend[best].t ||
			    (pend[i].t == pend[best].t && pend[i].seq < pend[best].seq))
				best = i;
		struct cta__event e;
		assert_true(cta__evq_pop(&q, &e));
		assert_int_equal(e.t, pend[best].t);
		assert_int_equal(e.seq, pend[best].seq);
		assert_int_equal(e.a, pend[best].a);
		now = e.t;
		pend[best] = pend[--npend];
		popped++;
	}
	assert_true(kept_in_heap > 100);
	assert_true(q.r[0].cap > 1024 || q.r[1].cap > 1024); /* a ring grew */
	assert_int_equal(cta__evq_size(&q), 0);
	free(pend);
	cta__evq_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(event_queue_pops_by_time_then_insertion_order),
	    cmocka_unit_test(event_queue_ties_stay_fifo_when_pushed_between_pops),
	    cmocka_unit_test(event_queue_matches_a_reference_when_driven_like_the_engine),
	    cmocka_unit_test(event_queue_interleaved_streams_use_the_spare_rings),
	    cmocka_unit_test(event_queue_kept_sequence_numbers_pop_in_their_place),
	    cmocka_unit_test(event_queue_near_events_pop_in_order_from_the_calendar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
