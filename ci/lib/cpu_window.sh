#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The guest's CPU over a bench's measured window (sourced by ci/bench/poll-groups.sh).
#   cpu_sampler PID >FILE &   one line every 0.2 s until killed: "unix_us cpu <the /proc/stat cpu
#                             line's fields> utime stime" (jiffies; utime and stime of PID, every
#                             thread; 0 0 once PID is gone). Bash builtins only (no sleep(1), no
#                             awk): a sampler that forked would itself load a 2-vCPU guest.
#   cpu_share FILE JSON...    prints "user system irq idle target" in percent of all CPUs'
#                             time (user+nice, system, irq+softirq, idle+iowait, PID's
#                             utime+stime) between the first and the last sample inside the
#                             window where every nvmf-host bench JSON measured
#                             (window_start_unix_ns..window_end_unix_ns of results[0].all);
#                             "nan nan nan nan nan" when fewer than two samples 0.5 s apart
#                             fall inside it.
cpu_sampler() { # pid: prints "unix_us cpu user nice system idle iowait irq softirq ... utime stime"
  local pid=$1 line st tick
  exec {tick}<> <(:)
  while :; do
    read -r line </proc/stat
    st=()
    read -r -a st <"/proc/$pid/stat" 2>/dev/null
    echo "${EPOCHREALTIME/[.,]/} $line ${st[13]:-0} ${st[14]:-0}"
    read -rt 0.2 -u "$tick" _ || true
  done
}
cpu_share() { # SAMPLES JSON...: "user system irq idle target" percent over the hosts' window
  python3 - "$@" <<'PY'
import json, sys
w = []
for name in sys.argv[2:]:
    with open(name) as f:
        a = json.load(f)["results"][0]["all"]
    w.append((a["window_start_unix_ns"] / 1e3, a["window_end_unix_ns"] / 1e3))
start, end = max(s for s, _ in w), min(e for _, e in w)
rows = []
with open(sys.argv[1]) as f:
    for line in f:
        v = line.split()
        if len(v) < 12 or v[1] != "cpu":
            continue
        n = [int(x) for x in v[2:]]
        # user+nice, system, irq+softirq, idle+iowait, target utime+stime
        rows.append((int(v[0]), (n[0] + n[1], n[2], n[5] + n[6], n[3] + n[4], n[-2] + n[-1])))
inside = [r for r in rows if start <= r[0] <= end]
if len(inside) < 2 or inside[-1][0] - inside[0][0] < 0.5e6:
    print("nan nan nan nan nan")
    sys.exit(0)
d = [b - a for a, b in zip(inside[0][1], inside[-1][1])]
t = sum(d[:4]) or 1
print(" ".join(f"{100 * x / t:.1f}" for x in d))
PY
}
