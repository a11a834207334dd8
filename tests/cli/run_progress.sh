#!/bin/sh
# `ctasim run` and `ctasim scenario` draw a progress line (blocks retired,
# rate, ETA) on stderr when it is a terminal (a pty made by script(1)),
# clear it before the report on stdout, and draw none with --quiet, when
# stderr is a file, or for a run shorter than the delay. Prints TAP.
# Usage: run_progress.sh CTASIM
set -u
B=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
bad=0
check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"
		bad=1
	fi
}
bar='/200000 blocks .*/s  ETA'
if command -v script >/dev/null 2>&1; then
	# script(1) runs the command on a pty: stderr is a terminal there.
	CTASIM_PROGRESS_DELAY_MS=0 script -qc "'$B' run spin --grid 200000" /dev/null \
		</dev/null >"$T/pty" 2>&1
	tr '\r' '\n' <"$T/pty" >"$T/pty.lines"
	grep -q "$bar" "$T/pty.lines"
	check $? "a terminal gets the bar"
	grep -q 'result      PASS' "$T/pty.lines"
	check $? "the report follows the bar"
	CTASIM_PROGRESS_DELAY_MS=0 script -qc "'$B' run spin --grid 200000 --quiet" /dev/null \
		</dev/null >"$T/pty" 2>&1
	! grep -q 'blocks .*ETA' "$T/pty" && grep -q 'result      PASS' "$T/pty"
	check $? "--quiet: no bar on a terminal"
	# The default delay (a second): a run of a few ms shows nothing.
	script -qc "'$B' run spin --grid 1000" /dev/null </dev/null >"$T/pty" 2>&1
	! grep -q 'blocks .*ETA' "$T/pty"
	check $? "a short run draws no bar"
else
	echo "# script(1) not found: the pty checks are skipped"
fi
CTASIM_PROGRESS_DELAY_MS=0 "$B" run spin --grid 200000 >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && [ ! -s "$T/err" ]
check $? "stderr a file: nothing written to it"
CTASIM_PROGRESS=1 "$B" run spin --grid 200000 >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && tr '\r' '\n' <"$T/err" | grep -q "$bar" && ! grep -q 'ETA' "$T/out" &&
	grep -q 'result      PASS' "$T/out"
check $? "CTASIM_PROGRESS=1: the bar on stderr, never on stdout"
tr '\r' '\n' <"$T/err" | tail -n 1 | grep -q '200000/200000 blocks'
check $? "the bar reaches the total before it is cleared"
CTASIM_PROGRESS=1 "$B" run spin --grid 200000 --quiet >"$T/out" 2>"$T/err"
[ ! -s "$T/err" ]
check $? "CTASIM_PROGRESS=1 --quiet: nothing on stderr"
cat >"$T/s.json" <<'J'
{"version": 1, "device": "H100",
 "streams": [{"name": "a", "priority": 0}, {"name": "b", "priority": -1}],
 "kernels": [{"label": "one", "harness": "spin", "stream": "a", "grid": 150000},
             {"label": "two", "harness": "spin", "stream": "b", "grid": 50000,
              "release_ns": 1000000}]}
J
CTASIM_PROGRESS=1 "$B" scenario "$T/s.json" >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && tr '\r' '\n' <"$T/err" | grep -q "$bar" && grep -q 'result      PASS' "$T/out"
check $? "scenario: the bar counts the blocks of every kernel"
CTASIM_PROGRESS=1 "$B" scenario "$T/s.json" --quiet >"$T/out" 2>"$T/err"
[ ! -s "$T/err" ]
check $? "scenario --quiet: nothing on stderr"
echo "1..$n"
exit $bad
