#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of ci/interop/compare.py's deep-writes verdicts (deep, hostbench) on crafted reports."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def fio(iops, writes=100, verified=90, error=0, warning=""):
    """A fio --output-format=json report of one group-reported job (fio may print a warning
    line before the JSON)."""
    job = {"jobname": "j", "error": error,
           "write": {"iops": iops, "total_ios": writes,
                     "clat_ns": {"max": 5e8, "percentile": {"99.000000": 4e8}}},
           "read": {"iops": 0.0, "total_ios": verified}}
    return warning + json.dumps({"jobs": [job]})


def bench(iops, verified=4096, verify_errors=0, losses=0, error=""):
    """An nvmf-host bench --json report with one block size."""
    return json.dumps({
        "results": [{"all": {"write": {"iops": iops, "total_ios": 1000,
                                       "clat_ns": {"percentile": {"99.000000": 3e8}}}}}],
        "verify": {"checked": verified, "errors": verify_errors},
        "recovery": {"losses": losses}, "error": error})


class DeepWritesTest(unittest.TestCase):
    def verdict(self, fn, ours, nvmet, need="0.8"):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, text in (("ours.json", ours), ("nvmet.json", nvmet)):
                paths.append(os.path.join(d, name))
                with open(paths[-1], "w") as f:
                    f.write(text)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = fn(paths[0], paths[1], need)
        return rc, out.getvalue()

    def test_fio_passes_at_the_ratio_and_fails_below_it(self):
        rc, out = self.verdict(compare.deep, fio(80.0), fio(100.0))
        self.assertEqual(rc, 0, out)
        self.assertIn("ok  nvmf-target / nvmet-rdma write IOPS 0.80", out)
        rc, out = self.verdict(compare.deep, fio(79.0), fio(100.0))
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD nvmf-target / nvmet-rdma write IOPS 0.79", out)

    def test_fio_warning_before_the_json_is_skipped(self):
        rc, out = self.verdict(compare.deep,
                               fio(120.0, warning="fio: multiple writers may overwrite\n"),
                               fio(100.0))
        self.assertEqual(rc, 0, out)

    def test_fio_without_verified_reads_or_with_an_error_fails(self):
        rc, out = self.verdict(compare.deep, fio(120.0, verified=0), fio(100.0))
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD nvmf-target: verified inside the run", out)
        rc, out = self.verdict(compare.deep, fio(120.0), fio(100.0, error=5))
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD nvmet-rdma: fio error 0", out)

    def verdict_rounds(self, ours, nvmet, need="0.8"):
        """compare.deep over several rounds per target (comma-separated reports)."""
        with tempfile.TemporaryDirectory() as d:
            lists = []
            for name, texts in (("ours", ours), ("nvmet", nvmet)):
                paths = []
                for i, text in enumerate(texts):
                    paths.append(os.path.join(d, f"{name}-{i}.json"))
                    with open(paths[-1], "w") as f:
                        f.write(text)
                lists.append(",".join(paths))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = compare.deep(lists[0], lists[1], need)
        return rc, out.getvalue()

    def test_rounds_are_judged_on_their_medians(self):
        # Two rounds: the median is the mean, (70 + 110) / 2 = 90 against 100.
        rc, out = self.verdict_rounds([fio(70.0), fio(110.0)], [fio(100.0), fio(100.0)])
        self.assertEqual(rc, 0, out)
        self.assertIn("write IOPS 0.90 (medians of 2 and 2 rounds: 90.0 / 100.0)", out)
        # (70 + 88) / 2 = 79 against 100 fails.
        rc, out = self.verdict_rounds([fio(70.0), fio(88.0)], [fio(100.0), fio(100.0)])
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD nvmf-target / nvmet-rdma write IOPS 0.79", out)
        # Three rounds: one disturbed round of either target weighs nothing; two slow ones fail.
        rc, out = self.verdict_rounds([fio(50.0), fio(95.0), fio(100.0)],
                                      [fio(100.0), fio(300.0), fio(100.0)])
        self.assertEqual(rc, 0, out)
        self.assertIn("write IOPS 0.95 (medians of 3 and 3 rounds: 95.0 / 100.0)", out)
        rc, out = self.verdict_rounds([fio(50.0), fio(70.0), fio(100.0)],
                                      [fio(100.0), fio(100.0), fio(100.0)])
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD nvmf-target / nvmet-rdma write IOPS 0.70", out)

    def test_every_round_must_pass_its_checks(self):
        rc, out = self.verdict_rounds([fio(120.0), fio(120.0, verified=0)],
                                      [fio(100.0), fio(100.0)])
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD nvmf-target round 2: verified inside the run", out)
        self.assertIn("ok  nvmf-target round 1: verified inside the run", out)

    def test_nvmet_without_writes_is_no_baseline(self):
        rc, out = self.verdict(compare.deep, fio(120.0), fio(0.0, writes=0))
        self.assertEqual(rc, 1, out)

    def test_hostbench_checks_losses_verify_and_ratio(self):
        self.assertEqual(self.verdict(compare.hostbench, bench(90.0), bench(100.0))[0], 0)
        rc, out = self.verdict(compare.hostbench, bench(90.0, losses=1), bench(100.0))
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD nvmf-target: no queue lost", out)
        rc, out = self.verdict(compare.hostbench, bench(90.0), bench(100.0, verify_errors=2))
        self.assertEqual(rc, 1, out)
        rc, out = self.verdict(compare.hostbench, bench(70.0), bench(100.0))
        self.assertEqual(rc, 1, out)


