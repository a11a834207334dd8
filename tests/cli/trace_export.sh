#!/bin/sh
# `ctasim export --perfetto`: the output is JSON a real parser accepts, with
# one complete event per block, stolen indices nested inside their block,
# instant events for cancels/UB, and a named track for every slice.
. "$(dirname "$0")/trace_fixture.sh"
[ -n "$PYTHON" ] || { echo "python3 not found: skipped"; exit 77; }

write_fixture "$TMP/a.trace"
for group in gpu kernel; do
	expect_rc 0 "$CTASIM" export --perfetto "$TMP/a.trace" -o "$TMP/$group.json" --group $group
	"$PYTHON" - "$TMP/$group.json" "$group" <<'PY' || fail "perfetto JSON checks ($group)"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
group = sys.argv[2]
ev = d["traceEvents"]
assert "displayTimeUnit" not in d  # Perfetto has read it as the unit of ts
X = [e for e in ev if e["ph"] == "X"]
blocks = [e for e in X if e["cat"] == "block"]
stolen = [e for e in X if e["cat"] == "steal"]
inst = [e for e in ev if e["ph"] == "i"]
assert len(blocks) == 6, len(blocks)
assert len(stolen) == 2, len(stolen)
assert len(inst) == 17, len(inst)
names = {e["name"] for e in blocks}
assert names == {"steal_kernel", 'odd "name", here'}, names
for e in X:
    for k in ("pid", "tid", "ts", "dur"):
        assert k in e, (k, e)
    assert e["dur"] >= 0
# A stolen slice lies inside the block slice on the same track.
for s in stolen:
    parents = [b for b in blocks if b["pid"] == s["pid"] and b["tid"] == s["tid"]
               and b["ts"] <= s["ts"] and s["ts"] + s["dur"] <= b["ts"] + b["dur"] + 1e-9]
    assert len(parents) == 1, s
# Block 0 of kernel 0 ran 1000..3300 ns = 1.0..3.3 us on SM 0.
b0 = [b for b in blocks if b["args"]["kernel"] == 0 and b["args"]["phys"] == 0][0]
assert abs(b0["ts"] - 1.0) < 1e-9 and abs(b0["dur"] - 2.3) < 1e-9, b0
assert b0["args"]["sm"] == 0 and b0["args"]["steals"] == 1
# Every track with slices has a name.
named = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
for e in X:
    assert (e["pid"], e["tid"]) in named, e
pids = {e["pid"] for e in blocks}
assert pids == ({1} if group == "gpu" else {1, 2}), pids
ub = [e for e in inst if e["name"] == "UB"][0]
assert ub["args"]["rule"].startswith('read_failed_result, "quoted"'), ub
assert "ünïcode" in ub["args"]["rule"]
fails = [e for e in inst if e["name"].startswith("cancel fail")]
assert len(fails) == 4, fails
# Arguments are named for what they hold.
launch = [e for e in inst if e["name"] == "launch"]
assert {e["args"]["priority"] for e in launch} == {0, -1}, launch
assert {e["args"]["stream"] for e in launch} == {0, 1}, launch
assert all("arg" not in e["args"] and "code" not in e["args"] for e in launch), launch
done = [e for e in inst if e["name"] == "cancel success"]
assert sorted(e["args"]["stolen_block"] for e in done) == [4, 5], done
assert all(e["args"]["outcome"] == "success" for e in done), done
assert all(e["args"]["kernel_name"] == "steal_kernel" for e in done), done
# A flow arrow from each successful cancel request to the stolen slice.
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
assert len(starts) == 2 and starts.keys() == ends.keys(), (starts, ends)
req_ts = sorted(e["ts"] for e in inst if e["name"] == "cancel")
for i, s in starts.items():
    f = ends[i]
    assert f["bp"] == "e" and s["cat"] == f["cat"] == "flow"
    assert s["ts"] in req_ts, s
    assert any(x["tid"] == f["tid"] and x["pid"] == f["pid"] and abs(x["ts"] - f["ts"]) < 1e-9
               for x in stolen), f
PY
done

# A .gz or .zst name is compressed, with the same JSON inside.
expect_rc 0 "$CTASIM" export --perfetto "$TMP/a.trace" -o "$TMP/gpu.json.gz"
gzip -dc "$TMP/gpu.json.gz" | cmp -s - "$TMP/gpu.json" || fail "export -o x.json.gz: not the gzip of the JSON"
if command -v zstd >/dev/null; then
	expect_rc 0 "$CTASIM" export --perfetto "$TMP/a.trace" -o "$TMP/gpu.json.zst"
	zstd -dcq "$TMP/gpu.json.zst" | cmp -s - "$TMP/gpu.json" || fail "export -o x.json.zst: not zstd"
fi
# Standard output works too, and the output depends only on the trace.
expect_rc 0 "$CTASIM" export --perfetto "$TMP/a.trace"
cmp -s "$TMP/out" "$TMP/gpu.json" || fail "stdout export differs from file export"
finish
