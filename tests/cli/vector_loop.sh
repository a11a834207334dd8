#!/bin/sh
# The vector form of the thread loop (CTA__THREAD_LOOP in kernel.h) is
# what makes a barrier-free body fast, and nothing else would notice it
# going: check that saxpy's x86-64-v4 clone stores with AVX-512 masks, and
# that its vectors stay in registers (gcc 12 keeps a masked load's merge
# source on the stack when the loop shares a function with calls: a 64-byte
# store and reload per vector, CTA__VEC_ROW).
# Registered for optimised builds without sanitizers (tests/unit/meson.build);
# skipped (77) where there is no clone to check (another compiler or
# architecture) or no objdump.
# $1: the ctasim executable.
set -u
B=$1
command -v objdump >/dev/null 2>&1 || { echo "vector_loop: no objdump, skipped"; exit 77; }
code=$(objdump -d --no-show-raw-insn "$B" 2>/dev/null |
	awk '/<saxpy__vrow\.arch_x86_64_v4>:/,/^$/')
if [ -z "$code" ]; then
	echo "vector_loop: no x86-64-v4 clone of saxpy's thread loop in this build, skipped"
	exit 77
fi
if ! printf '%s\n' "$code" | grep -q 'vmovups %zmm[0-9]*,(.*){%k[1-7]}'; then
	echo "FAIL: saxpy's x86-64-v4 thread loop has no masked vector store: the body no longer vectorises"
	exit 1
fi
if printf '%s\n' "$code" | grep -q 'mov[a-z0-9]* *%zmm[0-9]*,[-0-9a-fx]*(%rsp)'; then
	echo "FAIL: saxpy's x86-64-v4 thread loop stores a vector register on the stack"
	exit 1
fi
echo "vector_loop: ok"
