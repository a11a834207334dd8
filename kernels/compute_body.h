/* A compute-heavy kernel: every thread iterates a small polynomial map many
 * times on its own element. Its cost is host arithmetic, not memory or
 * scheduling, which makes it the yardstick for parallel simulation.
 * Compiles as C11 and as CUDA C++. */
#ifndef CTASIM_KERNELS_COMPUTE_BODY_H
#define CTASIM_KERNELS_COMPUTE_BODY_H

#include "ctasim/kernel.h"

struct compute_args {
	float *out;
	int n;
	int iters;
};

/* The logistic map x := r x (1 - x): bounded, cheap per step, and no step
 * can be skipped by the compiler. */
CTA_DEVICE float compute_iterate(float x, int iters)
{
	for (int k = 0; k < iters; k++)
		x = 3.7f * x * (1.0f - x);
	return x;
}

CTA_KERNEL(compute_heavy, struct compute_args, p)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < p->n)
		p->out[i] = compute_iterate(0.1f + 0.8f * (float)(i % 1000) / 1000.0f, p->iters);
}

#endif
