# SPDX-License-Identifier: BSD-3-Clause
"""What the interleaved-benchmark report scripts share (ci/bench/*-report.py): their command
line (DIR, --machine, --command), a raw directory's environment.txt and cells.tsv, and the
median and range of a figure over the repetitions."""
import argparse
import os
import statistics
import sys


def args(doc):
    """DIR [--machine TEXT] [--command TEXT], with `doc` as the help text."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("dir")
    ap.add_argument("--machine", default="")
    ap.add_argument("--command", default="")
    return ap.parse_args()


def environment(raw):
    """{key: value} of RAW/environment.txt's KEY=VALUE lines ({} when there is none)."""
    path = os.path.join(raw, "environment.txt")
    if not os.path.exists(path):
        return {}
    return dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line)


def cells(raw):
    """RAW/cells.tsv as lists of fields, one a cell."""
    return [line.rstrip("\n").split("\t") for line in open(os.path.join(raw, "cells.tsv"))]


def spread(values):
    """{"median", "min", "max"} of a non-empty list."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def ranged(s, digits=2):
    """A spread as the tables show it: "median (min–max)"."""
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def finish(directory, name, lines, problems):
    """Writes DIRECTORY/NAME.md from the table `lines` and prints it; `problems` (empty when
    every cell gave its figures) goes to stderr. The exit status: 1 with problems, else 0."""
    text = "\n".join(lines) + "\n"
    with open(os.path.join(directory, name + ".md"), "w") as f:
        f.write(text)
    print(text)
    if problems:
        print(f"{name}: {problems}", file=sys.stderr)
        return 1
    return 0
