#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer targets (//fuzz, `bazel build --config=fuzz`: clang 14, ASan + UBSan) and
# runs each one over its seed corpus (fuzz/corpus/NAME) and then on new inputs for a bounded
# number of executions. Prints one line per fuzzer and writes fuzz-report.json; exits 1 when any
# fuzzer crashed (the input is kept as OUT/NAME-crash-*: see docs/testing.md, "Fuzzing and
# sanitizers").
#
# Usage: ci/fuzz.sh [--runs N] [--out DIR] [--only NAME] [--jobs N] [--xml FILE]
#   --runs N   executions per fuzzer after the seeds. Default, what .ci/run uses: each fuzzer's
#              own count below, about 2 minutes in all on a loaded 2-core machine.
#   --out DIR  where inputs found, crashes, logs and fuzz-report.json go (default: a new temp
#              dir). Nothing is written into the checkout: NAME.log, NAME.run/ (the fuzzer's
#              working directory: -jobs logs) and NAME.corpus/ are all under DIR.
#   --only F   run only fuzzer F (e.g. command_sequence_fuzzer); repeatable.
#   --jobs N   libFuzzer -jobs/-workers for each fuzzer (default 1).
#   --xml FILE also one GoogleTest-style testcase per fuzzer (scripts/test.sh counts them).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=""
out=""
jobs=1
only=()
xml=""
# Arguments are checked before anything else runs (the build).
# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=fuzz.sh usage="ci/fuzz.sh [--runs N] [--out DIR] [--only NAME] [--jobs N] [--xml FILE] (--help)"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "ci/lib/args.sh"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$(value "$@") || exit 2; shift 2 ;;
    --out) out=$(value "$@") || exit 2; shift 2 ;;
    --only) v=$(value "$@") || exit 2; only+=("$v"); shift 2 ;;
    --jobs) jobs=$(value "$@") || exit 2; shift 2 ;;
    --xml) xml=$(value "$@") || exit 2; shift 2 ;;
    -h | --help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown option '$1' (try --help)" ;;
  esac
done
[ -z "$runs" ] || [[ $runs =~ ^[1-9][0-9]*$ ]] || usage_error "--runs wants a count >= 1, not '$runs'"
[[ $jobs =~ ^[1-9][0-9]{0,2}$ ]] || usage_error "--jobs wants a count from 1 to 999, not '$jobs'"

