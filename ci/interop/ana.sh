#!/bin/bash
# Asymmetric Namespace Access with the Linux host (sourced by ci/interop/run.sh, which defines
# check, start_target, stop_target and the addresses): nvmf-target serves one subsystem on two
# ports of one address, port A (4420) optimized and port B (4421) non-optimized. The kernel host
# connects through both (native multipath: one head disk, two paths), sees the states, and
# sends its I/O through A. While fio verifies (QD16, 60 s) on the head disk, A is set
# inaccessible over the control socket, then optimized again, then A's listener is removed:
# each time the I/O moves within ANATT (10 s), and fio ends with no error and the kernel logs
# no I/O timeout. Then nvmf-host's multipath (-x multipath) against the same two ports: I/O on
# the optimized path, moved to B without an error when A goes inaccessible mid-write, spread
# by round-robin over two optimized paths. Then conform's ANA cases against port A and, for
# the record, against nvmet; and nvmf-host's multipath against nvmet's two ports, its ANA
# states changed through configfs.
# shellcheck disable=SC2154 # out, target_bin, host_bin, ns_dev, here, T, H, NQN: run.sh's
# shellcheck disable=SC2317 # the check functions are called through check()

ana_suite() {
  local s=KernelHostAna cfg=$out/config-ana.json sock=/tmp/nvmf-interop-ana.sock
  local pa=4420 pb=4421
  cat >"$cfg" <<JSON
{"hosts": [{"nqn": "$HOST_OK"}],
 "ports": [
  {"portid": 1, "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "$pa"},
   "ana_groups": [{"grpid": 1, "ana": {"state": "optimized"}}, {"grpid": 2, "ana": {"state": "inaccessible"}}],
   "subsystems": ["$NQN"]},
  {"portid": 2, "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "$pb"},
   "ana_groups": [{"grpid": 1, "ana": {"state": "non-optimized"}}], "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "attr": {"allow_any_host": "0"}, "allowed_hosts": ["$HOST_OK"],
   "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$ns_dev"}, "ana": {"grpid": 1}},
                  {"nsid": 2, "enable": 1, "device": {"ram_size": 67108864}, "ana": {"grpid": 2}}]}]}
