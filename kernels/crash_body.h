/* A kernel that crashes on purpose: one thread of one block writes through
 * a wild pointer. It exists to show (and test) that the simulator reports
 * the kernel, block and thread of a crash and keeps the trace so far.
 * Compiles as C11 and as CUDA C++ (where it is a memcheck target). */
#ifndef CTASIM_KERNELS_CRASH_BODY_H
#define CTASIM_KERNELS_CRASH_BODY_H

#include "ctasim/kernel.h"

struct crash_args {
	int *data;
	unsigned block, thread;
	unsigned long long ns;
};

CTA_KERNEL(crash_oob, struct crash_args, p)
{
	cta_spin_ns(p->ns);
	int *target = p->data + blockIdx.x * blockDim.x + threadIdx.x;
	if (blockIdx.x == p->block && threadIdx.x == p->thread)
		target = (int *)(uintptr_t)0x10; /* far outside any allocation */
	*target = 1;
}

#endif
