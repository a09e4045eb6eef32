#!/usr/bin/env python3
"""Prints the README's conformance table from the JSON reports of ci/conform/run.sh.

Usage: readme-table.py RESULTS_DIR/conform
Reads ours-SIZE.json (nvmf-target, one per in-capsule size) and linux-4096.json (Linux
nvmet-rdma), and prints Markdown: a summary line per run, one row per case with both targets
side by side, then every case where Linux's answer differs from the specification.
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


def main(d):
    ours = {}
    for p in glob.glob(os.path.join(d, "ours-*.json")):
        size = int(re.search(r"ours-(\d+)\.json$", p).group(1))
        ours[size] = load(p)
    linux_path = os.path.join(d, "linux-4096.json")
    linux = load(linux_path) if os.path.exists(linux_path) else None
    kernel = ""
    kpath = os.path.join(d, "linux-kernel.txt")
    if os.path.exists(kpath):
        kernel = open(kpath).read().strip()
    sizes = sorted(ours)
    runs = [(f"nvmf-target, in-capsule {s}", ours[s]) for s in sizes]
    if linux:
        runs.append((f"Linux {kernel} nvmet-rdma, in-capsule 4096", linux))
    for name, r in runs:
        s = r["summary"]
        print(f"- {name}: {s['cases']} cases, {s['pass']} pass, {s['fail']} fail "
              f"({s['must_fail']} must, {s['should_fail']} should), {s['not_applicable']} n/a, "
              f"{s['not_run']} not run; {s['seconds']:.0f} s")
    print()
    index = {s: {c["id"]: c for c in ours[s]["cases"]} for s in sizes}
    lindex = {c["id"]: c for c in linux["cases"]} if linux else {}
    order = ours[sizes[0]]["cases"] if sizes else linux["cases"]
    print("| case | level | spec | nvmf-target (in-capsule " + " / ".join(map(str, sizes)) +
          ") | Linux nvmet-rdma (in-capsule 4096) |")
    print("|---|---|---|---|---|")
    for c in order:
        cid = c["id"]
        cells = [cell(index[s].get(cid)) for s in sizes]
        ours_cell = cells[0] if len(set(cells)) == 1 else " / ".join(cells)
        print(f"| `{cid}` | {c['level']} | {md(c['spec'])} | {md(ours_cell)} | "
              f"{md(cell(lindex.get(cid)))} |")
    if linux:
        print()
        print("Where Linux differs from the specification (its FAIL rows):")
        print()
        for c in linux["cases"]:
            if c["verdict"] != "FAIL":
                continue
            print(f"- `{c['id']}` ({c['level']}, {c['spec']}): {c['description']}. Sent: "
                  f"{c['sends']}. Linux answered: {c['got']}. Conforming: {c['expect']}.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
