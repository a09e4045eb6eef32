#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Figures of `ci/bench-compare.sh --ublk` (cells of ci/bench/ublk-guest.sh).

Usage: ublk-report.py DIR [--machine TEXT] [--command TEXT]
Reads DIR/raw-ublk/cells.tsv and each cell's fio JSON; writes DIR/ublk-report.json and
DIR/ublk-report.md and prints the table. Per job: each host's median IOPS and median p50 and
p99 completion latency over the repetitions, and the median of the per-repetition ratios
nvmf-host ublk / Linux nvme-rdma. Exit 1 when a cell has no result or failed (the figures are
still shown, with the count of failed cells).
"""
import json
import os
import sys

import bench_report

JOBS = (("randread-qd1", "4 KiB randread QD1", "read"),
        ("randread-qd32", "4 KiB randread QD32", "read"),
        ("randwrite-qd32", "4 KiB randwrite QD32", "write"))
HOSTS = (("linux", "Linux nvme-rdma, /dev/nvmeXnY"), ("ours", "nvmf-host ublk, /dev/ublkbN"))


def fio_cell(path, direction):
    text = open(path).read()
    j = json.loads(text[text.index("{"):])["jobs"][0]
    d = j[direction]
    pct = d["clat_ns"].get("percentile", {})
    return {"iops": d["iops"], "p50_us": pct.get("50.000000", 0) / 1e3,
            "p99_us": pct.get("99.000000", 0) / 1e3, "error": j["error"]}


def main():
    args = bench_report.args(__doc__)
    raw = os.path.join(args.dir, "raw-ublk")
    env = bench_report.environment(raw)
    cells = bench_report.cells(raw)
    direction = {job: d for job, _, d in JOBS}
    by = {}
    missing = failed = 0
    for rep, job, host, tag, rc in cells:
        try:
            f = fio_cell(os.path.join(raw, tag + ".json"), direction[job])
        except (OSError, ValueError, KeyError, IndexError):
            missing += 1
            continue
        if int(rc) != 0 or f["error"] != 0:
            failed += 1
        by.setdefault(job, {}).setdefault(host, {})[int(rep)] = f
    jobs = {}
    for job, hosts in by.items():
        out = {}
        for host, reps in hosts.items():
            out[host] = {k: bench_report.spread([r[k] for r in reps.values()])
                         for k in ("iops", "p50_us", "p99_us")}
            out[host]["per_rep"] = reps
        ours, linux = hosts.get("ours", {}), hosts.get("linux", {})
        ratios = [ours[r]["iops"] / linux[r]["iops"] for r in ours
                  if r in linux and linux[r]["iops"] > 0]
        out["ratio"] = bench_report.spread(ratios) if ratios else None
        jobs[job] = out
    report = {"machine": args.machine, "command": args.command, "environment": env,
              "reps": len({c[0] for c in cells}), "jobs": jobs}
    with open(os.path.join(args.dir, "ublk-report.json"), "w") as f:
        json.dump(report, f, indent=2, sort_keys=True)
    lines = [f"The same fio job through each host's block device against Linux nvmet-rdma "
             f"(null_blk), {report['reps']} repetitions; {args.machine}; guest kernel "
             f"{env.get('kernel', '?')}, {env.get('vcpus', '?')} vCPUs. Command: "
             f"`{args.command}`.", "",
             "| job | host | IOPS, median (min–max) | p50 µs | p99 µs | ours / Linux IOPS, "
             "median (min–max) of the repetitions |", "|---|---|---|---|---|---|"]
    for job, name, _ in JOBS:
        if job not in jobs:
            continue
        for host, label in HOSTS:
            t = jobs[job].get(host)
            if not t:
                continue
            r = jobs[job]["ratio"]
            ratio = "" if host == "linux" or r is None else bench_report.ranged(r)
            lines.append(f"| {name} | {label} | {bench_report.ranged(t['iops'], 0)} | "
                         f"{t['p50_us']['median']:.0f} | {t['p99_us']['median']:.0f} | {ratio} |")
    problems = (f"{missing} cells without a result, {failed} failed: see raw-ublk/*.log"
                if missing or failed else "")
    return bench_report.finish(args.dir, "ublk-report", lines, problems)


if __name__ == "__main__":
    sys.exit(main())
