#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Interop suite, run under ci/rxe-run: the Linux nvme-rdma host against nvmf-target, and
# nvmf-host against the Linux nvmet-rdma target, both targets configured from the same
# nvmetcli config.json (param inline_data_size 0, 4096, 16384). Commands run here and record
# their exit status; field comparisons (Python, slow under emulation: ~20 s a start) are
# recorded as "judge" rows and run on the host by ci/interop/judge.py, which writes every check
# as one GoogleTest-style testcase to $NVMF_RESULTS_DIR/interop.xml. Logs: $NVMF_RESULTS_DIR/interop/.
#
# Usage: ci/rxe-run --results DIR ci/interop/run.sh && ci/interop/judge.py DIR
#   (env: NVMF_TARGET_ADDR, NVMF_HOST_ADDR, NVMF_RESULTS_DIR from ci/rxe-run;
#    NVMF_BIN_DIR = bazel-bin, default <repo>/bazel-bin; NVMF_INTEROP_SIZES, default "0 4096 16384";
#    NVMF_INTEROP_ONLY=file: only the file and block-device checks of ci/interop/file-backend.sh;
#    NVMF_INTEROP_ONLY=deep: only the deep-writes checks (ci/lib/deep_writes.sh);
#    NVMF_INTEROP_ONLY=hostile: only the fair-share checks beside hostile hosts;
#    NVMF_INTEROP_ONLY=rpc: only the control socket checks;
#    NVMF_INTEROP_ONLY=auth: only the DH-HMAC-CHAP checks of ci/interop/auth.sh (a guest kernel
#    with NVMe authentication on both sides: NVMF_RXE_KERNEL=6.12);
#    NVMF_INTEROP_ONLY=ana: only the ANA checks of ci/interop/ana.sh; auth,ana: both;
#    NVMF_INTEROP_ONLY=ublk: only the nvmf-host ublk checks of ci/interop/ublk.sh (a guest
#    kernel with ublk_drv: 6.12); auth,ana,ublk: the three;
#    NVMF_INTEROP_SRQ=on|off: nvmf-target's --srq, default its own, on;
#    NVMF_INTEROP_POLL_GROUPS=N: nvmf-target's --poll-groups in the in-capsule 4096 cell of
#    KernelHostOnNvmfTarget_inlineSIZE, default 1, so that one group serves all of the kernel
#    host's queues there; every other cell runs the target's default, auto (one group per CPU:
#    two in the guest), and is judged to have spread the host's two I/O queues over them)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$repo/ci/lib/target.sh"
# shellcheck source=/dev/null
. "$repo/ci/lib/null_blk.sh"
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
: "${NVMF_TARGET_ADDR:?}" "${NVMF_HOST_ADDR:?}"
bin=${NVMF_BIN_DIR:-$repo/bazel-bin}
target_bin=$bin/target/nvmf-target
host_bin=$bin/host/nvmf-host
sizes=${NVMF_INTEROP_SIZES:-"0 4096 16384"}
T=$NVMF_TARGET_ADDR
H=$NVMF_HOST_ADDR
NQN=nqn.2024-01.io.nvmf-rdma:interop
HOST_OK=nqn.2014-08.org.nvmexpress:uuid:6e7f0a3c-1b2d-4c5e-8f90-a1b2c3d4e5f6
HOST_BAD=nqn.2014-08.org.nvmexpress:uuid:00000000-dead-beef-0000-000000000bad
MODEL="nvmf-rdma interop"
SERIAL=1f2e3d4c5b6a7988
FIRMWARE=0.1 # nvmf-target's FR (firmware is not an nvmetcli attribute on 6.1)
out=$NVMF_RESULTS_DIR/interop
mkdir -p "$out"
cases=$out/cases.tsv
: >"$cases"
target_pid=

log() { echo "interop: $*"; }

# judge SUITE NAME COMPARE-ARGS...: a field comparison for ci/interop/judge.py (on the host).
judge() {
  local suite=$1 name=$2
  shift 2
  local IFS=$'\t'
  printf '%s\t%s\tjudge\t%s\t%s\n' "$suite" "$name" "$out/$suite.$name.log" "$*" >>"$cases"
}

# check SUITE NAME CMD...: runs CMD (timeout $CHECK_TIMEOUT s, default 180) with output to
# $out/SUITE.NAME.log and records pass/fail; the log's tail becomes the failure message. A failed
# case disconnects the kernel host from $NQN so that its failure does not cascade into the next.
check() {
  local suite=$1 name=$2
  shift 2
  local logf=$out/$suite.$name.log rc=0 t0=$SECONDS
  if [ "$(type -t "$1")" = function ]; then
    "$@" >"$logf" 2>&1 || rc=$? # shell functions bound their own waits
  else
    timeout -k 5 "${CHECK_TIMEOUT:-180}" "$@" >"$logf" 2>&1 || rc=$?
  fi
  printf '%s\t%s\t%s\t%s\n' "$suite" "$name" "$rc" "$logf" >>"$cases"
  if [ "$rc" -eq 0 ]; then log "PASS $suite.$name ($((SECONDS - t0)) s)"; else
    log "FAIL $suite.$name (exit $rc)"
    tail -n 15 "$logf" | sed 's/^/  | /'
    nvme disconnect -n "$NQN" >/dev/null 2>&1 || true
  fi
  return "$rc"
}

