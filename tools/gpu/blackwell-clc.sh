#!/bin/sh
# For Blackwell owners (sm_100: B200, GB200): builds ctasim with the CUDA
# backend, runs every CLC conformance kernel with the hardware's cluster
# launch control and with the backend's emulation, simulates the same
# launches on the B200 model, and diffs each hardware trace against the
# simulator. One command, from the checkout root:
#   sh tools/gpu/blackwell-clc.sh [OUTDIR]        (default traces/b200)
# Exits 1 when a kernel fails its verify or coverage, or when the GPU has no
# CLC (--clc=hardware refuses, so a trace saying `#clc hardware` is real).
# Not run by this project: it has no Blackwell GPU.
set -u
cd "$(dirname "$0")/../.."
out=${1:-traces/b200}
build=build-blackwell
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dcuda=enabled -Dbuildtype=release >"$build.setup.log" 2>&1 || {
		cat "$build.setup.log"
		exit 2
	}
	rm -f "$build.setup.log"
fi
ninja -C "$build" >/dev/null || exit 2
ct=$build/tools/ctasim/ctasim
mkdir -p "$out"
{
	nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
	nvcc --version | tail -n 1
	git rev-parse HEAD 2>/dev/null
} >"$out/env.txt" 2>&1
status=0
for k in vec_add_clc vec_add_clc_2d vec_add_clc_3d vec_add_try_cancel_blocks \
	clc_two_requests vecscale_clc vecscale_clc_cluster; do
	for mode in hardware emulate; do
		echo "== $k --clc $mode"
		"$ct" run "$k" --device B200 --backend cuda --clc $mode \
			--trace "$out/$k.$mode.trace" || status=1
	done
	"$ct" run "$k" --device B200 --quiet --trace "$out/$k.sim.trace" || status=1
	echo "== diff $k: hardware vs simulator"
	if [ -f "$out/$k.hardware.trace" ]; then
		"$ct" diff "$out/$k.hardware.trace" "$out/$k.sim.trace" >"$out/$k.diff.txt" 2>&1
		tail -n 3 "$out/$k.diff.txt"
	else
		echo "skipped: no hardware trace (the run above failed)"
	fi
done
echo "traces, diffs and env.txt in $out; exit $status"
exit $status
