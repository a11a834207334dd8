#!/bin/sh
# The trace subcommands' shared behaviour: --help to stdout with exit 0,
# usage errors exit 2, and malformed traces reported as
# "ctasim VERB: FILE:LINE: message" with exit 2.
. "$(dirname "$0")/trace_fixture.sh"

for verb in diff view export calibrate; do
	expect_rc 0 "$CTASIM" $verb --help
	expect_in "$TMP/out" "usage: ctasim $verb"
	expect_rc 2 "$CTASIM" $verb
	expect_in "$TMP/err" "usage: ctasim $verb"
	expect_rc 2 "$CTASIM" $verb --no-such-option
	expect_in "$TMP/err" "ctasim $verb: unknown option '--no-such-option'"
done

write_fixture "$TMP/good.trace"
# Line 14 of the fixture is its first start record.
write_fixture "$TMP/bad.trace" '14s/,start,/,begin,/'
expect_rc 2 "$CTASIM" view "$TMP/bad.trace" -o "$TMP/x.svg"
expect_in "$TMP/err" "ctasim view: $TMP/bad.trace:14: unknown event 'begin'"
[ ! -e "$TMP/x.svg" ] || fail "view left an output file after an input error"
expect_rc 2 "$CTASIM" export --perfetto "$TMP/bad.trace" -o "$TMP/x.json"
expect_in "$TMP/err" "ctasim export: $TMP/bad.trace:14: unknown event 'begin'"
expect_rc 2 "$CTASIM" diff "$TMP/good.trace" "$TMP/bad.trace"
expect_in "$TMP/err" "ctasim diff: $TMP/bad.trace:14: unknown event 'begin'"
expect_rc 2 "$CTASIM" calibrate "$TMP/bad.trace" -o "$TMP/x.model"
expect_in "$TMP/err" "ctasim calibrate: $TMP/bad.trace:14: unknown event 'begin'"

# A truncated trace (no end marker) is refused, not half-read.
head -n 20 "$TMP/good.trace" >"$TMP/cut.trace"
expect_rc 2 "$CTASIM" export --perfetto "$TMP/cut.trace"
expect_in "$TMP/err" "ctasim export: $TMP/cut.trace:20: truncated: no end marker"
expect_rc 2 "$CTASIM" view "$TMP/missing.trace" -o "$TMP/x.svg"
expect_in "$TMP/err" "ctasim view: $TMP/missing.trace: cannot open: No such file"
# A folder given as a trace is named as such.
mkdir -p "$TMP/adir"
expect_rc 2 "$CTASIM" view "$TMP/adir" -o "$TMP/x.svg"
expect_in "$TMP/err" "ctasim view: $TMP/adir: is a directory, not a trace file"
# Output paths: a folder, a missing folder, an empty name (exit 2, named).
expect_rc 2 "$CTASIM" export --perfetto "$TMP/good.trace" -o "$TMP/adir"
expect_in "$TMP/err" "ctasim export: $TMP/adir: is a directory, not a file"
expect_rc 2 "$CTASIM" view "$TMP/good.trace" -o "$TMP/missing/x.svg"
expect_in "$TMP/err" "ctasim view: $TMP/missing/x.svg: cannot create a file there"
expect_rc 2 "$CTASIM" view "$TMP/good.trace" -o ""
expect_in "$TMP/err" "ctasim view: -o needs a file name"
finish
