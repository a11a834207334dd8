/* One kernel per undefined-behaviour rule of the simulator's checker
 * (DESIGN.md, kernel.h), each doing the seeds' vec_add (c[i] += a[i] + b[i])
 * so coverage and results stay checkable. With valid = 0 (the default) the
 * kernel breaks its rule deterministically; with valid = 1 it is the valid twin:
 * the same code shape with the rule respected, which must not be flagged. */
#ifndef CTASIM_KERNELS_UB_BODY_H
#define CTASIM_KERNELS_UB_BODY_H

#include "ctasim/kernel.h"

struct ub_args {
	const int *a, *b;
	int *c;
	int n;
	int valid;                   /* 1: the valid twin */
	int leaders;                 /* ub_leader_count: leaders of the invalid form */
	int after_exit;              /* ub_multicast_cluster_not_running: sync, then exit */
	unsigned long long delay_ns; /* ub_multicast_cluster_not_running */
	unsigned long long ns;       /* virtual cost of one block (per thread) */
	unsigned *arrived;           /* ub_forward_progress: blocks that arrived */
};

/* One blockDim-sized tile of vec_add. */
CTA_DEVICE void ub_tile(const struct ub_args *p, unsigned bx)
{
	int idx = threadIdx.x + bx * blockDim.x;
	if (idx < p->n)
		p->c[idx] += p->a[idx] + p->b[idx];
	cta_spin_ns(p->ns);
}

/* The work-stealing body of the high-level kernels. */
CTA_DEVICE void ub_tile_fn(dim3 block_idx, void *arg)
{
	ub_tile((const struct ub_args *)arg, block_idx.x);
}

/* Waits for the result completing on `bar` (phase 0), decodes it, and does
 * the stolen tile if there is one: the correct tail of every low-level UB
 * kernel, whose rule under test lies before it. */
CTA_DEVICE void ub_wait_and_take(const struct ub_args *p, cta_clc_result *result, uint64_t *bar)
{
	while (!cta_mbarrier_try_wait_parity(bar, 0)) {
	}
	if (cta_clc_query_cancel_is_canceled(result))
		ub_tile(p, cta_clc_query_cancel_get_first_ctaid_x(result));
}

/* [request_after_observed_failure]: the guide's "Invalid code" (4.12.1.2).
 * The grid is one block, so nothing is pending and the first request fails
 * every time; the second request is issued after that failure was
 * observed. The valid twin is the guide's "Valid code": both requests
 * before the first query. */
CTA_KERNEL(ub_request_after_observed_failure, struct ub_args, p)
{
	CTA_SHARED(cta_clc_result, result0);
	CTA_SHARED(cta_clc_result, result1);
	CTA_SHARED(uint64_t, bar0);
	CTA_SHARED(uint64_t, bar1);
	if (cta_thread_rank() == 0) {
		cta_mbarrier_init(bar0, 1);
		cta_mbarrier_init(bar1, 1);
	}
	__syncthreads();
	ub_tile(p, blockIdx.x);

	// First request (the valid twin issues the second one here too):
	if (cta_thread_rank() == 0) {
		cta_clc_try_cancel(result0, bar0);
		cta_mbarrier_arrive_expect_tx(bar0, sizeof(cta_clc_result));
		if (p->valid) {
			cta_clc_try_cancel(result1, bar1);
			cta_mbarrier_arrive_expect_tx(bar1, sizeof(cta_clc_result));
		}
	}

	// First request query:
	while (!cta_mbarrier_try_wait_parity(bar0, 0)) {
	}
	bool success0 = cta_clc_query_cancel_is_canceled(result0);
	if (success0)
		ub_tile(p, cta_clc_query_cancel_get_first_ctaid_x(result0));

	// Second request - after an observed failure this is the UB:
	if (!p->valid && cta_thread_rank() == 0) {
		cta_clc_try_cancel(result1, bar1);
		cta_mbarrier_arrive_expect_tx(bar1, sizeof(cta_clc_result));
	}
	ub_wait_and_take(p, result1, bar1);
}

/* [read_failed_index]: decodes the stolen index without checking success.
 * One block: the request fails, and the invalid form reads its index. */
CTA_KERNEL(ub_read_failed_index, struct ub_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	__syncthreads();
	ub_tile(p, blockIdx.x);

	if (cta_thread_rank() == 0) {
		cta_clc_try_cancel(result, bar);
		cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
	}
	while (!cta_mbarrier_try_wait_parity(bar, 0)) {
	}
	bool success = cta_clc_query_cancel_is_canceled(result);
	// The bug: decoding the index whatever the outcome.
	if (success || !p->valid) {
		int bx = cta_clc_query_cancel_get_first_ctaid_x(result);
		if (success)
			ub_tile(p, bx);
	}
}

/* [read_before_complete]: the issuing thread queries the result right after
 * issuing, before its mbarrier phase completed (the request takes the
 * device's cancel latency, and no thread has waited yet). */
