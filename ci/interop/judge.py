#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Judges an interop run on the host: runs the field comparisons that ci/interop/run.sh recorded
as "judge" rows (compare.py), then writes every check as a GoogleTest-style testcase into
RESULTS_DIR/interop.xml, with the check's log tail as the failure text.

Usage: judge.py RESULTS_DIR     (exit 0 when every check passed)
"""
import contextlib
import io
import os
import sys
from xml.sax.saxutils import escape, quoteattr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def run_judge(args, logf):
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            rc = compare.main(args)
    except Exception as e:  # a missing or malformed output file is a failed check
        print(f"BAD {type(e).__name__}: {e}", file=buf)
        rc = 1
    with open(logf, "w") as f:
        f.write(buf.getvalue())
    return rc


def main(results):
    cases_path = os.path.join(results, "interop", "cases.tsv")
    rows = []
    if os.path.exists(cases_path):
        for line in open(cases_path):
            parts = line.rstrip("\n").split("\t")
            suite, name, rc, logf = parts[:4]
            rc = run_judge(parts[4:], logf) if rc == "judge" else int(rc)
            rows.append((suite, name, rc, logf))
    if not any(s == "Interop" and n == "completed" for s, n, _, _ in rows):
        rows.append(("Interop", "completed", 1, cases_path))
    suites = {}
    for suite, name, rc, logf in rows:
        suites.setdefault(suite, []).append((name, rc, logf))
    out = ["<testsuites>"]
    failed = 0
    for suite, items in suites.items():
        out.append(f"<testsuite name={quoteattr(suite)}>")
        for name, rc, logf in items:
            if rc == 0:
                out.append(f"<testcase classname={quoteattr(suite)} name={quoteattr(name)}/>")
                continue
            failed += 1
            tail = ""
            if os.path.exists(logf):
                tail = "".join(open(logf, errors="replace").readlines()[-20:])
            print(f"interop: FAIL {suite}.{name}\n{tail}", file=sys.stderr)
            out.append(f"<testcase classname={quoteattr(suite)} name={quoteattr(name)}>"
                       f"<failure message={quoteattr(f'exit {rc}')}>{escape(tail)}</failure>"
                       "</testcase>")
        out.append("</testsuite>")
    out.append("</testsuites>")
    with open(os.path.join(results, "interop.xml"), "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"interop: {len(rows)} checks, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
