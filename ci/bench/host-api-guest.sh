#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The soft-RoCE half of `ci/bench-compare.sh --host-baseline NVMF_HOST`: one nvmf-target on RAM,
# and `nvmf-host bench` run by two host binaries, this tree's and a baseline (a build of an
# earlier revision), cell after cell, the order alternating each repetition: what a change of
# the host library costs. Cells: 4 KiB randread at QD1 (latency), randread and randwrite at QD32
# (IOPS), with --poll busy and with --poll event.
#
# Usage (under ci/rxe-run): ci/bench/host-api-guest.sh BIN_DIR BASELINE REPS RUNTIME RAMP
#   BIN_DIR: bazel-bin holding host/nvmf-host and target/nvmf-target (built -c opt);
#   BASELINE: the other nvmf-host binary.
# Writes $NVMF_RESULTS_DIR/raw-host-api/: cells.tsv (rep, cell, host, output file, exit status),
#   each cell's bench JSON, environment.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$here/../lib/target.sh"
bin=${1:?BIN_DIR}
baseline=${2:?BASELINE}
reps=${3:?REPS}
runtime=${4:?RUNTIME}
ramp=${5:?RAMP}
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
T=${NVMF_TARGET_ADDR:?}
H=${NVMF_HOST_ADDR:?}
NQN=nqn.2024-01.io.nvmf-rdma:bench-host-api
out=$NVMF_RESULTS_DIR/raw-host-api
mkdir -p "$out"
cells=$out/cells.tsv
: >"$cells"
[ -x "$baseline" ] || { echo "host-api-guest: $baseline is not an executable" >&2; exit 1; }
start_listening "$out/target.log" "$bin/target/nvmf-target" -a "$T" -s 4420 -n "$NQN" \
  --ram-size 256m || { echo "host-api-guest: nvmf-target did not start: $(cat "$out/target.log")" >&2; exit 1; }
target_pid=${target_pid:?}  # set by start_listening
trap 'kill "$target_pid" 2>/dev/null; wait "$target_pid" 2>/dev/null' EXIT
{
  echo "kernel=$(uname -r)"
  echo "vcpus=$(nproc)"
} >"$out/environment.txt"
cell_args() {
  case $1 in
    randread-qd1-*) echo "--rw randread --iodepth 1" ;;
    randread-qd32-*) echo "--rw randread --iodepth 32" ;;
    randwrite-qd32-*) echo "--rw randwrite --iodepth 32" ;;
  esac
}
for rep in $(seq 1 "$reps"); do
  order=(baseline current)
  [ $((rep % 2)) -eq 0 ] && order=(current baseline)
  for poll in busy event; do
    for job in randread-qd1 randread-qd32 randwrite-qd32; do
      cell=$job-$poll
      for h in "${order[@]}"; do
        exe=$bin/host/nvmf-host
        [ "$h" = baseline ] && exe=$baseline
        f=$out/rep$rep-$cell-$h.json
        rc=0
        # shellcheck disable=SC2046 # cell_args is a list of options
        timeout -k 5 $((${runtime%.*} + 60)) "$exe" bench -a "$T" -s 4420 -w "$H" -n "$NQN" \
          --bs 4k --size 64m --runtime "$runtime" --ramp_time "$ramp" --poll "$poll" \
          $(cell_args "$cell") --json "$f" 2>"$f.err" || rc=$?
        printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$cell" "$h" "$(basename "$f")" "$rc" >>"$cells"
        echo "host-api-bench: rep $rep $cell $h: exit $rc"
      done
    done
  done
done
