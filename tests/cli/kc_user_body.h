/* Kernel bodies for tests/cli/kc_load.sh: a user's kernels that the kernel
 * compiler takes (ctasim-build-kernel compiles a body header through it),
 * written to exercise what shipped kernels do not: values live across
 * barriers in per-thread slots (a scalar and a local array), a barrier in a
 * loop, blocks of several dimensions, threads that end before a barrier,
 * threads that wait at two different barriers, a work-stealing loop led
 * by the last thread with values live across it, and shared memory that
 * each block must find zeroed whatever the blocks before it wrote (the
 * engine zeroes only part of it for the loop form: sim/exec/regions.c),
 * loops inside a thread's regions, a grid-stride loop of one trip a
 * thread (or more, or none), and the order in which a cluster's threads go
 * on after a cluster barrier. */
#ifndef KC_USER_BODY_H
#define KC_USER_BODY_H

#include "ctasim/kernel.h"

struct kc_args {
	int *in, *out;
	int rounds; /* barrier-loop trips */
	int active; /* kc_early_exit: threads that reach the barriers */
	int valid;  /* kc_two_barriers: 0 makes odd threads wait elsewhere */
};

CTA_KERNEL(kc_slots, struct kc_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned long long base = (unsigned long long)blockIdx.x * n;
	int acc = p->in[base + t];
	int local[4];
	for (int k = 0; k < 4; k++)
		local[k] = acc * (k + 1);
	for (int r = 0; r < p->rounds; r++) {
		s[t] = acc;
		__syncthreads();
		acc += s[(t + 1) % n] + local[r % 4];
		local[r % 4] ^= (int)t;
		__syncthreads();
		cta_spin_ns(t % 3 + 1);
	}
	p->out[base + t] = acc;
}

CTA_KERNEL(kc_early_exit, struct kc_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned long long base = (unsigned long long)blockIdx.x * n;
	s[t] = p->in[base + t];
	p->out[base + t] = -1;
	if ((int)t >= p->active) // below blockDim: [divergent_barrier]
		return;
	cta_spin_ns(t);
	__syncthreads();
	int v = s[(t + 1) % (unsigned)p->active];
	__syncthreads();
	p->out[base + t] = v + (int)t;
}

CTA_KERNEL(kc_two_barriers, struct kc_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned long long base = (unsigned long long)blockIdx.x * n;
	int acc = p->in[base + t];
	int rounds = p->rounds;
	s[t] = acc;
	if (p->valid || t % 2 == 0) {
		__syncthreads();
		acc += s[(t + 1) % n];
	} else {
		__syncthreads(); // [divergent_barrier]: odd threads wait here
		acc -= s[(t + 1) % n];
	}
	for (int k = 0; k < rounds; k++) {
		__syncthreads();
		acc += k * (int)t;
		cta_spin_ns(2);
	}
	p->out[base + t] = acc + rounds;
}

/* Each thread's first region writes s[t]; then every thread reads what its
 * block never wrote (s past the block's threads, s2), which must be zero,
 * and odd blocks write s2 by rank: the kernel compiler knows every write
 * (the engine zeroes only s2's part for the next block). Returns what the
 * block's thread t leaves in out. */
#define KC_SMEM_BODY(extra)                                                                        \
	CTA_SHARED_ARRAY(int, s, 512);                                                             \
	CTA_SHARED_ARRAY(int, s2, 512);                                                            \
	unsigned n = blockDim.x * blockDim.y * blockDim.z;                                         \
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);          \
	unsigned long long base = (unsigned long long)blockIdx.x * n;                              \
	s[t] = p->in[base + t];                                                                    \
	__syncthreads();                                                                           \
	int v = s[(t + 1) % n] + s2[t] + (t + n < 512 ? s[t + n] : 0);                             \
	__syncthreads();                                                                           \
	if (blockIdx.x % 2)                                                                        \
		s2[t] = v + 1;                                                                     \
	extra;                                                                                     \
	p->out[base + t] = v

CTA_KERNEL(kc_smem_rank, struct kc_args, p)
{
	KC_SMEM_BODY((void)0);
}

/* The same, but a write that is not by rank (the kernel compiler then
 * knows only that the block may have written any of its shared memory). */
CTA_KERNEL(kc_smem_any, struct kc_args, p)
{
	KC_SMEM_BODY(s[(t * 7 + 3) % 512] = 5);
}

/* Threads that pass tests on their index (k = rounds and m = valid, the
 * same for the block): t < k && t + k < n, then t + m < 0xfffffff0, which
 * wraps where m is large (valid=-20: every t below 4 or from 20 passes).
 * The kernel compiler runs only the threads that pass where it can tell
 * which they are. */
