/* Test kernels and the launch helper shared by the engine's and the
 * placement's unit tests (test_engine.c, test_placement.c). */
#ifndef CTA_TEST_ENG_KERNELS_H
#define CTA_TEST_ENG_KERNELS_H

#include "simtest.h"

/* ---- test kernels ------------------------------------------------------- */

/* Spends ns of virtual time per thread. */
struct eng_spin_args {
	unsigned long long ns;
};
CTA_KERNEL(eng_spin, struct eng_spin_args, p)
{
	cta_spin_ns(p->ns);
}

/* Thread 0 of each block records the virtual time its block started at,
 * by the block's linear index (x fastest). Blocks may run on several host
 * threads, so only virtual time says in which order they were started. */
struct eng_order_args {
	unsigned long long *t_start;
	unsigned long long ns;
};
CTA_KERNEL(eng_order, struct eng_order_args, p)
{
	if (cta_thread_rank() == 0)
		p->t_start[blockIdx.x + (unsigned long long)gridDim.x *
		                            (blockIdx.y + (unsigned long long)gridDim.y *
		                                              blockIdx.z)] = cta_globaltimer_ns();
	cta_spin_ns(p->ns);
}

static inline struct cta_launch launch_of(const struct cta_kernel_def *k, const void *args,
                                          unsigned gx, unsigned gy, unsigned gz, unsigned bx)
{
	struct cta_launch l = {0};
	l.kernel = k;
	l.grid[0] = gx;
	l.grid[1] = gy;
	l.grid[2] = gz;
	l.block[0] = bx;
	l.block[1] = l.block[2] = 1;
	l.args = args;
	return l;
}

#endif
