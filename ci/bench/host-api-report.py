#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Figures of `ci/bench-compare.sh --host-baseline NVMF_HOST` (cells of
ci/bench/host-api-guest.sh).

Usage: host-api-report.py DIR [--machine TEXT] [--command TEXT]
Reads DIR/raw-host-api/cells.tsv and each cell's nvmf-host bench JSON; writes
DIR/host-api-report.json and DIR/host-api-report.md and prints the table. Per cell: each
binary's median IOPS and mean and p99 completion latency over the repetitions, and the median
(min-max) of the per-repetition ratios current / baseline. Exit 1 when a cell has no result or
failed (the figures are still shown, with the count of failed cells).
"""
import json
import os
import sys

import bench_report

CELLS = ("randread-qd1", "randread-qd32", "randwrite-qd32")
HOSTS = (("baseline", "baseline"), ("current", "this tree"))


def bench_cell(path):
    r = json.load(open(path))
    a = r["results"][0]["all"]
    d = a["write"] if a["write"]["total_ios"] > 0 else a["read"]
    clat = d["clat_ns"]
    return {"iops": d["iops"], "mean_us": clat["mean"] / 1e3,
            "p99_us": clat["percentile"].get("99.000000", 0) / 1e3}


def main():
    args = bench_report.args(__doc__)
    raw = os.path.join(args.dir, "raw-host-api")
    env = bench_report.environment(raw)
    rows = bench_report.cells(raw)
    by = {}
    missing = failed = 0
    for rep, cell, host, name, rc in rows:
        if int(rc) != 0:
            failed += 1
        try:
            by.setdefault(cell, {}).setdefault(host, {})[int(rep)] = \
                bench_cell(os.path.join(raw, name))
        except (OSError, ValueError, KeyError, IndexError):
            missing += 1
    cells = {}
    for cell, hosts in by.items():
        out = {}
        for host, reps in hosts.items():
            out[host] = {k: bench_report.spread([r[k] for r in reps.values()])
                         for k in ("iops", "mean_us", "p99_us")}
            out[host]["per_rep"] = reps
        cur, base = hosts.get("current", {}), hosts.get("baseline", {})
        both = [r for r in cur if r in base]
        out["iops_ratio"] = bench_report.spread([cur[r]["iops"] / base[r]["iops"] for r in both
                                    if base[r]["iops"] > 0]) if both else None
        out["mean_clat_ratio"] = bench_report.spread([cur[r]["mean_us"] / base[r]["mean_us"] for r in both
                                         if base[r]["mean_us"] > 0]) if both else None
        cells[cell] = out
    report = {"machine": args.machine, "command": args.command, "environment": env,
              "reps": len({r[0] for r in rows}), "cells": cells}
    with open(os.path.join(args.dir, "host-api-report.json"), "w") as f:
        json.dump(report, f, indent=2, sort_keys=True)
    lines = [f"`nvmf-host bench` (4 KiB, one job) against nvmf-target on RAM, this tree's "
             f"binary and a baseline's, interleaved, {report['reps']} repetitions; "
             f"{args.machine}; guest kernel {env.get('kernel', '?')}, {env.get('vcpus', '?')} "
             f"vCPUs. Command: `{args.command}`.", "",
             "| cell | binary | IOPS, median (min–max) | mean clat µs | p99 µs | this tree / "
             "baseline: IOPS, mean clat (median (min–max) of the repetitions) |",
             "|---|---|---|---|---|---|"]
    for cell in sorted(cells, key=lambda c: (c.endswith("event"), c)):
        for host, label in HOSTS:
            t = cells[cell].get(host)
            if not t:
                continue
            ratio = ""
            if host == "current" and cells[cell]["iops_ratio"]:
                i, m = cells[cell]["iops_ratio"], cells[cell]["mean_clat_ratio"]
                ratio = f"{bench_report.ranged(i)}, {bench_report.ranged(m)}"
            lines.append(f"| {cell} | {label} | {bench_report.ranged(t['iops'], 0)} | "
                         f"{t['mean_us']['median']:.0f} | {t['p99_us']['median']:.0f} | {ratio} |")
    problems = (f"{missing} cells without a result, {failed} failed: see raw-host-api/*.err"
                if missing or failed else "")
    return bench_report.finish(args.dir, "host-api-report", lines, problems)


if __name__ == "__main__":
    sys.exit(main())
