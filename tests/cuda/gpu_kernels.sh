#!/bin/sh
# Runs every kernel of kernels/ on the GPU through `ctasim run --backend
# cuda` with a trace each (UB kernels as their valid twins), crash_oob
# (which must fail with a clear error), and the --clc hardware error.
# compute-sanitizer runs are in gpu_sanitize.sh.
# Usage: gpu_kernels.sh CTASIM OUTDIR
set -u
ct=$1
out=$2
here=$(dirname "$0")
tr=/tmp/ctasim-k
mkdir -p $tr
{
	for k in block_reduce compute_heavy saxpy saxpy_gridstride spin spin_clc vec_add_clc vec_add_clc_2d \
		vec_add_clc_3d vec_add_try_cancel_blocks clc_two_requests vecscale_fixed_work \
		vecscale_fixed_blocks vecscale_clc vecscale_clc_cluster work_steal_queue; do
		echo "== $k"
		timeout 60 "$ct" run --backend cuda --quiet --trace $tr/$k.trace $k
		echo "exit $?"
	done
	for r in request_after_observed_failure read_failed_index read_before_complete \
		result_buffer_in_flight for_each_called_twice for_each_not_all_threads \
		leader_count multicast_cluster_not_running divergent_barrier barrier_deadlock \
		builtin_blockidx_in_body mbarrier_not_initialised; do
		echo "== ub_$r (valid twin)"
		timeout 20 "$ct" run --backend cuda --quiet --arg valid=1 \
			--trace $tr/ub_$r.valid.trace ub_$r
		echo "exit $?"
	done
	echo "== crash_oob (writes through a wild pointer: must fail, not hang)"
	timeout 60 "$ct" run --backend cuda crash_oob
	echo "exit $?"
	echo "== vecscale_clc --clc hardware"
	"$ct" run --backend cuda --clc hardware vecscale_clc
	echo "exit $?"
	echo "== traces"
	python3 "$here/trace_summary.py" $tr/*.trace
} >"$out/kernels.log" 2>&1
tar czf "$out/kernel_traces.tgz" -C $tr .
cat "$out/kernels.log"
