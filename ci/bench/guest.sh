#!/usr/bin/env bash
# The soft-RoCE half of ci/bench-compare.sh: runs under ci/rxe-run, measures every cell of every
# repetition back to back (order alternating) and records raw outputs; ci/bench/report.py turns
# them into the report on the host.
#
# Usage (under ci/rxe-run): ci/bench/guest.sh BIN_DIR REPS RUNTIME RAMP
#   BIN_DIR: bazel-bin holding host/nvmf-host and target/nvmf-target (built -c opt).
# Environment: BENCH_POLL (our host's --poll for every cell but the busy/event pair, default
#   event), BENCH_INLINE_OFF (our host's --max-inline-data for the "inline off" cell, default 0).
# Writes to $NVMF_RESULTS_DIR/raw/: one output file per cell and repetition, and cells.tsv with
#   rep, group, cell, kind (ours|fio|perftest), output file, exit status.
# Stacks (target on rxe0 10.99.0.1, host on rxe1 10.99.0.2): ours = nvmf-host bench; kernel
#   host = nvme-cli connect + fio libaio direct=1; kernel target = nvmet-rdma on null_blk
#   (configfs, port 4420); our target = nvmf-target on RAM (port 4421).
set -uo pipefail
bin=${1:?BIN_DIR}
reps=${2:?REPS}
runtime=${3:?RUNTIME}
ramp=${4:?RAMP}
out=${NVMF_RESULTS_DIR:?run this under ci/rxe-run}/raw
mkdir -p "$out"
# No python in the guest: its start-up over the 9p root takes tens of seconds under emulation.
runtime_ms=$(awk -v s="$runtime" 'BEGIN { printf "%d", s * 1000 }')
ramp_ms=$(awk -v s="$ramp" 'BEGIN { printf "%d", s * 1000 }')
poll=${BENCH_POLL:-event}
inline_off=${BENCH_INLINE_OFF:-0}
taddr=${NVMF_TARGET_ADDR:?}
haddr=${NVMF_HOST_ADDR:?}
knqn=nqn.2024-01.io.nvmf-rdma:bench-kernel
onqn=nqn.2024-01.io.nvmf-rdma:bench-ours
kport=4420
oport=4421
cfg=/sys/kernel/config/nvmet
tsv=$out/cells.tsv
log=$out/guest.log
: >"$tsv"
exec 3>>"$log"
say() { echo "bench-guest: $(cut -d' ' -f1 /proc/uptime)s: $*" | tee -a /dev/fd/3 >&2; }

target_pid=
kdev=   # kernel host -> kernel target block device
odev=   # kernel host -> our target block device

