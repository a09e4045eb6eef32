#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The soft-RoCE half of `ci/bench-compare.sh --backends`: the Linux host (fio libaio
# direct=1) against nvmf-target and against nvmet-rdma, both on a block device (null_blk) and on
# a file (ext4 on null_blk), 4 KiB random read and write at QD1 and QD32. Every repetition runs
# every cell back to back, our target's and nvmet's cell of one kind next to each other, the
# order reversed every other repetition. Then the Flush cell: one nvmf-target process serves two
# subsystems; the Linux host writes 64 MiB buffered into the first (a null_blk throttled to
# 16 MB/s) and sends a Flush, while nvmf-host reads 4 KiB at QD1 from the second; the same read
# runs idle before and after. The cells' first 64 MiB of every null_blk and of our RAM namespace
# are written once before the cells (no cell pays first-write page allocations).
#
# Usage (under ci/rxe-run): ci/bench/backends-guest.sh BIN_DIR REPS RUNTIME RAMP
# Writes to $NVMF_RESULTS_DIR/raw-backends/: one fio/nvmf-host JSON per cell and repetition, and
# cells.tsv (rep, backend, target, cell, file, exit status); ci/bench/backends-report.py reads it.
# Stacks: targets on rxe0 ($NVMF_TARGET_ADDR), hosts on rxe1. nvmet: port 4420, subsystems
# bench-kbdev (/dev/nullb of its own) and bench-kfile (a file on ext4, nvmet's default
# buffered_io 0: O_DIRECT). nvmf-target: ports 4421 (block device) and 4422 (file), defaults
# (O_DIRECT, like nvmet), LBA size as nvmet reports it (512 for the null_blk, 4096 for the file).
# NVMF_BENCH_VARIANT (nvmf-target options, e.g. "--poll busy"; none by default): the targets
# above keep the defaults and a second set, target "oursv" in cells.tsv (ports 4424 block device,
# 4425 file, 4431 the Flush cell, null_blks and a file of their own), runs with these options,
# its cells next to ours and nvmet's in every repetition (the options are written to
# variant.txt). NVMF_BENCH_URING (off, the default; on; both): on: every nvmf-target runs with
# --uring-defer-taskrun on --uring-fixedbufs on; both: the variant is those two options.
# NVMF_BENCH_NULLB_POLL_QUEUES (default 0): configfs poll_queues of every target's block device
# (nvmet's and ours alike; nvmet never polls), for our --uring-iopoll (queue/io_poll then 1).
# NVMF_BENCH_PARTS ("cells flush", the default):
# which parts run, to split one long run into shorter ones ("cells" or "flush" alone).
set -uo pipefail
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$(dirname "$0")/../lib/target.sh"
# shellcheck source=/dev/null
. "$(dirname "$0")/../lib/null_blk.sh"
bin=${1:?BIN_DIR}
reps=${2:?REPS}
runtime=${3:?RUNTIME}
ramp=${4:?RAMP}
out=${NVMF_RESULTS_DIR:?run this under ci/rxe-run}/raw-backends
mkdir -p "$out"
runtime_ms=$(awk -v s="$runtime" 'BEGIN { printf "%d", s * 1000 }')
ramp_ms=$(awk -v s="$ramp" 'BEGIN { printf "%d", s * 1000 }')
taddr=${NVMF_TARGET_ADDR:?}
haddr=${NVMF_HOST_ADDR:?}
tsv=$out/cells.tsv
: >"$tsv"
exec 3>>"$out/guest.log"
say() { echo "backends-guest: $(cut -d' ' -f1 /proc/uptime)s: $*" | tee -a /dev/fd/3 >&2; }
cfg=/sys/kernel/config/nvmet
pfx=nqn.2024-01.io.nvmf-rdma:bench
target_pids=()
mnt=/mnt/nvmf-bench
uring=${NVMF_BENCH_URING:-off}
parts=${NVMF_BENCH_PARTS:-cells flush}
poll_queues=${NVMF_BENCH_NULLB_POLL_QUEUES:-0}
bdev_attrs=()
[ "$poll_queues" = 0 ] || bdev_attrs=("poll_queues=$poll_queues")
cell_reps=0 flush_reps=0
[[ " $parts " == *" cells "* ]] && cell_reps=$reps
[[ " $parts " == *" flush "* ]] && flush_reps=$reps
uring_on=(--uring-defer-taskrun on --uring-fixedbufs on)
ours_args=()
[ "$uring" = on ] && ours_args=("${uring_on[@]}")
variant=${NVMF_BENCH_VARIANT:-}
[ "$uring" = both ] && variant="${uring_on[*]}"
read -ra variant_args <<<"$variant"
echo "$variant" >"$out/variant.txt"

# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
  local n
  for n in kbdev kfile obdev ofile oram ubdev ufile flush read uflush uread; do nvme disconnect -n "$pfx-$n" >/dev/null 2>&1; done
  for n in "${target_pids[@]}"; do kill -TERM "$n" 2>/dev/null; done
  for n in "${target_pids[@]}"; do wait "$n" 2>/dev/null; done
  dmesg >"$out/dmesg.txt" 2>&1
}
trap cleanup EXIT

# The block device of the connected subsystem $1 (plain namespaces: multipath off).
block_dev_of() {
  local b
  for b in /sys/block/nvme*; do
    [ -e "$b" ] || continue
    [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] && { echo "/dev/${b##*/}"; return 0; }
  done
  return 1
}

kconnect() { # NQN PORT -> prints the block device
  timeout 30 nvme connect -t rdma -a "$taddr" -s "$2" -n "$1" -w "$haddr" -l 5 >&3 2>&1 || return 1
  local d
  for _ in $(seq 1 100); do
    d=$(block_dev_of "$1") && [ -b "$d" ] && { echo "$d"; return 0; }
    sleep 0.2
  done
  return 1
}

our_target() { # LOG ARGS...: starts nvmf-target, waits until it listens
  local tlog=$1
  shift
  local rc=0
  start_listening "$tlog" "$bin/target/nvmf-target" "$@" || rc=$?
  target_pids+=("$target_pid")
  [ "$rc" -ne 0 ] || return 0
  say "nvmf-target did not start: $(cat "$tlog")"
  return 1
}

record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$tsv"; }

kfio() { # rep backend target cell dev rw iodepth
  local rep=$1 backend=$2 target=$3 cell=$4 dev=$5 rw=$6 qd=$7
  local f=$out/r$rep-$backend-$target-$cell.json rc=0
  [ -n "$dev" ] || { record "$rep" "$backend" "$target" "$cell" "$f" 127; return; }
  timeout $((120 + 2 * ${runtime%.*})) fio --name=cell --filename="$dev" --ioengine=libaio \
    --direct=1 --rw="$rw" --bs=4k --iodepth="$qd" --size=64m --time_based \
    --runtime="${runtime_ms}ms" --ramp_time="${ramp_ms}ms" --output-format=json \
    --output="$f" >"$f.err" 2>&1 || rc=$?
  record "$rep" "$backend" "$target" "$cell" "$f" "$rc"
}

