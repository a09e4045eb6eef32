#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced by ci/interop/run.sh, not run on its own.)
# shellcheck disable=SC2154 # out, cases, target_pid: ci/interop/run.sh's
# Interop checks of file and block-device namespaces, sourced by ci/interop/run.sh
# (its helpers: check, judge, start_target, stop_target, k_connect, k_disconnect, wait_ns,
# ctrl_dev, write_config, and nullb_create/nullb_remove of ci/lib/null_blk.sh; its variables T, H, NQN, HOST_OK, out). The Linux host against
# nvmf-target:
# - KernelHostOnNvmfTarget_FileNamespace: a sparse file; discard and write zeroes enabled,
#   blkdiscard, fstrim on ext4, nvme write-zeroes, nvme dsm --ad, fio verify; then two
#   namespaces of one subsystem in `nvme list`, fio verify on both.
# - KernelHostOnNvmfTarget_Faults: a null_blk device with bad blocks (configfs `badblocks`): those
#   LBAs read as Unrecovered Read Error, the others read back what was written; the backing
#   file truncated while fio reads: I/O errors, the target keeps serving; a Flush while the
#   device fails (dm-flakey error_writes under a null_blk with a volatile write cache): Internal
#   Error, and still after the device recovered (the failure is sticky).
# - KernelHostOnNvmfTarget_Durability (O_DIRECT and buffered): FUA writes and flushed writes,
#   then the target killed with SIGKILL and the null_blk powered off and on, which discards its
#   emulated volatile write cache as a power loss would: every acknowledged FUA write and every
#   flushed write is on the device, while writes that were neither are gone (so the check would
#   fail if FUA or Flush were ignored).

# A config with two namespaces (nsid 1 and 2, files A and B) in one subsystem.
write_config_two() { # write_config_two FILE A B
  write_config "$1" 4096 "$2"
  python3 - "$1" "$3" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
ns = cfg["subsystems"][0]["namespaces"]
ns.append({"nsid": 2, "enable": 1, "device": {"path": sys.argv[2]}})
json.dump(cfg, open(sys.argv[1], "w"), indent=2)
PY
}

# durability MODE: MODE direct (nvmet's default, buffered_io 0) or buffered (buffered_io 1).
durability() {
  local mode=$1 dev cfg rc=0 n tmp=/tmp/interop-dur
  mkdir -p "$tmp"
  # A null_blk with a 32 MiB emulated volatile write cache (cache_size, MiB): writes land in the
  # cache, FUA writes and Flush reach the "media"; powering it off discards the cache.
  dev=$(nullb_create interop-dur 64 cache_size=32) || { echo "null_blk with cache_size failed"; return 1; }
  echo "device $dev, write cache: $(cat "/sys/block/$(basename "$dev")/queue/write_cache")," \
    "fua: $(cat "/sys/block/$(basename "$dev")/queue/fua")"
  cfg=$out/config-dur-$mode.json
  write_config "$cfg" 4096 "$dev"
  [ "$mode" = buffered ] && sed -i 's/"nsid": 1, "enable": 1,/"nsid": 1, "enable": 1, "buffered_io": "1",/' "$cfg"
  start_target "$cfg" "dur-$mode" || { cat "$out/target-dur-$mode.log"; nullb_remove interop-dur; return 1; }
  grep -E 'namespace 1 on' "$out/target-dur-$mode.log"
  k_connect -l 1 -c 1 || { echo "connect failed"; stop_target; nullb_remove interop-dur; return 1; }
  n=$(wait_ns)
  # FUA: 16 writes of 8 KiB (LBAs 0..255), each with FUA set (nvme-cli --force-unit-access).
  head -c $((16 * 8192)) /dev/urandom >"$tmp/fua"
  for i in $(seq 0 15); do
    dd if="$tmp/fua" of="$tmp/fua.$i" bs=8192 skip="$i" count=1 status=none
    nvme write "$n" --start-block=$((i * 16)) --block-count=15 --data-size=8192 \
      --data="$tmp/fua.$i" --force-unit-access >/dev/null || { echo "FUA write $i failed"; rc=1; }
  done
  # Flushed: 1 MiB of plain writes at 1 MiB, then a Flush.
  head -c 1048576 /dev/urandom >"$tmp/flushed"
  dd if="$tmp/flushed" of="$n" bs=64k seek=16 oflag=direct status=none || rc=1
  nvme flush "$n" || { echo "flush failed"; rc=1; }
  # Neither: 1 MiB of plain writes at 4 MiB, no FUA, no Flush (the control).
  head -c 1048576 /dev/urandom >"$tmp/plain"
  dd if="$tmp/plain" of="$n" bs=64k seek=64 oflag=direct status=none || rc=1
  echo "writes acknowledged; SIGKILL to the target (pid $target_pid)"
  kill -KILL "$target_pid"
  wait "$target_pid" 2>/dev/null
  target_pid=
  for _ in $(seq 1 100); do
    [ -z "$(ctrl_dev)" ] && break
    sleep 0.2
  done
  [ -z "$(ctrl_dev)" ] || { echo "the host kept its controller"; nvme disconnect -n "$NQN"; }
  # Power loss: the null_blk's volatile cache is discarded.
  local d=/sys/kernel/config/nullb/interop-dur
  if ! { echo 0 >"$d/power" && echo 1 >"$d/power"; }; then
    echo "power cycle failed"
    rc=1
  fi
  dev=$(nullb_path interop-dur) || rc=1
  echo 3 >/proc/sys/vm/drop_caches
  local fua_ok=yes flushed_ok=yes plain_lost=yes
  cmp "$tmp/fua" <(dd if="$dev" bs=8192 count=16 iflag=direct status=none) || fua_ok=no
  cmp "$tmp/flushed" <(dd if="$dev" bs=64k skip=16 count=16 iflag=direct status=none) || flushed_ok=no
  cmp -s <(head -c 1048576 /dev/zero) <(dd if="$dev" bs=64k skip=64 count=16 iflag=direct status=none) ||
    plain_lost=no
  echo "after SIGKILL and power loss ($mode): FUA writes present: $fua_ok; flushed writes present:" \
    "$flushed_ok; unflushed writes lost: $plain_lost"
  nullb_remove interop-dur
  rm -rf "$tmp"
  [ "$fua_ok" = yes ] && [ "$flushed_ok" = yes ] && [ "$plain_lost" = yes ] && [ "$rc" -eq 0 ]
}

