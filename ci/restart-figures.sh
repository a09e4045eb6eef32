#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Time from a target restart to the first completed I/O (figures: docs/performance.md),
# for our host (nvmf-host bench) and for the Linux nvme-rdma host, both against nvmf-target.
# Runs under ci/rxe-run; not part of CI (about 3 minutes in the soft-RoCE guest).
#
# Each sample: the host runs 4 KiB reads at QD1 on a file namespace; nvmf-target is killed
# with SIGKILL; 1 s later it is started again on the same file and port (the restart time R,
# when the new process is launched); the sample is the first read completed after R, minus R.
# The target's own start (seconds under emulation on a loaded machine) is part of the figure.
#   - ours: `nvmf-host bench --json` reports the wall-clock time of the first completion after
#     each reconnect (recovery.resumed_unix_ns);
#   - Linux: a dd loop on the namespace stamps each completed read (date +%s%3N); the first
#     stamp after R.
# Both hosts use --reconnect-delay 1 --ctrl-loss-tmo 60 and KATO 5 s: the host finds the loss,
# waits the reconnect delay, and reconnects once the target listens again.
# Prints each sample, the medians, and writes JSON to $NVMF_RESULTS_DIR/restart-figures.json.
#
# Usage: ci/rxe-run --results DIR ci/restart-figures.sh
#   (env: NVMF_BIN_DIR = bazel-bin, default <repo>/bazel-bin; NVMF_RESTART_SAMPLES, default 5)
set -uo pipefail
# Arguments first (it takes none), before the environment and before any target starts.
# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=restart-figures.sh usage="ci/rxe-run --results DIR ci/restart-figures.sh (env NVMF_RESTART_SAMPLES, NVMF_BIN_DIR) (--help)"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "$(dirname "$0")/lib/args.sh"
case "${1-}" in
  -h | --help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") [ $# -eq 0 ] || usage_error "unknown argument ''" ;;
  *) usage_error "unknown argument '$1' (it takes none; samples: NVMF_RESTART_SAMPLES)" ;;
esac
[[ ${NVMF_RESTART_SAMPLES:-5} =~ ^[1-9][0-9]{0,2}$ ]] ||
  usage_error "NVMF_RESTART_SAMPLES must be a count from 1 to 999, not '${NVMF_RESTART_SAMPLES}'"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=/dev/null # ci/lib/target.sh is shellchecked on its own
. "$repo/ci/lib/target.sh"
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
: "${NVMF_TARGET_ADDR:?}" "${NVMF_HOST_ADDR:?}"
bin=${NVMF_BIN_DIR:-$repo/bazel-bin}
samples=${NVMF_RESTART_SAMPLES:-5}
T=$NVMF_TARGET_ADDR
H=$NVMF_HOST_ADDR
NQN=nqn.2024-01.io.nvmf-rdma:restart-figures
out=$NVMF_RESULTS_DIR/restart-figures
mkdir -p "$out"
img=$(mktemp -d)/restart-ns.img
target_pid=

now_ms() { date +%s%3N; }

# start_target TAG: nvmf-target on $img, port 4420; returns once it listens.
start_target() {
  start_listening "$out/target-$1.log" \
    "$bin/target/nvmf-target" -a "$T" -s 4420 -n "$NQN" --file "$img" --size 64m
}

kill_target() {
  kill -KILL "$target_pid" 2>/dev/null
  wait "$target_pid" 2>/dev/null
  target_pid=
}

accepted() { # accepted TAG: queues target-TAG accepted so far
  local n
  n=$(grep -c ': accepted' "$out/target-$1.log" 2>/dev/null)
  echo "${n:-0}"
}

median() { # median N...: the middle value (the lower middle of an even count)
  printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}

ours=()
linux=()
rc=0

