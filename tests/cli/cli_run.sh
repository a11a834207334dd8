#!/bin/sh
# Pins `ctasim` exit codes and stderr messages for bad input (unknown names,
# malformed or over-limit dimensions, blocks that fit nowhere, broken model
# files), the success and rule-violation exits, and that two runs with the
# same seed write byte-identical traces. Usage: cli_run.sh PATH/TO/ctasim
# [PATH/TO/cli_lose_index.so] (a user kernel for --load; its tests are
# skipped without it).
set -u
CTASIM=${1:?usage: cli_run.sh CTASIM [LOSE_INDEX_MODULE]}
LOSE=${2:-}
. "$(dirname "$0")/tap.sh"
tap_begin cli

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

# ---- unknown names -----------------------------------------------------------
expect 2 err "unknown kernel 'nosuch'" "unknown kernel" -- run nosuch
expect 2 err "'NoSuch' is neither a device preset" "unknown device" -- run saxpy --device NoSuch
expect 2 err "unknown argument 'bogus' for kernel saxpy (its parameters: n, a, ns)" \
	"unknown --arg name lists the kernel's parameters" -- run saxpy --arg bogus=1
expect 2 err "argument 'n': expected NAME=VALUE" "--arg without a value" -- run saxpy --arg n
expect 2 err "argument n=abc: not an integer" "--arg value that is not a number" -- \
	run saxpy --arg n=abc
expect 2 err "unknown command 'bogus'" "unknown command" -- bogus
expect 2 err "unknown option '--bogus'" "unknown option" -- run saxpy --bogus
expect 2 err "--placement order replays the model's placement_order or wave_order, and device H100-SXM has neither" \
	"--placement order without an order to replay says so" -- run saxpy --placement order
expect 2 err "usage: ctasim" "no command prints usage to stderr" --
expect 2 err "which kernel?" "run without a kernel" -- run

# ---- malformed and over-limit dimensions ----------------------------------------
expect 2 err "grid.x is 0: every dimension must be at least 1" "--grid 0" -- run saxpy --grid 0
expect 2 err "grid.y is 0" "--grid 4,0" -- run saxpy --grid 4,0
expect 2 err "--grid '-4': expected X[,Y[,Z]] with positive integers" "--grid negative" -- \
	run saxpy --grid -4
expect 2 err "--grid 'abc': expected X[,Y[,Z]]" "--grid text" -- run saxpy --grid abc
expect 2 err "--grid '4,,2': expected X[,Y[,Z]]" "--grid empty field" -- run saxpy --grid 4,,2
expect 2 err "--block '32x': expected X[,Y[,Z]]" "--block trailing separator" -- \
	run saxpy --block 32x
expect 2 err "block.x is 2048: the limit is 1024" "--block 2048" -- run saxpy --block 2048
expect 2 err "block of 2048 threads: the limit is 1024 threads per block" \
	"--block over 1024 threads in all" -- run saxpy --block 32,32,2
expect 2 err "grid.y is 65536: the limit is 65535" "grid.y over 65535" -- \
	run saxpy --grid 1,65536
expect 2 err "grid.z is 65536: the limit is 65535" "grid.z over 65535" -- \
	run saxpy --grid 1,1,65536
expect 2 err "grid.x is 2147483648: the limit is 2147483647" "grid.x over 2^31-1" -- \
	run saxpy --grid 2147483648
expect 2 err "too many resources requested for launch" "block that fits on no SM" -- \
	run spin --arg smem=300000
expect 2 err "the limiting resource is shared memory" "...names the limiting resource" -- \
	run spin --arg smem=300000
expect 0 out "result      PASS" "1024 threads per block is fine" -- \
	run saxpy --block 1024 --arg n=5000 --quiet

# ---- other bad options ------------------------------------------------------------
expect 2 err "--seed 'x': not an integer" "--seed text" -- run saxpy --seed x
expect 2 err "--ub 'sometimes': expected report, abort or off" "--ub bad mode" -- \
	run saxpy --ub sometimes
expect 2 err "--cancel-fail-rate '2': out of range [0, 1]" "--cancel-fail-rate over 1" -- \
	run vec_add_clc --cancel-fail-rate 2
expect 2 err "--sm-limit '0': out of range [1, 4294967295]" "--sm-limit 0" -- run saxpy --sm-limit 0
expect 2 err "--sm-limit '500': out of range [1, 132] (device H100-SXM has 132 SMs)" "--sm-limit over the SM count" -- \
	run saxpy --sm-limit 500
