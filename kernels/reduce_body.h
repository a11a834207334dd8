/* A shared-memory tree reduction with __syncthreads (the classic sequential-
 * addressing form): each block sums a grid-stride slice of the input, writes
 * its partial sum, and adds it to a grand total with atomicAdd. The barrier
 * workload of the simulator. Compiles as C11 and as CUDA C++. */
#ifndef CTASIM_KERNELS_REDUCE_BODY_H
#define CTASIM_KERNELS_REDUCE_BODY_H

#include "ctasim/kernel.h"
#include "reduce_args.h"

/* Largest block the kernel supports: the static shared array has one slot
 * per thread. */
#define BLOCK_REDUCE_MAX_THREADS 1024

CTA_KERNEL(block_reduce, struct block_reduce_args, p)
{
	CTA_SHARED_ARRAY(unsigned long long, sdata, BLOCK_REDUCE_MAX_THREADS);
	unsigned tid = cta_thread_rank();
	unsigned bsize = blockDim.x * blockDim.y * blockDim.z;
	unsigned long long blk =
	    blockIdx.x + (unsigned long long)gridDim.x *
	                     (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
	unsigned long long nblk = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;

	/* Each thread first sums its grid-stride elements, so any grid covers
	 * any n. */
	unsigned long long sum = 0;
	for (unsigned long long i = blk * bsize + tid; i < (unsigned long long)p->n;
	     i += nblk * bsize) {
		sum += p->in[i];
		cta_spin_ns(p->ns);
	}
	sdata[tid] = sum;
	__syncthreads();

	/* Tree over the next power of two, so blocks of any size work: a
	 * thread adds its partner only when the partner exists. */
	unsigned pow2 = 1;
	while (pow2 < bsize)
		pow2 <<= 1;
	for (unsigned s = pow2 / 2; s > 0; s >>= 1) {
		if (tid < s && tid + s < bsize)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}

	if (tid == 0) {
		if (blk < p->npartial)
			p->partial[blk] = sdata[0];
		atomicAdd(p->total, sdata[0]);
	}
}

#endif
