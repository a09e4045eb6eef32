#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs examples/host_hello against an nvmf-target with a RAM namespace, under ci/rxe-run.
#
# Usage: ci/rxe-run ci/host-hello.sh (ci/run-rxe-tests.sh runs it as HostHello.WriteReadBack)
#   (env: NVMF_TARGET_ADDR, NVMF_HOST_ADDR from ci/rxe-run; NVMF_BIN_DIR = bazel-bin, default
#    <repo>/bazel-bin; logs under $NVMF_RESULTS_DIR/host-hello when set)
# Exit 0 only when host_hello exits 0 with its "match" line and nvmf-target then stops cleanly
# on SIGTERM (exit 0).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$repo/ci/lib/target.sh"
: "${NVMF_TARGET_ADDR:?run this under ci/rxe-run}" "${NVMF_HOST_ADDR:?run this under ci/rxe-run}"
bin=${NVMF_BIN_DIR:-$repo/bazel-bin}
target_bin=$bin/target/nvmf-target
hello_bin=$bin/examples/host_hello/host_hello
nqn=nqn.2026-12.io.nvmf-rdma:hello
out=${NVMF_RESULTS_DIR:+$NVMF_RESULTS_DIR/host-hello}
out=${out:-$(mktemp -d /tmp/host-hello.XXXXXX)}
mkdir -p "$out"
target_pid=

for b in "$target_bin" "$hello_bin"; do
  [ -x "$b" ] || {
    echo "host-hello: $b is missing (bazel build //target:nvmf-target //examples/host_hello:host_hello)"
    exit 1
  }
done

stop_target() {
  [ -n "$target_pid" ] || return 0
  kill -TERM "$target_pid" 2>/dev/null
  local rc=0
  wait "$target_pid" || rc=$?
  target_pid=
  return "$rc"
}
trap 'stop_target >/dev/null 2>&1' EXIT

echo "host-hello: nvmf-target -a $NVMF_TARGET_ADDR -n $nqn --ram-size 64m (log: $out/target.log)"
if ! START_SECONDS=60 start_listening "$out/target.log" "$target_bin" -a "$NVMF_TARGET_ADDR" \
  -s 4420 -n "$nqn" --ram-size 64m; then
  echo "host-hello: nvmf-target did not start listening:"
  tail -n 20 "$out/target.log" | sed 's/^/  | /'
  exit 1
fi

rc=0
timeout -k 5 120 "$hello_bin" -a "$NVMF_TARGET_ADDR" -s 4420 -n "$nqn" -w "$NVMF_HOST_ADDR" \
  --hostnqn nqn.2014-08.org.nvmexpress:uuid:8d0e4c2a-6b1f-4f3e-9a5d-7c2b1e0f4a6d \
  --blocks 64 >"$out/host_hello.log" 2>&1 || rc=$?
cat "$out/host_hello.log"
if [ "$rc" -ne 0 ]; then
  echo "host-hello: host_hello exited $rc"
elif ! grep -q '^host_hello: wrote and read back .*: match$' "$out/host_hello.log"; then
  echo "host-hello: host_hello exited 0 without its match line"
  rc=1
fi
trc=0
stop_target || trc=$?
if [ "$trc" -ne 0 ]; then
  echo "host-hello: nvmf-target exited $trc on SIGTERM:"
  tail -n 20 "$out/target.log" | sed 's/^/  | /'
  [ "$rc" -ne 0 ] || rc=1
fi
[ "$rc" -eq 0 ] && echo "host-hello: PASS"
exit "$rc"
