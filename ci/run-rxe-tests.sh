#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs each soft-RoCE test binary listed in $1 (one path a line) with XML output into
# $NVMF_RESULTS_DIR; meant to run under ci/rxe-run, where a device exists. Then, in the same
# guest, each binary listed in $2 (optional: the in-process tests built with --config=asan,
# ASan + UBSan) with XML output into $NVMF_RESULTS_DIR/asan as asan.rxe.NAME.xml; a binary of
# $1 with such a build runs there only (but for its plain-only cases, plain_only_filter).
#
# Prints one line per test as it finishes (status, name, its own time, time since this script
# started), and a "still running" line when a test has printed nothing for 30 s. Each binary's
# full output (including the error lines of tests that provoke errors on purpose) goes to
# $NVMF_RESULTS_DIR/logs/NAME.log; only a failing test's output is printed here.
set -uo pipefail
list=${1:?usage: ci/run-rxe-tests.sh LIST_FILE [ASAN_LIST_FILE]}
asan_list=${2:-}
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
export NVMF_RXE_REQUIRED=1
status=0
here=$(cd "$(dirname "$0")" && pwd)
logs=$NVMF_RESULTS_DIR/logs
xml_dir=$NVMF_RESULTS_DIR # where run_gtest writes NAME.xml
mkdir -p "$logs"
t_start=$SECONDS

clock() { # time since the start, m:ss
  local s=$((SECONDS - t_start))
  printf '%d:%02d' $((s / 60)) $((s % 60))
}

# write_case FILE SUITE CASE RC: one GoogleTest-style XML result for a non-gtest check.
write_case() {
  if [ "$4" -eq 0 ]; then
    printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="%s"/></testsuite></testsuites>\n' \
      "$2" "$2" "$3" >"$1"
  else
    printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="%s"><failure message="exit %s"/></testcase></testsuite></testsuites>\n' \
      "$2" "$2" "$3" "$4" >"$1"
  fi
}

# follow LOG PID NAME: one line per finished GoogleTest test while PID (binary NAME) writes LOG.
# The read times out every second: bash reaps its exited background child (PID) only between
# commands, never inside a blocking read, and `tail --pid` keeps following while PID is an
# unreaped zombie. A 30 s read timeout therefore kept every binary's follow loop alive for up to
# 30 s after the binary had exited (about 8 of the soft-RoCE stage's 17 minutes).
# A read that times out keeps what it read of an unfinished line in `chunk`: kept in `partial`.
follow() {
  local log=$1 pid=$2 binary=$3 line chunk partial='' current='' since=$SECONDS name ms tag
  local finished=0 quiet=$SECONDS rc
  while :; do
    if IFS= read -r -t 1 chunk; then
      line=$partial$chunk
      partial=''
      quiet=$SECONDS
      case $line in
      "[ RUN      ] "*)
        current=${line#"[ RUN      ] "}
        since=$SECONDS
        ;;
      "[       OK ] "*" ms)" | "[  FAILED  ] "*" ms)" | "[  SKIPPED ] "*" ms)")
        name=${line#\[*\] }
        ms=${name##*(}
        ms=${ms%% ms)}
        name=${name% (*}
        case $line in
        "[       OK"*) tag=ok ;;
        "[  FAILED"*) tag=FAILED ;;
        *) tag=SKIPPED ;;
        esac
        printf '  [%s] %-7s %s (%s.%01d s)\n' "$(clock)" "$tag" "$name" $((ms / 1000)) $((ms % 1000 / 100))
        current=''
        since=$SECONDS
        finished=$((finished + 1))
        ;;
      esac
    else
      rc=$?
      partial+=$chunk
      [ $rc -gt 128 ] || break # end of the log (the binary exited)
      [ $((SECONDS - quiet)) -ge 30 ] || continue
      quiet=$SECONDS
      if [ -n "$current" ]; then
        printf '  [%s] running %s (%d s so far)\n' "$(clock)" "$current" $((SECONDS - since))
      elif [ "$finished" -gt 0 ]; then
        printf '  [%s] %s still running, %d s after its last test\n' "$(clock)" "$binary" $((SECONDS - since))
      else
        printf '  [%s] %s starting (%d s)\n' "$(clock)" "$binary" $((SECONDS - since))
      fi
    fi
  done < <(tail -n +1 -s 0.5 -f --pid="$pid" "$log")
}

# failed_output LOG: the output of each failed test (RUN .. FAILED), or the log's tail when the
# binary died inside a test.
failed_output() {
  awk '
    /^\[ RUN      \] / { buf = $0 "\n"; inside = 1; next }
    inside { buf = buf $0 "\n" }
    /^\[  FAILED  \] .* ms\)$/ { printf "%s", buf; inside = 0; shown = 1 }
    /^\[       OK \] / { inside = 0 }
    END { if (inside && !shown) printf "%s", buf }
  ' "$1" | tail -n 200 | sed 's/^/  | /'
}

