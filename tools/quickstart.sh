#!/bin/sh
# The two commands of the README: `tools/quickstart.sh demo` builds ctasim
# and runs the demo; `tools/quickstart.sh test` builds and runs every test
# (plain, ASan+UBSan, TSan, format check, fuzz smoke) and ends with one
# "N passed, N failed" line. Both install what a fresh Debian 12 lacks.
set -eu
cd "$(dirname "$0")/.."

install_deps() {
	need=""
	command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
	command -v meson >/dev/null 2>&1 || need="$need meson"
	command -v ninja >/dev/null 2>&1 || need="$need ninja-build"
	command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
	[ -f /usr/include/cmocka.h ] || need="$need libcmocka-dev"
	# Compressed traces (.gz, .zst).
	[ -f /usr/include/zlib.h ] || need="$need zlib1g-dev"
	[ -f /usr/include/zstd.h ] || need="$need libzstd-dev"
	command -v python3 >/dev/null 2>&1 || need="$need python3"
	# The kernel compiler (compiler/): clang and LLVM 16 with its headers.
	command -v clang-16 >/dev/null 2>&1 || need="$need clang-16"
	command -v llvm-config-16 >/dev/null 2>&1 || need="$need llvm-16-dev libclang-16-dev"
	if [ "${1:-}" = test ]; then
		command -v clang >/dev/null 2>&1 || need="$need clang"
		command -v clang-format >/dev/null 2>&1 || need="$need clang-format"
		command -v rsvg-convert >/dev/null 2>&1 || need="$need librsvg2-bin"
	fi
	[ -z "$need" ] && return 0
	echo "quickstart: installing:$need"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq $need >/dev/null
}

configure() { # dir, extra meson args...
	dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || {
			cat "$dir.setup.log"
			exit 2
		}
		rm -f "$dir.setup.log"
	fi
}

case "${1:-}" in
demo)
	install_deps demo
	# Link-time optimisation inlines the engine's calls across modules:
	# 3-7% on every rate of `ctasim bench` (docs/PERFORMANCE.md).
	configure build -Dbuildtype=release -Db_lto=true
	# When `test` set the folder up first, it is a debugoptimized build:
	# the demo (and `ctasim bench` after it) want the optimised one.
	if ! python3 -c 'import json, sys
o = {d["name"]: d["value"] for d in json.load(open(sys.argv[1]))}
sys.exit(0 if o["buildtype"] == "release" and o["b_lto"] else 1)' \
		build/meson-info/intro-buildoptions.json 2>/dev/null; then
		meson configure build -Dbuildtype=release -Db_lto=true >/dev/null
	fi
	# Only the program: the test binaries (most of a full build's link
	# time) are built by `test`.
	ninja -C build tools/ctasim/ctasim >/dev/null
	mkdir -p out
	B=build/tools/ctasim/ctasim
	demo="vecscale_clc --arg n=262144 --arg ns=2 --arg prologue_ns=2000 --sm-limit 16"
	echo "== ctasim run $demo"
	echo "   the CUDA guide's work-stealing kernel (section 4.12) on 16 SMs of an H100 model"
	$B run $demo --trace out/demo.trace
	echo
	echo "== the same, with every cancellation after the first 50 forced to fail:"
	echo "   unstolen blocks launch normally, so every index is still processed once"
	$B run $demo --cancel-fail-after 50 | grep -E "^(blocks|cancels|coverage|result)"
	echo
	echo "== the guide's invalid code: a request after observing a failure"
	$B run ub_request_after_observed_failure || true
	if $B view out/demo.trace -o out/demo.svg >/dev/null 2>&1; then
		echo
		echo "timeline: out/demo.svg (trace: out/demo.trace)"
	fi
	;;
test)
	install_deps test
	fail=0
	configure build -Dwerror=true
	ninja -C build >/dev/null || exit 1
	meson test -C build --print-errorlogs --num-processes 2 || fail=1
	# Sanitizers: the suite under ASan+UBSan, no recovery (all but the
	# fidelity suite, minutes a configuration in a debug ASan build).
	configure build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debug -Dcuda=disabled \
		-Dc_args=-fno-sanitize-recover=all -Dc_link_args=-fno-sanitize-recover=all
	ninja -C build-asan >/dev/null || exit 1
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3 \
		--suite unit --suite fuzz --suite cli --suite golden || fail=1
	# ThreadSanitizer: the unit suite with several host threads per run, and
	# the CLC kernels and explore on two host threads (clc_threads) and the
	# CLI's runs (cli_run): fibers run on their host threads under TSan
	# (sim/exec/fiber.c), so no count of waiting threads reaches its limit.
	configure build-tsan -Dwerror=true -Db_sanitize=thread -Db_lundef=false \
		-Dbuildtype=debugoptimized -Dcuda=disabled
	ninja -C build-tsan >/dev/null || exit 1
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(pwd)/tests/tsan.supp" \
		meson test -C build-tsan --print-errorlogs --num-processes 1 --timeout-multiplier 4 \
		--suite unit || fail=1
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(pwd)/tests/tsan.supp" \
		meson test -C build-tsan --print-errorlogs --num-processes 1 --timeout-multiplier 4 \
		clc_threads cli_run || fail=1
	fmt=0
	sh tools/check-format.sh || { fmt=1; fail=1; }
	fuzz=0
	# The trace, scenario and device-model readers, 20 s each.
	sh tests/fuzz/run.sh 20 || { fuzz=1; fail=1; }
	# The closing line counts these two checks as well as meson's tests.
	python3 tools/test-summary.py build build-asan build-tsan \
		"check:clang-format=$fmt" "check:fuzz_readers=$fuzz"
	exit $fail
	;;
deps)
	install_deps test
	;;
*)
	echo "usage: tools/quickstart.sh demo|test|deps" >&2
	exit 2
	;;
esac