JSON
  ana_rpc() { "$target_bin" rpc -s "$sock" -t 30 "$@"; }
  check "$s" start_target start_target "$cfg" ana --rpc-socket "$sock" || return
  # path_ctrl PORT: the kernel controller of $NQN whose address has trsvcid=PORT.
  path_ctrl() {
    local c
    for c in /sys/class/nvme/nvme*; do
      [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
      grep -q "trsvcid=$1\b" "$c/address" 2>/dev/null && { basename "$c"; return 0; }
    done
    return 1
  }
  # path_state PORT: the ANA state the kernel holds for namespace 1's path through PORT (by
  # NSID: a kernel that scans namespaces in parallel numbers its disks in any order).
  path_state() {
    local c p
    c=$(path_ctrl "$1") || return 1
    for p in /sys/class/nvme/"$c"/nvme*c*n*; do
      [ "$(cat "$p/nsid" 2>/dev/null)" = 1 ] && cat "$p/ana_state" && return 0
    done
    return 1
  }
  # ns1_head: the multipath head disk of namespace 1.
  ns1_head() {
    local b
    for _ in $(seq 1 300); do
      for b in /sys/block/nvme*n*; do
        [[ $(basename "$b") =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
        [ "$(cat "$b/nsid" 2>/dev/null)" = 1 ] || continue
        [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
        echo "/dev/$(basename "$b")"
        return 0
      done
      sleep 0.1
    done
    return 1
  }
  # io_counts: "A B": the target's I/O queue commands (qid > 0) of the controller on each port.
  io_counts() {
    local ca cb
    ca=$(cat "/sys/class/nvme/$(path_ctrl "$pa")/cntlid" 2>/dev/null || echo 0)
    cb=$(cat "/sys/class/nvme/$(path_ctrl "$pb")/cntlid" 2>/dev/null || echo 0)
    # dump(2): each queue's own keys are indented by four, in name order (cntlid, commands,
    # ..., qid); no python3 here: it takes seconds to start under emulation.
    ana_rpc nvmf_subsystem_get_qpairs '{"nqn": "'"$NQN"'"}' | awk -v a="$ca" -v b="$cb" '
      /^    "cntlid": / { c = $2 + 0 }
      /^    "commands": / { m = $2 + 0 }
      /^    "qid": / { if ($2 + 0 > 0) { if (c == a) sa += m; if (c == b) sb += m } }
      END { print sa + 0, sb + 0 }'
  }
  # moved_to FROM TO: the I/O left FROM within ANATT (10 s) of the change: FROM's count stood
  # still from some sample on, taken at most 10 s after the change, for three samples or more,
  # while TO's grew. Prints when FROM's count last moved.
  moved_to() {
    local t0=$SECONDS start a b from to last=-1 moved_at=0 still=0 start_to
    fio_running || return 1
    start=$(io_counts) || return 1
    if [ "$2" = B ]; then start_to=${start#* }; else start_to=${start% *}; fi
    # Up to 60 s of samples: with fio and busy-polling target threads on the guest's two
    # emulated CPUs, one control-socket sample can take several seconds.
    while [ $((SECONDS - t0)) -le 60 ]; do
      read -r a b <<<"$(io_counts)"
      if [ "$1" = A ]; then from=$a to=$b; else from=$b to=$a; fi
      if [ "$from" != "$last" ]; then
        last=$from moved_at=$((SECONDS - t0)) still=0
      else
        still=$((still + 1))
      fi
      if [ "$still" -ge 3 ] && [ "$to" -gt $((start_to + 100)) ]; then
        echo "I/O off $1 within $moved_at s of the change, on $2 since: counts A B $start -> $a $b"
        [ "$moved_at" -le 10 ]
        return
      fi
      sleep 0.5
    done
    echo "I/O still on $1 60 s after the change: counts A B $start -> $(io_counts)"
    return 1
  }
  local ns
  two_paths() {
    nvme connect -t rdma -a "$T" -s "$pa" -w "$H" -n "$NQN" -q "$HOST_OK" -i 2 || return 1
    nvme connect -t rdma -a "$T" -s "$pb" -w "$H" -n "$NQN" -q "$HOST_OK" -i 2 || return 1
    ns=$(ns1_head) || { echo "no block device of namespace 1"; return 1; }
    local end=$((SECONDS + 20)) sa sb
    until sa=$(path_state "$pa") && sb=$(path_state "$pb") && [ "$sa" = optimized ] &&
      [ "$sb" = non-optimized ]; do
      [ "$SECONDS" -lt "$end" ] || { echo "path states: A '$sa', B '$sb'"; return 1; }
      sleep 0.2
    done
    # nvme-cli prints each path's ANA state when given the namespace.
    local subsys
    subsys=$(nvme list-subsys "$ns")
    echo "$subsys"
    echo "head $ns; path A (port $pa): $sa, path B (port $pb): $sb"
    grep -qE "trsvcid=$pa.* live optimized" <<<"$subsys" &&
      grep -qE "trsvcid=$pb.* live non-optimized" <<<"$subsys"
  }
  check "$s" two_paths_with_their_states two_paths || { stop_target; return; }
  # NVMF_INTEROP_ANA_HOST_ONLY=1 (a second guest kernel, by hand): the Linux host's part only;
  # conform's cases check nvmf-target, the same on either kernel.
  local conform_too=1
  [ "${NVMF_INTEROP_ANA_HOST_ONLY:-0}" = 1 ] && conform_too=0

  # conform's ANA cases against port A, where namespace 2's group 2 is inaccessible; then
  # group 2 set to change: the log's change count moves and I/O gets Asymmetric Access
  # Transition; then inaccessible again (a Linux host resets a controller whose group stays in
  # change for ANATT).
  local ana_cases=ana.identify,ana.log,ana.log-rgo,ana.log-offset,ana.path-status
  ana_conform() { # ana_conform TAG PORT CASES
    "$host_bin" -a "$T" -s "$2" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" conform --cases "$3" \
      --json "$out/conform-$1.json" >"$out/conform-$1.txt" 2>&1
    local rc=$?
    cat "$out/conform-$1.txt"
    return "$rc"
  }
  # change_count FILE: the ANA log's change count in a conform report (ana.log's "got").
  change_count() { grep -o '"got": "change count [0-9]*' "$1" | grep -o '[0-9]*$'; }
  all_pass() {
    ana_conform ana-ours "$pa" "$ana_cases" || return 1
    grep -E '^ana\.path-status +must +pass' "$out/conform-ana-ours.txt" >/dev/null
  }
  [ "$conform_too" = 1 ] && check AnaConform nvmf_target_every_case_passes all_pass
  local sub='"nqn": "'"$NQN"'"'
  local at_a='"listen_address": {"trtype": "RDMA", "adrfam": "IPv4", "traddr": "'"$T"'", "trsvcid": "'$pa'"}'
  set_group2() {
    ana_rpc nvmf_subsystem_listener_set_ana_state '{'"$sub"', '"$at_a"', "anagrpid": 2, "ana_state": "'"$1"'"}'
  }
  count_moves() {
    local before after
    before=$(change_count "$out/conform-ana-ours.json")
    set_group2 change || return 1
    ana_conform ana-ours-change "$pa" ana.log,ana.path-status
    local rc=$?
    set_group2 inaccessible || return 1
    after=$(change_count "$out/conform-ana-ours-change.json")
    echo "change count $before, then $after after group 2 went to change"
    [ "$rc" -eq 0 ] && [ -n "$before" ] && [ -n "$after" ] && [ "$after" -gt "$before" ] &&
      grep -qE '^ana\.path-status +must +pass .*change' "$out/conform-ana-ours-change.txt"
  }
  [ "$conform_too" = 1 ] && check AnaConform change_count_moves_and_transition_status count_moves
  local kernel_lines
  kernel_lines=$(dmesg | wc -l)
  # fio runs through every step below and is stopped after the last (SIGINT: it ends its jobs,
  # reports, and exits 128); its 300 s bound is far beyond the steps' own (60 s each).
  timeout -k 5 320 fio --name=ana --filename="$ns" --ioengine=libaio --direct=1 --rw=randrw \
    --bs=4k --iodepth=16 --size=64m --time_based --runtime=300 --verify=crc32c --verify_fatal=1 \
    --group_reporting --output="$out/ana-fio.txt" &
  local fio_pid=$!
  fio_running() { kill -0 "$fio_pid" 2>/dev/null || { echo "fio ended before this step"; return 1; }; }
  on_optimized() { # I/O only through A while A is optimized
    sleep 3
    fio_running || return 1
    local a0 b0 a1 b1
    read -r a0 b0 <<<"$(io_counts)"
    sleep 3
    read -r a1 b1 <<<"$(io_counts)"
    echo "over 3 s: A +$((a1 - a0)), B +$((b1 - b0))"
    [ $((a1 - a0)) -gt 100 ] && [ "$b1" -eq "$b0" ]
  }
  check "$s" io_on_the_optimized_path on_optimized
  set_a() { ana_rpc nvmf_subsystem_listener_set_ana_state '{'"$sub"', '"$at_a"', "ana_state": "'"$1"'"}'; }
  drained() { set_a inaccessible && moved_to A B && [ "$(path_state "$pa")" = inaccessible ]; }
  check "$s" port_a_inaccessible_io_moves_to_b_within_anatt drained
  restored() { set_a optimized && moved_to B A && [ "$(path_state "$pa")" = optimized ]; }
  check "$s" port_a_optimized_again_io_returns_within_anatt restored
  listener_gone() {
    ana_rpc nvmf_subsystem_remove_listener '{'"$sub"', '"$at_a"'}' && moved_to A B
  }
  check "$s" port_a_listener_removed_io_moves_to_b_within_anatt listener_gone
  fio_clean() {
    fio_running || return 1
    kill -INT "$fio_pid"
    local rc=0
    wait "$fio_pid" || rc=$?
    [ "$rc" -eq 128 ] || { echo "fio exit $rc (128 after SIGINT)"; cat "$out/ana-fio.txt"; return 1; }
    grep -E 'err=|IOPS=' "$out/ana-fio.txt"
    ! grep -qE 'err= *[1-9]' "$out/ana-fio.txt" || return 1
    dmesg | tail -n +"$((kernel_lines + 1))" >"$out/ana-dmesg.txt"
    grep -E 'QID [0-9]+ timeout|I/O error' "$out/ana-dmesg.txt" && return 1
    echo "no error in fio, no I/O timeout or I/O error in the kernel log"
  }
  check "$s" fio_verify_no_error_no_kernel_timeout fio_clean
  nvme disconnect -n "$NQN" >/dev/null 2>&1

  # nvmf-host's multipath against the same two ports (A served again, optimized; B
  # non-optimized): the first guest kernel's stage only (nothing of it is the kernel's).
  if [ "$conform_too" = 1 ]; then
    back_a() {
      ana_rpc nvmf_subsystem_add_listener '{'"$sub"', '"$at_a"'}' && set_a optimized
    }
    check NvmfHostAna listener_a_back back_a &&
      host_multipath NvmfHostAna "$pa" "$pb" set_a set_b_ours
  fi
  check "$s" stop_target stop_target

  # nvmet-rdma's answers to the same cases (findings, not this run's failures), configured the
  # same way through configfs on port 4430.
  [ "$conform_too" = 1 ] || return 0
  local ncfg=$out/config-ana-nvmet.json ns2
  ns2=$(nullb_create interop-ana2 64) || { echo "null_blk interop-ana2 failed"; return; }
  cat >"$ncfg" <<JSON
{"hosts": [{"nqn": "$HOST_OK"}],
 "ports": [{"portid": 3, "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4430"},
   "ana_groups": [{"grpid": 1, "ana": {"state": "optimized"}}, {"grpid": 2, "ana": {"state": "inaccessible"}}],
   "subsystems": ["$NQN"]},
  {"portid": 4, "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4431"},
   "ana_groups": [{"grpid": 1, "ana": {"state": "non-optimized"}}], "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "attr": {"allow_any_host": "0"}, "allowed_hosts": ["$HOST_OK"],
   "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$ns_dev"}, "ana": {"grpid": 1}},
                  {"nsid": 2, "enable": 1, "device": {"path": "$ns2"}, "ana": {"grpid": 2}}]}]}
