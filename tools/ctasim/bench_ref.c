/* The references `ctasim bench` measures the simulator against, compiled as
 * the kernels are (kernel_c_args: -O3 -fno-trapping-math in optimised
 * builds, and the same x86-64-v4 clones, CTA__LOOP_CLONES): a ratio then
 * compares the simulator's code with the same compiler's best plain loop. */
#include "bench_ref.h"

#include "ctasim/kernel.h"

CTA__LOOP_CLONES __attribute__((noinline)) void cta__bench_plain_saxpy(int n, float a,
                                                                       const float *x, float *y)
{
	for (int i = 0; i < n; ++i)
		y[i] = a * x[i] + y[i];
}
