#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Collects the GoogleTest XML of every expected Bazel test from ONE `bazel test` invocation.

Usage: bazel-test-results.py BEP_JSON LABELS_FILE OUTDIR

BEP_JSON is that invocation's --build_event_json_file; LABELS_FILE lists the test labels that
should have run, one a line. For each label //pkg/sub:name the result is written to
OUTDIR/pkg_sub_name.xml (the name count-gtest-xml.py --expect looks for):
  - the test.xml this invocation reported (run now or cached), when Bazel says PASSED or FLAKY;
  - when Bazel reports any other status, that XML as well, plus pkg_sub_name.exit.xml with a
    failing testcase if the XML itself shows no failure (a binary that wrote a passing XML and
    then exited non-zero, or was killed by the timeout);
  - a failing testcase when the invocation reported no result for the label (it failed to
    build, or was never run). An older test.xml left in bazel-testlogs by an earlier build is
    never used: only files named in this invocation's build events count.
Exit status 0 when every label had a passing result.
"""
import json
import os
import shutil
import sys
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

PASSING = {"PASSED", "FLAKY"}


def result_name(label):
    rel = label.lstrip("/").replace(":", "/")
    return rel.replace("/", "_")


def failure_xml(path, suite, case, message):
    with open(path, "w") as f:
        f.write(f"<testsuites><testsuite name={quoteattr(suite)}><testcase classname={quoteattr(suite)}"
                f" name={quoteattr(case)}><failure message={quoteattr(message)}/></testcase>"
                "</testsuite></testsuites>\n")


def xml_has_failure(path):
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError):
        return True  # count-gtest-xml.py reports it as unreadable
    return any(c.find("failure") is not None or c.find("error") is not None
               for c in tree.iter("testcase"))


def read_bep(path):
    """{label: [(status, xml path or None)]}, the last attempt of each run and shard."""
    results = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            event = json.loads(line)
            key = event.get("id", {}).get("testResult")
            payload = event.get("testResult")
            if key is None or payload is None:
                continue
            xml = None
            for out in payload.get("testActionOutput", []):
                if out.get("name") == "test.xml" and out.get("uri", "").startswith("file://"):
                    xml = urllib.request.url2pathname(urllib.parse.urlparse(out["uri"]).path)
            slot = (key.get("run", 1), key.get("shard", 1))
            attempt = key.get("attempt", 1)
            per_label = results.setdefault(key["label"], {})
            if slot not in per_label or per_label[slot][0] <= attempt:
                per_label[slot] = (attempt, payload.get("status", "NO_STATUS"), xml)
    return {label: [(s, x) for _, s, x in slots.values()] for label, slots in results.items()}


def collect(bep_path, labels, outdir):
    os.makedirs(outdir, exist_ok=True)
    try:
        results = read_bep(bep_path)
    except (OSError, ValueError) as err:
        results = {}
        failure_xml(os.path.join(outdir, "bazel_build_events.xml"), "Bazel", "build_events",
                    f"cannot read {bep_path}: {err}")
    ok = True
    for label in labels:
        name = result_name(label)
        runs = results.get(label, [])
        if not runs:
            ok = False
            failure_xml(os.path.join(outdir, name + ".xml"), name, "no_result",
                        f"{label}: no test result in this bazel invocation (failed to build?)")
            continue
        for i, (status, xml) in enumerate(runs):
            stem = name if len(runs) == 1 else f"{name}.{i + 1}"
            have_xml = xml is not None and os.path.isfile(xml) and os.path.getsize(xml) > 0
            if have_xml:
                shutil.copyfile(xml, os.path.join(outdir, stem + ".xml"))
            if status in PASSING and have_xml:
                continue
            ok = False
            if not have_xml:
                failure_xml(os.path.join(outdir, stem + ".xml"), name, "no_xml",
                            f"{label}: bazel status {status} and no test.xml")
            elif not xml_has_failure(xml):
                failure_xml(os.path.join(outdir, stem + ".exit.xml"), name, "exit_status",
                            f"{label}: bazel status {status} but its XML shows no failure"
                            " (exited non-zero after writing it, or timed out)")
    return ok


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bep, labels_file, outdir = argv
    with open(labels_file) as f:
        labels = [line.strip() for line in f if line.strip()]
    return 0 if collect(bep, labels, outdir) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
