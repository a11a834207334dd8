#!/bin/sh
# Checks the CUDA backend's fatbin: the sm_100a PTX must use cluster launch
# control (clusterlaunchcontrol.try_cancel, unicast and multicast), and the
# sm_90 PTX must not need it (it runs the emulation, built on st.async).
# Usage: check_clc_ptx.sh KERNELS.compute_90.ptx KERNELS.compute_100a.ptx
set -u
ptx90=$1
ptx100=$2
status=0
check() { # what, file, pattern, want (1: present, 0: absent)
	if grep -q -- "$3" "$2"; then got=1; else got=0; fi
	if [ "$got" = "$4" ]; then
		echo "ok: $1"
	else
		echo "FAIL: $1 ($3 in $2)"
		status=1
	fi
}
check "sm_100a PTX issues clusterlaunchcontrol.try_cancel" "$ptx100" \
	'clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128' 1
check "sm_100a PTX issues the multicast form" "$ptx100" \
	'clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128' 1
check "sm_100a PTX decodes results in hardware" "$ptx100" \
	'clusterlaunchcontrol.query_cancel.is_canceled' 1
check "sm_90 PTX has no clusterlaunchcontrol instruction" "$ptx90" 'clusterlaunchcontrol' 0
check "sm_90 PTX emulates with st.async + complete_tx" "$ptx90" \
	'st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32' 1
check "sm_90 PTX targets sm_90" "$ptx90" '^\.target sm_90' 1
check "sm_100a PTX targets sm_100a" "$ptx100" '^\.target sm_100a' 1
exit $status