expect 2 err "option --trace needs a value" "--trace without a file" -- run saxpy --trace

# ---- model files ----------------------------------------------------------------------
printf 'base = H100-SXM\n# a comment\nsm_count = 64\nthis line is broken\n' >"$TMP/bad.model"
expect 2 err "$TMP/bad.model:4: expected 'key = value'" "model file syntax error names file:line" \
	-- run saxpy --device "$TMP/bad.model"
printf 'base = H100-SXM\nsm_count = abc\n' >"$TMP/badnum.model"
expect 2 err "$TMP/badnum.model:2: bad number 'abc' for 'sm_count'" \
	"model file bad number names file:line" -- run saxpy --device "$TMP/badnum.model"
printf 'base = H100-SXM\nname = Half-H100\nsm_count = 64\n' >"$TMP/good.model"
expect 0 out "of 64" "a valid model file is used" -- \
	run saxpy --device "$TMP/good.model" --arg n=100000

# ---- help and version ------------------------------------------------------------------
expect 0 out "usage: ctasim" "--help exits 0" -- --help
expect 0 out "usage: ctasim run KERNEL" "run --help exits 0" -- run --help
expect 0 out "ctasim " "--version exits 0" -- --version
if grep -qE '^ctasim [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/out"; then
	ok "--version prints 'ctasim X.Y.Z'"
else
	not_ok "--version prints 'ctasim X.Y.Z'"
fi
expect 0 out "block_reduce" "list names the kernels" -- list
for k in saxpy saxpy_gridstride vecscale_fixed_work vecscale_fixed_blocks block_reduce \
	vec_add_clc vec_add_clc_2d vec_add_clc_3d vec_add_try_cancel_blocks vecscale_clc \
	vecscale_clc_cluster clc_two_requests; do
	if grep -qE "^  $k " "$TMP/out"; then ok "list has $k"; else not_ok "list has $k"; fi
done

# ---- results and rule violations -------------------------------------------------------
expect 0 out "result      PASS" "a correct kernel exits 0" -- run vecscale_fixed_work --quiet
expect 1 out "UB          1 report: request_after_observed_failure=1" \
	"a UB kernel exits 1 and counts its rule" -- run ub_request_after_observed_failure
expect 1 out "result      FAIL: broke rule request_after_observed_failure (results verified)" \
	"a broken rule reads FAIL and names the rule, though the results verified" -- \
	run ub_request_after_observed_failure
expect 1 out "result      FAIL: broke rule barrier_deadlock" \
	"a deadlock reads FAIL naming the rule" -- run ub_barrier_deadlock
# --backend cuda where there is no GPU (or no CUDA backend) is a missing
# environment: exit 2 and a message that says so (on a GPU it runs).
"$CTASIM" run saxpy --backend cuda --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ]; then
	ok "--backend cuda ran on a GPU"
elif [ $rc -eq 2 ] && grep -qE "no CUDA GPU found|has no CUDA backend" "$TMP/err"; then
	ok "--backend cuda without a GPU exits 2 and says why"
else
	not_ok "--backend cuda without a GPU exits 2 and says why" "exit $rc"
fi
expect 0 out "result      PASS" "its valid twin exits 0" -- \
	run ub_request_after_observed_failure --arg valid=1
expect 1 out "read_failed_index=1" "--ub=abort stops at the first UB" -- \
	run ub_read_failed_index --ub=abort
expect 1 out "read_failed_index=256" "--ub report reports every thread" -- \
	run ub_read_failed_index
expect 1 out "barrier_deadlock=1" "a deadlocked kernel ends and exits 1" -- \
	run ub_barrier_deadlock
expect 1 out "result      FAIL" "a wrong result exits 1" -- run ub_divergent_barrier
expect 0 out "coverage    every block index processed exactly once" \
	"all cancels failing still covers every index" -- \
	run vec_add_clc --cancel-fail-rate 1 --sm-limit 2
expect 0 out "failed injected" "injected failures are counted" -- \
	run vec_add_clc --cancel-fail-after 3 --sm-limit 2

