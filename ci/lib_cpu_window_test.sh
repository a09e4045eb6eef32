#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests ci/lib/cpu_window.sh: cpu_share takes the CPU shares between the first and the last
# sample inside the window where every bench JSON measured (samples before and after it do not
# count), gives nan with too few samples inside, and cpu_sampler writes lines it can read.
set -euo pipefail
lib=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-nvmf_rdma}/ci/lib/cpu_window.sh
[ -f "$lib" ] || lib=$(dirname "$0")/lib/cpu_window.sh
# shellcheck source=/dev/null
. "$lib"
tmp=$(mktemp -d -p "${TEST_TMPDIR:-/tmp}")
fail=0
expect() { # WHAT WANT GOT
  if [ "$2" = "$3" ]; then echo "ok: $1: $3"; else echo "FAIL: $1: got '$3', want '$2'"; fail=1; fi
}
bench_json() { # FILE START_NS END_NS: an nvmf-host bench JSON measuring from START to END
  printf '{"results": [{"all": {"window_start_unix_ns": %d, "window_end_unix_ns": %d}}]}\n' \
    "$2" "$3" >"$1"
}
s=1000000000
sample() { # UNIX_S user nice system idle iowait irq softirq utime stime
  echo "$(($1 * 1000000)) cpu  $2 $3 $4 $5 $6 $7 $8 0 0 0 $9 ${10}"
}
# Outside the window: all idle (before) and all busy (after); inside, from 100 s to 104 s:
# 400 jiffies, of them 100 user+nice, 60 system, 40 irq+softirq, 200 idle+iowait, the target 80.
{
  sample 90 0 0 0 0 0 0 0 0 0
  sample 99 0 0 0 900 0 0 0 0 0
  sample 100 10 0 10 1000 0 0 0 5 5
  sample 102 60 0 40 1100 50 10 10 30 20
  sample 104 100 10 70 1150 50 20 20 50 40
  sample 106 300 10 70 1150 50 20 20 250 40
} >"$tmp/a.cpu"
bench_json "$tmp/h1.json" $((100 * s)) $((105 * s))
bench_json "$tmp/h2.json" $((99 * s)) $((104 * s))
expect "shares inside the window both hosts measured" "25.0 15.0 10.0 50.0 20.0" \
  "$(cpu_share "$tmp/a.cpu" "$tmp/h1.json" "$tmp/h2.json")"
bench_json "$tmp/h3.json" $((101 * s)) $((102 * s))
expect "one sample inside" "nan nan nan nan nan" "$(cpu_share "$tmp/a.cpu" "$tmp/h3.json")"
bench_json "$tmp/h4.json" $((200 * s)) $((210 * s))
expect "window after every sample" "nan nan nan nan nan" "$(cpu_share "$tmp/a.cpu" "$tmp/h4.json")"

# The sampler: about 5 lines a second, each with the target's utime and stime last.
cpu_sampler $$ >"$tmp/s.cpu" &
sampler=$!
t0=${EPOCHREALTIME/[.,]/}000
sleep 1.5
kill "$sampler"
wait "$sampler" 2>/dev/null || true
lines=$(wc -l <"$tmp/s.cpu")
if [ "$lines" -ge 3 ] && [ "$lines" -le 12 ]; then echo "ok: sampler wrote $lines lines in 1.5 s"
else echo "FAIL: sampler wrote $lines lines in 1.5 s (want 3 to 12)"; fail=1; fi
fields=$(awk 'NR == 1 { print NF, $2 }' "$tmp/s.cpu")
expect "sample fields (unix_us, cpu, the /proc/stat cpu fields, utime, stime)" \
  "$((2 + $(head -1 /proc/stat | wc -w) - 1 + 2)) cpu" "$fields"
bench_json "$tmp/now.json" "$t0" $((t0 + 14 * s / 10))
got=$(cpu_share "$tmp/s.cpu" "$tmp/now.json")
if [[ $got =~ ^[0-9.]+\ [0-9.]+\ [0-9.]+\ [0-9.]+\ [0-9.]+$ ]]; then echo "ok: shares of real samples: $got"
else echo "FAIL: shares of real samples: '$got'"; fail=1; fi
exit "$fail"