# --------------------------------------------------------------------------------- setup --
say "reps $reps, runtime $runtime s, ramp $ramp s, NVMF_BENCH_URING $uring, variant: ${variant:-none}, parts: $parts"
modprobe null_blk nr_devices=0 || say "modprobe null_blk failed"
modprobe nvme_core multipath=N
modprobe -a nvmet nvmet-rdma nvme-rdma || say "modprobe nvmet/nvme-rdma failed"
[ -d "$cfg" ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
kbdev=$(nullb_create bench-kbdev 256 "${bdev_attrs[@]}") || say "null_blk for nvmet failed"
obdev=$(nullb_create bench-obdev 256 "${bdev_attrs[@]}") || say "null_blk for nvmf-target failed"
fsdev=$(nullb_create bench-fs 512) || say "null_blk for ext4 failed"
nullbs=(bench-kbdev bench-obdev)
if [ -n "$variant" ]; then
  ubdev=$(nullb_create bench-ubdev 256 "${bdev_attrs[@]}") || say "null_blk for nvmf-target (variant) failed"
  nullbs+=(bench-ubdev)
fi
# Every target's null_blk device is made alike (configfs defaults plus memory_backed 1,
# blocksize 512); record what they are, for the report.
for n in "${nullbs[@]}"; do
  a=""
  for k in queue_mode irqmode completion_nsec hw_queue_depth submit_queues poll_queues memory_backed blocksize cache_size mbps; do
    a+=" $k=$(cat "/sys/kernel/config/nullb/$n/$k" 2>/dev/null)"
  done
  say "null_blk $n:$a"
  echo "$n$a" >>"$out/nullb.txt"
done
# The cells' first 64 MiB of every target's null_blk written once before any target opens it,
# so that no cell pays null_blk's first-write page allocations (memory_backed allocates a page
# per first write), whichever target's cell runs first.
for n in "${nullbs[@]}"; do
  if ! { d=$(nullb_path "$n") && dd if=/dev/zero of="$d" bs=1M count=64 oflag=direct status=none; }; then
    say "pre-write of $n failed"
  fi
done
mkdir -p "$mnt"
if ! { mkfs.ext4 -q -F "$fsdev" && mount "$fsdev" "$mnt"; }; then say "ext4 on $fsdev failed"; fi
images=(kernel ours)
[ -n "$variant" ] && images+=(oursv)
for f in "${images[@]}"; do
  # Written once, so that reads are of allocated blocks (not unwritten extents) on both.
  dd if=/dev/zero of="$mnt/$f.img" bs=1M count=128 oflag=direct status=none || say "$f.img failed"
done
# nvmet: one port, two subsystems.
for n in kbdev kfile; do
  mkdir -p "$cfg/subsystems/$pfx-$n/namespaces/1"
  echo 1 >"$cfg/subsystems/$pfx-$n/attr_allow_any_host"
done
echo -n "$kbdev" >"$cfg/subsystems/$pfx-kbdev/namespaces/1/device_path"
echo -n "$mnt/kernel.img" >"$cfg/subsystems/$pfx-kfile/namespaces/1/device_path"
for n in kbdev kfile; do
  echo 1 >"$cfg/subsystems/$pfx-$n/namespaces/1/enable" || say "nvmet: namespace of $n not enabled"
  say "nvmet $n buffered_io: $(cat "$cfg/subsystems/$pfx-$n/namespaces/1/buffered_io")"
done
mkdir -p "$cfg/ports/1"
echo rdma >"$cfg/ports/1/addr_trtype"
echo ipv4 >"$cfg/ports/1/addr_adrfam"
echo "$taddr" >"$cfg/ports/1/addr_traddr"
echo 4420 >"$cfg/ports/1/addr_trsvcid"
for n in kbdev kfile; do ln -s "$cfg/subsystems/$pfx-$n" "$cfg/ports/1/subsystems/$pfx-$n"; done
our_target "$out/target-bdev.log" -a "$taddr" -s 4421 -n "$pfx-obdev" --file "$obdev" \
  "${ours_args[@]}"
our_target "$out/target-file.log" -a "$taddr" -s 4422 -n "$pfx-ofile" --file "$mnt/ours.img" \
  --lba-size 4096 "${ours_args[@]}"
if [ -n "$variant" ]; then
  our_target "$out/target-ubdev.log" -a "$taddr" -s 4424 -n "$pfx-ubdev" --file "$ubdev" \
    "${variant_args[@]}"
  our_target "$out/target-ufile.log" -a "$taddr" -s 4425 -n "$pfx-ufile" --file "$mnt/oursv.img" \
    --lba-size 4096 "${variant_args[@]}"
fi
# The RAM baseline: our target's RAM namespace (no backend), read by the same Linux host in the
# same repetition: ours bdev/RAM is the cost of our backend path, nvmet bdev is the reference.
our_target "$out/target-ram.log" -a "$taddr" -s 4423 -n "$pfx-oram" --ram-size 256m
grep -h 'namespace 1 on\|io_uring set up' "$out"/target-*.log | sed 's/^/  /' >&2
declare -A dev
dev[bdev-kernel]=$(kconnect "$pfx-kbdev" 4420) || say "connect to nvmet bdev failed"
dev[file-kernel]=$(kconnect "$pfx-kfile" 4420) || say "connect to nvmet file failed"
dev[bdev-ours]=$(kconnect "$pfx-obdev" 4421) || say "connect to nvmf-target bdev failed"
dev[file-ours]=$(kconnect "$pfx-ofile" 4422) || say "connect to nvmf-target file failed"
dev[ram-ours]=$(kconnect "$pfx-oram" 4423) || say "connect to nvmf-target RAM failed"
if [ -n "$variant" ]; then
  dev[bdev-oursv]=$(kconnect "$pfx-ubdev" 4424) || say "connect to nvmf-target bdev (variant) failed"
  dev[file-oursv]=$(kconnect "$pfx-ufile" 4425) || say "connect to nvmf-target file (variant) failed"
fi
# The RAM namespace's first 64 MiB written once through the host: its pages are then in the
# target's memory, so that the RAM baseline measures the transport, not first-touch page faults.
if [ -n "${dev[ram-ours]:-}" ]; then
  dd if=/dev/zero of="${dev[ram-ours]}" bs=1M count=64 oflag=direct status=none ||
    say "pre-write of the RAM namespace failed"
fi
for k in "${!dev[@]}"; do
  say "$k: ${dev[$k]:-none} (LBA $(cat "/sys/block/$(basename "${dev[$k]:-x}")/queue/logical_block_size" 2>/dev/null))"
done

# ---------------------------------------------------------------------------------- cells --
cells=()
for backend in bdev file ram; do
  for c in read1:randread:1 read32:randread:32 write1:randwrite:1 write32:randwrite:32; do
    cells+=("$backend:$c")
  done
done
for ((rep = 1; rep <= cell_reps; rep++)); do
  order=("${cells[@]}")
  if [ $((rep % 2)) = 0 ]; then
    order=()
    for ((i = ${#cells[@]} - 1; i >= 0; i--)); do order+=("${cells[i]}"); done
  fi
  say "repetition $rep of $reps"
  for c in "${order[@]}"; do
    IFS=: read -r backend cell rw qd <<<"$c"
    targets=(ours kernel)
    [ -n "$variant" ] && targets=(ours oursv kernel)
    if [ $((rep % 2)) = 0 ]; then
      targets=(kernel ours)
      [ -n "$variant" ] && targets=(kernel oursv ours)
    fi
    [ "$backend" = ram ] && targets=(ours)  # nvmet has no RAM namespace
    for t in "${targets[@]}"; do
      kfio "$rep" "$backend" "$t" "$cell" "${dev[$backend-$t]}" "$rw" "$qd"
    done
  done
done
for n in obdev ofile oram ubdev ufile; do nvme disconnect -n "$pfx-$n" >&3 2>&1; done

# ------------------------------------------------------------------------------ the Flush --
# One nvmf-target process: subsystem "flush" on a null_blk throttled to 16 MB/s, buffered (the
# page cache holds what the Flush must write), and subsystem "read" on a null_blk. With
# NVMF_BENCH_VARIANT, a second process with the variant's options (target "oursv") after it.
flush_cells() { # TARGET PREFIX PORT [nvmf-target ARGS...]
  local target=$1 p=$2 port=$3
  shift 3
  local slow fast fcfg fdev rep fpid rpid frc t0 t1
  slow=$(nullb_create "bench-${p}slow" 256 mbps=16) || say "throttled null_blk failed"
  fast=$(nullb_create "bench-${p}read" 64) || say "null_blk for reads failed"
  fcfg=$out/config-${p}flush.json
  cat >"$fcfg" <<JSON
{"hosts": [], "ports": [{"portid": 1, "addr": {"trtype": "rdma", "adrfam": "ipv4",
  "traddr": "$taddr", "trsvcid": "$port", "treq": "not specified"}, "param": {},
  "referrals": [], "subsystems": ["$pfx-${p}flush", "$pfx-${p}read"]}],
 "subsystems": [
  {"nqn": "$pfx-${p}flush", "attr": {"allow_any_host": "1"},
   "namespaces": [{"nsid": 1, "enable": 1, "buffered_io": "1", "device": {"path": "$slow"}}]},
  {"nqn": "$pfx-${p}read", "attr": {"allow_any_host": "1"},
   "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$fast"}}]}]}
JSON
  our_target "$out/target-${p}flush.log" --config "$fcfg" "$@"
  fdev=$(kconnect "$pfx-${p}flush" "$port") || say "connect to the flush subsystem failed"
  qd1_read() { # rep label runtime
    local f=$out/r$1-flush-$target-$2.json rc=0
    timeout 120 "$bin/host/nvmf-host" bench -a "$taddr" -s "$port" -w "$haddr" -n "$pfx-${p}read" \
      --rw randread --bs 4k --iodepth 1 --runtime "$3" --size 32m --json "$f" \
      2>"$f.err" || rc=$?
    record "$1" flush "$target" "$2" "$f" "$rc"
  }
  for ((rep = 1; rep <= flush_reps; rep++)); do
    qd1_read "$rep" read1-idle 3
    dd if=/dev/urandom of="$fdev" bs=1M count=64 oflag=direct status=none || say "64 MiB write failed"
    t0=$(date +%s%N)
    nvme flush "$fdev" >&3 2>&1 &
    fpid=$!
    qd1_read "$rep" read1-during-flush 3 &
    rpid=$!
    wait "$fpid"
    frc=$?
    t1=$(date +%s%N)
    wait "$rpid"
    echo "$(((t1 - t0) / 1000000))" >"$out/r$rep-$target-flush-ms.txt"
    record "$rep" flush "$target" flush-ms "$out/r$rep-$target-flush-ms.txt" "$frc"
    say "repetition $rep ($target): Flush of 64 MiB at 16 MB/s took $(cat "$out/r$rep-$target-flush-ms.txt") ms (exit $frc)"
  done
  nvme disconnect -n "$pfx-${p}flush" >&3 2>&1
}
if [ "$flush_reps" -gt 0 ]; then
  flush_cells ours "" 4430 "${ours_args[@]}"
  [ -n "$variant" ] && flush_cells oursv u 4431 "${variant_args[@]}"
fi
say "done"
exit 0
