#!/bin/sh
# Builds the simulator and the ctasim command with nothing but a C compiler
# (no meson, no CUDA backend), into ${OUT:-build-plain}. For machines
# without meson, such as the GPU host where the scaling figures are taken.
set -eu
cd "$(dirname "$0")/.."
CC=${CC:-cc}
out=${BUILD_DIR:-build-plain}
mkdir -p "$out/obj"
flags="-std=c11 -O2 -g -D_GNU_SOURCE -DCTA__FIBER_ASM=1 -fvisibility=hidden -Iinclude -Isim -Ikernels -Itools/ctasim"
srcs=$(ls sim/*/*.c kernels/*.c tools/ctasim/*.c)
# Compressed traces where the headers are present (zlib1g-dev, libzstd-dev);
# without them .gz/.zst traces are refused with a message naming the library.
zlibs=""
for lib in z:zlib.h:ZLIB zstd:zstd.h:ZSTD; do
	name=${lib%%:*} rest=${lib#*:}
	if printf '#include <%s>\nint main(void){return 0;}\n' "${rest%%:*}" |
		$CC -x c - -o /dev/null "-l$name" 2>/dev/null; then
		flags="$flags -DCTA_HAVE_${rest#*:}=1"
		zlibs="$zlibs -l$name"
	fi
done
case "$(uname -m)" in
x86_64) asm=sim/exec/fiber_x86_64.S ;;
aarch64) asm=sim/exec/fiber_aarch64.S ;;
*) asm="" flags=$(echo "$flags" | sed 's/-DCTA__FIBER_ASM=1//') ;;
esac
objs=""
for f in $srcs $asm; do
	o="$out/obj/$(echo "$f" | tr / _).o"
	$CC $flags -c "$f" -o "$o" &
	objs="$objs $o"
	# keep at most nproc compilers running
	while [ "$(jobs -p | wc -l)" -ge "$(nproc)" ]; do sleep 0.05; done
done
wait
$CC -rdynamic -o "$out/ctasim" $objs -lpthread -lm -ldl $zlibs
echo "built $out/ctasim"
