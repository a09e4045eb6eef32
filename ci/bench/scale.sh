#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The scale bench, in the soft-RoCE guest: for each point NxQ, a fresh nvmf-target
# (RAM namespace, in-capsule SCALE_ICS bytes, MDTS 128 KiB, --max-io-queues Q) and one
# scale_bench process that opens N controllers x Q I/O queues of SCALE_QUEUE_SIZE entries over
# raw connections, reads the target's VmRSS/VmHWM with every queue open, and closes them; then
# the target is stopped and its --json report gives the peaks of registered MR bytes and posted
# receives. Prints a table and writes $NVMF_RESULTS_DIR/scale/scale.json (one object per point).
# A bench, not a test: not part of .ci/run.
#
# scale_bench opens two file descriptors per queue (its CM event channel and its completion
# channel): 128 x 4 I/O queues and their 128 admin queues need 1280 and more, above the usual
# soft limit of 1024 (the bench stopped with EMFILE at 407 of 512 I/O queues), so the soft limit
# is raised to the hard one (the hard one raised first when it is below 2 per queue + 64 and root
# may; if it stays below, the script stops before any target starts).
#
# Each point runs once per SCALE_SRQ mode, interleaved (N x Q with the shared receive queue, then
# without, then the next point): "on" adds --srq on (the default), "off" --srq off.
#
# Each point also gives the first-Connect time of its fresh target (the first admin queue's CM
# connect start to its Connect CQE) and the slowest queue's; a point may be given several times
# (1x1 1x1 1x1: first-Connect times, SRQ on and off interleaved).
#
# Usage: ci/rxe-run --results DIR ci/bench/scale.sh [NxQ ...]
#   (default: 1x1 8x4 16x4 64x4; 64x4 needs NVMF_RXE_MEM_MB=4096 and SCALE_TARGET_VMEM_KIB 0 or
#   about 3500000 to fit without SRQ)
#   env: NVMF_BIN_DIR (bazel-bin with target/nvmf-target and ci/bench/scale_bench; default
#   <repo>/bazel-bin), SCALE_ICS (16384), SCALE_QUEUE_SIZE (128), SCALE_TARGET_VMEM_KIB (the
#   target's ulimit -v, default 1700000: the guest has 2 GiB, so a point that does not fit makes
#   the target refuse a Connect instead of waking the OOM killer; 0 = no limit), SCALE_SRQ
#   ("on off": the modes, in this order, per point), SCALE_POLL_GROUPS (the target's
#   --poll-groups, default 1: docs/performance.md's figures are one poll group's; "auto": one
#   per CPU).
set -uo pipefail
# Arguments first, before the environment and before any target starts.
# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=scale.sh usage="ci/rxe-run --results DIR ci/bench/scale.sh [NxQ ...] (e.g. 8x4: 8 controllers x 4 I/O queues)"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "$(dirname "$0")/../lib/args.sh"
for p in "$@"; do
  case "$p" in
    -h | --help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  esac
  [[ $p =~ ^[1-9][0-9]{0,3}x[1-9][0-9]{0,3}$ ]] ||
    usage_error "a point is NxQ (controllers x I/O queues, each 1-9999), not '$p'"
