#!/bin/sh
# Pins a ctasim command's exit code and, optionally, a line its stderr or
# stdout must contain: check_cli.sh WANT_RC PATTERN CTASIM ARGS...
# (PATTERN "" checks only the exit code). Runs in a scratch folder.
want=$1; pattern=$2; shift 2
out=$(mktemp -d) || exit 1
"$@" >"$out/stdout" 2>"$out/stderr"
rc=$?
status=0
if [ "$rc" != "$want" ]; then
	echo "exit code $rc, expected $want"; status=1
fi
if [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$out/stdout" "$out/stderr"; then
	echo "output lacks: $pattern"; status=1
fi
if [ $status != 0 ]; then
	echo "--- stdout"; cat "$out/stdout"; echo "--- stderr"; cat "$out/stderr"
fi
rm -rf "$out"
exit $status
