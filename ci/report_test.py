#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the test report itself: ci/count-gtest-xml.py and ci/bazel-test-results.py.

Run directly (python3 ci/report_test.py) or as the Bazel test //ci:report_test, which also
writes one GoogleTest-style testcase per test into $XML_OUTPUT_FILE.
"""
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from xml.sax.saxutils import escape, quoteattr

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, filename):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, filename))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


counter = load("count_gtest_xml", "count-gtest-xml.py")
bazel_results = load("bazel_test_results", "bazel-test-results.py")
tables = load("readme_tables", "readme-tables.py")
bench_report = load("bench_report", "bench/report.py")
loopback_report = load("loopback_report", "loopback-report.py")

PASS2 = ('<testsuites><testsuite name="S"><testcase classname="S" name="a"/>'
         '<testcase classname="S" name="b"/></testsuite></testsuites>')
FAIL1 = ('<testsuites><testsuite name="S"><testcase classname="S" name="a">'
         '<failure message="x"/></testcase></testsuite></testsuites>')
SKIP1 = ('<testsuites><testsuite name="S"><testcase classname="S" name="c" status="notrun"/>'
         '<testcase classname="S" name="d"/></testsuite></testsuites>')


class Dir:
    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = self.tmp.name

    def write(self, rel, text):
        path = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path


class CountTest(unittest.TestCase):
    def setUp(self):
        self.d = Dir()

    def tearDown(self):
        self.d.tmp.cleanup()

    def summary(self, expect=(), environ=None):
        lines, status = counter.summarize([self.d.path], expect, environ or {})
        return lines, lines[-1], status

    def test_all_passing_and_expected(self):
        self.d.write("unit/a_test.xml", PASS2)
        self.d.write("rxe/b_test.xml", PASS2)
        exp = self.d.write("expected.txt", "a_test\nb_test\n\n")
        lines, last, status = self.summary([exp])
        self.assertEqual(last, "SUMMARY: 4 passed, 0 failed, 0 skipped")
        self.assertEqual(status, 0)
        self.assertEqual(len(lines), 1)

    def test_expected_result_missing_is_a_failure(self):
        self.d.write("a_test.xml", PASS2)
        exp = self.d.write("expected.txt", "a_test\nnever_ran_test\n")
        lines, last, status = self.summary([exp])
        self.assertEqual(last, "SUMMARY: 2 passed, 1 failed, 0 skipped")
        self.assertEqual(status, 1)
        self.assertTrue(any("never_ran_test: no result" in line for line in lines))

    def test_unreadable_expect_file_is_a_failure(self):
        self.d.write("a_test.xml", PASS2)
        _, last, status = self.summary([os.path.join(self.d.path, "missing.txt")])
        self.assertEqual(last, "SUMMARY: 2 passed, 1 failed, 0 skipped")
        self.assertEqual(status, 1)

    def test_xml_without_testcases_is_a_failure(self):
        self.d.write("a_test.xml", PASS2)
        self.d.write("empty_test.xml", '<testsuites tests="0"></testsuites>')
        lines, last, status = self.summary()
        self.assertEqual(last, "SUMMARY: 2 passed, 1 failed, 0 skipped")
        self.assertIn("  not passed: empty_test.xml: no testcase in the XML", lines)
        self.assertEqual(status, 1)

    def test_truncated_xml_is_a_failure(self):
        self.d.write("a_test.xml", PASS2)
        self.d.write("cut_test.xml", PASS2[:40])
        _, last, status = self.summary()
        self.assertEqual(last, "SUMMARY: 2 passed, 1 failed, 0 skipped")
        self.assertEqual(status, 1)

    def test_failure_and_skip_counted(self):
        self.d.write("f_test.xml", FAIL1)
        self.d.write("s_test.xml", SKIP1)
        lines, last, status = self.summary()
        self.assertEqual(last, "SUMMARY: 1 passed, 1 failed, 1 skipped")
        self.assertIn("  not passed: S.a", lines)
        self.assertIn("  not passed: S.c (skipped)", lines)
        self.assertEqual(status, 1)

    def test_only_skips_fail(self):
        self.d.write("s_test.xml", SKIP1.replace('name="d"/>', 'name="d" status="notrun"/>'))
        _, last, status = self.summary()
        self.assertEqual(last, "SUMMARY: 0 passed, 1 failed, 2 skipped")
        self.assertEqual(status, 1)

    def test_zero_passed_is_a_failure(self):
        lines, last, status = self.summary()
        self.assertEqual(last, "SUMMARY: 0 passed, 1 failed, 0 skipped")
        self.assertIn("  not passed: no test passed at all", lines)
        self.assertEqual(status, 1)

    def test_environment_named_in_summary(self):
        self.d.write("a_test.xml", PASS2)
        _, last, status = self.summary(environ={"GTEST_FILTER": "Foo.*", "NVMF_INTEROP_SIZES": "0",
                                                "PATH": "/bin"})
        self.assertEqual(last, "SUMMARY: 2 passed, 0 failed, 0 skipped; from the caller's"
                         " environment: GTEST_FILTER=Foo.* NVMF_INTEROP_SIZES=0")
        self.assertEqual(status, 0)

    def test_main_exit_status(self):
        self.d.write("a_test.xml", FAIL1)
        with redirect_stdout(io.StringIO()) as out:
            status = counter.main([self.d.path])
        self.assertEqual(status, 1)
        self.assertIn("SUMMARY: 0 passed, 2 failed, 0 skipped", out.getvalue())


def bep_line(label, status, xml, attempt=1):
    outputs = [{"name": "test.log", "uri": "file:///nonexistent/test.log"}]
    if xml is not None:
        outputs.append({"name": "test.xml", "uri": "file://" + xml})
    return json.dumps({"id": {"testResult": {"label": label, "run": 1, "shard": 1,
                                             "attempt": attempt}},
                       "testResult": {"testActionOutput": outputs, "status": status}})


class BazelResultsTest(unittest.TestCase):
    def setUp(self):
        self.d = Dir()
        self.out = os.path.join(self.d.path, "out")

    def tearDown(self):
        self.d.tmp.cleanup()

    def run_collect(self, bep_lines, labels):
        bep = self.d.write("bep.json", "\n".join([json.dumps({"id": {"started": {}}})] + bep_lines))
        ok = bazel_results.collect(bep, labels, self.out)
        lines, status = counter.summarize([self.out], [], {})
        return ok, lines, status

    def test_passed_result_is_copied(self):
        xml = self.d.write("logs/common/sgl_test/test.xml", PASS2)
        ok, lines, status = self.run_collect([bep_line("//common:sgl_test", "PASSED", xml)],
                                             ["//common:sgl_test"])
        self.assertTrue(ok)
        self.assertTrue(os.path.exists(os.path.join(self.out, "common_sgl_test.xml")))
        self.assertEqual(lines[-1], "SUMMARY: 2 passed, 0 failed, 0 skipped")
        self.assertEqual(status, 0)

    def test_passing_xml_but_failed_status_counts_a_failure(self):
        xml = self.d.write("logs/host/q_test/test.xml", PASS2)
        ok, lines, status = self.run_collect([bep_line("//host:q_test", "FAILED", xml)],
                                             ["//host:q_test"])
        self.assertFalse(ok)
        self.assertEqual(lines[-1], "SUMMARY: 2 passed, 1 failed, 0 skipped")
        self.assertTrue(any("host_q_test.exit_status" in line for line in lines))
        self.assertEqual(status, 1)

    def test_failing_xml_is_not_doubled(self):
        xml = self.d.write("logs/host/q_test/test.xml", FAIL1)
        ok, lines, _ = self.run_collect([bep_line("//host:q_test", "FAILED", xml)],
                                        ["//host:q_test"])
        self.assertFalse(ok)
        self.assertEqual(lines[-1], "SUMMARY: 0 passed, 2 failed, 0 skipped")

    def test_stale_xml_of_an_unbuilt_test_is_not_used(self):
        # An earlier build's XML sits where bazel-testlogs keeps it, but this invocation has no
        # result for the label (it failed to build): a failure, and the stale pass is not counted.
        self.d.write("logs/target/t_test/test.xml", PASS2)
        good = self.d.write("logs/common/a_test/test.xml", PASS2)
        ok, lines, status = self.run_collect([bep_line("//common:a_test", "PASSED", good)],
                                             ["//common:a_test", "//target:t_test"])
        self.assertFalse(ok)
        self.assertEqual(lines[-1], "SUMMARY: 2 passed, 1 failed, 0 skipped")
        self.assertIn("  not passed: target_t_test.no_result", lines)
        self.assertEqual(status, 1)

    def test_no_xml_for_a_failed_status(self):
        ok, lines, _ = self.run_collect([bep_line("//host:x_test", "TIMEOUT", None)],
                                        ["//host:x_test"])
        self.assertFalse(ok)
        self.assertEqual(lines[-1], "SUMMARY: 0 passed, 2 failed, 0 skipped")

    def test_last_attempt_counts(self):
        bad = self.d.write("logs/a1.xml", FAIL1)
        good = self.d.write("logs/a2.xml", PASS2)
        ok, lines, status = self.run_collect(
            [bep_line("//host:f_test", "FAILED", bad, 1), bep_line("//host:f_test", "FLAKY", good, 2)],
            ["//host:f_test"])
        self.assertTrue(ok)
        self.assertEqual(lines[-1], "SUMMARY: 2 passed, 0 failed, 0 skipped")
        self.assertEqual(status, 0)

    def test_unreadable_build_events_fail_every_label(self):
        ok = bazel_results.collect(os.path.join(self.d.path, "missing.json"), ["//a:b_test"], self.out)
        lines, status = counter.summarize([self.out], [], {})
        self.assertFalse(ok)
        self.assertEqual(lines[-1], "SUMMARY: 0 passed, 3 failed, 0 skipped")
        self.assertEqual(status, 1)


class ReadmeTablesTest(unittest.TestCase):
    """The docs' interop cells, counts and conformance table come from the run's XML and reports
    only."""

    def setUp(self):
        self.d = Dir()

    def tearDown(self):
        self.d.tmp.cleanup()

    def interop(self, cases):
        body = "".join(
            f'<testcase classname="{s}" name="{n}">' + ("" if ok else '<failure message="x"/>')
            + "</testcase>" for s, n, ok in cases)
        self.d.write("rxe/interop.xml", f"<testsuites><testsuite>{body}</testsuite></testsuites>")

    def row(self, lines, what):
        return next(line for line in lines if what in line).split(" | ")

    def test_cells_pass_fail_and_not_run(self):
        s4, s0 = "KernelHostOnNvmfTarget_inline4096", "KernelHostOnNvmfTarget_inline0"
        self.interop([(s4, "fio_verify", True), (s0, "fio_verify", False),
                      (s4, "stop_target", True), (s4, "io_paths", True),
                      (s0, "stop_target", True)])
        self.d.write("rxe/interop/target-4096.json",
                     json.dumps({"writes": {"in_capsule": 256, "rdma_read": 96}}))
        lines = tables.matrix(self.d.path)
        self.assertIn("| host → target | what is checked | inline 0 | inline 4096 |", lines)
        fio = self.row(lines, "fio crc32c")
        self.assertEqual(fio[2:4], ["FAIL (fio_verify)", "pass |"])
        paths = self.row(lines, "writes arrived")
        # inline 0: stop_target passed but io_paths is missing: a failure, not a pass.
        self.assertEqual(paths[2:4], ["FAIL (io_paths)", "pass: 256 in-capsule, 96 RDMA READ |"])
        disconnect = self.row(lines, "nvme disconnect")
        self.assertEqual(disconnect[2:4], ["", " |"])

    def test_every_check_of_the_interop_scripts_has_a_row(self):
        """Each `check "$s" NAME` / `judge "$s" NAME` of the ci/interop scripts, under
        the suite of the `s=` before it, is named by a row of the matrix."""
        rows = {(suite_t, n) for _, _, suite_t, names, _ in tables.ROWS for n in names}
        rows |= {(suite, n) for _, _, suite, names in tables.AUTH_ROWS for n in names}
        found = []
        for script in ("interop/run.sh", "interop/file-backend.sh", "interop/auth.sh",
                       "interop/ana.sh", "interop/ublk.sh"):
            suite = None
            loops = {}
            with open(os.path.join(HERE, script)) as f:
                for line in f:
                    m = re.match(r"\s*for (\w+) in ([\w ]+); do", line)
                    if m:
                        loops[m.group(1)] = m.group(2).split()
                    m = re.match(r"\s*(?:local )?s=(\w+)(\$size)?(?:\s|$)", line)
                    if m:
                        suite = m.group(1) + ("{size}" if m.group(2) else "")
                    # A function whose suite is its first argument names its callers' suites.
                    m = re.match(r"\s*(?:local )?s=\$1\b.*# suites: ([\w ]+)", line)
                    if m:
                        suite = m.group(1).split()
                    m = re.search(r'(?:^|\s)(?:check|judge) "\$s" "?([\w${}]+)"?', line)
                    if m and suite and "{" not in m.group(1):  # ${job}...: built in a loop
                        name = m.group(1)
                        var = re.search(r"\$(\w+)", name)
                        values = loops.get(var.group(1), []) if var else [None]
                        self.assertTrue(values, f"{script}: {name}: loop values unknown")
                        for v in values:
                            for one in suite if isinstance(suite, list) else [suite]:
                                found.append((one, name.replace("$" + var.group(1), v) if var
                                              else name))
        self.assertGreaterEqual(len(found), 50, found)
        for suite in ("KernelHostOnNvmfTarget_TwoPorts", "KernelHostOnNvmfTarget_PendingLimit",
                      "KernelHostBesideHostileHosts", "KernelHostDeepWrites"):
            self.assertIn(suite, {s for s, _ in found})
        missing = [f"{s}.{n}" for s, n in found if (s, n) not in rows]
        self.assertEqual(missing, [], "checks with no row in ci/readme-tables.py ROWS")

    def test_two_ports_and_pending_limit_cells(self):
        tp, pl = "KernelHostOnNvmfTarget_TwoPorts", "KernelHostOnNvmfTarget_PendingLimit"
        self.interop([(tp, "start_target", True), (tp, "nvme_discover_on_4420_lists_both", True),
                      (tp, "nvme_discover_on_4421_lists_both", False),
                      (tp, "nvme_connect_each_port", True), (tp, "stop_target", True),
                      (pl, "start_target_limit_6", True),
                      (pl, "six_io_queues_connect_at_limit_6", True),
                      (pl, "stop_target_limit_6", True), (pl, "start_target_limit_5", True),
                      (pl, "stop_target_limit_5", True),
                      ("KernelHostOnNvmfTarget_inline0", "fio_verify", True),
                      ("KernelHostOnNvmfTarget_inline4096", "fio_verify", True),
                      ("SomeNewSection", "new_check", False), ("Interop", "completed", True)])
        lines = tables.matrix(self.d.path)
        # Fixed suites fill the inline 4096 column only.
        self.assertEqual(self.row(lines, "lists the subsystem on both")[2:4],
                         ["", "FAIL (nvme_discover_on_4421_lists_both) |"])
        self.assertEqual(self.row(lines, "connects through each")[2:4], ["", "pass |"])
        self.assertEqual(self.row(lines, "`--max-pending-connections 6`")[2:4], ["", "pass |"])
        # limit 5: the refusal check is missing from the results: a failure, not a pass.
        self.assertEqual(self.row(lines, "`--max-pending-connections 5`")[2:4],
                         ["", "FAIL (six_io_queues_refused_at_limit_5) |"])
        self.assertIn("Checks of this run with no row above: SomeNewSection.new_check (FAIL).",
                      lines)

    def test_no_interop_results_said(self):
        lines = tables.matrix(self.d.path)
        self.assertIn("**No interop results were found in this run.**", lines)

    def test_counts(self):
        self.d.write("unit/a.xml", PASS2)
        self.d.write("rxe/b.xml", FAIL1)
        lines = tables.counts(self.d.path)
        self.assertEqual(lines[-1], "| all | 2 | 1 |")

    def test_docs_blocks_replaced(self):
        docs = os.path.join(self.d.path, "docs")
        testing = self.d.write("docs/testing.md", "a\n<!-- test-counts:begin -->\nold\n"
                               "<!-- test-counts:end -->\nb\n")
        interop = self.d.write("docs/interop.md", "c\n<!-- interop-matrix:begin -->\nold\n"
                               "<!-- interop-matrix:end -->\n")
        conformance = self.d.write("docs/conformance.md", "<!-- conformance:begin -->\nold\n"
                                   "<!-- conformance:end -->\n")
        self.d.write("unit/a.xml", PASS2)
        with redirect_stdout(io.StringIO()):
            tables.main([self.d.path, "--docs", docs])
        with open(testing) as f:
            text = f.read()
        self.assertNotIn("old", text)
        self.assertIn("| all | 2 | 0 |", text)
        self.assertTrue(text.startswith("a\n<!-- test-counts:begin -->\n| tests |"))
        with open(interop) as f:
            text = f.read()
        self.assertNotIn("old", text)
        self.assertIn("**No interop results were found in this run.**", text)
        # No conformance reports in this run: the conformance table is left as it was.
        with open(conformance) as f:
            self.assertIn("old", f.read())

    def test_conformance_block_from_the_run(self):
        docs = os.path.join(self.d.path, "docs")
        for name in ("testing.md", "interop.md"):
            self.d.write("docs/" + name, "<!-- test-counts:begin -->\n<!-- test-counts:end -->\n"
                         "<!-- interop-matrix:begin -->\n<!-- interop-matrix:end -->\n")
        conformance = self.d.write("docs/conformance.md", "x\n<!-- conformance:begin -->\nold\n"
                                   "<!-- conformance:end -->\ny\n")
        summary = {"cases": 1, "pass": 1, "fail": 0, "must_fail": 0, "should_fail": 0,
                   "not_applicable": 0, "not_run": 0, "seconds": 3.0}
        case = {"id": "io.flush", "level": "must", "spec": "NVM CS 1.0 §3.2.1",
                "verdict": "pass", "got": "success"}
        self.d.write("rxe/conform/ours-4096.json",
                     json.dumps({"summary": summary, "cases": [case]}))
        with redirect_stdout(io.StringIO()):
            tables.main([self.d.path, "--docs", docs])
        with open(conformance) as f:
            text = f.read()
        self.assertNotIn("old", text)
        self.assertIn("- nvmf-target, in-capsule 4096: 1 cases, 1 pass, 0 fail", text)
        self.assertIn("| `io.flush` | must | NVM CS 1.0 §3.2.1 | pass | - |", text)
        self.assertTrue(text.endswith("<!-- conformance:end -->\ny\n"))

    def test_docs_have_the_markers(self):
        """The repository's own docs carry the blocks scripts/test.sh's tables go into."""
        root = os.path.dirname(HERE)
        for name, block in (("testing.md", "test-counts"), ("interop.md", "interop-matrix"),
                            ("conformance.md", "conformance")):
            path = os.path.join(root, "docs", name)
            with open(path) as f:
                text = f.read()
            self.assertIn(f"<!-- {block}:begin -->", text, path)
            self.assertIn(f"<!-- {block}:end -->", text, path)


def bench_cells(reps=(1,), bad=None, missing=None, inline=0):
    """Counters of every write1-BS-oo cell as ci/bench/report.py parses them, all on the path
    their group promises, except `bad` ((ics, cell) given the opposite path) and `missing`."""
    cells = {}
    for rep in reps:
        for ics in bench_report.ICS:
            for bs in bench_report.SIZES:
                cell = "write1-%s-oo" % bs
                if missing == (ics, cell):
                    continue
                fits = int(bs[:-1]) * 1024 <= int(ics)
                if bad == (ics, cell):
                    fits = not fits
                cells[(rep, ics, cell)] = {"ios": 100, "writes_in_capsule": 100 if fits else 0,
                                           "writes_keyed": 0 if fits else 100}
        cells[(rep, "4096", "read1-oo-inline-off")] = {"ios": 50, "capsules_inline": inline,
                                                        "capsules_by_reference": 50}
    return cells


class BenchCounterChecksTest(unittest.TestCase):
    """Every 'every 16384 write in-capsule' style claim of the bench report is checked."""

    def test_all_paths_as_promised_pass(self):
        checks = bench_report.counter_checks([1, 2], bench_cells(reps=(1, 2)), "0")
        self.assertEqual(len(checks), 2 * (len(bench_report.ICS) * len(bench_report.SIZES) + 1))
        self.assertTrue(all(c["ok"] for c in checks), checks)
        names = [c["check"] for c in checks]
        self.assertIn("16384/write1-16k-oo: every write in-capsule", names)
        self.assertIn("4096/write1-8k-oo: every write keyed", names)

    def test_a_keyed_write_in_the_16384_group_fails(self):
        checks = bench_report.counter_checks([1], bench_cells(bad=("16384", "write1-8k-oo")), "0")
        failed = [c for c in checks if not c["ok"]]
        self.assertEqual([c["check"] for c in failed],
                         ["16384/write1-8k-oo: every write in-capsule"])
        self.assertEqual(failed[0]["detail"], "100 I/Os: 0 in-capsule, 100 keyed")

    def test_a_cell_without_counters_fails(self):
        checks = bench_report.counter_checks([1], bench_cells(missing=("4096", "write1-4k-oo")),
                                             "0")
        failed = [c for c in checks if not c["ok"]]
        self.assertEqual(len(failed), 1)
        self.assertIn("no counters", failed[0]["detail"])

    def test_inline_posts_in_the_inline_off_cell_fail(self):
        checks = bench_report.counter_checks([1], bench_cells(inline=3), "0")
        failed = [c for c in checks if not c["ok"]]
        self.assertEqual([c["check"] for c in failed],
                         ["4096/read1-oo-inline-off: no capsule posted inline"])
        # With --max-inline-data above 0 the cell makes no claim.
        self.assertTrue(all(c["ok"] for c in bench_report.counter_checks(
            [1], bench_cells(inline=3), "256")))

    def test_no_repetition_means_no_checks(self):
        self.assertEqual(bench_report.counter_checks([], {}, "0"), [])


def loopback(ics=4096, **over):
    """A loopback report.json as ci/loopback-guest.sh writes it, consistent for `ics`."""
    small_ic = 1 if ics >= 4096 else 0
    r = {
        # 1000000 bytes end inside an LBA: the host pads the last one (1954 LBAs of 512 bytes).
        "input_bytes": 1000000, "lba_size": 512, "bytes_written": 1000448, "bytes_read": 1000000,
        "data_verified": True,
        "negotiated": {"ioccsz": (64 + ics) // 16, "icdoff": 0,
                       "sgls": 0x100005 if ics else 0x5, "in_capsule_data_size": ics,
                       "in_capsule_enabled": ics > 0},
        "writes": {"in_capsule": small_ic, "rdma_read": 2 + (1 - small_ic)},
        "capsules": {"inline": 10, "by_reference": 5, "with_in_capsule_data": 3 if ics else 0},
        "host": {"write": {"stats": {"writes_in_capsule": 0, "writes_keyed": 2}}},
        "host_write_small": {"stats": {"writes_in_capsule": small_ic,
                                       "writes_keyed": 1 - small_ic}},
    }
    for k, v in over.items():
        r[k] = v
    return r


class LoopbackChecksTest(unittest.TestCase):
    """Each figure the loopback report prints is checked against the others."""

    def failed(self, r):
        return [name for name, ok, _ in loopback_report.checks(r) if not ok]

    def test_consistent_reports_pass_for_each_size(self):
        for ics in (0, 4096, 16384):
            self.assertEqual(self.failed(loopback(ics)), [], ics)
            self.assertGreaterEqual(len(loopback_report.checks(loopback(ics))), 8)

    def test_target_counters_differing_from_the_host_fail(self):
        r = loopback(4096, writes={"in_capsule": 0, "rdma_read": 3})
        self.assertIn("target's write counters = the host's", self.failed(r))

    def test_host_in_capsule_off_against_an_offering_target_fails(self):
        r = loopback(16384)
        r["negotiated"]["in_capsule_enabled"] = False
        self.assertEqual(self.failed(r),
                         ["the host chose in-capsule data exactly when the target offers it"])

    def test_sgls_bit_20_and_ioccsz_must_match_the_size(self):
        r = loopback(0)
        r["negotiated"]["sgls"] = 0x100005
        r["negotiated"]["ioccsz"] = 5
        self.assertEqual(self.failed(r), ["IOCCSZ = (64 + in-capsule size) / 16",
                                          "SGLS bit 20 set exactly when in-capsule data is on"])

    def test_bytes_written_are_the_input_padded_to_whole_lbas(self):
        name = "bytes written = input size rounded up to the LBA size"
        # scripts/loopback.sh's default input, 3 MiB + 1000 bytes, as the host reports it.
        self.assertEqual(self.failed(loopback(4096, input_bytes=3146728, bytes_written=3146752)),
                         [])
        self.assertEqual(self.failed(loopback(4096, input_bytes=3146728, bytes_written=3146728)),
                         [name])
        self.assertEqual(self.failed(loopback(4096, lba_size=4096, input_bytes=8192,
                                              bytes_written=8192)), [])
        self.assertEqual(self.failed(loopback(4096, lba_size=None)), [name])

    def test_missing_figures_fail(self):
        r = loopback(4096)
        del r["host_write_small"]
        r["negotiated"] = {}
        failed = self.failed(r)
        self.assertIn("target's write counters = the host's", failed)
        self.assertIn("negotiated IOCCSZ, SGLS and in-capsule size present", failed)
        self.assertIn("ICDOFF 0", failed)

    def test_main_exits_1_on_a_failed_check(self):
        for report, rc in ((loopback(4096), 0), (loopback(4096, bytes_written=4096), 1)):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "report.json")
                with open(path, "w") as f:
                    json.dump(report, f)
                out = io.StringIO()
                with redirect_stdout(out):
                    self.assertEqual(loopback_report.main(path), rc)
                self.assertIn("checks", out.getvalue())


def write_xml(result, path):
    """One GoogleTest-style testcase per test, for Bazel's XML_OUTPUT_FILE."""
    cases = {}
    for test, trace in result.failures + result.errors:
        cases[test.id()] = trace
    out = ["<testsuites>", '<testsuite name="report_test">']
    for test_id in result.ran:
        cls, name = test_id.rsplit(".", 1)
        trace = cases.get(test_id)
        body = "" if trace is None else f"<failure message=\"failed\">{escape(trace)}</failure>"
        out.append(f"<testcase classname={quoteattr(cls)} name={quoteattr(name)}>{body}</testcase>")
    out += ["</testsuite>", "</testsuites>"]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


class RecordingResult(unittest.TextTestResult):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.ran = []

    def startTest(self, test):
        super().startTest(test)
        self.ran.append(test.id())


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(resultclass=RecordingResult, verbosity=2).run(suite)
    if os.environ.get("XML_OUTPUT_FILE"):
        write_xml(result, os.environ["XML_OUTPUT_FILE"])
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
