#!/bin/sh
# The installed package, as a user sees it: `meson install --destdir` into
# the build folder, then docs/WRITING_KERNELS.md's example kernel is built
# out of tree with `pkg-config ctasim` both ways (a --load module for the
# installed CLI; a host program against the shared library, against the
# static one, and as C++), and every man page and public header is there.
# $1: meson, $2: the build folder, $3: the source root. Prints TAP.
set -u
MESON=$1
BUILD=$(cd "$2" && pwd)
SRC=$(cd "$3" && pwd)
CC=${CC:-cc}
n=0
bad=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
no() {
	n=$((n + 1))
	echo "not ok $n - $1"
	[ -f "$W/err" ] && sed "s/^/# /" "$W/err" | head -20 | cut -c1-300
	bad=1
}
D=$BUILD/test-install
W=$BUILD/test-install-work
rm -rf "$D" "$W"
mkdir -p "$W"
if "$MESON" install -C "$BUILD" --destdir "$D" --no-rebuild --quiet >"$W/err" 2>&1; then
	ok "meson install --destdir"
else
	no "meson install --destdir"
	echo "1..$n"
	exit 1
fi
pc=$(find "$D" -name ctasim.pc | head -n 1)
[ -n "$pc" ] && ok "ctasim.pc installed" || no "ctasim.pc installed"
libdir=$(dirname "$(dirname "$pc")")
bindir=$(find "$D" -type d -name bin | head -n 1)
for f in "$libdir/libctasim.so" "$libdir/libctasim.a" "$bindir/ctasim"; do
	[ -e "$f" ] && ok "installed $(basename "$f")" || no "installed $f"
done
# A real archive (a thin one only points into the build tree).
[ "$(head -c 8 "$libdir/libctasim.a")" = "!<arch>" ] && ok "libctasim.a is not thin" ||
	no "libctasim.a is not thin"
miss=""
for h in "$SRC"/include/ctasim/*.h; do
	[ -n "$(find "$D" -path "*/include/ctasim/$(basename "$h")")" ] || miss="$miss $(basename "$h")"
done
echo "# missing:$miss" >"$W/err"
[ -z "$miss" ] && ok "public headers under include/ctasim" || no "public headers under include/ctasim"
miss=""
for c in ctasim $(sed -n 's/^CTA_CMD(\([a-z_-]*\),.*/ctasim-\1/p' "$SRC/tools/ctasim/commands.def" | tr _ -); do
	m=$(find "$D" -name "$c.1" | head -n 1)
	[ -n "$m" ] && grep -q '^\.SH SYNOPSIS' "$m" || miss="$miss $c.1"
done
echo "# missing:$miss" >"$W/err"
[ -z "$miss" ] && ok "man pages for ctasim and each command" || no "man pages for ctasim and each command"

# pkg-config as a user points it at the installed copy.
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$D"
cflags="" libs="" slibs=""
cflags=$(pkg-config --cflags ctasim 2>"$W/err") && libs=$(pkg-config --libs ctasim) &&
	slibs=$(pkg-config --static --libs ctasim) && ok "pkg-config --cflags --libs ctasim" ||
	no "pkg-config --cflags --libs ctasim"
case "$cflags" in *"$D"*) ok "cflags point into the install" ;; *) no "cflags '$cflags'" ;; esac

# The docs' code blocks, each saved under the file name its first comment gives.
python3 - "$SRC/docs/WRITING_KERNELS.md" "$W" <<'PY' 2>"$W/err" && ok "examples extracted from docs/WRITING_KERNELS.md" || no "examples extracted"
import re, sys
text = open(sys.argv[1]).read()
got = 0
for block in re.findall(r"```c\n(.*?)```", text, re.S):
    m = re.match(r"/\* ([\w.]+\.[ch]):", block)
    if m:
        open(sys.argv[2] + "/" + m.group(1), "w").write(block)
        got += 1
