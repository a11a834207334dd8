/* Included first by the kernel compiler's translation units (compiler/kc_*.c):
 * turns each CTA_KERNEL of a kernels/NAME_body.h that follows into a body
 * NAME__kc_body and its descriptor NAME__kc, which the pass (regions_pass.cpp)
 * rewrites into the region form or marks as left on fibers, and registers the
 * descriptor with the engine (sim/exec/regions.c) at load time. */
#ifndef CTASIM_COMPILER_KC_KERNEL_H
#define CTASIM_COMPILER_KC_KERNEL_H

#include "ctasim/kernel.h"
#include "exec/regions.h"

#ifdef KC_SANITIZED
/* The copy for --sanitize (compiler/meson.build), registered apart. */
#include "sanitize/clang_entry.h"
#define KC_REGISTER cta__kc_register_sanitized
/* Tells the pass that the sanitizer's checks read the running thread and its
 * virtual time from the lane: its loop form keeps them there. */
__attribute__((used)) static const char cta__kc_sanitized = 1;
#else
#define KC_REGISTER cta__kc_register
#endif
#ifdef KC_ANALYSED_ONLY
/* Tells the pass to keep only the descriptors, with their flags (the bodies
 * of compiler/meson.build's kc_analysed run as the gcc objects have them). */
__attribute__((used)) static const char cta__kc_analysed_only = 1;
#endif
#ifndef KC_SANITIZED
/* The sanitizer's probe of a barrier-free body (compiler/san_probe.h): the
 * vector form's run of threads (CTA__VEC_ROW in kernel.h) over the body, as
 * one loop that the pass turns into NAME__kc_probe, a test of every byte
 * the run may access against the shadow, or empties where it cannot. Never
 * called as written. (In the plain objects only: one per kernel.) */
#define KC_PROBE(name, argtype)                                                                    \
	__attribute__((used)) static int name##__kc_probe_src(                                     \
	    const argtype *cta__pa, struct cta__lane *cta__l, const struct cta__idx *cta__xp)      \
	{                                                                                          \
		struct cta__idx cta__v = *cta__xp;                                                 \
		cta__v.bid.x &= 0xfffffu;                                                          \
		cta__v.bdim.x &= 0x7ffu;                                                           \
		cta__v.tid.x &= 0x3ffu;                                                            \
		const unsigned cta__e = cta__l->row_end & 0x7ffu;                                  \
		const argtype cta__copy = *cta__pa;                                                \
		const argtype *cta__a =                                                            \
		    sizeof(argtype) <= CTA__ARGS_COPY_MAX ? &cta__copy : cta__pa;                  \
		_Pragma("clang loop vectorize(disable) interleave(disable) unroll(disable)") for ( \
		    ; cta__v.tid.x < cta__e; cta__v.tid.x++)                                       \
		    name##__kc_body(cta__a, cta__l, &cta__v);                                      \
		return 1;                                                                          \
	}
#else
#define KC_PROBE(name, argtype)
#endif

/* cta_grid_sync as cta__grid_sync has it on fibers (sim/exec/exec.c), written
 * out at the call, so that the pass sees its waits at the call's line: the
 * launch check, the block barrier, thread 0's arrival on the grid-wide count
 * and its spin on the phase (a loop of yield points: the body runs in the
 * spinning form, CTA__KC_SPIN, and each of its spins ends the thread's
 * region), the block barrier; under the device's wait_* the arrival and
 * each poll of the phase are yield points that wait for their time
 * (cta__kc_grid_timed). Outside a cooperative launch the run stops
 * and the thread stays at the yield point after the check
 * (cta__kc_grid_check in sim/exec/regions.h). */
#undef cta_grid_sync
#define cta_grid_sync()                                                                            \
	do {                                                                                       \
		if (__builtin_expect(!cta__kc_grid_check(CTA__LOC), 0))                            \
			cta__spin_poll(CTA__LOC);                                                  \
		cta__syncthreads(CTA__LOC);                                                        \
		if (cta_thread_rank() == 0) {                                                      \
			if (cta__kc_grid_timed())                                                  \
				cta__spin_poll(CTA__LOC);                                          \
			const uint64_t cta__phase = cta__kc_grid_arrive();                         \
			while (cta__kc_grid_phase() == cta__phase) {                               \
				if (cta__kc_grid_timed_poll())                                     \
					cta__spin_poll(CTA__LOC);                                  \
				else                                                               \
					cta__poll(CTA__LOC);                                       \
			}                                                                          \
		}                                                                                  \
		cta__syncthreads(CTA__LOC);                                                        \
	} while (0)

#undef CTA_KERNEL
#define CTA_KERNEL(name, argtype, argname)                                                         \
	static void name##__kc_body(const argtype *argname, CTA__LANE_PARAM);                      \
	/* The arguments' size and alignment, for the pass (a whole argtype). */                   \
	__attribute__((used)) static const unsigned long long name##__kc_args[2] = {               \
	    sizeof(argtype), _Alignof(argtype)};                                                   \
	static struct cta__kc_def name##__kc = {#name, .ramp = (void *)name##__kc_body,            \
	                                        .why = "the kernel compiler did not run",          \
	                                        .file = __FILE__, .line = __LINE__};               \
	CTA__CONSTRUCTOR(name##__kc_register)                                                      \
	{                                                                                          \
		KC_REGISTER(&name##__kc);                                                          \
	}                                                                                          \
	KC_PROBE(name, argtype)                                                                    \
	static void name##__kc_body(const argtype *argname, CTA__LANE_PARAM)

#endif
