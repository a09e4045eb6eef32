#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prints how many Debian packages, and how many MB installed, apt would add for a package list.

Usage: ci/install-size.py [--recommends] [--json] PACKAGE...

Asks apt's own resolver (`apt-get install -s`, a simulation: nothing is installed, no root
needed), without recommended packages unless --recommends, on two starting points:
  - minimal: a Debian system holding only the packages of Priority required and important
    (what debootstrap installs by default; simulated from an empty dpkg status), so the figure
    is what a fresh minimal Debian 12 machine would add;
  - here: this machine as it is now (dpkg's real status).
Sizes are the candidates' Installed-Size fields (`apt-cache show`), summed; MB = 2^20 bytes.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def apt_lines(args):
    return subprocess.run(args, capture_output=True, text=True).stdout.splitlines()


def base_packages():
    """Package names of Priority required or important in apt's lists."""
    names = set()
    for para in subprocess.run(["apt-cache", "dumpavail"], capture_output=True,
                               text=True).stdout.split("\n\n"):
        name = re.search(r"^Package: (\S+)", para, re.M)
        prio = re.search(r"^Priority: (\S+)", para, re.M)
        if name and prio and prio.group(1) in ("required", "important"):
            names.add(name.group(1))
    return sorted(names)


def simulate(pkgs, recommends, status=None):
    """Names apt would install (its `Inst` lines)."""
    cmd = ["apt-get", "-s", "-q", "install"]
    if not recommends:
        cmd.append("--no-install-recommends")
    if status is not None:
        cmd += ["-o", f"Dir::State::status={status}"]
    inst = set()
    for line in apt_lines(cmd + list(pkgs)):
        m = re.match(r"^Inst (\S+)", line)
        if m:
            inst.add(m.group(1))
    return inst


def sizes(names):
    """{name: Installed-Size in KiB} of the candidate versions."""
    out = {}
    if not names:
        return out
    for para in subprocess.run(["apt-cache", "show", "--no-all-versions"] + sorted(names),
                               capture_output=True, text=True).stdout.split("\n\n"):
        name = re.search(r"^Package: (\S+)", para, re.M)
        size = re.search(r"^Installed-Size: (\d+)", para, re.M)
        if name:
            out[name.group(1)] = int(size.group(1)) if size else 0
    return out


def figure(names):
    kib = sizes(names)
    return {"packages": len(names), "mb": round(sum(kib.values()) / 1024)}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recommends", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("packages", nargs="+")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "status")
        open(empty, "w").close()
        base = base_packages()
        minimal = simulate(base, args.recommends, empty)
        with_ours = simulate(base + args.packages, args.recommends, empty)
    result = {
        "recommends": args.recommends,
        "minimal_debian": figure(with_ours - minimal),
        "here": figure(simulate(args.packages, args.recommends)),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"on a minimal Debian (Priority required/important only): "
              f"{result['minimal_debian']['packages']} packages, {result['minimal_debian']['mb']} MB")
        print(f"on this machine now: {result['here']['packages']} packages, {result['here']['mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
