#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# The docs' hand-written tables against what they describe: target.md's limits (defaults = what
# `nvmf-target --help` prints) and its examples/ list, testing.md's test names (Bazel targets,
# gtest cases from --gtest_list_tests, script cases), commands and fuzzers, ARCHITECTURE.md's
# Bazel labels and the option defaults of its ownership table, host-library.md's headers and what
# they declare, the options security.md's table names, README.md's documents list, and
# performance.md's rows (each names its report under docs/bench/ or its command; every
# "median (min–max)", two-decimal ratio and "N vs M" matches the report as rounded there).
#
# Usage: docs_tables_test.py ROOT [--target BIN] [--tests DIR] [--only NAME,...]
#   ROOT: the tree (the runfiles root); BIN: nvmf-target (default ROOT/target/nvmf-target);
#   DIR: where the cited test binaries are (default ROOT).
#   --only NAME,...: run only those checks (for trying one against a planted mistake).
import argparse
import glob
import json
import os
import re
import subprocess
import sys

failures = []


def fail(where, msg):
    failures.append(f"{where}: {msg}")


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def tables(text):
    """Every Markdown table as (first line number, header cells, rows of (line number, cells))."""
    out, cur = [], None
    lines = text.split("\n")
    for i, line in enumerate(lines, 1):
        if line.startswith("|"):
            cells = split_row(line)
            if cur is None:
                cur = (i, cells, [])
                out.append(cur)
            elif all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            else:
                cur[2].append((i, cells))
        else:
            cur = None
    return out


def split_row(line):
    # A cell may hold "\|" (ARCHITECTURE.md's wr_id formula).
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [p.strip() for p in parts[1:-1]]


def table_with(text, header):
    for t in tables(text):
        if t[1] == header:
            return t
    return None


