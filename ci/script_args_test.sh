#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The scripts that take arguments refuse bad ones first: before setup (scripts/setup.sh), the
# build (bazel), the guest (ci/rxe-run) or a target starts, with the script's own message and
# exit code 2. Each script runs from a copy of the tree in which setup.sh, bazel and rxe-run
# are stubs that record being called; a good command line is run too, to prove the stubs are
# reached when the arguments pass (so the "nothing ran" checks can fail).
# The test tools are held to the same: ci/e2e/withhold_receives (a bad option value, malformed
# or missing, exits 2 before anything connects) and ci/conform/baseline.py (wrong usage, or a
# results or baseline file missing, unreadable or malformed, exits 2 with one line, no traceback),
# and ci/interop/rpc_clients.py (a missing argument or a count out of range exits 2).
set -euo pipefail
src=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-nvmf_rdma}
[ -f "$src/scripts/loopback.sh" ] || src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d -p "${TEST_TMPDIR:-/tmp}")
root=$tmp/root
mark=$tmp/ran
mkdir -p "$root/scripts" "$root/ci/bench" "$root/ci/lib" "$root/ci/e2e" "$root/ci/conform" \
  "$root/ci/interop" "$tmp/bin"
for f in scripts/loopback.sh scripts/test.sh scripts/rxe-smoke.sh ci/bench-compare.sh \
  ci/bench/scale.sh ci/bench/poll-groups.sh ci/restart-figures.sh ci/fuzz.sh ci/lib/args.sh \
  scripts/install.sh ci/conform/baseline.py ci/interop/rpc_clients.py; do
  cp "$src/$f" "$root/$f"
done
# The built withhold_receives: in the runfiles, or bazel-bin's when run from the tree.
withhold=$src/ci/e2e/withhold_receives
[ -x "$withhold" ] || withhold=$src/bazel-bin/ci/e2e/withhold_receives
cp "$withhold" "$root/ci/e2e/withhold_receives"
stub() { # stub PATH NAME: a script that records NAME and fails
  printf '#!/bin/sh\necho %s >>"%s"\nexit 97\n' "$2" "$mark" >"$1"
  chmod +x "$1"
}
stub "$root/scripts/setup.sh" setup
stub "$root/ci/rxe-run" rxe-run
stub "$tmp/bin/bazel" bazel
stub "$tmp/bin/nvmf-target" target
export PATH=$tmp/bin:$PATH
export NVMF_BIN_DIR=$tmp/bin # scale.sh and restart-figures.sh would start $NVMF_BIN_DIR/target/...
mkdir -p "$tmp/bin/target"
stub "$tmp/bin/target/nvmf-target" target

fail=0
checked=0
# refused SCRIPT "MESSAGE" ARGS...: exit 2, MESSAGE (exact text) on stderr, nothing started.
refused() {
  local script=$1 want=$2
  shift 2
  : >"$mark"
  local rc=0
  (cd "$tmp" && env -u NVMF_RESULTS_DIR "$root/$script" "$@") >"$tmp/out" 2>"$tmp/err" || rc=$?
  checked=$((checked + 1))
  local what="$script $*"
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: $what: exit $rc, want 2"
    fail=1
  fi
  if ! grep -qxF -- "$want" "$tmp/err"; then
    echo "FAIL: $what: stderr has no line '$want'; it has:"
    sed 's/^/  | /' "$tmp/err"
    fail=1
  fi
  if [ -s "$mark" ]; then
    echo "FAIL: $what: started $(tr '\n' ' ' <"$mark")before refusing"
    fail=1
  fi
  if grep -qE 'line [0-9]+:|unbound variable|parameter null|^Traceback' "$tmp/err"; then
    echo "FAIL: $what: a raw shell error or Python traceback instead of the script's message:"
    sed 's/^/  | /' "$tmp/err"
    fail=1
  fi
  [ "$fail" -ne 0 ] || echo "ok: $what -> exit 2, '$want'"
}
# reached SCRIPT STEP ARGS...: good arguments get past the checks to STEP (a stub).
reached() {
  local script=$1 step=$2
  shift 2
  : >"$mark"
  (cd "$tmp" && env -u NVMF_RESULTS_DIR "$root/$script" "$@") >"$tmp/out" 2>&1 || true
  checked=$((checked + 1))
  if ! grep -qx "$step" "$mark"; then
    echo "FAIL: $script $*: good arguments did not reach $step; output:"
    sed 's/^/  | /' "$tmp/out"
    fail=1
  else
    echo "ok: $script $* -> reached $step"
  fi
}
# env_reached SCRIPT ARGS...: good arguments get past the checks to the environment check.
env_reached() {
  local script=$1
  shift
  local rc=0
  (cd "$tmp" && env -u NVMF_RESULTS_DIR "$root/$script" "$@") >"$tmp/out" 2>&1 || rc=$?
  checked=$((checked + 1))
  if [ "$rc" -eq 2 ] || ! grep -q 'NVMF_RESULTS_DIR: run this under ci/rxe-run' "$tmp/out"; then
    echo "FAIL: $script $*: good arguments did not reach the environment check (exit $rc):"
    sed 's/^/  | /' "$tmp/out"
    fail=1
  else
    echo "ok: $script $* -> reached the environment check"
  fi
}

