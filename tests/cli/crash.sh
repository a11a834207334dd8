#!/bin/sh
# A kernel body that faults is reported with its kernel, block and thread,
# exits 1, and leaves the trace written so far, marked incomplete and
# readable. $1: the ctasim executable.
set -u
B=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for t in 1 2; do
	"$B" run crash_oob --threads $t --trace "$d/t$t.trace" >"$d/out" 2>"$d/err"
	rc=$?
	[ $rc -eq 1 ] || fail "threads=$t: exit $rc, expected 1"
	grep -q "kernel crash_oob crashed: SIGSEGV" "$d/err" || fail "threads=$t: no crash line: $(cat "$d/err")"
	grep -q "in block 37 .* thread 5 " "$d/err" || fail "threads=$t: wrong block/thread: $(cat "$d/err")"
	tail -n 1 "$d/t$t.trace" | grep -q "^#incomplete records=[0-9]* crashed$" || fail "threads=$t: trace not marked incomplete"
	"$B" export --perfetto "$d/t$t.trace" -o "$d/t$t.json" 2>/dev/null || fail "threads=$t: the incomplete trace does not load"
done
# Another block and thread, to show the report is not canned.
"$B" run crash_oob --arg block=3 --arg thread=100 2>"$d/err" >/dev/null
grep -q "in block 3 .* thread 100 " "$d/err" || fail "block 3 thread 100 not reported: $(cat "$d/err")"
echo "crash: ok"
