#!/usr/bin/env python3
"""Counts GoogleTest XML results (passed, failed, skipped) in the given directories."""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def count(path):
    passed = failed = skipped = 0
    failures = []
    try:
        tree = ET.parse(path)
    except ET.ParseError as err:
        return 0, 1, 0, [f"{os.path.basename(path)}: unreadable XML ({err})"]
    for case in tree.iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(name)
        elif (case.get("result") == "skipped" or case.get("status") == "notrun"
              or case.find("skipped") is not None):
            skipped += 1
            failures.append(name + " (skipped)")
        else:
            passed += 1
    return passed, failed, skipped, failures


def main(dirs):
    total = [0, 0, 0]
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "*.xml"), recursive=True)):
            p, f, s, names = count(path)
            total[0] += p
            total[1] += f
            total[2] += s
            for n in names:
                print(f"  not passed: {n}")
    print(f"SUMMARY: {total[0]} passed, {total[1]} failed, {total[2]} skipped")


if __name__ == "__main__":
    main(sys.argv[1:])
