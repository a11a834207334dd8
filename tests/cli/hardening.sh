#!/bin/sh
# Pins what a hostile user or a batch farm meets (issue 27): output files
# never written through a planted symlink, numbers that overflow refused
# with the flag and its range, bodies that leave the process reported like
# crashes, SIGINT/SIGTERM ending with the trace kept and exit 130/143, stale
# temporaries of killed runs removed, write errors named with strerror and
# exit 2 (stdout included), control bytes escaped in messages.
# Usage: hardening.sh PATH/TO/ctasim PATH/TO/cli_leave.so
set -u
CTASIM=${1:?usage: hardening.sh CTASIM LEAVE_MODULE}
LEAVE=${2:?usage: hardening.sh CTASIM LEAVE_MODULE}
. "$(dirname "$0")/tap.sh"
tap_begin hard
# check COND DESC: COND is a shell test run with eval.
check() {
	if eval "$1"; then ok "$2"; else not_ok "$2" "failed: $1"; fi
}

# expect CODE STREAM PATTERN DESC -- ARGS...: runs ctasim ARGS, checks the
# exit code and that STREAM (out|err) contains the fixed string PATTERN.
expect() {
	code=$1 stream=$2 pattern=$3 desc=$4
	shift 5
	"$CTASIM" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		not_ok "$desc" "exit $rc, expected $code: ctasim $*"
	elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$TMP/$stream"; then
		not_ok "$desc" "std$stream lacks '$pattern': ctasim $*"
	else
		ok "$desc"
	fi
}

"$CTASIM" run spin --arg grid=64 --trace "$TMP/a.trace" --quiet >/dev/null 2>&1 ||
	echo "Bail out! cannot write a trace"

# ---- 1. output files and planted symlinks -------------------------------------
# The old temporary names were PATH.tmp.<pid>: exec keeps the shell's pid, so
# links planted at every name that pid could use must all stay untouched.
printf 'precious\n' >"$TMP/victim"
plant() { # plant OUTPUT: links at OUTPUT.tmp.<pid>[-k] for the exec'd pid
	ln -s "$TMP/victim" "$1.tmp.$$x" 2>/dev/null
}
for cmd in "view $TMP/a.trace -o $TMP/v.svg" "export --perfetto $TMP/a.trace -o $TMP/e.json" \
	"compare --tiles-per-slot 1 --csv $TMP/c.csv"; do
	out=$(echo "$cmd" | sed 's/.* //')
	# shellcheck disable=SC2086
	sh -c 'out=$1; victim=$2; shift 2; ln -s "$victim" "$out.tmp.$$";
		i=1; while [ $i -lt 400 ]; do ln -s "$victim" "$out.tmp.$$-$i"; i=$((i+1)); done;
		exec "$@"' sh "$out" "$TMP/victim" "$CTASIM" $cmd >"$TMP/out" 2>"$TMP/err"
	rc=$?
	verb=${cmd%% *}
	check '[ $rc -eq 0 ] && [ "$(cat "$TMP/victim")" = precious ] && [ -s "$out" ] && [ ! -L "$out" ]' \
		"$verb: 400 symlinks planted at the temporary names are not followed"
done
# A symlink at the output itself is replaced by the file, never written through.
ln -s "$TMP/victim" "$TMP/link.svg"
expect 0 out "" "view -o onto a symlink" -- view "$TMP/a.trace" -o "$TMP/link.svg"
check '[ "$(cat "$TMP/victim")" = precious ] && [ ! -L "$TMP/link.svg" ]' \
	"view -o replaces a symlink at the output, the file it pointed to is untouched"
