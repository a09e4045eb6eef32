#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The soft-RoCE half of ci/bench-compare.sh: runs under ci/rxe-run, measures every cell of every
# repetition back to back (order alternating) and records raw outputs; ci/bench/report.py turns
# them into the report on the host.
#
# Usage (under ci/rxe-run): ci/bench/guest.sh BIN_DIR REPS RUNTIME RAMP
#   BIN_DIR: bazel-bin holding host/nvmf-host and target/nvmf-target (built -c opt).
# Environment: BENCH_POLL (our host's --poll for every cell but the busy/event pair, default
#   busy, as nvmf-host bench), BENCH_INLINE_OFF (our host's --max-inline-data for the "inline
#   off" cell, default 0).
# Writes to $NVMF_RESULTS_DIR/raw/: one output file per cell and repetition, and cells.tsv with
#   rep, group (the targets' in-capsule size, or "floor"), cell, kind (ours|fio|perftest), output
#   file, exit status.
# Stacks (targets on rxe0 10.99.0.1, hosts on rxe1 10.99.0.2): ours = nvmf-host bench; kernel
#   host = nvme-cli connect + fio libaio direct=1; kernel target = nvmet-rdma on null_blk
#   (configfs, port 4420, one in-capsule size at a time); our target = nvmf-target on RAM
#   (in-capsule 4096/8192/16384 on ports 4421/4423/4425 with the default --poll event
#   --busy-poll-us 1000, and --busy-poll-us 0 on port 4427).
set -uo pipefail
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$(dirname "$0")/../lib/target.sh"
# shellcheck source=/dev/null
. "$(dirname "$0")/../lib/null_blk.sh"
bin=${1:?BIN_DIR}
reps=${2:?REPS}
runtime=${3:?RUNTIME}
ramp=${4:?RAMP}
out=${NVMF_RESULTS_DIR:?run this under ci/rxe-run}/raw
mkdir -p "$out"
# No python in the guest: its start-up over the 9p root takes tens of seconds under emulation.
runtime_ms=$(awk -v s="$runtime" 'BEGIN { printf "%d", s * 1000 }')
ramp_ms=$(awk -v s="$ramp" 'BEGIN { printf "%d", s * 1000 }')
poll=${BENCH_POLL:-busy}
alt_poll=$([ "$poll" = busy ] && echo event || echo busy)
inline_off=${BENCH_INLINE_OFF:-0}
taddr=${NVMF_TARGET_ADDR:?}
haddr=${NVMF_HOST_ADDR:?}
tsv=$out/cells.tsv
log=$out/guest.log
: >"$tsv"
exec 3>>"$log"
say() { echo "bench-guest: $(cut -d' ' -f1 /proc/uptime)s: $*" | tee -a /dev/fd/3 >&2; }

# Our targets are all live for the whole run, one process per in-capsule size ICS (and one with
# --busy-poll-us 0 for the window pair), so that their cells run back to back. The kernel
# target cannot do the same: nvmet-rdma keeps one receive-buffer layout per RDMA device, sized
# by the inline_data_size of the port that connected first (nvmet_rdma_find_get_device), so a
# second port on rxe0 with a larger size advertises an IOCCSZ its receive buffers cannot hold
# and in-capsule writes beyond the first size hang until the host's I/O timeout (seen with Linux
# 6.1). The kernel target therefore serves one size at a time: all its hosts disconnect, the
# port's param_inline_data_size changes, they reconnect.
ics_list=(4096 8192 16384)
declare -A oport onqn
i=0
for ics in "${ics_list[@]}"; do
  oport[$ics]=$((4421 + 2 * i))
  onqn[$ics]=nqn.2024-01.io.nvmf-rdma:bench-ours-ics$ics
  i=$((i + 1))
done
kport=4420
knqn=nqn.2024-01.io.nvmf-rdma:bench-kernel
kics=   # the kernel target's in-capsule size now
kdev=   # kernel host -> kernel target block device
odev=   # kernel host -> our target (in-capsule 4096) block device
nwport=4427
nwnqn=nqn.2024-01.io.nvmf-rdma:bench-ours-nowindow
nwdev=
cfg=/sys/kernel/config/nvmet
target_pids=()

# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
  local n
  for n in "$knqn" "${onqn[@]}" "$nwnqn"; do nvme disconnect -n "$n" >/dev/null 2>&1; done
  for n in "${target_pids[@]}"; do kill -TERM "$n" 2>/dev/null; done
  for n in "${target_pids[@]}"; do wait "$n" 2>/dev/null; done
  dmesg >"$out/dmesg.txt" 2>&1
}
trap cleanup EXIT

