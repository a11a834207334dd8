#!/bin/sh
# Builds the trace-reader fuzz target with clang's libFuzzer, AddressSanitizer
# and UBSan, and runs it for a bounded time (default 20 s) from the seed
# corpus. Exits non-zero when the fuzzer finds a crash, a leak or UB; the
# reproducer is left in $FUZZ_OUT (printed at the end).
#
#   tests/fuzz/run.sh [SECONDS]        CC_FUZZ=clang-17 FUZZ_OUT=dir also work
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECS=${1:-${FUZZ_SECONDS:-20}}
CC_FUZZ=${CC_FUZZ:-clang}
OUT=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/ctasim-fuzz-XXXXXX")}
mkdir -p "$OUT/corpus"

# The library sources the target needs are compiled in directly, so that
# the whole of them carries the fuzzer's coverage instrumentation.
"$CC_FUZZ" -g -O1 -std=c11 -D_GNU_SOURCE \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$ROOT/include" -I"$ROOT/sim" \
	"$ROOT/tests/fuzz/fuzz_trace_reader.c" "$ROOT"/sim/trace/*.c "$ROOT"/sim/model/*.c \
	"$ROOT/sim/util/errors.c" \
	-lm -o "$OUT/fuzz_trace_reader"

# New inputs go to $OUT/corpus, so the checked-in seeds stay as they are.
set +e
"$OUT/fuzz_trace_reader" \
	-max_total_time="$SECS" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
	-dict="$ROOT/tests/fuzz/trace.dict" -artifact_prefix="$OUT/" -print_final_stats=1 \
	"$OUT/corpus" "$ROOT/tests/fuzz/corpus"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	echo "fuzz_trace_reader: failure (exit $rc); reproducer(s) in $OUT:" >&2
	ls "$OUT" | grep -E '^(crash|leak|timeout|oom)-' >&2 || true
	exit 1
fi
echo "fuzz_trace_reader: no failure in $SECS s"
