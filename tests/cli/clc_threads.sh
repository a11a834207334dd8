#!/bin/sh
# Cluster-launch-control kernels and explore on several host threads, the
# runs ThreadSanitizer's CI job needs (tools/quickstart.sh test): every
# simulated thread that waits is a fiber, tens of thousands at once, which
# a TSan build runs on its host threads (sim/exec/fiber.c). Each run must
# pass. Usage: clc_threads.sh PATH/TO/ctasim
set -u
CTASIM=${1:?usage: clc_threads.sh CTASIM}
n=0
failed=0
run() {
	n=$((n + 1))
	if out=$("$CTASIM" "$@" 2>&1); then
		echo "ok $n - ctasim $*"
	else
		failed=$((failed + 1))
		echo "not ok $n - ctasim $* (exit $?)"
		echo "$out" | tail -n 15 | sed 's/^/# /'
	fi
}
run run vec_add_clc --arg n=262144 --threads 2
run run vec_add_try_cancel_blocks --arg n=262144 --threads 2 --cancel-fail-rate 0.3
run run clc_two_requests --arg n=262144 --threads 2
run run vecscale_clc --arg n=262144 --threads 2
run run vecscale_clc_cluster --arg n=262144 --threads 2
run run spin_clc --arg grid=8192 --threads 2
run run work_steal_queue --threads 2
run run block_reduce --arg n=262144 --threads 2
run explore vec_add_clc --schedules 5 --arg n=65536 --threads 2
run explore vecscale_clc_cluster --schedules 3 --arg n=65536 --threads 2
echo "1..$n"
[ "$failed" -eq 0 ]
