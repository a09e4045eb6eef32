#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prints the conformance table of docs/conformance.md from the JSON reports of ci/conform/run.sh.

Usage: readme-table.py RESULTS_DIR/conform
Reads ours-SIZE.json (nvmf-target) and linux-SIZE.json (Linux nvmet-rdma), one per in-capsule
size, and prints Markdown: a summary line per run, one row per case with both targets side by
side (one cell per target when every size gave the same verdict, else the verdicts per size
joined by " / "), then every case where Linux's answer differs from the specification.
"""
import glob
import json
import os
import re
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def cell(case):
    if case is None:
        return "-"
    v = case["verdict"]
    if v == "pass":
        return "pass"
    if v == "not run":
        return "not run (dangerous)"
    return f"{v}: {case['got']}"


def md(text):
    return text.replace("|", "\\|")


def by_size(d, prefix):
    runs = {}
    for p in glob.glob(os.path.join(d, prefix + "-*.json")):
        m = re.search(prefix + r"-(\d+)\.json$", p)
        if m:
            runs[int(m.group(1))] = load(p)
    return runs


def joined(index, sizes, cid):
    cells = [cell(index[s].get(cid)) for s in sizes]
    return cells[0] if len(set(cells)) == 1 else " / ".join(cells)


def table(d):
    """The Markdown lines of the table."""
    out = []
    print = out.append  # noqa: A001 (the lines, in the order main prints them)
    ours = by_size(d, "ours")
    linux = by_size(d, "linux")
    kernel = ""
    kpath = os.path.join(d, "linux-kernel.txt")
    if os.path.exists(kpath):
        kernel = open(kpath).read().strip()
    sizes = sorted(ours)
    lsizes = sorted(linux)
    runs = [(f"nvmf-target, in-capsule {s}", ours[s]) for s in sizes]
    runs += [(f"Linux {kernel} nvmet-rdma, in-capsule {s}", linux[s]) for s in lsizes]
    for name, r in runs:
        s = r["summary"]
        print(f"- {name}: {s['cases']} cases, {s['pass']} pass, {s['fail']} fail "
              f"({s['must_fail']} must, {s['should_fail']} should), {s['not_applicable']} n/a, "
              f"{s['not_run']} not run; {s['seconds']:.0f} s")
    print("")
    index = {s: {c["id"]: c for c in ours[s]["cases"]} for s in sizes}
    lindex = {s: {c["id"]: c for c in linux[s]["cases"]} for s in lsizes}
    order = ours[sizes[0]]["cases"] if sizes else linux[lsizes[0]]["cases"]
    print("| case | level | spec | nvmf-target (in-capsule " + " / ".join(map(str, sizes)) +
          ") | Linux nvmet-rdma (in-capsule " + " / ".join(map(str, lsizes)) + ") |")
    print("|---|---|---|---|---|")
    for c in order:
        cid = c["id"]
        print(f"| `{cid}` | {c['level']} | {md(c['spec'])} | {md(joined(index, sizes, cid))} | "
              f"{md(joined(lindex, lsizes, cid) if lsizes else '-')} |")
    if lsizes:
        print("")
        print("Where Linux differs from the specification (its FAIL rows; the in-capsule sizes "
              "named when not every size failed the same way):")
        print("")
        for c in linux[lsizes[0]]["cases"]:
            cid = c["id"]
            answers = {}
            for s in lsizes:
                lc = lindex[s].get(cid)
                if lc is not None and lc["verdict"] == "FAIL":
                    answers.setdefault(lc["got"], []).append(s)
            if not answers:
                continue
            if len(answers) == 1 and len(next(iter(answers.values()))) == len(lsizes):
                got = next(iter(answers))
            else:
                got = "; ".join(f"{g} (in-capsule {', '.join(map(str, ss))})"
                                for g, ss in answers.items())
            print(f"- `{cid}` ({c['level']}, {c['spec']}): {c['description']}. Sent: "
                  f"{c['sends']}. Linux answered: {got}. Conforming: {c['expect']}.")
    return out


def main(d):
    for line in table(d):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
