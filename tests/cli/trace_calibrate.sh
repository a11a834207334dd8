#!/bin/sh
# `ctasim calibrate`: fits a model to a hardware-like trace and writes it.
# Skipped (exit 77) in a build without the device-model module, where the
# command says so plainly instead of failing at link time.
. "$(dirname "$0")/trace_fixture.sh"

write_fixture "$TMP/hw.trace" 's/^#backend sim/#backend cuda/; s/^#tick_ns 1/#tick_ns 32/; s/^#clc model/#clc emulated/'
"$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/fit.model" --base H100 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -qF "device models are not part of this build" "$TMP/err"; then
	echo "device models not built: skipped"
	exit 77
fi
[ $rc -eq 0 ] || fail "calibrate exited $rc: $(cat "$TMP/err")"
[ -s "$TMP/fit.model" ] || fail "no model written"
# Four SMs used and none of them twice: a small kernel on an H100, whose
# SM count is kept.
expect_in "$TMP/out" "sm_count             132"
expect_in "$TMP/out" "note: only 4 of the base's 132 SMs started a block"
# Every cancel of the fixture takes 300 ns to complete.
expect_in "$TMP/out" "cancel_latency_ns    300"

# An unknown base model is an input error.
expect_rc 2 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/x.model" --base NO-SUCH-GPU
expect_in "$TMP/err" "ctasim calibrate: base model 'NO-SUCH-GPU'"
[ ! -e "$TMP/x.model" ] || fail "a model was written after an error"
finish
