#!/bin/sh
# Runs every kernel of `ctasim list` on the simulator and pins its outcome:
# ordinary kernels exit 0; ub_<rule> kernels exit 1 and name their rule;
# their valid twins (--arg valid=1) exit 0; other kernels listed as
# expected to fail exit 1. Also runs the work-stealing
# kernels with enough blocks that cancellations succeed.
# Usage: kernels_all.sh [path/to/ctasim] (meson test kernels_all)
set -u
CTASIM=${1:-./build/tools/ctasim/ctasim}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0

# The kernels the issues name: every one must be listed.
expected="saxpy saxpy_gridstride vecscale_fixed_work vecscale_fixed_blocks block_reduce spin spin_clc
vec_add_clc vec_add_clc_2d vec_add_clc_3d vec_add_try_cancel_blocks vecscale_clc
vecscale_clc_cluster clc_two_requests work_steal_queue
ub_request_after_observed_failure ub_read_failed_index ub_read_before_complete
ub_result_buffer_in_flight ub_for_each_called_twice ub_for_each_not_all_threads
ub_leader_count ub_multicast_cluster_not_running ub_divergent_barrier ub_barrier_deadlock
ub_builtin_blockidx_in_body ub_mbarrier_not_initialised ub_watchdog ub_forward_progress
ck_work_stealing ck_graph_global_barrier ck_graph_grid_sync"

if ! "$CTASIM" list >"$tmp/list" 2>&1; then
	echo "FAIL: ctasim list"
	cat "$tmp/list"
	exit 1
fi
# Kernel names are the first word of a line, whatever else list prints.
listed=$(awk '{print $1}' "$tmp/list" | grep -E '^[a-z][a-z0-9_]*$' | sort -u)

ok() {
	pass=$((pass + 1))
	echo "ok   $*"
}
bad() {
	fail=$((fail + 1))
	echo "FAIL $*"
	sed 's/^/     | /' "$tmp/out" | tail -n 15
}

# expect WANT_RC PATTERN ARGS...: runs `ctasim run ARGS`, checks the exit
# code and, when PATTERN (an extended regex) is not empty, that the output
# matches it.
expect() {
	want=$1
	pat=$2
	shift 2
	"$CTASIM" run "$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		bad "$* (exit $rc, want $want)"
	elif [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/out"; then
		bad "$* (exit $rc, but no '$pat' in the output)"
	else
		ok "$* (exit $rc)"
	fi
}

for k in $expected; do
	if ! echo "$listed" | grep -qx "$k"; then
		fail=$((fail + 1))
		echo "FAIL $k is not in ctasim list"
	fi
done

for k in $listed; do
	case $k in
	ub_*)
		# The summary's count line ("UB  3 reports: rule=3"), not the
		# note that names the rule the kernel is expected to break.
		rule="reports?: (.* )?${k#ub_}=[0-9]"
		expect 1 "$rule" "$k"
		expect 0 "" "$k" --arg valid=1
		if [ "$k" = ub_leader_count ]; then
			expect 1 "$rule" "$k" --arg leaders=2
		fi
		if [ "$k" = ub_multicast_cluster_not_running ]; then
			expect 1 "$rule" "$k" --arg after_exit=1
		fi
		;;
	san_*)
		# The sanitizer's planted bugs: caught by their tool, refused
		# without it, and the valid twins clean under it.
		rule=$(awk -v k="$k" '$1 == k' "$tmp/list" | sed -n 's/.*\[expected to fail: \([a-z_]*\).*/\1/p')
		tool=${rule%%_*}
		expect 1 "reports?: (.* )?${rule}=[0-9]" "$k" --sanitize "$tool"
		expect 0 "" "$k" --sanitize "$tool" --arg valid=1
		expect 0 "" "$k" --arg valid=1
		expect 2 "--sanitize $tool" "$k"
		;;
	*)
		# Other kernels that list marks as expected to fail (a crash
		# demonstration, say) must fail; the rest must pass.
		if grep -E "^ +$k +.*\[expected to fail" "$tmp/list" >/dev/null; then
			expect 1 "" "$k"
		else
			expect 0 "" "$k"
		fi
		;;
	esac
done

# With the seeds' N = 10000 every block fits at once and few cancels
# succeed; these sizes make blocks steal.
expect 0 "" vec_add_clc --arg n=4194304
expect 0 "" vec_add_clc_2d --arg nx=2048 --arg ny=2048
expect 0 "" vec_add_clc_3d --arg nx=160 --arg ny=160 --arg nz=160
expect 0 "" vec_add_try_cancel_blocks --arg n=4194304
expect 0 "" clc_two_requests --arg n=4194304
expect 0 "" vecscale_clc --arg n=16777216
expect 0 "" vecscale_clc_cluster --arg n=16777216
# Fault injection: a correct work-stealing kernel still covers every index
# exactly once, because blocks that were not stolen launch normally.
for k in vec_add_clc vec_add_clc_2d vec_add_clc_3d vec_add_try_cancel_blocks clc_two_requests \
	vecscale_clc vecscale_clc_cluster spin_clc; do
	expect 0 "" $k --cancel-fail-rate 0.5 --seed 7
	expect 0 "" $k --cancel-fail-after 3
