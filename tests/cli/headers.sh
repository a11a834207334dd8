#!/bin/sh
# Every public header compiles on its own as C11 with -pedantic -Werror
# (kernel_cuda.h is for nvcc, kernel_lane.h is included by kernel.h).
# $1: the C compiler, $2: the include directory.
set -u
cc=$1
inc=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
n=0
bad=0
for h in "$inc"/ctasim/*.h; do
	b=$(basename "$h")
	case $b in kernel_cuda.h | kernel_lane.h) continue ;; esac
	n=$((n + 1))
	printf '#include "ctasim/%s"\nint ctasim_header_test_%d;\n' "$b" "$n" >"$d/t.c"
	if "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$d/t.c" -o "$d/t.o" 2>"$d/err"; then
		echo "ok $n - $b"
	else
		echo "not ok $n - $b"
		sed 's/^/# /' "$d/err"
		bad=1
	fi
done
echo "1..$n"
exit $bad
