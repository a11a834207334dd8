#!/bin/sh
# `ctasim view`: the SVG is well-formed XML with a rectangle per block, a
# hatched overlay per stolen index, failure and UB markers, axis and legend.
. "$(dirname "$0")/trace_fixture.sh"
[ -n "$PYTHON" ] || { echo "python3 not found: skipped"; exit 77; }

write_fixture "$TMP/a.trace"
expect_rc 0 "$CTASIM" view "$TMP/a.trace" -o "$TMP/a.svg" --title 'fixture <&> "title"'
"$PYTHON" - "$TMP/a.svg" <<'PY' || fail "SVG checks"
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
rects = root.iter(ns + "rect")
cls = [r.get("class", "") for r in root.iter(ns + "rect")]
blocks = [c for c in cls if c.startswith("c")]
# 6 blocks plus one legend swatch per kernel and one under the steal legend.
assert len(blocks) == 6 + 2 + 1, cls
assert cls.count("steal") == 2 + 1, cls
paths = [p.get("class") for p in root.iter(ns + "path")]
assert paths.count("fail") == 1 + 1, paths    # the injected failure + legend
assert paths.count("empty") == 3 + 1, paths   # three fail_empty + legend
assert paths.count("ub") == 1 + 1, paths
texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
assert 'fixture <&> "title"' in texts, texts[:3]
assert "SM 0" in texts and "SM 3" in texts, texts
assert any(t.endswith(" ns") or t.endswith("µs") for t in texts), texts
assert any('odd "name", here' in t for t in texts), texts
PY
if command -v rsvg-convert >/dev/null; then
	rsvg-convert -o "$TMP/a.png" "$TMP/a.svg" || fail "rsvg-convert could not render the SVG"
	[ -s "$TMP/a.png" ] || fail "empty PNG"
