#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs an example program of the host library against an nvmf-target with a RAM namespace,
# under ci/rxe-run: examples/host_hello (write, read back, compare), or with `async`
# examples/host_async (the whole namespace read by 4 queues on 4 threads, asynchronous API).
#
# Usage: ci/rxe-run ci/host-hello.sh [async] (ci/run-rxe-tests.sh runs them as
#   HostHello.WriteReadBack and HostAsync.ReadNamespace)
#   (env: NVMF_TARGET_ADDR, NVMF_HOST_ADDR from ci/rxe-run; NVMF_BIN_DIR = bazel-bin, default
#    <repo>/bazel-bin; logs under $NVMF_RESULTS_DIR/host-hello (host-async) when set)
# Exit 0 only when the example exits 0 with its success line ("match"; "read N bytes of N") and
# nvmf-target then stops cleanly on SIGTERM (exit 0).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=/dev/null # ci/lib/*.sh are shellchecked on their own
. "$repo/ci/lib/target.sh"
: "${NVMF_TARGET_ADDR:?run this under ci/rxe-run}" "${NVMF_HOST_ADDR:?run this under ci/rxe-run}"
bin=${NVMF_BIN_DIR:-$repo/bazel-bin}
mode=${1:-hello}
case $mode in
  hello | async) ;;
  *)
    echo "host-hello: unknown example '$mode' (hello or async)" >&2
    exit 2
    ;;
esac
target_bin=$bin/target/nvmf-target
example_bin=$bin/examples/host_$mode/host_$mode
nqn=nqn.2026-12.io.nvmf-rdma:hello
out=${NVMF_RESULTS_DIR:+$NVMF_RESULTS_DIR/host-$mode}
out=${out:-$(mktemp -d /tmp/host-hello.XXXXXX)}
mkdir -p "$out"
target_pid=

for b in "$target_bin" "$example_bin"; do
  [ -x "$b" ] || {
    echo "host-hello: $b is missing (bazel build //target:nvmf-target //examples/host_$mode:host_$mode)"
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
if [ "$mode" = hello ]; then
  timeout -k 5 120 "$example_bin" -a "$NVMF_TARGET_ADDR" -s 4420 -n "$nqn" -w "$NVMF_HOST_ADDR" \
    --hostnqn nqn.2014-08.org.nvmexpress:uuid:8d0e4c2a-6b1f-4f3e-9a5d-7c2b1e0f4a6d \
    --blocks 64 >"$out/host_$mode.log" 2>&1 || rc=$?
  success='^host_hello: wrote and read back .*: match$'
else
  timeout -k 5 120 "$example_bin" -a "$NVMF_TARGET_ADDR" -s 4420 -n "$nqn" -w "$NVMF_HOST_ADDR" \
    --queues 4 --depth 16 >"$out/host_$mode.log" 2>&1 || rc=$?
  success='^host_async: read 67108864 bytes of 67108864 with 4 queues'
fi
cat "$out/host_$mode.log"
if [ "$rc" -ne 0 ]; then
  echo "host-hello: host_$mode exited $rc"
elif ! grep -q "$success" "$out/host_$mode.log"; then
  echo "host-hello: host_$mode exited 0 without its success line"
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
