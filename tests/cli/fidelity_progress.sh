#!/bin/sh
# `ctasim fidelity` draws a progress line on stderr (forced here with
# CTASIM_PROGRESS=1, as a terminal would get it), cleared before each line
# of the table on stdout, and none with --quiet.
# Usage: fidelity_progress.sh CTASIM REFDIR
set -u
B=$1
REF=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
args="fidelity $REF --device H100 --only placement_natural_g16 --only placement_natural_g1"
# shellcheck disable=SC2086
CTASIM_PROGRESS=1 "$B" $args >"$T/out" 2>"$T/err" || { echo "not ok: exit $?"; fail=1; }
grep -q '2/2 configurations' "$T/err" || { echo "not ok: no progress line"; fail=1; }
grep -q '/2 configurations' "$T/out" && { echo "not ok: the progress line went to stdout"; fail=1; }
grep -q '^placement_natural_g16 ' "$T/out" || { echo "not ok: the table lost its lines"; fail=1; }
# shellcheck disable=SC2086
CTASIM_PROGRESS=1 "$B" $args --quiet >"$T/out" 2>"$T/err"
[ -s "$T/err" ] && { echo "not ok: --quiet still wrote to stderr"; fail=1; }
CTASIM_PROGRESS=0 "$B" $args >"$T/out" 2>"$T/err"
[ -s "$T/err" ] && { echo "not ok: CTASIM_PROGRESS=0 still wrote to stderr"; fail=1; }
[ $fail -eq 0 ] && echo "fidelity progress: ok"
exit $fail