fi
# The axis starts at the first block dispatch; the header states the
# measures of traces/FORMAT.md.
expect_in "$TMP/a.svg" "time from the first block dispatch"
expect_in "$TMP/a.svg" "makespan "
# 8 and 148 SMs, and past 20000 blocks lanes aggregated into slot shares:
# the picture stays small and renders.
for dev in "--sm-limit 8" "--device B200"; do
	# shellcheck disable=SC2086
	expect_rc 0 "$CTASIM" run saxpy --arg n=65536 --arg ns=20 $dev --trace "$TMP/s.trace"
	expect_rc 0 "$CTASIM" view "$TMP/s.trace" -o "$TMP/s.svg"
	[ "$(grep -c '<rect[^>]*class="c[0-9]' "$TMP/s.svg")" -ge 256 ] || fail "$dev: blocks missing"
	if command -v rsvg-convert >/dev/null; then
		rsvg-convert -o "$TMP/s.png" "$TMP/s.svg" || fail "$dev: rsvg-convert failed"
	fi
done
# saxpy on 148 SMs with the B200 model's zero-length blocks: drawn as
# slot shares, each block 2 px wide, and said so; not an empty picture.
expect_rc 0 "$CTASIM" run saxpy --device B200 --trace "$TMP/z.trace"
expect_rc 0 "$CTASIM" view "$TMP/z.trace" -o "$TMP/z.svg"
expect_in "$TMP/z.svg" "4096 of 4096 blocks last"
expect_in "$TMP/z.svg" "each lane shows the share of its slots in use"
[ "$(grep -c '<rect[^>]*class="c[0-9]' "$TMP/z.svg")" -ge $((148 * 4)) ] ||
	fail "zero-length blocks: fewer bars than 4 waves on 148 SMs"
# The plot stays within about 1200 px for 148 lanes.
h=$(sed -n 's/.*<svg[^>]* height="\([0-9]*\)".*/\1/p' "$TMP/z.svg")
[ "$h" -le 1400 ] || fail "148 SMs: picture $h px high"
# Lanes per TPC and per GPC (the B200 preset's topology).
expect_rc 0 "$CTASIM" view "$TMP/z.trace" -o "$TMP/t.svg" --lanes tpc
expect_in "$TMP/t.svg" "one lane per TPC (74 lanes)"
expect_in "$TMP/t.svg" ">TPC 72<"
expect_rc 0 "$CTASIM" view "$TMP/z.trace" -o "$TMP/g.svg.gz" --lanes gpc
gzip -dc "$TMP/g.svg.gz" >"$TMP/g.svg" || fail "view -o x.svg.gz is not gzip"
expect_in "$TMP/g.svg" "one lane per GPC (8 lanes)"
expect_in "$TMP/g.svg" ">GPC 7<"
# A device that is no preset has no known GPCs: refused, nothing written.
sed 's/^#device .*/#device Some GPU/' "$TMP/z.trace" >"$TMP/u.trace"
expect_rc 2 "$CTASIM" view "$TMP/u.trace" -o "$TMP/u.svg" --lanes gpc
expect_in "$TMP/err" "--lanes gpc: the trace's device 'Some GPU' is not a device preset"
[ -e "$TMP/u.svg" ] && fail "--lanes gpc refused but wrote a file"
expect_rc 2 "$CTASIM" view "$TMP/u.trace" -o "$TMP/u.svg" --lanes per-sm
expect_in "$TMP/err" "--lanes 'per-sm': expected auto, sm, tpc or gpc"
# 300 SMs (an unknown device): lanes of 5 px would not fit, so auto takes
# one per TPC of 2 SMs.
"$PYTHON" - "$TMP/u.trace" "$TMP/w.trace" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
head = [l for l in lines if l.startswith("#") and not l.startswith(("#end", "#incomplete"))]
cols = [l for l in lines if l.startswith("t_ns,")]
recs = []
for sm in range(300):
    recs.append("%d,start,0,%d,%d,%d,-,0," % (100 + sm, sm, sm, sm))
for sm in range(300):
    recs.append("%d,end,0,%d,%d,%d,-,0," % (5000 + sm, sm, sm, sm))
with open(sys.argv[2], "w") as f:
    f.write("\n".join(head + cols + recs) + "\n#end records=%d\n" % len(recs))
PY
expect_rc 0 "$CTASIM" view "$TMP/w.trace" -o "$TMP/w.svg"
expect_in "$TMP/w.svg" "one lane per TPC (150 lanes, 2 SMs each)"
expect_rc 0 "$CTASIM" view "$TMP/w.trace" -o "$TMP/w.svg" --lanes sm
expect_in "$TMP/w.svg" ">SM 296<"
# Blocks of equal times (no issue gate: its held blocks start their work
# at other times than the rest), so that runs of equal columns are long.
printf 'base = H100-SXM\nspin_gate_threads = 0\n' > "$TMP/nogate.model"
expect_rc 0 "$CTASIM" run saxpy --arg n=5373952 --arg ns=5 --timing-only --device "$TMP/nogate.model" --trace "$TMP/big.trace.zst"
expect_rc 0 "$CTASIM" view "$TMP/big.trace.zst" -o "$TMP/big.svg"
expect_in "$TMP/big.svg" "20992 blocks: each lane shows the share of its slots in use"
n=$(grep -c '<rect[^>]*class="c[0-9]' "$TMP/big.svg")
[ "$n" -lt 20992 ] || fail "aggregated SVG has $n block rectangles"
[ "$(wc -c <"$TMP/big.svg")" -lt 4000000 ] || fail "aggregated SVG over 4 MB"
# A trace of over a million lines shows a progress line while it is parsed
# (forced: stderr is not a terminal here).
"$PYTHON" - "$TMP/a.trace" "$TMP/long.trace" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
head = [l for l in lines if l.startswith("#") and not l.startswith(("#end", "#incomplete"))]
cols = [l for l in lines if l.startswith("t_ns,")]
n = 1100000
with open(sys.argv[2], "w") as f:
    f.write("\n".join(head + cols) + "\n")
    f.write("0,kernel_end,0,-,-,-,-,0,\n" * n)
    f.write("#end records=%d\n" % n)
PY
CTASIM_PROGRESS=1 "$CTASIM" view "$TMP/long.trace" -o "$TMP/long.svg" >"$TMP/out" 2>"$TMP/err" ||
	fail "view of a long trace failed: $(head -c 300 "$TMP/err")"
grep -q "MiB parsed.*ETA" "$TMP/err" || fail "no progress line while a long trace is parsed"
"$CTASIM" view "$TMP/long.trace" -o "$TMP/long.svg" >"$TMP/out" 2>"$TMP/err"
[ -s "$TMP/err" ] && fail "progress shown when stderr is not a terminal"
# --summary: one streaming pass; its measures are diff's and run's.
expect_rc 0 "$CTASIM" run vecscale_clc --trace "$TMP/c.trace.gz"
expect_rc 0 "$CTASIM" view "$TMP/c.trace.gz" --summary
cp "$TMP/out" "$TMP/sum"
expect_in "$TMP/sum" "records        3602: 1 launch, 264 dispatch, 264 start, 264 end, 1024 cancel, 1024 cancel_done, 760 steal, 1 kernel_end"
expect_in "$TMP/sum" "kernel 0       vecscale_clc  grid 1024,1,1  block 1024,1,1  stream 0  priority 0: 264 blocks started, 760 steals"
expect_in "$TMP/sum" "blocks per SM  min 2 / median 2 / max 2 over 132 SMs used"
expect_in "$TMP/sum" "cancels        1024 requests, 760 stole a block, 264 fail_empty"
expect_rc 0 "$CTASIM" diff "$TMP/c.trace.gz" "$TMP/c.trace.gz"
for m in "busy span" "makespan" "launch latency"; do
	d=$(grep "^$m  *A " "$TMP/out" | sed 's/.* A \([0-9]*\) ns.*/\1/')
	v=$(grep "^$m  *[0-9]" "$TMP/sum" | sed 's/^[a-z ]* \([0-9]*\) ns.*/\1/')
	[ -n "$d" ] && [ "$d" = "$v" ] || fail "view --summary $m '$v', diff says '$d'"
done
# run prints the makespan the trace's records give (one meaning per word).
expect_rc 0 "$CTASIM" run vecscale_clc --trace "$TMP/m.trace"
r=$(grep "^makespan" "$TMP/out" | sed 's/^makespan *\([0-9]*\) ns.*/\1/')
expect_rc 0 "$CTASIM" view "$TMP/m.trace" --summary
v=$(grep "^makespan" "$TMP/out" | sed 's/^makespan *\([0-9]*\) ns.*/\1/')
[ -n "$r" ] && [ "$r" = "$v" ] || fail "run says makespan '$r', view --summary '$v'"
expect_rc 2 "$CTASIM" view "$TMP/c.trace.gz" --summary -o "$TMP/x.txt"
expect_in "$TMP/err" "--summary prints to standard output"
sed '$d' "$TMP/a.trace" >"$TMP/cut.trace"
expect_rc 2 "$CTASIM" view "$TMP/cut.trace" --summary
expect_in "$TMP/err" "cut.trace:"
expect_rc 2 "$CTASIM" view "$TMP/a.trace"
expect_in "$TMP/err" "usage: ctasim view"
expect_rc 2 "$CTASIM" view "$TMP/a.trace" -o "$TMP/b.svg" --width abc
expect_in "$TMP/err" "ctasim view: --width 'abc': not an integer"
finish
