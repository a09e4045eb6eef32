#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Compares our host and target with the Linux kernel's NVMe-oF RDMA stack and the raw verbs floor,
# in one soft-RoCE run, interleaved: every repetition runs every cell back to back (order
# alternating), ratios are taken inside each repetition. Not a timed test: it prints figures.
#
# Usage: ci/bench-compare.sh [--quick] [--reps N] [--runtime SECONDS] [--ramp SECONDS]
#                            [--out DIR] [--backends | --deep-writes | --ublk |
#                            --host-baseline NVMF_HOST]
#   default: 5 repetitions, 2 s per cell after a 0.5 s ramp (about 20 minutes under emulation);
#   --quick: 2 repetitions of 1 s cells after 0.2 s (a CI smoke that proves the harness works).
#   --backends: instead of the RAM comparison, file and block-device namespaces: the
#   Linux host against nvmf-target and nvmet-rdma on a null_blk and on a file on ext4, 4 KiB
#   random read/write at QD1 and QD32 (and our RAM namespace as a baseline), and one host's QD1
#   reads while another host's Flush runs (exit 1 when they take more than 2x their idle time)
#   (ci/bench/backends-guest.sh; figures: ci/bench/backends-report.py, backends-report.json/.md;
#   default 3 repetitions, about 12 minutes in the guest).
#   --deep-writes: instead, the Linux host's 64 KiB random writes at QD32 x 2 jobs and QD127
#   (20 s, fio verifying as it goes) against nvmf-target and nvmet-rdma side by side: IOPS, p99,
#   kernel I/O timeouts and rxe's retry counters per cell (ci/bench/deep-writes-guest.sh;
#   figures: ci/bench/deep-writes-report.py, deep-writes-report.json/.md; default 3 repetitions,
#   about 6 minutes in the guest; BENCH_RPS=off runs it with Receive Packet Steering off).
#   --ublk: instead, block devices of both hosts against Linux nvmet-rdma (null_blk), in a
#   6.12 guest (ublk_drv): 4 KiB randread QD1 and QD32 and randwrite QD32 through
#   nvmf-host ublk's /dev/ublkbN and the Linux host's /dev/nvmeXnY (ci/bench/ublk-guest.sh;
#   figures: ci/bench/ublk-report.py, ublk-report.json/.md; default 3 repetitions of 10 s
#   cells, about 5 minutes in the guest).
#   --host-baseline NVMF_HOST: instead, `nvmf-host bench` by this tree's nvmf-host and by
#   NVMF_HOST (a build of an earlier revision: what a change of the host library costs) against
#   nvmf-target on RAM, interleaved: 4 KiB randread QD1 and QD32 and randwrite QD32, --poll busy
#   and event (ci/bench/host-api-guest.sh; figures: ci/bench/host-api-report.py,
#   host-api-report.json/.md; default 3 repetitions of 5 s cells, about 6 minutes in the guest).
# Environment: BENCH_POLL (our host's --poll, default busy as in nvmf-host bench; the other mode
#   gets a cell of its own), BENCH_INLINE_OFF (our host's --max-inline-data for the "inline send
#   off" cell, default 0). --backends: NVMF_BENCH_URING off (default), on (every nvmf-target with
#   --uring-defer-taskrun on --uring-fixedbufs on) or both (a second set of our targets with them
#   on, interleaved with the defaults and nvmet in every repetition); NVMF_BENCH_VARIANT (nvmf-target
#   options such as "--poll busy": that second set with these options; ci/bench/backends-guest.sh).
# Writes DIR (default bench-results/) : bench-report.json, bench-report.md, bench.png, plot.dat
# and raw/ (every cell's own output). Cells: ci/bench/guest.sh; figures: ci/bench/report.py.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=5
runtime=2
ramp=0.5
out=bench-results
backends=0
deep=0
ublk=0
baseline=
reps_given=0
runtime_given=0
# Arguments are checked before anything else runs (setup, build, the guest).
# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=bench-compare.sh usage="ci/bench-compare.sh [--quick] [--reps N] [--runtime SECONDS] [--ramp SECONDS] [--out DIR] [--backends | --deep-writes | --ublk | --host-baseline NVMF_HOST] (--help)"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "ci/lib/args.sh"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) reps=2 runtime=1 ramp=0.2 reps_given=1; shift ;;
    --reps) reps=$(value "$@") || exit 2; reps_given=1; shift 2 ;;
    --runtime) runtime=$(value "$@") || exit 2; runtime_given=1; shift 2 ;;
    --ramp) ramp=$(value "$@") || exit 2; shift 2 ;;
    --out) out=$(value "$@") || exit 2; shift 2 ;;
    --backends) backends=1; shift ;;
    --deep-writes) deep=1; shift ;;
    --ublk) ublk=1; shift ;;
    --host-baseline) baseline=$(value "$@") || exit 2; shift 2 ;;
    -h | --help) sed -n '3,37p' "$0"; exit 0 ;;
    *) usage_error "unknown option '$1' (try --help)" ;;
  esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || usage_error "--reps wants a whole number >= 1, not '$reps'"
