#!/bin/sh
# Pins `ctasim run --sanitize` (docs/SANITIZE.md): every tool reports
# nothing on every kernel of kernels/ (and on the valid twins of the UB
# kernels), each planted bug is caught by its tool with its report name,
# source line, thread and block, the valid twins are clean, and bad uses
# exit 2. Reports and traces are the same run after run.
# Usage: sanitize.sh PATH/TO/ctasim [PATH/TO/cli_lose_index.so]
set -u
CTASIM=${1:?usage: sanitize.sh CTASIM [LOSE_INDEX_MODULE]}
LOSE=${2:-}
. "$(dirname "$0")/tap.sh"
tap_begin san

# expect CODE PATTERN DESC -- ARGS...: runs ctasim ARGS, checks the exit
# code and that stdout or stderr matches the extended regex PATTERN.
expect() {
	code=$1 pattern=$2 desc=$3
	shift 4
	"$CTASIM" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		not_ok "$desc" "exit $rc, expected $code: ctasim $*"
	elif [ -n "$pattern" ] && ! cat "$TMP/out" "$TMP/err" | grep -Eq -- "$pattern"; then
		not_ok "$desc" "output lacks '$pattern': ctasim $*"
	else
		ok "$desc"
	fi
}

# clean TOOL ARGS...: exit 0 and no report at all.
clean() {
	tool=$1
	shift
	"$CTASIM" run "$@" --sanitize "$tool" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne 0 ] || grep -q '^UB ' "$TMP/out"; then
		not_ok "$tool: no report on $*" "exit $rc"
	else
		ok "$tool: no report on $*"
	fi
}

# ---- every shipped kernel, every tool: no report --------------------------------
# Defaults, but smaller where the default takes long one thread at a time
# (the sanitizer runs one thread after another on one host thread): each
# run here takes at most 0.2 s of CPU in a plain build, so that the test
# stays far from its timeout in the ASan and TSan builds of CI and on a
# loaded machine. Every code path still runs: more blocks than fit at once,
# steals, cluster multicasts, the global barrier's spinning.
small() {
	case $1 in
	compute_heavy) echo "--arg n=65536 --arg iters=200" ;;
	spin_clc) echo "--arg grid=512" ;;
	ck_graph_global_barrier | ck_graph_grid_sync) echo "--arg blocks=64 --arg nodes=1024" ;;
	ub_builtin_blockidx_in_body) echo "--arg n=262144" ;;
	ck_work_stealing | work_steal_queue) echo "--arg depth=4" ;;
	vecscale_clc | vecscale_clc_cluster | vecscale_fixed_work | vecscale_fixed_blocks)
		echo "--arg n=65536" ;;
	esac
}
"$CTASIM" list >"$TMP/list" 2>&1
kernels=$(awk '{print $1}' "$TMP/list" | grep -E '^[a-z][a-z0-9_]*$' | sort -u)
for k in $kernels; do
	case $k in
	crash*) continue ;; # crash demonstrations
	san_*) continue ;;  # the planted bugs, below
	ub_*)
		for tool in memcheck racecheck initcheck; do
			# shellcheck disable=SC2046
			clean "$tool" "$k" --arg valid=1 $(small "$k")
		done
		;;
	*)
		for tool in memcheck racecheck initcheck; do
			# shellcheck disable=SC2046
			clean "$tool" "$k" $(small "$k")
		done
		;;
	esac
done
clean racecheck vec_add_clc --arg n=1048576 --sm-limit 4
clean initcheck block_reduce --block 100,1,1 --arg n=30000

# ---- the planted bugs ---------------------------------------------------------
expect 1 "UB memcheck_oob: .*san_body.h:28 kernel san_memcheck_oob block 1 \(blockIdx 1,0,0; physical 1\) thread 244 \(threadIdx 244,0,0\) .*write of 4 bytes at offset 2000 of harness buffer #[0-9]+ of san_memcheck_oob \(2000 bytes\): 4 bytes past its end" \
	"memcheck: a write one past a buffer, with place, block, thread and buffer" -- \
	run san_memcheck_oob --sanitize memcheck
expect 1 "UB memcheck_oob: .*san_body.h:39 kernel san_memcheck_shared_oob block 0 \(blockIdx 0,0,0; physical 0\) thread 255 \(threadIdx 255,0,0\) .*shared memory offset 1024, past the 1024 bytes .*'tile' ends at 1024" \
	"memcheck: a write one slot past a shared tile" -- \
	run san_memcheck_shared_oob --sanitize memcheck
expect 1 "UB memcheck_use_after_free: .*san_body.h:49 kernel san_memcheck_use_after_free block 0 \(blockIdx 0,0,0; physical 0\) thread 0 \(threadIdx 0,0,0\) t=[1-9][0-9]* ns: .*released before the launch" \
	"memcheck: a read of a buffer freed before the launch, at the block's start time" -- \
	run san_memcheck_use_after_free --sanitize memcheck
expect 1 "UB racecheck_shared_ww: .*san_body.h:59 .*thread 1 .*'one' .* races with the write by thread 0 at .*san_body.h:59" \
	"racecheck: two threads write one shared word between barriers" -- \
	run san_racecheck_ww --sanitize racecheck
expect 1 "UB racecheck_shared_rw: .*san_body.h:70 .*thread 1 .*races with the read by thread 0 at .*san_body.h:73" \
	"racecheck: a write after another thread's read, no barrier" -- \
	run san_racecheck_rw --sanitize racecheck
expect 1 "UB initcheck_shared: .*san_body.h:86 .*thread 255 .*'tile' \+ 1020 .*no thread of this block has written" \
	"initcheck: a read of a shared slot no thread wrote" -- \
	run san_initcheck_shared --sanitize initcheck
