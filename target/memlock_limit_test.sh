#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nvmf-target and nvmf-host under `prlimit --memlock=1048576` refuse to start with one line naming the limit, the bytes needed and the fix, exit status 1, before opening any RDMA device.
set -euo pipefail
src=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-nvmf_rdma}
target=$src/target/nvmf-target
host=$src/host/nvmf-host
[ -x "$target" ] || {
  echo "FAIL: no $target"
  exit 1
}
command -v prlimit >/dev/null || {
  echo "FAIL: prlimit (util-linux) is missing"
  exit 1
}
tmp=$(mktemp -d -p "${TEST_TMPDIR:-/tmp}")
# CAP_IPC_LOCK lifts the limit (ibv_reg_mr ignores it then, and so does the check): as root,
# drop it from the bounding set so the exec'd binary runs without it.
drop=()
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null && setpriv --bounding-set=-ipc_lock true 2>/dev/null; then
    drop=(setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock)
  else
    echo "SKIP: root, and CAP_IPC_LOCK cannot be dropped (setpriv)"
    exit 0
  fi
fi

fail=0
# limited NAME WANT_PREFIX CMD...: exit 1, exactly one stderr line, starting with WANT_PREFIX.
limited() {
  local name=$1 want=$2
  shift 2
  local rc=0
  prlimit --memlock=1048576 "${drop[@]}" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "FAIL: $name: exit $rc, want 1"
    fail=1
  fi
  if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF -- "$want" "$tmp/err" ||
    ! grep -qF "raise it with 'ulimit -l unlimited' (shell) or 'LimitMEMLOCK=infinity' (systemd unit)" "$tmp/err"; then
    echo "FAIL: $name: stderr is not the one refusal line; it has:"
    sed 's/^/  | /' "$tmp/err"
    fail=1
  fi
  if [ -s "$tmp/out" ]; then
    echo "FAIL: $name: printed on stdout:"
    sed 's/^/  | /' "$tmp/out"
    fail=1
  fi
  echo "$name: $(cat "$tmp/err")"
}

# Defaults: one poll group's share of 256 x 128 KiB shared buffers, far above 1 MiB.
limited "nvmf-target defaults" \
  "nvmf-target: RLIMIT_MEMLOCK is 1048576 bytes (1 MiB); this configuration registers at least " \
  "$target" -a 127.0.0.1 -s 0 --ram-size 1m --poll-groups 1
limited "nvmf-target --num-shared-buffers 0" \
  "nvmf-target: RLIMIT_MEMLOCK is 1048576 bytes (1 MiB); this configuration registers at least 4332032 bytes (4.1 MiB) for RDMA" \
  "$target" -a 127.0.0.1 -s 0 --ram-size 1m --num-shared-buffers 0 --srq off
# The host: bench buffers of 8 jobs x QD32 x 128 KiB.
if [ -x "$host" ]; then
  limited "nvmf-host bench" \
    "nvmf-host: RLIMIT_MEMLOCK is 1048576 bytes (1 MiB); this configuration registers at least " \
    "$host" -a 127.0.0.1 -n nqn.2024-01.io.nvmf-rdma:target bench --bs 128k --iodepth 32 --numjobs 8 --runtime 1
fi
# A limit that fits lets the target go on to the device (which fails or not, never with that line).
rc=0
prlimit --memlock=unlimited "${drop[@]}" timeout 5 "$target" -a 127.0.0.1 -s 0 --ram-size 1m \
  --poll-groups 1 >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if grep -q RLIMIT_MEMLOCK "$tmp/err"; then
  echo "FAIL: unlimited: refused anyway:"
  sed 's/^/  | /' "$tmp/err"
  fail=1
fi
echo "unlimited: exit $rc, no refusal"
exit "$fail"
