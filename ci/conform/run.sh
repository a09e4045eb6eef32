#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `nvmf-host conform` in the soft-RoCE guest (called by ci/run-rxe-tests.sh, under ci/rxe-run):
# against nvmf-target at in-capsule data sizes 0, 4096 and 16384 (every case, dangerous ones
# included; each case is one JUnit testcase in $NVMF_RESULTS_DIR/conform-ours-SIZE.xml, which
# scripts/test.sh counts), then against Linux nvmet-rdma configured from the nvmetcli
# config.json that ci/interop uses, at port param inline_data_size 4096 (NVMF_CONFORM_LINUX_SIZES
# adds 0 and 16384: about 200 s of guest time each, mostly nvmetcli-style set-up and clear, so
# not in CI; dangerous cases left out: the in-capsule offset wrap crashes Linux 6.1). Linux's answers are findings,
# not our failures: each run is recorded as JSON (linux-SIZE.json) for
# ci/conform/readme-table.py and for ci/conform/baseline.py (run on the host by scripts/test.sh:
# a verdict that moved from the checked-in baseline fails there), plus one testcase saying that
# the runs completed. Reports and logs: $NVMF_RESULTS_DIR/conform/.
#
# Usage: ci/rxe-run --results DIR ci/conform/run.sh
#   (env: NVMF_BIN_DIR = bazel-bin, default <repo>/bazel-bin; NVMF_CONFORM_SIZES, default
#    "0 4096 16384"; NVMF_CONFORM_LINUX_SIZES, default "4096", e.g. "0 4096 16384";
#    NVMF_CONFORM_LINUX=0 skips nvmet-rdma)
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
sizes=${NVMF_CONFORM_SIZES:-"0 4096 16384"}
linux_sizes=${NVMF_CONFORM_LINUX_SIZES:-4096}
T=$NVMF_TARGET_ADDR
H=$NVMF_HOST_ADDR
NQN=nqn.2024-01.io.nvmf-rdma:interop
HOST_OK=nqn.2014-08.org.nvmexpress:uuid:6e7f0a3c-1b2d-4c5e-8f90-a1b2c3d4e5f6
out=$NVMF_RESULTS_DIR/conform
mkdir -p "$out"
status=0

log() { echo "conform: $*"; }

# one_case FILE SUITE NAME RC MESSAGE: a JUnit file with one testcase.
one_case() {
  if [ "$4" -eq 0 ]; then
    printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="%s"/></testsuite></testsuites>\n' \
      "$2" "$2" "$3" >"$1"
  else
    printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="%s"><failure message="%s"/></testcase></testsuite></testsuites>\n' \
      "$2" "$2" "$3" "$5" >"$1"
  fi
}

# conform TAG EXTRA...: one run against $T; table in $out/TAG.txt, JSON in $out/TAG.json.
conform() {
  local tag=$1 rc=0 t0=$SECONDS
  shift
  timeout -k 5 600 "$bin/host/nvmf-host" -a "$T" -w "$H" -n "$NQN" --hostnqn "$HOST_OK" \
    conform --json "$out/$tag.json" --progress "$@" >"$out/$tag.txt" 2>"$out/$tag.log" || rc=$?
  log "$tag: exit $rc in $((SECONDS - t0)) s: $(tail -n 1 "$out/$tag.txt")"
  return "$rc"
}

# The authentication cases need a host key the target asks for: they run in the second guest
# kernel's stage (ci/interop/auth.sh); ana.path-status needs a group that refuses I/O: it runs
# in the ANA interop checks (ci/interop/ana.sh); here every other case.
ours_cases=$("$bin/host/nvmf-host" conform --list |
  awk '$1 ~ /^[a-z-]+\.[a-z0-9.-]+$/ && $1 !~ /^auth\./ && $1 != "ana.path-status" { print $1 }' |
  paste -sd, -)