# accepted SCRIPT ARGS...: good arguments get past the checks: stderr has no refusal (no
# "NAME: ..." or "usage: ..." line), whatever the run then does (no target, no baseline).
accepted() {
  local script=$1 name=${1##*/}
  shift
  local rc=0
  (cd "$tmp" && env -u NVMF_RESULTS_DIR "$root/$script" "$@") >"$tmp/out" 2>"$tmp/err" || rc=$?
  checked=$((checked + 1))
  if grep -qE "^($name|usage): " "$tmp/err"; then
    echo "FAIL: $script $*: good arguments were refused (exit $rc):"
    sed 's/^/  | /' "$tmp/err"
    fail=1
  else
    echo "ok: $script $* -> past the checks (exit $rc)"
  fi
}

# scripts/loopback.sh: --lba-size 1000 refused before setup, build and a VM boot; --json with no
# file refused with loopback.sh's own message (not a shell error such as "line 21: 2: ...").
refused scripts/loopback.sh "loopback.sh: --lba-size must be 512 or 4096, not '1000'" --lba-size 1000
refused scripts/loopback.sh "loopback.sh: --json needs a value" --json
refused scripts/loopback.sh "loopback.sh: --json needs a value" --lba-size 512 --json
refused scripts/loopback.sh "loopback.sh: unknown option '--frobnicate'" --frobnicate
refused scripts/loopback.sh "loopback.sh: unknown option 'extra'" extra
refused scripts/loopback.sh \
  "loopback.sh: --data-size must be a byte count from 1 to 1073741824, not '0'" --data-size 0
refused scripts/loopback.sh "loopback.sh: --data: no such readable file: /nonexistent" \
  --data /nonexistent
# The older spellings still work, checked the same way.
refused scripts/loopback.sh \
  "loopback.sh: --data-size must be a byte count from 1 to 1073741824, not 'x'" --input-size x
refused scripts/loopback.sh "loopback.sh: --data: no such readable file: /nonexistent" \
  --input=/nonexistent
refused scripts/loopback.sh "loopback.sh: --data and --data-size exclude each other" \
  --data /etc/hostname --data-size 4096
reached scripts/loopback.sh setup --lba-size 4096

# ci/bench-compare.sh (--reps with no value was a raw "2: parameter null or not set").
refused ci/bench-compare.sh "bench-compare.sh: --reps needs a value" --reps
refused ci/bench-compare.sh "bench-compare.sh: --reps wants a whole number >= 1, not '0'" --reps 0
refused ci/bench-compare.sh "bench-compare.sh: --runtime wants seconds, not 'x'" --runtime x
refused ci/bench-compare.sh "bench-compare.sh: unknown option '--frobnicate' (try --help)" \
  --frobnicate
reached ci/bench-compare.sh setup --quick
# --backends' environment (a bad value was found only in the guest, minutes in).
NVMF_BENCH_URING=yes refused ci/bench-compare.sh \
  "bench-compare.sh: NVMF_BENCH_URING wants off, on or both, not 'yes'" --backends
NVMF_BENCH_PARTS="cells flsh" refused ci/bench-compare.sh \
  "bench-compare.sh: NVMF_BENCH_PARTS wants 'cells', 'flush' or both, not 'cells flsh'" --backends
NVMF_BENCH_PARTS=" " refused ci/bench-compare.sh \
  "bench-compare.sh: NVMF_BENCH_PARTS wants 'cells', 'flush' or both, not ' '" --backends
NVMF_BENCH_NULLB_POLL_QUEUES=-1 refused ci/bench-compare.sh \
  "bench-compare.sh: NVMF_BENCH_NULLB_POLL_QUEUES wants a whole number (null_blk poll_queues), not '-1'" --backends
NVMF_BENCH_URING=both NVMF_BENCH_PARTS=cells NVMF_BENCH_NULLB_POLL_QUEUES=1 reached \
  ci/bench-compare.sh setup --backends
refused ci/bench-compare.sh "bench-compare.sh: --backends, --deep-writes, --ublk and --host-baseline exclude each other" \
  --backends --deep-writes
refused ci/bench-compare.sh "bench-compare.sh: --backends, --deep-writes, --ublk and --host-baseline exclude each other" \
  --deep-writes --ublk
refused ci/bench-compare.sh "bench-compare.sh: --backends, --deep-writes, --ublk and --host-baseline exclude each other" \
  --ublk --host-baseline /bin/true
refused ci/bench-compare.sh "bench-compare.sh: --host-baseline: /nonexistent/nvmf-host is not an executable file" \
  --host-baseline /nonexistent/nvmf-host
reached ci/bench-compare.sh setup --ublk
reached ci/bench-compare.sh setup --host-baseline /bin/true
BENCH_RPS=maybe refused ci/bench-compare.sh "bench-compare.sh: BENCH_RPS wants on or off, not 'maybe'" \
  --deep-writes
BENCH_RPS=off reached ci/bench-compare.sh setup --deep-writes

# ci/bench/scale.sh (runs in the guest: its points were not checked at all).
refused ci/bench/scale.sh \
  "scale.sh: a point is NxQ (controllers x I/O queues, each 1-9999), not '8x'" 1x1 8x
refused ci/bench/scale.sh \
  "scale.sh: a point is NxQ (controllers x I/O queues, each 1-9999), not '--frobnicate'" \
  --frobnicate
env_reached ci/bench/scale.sh 1x1 16x4

# ci/bench/poll-groups.sh (the poll-group figures).
refused ci/bench/poll-groups.sh "poll-groups.sh: --reps needs a value" --reps
refused ci/bench/poll-groups.sh "poll-groups.sh: --reps wants a count from 1 to 99, not '0'" --reps 0
refused ci/bench/poll-groups.sh \
  "poll-groups.sh: --runtime wants whole seconds from 4 to 999, not '1.5'" --runtime 1.5
refused ci/bench/poll-groups.sh \
  "poll-groups.sh: --runtime wants whole seconds from 4 to 999, not '3'" --runtime 3
refused ci/bench/poll-groups.sh "poll-groups.sh: unknown option '--frobnicate' (try --help)" \
  --frobnicate
refused ci/bench/poll-groups.sh "poll-groups.sh: --host-threads needs a value" --host-threads
refused ci/bench/poll-groups.sh \
  "poll-groups.sh: --host-threads wants a count from 0 to 4, not '5'" --host-threads 5
refused ci/bench/poll-groups.sh \
  "poll-groups.sh: --host-threads wants a count from 0 to 4, not 'two'" --host-threads two
reached ci/bench/poll-groups.sh setup --reps 1
refused ci/bench/poll-groups.sh "poll-groups.sh: --ack-timeout wants 0 to 31, not '32'" \
  --ack-timeout 32
refused ci/bench/poll-groups.sh "poll-groups.sh: --ack-timeout wants 0 to 31, not '-1'" \
  --ack-timeout -1
reached ci/bench/poll-groups.sh setup --reps 1 --host-threads 0
reached ci/bench/poll-groups.sh setup --reps 1 --ack-timeout 14

# ci/restart-figures.sh (takes no argument: they were ignored).
refused ci/restart-figures.sh \
  "restart-figures.sh: unknown argument '7' (it takes none; samples: NVMF_RESTART_SAMPLES)" 7
NVMF_RESTART_SAMPLES=abc refused ci/restart-figures.sh \
  "restart-figures.sh: NVMF_RESTART_SAMPLES must be a count from 1 to 999, not 'abc'"
env_reached ci/restart-figures.sh

# scripts/test.sh and ci/fuzz.sh.
refused scripts/test.sh "test.sh: unknown option '--frobnicate'" --frobnicate
refused scripts/test.sh "test.sh: --unit-only and --rxe-only exclude each other (together they run nothing)" \
  --unit-only --rxe-only
refused ci/fuzz.sh "fuzz.sh: --only needs a value" --only
refused ci/fuzz.sh "fuzz.sh: --jobs wants a count from 1 to 999, not '0'" --jobs 0
refused ci/fuzz.sh "fuzz.sh: no fuzzer selected (--only: nope)" --only nope
reached ci/fuzz.sh bazel --only sgl_fuzzer --runs 1

# scripts/rxe-smoke.sh takes no argument (one was ignored and a guest booted).
refused scripts/rxe-smoke.sh "rxe-smoke.sh: unknown argument '--frobnicate' (it takes none; try --help)" \
  --frobnicate
reached scripts/rxe-smoke.sh rxe-run

# scripts/install.sh [PREFIX]: refused before the build; a good PREFIX reaches bazel.
refused scripts/install.sh "install.sh: unknown option '--frobnicate' (try --help)" --frobnicate
refused scripts/install.sh "install.sh: unexpected argument 'b' (it takes one PREFIX)" a b
refused scripts/install.sh "install.sh: PREFIX is empty" ""
: >"$tmp/a-file"
refused scripts/install.sh "install.sh: PREFIX $tmp/a-file is not a directory" "$tmp/a-file"
reached scripts/install.sh bazel "$tmp/prefix"

# ci/e2e/withhold_receives: every count has a range (a controller per host NQN up to the
# target's default limit, nvmf-host's queue limits, an hour's wait), in plain decimal; the
# address, port and NQNs are checked before anything connects.
w=ci/e2e/withhold_receives
nqns=(-n nqn.2014-08.org.nvmexpress:test -q nqn.2014-08.org.nvmexpress:host)
refused $w "withhold_receives: --traddr is required" "${nqns[@]}"
refused $w "withhold_receives: --hostnqn is required" -a 127.0.0.1 -n nqn.2014-08.org.nvmexpress:test
refused $w "withhold_receives: --controllers: wants a whole number 1-32, not '0'" \
  -a 127.0.0.1 "${nqns[@]}" --controllers 0
refused $w "withhold_receives: --controllers: wants a whole number 1-32, not '33'" \
  -a 127.0.0.1 "${nqns[@]}" --controllers 33
refused $w "withhold_receives: --controllers: wants a whole number 1-32, not '-1'" \
  -a 127.0.0.1 "${nqns[@]}" --controllers -1
refused $w "withhold_receives: --controllers: wants a whole number 1-32, not '0x10'" \
  -a 127.0.0.1 "${nqns[@]}" --controllers 0x10
refused $w "withhold_receives: --controllers: wants a whole number 1-32, not '4294967297'" \
  -a 127.0.0.1 "${nqns[@]}" --controllers 4294967297
refused $w "withhold_receives: --controllers: 1 required UINT:1-32 missing" \
  -a 127.0.0.1 "${nqns[@]}" --controllers
refused $w "withhold_receives: --queues: wants a whole number 1-64, not '0'" \
  -a 127.0.0.1 "${nqns[@]}" --queues 0
refused $w "withhold_receives: --queues: wants a whole number 1-64, not '65'" \
  -a 127.0.0.1 "${nqns[@]}" --queues 65
refused $w "withhold_receives: --queue-size: wants a whole number 2-1024, not '1'" \
  -a 127.0.0.1 "${nqns[@]}" --queue-size 1
refused $w "withhold_receives: --queue-size: wants a whole number 2-1024, not '1025'" \
  -a 127.0.0.1 "${nqns[@]}" --queue-size 1025
refused $w "withhold_receives: --wait-s: wants a whole number 1-3600, not '0'" \
  -a 127.0.0.1 "${nqns[@]}" --wait-s 0
refused $w "withhold_receives: --wait-s: wants a whole number 1-3600, not '3601'" \
  -a 127.0.0.1 "${nqns[@]}" --wait-s 3601
refused $w "withhold_receives: --wait-s: wants a whole number 1-3600, not '1.5'" \
  -a 127.0.0.1 "${nqns[@]}" --wait-s 1.5
refused $w 'withhold_receives: --trsvcid: port "abc": expected a decimal number 0..65535' \
  -a 127.0.0.1 "${nqns[@]}" -s abc
refused $w 'withhold_receives: --trsvcid: port "65536": expected a decimal number 0..65535' \
  -a 127.0.0.1 "${nqns[@]}" -s 65536
refused $w "withhold_receives: --trsvcid: port 0 cannot be connected to" \
  -a 127.0.0.1 "${nqns[@]}" -s 0
refused $w 'withhold_receives: --traddr: address "": empty' -a "" "${nqns[@]}"
refused $w \
  'withhold_receives: --host-traddr: address "host.example": not a numeric IPv4 (a.b.c.d) or IPv6 address' \
  -a 127.0.0.1 -w host.example "${nqns[@]}"
refused $w "withhold_receives: --nqn is empty" -a 127.0.0.1 -n "" -q nqn.2014-08.org.nvmexpress:host
refused $w "withhold_receives: --hostnqn must be at most 223 bytes, got 224" \
  -a 127.0.0.1 -n nqn.2014-08.org.nvmexpress:test -q "$(printf 'q%.0s' {1..224})"
refused $w "withhold_receives: The following argument was not expected: --frobnicate" \
  -a 127.0.0.1 "${nqns[@]}" --frobnicate
# The limits themselves pass (port 9: nothing there to connect to).
accepted $w -a 127.0.0.1 -s 9 "${nqns[@]}" --controllers 1 --queues 1 --queue-size 2 --wait-s 1
accepted $w -a 127.0.0.1 -s 9 "${nqns[@]}" --controllers 32 --queues 64 --queue-size 1024 \
  --wait-s 3600

# ci/conform/baseline.py RESULTS [--write]: results made here (the copy has no baseline file).
b=ci/conform/baseline.py
refused $b "usage: ci/conform/baseline.py RESULTS [--write]"
refused $b "usage: ci/conform/baseline.py RESULTS [--write]" --write
refused $b "usage: ci/conform/baseline.py RESULTS [--write]" "$tmp" --frobnicate
refused $b "usage: ci/conform/baseline.py RESULTS [--write]" "$tmp" --write extra
refused $b "baseline.py: RESULTS $tmp/none is not a directory" "$tmp/none"
mkdir -p "$tmp/r-empty/conform" "$tmp/r-dir/conform/linux-kernel.txt" "$tmp/r-json/conform" \
  "$tmp/r-cases/conform" "$tmp/r-good/conform"
refused $b \
  "baseline.py: cannot read $tmp/r-empty/conform/linux-kernel.txt: No such file or directory" \
  "$tmp/r-empty"
refused $b "baseline.py: cannot read $tmp/r-dir/conform/linux-kernel.txt: Is a directory" \
  "$tmp/r-dir"
for r in r-json r-cases r-good; do echo 6.1.0-57-amd64 >"$tmp/$r/conform/linux-kernel.txt"; done
printf '{"cases": [' >"$tmp/r-json/conform/linux-4096.json"
refused $b \
  "baseline.py: $tmp/r-json/conform/linux-4096.json is not JSON: Expecting value: line 1 column 12 (char 11)" \
  "$tmp/r-json"
echo '{"summary": {}}' >"$tmp/r-cases/conform/linux-4096.json"
refused $b \
  "baseline.py: $tmp/r-cases/conform/linux-4096.json has no \"cases\" list of {\"id\", \"verdict\"} objects" \
  "$tmp/r-cases"
echo '{"cases": [{"id": "a", "verdict": "pass"}]}' >"$tmp/r-good/conform/linux-4096.json"
printf '{' >"$root/ci/conform/linux-baseline.json"
refused $b \
  "baseline.py: $root/ci/conform/linux-baseline.json is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)" \
  "$tmp/r-good"
echo '{"6.1": ["4096"]}' >"$root/ci/conform/linux-baseline.json"
refused $b \
  "baseline.py: $root/ci/conform/linux-baseline.json is not a {kernel: {size: {case: verdict}}} object" \
  "$tmp/r-good"
rm "$root/ci/conform/linux-baseline.json"
accepted $b "$tmp/r-good"

# ci/interop/rpc_clients.py SOCKET CLIENTS SECONDS NQN [INTERVAL_MS]: counts checked before any
# client starts; a socket nobody listens on is past the checks (exit 1, nothing on stderr).
r=ci/interop/rpc_clients.py
refused $r "rpc_clients.py: give SOCKET CLIENTS SECONDS NQN [INTERVAL_MS]"
refused $r "rpc_clients.py: give SOCKET CLIENTS SECONDS NQN [INTERVAL_MS]" "$tmp/s" 1 1
refused $r "rpc_clients.py: CLIENTS 'x' is not a number" "$tmp/s" x 10 nqn.a
refused $r "rpc_clients.py: CLIENTS 0 is not in 1..1000" "$tmp/s" 0 10 nqn.a
refused $r "rpc_clients.py: SECONDS 0 is not in 1..3600" "$tmp/s" 1 0 nqn.a
refused $r "rpc_clients.py: INTERVAL_MS 0 is not in 1..60000" "$tmp/s" 1 1 nqn.a 0
accepted $r "$tmp/none.sock" 2 1 nqn.a

echo "$checked command lines checked"
[ "$checked" -eq 105 ] || {
  echo "FAIL: $checked command lines checked, want 105"
  fail=1
}
exit "$fail"
