/* The region form of kernel bodies: what the kernel compiler (compiler/)
 * emits and registers, and the engine's entry to run a block that way
 * (sim/exec/regions.c). Not a public header. */
#ifndef CTASIM_EXEC_REGIONS_H
#define CTASIM_EXEC_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/export.h"

/* Where a barrier of a compiled body is written (its __syncthreads call). */
struct cta__kc_bar {
	const char *file;
	int line;
};
/* One compiled kernel body, registered at load time, in one of two forms:
 *  - fis (the loop form, preferred): fis(args, lane, ix, run) runs one
 *    region of the body (its start, or the code after barrier i) for the
 *    threads run->lo .. hi-1 as a loop, each thread to its next barrier or
 *    its end (struct cta__kc_run); values live across barriers sit in
 *    slot_bytes per thread and uni_bytes per block; bars[nbar] says where
 *    each barrier is written;
 *  - ramp (the coroutine form, where the loop form cannot be made: fis_why
 *    says why): ramp(args, lane, ix) runs a thread from its start to its
 *    first barrier or its end and returns its frame, a switch-resumed LLVM
 *    coroutine frame whose first word is the resume function (NULL once the
 *    thread exited).
 * why is NULL when the body was compiled, else the reason it stays on
 * fibers. The order of fields avoids padding: the pass sets them by index. */
struct cta__kc_def {
	const char *name;
	void *ramp;
	const char *why;
	const char *file;
	void *fis;
	const char *fis_why;
	const struct cta__kc_bar *bars;
	int line;
	uint32_t slot_bytes, uni_bytes, nbar;
};
/* What the loop form reads and writes (every field 8 bytes: the pass
 * addresses them by offset). */
#define CTA__KC_EXITED 0xffu /* run->cont[t] of a thread that ended */
#define CTA__KC_NONE   (~(uint64_t)0)
struct cta__kc_run {
	unsigned char *slots; /* n * slot_bytes: the per-thread values, array by array */
	unsigned char *uin;   /* the block-uniform values where the threads start */
	unsigned char *uout;  /* ... and at each barrier i: uout + i * uni_bytes */
	unsigned char *cont;  /* per thread: the barrier it reached, or CTA__KC_EXITED */
	uint64_t t;           /* virtual time at which the threads start */
	uint64_t bar_max;     /* latest arrival at a barrier (in/out) */
	uint64_t end_max;     /* latest end of a thread (in/out) */
	uint64_t n;           /* threads in the block */
	uint64_t lo, hi;      /* the threads to run, by rank */
	uint64_t region;      /* 0: the body's start; i + 1: after barrier i */
	uint64_t arrived;     /* arrivals at barriers (in/out) */
	uint64_t exited;      /* threads that ended (in/out) */
	uint64_t want;        /* the barrier of the first arrival, or CTA__KC_NONE (in/out) */
	uint64_t first_vt;    /* the first arrival's virtual time (out) */
	uint64_t last_vt;     /* the latest arrival's virtual time (out) */
};
/* Called by the loop form when thread t arrives at barrier `bar` while the
 * block's first arrival waits at barrier `want` (the divergent-barrier rule). */
CTA_EXPORT void cta__kc_fis_mismatch(struct cta__kc_run *r, uint64_t t, uint64_t bar,
                                     uint64_t vtime, uint64_t want);
/* The same for the threads lo .. hi-1 of a loop that only counted its
 * arrivals (one whose threads make no call), in their order, at virtual
 * time vtime; returns the first arrival's barrier. */
CTA_EXPORT uint64_t cta__kc_fis_scan(struct cta__kc_run *r, uint64_t lo, uint64_t hi, uint64_t want,
                                     uint64_t vtime);
CTA_EXPORT void cta__kc_register(const struct cta__kc_def *d);
/* The instrumented copies --sanitize runs (compiler/kc_kernel.h). */
CTA_EXPORT void cta__kc_register_sanitized(const struct cta__kc_def *d);
/* Called by compiled bodies: the frame of the running thread (size bytes,
 * 16-byte aligned, from the block's slots), and a barrier arrival. */
CTA_EXPORT void *cta__kc_frame(uint64_t size);
CTA_EXPORT void cta__kc_arrive(const char *file, int line);

struct cta_sim;
struct cta__kernel;
struct cta__lane_x;

/* The compiled form of kernel k, or NULL when it has none or its launch
 * cannot use it (clusters, timing-only runs, one-thread blocks). Under
 * --sanitize, its instrumented copy. */
const struct cta__kc_def *cta__kc_for(struct cta_sim *s, const struct cta__kernel *k);
/* Runs the lane's unit, and the units it moves on to, in region form;
 * 0 when the unit must run on the thread loop instead. */
int cta__kc_threads(struct cta__lane_x *x);
/* Registered descriptors, for `ctasim kernels`-style listings and tests. */
size_t cta__kc_count(void);
const struct cta__kc_def *cta__kc_at(size_t i);

#endif