check '[ -z "$(ls "$TMP" | grep "\.tmp\.[0-9]*\.")" ]' "no temporary left behind"
rm -f "$TMP"/*.tmp.*

# calibrate -o: a planted symlink at the output is replaced, not written
# through; a fifo (a device node stands for any) is written in place, never
# replaced by a regular file; '-' is standard output.
"$CTASIM" run spin --arg grid=64 --trace "$TMP/cal.trace" --quiet >/dev/null 2>&1
printf 'precious\n' >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/m.model"
expect 0 out "" "calibrate -o onto a symlink" -- calibrate "$TMP/cal.trace" -o "$TMP/m.model"
check '[ "$(cat "$TMP/victim")" = precious ] && [ ! -L "$TMP/m.model" ] && grep -q "^sm_count = 132" "$TMP/m.model"' \
	"calibrate -o replaces a symlink, the file it pointed to is untouched"
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.out" &
catpid=$!
"$CTASIM" calibrate "$TMP/cal.trace" -o "$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
rc=$?
wait $catpid
check '[ $rc -eq 0 ] && [ -p "$TMP/fifo" ] && grep -q "^sm_count = 132" "$TMP/fifo.out"' \
	"calibrate -o a fifo writes into it and leaves the node a fifo"
"$CTASIM" calibrate "$TMP/cal.trace" -o - >"$TMP/std.model" 2>"$TMP/err"
check '[ $? -eq 0 ] && grep -q "^calibrated - from 1 trace" "$TMP/err" && [ ! -e ./- ]' \
	"calibrate -o - writes the model to stdout and the summary to stderr"
expect 0 out "result      PASS" "the model written to stdout loads" -- \
	run spin --device "$TMP/std.model" --quiet

# ---- 2. numbers ------------------------------------------------------------------
expect 2 err "argument n=18014398509481985K: too large (overflows 64 bits)" \
	"--arg K suffix overflow is refused, not wrapped" -- run saxpy --arg n=18014398509481985K
expect 2 err "argument n=3<<62: out of range" "--arg shift out of range" -- \
	run saxpy --arg 'n=3<<62'
expect 2 err "argument n=1<<64: shift out of range" "--arg shift of 64" -- run saxpy --arg 'n=1<<64'
expect 2 err "--cancel-fail-rate 'nan': not a number" "--cancel-fail-rate nan" -- \
	run vec_add_clc --cancel-fail-rate nan
expect 2 err "--sm-limit '4294967297': out of range [1, 4294967295]" "--sm-limit over 32 bits" -- \
	run saxpy --sm-limit 4294967297
expect 2 err "--seed ' -1': not an integer" "--seed with a space and a sign" -- \
	run saxpy --seed ' -1'
expect 2 err "--seed '-1': not a non-negative integer" "--seed negative" -- run saxpy --seed -1
expect 2 err "--jitter '18446744073709551615': out of range [0, 1000000000]" \
	"--jitter beyond a second" -- run saxpy --jitter 18446744073709551615
expect 2 err "--threads '1x': not an integer" "--threads with junk" -- run saxpy --threads 1x
expect 2 err "--max-events '99999999999999999999': too large" "--max-events overflow" -- \
	run saxpy --max-events 99999999999999999999
expect 2 err "--only 'nosuch': expected saxpy, barriers" "bench --only nosuch" -- \
	bench --quick --only nosuch
expect 2 err "ctasim bench: --device: '/nonexistent/x.model' is neither a device preset" \
	"bench --device names what it cannot resolve" -- \
	bench --quick --only rss --device /nonexistent/x.model
expect 2 err "block.x is 0: every dimension must be at least 1" "--block 0 refused as CUDA does" -- \
	run saxpy --block 0
expect 2 err "--grid '99999999999': expected X[,Y[,Z]] with positive integers (x: out of range" \
	"--grid over 32 bits" -- run saxpy --grid 99999999999
expect 2 err "--tol-makespan 'inf': not a number" "diff tolerance inf" -- \
	diff "$TMP/a.trace" "$TMP/a.trace" --tol-makespan inf
expect 2 err "--width '0': out of range [1, 100000]" "view --width 0" -- \
	view "$TMP/a.trace" -o "$TMP/w.svg" --width 0
expect 2 err "--shard ' 1/18446744073709551617': expected I/N with 0 <= I < N <= 1000000" \
	"explore --shard with a space and an overflowing N" -- \
	explore saxpy --schedules 2 --shard ' 1/18446744073709551617'
expect 0 out "result      PASS" "64K and 1<<12 still parse" -- \
	run saxpy --arg n=64K --arg 'ns=1<<12' --quiet
# --trace - writes the trace to stdout, the summary to stderr.
"$CTASIM" run spin --arg grid=8 --trace - >"$TMP/out" 2>"$TMP/err"
rc=$?
check '[ $rc -eq 0 ] && head -1 "$TMP/out" | grep -q "^#ctasim-trace" && tail -1 "$TMP/out" | grep -q "^#end records=" && grep -q "result      PASS" "$TMP/err" && [ ! -e ./- ]' \
	"--trace - writes the trace to stdout and the summary to stderr"

# ---- 3. bodies that leave the process ---------------------------------------------
leave() { # leave HOW WHAT: thread 5 of block 2 leaves the process by WHAT
	what=$2
	"$CTASIM" run cli_leave --load "$LEAVE" --arg how="$1" --trace "$TMP/l.trace" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	check '[ $rc -eq 1 ] && grep -qF "kernel cli_leave $what" "$TMP/err" && grep -qF ", in block 2 (physical block 2, blockIdx 2,0,0) thread 5 (threadIdx 5,0,0)" "$TMP/err" && grep -q "^#incomplete records=" "$TMP/l.trace" && ! grep -q "^result" "$TMP/out"' \
		"a body that $what: reported with block and thread, exit 1, trace marked incomplete"
}
leave 0 "called exit(0)"
leave 1 "called exit(3)"
leave 2 "called _exit(0)"
leave 3 "called _Exit(0)"
leave 4 "called quick_exit()"
leave 5 "raised SIGABRT (abort)"
leave 6 "raised SIGUSR1"
# The source place: an offset that addr2line turns into the body's line.
"$CTASIM" run cli_leave --load "$LEAVE" --arg how=2 >"$TMP/out" 2>"$TMP/err"
place=$(sed -n 's/.*code at cli_leave.so+\(0x[0-9a-f]*\) .*/\1/p' "$TMP/err" | tail -1)
check '[ -n "$place" ]' "_exit from a body names the code place (object+offset)"
if command -v addr2line >/dev/null 2>&1 && [ -n "$place" ]; then
	check 'addr2line -e "$LEAVE" "$place" | grep -q "leave.c:[0-9]"' \
		"... which addr2line resolves to the body's source line"
