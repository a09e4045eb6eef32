#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/setup.sh installs nothing that would touch /boot.

On a bootable Debian 12 with initramfs-tools, installing a package with a dpkg trigger of
`update-initramfs` or an initramfs-tools hook rebuilds /boot/initrd.img-*. Checks on the
package list of `scripts/setup.sh --list` (every group):
  1. none is a package known to carry such a trigger or hook on Debian 12, or to Depend on one
     (busybox-static, dmsetup, libdevmapper1.02.1, lvm2, cryptsetup, ...): setup.sh unpacks
     busybox-static and dmsetup into the cache with ci/vm/fetch-tools instead;
  2. on this machine's dpkg database: no listed package, nor an installed package it Depends or
     Pre-Depends on (recursively), carries such a trigger (/var/lib/dpkg/info/PKG.triggers) or
     ships a file under /usr/share/initramfs-tools or /etc/initramfs-tools (PKG.list), unless it
     is a package of Priority required or important or one of their dependencies: those are on
     every Debian 12 already, so apt never installs them (kmod; dmsetup, which systemd pulls in
     through libcryptsetup12 and libdevmapper1.02.1, as fio does through librbd1).
A package the list holds and this machine lacks is reported, not judged by check 2. (A trigger
with no interested package, initramfs-tools absent, does nothing: the check is for machines that
boot from /boot, and is made on any.)
"""
import glob
import os
import re
import subprocess
import sys

# Debian 12 packages with an update-initramfs trigger or initramfs-tools hook, and packages that
# Depend on one (so installing them pulls the trigger in).
KNOWN = {
    "busybox", "busybox-static", "dmsetup", "libdevmapper1.02.1", "libdevmapper-dev",
    "libdevmapper-event1.02.1", "initramfs-tools", "initramfs-tools-core", "klibc-utils",
    "lvm2", "thin-provisioning-tools", "cryptsetup", "cryptsetup-bin", "cryptsetup-initramfs",
    "libcryptsetup12", "mdadm", "plymouth", "open-iscsi", "multipath-tools", "zfs-initramfs",
    "btrfs-progs", "intel-microcode", "amd64-microcode", "dracut", "dracut-core", "udev",
}
KNOWN_PREFIXES = ("linux-image-", "firmware-")
BASE_PRIORITIES = {"required", "important"}


def setup_packages(setup):
    out = subprocess.run([setup, "--list"], capture_output=True, text=True, check=True).stdout
    return out.split()


def installed():
    """{name: (priority, [dependency names])} of the installed packages."""
    fmt = "${Package}\t${Status}\t${Priority}\t${Depends}, ${Pre-Depends}\n"
    out = subprocess.run(["dpkg-query", "-W", "-f=" + fmt], capture_output=True, text=True,
                         check=True).stdout
    pkgs = {}
    for line in out.splitlines():
        name, status, prio, deps = line.split("\t")
        if not status.endswith(" installed"):
            continue
        names = [re.split(r"[\s:(]", alt.strip())[0]
                 for dep in deps.split(",") for alt in dep.split("|") if alt.strip()]
        pkgs[name] = (prio, names)
    return pkgs


def closure(pkgs, roots):
    """The installed packages ROOTS and all they Depend or Pre-Depend on, and {dep: a dependent}."""
    seen, pending, via = set(), list(roots), {}
    while pending:
        p = pending.pop()
        if p in seen:
            continue
        seen.add(p)
        for d in pkgs[p][1]:
            if d in pkgs and d not in seen:
                via.setdefault(d, p)
                pending.append(d)
    return seen, via


def touches_initramfs(name):
    """Why installing NAME rebuilds the initramfs, from dpkg's info files, or ''."""
    info = "/var/lib/dpkg/info/"
    for f in glob.glob(info + name + ".triggers") + glob.glob(info + name + ":*.triggers"):
        if re.search(r"update-initramfs", open(f).read()):
            return f"{os.path.basename(f)} has an update-initramfs trigger"
    for f in glob.glob(info + name + ".list") + glob.glob(info + name + ":*.list"):
        for path in open(f).read().splitlines():
            if path.startswith(("/usr/share/initramfs-tools/", "/etc/initramfs-tools/")):
                return f"ships {path}"
    return ""


def main(argv):
    setup = argv[1] if len(argv) > 1 else "scripts/setup.sh"
    listed = setup_packages(setup)
    failures = []
    if len(listed) < 10:
        failures.append(f"{setup} --list printed {len(listed)} packages: {listed}")
    for p in listed:
        if p in KNOWN or p.startswith(KNOWN_PREFIXES):
            failures.append(f"{setup} lists {p}: it carries an update-initramfs trigger or"
                            " initramfs-tools hook, or Depends on one (use ci/vm/fetch-tools' cache)")

    pkgs = installed()
    missing = [p for p in listed if p not in pkgs]
    seen, via = closure(pkgs, [p for p in listed if p in pkgs])
    base, base_via = closure(pkgs, [p for p, (prio, _) in pkgs.items() if prio in BASE_PRIORITIES])
    judged = 0
    for p in sorted(seen):
        why = touches_initramfs(p)
        if not why:
            continue
        judged += 1
        if p in base:
            chain = [p]
            while chain[-1] in base_via:
                chain.append(base_via[chain[-1]])
            print(f"ok: {p} ({why}) is on every Debian 12 already: {' <- '.join(chain)}"
                  f" (Priority {pkgs[chain[-1]][0]})")
            continue
        chain = [p]
        while chain[-1] in via:
            chain.append(via[chain[-1]])
        failures.append(f"{' <- '.join(chain)}: {p} {why}")
    print(f"{len(listed)} listed packages, {len(seen)} with their installed dependencies, "
          f"{judged} of them with an initramfs trigger or hook; not installed here: {missing}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
