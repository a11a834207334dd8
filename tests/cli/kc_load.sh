#!/bin/sh
# A user's kernels loaded with `ctasim run --load`, their body header built
# through the kernel compiler by ctasim-build-kernel (tests/cli/kc_user*.c/h):
# they must be listed as [regions], give the right result (kc_slots against a
# sequential reference), and run byte-identically (output, messages, trace)
# with CTASIM_REGIONS=0, including shapes of several dimensions, threads
# that end before a barrier and threads that wait at two barriers (UB).
# Without the kernel compiler (empty PLUGIN) the kernels must stay on fibers.
# Usage: kc_load.sh path/to/ctasim path/to/ctasim-build-kernel SRCROOT [PLUGIN]
set -u
CTASIM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BUILDK=$2
SRC=$3
PLUGIN=${4:-}
. "$(dirname "$0")/tap.sh"
tap_begin kc
tmp=$TMP

if CTA_KC_VERBOSE=1 CTASIM_INCLUDE="$SRC/include" CTASIM_KC_PLUGIN="$PLUGIN" \
	CTASIM_KC_INCLUDE="$SRC/compiler:$SRC/sim" CC=${CC:-cc} \
	sh "$BUILDK" --sim-only -o "$tmp/libkc.so" "$SRC/tests/cli/kc_user.c" \
	"$SRC/tests/cli/kc_user_body.h" >"$tmp/build.out" 2>&1; then
	ok "ctasim-build-kernel builds the user kernel"
else
	bad "ctasim-build-kernel builds the user kernel"
	sed 's/^/# /' "$tmp/build.out"
	echo "1..$n"
	exit 1
fi
"$CTASIM" list --load "$tmp/libkc.so" >"$tmp/list" 2>&1
for k in kc_slots kc_early_exit kc_two_barriers kc_steal kc_smem_rank kc_smem_any kc_guards \
	kc_inner_loops kc_one_trip kc_cluster_order; do
	if [ -n "$PLUGIN" ]; then
		if grep -Eq "^  $k .*\[regions\]" "$tmp/list"; then
			ok "$k is compiled to regions"
		else
			bad "$k is compiled to regions"
			sed 's/^/# /' "$tmp/build.out"
		fi
	elif grep -Eq "^  $k .*\[regions\]" "$tmp/list"; then
		bad "$k stays on fibers without the kernel compiler"
	else
		ok "$k stays on fibers without the kernel compiler"
	fi
done

# What the kernel compiler finds of their shared memory (the engine's
# zeroing rests on it; kc_smem_* below check the result).
if [ -n "$PLUGIN" ]; then
	if grep -q 'kc_smem_rank: the first region writes .*\.s__site whole' "$tmp/build.out" &&
		grep -q 'kc_smem_rank: writes .*\.s2__site by rank only' "$tmp/build.out" &&
		grep -q 'kc_smem_any: the first region writes .*\.s__site whole' "$tmp/build.out" &&
		! grep -q 'kc_smem_any: writes ' "$tmp/build.out" &&
		! grep -q 'kc_slots: the first region writes' "$tmp/build.out"; then
		ok "the kernel compiler knows what kc_smem_* write of shared memory"
	else
		bad "the kernel compiler knows what kc_smem_* write of shared memory"
		grep 'kc_s' "$tmp/build.out" | sed 's/^/# /'
	fi
fi

# kc_inner_loops' thread loops hold loops of its own: each goes to a
# function of its own (OutlinePass), the first region's at least.
if [ -n "$PLUGIN" ]; then
	if grep -q 'kc_inner_loops__kc_fis: a thread loop with a loop inside as' "$tmp/build.out"; then
		ok "kc_inner_loops' thread loops with loops inside are functions of their own"
	else
		bad "kc_inner_loops' thread loops with loops inside are functions of their own"
		grep 'kc_inner' "$tmp/build.out" | sed 's/^/# /'
	fi
fi

# kc_one_trip's grid-stride loop makes one trip a thread where the grid
# covers the data: its thread loop gets a copy without it (OneTripPass).
if [ -n "$PLUGIN" ]; then
	if grep -q 'kc_one_trip__kc_fis: a thread loop whose loop inside makes one trip' "$tmp/build.out"; then
		ok "kc_one_trip's thread loop has a copy without its grid-stride loop"
	else
		bad "kc_one_trip's thread loop has a copy without its grid-stride loop"
		grep 'kc_one' "$tmp/build.out" | sed 's/^/# /'
	fi
