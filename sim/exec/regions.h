/* The region form of kernel bodies: what the kernel compiler (compiler/)
 * emits and registers, and the engine's entry to run a block that way
 * (sim/exec/regions.c). Not a public header. */
#ifndef CTASIM_EXEC_REGIONS_H
#define CTASIM_EXEC_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/export.h"

/* One compiled kernel body, registered at load time. ramp(args, lane, ix)
 * runs a thread from its start to its first barrier or its end and returns
 * its frame, a switch-resumed LLVM coroutine frame: the first word is the
 * resume function (NULL once the thread exited). why is NULL when the body
 * was compiled, else the reason it stays on fibers. */
struct cta__kc_def {
	const char *name;
	void *ramp;
	const char *why;
	const char *file;
	int line;
};
CTA_EXPORT void cta__kc_register(const struct cta__kc_def *d);
/* Called by compiled bodies: the frame of the running thread (size bytes,
 * 16-byte aligned, from the block's slots), and a barrier arrival. */
CTA_EXPORT void *cta__kc_frame(uint64_t size);
CTA_EXPORT void cta__kc_arrive(const char *file, int line);

struct cta_sim;
struct cta__kernel;
struct cta__lane_x;

/* The compiled form of kernel k, or NULL when it has none or its launch
 * cannot use it (clusters, timing-only runs, --sanitize, one-thread blocks). */
const struct cta__kc_def *cta__kc_for(struct cta_sim *s, const struct cta__kernel *k);
/* Runs the lane's unit, and the units it moves on to, in region form;
 * 0 when the unit must run on the thread loop instead. */
int cta__kc_threads(struct cta__lane_x *x);
/* Registered descriptors, for `ctasim kernels`-style listings and tests. */
size_t cta__kc_count(void);
const struct cta__kc_def *cta__kc_at(size_t i);

#endif