def fio_reads(p99_ms, reads=1000, error=0):
    """A fio JSON report of a QD1 randread job."""
    job = {"jobname": "victim", "error": error,
           "read": {"iops": 500.0, "total_ios": reads,
                    "clat_ns": {"max": 1e8, "percentile": {"99.000000": p99_ms * 1e6}}},
           "write": {"iops": 0.0, "total_ios": 0}}
    return json.dumps({"jobs": [job]})


class FairShareTest(unittest.TestCase):
    def run_fn(self, fn, texts, *args):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, text in enumerate(texts):
                paths.append(os.path.join(d, f"{i}.json"))
                with open(paths[-1], "w") as f:
                    f.write(text)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = fn(*paths, *args)
        return rc, out.getvalue()

    def test_victim_p99_within_the_factor_of_alone(self):
        rc, out = self.run_fn(compare.victim, [fio_reads(0.5), fio_reads(1.5)], "3")
        self.assertEqual(rc, 0, out)
        self.assertIn("ok  victim p99 beside / alone 3.00 (at most 3.0)", out)
        rc, out = self.run_fn(compare.victim, [fio_reads(0.5), fio_reads(1.6)], "3")
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD victim p99 beside / alone 3.20", out)

    def test_victim_factor_reported_only_still_checks_the_runs(self):
        rc, out = self.run_fn(compare.victim, [fio_reads(0.5), fio_reads(50.0)], "none")
        self.assertEqual(rc, 0, out)
        self.assertIn("victim p99 beside / alone 100.00 (reported, not judged)", out)
        rc, out = self.run_fn(compare.victim, [fio_reads(0.5), fio_reads(50.0, reads=0)], "none")
        self.assertEqual(rc, 1, out)

    def test_victim_errors_or_no_reads_fail(self):
        rc, out = self.run_fn(compare.victim, [fio_reads(0.5), fio_reads(0.6, error=5)], "3")
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD victim beside: fio error 0", out)
        rc, out = self.run_fn(compare.victim, [fio_reads(0.0, reads=0), fio_reads(0.6)], "3")
        self.assertEqual(rc, 1, out)
        self.assertIn("BAD victim alone: reads > 0", out)

    def test_withheld_needs_every_queue_torn_down_in_time(self):
        sent = '{"phase": "sent", "queues": 32, "flushes_sent": 2048, "sent_s": 3.1}\n'
        done = ('{"phase": "done", "queues": 32, "flushes_sent": 2048, "torn_down": %d, '
                '"sent_s": 3.1, "teardown_s_max": %.1f}\n')
        rc, out = self.run_fn(compare.withheld, [sent + done % (32, 31.5)], "45")
        self.assertEqual(rc, 0, out)
        self.assertIn("32 torn down, the last 31.5 s after", out)
        self.assertEqual(self.run_fn(compare.withheld, [sent + done % (31, 31.5)], "45")[0], 1)
        self.assertEqual(self.run_fn(compare.withheld, [sent + done % (32, 50.0)], "45")[0], 1)
        self.assertEqual(self.run_fn(compare.withheld, [sent], "45")[0], 1)


if __name__ == "__main__":
    unittest.main()
