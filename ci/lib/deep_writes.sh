#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced, not run.) Deep large writes from the Linux host to nvmf-target and to nvmet-rdma side
# by side in one guest boot, for the interop check (ci/interop/run.sh) and the bench
# (ci/bench/deep-writes-guest.sh). Both targets run at once from the same nvmetcli config shape:
# ours on port 4420, nvmet-rdma on 4421, each with its own NQN and its own 512 MiB memory-backed
# null_blk, in-capsule data 16384; the kernel host connects to both (-i 2) with the default
# nvme_core io_timeout (30 s). Each job's fio JSON, rxe's retry counters before and after, and
# the kernel's I/O timeouts and controller resets during it go to files under $DEEP_OUT.
#
# deep_host_bench runs nvmf-host bench (our host) the same way against either target.
#
# Needs: $NVMF_TARGET_ADDR, $NVMF_HOST_ADDR (ci/rxe-run), ci/lib/target.sh and ci/lib/null_blk.sh
# sourced, $DEEP_OUT (an existing directory), $DEEP_TARGET_BIN (nvmf-target),
# $DEEP_NVMET_CONFIG (ci/interop/nvmet-config.py), $DEEP_HOST_BIN (nvmf-host). Optional: $DEEP_TARGET_ARGS (more
# nvmf-target options, word-split).

DEEP_NQN_OURS=nqn.2024-01.io.nvmf-rdma:deep-writes-ours
DEEP_NQN_NVMET=nqn.2024-01.io.nvmf-rdma:deep-writes-nvmet
DEEP_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:3c1d5e7a-9b2f-4d6c-8e0a-1f2b3c4d5e6f
# The jobs: name and fio options. 64 KiB random writes at iodepth 127 (one job) and 32 (two
# jobs on disjoint halves), 12 s each; 128 KiB and 1 MiB sequential writes at iodepth 8, 10 s.
# Every job verifies as it goes (verify_backlog: each 16 blocks written are read back and
# checked inside the timed run; with time_based alone fio would never reach its read phase).
# shellcheck disable=SC2034 # read by the scripts that source this file
DEEP_JOBS=(qd127 qd32x2 seq128k seq1m)
deep_job_args() { # deep_job_args JOB: fio's options for JOB
  case $1 in
    qd127) echo "--rw=randwrite --bs=64k --iodepth=127 --numjobs=1 --size=256m --runtime=12" ;;
    qd32x2) echo "--rw=randwrite --bs=64k --iodepth=32 --numjobs=2 --size=128m --offset_increment=128m --runtime=12" ;;
    seq128k) echo "--rw=write --bs=128k --iodepth=8 --numjobs=1 --size=256m --runtime=10" ;;
    seq1m) echo "--rw=write --bs=1m --iodepth=8 --numjobs=1 --size=256m --runtime=10" ;;
    *) return 1 ;;
  esac
}

# deep_min_ratio JOB: the least nvmf-target / nvmet-rdma ratio of median write IOPS that JOB is
# held to. The 64 KiB and 128 KiB jobs write 300-2500 blocks
# per round: 0.8. The 1 MiB job writes 60-140 per round (in steps of its QD8), and two targets
# at par give ratios of 0.7-1.2 between their medians in one boot on this CPU-bound rig
# (docs/soft-roce.md): 0.5, which a collapse (I/O timeouts, a few IOPS) still fails by far.
deep_min_ratio() {
  case $1 in
    seq1m) echo 0.5 ;;
    *) echo 0.8 ;;
  esac
}

deep_config() { # deep_config FILE NQN PORT DEVICE: an nvmetcli config.json for one target
  cat >"$1" <<JSON
{
  "hosts": [{"nqn": "$DEEP_HOSTNQN"}],
  "ports": [{"portid": 1,
             "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$NVMF_TARGET_ADDR",
                      "trsvcid": "$3", "treq": "not specified"},
             "param": {"inline_data_size": "16384"}, "referrals": [], "subsystems": ["$2"]}],
  "subsystems": [{"nqn": "$2",
                  "attr": {"allow_any_host": "0", "serial": "d33b0417e5", "model": "deep writes",
                           "version": "1.3"},
                  "allowed_hosts": ["$DEEP_HOSTNQN"],
                  "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$4"}}]}]
}
JSON
}

# The /dev/nvmeN controller of NQN (empty when none).
deep_ctrl() {
  local c
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] && {
      basename "$c"
      return
    }
  done
}