[[ $runtime =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "--runtime wants seconds, not '$runtime'"
[[ $ramp =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "--ramp wants seconds, not '$ramp'"
if [ -e "$out" ] && ! [ -d "$out" ]; then usage_error "--out: $out is not a directory"; fi
with_baseline=0
[ -z "$baseline" ] || with_baseline=1
[ $((backends + deep + ublk + with_baseline)) -le 1 ] ||
  usage_error "--backends, --deep-writes, --ublk and --host-baseline exclude each other"
if [ -n "$baseline" ]; then
  if ! [ -f "$baseline" ] || ! [ -x "$baseline" ]; then
    usage_error "--host-baseline: $baseline is not an executable file"
  fi
  baseline=$(cd "$(dirname "$baseline")" && pwd)/$(basename "$baseline")
fi
case ${BENCH_RPS:-on} in on | off) ;; *) usage_error "BENCH_RPS wants on or off, not '$BENCH_RPS'" ;; esac
# The --backends guest's environment, checked here: a bad value would otherwise be found only
# minutes into the guest run.
if [ "$backends" = 1 ]; then
  case ${NVMF_BENCH_URING:-off} in off | on | both) ;;
    *) usage_error "NVMF_BENCH_URING wants off, on or both, not '$NVMF_BENCH_URING'" ;;
  esac
  parts_given=${NVMF_BENCH_PARTS:-cells flush}
  read -ra parts_words <<<"$parts_given"
  [ "${#parts_words[@]}" -gt 0 ] || usage_error "NVMF_BENCH_PARTS wants 'cells', 'flush' or both, not '$parts_given'"
  for w in "${parts_words[@]}"; do
    case $w in cells | flush) ;;
      *) usage_error "NVMF_BENCH_PARTS wants 'cells', 'flush' or both, not '$parts_given'" ;;
    esac
  done
  [[ ${NVMF_BENCH_NULLB_POLL_QUEUES:-0} =~ ^[0-9]{1,3}$ ]] ||
    usage_error "NVMF_BENCH_NULLB_POLL_QUEUES wants a whole number (null_blk poll_queues), not '$NVMF_BENCH_NULLB_POLL_QUEUES'"
fi

