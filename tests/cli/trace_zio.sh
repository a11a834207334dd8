#!/bin/sh
# Compressed traces and "-": `run --trace` writes .gz/.zst by the name, and
# every reader (diff, view, export) takes gzip or zstd by the magic bytes,
# stdin as "-", and the committed reference traces as they are.
. "$(dirname "$0")/trace_fixture.sh"
REF=${2:?usage: $0 CTASIM SOURCE-ROOT}/traces/reference

expect_rc 0 "$CTASIM" run saxpy --trace "$TMP/a.trace"
expect_rc 0 "$CTASIM" run saxpy --trace "$TMP/a.trace.gz"
expect_rc 0 "$CTASIM" run saxpy --trace "$TMP/a.trace.zst"
# The name chose the format: the magic bytes say so.
[ "$(head -c 2 "$TMP/a.trace.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail ".gz is not gzip"
[ "$(head -c 4 "$TMP/a.trace.zst" | od -An -tx1 | tr -d ' ')" = 28b52ffd ] || fail ".zst is not zstd"
[ "$(wc -c <"$TMP/a.trace.gz")" -lt "$(($(wc -c <"$TMP/a.trace") / 5))" ] || fail ".gz not compressed 5x"
if command -v gzip >/dev/null; then
	gzip -dc "$TMP/a.trace.gz" | cmp -s - "$TMP/a.trace" || fail "gzip -dc differs from the plain trace"
fi
if command -v zstd >/dev/null; then
	zstd -qdc "$TMP/a.trace.zst" | cmp -s - "$TMP/a.trace" || fail "zstd -dc differs from the plain trace"
fi
# Readers: by content, not by name (a gzip file named .trace reads too).
cp "$TMP/a.trace.gz" "$TMP/gz_named_plain.trace"
expect_rc 0 "$CTASIM" diff "$TMP/a.trace.zst" "$TMP/gz_named_plain.trace"
expect_in "$TMP/out" "verdict: within tolerance"
expect_rc 0 "$CTASIM" export --perfetto "$TMP/a.trace.zst" -o "$TMP/a.json"
expect_rc 0 "$CTASIM" export --perfetto "$TMP/a.trace" -o "$TMP/b.json"
cmp -s "$TMP/a.json" "$TMP/b.json" || fail "export of .zst and plain differ"
# "-": stdin for readers, stdout for `run --trace` (the report goes to stderr).
"$CTASIM" run saxpy --trace - 2>"$TMP/report" >"$TMP/stdout.trace" || fail "run --trace - failed"
cmp -s "$TMP/stdout.trace" "$TMP/a.trace" || fail "run --trace - differs from --trace FILE"
expect_in "$TMP/report" "result      PASS"
"$CTASIM" diff - "$TMP/a.trace.gz" <"$TMP/a.trace.zst" >"$TMP/out" 2>"$TMP/err" || fail "diff - failed: $(cat "$TMP/err")"
expect_in "$TMP/out" "verdict: within tolerance"
# The committed references are read directly.
n=0
for f in "$REF"/*/*.trace.gz; do
	[ -f "$f" ] || continue
	"$CTASIM" view "$f" -o "$TMP/ref.svg" >/dev/null 2>"$TMP/err" || fail "view $f: $(cat "$TMP/err")"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no reference .trace.gz found under $REF"
# Damage is reported with the file's name, exit 2.
head -c 300 "$TMP/a.trace.gz" >"$TMP/cut.trace.gz"
expect_rc 2 "$CTASIM" diff "$TMP/cut.trace.gz" "$TMP/a.trace"
expect_in "$TMP/err" "cut.trace.gz: gzip: truncated"
head -c 300 "$TMP/a.trace.zst" >"$TMP/cut.trace.zst"
expect_rc 2 "$CTASIM" diff "$TMP/cut.trace.zst" "$TMP/a.trace"
expect_in "$TMP/err" "cut.trace.zst: zstd: truncated"
printf '\037\213garbage-garbage-garbage' >"$TMP/bad.trace.gz"
expect_rc 2 "$CTASIM" diff "$TMP/bad.trace.gz" "$TMP/a.trace"
expect_in "$TMP/err" "bad.trace.gz: gzip: corrupt data"
# A compressed file holding something else is still "not a ctasim trace".
echo hello | gzip -c >"$TMP/hello.gz"
expect_rc 2 "$CTASIM" diff "$TMP/hello.gz" "$TMP/a.trace"
expect_in "$TMP/err" "hello.gz:1: not a ctasim trace"
finish