badblocks_read_error() {
  local dev cfg rc=0 n tmp=/tmp/interop-bb
  mkdir -p "$tmp"
  # Sectors 4096..4103 (LBAs 4096..4103 at 512 bytes) are bad: null_blk fails I/O to them.
  dev=$(nullb_create interop-bb 16) || { echo "null_blk failed"; return 1; }
  echo "+4096-4103" >/sys/kernel/config/nullb/interop-bb/badblocks || { echo "badblocks refused"; rc=1; }
  echo "bad blocks of $dev: $(cat /sys/kernel/config/nullb/interop-bb/badblocks)"
  cfg=$out/config-bb.json
  write_config "$cfg" 4096 "$dev"
  start_target "$cfg" bb || { cat "$out/target-bb.log"; nullb_remove interop-bb; return 1; }
  k_connect || { stop_target; nullb_remove interop-bb; return 1; }
  n=$(wait_ns)
  head -c 2097152 /dev/urandom >"$tmp/good"
  dd if="$tmp/good" of="$n" bs=64k count=32 oflag=direct status=none || { echo "write of LBAs 0..4095 failed"; rc=1; }
  local o
  o=$(nvme read "$n" --start-block=4096 --block-count=7 --data-size=4096 --data="$tmp/bad" 2>&1)
  echo "nvme read of LBAs 4096..4103: $o"
  echo "$o" | grep -qE 'Unrecovered Read Error|0x281' || { echo "expected Unrecovered Read Error"; rc=1; }
  o=$(nvme read "$n" --start-block=4100 --block-count=0 --data-size=512 --data="$tmp/bad" 2>&1)
  echo "nvme read of LBA 4100: $o"
  echo "$o" | grep -qE 'Unrecovered Read Error|0x281' || { echo "expected Unrecovered Read Error"; rc=1; }
  if dd if="$n" of=/dev/null bs=512 skip=4096 count=8 iflag=direct status=none; then
    echo "dd over the bad LBAs succeeded"
    rc=1
  fi
  cmp "$tmp/good" <(dd if="$n" bs=64k count=32 iflag=direct status=none) || { echo "LBAs 0..4095 differ"; rc=1; }
  nvme read "$n" --start-block=4104 --block-count=7 --data-size=4096 --data="$tmp/after" >/dev/null ||
    { echo "read after the bad LBAs failed"; rc=1; }
  [ "$rc" -eq 0 ] && echo "bad LBAs: Unrecovered Read Error; LBAs 0..4095 read back what was written; 4104.. readable"
  k_disconnect || rc=1
  stop_target || { echo "target exit not 0"; rc=1; }
  nullb_remove interop-bb
  rm -rf "$tmp"
  return "$rc"
}

