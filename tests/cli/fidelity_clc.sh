#!/bin/sh
# The emulated-CLC (sm_90) cost model's floors (docs/FIDELITY.md): in the
# leave-one-configuration-out run over the H100 traces, every CLC
# configuration's busy span within MAXLOO of the hardware's; predicted from
# the H100 fit, every H200 CLC trace within MAXH200.
# Usage: fidelity_clc.sh CTASIM REFDIR MAXLOO MAXH200
set -u
B=$1
REF=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B" fidelity "$REF/h100" --predict "$REF/cuda-h200-clc-emulated" --jobs 2 --quiet >"$T/out" 2>"$T/err" ||
	{ echo "not ok: ctasim fidelity failed: $(cat "$T/err")"; exit 1; }
# The table rows: name, runs, blocks, share, hw, bps, ratio, (range), bins.
# Section 1 is the leave-one-out table, section 2 the H200's.
awk -v loo="$3" -v h200="$4" '
	/^traces\/reference|predicted from|leave one configuration out/ { sec++ }
	NF >= 8 && $2 ~ /^[0-9]+$/ && ($1 ~ /clc/ || sec >= 2) {
		r = $7; d = r > 1 ? r - 1 : 1 - r
		lim = sec >= 2 ? h200 : loo
		n++
		if (d > lim) { printf "not ok: %s busy span ratio %s (limit %s)\n", $1, r, lim; bad = 1 }
	}
	END {
		if (n < 18) { printf "not ok: %d CLC rows, expected 18\n", n; bad = 1 }
		exit bad
	}' "$T/out"
