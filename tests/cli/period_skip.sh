#!/bin/sh
# Runs shipped kernels at several grid sizes, on several devices and host
# thread counts, with the period skip (the default) and without it
# (CTASIM_PERIOD=0), and checks that exit code, output and messages are
# byte-identical; the runs marked `skips` must have skipped blocks
# (CTASIM_PERIOD=report), so that the comparison is not between two runs
# of the engine alone. Among them: costs that change after the period was
# found (saxpy over a grid larger than its array: the blocks past it do no
# work), placement overrides, an SM limit, shared memory and register
# limits, sanitized runs (--sanitize), and runs that must not skip (a
# trace, jitter, CLC).
# Usage: period_skip.sh path/to/ctasim [HAVE_KC]; HAVE_KC 0 (a build
# without the kernel compiler, such as the sanitizer builds) cannot know
# that a shipped body never waits, so nothing skips there and `skips`
# means any (the outputs are still compared).
set -u
CTASIM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HAVE_KC=${2:-1}
. "$(dirname "$0")/tap.sh"
tap_begin period
tmp=$TMP

# both EXPECT ARGS...: EXPECT is skips (blocks must be skipped), none (no
# block may be) or any. With several host threads a run skips only once
# the pool's estimate (a measured time) says its batches run on one
# thread: any.
both() {
	want=$1
	shift
	CTASIM_PERIOD=report "$CTASIM" run "$@" >"$tmp/a.out" 2>"$tmp/a.err"
	ra=$?
	CTASIM_PERIOD=0 "$CTASIM" run "$@" >"$tmp/b.out" 2>"$tmp/b.err"
	rb=$?
	skipped=$(sed -n 's/^period skip: \([0-9]*\) blocks$/\1/p' "$tmp/a.err")
	grep -v '^period skip: ' "$tmp/a.err" >"$tmp/a2.err"
	if [ "$ra" != "$rb" ]; then
		bad "$* (exit $ra with the skip, $rb without)"
	elif ! cmp -s "$tmp/a.out" "$tmp/b.out"; then
		bad "$* (output differs)"
		diff "$tmp/b.out" "$tmp/a.out" | sed 's/^/# /' | head -20
	elif ! cmp -s "$tmp/a2.err" "$tmp/b.err"; then
		bad "$* (messages differ)"
	elif [ -z "$skipped" ]; then
		bad "$* (no skip report)"
	elif [ "$want" = skips ] && [ "$HAVE_KC" = 1 ] && [ "$skipped" -eq 0 ]; then
		bad "$* (nothing was skipped)"
	elif [ "$want" = none ] && [ "$skipped" -ne 0 ]; then
		bad "$* (skipped $skipped blocks)"
	else
		ok "$* (skipped $skipped blocks)"
	fi
}

for dev in H100-SXM H200 H100-PCIe B200 A100-SXM; do
	both skips saxpy --device "$dev" --arg n=8388608 --threads 1
	both skips spin --device "$dev" --timing-only --arg grid=100000 --arg ns=300 --threads 1
done
for size in 4000000 4194304 16777216; do
	both skips saxpy --arg n=$size --threads 1
