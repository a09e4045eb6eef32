#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced, not run.) Memory-backed null_blk devices made through configfs
# (/sys/kernel/config/nullb), for the guest scripts (ci/interop, ci/conform, ci/bench). Every
# script makes the devices it uses here, by name, and never relies on /dev/nullb0: once the
# module is loaded (by an earlier test in the same guest, e.g. with nr_devices=0), a later
# `modprobe null_blk nr_devices=1` changes nothing and /dev/nullb0 may not exist.

# nullb_create NAME SIZE_MIB [ATTRIBUTE=VALUE...]: a memory-backed null_blk device of SIZE_MIB
# MiB with 512-byte sectors (a device of that NAME is removed first); each ATTRIBUTE is a
# configfs file of the device (e.g. mbps=16, badblocks=+100-107). Prints its /dev path.
nullb_create() {
  local name=$1 d=/sys/kernel/config/nullb/$1 size=$2 kv
  shift 2
  [ -d /sys/kernel/config/nullb ] || modprobe null_blk nr_devices=0 || return 1
  [ ! -d "$d" ] || nullb_remove "$name"
  mkdir "$d" || return 1
  echo "$size" >"$d/size" && echo 1 >"$d/memory_backed" && echo 512 >"$d/blocksize" || return 1
  for kv in "$@"; do
    echo "${kv#*=}" >"$d/${kv%%=*}" || {
      echo "nullb ${kv%%=*} refused" >&2
      return 1
    }
  done
  echo 1 >"$d/power" || return 1
  nullb_path "$name"
}

# nullb_path NAME: the /dev path of a powered configfs null_blk, once it exists: newer kernels
# name the disk after the configfs directory, older ones nullb<index>.
nullb_path() {
  local d=/sys/kernel/config/nullb/$1 dev
  for _ in $(seq 1 50); do
    for dev in "/dev/$1" "/dev/nullb$(cat "$d/index")"; do
      [ -b "$dev" ] && {
        echo "$dev"
        return 0
      }
    done
    sleep 0.1
  done
  echo "no block device for null_blk $1 (index $(cat "$d/index"))" >&2
  return 1
}

# nullb_remove NAME: powers the device off and removes it (nothing when there is none).
nullb_remove() {
  local d=/sys/kernel/config/nullb/$1
  [ -d "$d" ] || return 0
  echo 0 >"$d/power" 2>/dev/null
  rmdir "$d"
}
