/* The sanitizer for kernel bodies (--sanitize): what the rest of the
 * simulator calls. The kernels of kernels/ are compiled a second time with
 * gcc's kernel-address instrumentation (kernels/sanitized.c); every load
 * and store of those copies calls back into sim/sanitize/sanitize.c. */
#ifndef CTASIM_SANITIZE_H
#define CTASIM_SANITIZE_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/kernel.h"

struct cta_sim;

/* Registers the instrumented copy of a kernel (from kernels/sanitized.c). */
CTA_EXPORT void cta__san_kernel_register(const struct cta_kernel_def *k);
/* The instrumented copy of k (same name, file and line), or NULL. */
const struct cta_kernel_def *cta__san_kernel(const struct cta_kernel_def *k);

/* Called by kernels/sanitized.c at load time: the -fasan-shadow-offset its
 * inline tests were compiled with, or 0 when they call for every access. */
CTA_EXPORT void cta__san_shadow_offset(uintptr_t off);

/* Per-simulator state, made by cta_sim_new when opts.sanitize is set. */
int cta__san_sim_new(struct cta_sim *s);
void cta__san_sim_free(struct cta_sim *s);
/* 0, or CTA_EUNSUPPORTED with the simulator's message when the shadow the
 * kernels test cannot be mapped (cta_sim_launch asks). */
int cta__san_launch_ready(struct cta_sim *s);

/* An access of n bytes at a by the instruction before pc, which the
 * shadow test sent here (the instrumented regions of compiler/ call it). */
CTA_EXPORT void cta__san_access(uintptr_t a, size_t n, int write, uintptr_t pc);

/* What the kernel compiler's instrumented loop form (compiler/san_pass.h)
 * reads at the start of each region's loop, by offset: accesses of 8
 * aligned bytes at offsets [0, cap) of smem are tested there against the
 * granule words g, in epoch ep of a block whose first is base; cap is 0
 * for memcheck (nothing tested inline). Other accesses take the
 * kernel-address test against the shadow at shadow. */
struct cta__san_fast {
	uintptr_t smem;
	uint64_t cap;
	uint64_t *g;
	uintptr_t shadow;
	uint32_t ep, base;
	uint32_t tool; /* cta_sanitize_tool */
	/* initcheck: accesses to offsets [0, free) need no test at all (the
	 * block's first region writes them whole: sim/sanitize/sanitize.c) */
	uint64_t free;
};
struct cta__lane;
CTA_EXPORT struct cta__san_fast *cta__san_region(struct cta__lane *l);
/* The loop form's call where its own test cannot decide: an access of
 * nw >> 1 bytes at a, a write if nw & 1; *site is then the instruction's
 * index in racecheck's table (what the inline test records). */
CTA_EXPORT void cta__san_slow(uintptr_t a, uint64_t nw, uint32_t *site);

/* Whether every byte of [first, last + n) has a clear shadow byte, so that
 * no inline test of an access there calls the runtime (the kernel
 * compiler's probes of barrier-free bodies call it: compiler/san_probe.h). */
CTA_EXPORT int cta__san_clear(uintptr_t first, uintptr_t last, uint64_t n);

/* Whether the instrumented loop form's tests of an access of nk >> 2
 * bytes at every address of [first, last + (nk >> 2)) would neither call
 * the runtime nor change what it keeps, so that a thread loop may run its
 * untested copy (compiler/san_pass.h's versionLoops): a clear shadow, or in
 * the block's declared shared bytes (f, from cta__san_region) racecheck's
 * access whose words the loop form skips (nk & 2: an access RaceFree finds
 * race-free, in a call of several threads) and initcheck's read below
 * f->free or write (nk & 1) of whole granules that the block's first
 * region writes whole, whose words it then sets as the tested writes
 * would. */
struct cta__lane;
CTA_EXPORT int cta__san_span(struct cta__san_fast *f, struct cta__lane *l, uintptr_t first,
                             uintptr_t last, uint64_t nk);

/* A block about to run under the sanitizer (cta__exec_unit_new): marks its
 * shared memory for the tool. sim/exec calls it through base/upcalls.h,
 * which declares it again (this module may not include that header). */
struct cta__unit;
void cta__san_unit_start(struct cta_sim *s, const struct cta__unit *u);
/* The same for the arena that a compiled block uses instead of its CTA's
 * (the host thread's, sim/exec/regions.c), as the block starts: 0 when
 * marked, else the block keeps its CTA's (declared again in upcalls.h). */
int cta__san_arena(struct cta_sim *s, const struct cta__unit *u, const unsigned char *arena);

/* Harness buffers (sim/host/harness.c): a buffer of `bytes` at p with `rz`
 * bytes of red zone on each side, named "buffer INDEX of OWNER". release
 * marks it freed (its memory stays allocated until forget, so a late
 * access is caught, not corrupting); forget drops it. */
#define CTA__SAN_REDZONE 4096
void cta__san_buffer_add(const void *p, size_t bytes, const char *owner, unsigned index);
void cta__san_buffer_release(const void *p);
void cta__san_buffer_forget(const void *p);

#endif