# fuzzer, corpus directory, CI executions, extra libFuzzer flags. Executions per second measured
# under ASan + UBSan on the loaded 2-core build machine: cm_private_data 35000, sgl 12800,
# config 900, connect 750, command_sequence 80, host_response 60000, request_pipeline 4000,
# rpc 2000, auth 640.
fuzzers=(
  "cm_private_data_fuzzer cm_private_data 200000 -max_len=64"
  "sgl_fuzzer sgl 200000 -max_len=256"
  "connect_fuzzer connect 20000 -max_len=1400"
  "command_sequence_fuzzer command_sequence 3000 -max_len=4096"
  "request_pipeline_fuzzer request_pipeline 50000 -max_len=4096"
  "config_fuzzer config 20000 -max_len=16384 -dict=fuzz/config.dict"
  "host_response_fuzzer host_response 200000 -max_len=8192"
  "rpc_fuzzer rpc 40000 -max_len=8192"
  "auth_fuzzer auth 5000 -max_len=4096"
)
selected=()
for f in "${fuzzers[@]}"; do
  name=${f%% *}
  if [ ${#only[@]} -eq 0 ] || printf '%s\n' "${only[@]}" | grep -qx "$name"; then
    selected+=("$f")
  fi
done
[ ${#selected[@]} -gt 0 ] || usage_error "no fuzzer selected (--only: ${only[*]})"

[ -n "$out" ] || out=$(mktemp -d /tmp/nvmf-fuzz.XXXXXX)
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(pwd)
targets=()
for f in "${selected[@]}"; do targets+=("//fuzz:${f%% *}"); done
echo "fuzz.sh: building ${targets[*]} (--config=fuzz)"
bazel build --config=fuzz "${targets[@]}"
bin=$(bazel info --config=fuzz bazel-bin 2>/dev/null)

status=0
cases=""
report=$out/fuzz-report.json
printf '{"fuzzers": [' >"$report"
sep=""
total_runs=0
total_crashes=0
for f in "${selected[@]}"; do
  read -r name corpus ci_runs flags <<<"$f"
  n=${runs:-$ci_runs}
  work=$out/$name.corpus  # new inputs land here; the repository's seeds are only read
  mkdir -p "$work"
  log=$out/$name.log
  # The fuzzer runs in its own directory under OUT: with -jobs, libFuzzer writes one
  # fuzz-JOB.log per job into its working directory, which must not be the checkout.
  rundir=$out/$name.run
  rm -rf "$rundir"
  mkdir -p "$rundir"
  parallel=()
  [ "$jobs" -le 1 ] || parallel=(-jobs="$jobs" -workers="$jobs")
  t0=$(date +%s%N)
  rc=0
  # shellcheck disable=SC2086
  (cd "$rundir" && "$bin/fuzz/$name" -runs="$n" ${flags//-dict=/-dict=$root/} -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 "${parallel[@]}" -artifact_prefix="$out/$name-" \
    "$work" "$root/fuzz/corpus/$corpus") >"$log" 2>&1 || rc=$?
  t1=$(date +%s%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) / 1e9}')
  # libFuzzer's final stats: stat::number_of_executed_units, summed over the jobs' own logs with
  # -jobs (the main log then repeats each job's lines: counting it too would double the sum).
  stats_logs=("$log")
  [ "$jobs" -le 1 ] || stats_logs=("$rundir"/fuzz-*.log)
  done_runs=$({ cat "${stats_logs[@]}" 2>/dev/null || true; } |
    sed -n 's/^stat::number_of_executed_units: *//p' | awk '{s += $1} END {print s + 0}')
  crashes=$(find "$out" -maxdepth 1 \( -name "$name-crash-*" -o -name "$name-leak-*" \
    -o -name "$name-timeout-*" -o -name "$name-oom-*" \) | wc -l)
  [ "$rc" -eq 0 ] || [ "$crashes" -gt 0 ] || crashes=1  # died without an artifact: count it
  total_runs=$((total_runs + done_runs))
  total_crashes=$((total_crashes + crashes))
  corpus_size=$(find "$work" "fuzz/corpus/$corpus" -type f | wc -l)
  printf 'fuzz.sh: %-24s %10s executions in %6.1f s, %s crash(es), corpus %s inputs\n' \
    "$name" "$done_runs" "$secs" "$crashes" "$corpus_size"
  printf '%s{"name": "%s", "executions": %s, "seconds": %.1f, "crashes": %s, "corpus": %s, "exit": %s}' \
    "$sep" "$name" "$done_runs" "$secs" "$crashes" "$corpus_size" "$rc" >>"$report"
  sep=", "
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ] || [ "$done_runs" -eq 0 ]; then
    cases+="<testcase classname=\"Fuzz\" name=\"$name\"><failure message=\"exit $rc, $crashes crash(es), $done_runs executions\"/></testcase>"
  else
    cases+="<testcase classname=\"Fuzz\" name=\"$name\"/>"
  fi
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    status=1
    echo "fuzz.sh: $name FAILED (exit $rc); the end of $log:" >&2
    tail -n 40 "$log" | sed 's/^/  | /' >&2
  fi
done
printf '], "executions": %s, "crashes": %s}\n' "$total_runs" "$total_crashes" >>"$report"
[ -z "$xml" ] || printf '<testsuites><testsuite name="Fuzz">%s</testsuite></testsuites>\n' "$cases" >"$xml"
echo "fuzz.sh: ${total_runs} executions in all, ${total_crashes} crash(es); report $report"
exit $status
