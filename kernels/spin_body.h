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

/* spin with heavy live register state, so that registers, not threads,
 * limit how many blocks an SM holds. On a GPU every thread updates
 * SPIN_REGS_LIVE values on each turn of its wait for %globaltimer (each
 * from itself and its neighbour, so all stay live in registers to the
 * end) and folds them into a store that never happens; in the simulator
 * the body is spin's. The register count ptxas gives it for sm_90
 * (`ptxas -v`: 108, allocated per warp in 256-register units as 112) is
 * what the harness declares to the simulator:
 * SPIN_REGS_PER_THREAD. */
#define SPIN_REGS_LIVE       96
#define SPIN_REGS_PER_THREAD 108
struct spin_regs_args {
	unsigned long long ns;
	int imbalance;
	unsigned never; /* a fold value that never comes: the sink is not written */
	unsigned *sink; /* NULL */
};

CTA_KERNEL(spin_regs, struct spin_regs_args, p)
{
	unsigned long long blk =
	    blockIdx.x + (unsigned long long)gridDim.x *
	                     (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
#if defined(__CUDA_ARCH__)
	unsigned v[SPIN_REGS_LIVE];
	unsigned s0 = (unsigned)cta_clock64() + threadIdx.x;
#pragma unroll
	for (int i = 0; i < SPIN_REGS_LIVE; i++)
		v[i] = s0 + (unsigned)i * 2654435761u;
	uint64_t end = cta_globaltimer_ns() + kwork_cost_ns(p->imbalance, blk, p->ns);
	while (cta_globaltimer_ns() < end) {
#pragma unroll
		for (int i = 0; i < SPIN_REGS_LIVE; i++)
			v[i] = v[i] * 1664525u + v[(i + 1) % SPIN_REGS_LIVE];
	}
	unsigned x = 0;
#pragma unroll
	for (int i = 0; i < SPIN_REGS_LIVE; i++)
		x = x * 31u + v[i];
	if (x == p->never && p->sink)
		*p->sink = x;
#else
	cta_spin_ns(kwork_cost_ns(p->imbalance, blk, p->ns));
#endif
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

/* spin_clc in clusters (`--arg cluster=2`): the guide's cluster loop
 * (vecscale_clc_cluster's, 4.12.2.2) with spin_clc's work, so that what a
 * cluster barrier costs an iteration is measured without the vector-scalar
 * body's global loads and stores. One cluster thread cancels a whole
 * cluster, the result is multicast to every CTA, each adds its rank. */
CTA_KERNEL(spin_clc_cluster, struct spin_clc_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	int phase = 0;

	if (cta_thread_rank() == 0) {
		cta_mbarrier_init(bar, 1);
		cta_fence_mbarrier_init_release_cluster();
	}

	int bx = blockIdx.x;
	while (true) {
		cta_cluster_sync();
		if (cta_cluster_thread_rank() == 0) {
			cta_fence_proxy_async_generic_acquire();
			cta_clc_try_cancel_multicast(result, bar);
		}
		if (cta_thread_rank() == 0) {
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
		bx = cta_clc_query_cancel_get_first_ctaid_x(result) + cta_cluster_block_index().x;
		cta_fence_proxy_async_generic_release();
	}
}

#endif
