#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Figures of `ci/bench-compare.sh --deep-writes` (cells of ci/bench/deep-writes-guest.sh).

Usage: deep-writes-report.py DIR [--machine TEXT] [--command TEXT]
Reads DIR/raw-deep/cells.tsv and each cell's fio JSON, rxe counters and kernel lines; writes
DIR/deep-writes-report.json and DIR/deep-writes-report.md and prints the table. Per job: each
target's median write IOPS and p99 completion latency over the repetitions, the median of the
per-repetition ratios nvmf-target / nvmet-rdma, the kernel I/O timeouts, and rxe's retry counters
summed over the job's cells of that target. Exit 1 when a cell has no result or failed (its
figures are still shown, with the count of failed cells).
"""
import json
import os
import re
import sys

import bench_report

RETRY_COUNTERS = ("completer_retry_err", "duplicate_request", "out_of_seq_request",
                  "rcvd_seq_err", "send_err", "softnet.dropped")


def fio_job(path):
    text = open(path).read()
    j = json.loads(text[text.index("{"):])["jobs"][0]
    w = j["write"]
    return {"iops": w["iops"],
            "p99_ms": w["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6,
            "verified": j["read"]["total_ios"], "error": j["error"]}


def counters(path):
    """{counter: after - before} of a cell's .counters file (both devices added up)."""
    seen = {}
    for line in open(path):
        m = re.match(r"(before|after): (.*)", line.strip())
        if not m:
            continue
        vals = {}
        for kv in m.group(2).split():
            k, _, v = kv.partition("=")
            name = k.split(".", 1)[1] if not k.startswith("softnet") else k
            if v.isdigit():
                vals[name] = vals.get(name, 0) + int(v)
        seen[m.group(1)] = vals
    b, a = seen.get("before", {}), seen.get("after", {})
    return {k: a[k] - b.get(k, 0) for k in a}


def main():
    args = bench_report.args(__doc__)
    raw = os.path.join(args.dir, "raw-deep")
    env = bench_report.environment(raw)
    cells = bench_report.cells(raw)
    by = {}
    missing = 0
    for rep, job, target, tag, rc in cells:
        try:
            f = fio_job(os.path.join(raw, tag + ".json"))
        except (OSError, ValueError, KeyError, IndexError):
            missing += 1
            continue
        kernel = open(os.path.join(raw, tag + ".kernel")).read()
        f["timeouts"] = len(re.findall(r"I/O .*timeout", kernel))
        f["counters"] = counters(os.path.join(raw, tag + ".counters"))
        f["exit"] = int(rc)
        by.setdefault(job, {}).setdefault(target, {})[int(rep)] = f
    jobs = {}
    for job, targets in by.items():
        out = {}
        for target, reps in targets.items():
            out[target] = {
                "iops": bench_report.spread([r["iops"] for r in reps.values()]),
                "p99_ms": bench_report.spread([r["p99_ms"] for r in reps.values()]),
                "timeouts": sum(r["timeouts"] for r in reps.values()),
                "failed_cells": sum(r["exit"] != 0 for r in reps.values()),
                "retry_counters": {c: sum(r["counters"].get(c, 0) for r in reps.values())
                                   for c in RETRY_COUNTERS},
                "per_rep": reps,
            }
        ours, nvmet = targets.get("ours", {}), targets.get("nvmet", {})
        ratios = [ours[r]["iops"] / nvmet[r]["iops"] for r in ours if r in nvmet and nvmet[r]["iops"] > 0]
        out["ratio"] = bench_report.spread(ratios) if ratios else None
        jobs[job] = out
    report = {"machine": args.machine, "command": args.command, "environment": env,
              "reps": len({c[0] for c in cells}), "jobs": jobs}
    with open(os.path.join(args.dir, "deep-writes-report.json"), "w") as f:
        json.dump(report, f, indent=2, sort_keys=True)
    names = {"qd32x2": "64 KiB randwrite QD32 x 2 jobs", "qd127": "64 KiB randwrite QD127"}
    lines = [f"Deep writes from the Linux host, {report['reps']} repetitions; {args.machine}; "
             f"guest kernel {env.get('kernel', '?')}, {env.get('vcpus', '?')} vCPUs, veth "
             f"rps_cpus {env.get('rps_cpus', '?')}. Command: `{args.command}`.", "",
             "| job | target | write IOPS, median (min–max) | p99 ms, median | failed cells |"
             " kernel I/O timeouts"
             " | rxe retries (completer_retry_err / duplicate_request / out_of_seq_request) | "
             "nvmf-target / nvmet-rdma IOPS, median (min–max) of the repetitions |",
             "|---|---|---|---|---|---|---|---|"]
    for job in ("qd32x2", "qd127"):
        if job not in jobs:
            continue
        for target, label in (("nvmet", "nvmet-rdma"), ("ours", "nvmf-target")):
            t = jobs[job].get(target)
            if not t:
                continue
            rc = t["retry_counters"]
            r = jobs[job]["ratio"]
            ratio = "" if target == "nvmet" or r is None else bench_report.ranged(r)
            lines.append(
                f"| {names[job]} | {label} | {bench_report.ranged(t['iops'], 0)} | "
                f"{t['p99_ms']['median']:.0f} | {t['failed_cells']} | "
                f"{t['timeouts']} | "
                f"{rc['completer_retry_err']} / {rc['duplicate_request']} / "
                f"{rc['out_of_seq_request']} | {ratio} |")
    failed = sum(t["failed_cells"] for j in jobs.values() for k, t in j.items()
                 if k in ("ours", "nvmet"))
    problems = (f"{missing} cells without a result, {failed} failed (fio error, verify failure, "
                "kernel I/O timeout or reset): see raw-deep/*.log" if missing or failed else "")
    return bench_report.finish(args.dir, "deep-writes-report", lines, problems)


if __name__ == "__main__":
    sys.exit(main())