CTA_KERNEL(kc_guards, struct kc_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned long long base = (unsigned long long)blockIdx.x * n;
	unsigned k = (unsigned)p->rounds, m = (unsigned)p->valid;
	s[t] = p->in[base + t];
	__syncthreads();
	if (t < k && t + k < n)
		s[t] += s[t + k] * 3 + 1;
	__syncthreads();
	if (t + m < 0xfffffff0u)
		s[t] ^= 0x55;
	__syncthreads();
	p->out[base + t] = s[t];
}

/* Loops inside each thread's regions, with trip counts that differ by
 * thread and a cost in each trip: the kernel compiler moves such a thread
 * loop into a function of its own (OutlinePass in compiler/regions_pass.cpp),
 * which hands back each thread's sum and the latest end time at its end. */
CTA_KERNEL(kc_inner_loops, struct kc_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned long long base = (unsigned long long)blockIdx.x * n;
	int sum = 0;
	for (unsigned i = t; i < t + t % 5 + (unsigned)p->rounds; i++) {
		sum += p->in[base + i % n] * (int)(i - t + 1);
		cta_spin_ns(i % 3);
	}
	s[t] = sum;
	__syncthreads();
	int acc = 0;
	for (unsigned k = 0; k <= t % 4; k++) {
		acc += s[(t + k) % n];
		cta_spin_ns(1);
	}
	p->out[base + t] = acc;
}

/* A grid-stride loop before a barrier, its start offset by `valid` and its
 * stride (rounds + 1) * 64: where every thread of a run makes one trip of
 * it, the kernel compiler runs a copy of the thread loop without it
 * (OneTripPass in compiler/regions_pass.cpp); where a thread makes more,
 * or none, or the starts wrap, the loop as it was. Unsigned, then signed. */
CTA_KERNEL(kc_one_trip, struct kc_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned total = gridDim.x * n, stride = ((unsigned)p->rounds + 1) * 64;
	int sum = 0;
	for (unsigned i = blockIdx.x * n + t + (unsigned)p->valid; i < total; i += stride) {
		sum += p->in[i] + 1;
		cta_spin_ns(2);
	}
	s[t] = sum;
	__syncthreads();
	/* The same with signed indices, which start below 0 where `valid`
	 * is negative (the second half of s: blocks of up to 512 threads). */
	int sum2 = 0;
	for (int j = (int)(blockIdx.x * n + t) + p->valid; j < (int)total; j += (int)stride) {
		if (j >= 0)
			sum2 += p->in[j] * 2;
		cta_spin_ns(1);
	}
	s[512 + t] = sum2;
	__syncthreads();
	p->out[(unsigned long long)blockIdx.x * n + t] = s[(t + 1) % n] + s[512 + (t + 2) % n];
}

/* kc_steal's work for each block index it is handed (its own, then the
 * stolen ones): the index is the one passed, never blockIdx. */
CTA_DEVICE void kc_steal_tile(dim3 b, void *arg)
{
	const struct kc_args *p = (const struct kc_args *)arg;
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned long long i = (unsigned long long)b.x * n + t;
	p->out[i] += p->in[i] * 2 + 1;
	cta_spin_ns(t % 5 + 1);
}

CTA_KERNEL(kc_steal, struct kc_args, p)
{
	CTA_SHARED_ARRAY(int, s, 1024);
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	int mine = (int)(t * 7) + p->rounds;
	s[t] = mine;
	__syncthreads();
	int left = s[(t + 1) % n]; /* a per-thread value live across the loop */
	cta_try_cancel_blocks(1, t == n - 1, kc_steal_tile, (void *)p);
	cta_spin_ns((unsigned)left % 3);
	__syncthreads();
	s[t] = left;
	__syncthreads();
	if (s[(t + n - 1) % n] != mine || left != (int)(((t + 1) % n) * 7) + p->rounds)
		p->out[0] = -1000000; /* a value lost across the loop */
}

/* Launched in clusters of two CTAs. Each round's arrivals at the cluster
 * barrier come at different times, and after the barrier every thread
 * takes a number from a plain counter in global memory, its cluster's own
 * (a race on a GPU, where the order is anyone's; a cluster runs on one host
 * thread): the numbers, in each thread's result, record the order in which
 * the simulator ran the cluster's threads, which the kernel compiler's loop
 * form must keep (sim/exec/regions.c, run_cluster). Threads past `active`
 * end before the barrier (UB, reported either way). */
CTA_KERNEL(kc_cluster_order, struct kc_args, p)
{
	unsigned n = blockDim.x * blockDim.y * blockDim.z;
	unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned me = cta_cluster_thread_rank();
	unsigned long long i = (unsigned long long)blockIdx.x * n + t;
	int *counter = &p->out[(unsigned long long)(blockIdx.x / 2) * 2 * n];
	int acc = p->in[i];
	if ((int)t >= p->active)
		return;
	for (int r = 0; r < p->rounds; r++) {
		cta_spin_ns((me * 7 + (unsigned)r) % 5 + 1);
		cta_cluster_sync();
		int at = (*counter)++;
		acc = acc * 3 + at + (int)me;
	}
	p->out[i] += acc;
}

#endif
