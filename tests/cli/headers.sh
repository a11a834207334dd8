#!/bin/sh
# Every public header compiles on its own as C11 with -pedantic -Werror, and
# (when a C++ compiler is given) as C++17 with -pedantic -Werror, so a C++
# host program can include it (ctasim/sys/ holds the backend ABI: kernel_cuda.h
# is for nvcc, kernel_lane.h and cuda_abi.h are included by the others). $1: the C compiler, $2: the include directory,
# $3 (optional): the C++ compiler.
set -u
cc=$1
inc=$2
cxx=${3:-}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
n=0
bad=0
check() { # lang compiler flags header
	n=$((n + 1))
	b=$4
	if [ "$1" = c ]; then
		printf '#include "ctasim/%s"\nint ctasim_header_test_%d;\n' "$b" "$n" >"$d/t.c"
	else
		# A C++ program that calls into the header's C API (extern "C").
		printf '#include "ctasim/%s"\n#include "ctasim/errors.h"\nint ctasim_header_test() { return cta_strerror(0) != nullptr; }\n' "$b" >"$d/t.c"
	fi
	# shellcheck disable=SC2086
	if "$2" $3 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$d/t.c" -o "$d/t.o" 2>"$d/err"; then
		echo "ok $n - $b ($1)"
	else
		echo "not ok $n - $b ($1)"
		sed 's/^/# /' "$d/err"
		bad=1
	fi
	# A C++ object must reference the C symbol unmangled.
	if [ "$1" = c++ ] && [ $bad = 0 ] && command -v nm >/dev/null; then
		nm "$d/t.o" | grep -q ' U cta_strerror$' || {
			echo "# $b: cta_strerror is not referenced with C linkage"
			bad=1
		}
	fi
}
for h in "$inc"/ctasim/*.h; do
	b=$(basename "$h")
	check c "$cc" -std=c11 "$b"
	[ -n "$cxx" ] && check c++ "$cxx" "-x c++ -std=c++17" "$b"
done
echo "1..$n"
exit $bad