CTA_KERNEL(ub_read_before_complete, struct ub_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	__syncthreads();
	ub_tile(p, blockIdx.x);

	if (cta_thread_rank() == 0) {
		cta_clc_try_cancel(result, bar);
		cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
		// The bug: peeking at the result before waiting on its barrier.
		if (!p->valid) {
			bool early = cta_clc_query_cancel_is_canceled(result);
			(void)early;
		}
	}
	ub_wait_and_take(p, result, bar);
}

/* [result_buffer_in_flight]: two requests in flight at once writing the
 * same result buffer. The valid twin gives the second its own buffer. */
CTA_KERNEL(ub_result_buffer_in_flight, struct ub_args, p)
{
	CTA_SHARED(cta_clc_result, result0);
	CTA_SHARED(cta_clc_result, result1);
	CTA_SHARED(uint64_t, bar0);
	CTA_SHARED(uint64_t, bar1);
	// The bug: the second request reuses the first one's buffer.
	cta_clc_result *second = p->valid ? result1 : result0;
	if (cta_thread_rank() == 0) {
		cta_mbarrier_init(bar0, 1);
		cta_mbarrier_init(bar1, 1);
	}
	__syncthreads();
	ub_tile(p, blockIdx.x);

	if (cta_thread_rank() == 0) {
		cta_clc_try_cancel(result0, bar0);
		cta_mbarrier_arrive_expect_tx(bar0, sizeof(cta_clc_result));
		cta_clc_try_cancel(second, bar1);
		cta_mbarrier_arrive_expect_tx(bar1, sizeof(cta_clc_result));
	}
	ub_wait_and_take(p, result0, bar0);
	ub_wait_and_take(p, second, bar1);
}

/* [for_each_called_twice]: the libcu++ page's note, "calling
 * for_each_canceled_block again from this thread block exhibits undefined
 * behavior". */
CTA_KERNEL(ub_for_each_called_twice, struct ub_args, p)
{
	cta_for_each_canceled_block(1, ub_tile_fn, (void *)p);
	// The bug: a second call from the same block.
	if (!p->valid)
		cta_for_each_canceled_block(1, ub_tile_fn, (void *)p);
}

/* [for_each_not_all_threads]: "all threads within a thread block shall call
 * for_each_canceled_block exactly once" -- here only the first half does. */
CTA_KERNEL(ub_for_each_not_all_threads, struct ub_args, p)
{
	// The bug: a thread-dependent condition around the call.
	if (p->valid || threadIdx.x < blockDim.x / 2)
		cta_for_each_canceled_block(1, ub_tile_fn, (void *)p);
}

/* [leader_count]: try_cancel_blocks needs exactly one leader; the invalid
 * form has `leaders` of them (0 or 2). */
CTA_KERNEL(ub_leader_count, struct ub_args, p)
{
	// The bug: the first `leaders` threads lead instead of thread 0 alone.
	bool is_leader = threadIdx.x < (unsigned)(p->valid ? 1 : p->leaders);
	cta_try_cancel_blocks(1, is_leader, ub_tile_fn, (void *)p);
}

/* [multicast_cluster_not_running]: a cluster cancel while not every CTA of
 * the cluster is running (launched with (2,1,1) clusters). In the invalid
 * form CTA 1 exits right after its own tile, while the issuing thread of
 * CTA 0 spends delay_ns first, so at the request CTA 1 has exited in virtual
 * time; by default there is also no cluster sync, so nothing shows that CTA
 * 1 ever started. With after_exit = 1 the cluster is synced first and only
 * the exit breaks the rule. The valid twin is the guide's cluster pattern:
 * sync the cluster first, and every CTA waits for its copy of the result. */
CTA_KERNEL(ub_multicast_cluster_not_running, struct ub_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0) {
		cta_mbarrier_init(bar, 1);
		cta_fence_mbarrier_init_release_cluster();
	}
	// Ensure all thread blocks of the cluster have started:
	if (p->valid || p->after_exit)
		cta_cluster_sync();
	ub_tile(p, blockIdx.x);

	// The bug: CTA 1 does not wait for the multicast result, and exits.
	if (!p->valid && cta_cluster_block_rank() != 0)
		return;
	if (cta_cluster_thread_rank() == 0) {
		if (!p->valid)
			cta_spin_ns(p->delay_ns);
		cta_clc_try_cancel_multicast(result, bar);
	}
	if (cta_thread_rank() == 0)
		cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
	while (!cta_mbarrier_try_wait_parity(bar, 0)) {
	}
	if (cta_clc_query_cancel_is_canceled(result))
		ub_tile(p, cta_clc_query_cancel_get_first_ctaid_x(result) +
		               cta_cluster_block_index().x);
}

/* [divergent_barrier]: __syncthreads under a thread-dependent condition:
 * odd threads skip it. Each thread then adds its mirror thread's sum, which
 * needs every thread's shared-memory write to be visible. */