done
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=/dev/null # ci/lib/target.sh is shellchecked on its own
. "$repo/ci/lib/target.sh"
: "${NVMF_RESULTS_DIR:?run this under ci/rxe-run}"
: "${NVMF_TARGET_ADDR:?}" "${NVMF_HOST_ADDR:?}"
bin=${NVMF_BIN_DIR:-$repo/bazel-bin}
ics=${SCALE_ICS:-16384}
qsize=${SCALE_QUEUE_SIZE:-128}
vmem=${SCALE_TARGET_VMEM_KIB:-1700000}
read -r -a srq_modes <<<"${SCALE_SRQ:-on off}"
NQN=nqn.2024-01.io.nvmf-rdma:scale
out=$NVMF_RESULTS_DIR/scale
mkdir -p "$out"
points=("$@")
[ ${#points[@]} -gt 0 ] || points=(1x1 8x4 16x4 64x4)
# The file descriptors the largest point needs (two per queue, admin queues included, and 64 for
# the rest): the soft limit goes to the hard limit, raised first when root may.
fds_needed=64
for p in "${points[@]}"; do
  need=$((2 * ${p%x*} * (${p#*x} + 1) + 64))
  [ "$need" -le "$fds_needed" ] || fds_needed=$need
done
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$fds_needed" ]; then
  ulimit -Hn "$fds_needed" 2>/dev/null || true
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$fds_needed" ]; then
  echo "scale.sh: the largest point needs $fds_needed file descriptors; ulimit -n is $(ulimit -n) (hard $(ulimit -Hn))" >&2
  exit 1
fi
status=0

# field FILE KEY: the first integer value of "KEY": in the target's JSON report.
field() { sed -n "s/.*\"$2\": \([0-9][0-9]*\).*/\1/p" "$1" | head -n 1; }

rows=()
json="["
run=0
for p in "${points[@]}"; do
  run=$((run + 1))
  for mode in "${srq_modes[@]}"; do
  n=${p%x*}
  q=${p#*x}
  tag=$p-srq-$mode
  # A point given more than once (1x1 1x1 ...: first-Connect times) gets its run number.
  [ "$(printf '%s\n' "${points[@]}" | grep -cx "$p")" -eq 1 ] || tag=$p-$run-srq-$mode
  srq_flag=(--srq "$mode")
  (
    [ "$vmem" = 0 ] || ulimit -v "$vmem"
    exec "$bin/target/nvmf-target" -a "$NVMF_TARGET_ADDR" -n "$NQN" --ram-size 16m \
      --inline-data-size "$ics" --max-io-queues "$q" --queue-size "$qsize" \
      --max-controllers "$((n + 1))" --max-controllers-per-host 1 \
      --json "$out/target-$tag.json" --log-level warn "${srq_flag[@]}" \
      --poll-groups "${SCALE_POLL_GROUPS:-1}"
  ) >"$out/target-$tag.log" 2>&1 &
  pid=$!
  wait_listening "$out/target-$tag.log" "$pid" 30 # if not, scale_bench reports the failure
  rc=0
  timeout -k 5 900 "$bin/ci/bench/scale_bench" -a "$NVMF_TARGET_ADDR" -w "$NVMF_HOST_ADDR" -n "$NQN" \
    --controllers "$n" --io-queues "$q" --queue-size "$qsize" --target-pid "$pid" \
    --json "$out/bench-$tag.json" >"$out/bench-$tag.txt" 2>&1 || rc=$?
  head -n 1 "$out/bench-$tag.txt"
  sleep 1
  trc=0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || trc=$?
  else
    wait "$pid"
    trc=$?
    echo "scale: $tag: nvmf-target was gone after the bench (exit $trc)"
    status=1
  fi
  [ "$trc" -eq 0 ] || status=1
  t=$out/target-$tag.json
  mr=$(field "$t" mr_bytes_peak)
  mrs=$(field "$t" mrs)
  recv=$(field "$t" posted_receives_peak)
  srqr=$(field "$t" srq_receives)
  srqlow=$(field "$t" srq_posted_low)
  b=$(cat "$out/bench-$tag.json" 2>/dev/null || echo '{}')
  rss=$(echo "$b" | sed -n 's/.*"rss_kib":\([0-9-]*\).*/\1/p')
  hwm=$(echo "$b" | sed -n 's/.*"hwm_kib":\([0-9-]*\).*/\1/p')
  opened=$(echo "$b" | sed -n 's/.*"queues_opened":\([0-9]*\).*/\1/p')
  first=$(echo "$b" | sed -n 's/.*"first_connect_ms":\([0-9.e+-]*\).*/\1/p')
  cmax=$(echo "$b" | sed -n 's/.*"connect_ms_max":\([0-9.e+-]*\).*/\1/p')
  rows+=("$(printf '%-18s %6s/%-6s %10s %10s %14s %10s %9s %9s %9s   %s' "$tag" "${opened:-?}" "$((n * q))" \
    "$(awk -v k="${rss:-0}" 'BEGIN{printf "%.1f", k/1024}')" \
    "$(awk -v k="${hwm:-0}" 'BEGIN{printf "%.1f", k/1024}')" \
    "$(awk -v b="${mr:-0}" 'BEGIN{printf "%.1f", b/1048576}')" "${recv:-?}" \
    "${srqr:-0}" "$(awk -v m="${first:--1}" 'BEGIN{printf "%.1f", m}')" \
    "$(awk -v m="${cmax:--1}" 'BEGIN{printf "%.1f", m}')" \
    "$([ "$rc" -eq 0 ] && echo ok || echo "bench exit $rc")")")
  [ "$json" = "[" ] || json+=","
  json+="{\"point\":\"$p\",\"srq\":\"$mode\",\"in_capsule\":$ics,\"mdts_bytes\":131072,\"bench\":$b,"
  json+="\"target_mr_bytes_peak\":${mr:-null},\"target_mrs_at_exit\":${mrs:-null},"
  json+="\"target_posted_receives_peak\":${recv:-null},\"target_srq_receives\":${srqr:-0},"
  json+="\"target_srq_posted_low\":${srqlow:-null},\"target_exit\":$trc}"
  done
done
json+="]"
echo "$json" >"$out/scale.json"
echo
echo "scale bench: in-capsule $ics, MDTS 128 KiB, $qsize entries per I/O queue; target ulimit -v ${vmem} KiB"
printf '%-18s %13s %10s %10s %14s %10s %9s %9s %9s   %s\n' point "I/O queues" "RSS MiB" "HWM MiB" \
  "MR MiB (peak)" "recvs" "SRQ recvs" "1st ms" "max ms" note
echo "(1st ms: the first admin queue's CM connect start to its Connect CQE; max ms: the slowest queue's)"
for r in "${rows[@]}"; do echo "$r"; done
echo "JSON: $out/scale.json"
exit $status