# The namespace block device of NQN's controller, once it exists (the head disk nvmeSnN under
# native multipath, or nvmeCnN).
deep_ns() {
  local c n name
  for _ in $(seq 1 300); do
    c=$(deep_ctrl "$1")
    if [ -n "$c" ]; then
      for n in /sys/class/nvme/"$c"/nvme*n*; do
        [ -e "$n" ] || continue
        name=$(basename "$n" | sed -E 's/^(nvme[0-9]+)c[0-9]+(n[0-9]+)$/\1\2/')
        [ -b "/dev/$name" ] && {
          echo "/dev/$name"
          return 0
        }
      done
    fi
    sleep 0.1
  done
  return 1
}

# shellcheck disable=SC2154 # target_pid: set by start_listening (ci/lib/target.sh)
# deep_setup: both targets up and the kernel host connected to each. Sets deep_target_pid,
# DEEP_DEV_ours and DEEP_DEV_nvmet (the namespaces), DEEP_CTRL_ours and DEEP_CTRL_nvmet.
deep_setup() {
  local ours_dev nvmet_dev
  ours_dev=$(nullb_create deep-ours 512) || return 1
  nvmet_dev=$(nullb_create deep-nvmet 512) || return 1
  modprobe -a nvme-rdma nvmet-rdma || return 1
  echo 30 >/sys/module/nvme_core/parameters/io_timeout
  deep_config "$DEEP_OUT/ours.json" "$DEEP_NQN_OURS" 4420 "$ours_dev"
  deep_config "$DEEP_OUT/nvmet.json" "$DEEP_NQN_NVMET" 4421 "$nvmet_dev"
  python3 "$DEEP_NVMET_CONFIG" apply "$DEEP_OUT/nvmet.json" || return 1
  # shellcheck disable=SC2086 # DEEP_TARGET_ARGS: options, split on purpose
  start_listening "$DEEP_OUT/target.log" "$DEEP_TARGET_BIN" --config "$DEEP_OUT/ours.json" \
    --json "$DEEP_OUT/target.json" ${DEEP_TARGET_ARGS:-} || {
    echo "nvmf-target did not start:"
    tail -n 5 "$DEEP_OUT/target.log"
    return 1
  }
  deep_target_pid=$target_pid # set by start_listening (ci/lib/target.sh)
  deep_connect || return 1
  echo "deep writes: nvmf-target on $ours_dev, nvmet-rdma on $nvmet_dev"
}

# deep_connect: the kernel host connected to both targets (-i 2). Sets DEEP_DEV_ours and
# DEEP_DEV_nvmet (the namespaces), DEEP_CTRL_ours and DEEP_CTRL_nvmet.
deep_connect() {
  local t p
  for t in ours nvmet; do
    if [ $t = ours ]; then p=4420; else p=4421; fi
    local nqn_var=DEEP_NQN_${t^^}
    nvme connect -t rdma -a "$NVMF_TARGET_ADDR" -s "$p" -w "$NVMF_HOST_ADDR" -n "${!nqn_var}" \
      -q "$DEEP_HOSTNQN" -i 2 >/dev/null || {
      echo "nvme connect to $t failed"
      return 1
    }
    printf -v "DEEP_DEV_$t" '%s' "$(deep_ns "${!nqn_var}")" || return 1
    printf -v "DEEP_CTRL_$t" '%s' "$(deep_ctrl "${!nqn_var}")"
  done
  # shellcheck disable=SC2154 # DEEP_DEV_* and DEEP_CTRL_*: set by printf -v above
  echo "deep writes: ours $DEEP_DEV_ours ($DEEP_CTRL_ours), nvmet-rdma $DEEP_DEV_nvmet" \
    "($DEEP_CTRL_nvmet)"
  [ -b "$DEEP_DEV_ours" ] && [ -b "$DEEP_DEV_nvmet" ]
}

# deep_reconnect: both controllers disconnected and connected again, between two rounds of the
# jobs. New QPs get new UDP source ports, so Receive Packet Steering hashes their flows onto
# CPUs afresh: the rounds average over where each target's packets are processed, not only over
# time.
deep_reconnect() {
  nvme disconnect -n "$DEEP_NQN_OURS" >/dev/null || return 1
  nvme disconnect -n "$DEEP_NQN_NVMET" >/dev/null || return 1
  deep_connect
}

deep_teardown() {
  nvme disconnect -n "$DEEP_NQN_OURS" >/dev/null 2>&1
  nvme disconnect -n "$DEEP_NQN_NVMET" >/dev/null 2>&1
  python3 "$DEEP_NVMET_CONFIG" clear
  if [ -n "${deep_target_pid:-}" ]; then
    kill -TERM "$deep_target_pid" 2>/dev/null
    wait "$deep_target_pid" 2>/dev/null
    deep_target_pid=
  fi
  nullb_remove deep-ours
  nullb_remove deep-nvmet
}