truncated_under_fio() {
  local img=/tmp/interop-trunc.img cfg rc=0 n o
  rm -f "$img"
  truncate -s 64M "$img"
  dd if=/dev/urandom of="$img" bs=1M count=64 conv=notrunc status=none
  cfg=$out/config-trunc.json
  write_config "$cfg" 4096 "$img"
  start_target "$cfg" trunc || { cat "$out/target-trunc.log"; return 1; }
  k_connect || { stop_target; return 1; }
  n=$(wait_ns)
  fio --name=trunc --filename="$n" --ioengine=libaio --direct=1 --rw=randread --bs=4k \
    --iodepth=8 --time_based --runtime=10 >"$tmp_fio" 2>&1 &
  local fio_pid=$!
  sleep 3
  truncate -s 1M "$img"
  echo "backing file truncated to 1 MiB under fio"
  local fio_rc=0
  wait "$fio_pid" || fio_rc=$?
  cat "$tmp_fio"
  echo "fio exit $fio_rc"
  # Linux turns Unrecovered Read Error (a media error) into ENODATA, "No data available".
  if [ "$fio_rc" -eq 0 ] || ! grep -qE 'No data available|Input/output error' "$tmp_fio"; then
    echo "expected fio to see I/O errors"
    rc=1
  fi
  kill -0 "$target_pid" || { echo "the target died"; return 1; }
  o=$(nvme read "$n" --start-block=65536 --block-count=7 --data-size=4096 --data=/tmp/interop-trunc.out 2>&1)
  echo "nvme read at 32 MiB (past the end of the file): $o"
  echo "$o" | grep -qE 'Unrecovered Read Error|0x281' || { echo "expected Unrecovered Read Error"; rc=1; }
  cmp <(head -c 1048576 "$img") <(dd if="$n" bs=64k count=16 iflag=direct status=none) ||
    { echo "the first MiB does not read back"; rc=1; }
  truncate -s 64M "$img"
  dd if="$n" of=/dev/null bs=4k skip=8192 count=1 iflag=direct status=none ||
    { echo "read after the file grew back failed"; rc=1; }
  nvme id-ctrl "$(ctrl_dev)" >/dev/null || { echo "identify failed"; rc=1; }
  k_disconnect || rc=1
  stop_target || { echo "target exit not 0"; rc=1; }
  rm -f "$img" /tmp/interop-trunc.out
  return "$rc"
}

# dmsetup: Debian's, unpacked into the runner's cache by ci/vm/fetch-tools with its libdevmapper
# (scripts/setup.sh does not install the package: its dpkg trigger would rebuild this machine's
# /boot/initrd.img-*); the guest sees the cache through the host's / over 9p. NVMF_DMSETUP=CMD
# picks another. Never the PATH's: a dmsetup installed on the host is not what this runs.
dmsetup_cmd=${NVMF_DMSETUP:-$("$here/../vm/fetch-tools" --print dmsetup 2>/dev/null || true)}
dmsetup() { "$dmsetup_cmd" "$@"; }

dm_table() { # dm_table NAME TABLE: swaps a device-mapper device's table
  dmsetup suspend --noudevsync "$1" && dmsetup load "$1" --table "$2" &&
    dmsetup resume --noudevsync "$1"
}