def help_defaults(binary):
    """{--option: default} from a CLI11 --help (only options that print one)."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30).stdout
    defaults, options = {}, set()
    for line in out.split("\n"):
        m = re.match(r"\s+(?:-\w,)?(--[a-z0-9-]+)(?:\s+(\S+))?", line)
        if not m:
            continue
        options.add(m.group(1))
        if m.group(2):
            d = re.search(r"=(\S+)$", m.group(2))
            if d:
                defaults[m.group(1)] = d.group(1)
    if not options:
        fail(binary, "--help printed no options")
    return options, defaults


def check_target_limits(root, target):
    rel = "docs/target.md"
    t = table_with(read(root, rel), ["what", "default", "flag", "beyond it"])
    if t is None:
        return fail(rel, "no limits table (what | default | flag | beyond it)")
    options, defaults = help_defaults(target)
    checked = 0
    for line, cells in t[2]:
        flags = re.findall(r"`(--[a-z0-9-]+)`", cells[2])
        if not flags:
            continue  # a limit with no flag of its own (the QP's max_send_wr)
        flag = flags[0]
        for f in flags:
            if f not in options:
                fail(f"{rel}:{line}", f"{f} is not an option of nvmf-target")
        want = re.match(r"(\d+)(?: ms)?$", cells[1])
        if not want:
            fail(f"{rel}:{line}", f"default {cells[1]!r} is not a number (or N ms)")
            continue
        if flag.endswith("-ms") != cells[1].endswith(" ms"):
            fail(f"{rel}:{line}", f"{flag}: the unit of {cells[1]!r} does not match the option's")
        got = defaults.get(flag)
        if got != want.group(1):
            fail(f"{rel}:{line}",
                 f"{flag} default {want.group(1)} here, {got} in nvmf-target --help")
        checked += 1
    if checked < 5:
        fail(rel, f"only {checked} limits with a flag found")


def check_target_examples(root):
    rel = "docs/target.md"
    t = table_with(read(root, rel), ["file", "serves"])
    if t is None:
        return fail(rel, "no examples table (file | serves)")
    listed = [re.fullmatch(r"`([^`]+)`", c[0]) for _, c in t[2]]
    names = {m.group(1) for m in listed if m}
    for (line, cells), m in zip(t[2], listed):
        if not m:
            fail(f"{rel}:{line}", f"first cell {cells[0]!r} is not a `file`")
    have = {os.path.basename(p) for pat in ("*.json", "*.service")
            for p in glob.glob(os.path.join(root, "examples", pat))}
    for n in sorted(names - have):
        fail(rel, f"examples table lists {n}, not in examples/")
    for n in sorted(have - names):
        fail(rel, f"examples/{n} is not in the examples table")


def gtest_names(binary):
    out = subprocess.run([binary, "--gtest_list_tests"], capture_output=True, text=True,
                         timeout=60).stdout
    names, suite = set(), None
    for line in out.split("\n"):
        line = line.split("#")[0].rstrip()
        if not line or line.startswith("Running main"):
            continue
        if not line.startswith(" "):
            suite = line.strip().rstrip(".")
            names.add(suite)
            base = suite.split("/")[-1]  # a parameterized suite: Prefix/Suite
            names.add(base)
        else:
            case = line.strip()
            names.add(case)
            names.update(case.split("/"))  # a parameterized case: Case/Param
            names.add(f"{suite}.{case}")
            names.add(f"{suite.split('/')[-1]}.{case.split('/')[0]}")
    return names


def check_testing_table(root, tests):
    rel = "docs/testing.md"
    text = read(root, rel)
    t = table_with(text, ["behaviour", "checked by"])
    if t is None:
        return fail(rel, "no table (behaviour | checked by)")
    # Script cases: the names ci/run-rxe-tests.sh gives the scripts it runs.
    runner = read(root, "ci/run-rxe-tests.sh")
    script_cases = {f"{a}.{b}"
                    for a, b in re.findall(r"^run_script \S+ (\S+) (\S+) ", runner, re.M)}
    listed = {}
    # Every gtest binary the table cites by package (not //ci's script tests).
    all_binaries = sorted({
        os.path.join(tests, m[0], m[1]) for _, cells in t[2]
        for m in re.findall(r"`(?://)?([a-z0-9_/]+)[:/]([a-z0-9_]+_test)`", cells[1])
        if m[0] != "ci" and os.path.isfile(os.path.join(tests, m[0], m[1]))})
    for line, cells in t[2]:
        binaries = []  # the cited test binaries of this row, whose cases the bare names are
        for tok in re.findall(r"`([^`]+)`", cells[1]):
            label = re.fullmatch(r"(?://)?([a-z0-9_/]+):([a-z0-9_]+)", tok)
            path = re.fullmatch(r"([a-z0-9_/]+)/([a-z0-9_]+_test)", tok)  # common/inline_send_test
            if label or path:
                pkg, name = (label or path).groups()
                where = os.path.join(tests, pkg, name)
                if not (os.path.isfile(where) or os.path.isfile(os.path.join(root, pkg, name))):
                    fail(f"{rel}:{line}", f"//{pkg}:{name}: no such test in this test's data "
                         "(a test that exists must be added to //ci:docs_tables_test's data)")
                elif os.path.isfile(where) and name.endswith("_test") and pkg != "ci":
                    binaries.append(where)
                continue
            if re.fullmatch(r"[a-z_]+_test", tok):  # a test named once more without its package
                matches = glob.glob(os.path.join(tests, "**", tok), recursive=True)
                if not matches:
                    fail(f"{rel}:{line}", f"{tok}: no such test in this test's data")
                binaries += matches[:1]
                continue
            if re.fullmatch(r"ci/[a-z/-]+\.(sh|py)", tok):
                if not os.path.isfile(os.path.join(root, tok)):
                    fail(f"{rel}:{line}", f"{tok}: no such script")
                continue
            if tok.endswith(".json") or tok.startswith("ci/interop/"):
                continue  # a result file a test writes, or a script cited with its arguments
            if tok in script_cases:
                continue
            if re.fullmatch(r"[a-z_]+", tok):
                continue  # a word of the description (null_blk's `badblocks`)
            if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*(\.[A-Za-z0-9_*]+)?", tok):
                fail(f"{rel}:{line}", f"{tok!r}: not a test, case or script this check knows")
                continue
            # A case is one of its row's binaries'; a row naming none: any cited binary's.
            cands = binaries or all_binaries
            found = False
            for b in cands:
                if b not in listed:
                    listed[b] = gtest_names(b)
                n = tok[:-2] if tok.endswith(".*") else tok
                if n in listed[b]:
                    found = True
            if not found:
                fail(f"{rel}:{line}", f"{tok}: no such suite or case in "
                     + ", ".join(os.path.relpath(b, tests) for b in cands))


def check_testing_commands(root):
    rel = "docs/testing.md"
    t = table_with(read(root, rel), [
        "command", "what runs",
        "time (2-core AMD EPYC host, 24 GiB; QEMU TCG guest with 2 vCPUs; warm Bazel cache)"])
    if t is None:
        return fail(rel, "no commands table")
    for line, cells in t[2]:
        m = re.fullmatch(r"`(scripts/[a-z-]+\.sh)((?: --[a-z-]+(?: \S+)?)*)`", cells[0])
        if not m:
            fail(f"{rel}:{line}", f"{cells[0]!r}: not `scripts/NAME.sh [--option ...]`")
            continue
        script = read(root, m.group(1))
        for opt in re.findall(r"--[a-z-]+", m.group(2)):
            if not re.search(r"^\s*" + re.escape(opt) + r"\)", script, re.M):
                fail(f"{rel}:{line}", f"{m.group(1)} has no {opt} case")


def check_architecture(root, target):
    rel = "ARCHITECTURE.md"
    t = table_with(read(root, rel), ["thing", "owner", "limit", "who waits, where"])
    if t is None:
        return fail(rel, "no ownership table")
    options, defaults = help_defaults(target)
    seen = 0
    for line, cells in t[2]:
        row = " | ".join(cells)
        for flag in re.findall(r"`(--[a-z0-9-]+)`", row):
            if flag not in options:
                fail(f"{rel}:{line}", f"{flag} is not an option of nvmf-target")
        # "`--flag` 16", "`--flag` (256)", "(the default is on)" after `--flag off`.
        for flag, num in re.findall(r"`(--[a-z0-9-]+)`,? \(?(\d+)\)?(?![\d.x])", row):
            seen += 1
            if defaults.get(flag) != num:
                fail(f"{rel}:{line}", f"{flag} default {num} here, {defaults.get(flag)} in --help")
        for flag, val in re.findall(r"`(--[a-z0-9-]+) \w+` \(the default is (\w+)\)", row):
            seen += 1
            if defaults.get(flag) != val:
                fail(f"{rel}:{line}", f"{flag} default {val} here, {defaults.get(flag)} in --help")
    if seen < 2:
        fail(rel, f"only {seen} defaults found in the ownership table")


def check_security(root, target):
    rel = "docs/security.md"
    t = table_with(read(root, rel), ["a host that...", "gets", "like"])
    if t is None:
        return fail(rel, "no table (a host that... | gets | like)")
    options, _ = help_defaults(target)
    for line, cells in t[2]:
        for flag in re.findall(r"`(--[a-z0-9-]+)`", " ".join(cells)):
            if flag not in options:
                fail(f"{rel}:{line}", f"{flag} is not an option of nvmf-target")


def check_readme_docs(root):
    rel = "README.md"
    t = table_with(read(root, rel), ["document", "for"])
    if t is None:
        return fail(rel, "no documents table")
    linked = set()
    for line, cells in t[2]:
        m = re.fullmatch(r"\[([^\]]+)\]\(([^)]+)\)", cells[0])
        if not m or m.group(1) != m.group(2):
            fail(f"{rel}:{line}", f"{cells[0]!r}: not [PATH](PATH)")
            continue
        linked.add(m.group(2))
        if not os.path.isfile(os.path.join(root, m.group(2))):
            fail(f"{rel}:{line}", f"{m.group(2)} does not exist")
    for p in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        d = os.path.relpath(p, root)
        if d not in linked:
            fail(rel, f"{d} is not in the documents table")


def build_names(root, pkg):
    """The target names pkg/BUILD declares (name = "x", and names listed for a comprehension)."""
    text = read(root, os.path.join(pkg, "BUILD"))
    names = set(re.findall(r'name = "([^"]+)"', text))
    names |= set(re.findall(r'^    "([a-z0-9_-]+)",$', text, re.M))  # ") for name in [" lists
    return names


def check_label(root, where, label):
    m = re.fullmatch(r"//([a-z0-9_/]+)(?::([A-Za-z0-9_.-]+))?", label)
    if not m:
        return fail(where, f"{label}: not a //package:name label")
    pkg, name = m.group(1), m.group(2) or m.group(1).split("/")[-1]
    if not os.path.isfile(os.path.join(root, pkg, "BUILD")):
        return fail(where, f"{label}: no {pkg}/BUILD in this test's data")
    if name not in build_names(root, pkg):
        fail(where, f"{label}: {pkg}/BUILD declares no {name}")


def check_architecture_layout(root):
    rel = "ARCHITECTURE.md"
    t = table_with(read(root, rel), ["dir", "what", "Bazel targets"])
    if t is None:
        return fail(rel, "no layout table (dir | what | Bazel targets)")
    seen = 0
    for line, cells in t[2]:
        for label in re.findall(r"`(//[^`]+)`", " ".join(cells)):
            if "NAME" in label:  # //fuzz:NAME_fuzzer: a pattern, the fuzzers' table holds them
                continue
            seen += 1
            check_label(root, f"{rel}:{line}", label)
    if seen < 10:
        fail(rel, f"only {seen} labels in the layout table")


def check_host_library(root):
    rel = "docs/host-library.md"
    t = table_with(read(root, rel), ["header", "what it gives"])
    if t is None:
        return fail(rel, "no headers table (header | what it gives)")
    # The table lists exactly the library's public headers: host_lib's hdrs in host/BUILD.
    build = read(root, "host/BUILD")
    m = re.search(r'name = "host_lib",.*?hdrs = \[(.*?)\]', build, re.S)
    public = {"host/" + h for h in re.findall(r'"([a-z_]+\.h)"', m.group(1))} if m else set()
    if not public:
        fail("host/BUILD", "no hdrs in host_lib")
    listed = {h for _, cells in t[2] for h in re.findall(r"`(host/[a-z/_]+\.h)`", cells[0])}
    for h in sorted(public - listed):
        fail(rel, f"{h} is in host_lib's hdrs but not in the headers table")
    for h in sorted(listed - public):
        fail(rel, f"{h} is in the headers table but not in host_lib's hdrs")
    for line, cells in t[2]:
        headers = re.findall(r"`([a-z/_]+\.h)`", cells[0])
        if not headers:
            fail(f"{rel}:{line}", f"{cells[0]!r} names no header")
        text = ""
        for h in headers:
            if not os.path.isfile(os.path.join(root, h)):
                fail(f"{rel}:{line}", f"{h}: no such header in this test's data")
            else:
                text += read(root, h)
        # Every function (`name()`, `Class::name()`) and type (`Name`, `Result<T>`, `kEnum`)
        # the row names is declared in its headers.
        for tok in re.findall(r"`([^`]+)`", cells[1]):
            name = re.sub(r"<.*>|\(\)$", "", tok).split("::")[-1]
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                continue  # prose (`nvmf-host bench`)
            if not re.search(r"\b" + re.escape(name) + r"\b", text):
                fail(f"{rel}:{line}", f"{tok}: not in " + ", ".join(headers))


def check_fuzzers(root):
    rel = "docs/testing.md"
    t = table_with(read(root, rel), ["fuzzer", "what it drives", "what must hold"])
    if t is None:
        return fail(rel, "no fuzzers table (fuzzer | what it drives | what must hold)")
    listed = set()
    for line, cells in t[2]:
        m = re.fullmatch(r"`([a-z_]+_fuzzer)`", cells[0])
        if not m:
            fail(f"{rel}:{line}", f"{cells[0]!r}: not a `NAME_fuzzer`")
        else:
            listed.add(m.group(1))
    have = {n for n in build_names(root, "fuzz") if n.endswith("_fuzzer")}
    for n in sorted(listed - have):
        fail(rel, f"fuzzers table lists {n}, not in fuzz/BUILD")
    for n in sorted(have - listed):
        fail(rel, f"fuzz/BUILD's {n} is not in the fuzzers table")


def figure_values(report):
    """Every (median, min, max) in a report."""
    out = []

    def walk(o):
        if isinstance(o, dict):
            if all(isinstance(o.get(k), (int, float)) for k in ("median", "min", "max")):
                out.append((o["median"], o["min"], o["max"]))
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(report)
    return out


def shown(x, as_text):
    """x rounded as as_text shows it."""
    decimals = len(as_text.split(".")[1]) if "." in as_text else 0
    return f"{x:.{decimals}f}" == as_text


def check_performance(root):
    rel = "docs/performance.md"
    t = table_with(read(root, rel), ["benchmark", "latest figure", "how", "machine", "reproduce"])
    if t is None:
        return fail(rel, "no table (benchmark | latest figure | how | machine | reproduce)")
    report, report_name, with_report = None, None, 0
    for line, cells in t[2]:
        where = f"{rel}:{line}"
        src = cells[4]
        if src == "same":
            if report_name is None:
                fail(where, "'same' with no row above naming a report or command")
                continue
        else:
            cmd = re.match(r"`[^`]+`", src)
            if not cmd:
                fail(where, f"reproduce {src!r} names no command")
            reports = re.findall(r"\]\((bench/[^)]+)\)", src)
            report, report_name = None, src
            for r in reports:
                path = os.path.join(root, "docs", r)
                if not os.path.isfile(path):
                    fail(where, f"docs/{r} does not exist")
                elif r.endswith(".json"):
                    with open(path, encoding="utf-8") as f:
                        report = figure_values(json.load(f))
                    report_name = r
        if report is None:
            continue  # a command whose output is not kept under docs/bench/
        with_report += 1
        fig = cells[1].replace("**", "")
        # "0.32 (0.30–0.33)", "1.53x (1.07–1.79)": one ratio's median (min–max) in the report.
        ranged = re.findall(r"(\d+\.\d+)x? \((\d+\.\d+)–(\d+\.\d+)\)", fig)
        for med, lo, hi in ranged:
            if not any(shown(m, med) and shown(a, lo) and shown(b, hi) for m, a, b in report):
                fail(where, f"{med} ({lo}–{hi}) is no median (min–max) in docs/{report_name}")
        # Lone two-decimal ratios ("kernel stack 0.82", "0.84, 0.97"): some median shows them.
        rest = re.sub(r"(\d+\.\d+)x? \((\d+\.\d+)–(\d+\.\d+)\)", "", fig)
        for med in re.findall(r"(?<![\d.])(\d\.\d\d)(?![\d.])", rest):
            if not any(shown(m, med) for m, _, _ in report):
                fail(where, f"{med} is no median in docs/{report_name}")
        # "310 vs 993 µs", "3980 vs 3459", "2183 vs 1587 IOPS": medians of the cells compared.
        for pair in re.findall(r"(\d+) vs (\d+)", rest):
            for n in pair:
                if not any(shown(m, n) for m, _, _ in report):
                    fail(where, f"{n} is no median in docs/{report_name}")
    if with_report < 5:
        fail(rel, f"only {with_report} rows with a report under docs/bench/")


CHECKS = ["target_limits", "target_examples", "testing_table", "testing_commands", "fuzzers",
          "architecture", "architecture_layout", "host_library", "security", "readme_docs",
          "performance"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--target")
    ap.add_argument("--tests", help="where the cited test binaries are (default: ROOT)")
    ap.add_argument("--only", default=",".join(CHECKS))
    a = ap.parse_args()
    target = a.target or os.path.join(a.root, "target", "nvmf-target")
    tests = a.tests or a.root
    run = {
        "target_limits": lambda: check_target_limits(a.root, target),
        "target_examples": lambda: check_target_examples(a.root),
        "testing_table": lambda: check_testing_table(a.root, tests),
        "testing_commands": lambda: check_testing_commands(a.root),
        "fuzzers": lambda: check_fuzzers(a.root),
        "architecture": lambda: check_architecture(a.root, target),
        "architecture_layout": lambda: check_architecture_layout(a.root),
        "host_library": lambda: check_host_library(a.root),
        "security": lambda: check_security(a.root, target),
        "readme_docs": lambda: check_readme_docs(a.root),
        "performance": lambda: check_performance(a.root),
    }
    for name in a.only.split(","):
        if name not in run:
            sys.exit(f"unknown check {name}")
        run[name]()
    for f in failures:
        print("FAIL", f)
    if failures:
        sys.exit(1)
    print(f"docs tables: {a.only}: ok")


if __name__ == "__main__":
    main()
