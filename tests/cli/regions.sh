#!/bin/sh
# Runs every kernel of `ctasim list` both ways, as the kernel compiler's
# region loops (the default where it made them) and on fibers
# (CTASIM_REGIONS=0), and checks that exit code, output, messages and trace
# are byte-identical; block_reduce also with odd block shapes, costs and
# several host threads. Where the build has the kernel compiler (second
# argument 1), the barrier kernels must be listed as [regions], so that the
# comparison is not between two fiber runs.
# Usage: regions.sh path/to/ctasim 0|1
set -u
CTASIM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HAVE_KC=${2:-0}
. "$(dirname "$0")/tap.sh"
tap_begin regions
tmp=$TMP

if ! "$CTASIM" list >"$tmp/list" 2>&1; then
	bad "ctasim list"
	echo "1..$n"
	exit 1
fi
if [ "$HAVE_KC" = 1 ]; then
	for k in block_reduce ub_divergent_barrier ub_watchdog vec_add_clc vec_add_clc_3d \
		vec_add_try_cancel_blocks ub_builtin_blockidx_in_body ub_leader_count spin_clc \
		vecscale_clc ub_read_before_complete ub_read_failed_index clc_two_requests \
		ub_request_after_observed_failure ub_result_buffer_in_flight vecscale_clc_cluster \
		ub_multicast_cluster_not_running work_steal_queue ck_work_stealing \
		ck_graph_global_barrier ck_graph_grid_sync ub_forward_progress; do
		if grep -E "^  $k .*\[regions\]" "$tmp/list" >/dev/null; then
			ok "$k is compiled to regions"
		else
			bad "$k is compiled to regions"
		fi
	done
else
	if grep '\[regions\]' "$tmp/list" >/dev/null; then
		bad "no kernel is listed as [regions] without the kernel compiler"
	else
		ok "no kernel is listed as [regions] without the kernel compiler"
	fi
fi

# One run: exit code, stdout, stderr and the trace, in $tmp/$1.*
run() {
	tag=$1
	shift
	(cd "$tmp" && "$CTASIM" run "$@" --trace t.csv >"$tag.out" 2>"$tag.err")
	echo "rc=$?" >>"$tmp/$tag.out"
	mv "$tmp/t.csv" "$tmp/$tag.csv" 2>/dev/null || : >"$tmp/$tag.csv"
}
both() {
	run a "$@"
	CTASIM_REGIONS=0 run b "$@"
	for f in out err csv; do
		if ! cmp -s "$tmp/a.$f" "$tmp/b.$f"; then
			bad "$* : regions and fibers give the same $f"
			diff "$tmp/a.$f" "$tmp/b.$f" | head -n 6 | sed 's/^/# /'
			return
		fi
	done
	# A run that did not get as far as a trace compares nothing.
	# (The watchdog's rules stop a run on purpose: ub_watchdog,
	# ub_forward_progress.)
	if ! grep -q kernel_end "$tmp/a.csv" && ! grep -Eq "UB (watchdog|forward_progress)" "$tmp/a.out"; then
		bad "$* : ran to the kernel's end"
		sed 's/^/# /' "$tmp/a.out" "$tmp/a.err" | tail -n 6
		return
	fi
	ok "$* : identical both ways ($(grep -c . "$tmp/a.csv") trace lines)"
}

# Every kernel, on one host thread (work_steal_queue's blocks communicate:
# with several host threads its interleaving is not fixed either way).
for k in $(awk '/^kernels:/ {on = 1; next} /^$/ {on = 0} on {print $1}' "$tmp/list"); do
	case $k in
	crash_*) continue ;; # its crash report is pinned by crash.sh
	esac
	# (Smaller than the defaults where those take seconds, or where every
	# thread waits on fibers: a stack each, up to 3.6 GB at the defaults.
	# ub_builtin_blockidx_in_body runs at its default, the first size whose
	# steals succeed: the emulated claim then waits for the issuer's body,
	# 195,661 trace lines, 2 s both ways.)
	case $k in
	compute_heavy) small="--arg n=65536 --arg iters=20" ;;
	spin_clc) small="--arg grid=512 --block 64" ;;
	vecscale_clc*) small="--arg n=32768" ;;
	*) small="" ;;
	esac
	case $k in
	san_*) # planted bugs for --sanitize (which runs every body on fibers):
		# without it, only their valid twins run.
		both "$k" --threads 1 --arg valid=1
		continue
		;;
	esac
	# shellcheck disable=SC2086
	both "$k" --threads 1 $small
	case $k in
	# shellcheck disable=SC2086
	ub_*) both "$k" --threads 1 --arg valid=1 $small ;;
	esac
