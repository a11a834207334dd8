#!/bin/sh
# compute-sanitizer memcheck, racecheck and synccheck on every kernel of
# kernels/ that runs on the GPU (the UB kernels as their valid twins), each
# through `ctasim run --backend cuda` at its default size, plus a scenario
# with two streams and priorities. One line per run: tool, kernel, the
# tool's summary line and ctasim's exit code. Runs JOBS at a time.
# Usage: gpu_sanitize.sh CTASIM OUTDIR [JOBS]
set -u
ct=$1
out=$2
jobs=${3:-6}
here=$(cd "$(dirname "$0")" && pwd)
log=$out/sanitize
mkdir -p "$log"
runs=$log/runs.txt
: >"$runs"
for tool in memcheck racecheck synccheck; do
	for k in block_reduce compute_heavy saxpy saxpy_gridstride spin spin_clc vec_add_clc \
		vec_add_clc_2d vec_add_clc_3d vec_add_try_cancel_blocks clc_two_requests \
		vecscale_fixed_work vecscale_fixed_blocks vecscale_clc vecscale_clc_cluster \
		work_steal_queue; do
		echo "$tool $k run $k" >>"$runs"
	done
	for r in request_after_observed_failure read_failed_index read_before_complete \
		result_buffer_in_flight for_each_called_twice for_each_not_all_threads \
		leader_count multicast_cluster_not_running divergent_barrier barrier_deadlock \
		builtin_blockidx_in_body mbarrier_not_initialised; do
		echo "$tool ub_$r.valid run ub_$r --arg valid=1" >>"$runs"
	done
	echo "$tool scenario:hw_priority_takeover scenario $here/../../traces/reference/scenarios/hw_priority_takeover.json" >>"$runs"
done
# shellcheck disable=SC2016
xargs -P "$jobs" -L 1 sh -c '
	tool=$1; name=$2; shift 2
	f='"$log"'/$tool.$(echo "$name" | tr ":" "_").log
	timeout 300 compute-sanitizer --tool $tool --print-limit 8 '"$ct"' "$@" --backend cuda --quiet >"$f" 2>&1
	rc=$?
	sum=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$f" | tail -n 1)
	printf "%-10s %-42s %-40s exit %s\n" "$tool" "$name" "${sum:-no summary}" "$rc"
' sh <"$runs" | sort >"$out/sanitize.txt"
cat "$out/sanitize.txt"
echo "runs: $(wc -l <"$out/sanitize.txt"); with errors or hazards: $(grep -cvE '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed)' "$out/sanitize.txt")"
