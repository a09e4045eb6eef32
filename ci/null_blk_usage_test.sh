#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The guest scripts make every null_blk device they use by name through configfs
# (ci/lib/null_blk.sh) and never count on the module's own first device: once an earlier test in
# the same guest has loaded null_blk (file_backend_test loads it with nr_devices=0), a later
# `modprobe null_blk nr_devices=1 ...` changes nothing, /dev/nullb0 does not exist, and every cell
# on it fails (interop checks and the nvmet-rdma conform run alike). This test fails
# on any guest script that names /dev/nullb0 or loads null_blk with devices of its own.
set -euo pipefail
root=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-nvmf_rdma}
[ -d "$root/ci" ] || root=$(cd "$(dirname "$0")/.." && pwd)
fail=0
n=0
while IFS= read -r f; do
  n=$((n + 1))
  # A comment may name the device; code may not.
  if grep -nE '^[^#]*(/dev/nullb[0-9]|modprobe[^#]*null_blk[^#]*nr_devices=[1-9])' "$f"; then
    echo "FAIL: $f counts on the null_blk module's own devices (use nullb_create from ci/lib/null_blk.sh)"
    fail=1
  fi
done < <(find -L "$root/ci" "$root/scripts" -name '*.sh' -type f ! -name null_blk_usage_test.sh | sort)
# The scripts this test exists for must be among those read: a wrong data list passes nothing.
for want in ci/interop/run.sh ci/interop/file-backend.sh ci/conform/run.sh ci/bench/guest.sh \
  ci/bench/backends-guest.sh ci/lib/null_blk.sh; do
  [ -f "$root/$want" ] || { echo "FAIL: $want is not in the test's data"; fail=1; }
done
# nullb_create loads the module without devices of its own.
grep -q 'modprobe null_blk nr_devices=0' "$root/ci/lib/null_blk.sh" ||
  { echo "FAIL: ci/lib/null_blk.sh does not load null_blk with nr_devices=0"; fail=1; }
echo "read $n scripts"
[ "$fail" -eq 0 ] && echo "ok: no guest script counts on /dev/nullb0"
exit "$fail"
