#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the raw cells of ci/bench/guest.sh into bench-report.json, bench-report.md and the
plot data (ci/bench/plot.gp draws it).

Usage: ci/bench/report.py RESULTS_DIR [--machine TEXT]
Reads RESULTS_DIR/raw/cells.tsv and the files it names; writes RESULTS_DIR/bench-report.json,
RESULTS_DIR/bench-report.md and RESULTS_DIR/plot.dat.

Figures: QD1 cells are mean completion latency in µs (ours: clat_ns, from just before the post to
the completion; fio: lat_ns, submission included, the same span); QD32 cells are IOPS. Every
cell gives the median of the repetitions and the min-max spread. Ratios are taken inside each
repetition, then summarised the same way (never a ratio of medians).
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

STACKS = {
    "oo": "our host -> our target",
    "kk": "kernel host -> kernel target",
    "ok": "our host -> kernel target",
    "ko": "kernel host -> our target",
}
SIZES = ["4k", "8k", "16k", "32k"]
ICS = ["4096", "8192", "16384"]
POLL = os.environ.get("BENCH_POLL", "busy")  # our host's --poll in every other cell
ALT_POLL = "event" if POLL == "busy" else "busy"
PERF_LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def parse_ours(path, direction):
    """(mean µs, p50 µs, iops) of the 'all' row of an nvmf-host bench JSON, or None."""
    j = load_json(path)
    if not j or not j.get("results"):
        return None
    d = j["results"][0]["all"][direction]
    if d["total_ios"] == 0:
        return None
    c = d["clat_ns"]
    return {
        "mean_us": c["mean"] / 1e3,
        "p50_us": c["percentile"].get("50.000000", 0) / 1e3,
        "iops": d["iops"],
        "ios": d["total_ios"],
        "capsules_inline": j["results"][0]["all"]["path"]["capsules_inline"],
        "capsules_by_reference": j["results"][0]["all"]["path"]["capsules_by_reference"],
        "writes_in_capsule": j["results"][0]["all"]["path"]["writes_in_capsule"],
        "writes_keyed": j["results"][0]["all"]["path"]["writes_keyed"],
    }


def parse_fio(path, direction):
    """(mean µs of lat_ns, p50 µs of clat_ns, iops) of fio's first job, or None."""
    j = load_json(path)
    if not j or not j.get("jobs"):
        return None
    d = j["jobs"][0][direction]
    if d.get("total_ios", 0) == 0:
        return None
    return {
        "mean_us": d["lat_ns"]["mean"] / 1e3,
        "p50_us": d["clat_ns"].get("percentile", {}).get("50.000000", 0) / 1e3,
        "iops": d["iops"],
        "ios": d["total_ios"],
    }


def parse_perftest(path):
    """t_avg in µs from a perftest latency table (client, else the server's), or None."""
    for p in (path, path + ".server"):
        try:
            with open(p) as f:
                for line in f:
                    m = PERF_LINE.match(line)
                    if m:
                        avg = float(m.group(6))
                        if math.isfinite(avg) and avg > 0:
                            return {"mean_us": avg, "p50_us": float(m.group(5))}
        except (OSError, ValueError):
            pass
    return None


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
        "values": values,
    }


