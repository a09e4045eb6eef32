#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Smoke test for ci/rxe-run: lists the rxe devices, then passes rping and ib_send_lat traffic from the host device to the target device.
#
# Usage: scripts/rxe-smoke.sh            (re-runs itself under ci/rxe-run)
# Exits non-zero unless both rping and ib_send_lat completed and the rxe
# packet counters of both devices moved. Every step has its own timeout.
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	sed -n '3,7p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
fi
# It takes no argument: anything else is refused before ci/rxe-run boots a guest.
if [[ $# -gt 0 ]]; then
	echo "rxe-smoke.sh: unknown argument '$1' (it takes none; try --help)" >&2
	exit 2
fi
if [[ -z ${NVMF_RXE_MODE:-} ]]; then
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	exec "$root/ci/rxe-run" --timeout 300 "$root/scripts/rxe-smoke.sh"
fi

tdev=$NVMF_TARGET_RDMA_DEV
hdev=$NVMF_HOST_RDMA_DEV
taddr=$NVMF_TARGET_ADDR
haddr=$NVMF_HOST_ADDR
server_pid=

step() { echo "== $*"; }
fail() {
	echo "rxe-smoke: FAIL: $*" >&2
	exit 1
}
stop_server() { # background jobs of a script ignore SIGINT: stop with TERM
	if [[ -n $server_pid ]]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=
	fi
}
trap stop_server EXIT

counter() { # rxe packet counter of device $1 (0 if the kernel lacks it)
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0
}

# run_pair NAME SERVER_CMD... -- CLIENT_CMD...: server in the background, the
# client retried until the server listens; both must exit 0.
run_pair() {
	local name=$1 server=() client=() rc=0 try
	shift
	while [[ $1 != -- ]]; do server+=("$1"); shift; done
	shift
	client=("$@")
	timeout 60 "${server[@]}" >"$work/$name.server.log" 2>&1 &
	server_pid=$!
	for try in 1 2 3 4 5; do
		sleep 1
		rc=0
		timeout 60 "${client[@]}" >"$work/$name.client.log" 2>&1 || rc=$?
		[[ $rc -ne 0 ]] || break
		echo "$name client attempt $try failed (status $rc), retrying"
		kill -0 "$server_pid" 2>/dev/null || break
	done
	local src=0
	wait "$server_pid" || src=$?
	server_pid=
	echo "-- $name server (status $src):"
	tail -n 8 "$work/$name.server.log"
	echo "-- $name client (status $rc):"
	tail -n 8 "$work/$name.client.log"
	[[ $rc -eq 0 && $src -eq 0 ]] || fail "$name: client status $rc, server status $src"
}

work=$(mktemp -d)
trap 'stop_server; rm -rf "$work"' EXIT

step "mode $NVMF_RXE_MODE: target $tdev $taddr, host $hdev $haddr, results $NVMF_RESULTS_DIR"
step "ibv_devices"
timeout 30 ibv_devices | tee "$work/devices"
grep -qw "$tdev" "$work/devices" || fail "target device $tdev not listed"
grep -qw "$hdev" "$work/devices" || fail "host device $hdev not listed"
for dev in "$tdev" "$hdev"; do
	step "ibv_devinfo -d $dev"
	timeout 30 ibv_devinfo -d "$dev" -v |
		grep -E 'hca_id|state:|max_qp_wr|max_sge|max_cqe|max_mr_size|active_mtu|GID\[' || true
done

t_rx0=$(counter "$tdev" rcvd_pkts)
h_rx0=$(counter "$hdev" rcvd_pkts)
# Two netdevs means the "wire" setup: the frames must really cross the veth.
wire=
if [[ -n ${NVMF_TARGET_NETDEV:-} && $NVMF_TARGET_NETDEV != "${NVMF_HOST_NETDEV:-}" ]]; then
	wire=/sys/class/net/$NVMF_TARGET_NETDEV/statistics/rx_packets
	w_rx0=$(cat "$wire")
fi

step "rping: server $taddr ($tdev), client from $haddr ($hdev)"
run_pair rping \
	rping -s -a "$taddr" -C 10 -S 64 -v -- \
	rping -c -a "$taddr" -I "$haddr" -C 10 -S 64 -v
grep -q 'ping data' "$work/rping.client.log" || fail "rping client printed no ping data"

step "ib_send_lat -R: server on $tdev, client on $hdev"
run_pair ib_send_lat \
	ib_send_lat -R -d "$tdev" -n 200 -s 64 -- \
	ib_send_lat -R -d "$hdev" --source_ip "$haddr" -n 200 -s 64 "$taddr"

t_rx1=$(counter "$tdev" rcvd_pkts)
h_rx1=$(counter "$hdev" rcvd_pkts)
step "rcvd_pkts: $tdev $t_rx0 -> $t_rx1, $hdev $h_rx0 -> $h_rx1"
[[ $t_rx1 -gt $t_rx0 && $h_rx1 -gt $h_rx0 ]] || fail "rxe packet counters did not move"
if [[ -n $wire ]]; then
	w_rx1=$(cat "$wire")
	step "$NVMF_TARGET_NETDEV rx_packets: $w_rx0 -> $w_rx1"
	[[ $((w_rx1 - w_rx0)) -ge 400 ]] || fail "fewer than 400 frames crossed $NVMF_TARGET_NETDEV"
fi
echo "rxe-smoke: PASS"
