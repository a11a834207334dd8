/* Vector-scalar multiplication v := alpha * v, the running example of the
 * CUDA Programming Guide section 4.12.2 (seeds/cuda-guide-4.12-cluster-
 * launch-control.txt): fixed work per block, fixed number of blocks, cluster
 * launch control, and its cluster variant. Compiles as C11 and as CUDA C++.
 *
 * The guide leaves compute_scalar() out; here it is the block prologue whose
 * cost the three approaches amortise differently: it spins prologue_ns and
 * counts one execution per block in *prologue_count. Each element costs
 * kwork_cost_ns(imbalance, tile, ns), where tile is the logical block (the
 * blockDim-sized slice of v) the element belongs to, so every approach does
 * the same work per tile whichever block processes it. */
#ifndef CTASIM_KERNELS_VECSCALE_BODY_H
#define CTASIM_KERNELS_VECSCALE_BODY_H

#include "ctasim/kernel.h"
#include "imbalance.h"

struct vecscale_args {
	float *data;
	int n;
	float alpha;
	unsigned long long ns;              /* virtual cost of one element (per thread) */
	unsigned long long prologue_ns;     /* virtual cost of compute_scalar() */
	int imbalance;                      /* KWORK_* pattern over tiles */
	unsigned long long *prologue_count; /* block prologues executed */
};

/* The prologue: thread-block initialisation common to all blocks. */
CTA_DEVICE float compute_scalar(const struct vecscale_args *p)
{
	if (cta_thread_rank() == 0)
		atomicAdd(p->prologue_count, 1ull);
	cta_spin_ns(p->prologue_ns);
	return p->alpha;
}

/* Fixed work per thread block: one element per thread. */
CTA_KERNEL(vecscale_fixed_work, struct vecscale_args, p)
{
	// Prologue:
	float alpha = compute_scalar(p);

	// Computation:
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < p->n) {
		p->data[i] *= alpha;
		cta_spin_ns(kwork_cost_ns(p->imbalance, blockIdx.x, p->ns));
	}
}

/* Fixed number of thread blocks: a grid-stride loop. */
CTA_KERNEL(vecscale_fixed_blocks, struct vecscale_args, p)
{
	// Prologue:
	float alpha = compute_scalar(p);

	// Computation:
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long tile = blockIdx.x;
	while (i < p->n) {
		p->data[i] *= alpha;
		cta_spin_ns(kwork_cost_ns(p->imbalance, tile, p->ns));
		i += gridDim.x * blockDim.x;
		tile += gridDim.x;
	}
}

/* Cluster launch control: the guide's kernel_cluster_launch_control, its
 * six steps line for line. cg::invoke_one(cg::coalesced_threads(), ...)
 * selects one thread of the already single-thread branch, so the request
 * is issued directly. */
CTA_KERNEL(vecscale_clc, struct vecscale_args, p)
{
	// Cluster launch control initialization:
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	int phase = 0;

	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);

	// Prologue:
	float alpha = compute_scalar(p);

	// Work-stealing loop:
	int bx = blockIdx.x; // Assuming 1D x-axis thread blocks.

	while (true) {
		// Protect result from overwrite in the next iteration,
		// (also ensure barrier initialization at 1st iteration):
		__syncthreads();

		// Cancellation request:
		if (cta_thread_rank() == 0) {
			// Acquire write of result in the async proxy:
			cta_fence_proxy_async_generic_acquire();

			cta_clc_try_cancel(result, bar);
			cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
		}

		// Computation:
		int i = bx * blockDim.x + threadIdx.x;
		if (i < p->n) {
			p->data[i] *= alpha;
			cta_spin_ns(kwork_cost_ns(p->imbalance, (unsigned)bx, p->ns));
		}

		// Cancellation request synchronization:
		while (!cta_mbarrier_try_wait_parity(bar, phase)) {
		}
		phase ^= 1;

		// Cancellation request decoding:
		bool success = cta_clc_query_cancel_is_canceled(result);
		if (!success)
			break;

		bx = cta_clc_query_cancel_get_first_ctaid_x(result);

		// Release read of result to the async proxy:
		cta_fence_proxy_async_generic_release();
	}
}

/* The guide's cluster variant, __cluster_dims__(2, 1, 1) (the harness sets
 * the cluster shape): one cluster thread cancels a whole cluster, the result
 * is multicast to every CTA, and each CTA adds its local block index. */
CTA_KERNEL(vecscale_clc_cluster, struct vecscale_args, p)
{
	// Cluster launch control initialization:
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	int phase = 0;

	if (cta_thread_rank() == 0) {
		cta_mbarrier_init(bar, 1);
		cta_fence_mbarrier_init_release_cluster(); // CGA-level fence.
	}

	// Prologue:
	float alpha = compute_scalar(p);

	// Work-stealing loop:
	int bx = blockIdx.x; // Assuming 1D x-axis thread blocks.

	while (true) {
		// Protect result from overwrite in the next iteration,
		// (also ensure all thread blocks have started at 1st iteration):
		cta_cluster_sync();

		// Cancellation request by a single cluster thread:
		if (cta_cluster_thread_rank() == 0) {
			// Acquire write of result in the async proxy:
			cta_fence_proxy_async_generic_acquire();

			cta_clc_try_cancel_multicast(result, bar);
		}

		// Cancellation completion tracked by each thread block:
		if (cta_thread_rank() == 0)
			cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));

		// Computation:
		int i = bx * blockDim.x + threadIdx.x;
		if (i < p->n) {
			p->data[i] *= alpha;
			cta_spin_ns(kwork_cost_ns(p->imbalance, (unsigned)bx, p->ns));
		}

		// Cancellation request synchronization:
		while (!cta_mbarrier_try_wait_parity(bar, phase)) {
		}
		phase ^= 1;

		// Cancellation request decoding:
		bool success = cta_clc_query_cancel_is_canceled(result);
		if (!success)
			break;

		bx = cta_clc_query_cancel_get_first_ctaid_x(result);
		bx += cta_cluster_block_index().x; // Add local offset.

		// Release read of result to the async proxy:
		cta_fence_proxy_async_generic_release();
	}
}

#endif