assert got >= 3, got
PY
cd "$W" || exit 1
# shellcheck disable=SC2086
# 1. A module the installed CLI loads.
if $CC -std=c11 -O2 -fPIC -shared $cflags mykernel.c -o libmykernel.so 2>err; then
	ok "cc -shared \$(pkg-config --cflags ctasim) mykernel.c"
else
	no "build the --load module"
fi
if "$bindir/ctasim" run --load ./libmykernel.so square --arg n=100000 >out 2>err && grep -q "result      PASS" out; then
	ok "installed ctasim run --load ./libmykernel.so square: PASS"
else
	cat out >>err
	no "installed ctasim run --load ./libmykernel.so square"
fi
# ... and through the installed ctasim-build-kernel (its default include
# folder is the installed one, which sits under the destdir here).
if [ -x "$bindir/ctasim-build-kernel" ] &&
	CTASIM_INCLUDE="$(dirname "$(find "$D" -path '*/include/ctasim/kernel.h' | head -n 1)")/.." \
		sh "$bindir/ctasim-build-kernel" --sim-only -o libsq2.so mykernel.c >out 2>err &&
	"$bindir/ctasim" run --load ./libsq2.so square --arg n=1000 >out 2>>err && grep -q "result      PASS" out; then
	ok "installed ctasim-build-kernel --sim-only: PASS"
else
	no "installed ctasim-build-kernel"
fi
# ... and the body header through the installed kernel compiler (its plugin
# and headers, found under the destdir), where the build has it.
kcp=$(find "$D" -name ctasim-regions.so | head -n 1)
if [ -n "$kcp" ]; then
	kinc="$(dirname "$(find "$D" -path '*/include/ctasim/kernel.h' | head -n 1)")/.."
	if CTASIM_INCLUDE="$kinc" CTASIM_KC_PLUGIN="$kcp" CTASIM_KC_INCLUDE="$kinc/ctasim/kc" \
		sh "$bindir/ctasim-build-kernel" --sim-only -o libsq3.so mykernel.c mykernel_body.h \
		>out 2>err && grep -q "1 body header(s) through the kernel compiler" out &&
		"$bindir/ctasim" run --load ./libsq3.so square --arg n=1000 >out 2>>err &&
		grep -q "result      PASS" out; then
		ok "installed kernel compiler through ctasim-build-kernel: PASS"
	else
		no "installed kernel compiler through ctasim-build-kernel"
	fi
fi
# 2. A host program against the shared library.
# shellcheck disable=SC2086
if $CC -std=c11 -O2 $cflags square_main.c mykernel.c $libs -o square 2>err &&
	LD_LIBRARY_PATH="$libdir" ./square >out 2>>err && grep -q "square: pass" out; then
	ok "host program against libctasim.so: pass"
else
	cat out >>err 2>/dev/null
	no "host program against libctasim.so"
fi
# ... against the static library (runs without the .so).
slibs_static=$(echo "$slibs" | sed 's/-lctasim/-Wl,-Bstatic -lctasim -Wl,-Bdynamic/')
# shellcheck disable=SC2086
if $CC -std=c11 -O2 $cflags square_main.c mykernel.c $slibs_static -o square_static 2>err &&
	./square_static >out 2>>err && grep -q "square: pass" out && ! ldd ./square_static | grep -q libctasim; then
	ok "host program against libctasim.a: pass"
else
	no "host program against libctasim.a"
fi
# ... and as C++ (the main program; the kernel stays C11).
CXX=${CXX:-c++}
if command -v "$CXX" >/dev/null; then
	# shellcheck disable=SC2086
	if $CC -std=c11 -O2 -fPIC $cflags -c mykernel.c -o mykernel.o 2>err &&
		$CXX -x c++ -std=c++20 -O2 $cflags square_main.c -x none mykernel.o $libs -o square_cxx 2>>err &&
		LD_LIBRARY_PATH="$libdir" ./square_cxx >out 2>>err && grep -q "square: pass" out; then
		ok "C++ host program against libctasim.so: pass"
	else
		no "C++ host program"
	fi
fi
echo "1..$n"
exit $bad
