#!/usr/bin/env python3
# Is a run's schedule periodic? A stand-alone measurement behind
# docs/PERFORMANCE.md (simulating the steady state in aggregate): for each
# kernel of a ctasim trace, the smallest period P (in blocks, up to MAXP)
# and the earliest block n0 such that every block b >= n0 has block b + P
# on the same SM with its dispatch, start and end one constant D later.
#
#   ctasim run spin --timing-only --arg grid=65536 --arg ns=0 --trace T
#   python3 tools/perf/schedule_period.py T [MAXP]
#
# Prints, per kernel: blocks, P, D and n0, or "not periodic" when no P up
# to MAXP (default 4096) repeats over the grid's last half (and at least
# two periods). Also prints,
# for the same P, from which block the times alone repeat when the SMs do
# not (SMs in the same state taking a block in another order).
import sys


def read(path):
    kernels = {}
    with open(path) as f:
        for line in f:
            if line.startswith('#') or line.startswith('t_ns'):
                continue
            v = line.rstrip('\n').split(',')
            if v[1] not in ('dispatch', 'start', 'end'):
                continue
            k = kernels.setdefault(int(v[2]), {})
            k.setdefault(int(v[3]), {})[v[1]] = (int(v[0]), int(v[5]))
    return kernels


def suffix_from(rows, P, same_sm):
    """Earliest n0 from which rows[b + P] is rows[b] shifted by one D."""
    n = len(rows)
    if P >= n:
        return None, None
    last = rows[n - 1 - P]
    D = rows[n - 1][0] - last[0]
    b = n - 1 - P
    while b >= 0:
        r, s = rows[b], rows[b + P]
        if (s[0] - r[0] != D or s[1] - r[1] != D or s[2] - r[2] != D
                or (same_sm and s[3] != r[3])):
            break
        b -= 1
    return b + 1, D


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: schedule_period.py TRACE [MAXP]')
    maxp = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    for kid, blocks in sorted(read(sys.argv[1]).items()):
        ids = sorted(blocks)
        if any(set(blocks[b]) != {'dispatch', 'start', 'end'} for b in ids):
            print(f'kernel {kid}: blocks without dispatch, start and end: skipped')
            continue
        rows = [(blocks[b]['dispatch'][0], blocks[b]['start'][0], blocks[b]['end'][0],
                 blocks[b]['start'][1]) for b in ids]
        n = len(rows)
        found = None
        for P in range(1, min(maxp, n // 3) + 1):
            n0, D = suffix_from(rows, P, True)
            if n0 is not None and n0 <= min(n // 2, n - 2 * P):
                found = (P, D, n0)
                break
        if not found:
            print(f'kernel {kid}: {n} blocks, not periodic (P up to {maxp})')
            continue
        P, D, n0 = found
        t0, _ = suffix_from(rows, P, False)
        print(f'kernel {kid}: {n} blocks, period {P} blocks, {D} ns, from block {n0} '
              f'({100.0 * n0 / n:.1f}% of the grid); times alone from block {t0}')


if __name__ == '__main__':
    main()