JSON
  if check AnaConform nvmet_configfs python3 "$here/nvmet-config.py" apply "$ncfg"; then
    nvmet_answers() {
      ana_conform ana-nvmet 4430 "$ana_cases"
      [ -s "$out/conform-ana-nvmet.json" ]
    }
    check AnaConform nvmet_answers_recorded nvmet_answers
    host_multipath NvmfHostAnaOnKernelTarget 4430 4431 set_nvmet_a set_nvmet_b
    python3 "$here/nvmet-config.py" clear
  fi
  nullb_remove interop-ana2 || echo "null_blk interop-ana2 still in use"
}

# State setters for host_multipath: A and B of nvmf-target over its control socket, of nvmet
# through configfs (ports 3 and 4, group 1).
set_b_ours() {
  ana_rpc nvmf_subsystem_listener_set_ana_state '{'"$sub"', "listen_address": {"trtype": "RDMA", "adrfam": "IPv4", "traddr": "'"$T"'", "trsvcid": "4421"}, "ana_state": "'"$1"'"}'
}
set_nvmet_a() { echo "$1" >/sys/kernel/config/nvmet/ports/3/ana_groups/1/ana_state; }
set_nvmet_b() { echo "$1" >/sys/kernel/config/nvmet/ports/4/ana_groups/1/ana_state; }

