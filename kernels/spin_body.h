/* The timing-only kernel: every block just spends virtual time, scaled by
 * an imbalance pattern over its linear block index. Used for placement
 * studies and the simulator's throughput benchmarks. Compiles as C11 and as
 * CUDA C++. */
#ifndef CTASIM_KERNELS_SPIN_BODY_H
#define CTASIM_KERNELS_SPIN_BODY_H

#include "ctasim/kernel.h"
#include "imbalance.h"

struct spin_args {
	unsigned long long ns; /* base cost of one block */
	int imbalance;         /* KWORK_* pattern over blocks */
};

CTA_KERNEL(spin, struct spin_args, p)
{
	unsigned long long blk =
	    blockIdx.x + (unsigned long long)gridDim.x *
	                     (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
	cta_spin_ns(kwork_cost_ns(p->imbalance, blk, p->ns));
}

/* The work-stealing counterpart of spin: the guide's low-level cluster
 * launch control loop (the steps of vecscale_clc, line for line) whose work
 * per block is only virtual time, so that a timing-only run measures the
 * cancellation machinery and nothing of the host's memory. Thread 0 counts
 * each block index it processes in done[], which the harness checks is 1
 * everywhere: every index exactly once. */
struct spin_clc_args {
	unsigned long long ns;
	int imbalance;
	unsigned *done;           /* per block index */
	unsigned long long ndone; /* counters allocated */
};

CTA_KERNEL(spin_clc, struct spin_clc_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	int phase = 0;

	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);

	int bx = blockIdx.x;
	while (true) {
		__syncthreads();
		if (cta_thread_rank() == 0) {
			cta_fence_proxy_async_generic_acquire();
			cta_clc_try_cancel(result, bar);
			cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
			if ((unsigned long long)bx < p->ndone)
				p->done[bx] += 1;
		}
		cta_spin_ns(kwork_cost_ns(p->imbalance, (unsigned)bx, p->ns));
		while (!cta_mbarrier_try_wait_parity(bar, phase)) {
		}
		phase ^= 1;
		bool success = cta_clc_query_cancel_is_canceled(result);
		if (!success)
			break;
		bx = cta_clc_query_cancel_get_first_ctaid_x(result);
		cta_fence_proxy_async_generic_release();
	}
}

#endif
