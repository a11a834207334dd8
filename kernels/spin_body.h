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

#endif
