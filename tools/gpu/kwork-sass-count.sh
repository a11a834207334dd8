#!/bin/sh
# Counts the SASS instructions kwork_cost_ns (kernels/imbalance.h) issues a
# warp for each imbalance pattern, against `none`: the figures behind
# KWORK_ISSUE_* (the launches' issue_ops, docs/FIDELITY.md). Needs nvcc and
# python3; no GPU. Usage: tools/gpu/kwork-sass-count.sh [ARCH] (sm_90).
set -eu
arch=${1:-sm_90}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/k.cu" <<'CU'
#include "imbalance.h"
#define K(name, pat)                                                                               \
	extern "C" __global__ void name(unsigned long long *o, unsigned long long i,               \
	                                unsigned long long ns)                                     \
	{                                                                                          \
		o[threadIdx.x] = kwork_cost_ns(pat, i, ns);                                        \
	}
/* The index as a 32-bit value widened (blockIdx.x, as vecscale_fixed_work
 * and vecscale_clc pass it): the compiler knows its high half is 0. */
#define K32(name, pat)                                                                             \
	extern "C" __global__ void name(unsigned long long *o, unsigned long long ns)              \
	{                                                                                          \
		o[threadIdx.x] = kwork_cost_ns(pat, blockIdx.x, ns);                               \
	}
K(k_none, KWORK_NONE)
K(k_one_in_seven, KWORK_ONE_IN_SEVEN)
K(k_heavy_tail, KWORK_HEAVY_TAIL)
K32(k32_none, KWORK_NONE)
K32(k32_one_in_seven, KWORK_ONE_IN_SEVEN)
K32(k32_heavy_tail, KWORK_HEAVY_TAIL)
CU
nvcc -cubin -arch="$arch" -O3 -I"$root/include" -I"$root/kernels" -o "$tmp/k.cubin" "$tmp/k.cu"
python3 - "$tmp/k.cubin" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
shoff = struct.unpack_from('<Q', d, 0x28)[0]
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3A)
secs = [struct.unpack_from('<IIQQQQ', d, shoff + i * shentsize) for i in range(shnum)]
strtab = secs[shstrndx][4]
def name(n):
    return d[strtab + n:d.index(b'\0', strtab + n)].decode()
count = {}
for s in secs:
    n = name(s[0])
    if n.startswith('.text.k'):
        # 16-byte instructions; NOP's opcode is 0x918.
        ins = [struct.unpack_from('<Q', d, s[4] + j)[0] for j in range(0, s[5], 16)]
        count[n[len('.text.'):]] = sum(1 for x in ins if x & 0xfff != 0x918)
for k, what in (('k_', '64-bit index'), ('k32_', '32-bit index widened')):
    for p in ('none', 'one_in_seven', 'heavy_tail'):
        c = count[k + p]
        print('%-21s %-13s %3d instructions, %3d beyond none' %
              (what, p, c, c - count[k + 'none']))
PY
