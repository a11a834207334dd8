/* The plain loops `ctasim bench` compares the simulator with
 * (bench_ref.c, compiled with the kernels' flags). */
#ifndef CTASIM_TOOLS_BENCH_REF_H
#define CTASIM_TOOLS_BENCH_REF_H

/* y = a*x + y over n elements, as one plain C loop. */
void cta__bench_plain_saxpy(int n, float a, const float *x, float *y);

#endif
