#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The poll-group bench, in one soft-RoCE run with our host and target, interleaved:
# a 256 MiB RAM namespace served by a target with --poll-groups 1 and one with --poll-groups 2
# (both live for the whole run, on ports 4431 and 4432), and in every repetition, for each
# target (the order alternating between repetitions):
#   two-hosts  two nvmf-host bench processes at once (two host NQNs, so two controllers), each
#              one I/O queue, 4 KiB random read at QD32; the figure is the sum of their IOPS.
#              Both start their I/O at one wall-clock time (--start-at, 4 s after launch), and
#              their measured windows (window_start/end_unix_ns) must overlap by 90% of the
#              shorter, else the cell runs again (3 tries): a host that connected late (seen: 5 s
#              in the guest's first cell) would otherwise measure alone and double the sum;
#   qd1        one host, one I/O queue, 4 KiB random read at QD1 (mean completion latency);
#   q4x64      one host, 4 I/O queues x QD64, 4 KiB random read (IOPS);
#   q64x4      one host, 64 I/O queues x QD4, 4 KiB random read (IOPS).
# Both queue cells run the host with the same --threads (--host-threads, default 2 = the guest's
# vCPUs: jobs round robin over 2 threads, as SPDK's perf drives many qpairs per core), so 64x4
# measures the target's queues, not 64 host threads waking each other on 2 vCPUs; 0 = one host
# thread per queue (the bench's default, the figures before --threads existed).
# Ratios are taken inside each repetition (2 groups / 1 group; 64x4 / 4x64), then median and
# min-max over the repetitions. Goals: two-hosts 2 groups >= 1.6x 1 group; q64x4 >=
# 0.9x q4x64; qd1 with 2 groups within the spread of 1 group.
#
# Usage: ci/bench/poll-groups.sh [--reps N] [--runtime SECONDS] [--host-threads N]
#                                 [--ack-timeout N] [--out DIR]
#   default 3 repetitions of 4 s cells (0.5 s ramp), about 4 minutes in the guest;
#   --host-threads 0..4 (default 2): nvmf-host bench --threads of the q4x64 and q64x4 cells;
#   --ack-timeout 0..31 (default 0: rdma_cm's, 19 = 2147 ms on rxe): the local ACK timeout of
#   every QP, hosts' and targets' (both binaries' --ack-timeout). rxe reorders packets sent from
#   two CPUs and recovers a lost tail only at this timer (docs/soft-roce.md).
#   env: BENCH_POLL (the hosts' --poll, default event: on 2 vCPUs busy-polling hosts would take
#   the CPUs the target's groups are measured on), BENCH_TARGET_POLL (the targets' --poll,
#   default event), BENCH_TARGET_ARGS (more nvmf-target options for both targets, split at
#   spaces, e.g. "--busy-poll-us 0"; none by default). All three reach the guest (rxe-run --env).
# Writes DIR (default bench-results/poll-groups): poll-groups.json (the figures, and
# host_threads, ack_timeout), one JSON per cell (rREP-gGROUPS-CELL[-hN].json), the two-hosts
# cells' window overlap (rREP-gGROUPS-two-hosts.overlap), cpu.tsv (the guest's CPU over each
# cell's measured window, from the samples in rREP-gGROUPS-CELL.cpu), retries.tsv (each cell's
# rxe retry counters: hw_counters of every rxe device, summed, after minus before) and the
# targets' logs. Not a test: it prints figures.
set -euo pipefail
# Arguments first, before setup, the build and the guest.
# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=poll-groups.sh
# shellcheck disable=SC2034 # read by ci/lib/args.sh
usage="ci/bench/poll-groups.sh [--reps N] [--runtime SECONDS] [--host-threads N] [--ack-timeout N] [--out DIR]"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "$(dirname "$0")/../lib/args.sh"
reps=3
runtime=4
host_threads=2
ack_timeout=0
out=bench-results/poll-groups
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$(value "$@") || exit 2; shift 2 ;;
    --runtime) runtime=$(value "$@") || exit 2; shift 2 ;;
    --host-threads) host_threads=$(value "$@") || exit 2; shift 2 ;;
    --ack-timeout) ack_timeout=$(value "$@") || exit 2; shift 2 ;;
    --out) out=$(value "$@") || exit 2; shift 2 ;;
    -h | --help) sed -n '3,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown option '$1' (try --help)" ;;
  esac