flush_while_device_fails() {
  local dev cfg rc=0 n o sectors table
  # dm-flakey only sees a Flush when the device below has a volatile write cache (else the block
  # layer completes it at once): a null_blk with cache_size.
  dev=$(nullb_create interop-flaky 64 cache_size=16) || { echo "null_blk failed"; return 1; }
  modprobe dm-flakey 2>/dev/null
  echo "dmsetup: $dmsetup_cmd ($(dmsetup version | head -n 1 | tr -s ' \t' ' '))"
  sectors=$(blockdev --getsz "$dev")
  table="0 $sectors linear $dev 0"
  dmsetup create --noudevsync interop-flaky --table "$table" || { nullb_remove interop-flaky; return 1; }
  # No udev in the guest: /dev/mapper/NAME only if dmsetup made the node itself.
  dmsetup mknodes interop-flaky
  local path=/dev/mapper/interop-flaky
  [ -b "$path" ] || path=/dev/$(dmsetup info -c --noheadings -o blkdevname interop-flaky)
  echo "dm-linear device $path over $dev"
  cfg=$out/config-flaky.json
  write_config "$cfg" 4096 "$path"
  if start_target "$cfg" flaky && k_connect; then
    n=$(wait_ns)
    dd if=/dev/urandom of="$n" bs=64k count=16 oflag=direct status=none || rc=1
    nvme flush "$n" || { echo "flush on the healthy device failed"; rc=1; }
    # The device now fails every write and Flush (dm-flakey: up 0 s, down 1 s, error_writes).
    dm_table interop-flaky "0 $sectors flakey $dev 0 0 1 1 error_writes" ||
      { echo "dm-flakey table refused"; rc=1; }
    o=$(nvme flush "$n" 2>&1) && { echo "flush on the failing device succeeded: $o"; rc=1; }
    echo "flush on the failing device: $o"
    echo "$o" | grep -qE 'Internal Error|0x4006' || { echo "expected Internal Error"; rc=1; }
    dm_table interop-flaky "$table" || rc=1
    o=$(nvme flush "$n" 2>&1) && { echo "flush after the device recovered succeeded: the failure was forgotten"; rc=1; }
    echo "flush after the device recovered (sticky): $o"
    dd if="$n" of=/dev/null bs=64k count=16 iflag=direct status=none || { echo "read failed"; rc=1; }
    kill -0 "$target_pid" || { echo "the target died"; rc=1; }
    k_disconnect || rc=1
  else
    cat "$out/target-flaky.log"
    rc=1
  fi
  stop_target || { echo "target exit not 0"; rc=1; }
  grep -E 'flush' "$out/target-flaky.log" | head -n 5
  dmsetup remove --noudevsync interop-flaky || rc=1
  nullb_remove interop-flaky
  return "$rc"
}

export -f nullb_create nullb_remove nullb_path

# ----------------------------------------------------------- file namespace --
# A sparse file namespace: the Linux host sees discard and write zeroes enabled, and
# blkdiscard, fstrim on ext4, nvme write-zeroes and nvme dsm --ad reach the file (its allocated
# size shrinks, the blocks read back as zeroes).
s=KernelHostOnNvmfTarget_FileNamespace
img=/tmp/interop-file-ns.img
rm -f "$img"
truncate -s 256M "$img"
cfg=$out/config-file.json
write_config "$cfg" 4096 "$img"
# du -k of the backing file, for the checks below.
export img
if check "$s" start_target start_target "$cfg" file; then
  # The checks below are single-quoted on purpose: they expand in the inner bash.
  # shellcheck disable=SC2016
  if check "$s" nvme_connect k_connect; then
    check "$s" discard_and_write_zeroes_enabled bash -c '
      b=$(basename "$(wait_ns)"); q=/sys/block/$b/queue
      for f in discard_max_bytes write_zeroes_max_bytes write_cache; do echo "$f: $(cat $q/$f)"; done
      [ "$(cat $q/discard_max_bytes)" -gt 0 ] && [ "$(cat $q/write_zeroes_max_bytes)" -gt 0 ] &&
        [ "$(cat $q/write_cache)" = "write back" ]'
    check "$s" blkdiscard_frees_file_space bash -c '
      n=$(wait_ns)
      dd if=/dev/urandom of="$n" bs=1M count=16 oflag=direct status=none || exit 1
      before=$(du -k "$img" | cut -f1); blkdiscard "$n" || exit 1; after=$(du -k "$img" | cut -f1)
      echo "allocated KiB before $before, after blkdiscard $after"
      [ "$before" -ge 16384 ] && [ "$after" -lt 1024 ]'
    check "$s" fstrim_on_ext4_frees_file_space bash -c '
      n=$(wait_ns); m=/tmp/interop-ext4; mkdir -p $m
      mkfs.ext4 -q -F -E nodiscard "$n" && mount "$n" $m || exit 1
      dd if=/dev/urandom of=$m/big bs=1M count=24 conv=fsync status=none; rm $m/big; sync
      before=$(du -k "$img" | cut -f1); fstrim -v $m; rc=$?; after=$(du -k "$img" | cut -f1)
      umount $m
      echo "allocated KiB before fstrim $before, after $after"
      [ $rc -eq 0 ] && [ "$after" -lt $((before - 16384)) ]'
    check "$s" nvme_write_zeroes_and_dsm_deallocate bash -c '
      n=$(wait_ns)
      dd if=/dev/urandom of="$n" bs=4k count=4 oflag=direct status=none || exit 1
      nvme write-zeroes "$n" --start-block=0 --block-count=7 || exit 1
      nvme dsm "$n" --ad --slbs=8 --blocks=8 || exit 1
      # nvme-cli: --block-count is 0-based (LBAs 0..7 zeroed), --blocks is the range length
      # (LBAs 8..15 deallocated; DLFEAT says they read as zeroes); LBAs 16.. keep their data.
      cmp <(dd if="$n" bs=4k count=2 iflag=direct status=none) <(head -c 8192 /dev/zero) &&
        ! cmp -s <(dd if="$n" bs=4k skip=2 count=1 iflag=direct status=none) <(head -c 4096 /dev/zero) &&
        echo "LBAs 0-15 read as zeroes, 16-23 kept their data"'
    check "$s" fio_verify fio_verify "$(wait_ns)" file
    check "$s" nvme_disconnect k_disconnect
  fi
  check "$s" stop_target stop_target