CTA_KERNEL(ub_divergent_barrier, struct ub_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned t = threadIdx.x;
	int idx = blockIdx.x * blockDim.x + t;
	s[t] = idx < p->n ? p->a[idx] + p->b[idx] : 0;
	// The bug: only even threads reach the barrier.
	if (p->valid || t % 2 == 0)
		__syncthreads();
	unsigned m = blockDim.x - 1 - t;
	int midx = blockIdx.x * blockDim.x + m;
	if (midx < p->n)
		p->c[midx] += s[m];
	cta_spin_ns(p->ns);
}

/* Bound on the deadlocking wait below, so that running the invalid form on a
 * GPU ends (try_wait returns false after a hardware time limit each call)
 * instead of hanging the device. The simulator suspends the thread until
 * the phase completes, so there the wait never ends and the deadlock shows. */
#define UB_DEADLOCK_SPIN_LIMIT 65536

/* [barrier_deadlock]: thread 0 waits on an mbarrier that expects two
 * arrivals but gets one, while every other thread waits for thread 0 at
 * __syncthreads: neither can ever complete. The valid twin expects one. */
CTA_KERNEL(ub_barrier_deadlock, struct ub_args, p)
{
	CTA_SHARED(uint64_t, bar);
	// The bug: an arrival count no thread will reach.
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, p->valid ? 1 : 2);
	__syncthreads();
	ub_tile(p, blockIdx.x);
	if (cta_thread_rank() == 0) {
		cta_mbarrier_arrive(bar);
		for (int k = 0; k < UB_DEADLOCK_SPIN_LIMIT && !cta_mbarrier_try_wait_parity(bar, 0);
		     k++) {
		}
	}
	__syncthreads();
}

/* [mbarrier_not_initialised]: thread 0 arrives at an mbarrier and every
 * thread waits for its phase, but nobody initialised it: on a GPU its
 * arrival count and phase are whatever shared memory held. The valid twin
 * initialises it for one arrival. The wait is bounded, as in
 * ub_barrier_deadlock, so that the invalid form cannot hang a GPU. */
CTA_KERNEL(ub_mbarrier_not_initialised, struct ub_args, p)
{
	CTA_SHARED(uint64_t, bar);
	// The bug: the initialisation is forgotten.
	if (p->valid && cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	__syncthreads();
	if (cta_thread_rank() == 0)
		cta_mbarrier_arrive(bar);
	for (int k = 0; k < UB_DEADLOCK_SPIN_LIMIT && !cta_mbarrier_try_wait_parity(bar, 0); k++) {
	}
	ub_tile(p, blockIdx.x);
}

/* [builtin_blockidx_in_body] (a warning): the body uses the built-in
 * blockIdx instead of the index it was given. Once a block steals another
 * block's index it redoes its own tile and never does the stolen one, so the
 * result is wrong too. The default grid (8192 blocks) is far larger than
 * what fits on any device at once, so blocks of the first wave always steal. */
CTA_DEVICE void ub_blockidx_fn(dim3 block_idx, void *arg)
{
	const struct ub_args *p = (const struct ub_args *)arg;
	// The bug: blockIdx is the running block, not the block being done.
	unsigned bx = p->valid ? block_idx.x : blockIdx.x;
	ub_tile(p, bx);
}

CTA_KERNEL(ub_builtin_blockidx_in_body, struct ub_args, p)
{
	cta_for_each_canceled_block(1, ub_blockidx_fn, (void *)p);
}

/* Bounds on the endless loops below when they run on a GPU, so that the
 * invalid forms end there (late) instead of hanging the device; the
 * simulator stops them with its watchdog. */
#if defined(__CUDACC__)
#define UB_ENDLESS (1ll << 20)
#else
#define UB_ENDLESS (1ll << 62)
#endif

/* [watchdog]: after its tile the block loops at __syncthreads and does
 * nothing else: on a GPU it never ends. The valid twin loops four times. */
CTA_KERNEL(ub_watchdog, struct ub_args, p)
{
	ub_tile(p, blockIdx.x);
	long long rounds = p->valid ? 4 : UB_ENDLESS;
	// The bug: the loop does not end.
	for (long long i = 0; i < rounds; i++)
		__syncthreads();
}

/* [forward_progress]: each block arrives on a global count, then waits
 * until every block of the grid arrived: correct only when the whole grid
 * is co-resident (the default grid is one block more than the SMs, at one
 * block per SM). The valid twin waits only for the blocks dispatched
 * before it (HSA's one-way guarantee), which are resident or done. */
CTA_KERNEL(ub_forward_progress, struct ub_args, p)
{
	ub_tile(p, blockIdx.x);
	__syncthreads();
	if (threadIdx.x == 0) {
		atomicAdd(p->arrived, 1u);
		unsigned want = p->valid ? blockIdx.x + 1 : gridDim.x;
		// The bug: waits for every block of the grid.
		for (long long i = 0; cta_ld_volatile(p->arrived) < want && i < UB_ENDLESS; i++) {
		}
	}
	__syncthreads();
}

#endif
