/* Included by the translation units clang-16 instruments for --sanitize
 * (compiler/kc_kernel.h with KC_SANITIZED: the region form of the kernels
 * with barriers). clang's kernel-address pass calls the report builtins by
 * their fixed names, where gcc (kernels/sanitized.c) honours asm labels,
 * so they are defined here, static, and hand the access and the place it
 * was made to the sanitizer (sim/sanitize/sanitize.c). */
#ifndef CTASIM_SANITIZE_CLANG_ENTRY_H
#define CTASIM_SANITIZE_CLANG_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/export.h"

CTA_EXPORT void cta__san_access(uintptr_t a, size_t n, int write, uintptr_t pc);

#define CTA__SAN_CLANG_ENTRY(n)                                                                    \
	__attribute__((used, noinline)) static void __asan_report_load##n##_noabort(uintptr_t a)   \
	{                                                                                          \
		cta__san_access(a, n, 0, (uintptr_t)__builtin_return_address(0));                  \
	}                                                                                          \
	__attribute__((used, noinline)) static void __asan_report_store##n##_noabort(uintptr_t a)  \
	{                                                                                          \
		cta__san_access(a, n, 1, (uintptr_t)__builtin_return_address(0));                  \
	}
CTA__SAN_CLANG_ENTRY(1)
CTA__SAN_CLANG_ENTRY(2)
CTA__SAN_CLANG_ENTRY(4)
CTA__SAN_CLANG_ENTRY(8)
CTA__SAN_CLANG_ENTRY(16)
__attribute__((used, noinline)) static void __asan_report_load_n_noabort(uintptr_t a, uintptr_t n)
{
	cta__san_access(a, n, 0, (uintptr_t)__builtin_return_address(0));
}
__attribute__((used, noinline)) static void __asan_report_store_n_noabort(uintptr_t a, uintptr_t n)
{
	cta__san_access(a, n, 1, (uintptr_t)__builtin_return_address(0));
}

#endif