done
both any saxpy --arg n=4194304 --threads 4
both skips saxpy --arg n=4194304 --grid 40000 --threads 1
both skips saxpy --arg n=4194304 --grid 40000 --arg ns=100 --threads 1
both any saxpy --arg n=2000000 --grid 30000 --threads 2
both skips saxpy_gridstride --arg n=16777216 --grid 50000 --threads 1
both skips spin --timing-only --arg grid=65536 --arg ns=0 --threads 1
both any spin --arg grid=50000 --arg ns=1000 --threads 2
both skips spin --timing-only --arg grid=70000 --arg ns=300 --placement round_robin --threads 1
both skips spin --timing-only --arg grid=70000 --arg ns=300 --placement spread --threads 1
both skips spin --timing-only --arg grid=70000 --arg ns=300 --sm-limit 7 --threads 1
both skips spin --timing-only --arg grid=70000 --arg ns=300 --arg smem=40000 --threads 1
both skips spin --timing-only --arg grid=70000 --arg ns=300 --arg regs=1 --block 128 --threads 1
# Blocks longer than the register file's gate's longest wait: held blocks
# are let go by their EV_GATE_WAIT events, which the skipped periods hold.
both skips spin --timing-only --arg grid=20000 --arg ns=90000 --arg regs=1 --block 128 --threads 1
# At two blocks an SM the gate lets drawn blocks by (spin_regs_pass_ppm):
# a draw per block index leaves no period to skip.
both any spin --timing-only --arg grid=70000 --arg ns=300 --arg regs=1 --threads 1
both any spin --timing-only --arg grid=100000 --arg ns=500 --arg imbalance=one_in_seven
both any spin --arg grid=30000 --arg ns=2000 --arg imbalance=heavy_tail
both skips block_reduce --arg n=16777216 --threads 1
both any block_reduce --arg n=4194304 --threads 2
# Several host threads: chunks of a skipped period run on the pool
# (skip_chunk_par), one of them holding the blocks past saxpy's array (off
# their prediction: the rest of their chunk is handed back too).
both any block_reduce --arg n=16777216 --threads 4
both any saxpy --arg n=4194304 --grid 40000 --threads 3
both any compute_heavy --threads 1
both any vecscale_fixed_work --arg n=16777216 --threads 1
both any vecscale_fixed_blocks --threads 1
both none spin --timing-only --arg grid=70000 --arg ns=300 --jitter 20 --threads 1
both none spin --timing-only --arg grid=70000 --arg ns=300 --trace "$tmp/t.trace"
both none vec_add_clc --threads 1
both none saxpy --arg n=4194304 --ub abort --threads 1
# planted KERNEL TOOL: the planted bug in one block (--arg bug_block) of a
# skipped period (B200: the planted kernels' schedule repeats there) is
# reported exactly as by the engine alone, exit 1 both ways, and its body
# ends the skip there: the valid twin skips more blocks.
planted() {
	k=$1 tool=$2
	set -- "$k" --sanitize "$tool" --arg n=4194304 --device B200 --threads 1
	CTASIM_PERIOD=report "$CTASIM" run "$@" --arg valid=1 >/dev/null 2>"$tmp/v.err"
	CTASIM_PERIOD=report "$CTASIM" run "$@" --arg bug_block=12000 >"$tmp/a.out" 2>"$tmp/a.err"
	ra=$?
	CTASIM_PERIOD=0 "$CTASIM" run "$@" --arg bug_block=12000 >"$tmp/b.out" 2>/dev/null
	rb=$?
	sv=$(sed -n 's/^period skip: \([0-9]*\) blocks$/\1/p' "$tmp/v.err")
	sa=$(sed -n 's/^period skip: \([0-9]*\) blocks$/\1/p' "$tmp/a.err")
	if [ "$ra" != 1 ] || [ "$rb" != 1 ]; then
		bad "$k --sanitize $tool, bug in block 12000 (exit $ra with the skip, $rb without)"
	elif ! cmp -s "$tmp/a.out" "$tmp/b.out"; then
		bad "$k --sanitize $tool, bug in block 12000 (output differs)"
		diff "$tmp/b.out" "$tmp/a.out" | sed 's/^/# /' | head -20
	elif ! grep -q "^  UB .* block 12000 (blockIdx 12000,0,0; physical 12000)" "$tmp/a.out"; then
		bad "$k --sanitize $tool, bug in block 12000 (no report names block 12000)"
	elif [ -z "$sa" ] || [ -z "$sv" ]; then
		bad "$k --sanitize $tool, bug in block 12000 (no skip report)"
	elif [ "$sa" -eq 0 ] || [ "$sa" -ge "$sv" ]; then
		bad "$k --sanitize $tool, bug in block 12000 (skipped $sa blocks, the valid twin $sv)"
	else
		ok "$k --sanitize $tool, bug in block 12000 (skipped $sa blocks, the valid twin $sv)"
	fi
}
# --sanitize: the instrumented bodies of skipped periods run (a body with a
# report is handed back as one off its prediction); reports, exit codes
# and outputs are those of the engine alone.
# A build without the kernel compiler (the sanitizer builds) skips
# nothing and runs these bodies on fibers, for minutes under ASan, with
# no skip to compare: there they are left out.
if [ "$HAVE_KC" = 1 ]; then
	for tool in memcheck racecheck initcheck; do
		both skips saxpy --arg n=4194304 --threads 1 --sanitize $tool
		both skips block_reduce --arg n=4194304 --threads 1 --sanitize $tool
	done
	both any saxpy --arg n=4194304 --threads 4 --sanitize initcheck
	both skips san_racecheck_tree --arg n=16777216 --threads 1 --sanitize racecheck
	both none saxpy --arg n=4194304 --sanitize memcheck --trace "$tmp/t.trace"
	planted san_memcheck_shared_oob memcheck
	planted san_racecheck_ww racecheck
	planted san_racecheck_rw racecheck
	planted san_racecheck_wide racecheck
	planted san_racecheck_tree racecheck
	planted san_initcheck_shared initcheck
	planted san_initcheck_wide initcheck
else
	ok "# SKIP --sanitize with and without the skip: no kernel compiler, nothing skips"
fi

tap_end
