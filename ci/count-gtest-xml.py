#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Counts GoogleTest XML results against the list of results that should exist.

Usage: count-gtest-xml.py [--expect FILE]... DIR...

Every *.xml under the DIRs is read (recursively). Each non-empty line of an --expect FILE names
one result that must be among them: NAME is satisfied by a file NAME.xml. Prints one
`  not passed: ...` line per problem, then

    SUMMARY: N passed, N failed, N skipped

and exits 0 only when nothing failed, nothing was skipped and at least one test passed.
These count as failures, not only in the exit status:
  - an expected result with no XML (a binary that never ran, crashed before writing, or was
    not built);
  - an XML that cannot be parsed, or that holds no testcase at all;
  - a run where nothing passed (`0 passed`).
Variables named GTEST_* or NVMF_* in the environment can narrow or change a run (a
GTEST_FILTER, say); the SUMMARY line names them, so a narrowed run is never mistaken for a
full one.
"""
import argparse
import glob
import os
import sys
import xml.etree.ElementTree as ET


def count(path):
    """(passed, failed, skipped, problem lines) of one GoogleTest XML file."""
    passed = failed = skipped = 0
    problems = []
    base = os.path.basename(path)
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError) as err:
        return 0, 1, 0, [f"{base}: unreadable XML ({err})"]
    cases = list(tree.iter("testcase"))
    if not cases:
        return 0, 1, 0, [f"{base}: no testcase in the XML"]
    for case in cases:
        name = f"{case.get('classname')}.{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            problems.append(name)
        elif (case.get("result") == "skipped" or case.get("status") == "notrun"
              or case.find("skipped") is not None):
            skipped += 1
            problems.append(name + " (skipped)")
        else:
            passed += 1
    return passed, failed, skipped, problems


def narrowing_environment(environ):
    """NAME=VALUE of every GTEST_*/NVMF_* variable, sorted."""
    return [f"{k}={v}" for k, v in sorted(environ.items())
            if k.startswith("GTEST_") or k.startswith("NVMF_")]


def summarize(dirs, expect_files=(), environ=None):
    """Returns (lines to print, exit status)."""
    environ = os.environ if environ is None else environ
    lines = []
    passed = failed = skipped = 0
    found = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "*.xml"), recursive=True)):
            found.setdefault(os.path.basename(path)[:-len(".xml")], path)
            p, f, s, problems = count(path)
            passed, failed, skipped = passed + p, failed + f, skipped + s
            lines += [f"  not passed: {n}" for n in problems]
    for expect in expect_files:
        try:
            with open(expect) as f:
                names = [line.strip() for line in f if line.strip()]
        except OSError as err:
            names = []
            failed += 1
            lines.append(f"  not passed: list of expected results unreadable ({err})")
        for name in names:
            if name not in found:
                failed += 1
                lines.append(f"  not passed: {name}: no result (did not run, crashed before"
                             " writing its XML, or was not built)")
    if passed == 0:
        failed += 1
        lines.append("  not passed: no test passed at all")
    summary = f"SUMMARY: {passed} passed, {failed} failed, {skipped} skipped"
    env = narrowing_environment(environ)
    if env:
        summary += "; from the caller's environment: " + " ".join(env)
    lines.append(summary)
    return lines, 0 if failed == 0 and skipped == 0 else 1


def main(argv):
    ap = argparse.ArgumentParser(prog="count-gtest-xml.py",
                                 description="Counts GoogleTest XML results (see the module doc).")
    ap.add_argument("--expect", action="append", default=[], metavar="FILE",
                    help="a file listing result names (NAME for NAME.xml) that must exist")
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    args = ap.parse_args(argv)
    lines, status = summarize(args.dirs, args.expect)
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