# ---------------------------------------------------------------- kernel target (nvmet-rdma) --
kernel_target_setup() {
  # null_blk as the module's default device is: 250 GiB (256000 MiB), no memory behind it
  # (reads return zeroes, writes are dropped), 512-byte LBAs; made by name (ci/lib/null_blk.sh).
  local dev
  dev=$(nullb_create bench-knull 256000 memory_backed=0) || return 1
  # nvmet reports a multi-controller subsystem (CMIC), so with native multipath the kernel host
  # builds a head disk, which took minutes to appear under emulation: use the plain namespace.
  modprobe nvme_core multipath=N || return 1
  modprobe -a nvmet nvmet-rdma nvme-rdma || return 1
  [ -d "$cfg" ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
  mkdir -p "$cfg/subsystems/$knqn/namespaces/1" || return 1
  echo 1 >"$cfg/subsystems/$knqn/attr_allow_any_host"
  echo -n "$dev" >"$cfg/subsystems/$knqn/namespaces/1/device_path"
  echo 1 >"$cfg/subsystems/$knqn/namespaces/1/enable" || return 1
  mkdir -p "$cfg/ports/1"
  echo rdma >"$cfg/ports/1/addr_trtype"
  echo ipv4 >"$cfg/ports/1/addr_adrfam"
  echo "$taddr" >"$cfg/ports/1/addr_traddr"
  echo "$kport" >"$cfg/ports/1/addr_trsvcid"
}

# Puts the kernel target on in-capsule size $1 and (re)connects the kernel host to it.
# param_inline_data_size changes only while no subsystem is linked to the port.
kernel_target_inline() {
  [ "$kics" = "$1" ] && [ -n "$kdev" ] && return 0
  nvme disconnect -n "$knqn" >&3 2>&1
  kdev=
  rm -f "$cfg/ports/1/subsystems/$knqn"
  echo "$1" >"$cfg/ports/1/param_inline_data_size" || say "kernel target: cannot set inline_data_size $1"
  ln -s "$cfg/subsystems/$knqn" "$cfg/ports/1/subsystems/$knqn"
  kics=$1
  kdev=$(kernel_connect "$knqn" "$kport") || {
    kdev=
    say "kernel host: cannot connect to the kernel target (in-capsule $1)"
  }
  say "kernel target on in-capsule $1: ${kdev:-no device}"
}

# ---------------------------------------------------------------------------- our target --
our_target_start() { # PORT NQN LOG [options]
  local port=$1 nqn=$2 tlog=$3
  shift 3
  local rc=0
  start_listening "$tlog" "$bin/target/nvmf-target" -a "$taddr" -s "$port" -n "$nqn" \
    --ram-size 256m "$@" || rc=$?
  target_pids+=("$target_pid")
  [ "$rc" -ne 0 ] || return 0
  say "nvmf-target on port $port did not start: $(cat "$tlog")"
  return 1
}
# ------------------------------------------------------------------------- kernel host --
# The block device of the connected subsystem $1 ("" when none).
# A multipath head (nvmeXnY under nvme-subsysX) has the NQN beside it, a plain namespace on its
# controller (device/subsysnqn).
block_dev_of() {
  local b
  for b in /sys/block/nvme*; do
    [ -e "$b" ] || continue
    if [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] ||
      [ "$(cat "$(readlink -f "$b")/../subsysnqn" 2>/dev/null)" = "$1" ]; then
      echo "/dev/${b##*/}"
      return 0
    fi
  done
  return 1
}

kernel_connect() { # NQN PORT -> prints the block device
  timeout 20 nvme connect -t rdma -a "$taddr" -s "$2" -n "$1" -w "$haddr" >&3 2>&1 || {
    echo "nvme connect to $1 failed; kernel log:" >&3
    dmesg | tail -n 25 >&3
    return 1
  }
  local d
  for _ in $(seq 1 60); do
    d=$(block_dev_of "$1") && [ -b "$d" ] && {
      echo "$d"
      return 0
    }
    sleep 0.2
  done
  {
    echo "connected to $1 but found no block device; /sys/block and controllers:"
    for b in /sys/block/nvme*; do [ -e "$b" ] && ls -ld "$b"; done
    grep -H . /sys/class/nvme/*/subsysnqn /sys/class/nvme-subsystem/*/subsysnqn
    dmesg | tail -n 25
  } >&3 2>&1
  return 1
}

# ------------------------------------------------------------------------------- cells --
record() { # rep group cell kind file rc
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$tsv"
}

ours() { # rep group cell port nqn rw bs iodepth [extra bench options]
  local rep=$1 group=$2 cell=$3 port=$4 nqn=$5 rw=$6 bs=$7 qd=$8
  shift 8
  local f=$out/r$rep-g$group-$cell.json rc=0
  timeout $((120 + 2 * ${runtime%.*})) "$bin/host/nvmf-host" bench -a "$taddr" -s "$port" \
    -w "$haddr" -n "$nqn" --rw "$rw" --bs "$bs" --iodepth "$qd" --runtime "$runtime" \
    --ramp_time "$ramp" --size 64m --poll "${CELL_POLL:-$poll}" --json "$f" "$@" \
    2>"$f.err" || rc=$?
  record "$rep" "$group" "$cell" ours "$f" "$rc"
}

kfio() { # rep group cell dev rw bs iodepth
  local rep=$1 group=$2 cell=$3 dev=$4 rw=$5 bs=$6 qd=$7
  local f=$out/r$rep-g$group-$cell.json rc=0
  if [ -z "$dev" ]; then
    record "$rep" "$group" "$cell" fio "$f" 127
    return
  fi
  timeout $((120 + 2 * ${runtime%.*})) fio --name=cell --filename="$dev" --ioengine=libaio \
    --direct=1 --rw="$rw" --bs="$bs" --iodepth="$qd" --size=64m --time_based \
    --runtime="${runtime_ms}ms" --ramp_time="${ramp_ms}ms" --output-format=json \
    --output="$f" >"$f.err" 2>&1 || rc=$?
  record "$rep" "$group" "$cell" fio "$f" "$rc"
}


# perftest one-way (send, write: half round trip) or round trip (read) latency at $3 bytes.
# A run whose client fails (the server was not listening yet under emulation, or the CPU
# calibration failed) is tried once more.
perf() { # rep tool size
  local rep=$1 tool=$2 size=$3
  local f=$out/r$rep-floor-$tool-$size.txt rc try server
  for try in 1 2; do
    rc=0
    timeout 60 "$tool" -d rxe0 -R -F -s "$size" -n 300 >"$f.server" 2>&1 &
    server=$!
    sleep $((try * 2 - 1))
    timeout 60 "$tool" -d rxe1 -R -F -s "$size" -n 300 "$taddr" >"$f" 2>&1 || rc=$?
    wait "$server" || true
    [ "$rc" = 0 ] && grep -Eq '^ *[0-9]+ +[0-9]+ +[0-9.]+ ' "$f" && break
    say "perftest $tool -s $size: exit $rc, try $try"
  done
  record "$rep" floor "$tool-$size" perftest "$f" "$rc"
}

# ------------------------------------------------------------------------------- main --
say "reps $reps, runtime $runtime s, ramp $ramp s, our host's poll $poll, inline off = $inline_off"
kernel_target_setup || say "kernel target setup failed (the kernel target's cells will be empty)"
for ics in "${ics_list[@]}"; do
  our_target_start "${oport[$ics]}" "${onqn[$ics]}" "$out/target-ics$ics.log" \
    --inline-data-size "$ics" || say "our target with in-capsule $ics did not start"
done
our_target_start "$nwport" "$nwnqn" "$out/target-nowindow.log" --busy-poll-us 0 ||
  say "our target with --busy-poll-us 0 did not start"
# The kernel host against our target: the read cells only, at the default in-capsule size.
odev=$(kernel_connect "${onqn[4096]}" "${oport[4096]}") ||
  say "kernel host: cannot connect to our target"
nwdev=$(kernel_connect "$nwnqn" "$nwport") ||
  say "kernel host: cannot connect to our target with --busy-poll-us 0"
say "kernel host -> our target: ${odev:-no device}; with --busy-poll-us 0: ${nwdev:-no device}"
sizes=(4k 8k 16k 32k)

# Every cell of a repetition as GROUP:CELL lines, GROUP being the in-capsule size of the
# targets it uses (reads: 4096), in blocks; "kernel:ICS" starts a block that needs the kernel
# target on ICS. Reversed ($1 = 1): the blocks in reverse order, each block's cells too.
# Our in-capsule sizes at one write size are neighbours (their ratio comes from cells seconds
# apart); the kernel's are a block apart (one reconnect between them).
cell_blocks() {
  local g=4096 bs ics
  echo "kernel:4096"
  for c in read1-oo read1-kk read1-ok read1-ko read32-oo read32-kk read32-ok read32-ko \
    read1-oo-inline-off "read1-oo-$alt_poll" read1-oo-nowindow read1-ko-nowindow; do
    echo "$g:$c"
  done
  for bs in "${sizes[@]}"; do echo "4096:write1-$bs-kk"; done
  echo "ours"
  for bs in "${sizes[@]}"; do
    for ics in "${ics_list[@]}"; do echo "$ics:write1-$bs-oo"; done
  done
  for ics in 8192 16384; do
    echo "kernel:$ics"
    for bs in "${sizes[@]}"; do echo "$ics:write1-$bs-kk"; done
  done
}

cell_list() {
  local rev=$1
  [ "$rev" = 1 ] || { cell_blocks; return; }
  # Reverse the cells inside each block, then the blocks, keeping each header first.
  cell_blocks | awk '
    /^(kernel:|ours)/ { n++; head[n] = $0; m[n] = 0; next }
    { m[n]++; cell[n, m[n]] = $0 }
    END { for (b = n; b >= 1; b--) { print head[b]; for (i = m[b]; i >= 1; i--) print cell[b, i] } }'
}

run_cell() { # rep GROUP:CELL
  local rep=$1 ics=${2%%:*} c=${2#*:}
  local op=${oport[$ics]:-} on=${onqn[$ics]:-}
  case $c in
    read1-oo) ours "$rep" "$ics" "$c" "$op" "$on" randread 4k 1 ;;
    read1-kk) kfio "$rep" "$ics" "$c" "$kdev" randread 4k 1 ;;
    read1-ok) ours "$rep" "$ics" "$c" "$kport" "$knqn" randread 4k 1 ;;
    read1-ko) kfio "$rep" "$ics" "$c" "$odev" randread 4k 1 ;;
    read32-oo) ours "$rep" "$ics" "$c" "$op" "$on" randread 4k 32 ;;
    read32-kk) kfio "$rep" "$ics" "$c" "$kdev" randread 4k 32 ;;
    read32-ok) ours "$rep" "$ics" "$c" "$kport" "$knqn" randread 4k 32 ;;
    read32-ko) kfio "$rep" "$ics" "$c" "$odev" randread 4k 32 ;;
    read1-oo-inline-off)
      ours "$rep" "$ics" "$c" "$op" "$on" randread 4k 1 --max-inline-data "$inline_off" ;;
    "read1-oo-$alt_poll") CELL_POLL=$alt_poll ours "$rep" "$ics" "$c" "$op" "$on" randread 4k 1 ;;
    read1-oo-nowindow) ours "$rep" "$ics" "$c" "$nwport" "$nwnqn" randread 4k 1 ;;
    read1-ko-nowindow) kfio "$rep" "$ics" "$c" "$nwdev" randread 4k 1 ;;
    write1-*-oo) ours "$rep" "$ics" "$c" "$op" "$on" randwrite "$(echo "$c" | cut -d- -f2)" 1 ;;
    write1-*-kk) kfio "$rep" "$ics" "$c" "$kdev" randwrite "$(echo "$c" | cut -d- -f2)" 1 ;;
    *) say "unknown cell $2" ;;
  esac
}

run_floor() {
  local rep=$1 rev=$2
  local runs=("ib_send_lat 64" "ib_send_lat 16" "ib_write_lat 4096")
  local b
  for b in 4096 8192 16384 32768; do
    runs+=("ib_send_lat $((64 + b))" "ib_read_lat $b")
  done
  if [ "$rev" = 1 ]; then
    local r=()
    for ((i = ${#runs[@]} - 1; i >= 0; i--)); do r+=("${runs[i]}"); done
    runs=("${r[@]}")
  fi
  local x
  for x in "${runs[@]}"; do
    # shellcheck disable=SC2086 # "tool size"
    perf "$rep" $x
  done
}

for ((rep = 1; rep <= reps; rep++)); do
  rev=$(((rep + 1) % 2))
  say "repetition $rep of $reps$([ "$rev" = 1 ] && echo ' (cells reversed)')"
  [ "$rev" = 1 ] && run_floor "$rep" "$rev"
  while read -r c; do
    case $c in
      kernel:*) kernel_target_inline "${c#kernel:}" ;;
      ours) ;;
      *) run_cell "$rep" "$c" ;;
    esac
  done < <(cell_list "$rev")
  [ "$rev" = 0 ] && run_floor "$rep" "$rev"
done
say "done"
exit 0
