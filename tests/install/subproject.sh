#!/bin/sh
# ctasim as a Meson subproject: a consumer project whose meson.build says
# dependency('ctasim') finds it through a wrap file's [provide] (the
# project's meson.override_dependency), builds docs/WRITING_KERNELS.md's
# host program against it, and runs it. $1: meson, $2: a scratch folder,
# $3: the source root. Prints TAP.
set -u
MESON=$1
W=$2/test-subproject
SRC=$(cd "$3" && pwd)
rm -rf "$W"
mkdir -p "$W/subprojects"
ln -s "$SRC" "$W/subprojects/ctasim"
# The wrap a user would write (with a url and revision, or a source_url):
# a folder already present is used as it is.
cat >"$W/subprojects/ctasim.wrap" <<'WRAP'
[wrap-git]
url = https://example.invalid/ctasim.git
revision = head
directory = ctasim

[provide]
dependency_names = ctasim
WRAP
cat >"$W/meson.build" <<'MB'
project('consumer', 'c', default_options: ['c_std=c11'])
ctasim = dependency('ctasim', default_options: ['tests=disabled', 'cuda=disabled'])
executable('square', 'square_main.c', 'mykernel.c', dependencies: ctasim)
MB
python3 - "$SRC/docs/WRITING_KERNELS.md" "$W" <<'PY'
import re, sys
for block in re.findall(r"```c\n(.*?)```", open(sys.argv[1]).read(), re.S):
    m = re.match(r"/\* ([\w.]+\.[ch]):", block)
    if m:
        open(sys.argv[2] + "/" + m.group(1), "w").write(block)
PY
n=0
bad=0
step() { # name, command...
	name=$1
	shift
	n=$((n + 1))
	if "$@" >"$W/log" 2>&1; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		tail -n 20 "$W/log" | sed 's/^/# /'
		bad=1
	fi
}
step "meson setup: dependency('ctasim') falls back to the subproject" \
	"$MESON" setup "$W/build" "$W" --wrap-mode=nodownload -Dbuildtype=plain
step "ninja builds the consumer against it" "$MESON" compile -C "$W/build" square
step "the consumer's program passes" sh -c "'$W/build/square' | grep -q 'square: pass'"
echo "1..$n"
exit $bad