# ---- a user kernel (--load) that loses a stolen index ---------------------------------------
if [ -n "$LOSE" ]; then
	expect 1 out "coverage    VIOLATED: 1 lost [1], 0 duplicated" \
		"a lost index fails coverage, exits 1 and is listed" -- \
		run cli_lose_index --load "$LOSE" --sm-limit 1
	expect 1 out "coverage    VIOLATED: 4 lost [1,3,5,7]" "...every lost index is listed" -- \
		run cli_lose_index --load "$LOSE" --sm-limit 1 --arg blocks=8
	expect 0 out "coverage    every block index processed exactly once" \
		"...and with every cancel failing nothing is lost" -- \
		run cli_lose_index --load "$LOSE" --sm-limit 1 --cancel-fail-rate 1
	expect 2 err "--load /nonexistent.so" "--load of a missing file" -- \
		run saxpy --load /nonexistent.so
fi

# ---- explore ------------------------------------------------------------------------------
expect 0 out "5 schedules explored: all passed" "explore: a correct kernel passes every schedule" \
	-- explore vec_add_clc --schedules 5 --arg n=20000
expect 1 out "reproduce:" "explore: a UB kernel fails and prints a reproducer" -- \
	explore ub_read_failed_index --schedules 3
repro=$(sed -n 's/^reproduce: *ctasim //p' "$TMP/out")
if [ -n "$repro" ] && eval "\"\$CTASIM\" $repro" >"$TMP/out" 2>"$TMP/err"; then
	not_ok "explore: the reproducer fails again" "it exited 0: ctasim $repro"
elif [ -n "$repro" ] && grep -qF "read_failed_index" "$TMP/out"; then
	ok "explore: the reproducer fails again with the same rule"
else
	not_ok "explore: the reproducer fails again" "reproducer: '$repro'"
fi
# The reproducer keeps every flag as typed (--placement, --device, --arg).
expect 1 out "reproduce:" "explore with --placement and --device fails" -- \
	explore ub_read_failed_index --schedules 3 --placement round_robin --device H200 --arg ns=5
if grep -q "^reproduce:  ctasim run ub_read_failed_index --placement round_robin --device H200 --arg ns=5 --seed " "$TMP/out"; then
	ok "explore: the reproducer keeps --placement, --device and --arg"
else
	not_ok "explore: the reproducer keeps --placement, --device and --arg"
