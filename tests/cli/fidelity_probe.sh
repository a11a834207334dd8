#!/bin/sh
# A configuration marked fit=placement (a placement probe) is judged on its
# first wave but its makespan stays out of the summary: with the probe's
# busy span 26% long, --check against a 5% worst still passes, and the
# summary says it left one out. Usage: fidelity_probe.sh CTASIM REFDIR
set -u
B=$1
REF=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
"$B" fidelity "$REF" --device H100 --only prior_regs_b64_g2300 --only placement_natural_g16 \
	--check --max-worst-makespan 0.05 -q >"$T/out" 2>"$T/err" || {
	echo "not ok: exit $? (the probe's makespan was judged?)"
	cat "$T/out" "$T/err"
	fail=1
}
grep -q '^prior_regs_b64_g2300 (placement) .* 1056/1056 1\.000' "$T/out" ||
	{ echo "not ok: the probe's first wave is not in the table"; fail=1; }
grep -q 'makespan judged on 1: the other 1 are placement probes' "$T/out" ||
	{ echo "not ok: the summary does not say the probe was left out"; fail=1; }
grep -q '^placement_natural_g16 ' "$T/out" || { echo "not ok: the other line is missing"; fail=1; }
[ $fail -eq 0 ] && echo "fidelity probe: ok"
exit $fail