# The same bugs on 8-byte slots, which the kernel compiler's loop form tests
# inline (where the build has it): the same reports.
expect 1 "UB racecheck_shared_rw: .*san_body.h:97 .*thread 1 .*'tile' \+ 8 .* races with the read by thread 0 at .*san_body.h:100" \
	"racecheck on 8-byte slots: a write after another thread's read" -- \
	run san_racecheck_wide --sanitize racecheck
expect 1 "UB racecheck_shared_rw: .*san_body.h:100 .*thread 255 .*'tile' \+ 0 .* races with the write by thread 0 at .*san_body.h:97" \
	"racecheck on 8-byte slots: a read of another thread's write" -- \
	run san_racecheck_wide --sanitize racecheck
expect 1 "UB initcheck_shared: .*san_body.h:112 .*thread 255 .*read of 8 bytes of shared variable 'tile' \+ 2040 .*no thread of this block has written" \
	"initcheck on 8-byte slots" -- \
	run san_initcheck_wide --sanitize initcheck
# A tree step whose bound lets thread q write the slot thread 0 read: the
# kernel compiler's racecheck copy skips the granule words only where it
# proves that no two threads meet (t < q, docs/SANITIZE.md); a proof that
# took `t <= q` for it would lose this report.
expect 1 "UB racecheck_shared_rw: .*san_body.h:128 .*block 0 .*thread 64 .*'tile' \+ 512 .* races with the read by thread 0 at .*san_body.h:128" \
	"racecheck: a tree step's bound one thread too far" -- \
	run san_racecheck_tree --sanitize racecheck
clean racecheck san_racecheck_tree --arg valid=1
expect 1 "1 report: memcheck_use_after_free=1" "one report per instruction, not per thread" -- \
	run san_memcheck_use_after_free --sanitize memcheck --arg n=4096
# Each tool finds only its own kind.
expect 0 "PASS" "memcheck does not report races" -- run san_racecheck_rw --sanitize memcheck --arg valid=1
clean memcheck san_racecheck_ww --arg valid=1
clean racecheck san_initcheck_shared --arg valid=1
clean initcheck san_racecheck_rw --arg valid=1

# ---- deterministic: same reports and trace, run after run ---------------------------
"$CTASIM" run san_racecheck_rw --sanitize racecheck --trace "$TMP/a.trace" >"$TMP/a.out" 2>&1
"$CTASIM" run san_racecheck_rw --sanitize racecheck --trace "$TMP/b.trace" --threads 4 \
	>"$TMP/b.out" 2>&1
if cmp -s "$TMP/a.trace" "$TMP/b.trace" && grep -q 'racecheck_shared_rw' "$TMP/a.trace"; then
	ok "traces with reports are byte-identical, any --threads"
else
	not_ok "traces with reports are byte-identical, any --threads"
fi

# ---- the untested copies of thread loops (docs/SANITIZE.md) --------------------------
# Where the runtime clears every range a thread loop of the kernel compiler's
# loop form accesses, the loop runs a copy without tests: the outputs and
# traces are those of the tested loops (CTASIM_SAN_ALL_TESTED=1), reports
# included. (The planted bugs above pin that a range that is not clear
# keeps the tests: san_memcheck_shared_oob's, san_racecheck_ww's and
# san_initcheck_shared's loops have untested copies too.)
same_both_ways() {
	desc=$1
	shift
	rm -f "$TMP/x.trace"
	"$CTASIM" "$@" --trace "$TMP/x.trace" >"$TMP/u.out" 2>&1
	rc_u=$?
	mv "$TMP/x.trace" "$TMP/u.trace"
	CTASIM_SAN_ALL_TESTED=1 "$CTASIM" "$@" --trace "$TMP/x.trace" >"$TMP/t.out" 2>&1
	rc_t=$?
	mv "$TMP/x.trace" "$TMP/t.trace"
	if [ "$rc_u" -eq "$rc_t" ] && cmp -s "$TMP/u.trace" "$TMP/t.trace" &&
		cmp -s "$TMP/u.out" "$TMP/t.out"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc_u against $rc_t, or the outputs differ: ctasim $*"
	fi
}
for tool in memcheck racecheck initcheck; do
	same_both_ways "$tool: block_reduce the same with and without untested loops" \
		run block_reduce --arg n=262144 --sanitize "$tool"
	same_both_ways "$tool: block_reduce on 100-thread blocks the same both ways" \
		run block_reduce --block 100,1,1 --arg n=30000 --sanitize "$tool"
done
same_both_ways "memcheck: a shared tile's overrun reported the same both ways" \
	run san_memcheck_shared_oob --sanitize memcheck
same_both_ways "racecheck: a tree step's race reported the same both ways" \
	run san_racecheck_tree --sanitize racecheck
same_both_ways "initcheck: an unwritten 8-byte slot reported the same both ways" \
	run san_initcheck_wide --sanitize initcheck

# ---- bad uses ---------------------------------------------------------------------
expect 2 "--sanitize 'bogus': expected memcheck, racecheck or initcheck" "unknown tool" -- \
	run saxpy --sanitize bogus
expect 2 "run it with --sanitize memcheck" "a planted bug without its tool is refused" -- \
	run san_memcheck_oob
expect 2 "use compute-sanitizer" "no --sanitize on the GPU backend" -- \
	run saxpy --sanitize memcheck --backend cuda
if [ -n "$LOSE" ]; then
	expect 2 "has no instrumented build" "a --load kernel has no instrumented build" -- \
		run cli_lose_index --load "$LOSE" --sanitize memcheck
fi

tap_end
