#!/usr/bin/env python3
"""Measures how closely the simulator matches the recorded H100 traces.

Calibrates a device model on the first run of each recorded placement grid
(`ctasim calibrate`), then simulates every held-out trace (runs 2 and 3 of
the same grids; and, with a model fitted without them, grids of 33 and 132
blocks) with the same kernel and launch, and compares the two with
`ctasim diff --json`: first-wave SM placement agreement, makespan ratio
(first block start to last block end) and the hardware's launch-to-first-
start latency, which diff reports but does not compare. The calibration also
fits the duration model: every placement block spins 20 us once
(`--block-ns spin=20000`), and run 1 of the two hardware scenarios, given
with `--duration-trace` so that they feed the duration model only, adds
blocks of 200, 50 and 10 us (`--block-ns first=200000` ...): with two or
more requested times at a resident count, spin_scale and spin_add are
fitted apart. The same model then runs the scenarios, and their block starts
per 20 us bin are compared with runs 1-3. Prints a Markdown report
(docs/FIDELITY.md quotes it).

Usage: tools/fidelity.py CTASIM TRACE_DIR
TRACE_DIR holds the traces of traces/reference/h100 and of its scenarios/
subfolder (gunzipped, in one folder).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ct, tdir = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="ctasim-fidelity-")


def sh(*args):
    return subprocess.run(args, capture_output=True, text=True)


def placement_args(name):
    m = re.match(r"placement_(natural|onepersm)_g(\d+)", name)
    kind, g = m.group(1), int(m.group(2))
    args = ["spin", "--arg", f"grid={g}", "--arg", "ns=20000"]
    if kind == "onepersm":
        args += ["--arg", "smem=200000"]
    return args


def approach_args(name):
    m = re.match(r"(vecscale_\w+?)_(none|one_in_seven)$", name)
    return [m.group(1), "--arg", "n=1048576", "--arg", "ns=2", "--arg",
            "prologue_ns=2000", "--arg", f"imbalance={m.group(2)}"]


QUANTILE = os.environ.get("FIDELITY_QUANTILE", "0.99")  # calibrate's default


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCEN_DIR = os.path.join(REPO, "traces", "reference", "scenarios")
SCENARIOS = ["hw_priority_takeover", "hw_fifo_leftover"]
# What each kernel's blocks ask for with their one cta_spin_ns call (the
# scenario files' ns; the placement kernel is `spin`, 20 us).
SPIN_NS = {"spin": 20000}
for sc in SCENARIOS:
    for k in json.load(open(os.path.join(SCEN_DIR, sc + ".json")))["kernels"]:
        SPIN_NS[k["label"]] = k["args"]["ns"]


def calibrate(model, traces):
    args = []
    for name, ns in sorted(SPIN_NS.items()):
        args += ["--block-ns", f"{name}={ns}"]
    for sc in SCENARIOS:
        t = os.path.join(tdir, sc + ".r1.trace")
        if os.path.exists(t):
            args += ["--duration-trace", t]
    r = sh(ct, "calibrate", *traces, "-o", model, "--base", "H100-SXM",
           *args, "--duration-quantile", QUANTILE)
    if r.returncode:
        sys.exit("calibrate failed: " + r.stderr)


def compare(model, trace, args):
    out = os.path.join(work, "sim.trace")
    r = sh(ct, "run", *args, "--device", model, "--trace", out, "--quiet")
    if r.returncode:
        return None
    d = sh(ct, "diff", "--json", trace, out)
    try:
        j = json.loads(d.stdout)
    except ValueError:
        return None
    k = j["kernels"][0]
    return (k["first_wave_same"], k["first_wave_n"][0], j["makespan_ratio"],
            j["launch_offset_ns"][0])


names = sorted({re.sub(r"\.r\d\.trace$", "", f) for f in os.listdir(tdir)
                if f.endswith(".trace")})
placement = [n for n in names if n.startswith("placement_")]
approaches = [n for n in names if n.startswith("vecscale_")]

model_all = os.path.join(work, "h100_r1.model")
calibrate(model_all, [os.path.join(tdir, n + ".r1.trace") for n in placement])
held_sizes = {"33", "132"}
model_part = os.path.join(work, "h100_partial.model")
calibrate(model_part, [os.path.join(tdir, n + ".r1.trace") for n in placement
                       if re.search(r"_g(\d+)$", n).group(1) not in held_sizes])


def table(title, rows):
    print(f"\n### {title}\n")
    print("| trace | first wave on the same SM | makespan sim/hw | hw launch to first start |")
    print("|---|---|---|---|")
    same = total = 0
    worst = 0.0
    by_class = {}
    for name, res in rows:
        if res is None:
            print(f"| {name} | run failed | | |")
            continue
        s, n, ratio, launch = res
        same += s
        total += n
        worst = max(worst, abs(ratio - 1))
        cls = re.sub(r"_g\d+\.r\d$", "", name)
        cls = re.sub(r"\.r\d$", "", cls)
        if name.startswith("placement_"):
            g = int(re.search(r"_g(\d+)", name).group(1))
            cls += " (one wave)" if g <= 132 else f" ({g} blocks)"
        by_class[cls] = max(by_class.get(cls, 0.0), abs(ratio - 1))
        print(f"| {name} | {s}/{n} | {ratio:.3f} | {launch / 1000:.1f} us |")
    share = same / total if total else 0
    print(f"\nall: {same}/{total} first-wave blocks on the same SM ({100 * share:.2f}%), "
          f"worst makespan error {100 * worst:.1f}%\n")
    print("| workload | worst makespan error |")
    print("|---|---|")
    for cls in sorted(by_class):
        print(f"| {cls} | {100 * by_class[cls]:.1f}% |")
    return share, worst


print("## Held-out runs (model fitted on run 1 of every grid)")
rows = []
for n in placement:
    for rep in (2, 3):
        t = os.path.join(tdir, f"{n}.r{rep}.trace")
        if os.path.exists(t):
            rows.append((f"{n}.r{rep}", compare(model_all, t, placement_args(n))))
table("Placement grids, spin kernel (20 us per block)", rows)

rows = []
for n in placement:
    if re.search(r"_g(\d+)$", n).group(1) in held_sizes:
        for rep in (1, 2, 3):
            t = os.path.join(tdir, f"{n}.r{rep}.trace")
            rows.append((f"{n}.r{rep}", compare(model_part, t, placement_args(n))))
print("\n## Held-out grid sizes (model fitted without grids of 33 and 132 blocks)")
table("Grids of 33 and 132 blocks", rows)

rows = []
for n in approaches:
    for rep in (1, 2, 3):
        t = os.path.join(tdir, f"{n}.r{rep}.trace")
        if os.path.exists(t):
            rows.append((f"{n}.r{rep}", compare(model_all, t, approach_args(n))))
print("\n## The guide's three approaches (the same model: placement and scenario run 1 only)")
table("vecscale kernels, 1M elements, 2 ns per element, 2 us prologue", rows)


def start_bins(path, bin_ns=20000):
    """Block starts per bin, per kernel, from the trace's first start."""
    t0, starts = None, {}
    for line in open(path):
        if line.startswith("#") or line.startswith("t_ns"):
            continue
        f = line.split(",")
        if f[1] == "start":
            t = int(f[0])
            t0 = t if t0 is None else min(t0, t)
            starts.setdefault(f[2], []).append(t)
    out = []
    for k in sorted(starts):
        h = {}
        for t in starts[k]:
            h[(t - t0) // bin_ns] = h.get((t - t0) // bin_ns, 0) + 1
        out.append(f"k{k}: " + " ".join(f"{b * bin_ns // 1000}us:{n}" for b, n in sorted(h.items())))
    return "   ".join(out)


print("\n## Scenarios, block starts per 20 us bin (the same model as above)\n")
print("| scenario | run | block starts per bin | same as sim |")
print("|---|---|---|---|")
for sc in SCENARIOS:
    spec = json.load(open(os.path.join(SCEN_DIR, sc + ".json")))
    spec["device"] = model_all
    js = os.path.join(work, sc + ".json")
    json.dump(spec, open(js, "w"))
    simt = os.path.join(work, sc + ".sim.trace")
    r = sh(ct, "scenario", js, "--trace", simt, "--quiet")
    if r.returncode:
        print(f"| {sc} | sim | run failed: {r.stderr.strip()} | |")
        continue
    sim = start_bins(simt)
    print(f"| {sc} | sim | {sim} | |")
    for rep in (1, 2, 3):
        t = os.path.join(tdir, f"{sc}.r{rep}.trace")
        if os.path.exists(t):
            hw = start_bins(t)
            held = "" if rep > 1 else " (calibrated on)"
            print(f"| {sc} | r{rep}{held} | {hw} | {'yes' if hw == sim else 'NO'} |")
