#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The two seed-feature latency ratios, measured in one soft-RoCE run with our host and target,
# interleaved: 8 KiB QD1 write with the target's in-capsule size 16384 vs 4096, and
# 4 KiB QD1 random read with the command capsule posted inline vs by reference.
#
# Usage: ci/bench/figures.sh [--reps N] [--runtime SECONDS] [--out DIR]
#   default 5 repetitions of 2 s cells (0.5 s ramp); every repetition runs the four cells back to
#   back, order alternating; ratios are taken inside each repetition, then median and min-max.
# Writes DIR (default bench-results/figures): figures.json and one JSON per cell. Not a test:
# it prints figures.
set -euo pipefail
reps=5
runtime=2
out=bench-results/figures
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=${2:?}; shift 2 ;;
    --runtime) runtime=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h | --help) sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "figures.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [ -z "${NVMF_RXE_MODE:-}" ]; then
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  cd "$(dirname "$0")/../.."
  scripts/setup.sh >/dev/null
  bazel build -c opt //host:nvmf-host //target:nvmf-target
  bin=$(bazel info -c opt bazel-bin 2>/dev/null)
  ci/rxe-run --results "$out" --timeout 1200 env NVMF_BENCH_BIN="$bin" \
    "$PWD/ci/bench/figures.sh" --reps "$reps" --runtime "$runtime" --out "$out"
  exec python3 - "$out" "$reps" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def mean_us(cell, rep, rw):
    with open(f"{out}/r{rep}-{cell}.json") as f:
        return json.load(f)["results"][0]["all"][rw]["clat_ns"]["mean"] / 1000.0
fig = {}
for name, num, den, rw in (("write_8k_in_capsule_16384_vs_4096", "w16384", "w4096", "write"),
                           ("read_4k_inline_vs_by_reference", "rinline", "rbyref", "read")):
    r = [mean_us(num, i, rw) / mean_us(den, i, rw) for i in range(1, reps + 1)]
    a = [mean_us(num, i, rw) for i in range(1, reps + 1)]
    b = [mean_us(den, i, rw) for i in range(1, reps + 1)]
    fig[name] = {"ratio_median": statistics.median(r), "ratio_min": min(r), "ratio_max": max(r),
                 "ratios": r, "mean_us_median": [statistics.median(a), statistics.median(b)]}
    print(f"{name}: ratio {statistics.median(r):.2f} (min {min(r):.2f}, max {max(r):.2f}); "
          f"mean latency {statistics.median(a):.0f} us vs {statistics.median(b):.0f} us "
          f"(medians of {reps} interleaved repetitions)")
with open(f"{out}/figures.json", "w") as f:
    json.dump(fig, f, indent=2)
PY
fi

# In the soft-RoCE environment: two targets (in-capsule 4096 and 16384), then the cells.
bin=${NVMF_BENCH_BIN:?}
t=$NVMF_TARGET_ADDR
nqn=nqn.2024-01.io.nvmf-rdma:figures
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' EXIT
for spec in 4420:4096 4421:16384; do
  "$bin/target/nvmf-target" -a "$t" -s "${spec%%:*}" -n "$nqn" --ram-size 128m \
    --inline-data-size "${spec##*:}" >"$out/target-${spec##*:}.log" 2>&1 &
  pids+=($!)
done
sleep 2
cell() { # rep name port rw bs [extra]
  local rep=$1 name=$2 port=$3 rw=$4 bs=$5
  shift 5
  timeout 120 "$bin/host/nvmf-host" bench -a "$t" -s "$port" -w "$NVMF_HOST_ADDR" -n "$nqn" \
    --rw "$rw" --bs "$bs" --iodepth 1 --runtime "$runtime" --ramp_time 0.5 --size 64m \
    --poll event --json "$out/r$rep-$name.json" "$@" 2>"$out/r$rep-$name.err"
}
for rep in $(seq 1 "$reps"); do
  cells=("w4096 4420 randwrite 8k" "w16384 4421 randwrite 8k"
    "rinline 4420 randread 4k --max-inline-data 64" "rbyref 4420 randread 4k --max-inline-data 0")
  if [ $((rep % 2)) -eq 0 ]; then cells=("${cells[3]}" "${cells[2]}" "${cells[1]}" "${cells[0]}"); fi
  for c in "${cells[@]}"; do
    # shellcheck disable=SC2086 # word splitting of the cell spec is intended
    cell "$rep" $c
  done
  echo "figures: repetition $rep done"
done
