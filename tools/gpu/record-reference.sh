#!/bin/sh
# Records the reference traces of traces/reference/ on a GPU and measures
# the simulator's CPU scaling on the same host. Usage:
#   tools/gpu/record-reference.sh CTASIM OUTDIR [REPEATS]
# CTASIM is a ctasim built with the CUDA backend. Writes OUTDIR/*.trace,
# OUTDIR/env.txt (GPU, driver, CUDA) and OUTDIR/bench.txt.
set -u
ct=$1
out=$2
reps=${3:-3}
mkdir -p "$out"
{
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	nvcc --version 2>/dev/null | tail -n 2
	nproc
	uname -r
} >"$out/env.txt" 2>&1
run() { # name, args...
	name=$1
	shift
	r=1
	while [ $r -le "$reps" ]; do
		timeout 60 "$ct" run --backend cuda --quiet --trace "$out/$name.r$r.trace" "$@" \
			>>"$out/runs.log" 2>&1 || echo "FAILED: $name r$r: $*" >>"$out/runs.log"
		r=$((r + 1))
	done
}
# Block placement: grids of 1..1056 blocks, at natural occupancy (256
# threads, 8 blocks per SM on an H100) and with one block per SM forced by
# 200000 bytes of dynamic shared memory.
for g in 1 16 33 66 132 264 1056; do
	run "placement_natural_g$g" spin --arg grid=$g --arg ns=20000
	run "placement_onepersm_g$g" spin --arg grid=$g --arg ns=20000 --arg smem=200000
done
# The guide's three approaches, balanced and imbalanced work.
for imb in none one_in_seven; do
	for k in vecscale_fixed_work vecscale_fixed_blocks vecscale_clc; do
		run "${k}_$imb" $k --arg n=1048576 --arg ns=2 --arg prologue_ns=2000 --arg imbalance=$imb
	done
done
# The CLC kernels under emulation.
for k in vec_add_clc vec_add_clc_2d vec_add_clc_3d vec_add_try_cancel_blocks vecscale_clc_cluster \
	clc_two_requests; do
	run "clc_$k" $k
done
# CPU scaling of the simulator on this host (no GPU involved).
"$ct" bench --threads "$(nproc)" >"$out/bench.txt" 2>&1
echo "done" >>"$out/runs.log"
