#!/bin/sh
# A user's kernel on both backends: docs/WRITING_KERNELS.md's example
# (mykernel_body.h + mykernel.c), built by ctasim-build-kernel with nvcc
# into one shared object, runs with --load on the simulator and, where a
# GPU is present, on the GPU, and `ctasim diff` compares the two traces.
# Without a GPU the CUDA run must exit 2 saying so. Prints TAP.
# $1: ctasim, $2: ctasim-build-kernel, $3: the source root.
set -u
CTASIM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BUILD_KERNEL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
SRC=$(cd "$3" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/ctasim-user-kernel.XXXXXX")
trap 'rm -rf "$W"' EXIT
n=0
bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() {
	n=$((n + 1))
	echo "not ok $n - $1"
	sed 's/^/# /' "$W/err" | head -20 | cut -c1-300
	bad=1
}
python3 - "$SRC/docs/WRITING_KERNELS.md" "$W" <<'PY'
import re, sys
for block in re.findall(r"```c\n(.*?)```", open(sys.argv[1]).read(), re.S):
    m = re.match(r"/\* ([\w.]+\.[ch]):", block)
    if m:
        open(sys.argv[2] + "/" + m.group(1), "w").write(block)
PY
cd "$W" || exit 1
if CTASIM_INCLUDE="$SRC/include" sh "$BUILD_KERNEL" -o libsquare.so mykernel.c mykernel_body.h \
	>out 2>err && grep -q "simulator and GPU" out; then
	ok "ctasim-build-kernel builds the docs' kernel for both backends"
else
	no "ctasim-build-kernel builds the docs' kernel for both backends"
	echo "1..$n"
	exit 1
fi
if "$CTASIM" run --load ./libsquare.so square --arg n=100000 --trace sim.trace >out 2>err &&
	grep -q "result      PASS" out; then
	ok "the simulator runs it (--load)"
else
	no "the simulator runs it (--load)"
fi
"$CTASIM" run --backend cuda --load ./libsquare.so square --arg n=100000 --trace hw.trace >out 2>err
rc=$?
if [ $rc -eq 2 ] && grep -q "no CUDA GPU found" err; then
	ok "no GPU here: --backend cuda exits 2 and says so"
elif [ $rc -eq 0 ] && grep -q "result      PASS" out && grep -q "(cuda backend)" out &&
	grep -q '^#backend cuda' hw.trace; then
	ok "the GPU runs it (--backend cuda --load): PASS, a cuda trace"
	sed 's/^/# /' out
	# Hardware as A, the simulator as B: diff's own convention. Exit 0 or
	# 1 (within or beyond tolerance) both mean it compared; the coverage
	# of both sides must be exact.
	"$CTASIM" diff hw.trace sim.trace >out 2>err
	drc=$?
	sed 's/^/# /' out
	if [ $drc -le 1 ] && grep -q "coverage        A ok" out && grep -q "^ *B ok" out &&
		grep -q "A: hw.trace (hardware" out; then
		ok "ctasim diff of its GPU and simulator traces (exit $drc)"
	else
		no "ctasim diff of its GPU and simulator traces (exit $drc)"
	fi
else
	no "--backend cuda --load: exit $rc"
fi
echo "1..$n"
exit $bad
