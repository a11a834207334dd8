/* Arguments of block_reduce (reduce_body.h), apart so that the harness
 * (reduce.c, which also names the fields for `ctasim bench`'s loop-fission
 * reference: CTA_ARG_FIELD) can read them without the kernel. */
#ifndef CTASIM_KERNELS_REDUCE_ARGS_H
#define CTASIM_KERNELS_REDUCE_ARGS_H

struct block_reduce_args {
	const unsigned *in;
	long long n;
	unsigned long long *partial; /* one per block, linear block index */
	unsigned long long npartial; /* blocks beyond this (a --grid override) write none */
	unsigned long long *total;
	unsigned long long ns; /* virtual cost of one element (per thread) */
};

#endif
