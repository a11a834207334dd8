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
	static void name##__kc_body(const argtype *argname, CTA__LANE_PARAM)

#endif
