#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the raw cells of ci/bench/backends-guest.sh into backends-report.json and
backends-report.md (file and block-device namespaces, our target against nvmet).

Usage: ci/bench/backends-report.py RESULTS_DIR [--machine TEXT] [--command TEXT]
Reads RESULTS_DIR/raw-backends/cells.tsv and the files it names.

Figures: QD1 cells are fio's mean completion latency in µs (lat_ns: submission included); QD32
cells are IOPS. Each cell gives the median of the repetitions and the min-max spread. Ratios
(ours / nvmet) are taken inside each repetition, then summarised the same way. The Flush cells:
nvmf-host bench's mean QD1 4 KiB read latency (clat_ns) idle and while another host's Flush runs
on the same nvmf-target process, their ratio per repetition, and how long the Flush took.
The RAM baseline (our target's RAM namespace, same host, same repetition) gives two more
ratios per repetition: ours RAM / nvmet bdev, and ours bdev / ours RAM (the cost of our backend
path). With NVMF_BENCH_VARIANT (or NVMF_BENCH_URING both), the cells of target "oursv"
(nvmf-target with the variant's options, RESULTS_DIR/raw-backends/variant.txt) get a table of
their own: their figures, variant / defaults (against "ours") and variant / nvmet per
repetition, and their Flush cell. Exit status 1
when the Flush cell's goal (read latency during the Flush <= 2x idle, median
of the repetitions) is not met or has no figure.
"""
import argparse
import json
import os
import statistics
import sys

BACKENDS = {"bdev": "block device (null_blk)", "file": "file on ext4 (on null_blk)"}
CELLS = {
    "read1": ("QD1 4 KiB randread, mean µs", "read", "lat"),
    "write1": ("QD1 4 KiB randwrite, mean µs", "write", "lat"),
    "read32": ("QD32 4 KiB randread, IOPS", "read", "iops"),
    "write32": ("QD32 4 KiB randwrite, IOPS", "write", "iops"),
}
GOALS = {  # (cell, backend) -> (ratio ours/nvmet, comparison, goal)
    ("read32", "bdev"): (">=", 1.0),
    ("write32", "bdev"): (">=", 1.0),
    ("read1", "bdev"): ("<=", 0.8),
    ("write1", "bdev"): ("<=", 0.8),
    ("read1", "file"): ("<=", 0.8),
    ("write1", "file"): ("<=", 0.8),
}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fio_figure(path, direction, kind):
    j = load(path)
    if not j or not j.get("jobs"):
        return None
    d = j["jobs"][0][direction]
    if d.get("total_ios", 0) == 0 or j["jobs"][0].get("error", 0) != 0:
        return None
    return d["lat_ns"]["mean"] / 1e3 if kind == "lat" else d["iops"]


def ours_mean_us(path):
    j = load(path)
    if not j or not j.get("results"):
        return None
    d = j["results"][0]["all"]["read"]
    return d["clat_ns"]["mean"] / 1e3 if d["total_ios"] else None


def summary(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def fmt(s, digits=0):
    if not s:
        return "n/a"
    f = f"{{:.{digits}f}}"
    return f"{f.format(s['median'])} ({f.format(s['min'])}–{f.format(s['max'])})"


def variant_section(fig, reps, options):
    """The "oursv" cells (nvmf-target with `options`) against "ours" (the defaults) and nvmet:
    markdown lines and the report's "variant" object; nothing when the run had none."""
    if not any(k[2] == "oursv" for k in fig):
        return [], None

    def ratio(num, den, backend, cell):
        out = []
        for r in reps:
            n, d = fig.get((r, backend, num, cell)), fig.get((r, backend, den, cell))
            out.append(n / d if n is not None and d else None)
        return summary(out)

    md = ["", f"Variant: nvmf-target with `{options}` next to the defaults and nvmet in the same "
          "repetitions; ratios inside each repetition.", "",
          "| backend | cell | defaults | variant | variant / defaults | variant / nvmet | goal | "
          "met (variant) |",
          "|---|---|---|---|---|---|---|---|"]
    out = {"options": options, "cells": {}, "flush": {}}
    for backend, bname in BACKENDS.items():
        for cell, (title, _, kind) in CELLS.items():
            off = summary([fig.get((r, backend, "ours", cell)) for r in reps])
            on = summary([fig.get((r, backend, "oursv", cell)) for r in reps])
            on_off = ratio("oursv", "ours", backend, cell)
            on_k = ratio("oursv", "kernel", backend, cell)
            out["cells"][f"{backend}/{cell}"] = {"defaults": off, "variant": on,
                                                 "variant_over_defaults": on_off,
                                                 "variant_over_nvmet": on_k,
                                                 "unit": "us" if kind == "lat" else "IOPS"}
            goal, met = "", ""
            if (cell, backend) in GOALS and on_k:
                op, g = GOALS[(cell, backend)]
                goal = f"{op} {g}"
                met = "yes" if (on_k["median"] >= g if op == ">=" else on_k["median"] <= g) else "no"
            md.append(f"| {bname} | {title} | {fmt(off)} | {fmt(on)} | {fmt(on_off, 2)} | "
                      f"{fmt(on_k, 2)} | {goal} | {met} |")
    idle = [fig.get((r, "flush", "oursv", "read1-idle")) for r in reps]
    during = [fig.get((r, "flush", "oursv", "read1-during-flush")) for r in reps]
    fms = [fig.get((r, "flush", "oursv", "flush-ms")) for r in reps]
    fr = summary([d / i if d is not None and i else None for d, i in zip(during, idle)])
    out["flush"] = {"read1_idle_us": summary(idle), "read1_during_flush_us": summary(during),
                    "flush_ms": summary(fms), "ratio_during_over_idle": fr}
    md += ["", "| Flush cell, variant | figure |", "|---|---|",
           f"| QD1 4 KiB randread idle, mean µs | {fmt(summary(idle))} |",
           f"| the same during the Flush, mean µs | {fmt(summary(during))} |",
           f"| ratio during / idle (goal <= 2) | {fmt(fr, 2)}"
           f"{'' if not fr else (' yes' if fr['median'] <= 2 else ' no')} |",
           f"| Flush duration, ms | {fmt(summary(fms))} |"]
    return md, out


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--machine", default="")
    ap.add_argument("--command", default="ci/bench-compare.sh --backends")
    a = ap.parse_args(argv)
    raw = os.path.join(a.results, "raw-backends")
    rows = []
    with open(os.path.join(raw, "cells.tsv")) as f:
        for line in f:
            rep, backend, target, cell, path, rc = line.rstrip("\n").split("\t")
            rows.append((int(rep), backend, target, cell, path, int(rc)))
    fig = {}  # (rep, backend, target, cell) -> figure
    missing = []
    for rep, backend, target, cell, path, rc in rows:
        if backend == "flush":
            if cell == "flush-ms":
                try:
                    v = float(open(path).read()) if rc == 0 else None
                except (OSError, ValueError):
                    v = None
            else:
                v = ours_mean_us(path) if rc == 0 else None
        else:
            _, direction, kind = CELLS[cell]
            v = fio_figure(path, direction, kind) if rc == 0 else None
        if v is None:
            missing.append(f"r{rep} {backend}/{target}/{cell} (rc {rc})")
        fig[(rep, backend, target, cell)] = v
    reps = sorted({r[0] for r in rows})
    report = {"machine": a.machine, "command": a.command, "repetitions": len(reps),
              "cells": {}, "ratios": {}, "flush": {}, "missing": missing}
    md = [f"Command: `{a.command}`. Machine: {a.machine}.", "",
          "Median of the repetitions, (min–max). The Linux host (fio libaio direct=1) against "
          "each target; ours/nvmet ratio taken inside each repetition.", "",
          "| backend | cell | nvmf-target | nvmet | ours/nvmet | goal | met |",
          "|---|---|---|---|---|---|---|"]
    for backend, bname in BACKENDS.items():
        for cell, (title, _, kind) in CELLS.items():
            ours = summary([fig.get((r, backend, "ours", cell)) for r in reps])
            kern = summary([fig.get((r, backend, "kernel", cell)) for r in reps])
            ratios = []
            for r in reps:
                o, k = fig.get((r, backend, "ours", cell)), fig.get((r, backend, "kernel", cell))
                ratios.append(o / k if o is not None and k else None)
            rs = summary(ratios)
            key = f"{backend}/{cell}"
            report["cells"][key] = {"ours": ours, "nvmet": kern, "unit": "us" if kind == "lat" else "IOPS"}
            report["ratios"][key] = rs
            goal, met = "", ""
            if (cell, backend) in GOALS and rs:
                op, g = GOALS[(cell, backend)]
                goal = f"{op} {g}"
                met = "yes" if (rs["median"] >= g if op == ">=" else rs["median"] <= g) else "no"
            md.append(f"| {bname} | {title} | {fmt(ours)} | {fmt(kern)} | {fmt(rs, 2)} | {goal} | {met} |")
    idle = [fig.get((r, "flush", "ours", "read1-idle")) for r in reps]
    during = [fig.get((r, "flush", "ours", "read1-during-flush")) for r in reps]
    fms = [fig.get((r, "flush", "ours", "flush-ms")) for r in reps]
    fr = [d / i if d is not None and i else None for d, i in zip(during, idle)]
    report["flush"] = {"read1_idle_us": summary(idle), "read1_during_flush_us": summary(during),
                       "flush_ms": summary(fms), "ratio_during_over_idle": summary(fr)}
    frs = summary(fr)
    try:
        with open(os.path.join(raw, "variant.txt")) as f:
            options = f.read().strip()
    except OSError:
        options = ""
    variant_md, report["variant"] = variant_section(fig, reps, options)
    # The RAM baseline: ours only (nvmet has no RAM namespace; its reference is its null_blk).
    md += ["", "RAM baseline: our target's RAM namespace read and written by the same Linux host in "
           "the same repetitions; ratios inside each repetition.", "",
           "| cell | nvmf-target RAM | ours RAM / nvmet bdev | ours bdev / ours RAM | "
           "ours file / ours RAM | nvmet file / nvmet bdev |", "|---|---|---|---|---|---|"]
    report["ram"] = {}
    for cell, (title, _, kind) in CELLS.items():
        def per_rep(num, den):
            out = []
            for r in reps:
                n, d = fig.get((r,) + num + (cell,)), fig.get((r,) + den + (cell,))
                out.append(n / d if n is not None and d else None)
            return summary(out)
        ram = summary([fig.get((r, "ram", "ours", cell)) for r in reps])
        r1 = per_rep(("ram", "ours"), ("bdev", "kernel"))
        r2 = per_rep(("bdev", "ours"), ("ram", "ours"))
        r3 = per_rep(("file", "ours"), ("ram", "ours"))
        r4 = per_rep(("file", "kernel"), ("bdev", "kernel"))
        report["ram"][cell] = {"ours_ram": ram, "ours_ram_over_nvmet_bdev": r1,
                               "ours_bdev_over_ours_ram": r2, "ours_file_over_ours_ram": r3,
                               "nvmet_file_over_nvmet_bdev": r4,
                               "unit": "us" if kind == "lat" else "IOPS"}
        md.append(f"| {title} | {fmt(ram)} | {fmt(r1, 2)} | {fmt(r2, 2)} | {fmt(r3, 2)} | "
                  f"{fmt(r4, 2)} |")
    flush_met = bool(frs) and frs["median"] <= 2
    report["flush"]["goal"] = {"ratio_during_over_idle_max": 2, "met": flush_met}
    md += ["", "| Flush cell (one nvmf-target process, two subsystems) | figure |", "|---|---|",
           f"| nvmf-host QD1 4 KiB randread, idle, mean µs | {fmt(summary(idle))} |",
           f"| the same while the Linux host's Flush of 64 MiB (16 MB/s null_blk) runs, mean µs | "
           f"{fmt(summary(during))} |",
           f"| ratio during / idle (goal <= 2) | {fmt(frs, 2)}"
           f"{'' if not frs else (' yes' if frs['median'] <= 2 else ' no')} |",
           f"| Flush duration, ms | {fmt(summary(fms))} |"]
    md += variant_md
    if missing:
        md += ["", "Cells without a figure: " + ", ".join(missing)]
    with open(os.path.join(a.results, "backends-report.json"), "w") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(a.results, "backends-report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    if not flush_met:
        print("backends-report.py: the Flush cell's goal (reads during a Flush <= 2x idle) is "
              "not met or has no figure", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
