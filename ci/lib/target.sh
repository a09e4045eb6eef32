#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# (Sourced, not run.) Starting nvmf-target from the guest scripts (ci/interop/run.sh,
# ci/restart-figures.sh, ci/bench/scale.sh, ci/bench/guest.sh, ci/bench/backends-guest.sh,
# ci/conform/run.sh, ci/loopback-guest.sh): nvmf-target prints "listening on ADDR:PORT" once its
# ports listen (target/main.cc), which is when a host may connect.

# wait_listening LOG PID [SECONDS]: 0 once LOG has the "listening on" line; 1 when process PID
# exited without it or SECONDS (default 30) passed.
wait_listening() {
  local log=$1 pid=$2 tries=$((${3:-30} * 10))
  while [ "$tries" -gt 0 ]; do
    grep -q 'listening on' "$log" 2>/dev/null && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      grep -q 'listening on' "$log" 2>/dev/null
      return
    fi
    sleep 0.1
    tries=$((tries - 1))
  done
  return 1
}

# start_listening LOG CMD...: runs CMD (nvmf-target and its arguments) in the background with its
# output to LOG (emptied first: a stale "listening on" must never be read), sets target_pid, and
# waits as wait_listening does (START_SECONDS, default 30).
start_listening() {
  local log=$1
  shift
  : >"$log"
  "$@" >"$log" 2>&1 &
  target_pid=$!
  wait_listening "$log" "$target_pid" "${START_SECONDS:-30}"
}
