#!/usr/bin/env bash
# Time from a target restart to the first completed I/O, for our host (nvmf-host bench) and for
# the Linux host (nvme-rdma), both against nvmf-target killed with SIGKILL and restarted on its
# file, five times each, both with a reconnect delay of 1 s. Run under ci/rxe-run:
#
#   ci/rxe-run --results DIR ci/recovery-figures.sh
#
# Prints one line per restart and the medians; writes $NVMF_RESULTS_DIR/recovery-figures.json:
# {"ours_ms": [...], "linux_ms": [...], "ours_median_ms", "linux_median_ms"}. A restart's time
# runs from the moment the new target prints "listening on" to the first I/O completion the
# host reports after it (ours: the bench's recovery.resumed_unix_ns; Linux: the timestamp after
# each 4 KiB O_DIRECT read of a reader loop).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
: "${NVMF_TARGET_ADDR:?}" "${NVMF_HOST_ADDR:?}"
bin=${NVMF_BIN_DIR:-$repo/bazel-bin}
T=$NVMF_TARGET_ADDR
H=$NVMF_HOST_ADDR
NQN=nqn.2024-01.io.nvmf-rdma:restart
out=$NVMF_RESULTS_DIR/recovery-figures
mkdir -p "$out"
file=/tmp/restart-ns.img
rounds=${NVMF_RESTART_ROUNDS:-5}
target_pid=

now_ns() { date +%s%N; }

# start_target: starts the target; $listening_ns is the Unix ns at which it was listening.
starts=0
start_target() {
  starts=$((starts + 1))
  local log=$out/target-$starts.log
  "$bin/target/nvmf-target" -a "$T" -s 4420 -n "$NQN" --file "$file" --size 64m >"$log" 2>&1 &
  target_pid=$!
  for _ in $(seq 1 600); do
    if grep -q "listening on" "$log"; then
      listening_ns=$(now_ns)
      return 0
    fi
    sleep 0.02
  done
  return 1
}

kill_target() {
  kill -KILL "$target_pid" 2>/dev/null
  wait "$target_pid" 2>/dev/null
}

median() { sort -n | awk '{v[NR]=$1} END {if (NR == 0) print "null"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# ------------------------------------------------------------------ our host --
start_target || { echo "target did not start"; exit 1; }
"$bin/host/nvmf-host" bench -a "$T" -s 4420 -w "$H" -n "$NQN" --reconnect-delay 1 \
  --ctrl-loss-tmo 60 --rw randread --bs 4k --iodepth 1 --runtime $((rounds * 4 + 8)) \
  --size 4m --poll event --output-format json --output "$out/ours.json" 2>"$out/ours.err" &
bench_pid=$!
sleep 10 # connected (over 4 s under load) and reading
: >"$out/ours-restarts.txt"
for i in $(seq 1 "$rounds"); do
  kill_target
  start_target || { echo "restart $i failed"; break; }
  echo "$listening_ns" >>"$out/ours-restarts.txt"
  sleep 4
done
wait "$bench_pid"
echo "our bench exited $?"
# The resume times, one a line, from the JSON (no Python: slow in the guest).
tr -d ' \n' <"$out/ours.json" | grep -o '"resumed_unix_ns":\[[0-9,]*\]' | grep -o '[0-9][0-9]*' \
  >"$out/ours-resumed.txt"
paste "$out/ours-restarts.txt" "$out/ours-resumed.txt" |
  awk 'NF == 2 {printf "%.1f\n", ($2 - $1) / 1e6}' >"$out/ours-ms.txt"
kill_target

# ---------------------------------------------------------------- Linux host --
modprobe -a nvme-rdma >/dev/null 2>&1
start_target || { echo "target did not start"; exit 1; }
nvme connect -t rdma -a "$T" -s 4420 -w "$H" -n "$NQN" --reconnect-delay 1 \
  --ctrl-loss-tmo 60 -i 1 >/dev/null || { echo "nvme connect failed"; exit 1; }
dev=
for _ in $(seq 1 300); do
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
    for n in "$c"/nvme*n*; do
      name=$(basename "$n" | sed -E 's/^(nvme[0-9]+)c[0-9]+(n[0-9]+)$/\1\2/')
      [ -b "/dev/$name" ] && dev=/dev/$name
    done
  done
  [ -n "$dev" ] && break
  sleep 0.1
done
[ -n "$dev" ] || { echo "no namespace device"; exit 1; }
(while :; do
  dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none && now_ns
done) >"$out/linux-completions.txt" 2>/dev/null &
reader=$!
sleep 4
: >"$out/linux-restarts.txt"
for i in $(seq 1 "$rounds"); do
  kill_target
  start_target || { echo "restart $i failed"; break; }
  echo "$listening_ns" >>"$out/linux-restarts.txt"
  sleep 4
done
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
nvme disconnect -n "$NQN" >/dev/null
kill_target
# For each restart: the first completion timestamp after it.
while read -r t; do
  awk -v t="$t" '$1 > t {printf "%.1f\n", ($1 - t) / 1e6; exit}' "$out/linux-completions.txt"
done <"$out/linux-restarts.txt" >"$out/linux-ms.txt"

ours_median=$(median <"$out/ours-ms.txt")
linux_median=$(median <"$out/linux-ms.txt")
echo "our host, restart -> first completed I/O (ms): $(tr '\n' ' ' <"$out/ours-ms.txt")median $ours_median"
echo "Linux host, restart -> first completed I/O (ms): $(tr '\n' ' ' <"$out/linux-ms.txt")median $linux_median"
printf '{"ours_ms": [%s], "linux_ms": [%s], "ours_median_ms": %s, "linux_median_ms": %s, "reconnect_delay_s": 1}\n' \
  "$(paste -sd, "$out/ours-ms.txt")" "$(paste -sd, "$out/linux-ms.txt")" "$ours_median" "$linux_median" \
  >"$NVMF_RESULTS_DIR/recovery-figures.json"
[ "$(wc -l <"$out/ours-ms.txt")" -eq "$rounds" ] && [ "$(wc -l <"$out/linux-ms.txt")" -eq "$rounds" ]