scripts/setup.sh --bench
# An optimised build for measuring (fastbuild, the test default, is unoptimised).
bazel build -c opt //host:nvmf-host //target:nvmf-target
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The guest's accelerator is the one ci/rxe-run used (it writes $out/rxe-run.accel): filled in
# after each run (@GUEST@) by the machine= line that follows it.
machine="$(nproc)-core host ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')); @GUEST@ (${NVMF_RXE_CPUS:-2} vCPUs, $((${NVMF_RXE_MEM_MB:-2048} / 1024)) GiB), Debian kernel 6.1, soft-RoCE rxe0/rxe1 over a veth pair"
if [ "$backends" = 1 ]; then
  rm -rf "$out/raw-backends"
  [ "$reps_given" = 1 ] || reps=3
  cells=20
  [ "${NVMF_BENCH_URING:-off}" != both ] && [ -z "${NVMF_BENCH_VARIANT:-}" ] || cells=28
  budget=$(python3 -c "print(int($reps * ($cells * ($runtime + $ramp + 15) + 240) + 900))")
  echo "bench-compare.sh --backends: $reps repetitions, ${runtime}s cells after ${ramp}s ramp; guest timeout ${budget}s"
  rc=0
  ci/rxe-run --results "$out" --timeout "$budget" \
    ci/bench/backends-guest.sh "$bin" "$reps" "$runtime" "$ramp" || rc=$?
  machine=${machine/@GUEST@/$(sed 's/^kvm$/QEMU KVM guest/; s/^tcg$/QEMU TCG guest/; s/^direct$/no guest (rxe-run direct mode)/' "$out/rxe-run.accel" 2>/dev/null || echo "guest of unknown accelerator")}
  [ -s "$out/raw-backends/cells.tsv" ] || { echo "bench-compare.sh: no cells recorded (rxe-run exit $rc)" >&2; exit 1; }
  report_rc=0
  python3 ci/bench/backends-report.py "$out" --machine "$machine, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
    --command "ci/bench-compare.sh --backends --reps $reps --runtime $runtime --ramp $ramp" || report_rc=$?
  echo "bench-compare.sh: report in $out (backends-report.json, backends-report.md)"
  [ "$rc" -ne 0 ] || rc=$report_rc
  exit "$rc"
fi
if [ "$ublk" = 1 ]; then
  rm -rf "$out/raw-ublk"
  [ "$reps_given" = 1 ] || reps=3
  [ "$runtime_given" = 1 ] || runtime=10
  runtime=${runtime%.*}
  budget=$((reps * 6 * (runtime + 15) + 600))
  echo "bench-compare.sh --ublk: $reps repetitions of ${runtime}s cells; guest timeout ${budget}s"
  rc=0
  NVMF_RXE_KERNEL=6.12 ci/rxe-run --results "$out" --timeout "$budget" \
    ci/bench/ublk-guest.sh "$bin" "$reps" "$runtime" || rc=$?
  machine=${machine/@GUEST@/$(sed 's/^kvm$/QEMU KVM guest/; s/^tcg$/QEMU TCG guest/; s/^direct$/no guest (rxe-run direct mode)/' "$out/rxe-run.accel" 2>/dev/null || echo "guest of unknown accelerator")}
  machine=${machine/Debian kernel 6.1/Debian kernel 6.12}
  [ -s "$out/raw-ublk/cells.tsv" ] || { echo "bench-compare.sh: no cells recorded (rxe-run exit $rc)" >&2; exit 1; }
  report_rc=0
  python3 ci/bench/ublk-report.py "$out" --machine "$machine, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
    --command "ci/bench-compare.sh --ublk --reps $reps --runtime $runtime" || report_rc=$?
  echo "bench-compare.sh: report in $out (ublk-report.json, ublk-report.md)"
  [ "$rc" -ne 0 ] || rc=$report_rc
  exit "$rc"
fi
if [ -n "$baseline" ]; then
  rm -rf "$out/raw-host-api"
  [ "$reps_given" = 1 ] || reps=3
  [ "$runtime_given" = 1 ] || runtime=5
  budget=$(python3 -c "print(int($reps * 12 * ($runtime + $ramp + 5) + 300))")
  echo "bench-compare.sh --host-baseline: $reps repetitions of ${runtime}s cells; guest timeout ${budget}s"
  rc=0
  ci/rxe-run --results "$out" --timeout "$budget" \
    ci/bench/host-api-guest.sh "$bin" "$baseline" "$reps" "$runtime" "$ramp" || rc=$?
  machine=${machine/@GUEST@/$(sed 's/^kvm$/QEMU KVM guest/; s/^tcg$/QEMU TCG guest/; s/^direct$/no guest (rxe-run direct mode)/' "$out/rxe-run.accel" 2>/dev/null || echo "guest of unknown accelerator")}
  [ -s "$out/raw-host-api/cells.tsv" ] || { echo "bench-compare.sh: no cells recorded (rxe-run exit $rc)" >&2; exit 1; }
  report_rc=0
  python3 ci/bench/host-api-report.py "$out" --machine "$machine, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
    --command "ci/bench-compare.sh --host-baseline BASELINE/nvmf-host --reps $reps --runtime $runtime --ramp $ramp" || report_rc=$?
  echo "bench-compare.sh: report in $out (host-api-report.json, host-api-report.md)"
  [ "$rc" -ne 0 ] || rc=$report_rc
  exit "$rc"
