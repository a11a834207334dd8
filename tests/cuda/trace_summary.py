#!/usr/bin/env python3
# One line per kernel of a ctasim trace (traces/FORMAT.md): blocks started
# on their own, steals, cancels by outcome, SMs used, span, block durations,
# and exactly-once coverage. Usage: trace_summary.py TRACE...
import sys


def summary(path):
    head, kern, recs = {}, {}, []
    complete = False
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('#kernel '):
                k = line.split()
                kern[int(k[1])] = dict(kv.split('=', 1) for kv in k[2:])
            elif line.startswith('#end'):
                complete = True
            elif line.startswith('#'):
                k, _, v = line[1:].partition(' ')
                head[k] = v
            elif not line.startswith('t_ns,'):
                recs.append(line.split(',', 8))
    print(f"{path}: {head.get('device')} clc={head.get('clc')} tick_ns={head.get('tick_ns')} "
          f"records={len(recs)} complete={int(complete)}")
    for kid, kd in sorted(kern.items()):
        g = [int(x) for x in kd['grid'].split(',')]
        n = g[0] * g[1] * g[2]
        seen = [0] * n
        start, dur, sms = {}, [], set()
        ev = {}
        t0, t1, tl = None, 0, None
        for r in recs:
            if int(r[2]) != kid:
                continue
            e, t = r[1], int(r[0])
            ev[e] = ev.get(e, 0) + 1
            if e == 'launch':
                tl = t
            if e in ('start', 'steal'):
                seen[int(r[3])] += 1
            if e == 'start':
                start[int(r[4])] = t
                sms.add(r[5])
                t0 = t if t0 is None else min(t0, t)
            if e == 'end':
                t1 = max(t1, t)
                if int(r[4]) in start:
                    dur.append(t - start[int(r[4])])
            if e == 'cancel_done':
                key = 'cancel_ok' if r[7] == '0' else 'cancel_fail'
                ev[key] = ev.get(key, 0) + 1
        dur.sort()
        lost = sum(1 for s in seen if s == 0)
        dup = sum(1 for s in seen if s > 1)
        med = dur[len(dur) // 2] if dur else 0
        print(f"  kernel {kid} {kd['name']} grid={kd['grid']} block={kd['block']} "
              f"cluster={kd['cluster']} prio={kd['priority']}: starts={ev.get('start', 0)} "
              f"on {len(sms)} SMs, steals={ev.get('steal', 0)}, cancels={ev.get('cancel', 0)} "
              f"(ok {ev.get('cancel_ok', 0)}, failed {ev.get('cancel_fail', 0)}), "
              f"launch->first start {((t0 or 0) - (tl or 0))} ns, span {t1 - (t0 or 0)} ns, "
              f"block median {med} ns, lost={lost} dup={dup}")


for p in sys.argv[1:]:
    summary(p)
