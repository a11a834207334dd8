#!/bin/sh
# Fails when a C source or header, or the kernel compiler's C++ source,
# differs from what clang-format makes of it (.clang-format at the root),
# listing the files.
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.c' '*.h' '*.cpp' | while read -r f; do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"
done)
if [ -n "$bad" ]; then
	echo "check-format: not clang-formatted (run clang-format -i):"
	echo "$bad"
	exit 1
fi
echo "check-format: all sources formatted"
