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
/* The copy for --sanitize (compiler/meson.build): registered apart, and
 * clang's kernel-address tests call these when an access's shadow byte is
 * marked (the pass finds them by name); they hand the access, and where it
 * was made, to the sanitizer (sim/sanitize/sanitize.c). */
#include "sanitize/sanitize.h"
#define KC_REGISTER cta__kc_register_sanitized
#define KC_SAN_REPORT(n)                                                                           \
	__attribute__((used, noinline)) static void __asan_report_load##n##_noabort(uintptr_t a)   \
	{                                                                                          \
		cta__san_access(a, n, 0, (uintptr_t)__builtin_return_address(0));                  \
	}                                                                                          \
	__attribute__((used, noinline)) static void __asan_report_store##n##_noabort(uintptr_t a)  \
	{                                                                                          \
		cta__san_access(a, n, 1, (uintptr_t)__builtin_return_address(0));                  \
	}
KC_SAN_REPORT(1)
KC_SAN_REPORT(2)
KC_SAN_REPORT(4)
KC_SAN_REPORT(8)
KC_SAN_REPORT(16)
__attribute__((used, noinline)) static void __asan_report_load_n_noabort(uintptr_t a, uintptr_t n)
{
	cta__san_access(a, n, 0, (uintptr_t)__builtin_return_address(0));
}
__attribute__((used, noinline)) static void __asan_report_store_n_noabort(uintptr_t a, uintptr_t n)
{
	cta__san_access(a, n, 1, (uintptr_t)__builtin_return_address(0));
}
#else
#define KC_REGISTER cta__kc_register
#endif

#undef CTA_KERNEL
#define CTA_KERNEL(name, argtype, argname)                                                         \
	static void name##__kc_body(const argtype *argname, CTA__LANE_PARAM);                      \
	static struct cta__kc_def name##__kc = {#name, .ramp = (void *)name##__kc_body,            \
	                                        .why = "the kernel compiler did not run",          \
	                                        .file = __FILE__, .line = __LINE__};               \
	CTA__CONSTRUCTOR(name##__kc_register)                                                      \
	{                                                                                          \
		KC_REGISTER(&name##__kc);                                                          \
	}                                                                                          \
	static void name##__kc_body(const argtype *argname, CTA__LANE_PARAM)

#endif
