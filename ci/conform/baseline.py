#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Linux nvmet-rdma's conform verdicts against the checked-in baseline.

ci/conform/run.sh records each run of `nvmf-host conform` against Linux nvmet-rdma as
RESULTS/conform/linux-SIZE.json, and the guest kernel's release in linux-kernel.txt. Linux's
FAILs are its own deviations from the specification, not ours; what must not pass unnoticed
is a change: a case whose verdict differs from linux-baseline.json (for the kernel's
major.minor and the in-capsule size; an entry may list the verdicts of a case Linux answers
differently from run to run), or a case the baseline lacks. One JUnit testcase per
size, verdicts_match_baseline_icsSIZE, in RESULTS/conform-linux-baseline.xml.

Usage: baseline.py RESULTS            compare, write the JUnit file; exit 1 on a difference
       baseline.py RESULTS --write    record RESULTS' verdicts as the baseline (after a change
                                      of the cases or of the guest kernel, reviewed in git)
"""
import glob
import json
import os
import re
import sys
from xml.sax.saxutils import quoteattr

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "linux-baseline.json")


def runs(results):
    """{size: {case id: verdict}} of RESULTS' Linux conform runs, and the kernel's major.minor."""
    conform = os.path.join(results, "conform")
    with open(os.path.join(conform, "linux-kernel.txt")) as f:
        release = f.read().strip()
    m = re.match(r"(\d+\.\d+)", release)
    kernel = m.group(1) if m else release
    out = {}
    for path in sorted(glob.glob(os.path.join(conform, "linux-*.json"))):
        size = re.search(r"linux-(\d+)\.json$", path)
        if not size:
            continue
        with open(path) as f:
            cases = json.load(f)["cases"]
        out[size.group(1)] = {c["id"]: c["verdict"] for c in cases}
    return kernel, out


def allowed(w):
    """A baseline entry: one verdict, or the list of verdicts a case Linux answers differently
    from run to run may have (reconnect.io-queue on 6.1: Command Sequence Error on one of its
    quick I/O queue reconnects in some runs, none in others)."""
    return set(w) if isinstance(w, list) else {w}


def differences(want, got):
    """Lines naming every case whose verdict moved, appeared or went."""
    lines = []
    for cid in sorted(set(want) | set(got)):
        w, g = want.get(cid), got.get(cid)
        if w is None:
            lines.append(f"{cid}: {g}, not in the baseline")
        elif g is None:
            lines.append(f"{cid}: in the baseline ({w}), not run")
        elif g not in allowed(w):
            lines.append(f"{cid}: {g}, baseline {' or '.join(sorted(allowed(w)))}")
    return lines


def junit(path, cases):
    """cases: [(name, failure message or None)]."""
    body = []
    for name, failure in cases:
        if failure is None:
            body.append(f'<testcase classname="Conform_nvmet_rdma" name="{name}"/>')
        else:
            body.append(f'<testcase classname="Conform_nvmet_rdma" name="{name}">'
                        f"<failure message={quoteattr(failure)}/></testcase>")
    with open(path, "w") as f:
        f.write('<testsuites><testsuite name="Conform_nvmet_rdma">' + "".join(body) +
                "</testsuite></testsuites>\n")


def main(argv):
    if not argv or len(argv) > 2 or (len(argv) == 2 and argv[1] != "--write"):
        print("usage: ci/conform/baseline.py RESULTS [--write]", file=sys.stderr)
        return 2
    results = argv[0]
    kernel, got = runs(results)
    baseline = {}
    if os.path.exists(BASELINE):
        with open(BASELINE) as f:
            baseline = json.load(f)
    if len(argv) == 2:
        for size, verdicts in got.items():
            old = baseline.setdefault(kernel, {}).get(size, {})
            # A case recorded with several verdicts keeps them when this run gave one of them.
            baseline[kernel][size] = {
                cid: old[cid] if isinstance(old.get(cid), list) and v in old[cid] else v
                for cid, v in verdicts.items()}
        with open(BASELINE, "w") as f:
            json.dump(baseline, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"conform baseline: Linux {kernel}, sizes {' '.join(sorted(got))} recorded")
        return 0
    cases, bad = [], 0
    for size, verdicts in sorted(got.items()):
        name = f"verdicts_match_baseline_ics{size}"
        want = baseline.get(kernel, {}).get(size)
        if want is None:
            msg = f"no baseline for Linux {kernel} at in-capsule {size}: ci/conform/baseline.py --write"
            diff = [msg]
        else:
            diff = differences(want, verdicts)
        fails = sum(v == "FAIL" for v in verdicts.values())
        print(f"conform baseline: Linux {kernel} in-capsule {size}: {len(verdicts)} cases, "
              f"{fails} FAIL, {len(diff)} differences")
        for line in diff:
            print(f"  {line}")
        cases.append((name, "; ".join(diff) if diff else None))
        bad += bool(diff)
    if not got:
        cases.append(("verdicts_recorded", "no linux-SIZE.json in the results"))
        bad += 1
    junit(os.path.join(results, "conform-linux-baseline.xml"), cases)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
