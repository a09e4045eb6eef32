#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests ci/run-rxe-tests.sh's follow(): it must return soon after the followed binary exits (the
# binary is the script's own background child, so it stays an unreaped zombie until bash runs
# its next command: a 30 s blocking read kept each binary's follow loop 30 s past its exit), and
# a GoogleTest line written in two pieces with a pause between them is still reported whole.
set -euo pipefail
script=${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-nvmf_rdma}/ci/run-rxe-tests.sh
[ -f "$script" ] || script=$(dirname "$0")/run-rxe-tests.sh
# The script's functions only (its body runs the suite).
eval "$(sed -n '/^clock() {/,/^}/p;/^follow() {/,/^}/p' "$script")"
declare -F follow >/dev/null || {
  echo "FAIL: no follow() in $script"
  exit 1
}
export t_start=$SECONDS # clock() reads it
dir=$(mktemp -d -p "${TEST_TMPDIR:-/tmp}")
log=$dir/bin.log
: >"$log"
(
  printf '[ RUN      ] Suite.First\n'
  sleep 1.5
  printf '[       OK ] Suite.Fir'
  sleep 2.5
  printf 'st (12 ms)\n[ RUN      ] Suite.Second\n[  FAILED  ] Suite.Second (2345 ms)\n'
  # Exits while follow() waits in its read, as a binary does after its last line.
  sleep 1
) >"$log" &
pid=$!
start=$SECONDS
# In this shell, as run_gtest calls it (a $(...) subshell would let this shell reap the writer).
follow "$log" "$pid" bin >"$dir/out"
took=$((SECONDS - start))
out=$(cat "$dir/out")
wait "$pid"
echo "follow printed:"
echo "$out"
echo "follow returned $took s after it started (the writer ran about 5 s)"
fail=0
grep -q '^  \[0:0[0-9]\] ok      Suite.First (0.0 s)$' <<<"$out" || {
  echo "FAIL: the line written in two pieces was not reported as Suite.First ok"
  fail=1
}
grep -q '^  \[0:0[0-9]\] FAILED  Suite.Second (2.3 s)$' <<<"$out" || {
  echo "FAIL: Suite.Second FAILED not reported"
  fail=1
}
# The old loop returned 30 s after the writer's last line: 34 s here. 20 s leaves room for a
# loaded machine without letting a 30 s wait pass.
if [ "$took" -ge 20 ]; then
  echo "FAIL: follow returned $took s after it started, long after the writer exited"
  fail=1
fi
[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
