#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced by ci/interop/run.sh, not run on its own.)
# shellcheck disable=SC2154 # out, host_bin, ns_dev, T, H, NQN, HOST_OK, here: ci/interop/run.sh's
# shellcheck disable=SC2317 # the check functions are called through check()
# `nvmf-host ublk` checks of the interop suite, sourced by ci/interop/run.sh
# (NVMF_INTEROP_ONLY=ublk) on a guest kernel with ublk_drv (Debian 13's 6.12:
# NVMF_RXE_KERNEL=6.12; Debian 12's 6.1 is built without it). Uses run.sh's check,
# write_config, start_target and stop_target; its namespace is a null_blk device of its own with
# discard on (ci/lib/null_blk.sh).
#
#  NvmfHostUblkOnNvmfTarget: nvmf-host ublk (2 I/O queues of 32 tags) against nvmf-target:
#    /dev/ublkbN appears with the namespace's size and LBA size; fio verify through it (libaio,
#    direct, QD32, random writes of 4k-128k, every block read back and checked); mkfs.ext4,
#    mount, files written and their SHA-256 checked after a remount, fsck clean; blkdiscard
#    (Deallocate) and blkdiscard -z (Write Zeroes) complete and the range reads back as zeroes;
#    the target killed and started again during a fio verify: fio ends without an error and the
#    host reconnected; SIGTERM removes the device (exit 0, counters in the JSON report).
#  NvmfHostUblkOnKernelTarget: the same device checks against nvmet-rdma (configfs, port 4430).
#  NvmfHostUblkTargetGone: the target gone for longer than --ctrl-loss-tmo 3 while a reader
#    runs: nvmf-host ublk fails the held I/O (the reader ends with an error), removes the
#    device and exits 1 naming ctrl-loss-tmo; and, the target gone again with ctrl-loss-tmo at
#    its 600 s, SIGTERM while reconnecting fails the held I/O at once and removes the device
#    (exit 0).
# Every wait is bounded: a hang fails its check instead of the guest run.

ublk_pid=
ublk_dev=

# wait_bounded PID SECONDS: waits for PID, killing it after SECONDS; its exit status (137 when
# killed).
wait_bounded() {
  local pid=$1 rc=0 watchdog
  (
    sleep "$2"
    kill -KILL "$pid" 2>/dev/null
  ) &
  watchdog=$!
  wait "$pid" || rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  return "$rc"
}

