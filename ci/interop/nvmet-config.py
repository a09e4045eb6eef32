#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Applies an nvmetcli config.json to the kernel target's configfs, or clears it.

Usage: nvmet-config.py apply FILE | clear   (apply clears what was there first)
The same file drives nvmf-target --config, so the two targets can be compared. Only the keys
nvmf-target also reads are applied; any other key is an error naming it (as nvmf-target would
give), so a test never runs the two targets on different settings unknowingly.
"""
import json
import os
import sys

ROOT = "/sys/kernel/config/nvmet"
PORT_ADDR = {"trtype", "adrfam", "traddr", "trsvcid", "treq"}
PORT_PARAM = {"inline_data_size"}
SUBSYS_ATTR = {"allow_any_host", "serial", "model", "version", "cntlid_min", "cntlid_max"}


def die(msg):
    print(f"nvmet-config: {msg}", file=sys.stderr)
    sys.exit(1)


def write(path, value):
    try:
        with open(path, "w") as f:
            f.write(str(value))
    except OSError as e:
        die(f"write {value!r} to {path}: {e}")


def check(obj, known, where):
    for key in obj:
        if key not in known:
            die(f"{where}.{key}: not applied by this script (unsupported by nvmf-target too)")


def apply(path):
    clear()  # one Python start for both: each costs ~20 s under emulation
    cfg = json.load(open(path))
    check(cfg, {"hosts", "ports", "subsystems"}, "(top)")
    for h in cfg.get("hosts", []):
        os.makedirs(f"{ROOT}/hosts/{h['nqn']}", exist_ok=True)
    for i, s in enumerate(cfg.get("subsystems", [])):
        where = f"subsystems[{i}]"
        check(s, {"nqn", "attr", "allowed_hosts", "namespaces"}, where)
        sd = f"{ROOT}/subsystems/{s['nqn']}"
        os.makedirs(sd, exist_ok=True)
        attr = s.get("attr", {})
        check(attr, SUBSYS_ATTR, where + ".attr")
        for k, v in attr.items():
            write(f"{sd}/attr_{k}", v)
        for h in s.get("allowed_hosts", []):
            link = f"{sd}/allowed_hosts/{h}"
            if not os.path.islink(link):
                os.symlink(f"{ROOT}/hosts/{h}", link)
        for j, ns in enumerate(s.get("namespaces", [])):
            nw = f"{where}.namespaces[{j}]"
            check(ns, {"nsid", "enable", "device", "ana"}, nw)
            nd = f"{sd}/namespaces/{ns['nsid']}"
            os.makedirs(nd, exist_ok=True)
            check(ns.get("ana", {}), {"grpid"}, nw + ".ana")
            if "grpid" in ns.get("ana", {}):
                write(f"{nd}/ana_grpid", ns["ana"]["grpid"])
            dev = ns["device"]
            check(dev, {"path", "nguid", "uuid"}, nw + ".device")
            write(f"{nd}/device_path", dev["path"])
            for k in ("nguid", "uuid"):
                if k in dev:
                    write(f"{nd}/device_{k}", dev[k])
            write(f"{nd}/enable", ns.get("enable", 1))
    for i, p in enumerate(cfg.get("ports", [])):
        where = f"ports[{i}]"
        check(p, {"portid", "addr", "param", "referrals", "subsystems", "ana_groups"}, where)
        pd = f"{ROOT}/ports/{p['portid']}"
        os.makedirs(pd, exist_ok=True)
        for g in p.get("ana_groups", []):
            check(g, {"grpid", "ana"}, where + ".ana_groups[]")
            gd = f"{pd}/ana_groups/{g['grpid']}"
            os.makedirs(gd, exist_ok=True)  # group 1 is there from the start
            if "state" in g.get("ana", {}):
                write(f"{gd}/ana_state", g["ana"]["state"])
        check(p["addr"], PORT_ADDR, where + ".addr")
        for k, v in p["addr"].items():
            write(f"{pd}/addr_{k}", v)
        check(p.get("param", {}), PORT_PARAM, where + ".param")
        for k, v in p.get("param", {}).items():
            write(f"{pd}/param_{k}", v)  # before linking: nvmet refuses it on a linked port
        if p.get("referrals"):
            die(f"{where}.referrals: not applied")
        for n in p.get("subsystems", []):
            link = f"{pd}/subsystems/{n}"
            if not os.path.islink(link):
                os.symlink(f"{ROOT}/subsystems/{n}", link)


def clear():
    if not os.path.isdir(ROOT):
        return
    for port in os.listdir(f"{ROOT}/ports"):
        pd = f"{ROOT}/ports/{port}"
        for n in os.listdir(f"{pd}/subsystems"):
            os.unlink(f"{pd}/subsystems/{n}")
        for g in os.listdir(f"{pd}/ana_groups"):
            if g != "1":  # the port's own group goes with the port
                os.rmdir(f"{pd}/ana_groups/{g}")
        os.rmdir(pd)
    for s in os.listdir(f"{ROOT}/subsystems"):
        sd = f"{ROOT}/subsystems/{s}"
        for ns in os.listdir(f"{sd}/namespaces"):
            write(f"{sd}/namespaces/{ns}/enable", 0)
            os.rmdir(f"{sd}/namespaces/{ns}")
        for h in os.listdir(f"{sd}/allowed_hosts"):
            os.unlink(f"{sd}/allowed_hosts/{h}")
        os.rmdir(sd)
    for h in os.listdir(f"{ROOT}/hosts"):
        os.rmdir(f"{ROOT}/hosts/{h}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "apply":
        apply(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "clear":
        clear()
    else:
        die("usage: nvmet-config.py apply FILE | clear")
