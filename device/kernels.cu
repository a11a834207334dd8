/* The one nvcc translation unit of the CUDA backend: every kernel body of
 * kernels/ (and the backend's test bodies) built for sm_90 and sm_100a,
 * plus the probes the host side uses to measure the timer tick and to align
 * %globaltimer with host time. */
#include <cuda_runtime.h>

#include "ctasim/kernel.h"

#include "test_bodies.h"

/* Kernel bodies of kernels/, listed explicitly: a new family adds its
 * *_body.h here (and to cuda_body_headers in device/meson.build). */
#include "../kernels/ck_body.h"
#include "../kernels/compute_body.h"
#include "../kernels/crash_body.h"
#include "../kernels/reduce_body.h"
#include "../kernels/saxpy_body.h"
#include "../kernels/spin_body.h"
#include "../kernels/ub_body.h"
#include "../kernels/vec_add_body.h"
#include "../kernels/vecscale_body.h"
#include "../kernels/work_steal_body.h"

/* Smallest non-zero step of %globaltimer seen by one thread over `iters`
 * reads, and the number of distinct steps. */
__global__ void cta__cuda_tick_probe(unsigned long long *out, unsigned iters)
{
	unsigned long long prev = cta_globaltimer_ns(), best = ~0ull, steps = 0;
	for (unsigned i = 0; i < iters; i++) {
		unsigned long long t = cta_globaltimer_ns();
		if (t != prev) {
			if (t - prev < best)
				best = t - prev;
			steps++;
			prev = t;
		}
	}
	out[0] = best;
	out[1] = steps;
}

/* Publishes %globaltimer into mapped host memory until the host sets
 * flag[1], so the host can pair its clock with the GPU's. */
__global__ void cta__cuda_clock_probe(volatile unsigned long long *flag)
{
	while (flag[1] == 0ull) {
		flag[0] = cta_globaltimer_ns();
		__threadfence_system();
	}
}

extern "C" {
/* Host launchers for the probes (called from cuda_exec.c). */
int cta__cuda_launch_tick_probe(unsigned long long *dev_out, unsigned iters)
{
	cta__cuda_tick_probe<<<1, 1>>>(dev_out, iters);
	return (int)cudaGetLastError();
}
int cta__cuda_launch_clock_probe(unsigned long long *dev_flag, cudaStream_t s)
{
	cta__cuda_clock_probe<<<1, 1, 0, s>>>(dev_flag);
	return (int)cudaGetLastError();
}
}
