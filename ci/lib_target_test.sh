#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests ci/lib/target.sh, the one "start nvmf-target and wait for `listening on`" of the guest
# scripts: it returns 0 once the line is there (and sets target_pid), 1 soon after the process
# exits without it, 1 after the time limit; a stale line from an earlier run is never read.
set -euo pipefail
lib=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-nvmf_rdma}/ci/lib/target.sh
[ -f "$lib" ] || lib=$(dirname "$0")/lib/target.sh
# shellcheck source=/dev/null
. "$lib"
tmp=$(mktemp -d -p "${TEST_TMPDIR:-/tmp}")
fail=0
expect() { # expect WHAT WANT-RC GOT-RC SECONDS MAX-SECONDS
  if [ "$2" -ne "$3" ] || [ "$4" -gt "$5" ]; then
    echo "FAIL: $1: exit $3 after $4 s (want exit $2 within $5 s)"
    fail=1
  else
    echo "ok: $1: exit $3 after $4 s"
  fi
}

# Listens after 0.5 s, then keeps running.
target_pid=
rc=0
t0=$SECONDS
START_SECONDS=10 start_listening "$tmp/a.log" bash -c 'sleep 0.5; echo "listening on 10.0.0.1:4420"; sleep 30' || rc=$?
expect "listens after 0.5 s" 0 "$rc" $((SECONDS - t0)) 5
if [ -z "$target_pid" ] || ! kill -0 "$target_pid" 2>/dev/null; then
  echo "FAIL: target_pid '$target_pid' is not the running process"
  fail=1
fi
kill "$target_pid" 2>/dev/null || true
wait "$target_pid" 2>/dev/null || true

# Exits at once without listening: refused long before the 10 s limit.
echo "listening on 10.0.0.1:4420 (an earlier run)" >"$tmp/b.log"
rc=0
t0=$SECONDS
START_SECONDS=10 start_listening "$tmp/b.log" bash -c 'echo "nvmf-target: bad option"; exit 2' || rc=$?
expect "exits without listening (stale line in the old log)" 1 "$rc" $((SECONDS - t0)) 3
grep -q 'bad option' "$tmp/b.log" || {
  echo "FAIL: the log does not hold the process's output"
  fail=1
}

# Runs on without listening: refused at the limit.
rc=0
t0=$SECONDS
bash -c 'sleep 30' >"$tmp/c.log" 2>&1 &
pid=$!
wait_listening "$tmp/c.log" "$pid" 1 || rc=$?
expect "never listens, limit 1 s" 1 "$rc" $((SECONDS - t0)) 4
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
exit "$fail"
