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
	grep "crashed: SIGSEGV" "$d/err" >"$d/report$t"
done
# The report and the trace kept are the same at any --threads.
cmp -s "$d/report1" "$d/report2" || fail "reports differ by --threads: $(cat "$d/report1" "$d/report2")"
grep -q "the block started at t=[1-9][0-9]* ns" "$d/report1" || fail "no start time: $(cat "$d/report1")"
cmp -s "$d/t1.trace" "$d/t2.trace" || fail "traces kept differ by --threads"
# Another block and thread, to show the report is not canned.
"$B" run crash_oob --arg block=3 --arg thread=100 2>"$d/err" >/dev/null
grep -q "in block 3 .* thread 100 " "$d/err" || fail "block 3 thread 100 not reported: $(cat "$d/err")"
# The crash was in the vector form of the thread loop: the command ran again
# thread by thread (CTASIM_EXACT_THREADS) to name the thread.
grep -q "running the command again thread by thread" "$d/err" || fail "no re-run note: $(cat "$d/err")"
# A re-run that does not crash still exits 1, with the first report.
CTASIM_EXACT_THREADS=1 CTASIM_CRASH_FIRST="ctasim: kernel k crashed: first report
" "$B" run saxpy --arg n=4096 >/dev/null 2>"$d/err"
rc=$?
[ $rc -eq 1 ] || fail "re-run without a crash: exit $rc, expected 1"
grep -q "^ctasim: kernel k crashed: first report" "$d/err" || fail "first report lost: $(cat "$d/err")"
grep -q "did not crash, so the thread is not known" "$d/err" || fail "no re-run verdict: $(cat "$d/err")"
# Exact threads change the speed of a run, never its trace.
# (Small runs, with steals on two SMs: a ThreadSanitizer build counts
# every fiber as a thread and allows 8128.)
for k in saxpy block_reduce vec_add_clc; do
	a="--arg n=16384 --sm-limit 2"
	"$B" run $k $a --trace "$d/v.trace" >/dev/null 2>&1 || fail "$k: vector run failed"
	CTASIM_EXACT_THREADS=1 "$B" run $k $a --trace "$d/e.trace" >/dev/null 2>&1 ||
		fail "$k: exact run failed"
	cmp -s "$d/v.trace" "$d/e.trace" || fail "$k: traces differ with exact threads"
done
echo "crash: ok"