# rxe_packets: packets the soft-RoCE devices received so far (1 KiB or less each).
rxe_packets() {
  cat /sys/class/infiniband/*/ports/1/hw_counters/rcvd_pkts 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'
}

# host_multipath SUITE PORT_A PORT_B SET_A SET_B: nvmf-host -x multipath over two paths of one
# subsystem whose namespace 1 is optimized through PORT_A and non-optimized through PORT_B.
host_multipath() {
  local s=$1 # suites: NvmfHostAna NvmfHostAnaOnKernelTarget
  local a=$2 b=$3 set_a_state=$4 set_b_state=$5 d=$out/multipath-$1
  mkdir -p "$d"
  mp() {
    "$host_bin" -a "$T,$T" -s "$a,$b" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" -x multipath "$@"
  }
  # per_path FILE: "PATH WRITES READS ANA_ERRORS" per path of a JSON report (keys in name order).
  per_path() {
    awk '/"ana_errors": / { e = $2 + 0 } /"path": / { p = $2 } /"reads": / { r = $2 + 0 }
         /"writes": / { gsub(/[",]/, "", p); print p, $2 + 0, r, e }' "$1"
  }
  both_states() {
    mp identify >"$d/identify.txt" 2>&1 || { cat "$d/identify.txt"; return 1; }
    grep '^path ' "$d/identify.txt"
    grep -qE "^path $T:$a: .* optimized$" "$d/identify.txt" &&
      grep -qE "^path $T:$b: .* non-optimized$" "$d/identify.txt"
  }
  check "$s" identify_shows_both_paths_and_states both_states || return
  head -c $((8 << 20)) /dev/urandom >"$d/small.bin"
  on_optimized() {
    mp write -d "$d/small.bin" --json "$d/optimized.json" >/dev/null || return 1
    per_path "$d/optimized.json"
    per_path "$d/optimized.json" | awk -v a="$T:$a" -v b="$T:$b" '
      $1 == a && $2 > 0 { ok_a = 1 } $1 == b && $2 == 0 { ok_b = 1 } END { exit !(ok_a && ok_b) }'
  }
  check "$s" writes_go_to_the_optimized_path on_optimized
  # A goes inaccessible while a 64 MiB write runs (once the target has seen part of it): the
  # write ends without an error, on both paths, and reads back equal through B alone.
  head -c $((64 << 20)) /dev/urandom >"$d/big.bin"
  failover() {
    mp write -d "$d/big.bin" --json "$d/failover.json" >"$d/failover.txt" 2>&1 &
    local pid=$! t0=$SECONDS start
    # Once 8 MiB of it crossed the soft-RoCE device (its received-packet counter).
    start=$(rxe_packets)
    until [ $(($(rxe_packets) - start)) -ge 8192 ] || ! kill -0 "$pid" 2>/dev/null; do
      sleep 0.1
    done
    "$set_a_state" inaccessible || { wait "$pid"; return 1; }
    wait "$pid" || { echo "write failed"; cat "$d/failover.txt"; return 1; }
    echo "64 MiB written in $((SECONDS - t0)) s"
    per_path "$d/failover.json"
    per_path "$d/failover.json" | awk -v a="$T:$a" -v b="$T:$b" '
      $1 == a && $2 > 0 { ok_a = 1 } $1 == b && $2 > 0 { ok_b = 1 } END { exit !(ok_a && ok_b) }' ||
      { echo "the write did not use both paths"; return 1; }
    mp read -d "$d/back.bin" -l $((64 << 20)) --json "$d/readback.json" >/dev/null || return 1
    per_path "$d/readback.json" | awk -v a="$T:$a" '$1 == a && $3 > 0 { exit 1 }' ||
      { echo "reads went to the inaccessible path"; return 1; }
    cmp "$d/big.bin" "$d/back.bin" && echo "read back through B: equal"
  }
  check "$s" port_a_inaccessible_mid_write_no_error_data_equal failover
  spread() {
    "$set_a_state" optimized && "$set_b_state" optimized || return 1
    mp --iopolicy round-robin write -d "$d/small.bin" --json "$d/rr.json" >/dev/null
    local rc=$?
    "$set_b_state" non-optimized
    [ "$rc" -eq 0 ] || return 1
    per_path "$d/rr.json"
    per_path "$d/rr.json" | awk '$2 > 0 { n++ } END { exit !(n == 2) }'
  }
  check "$s" round_robin_spreads_over_two_optimized_paths spread
  # bench -x multipath: its two jobs on the two optimized paths, the report's I/O per path.
  bench_spread() {
    "$set_b_state" optimized || return 1
    mp --iopolicy round-robin bench --rw randwrite --bs 4k --iodepth 4 --numjobs 2 --runtime 2 \
      --poll event --json "$d/bench.json" >"$d/bench.txt" 2>&1
    local rc=$?
    "$set_b_state" non-optimized
    [ "$rc" -eq 0 ] || { cat "$d/bench.txt"; return 1; }
    awk '/"path": "/ { p = $2 } /"write_ios": / { gsub(/[",]/, "", p); print p, $2 + 0 }' \
      "$d/bench.json" >"$d/bench-paths.txt"
    cat "$d/bench-paths.txt"
    awk '$2 > 0 { n++ } END { exit !(n == 2) }' "$d/bench-paths.txt"
  }
  check "$s" bench_round_robin_reports_io_on_both_paths bench_spread
}