done
[[ $reps =~ ^[1-9][0-9]?$ ]] || usage_error "--reps wants a count from 1 to 99, not '$reps'"
# At least 4 s: the CPU samples (every 0.2 s) then span most of each measured window.
if ! [[ $runtime =~ ^[1-9][0-9]{0,2}$ ]] || [ "$runtime" -lt 4 ]; then
  usage_error "--runtime wants whole seconds from 4 to 999, not '$runtime'"
fi
# At most 4: the q4x64 cell has 4 jobs (nvmf-host refuses --threads above --numjobs).
[[ $host_threads =~ ^[0-4]$ ]] ||
  usage_error "--host-threads wants a count from 0 to 4, not '$host_threads'"
[[ $ack_timeout =~ ^([0-9]|[12][0-9]|3[01])$ ]] ||
  usage_error "--ack-timeout wants 0 to 31, not '$ack_timeout'"

if [ -z "${NVMF_RXE_MODE:-}" ]; then
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  cd "$(dirname "$0")/../.."
  scripts/setup.sh >/dev/null
  bazel build -c opt //host:nvmf-host //target:nvmf-target
  bin=$(bazel info -c opt bazel-bin 2>/dev/null)
  ci/rxe-run --results "$out" --timeout $((600 + reps * runtime * 40)) \
    --env BENCH_POLL --env BENCH_TARGET_POLL --env BENCH_TARGET_ARGS \
    env NVMF_BENCH_BIN="$bin" "$PWD/ci/bench/poll-groups.sh" --reps "$reps" \
    --runtime "$runtime" --host-threads "$host_threads" --ack-timeout "$ack_timeout" --out "$out"
  exec python3 - "$out" "$reps" "$host_threads" "$ack_timeout" <<'PY'
import json, os, statistics, sys
out, reps, host_threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ack_timeout = int(sys.argv[4])
def load(name):
    with open(f"{out}/{name}.json") as f:
        return json.load(f)["results"][0]["all"]["read"]
def iops(rep, g, cell, hosts=1):
    names = [f"r{rep}-g{g}-{cell}" + (f"-h{h}" if hosts > 1 else "") for h in range(1, hosts + 1)]
    return sum(load(n)["iops"] for n in names)
def overlap(rep, g):
    with open(f"{out}/r{rep}-g{g}-two-hosts.overlap") as f:
        return float(f.read())
def lat_us(rep, g):
    return load(f"r{rep}-g{g}-qd1")["clat_ns"]["mean"] / 1000.0
def stats(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "values": xs}
rs = range(1, reps + 1)
fig = {"repetitions": reps, "host_poll": os.environ.get("BENCH_POLL", "event"),
       "target_poll": os.environ.get("BENCH_TARGET_POLL", "event"),
       "target_args": os.environ.get("BENCH_TARGET_ARGS", ""),
       "host_threads": host_threads, "ack_timeout": ack_timeout, "cells": {}, "ratios": {}}
for g in (1, 2):
    fig["cells"][f"groups{g}"] = {
        "two_hosts_qd32_iops": stats([iops(r, g, "two-hosts", 2) for r in rs]),
        "two_hosts_window_overlap": stats([overlap(r, g) for r in rs]),
        "qd1_mean_us": stats([lat_us(r, g) for r in rs]),
        "q4x64_iops": stats([iops(r, g, "q4x64") for r in rs]),
        "q64x4_iops": stats([iops(r, g, "q64x4") for r in rs]),
    }
fig["ratios"]["two_hosts_groups2_vs_1"] = stats(
    [iops(r, 2, "two-hosts", 2) / iops(r, 1, "two-hosts", 2) for r in rs])
fig["ratios"]["qd1_latency_groups2_vs_1"] = stats([lat_us(r, 2) / lat_us(r, 1) for r in rs])
for g in (1, 2):
    fig["ratios"][f"q64x4_vs_q4x64_groups{g}"] = stats(
        [iops(r, g, "q64x4") / iops(r, g, "q4x64") for r in rs])
# The guest's CPU over each cell (cpu.tsv, percent of both vCPUs): medians per groups and cell.
rows = []
with open(f"{out}/cpu.tsv") as f:
    head = f.readline().rstrip("\n").split("\t")
    rows = [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]