fi
"$CTASIM" run crash_oob >"$TMP/out" 2>"$TMP/err"
check 'grep -q "crashed: SIGSEGV (invalid memory access) at address 0x[0-9a-f]*, code at ctasim+0x" "$TMP/err"' \
	"a fault in a body names the code place"
"$CTASIM" run cli_leave --load "$LEAVE" --arg how=7 --threads 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
check '[ $rc -eq 1 ] && grep -qF "kernel cli_leave raised SIGTERM, in block 2" "$TMP/err"' \
	"a body that kills its own process with SIGTERM: a crash report, not an interruption"
expect 0 out "result      PASS" "the same kernel staying in passes" -- \
	run cli_leave --load "$LEAVE" --arg how=8

# ---- 5. signals and stale temporaries -----------------------------------------------
long="run spin --arg grid=200000000 --arg ns=1000 --quiet"
for sig in INT TERM; do
	# An interrupted run leaves its state unfreed on purpose: LeakSanitizer
	# would turn exit 130/143 into its own exit code in ASan builds.
	# shellcheck disable=SC2086
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$CTASIM" $long --trace "$TMP/s.trace" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	i=0
	while [ $i -lt 300 ] && [ -z "$(ls "$TMP" | grep 's\.trace\.tmp\.')" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.3
	kill -$sig $pid
	wait $pid
	rc=$?
	want=$([ $sig = INT ] && echo 130 || echo 143)
	check '[ $rc -eq $want ] && tail -1 "$TMP/s.trace" | grep -q "^#incomplete records=[0-9]* interrupted by SIG$sig" && grep -qF "interrupted by SIG$sig; the trace so far is kept, marked incomplete: $TMP/s.trace" "$TMP/err" && [ -z "$(ls "$TMP" | grep "s\.trace\.tmp\.")" ]' \
		"SIG$sig: exit $want, the trace kept whole up to an incomplete marker, no temporary left"
	rm -f "$TMP/s.trace"
done
# shellcheck disable=SC2086
"$CTASIM" $long --trace "$TMP/k.trace" >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 50 ] && [ -z "$(ls "$TMP" | grep 'k\.trace\.tmp\.')" ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
check '[ -n "$(ls "$TMP" | grep "k\.trace\.tmp\.$pid\.")" ]' "kill -9 leaves a temporary"
expect 0 err "removed 1 temporary file that a killed run left ($TMP/k.trace.tmp.$pid." \
	"the next run writing there removes it and says so" -- run spin --trace "$TMP/k.trace" --quiet
check '[ -z "$(ls "$TMP" | grep "k\.trace\.tmp\.")" ]' "and no temporary is left"

# ---- 6. bounded input --------------------------------------------------------------------
# Each must be refused at once: `timeout 5` turns a reader that keeps reading
# into exit 124.
bounded() { # bounded PATTERN DESC -- ARGS
	pattern=$1 desc=$2
	shift 3
	timeout 5 "$CTASIM" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$pattern" "$TMP/err"; then ok "$desc"; else not_ok "$desc" "exit $rc"; fi
}
bounded "/dev/zero:1: NUL byte: binary data, not a device model file" "run --device /dev/zero" -- \
	run saxpy --device /dev/zero
bounded "/dev/urandom:" "run --device /dev/urandom" -- run saxpy --device /dev/urandom
bounded "/dev/zero: not a ctasim trace (it does not start with '#ctasim-trace')" "view /dev/zero" -- \
	view /dev/zero -o "$TMP/z.svg"
bounded "/dev/urandom: not a ctasim trace" "view /dev/urandom" -- view /dev/urandom -o "$TMP/z.svg"
bounded "/dev/zero: not a ctasim trace" "calibrate /dev/zero" -- calibrate /dev/zero -o "$TMP/z.model"
bounded "/dev/zero: not a ctasim trace" "export /dev/zero" -- export --perfetto /dev/zero
bounded "/dev/zero: not a ctasim trace" "diff /dev/zero" -- diff /dev/zero "$TMP/a.trace"
bounded "file is larger than the limit of 4194304 bytes" "scenario /dev/zero" -- scenario /dev/zero
awk 'BEGIN { printf "base = H100-SXM\n# "; for (i = 0; i < 70000; i++) printf "x"; printf "\n" }' \
	>"$TMP/long.model"
bounded "long.model:2: line longer than the limit of 65536 bytes" "a model line over 64 KiB" -- \
	run saxpy --device "$TMP/long.model"
{ head -c 100 "$TMP/a.trace" | head -1; awk 'BEGIN { for (i = 0; i < 70000; i++) printf "#"; printf "\n" }'; } \
	>"$TMP/long.trace"
bounded "long.trace:2: line of 70000 bytes, longer than the limit of 65536" "a trace line over 64 KiB" -- \
	view "$TMP/long.trace" -o "$TMP/z.svg"

# ---- 7. write errors -------------------------------------------------------------------
if [ -w /dev/full ]; then
	"$CTASIM" run saxpy >/dev/full 2>"$TMP/err"
	check '[ $? -eq 2 ]' "run > /dev/full exits 2"
	"$CTASIM" list >/dev/full 2>"$TMP/err"
	check '[ $? -eq 2 ] && grep -qF "ctasim: <stdout>: No space left on device" "$TMP/err"' \
		"list > /dev/full exits 2 naming the error"
	expect 2 err "ctasim run: /dev/full: write failed: No space left on device" \
		"--trace /dev/full" -- run saxpy --trace /dev/full --quiet
	expect 2 err "ctasim view: /dev/full: No space left on device" "view -o /dev/full" -- \
		view "$TMP/a.trace" -o /dev/full
	expect 2 err "ctasim export: /dev/full: No space left on device" "export -o /dev/full" -- \
		export --perfetto "$TMP/a.trace" -o /dev/full
	"$CTASIM" export --perfetto "$TMP/a.trace" >/dev/full 2>"$TMP/err"
	check '[ $? -eq 2 ] && grep -qF "<stdout>: No space left on device" "$TMP/err"' \
		"export to a full stdout exits 2 naming the error"
	expect 2 err "ctasim compare: /dev/full: No space left on device" "compare --csv /dev/full" -- \
		compare --tiles-per-slot 1 --csv /dev/full
	"$CTASIM" diff "$TMP/a.trace" "$TMP/a.trace" >/dev/full 2>"$TMP/err"
	check '[ $? -eq 2 ] && grep -qF "No space left on device" "$TMP/err"' "diff > /dev/full exits 2"
fi

# ---- 8. control bytes in messages --------------------------------------------------------
esc=$(printf '\033]0;owned\007\033[2J')
expect 2 err 'unknown kernel '"'"'\e]0;owned\a\e[2J'"'" "an unknown kernel name is echoed escaped" -- \
	run "$esc"
check '! grep -q "$(printf "\033")" "$TMP/err" && ! grep -q "$(printf "\007")" "$TMP/err"' \
	"no raw ESC or BEL reaches stderr"
printf 'base = H100-SXM\nsm_count = 12\033[31m\n' >"$TMP/esc.model"
expect 2 err '\e[31m' "a model file's bad value is echoed escaped" -- run saxpy --device "$TMP/esc.model"
check '! grep -q "$(printf "\033")" "$TMP/err"' "no raw ESC from a model file"
expect 2 err "argument n=1\\a: not an integer" "--arg value echoed escaped" -- \
	run saxpy --arg "n=1$(printf '\007')"
printf 'base = H100-SXM\nname = gpu\033[31m\007\n' >"$TMP/escname.model"
expect 0 out 'device      gpu\e[31m\a (sim backend)' "a model's name is echoed escaped on stdout" -- \
	run saxpy --arg n=1024 --device "$TMP/escname.model"
check '! grep -q "$(printf "\033")" "$TMP/out" && ! grep -q "$(printf "\007")" "$TMP/out"' \
	"no raw ESC or BEL reaches stdout"

# ---- 9. the UB checker ---------------------------------------------------------------------
# Clusters of 4 blocks that each fill an SM cannot run on 1 or 2 SMs: explore
# draws again instead of reporting a failure of a valid kernel.
expect 0 out "40 schedules explored: all passed" "explore never reports a schedule the launch cannot fit" -- \
	explore cli_cluster4 --load "$LEAVE" --schedules 40
check 'grep -q "drawn SM counts could not hold the launch and were drawn again" "$TMP/out"' \
	"explore says how many SM counts it drew again"
expect 2 err "a cluster of 4 blocks cannot be co-scheduled on one GPC" \
	"explore with an --sm-limit the launch cannot fit is bad input, not a failed schedule" -- \
	explore cli_cluster4 --load "$LEAVE" --schedules 3 --sm-limit 2
expect 1 out "reproduce:  ctasim run ub_read_failed_index --load" \
	"explore's reproducer carries --load" -- explore ub_read_failed_index --load "$LEAVE" --schedules 3
# A multicast cancel found at the exit of the other CTA names its issuer:
# thread 37 of each cluster's first block, not block 0 thread 0.
expect 1 out "kernel cli_multicast_issuer block 2 (blockIdx 2,0,0; physical 2) thread 37 (threadIdx 37,0,0) t=" \
	"a multicast report caught at CTA exit names the issuing thread" -- \
	run cli_multicast_issuer --load "$LEAVE"
check 'grep -q "thread 37 (threadIdx 37,0,0) t=[0-9]* ns: CTA 1 of the cluster (block 3) exited" "$TMP/out"' \
	"... for the report made when the other CTA is retired"
# An mbarrier never initialised, in block (2,1) of a 2-D grid, thread (3,1).
for how in 0 1 2; do
	what=$(echo "try_wait_parity arrive try_cancel" | cut -d' ' -f$((how + 1)))
	expect 1 out "UB mbarrier_not_initialised: " "mbarrier_not_initialised: $what" -- \
		run cli_uninit_mbarrier --load "$LEAVE" --arg how=$how
	check 'grep -q "kernel cli_uninit_mbarrier block 5 (blockIdx 2,1,0; physical 5) thread 11 (threadIdx 3,1,0) t=[0-9]* ns: $what on the mbarrier at shared memory offset" "$TMP/out"' \
		"... named with kernel, 2-D block and thread coordinates ($what)"
done
expect 0 out "result      PASS" "an initialised mbarrier is not flagged" -- \
	run cli_uninit_mbarrier --load "$LEAVE" --arg how=3
# Cause before consequence.
expect 1 out "(after result_buffer_in_flight in the same block, above: probably its consequence)" \
	"a consequence is marked as following its cause" -- run ub_result_buffer_in_flight
check 'grep -n "UB result_buffer_in_flight:" "$TMP/out" | cut -d: -f1 | { read a; [ "$a" -lt "$(grep -n "UB read_before_complete:" "$TMP/out" | cut -d: -f1)" ]; }' \
	"the cause is printed before the consequence"
check 'grep -qF "result      FAIL: broke rule result_buffer_in_flight, read_before_complete" "$TMP/out"' \
	"the result line lists the cause first"
# Warnings alone: reported, exit 0 (docs/UB.md says the same).
expect 0 out "result      PASS (with warnings, which alone do not fail a run)" \
	"a run whose only reports are warnings exits 0 and says why" -- \
	run ub_builtin_blockidx_in_body --cancel-fail-rate 1 --arg n=4096
check 'grep -q "^  warning builtin_blockidx_in_body: " "$TMP/out"' "... with the warnings printed"
check 'grep -q "A run whose only reports are warnings exits 0\|run whose only reports are warnings exits 0" "$(dirname "$0")/../../docs/UB.md"' \
	"docs/UB.md states the same rule for warnings"

tap_end
