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
expect_in "$TMP/err" "--block-ns '0': out of range [1, 1000000000000] (NS or KERNEL=NS"

# spin_add: every cta_spin_ns call costs ns * scale + add. The spin kernel's
# one call of 500 ns: 500 + 700 with spin_add alone, 2 * 500 + 100 with
# both, 500 with neither (an unfitted preset; the block spans what the call
# costs), 500 * 0.997035 + 428 per call + 898 per block on the fitted
# H100-SXM preset. A file's own spin lines without spin_block_add_ns put no
# per-block add.
span() { awk -F, '$2 == "start" { s = $1 } $2 == "end" { print $1 - s; exit }' "$1"; }
printf 'base = H100-SXM\nspin_add = 1 700\n' > "$TMP/add.model"
printf 'base = H100-SXM\nspin_add = 1 100\nspin_scale = 1 2000000\n' > "$TMP/both.model"
expect_rc 0 "$CTASIM" run spin --arg grid=1 --arg ns=500 --device "$TMP/add.model" --trace "$TMP/add.trace" --quiet
[ "$(span "$TMP/add.trace")" = 1200 ] || fail "spin_add 700: block of $(span "$TMP/add.trace") ns, not 1200"
expect_rc 0 "$CTASIM" run spin --arg grid=1 --arg ns=500 --device "$TMP/both.model" --trace "$TMP/both.trace" --quiet
[ "$(span "$TMP/both.trace")" = 1100 ] || fail "spin_scale 2 + spin_add 100: $(span "$TMP/both.trace") ns, not 1100"
expect_rc 0 "$CTASIM" run spin --arg grid=1 --arg ns=500 --device B200 --trace "$TMP/none.trace" --quiet
[ "$(span "$TMP/none.trace")" = 500 ] || fail "no duration model: $(span "$TMP/none.trace") ns, not 500"
expect_rc 0 "$CTASIM" run spin --arg grid=1 --arg ns=500 --device H100-SXM --trace "$TMP/h100.trace" --quiet
[ "$(span "$TMP/h100.trace")" = 1823 ] || fail "fitted H100-SXM: $(span "$TMP/h100.trace") ns, not 1823"
printf 'base = H100-SXM
spin_add = 1 100
spin_block_add_ns = 50
' > "$TMP/blk.model"
expect_rc 0 "$CTASIM" run spin --arg grid=1 --arg ns=500 --device "$TMP/blk.model" --trace "$TMP/blk.trace" --quiet
[ "$(span "$TMP/blk.trace")" = 650 ] || fail "spin_add 100 + block add 50: $(span "$TMP/blk.trace") ns, not 650"
printf 'base = H100-SXM\nspin_add = 1 x\n' > "$TMP/badadd.model"
expect_rc 2 "$CTASIM" run spin --arg grid=1 --device "$TMP/badadd.model" --quiet
expect_in "$TMP/err" "badadd.model:2: spin_add: bad time 'x'"

# --block-ns KERNEL=NS and --duration-trace are accepted; a name without a
# time is not.
expect_rc 0 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/named.model" --base H100 \
	--block-ns nosuchkernel=100 --duration-trace "$TMP/hw.trace"
expect_rc 2 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/x.model" --block-ns spin=
expect_in "$TMP/err" "ctasim calibrate: --block-ns 'spin=': empty, not an integer (NS or KERNEL=NS"

# An unknown base model is an input error.
expect_rc 2 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/x.model" --base NO-SUCH-GPU
expect_in "$TMP/err" "ctasim calibrate: base model 'NO-SUCH-GPU'"
[ ! -e "$TMP/x.model" ] || fail "a model was written after an error"
# Progress on a terminal (forced here): traces read, with rate and ETA;
# none with --quiet.
CTASIM_PROGRESS=1 "$CTASIM" calibrate "$TMP/hw.trace" "$TMP/hw.trace" -o "$TMP/p.model" --base H100 >"$TMP/out" 2>"$TMP/err" ||
	fail "calibrate with progress failed"
grep -q "2/2 traces read.*ETA" "$TMP/err" || fail "calibrate shows no progress line"
CTASIM_PROGRESS=1 "$CTASIM" calibrate "$TMP/hw.trace" -o "$TMP/p.model" --base H100 --quiet >"$TMP/out" 2>"$TMP/err"
grep -q "traces read" "$TMP/err" && fail "calibrate --quiet shows progress"
finish