fig["cpu_pct"] = {}
with open(f"{out}/vcpus") as f:
    vcpus = int(f.read())
fig["vcpus"] = vcpus
for g in (1, 2):
    for cell in ("two-hosts", "qd1", "q4x64", "q64x4"):
        mine = [r for r in rows if r["groups"] == str(g) and r["cell"] == cell]
        if len(mine) != reps:
            sys.exit(f"cpu.tsv: {len(mine)} rows for --poll-groups {g} {cell}, want {reps}")
        def med(xs):
            xs = [x for x in xs if x == x]  # a cell whose window had too few samples: nan
            return statistics.median(xs) if xs else None
        fig["cpu_pct"].setdefault(f"groups{g}", {})[cell] = {
            k: med(float(r[k + "_pct"]) for r in mine)
            for k in ("user", "system", "irq", "idle", "target")}
        # CPU time per I/O in us: the target process's, and the rest of the guest's busy time
        # (hosts, rxe's softirq and tasks): with no idle left, IOPS <= vcpus / (target + rest).
        per_io = []
        for r in mine:
            rep = int(r["rep"])
            n = iops(rep, g, cell, 2 if cell == "two-hosts" else 1)
            busy, tgt = 100 - float(r["idle_pct"]), float(r["target_pct"])
            per_io.append((tgt / 100 * vcpus / n * 1e6, (busy - tgt) / 100 * vcpus / n * 1e6))
        fig.setdefault("cpu_us_per_io", {}).setdefault(f"groups{g}", {})[cell] = {
            "target": med(t for t, _ in per_io), "rest": med(h for _, h in per_io)}
# rxe retries per cell (retries.tsv): medians per groups and cell.
with open(f"{out}/retries.tsv") as f:
    head = f.readline().rstrip("\n").split("\t")
    rows = [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]
fig["rxe_retries"] = {}
for g in (1, 2):
    for cell in ("two-hosts", "qd1", "q4x64", "q64x4"):
        mine = [r for r in rows if r["groups"] == str(g) and r["cell"] == cell]
        fig["rxe_retries"].setdefault(f"groups{g}", {})[cell] = {
            k: statistics.median(int(r[k]) for r in mine) for k in head[3:]} if mine else {}
with open(f"{out}/poll-groups.json", "w") as f:
    json.dump(fig, f, indent=2)
def line(name, s, unit=""):
    print(f"{name}: {s['median']:.2f}{unit} (min {s['min']:.2f}, max {s['max']:.2f})")
for g in (1, 2):
    c = fig["cells"][f"groups{g}"]
    print(f"--poll-groups {g}: two hosts QD32 {c['two_hosts_qd32_iops']['median']:.0f} IOPS, "
          f"QD1 {c['qd1_mean_us']['median']:.0f} us, 4x64 {c['q4x64_iops']['median']:.0f} IOPS, "
          f"64x4 {c['q64x4_iops']['median']:.0f} IOPS")
for k, s in fig["ratios"].items():
    line(k, s, "x")
def pct(x):
    return "n/a" if x is None else f"{x:.1f}%"
for g in (1, 2):
    for cell in ("two-hosts", "q4x64", "q64x4"):
        c = fig["cpu_pct"][f"groups{g}"][cell]
        u = fig["cpu_us_per_io"][f"groups{g}"][cell]
        us = "n/a" if None in u.values() else f"{u['target']:.0f} + {u['rest']:.0f} us"
        print(f"--poll-groups {g}, {cell}: guest CPU idle {pct(c['idle'])}, irq+softirq "
              f"{pct(c['irq'])}, system {pct(c['system'])}, user {pct(c['user'])}; target "
              f"process {pct(c['target'])} of all {vcpus} vCPUs; CPU per I/O target + rest {us}")
for g in (1, 2):
    c = fig["rxe_retries"][f"groups{g}"]["two-hosts"]
    print(f"--poll-groups {g}, two hosts: rxe " +
          ", ".join(f"{k} {v:g}" for k, v in c.items()) + " per cell (median)")
print(f"(medians of {reps} interleaved repetitions; q4x64 and q64x4 with host --threads "
      f"{host_threads}; --ack-timeout {ack_timeout}; {out}/poll-groups.json)")
