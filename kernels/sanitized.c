/* Every kernel body of kernels/ compiled a second time, instrumented for
 * --sanitize (docs/SANITIZE.md): gcc's -fsanitize=kernel-address puts a
 * shadow test before each load and store, whose rare misses (and, in
 * builds without the inline tests, every access) call into
 * sim/sanitize/sanitize.c. The copies register as the instrumented
 * variants of the plain kernels. */
#include <stddef.h>

/* The builtins the instrumentation calls, renamed with asm labels so they
 * reach ctasim's sanitizer and never an ASan runtime linked beside it. */
#define SAN_BUILTIN(n)                                                                             \
	void __asan_load##n##_noabort(void *) __asm__("cta__san_load" #n);                         \
	void __asan_store##n##_noabort(void *) __asm__("cta__san_store" #n);                       \
	void __asan_load##n(void *) __asm__("cta__san_load" #n);                                   \
	void __asan_store##n(void *) __asm__("cta__san_store" #n);
SAN_BUILTIN(1)
SAN_BUILTIN(2)
SAN_BUILTIN(4)
SAN_BUILTIN(8)
SAN_BUILTIN(16)
void __asan_loadN_noabort(void *, long) __asm__("cta__san_loadN");
void __asan_storeN_noabort(void *, long) __asm__("cta__san_storeN");
/* (the forms without _noabort, where a build passes -fno-sanitize-recover) */
void __asan_loadN(void *, long) __asm__("cta__san_loadN");
void __asan_storeN(void *, long) __asm__("cta__san_storeN");
void __asan_handle_no_return(void) __asm__("cta__san_no_return");
/* What the inline tests call when an access's shadow byte is marked. */
#define SAN_REPORT_BUILTIN(n)                                                                      \
	void __asan_report_load##n##_noabort(void *) __asm__("cta__san_report_load" #n);           \
	void __asan_report_store##n##_noabort(void *) __asm__("cta__san_report_store" #n);         \
	void __asan_report_load##n(void *) __asm__("cta__san_report_load" #n);                     \
	void __asan_report_store##n(void *) __asm__("cta__san_report_store" #n);
SAN_REPORT_BUILTIN(1)
SAN_REPORT_BUILTIN(2)
SAN_REPORT_BUILTIN(4)
SAN_REPORT_BUILTIN(8)
SAN_REPORT_BUILTIN(16)
void __asan_report_load_n_noabort(void *, long) __asm__("cta__san_report_loadN");
void __asan_report_store_n_noabort(void *, long) __asm__("cta__san_report_storeN");
void __asan_report_load_n(void *, long) __asm__("cta__san_report_loadN");
void __asan_report_store_n(void *, long) __asm__("cta__san_report_storeN");

/* The vector form's loop keeps the lane's tid.x in a register and stores it
 * after the loop, where nothing it calls reads it; the kernel-address pass
 * runs after that, and its report calls would find the run's first thread
 * there. So each thread's index is stored (volatile: it stays in the loop)
 * before the thread runs, and the body takes the index through an empty
 * asm after the store, which orders its accesses, and their tests, after
 * it. */
#if defined(__x86_64__)
#define CTA__VEC_NEXT_THREAD(lane, v)                                                              \
	do {                                                                                       \
		++(v);                                                                             \
		__asm__ volatile("movl %k0, (%1)" : : "r"(v), "r"(&(lane)->tid.x));                \
		__asm__ volatile("" : "+r"(v));                                                    \
	} while (0)
#else
#define CTA__VEC_NEXT_THREAD(lane, v)                                                              \
	do {                                                                                       \
		*(volatile unsigned *)&(lane)->tid.x = ++(v);                                      \
		__asm__ volatile("" : "+r"(v));                                                    \
	} while (0)
#endif

/* A run of threads whose every access the kernel compiler's probe finds in
 * bytes with a clear shadow (compiler/san_probe.h) runs the plain build's
 * vector loop (kernels/sanitized_fast.c, NAME__san_fast, weak: a body with
 * none runs its own loop, tested, every time): none of its tests would
 * have called anything. */
#define CTA__VEC_ROW_FAST_DECL(name)                                                               \
	int name##__san_fast(const void *, struct cta__lane *, const struct cta__idx *, uint64_t,  \
	                     uint64_t *) __attribute__((weak));
#define CTA__VEC_ROW_FAST(name)                                                                    \
	do {                                                                                       \
		uint64_t cta__fe;                                                                  \
		if (name##__san_fast &&                                                            \
		    name##__san_fast(cta__pa, cta__l, cta__xp, cta__t0, &cta__fe))                 \
			return cta__fe;                                                            \
	} while (0)

/* Distinct names for the copies' descriptors, registered apart. */
#define CTA__KDEF_NAME(name)  name##__sanitized
#define CTA__KDEF_REGISTER(k) cta__san_kernel_register(k)
#include "ctasim/kernel.h"
void cta__san_kernel_register(const struct cta_kernel_def *k);
void cta__san_shadow_offset(uintptr_t off);

/* The shadow offset the inline tests were compiled with (meson passes the
 * same number to -fasan-shadow-offset), or 0 where every access is a
 * call: the runtime maps the shadow there. */
#ifndef CTA__SAN_SHADOW_OFFSET
#define CTA__SAN_SHADOW_OFFSET 0
#endif
CTA__CONSTRUCTOR(san_shadow_offset)
{
	cta__san_shadow_offset((uintptr_t)CTA__SAN_SHADOW_OFFSET);
}

/* The copies run the vector form's loop as scalar code: no vector clones. */
#undef CTA__LOOP_CLONES
#define CTA__LOOP_CLONES

/* Every body of kernels/ (the list device/kernels.cu includes, plus the
 * planted bugs). */
#include "ck_body.h"
#include "compute_body.h"
#include "crash_body.h"
#include "reduce_body.h"
#include "san_body.h"
#include "saxpy_body.h"
#include "spin_body.h"
#include "ub_body.h"
#include "vec_add_body.h"
#include "vecscale_body.h"
#include "work_steal_body.h"