fi
if [ "$deep" = 1 ]; then
  rm -rf "$out/raw-deep"
  [ "$reps_given" = 1 ] || reps=3
  budget=$((reps * 240 + 600))
  echo "bench-compare.sh --deep-writes: $reps repetitions; guest timeout ${budget}s"
  rc=0
  ci/rxe-run --results "$out" --timeout "$budget" --env BENCH_RPS \
    ci/bench/deep-writes-guest.sh "$bin" "$reps" || rc=$?
  machine=${machine/@GUEST@/$(sed 's/^kvm$/QEMU KVM guest/; s/^tcg$/QEMU TCG guest/; s/^direct$/no guest (rxe-run direct mode)/' "$out/rxe-run.accel" 2>/dev/null || echo "guest of unknown accelerator")}
  [ -s "$out/raw-deep/cells.tsv" ] || { echo "bench-compare.sh: no cells recorded (rxe-run exit $rc)" >&2; exit 1; }
  report_rc=0
  python3 ci/bench/deep-writes-report.py "$out" --machine "$machine, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
    --command "${BENCH_RPS:+BENCH_RPS=$BENCH_RPS }ci/bench-compare.sh --deep-writes --reps $reps" || report_rc=$?
  echo "bench-compare.sh: report in $out (deep-writes-report.json, deep-writes-report.md)"
  [ "$rc" -ne 0 ] || rc=$report_rc
  exit "$rc"
fi
rm -rf "$out/raw"
# Per repetition: 36 cells of (runtime + ramp + ~3 s of connect and process start) and 11
# perftest runs, and three reconnects of the kernel host to the kernel target.
budget=$(python3 -c "print(int($reps * (36 * ($runtime + $ramp + 6) + 200) + 400))")
echo "bench-compare.sh: $reps repetitions, ${runtime}s cells after ${ramp}s ramp; guest timeout ${budget}s"
rc=0
ci/rxe-run --results "$out" --timeout "$budget" \
  --env BENCH_POLL --env BENCH_INLINE_OFF \
  ci/bench/guest.sh "$bin" "$reps" "$runtime" "$ramp" || rc=$?
if [ ! -s "$out/raw/cells.tsv" ]; then
  echo "bench-compare.sh: the guest recorded no cells (rxe-run exit $rc)" >&2
  exit 1
fi
machine="$(nproc)-core host ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(sed 's/^kvm$/QEMU KVM guest/; s/^tcg$/QEMU TCG guest/; s/^direct$/no guest (rxe-run direct mode)/' "$out/rxe-run.accel" 2>/dev/null || echo "guest of unknown accelerator") (${NVMF_RXE_CPUS:-2} vCPUs, $((${NVMF_RXE_MEM_MB:-2048} / 1024)) GiB), Debian kernel 6.1, soft-RoCE rxe0/rxe1 over a veth pair"
# report.py exits 1 when a counter check fails (a cell's writes not on the path its group
# promises): the plot is still drawn, then this script fails.
report_rc=0
python3 ci/bench/report.py "$out" --machine "$machine" \
  --command "ci/bench-compare.sh --reps $reps --runtime $runtime --ramp $ramp" || report_rc=$?
if command -v gnuplot >/dev/null; then
  gnuplot -e "datafile='$out/plot.dat'; outfile='$out/bench.png'" ci/bench/plot.gp ||
    echo "bench-compare.sh: gnuplot failed; no plot" >&2
fi
echo "bench-compare.sh: report in $out (bench-report.json, bench-report.md, bench.png)"
if [ "$report_rc" -ne 0 ]; then
  echo "bench-compare.sh: counter checks failed (see the end of bench-report.md)" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
