#!/bin/sh
# Prints the CUDA toolkit's include and library folders, one per line, as the
# given nvcc itself resolves them (its -dryrun "TOP" and target folder). nvcc
# may be a wrapper script or a symlink outside the toolkit (/usr/local/bin),
# so the folders cannot be derived from its path.
# Usage: cuda-paths.sh NVCC
set -u
nvcc=${1:?usage: cuda-paths.sh NVCC}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$(cd "$tmp" && "$nvcc" -dryrun -c probe.cu 2>&1) || true
top=$(printf '%s\n' "$out" | sed -n 's/^#\$ TOP=//p' | head -n 1)
tdir=$(printf '%s\n' "$out" | sed -n 's/^#\$ _TARGET_DIR_=//p' | grep . | tail -n 1)
if [ -z "$top" ]; then
	echo "cuda-paths.sh: could not read the toolkit root from '$nvcc -dryrun'" >&2
	exit 1
fi
top=$(cd "$top" 2>/dev/null && pwd -P) || exit 1
for d in "$top/${tdir:-targets/x86_64-linux}/include" "$top/include"; do
	if [ -f "$d/cuda_runtime.h" ]; then
		echo "$d"
		break
	fi
done
for d in "$top/${tdir:-targets/x86_64-linux}/lib" "$top/lib64" "$top/lib"; do
	if [ -f "$d/libcudart_static.a" ]; then
		echo "$d"
		break
	fi
done