done
expect 0 "" vec_add_clc --arg n=1048576 --cancel-fail-rate 0.3 --device B200
# Imbalance and prologue parameters of the compare family.
for k in vecscale_fixed_work vecscale_fixed_blocks vecscale_clc; do
	expect 0 "" $k --arg ns=100 --arg prologue_ns=1000 --arg imbalance=one_in_seven
	expect 0 "" $k --arg ns=100 --arg imbalance=heavy_tail
done
expect 0 "" spin --arg imbalance=heavy_tail --arg grid=100000
expect 2 "imbalance" spin --arg imbalance=sideways
expect 0 "" spin_clc --arg imbalance=heavy_tail --arg grid=100000 --arg ns=300
# spin_clc counts the indices of its own --arg grid; a larger --grid is
# refused by verify, not written past.
expect 1 "set --arg grid instead of --grid" spin_clc --grid 70000
# Its cluster form (2- or 4-CTA clusters, one request for all) covers every index
# once, also when requests fail; an odd grid cannot be cut into clusters.
expect 0 "" spin_clc --arg cluster=2 --arg grid=20000 --arg ns=300
expect 0 "" spin_clc --arg cluster=2 --arg grid=4000 --cancel-fail-rate 0.5 --seed 7
expect 2 "multiple of 2" spin_clc --arg cluster=2 --arg grid=2111
expect 2 "cluster" spin_clc --arg cluster=3
expect 2 "cluster" spin_clc --arg cluster=5
expect 0 "" spin_clc --arg cluster=4 --arg grid=4000 --cancel-fail-rate 0.5 --seed 7
expect 2 "multiple of 4" spin_clc --arg cluster=4 --arg grid=4002
# The grid-stride loop is correct on any grid; the monolithic kernel is not.
expect 0 "" saxpy_gridstride --grid 1 --block 1 --arg n=4096
expect 1 "y\[" saxpy --grid 1 --arg n=4096
# --block alone: kernels whose grid covers the elements one thread each
# size it from --block's threads, as CUDA host code does, so every element
# is still covered (an explicit --grid is taken as given, above).
expect 0 "" saxpy --block 128 --arg n=100000
expect 0 "" vec_add_clc --block 96 --arg n=100000
expect 0 "" vec_add_clc_2d --block 8,4,1
expect 0 "" vec_add_clc_3d --block 4,4,3
expect 0 "" clc_two_requests --block 128 --arg n=100000
expect 0 "" vecscale_clc --block 256 --arg n=300000
expect 0 "" vecscale_clc_cluster --block 512 --arg n=300000
expect 0 "" work_steal_queue --arg root_queues=1000 --arg imbalance=heavy_tail
# Blocking kernels (docs/FORWARD_PROGRESS.md): a grid of exactly the
# co-resident size (2 SMs x 8 blocks) passes, one block more is a
# forward_progress report naming the limit; launched cooperatively it is
# refused at launch; the watchdog's bound is the user's.
expect 0 "" ck_graph_global_barrier --sm-limit 2 --grid 16 --arg nodes=512
expect 1 "forward_progress=16" ck_graph_global_barrier --sm-limit 2 --grid 17 --arg nodes=512
expect 1 "2 SMs x 8 blocks per SM \(limited by threads\) = 16" ck_graph_global_barrier \
	--sm-limit 2 --grid 17 --arg nodes=512
expect 0 "" ck_graph_grid_sync --sm-limit 2 --grid 16 --arg nodes=512
expect 2 "cooperative launch too large.*2 SMs x 8 blocks per SM = 16" ck_graph_grid_sync \
	--sm-limit 2 --grid 17 --arg nodes=512
expect 0 "" ck_work_stealing --arg steal=0 --arg root_queues=1000
expect 1 "t=5[0-9][0-9][0-9][0-9] ns: block" ub_watchdog --watchdog 50us
expect 2 "--watchdog '0'" ub_watchdog --watchdog 0
expect 2 "--watchdog '5min'" ub_watchdog --watchdog 5min
expect 2 "--spin-sched 'unfair'" ck_work_stealing --spin-sched unfair
# Adversarial scheduling: explore finds the schedule that starves a block
# the global barrier waits for, and prints the command that reproduces it.
"$CTASIM" explore ck_graph_global_barrier --spin-sched adversarial --schedules 4 \
	--grid 16 --arg nodes=512 >"$tmp/out" 2>&1
rc=$?
repro=$(sed -n 's/^reproduce: *ctasim run //p' "$tmp/out")
if [ "$rc" -ne 1 ] || ! grep -q "relies on fair scheduling" "$tmp/out" ||
	! echo "$repro" | grep -q -- "--spin-sched adversarial"; then
	bad "explore ck_graph_global_barrier --spin-sched adversarial (exit $rc)"
else
	ok "explore ck_graph_global_barrier --spin-sched adversarial (exit 1, reproduce: $repro)"
	eval "expect 1 'relies on fair scheduling' $repro"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