fi
# Shards: disjoint slices whose merge gives the first failure overall.
if [ -n "$LOSE" ]; then
	"$CTASIM" explore cli_lose_index --load "$LOSE" --schedules 40 >"$TMP/whole" 2>"$TMP/err"
	for i in 0 1 2; do
		"$CTASIM" explore cli_lose_index --load "$LOSE" --schedules 40 --shard $i/3 \
			>"$TMP/shard$i" 2>"$TMP/err"
	done
	expect 1 out "FAILED" "explore --merge of 3 shards reports the failure" -- \
		explore --merge "$TMP/shard2" "$TMP/shard0" "$TMP/shard1"
	want=$(grep "^reproduce:" "$TMP/whole")
	if [ -n "$want" ] && grep -qxF "$want" "$TMP/out" &&
		grep -q "^$(sed -n 's/^\(schedule [0-9]* of 40 FAILED\).*/\1/p' "$TMP/whole")" "$TMP/out"; then
		ok "explore --merge: same first failing schedule and reproducer as one whole run"
	else
		not_ok "explore --merge: same first failure as the whole run" "whole: $(cat "$TMP/whole")"
	fi
	case "$want" in
	*"--load $LOSE"*) ok "explore: the reproducer keeps --load" ;;
	*) not_ok "explore: the reproducer keeps --load" "$want" ;;
	esac
	repro=${want#reproduce:  ctasim }
	if eval "\"\$CTASIM\" $repro" >"$TMP/out" 2>"$TMP/err"; then
		not_ok "explore: the --load reproducer fails again" "exit 0: $repro"
	else
		ok "explore: the --load reproducer fails again"
	fi
	expect 2 err "shard 1/3 is missing" "explore --merge names a missing shard" -- \
		explore --merge "$TMP/shard0" "$TMP/shard2"
	expect 2 err "given twice" "explore --merge refuses a shard given twice" -- \
		explore --merge "$TMP/shard0" "$TMP/shard0" "$TMP/shard1" "$TMP/shard2"
fi
for i in 0 1; do
	"$CTASIM" explore vec_add_clc --schedules 6 --arg n=20000 --shard $i/2 >"$TMP/pass$i" 2>"$TMP/err"
done
expect 0 out "6 schedules explored: all passed" "explore --merge of passing shards" -- \
	explore --merge "$TMP/pass0" "$TMP/pass1"
expect 2 err "--shard '2/2': expected I/N" "explore --shard out of range" -- \
	explore vec_add_clc --shard 2/2
echo "garbage" >"$TMP/garbage"
expect 2 err "no '#explore' line" "explore --merge of a file that is no shard output" -- \
	explore --merge "$TMP/garbage"
# Progress: a line with rate and ETA on a terminal (forced here), none with
# --quiet or when stderr is not a terminal.
CTASIM_PROGRESS=1 "$CTASIM" explore vec_add_clc --schedules 4 --arg n=20000 >"$TMP/out" 2>"$TMP/err"
if grep -q "4/4 schedules.*/s  ETA" "$TMP/err"; then ok "explore shows progress on a terminal"; else
	not_ok "explore shows progress on a terminal"; fi
CTASIM_PROGRESS=1 "$CTASIM" explore vec_add_clc --schedules 4 --arg n=20000 --quiet >"$TMP/out" 2>"$TMP/err"
if [ -s "$TMP/err" ]; then not_ok "explore --quiet has no progress line"; else ok "explore --quiet has no progress line"; fi
"$CTASIM" explore vec_add_clc --schedules 4 --arg n=20000 >"$TMP/out" 2>"$TMP/err"
if [ -s "$TMP/err" ]; then not_ok "no progress line when stderr is a file"; else ok "no progress line when stderr is a file"; fi
expect 2 err "--schedules '0': out of range [1, 1000000]" "explore --schedules 0" -- \
	explore vec_add_clc --schedules 0
expect 2 err "unknown kernel 'nosuch'" "explore: unknown kernel" -- explore nosuch

# ---- determinism -------------------------------------------------------------------------
det() {
	desc=$1
	shift
	"$CTASIM" "$@" --trace "$TMP/a.trace" --quiet >"$TMP/out" 2>"$TMP/err" &&
		"$CTASIM" "$@" --trace "$TMP/b.trace" --quiet >"$TMP/out" 2>"$TMP/err" &&
		cmp -s "$TMP/a.trace" "$TMP/b.trace"
}
if det x run vec_add_clc --seed 9 --cancel-fail-rate 0.3 --jitter 50 --sm-limit 4; then
	ok "same seed, same CLC trace (cmp)"
else
	not_ok "same seed, same CLC trace (cmp)"
fi
if det x run saxpy --seed 9 --jitter 50 --arg n=200000; then
	ok "same seed, same saxpy trace (cmp)"
else
	not_ok "same seed, same saxpy trace (cmp)"
fi
"$CTASIM" run vec_add_clc --seed 1 --cancel-fail-rate 0.5 --sm-limit 4 --trace "$TMP/s1.trace" \
	--quiet >"$TMP/out" 2>"$TMP/err"
"$CTASIM" run vec_add_clc --seed 2 --cancel-fail-rate 0.5 --sm-limit 4 --trace "$TMP/s2.trace" \
	--quiet >"$TMP/out" 2>"$TMP/err"
if ! cmp -s "$TMP/s1.trace" "$TMP/s2.trace" && [ -s "$TMP/s1.trace" ] && [ -s "$TMP/s2.trace" ]
then
	ok "different seeds with injected failures, different traces"
else
	not_ok "different seeds with injected failures, different traces"
fi

# ---- the launch before ---------------------------------------------------------------------
# --launch-before none is the preset with sweep_prior_unit 0 (the idle
# dispatcher, traces/reference/h100-noclear); the default follows the
# CUDA backend's record-slot clear, which moves a 2500-block grid's sweep.
printf 'base = H100-SXM\nsweep_prior_unit = 0\n' >"$TMP/idle.model"
if "$CTASIM" run spin --grid 2500 --timing-only --launch-before none --trace "$TMP/n.trace" \
	--quiet >"$TMP/out" 2>"$TMP/err" &&
	"$CTASIM" run spin --grid 2500 --timing-only --device "$TMP/idle.model" \
		--trace "$TMP/i.trace" --quiet >"$TMP/out" 2>"$TMP/err" &&
	"$CTASIM" run spin --grid 2500 --timing-only --trace "$TMP/c.trace" --quiet \
		>"$TMP/out" 2>"$TMP/err" &&
	cmp -s "$TMP/n.trace" "$TMP/i.trace" && ! cmp -s "$TMP/n.trace" "$TMP/c.trace"; then
	ok "--launch-before none places as sweep_prior_unit 0, unlike the default"
else
	not_ok "--launch-before none places as sweep_prior_unit 0, unlike the default"
fi
expect 2 err "--launch-before 'idle': expected clear or none" "--launch-before: bad keyword" -- \
	run spin --launch-before idle

tap_end
