#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of ci/conform/baseline.py on crafted results directories."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import baseline  # noqa: E402


def results(d, kernel, verdicts_by_size):
    os.makedirs(os.path.join(d, "conform"))
    with open(os.path.join(d, "conform", "linux-kernel.txt"), "w") as f:
        f.write(kernel + "\n")
    for size, verdicts in verdicts_by_size.items():
        cases = [{"id": cid, "verdict": v} for cid, v in verdicts.items()]
        with open(os.path.join(d, "conform", f"linux-{size}.json"), "w") as f:
            json.dump({"cases": cases, "summary": {}}, f)


class BaselineTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.saved = baseline.BASELINE
        baseline.BASELINE = os.path.join(self.tmp.name, "baseline.json")
        self.addCleanup(setattr, baseline, "BASELINE", self.saved)
        with open(baseline.BASELINE, "w") as f:
            json.dump({"6.1": {"4096": {"a": "pass", "b": "FAIL", "c": "not run",
                                        "r": ["FAIL", "pass"]}}}, f)

    def run_main(self, kernel, verdicts_by_size, *extra):
        d = os.path.join(self.tmp.name, f"r{len(os.listdir(self.tmp.name))}")
        results(d, kernel, verdicts_by_size)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = baseline.main([d, *extra])
        xml = ""
        if os.path.exists(os.path.join(d, "conform-linux-baseline.xml")):
            with open(os.path.join(d, "conform-linux-baseline.xml")) as f:
                xml = f.read()
        return rc, out.getvalue(), xml

    def test_the_same_verdicts_pass(self):
        rc, out, xml = self.run_main("6.1.0-57-amd64",
                                     {"4096": {"a": "pass", "b": "FAIL", "c": "not run", "r": "pass"}})
        self.assertEqual(rc, 0, out)
        self.assertIn("4 cases, 1 FAIL, 0 differences", out)
        rc, out, _ = self.run_main("6.1.0-57-amd64",
                                   {"4096": {"a": "pass", "b": "FAIL", "c": "not run", "r": "FAIL"}})
        self.assertEqual(rc, 0, out)
        rc, out, _ = self.run_main("6.1.0-57-amd64",
                                   {"4096": {"a": "pass", "b": "FAIL", "c": "not run", "r": "n/a"}})
        self.assertEqual(rc, 1, out)
        self.assertIn("r: n/a, baseline FAIL or pass", out)
        self.assertIn('name="verdicts_match_baseline_ics4096"/>', xml)

    def test_a_moved_new_or_missing_case_fails_naming_it(self):
        rc, out, xml = self.run_main("6.1.0-99-amd64",
                                     {"4096": {"a": "FAIL", "b": "FAIL", "d": "pass", "r": "pass"}})
        self.assertEqual(rc, 1, out)
        self.assertIn("a: FAIL, baseline pass", out)
        self.assertIn("c: in the baseline (not run), not run", out)
        self.assertIn("d: pass, not in the baseline", out)
        self.assertIn("<failure message=", xml)

    def test_a_kernel_or_size_without_baseline_fails(self):
        rc, out, _ = self.run_main("6.12.5-amd64", {"4096": {"a": "pass"}})
        self.assertEqual(rc, 1, out)
        self.assertIn("no baseline for Linux 6.12 at in-capsule 4096", out)
        rc, out, _ = self.run_main("6.1.0-57-amd64", {"0": {"a": "pass"}})
        self.assertEqual(rc, 1, out)

    def test_no_run_recorded_fails(self):
        rc, out, xml = self.run_main("6.1.0-57-amd64", {})
        self.assertEqual(rc, 1, out)
        self.assertIn('name="verdicts_recorded"', xml)

    def test_write_keeps_the_verdicts_of_a_case_that_varies(self):
        rc, out, _ = self.run_main("6.1.0-57-amd64",
                                   {"4096": {"a": "FAIL", "b": "FAIL", "c": "not run", "r": "pass"}},
                                   "--write")
        self.assertEqual(rc, 0, out)
        with open(baseline.BASELINE) as f:
            b = json.load(f)
        self.assertEqual(b["6.1"]["4096"]["r"], ["FAIL", "pass"])
        self.assertEqual(b["6.1"]["4096"]["a"], "FAIL")

    def test_write_records_a_new_kernel_beside_the_old(self):
        rc, out, _ = self.run_main("6.12.5-amd64", {"4096": {"a": "FAIL"}}, "--write")
        self.assertEqual(rc, 0, out)
        with open(baseline.BASELINE) as f:
            b = json.load(f)
        self.assertEqual(b["6.12"]["4096"], {"a": "FAIL"})
        self.assertEqual(b["6.1"]["4096"]["b"], "FAIL")
        self.assertEqual(self.run_main("6.12.5-amd64", {"4096": {"a": "FAIL"}})[0], 0)


if __name__ == "__main__":
    unittest.main()