def build(reps, get, field):
    """Cells, ratios and targets with QD1 latency taken as `field` (mean_us or p50_us)."""
    def floor(rep, field, kind, bs_bytes, ics=None):
        send = lambda n: get(rep, "floor", "ib_send_lat-%d" % n, field)
        if kind == "read":
            parts = [send(64), get(rep, "floor", "ib_write_lat-%d" % bs_bytes, field), send(16)]
        elif bs_bytes <= ics:
            parts = [send(64 + bs_bytes), send(16)]
        else:
            parts = [send(64), get(rep, "floor", "ib_read_lat-%d" % bs_bytes, field), send(16)]
        return None if any(p is None for p in parts) else sum(parts)

    def ratio(x, y):
        return None if x is None or y is None or y == 0 else x / y

    report = {"cells": {}, "ratios": {}}
    # QD1 4 KiB read, QD32 IOPS.
    for s in STACKS:
        report["cells"]["read1-4k-%s" % s] = summary([get(r, "4096", "read1-" + s, field) for r in reps])
        report["cells"]["read32-4k-%s-iops" % s] = summary(
            [get(r, "4096", "read32-" + s, "iops") for r in reps])
    report["cells"]["read1-4k-floor"] = summary([floor(r, field, "read", 4096) for r in reps])
    report["cells"]["read1-4k-oo-inline-off"] = summary(
        [get(r, "4096", "read1-oo-inline-off", field) for r in reps])
    report["cells"]["read1-4k-oo-%s" % ALT_POLL] = summary(
        [get(r, "4096", "read1-oo-" + ALT_POLL, field) for r in reps])
    for s in ("oo", "ko"):
        report["cells"]["read1-4k-%s-nowindow" % s] = summary(
            [get(r, "4096", "read1-%s-nowindow" % s, field) for r in reps])
    for bs in SIZES:
        b = int(bs[:-1]) * 1024
        for ics in ICS:
            for s in ("oo", "kk"):
                report["cells"]["write1-%s-ics%s-%s" % (bs, ics, s)] = summary(
                    [get(r, ics, "write1-%s-%s" % (bs, s), field) for r in reps])
            report["cells"]["write1-%s-ics%s-floor" % (bs, ics)] = summary(
                [floor(r, field, "write", b, int(ics)) for r in reps])

    rat = report["ratios"]
    rat["read1 ours/kernel"] = summary(
        [ratio(get(r, "4096", "read1-oo", field), get(r, "4096", "read1-kk", field)) for r in reps])
    rat["read1 ours/floor"] = summary(
        [ratio(get(r, "4096", "read1-oo", field), floor(r, field, "read", 4096)) for r in reps])
    rat["read1 kernel/floor"] = summary(
        [ratio(get(r, "4096", "read1-kk", field), floor(r, field, "read", 4096)) for r in reps])
    rat["read32 IOPS ours/kernel"] = summary([
        ratio(get(r, "4096", "read32-oo", "iops"), get(r, "4096", "read32-kk", "iops"))
        for r in reps])
    for s, who in (("oo", "ours"), ("kk", "kernel")):
        rat["write1 8k ics16384/ics4096 %s" % who] = summary([
            ratio(get(r, "16384", "write1-8k-" + s, field), get(r, "4096", "write1-8k-" + s, field))
            for r in reps])
    # The same pair on the composed floor: send(64 + 8192) + send(16) against send(64) +
    # read(8192) + send(16). What in-capsule data can save on this link, at best.
    rat["write1 8k ics16384/ics4096 floor"] = summary([
        ratio(floor(r, field, "write", 8192, 16384), floor(r, field, "write", 8192, 4096))
        for r in reps])
    rat["read1 ours inline on/off"] = summary(
        [ratio(get(r, "4096", "read1-oo", field), get(r, "4096", "read1-oo-inline-off", field)) for r in reps])
    busy, event = ("read1-oo", "read1-oo-event") if POLL == "busy" else ("read1-oo-busy", "read1-oo")
    rat["read1 ours host poll busy/event"] = summary(
        [ratio(get(r, "4096", busy, field), get(r, "4096", event, field)) for r in reps])
    for s, who in (("oo", "our host"), ("ko", "kernel host")):
        rat["read1 %s: our target busy-poll window 1000/0 us" % who] = summary([
            ratio(get(r, "4096", "read1-" + s, field), get(r, "4096", "read1-%s-nowindow" % s, field))
            for r in reps])
    rat["read1 ours-host/kernel-host on kernel target"] = summary(
        [ratio(get(r, "4096", "read1-ok", field), get(r, "4096", "read1-kk", field)) for r in reps])
    rat["read1 kernel host: our target/kernel target"] = summary(
        [ratio(get(r, "4096", "read1-ko", field), get(r, "4096", "read1-kk", field)) for r in reps])

    targets = [
        ("read1 ours/kernel", "<=", 0.8),
        ("read1 ours/floor", "<=", 1.5),
        ("read32 IOPS ours/kernel", ">=", 1.0),
        ("write1 8k ics16384/ics4096 ours", "<=", 0.8),
    ]
    report["targets"] = []
    for name, op, bound in targets:
        s = rat.get(name)
        met = None if s is None else (s["median"] <= bound if op == "<=" else s["median"] >= bound)
        report["targets"].append({"ratio": name, "target": "%s %s" % (op, bound),
                                  "median": s and s["median"], "met": met})

    return report["cells"], report["ratios"], report["targets"]


