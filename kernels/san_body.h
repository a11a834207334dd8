/* Planted bugs for the sanitizer (--sanitize, docs/SANITIZE.md): one kernel
 * per report, each a small vec-copy (out[i] = in[i] + 1) with one classic
 * mistake. With valid = 1 it is the valid twin: the same code with the
 * mistake fixed, which no tool may report. Compiles as C11 and as CUDA C++,
 * where compute-sanitizer's tools catch the same bugs. */
#ifndef CTASIM_KERNELS_SAN_BODY_H
#define CTASIM_KERNELS_SAN_BODY_H

#include "ctasim/kernel.h"

struct san_args {
	const int *in;
	int *out;
	int n;
	int valid;
	int bug_block; /* -1: every block makes the mistake, else only this one */
};
/* Whether this block runs the valid code: the valid twin, or a block other
 * than the one a test planted the bug in (--arg bug_block). */
#define SAN_VALID(p) ((p)->valid || ((p)->bug_block >= 0 && (int)blockIdx.x != (p)->bug_block))

/* [memcheck_oob] on a harness buffer: the off-by-one bound `i <= n`. */
CTA_KERNEL(san_memcheck_oob, struct san_args, p)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int last = p->valid ? p->n - 1 : p->n;
	if (i <= last)
		p->out[i] = p->in[i] + 1; // The bug: one past the end
}

/* [memcheck_oob] on shared memory: a tile indexed one slot too far (the
 * harness launches blocks of SAN_TILE threads). */
#define SAN_TILE 256
CTA_KERNEL(san_memcheck_shared_oob, struct san_args, p)
{
	CTA_SHARED_ARRAY(int, tile, SAN_TILE);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned slot = threadIdx.x + (SAN_VALID(p) ? 0u : 1u);
	tile[slot] = p->in[i]; // The bug: slot SAN_TILE is past the tile
	__syncthreads();
	p->out[i] = tile[slot] + 1;
}

/* [memcheck_use_after_free]: the harness releases `in` before the launch
 * (cudaFree before the kernel that still reads it). */
CTA_KERNEL(san_memcheck_use_after_free, struct san_args, p)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	p->out[i] = p->in[i] + 1; // The bug: in was freed
}

/* [racecheck_shared_ww]: every thread sets the block's flag, where one
 * thread should. */
CTA_KERNEL(san_racecheck_ww, struct san_args, p)
{
	CTA_SHARED(int, one);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (!SAN_VALID(p) || threadIdx.x == 0)
		*one = 1; // The bug: every thread writes
	__syncthreads();
	p->out[i] = p->in[i] + *one;
}

/* [racecheck_shared_rw]: reads a neighbour's slot without the barrier
 * between the writes and the reads. */
CTA_KERNEL(san_racecheck_rw, struct san_args, p)
{
	CTA_SHARED_ARRAY(int, tile, SAN_TILE);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x] = p->in[i];
	if (SAN_VALID(p))
		__syncthreads();
	p->out[i] = tile[(threadIdx.x + 1) % blockDim.x] + 1; // The bug: no barrier before
}

/* [initcheck_shared]: the last thread's slot is never written (the bound
 * `t < blockDim.x - 1`), and every thread reads its own. */
CTA_KERNEL(san_initcheck_shared, struct san_args, p)
{
	CTA_SHARED_ARRAY(int, tile, SAN_TILE);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned writers = blockDim.x - (SAN_VALID(p) ? 0u : 1u);
	if (threadIdx.x < writers)
		tile[threadIdx.x] = p->in[i];
	__syncthreads();
	p->out[i] = tile[threadIdx.x] + 1; // The bug: slot blockDim.x-1 unwritten
}

/* The two bugs above on 8-byte slots, which the kernel compiler's
 * instrumented loop form tests inline rather than through the runtime
 * (docs/SANITIZE.md): [racecheck_shared_rw] a neighbour's slot read with no
 * barrier, */
CTA_KERNEL(san_racecheck_wide, struct san_args, p)
{
	CTA_SHARED_ARRAY(unsigned long long, tile, SAN_TILE);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x] = (unsigned long long)p->in[i] << 32;
	if (SAN_VALID(p))
		__syncthreads();
	p->out[i] = (int)(tile[(threadIdx.x + 1) % blockDim.x] >> 32) + 1; // The bug: no barrier
}

/* and [initcheck_shared] the last thread's slot never written. */
CTA_KERNEL(san_initcheck_wide, struct san_args, p)
{
	CTA_SHARED_ARRAY(unsigned long long, tile, SAN_TILE);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned writers = blockDim.x - (SAN_VALID(p) ? 0u : 1u);
	if (threadIdx.x < writers)
		tile[threadIdx.x] = (unsigned long long)p->in[i] << 32;
	__syncthreads();
	p->out[i] = (int)(tile[threadIdx.x] >> 32) + 1; // The bug: slot blockDim.x-1 unwritten
}

/* [racecheck_shared_rw] in a reduction's tree step: the lower quarter of
 * the block copies the slots a quarter above, and the bound `t <= q` lets
 * thread q write the slot thread 0 read. The valid twin (`t < q`) is a step
 * the kernel compiler proves race-free, so racecheck skips its granule
 * words (docs/SANITIZE.md); the planted bug must still be reported. */
CTA_KERNEL(san_racecheck_tree, struct san_args, p)
{
	CTA_SHARED_ARRAY(unsigned long long, tile, SAN_TILE);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned t = threadIdx.x, q = blockDim.x / 4;
	tile[t] = (unsigned long long)p->in[i] << 32;
	__syncthreads();
	if (SAN_VALID(p) ? t < q : t <= q)
		tile[t] = tile[t + q]; // The bug: thread q writes what thread 0 read
	__syncthreads();
	p->out[i] = (int)(tile[t] >> 32) + 1;
}

#endif
