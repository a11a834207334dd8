/* The CUDA backend's own test kernels: one per family of kernel.h calls
 * (spin, the guide's work-stealing loops, the high-level CLC calls, a
 * cluster multicast loop, shared memory + barriers + mbarriers + atomics).
 * C and CUDA C++ compatible; argument structs only with CTA_TEST_ARGS_ONLY. */
#ifndef CTASIM_DEVICE_TEST_BODIES_H
#define CTASIM_DEVICE_TEST_BODIES_H

#include "ctasim/kernel.h"

/* Every block's threads spin spin_ns; thread 0 counts its block in hits and
 * writes its SM in sm. Block b spins heavy_factor times longer when
 * b % heavy_every == 0 (heavy_every 0: balanced). */
struct cta_test_spin_args {
	unsigned long long spin_ns;
	unsigned heavy_every, heavy_factor;
	unsigned *hits;
	unsigned *sm;
};

/* The programming guide's vector-scalar kernel with cluster launch control
 * (low-level API), plus per-logical-block hit counts and optional spin. */
struct cta_test_vscale_args {
	float *data;
	int n;
	float alpha;
	unsigned long long spin_ns;
	unsigned heavy_every, heavy_factor;
	unsigned *hits;
};

/* vec_add through cta_for_each_canceled_block (leader: thread 0) or
 * cta_try_cancel_blocks (leader: the last thread, to show any thread can
 * lead). */
struct cta_test_vadd_args {
	const int *a, *b;
	int *c;
	int n;
	unsigned long long spin_ns;
	unsigned *hits;
};

/* Block sum of x through a shared array, __syncthreads, an mbarrier that
 * every thread arrives on, dynamic shared memory and a global atomicAdd. */
struct cta_test_reduce_args {
	const int *x;
	int n;
	unsigned long long *sum;
	unsigned *hits;
};

#ifndef CTA_TEST_ARGS_ONLY

CTA_KERNEL(cta_test_spin, struct cta_test_spin_args, p)
{
	unsigned b = blockIdx.x;
	unsigned long long ns = p->spin_ns;
	if (p->heavy_every && b % p->heavy_every == 0)
		ns *= p->heavy_factor;
	cta_spin_ns(ns);
	if (cta_thread_rank() == 0) {
		atomicAdd(&p->hits[b], 1u);
		p->sm[b] = cta_smid();
	}
}

CTA_KERNEL(cta_test_vscale, struct cta_test_vscale_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	unsigned phase = 0;
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	int bx = (int)blockIdx.x;
	for (;;) {
		__syncthreads();
		if (cta_thread_rank() == 0) {
			cta_fence_proxy_async_generic_acquire();
			cta_clc_try_cancel(result, bar);
			cta_mbarrier_arrive_expect_tx(bar, (unsigned)sizeof(cta_clc_result));
		}
		int i = bx * (int)blockDim.x + (int)threadIdx.x;
		if (i < p->n)
			p->data[i] *= p->alpha;
		unsigned long long ns = p->spin_ns;
		if (p->heavy_every && bx % (int)p->heavy_every == 0)
			ns *= p->heavy_factor;
		cta_spin_ns(ns);
		if (cta_thread_rank() == 0)
			atomicAdd(&p->hits[bx], 1u);
		while (!cta_mbarrier_try_wait_parity(bar, phase)) {
		}
		phase ^= 1u;
		if (!cta_clc_query_cancel_is_canceled(result))
			break;
		bx = cta_clc_query_cancel_get_first_ctaid_x(result);
		cta_fence_proxy_async_generic_release();
	}
}

/* The guide's cluster kernel (clusters of 2 along x): one cluster thread
 * cancels a whole cluster, the result is multicast to both CTAs, each adds
 * its local index. */
CTA_KERNEL(cta_test_vscale_cluster, struct cta_test_vscale_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	unsigned phase = 0;
	if (cta_thread_rank() == 0) {
		cta_mbarrier_init(bar, 1);
		cta_fence_mbarrier_init_release_cluster();
	}
	int bx = (int)blockIdx.x;
	for (;;) {
		cta_cluster_sync();
		if (cta_cluster_thread_rank() == 0) {
			cta_fence_proxy_async_generic_acquire();
			cta_clc_try_cancel_multicast(result, bar);
		}
		if (cta_thread_rank() == 0)
			cta_mbarrier_arrive_expect_tx(bar, (unsigned)sizeof(cta_clc_result));
		int i = bx * (int)blockDim.x + (int)threadIdx.x;
		if (i < p->n)
			p->data[i] *= p->alpha;
		cta_spin_ns(p->spin_ns);
		if (cta_thread_rank() == 0)
			atomicAdd(&p->hits[bx], 1u);
		while (!cta_mbarrier_try_wait_parity(bar, phase)) {
		}
		phase ^= 1u;
		if (!cta_clc_query_cancel_is_canceled(result))
			break;
		bx = cta_clc_query_cancel_get_first_ctaid_x(result) +
		     (int)cta_cluster_block_index().x;
		cta_fence_proxy_async_generic_release();
	}
	/* No CTA may exit while a sibling can still multicast into it. */
	cta_cluster_sync();
}

CTA_DEVICE void cta_test_vadd_block(dim3 b, void *arg)
{
	const struct cta_test_vadd_args *p = (const struct cta_test_vadd_args *)arg;
	int i = (int)(threadIdx.x + b.x * blockDim.x);
	if (i < p->n)
		p->c[i] += p->a[i] + p->b[i];
	cta_spin_ns(p->spin_ns);
	if (threadIdx.x == 0)
		atomicAdd(&p->hits[b.x], 1u);
}

CTA_KERNEL(cta_test_foreach, struct cta_test_vadd_args, p)
{
	cta_for_each_canceled_block(1, cta_test_vadd_block, (void *)p);
}

CTA_KERNEL(cta_test_tcb, struct cta_test_vadd_args, p)
{
	cta_try_cancel_blocks(1, threadIdx.x == blockDim.x - 1, cta_test_vadd_block, (void *)p);
}

CTA_KERNEL(cta_test_reduce, struct cta_test_reduce_args, p)
{
	CTA_SHARED_ARRAY(int, part, 1024);
	CTA_SHARED(uint64_t, bar);
	CTA_SHARED_DYNAMIC(int, dyn);
	unsigned t = cta_thread_rank();
	int i = (int)(blockIdx.x * blockDim.x + t);
	if (t == 0)
		cta_mbarrier_init(bar, blockDim.x);
	part[t] = i < p->n ? p->x[i] : 0;
	dyn[t] = part[t];
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
		if (t < s)
			part[t] += part[t + s];
		__syncthreads();
	}
	/* Every thread arrives; thread 0 waits for the phase and checks the
	 * dynamic copy against the tree sum. */
	cta_mbarrier_arrive(bar);
	if (t == 0) {
		while (!cta_mbarrier_try_wait_parity(bar, 0)) {
		}
		int s2 = 0;
		for (unsigned k = 0; k < blockDim.x; k++)
			s2 += dyn[k];
		if (s2 == part[0])
			atomicAdd(p->sum, (unsigned long long)part[0]);
		atomicAdd(&p->hits[blockIdx.x], 1u);
	}
}

#endif /* CTA_TEST_ARGS_ONLY */
#endif
