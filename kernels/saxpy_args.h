/* The arguments of both SAXPY kernels (saxpy_body.h), read by the harness
 * (saxpy.c, which also names the fields for `ctasim bench`: CTA_ARG_FIELD).
 * Compiles as C11 and as CUDA C++. */
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