cleanup() {
  nvme disconnect -n "$knqn" >/dev/null 2>&1
  nvme disconnect -n "$onqn" >/dev/null 2>&1
  if [ -n "$target_pid" ]; then
    kill -TERM "$target_pid" 2>/dev/null
    wait "$target_pid" 2>/dev/null
  fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- kernel target (nvmet-rdma) --
kernel_target_setup() {
  modprobe null_blk nr_devices=1 || return 1
  # nvmet reports a multi-controller subsystem (CMIC), so with native multipath the kernel host
  # builds a head disk, which took minutes to appear under emulation: use the plain namespace.
  modprobe nvme_core multipath=N || return 1
  modprobe -a nvmet nvmet-rdma nvme-rdma || return 1
  [ -d "$cfg" ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
  mkdir -p "$cfg/subsystems/$knqn/namespaces/1" || return 1
  echo 1 >"$cfg/subsystems/$knqn/attr_allow_any_host"
  echo -n /dev/nullb0 >"$cfg/subsystems/$knqn/namespaces/1/device_path"
  echo 1 >"$cfg/subsystems/$knqn/namespaces/1/enable" || return 1
  mkdir -p "$cfg/ports/1"
  echo rdma >"$cfg/ports/1/addr_trtype"
  echo ipv4 >"$cfg/ports/1/addr_adrfam"
  echo "$taddr" >"$cfg/ports/1/addr_traddr"
  echo "$kport" >"$cfg/ports/1/addr_trsvcid"
}

# param_inline_data_size changes only while no subsystem is linked to the port.
kernel_target_inline() {
  rm -f "$cfg/ports/1/subsystems/$knqn"
  echo "$1" >"$cfg/ports/1/param_inline_data_size" || return 1
  ln -s "$cfg/subsystems/$knqn" "$cfg/ports/1/subsystems/$knqn"
}

# ---------------------------------------------------------------------------- our target --
our_target_start() {
  if [ -n "$target_pid" ]; then
    kill -TERM "$target_pid" 2>/dev/null
    wait "$target_pid" 2>/dev/null
    target_pid=
  fi
  local tlog=$out/target-ics$1.log
  "$bin/target/nvmf-target" -a "$taddr" -s "$oport" -n "$onqn" --ram-size 256m \
    --inline-data-size "$1" >"$tlog" 2>&1 &
  target_pid=$!
  for _ in $(seq 1 100); do
    grep -q 'listening on' "$tlog" 2>/dev/null && return 0
    kill -0 "$target_pid" 2>/dev/null || break
    sleep 0.1
  done
  say "nvmf-target did not start: $(cat "$tlog")"
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
    ls -l /sys/block/ | grep nvme
    grep -H . /sys/class/nvme/*/subsysnqn /sys/class/nvme-subsystem/*/subsysnqn
    dmesg | tail -n 25
  } >&3 2>&1
  return 1
}

# Puts both targets on in-capsule size $1 and reconnects the kernel host to both.
configure() {
  local ics=$1
  nvme disconnect -n "$knqn" >&3 2>&1
  nvme disconnect -n "$onqn" >&3 2>&1
  kernel_target_inline "$ics" || say "kernel target: cannot set inline_data_size $ics"
  our_target_start "$ics" || say "our target did not start with --inline-data-size $ics"
  kdev=$(kernel_connect "$knqn" "$kport") || {
    kdev=
    say "kernel host: cannot connect to the kernel target"
  }
  odev=$(kernel_connect "$onqn" "$oport") || {
    odev=
    say "kernel host: cannot connect to our target"
  }
  say "in-capsule $ics: kernel host devices: kernel target ${kdev:-none}, our target ${odev:-none}"
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
    --ramp_time "$ramp" --size 64m --poll "${CELL_POLL:-$poll}" --output-format json --output "$f" "$@" \
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
perf() { # rep tool size
  local rep=$1 tool=$2 size=$3
  local f=$out/r$rep-floor-$tool-$size.txt rc=0
  timeout 60 "$tool" -d rxe0 -R -F -s "$size" -n 300 >"$f.server" 2>&1 &
  local server=$!
  sleep 1
  timeout 60 "$tool" -d rxe1 -R -F -s "$size" -n 300 "$taddr" >"$f" 2>&1 || rc=$?
  wait "$server" || true
  record "$rep" floor "$tool-$size" perftest "$f" "$rc"
}

# ------------------------------------------------------------------------------- main --
say "reps $reps, runtime $runtime s, ramp $ramp s, our poll $poll, inline off = $inline_off"
kernel_target_setup || say "kernel target setup failed (cells b and c will be empty)"
sizes=(4k 8k 16k 32k)
ics_list=(4096 8192 16384)

# The cells of in-capsule group $2 in order $3 (0 forward, 1 reversed).
run_group() {
  local rep=$1 ics=$2 rev=$3
  local cells=()
  if [ "$ics" = 4096 ]; then
    cells+=(read1-oo read1-kk read1-ok read1-ko read32-oo read32-kk read32-ok read32-ko
      read1-oo-inline-off read1-oo-busy)
  fi
  for bs in "${sizes[@]}"; do cells+=("write1-$bs-oo" "write1-$bs-kk"); done
  if [ "$rev" = 1 ]; then
    local r=()
    for ((i = ${#cells[@]} - 1; i >= 0; i--)); do r+=("${cells[i]}"); done
    cells=("${r[@]}")
  fi
  local c
  for c in "${cells[@]}"; do
    case $c in
      read1-oo) ours "$rep" "$ics" "$c" $oport $onqn randread 4k 1 ;;
      read1-kk) kfio "$rep" "$ics" "$c" "$kdev" randread 4k 1 ;;
      read1-ok) ours "$rep" "$ics" "$c" $kport $knqn randread 4k 1 ;;
      read1-ko) kfio "$rep" "$ics" "$c" "$odev" randread 4k 1 ;;
      read32-oo) ours "$rep" "$ics" "$c" $oport $onqn randread 4k 32 ;;
      read32-kk) kfio "$rep" "$ics" "$c" "$kdev" randread 4k 32 ;;
      read32-ok) ours "$rep" "$ics" "$c" $kport $knqn randread 4k 32 ;;
      read32-ko) kfio "$rep" "$ics" "$c" "$odev" randread 4k 32 ;;
      read1-oo-inline-off)
        ours "$rep" "$ics" "$c" $oport $onqn randread 4k 1 --max-inline-data "$inline_off" ;;
      read1-oo-busy)
        CELL_POLL=busy ours "$rep" "$ics" "$c" $oport $onqn randread 4k 1 ;;
      write1-*-oo) ours "$rep" "$ics" "$c" $oport $onqn randwrite "$(echo "$c" | cut -d- -f2)" 1 ;;
      write1-*-kk) kfio "$rep" "$ics" "$c" "$kdev" randwrite "$(echo "$c" | cut -d- -f2)" 1 ;;
    esac
  done
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
  order=("${ics_list[@]}")
  [ "$rev" = 1 ] && order=(16384 8192 4096)
  say "repetition $rep of $reps (order: ${order[*]}$([ "$rev" = 1 ] && echo ', cells reversed'))"
  [ "$rev" = 1 ] && run_floor "$rep" "$rev"
  for ics in "${order[@]}"; do
    configure "$ics"
    run_group "$rep" "$ics" "$rev"
  done
  [ "$rev" = 0 ] && run_floor "$rep" "$rev"
done
say "done"
exit 0
