#!/usr/bin/env bash
# Runs each soft-RoCE test binary listed in $1 (one path a line) with XML output into
# $NVMF_RESULTS_DIR; meant to run under ci/rxe-run, where a device exists.
set -uo pipefail
list=$1
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
export NVMF_RXE_REQUIRED=1
status=0
while IFS= read -r bin; do
  [ -n "$bin" ] || continue
  name=$(basename "$bin")
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
      printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="binary_exit_%s"><failure message="exit %s"/></testcase></testsuite></testsuites>\n' \
        "$name" "$name" "$rc" "$rc" >"$NVMF_RESULTS_DIR/$name.xml"
    fi
  }
done <"$list"
exit $status