PY
fi

# In the soft-RoCE environment: the two targets, then the cells.
bin=${NVMF_BENCH_BIN:?}
t=$NVMF_TARGET_ADDR
nqn=nqn.2024-01.io.nvmf-rdma:poll-groups
host_poll=${BENCH_POLL:-event}
# shellcheck source=/dev/null # ci/lib/target.sh is shellchecked on its own
. "$(dirname "$0")/../lib/target.sh"
# shellcheck source=/dev/null # ci/lib/cpu_window.sh is shellchecked on its own
. "$(dirname "$0")/../lib/cpu_window.sh"
read -ra target_args <<<"${BENCH_TARGET_ARGS:-}"
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' EXIT
for g in 1 2; do
  start_listening "$out/target-g$g.log" "$bin/target/nvmf-target" -a "$t" -s $((4430 + g)) \
    -n "$nqn" --ram-size 256m --poll-groups "$g" --max-io-queues 64 \
    --poll "${BENCH_TARGET_POLL:-event}" --ack-timeout "$ack_timeout" "${target_args[@]}" || {
    echo "poll-groups.sh: the target with --poll-groups $g did not start:" >&2
    cat "$out/target-g$g.log" >&2
    exit 1
  }
  pids+=("$target_pid")
done
bench() { # name groups [bench options]: one nvmf-host bench process, in the background
  local name=$1 g=$2
  shift 2
  timeout $((120 + 3 * runtime)) "$bin/host/nvmf-host" bench -a "$t" -s $((4430 + g)) \
    -w "$NVMF_HOST_ADDR" -n "$nqn" --rw randread --bs 4k --runtime "$runtime" \
    --ramp_time 0.5 --poll "$host_poll" --ack-timeout "$ack_timeout" --json "$out/$name.json" "$@" \
    2>"$out/$name.err" &
}
# CPU use over each cell's measured window, from /proc: the guest's jiffies (user+nice, system,
# irq+softirq, idle+iowait; both vCPUs) and the target process's (utime+stime, every thread),
# sampled every 0.2 s from before the hosts start until they exit (bash builtins only: a
# sampler that forked would itself load the 2 vCPUs), then taken between the first sample inside
# the hosts' measured window (window_start/end_unix_ns of their JSON; with two hosts, where both
# measure) and the last one inside it. Fixed sleeps missed the I/O when the guest ran slowly
# (hosts connect seconds late under load). Soft-RoCE does its packet work in the guest's kernel
# (softirq, rxe tasks) on the same 2 vCPUs as the hosts and the targets, so a guest with no idle
# time left bounds what a second poll group can add. One row per cell in cpu.tsv.
# rxe's retry counters, summed over its devices (target's and host's): a reordered or lost packet
# is sent again after a NAK or, when nothing follows it, after the QP's local ACK timeout.
retry_counters="completer_retry_err rcvd_seq_err duplicate_request out_of_seq_request retry_exceeded_err rcvd_rnr_err send_rnr_err"
retries_now() { # "N N ..." in the order of retry_counters
  local c d sum vals=()
  for c in $retry_counters; do
    sum=0
    for d in /sys/class/infiniband/*/ports/1/hw_counters; do
      [ -r "$d/$c" ] && sum=$((sum + $(cat "$d/$c")))
    done
    vals+=("$sum")
  done
  echo "${vals[*]}"
}
overlap() { # JSON JSON: how much the two measured windows overlap, over the shorter one
  python3 - "$@" <<'PY'
import json, sys
w = []
for name in sys.argv[1:]:
    with open(name) as f:
        a = json.load(f)["results"][0]["all"]
    w.append((a["window_start_unix_ns"], a["window_end_unix_ns"]))
shorter = min(e - s for s, e in w)
both = min(e for _, e in w) - max(s for s, _ in w)
print(f"{max(both, 0) / shorter:.3f}" if shorter > 0 else "0")
PY
}
start_lead=4 # seconds from launching the two-hosts cell's hosts to their common --start-at
cell() { # rep groups cell
  local rep=$1 g=$2 c=$3 n=r$1-g$2-$3 rc=0 p hosts=() lead=0 start_at
  local retries_before retries_after sampler jsons=()
  retries_before=$(retries_now)
  cpu_sampler "${pids[$((g - 1))]}" >"$out/$n.cpu" &
  sampler=$!
  case $c in
    two-hosts)
      lead=$start_lead
      # To the millisecond: the CPU sample below is timed from it, as from the start elsewhere.
      start_at=$(awk -v now="$(date +%s.%N)" -v lead="$lead" 'BEGIN { printf "%.3f", now + lead }')
      bench "$n-h1" "$g" --iodepth 32 --hostnqn "nqn.2014-08.org.nvmexpress:uuid:pg-host-1" \
        --start-at "$start_at"
      hosts+=($!)
      bench "$n-h2" "$g" --iodepth 32 --hostnqn "nqn.2014-08.org.nvmexpress:uuid:pg-host-2" \
        --start-at "$start_at"
      hosts+=($!)
      ;;
    qd1) bench "$n" "$g" --iodepth 1; hosts+=($!) ;;
    q4x64) bench "$n" "$g" --iodepth 64 --numjobs 4 --threads "$host_threads"; hosts+=($!) ;;
    q64x4) bench "$n" "$g" --iodepth 4 --numjobs 64 --threads "$host_threads"; hosts+=($!) ;;
  esac
  for p in "${hosts[@]}"; do wait "$p" || rc=$?; done
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null || true
  retries_after=$(retries_now)
  paste -d' ' <(echo "$retries_before") <(echo "$retries_after") |
    awk -v head="$rep	$g	$c" '{ n = NF / 2; printf "%s", head
      for (i = 1; i <= n; i++) printf "\t%d", $(i + n) - $i; printf "\n" }' >>"$out/retries.tsv"
  # Shares of the guest's CPU time in the window, in percent (the target's: of both vCPUs too).
  if [ "$c" = two-hosts ]; then jsons=("$out/$n-h1.json" "$out/$n-h2.json"); else jsons=("$out/$n.json"); fi
  read -r user sys irq idle tgt <<<"$(cpu_share "$out/$n.cpu" "${jsons[@]}" 2>/dev/null ||
    echo nan nan nan nan nan)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$g" "$c" "$user" "$sys" "$irq" "$idle" "$tgt" \
    >>"$out/cpu.tsv"
  echo "poll-groups: rep $rep, --poll-groups $g, $c: exit $rc; guest CPU user $user%," \
    "system $sys%, irq+softirq $irq%, idle $idle%; target process $tgt%" >&2
  [ "$rc" -eq 0 ] || { cat "$out/$n"*.err >&2; return 1; }
  if [ "$c" = two-hosts ]; then
    local ov
    ov=$(overlap "$out/$n-h1.json" "$out/$n-h2.json")
    echo "poll-groups: rep $rep, --poll-groups $g, two-hosts: measured windows overlap $ov" >&2
    awk -v o="$ov" 'BEGIN { exit !(o >= 0.9) }' || return 3
    echo "$ov" >"$out/$n.overlap"
  fi
}
cell_tries() { # rep groups cell: cell, again (up to 3 tries) while the two hosts did not overlap
  local try rc
  for try in 1 2 3; do
    rc=0
    cell "$@" || rc=$?
    [ "$rc" -eq 3 ] || return "$rc"
    # The rows of the failed try go; its JSONs are overwritten by the next.
    sed -i '$d' "$out/cpu.tsv"
    sed -i '$d' "$out/retries.tsv"
    echo "poll-groups: rep $1, --poll-groups $2, $3: the hosts' windows overlap less than 90%" \
      "(try $try of 3)" >&2
  done
  return 1
}
nproc >"$out/vcpus"
printf 'rep\tgroups\tcell\tuser_pct\tsystem_pct\tirq_pct\tidle_pct\ttarget_pct\n' >"$out/cpu.tsv"
printf 'rep\tgroups\tcell\t%s\n' "$(echo "$retry_counters" | tr ' ' '\t')" >"$out/retries.tsv"
for rep in $(seq 1 "$reps"); do
  order="1 2"
  [ $((rep % 2)) -eq 1 ] || order="2 1"
  cells="two-hosts qd1 q4x64 q64x4"
  [ $((rep % 2)) -eq 1 ] || cells="q64x4 q4x64 qd1 two-hosts"
  for c in $cells; do
    for g in $order; do cell_tries "$rep" "$g" "$c"; done
  done
done
