#!/bin/sh
# `ctasim fidelity --jobs N` predicts N configurations at once in worker
# processes: its table and summary are byte for byte those of one job, both
# leaving each configuration out (a fit each) and predicting another folder
# (one fit for all); a bad N is a usage error (exit 2).
# Usage: fidelity_jobs.sh CTASIM REFDIR
set -u
B=$1
REF=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
for args in "$REF/h100-clc-contended" \
	"$REF/h100-clc-contended --only clc_two_requests_g4096 --only clc_vec_add_clc_g4096 --predict $REF/h100-gate"; do
	# shellcheck disable=SC2086
	"$B" fidelity $args -q >"$T/one" 2>&1 || { echo "not ok: one job: exit $?"; fail=1; }
	# shellcheck disable=SC2086
	"$B" fidelity $args -q -j 3 >"$T/three" 2>&1 || { echo "not ok: -j 3: exit $?"; fail=1; }
	cmp -s "$T/one" "$T/three" || { echo "not ok: -j 3 differs ($args)"; diff "$T/one" "$T/three" | head; fail=1; }
	grep -q '^summary: ' "$T/three" || { echo "not ok: no summary ($args)"; fail=1; }
done
for bad in 0 1.5 300 x; do
	"$B" fidelity "$REF/h100-clc-contended" -j "$bad" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] || { echo "not ok: -j $bad: exit $rc, not 2"; fail=1; }
	grep -q -- "-j" "$T/err" || { echo "not ok: -j $bad: the message does not name the option"; fail=1; }
done
[ $fail -eq 0 ] && echo "fidelity jobs: ok"
exit $fail
