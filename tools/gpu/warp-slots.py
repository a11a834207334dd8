#!/usr/bin/env python3
# Where the warps of the register-heavy spin's blocks went, from traces
# recorded with CTASIM_CUDA_WARPS=1 (each start's arg: the mask of its warp
# slots; docs/FIDELITY.md, *Where a later block's warps go*), and how many
# later blocks waited. Usage: warp-slots.py TRACE...
# Per trace: the warps a block, the highest slot taken, the largest
# difference over the SMs between the warps an SM put on its fullest and
# its emptiest sub-partition (slot mod 4) summed over the run, how many
# later-wave starts (past the first µs) took the sub-partitions the SM's
# turn gives (the p-th block on an SM, by start order, of w warps: warp i
# on (p·w + i + o) mod 4, o the SM's best), and of the later-wave blocks,
# by the warps on the fullest of their own sub-partitions (their own and
# those of the blocks running there 3 µs past their start), how many
# outlasted their time (the `ns` of the name, 20000 without one) by more
# than 3 µs. Traces without masks print the waits alone: the later
# blocks that waited and the SMs' resident blocks, time-weighted up to
# each SM's last end. Every trace then prints, of the later blocks that
# fill one of their sub-partitions (by the slots where recorded, else by
# the SM's turn from its first sub-partition), how many waited by how long
# before them the last of the blocks running on the filled ones began
# (below 0.2 µs, 0.2-0.7, 0.7-1, 1 and more). Every 7th block of a
# `mixed` trace is left out of the waits (its time is 4x).
import collections
import gzip
import re
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    st, en, sm, arg, block = {}, {}, {}, {}, None
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("#kernel"):
                for kv in line.split()[2:]:
                    k, v = kv.split("=", 1)
                    if k == "block":
                        block = [int(x) for x in v.split(",")]
                continue
            if line.startswith("#"):
                continue
            p = line.rstrip("\n").split(",")
            if p[1] == "start":
                b = int(p[3])
                st[b], sm[b] = int(p[0]), int(p[5])
                arg[b] = None if p[6] == "-" else int(p[6])
            elif p[1] == "end":
                en[int(p[3])] = int(p[0])
    return st, en, sm, arg, block


def slots(m):
    return [i for i in range(64) if m >> i & 1]


def report(path):
    st, en, sm, arg, block = load(path)
    nw = (block[0] * block[1] * block[2] + 31) // 32
    m = re.search(r"ns(\d+)", path.rsplit("/", 1)[-1])
    ns = int(m.group(1)) if m else 20000
    mixed = "mixed" in path.rsplit("/", 1)[-1]
    t0 = min(st.values())
    bysm = collections.defaultdict(list)
    for b in st:
        bysm[sm[b]].append(b)
    masks = all(a is not None for a in arg.values())
    name = path.rsplit("/", 1)[-1]
    later = [b for b in st if st[b] - t0 >= 1000 and not (mixed and b % 7 == 0)]
    waited = [b for b in later if en[b] - st[b] > ns + 3000]
    resw = tot = 0
    for bl in bysm.values():
        ev = sorted([(st[b], 1) for b in bl] + [(en[b], -1) for b in bl])
        r, last = 0, ev[0][0]
        for t, d in ev:
            resw += r * (t - last)
            last, r = t, r + d
        tot += ev[-1][0] - ev[0][0]
    line = "%s: %d warps, %d of %d later blocks waited, %.2f resident" % (
        name, nw, len(waited), len(later), resw / tot)
    ages = [[0, 0] for _ in range(4)]
    for bl in bysm.values():
        order = sorted(bl, key=lambda b: (st[b], b))
        sps = {}
        for p, b in enumerate(order):
            sps[b] = ([x % 4 for x in slots(arg[b])] if masks else
                      [(p * nw + i) % 4 for i in range(nw)])
        for b in bl:
            if st[b] - t0 < 1000 or (mixed and b % 7 == 0):
                continue
            run = [c for c in bl if c != b and st[c] <= st[b] and en[c] > st[b] + 3000]
            cnt = collections.Counter(q for c in run for q in sps[c])
            mine = collections.Counter(sps[b])
            full = [q for q in mine if cnt[q] + mine[q] >= 4]
            nb = [c for c in run if any(q in full for q in sps[c])]
            if not nb:
                continue
            g = st[b] - max(st[c] for c in nb)
            k = 0 if g < 200 else 1 if g < 700 else 2 if g < 1000 else 3
            ages[k][0] += 1
            ages[k][1] += en[b] - st[b] > ns + 3000
    line += "; filling, waited by the last begun beside: %s" % " ".join(
        "%s:%d/%d" % (lab, a[1], a[0]) for lab, a in zip(("<0.2", "0.2-0.7", "0.7-1", ">=1"), ages))
    if not masks:
        print(line)
        return
    top = max(max(slots(a)) for a in arg.values())
    spread = 0
    turn = n = 0
    levels = collections.defaultdict(lambda: [0, 0])
    for bl in bysm.values():
        per = collections.Counter()
        for b in bl:
            for x in slots(arg[b]):
                per[x % 4] += 1
        spread = max(spread, max(per[q] for q in range(4)) - min(per[q] for q in range(4)))
        order = sorted(bl, key=lambda b: (st[b], b))
        best = 0
        for o in range(4):
            k = 0
            for p, b in enumerate(order):
                if st[b] - t0 < 1000:
                    continue
                want = sorted((p * nw + i + o) % 4 for i in range(nw))
                k += sorted(x % 4 for x in slots(arg[b])) == want
            best = max(best, k)
        turn += best
        n += sum(1 for b in order if st[b] - t0 >= 1000)
        for b in bl:
            if st[b] - t0 < 1000 or (mixed and b % 7 == 0):
                continue
            cnt = collections.Counter()
            for c in bl:
                if c != b and st[c] < st[b] and en[c] > st[b] + 3000:
                    for x in slots(arg[c]):
                        cnt[x % 4] += 1
            mine = collections.Counter(x % 4 for x in slots(arg[b]))
            full = max(cnt[q] + mine[q] for q in mine)
            levels[full][0] += 1
            levels[full][1] += en[b] - st[b] > ns + 3000
    print("%s; slots 0-%d, sub-partition spread %d, by turn %d of %d (%.2f); "
          "waited by fullest: %s" % (
              line, top, spread, turn, n, turn / n if n else 0,
              " ".join("%d:%d/%d" % (k, v[1], v[0]) for k, v in sorted(levels.items(),
                                                                    reverse=True))))


for p in sys.argv[1:]:
    report(p)
