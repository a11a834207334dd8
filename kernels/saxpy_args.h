/* The arguments of both SAXPY kernels (saxpy_body.h). A header of its own
 * so that `ctasim bench` can run its plain C loop over the very arrays a
 * prepared saxpy launch points at. Compiles as C11 and as CUDA C++. */
#ifndef CTASIM_KERNELS_SAXPY_ARGS_H
#define CTASIM_KERNELS_SAXPY_ARGS_H

struct saxpy_args {
	int n;
	float a;
	const float *x;
	float *y;
	unsigned long long ns; /* virtual cost of one element, per thread */
};

#endif