# One line of rxe's retry counters of both devices and the softnet drops of every CPU.
deep_counters() {
  local d c line=""
  for d in /sys/class/infiniband/*; do
    for c in completer_retry_err duplicate_request out_of_seq_request rcvd_seq_err send_err \
      retry_exceeded_err; do
      line+="$(basename "$d").$c=$(cat "$d/ports/1/hw_counters/$c" 2>/dev/null || echo '?') "
    done
  done
  local cpu=0 dropped=0 f
  while read -ra f; do
    dropped=$((dropped + 16#${f[1]}))
    cpu=$((cpu + 1))
  done </proc/net/softnet_stat
  echo "${line}softnet.dropped=$dropped"
}

# deep_run JOB TARGET TAG: fio JOB against TARGET (ours|nvmet); writes $DEEP_OUT/TAG.json (fio),
# TAG.counters (rxe before/after) and TAG.kernel (the kernel's lines about that controller).
# Exit 0 only when fio succeeded and the kernel logged no I/O timeout and no reset for it.
deep_run() {
  local job=$1 t=$2 tag=$3 dev_var=DEEP_DEV_$2 ctrl_var=DEEP_CTRL_$2 args rc=0
  args=$(deep_job_args "$job") || return 2
  local dev=${!dev_var} ctrl=${!ctrl_var} mark="nvmf-deep-writes: $tag start $RANDOM$RANDOM"
  # The kernel's lines from here on: after a marker written to the log (a count of lines would
  # miss new ones once the ring buffer is full and drops old ones).
  echo "$mark" >/dev/kmsg
  echo "before: $(deep_counters)" >"$DEEP_OUT/$tag.counters"
  # shellcheck disable=SC2086 # args: fio options, split on purpose
  timeout -k 5 240 fio --name="$job" --filename="$dev" --ioengine=libaio --direct=1 \
    --time_based --group_reporting --verify=crc32c --verify_backlog=16 --verify_fatal=1 \
    $args --output-format=json --output="$DEEP_OUT/$tag.json" || rc=$?
  echo "after: $(deep_counters)" >>"$DEEP_OUT/$tag.counters"
  if ! dmesg | grep -qF "$mark"; then
    echo "$job on $t: the kernel log no longer holds this run's start (ring buffer wrapped)"
    return 1
  fi
  dmesg | sed -n "/$mark/,\$p" | grep -E "${ctrl}[:n]" >"$DEEP_OUT/$tag.kernel"
  local timeouts resets
  timeouts=$(grep -cE 'I/O .*timeout' "$DEEP_OUT/$tag.kernel")
  resets=$(grep -ciE 'reset|reconnect|recovery' "$DEEP_OUT/$tag.kernel")
  echo "$job on $t ($dev): fio exit $rc; kernel I/O timeouts $timeouts, resets/recoveries $resets"
  cat "$DEEP_OUT/$tag.counters"
  head -n 5 "$DEEP_OUT/$tag.kernel"
  [ "$rc" -eq 0 ] && [ "$timeouts" -eq 0 ] && [ "$resets" -eq 0 ]
}

# deep_host_bench TARGET TAG: nvmf-host bench, 64 KiB random writes at iodepth 127 (both targets'
# I/O queues hold 127 commands) for 10 s over 128 MiB with --verify, against TARGET (ours|nvmet); its JSON
# report goes to $DEEP_OUT/TAG.json. Exit 0 only when the bench succeeded (every read verified)
# and no queue was lost to a transport error or a command timeout (recovery.losses 0).
deep_host_bench() {
  local t=$1 tag=$2 port=4420 nqn=$DEEP_NQN_OURS rc=0
  [ "$t" = ours ] || { port=4421 nqn=$DEEP_NQN_NVMET; }
  echo "before: $(deep_counters)" >"$DEEP_OUT/$tag.counters"
  timeout -k 5 120 "$DEEP_HOST_BIN" -a "$NVMF_TARGET_ADDR" -s "$port" -w "$NVMF_HOST_ADDR" \
    -n "$nqn" --hostnqn "$DEEP_HOSTNQN" bench --rw randwrite --bs 65536 --iodepth 127 \
    --runtime 10 --size 128m --verify --json "$DEEP_OUT/$tag.json" || rc=$?
  echo "after: $(deep_counters)" >>"$DEEP_OUT/$tag.counters"
  local losses
  losses=$(grep -oE '"losses": *[0-9]+' "$DEEP_OUT/$tag.json" | grep -oE '[0-9]+$')
  echo "nvmf-host bench on $t: exit $rc; queues lost (recovery.losses) ${losses:-?}"
  cat "$DEEP_OUT/$tag.counters"
  grep -E '"iops"|"losses"|"reconnects"' "$DEEP_OUT/$tag.json" | head -n 4
  [ "$rc" -eq 0 ] && [ "${losses:-1}" -eq 0 ]
}