# ---------------------------------------------------------------------------------- ours --
start_target 0 || { echo "target did not start"; exit 1; }
for i in $(seq 1 "$samples"); do
  json=$out/ours-$i.json
  before=$(accepted $((i - 1)))
  "$bin/host/nvmf-host" -a "$T" -w "$H" -n "$NQN" -k 5 --reconnect-delay 1 --ctrl-loss-tmo 60 \
    bench --rw randread --bs 4k --iodepth 1 --runtime 25 --size 16m --json "$json" \
    >"$out/ours-$i.log" 2>&1 &
  host_pid=$!
  # Kill once the bench's I/O queue is connected (the admin and the I/O queue accepted) and
  # has been reading for a second: the host may take seconds to start under emulation.
  for _ in $(seq 1 600); do
    [ "$(accepted $((i - 1)))" -ge $((before + 2)) ] && break
    kill -0 "$host_pid" 2>/dev/null || break
    sleep 0.1
  done
  sleep 1
  k=$(now_ms)
  kill_target
  sleep 1
  r=$(now_ms)
  start_target "$i" || { echo "restart $i failed"; rc=1; break; }
  wait "$host_pid" || { echo "bench $i failed:"; tail -n 5 "$out/ours-$i.log"; rc=1; continue; }
  # The first resume after the restart (a loss the host found late may have resumed earlier).
  resumed_ns=$(tr -d ' \n' <"$json" | grep -oE '"resumed_unix_ns":\[[0-9,]*' | grep -oE '[0-9]+' |
    awk -v r="$r" '$1 / 1000000 > r {print; exit}')
  [ -n "$resumed_ns" ] || { echo "no recovery.resumed_unix_ns in $json"; rc=1; continue; }
  s=$((resumed_ns / 1000000 - r))
  ours+=("$s")
  echo "ours sample $i: $s ms from restart to the first completed read (target down $((r - k)) ms)"
done
kill_target

# --------------------------------------------------------------------------------- Linux --
modprobe nvme-rdma 2>/dev/null
rm -f "$img"
start_target linux-0 || { echo "target did not start"; exit 1; }
if nvme connect -t rdma -a "$T" -s 4420 -w "$H" -n "$NQN" -k 5 --reconnect-delay 1 \
  --ctrl-loss-tmo 60 >"$out/linux-connect.log" 2>&1; then
  ns=
  for _ in $(seq 1 100); do
    # The namespace's block device: the multipath head (its device is the subsystem) or, without
    # native multipath, the namespace itself (its device is the controller).
    for b in /sys/block/nvme*n*; do
      [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] && [ -b "/dev/${b##*/}" ] &&
        { ns=/dev/${b##*/}; break; }
    done
    [ -n "$ns" ] && break
    sleep 0.1
  done
  [ -n "$ns" ] || { echo "no block device for $NQN"; ls /sys/block; exit 1; }
  echo "Linux host namespace: $ns"
  for i in $(seq 1 "$samples"); do
    stamps=$out/linux-$i.stamps
    : >"$stamps"
    (while :; do
      dd if="$ns" of=/dev/null bs=4k count=1 iflag=direct status=none && now_ms >>"$stamps"
    done) &
    loop_pid=$!
    sleep 3
    k=$(now_ms)
    kill_target
    sleep 1
    r=$(now_ms)
    start_target "linux-$i" || { echo "restart $i failed"; rc=1; kill "$loop_pid"; break; }
      first=
    for _ in $(seq 1 600); do
      first=$(awk -v r="$r" '$1 > r {print $1; exit}' "$stamps")
      [ -n "$first" ] && break
      sleep 0.1
    done
    kill "$loop_pid" 2>/dev/null
    wait "$loop_pid" 2>/dev/null
    [ -n "$first" ] || { echo "Linux sample $i: no read completed within 60 s"; rc=1; continue; }
    s=$((first - r))
    linux+=("$s")
    echo "Linux sample $i: $s ms from restart to the first completed read (target down $((r - k)) ms)"
  done
  nvme disconnect -n "$NQN" >/dev/null 2>&1
else
  echo "nvme connect failed:"
  cat "$out/linux-connect.log"
  rc=1
fi
kill_target

m_ours=$( ((${#ours[@]})) && median "${ours[@]}")
m_linux=$( ((${#linux[@]})) && median "${linux[@]}")
echo "median of ${#ours[@]} (ours): ${m_ours:-none} ms; median of ${#linux[@]} (Linux): ${m_linux:-none} ms"
join() { local IFS=,; echo "$*"; }
cat >"$NVMF_RESULTS_DIR/restart-figures.json" <<JSON
{
  "what": "ms from nvmf-target restart (SIGKILL, 1 s down, started again) to the first completed 4 KiB read at QD1",
  "settings": {"reconnect_delay_s": 1, "ctrl_loss_tmo_s": 60, "kato_s": 5},
  "kernel": "$(uname -r)",
  "ours_ms": [$(join "${ours[@]}")],
  "ours_median_ms": ${m_ours:-null},
  "linux_ms": [$(join "${linux[@]}")],
  "linux_median_ms": ${m_linux:-null}
}
JSON
cat "$NVMF_RESULTS_DIR/restart-figures.json"
exit "$rc"
