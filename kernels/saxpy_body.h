/* SAXPY, y = a*x + y, in the two forms of the CUDA Pro Tip "Write Flexible
 * Kernels with Grid-Stride Loops" (seeds/grid-stride-loops-pro-tip.txt):
 * the monolithic kernel (one thread per element) and the grid-stride loop.
 * Compiles as C11 and as CUDA C++. */
#ifndef CTASIM_KERNELS_SAXPY_BODY_H
#define CTASIM_KERNELS_SAXPY_BODY_H

#include "ctasim/kernel.h"
#include "saxpy_args.h"

/* The monolithic kernel: assumes a grid large enough to cover n. */
CTA_KERNEL(saxpy, struct saxpy_args, p)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < p->n) {
		p->y[i] = p->a * p->x[i] + p->y[i];
		cta_spin_ns(p->ns);
	}
}

/* The grid-stride loop: any grid covers any n, one grid-size at a time. */
CTA_KERNEL(saxpy_gridstride, struct saxpy_args, p)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < p->n; i += blockDim.x * gridDim.x) {
		p->y[i] = p->a * p->x[i] + p->y[i];
		cta_spin_ns(p->ns);
	}
}

#endif