# run_gtest NAME BIN [VAR=VALUE...]: runs one test binary, XML to $xml_dir/NAME.xml, output to
# logs/NAME.log.
run_gtest() {
  local name=$1 bin=$2 rc=0 pid
  shift 2
  local log=$logs/$name.log xml=$xml_dir/$name.xml
  echo "=== [$(clock)] $name${*:+ ($*)}"
  : >"$log"
  # Bazel test binaries find their data deps through the runfiles tree beside them.
  TEST_SRCDIR="$bin.runfiles" TEST_WORKSPACE=nvmf_rdma TEST_TMPDIR=$(mktemp -d) \
    env "$@" timeout 900 "$bin" --gtest_output="xml:$xml" >"$log" 2>&1 &
  pid=$!
  follow "$log" "$pid" "$name"
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "=== [$(clock)] $name exited $rc; its failed tests' output (full log: $log):"
    failed_output "$log"
    # A crash or timeout leaves no XML; a binary that wrote a passing XML and then exited
    # non-zero must still count as a failure: either way one more failing case is recorded.
    if [ ! -s "$xml" ]; then
      write_case "$xml" "$name" "binary_exit_$rc" "$rc"
    elif ! grep -q '<failure' "$xml"; then
      write_case "$xml_dir/$name.exit.xml" "$name" "binary_exit_$rc" "$rc"
    fi
  fi
}

# First prove the devices pass traffic at all (rping and ib_send_lat across the two rxe devices).
echo "=== [$(clock)] rxe-smoke (log: $logs/rxe-smoke.log)"
rc=0
timeout 300 "$here/../scripts/rxe-smoke.sh" >"$logs/rxe-smoke.log" 2>&1 || rc=$?
write_case "$NVMF_RESULTS_DIR/rxe-smoke.xml" RxeSmoke RpingAndSendLatency "$rc"
if [ "$rc" -ne 0 ]; then
  status=1
  echo "  [$(clock)] FAILED  RxeSmoke.RpingAndSendLatency (exit $rc):"
  tail -n 30 "$logs/rxe-smoke.log" | sed 's/^/  | /'
else
  echo "  [$(clock)] ok      RxeSmoke.RpingAndSendLatency"
fi

# An in-process test with an ASan + UBSan build in $2 runs once, that build (below): a plain run
# of the same cases would check nothing more. What measures the plain process stays here:
# NeverConnectRssTest (an nvmf-target process's RSS, against docs/performance.md's figure; under
# ASan it would measure the shadow memory and the quarantine).
declare -A sanitized=()
if [ -n "$asan_list" ]; then
  while IFS= read -r bin; do
    [ -n "$bin" ] && sanitized[$(basename "$bin")]=1
  done <"$asan_list"
fi
plain_only_filter() { # plain_only_filter NAME: the cases of NAME that run plain only
  case $1 in hostile_host_test) echo 'NeverConnectRssTest.*' ;; esac
}
while IFS= read -r bin; do
  [ -n "$bin" ] || continue
  name=$(basename "$bin")
  if [ -n "${sanitized[$name]:-}" ]; then
    filter=$(plain_only_filter "$name")
    [ -z "$filter" ] || run_gtest "$name" "$bin" GTEST_FILTER="$filter"
    continue
  fi
  run_gtest "$name" "$bin"
done <"$list"

# The skeleton's read/write suite once more with inline send off on both sides (every command
# capsule and every response posted by reference), under its own XML name: the inline-send
# path must not hide a bug of the by-reference one.
while IFS= read -r bin; do
  [ "$(basename "$bin")" = loopback_test ] || continue
  run_gtest loopback_test.by_reference "$bin" NVMF_HOST_MAX_INLINE_DATA=0 NVMF_TARGET_MAX_INLINE_DATA=0
done <"$list"

# The suites that drive the receive path (Connect, in-capsule data, hostile hosts, keep-alive,
# lost connections) once more with per-queue receives (--srq off) instead of the shared receive
# queue (the default), under their own XML names NAME.no_srq: NVMF_E2E_SRQ=off
# reaches the in-process targets (ci/e2e/e2e_options.h) and the nvmf-target processes
# (ci/e2e/cli_harness.h). NeverConnectRssTest is left out: its figure (docs/performance.md) is
# the default's, and it waits out a 90 s Connect deadline.
while IFS= read -r bin; do
  case "$(basename "$bin")" in
    keep_alive_test | in_capsule_test | hostile_host_test | robustness_test)
      run_gtest "$(basename "$bin").no_srq" "$bin" NVMF_E2E_SRQ=off GTEST_FILTER=-NeverConnectRssTest.*
      ;;
  esac
