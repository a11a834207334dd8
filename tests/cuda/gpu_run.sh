#!/bin/sh
# One device-machine session of the CUDA backend's checks, as run on the
# H100 (docs/CUDA_BACKEND.md quotes its output): the self-test with traces,
# then compute-sanitizer memcheck, racecheck and synccheck on its quick mode.
# Usage: gpu_run.sh SELFTEST OUTDIR
set -u
st=$1
out=$2
mkdir -p /tmp/ctasim-tr /tmp/ctasim-san
{
	nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
	nvcc --version | tail -1
	echo "== selftest"
	timeout 240 "$st" /tmp/ctasim-tr
	echo "selftest exit $?"
	for tool in memcheck racecheck synccheck; do
		echo "== compute-sanitizer --tool $tool (quick mode)"
		timeout 150 compute-sanitizer --tool $tool "$st" /tmp/ctasim-san quick 2>&1 | tail -25
		echo "$tool exit $?"
	done
} >"$out/run.log" 2>&1
tar czf "$out/traces.tgz" -C /tmp/ctasim-tr .
cat "$out/run.log"