# reading: the block device has served reads (its /sys/block stat), within 10 s.
reading() {
  local stat=/sys/block/${ublk_dev#/dev/}/stat
  for _ in $(seq 1 100); do
    [ "$(awk '{print $1}' "$stat" 2>/dev/null)" -gt 0 ] 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no read on $ublk_dev"
  return 1
}

# in_log TEXT FILE: TEXT appears in FILE within 30 s.
in_log() {
  for _ in $(seq 1 300); do
    grep -q "$1" "$2" && return 0
    sleep 0.1
  done
  echo "no '$1' in $2"
  return 1
}

# ublk_gone: the block device and the ublk character device of $ublk_dev are both gone (the
# device was deleted, not only stopped), within 10 s.
ublk_gone() {
  local n=${ublk_dev#/dev/ublkb}
  for _ in $(seq 1 100); do
    [ ! -e "$ublk_dev" ] && [ ! -e "/sys/class/ublk-char/ublkc$n" ] && return 0
    sleep 0.1
  done
  echo "left behind: $(ls -d "$ublk_dev" "/sys/class/ublk-char/ublkc$n" 2>/dev/null)"
  return 1
}

# ublk_start TAG PORT [nvmf-host options...]: starts nvmf-host ublk (UBLK_QUEUES I/O queues,
# default 2) in the background and waits for its "ready" line; ublk_dev is then the block
# device.
ublk_start() {
  local tag=$1 port=$2 log=$out/ublk-$1.log
  shift 2
  : >"$log"
  "$host_bin" -a "$T" -s "$port" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" \
    --nr-io-queues "${UBLK_QUEUES:-2}" \
    --queue-size 33 "$@" ublk --json "$out/ublk-$tag.json" >"$log" 2>&1 &
  ublk_pid=$!
  for _ in $(seq 1 300); do
    grep -q ' ready: ' "$log" && break
    kill -0 "$ublk_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log"
  ublk_dev=$(sed -nE 's/^nvmf-host ublk: (\/dev\/ublkb[0-9]+) ready: .*/\1/p' "$log")
  [ -n "$ublk_dev" ] || return 1
  for _ in $(seq 1 50); do
    [ -b "$ublk_dev" ] && break
    sleep 0.1
  done
  [ -b "$ublk_dev" ] || { echo "$ublk_dev is not a block device"; return 1; }
  echo "$ublk_dev: $(blockdev --getsize64 "$ublk_dev") bytes, logical block $(blockdev --getss "$ublk_dev")"
}

# ublk_geometry BYTES LBA TAG: the device shows the namespace's size and LBA size, and has one
# hardware queue per I/O queue up to one per CPU (the kernel's limit).
ublk_geometry() {
  local size lbs queues want=${UBLK_QUEUES:-2}
  size=$(blockdev --getsize64 "$ublk_dev") lbs=$(blockdev --getss "$ublk_dev")
  [ "$want" -le "$(nproc)" ] || want=$(nproc)
  queues=$(sed -nE 's/.* ([0-9]+) queues? x [0-9]+ tags.*/\1/p' "$out/ublk-$3.log")
  echo "size $size (want $1), logical block $lbs (want $2), queues $queues (want $want)"
  [ "$size" = "$1" ] && [ "$lbs" = "$2" ] && [ "$queues" = "$want" ]
}

ublk_fio_verify() {
  timeout -k 5 300 fio --name=ublk-verify --filename="$ublk_dev" --ioengine=libaio --direct=1 \
    --iodepth=32 --rw=randwrite --bsrange=4k-128k --size=64m --verify=crc32c --verify_fatal=1 \
    --do_verify=1 --output-format=normal --output="$out/fio-ublk-$1.txt" || {
    cat "$out/fio-ublk-$1.txt"
    return 1
  }
  grep -E 'err=|WRITE:|READ:' "$out/fio-ublk-$1.txt"
  grep -q 'err= 0' "$out/fio-ublk-$1.txt"
}

# A file system on the device: files written, checked after a remount, fsck clean.
ublk_filesystem() {
  local mnt=$out/mnt-$1 rc=0
  mkdir -p "$mnt"
  timeout 120 mkfs.ext4 -F -q "$ublk_dev" || return 1
  timeout 60 mount "$ublk_dev" "$mnt" || return 1
  head -c 8M /dev/urandom >"$mnt/a.bin"
  head -c 300k /dev/urandom >"$mnt/b.bin"
  mkdir -p "$mnt/dir"
  cp "$mnt/b.bin" "$mnt/dir/c.bin"
  (cd "$mnt" && sha256sum a.bin b.bin dir/c.bin) >"$out/ublk-$1.sha256"
  timeout 60 umount "$mnt" || return 1
  timeout 60 mount "$ublk_dev" "$mnt" || return 1
  (cd "$mnt" && timeout 60 sha256sum -c "$out/ublk-$1.sha256") || rc=1
  timeout 60 umount "$mnt" || rc=1
  timeout 120 fsck.ext4 -fn "$ublk_dev" || rc=1
  return "$rc"
}

# blkdiscard of the whole device (Deallocate) and -z of 4 MiB at 1 MiB (Write Zeroes): both
# complete, and the zeroed range reads back as zeroes.
ublk_discard() {
  timeout 120 blkdiscard -v "$ublk_dev" || return 1
  head -c 8M /dev/urandom |
    timeout 60 dd of="$ublk_dev" bs=1M iflag=fullblock oflag=direct status=none || return 1
  timeout 60 blkdiscard -v -z -o 1048576 -l 4194304 "$ublk_dev" || return 1
  timeout 60 cmp -n 4194304 -i 0:1048576 /dev/zero "$ublk_dev" || return 1
  echo "4 MiB at 1 MiB reads back as zeroes"
}

# The target killed (SIGKILL) 4 s into a 20 s fio verify and started again 3 s later: the
# I/O is held while the host reconnects (its log says so) and fio ends without an error.
ublk_target_restart() {
  local cfg=$1 tag=$2 fio_pid rc=0 before after
  # Reconnects before the kill (an earlier check may have had one) are not this check's.
  before=$(grep -c 'reconnected after' "$out/ublk-$tag.log" || true)
  timeout -k 5 300 fio --name=ublk-restart --filename="$ublk_dev" --ioengine=libaio --direct=1 \
    --iodepth=32 --rw=randrw --bs=16k --size=32m --time_based --runtime=20 --verify=crc32c \
    --verify_fatal=1 --output="$out/fio-ublk-restart-$tag.txt" &
  fio_pid=$!
  sleep 4
  kill -KILL "$target_pid"
  wait "$target_pid" 2>/dev/null
  target_pid=
  sleep 3
  start_target "$cfg" "ublk-restart-$tag" || rc=1
  wait "$fio_pid" || rc=1
  grep -E 'err=|READ:|WRITE:' "$out/fio-ublk-restart-$tag.txt"
  grep -q 'err= 0' "$out/fio-ublk-restart-$tag.txt" || rc=1
  after=$(grep -c 'reconnected after' "$out/ublk-$tag.log" || true)
  grep 'reconnected after' "$out/ublk-$tag.log" | tail -n "+$((before + 1))"
  if [ "$after" -le "$before" ]; then
    echo "no reconnect in the host's log after the kill ($after reconnects, $before before it)"
    rc=1
  fi
  return "$rc"
}

# SIGTERM: exit 0, the device gone, the report counts what was served and every queue thread
# ended on its own (none waited out the stop grace for a command).
ublk_stop() {
  local rc=0
  kill -TERM "$ublk_pid"
  wait_bounded "$ublk_pid" 60 || rc=$?
  ublk_pid=
  tail -n 2 "$out/ublk-$1.log"
  echo "exit $rc"
  [ "$rc" = 0 ] || return 1
  ublk_gone || return 1
  grep -E '"(reads|writes|flushes|discards|write_zeroes|errors|reconnects)"' "$out/ublk-$1.json"
  python3 - "$out/ublk-$1.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
q = r["requests"]
want = sys.argv[2].split(",")
bad = [k for k in want if q.get(k, 0) == 0]
if bad or q["errors"] != 0 or r["stop_grace_expired"] != 0:
    print("no", bad, "errors", q["errors"], "queues ended by the stop grace", r["stop_grace_expired"])
    sys.exit(1)
PY
}

# Every device check against one target: TAG PORT SUITE CONFIG (config: restart our target).
ublk_device_checks() {
  local s=$1 tag=$2 port=$3 cfg=${4:-} size=$((1024 * 1024 * 1024)) # suites: NvmfHostUblkOnNvmfTarget NvmfHostUblkOnKernelTarget
  if ! check "$s" ublk_device_appears ublk_start "$tag" "$port" --reconnect-delay 1; then
    [ -n "$ublk_pid" ] && kill -TERM "$ublk_pid" && wait "$ublk_pid"
    ublk_pid=
    return
  fi
  check "$s" geometry_is_the_namespace ublk_geometry "$size" 512 "$tag"
  # A second nvmf-host asking for the same device number: refused before it connects.
  taken_dev_id() {
    local rc=0 err
    err=$(timeout 60 "$host_bin" -a "$T" -s "$port" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" ublk \
      --dev-id "${ublk_dev#/dev/ublkb}" 2>&1 >/dev/null) || rc=$?
    echo "exit $rc: $err"
    [ "$rc" = 1 ] && [[ $err == *"exists already: give another --dev-id"* ]]
  }
  check "$s" taken_dev_id_refused taken_dev_id
  check "$s" fio_verify_qd32_4k_to_128k ublk_fio_verify "$tag"
  check "$s" mkfs_mount_files_fsck_clean ublk_filesystem "$tag"
  check "$s" blkdiscard_and_write_zeroes ublk_discard
  if [ -n "$cfg" ]; then # our target, which this script can kill and start again
    check NvmfHostUblkOnNvmfTarget fio_verify_through_a_target_restart ublk_target_restart \
      "$cfg" "$tag"
  fi
  check "$s" sigterm_removes_the_device ublk_stop "$tag" reads,writes,discards,write_zeroes
}

ublk_suite() {
  modprobe ublk_drv || { echo "modprobe ublk_drv failed"; return 1; }
  local cfg=$out/config-ublk.json ublk_ns
  ublk_ns=$(nullb_create interop-ublk 1024 discard=1) || { echo "null_blk interop-ublk failed"; return 1; }
  write_config "$cfg" 4096 "$ublk_ns"
  if check NvmfHostUblkOnNvmfTarget start_target start_target "$cfg" ublk; then
    ublk_device_checks NvmfHostUblkOnNvmfTarget ours 4420 "$cfg"
    # ctrl-loss-tmo: the target gone for good.
    ctrl_loss() {
      local rc=0 t0 reader reader_rc=0
      ublk_start loss 4420 --reconnect-delay 1 --ctrl-loss-tmo 3 || return 1
      # A reader of the whole device (minutes under emulation): running when the target goes.
      timeout 300 dd if="$ublk_dev" of=/dev/null bs=64k iflag=direct status=none &
      reader=$!
      reading || return 1
      stop_target
      t0=$SECONDS
      wait_bounded "$ublk_pid" 60 || rc=$?
      ublk_pid=
      wait "$reader" || reader_rc=$?
      echo "nvmf-host exit $rc after $((SECONDS - t0)) s; the reader's exit $reader_rc"
      tail -n 3 "$out/ublk-loss.log"
      [ "$rc" = 1 ] && ublk_gone && grep -q 'ctrl-loss-tmo' "$out/ublk-loss.log" &&
        [ "$reader_rc" != 0 ] && [ "$reader_rc" != 124 ]
    }
    check NvmfHostUblkTargetGone ctrl_loss_tmo_removes_the_device ctrl_loss
    # SIGTERM while reconnecting: the held reads fail now, not in 600 s.
    sigterm_reconnecting() {
      local rc=0 reader reader_rc=0
      start_target "$cfg" ublk-gone || return 1
      ublk_start gone 4420 --reconnect-delay 1 || return 1
      timeout 300 dd if="$ublk_dev" of=/dev/null bs=64k iflag=direct status=none &
      reader=$!
      reading || return 1
      stop_target
      in_log 'association lost' "$out/ublk-gone.log" || return 1 # reconnecting, reads held
      kill -TERM "$ublk_pid"
      wait_bounded "$ublk_pid" 60 || rc=$?
      ublk_pid=
      wait "$reader" || reader_rc=$?
      echo "nvmf-host exit $rc; the reader's exit $reader_rc"
      tail -n 2 "$out/ublk-gone.log"
      [ "$rc" = 0 ] && ublk_gone && [ "$reader_rc" != 0 ] && [ "$reader_rc" != 124 ]
    }
    check NvmfHostUblkTargetGone sigterm_while_reconnecting_removes_the_device sigterm_reconnecting
  fi
  stop_target
  # nvmet-rdma on port 4430, the same null_blk namespace.
  local ncfg=$out/config-ublk-nvmet.json
  cat >"$ncfg" <<JSON
{"hosts": [{"nqn": "$HOST_OK"}],
 "ports": [{"portid": 5, "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4430"},
   "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "attr": {"allow_any_host": "0"}, "allowed_hosts": ["$HOST_OK"],
   "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$ublk_ns"}}]}]}
JSON
  if check NvmfHostUblkOnKernelTarget nvmet_configfs python3 "$here/nvmet-config.py" apply "$ncfg"; then
    # More I/O queues than the guest has CPUs: the device gets one hardware queue per CPU.
    UBLK_QUEUES=4 ublk_device_checks NvmfHostUblkOnKernelTarget nvmet 4430
    python3 "$here/nvmet-config.py" clear
  fi
  nullb_remove interop-ublk || echo "null_blk interop-ublk still in use"
}
