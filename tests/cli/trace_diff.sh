#!/bin/sh
# `ctasim diff`: exit 0 within tolerance, 1 outside, 2 for traces that cannot
# be compared or cannot be read; --json is valid JSON with the verdict.
. "$(dirname "$0")/trace_fixture.sh"

write_fixture "$TMP/a.trace"
expect_rc 0 "$CTASIM" diff "$TMP/a.trace" "$TMP/a.trace"
expect_in "$TMP/out" "verdict: within tolerance"
expect_in "$TMP/out" "(first block start to last block end)"
expect_in "$TMP/out" "launch latency    A "

# Kernel 1's blocks swap SMs: placement disagrees, the rest does not.
write_fixture "$TMP/b.trace" 's/^2600,start,1,0,0,2,/2600,start,1,0,0,3,/; s/^2610,start,1,1,1,3,/2610,start,1,1,1,2,/; s/^3600,end,1,0,0,2,/3600,end,1,0,0,3,/; s/^3700,end,1,1,1,3,/3700,end,1,1,1,2,/'
expect_rc 1 "$CTASIM" diff "$TMP/a.trace" "$TMP/b.trace"
expect_in "$TMP/out" "verdict: OUTSIDE tolerance: first_wave"
expect_rc 0 "$CTASIM" diff "$TMP/a.trace" "$TMP/b.trace" --tol-first-wave 0
expect_rc 0 "$CTASIM" diff "$TMP/a.trace" "$TMP/b.trace" --tol-first-wave=0

if [ -n "$PYTHON" ]; then
	expect_rc 1 "$CTASIM" diff --json "$TMP/a.trace" "$TMP/b.trace"
	"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["within"] is False and d["outside"] == ["first_wave"], d["outside"]
k = d["kernels"][1]
assert k["first_wave_n"] == [2, 2] and k["first_wave_same"] == 0, k
assert d["kernels"][0]["coverage"][0]["ok"] is True
assert len(d["launch_offset_ns"]) == 2, d
' "$TMP/out" || fail "diff JSON checks"
fi

# Different launch configs cannot be compared.
write_fixture "$TMP/c.trace" 's/grid=6,1,1/grid=7,1,1/'
expect_rc 2 "$CTASIM" diff "$TMP/a.trace" "$TMP/c.trace"
expect_in "$TMP/err" "ctasim diff: $TMP/a.trace vs $TMP/c.trace: different launch configs: kernel 0 (steal_kernel) grid is 6,1,1 in A, 7,1,1 in B"

# A lost block breaks coverage and the verdict.
write_fixture "$TMP/d.trace" '/^2400,steal,0,5/d'
expect_rc 1 "$CTASIM" diff "$TMP/a.trace" "$TMP/d.trace"
expect_in "$TMP/out" "VIOLATED (1 lost, 0 duplicated, 0 out of range)"

expect_rc 2 "$CTASIM" diff "$TMP/a.trace" "$TMP/a.trace" --tol-order -1
expect_in "$TMP/err" "ctasim diff: --tol-order '-1': out of range [0, 1]"
expect_rc 2 "$CTASIM" diff "$TMP/a.trace"

# Streamed: a trace on stdin ('-') gives the same verdict and numbers, and
# a malformed line after good records still fails the whole diff.
expect_rc 1 sh -c '"$1" diff - "$2" < "$3"' sh "$CTASIM" "$TMP/d.trace" "$TMP/a.trace"
expect_in "$TMP/out" "A: - (simulator)"
expect_in "$TMP/out" "VIOLATED (1 lost, 0 duplicated, 0 out of range)"
write_fixture "$TMP/e.trace" 's/^2400,steal,0,5,.*/2400,steal,0,x/'
expect_rc 2 "$CTASIM" diff "$TMP/a.trace" "$TMP/e.trace"
expect_in "$TMP/err" "ctasim diff: $TMP/e.trace:"

# Sides are labelled from the headers' backends, and ratios say which over
# which (traces/FORMAT.md, "Measures").
write_fixture "$TMP/hw.trace" 's/^#backend sim$/#backend cuda/'
expect_rc 0 "$CTASIM" diff "$TMP/hw.trace" "$TMP/a.trace"
expect_in "$TMP/out" "A: $TMP/hw.trace (hardware)"
expect_in "$TMP/out" "B: $TMP/a.trace (simulator)"
expect_in "$TMP/out" "ratio B/A (simulator/hardware)"
expect_in "$TMP/out" "B-A (simulator-hardware)"
expect_in "$TMP/out" "makespan          A "
expect_rc 0 "$CTASIM" diff "$TMP/hw.trace" "$TMP/a.trace" --json
expect_in "$TMP/out" '"sides":["hardware","simulator"]'
expect_in "$TMP/out" '"busy_span_ratio":1'
finish
