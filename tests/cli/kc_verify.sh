#!/bin/sh
# The kernel compiler's modules pass LLVM's verifier: each kernel body built
# through the pass, plain and instrumented for --sanitize, as compiler/
# meson.build builds it, then `opt -passes=verify`. A module that fails it
# loses its debug information in the build (clang ignores it whole), and
# with it every sanitizer report's source line.
# (opt drops invalid debug information with a warning and exits 0: its
# output must be empty.)
# Usage: kc_verify.sh CLANG OPT PLUGIN SRCROOT SHADOW_OFFSET BODY...
set -u
CLANG=$1
OPT=$2
PLUGIN=$3
SRC=$4
OFF=$5
shift 5
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
fail=0
for b in "$@"; do
	for san in 0 1; do
		if [ "$san" = 1 ]; then
			flags="-DKC_SANITIZED -fsanitize=kernel-address -fsanitize-recover=kernel-address -mllvm -asan-mapping-offset=$OFF -mllvm -asan-instrumentation-with-call-threshold=1000000 -mllvm -asan-stack=0 -mllvm -asan-globals=0"
			what="$b (sanitized)"
		else
			flags=""
			what="$b"
		fi
		n=$((n + 1))
		# shellcheck disable=SC2086
		if "$CLANG" -std=c11 -D_GNU_SOURCE -O3 -fno-trapping-math -g -fPIC \
			-fvisibility=hidden -I"$SRC/include" -I"$SRC/kernels" -I"$SRC/sim" \
			-I"$SRC/compiler" -fpass-plugin="$PLUGIN" "-DKC_BODY=\"${b}_body.h\"" \
			$flags -S -emit-llvm -o "$tmp/m.ll" "$SRC/compiler/kc_body.c" \
			>"$tmp/out" 2>&1 &&
			"$OPT" -passes=verify -disable-output "$tmp/m.ll" >>"$tmp/out" 2>&1 &&
			! grep -Eq 'invalid debug info|must have a !dbg|error' "$tmp/out"; then
			echo "ok $n - $what passes the verifier"
		else
			fail=$((fail + 1))
			echo "not ok $n - $what passes the verifier"
			head -20 "$tmp/out" | sed 's/^/# /'
		fi
	done
done
# racecheck's copy skips the granule words where it proves no two threads
# meet (RaceFree, compiler/san_pass.h): all of block_reduce's shared
# accesses. (san_racecheck_tree's planted race, which it must not skip, is
# tests/cli/sanitize.sh's.)
for b in "$@"; do
	[ "$b" = reduce ] || continue
	n=$((n + 1))
	# shellcheck disable=SC2086
	if CTA_KC_VERBOSE=2 "$CLANG" -std=c11 -D_GNU_SOURCE -O3 -fno-trapping-math -g -fPIC \
		-fvisibility=hidden -I"$SRC/include" -I"$SRC/kernels" -I"$SRC/sim" \
		-I"$SRC/compiler" -fpass-plugin="$PLUGIN" "-DKC_BODY=\"${b}_body.h\"" \
		-DKC_SANITIZED -fsanitize=kernel-address -fsanitize-recover=kernel-address \
		-mllvm -asan-mapping-offset="$OFF" -c -o "$tmp/m.o" "$SRC/compiler/kc_body.c" \
		>"$tmp/out" 2>&1 &&
		grep -Eq 'block_reduce__kc_fis.racecheck: racecheck skips the words of [1-9]' "$tmp/out"; then
		echo "ok $n - block_reduce's racecheck copy skips the words of its race-free accesses"
	else
		fail=$((fail + 1))
		echo "not ok $n - block_reduce's racecheck copy skips the words of its race-free accesses"
		grep -E 'racecheck skips|error' "$tmp/out" | head -5 | sed 's/^/# /'
	fi
done
echo "1..$n"
[ "$fail" = 0 ]