def counter_checks(reps, cells, inline_off):
    """Checks of what the report states from the counters, one per repetition and cell: every
    write of our host in a write1-BS-oo cell went in-capsule when BS <= the target's in-capsule
    size (the cell's group) and keyed (RDMA READ) otherwise, counted over exactly the cell's
    measured I/Os; the inline-off cell posted no capsule inline when --max-inline-data was 0. A
    cell without counters fails its check; no checks at all is a failure too."""
    checks = []

    def add(name, rep, ok, detail):
        checks.append({"check": name, "rep": rep, "ok": bool(ok), "detail": detail})

    for rep in reps:
        for ics in ICS:
            for bs in SIZES:
                b = int(bs[:-1]) * 1024
                cell = "write1-%s-oo" % bs
                name = "%s/%s: every write %s" % (ics, cell,
                                                  "in-capsule" if b <= int(ics) else "keyed")
                v = cells.get((rep, ics, cell))
                if v is None or v.get("writes_in_capsule") is None:
                    add(name, rep, False, "no counters (the cell has no figure)")
                    continue
                ic, keyed, ios = v["writes_in_capsule"], v["writes_keyed"], v["ios"]
                want_ic, want_keyed = (ios, 0) if b <= int(ics) else (0, ios)
                add(name, rep, ios > 0 and ic == want_ic and keyed == want_keyed,
                    "%d I/Os: %d in-capsule, %d keyed" % (ios, ic, keyed))
        if inline_off == "0":
            v = cells.get((rep, "4096", "read1-oo-inline-off"))
            n = None if v is None else v.get("capsules_inline")
            add("4096/read1-oo-inline-off: no capsule posted inline", rep, n == 0,
                "no counters (the cell has no figure)" if n is None else
                "%d inline, %s by reference" % (n, v.get("capsules_by_reference")))
    return checks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--machine", default="")
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    raw = os.path.join(a.results, "raw")
    cells = {}  # (rep, group, cell) -> parsed
    failures = []
    with open(os.path.join(raw, "cells.tsv")) as f:
        for line in f:
            rep, group, cell, kind, path, rc = line.rstrip("\n").split("\t")
            direction = "write" if cell.startswith("write") else "read"
            if kind == "ours":
                v = parse_ours(path, direction)
            elif kind == "fio":
                v = parse_fio(path, direction)
            else:
                v = parse_perftest(path)
            if v is None or rc != "0":
                failures.append({"rep": int(rep), "group": group, "cell": cell, "rc": int(rc)})
                if rc != "0":
                    v = None
            cells[(int(rep), group, cell)] = v
    reps = sorted({k[0] for k in cells})

    def get(rep, group, cell, field="mean_us"):
        v = cells.get((rep, group, cell))
        return None if v is None else v.get(field)

    report = {"machine": a.machine, "command": a.command, "repetitions": len(reps),
              "failures": failures}
    inline_posts = [get(r, "4096", "read1-oo-inline-off", "capsules_inline") for r in reps]
    report["inline_off_capsules_inline"] = inline_posts
    inline_off = os.environ.get("BENCH_INLINE_OFF", "0")
    checks = counter_checks(reps, cells, inline_off)
    report["checks"] = checks
    failed_checks = [c for c in checks if not c["ok"]]
    for field, suffix in (("mean_us", ""), ("p50_us", "_p50")):
        cells_, rat_, targets_ = build(reps, get, field)
        report["cells" + suffix] = cells_
        report["ratios" + suffix] = rat_
        report["targets" + suffix] = targets_
    c = report["cells"]
    rat = report["ratios"]
    with open(os.path.join(a.results, "bench-report.json"), "w") as f:
        json.dump(report, f, indent=2)

    def cell(s, fmt="%.0f"):
        if s is None:
            return "n/a"
        return (fmt + " (" + fmt + "–" + fmt + ")") % (s["median"], s["min"], s["max"])

    c = report["cells"]
    md = []
    md.append("Median of %d interleaved repetitions, (min–max) across them. Latency: mean "
              "completion latency in µs per cell; IOPS at QD32. Our host: `nvmf-host bench "
              "--poll %s`; our target: `nvmf-target` defaults (`--poll event --busy-poll-us "
              "1000`); the kernel host: fio libaio direct=1." % (len(reps), POLL))
    md.append("")
    md.append("| QD1 4 KiB randread | mean latency µs | QD32 4 KiB randread IOPS |")
    md.append("|---|---|---|")
    for s, name in STACKS.items():
        md.append("| %s | %s | %s |" % (name, cell(c["read1-4k-" + s]),
                                         cell(c["read32-4k-%s-iops" % s])))
    md.append("| raw verbs floor (send 64 + write 4096 + send 16) | %s | |" %
              cell(c["read1-4k-floor"]))
    md.append("| our host, inline send off (`--max-inline-data %s`) | %s | |" %
              (os.environ.get("BENCH_INLINE_OFF", "0"), cell(c["read1-4k-oo-inline-off"])))
    md.append("| our host, `--poll %s` | %s | |" % (ALT_POLL, cell(c["read1-4k-oo-" + ALT_POLL])))
    md.append("| our host -> our target with `--busy-poll-us 0` | %s | |" %
              cell(c["read1-4k-oo-nowindow"]))
    md.append("| kernel host -> our target with `--busy-poll-us 0` | %s | |" %
              cell(c["read1-4k-ko-nowindow"]))
    md.append("")
    md.append("| QD1 randwrite, mean µs | " + " | ".join(
        "%s ics %s" % (who, ics) for who in ("ours", "kernel", "floor") for ics in ICS) + " |")
    md.append("|---" * (1 + 3 * len(ICS)) + "|")
    for bs in SIZES:
        row = [bs]
        for who in ("oo", "kk", "floor"):
            for ics in ICS:
                row.append(cell(c["write1-%s-ics%s-%s" % (bs, ics, who)]))
        md.append("| " + " | ".join(row) + " |")
    md.append("")
    md.append("| ratio, within each repetition | median (min–max) | target | met |")
    md.append("|---|---|---|---|")
    tmap = {t["ratio"]: t for t in report["targets"]}
    for name, s in rat.items():
        t = tmap.get(name)
        met = "" if t is None else ("n/a" if t["met"] is None else ("yes" if t["met"] else "no"))
        md.append("| %s | %s | %s | %s |" % (name, cell(s, "%.2f"), t["target"] if t else "", met))
    md.append("")
    md.append("The same ratios from median (p50) latencies (ours: clat p50, submission included; "
              "fio: clat p50, which leaves out io_submit; perftest: t_typical):")
    md.append("")
    md.append("| ratio from p50, within each repetition | median (min–max) | target | met |")
    md.append("|---|---|---|---|")
    tmap50 = {t["ratio"]: t for t in report["targets_p50"]}
    for name, s50 in report["ratios_p50"].items():
        t = tmap50.get(name)
        met = "" if t is None else ("n/a" if t["met"] is None else ("yes" if t["met"] else "no"))
        md.append("| %s | %s | %s | %s |" % (name, cell(s50, "%.2f"), t["target"] if t else "",
                                             met))
    md.append("")
    md.append("Capsules posted inline in the inline-off cell, per repetition: %s" %
              report["inline_off_capsules_inline"])
    md.append("")
    md.append("Counter checks (our host's path counters over each cell's measured I/Os): "
              "%d of %d pass%s" % (len(checks) - len(failed_checks), len(checks),
                                   "" if checks else " (no checks: a failure)"))
    for c_ in failed_checks:
        md.append("- FAILED r%d %s: %s" % (c_["rep"], c_["check"], c_["detail"]))
    if failures:
        md.append("")
        md.append("Cells without a figure: " + ", ".join(
            "r%d %s/%s (rc %d)" % (x["rep"], x["group"], x["cell"], x["rc"]) for x in failures))
    with open(os.path.join(a.results, "bench-report.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    with open(os.path.join(a.results, "plot.dat"), "w") as f:
        f.write("# KiB " + " ".join("ours%s kernel%s" % (i, i) for i in ICS) + "\n")
        for bs in SIZES:
            vals = []
            for ics in ICS:
                for who in ("oo", "kk"):
                    s = c["write1-%s-ics%s-%s" % (bs, ics, who)]
                    vals.append("NaN" if s is None else "%.1f" % s["median"])
            f.write("%s %s\n" % (bs[:-1], " ".join(vals)))
    print("\n".join(md))
    if not checks or failed_checks:
        print("report.py: %d of %d counter checks failed" % (len(failed_checks), len(checks)),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