for size in $sizes; do
  tag=ours-$size
  "$bin/target/nvmf-target" -a "$T" -n "$NQN" --ram-size 64m --inline-data-size "$size" \
    --log-level warn >"$out/target-$size.log" 2>&1 &
  pid=$!
  wait_listening "$out/target-$size.log" "$pid" 30 # if not, the conform run reports the failure
  rc=0
  conform "$tag" --include-dangerous --cases "$ours_cases" --junit "$NVMF_RESULTS_DIR/conform-$tag.xml" \
    --junit-suite "Conform_nvmf_target_ics$size" || rc=$?
  [ "$rc" -eq 0 ] || status=1
  if ! kill -0 "$pid" 2>/dev/null; then
    log "$tag: nvmf-target is gone"
    one_case "$NVMF_RESULTS_DIR/conform-$tag-target.xml" "Conform_nvmf_target_ics$size" \
      target_alive_after_run 1 "nvmf-target exited during the run"
    status=1
  else
    kill -TERM "$pid"
    trc=0
    wait "$pid" || trc=$?
    one_case "$NVMF_RESULTS_DIR/conform-$tag-target.xml" "Conform_nvmf_target_ics$size" \
      target_alive_after_run "$trc" "nvmf-target exit $trc after the run"
    [ "$trc" -eq 0 ] || status=1
  fi
  [ -s "$NVMF_RESULTS_DIR/conform-$tag.xml" ] ||
    one_case "$NVMF_RESULTS_DIR/conform-$tag.xml" "Conform_nvmf_target_ics$size" run_completed 1 "exit $rc"
done

# nvmet-rdma, one port configuration per in-capsule size (the port attribute
# param_inline_data_size, nvmetcli's "inline_data_size"); the port is removed between sizes.
linux_rc=0
if [ "${NVMF_CONFORM_LINUX:-1}" != 0 ]; then
  # A 1 GiB memory-backed null_blk with 512-byte LBAs, made by name (see ci/lib/null_blk.sh).
  ns_dev=$(nullb_create conform-ns 1024) || log "null_blk conform-ns failed"
  modprobe -a nvmet-rdma 2>/dev/null
  [ -d /sys/kernel/config/nvmet ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
  uname -r >"$out/linux-kernel.txt"
  for size in $linux_sizes; do
    cat >"$out/config-$size.json" <<JSON
{
  "hosts": [{"nqn": "$HOST_OK"}],
  "ports": [{"portid": 1,
    "addr": {"trtype": "rdma", "adrfam": "ipv4", "traddr": "$T", "trsvcid": "4420", "treq": "not specified"},
    "param": {"inline_data_size": "$size"}, "referrals": [], "subsystems": ["$NQN"]}],
  "subsystems": [{"nqn": "$NQN",
    "attr": {"allow_any_host": "0", "serial": "1f2e3d4c5b6a7988", "model": "nvmf-rdma interop", "version": "1.3"},
    "allowed_hosts": ["$HOST_OK"],
    "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$ns_dev",
      "nguid": "11223344-5566-7788-99aa-bbccddeeff00", "uuid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}}]}]
}
JSON
    rc=0
    t0=$SECONDS
    python3 "$here/../interop/nvmet-config.py" apply "$out/config-$size.json" >>"$out/nvmet-config.log" 2>&1 || rc=$?
    [ "$rc" -eq 0 ] || log "linux-$size: nvmet-config.py apply exit $rc"
    if [ "$rc" -eq 0 ]; then
      conform "linux-$size" || rc=$?
      # Removing the port waits for every nvmet queue to be released: bounded, because a wedged
      # queue (see the dangerous cases) blocks it in the kernel for good.
      python3 "$here/../interop/nvmet-config.py" clear >>"$out/nvmet-config.log" 2>&1 &
      clear_pid=$!
      for _ in $(seq 1 240); do kill -0 "$clear_pid" 2>/dev/null || break; sleep 1; done
      if kill -0 "$clear_pid" 2>/dev/null; then
        log "nvmet-rdma: configfs clear still blocked after 240 s (in-capsule $size)"
        one_case "$NVMF_RESULTS_DIR/conform-linux-clear.xml" Conform_nvmet_rdma port_removed_after_run 1 \
          "configfs clear blocked"
        status=1
        linux_rc=1
        break
      fi
      # 0: every must case passed; 1: some failed (findings); anything else: the run broke.
      if [ "$rc" -le 1 ] && [ -s "$out/linux-$size.json" ]; then
        [ "$rc" -eq 0 ] || log "linux-$size: expected: the FAILs above are Linux nvmet-rdma's own deviations from the specification, recorded in conform/linux-$size.json (docs/conformance.md: where Linux differs), not failures of this run"
        rc=0
      fi
    fi
    log "linux-$size: set-up, run and clear in $((SECONDS - t0)) s"
    [ "$rc" -eq 0 ] || linux_rc=$rc
  done
  dmesg | grep -iE "nvmet|rdma|BUG|Oops|blocked" | tail -n 60 >"$out/linux-dmesg.txt"
  [ "$linux_rc" -ne 0 ] || nullb_remove conform-ns || log "null_blk conform-ns still in use"
  one_case "$NVMF_RESULTS_DIR/conform-linux.xml" Conform_nvmet_rdma run_completed "$linux_rc" "exit $linux_rc"
  [ "$linux_rc" -eq 0 ] || status=1
fi
exit $status