write_config() { # write_config FILE INLINE_SIZE [PATH]: what `nvmetcli save` writes for this setup
  cat >"$1" <<JSON
{
  "hosts": [{"nqn": "$HOST_OK"}],
  "ports": [{
    "portid": 1,
    "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4420",
             "treq": "not specified"},
    "param": {"inline_data_size": "$2"},
    "referrals": [],
    "subsystems": ["$NQN"]}],
  "subsystems": [{
    "nqn": "$NQN",
    "attr": {"allow_any_host": "0", "serial": "$SERIAL", "model": "$MODEL", "version": "1.3"},
    "allowed_hosts": ["$HOST_OK"],
    "namespaces": [{"nsid": 1, "enable": 1,
                    "device": {"path": "${3:-$ns_dev}",
                               "nguid": "11223344-5566-7788-99aa-bbccddeeff00",
                               "uuid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}}]}]
}
JSON
}

start_target() { # start_target CONFIG TAG [nvmf-target flags...]
  start_listening "$out/target-$2.log" "$target_bin" --config "$1" --json "$out/target-$2.json" \
    ${NVMF_INTEROP_SRQ:+--srq "$NVMF_INTEROP_SRQ"} "${@:3}"
}

stop_target() {
  [ -n "$target_pid" ] || return 0
  kill -TERM "$target_pid" 2>/dev/null
  local rc=0
  wait "$target_pid" || rc=$?
  target_pid=
  return "$rc"
}

# The /dev/nvmeN the kernel host created for $NQN (empty when none).
ctrl_dev() {
  local c
  for c in /sys/class/nvme/nvme*; do
    [ -e "$c/subsysnqn" ] || continue
    [ "$(cat "$c/subsysnqn")" = "$NQN" ] && [ "$(cat "$c/transport")" = rdma ] && {
      echo "/dev/$(basename "$c")"
      return
    }
  done
}

# The block device of a controller's namespace entry in sysfs: the namespace itself
# (nvmeSnN), or, with native multipath (our subsystems set CMIC multi-controller, so the kernel
# builds a head disk), the hidden path nvmeScCnN whose head disk is nvmeSnN.
ns_block() { # ns_block SYSFS-ENTRY
  local name
  name=$(basename "$1")
  [ -b "/dev/$name" ] && { echo "/dev/$name"; return 0; }
  name=$(echo "$name" | sed -E 's/^(nvme[0-9]+)c[0-9]+(n[0-9]+)$/\1\2/')
  [ -b "/dev/$name" ] && { echo "/dev/$name"; return 0; }
  return 1
}

wait_ns() { # wait_ns: prints /dev/nvmeNnM of $NQN once it exists
  local d
  for _ in $(seq 1 300); do
    d=$(ctrl_dev)
    if [ -n "$d" ]; then
      for n in /sys/class/nvme/"$(basename "$d")"/nvme*n*; do
        [ -e "$n" ] && ns_block "$n" && return 0
      done
    fi
    sleep 0.1
  done
  return 1
}

# shellcheck disable=SC2120 # keep_alive_two_kato passes -k 2 inside its bash -c string
k_connect() { # k_connect [extra nvme connect args]: connect the kernel host to $NQN on $T
  nvme connect -t rdma -a "$T" -s 4420 -w "$H" -n "$NQN" -q "$HOST_OK" -i 2 "$@" || return 1
  wait_ns >/dev/null
}

k_disconnect() {
  local o
  o=$(nvme disconnect -n "$NQN") || return 1
  echo "$o"
  echo "$o" | grep -q "disconnected 1 controller" || return 1
  for _ in $(seq 1 50); do
    [ -z "$(ctrl_dev)" ] && return 0
    sleep 0.1
  done
  echo "controller still present after disconnect"
  return 1
}

fio_verify() { # fio_verify DEV INLINE_SIZE: reads, writes, mixed; in-capsule and RDMA READ sizes
  local dev=$1 job=$out/fio-$2.job
  cat >"$job" <<JOB
[global]
filename=$dev
ioengine=libaio
direct=1
iodepth=4
verify=crc32c
verify_fatal=1
randrepeat=1
stonewall
[write-4k]
rw=write
bs=4k
size=1m
offset=0
[write-64k]
rw=write
bs=64k
size=2m
offset=1m
[read-64k]
rw=write
bs=64k
size=2m
offset=1m
verify_only=1
[read-4k]
rw=write
bs=4k
size=1m
offset=0
verify_only=1
[mixed-8k-32k]
rw=randrw
bsrange=8k-32k
size=2m
offset=4m
JOB
  timeout -k 5 240 fio --output-format=normal "$job"
}

# The bash -c checks below use these.
export T H NQN HOST_OK
export -f k_connect k_disconnect ctrl_dev wait_ns ns_block

# ------------------------------------------------------------------------------ setup --
log "kernel $(uname -r); target $T, host $H; inline sizes: $sizes; --poll-groups ${NVMF_INTEROP_POLL_GROUPS:-1} in the 4096 cell, auto elsewhere"
# For docs/interop.md's generated matrix (ci/readme-tables.py).
{
  echo "kernel=$(uname -r)"
  echo "nvme_cli=$(nvme version 2>/dev/null | head -n 1)"
  echo "fio=$(fio --version 2>/dev/null)"
} >"$out/environment.txt"
# The namespace of every block-device cell: a 1 GiB memory-backed null_blk with 512-byte LBAs,
# made by name through configfs (ci/lib/null_blk.sh says why no script uses the module's own
# first device).
ns_dev=$(nullb_create interop-ns 1024) || log "null_blk interop-ns failed"
modprobe -a nvme-rdma nvmet-rdma || log "modprobe nvme-rdma/nvmet-rdma failed"
[ -d /sys/kernel/config/nvmet ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
for f in "$target_bin" "$host_bin"; do [ -x "$f" ] || log "missing $f (bazel build first)"; done

finish() { # the closing record and verdict (judge.py completes it on the host)
  printf 'Interop\tcompleted\t0\t%s\n' "$out/cases.tsv" >>"$cases"
  failed=$(awk -F'\t' '$3 != 0 && $3 != "judge"' "$cases" | wc -l)
  log "$(wc -l <"$cases") checks recorded, $failed command checks failed; judge on the host next"
  nullb_remove interop-ns || log "null_blk interop-ns still in use"
  [ "$failed" -eq 0 ]
}
# Deep large writes from the Linux host (ci/lib/deep_writes.sh): nvmf-target and nvmet-rdma
# run side by side in this one boot. Each job runs in three rounds, nvmet-rdma then nvmf-target,
# nvmf-target then nvmet-rdma, nvmet-rdma then nvmf-target, the kernel host reconnected to both
# before rounds 2 and 3 (new QPs, whose flows Receive Packet Steering places on CPUs afresh): a
# drift of the emulated machine's speed, and where each target's packets happen to be
# processed, weigh on both alike. Every run must end with fio's in-run verification passing and
# no kernel I/O timeout or controller reset (nvme_core io_timeout 30 s); nvmf-target's write
# IOPS, the median of its rounds, must reach deep_min_ratio's share of nvmet-rdma's median for
# the same job (0.8x; 0.5x for the 1 MiB job, whose few writes per round spread widely; judged
# on the host). Then our host (nvmf-host bench) against each, with the same checks. rxe's retry
# counters of each run are in its log.
deep_writes() {
  local s=KernelHostDeepWrites job
  # shellcheck disable=SC2034 # read by ci/lib/deep_writes.sh
  DEEP_OUT=$out/deep-writes DEEP_TARGET_BIN=$target_bin DEEP_HOST_BIN=$host_bin
  # shellcheck disable=SC2034
  DEEP_NVMET_CONFIG=$here/nvmet-config.py
  mkdir -p "$DEEP_OUT"
  # shellcheck source=/dev/null # ci/lib/deep_writes.sh is shellchecked on its own
  . "$repo/ci/lib/deep_writes.sh"
  if check "$s" setup deep_setup; then
    local round order t name ratio
    for job in "${DEEP_JOBS[@]}"; do
      for round in 1 2 3; do
        order="nvmet ours"
        [ "$round" = 2 ] && order="ours nvmet"
        [ "$round" = 1 ] || check "$s" "${job}_reconnect_round$round" deep_reconnect
        for t in $order; do
          if [ "$t" = ours ]; then name=nvmf_target; else name=nvmet_rdma; fi
          check "$s" "${job}_${name}_round$round" deep_run "$job" "$t" "$job-$t-$round"
        done
      done
      ratio=$(deep_min_ratio "$job")
      judge "$s" "${job}_nvmf_target_iops_at_least_${ratio/./_}x_nvmet_rdma" deep \
        "$DEEP_OUT/$job-ours-1.json,$DEEP_OUT/$job-ours-2.json,$DEEP_OUT/$job-ours-3.json" \
        "$DEEP_OUT/$job-nvmet-1.json,$DEEP_OUT/$job-nvmet-2.json,$DEEP_OUT/$job-nvmet-3.json" \
        "$ratio"
    done
    # Our host, the same way: nvmf-host bench at iodepth 127 against each.
    check "$s" nvmf_host_bench_qd127_nvmet_rdma deep_host_bench nvmet host-qd127-nvmet
    check "$s" nvmf_host_bench_qd127_nvmf_target deep_host_bench ours host-qd127-ours
    judge "$s" nvmf_host_bench_qd127_nvmf_target_iops_at_least_0_8x_nvmet_rdma hostbench \
      "$DEEP_OUT/host-qd127-ours.json" "$DEEP_OUT/host-qd127-nvmet.json" 0.8
  fi
  check "$s" teardown deep_teardown
}
# Fair shares beside hostile hosts (docs/target.md "Limits and their defaults"), nvmf-target
# at its defaults but for --poll-groups: a QD1 4 KiB randread victim (the Linux host, fio, 20 s)
# measured alone, then beside (1) a raw host withholding its receives on 8 controllers x 4 I/O
# queues of 32 entries, each sending 64 Flushes (2 x SQSIZE: every command slot stalled behind
# an RNR-NAKed SEND, the rest parked), with --poll-groups 2; (2) nvmf-host bench keeping 4 I/O
# queues x 127 reads of 128 KiB outstanding (more than the shared data buffers), with
# --poll-groups 2, then against Linux nvmet-rdma on the same device. Beside the raw host
# the victim's p99 must stay within 3x of alone, and the raw host's queues must be torn down
# within --send-stall-timeout-ms (30 s) and 10 s of housekeeping. Beside the reader hog every
# victim read must complete; its p99 is reported, not judged: in this guest the hog saturates
# the 2 CPUs and the one rxe link, and the victim's p99 grows 50x to a few hundred times for
# nvmet-rdma and nvmf-target alike (docs/interop.md).
victim_fio() { # victim_fio DEV OUT.json [STARTDELAY]
  timeout -k 5 120 fio --name=victim --filename="$1" --ioengine=libaio --direct=1 \
    --rw=randread --bs=4k --iodepth=1 --time_based --runtime=20 --startdelay="${3:-0}" \
    --output-format=json --output="$2" || return 1
  grep -E '"(iops|error)"' "$2" | head -n 3
}
beside_withholder() { # beside_withholder DEV
  local log=$out/withhold.log rc=0 pid
  : >"$log"
  "$bin/ci/e2e/withhold_receives" -a "$T" -s 4420 -w "$H" -n "$NQN" -q "$HOST_OK" \
    --controllers 8 --queues 4 --queue-size 32 --wait-s 45 >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1200); do # its 32 queues connected and their Flushes sent: the attack is on
    grep -q '"phase": "sent"' "$log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q '"phase": "sent"' "$log"; then
    kill "$pid" 2>/dev/null
    wait "$pid"
    cat "$log"
    return 1
  fi
  victim_fio "$1" "$out/victim-withhold.json" || rc=1
  wait "$pid" || rc=1
  cat "$log"
  return "$rc"
}
beside_reader_hog() { # beside_reader_hog DEV TAG
  local start rc=0 pid delay
  start=$(($(date +%s) + 15)) # the hog's 4 queues connect first; its I/O runs start..start+30
  timeout -k 5 150 "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" bench \
    --log-level info --rw randread --bs 128k --iodepth 127 --numjobs 4 --threads 1 --poll event \
    --runtime 30 --start-at "$start" --json "$out/hog-$2.json" >"$out/hog-$2.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do # connected, waiting for --start-at (or gone)
    grep -q 'bench: waiting for --start-at' "$out/hog-$2.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  delay=$((start + 5 - $(date +%s)))
  [ "$delay" -ge 0 ] || delay=0
  victim_fio "$1" "$out/victim-hog-$2.json" "$delay" || rc=1
  wait "$pid" || rc=1
  tail -n 5 "$out/hog-$2.log"
  return "$rc"
}
hostile_hosts() {
  local s=KernelHostBesideHostileHosts cfg=$out/config-hostile.json ns
  write_config "$cfg" 4096
  # Two poll groups (the guest's CPUs): the raw host's queues and the victim's may share one or
  # not. One group shared by every host is the in-process hostile-host tests' .pg1 run.
  if check "$s" start_target_pg2 start_target "$cfg" hostile-pg2 --poll-groups 2; then
    if check "$s" victim_connect_pg2 k_connect; then
      ns=$(wait_ns)
      check "$s" victim_alone_pg2 victim_fio "$ns" "$out/victim-alone-pg2.json"
      check "$s" victim_beside_withholder beside_withholder "$ns"
      judge "$s" victim_p99_beside_withholder_within_3x_alone victim \
        "$out/victim-alone-pg2.json" "$out/victim-withhold.json" 3
      judge "$s" withholder_queues_torn_down_within_the_stall_bound withheld "$out/withhold.log" 40
      check "$s" victim_beside_reader_hog_pg2 beside_reader_hog "$ns" pg2
      judge "$s" victim_completes_beside_reader_hog_pg2 victim \
        "$out/victim-alone-pg2.json" "$out/victim-hog-pg2.json" none
      check "$s" victim_disconnect_pg2 k_disconnect
    fi
  fi
  check "$s" stop_target_pg2 stop_target
  # The same victim and reader hog against Linux nvmet-rdma on the same null_blk device: what
  # the rig itself does to the victim (both targets share the guest's 2 CPUs and one rxe link).
  if check "$s" nvmet_configfs_apply python3 "$here/nvmet-config.py" apply "$cfg"; then
    if check "$s" victim_connect_nvmet k_connect; then
      ns=$(wait_ns)
      check "$s" victim_alone_nvmet victim_fio "$ns" "$out/victim-alone-nvmet.json"
      check "$s" victim_beside_reader_hog_nvmet beside_reader_hog "$ns" nvmet
      judge "$s" victim_completes_beside_reader_hog_nvmet_rdma victim \
        "$out/victim-alone-nvmet.json" "$out/victim-hog-nvmet.json" none
      check "$s" victim_disconnect_nvmet k_disconnect
    fi
    check "$s" nvmet_configfs_clear python3 "$here/nvmet-config.py" clear
  fi
}
# The control socket on a running target, with the Linux host (docs/target.md "Control
# socket"): a persistent discovery controller gets the Discovery Log Page Change notice when a
# host is allowed; nvmf_get_stats shows the counters moving under the kernel host's fio; the
# kernel host removed from the subsystem is disconnected and cannot reconnect while a second
# host (nvmf-host bench) keeps its I/O without an error.
control_socket() {
  # The socket in the guest's own /tmp: the results directory is a shared file system, where
  # a Unix socket cannot be bound.
  local s=KernelHostControlSocket cfg=$out/config-rpc.json sock=/tmp/nvmf-interop-rpc.sock
  write_config "$cfg" 4096
  rpc() { "$target_bin" rpc -s "$sock" -t 30 "$@"; }
  # until_line FILE TEXT SECONDS: 0 once FILE has a line with TEXT.
  until_line() {
    local end=$((SECONDS + $3))
    until grep -qF "$2" "$1"; do
      [ "$SECONDS" -lt "$end" ] || { echo "no '$2' in $1 within $3 s"; tail -n 5 "$1"; return 1; }
      sleep 0.2
    done
    grep -F "$2" "$1" | head -n 1
  }
  # top_commands: the report's top-level "commands" (dump(2) indents top-level keys by two).
  # The answer is read whole first: grep -m1 on a pipe would end rpc with SIGPIPE.
  top_commands() {
    local j
    j=$(rpc nvmf_get_stats) || return 1
    grep -m1 -E '^  "commands": ' <<<"$j" | tr -dc 0-9
  }
  check "$s" start_target start_target "$cfg" rpc --rpc-socket "$sock" || return
  local tlog=$out/target-rpc.log
  check "$s" persistent_discovery nvme discover -t rdma -a "$T" -s 4420 -w "$H" -q "$HOST_OK" \
    --persistent
  local host2='{"nqn": "'"$NQN"'", "host": "'"$HOST_BAD"'"}'
  check "$s" add_second_host rpc nvmf_subsystem_add_host "$host2"
  check "$s" discovery_log_change_notice_sent until_line "$tlog" \
    "asynchronous event 0x0070f002 (log page 112) sent" 30
  check "$s" connect k_connect || { stop_target; return; }
  local dev
  dev=$(wait_ns)
  timeout -k 5 120 fio --name=rpc --filename="$dev" --ioengine=libaio --direct=1 --rw=randread \
    --bs=4k --iodepth=8 --time_based --runtime=40 >"$out/rpc-fio.txt" 2>&1 &
  local fio_pid=$!
  timeout -k 5 120 "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "$HOST_BAD" bench \
    --rw randread --bs 4k --iodepth 4 --runtime 25 >"$out/rpc-bench.txt" 2>&1 &
  local bench_pid=$!
  stats_move() {
    local first now end=$((SECONDS + 30))
    if ! first=$(top_commands) || [ -z "$first" ]; then echo "nvmf_get_stats failed"; return 1; fi
    echo "commands at the first look: $first"
    while :; do
      if ! now=$(top_commands) || [ -z "$now" ]; then echo "nvmf_get_stats failed"; return 1; fi
      [ "$now" -lt $((first + 1000)) ] || break
      [ "$SECONDS" -lt "$end" ] || { echo "still $now after 30 s"; return 1; }
    done
    echo "commands later: $now"
  }
  check "$s" stats_move_during_fio stats_move
  local host1='{"nqn": "'"$NQN"'", "host": "'"$HOST_OK"'"}'
  check "$s" remove_kernel_host rpc nvmf_subsystem_remove_host "$host1"
  check "$s" kernel_host_controller_freed until_line "$tlog" "(host removed from the subsystem" 30
  kernel_host_not_live() {
    local c state end=$((SECONDS + 30))
    c=$(ctrl_dev)
    [ -n "$c" ] || { echo "no controller"; return 1; }
    until state=$(cat "/sys/class/nvme/$(basename "$c")/state") && [ "$state" != live ]; do
      [ "$SECONDS" -lt "$end" ] || { echo "still live"; return 1; }
      sleep 0.2
    done
    echo "$(basename "$c"): $state"
  }
  check "$s" kernel_host_disconnected kernel_host_not_live
  check "$s" kernel_host_reconnect_refused until_line "$tlog" \
    "Connect refused: Connect Invalid Host (SCT 0x1 SC 0x84, DNR) (host '$HOST_OK'" 60
  other_host_io() {
    wait "$bench_pid" || { echo "nvmf-host bench exit $?"; tail -n 8 "$out/rpc-bench.txt"; return 1; }
    grep -E 'IOPS=' "$out/rpc-bench.txt" | head -n 2
    if grep -qiE 'error' "$out/rpc-bench.txt"; then tail -n 8 "$out/rpc-bench.txt"; return 1; fi
  }
  check "$s" other_host_keeps_its_io other_host_io
  kill "$fio_pid" 2>/dev/null
  wait "$fio_pid" 2>/dev/null
  nvme disconnect -n "$NQN" >/dev/null 2>&1
  nvme disconnect -n nqn.2014-08.org.nvmexpress.discovery >/dev/null 2>&1
  check "$s" stop_target stop_target
}
# Namespaces changed over the control socket while the Linux host is connected: one added
# shows up in the host's `nvme list` within 5 s without a reconnect (Namespace Attribute Changed
# notice, Changed Namespace List) and passes fio's verification; resized, the host's block
# device takes the new size; removed, it goes; fio on namespace 1 runs through all of it with
# no error.
control_socket_namespaces() {
  local s=KernelHostControlSocketNamespaces cfg=$out/config-rpc-ns.json
  local sock=/tmp/nvmf-interop-rpc-ns.sock sub='"nqn": "'"$NQN"'"'
  write_config "$cfg" 4096
  ns_rpc() { "$target_bin" rpc -s "$sock" -t 30 "$@"; }
  # ns_by_nsid NSID: /dev/nvmeSnN of $NQN's namespace NSID (the head disk's name numbers
  # namespaces in the order the host found them, not by NSID).
  ns_by_nsid() {
    local b name
    for b in /sys/block/nvme*n*; do
      name=$(basename "$b")
      [[ $name =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
      [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
      [ "$(cat "$b/nsid" 2>/dev/null)" = "$1" ] && { echo "/dev/$name"; return 0; }
    done
    return 1
  }
  ms() { echo $(($(date +%s%N) / 1000000)); }
  check "$s" start_target start_target "$cfg" rpc-ns --rpc-socket "$sock" || return
  local tlog=$out/target-rpc-ns.log
  check "$s" connect k_connect || { stop_target; return; }
  local dev1 dev2
  dev1=$(wait_ns)
  # 50 clients asking the control socket (one request every 2 s each) during a QD32 fio: the
  # fio has no error and its p99 is within 2x of the same fio alone. The clients run at nice
  # 19: on the guest's 2 vCPUs their own Python would otherwise take the CPU the fio and the
  # target need, which is not what is measured (the target answering them beside its I/O).
  qd32_fio() { # qd32_fio OUT.json [STARTDELAY]
    timeout -k 5 120 fio --name=qd32 --filename="$dev1" --ioengine=libaio --direct=1 \
      --rw=randread --bs=4k --iodepth=32 --time_based --runtime=20 --startdelay="${2:-0}" \
      --output-format=json --output="$1" || return 1
    grep -E '"(iops|error)"' "$1" | head -n 3
  }
  beside_rpc_clients() {
    nice -n 19 python3 "$here/rpc_clients.py" "$sock" 50 25 "$NQN" 2000 \
      >"$out/rpc-clients.json" 2>&1 &
    local pid=$! rc=0
    qd32_fio "$out/rpc-qd32-clients.json" 3 || rc=1 # the clients connect in those 3 s
    wait "$pid" || rc=1
    cat "$out/rpc-clients.json"
    return "$rc"
  }
  check "$s" qd32_fio_alone qd32_fio "$out/rpc-qd32-alone.json"
  check "$s" qd32_fio_beside_50_rpc_clients beside_rpc_clients
  judge "$s" qd32_p99_beside_50_rpc_clients_within_2x_alone victim "$out/rpc-qd32-alone.json" \
    "$out/rpc-qd32-clients.json" 2
  timeout -k 5 120 fio --name=ns1 --filename="$dev1" --ioengine=libaio --direct=1 --rw=randrw \
    --bs=4k --iodepth=8 --time_based --runtime=45 >"$out/rpc-ns-fio.txt" 2>&1 &
  local fio_pid=$!
  # added_ns_listed: the namespace's block device exists (what `nvme list` lists) within 5 s
  # of the call, then `nvme list` shows it.
  added_ns_listed() {
    local t0 t_rpc t_seen d
    t0=$(ms)
    ns_rpc nvmf_subsystem_add_ns '{'"$sub"', "namespace": {"nsid": 2, "ram_size": 67108864}}' ||
      return 1
    t_rpc=$(ms)
    until d=$(ns_by_nsid 2); do
      [ $(($(ms) - t0)) -lt 5000 ] || { echo "no namespace 2 after 5 s"; nvme list; return 1; }
      sleep 0.05
    done
    t_seen=$(ms)
    echo "namespace 2 is $d: the call returned after $((t_rpc - t0)) ms, the host had it" \
      "$((t_seen - t0)) ms after the call"
    [ $((t_seen - t0)) -lt 5000 ] || { echo "later than 5 s"; return 1; }
    nvme list | grep -F "$d" || { echo "$d is not in nvme list"; nvme list; return 1; }
  }
  check "$s" added_namespace_listed_within_5s added_ns_listed
  check "$s" namespace_changed_notice_sent grep -F "asynchronous event 0x00040002 (log page 4) sent" "$tlog"
  dev2=$(ns_by_nsid 2)
  check "$s" fio_verify_on_added_namespace fio --name=verify --filename="${dev2:-/dev/null}" \
    --ioengine=libaio --direct=1 --rw=write --bs=64k --iodepth=8 --size=32m --verify=crc32c \
    --do_verify=1
  resized_ns_seen() {
    local t0 size
    t0=$(ms)
    ns_rpc nvmf_subsystem_resize_ns '{'"$sub"', "nsid": 2, "size": 134217728}' || return 1
    until size=$(blockdev --getsize64 "$dev2") && [ "$size" = 134217728 ]; do
      [ $(($(ms) - t0)) -lt 10000 ] || { echo "$dev2 still $size bytes after 10 s"; return 1; }
      sleep 0.05
    done
    echo "$dev2: $size bytes $(($(ms) - t0)) ms after nvmf_subsystem_resize_ns"
  }
  check "$s" resized_namespace_size_seen resized_ns_seen
  removed_ns_gone() {
    local t0
    t0=$(ms)
    ns_rpc nvmf_subsystem_remove_ns '{'"$sub"', "nsid": 2}' || return 1
    while ns_by_nsid 2 >/dev/null; do
      [ $(($(ms) - t0)) -lt 10000 ] || { echo "namespace 2 still there after 10 s"; return 1; }
      sleep 0.05
    done
    echo "namespace 2 gone $(($(ms) - t0)) ms after nvmf_subsystem_remove_ns"
    nvme list
    # Namespace 1's fio ran through every change: it is still running now.
    kill -0 "$fio_pid" 2>/dev/null || { echo "fio on namespace 1 ended before the changes did"; return 1; }
  }
  check "$s" removed_namespace_gone removed_ns_gone
  other_ns_io() {
    wait "$fio_pid" || { echo "fio exit $?"; tail -n 20 "$out/rpc-ns-fio.txt"; return 1; }
    grep -E 'err= *0' "$out/rpc-ns-fio.txt" || { tail -n 20 "$out/rpc-ns-fio.txt"; return 1; }
    grep -E 'IOPS=' "$out/rpc-ns-fio.txt"
  }
  check "$s" other_namespace_io_without_error other_ns_io
  # save_config, then a restart from the saved file: the host discovers and lists the same.
  # snapshot FILE: the discovery log (its generation counter aside) and this subsystem's
  # namespaces as `nvme list` has them (NSID, serial, model, size).
  snapshot() {
    nvme discover -t rdma -a "$T" -s 4420 -w "$H" -q "$HOST_OK" | grep -v 'Generation counter' >"$1"
    # `nvme list` rows of this subsystem (serial in the third column), device names aside,
    # sorted (the names may come in another order after a reconnect).
    local sn
    sn=$(sed 's/ *$//' "/sys/class/nvme/$(basename "$(ctrl_dev)")/serial") || return 1
    nvme list | awk -v sn="$sn" '$3 == sn { $1 = ""; $2 = ""; print }' | sort >"$1.list"
    [ -s "$1.list" ] || { echo "no namespace of serial '$sn' listed"; nvme list; return 1; }
    cat "$1.list" >>"$1"
    cat "$1"
  }
  saved_and_seen() {
    ns_rpc nvmf_subsystem_add_ns '{'"$sub"', "namespace": {"nsid": 3, "ram_size": 33554432}}' ||
      return 1
    until ns_by_nsid 3 >/dev/null; do sleep 0.1; done
    ns_rpc save_config >"$out/rpc-ns-saved.json" || return 1
    cat "$out/rpc-ns-saved.json"
    snapshot "$out/rpc-ns-before.txt" || return 1
    [ "$(grep -c . "$out/rpc-ns-before.txt")" -ge 4 ] || { echo "too little to compare"; return 1; }
  }
  check "$s" save_config saved_and_seen
  check "$s" disconnect k_disconnect
  check "$s" stop_target stop_target
  check "$s" start_from_saved_config start_target "$out/rpc-ns-saved.json" rpc-ns-saved \
    --rpc-socket "$sock" || return
  restored() {
    k_connect || return 1
    local end=$((SECONDS + 30))
    until ns_by_nsid 3 >/dev/null; do
      [ "$SECONDS" -lt "$end" ] || { echo "no namespace 3"; return 1; }
      sleep 0.1
    done
    snapshot "$out/rpc-ns-after.txt" >/dev/null || return 1
    diff "$out/rpc-ns-before.txt" "$out/rpc-ns-after.txt" && cat "$out/rpc-ns-after.txt"
  }
  check "$s" same_discover_and_list_after_restart restored
  check "$s" disconnect_restored k_disconnect
  # A subsystem created, given a namespace and a listener over the socket: a persistent
  # discovery controller is told, `nvme discover` lists it and the host connects through it.
  local tlog2=$out/target-rpc-ns-saved.log nqn2=nqn.2024-01.io.nvmf-rdma:interop-created
  local sub2='"nqn": "'"$nqn2"'"'
  local at='"listen_address": {"trtype": "RDMA", "adrfam": "IPv4", "traddr": "'"$T"'", "trsvcid": "4420"}'
  check "$s" persistent_discovery_restored nvme discover -t rdma -a "$T" -s 4420 -w "$H" \
    -q "$HOST_OK" --persistent
  created_and_listed() {
    local before
    before=$(grep -c 'asynchronous event 0x0070f002' "$tlog2")
    ns_rpc nvmf_create_subsystem '{'"$sub2"', "allow_any_host": true}' || return 1
    ns_rpc nvmf_subsystem_add_ns '{'"$sub2"', "namespace": {"ram_size": 16777216}}' || return 1
    ns_rpc nvmf_subsystem_add_listener '{'"$sub2"', '"$at"'}' || return 1
    local end=$((SECONDS + 30))
    until [ "$(grep -c 'asynchronous event 0x0070f002' "$tlog2")" -gt "$before" ]; do
      [ "$SECONDS" -lt "$end" ] || { echo "no Discovery Log Change notice"; return 1; }
      sleep 0.2
    done
    echo "Discovery Log Change notice sent"
    nvme discover -t rdma -a "$T" -s 4420 -w "$H" -q "$HOST_OK" | grep -F "subnqn:  $nqn2"
  }
  check "$s" created_subsystem_discovered created_and_listed
  created_ns() { # the block device of $nqn2's namespace
    local b name
    for b in /sys/block/nvme*n*; do
      name=$(basename "$b")
      [[ $name =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
      [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$nqn2" ] && { echo "/dev/$name"; return 0; }
    done
    return 1
  }
  connect_created() {
    nvme connect -t rdma -a "$T" -s 4420 -w "$H" -n "$nqn2" -q "$HOST_OK" || return 1
    local d end=$((SECONDS + 30))
    until d=$(created_ns); do
      [ "$SECONDS" -lt "$end" ] || { echo "no namespace of $nqn2"; nvme list; return 1; }
      sleep 0.2
    done
    echo "$nqn2: $d"
    nvme list | grep -F "$d" || { nvme list; return 1; }
    nvme disconnect -n "$nqn2"
  }
  check "$s" host_connects_through_added_listener connect_created
  check "$s" delete_created_subsystem ns_rpc nvmf_delete_subsystem '{'"$sub2"'}'
  nvme disconnect -n nqn.2014-08.org.nvmexpress.discovery >/dev/null 2>&1
  check "$s" stop_restored stop_target
}
if [ "${NVMF_INTEROP_ONLY:-}" = rpc ]; then
  control_socket
  control_socket_namespaces
  finish
  exit
fi
# NVMF_INTEROP_ONLY=auth, ana, ublk, or a comma-separated list of them (auth,ana,ublk): the
# sections a second guest kernel runs.
if [[ ",${NVMF_INTEROP_ONLY:-}," =~ ,(auth|ana|ublk), ]]; then
  if [[ ",$NVMF_INTEROP_ONLY," == *,auth,* ]]; then
    # shellcheck source=/dev/null # ci/interop/auth.sh is shellchecked on its own
    . "$here/auth.sh"
    auth_suite
  fi
  if [[ ",$NVMF_INTEROP_ONLY," == *,ana,* ]]; then
    # shellcheck source=/dev/null # ci/interop/ana.sh is shellchecked on its own
    . "$here/ana.sh"
    ana_suite
  fi
  if [[ ",$NVMF_INTEROP_ONLY," == *,ublk,* ]]; then
    # shellcheck source=/dev/null # ci/interop/ublk.sh is shellchecked on its own
    . "$here/ublk.sh"
    ublk_suite
  fi
  finish
  exit
fi
if [ "${NVMF_INTEROP_ONLY:-}" = hostile ]; then
  hostile_hosts
  finish
  exit
fi
# NVMF_INTEROP_ONLY=deep: only the deep-writes checks.
if [ "${NVMF_INTEROP_ONLY:-}" = deep ]; then
  deep_writes
  finish
  exit
fi
# NVMF_INTEROP_ONLY=file: only the file and block-device namespace checks (ci/interop/file-backend.sh).
if [ "${NVMF_INTEROP_ONLY:-}" = file ]; then
  # shellcheck source=/dev/null # ci/interop/file-backend.sh is shellchecked on its own
  . "$here/file-backend.sh"
  finish
  exit
fi

# ------------------------------------------------- Linux host -> nvmf-target --
for size in $sizes; do
  s=KernelHostOnNvmfTarget_inline$size
  cfg=$out/config-$size.json
  write_config "$cfg" "$size"
  groups=()
  [ "$size" != 4096 ] || groups=(--poll-groups "${NVMF_INTEROP_POLL_GROUPS:-1}")
  if ! check "$s" start_target start_target "$cfg" "$size" "${groups[@]}"; then
    stop_target
    continue
  fi
  check "$s" nvme_discover nvme discover -t rdma -a "$T" -s 4420 -w "$H" -q "$HOST_OK" -o json
  cp "$out/$s.nvme_discover.log" "$out/kdisc-ours-$size.json"
  check "$s" nvmf_host_discover "$host_bin" -a "$T" -w "$H" --hostnqn "$HOST_OK" discover --json
  cp "$out/$s.nvmf_host_discover.log" "$out/odisc-ours-$size.json"
  judge "$s" discovery_entries_agree disc "$out/kdisc-ours-$size.json" \
    "$out/odisc-ours-$size.json" "$NQN" "nvme-discover" "nvmf-host-discover"
  check "$s" nvmf_host_identify "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" identify --json
  cp "$out/$s.nvmf_host_identify.log" "$out/oid-ours-$size.json"
  if check "$s" nvme_connect k_connect; then
    dev=$(ctrl_dev)
    ns=$(wait_ns)
    check "$s" nvme_id_ctrl nvme id-ctrl "$dev" -o json
    cp "$out/$s.nvme_id_ctrl.log" "$out/kid-$size.json"
    judge "$s" id_ctrl_fields idctrl "$out/kid-$size.json" "$out/oid-ours-$size.json"
    check "$s" nvme_list nvme list -o json
    cp "$out/$s.nvme_list.log" "$out/klist-$size.json"
    judge "$s" list_model_serial_firmware list "$out/klist-$size.json" "$ns" "$MODEL" "$SERIAL" "$FIRMWARE"
    check "$s" fio_verify fio_verify "$ns" "$size"
    check "$s" nvme_disconnect k_disconnect
  fi
  check "$s" stop_target stop_target
  judge "$s" io_paths paths "$out/target-$size.json" "$size" "${groups[1]:-auto}"
done

# Once, at one page of in-capsule data: reconnects, keep-alive, a host not allowed.
s=KernelHostOnNvmfTarget
cfg=$out/config-4096.json
write_config "$cfg" 4096
if check "$s" start_target start_target "$cfg" once; then
  # 10 rounds of connect + read + disconnect: ~2 s a round under emulation, far more when loaded.
  CHECK_TIMEOUT=600 check "$s" connect_10_times bash -c "
    for i in \$(seq 1 10); do
      k_connect >/dev/null || { echo \"connect \$i failed\"; exit 1; }
      dd if=\$(wait_ns) of=/dev/null bs=4k count=1 iflag=direct status=none || { echo \"read after connect \$i failed\"; exit 1; }
      k_disconnect >/dev/null || { echo \"disconnect \$i failed\"; exit 1; }
      echo \"round \$i ok\"
    done"
  check "$s" keep_alive_two_kato bash -c "
    k_connect -k 2 || exit 1
    d=\$(ctrl_dev); n=\$(wait_ns)
    echo \"kato: \$(cat /sys/class/nvme/\$(basename \$d)/kato 2>/dev/null || echo '?') s\"
    sleep 5   # two KATO periods of 2 s, plus one
    st=\$(cat /sys/class/nvme/\$(basename \$d)/state); echo \"state after 5 s: \$st\"
    dd if=\$n of=/dev/null bs=4k count=1 iflag=direct status=none || exit 1
    [ \"\$st\" = live ] || exit 1
    k_disconnect"
  check "$s" host_not_allowed_kernel_host bash -c "
    dmesg -c >/dev/null
    if nvme connect -t rdma -a '$T' -s 4420 -w '$H' -n '$NQN' -q '$HOST_BAD'; then echo 'connect by $HOST_BAD succeeded'; nvme disconnect -n '$NQN'; exit 1; fi
    dmesg | tail -n 5
    dmesg | grep -q 'not allowed'"
  check "$s" host_not_allowed_nvmf_host bash -c "
    if '$host_bin' -a '$T' -w '$H' -n '$NQN' --hostnqn '$HOST_BAD' identify >'$out/refused-ours.txt' 2>&1; then exit 1; fi
    cat '$out/refused-ours.txt'; grep -q 'SC 0x84' '$out/refused-ours.txt'"
  check "$s" stop_target stop_target
fi

deep_writes
hostile_hosts

# Two ports: 4420 with one page of in-capsule data, 4421 with none. `nvme discover`
# on either port lists $NQN on both; the Linux host connects to each port (two controllers,
# two live paths of one subsystem) and reads through the head namespace.
two_ports_discover() { # two_ports_discover PORT
  local d
  d=$(nvme discover -t rdma -a "$T" -s "$1" -w "$H" -q "$HOST_OK") || return 1
  echo "$d"
  local n4420 n4421 nvm
  n4420=$(echo "$d" | grep -cE '^trsvcid: *4420 *$')
  n4421=$(echo "$d" | grep -cE '^trsvcid: *4421 *$')
  nvm=$(echo "$d" | grep -cE '^subtype: *nvme subsystem')
  echo "entries: $nvm NVM subsystem; trsvcid 4420 x$n4420, 4421 x$n4421 (asked on $1)"
  [ "$nvm" -eq 2 ] && [ "$n4420" -ge 1 ] && [ "$n4421" -ge 1 ]
}
two_ports_connect_each() {
  local p c live=0
  for p in 4420 4421; do
    nvme connect -t rdma -a "$T" -s "$p" -w "$H" -n "$NQN" -q "$HOST_OK" -i 2 --ctrl-loss-tmo 5 ||
      { echo "connect to port $p failed"; nvme disconnect -n "$NQN"; return 1; }
  done
  for _ in $(seq 1 100); do
    live=0
    for c in /sys/class/nvme/nvme*; do
      [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
      [ "$(cat "$c/state")" = live ] && live=$((live + 1))
      [ "$live" -eq 2 ] && echo "$(basename "$c") $(cat "$c/address")"
    done
    [ "$live" -eq 2 ] && break
    sleep 0.1
  done
  nvme list-subsys
  local svcs
  svcs=$(nvme list-subsys | grep -E '^ *\+- nvme[0-9]+ rdma .*live' | grep -oE 'trsvcid=[0-9]+' | sort -u | tr '\n' ' ')
  echo "live controllers: $live; services: $svcs"
  local rc=0
  [ "$live" -eq 2 ] && [ "$svcs" = "trsvcid=4420 trsvcid=4421 " ] || rc=1
  dd if="$(wait_ns)" of=/dev/null bs=4k count=1 iflag=direct status=none || { echo "read failed"; rc=1; }
  nvme disconnect -n "$NQN"
  return "$rc"
}
s=KernelHostOnNvmfTarget_TwoPorts
cfg=$out/config-two-ports.json
# write_config's setup with a second port: 4421, no in-capsule data.
cat >"$cfg" <<JSON
{
  "hosts": [{"nqn": "$HOST_OK"}],
  "ports": [
    {"portid": 1,
     "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4420",
              "treq": "not specified"},
     "param": {"inline_data_size": "4096"}, "referrals": [], "subsystems": ["$NQN"]},
    {"portid": 2,
     "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4421",
              "treq": "not specified"},
     "param": {"inline_data_size": "0"}, "referrals": [], "subsystems": ["$NQN"]}],
  "subsystems": [{
    "nqn": "$NQN",
    "attr": {"allow_any_host": "0", "serial": "$SERIAL", "model": "$MODEL", "version": "1.3"},
    "allowed_hosts": ["$HOST_OK"],
    "namespaces": [{"nsid": 1, "enable": 1,
                    "device": {"path": "$ns_dev",
                               "nguid": "11223344-5566-7788-99aa-bbccddeeff00",
                               "uuid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}}]}]
}
JSON
if check "$s" start_target start_target "$cfg" two-ports; then
  check "$s" nvme_discover_on_4420_lists_both two_ports_discover 4420
  check "$s" nvme_discover_on_4421_lists_both two_ports_discover 4421
  check "$s" nvme_connect_each_port two_ports_connect_each
  check "$s" stop_target stop_target
fi

# File and block-device namespaces: discard, two namespaces, faults, durability.
# shellcheck source=/dev/null # ci/interop/file-backend.sh is shellchecked on its own
. "$here/file-backend.sh"

# --max-pending-connections against the Linux host: nvme-rdma sets up the CM
# connection of every I/O queue before it sends their Connects, so a connecting host holds one
# pending connection per I/O queue (docs/target.md's reason for the default). 6 I/O queues (-i 2
# -W 2 -P 2: the guest's 2 CPUs cap each kind at 2): at a limit of 6 the host connects with all
# 7 queues; at 5 its sixth I/O queue gets a CM reject (NO_RSC) and nvme connect fails.
s=KernelHostOnNvmfTarget_PendingLimit
cfg=$out/config-pending.json
write_config "$cfg" 4096
pending_connect() { # pending_connect EXPECTED-QUEUE-COUNT (0: the connect must fail)
  local rc=0 c n=0
  nvme connect -t rdma -a "$T" -s 4420 -w "$H" -n "$NQN" -q "$HOST_OK" -i 2 -W 2 -P 2 || rc=$?
  echo "nvme connect exit $rc"
  c=$(ctrl_dev)
  [ -n "$c" ] && n=$(cat "/sys/class/nvme/$(basename "$c")/queue_count")
  echo "queue_count (admin + I/O): $n"
  dmesg | grep -E 'creating|mapped|rejected' | tail -n 3
  [ -n "$c" ] && nvme disconnect -n "$NQN"
  if [ "$1" -eq 0 ]; then [ "$rc" -ne 0 ] && [ -z "$c" ]; else [ "$rc" -eq 0 ] && [ "$n" -eq "$1" ]; fi
}
for limit in 6 5; do
  if check "$s" "start_target_limit_$limit" start_target "$cfg" "pending-$limit" \
    --max-io-queues 8 --max-pending-connections "$limit"; then
    dmesg -c >/dev/null
    if [ "$limit" -eq 6 ]; then
      check "$s" six_io_queues_connect_at_limit_6 pending_connect 7
    else
      check "$s" six_io_queues_refused_at_limit_5 pending_connect 0
    fi
    check "$s" "stop_target_limit_$limit" stop_target
  fi
done

control_socket
control_socket_namespaces
# shellcheck source=/dev/null # ci/interop/ana.sh is shellchecked on its own
. "$here/ana.sh"
ana_suite

# ------------------------------------------------- nvmf-host -> Linux nvmet-rdma --
for size in $sizes; do
  s=NvmfHostOnKernelTarget_inline$size
  cfg=$out/config-$size.json
  write_config "$cfg" "$size"
  check "$s" configfs_apply python3 "$here/nvmet-config.py" apply "$cfg" || continue
  check "$s" nvmf_host_discover "$host_bin" -a "$T" -w "$H" --hostnqn "$HOST_OK" discover --json
  cp "$out/$s.nvmf_host_discover.log" "$out/odisc-kernel-$size.json"
  judge "$s" discovery_same_as_nvmf_target disc \
    "$out/odisc-kernel-$size.json" "$out/odisc-ours-$size.json" "$NQN" "nvmet-rdma" "nvmf-target"
  check "$s" identify "$host_bin" -a "$T" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" identify --json
  cp "$out/$s.identify.log" "$out/oid-kernel-$size.json"
  judge "$s" negotiation_report negotiation "$out/oid-kernel-$size.json" "$size"
  head -c 262144 /dev/urandom >"$out/data-$size.bin"
  head -c 12288 /dev/urandom >"$out/small-$size.bin"
  check "$s" write_read_compare bash -c "
    '$host_bin' -a '$T' -w '$H' -n '$NQN' --hostnqn '$HOST_OK' write -d '$out/data-$size.bin' -o 1m --json - &&
    '$host_bin' -a '$T' -w '$H' -n '$NQN' --hostnqn '$HOST_OK' read -d '$out/back-$size.bin' -o 1m -l 262144 &&
    cmp '$out/data-$size.bin' '$out/back-$size.bin' &&
    '$host_bin' -a '$T' -w '$H' -n '$NQN' --hostnqn '$HOST_OK' write -d '$out/small-$size.bin' -o 4m --json - &&
    '$host_bin' -a '$T' -w '$H' -n '$NQN' --hostnqn '$HOST_OK' read -d '$out/sback-$size.bin' -o 4m -l 12288 &&
    cmp '$out/small-$size.bin' '$out/sback-$size.bin' && echo 'read back equal'"
  if [ "$size" = 4096 ]; then
    check "$s" host_not_allowed_same_status bash -c "
      if '$host_bin' -a '$T' -w '$H' -n '$NQN' --hostnqn '$HOST_BAD' identify >'$out/refused-kernel.txt' 2>&1; then exit 1; fi
      k=\$(grep -o 'Connect Invalid Host.*' '$out/refused-kernel.txt'); o=\$(grep -o 'Connect Invalid Host.*' '$out/refused-ours.txt')
      echo \"nvmet-rdma: \$k\"; echo \"nvmf-target: \$o\"
      [ -n \"\$k\" ] && [ \"\$k\" = \"\$o\" ]"
  fi
done
python3 "$here/nvmet-config.py" clear

finish
