# TAP output shared by the CLI test scripts, sourced after `set -u`:
# tap_begin NAME makes the scratch folder $TMP (removed on exit, also on
# SIGINT/SIGTERM); ok / not_ok / bad number the lines; tap_end prints the
# plan and the "N passed, N failed" line and returns non-zero on a failure.
n=0
failed=0

tap_begin() {
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctasim-$1.XXXXXX") || exit 99
	trap 'rm -rf "$TMP"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

# not_ok DESC [LINE...]: a failure with its reasons, then what the last
# command left in $TMP/err and $TMP/out.
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for line in "$@"; do echo "# $line"; done
	[ -f "$TMP/err" ] && sed 's/^/# stderr: /' "$TMP/err" | head -20
	[ -f "$TMP/out" ] && sed 's/^/# stdout: /' "$TMP/out" | head -20
	return 0
}

# bad DESC...: a failure whose caller has printed its reasons.
bad() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}

tap_end() {
	echo "1..$n"
	echo "# $((n - failed)) passed, $failed failed"
	[ "$failed" -eq 0 ]
}
