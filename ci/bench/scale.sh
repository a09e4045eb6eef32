#!/usr/bin/env bash
# The scale bench (issue #12), in the soft-RoCE guest: for each point NxQ, a fresh nvmf-target
# (RAM namespace, in-capsule SCALE_ICS bytes, MDTS 128 KiB, --max-io-queues Q) and one
# scale_bench process that opens N controllers x Q I/O queues of SCALE_QUEUE_SIZE entries over
# raw connections, reads the target's VmRSS/VmHWM with every queue open, and closes them; then
# the target is stopped and its --json report gives the peaks of registered MR bytes and posted
# receives. Prints a table and writes $NVMF_RESULTS_DIR/scale/scale.json (one object per point).
# A bench, not a test: not part of .ci/run.
#
# Each point runs once per SCALE_SRQ mode, interleaved (N x Q with the shared receive queue, then
# without, then the next point): "on" adds --srq on, "off" --srq off (the default).
#
# Usage: ci/rxe-run --results DIR ci/bench/scale.sh [NxQ ...]
#   (default: 1x1 8x4 16x4 64x4; 64x4 needs NVMF_RXE_MEM_MB=4096 and SCALE_TARGET_VMEM_KIB 0 or
#   about 3500000 to fit without SRQ)
#   env: NVMF_BIN_DIR (bazel-bin with target/nvmf-target and ci/bench/scale_bench; default
#   <repo>/bazel-bin), SCALE_ICS (16384), SCALE_QUEUE_SIZE (128), SCALE_TARGET_VMEM_KIB (the
#   target's ulimit -v, default 1700000: the guest has 2 GiB, so a point that does not fit makes
#   the target refuse a Connect instead of waking the OOM killer; 0 = no limit), SCALE_SRQ
#   ("on off": the modes, in this order, per point).
set -uo pipefail
# Arguments first, before the environment and before any target starts.
# shellcheck disable=SC2034 # prog and usage: read by ci/lib/args.sh
prog=scale.sh usage="ci/rxe-run --results DIR ci/bench/scale.sh [NxQ ...] (e.g. 8x4: 8 controllers x 4 I/O queues)"
# shellcheck source=/dev/null # ci/lib/args.sh is shellchecked on its own
. "$(dirname "$0")/../lib/args.sh"
for p in "$@"; do
  case "$p" in
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
status=0

# field FILE KEY: the first integer value of "KEY": in the target's JSON report.
field() { sed -n "s/.*\"$2\": \([0-9][0-9]*\).*/\1/p" "$1" | head -n 1; }

rows=()
json="["
for p in "${points[@]}"; do
  for mode in "${srq_modes[@]}"; do
  n=${p%x*}
  q=${p#*x}
  tag=$p-srq-$mode
  srq_flag=(--srq "$mode")
  (
    [ "$vmem" = 0 ] || ulimit -v "$vmem"
    exec "$bin/target/nvmf-target" -a "$NVMF_TARGET_ADDR" -n "$NQN" --ram-size 16m \
      --inline-data-size "$ics" --max-io-queues "$q" --queue-size "$qsize" \
      --max-controllers "$((n + 1))" --max-controllers-per-host 1 \
      --json "$out/target-$tag.json" --log-level warn "${srq_flag[@]}"
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
  rows+=("$(printf '%-14s %6s/%-6s %10s %10s %14s %10s %9s   %s' "$tag" "${opened:-?}" "$((n * q))" \
    "$(awk -v k="${rss:-0}" 'BEGIN{printf "%.1f", k/1024}')" \
    "$(awk -v k="${hwm:-0}" 'BEGIN{printf "%.1f", k/1024}')" \
    "$(awk -v b="${mr:-0}" 'BEGIN{printf "%.1f", b/1048576}')" "${recv:-?}" \
    "${srqr:-0}" "$([ "$rc" -eq 0 ] && echo ok || echo "bench exit $rc")")")
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
printf '%-14s %13s %10s %10s %14s %10s %9s   %s\n' point "I/O queues" "RSS MiB" "HWM MiB" "MR MiB (peak)" "recvs" "SRQ recvs" note
for r in "${rows[@]}"; do echo "$r"; done
echo "JSON: $out/scale.json"
exit $status
