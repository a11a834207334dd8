#!/bin/sh
# Builds the fuzz targets of the trace, scenario and device-model readers
# with clang's libFuzzer, AddressSanitizer and UBSan, and runs each for a
# bounded time (default 20 s) from its committed seed corpus (tests/fuzz/
# corpus, corpus_scenario, corpus_device). Exits non-zero when a fuzzer
# finds a crash, a leak or UB; the reproducer is left in $FUZZ_OUT (printed
# at the end).
#
#   tests/fuzz/run.sh [SECONDS]        CC_FUZZ=clang-17 FUZZ_OUT=dir also work
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECS=${1:-${FUZZ_SECONDS:-20}}
CC_FUZZ=${CC_FUZZ:-clang}
OUT=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/ctasim-fuzz-XXXXXX")}
mkdir -p "$OUT"

# One target per reader: traces, scenario files, device-model files. The
# library sources each needs are compiled in directly, so that the whole of
# them carries the fuzzer's coverage instrumentation.
LIB="$ROOT/sim/trace/*.c $ROOT/sim/analysis/*.c $ROOT/sim/model/*.c $ROOT/sim/util/*.c"
build() {
	# shellcheck disable=SC2086
	"$CC_FUZZ" -g -O1 -std=c11 -D_GNU_SOURCE \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-I"$ROOT/include" -I"$ROOT/sim" \
		"$ROOT/tests/fuzz/fuzz_$1.c" $2 $LIB $(pkg-config --libs zlib libzstd 2>/dev/null) \
		-lm -o "$OUT/fuzz_$1"
}

# run NAME CORPUS [DICT]: SECS seconds from the committed seeds; new inputs
# go to $OUT/corpus_NAME, so the checked-in seeds stay as they are.
failed=0
run() {
	mkdir -p "$OUT/corpus_$1"
	set +e
	"$OUT/fuzz_$1" \
		-max_total_time="$SECS" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
		${3:+-dict="$3"} -artifact_prefix="$OUT/$1-" -print_final_stats=1 \
		"$OUT/corpus_$1" "$ROOT/tests/fuzz/$2"
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then
		echo "fuzz_$1: failure (exit $rc); reproducer(s) in $OUT:" >&2
		ls "$OUT" | grep -E "^$1-(crash|leak|timeout|oom)-" >&2 || true
		failed=1
	else
		echo "fuzz_$1: no failure in $SECS s"
	fi
}

build trace_reader ""
build scenario "$ROOT/sim/host/scenario.c"
build device_model ""
run trace_reader corpus "$ROOT/tests/fuzz/trace.dict"
run scenario corpus_scenario
run device_model corpus_device
exit $failed
