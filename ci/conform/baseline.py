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
Wrong usage, or a results or baseline file that is missing, unreadable or not what it should
be: one line on stderr ("usage: ..." or "baseline.py: ..."), exit 2.
"""
import glob
import json
import os
import re
import sys
from xml.sax.saxutils import quoteattr

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "linux-baseline.json")
USAGE = "usage: ci/conform/baseline.py RESULTS [--write]"


class BadInput(Exception):
    """A results or baseline file missing, unreadable or malformed: main() prints it, exit 2."""


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from e


def read_json(path):
    text = read_text(path)
    try:
        return json.loads(text)
    except ValueError as e:
        raise BadInput(f"{path} is not JSON: {e}") from e


def runs(results):
    """{size: {case id: verdict}} of RESULTS' Linux conform runs, and the kernel's major.minor."""
    if not os.path.isdir(results):
        raise BadInput(f"RESULTS {results} is not a directory")
    conform = os.path.join(results, "conform")
    release = read_text(os.path.join(conform, "linux-kernel.txt")).strip()
    m = re.match(r"(\d+\.\d+)", release)
    kernel = m.group(1) if m else release
    out = {}
    for path in sorted(glob.glob(os.path.join(conform, "linux-*.json"))):
        size = re.search(r"linux-(\d+)\.json$", path)
        if not size:
            continue
        report = read_json(path)
        cases = report.get("cases") if isinstance(report, dict) else None
        if not isinstance(cases, list) or not all(
                isinstance(c, dict) and isinstance(c.get("id"), str) and
                isinstance(c.get("verdict"), str) for c in cases):
            raise BadInput(f'{path} has no "cases" list of {{"id", "verdict"}} objects')
        out[size.group(1)] = {c["id"]: c["verdict"] for c in cases}
    return kernel, out


def read_baseline():
    """{kernel: {size: {case id: verdict or [verdicts]}}}; {} when there is no baseline file."""
    if not os.path.exists(BASELINE):
        return {}
    baseline = read_json(BASELINE)
    if not isinstance(baseline, dict) or not all(
            isinstance(sizes, dict) and all(isinstance(v, dict) for v in sizes.values())
            for sizes in baseline.values()):
        raise BadInput(f"{BASELINE} is not a {{kernel: {{size: {{case: verdict}}}}}} object")
    return baseline


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
    if (not argv or len(argv) > 2 or argv[0].startswith("-") or
            (len(argv) == 2 and argv[1] != "--write")):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        return compare_or_write(argv[0], len(argv) == 2)
    except BadInput as e:
        print(f"baseline.py: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # the JUnit file or the baseline could not be written
        print(f"baseline.py: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return 2


def compare_or_write(results, write):
    kernel, got = runs(results)
    baseline = read_baseline()
    if write:
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
