#!/bin/sh
# `ctasim import-cse`: a simulator trace written out in
# cuda_scheduling_examiner's JSON log format (seconds, block_times pairs,
# block_smids, cuda_launch_times) imports back into a trace that `diff`
# finds identical in every measure; two files become two streams; bad logs
# are refused naming file, line and field.
. "$(dirname "$0")/trace_fixture.sh"
[ -n "$PYTHON" ] || { echo "python3 not found: skipped"; exit 77; }

expect_rc 0 "$CTASIM" run saxpy --arg n=153600 --arg ns=10 --trace "$TMP/sim.trace"

# One log per trace, as cuda_scheduling_examiner writes per benchmark: times
# in seconds from an arbitrary base, a blank first entry, a CPU-times entry.
"$PYTHON" - "$TMP/sim.trace" "$TMP/a.json" 1000.5 <<'PY' || fail "writing the cse log"
import json, sys
recs, kern = [], {}
for line in open(sys.argv[1]):
    if line.startswith("#kernel "):
        f = dict(p.split("=", 1) for p in line.split()[2:])
        kern[int(line.split()[1])] = f
    elif line[0].isdigit():
        recs.append(line.rstrip("\n").split(","))
base = float(sys.argv[3])
times = [{}, {"cpu_times": [base, base + 1], "copy_in_times": [base, base],
              "execute_times": [base, base + 1], "copy_out_times": [base + 1, base + 1]}]
for k, f in sorted(kern.items()):
    n = int(f["grid"].split(",")[0])
    bt, sm = [0.0] * (2 * n), [0] * n
    launch = None
    for r in recs:
        if r[2] != str(k):
            continue
        t = base + int(r[0]) * 1e-9
        if r[1] == "launch":
            launch = t
        elif r[1] == "start":
            bt[2 * int(r[3])], sm[int(r[3])] = t, int(r[5])
        elif r[1] == "end":
            bt[2 * int(r[4]) + 1] = t
    times.append({"kernel_name": f["name"], "block_count": n,
                  "thread_count": int(f["block"].split(",")[0]), "shared_memory": 0,
                  "cuda_launch_times": [launch, launch + 5e-6, 0],
                  "block_times": bt, "block_smids": sm, "cpu_core": 3})
json.dump({"scenario_name": "t", "benchmark_name": "saxpy", "label": "", "times": times},
          open(sys.argv[2], "w"), indent=1)
PY
expect_rc 0 "$CTASIM" import-cse "$TMP/a.json" -o "$TMP/imp.trace.gz" --device "NVIDIA H100 80GB HBM3"
expect_in "$TMP/out" "imported    1 file: 1 kernel, 600 blocks"
expect_rc 0 "$CTASIM" diff "$TMP/imp.trace.gz" "$TMP/sim.trace"
expect_in "$TMP/out" "A: $TMP/imp.trace.gz (hardware)"
expect_in "$TMP/out" "ratio B/A (simulator/hardware) 1.000"
grep -q "first wave      A \([0-9]*\), B \1 blocks, \1 on the same SM: 1.000" "$TMP/out" || fail "first wave differs"
expect_in "$TMP/out" "start order     Spearman 1.0000"
expect_in "$TMP/out" "verdict: within tolerance"
expect_rc 0 "$CTASIM" view "$TMP/imp.trace.gz" -o "$TMP/imp.svg"
# Two files: two streams, one kernel each.
cp "$TMP/a.json" "$TMP/b.json"
expect_rc 0 "$CTASIM" import-cse "$TMP/a.json" "$TMP/b.json" -o "$TMP/two.trace"
expect_in "$TMP/out" "2 files: 2 kernels, 1200 blocks"
grep -q "^#kernel 1 name=saxpy .* stream=1 " "$TMP/two.trace" || fail "second file is not stream 1"
# Bad input: file, line and field named, exit 2.
"$PYTHON" - "$TMP/a.json" "$TMP/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["times"][2]["block_smids"].pop()
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
expect_rc 2 "$CTASIM" import-cse "$TMP/bad.json" -o "$TMP/x.trace"
expect_in "$TMP/err" "bad.json:"
expect_in "$TMP/err" "field 'times[2].block_smids': 599 SM ids for 600 blocks"
[ ! -e "$TMP/x.trace" ] || fail "a refused import left a trace"
echo '{"times": [{}]}' >"$TMP/empty.json"
expect_rc 2 "$CTASIM" import-cse "$TMP/empty.json" -o "$TMP/x.trace"
expect_in "$TMP/err" "no kernel entries"
expect_rc 2 "$CTASIM" import-cse "$TMP/none.json" -o "$TMP/x.trace"
expect_in "$TMP/err" "none.json"
expect_rc 2 "$CTASIM" import-cse "$TMP/a.json"
expect_in "$TMP/err" "usage: ctasim import-cse"
finish
