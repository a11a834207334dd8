/* The plain vector loops that the sanitizer's copies of barrier-free bodies
 * (kernels/sanitized.c) run for a run of threads in which no access needs
 * a test (docs/SANITIZE.md): NAME__san_fast asks the kernel compiler's
 * probe (NAME__kc_probe, compiler/san_probe.h, weak: builds without the
 * kernel compiler, and bodies it could not probe, have none) whether every
 * byte the run may access has a clear shadow, and then runs the run as the
 * plain build does, uninstrumented (this file is compiled as the plain
 * kernels are, with their AVX-512 clones). Only the bodies listed here. */
#include "ctasim/kernel.h"

#undef CTA_KERNEL
#define CTA_KERNEL(name, argtype, argname)                                                         \
	__attribute__((always_inline)) static inline void name##__body(const argtype *argname,     \
	                                                               CTA__LANE_PARAM);           \
	CTA__LOOP_CLONES __attribute__((noinline)) static uint64_t name##__vrow(                   \
	    const argtype *cta__pa, struct cta__lane *cta__l, const struct cta__idx *cta__xp,      \
	    uint64_t cta__t0)                                                                      \
	{                                                                                          \
		CTA__VEC_ROW(name##__body, argtype, cta__pa);                                      \
	}                                                                                          \
	int name##__kc_probe(const void *, struct cta__lane *, const struct cta__idx *)            \
	    __attribute__((weak));                                                                 \
	int name##__san_fast(const void *cta__pa, struct cta__lane *cta__l,                        \
	                     const struct cta__idx *cta__xp, uint64_t cta__t0,                     \
	                     uint64_t *cta__end);                                                  \
	int name##__san_fast(const void *cta__pa, struct cta__lane *cta__l,                        \
	                     const struct cta__idx *cta__xp, uint64_t cta__t0, uint64_t *cta__end) \
	{                                                                                          \
		if (!name##__kc_probe || !name##__kc_probe(cta__pa, cta__l, cta__xp))              \
			return 0;                                                                  \
		*cta__end = name##__vrow((const argtype *)cta__pa, cta__l, cta__xp, cta__t0);      \
		return 1;                                                                          \
	}                                                                                          \
	static inline void name##__body(const argtype *argname, CTA__LANE_PARAM)

#include "san_body.h"
#include "saxpy_body.h"
