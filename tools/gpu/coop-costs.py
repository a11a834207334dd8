#!/usr/bin/env python3
# The blocking kernels' costs on the GPU, from the traces of
# traces/reference/h100-coop (docs/FIDELITY.md, *What is not modelled*:
# blocking kernels). Usage: coop-costs.py FITDIR [HOLDOUTDIR]
# A frontier BFS of L levels (kernels/ck_body.h, the graph of kernels/ck.c,
# whose levels this script recomputes) on B blocks is taken to last
#   L x (a + b x B)                     two grid barriers and a visit a level
#   + L x (degree + 1) x e + nodes x c  the visits' edges and pushes
# per barrier kind (gb_*: built from atomics; gs_*: grid.sync()). a and b
# are least squares over the chains (degree 0: one node a level), e and c
# over the other graphs less their levels' a + b x B. Prints the terms and
# every configuration's busy span (mean of its runs) against the model's,
# the hold-out's too, with the median and largest |ratio - 1| of each set.
import glob
import gzip
import os
import sys

M = (1 << 64) - 1


def levels(n, deg, seed):
    """Frontier sizes of kernels/ck.c's generated graph, BFS from node 0."""
    x = seed
    col = []
    for u in range(n):
        c = [(u + 1) % n]
        for _ in range(deg):
            x = (x + 0x9E3779B97F4A7C15) & M
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
            c.append((z ^ (z >> 31)) % n)
        col.append(c)
    lev = [-1] * n
    lev[0] = 0
    fr, sizes = [0], []
    while fr:
        sizes.append(len(fr))
        nf = []
        for u in fr:
            for v in col[u]:
                if lev[v] < 0:
                    lev[v] = lev[u] + 1
                    nf.append(v)
        fr = nf
    return sizes


def busy(path):
    """First block start to last block end, ns."""
    t0, t1 = None, 0
    with gzip.open(path, 'rt') as f:
        for line in f:
            if line[0] == '#' or line.startswith('t_ns'):
                continue
            r = line.split(',', 4)
            t = int(r[0])
            if r[1] in ('start', 'steal'):
                t0 = t if t0 is None else min(t0, t)
            elif r[1] == 'end':
                t1 = max(t1, t)
    return t1 - t0


def lsq2(rows):
    """Least squares of y on (p, q) without intercept: rows of (p, q, y)."""
    s00 = sum(p * p for p, _, _ in rows)
    s01 = sum(p * q for p, q, _ in rows)
    s11 = sum(q * q for _, q, _ in rows)
    t0 = sum(p * y for p, _, y in rows)
    t1 = sum(q * y for _, q, y in rows)
    det = s00 * s11 - s01 * s01
    return (t0 * s11 - t1 * s01) / det, (s00 * t1 - s01 * t0) / det


def configs(d):
    out = []
    for line in open(os.path.join(d, 'configs.txt')):
        if line.startswith('#') or not line.strip():
            continue
        w = line.split()
        if not w[2].startswith('ck_graph'):
            continue
        a = dict(x.split('=', 1) for x in w[4::2])
        n, deg = int(a.get('nodes', 4096)), int(a.get('degree', 4))
        spans = [busy(p) for p in sorted(glob.glob(os.path.join(d, w[0] + '.r*.trace.gz')))]
        if not spans:
            sys.exit(f'{d}: no traces of {w[0]}')
        out.append({'name': w[0], 'kind': 'gs' if 'grid_sync' in w[2] else 'gb',
                    'chain': deg == 0, 'blocks': int(a.get('blocks', 1056)), 'deg': deg,
                    'sizes': levels(n, deg, int(a.get('graph_seed', 1))),
                    'busy': sum(spans) / len(spans)})
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: coop-costs.py FITDIR [HOLDOUTDIR]')
    fit = configs(sys.argv[1])
    hold = configs(sys.argv[2]) if len(sys.argv) == 3 else []
    for k in ('gb', 'gs'):
        ch = [r for r in fit if r['kind'] == k and r['chain']]
        gr = [r for r in fit if r['kind'] == k and not r['chain']]
        a, b = lsq2([(len(r['sizes']), len(r['sizes']) * r['blocks'], r['busy']) for r in ch])
        e, c = lsq2([(len(r['sizes']) * (r['deg'] + 1), sum(r['sizes']),
                      r['busy'] - len(r['sizes']) * (a + b * r['blocks'])) for r in gr])
        print(f'{k}: a level {a:.0f} ns + {b:.2f} ns a block; an edge of a level {e:.0f} ns; '
              f'a node {c:.2f} ns')
        for label, rows in (('fit', fit), ('hold-out', hold)):
            errs = []
            for r in rows:
                if r['kind'] != k:
                    continue
                lv = len(r['sizes'])
                m = lv * (a + b * r['blocks'])
                if not r['chain']:
                    m += lv * (r['deg'] + 1) * e + sum(r['sizes']) * c
                errs.append(abs(m / r['busy'] - 1))
                print(f'  {label:8s} {r["name"]:28s} levels {lv:4d}  busy {r["busy"] / 1000:9.1f} us'
                      f'  model {m / 1000:9.1f} us  {m / r["busy"]:.3f}')
            if errs:
                errs.sort()
                print(f'  {label}: median |ratio - 1| {errs[len(errs) // 2]:.3f}, '
                      f'largest {errs[-1]:.3f} over {len(errs)}')


main()
