#!/usr/bin/env bash
# Runs each soft-RoCE test binary listed in $1 (one a line: PATH [NAME], NAME defaulting to the
# binary's name, for its XML and log lines) with XML output into $NVMF_RESULTS_DIR; meant to
# run under ci/rxe-run, where a device exists. Sanitizer builds (NAME.asan) abort on any report.
set -uo pipefail
list=$1
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
export NVMF_RXE_REQUIRED=1
status=0
here=$(cd "$(dirname "$0")" && pwd)

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

# First prove the devices pass traffic at all (rping and ib_send_lat across the two rxe devices).
echo "=== rxe-smoke"
rc=0
timeout 300 "$here/../scripts/rxe-smoke.sh" || rc=$?
write_case "$NVMF_RESULTS_DIR/rxe-smoke.xml" RxeSmoke RpingAndSendLatency "$rc"
[ "$rc" -eq 0 ] || status=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
while read -r bin name; do
  [ -n "$bin" ] || continue
  [ -n "$name" ] || name=$(basename "$bin")
  echo "=== $name"
  # Bazel test binaries find their data deps through the runfiles tree beside them.
  export TEST_SRCDIR="$bin.runfiles"
  export TEST_WORKSPACE=nvmf_rdma
  export TEST_TMPDIR
  TEST_TMPDIR=$(mktemp -d)
  timeout 900 "$bin" --gtest_output="xml:$NVMF_RESULTS_DIR/$name.xml" || {
    rc=$?
    echo "=== $name exited $rc"
    status=1
    # A crash or timeout leaves no XML: record it as a failure so it is counted.
    if [ ! -s "$NVMF_RESULTS_DIR/$name.xml" ]; then
      write_case "$NVMF_RESULTS_DIR/$name.xml" "$name" "binary_exit_$rc" "$rc"
    fi
  }
done <"$list"

# The skeleton's read/write suite once more with inline send off on both sides (every command
# capsule and every response posted by reference), under its own XML name: the inline-send
# path must not hide a bug of the by-reference one (issue 4).
while read -r bin name; do
  [ "${name:-$(basename "$bin")}" = loopback_test ] || continue
  name=loopback_test.by_reference
  echo "=== $name (NVMF_HOST_MAX_INLINE_DATA=0 NVMF_TARGET_MAX_INLINE_DATA=0)"
  export TEST_SRCDIR="$bin.runfiles"
  TEST_TMPDIR=$(mktemp -d)
  NVMF_HOST_MAX_INLINE_DATA=0 NVMF_TARGET_MAX_INLINE_DATA=0 timeout 900 "$bin" \
    --gtest_output="xml:$NVMF_RESULTS_DIR/$name.xml" || {
    rc=$?
    echo "=== $name exited $rc"
    status=1
    if [ ! -s "$NVMF_RESULTS_DIR/$name.xml" ]; then
      write_case "$NVMF_RESULTS_DIR/$name.xml" "$name" "binary_exit_$rc" "$rc"
    fi
  }
done <"$list"
# Interop with the Linux kernel host and target (ci/interop/run.sh writes interop.xml).
if [ -x "$here/interop/run.sh" ]; then
  echo "=== interop"
  rc=0
  timeout 900 "$here/interop/run.sh" || rc=$?
  if [ "$rc" -ne 0 ]; then
    status=1
    [ -s "$NVMF_RESULTS_DIR/interop.xml" ] || write_case "$NVMF_RESULTS_DIR/interop.xml" Interop "run_exit_$rc" "$rc"
  fi
fi
exit $status
