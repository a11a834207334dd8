# Shared by the trace_*.sh CLI tests: a small hand-written trace with two
# kernels, steals, failed cancels and a UB report, and helpers to check
# exit codes and output. Sourced, not run.
set -u

CTASIM=${1:?usage: $0 PATH-TO-ctasim}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctasim-cli-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILS=0

fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

# expect_rc WANT CMD...: runs CMD, keeps stdout/stderr in $TMP/out, $TMP/err.
expect_rc() {
	want=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(head -c 400 "$TMP/err")"
}

# expect_in FILE TEXT: FILE contains TEXT (fixed string).
expect_in() {
	grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(head -c 400 "$1")"
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed" >&2
		exit 1
	fi
	exit 0
}

# write_fixture PATH [SED-EXPRESSION]: the fixture, optionally edited, with
# its end marker counting the records.
write_fixture() {
	{
		cat <<'TRACE'
#ctasim-trace 1
#backend sim
#device TEST-GPU
#seed 1
#tick_ns 1
#clc model
#deterministic 1
#ctasim_version 0.1.0
#kernel 0 name=steal_kernel grid=6,1,1 block=128,1,1 cluster=1,1,1 smem=0 stream=0 priority=0 release_ns=0
#kernel 1 name="odd ""name"", here" grid=2,1,1 block=64,1,1 cluster=1,1,1 smem=1024 stream=1 priority=-1 release_ns=100
t_ns,event,kernel,block,phys,sm,arg,code,text
0,launch,0,-,-,-,0,0,
100,launch,1,-,-,-,1,-1,
1000,start,0,0,0,0,-,0,
1010,start,0,1,1,1,-,0,
1020,start,0,2,2,2,-,0,
1030,start,0,3,3,3,-,0,
2000,cancel,0,0,0,0,-,0,
2100,cancel,0,1,1,1,-,0,
2200,cancel,0,2,2,2,-,0,
2250,cancel,0,3,3,3,-,0,
2300,cancel_done,0,0,0,0,4,0,
2300,steal,0,4,0,0,-,0,
2400,cancel_done,0,1,1,1,5,0,
2400,steal,0,5,1,1,-,0,
2500,cancel_done,0,2,2,2,-,1,
2500,end,0,2,2,2,-,0,
2550,cancel_done,0,3,3,3,-,3,
2550,end,0,3,3,3,-,0,
2600,start,1,0,0,2,-,0,
2610,start,1,1,1,3,-,0,
2700,ub,0,4,0,0,17,0,"read_failed_result, ""quoted"" at x.c:41 — ünïcode"
3000,cancel,0,0,0,0,-,0,
3100,cancel,0,1,1,1,-,0,
3300,cancel_done,0,0,0,0,-,1,
3300,end,0,0,0,0,-,0,
3400,cancel_done,0,1,1,1,-,1,
3400,end,0,1,1,1,-,0,
3400,kernel_end,0,-,-,-,-,0,
3600,end,1,0,0,2,-,0,
3700,end,1,1,1,3,-,0,
3700,kernel_end,1,-,-,-,-,0,
TRACE
	} | sed -e "${2:-}" >"$1.body"
	n=$(grep -vc -e '^#' -e '^t_ns,' "$1.body")
	cat "$1.body" >"$1"
	echo "#end records=$n" >>"$1"
	rm -f "$1.body"
}

# Python is needed to parse JSON and XML with real parsers.
PYTHON=$(command -v python3 || true)
