/* Prints the scheduler benchmark of tools/ctasim/bench_sched.c (the same
 * numbers `ctasim bench` reports): blocks per second per host core, multi-
 * kernel against single-kernel, each the best of three alternating runs. */
#include <stdio.h>

#include "bench_sched.h"

int main(void)
{
	double multi = 0, single = 0;
	int rc = cta_bench_scenario(&multi, &single);
	if (rc < 0)
		return 1;
	printf("single kernel (spin, 1e6 blocks, timing-only): %.3g blocks/s per host core\n",
	       single);
	printf("16 kernels, 6 priorities (bench_16k6p, 1e6 blocks): %.3g blocks/s per host core\n",
	       multi);
	printf("multi / single: %.2f (target: at least 0.5)\n", multi / single);
	return 0;
}
