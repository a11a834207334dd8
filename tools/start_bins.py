#!/usr/bin/env python3
"""Block starts per time bin, per kernel, for two or more traces (times from
each trace's first block start, as `ctasim diff` measures: the host's launch
latency is not the scheduler's doing). Usage: start_bins.py BIN_NS TRACE..."""
import sys

bin_ns = int(sys.argv[1])
for path in sys.argv[2:]:
    t0, bins = None, {}
    for line in open(path):
        if line.startswith("#") or line.startswith("t_ns"):
            continue
        f = line.split(",")
        t, ev, k = int(f[0]), f[1], f[2]
        if ev == "start":
            t0 = t if t0 is None else min(t0, t)
            bins.setdefault(k, []).append(t)
    out = []
    for k in sorted(bins):
        h = {}
        for t in bins[k]:
            b = (t - t0) // bin_ns
            h[b] = h.get(b, 0) + 1
        out.append(f"k{k}: " + " ".join(f"{b * bin_ns // 1000}us:{n}" for b, n in sorted(h.items())))
    print(path.split("/")[-1] + "\n  " + "\n  ".join(out))
