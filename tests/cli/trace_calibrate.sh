#!/bin/sh
# `ctasim calibrate`: fits a model to a hardware-like trace, writes it as
# a model file that loads again, and refuses an unknown base model.
. "$(dirname "$0")/trace_fixture.sh"

write_fixture "$TMP/hw.trace" 's/^#backend sim/#backend cuda/; s/^#tick_ns 1/#tick_ns 32/; s/^#clc model/#clc emulated/'
expect_rc 0 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/fit.model" --base H100
[ -s "$TMP/fit.model" ] || fail "no model written"
# Four SMs used and none of them twice: a small kernel on an H100, whose
# SM count is kept.
expect_in "$TMP/out" "sm_count             132"
expect_in "$TMP/out" "note: only 4 of the base's 132 SMs started a block"
# Every cancel of the fixture takes 300 ns to complete.
expect_in "$TMP/out" "cancel_latency_ns    300"
cp "$TMP/out" "$TMP/calibrate.out"

# The written model is one `ctasim run --device` accepts.
expect_rc 0 "$CTASIM" run vec_add_clc --device "$TMP/fit.model" --quiet

# --block-ns fits the duration model; the model runs, with stretched blocks.
expect_rc 0 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/dur.model" --base H100 --block-ns 500
expect_in "$TMP/out" "spin_scale 1 "
grep -q "^spin_scale = 1 " "$TMP/dur.model" || fail "no spin_scale line written"
expect_rc 0 "$CTASIM" run spin --arg grid=4 --arg ns=500 --device "$TMP/dur.model" --quiet
expect_rc 2 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/x.model" --block-ns 0
expect_in "$TMP/err" "--block-ns needs a number of ns > 0"

# An unknown base model is an input error.
expect_rc 2 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/x.model" --base NO-SUCH-GPU
expect_in "$TMP/err" "ctasim calibrate: base model 'NO-SUCH-GPU'"
[ ! -e "$TMP/x.model" ] || fail "a model was written after an error"
finish