done
# The barrier-heavy kernel in shapes, costs and host threads.
both block_reduce --arg n=100000 --block 96,2,1 --threads 2
both block_reduce --arg n=50000 --block 8,4,3 --arg ns=3 --threads 2
both block_reduce --arg n=70000 --block 1000 --grid 7 --threads 2
both block_reduce --arg n=4096 --block 33 --device A100-SXM
# The first region's grid-stride loop makes one trip a thread where the grid
# covers the data (the loop form's copy without it, OneTripPass), and more,
# or none for some threads, elsewhere (the loop as it was).
both block_reduce --arg n=16384 --block 64 --arg ns=7
both block_reduce --arg n=5000 --block 64
both block_reduce --arg n=8192 --block 64 --grid 200 --arg ns=2
both block_reduce --arg n=8192 --block 64 --grid 64
both block_reduce --arg n=8192 --block 64 --grid 100
both ub_divergent_barrier --block 250 --threads 2
# Work-stealing loops run for a whole block (the block waits for each
# request as a whole): odd shapes, costs, forced failures, several host
# threads, another device, checking off, a seed.
both vec_add_clc --arg n=100000 --block 96 --threads 2
both vec_add_clc --arg n=30000 --block 33 --arg ns=7 --cancel-fail-rate 0.3 --seed 5
both vec_add_clc_2d --block 8,4,1 --cancel-fail-after 40
both vec_add_clc_3d --block 4,4,3 --device B200 --threads 2
both vec_add_try_cancel_blocks --arg n=50000 --block 200 --ub off
both vec_add_try_cancel_blocks --arg n=20000 --device A100-SXM --random-tiebreak --seed 9
both ub_leader_count --arg leaders=2
both ub_builtin_blockidx_in_body --arg n=20000 --block 64 --threads 2
# mbarrier waits in the body (the guide's low-level loop): the block waits
# as a whole once every live thread waits on the phase.
both spin_clc --arg grid=2000 --block 96 --arg ns=300 --threads 2
both spin_clc --arg grid=700 --block 8,4,2 --arg imbalance=1 --cancel-fail-rate 0.2 --seed 3
both vecscale_clc --arg n=50000 --block 200 --device B200
both vecscale_clc --arg n=40000 --cancel-fail-after 30 --ub off
# Two waits in one body: each thread's observation of the first mbarrier
# outlives the other threads' runs and the block's wait at the second
# (CTA__KC_OBS); a lost one would be reported as a read before completion.
both clc_two_requests --arg n=30000 --arg ns=7 --cancel-fail-rate 0.3 --seed 5 --threads 2
both clc_two_requests --arg n=50000 --cancel-fail-after 40 --device B200
both clc_two_requests --arg n=20000 --device A100-SXM --random-tiebreak --seed 9
both clc_two_requests --arg n=40000 --ub off
both ub_request_after_observed_failure --block 100 --threads 2
both ub_result_buffer_in_flight --block 7,3,1
# Clusters (sim/exec/regions.c, run_cluster): the cluster's threads one at a
# time in the fiber path's order, the cluster waiting as a whole at each
# CTA's mbarrier for the multicast request (a lane per CTA), its steals,
# other shapes, devices, host threads and seeds; a CTA that ends before the
# multicast (UB); tests/cli/kc_load.sh checks the order after the barrier.
both vecscale_clc_cluster --arg n=300000 --block 96 --threads 2
both vecscale_clc_cluster --arg n=1048576 --arg imbalance=1 --arg ns=3 --arg prologue_ns=50
both vecscale_clc_cluster --arg n=100000 --device B200 --threads 2 --ub off
both spin_clc --arg cluster=2 --arg grid=2000 --block 96 --arg ns=300 --threads 2
both spin_clc --arg cluster=2 --arg grid=3000 --block 64 --device B200 --random-tiebreak --seed 9
both spin_clc --arg cluster=2 --arg grid=700 --block 8,4,2 --arg imbalance=1 --seed 3
both ub_multicast_cluster_not_running --arg after_exit=1
# Threads that spin on memory (sim/exec/regions.c, run_spin): one thread at
# a time in the fiber path's order, the block waiting for its spinning
# threads' polls as a whole; docs/FORWARD_PROGRESS.md's runs, the
# forward-progress and watchdog reports, adversarial scheduling, shapes.
both ck_work_stealing --arg steal=0 --arg roots=4 --threads 1
both ck_work_stealing --arg root_queues=132 --threads 2
both ck_graph_global_barrier --arg nodes=4096 --threads 1
both ck_graph_global_barrier --sm-limit 2 --grid 17 --threads 1
both ck_graph_global_barrier --block 96,2,1 --arg nodes=2048 --threads 2
both work_steal_queue --threads 2 --seed 4
both ub_forward_progress --spin-sched adversarial --seed 3 --threads 2
both ub_forward_progress --arg valid=1 --block 64,2,1 --device B200
# cta_grid_sync (compiler/kc_kernel.h's inline form, a spinning body): host
# threads and shapes, an ordinary launch (each thread stops the run at its
# first grid sync, forward_progress), the watchdog stopping thread 0's spin
# on the grid's phase.
both ck_graph_grid_sync --arg nodes=2048 --sm-limit 4 --grid 32 --threads 2
both ck_graph_grid_sync --block 96,2,1 --arg nodes=2048 --threads 2
both ck_graph_grid_sync --arg nodes=512 --arg cooperative=0 --threads 1
both ck_graph_grid_sync --arg nodes=512 --sm-limit 2 --grid 16 --arg ns=5000 --watchdog 100
# The blocking kernels' accesses under the device's wait_* (run_spin's
# threads that wait for their time, kc_wait_park): the H100's fitted terms,
# and turns long enough that a thread also waits for its turn's start.
printf 'base = H100-SXM\nwait_load_ns = 372\nwait_atomic_ns = 406\nwait_turn_ps = 4130\nwait_sync_ps = 5409\nwait_hit_ns = 150\nwait_poll_ps = 800\n' >"$tmp/wait.model"
printf 'base = H100-SXM\nwait_load_ns = 90\nwait_atomic_ns = 700\nwait_turn_ps = 250000\nwait_sync_ps = 400000\nwait_hit_ns = 60\nwait_poll_ps = 90000\n' >"$tmp/turns.model"
for m in wait turns; do
	both ck_graph_grid_sync --device "$tmp/$m.model" --arg nodes=2048 --sm-limit 4 --grid 32 --threads 2
	both ck_graph_global_barrier --device "$tmp/$m.model" --arg nodes=2048 --sm-limit 4 --grid 32 --threads 2
	both ck_graph_global_barrier --device "$tmp/$m.model" --block 96,2,1 --arg nodes=1024 --sm-limit 8 --grid 64 --threads 1
	both ck_work_stealing --device "$tmp/$m.model" --sm-limit 4 --arg roots=8 --arg depth=4 --arg queues=32 --threads 2
done
both ck_graph_grid_sync --device "$tmp/wait.model" --block 96,2,1 --arg nodes=1024 --sm-limit 8 --grid 64 --threads 1
both ck_graph_grid_sync --device "$tmp/wait.model" --arg nodes=512 --sm-limit 2 --grid 16 --arg ns=5000 --watchdog 100
both ck_graph_global_barrier --device "$tmp/wait.model" --sm-limit 2 --grid 17 --threads 1
both work_steal_queue --device "$tmp/wait.model" --threads 2 --seed 4 --sm-limit 8

tap_end