fi

run() {
	tag=$1
	shift
	(cd "$tmp" && "$CTASIM" run --load "$tmp/libkc.so" "$@" --trace t.csv >"$tag.out" 2>"$tag.err")
	echo "rc=$?" >>"$tmp/$tag.out"
	mv "$tmp/t.csv" "$tmp/$tag.csv" 2>/dev/null || : >"$tmp/$tag.csv"
}
both() {
	want=$1
	shift
	run a "$@"
	CTASIM_REGIONS=0 run b "$@"
	for f in out err csv; do
		if ! cmp -s "$tmp/a.$f" "$tmp/b.$f"; then
			bad "$* : regions and fibers give the same $f"
			diff "$tmp/a.$f" "$tmp/b.$f" | head -n 6 | sed 's/^/# /'
			return
		fi
	done
	if grep -Eq "$want" "$tmp/a.out"; then
		ok "$* : the same both ways, and $want"
	else
		bad "$* : $want"
		sed 's/^/# /' "$tmp/a.out" | tail -n 8
	fi
}
both 'result +PASS' kc_slots
both 'result +PASS' kc_slots --block 8,8,1
both 'result +PASS' kc_slots --block 4,4,4 --arg rounds=7
both 'result +PASS' kc_slots --arg rounds=0
both 'result +PASS' kc_slots --threads 2 --arg blocks=300
both 'checksum' kc_early_exit
both 'divergent_barrier' kc_early_exit --arg active=40
both 'divergent_barrier' kc_early_exit --arg active=1 --block 2,8,4
both 'checksum' kc_two_barriers
both 'divergent_barrier' kc_two_barriers --arg valid=0
both 'divergent_barrier' kc_two_barriers --arg valid=0 --arg rounds=5 --block 4,16,1
both 'checksum' kc_steal
both 'result +PASS' kc_smem_rank
both 'result +PASS' kc_smem_rank --threads 2 --arg blocks=300
both 'result +PASS' kc_smem_any
both 'result +PASS' kc_smem_any --block 4,4,4
both 'result +PASS' kc_guards
both 'result +PASS' kc_guards --arg rounds=20 --arg valid=-20
both 'result +PASS' kc_guards --arg rounds=40 --arg valid=-70 --block 8,8,1
both 'result +PASS' kc_guards --arg rounds=0 --arg valid=-1
both 'checksum' kc_steal --arg blocks=3000 --block 8,4,2 --threads 2
both 'result +PASS' kc_inner_loops
both 'result +PASS' kc_inner_loops --block 4,4,4 --arg rounds=7
both 'result +PASS' kc_inner_loops --arg rounds=0 --block 8,8,1
both 'result +PASS' kc_inner_loops --threads 2 --arg blocks=300 --arg rounds=2
# One trip a thread everywhere (the copy), several (the loop as it was), a
# last thread with none, starts that wrap in the first block (with a stride
# larger than the data, only the test for the wrap tells), two rows.
both 'result +PASS' kc_one_trip --arg rounds=39 --arg valid=0
both 'result +PASS' kc_one_trip
both 'result +PASS' kc_one_trip --arg rounds=39
# A cluster's threads after each cluster barrier: the releasing thread, then
# the others in their arrival order (each takes a number from a counter:
# another order gives another checksum); threads that end before the
# barrier (its release by the settling of the exits, reported as UB); rows;
# host threads.
both 'checksum' kc_cluster_order
both 'checksum' kc_cluster_order --arg rounds=7 --block 8,8,1
both 'divergent_barrier' kc_cluster_order --arg active=40
both 'divergent_barrier' kc_cluster_order --arg active=1 --arg rounds=2 --block 2,8,4
both 'checksum' kc_cluster_order --threads 2 --arg blocks=300
both 'result +PASS' kc_one_trip --arg rounds=39 --arg valid=-5
both 'result +PASS' kc_one_trip --arg rounds=99 --arg valid=-5
both 'result +PASS' kc_one_trip --arg rounds=99 --arg valid=-70
both 'result +PASS' kc_one_trip --arg rounds=39 --arg valid=0 --block 8,8,1
both 'result +PASS' kc_one_trip --threads 2 --arg blocks=300 --arg rounds=299 --arg valid=0
tap_end