done <"$list"

# The same suites once more with one poll group (--poll-groups 1, where every other run has the
# default, one group per CPU: two in the guest), under their own XML names NAME.pg1:
# NVMF_E2E_POLL_GROUPS=1 reaches the in-process targets and the nvmf-target processes.
# NeverConnectRssTest is left out: it runs with --poll-groups 1 in every run already (its figure
# is one group's) and takes ~100 s of the guest's time.
while IFS= read -r bin; do
  case "$(basename "$bin")" in
    keep_alive_test | in_capsule_test | hostile_host_test | robustness_test)
      run_gtest "$(basename "$bin").pg1" "$bin" NVMF_E2E_POLL_GROUPS=1 GTEST_FILTER=-NeverConnectRssTest.*
      ;;
  esac
done <"$list"

# The in-process tests (target and host libraries in one process), built with --config=asan:
# ASan + UBSan with -fno-sanitize-recover, so any report (a leak at exit included) aborts the
# binary and fails it. Counted as asan.rxe.NAME (scripts/test.sh moves asan/ next to the unit
# tests' results). The plain-only cases (plain_only_filter) ran above.
if [ -n "$asan_list" ]; then
  xml_dir=$NVMF_RESULTS_DIR/asan
  mkdir -p "$xml_dir"
  while IFS= read -r bin; do
    [ -n "$bin" ] || continue
    filter=$(plain_only_filter "$(basename "$bin")")
    extra=()
    [ -z "$filter" ] || extra=(GTEST_FILTER="-$filter")
    run_gtest "asan.rxe.$(basename "$bin")" "$bin" \
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "${extra[@]}"
  done <"$asan_list"
  xml_dir=$NVMF_RESULTS_DIR
fi

# run_script NAME SUITE CASE SECONDS CMD...: a guest script as one GoogleTest-style case in
# NAME.xml (as rxe-smoke above); its output goes to logs/NAME.log, its tail is printed on failure.
run_script() {
  local name=$1 suite=$2 case=$3 limit=$4 rc=0 t0=$SECONDS
  shift 4
  echo "=== [$(clock)] $name (log: $logs/$name.log)"
  timeout -k 10 "$limit" "$@" >"$logs/$name.log" 2>&1 || rc=$?
  write_case "$NVMF_RESULTS_DIR/$name.xml" "$suite" "$case" "$rc"
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "  [$(clock)] FAILED  $suite.$case (exit $rc):"
    tail -n 30 "$logs/$name.log" | sed 's/^/  | /'
  else
    echo "  [$(clock)] ok      $suite.$case ($((SECONDS - t0)) s)"
  fi
}

# The examples must not rot: examples/host_hello and examples/host_async against nvmf-target
# with a RAM namespace (ci/host-hello.sh), and the README's export-a-disk commands as written,
# the disk mounted from the Linux host (ci/readme-commands.sh).
run_script host-hello HostHello WriteReadBack 300 "$here/host-hello.sh"
run_script host-async HostAsync ReadNamespace 300 "$here/host-hello.sh" async
run_script readme-commands ReadmeCommands ExportADisk 600 "$here/readme-commands.sh" "$here/../README.md"

# run_suite LABEL SECONDS SCRIPT RESULT-XML FALLBACK-XML SUITE: runs SCRIPT under bash whatever
# its mode bits (a script that lost its exec bit still runs: scripts/test.sh expects its results
# either way), for at most SECONDS. A non-zero exit fails the stage, and when the script left
# no RESULT-XML it becomes the testcase SUITE.run_exit_RC in FALLBACK-XML.
run_suite() {
  local rc=0
  echo "=== [$(clock)] $1"
  timeout "$2" bash "$3" || rc=$?
  if [ "$rc" -ne 0 ]; then
    status=1
    [ -s "$4" ] || write_case "$5" "$6" "run_exit_$rc" "$rc"
  fi
}

# Interop with the Linux kernel host and target (ci/interop/run.sh writes interop.xml): about
# 18 minutes on a quiet 2-core machine under TCG, the deep-writes (9) and fair-share (6)
# checks included.
run_suite interop 1800 "$here/interop/run.sh" "$NVMF_RESULTS_DIR/interop.xml" \
  "$NVMF_RESULTS_DIR/interop.xml" Interop
# nvmf-host conform against nvmf-target (in-capsule 0, 4096, 16384; one JUnit testcase per
# case) and against Linux nvmet-rdma (recorded as JSON; ci/conform/run.sh).
run_suite conform 1500 "$here/conform/run.sh" "$NVMF_RESULTS_DIR/conform-linux.xml" \
  "$NVMF_RESULTS_DIR/conform-run.xml" Conform
echo "=== [$(clock)] done"
exit $status