fi
rm -f "$img"

# Two namespaces in one subsystem: both in `nvme list` with distinct NGUIDs, fio verify on each.
imgs="/tmp/interop-ns1.img /tmp/interop-ns2.img"
# shellcheck disable=SC2086
rm -f $imgs
# shellcheck disable=SC2086
truncate -s 64M $imgs
cfg=$out/config-two.json
# shellcheck disable=SC2086
write_config_two "$cfg" $imgs
if check "$s" start_target_two_namespaces start_target "$cfg" two; then
  # shellcheck disable=SC2016
  if check "$s" nvme_connect_two_namespaces k_connect; then
    check "$s" two_namespaces_in_nvme_list bash -c '
      c=$(basename "$(ctrl_dev)"); nss=()
      for _ in $(seq 1 50); do
        nss=(); for e in /sys/class/nvme/$c/nvme*n*; do [ -e "$e" ] && nss+=("$(ns_block "$e")"); done
        [ ${#nss[@]} -ge 2 ] && break; sleep 0.1
      done
      nvme list
      echo "namespaces of $c: ${nss[*]}"
      [ ${#nss[@]} -eq 2 ] || exit 1
      g1=$(nvme id-ns "${nss[0]}" -o json | grep -o "\"nguid\" *: *\"[0-9a-f]*\"")
      g2=$(nvme id-ns "${nss[1]}" -o json | grep -o "\"nguid\" *: *\"[0-9a-f]*\"")
      echo "NGUIDs: $g1 / $g2"; [ -n "$g1" ] && [ "$g1" != "$g2" ] || exit 1
      [ "$(nvme list -o json | grep -c "${nss[0]}\|${nss[1]}")" -ge 2 ] || exit 1
      printf "%s\n" "${nss[@]}" >"'"$out"'/two-namespaces.txt"'
    check "$s" fio_verify_both_namespaces bash -c '
      rc=0
      while read -r d; do
        fio --name="verify-$(basename "$d")" --filename="$d" --ioengine=libaio --direct=1 \
          --rw=randwrite --bs=4k --iodepth=8 --size=8m --verify=crc32c --verify_fatal=1 || rc=1
      done <"'"$out"'/two-namespaces.txt"
      exit $rc'
    check "$s" nvme_disconnect_two_namespaces k_disconnect
  fi
  check "$s" stop_target_two_namespaces stop_target
fi
# shellcheck disable=SC2086
rm -f $imgs

# ------------------------------------------------------------------ faults --
s=KernelHostOnNvmfTarget_Faults
tmp_fio=$out/trunc-fio.txt
check "$s" badblocks_unrecovered_read_error badblocks_read_error
check "$s" file_truncated_under_fio truncated_under_fio
if [ -n "$dmsetup_cmd" ] && [ -x "$dmsetup_cmd" ] && modprobe dm-flakey 2>/dev/null; then
  log "dmsetup: $dmsetup_cmd"
  check "$s" flush_while_device_fails flush_while_device_fails
else
  log "no cached dmsetup (ci/vm/fetch-tools dmsetup) or no dm-flakey in the guest: flush_while_device_fails not run"
  printf '%s\t%s\t%s\t%s\n' "$s" flush_while_device_fails 1 /dev/null >>"$cases"
fi

# -------------------------------------------------------------- durability --
s=KernelHostOnNvmfTarget_Durability
check "$s" fua_and_flush_survive_kill_and_power_loss_direct durability direct
check "$s" fua_and_flush_survive_kill_and_power_loss_buffered durability buffered
