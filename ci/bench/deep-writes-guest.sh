#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Guest side of `ci/bench-compare.sh --deep-writes`: the Linux host's 64 KiB random writes at
# QD32 x 2 jobs and at QD127 against nvmf-target and nvmet-rdma running side by side
# (ci/lib/deep_writes.sh), REPS repetitions, the two targets' order alternating per repetition.
# Each cell's fio JSON, rxe retry counters and kernel lines go to $NVMF_RESULTS_DIR/raw-deep/;
# cells.tsv lists them (rep, job, target, tag, exit status). Figures: ci/bench/deep-writes-report.py.
#
# Usage (under ci/rxe-run): ci/bench/deep-writes-guest.sh BIN_DIR REPS
# Environment: BENCH_RPS on (default: the rig as ci/vm/guest.sh sets it up) or off (Receive
# Packet Steering off on both veths: each packet on the backlog of the CPU that sent it).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:?BIN_DIR}
reps=${2:?REPS}
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$repo/ci/lib/target.sh"
# shellcheck source=/dev/null
. "$repo/ci/lib/null_blk.sh"
# shellcheck source=/dev/null
. "$repo/ci/lib/deep_writes.sh"
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
# shellcheck disable=SC2034 # read by ci/lib/deep_writes.sh
DEEP_OUT=$NVMF_RESULTS_DIR/raw-deep DEEP_TARGET_BIN=$bin/target/nvmf-target
# shellcheck disable=SC2034
DEEP_HOST_BIN=$bin/host/nvmf-host DEEP_NVMET_CONFIG=$repo/ci/interop/nvmet-config.py
mkdir -p "$DEEP_OUT"
case ${BENCH_RPS:-on} in
  on) ;;
  off) for d in "${NVMF_TARGET_NETDEV:?}" "${NVMF_HOST_NETDEV:?}"; do
    echo 0 >"/sys/class/net/$d/queues/rx-0/rps_cpus"
  done ;;
  *) echo "deep-writes-guest: BENCH_RPS wants on or off, not '$BENCH_RPS'" >&2; exit 2 ;;
esac
{
  echo "kernel=$(uname -r)"
  echo "vcpus=$(nproc)"
  echo "rps_cpus=$(cat "/sys/class/net/${NVMF_TARGET_NETDEV:?}/queues/rx-0/rps_cpus")"
  echo "fio=$(fio --version)"
} >"$DEEP_OUT/environment.txt"
cells=$DEEP_OUT/cells.tsv
: >"$cells"
deep_setup || { echo "deep-writes-guest: setup failed"; deep_teardown; exit 1; }
for rep in $(seq 1 "$reps"); do
  order=(nvmet ours)
  [ $((rep % 2)) -eq 0 ] && order=(ours nvmet)
  for job in qd32x2 qd127; do
    for t in "${order[@]}"; do
      tag=rep$rep-$job-$t
      rc=0
      deep_run "$job" "$t" "$tag" >"$DEEP_OUT/$tag.log" 2>&1 || rc=$?
      printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$job" "$t" "$tag" "$rc" >>"$cells"
      echo "deep-writes: rep $rep $job $t: $(head -n 1 "$DEEP_OUT/$tag.log")"
    done
  done
done
deep_teardown
