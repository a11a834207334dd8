#!/bin/sh
# One device-machine run of the CUDA backend's checks, as run on the
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
} >"$out/run.log" 2>&1
for tool in memcheck racecheck synccheck; do
	timeout 150 compute-sanitizer --tool $tool --print-limit 12 "$st" /tmp/ctasim-san quick \
		>"$out/san_$tool.log" 2>&1
	echo "$tool exit $?" >>"$out/san_$tool.log"
done
tar czf "$out/traces.tgz" -C /tmp/ctasim-tr .
cat "$out/run.log"
tail -n 4 "$out"/san_*.log
