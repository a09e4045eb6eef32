#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Stage 2 guest init (PID 1 after switch_root): soft-RoCE "wire" setup, runs the caller's command, writes its result, powers off.
#
# ci/rxe-run copies this file into the control share (/run/rxe-ctl) for each
# run, next to job.sh (cwd, timeout, results path, argv, environment). Output
# files in the control share: stdout, stderr, rc, times, guest.log (this
# script's own trace). PID 1 must never exit, so every way out powers off and
# then sleeps.
set -euo pipefail

ctl=/run/rxe-ctl
exec >"$ctl/guest.log" 2>&1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# shellcheck disable=SC2317 # reached through the EXIT trap
power_off() {
	sync
	echo o >/proc/sysrq-trigger
	while :; do sleep 60; done
}
trap 'echo "guest: exiting (status $?)"; power_off' EXIT

uptime_s() { cut -d' ' -f1 /proc/uptime; }
echo "ready_uptime=$(uptime_s)" >"$ctl/times"

# Userspace conveniences devtmpfs does not provide.
mkdir -p /dev/pts /dev/shm
mount -t devpts -o mode=0620,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
hostname rxe-guest
ip link set lo up

# Soft-RoCE "wire" (see docs/soft-roce.md): 6.1's rxe only works in the initial
# netns, so both veth ends stay here and policy routing makes locally generated
# packets between the two local addresses cross the veth instead of lo.
modprobe -a rdma_rxe ib_uverbs rdma_ucm veth
if modprobe configfs; then # for kernel nvmet peers; not needed by rxe itself
	mount -t configfs configfs /sys/kernel/config || true
fi
ip link add vethA type veth peer name vethB
for d in all default vethA vethB; do
	echo 0 >"/proc/sys/net/ipv4/conf/$d/rp_filter"
	echo 1 >"/proc/sys/net/ipv4/conf/$d/accept_local"
done
ip addr add 10.99.0.1/24 dev vethA
ip addr add 10.99.0.2/24 dev vethB
# Receive Packet Steering on both veths, over every CPU (docs/soft-roce.md): a veth queues
# each packet on the backlog of the CPU that sent it, and rxe sends one QP's packets from
# several CPUs (the system call that posted, softirq where the peer's packets arrived), so
# without RPS they overtake each other and rxe recovers with a NAK or its retransmit timer
# (seconds). With RPS every packet of one flow (a QP's UDP source port) goes to the backlog of
# one CPU chosen by its hash, in the order it was sent.
rps_mask() { # all CPUs as a sysfs cpumask: 32-bit hex groups, highest first, comma-separated
	local n=$1 groups=() bits
	while [ "$n" -gt 0 ]; do
		bits=$((n >= 32 ? 32 : n))
		groups=("$(printf '%x' $(((1 << bits) - 1)))" "${groups[@]}")
		n=$((n - bits))
	done
	(
		IFS=,
		echo "${groups[*]}"
	)
}
mask=$(rps_mask "$(nproc)")
for d in vethA vethB; do echo "$mask" >"/sys/class/net/$d/queues/rx-0/rps_cpus"; done
echo "guest: rps_cpus $mask on vethA and vethB"
ip link set vethA up
ip link set vethB up
ip route add 10.99.0.2/32 dev vethA src 10.99.0.1 table 101
ip route add 10.99.0.1/32 dev vethB src 10.99.0.2 table 102
ip rule add pref 100 iif lo to 10.99.0.2 lookup 101
ip rule add pref 101 iif lo to 10.99.0.1 lookup 102
ip rule add pref 1000 lookup local
ip rule del pref 0 lookup local
rdma link add rxe0 type rxe netdev vethA
rdma link add rxe1 type rxe netdev vethB
for dev in rxe0 rxe1; do
	for _ in $(seq 100); do
		grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" && break
		sleep 0.1
	done
	grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" || {
		echo "guest: $dev port not ACTIVE"
		exit 1
	}
done
ip rule show
rdma link show
timeout_bin=$(command -v timeout)

# The caller's context: RXE_CWD, RXE_TIMEOUT, RXE_RESULTS, RXE_ARGV, exports.
# shellcheck source=/dev/null
source "$ctl/job.sh"
mkdir -p "$RXE_RESULTS"
mount --move /run/rxe-results "$RXE_RESULTS"
export NVMF_RXE_MODE=vm
export NVMF_TARGET_ADDR=10.99.0.1 NVMF_HOST_ADDR=10.99.0.2
export NVMF_TARGET_RDMA_DEV=rxe0 NVMF_HOST_RDMA_DEV=rxe1
export NVMF_TARGET_NETDEV=vethA NVMF_HOST_NETDEV=vethB
export NVMF_RESULTS_DIR=$RXE_RESULTS
ulimit -l unlimited
if ! cd "$RXE_CWD"; then
	echo "rxe-run: guest: cannot cd to $RXE_CWD ; running in /" >>"$ctl/stderr"
	cd /
fi

echo "cmd_start_uptime=$(uptime_s)" >>"$ctl/times"
rc=0
"$timeout_bin" -k 10 "$RXE_TIMEOUT" "${RXE_ARGV[@]}" </dev/null >>"$ctl/stdout" 2>>"$ctl/stderr" || rc=$?
echo "cmd_end_uptime=$(uptime_s)" >>"$ctl/times"
echo "$rc" >"$ctl/rc.tmp"
mv "$ctl/rc.tmp" "$ctl/rc"
exit 0
