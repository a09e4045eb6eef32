#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Guest side of `ci/bench-compare.sh --ublk`: the same fio jobs through our host's block device
# (nvmf-host ublk, /dev/ublkbN) and through the Linux host's (nvme-rdma, /dev/nvmeXnY), both
# connected at once to Linux nvmet-rdma serving a 1 GiB memory-backed null_blk: 4 KiB random
# reads at QD1 and QD32 and 4 KiB random writes at QD32 (libaio, direct), REPS repetitions, the
# two hosts' order alternating per repetition. Each cell's fio JSON goes to
# $NVMF_RESULTS_DIR/raw-ublk/; cells.tsv lists them (rep, job, host, tag, exit status). Figures:
# ci/bench/ublk-report.py. Needs a guest kernel with ublk_drv (NVMF_RXE_KERNEL=6.12).
#
# Usage (under ci/rxe-run): ci/bench/ublk-guest.sh BIN_DIR REPS RUNTIME
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:?BIN_DIR}
reps=${2:?REPS}
runtime=${3:?RUNTIME}
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$repo/ci/lib/null_blk.sh"
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
T=${NVMF_TARGET_ADDR:?}
H=${NVMF_HOST_ADDR:?}
NQN=nqn.2024-01.io.nvmf-rdma:bench-ublk
KHOST=nqn.2014-08.org.nvmexpress:uuid:5b1c0e6a-2f3d-4a5b-9c8d-0e1f2a3b4c5d
OHOST=nqn.2014-08.org.nvmexpress:uuid:5b1c0e6a-2f3d-4a5b-9c8d-0e1f2a3b4c5e
out=$NVMF_RESULTS_DIR/raw-ublk
mkdir -p "$out"
cells=$out/cells.tsv
: >"$cells"
die() {
  echo "ublk-guest: $*" >&2
  exit 1
}
modprobe -a ublk_drv nvme-rdma nvmet-rdma || die "modprobe ublk_drv nvme-rdma nvmet-rdma failed"
[ -d /sys/kernel/config/nvmet ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
ns=$(nullb_create bench-ublk 1024) || die "null_blk failed"
cat >"$out/nvmet.json" <<JSON
{"hosts": [{"nqn": "$KHOST"}, {"nqn": "$OHOST"}],
 "ports": [{"portid": 1, "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4420"},
   "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "attr": {"allow_any_host": "0"}, "allowed_hosts": ["$KHOST", "$OHOST"],
   "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$ns"}}]}]}
JSON
python3 "$repo/ci/interop/nvmet-config.py" apply "$out/nvmet.json" || die "nvmet configfs failed"
cleanup() {
  [ -z "${ublk_pid:-}" ] || { kill -TERM "$ublk_pid"; wait "$ublk_pid"; }
  nvme disconnect -n "$NQN" >/dev/null 2>&1
  python3 "$repo/ci/interop/nvmet-config.py" clear
  nullb_remove bench-ublk
}
trap cleanup EXIT
# The Linux host: as many I/O queues as vCPUs (its default), 128 entries.
nvme connect -t rdma -a "$T" -s 4420 -w "$H" -n "$NQN" -q "$KHOST" >/dev/null || die "nvme connect failed"
kdev=
for _ in $(seq 1 100); do
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
    for n in "$c"/nvme*n*; do
      name=$(basename "$n" | sed -E 's/^(nvme[0-9]+)c[0-9]+(n[0-9]+)$/\1\2/')
      [ -b "/dev/$name" ] && kdev=/dev/$name
    done
  done
  [ -n "$kdev" ] && break
  sleep 0.1
done
[ -n "$kdev" ] || die "no block device for the Linux host"
# Our host: the same queues (one per vCPU) and entries.
"$bin/host/nvmf-host" -a "$T" -s 4420 -w "$H" -n "$NQN" --hostnqn "$OHOST" \
  --nr-io-queues "$(nproc)" --queue-size 128 ublk --json "$out/ublk.json" >"$out/ublk.log" 2>&1 &
ublk_pid=$!
for _ in $(seq 1 300); do
  grep -q ' ready: ' "$out/ublk.log" && break
  kill -0 "$ublk_pid" 2>/dev/null || break
  sleep 0.1
done
udev=$(sed -nE 's/^nvmf-host ublk: (\/dev\/ublkb[0-9]+) ready: .*/\1/p' "$out/ublk.log")
[ -n "$udev" ] || die "nvmf-host ublk did not start: $(cat "$out/ublk.log")"
for _ in $(seq 1 50); do [ -b "$udev" ] && break; sleep 0.1; done
{
  echo "kernel=$(uname -r)"
  echo "vcpus=$(nproc)"
  echo "fio=$(fio --version)"
  echo "linux_host_queues=$(find /sys/block/"$(basename "$kdev")"/mq -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
  echo "ublk=$(head -n 1 "$out/ublk.log")"
} >"$out/environment.txt"
job_args() {
  case $1 in
    randread-qd1) echo "--rw=randread --iodepth=1" ;;
    randread-qd32) echo "--rw=randread --iodepth=32" ;;
    randwrite-qd32) echo "--rw=randwrite --iodepth=32" ;;
  esac
}
for rep in $(seq 1 "$reps"); do
  order=(linux ours)
  [ $((rep % 2)) -eq 0 ] && order=(ours linux)
  for job in randread-qd1 randread-qd32 randwrite-qd32; do
    for h in "${order[@]}"; do
      dev=$kdev
      [ "$h" = ours ] && dev=$udev
      tag=rep$rep-$job-$h
      rc=0
      # shellcheck disable=SC2046 # job_args is a list of options
      timeout -k 5 $((runtime + 60)) fio --name="$job" --filename="$dev" --ioengine=libaio \
        --direct=1 --bs=4k --size=1g --time_based --runtime="$runtime" --ramp_time=1 \
        --norandommap --randrepeat=0 $(job_args "$job") --output-format=json \
        --output="$out/$tag.json" >"$out/$tag.log" 2>&1 || rc=$?
      printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$job" "$h" "$tag" "$rc" >>"$cells"
      echo "ublk-bench: rep $rep $job $h ($dev): exit $rc"
    done
  done
done
# What the guest kernel said of itself meanwhile (a BUG or WARNING is the kernel's, but it
# makes the figures suspect).
dmesg | grep -E 'BUG|WARNING|Oops|slub|ublk' >"$out/kernel.txt"
cat "$out/kernel.txt"
