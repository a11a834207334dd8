/* c[i] += a[i] + b[i] with block-level work stealing: the libcu++ examples
 * of cuda::for_each_canceled_block (seeds/libcudacxx-for_each_canceled_block
 * .txt, here with 1-D, 2-D and 3-D grids) and of the experimental
 * cuda::experimental::try_cancel_blocks (seeds/libcudacxx-try_cancel_blocks-
 * experimental.txt), and the guide's "Valid code" of two requests issued
 * before observing either. Compiles as C11 and as CUDA C++.
 *
 * C has no lambdas: each lambda becomes a CTA_DEVICE function taking the
 * block index and a pointer to what it captured (here, the arguments). The
 * body uses `+=` as the seeds do, so a block processed twice shows up as a
 * wrong result. */
#ifndef CTASIM_KERNELS_VEC_ADD_BODY_H
#define CTASIM_KERNELS_VEC_ADD_BODY_H

#include "ctasim/kernel.h"

struct vec_add_args {
	const int *a, *b;
	int *c;
	int n;                 /* elements: nx * ny * nz */
	int nx, ny, nz;        /* problem shape of the 2-D and 3-D variants */
	unsigned long long ns; /* virtual cost of one block (per thread) */
};

/* The seed's lambda, rank 1. */
CTA_DEVICE void vec_add_1d(dim3 block_idx, void *arg)
{
	const struct vec_add_args *p = (const struct vec_add_args *)arg;
	// block_idx may be different than the built-in blockIdx variable, that is:
	// assert(block_idx == blockIdx); // may fail!
	// so we need to use "block_idx" consistently inside for_each_canceled:
	int idx = threadIdx.x + block_idx.x * blockDim.x;
	if (idx < p->n) {
		p->c[idx] += p->a[idx] + p->b[idx];
	}
	cta_spin_ns(p->ns);
}

/* The same over an nx * ny matrix stored row by row, rank 2. */
CTA_DEVICE void vec_add_2d(dim3 block_idx, void *arg)
{
	const struct vec_add_args *p = (const struct vec_add_args *)arg;
	int x = threadIdx.x + block_idx.x * blockDim.x;
	int y = threadIdx.y + block_idx.y * blockDim.y;
	if (x < p->nx && y < p->ny) {
		int idx = y * p->nx + x;
		p->c[idx] += p->a[idx] + p->b[idx];
	}
	cta_spin_ns(p->ns);
}

/* The same over an nx * ny * nz box, rank 3. */
CTA_DEVICE void vec_add_3d(dim3 block_idx, void *arg)
{
	const struct vec_add_args *p = (const struct vec_add_args *)arg;
	int x = threadIdx.x + block_idx.x * blockDim.x;
	int y = threadIdx.y + block_idx.y * blockDim.y;
	int z = threadIdx.z + block_idx.z * blockDim.z;
	if (x < p->nx && y < p->ny && z < p->nz) {
		int idx = (z * p->ny + y) * p->nx + x;
		p->c[idx] += p->a[idx] + p->b[idx];
	}
	cta_spin_ns(p->ns);
}

CTA_KERNEL(vec_add_clc, struct vec_add_args, p)
{
	// Extract common prologue outside the lambda, e.g.,
	// - __shared__ or global (malloc) memory allocation
	// - common initialization code
	// - etc.

	cta_for_each_canceled_block(1, vec_add_1d, (void *)p);
	// Note: Calling for_each_canceled_block<1> again from this
	// thread block exhibits undefined behavior.

	// Extract common epilogue outside the lambda, e.g.,
	// - write back shared memory to global memory
	// - external synchronization
	// - global memory deallocation (free)
	// - etc.
}

CTA_KERNEL(vec_add_clc_2d, struct vec_add_args, p)
{
	cta_for_each_canceled_block(2, vec_add_2d, (void *)p);
}

CTA_KERNEL(vec_add_clc_3d, struct vec_add_args, p)
{
	cta_for_each_canceled_block(3, vec_add_3d, (void *)p);
}

CTA_KERNEL(vec_add_try_cancel_blocks, struct vec_add_args, p)
{
	cta_try_cancel_blocks(1, threadIdx.x == 0, vec_add_1d, (void *)p);
}

/* One tile of the 1-D problem, for the low-level kernel below. */
CTA_DEVICE void vec_add_tile(const struct vec_add_args *p, unsigned bx)
{
	int idx = threadIdx.x + bx * blockDim.x;
	if (idx < p->n)
		p->c[idx] += p->a[idx] + p->b[idx];
	cta_spin_ns(p->ns);
}

/* The guide's "Valid code" (4.12.1.2) in a work-stealing loop: each round
 * issues two requests before observing either, so when the first fails the
 * second was still issued validly. After any observed failure the block
 * stops requesting. Must not be flagged. */
CTA_KERNEL(clc_two_requests, struct vec_add_args, p)
{
	CTA_SHARED(cta_clc_result, result0);
	CTA_SHARED(cta_clc_result, result1);
	CTA_SHARED(uint64_t, bar0);
	CTA_SHARED(uint64_t, bar1);
	int phase = 0;

	if (cta_thread_rank() == 0) {
		cta_mbarrier_init(bar0, 1);
		cta_mbarrier_init(bar1, 1);
	}

	vec_add_tile(p, blockIdx.x);

	while (true) {
		// Protect the results from overwrite (and publish the barrier
		// initialisation at the first round):
		__syncthreads();

		if (cta_thread_rank() == 0) {
			cta_fence_proxy_async_generic_acquire();
			// First request:
			cta_clc_try_cancel(result0, bar0);
			cta_mbarrier_arrive_expect_tx(bar0, sizeof(cta_clc_result));
			// Second request, before observing the first:
			cta_clc_try_cancel(result1, bar1);
			cta_mbarrier_arrive_expect_tx(bar1, sizeof(cta_clc_result));
		}

		// First request query (then the second):
		while (!cta_mbarrier_try_wait_parity(bar0, phase)) {
		}
		while (!cta_mbarrier_try_wait_parity(bar1, phase)) {
		}
		phase ^= 1;
		bool success0 = cta_clc_query_cancel_is_canceled(result0);
		bool success1 = cta_clc_query_cancel_is_canceled(result1);
		if (success0)
			vec_add_tile(p, cta_clc_query_cancel_get_first_ctaid_x(result0));
		if (success1)
			vec_add_tile(p, cta_clc_query_cancel_get_first_ctaid_x(result1));
		// An observed failure ends the requests: another one would be UB.
		if (!success0 || !success1)
			break;

		cta_fence_proxy_async_generic_release();
	}
}

#endif
