#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Field checks for the interop suite; every mismatch names both sides' values.

Usage:
  compare.py idctrl NVME_ID_CTRL.json NVMF_HOST_IDENTIFY.json
      IOCCSZ, SGLS, MDTS, ICDOFF, MN, SN, FR as the Linux host (nvme id-ctrl) and nvmf-host read them.
  compare.py list NVME_LIST.json DEVICE MODEL SERIAL FIRMWARE
      nvme list shows our model, serial and firmware strings for DEVICE.
  compare.py disc A.json B.json SUBNQN [A-name B-name]
      the Discovery Log entry for SUBNQN in two discovery reports (nvme discover -o json or
      nvmf-host discover --json), field by field.
  compare.py negotiation NVMF_HOST_IDENTIFY.json INLINE_SIZE
      the kernel target's IOCCSZ, and what nvmf-host chose from it: in-capsule data on (and its
      size) only when INLINE_SIZE > 0.
  compare.py paths NVMF_TARGET_REPORT.json INLINE_SIZE [POLL_GROUPS]
      the target's counters: writes came in-capsule (when INLINE_SIZE > 0) and by RDMA READ,
      reads happened, and the effective in-capsule size is INLINE_SIZE; with POLL_GROUPS, the
      queues (per_queue, live and freed) were served by that many poll groups ("auto": by as
      many as the report's poll_groups, the groups --poll-groups auto ran).
  compare.py deep OURS_FIO.json[,OURS_FIO.json...] NVMET_FIO.json[,...] MIN_RATIO
      one deep-writes job (ci/lib/deep_writes.sh) on both targets, one report per round: in
      every round fio reported no error and its verification read blocks back inside the timed
      run, and nvmf-target's write IOPS (the median of its rounds) are at least MIN_RATIO x
      nvmet-rdma's (the median of its rounds).
  compare.py hostbench OURS_BENCH.json NVMET_BENCH.json MIN_RATIO
      nvmf-host bench --verify against both targets: no error, every read verified, no queue
      lost, and the write IOPS against nvmf-target at least MIN_RATIO x against nvmet-rdma.
Exit 0 when all fields agree, 1 otherwise. A field missing on either side is a failure (never
skipped), and so is a comparison with nothing to compare.
"""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def num(v):
    if isinstance(v, str):
        return int(v, 0)
    return int(v)


MISSING = object()  # a field one side does not have


def show(v):
    return "(missing)" if v is MISSING else repr(v)


def report(rows):
    if not rows:
        print("BAD nothing to compare")
        return 1
    bad = 0
    for name, a_name, a, b_name, b in rows:
        same = a is not MISSING and b is not MISSING and a == b
        bad += not same
        print(f"{'ok ' if same else 'BAD'} {name}: {a_name} {show(a)}, {b_name} {show(b)}")
    return 1 if bad else 0


def field(d, key, conv=lambda v: v):
    """d[key] converted, or MISSING when the key is absent or null."""
    v = d.get(key)
    return MISSING if v is None else conv(v)


def idctrl(kernel_path, ours_path):
    k = load(kernel_path)
    o = load(ours_path)["controller"]
    rows = []
    for f in ("ioccsz", "sgls", "mdts", "cmic", "icdoff", "iorcsz", "msdbd", "kas", "cntrltype"):
        rows.append((f.upper(), "nvme id-ctrl", field(k, f, num), "nvmf-host", field(o, f, num)))
    for f in ("mn", "sn", "fr"):
        strip = lambda v: str(v).strip()  # noqa: E731
        rows.append((f.upper(), "nvme id-ctrl", field(k, f, strip), "nvmf-host",
                     field(o, f, strip)))
    return report(rows)


def devices(j):
    out = []
    if isinstance(j, dict):
        if "DevicePath" in j:
            out.append(j)
        for v in j.values():
            out += devices(v)
    elif isinstance(j, list):
        for v in j:
            out += devices(v)
    return out


def nvme_list(path, device, model, serial, firmware):
    strip = lambda v: str(v).strip()  # noqa: E731
    for d in devices(load(path)):
        if d["DevicePath"] == device:
            return report([
                ("ModelNumber", "nvme list", field(d, "ModelNumber", strip), "configured", model),
                ("SerialNumber", "nvme list", field(d, "SerialNumber", strip), "configured",
                 serial),
                ("Firmware", "nvme list", field(d, "Firmware", strip), "nvmf-target", firmware),
            ])
    print(f"BAD nvme list: no device {device}")
    return 1


NAMES = {
    "trtype": {1: "rdma"},
    "adrfam": {1: "ipv4", 2: "ipv6"},
    "subtype": {1: "discovery subsystem referral", 2: "nvme subsystem",
                3: "current discovery subsystem"},
}


ENTRY_FIELDS = ["trtype", "adrfam", "subtype", "treq", "portid", "trsvcid", "subnqn", "traddr",
                "rdma_prtype", "rdma_qptype", "rdma_cms", "rdma_pkey"]


def entries(j):
    recs = j.get("records") or j.get("Records") or []
    return recs


def norm(e):
    """Entry fields in one vocabulary, whichever tool printed them. nvmf-host's JSON carries the
    raw codes too ("raw"); nvme-cli prints names only (and TREQ without bit 2)."""
    out = {}
    for k, v in e.get("raw", {}).items():
        out["raw_" + k] = v
    for k in ENTRY_FIELDS:
        v = e.get(k)
        if isinstance(v, str):
            v = v.strip()
        if k in ("portid", "rdma_pkey") and v is not None:
            v = num(v)
        if k in ("trsvcid",) and v is not None:
            v = str(v)
        if k == "treq" and isinstance(v, str):
            v = v.split(",")[0].strip()
        if k in ("rdma_prtype", "rdma_qptype", "rdma_cms") and isinstance(v, str):
            v = v.replace("_", "-")
        out[k] = v
    return out


def disc(a_path, b_path, subnqn, a_name="A", b_name="B"):
    a = [norm(e) for e in entries(load(a_path))]
    b = [norm(e) for e in entries(load(b_path))]
    print(f"{a_name}: {len(a)} entries {[e['subnqn'] for e in a]}; "
          f"{b_name}: {len(b)} entries {[e['subnqn'] for e in b]}")
    ea = [e for e in a if e["subnqn"] == subnqn]
    eb = [e for e in b if e["subnqn"] == subnqn]
    if not ea or not eb:
        print(f"BAD entry for {subnqn}: {a_name} has {len(ea)}, {b_name} has {len(eb)}")
        return 1
    # Every entry field, by name, must be on both sides. Raw codes only nvmf-host prints
    # (nvme-cli prints names): compared where both reports have them, and the names derived from
    # them are compared anyway.
    raw = sorted(k for k in set(ea[0]) & set(eb[0]) if k.startswith("raw_"))
    rows = [(k, a_name, field(ea[0], k), b_name, field(eb[0], k)) for k in ENTRY_FIELDS + raw]
    rows.append(("entries (subtype, subnqn)", a_name, sorted((e["subtype"], e["subnqn"]) for e in a),
                 b_name, sorted((e["subtype"], e["subnqn"]) for e in b)))
    ja, jb = load(a_path), load(b_path)
    print(f"GENCTR (a change counter, not compared): {a_name} {ja.get('genctr')}, "
          f"{b_name} {jb.get('genctr')}")
    return report(rows)


def negotiation(path, inline_size):
    j = load(path)
    c, n = j["controller"], j.get("negotiation", {})
    print(f"kernel target advertised: IOCCSZ {c['ioccsz']} ({num(c['ioccsz']) * 16 - 64} bytes "
          f"in-capsule), SGLS {c['sgls']}, ICDOFF {c['icdoff']}, MSDBD {c.get('msdbd')}, "
          f"MDTS {c['mdts']}")
    print(f"nvmf-host used: {json.dumps(n, sort_keys=True)}")
    size = int(inline_size)
    want = (64 + size) // 16
    return report([
        ("IOCCSZ", "kernel target", field(c, "ioccsz", num),
         f"param_inline_data_size {inline_size} implies", want),
        ("in-capsule data on", "nvmf-host", field(n, "in_capsule_enabled"),
         f"inline_data_size {inline_size} implies", size > 0),
        ("in-capsule data size", "nvmf-host", field(n, "in_capsule_data_size", num),
         "configured", size),
    ])


def paths(path, inline_size, poll_groups=None):
    r = load(path)
    size = int(inline_size)
    w = r["writes"]
    print(f"in_capsule_data_size {r['in_capsule_data_size']} (configured {size}); writes "
          f"in-capsule {w['in_capsule']}, by RDMA READ {w['rdma_read']}; reads {r['reads']}; "
          f"errors {r['errors_by_status']}")
    rows = [
        ("in-capsule data size", "nvmf-target", field(r, "in_capsule_data_size"), "configured",
         size),
        ("writes by RDMA READ > 0", "nvmf-target", w["rdma_read"] > 0, "expected", True),
        ("writes in-capsule > 0", "nvmf-target", w["in_capsule"] > 0, "expected", size > 0),
        ("reads > 0", "nvmf-target", r["reads"] > 0, "expected", True),
    ]
    if poll_groups is not None:
        groups = sorted({q.get("group") for q in r.get("per_queue", [])}, key=str)
        print(f"poll groups that served queues: {groups}")
        if poll_groups == "auto":
            print(f"--poll-groups auto ran {r.get('poll_groups')} groups "
                  f"({r.get('poll_groups_reason')})")
            rows.append(("poll groups serving queues", "nvmf-target", len(groups),
                         "--poll-groups auto", field(r, "poll_groups")))
        else:
            rows.append(("poll groups serving queues", "nvmf-target", len(groups),
                         "--poll-groups", int(poll_groups)))
    return report(rows)


def fio_job(path):
    """The one (group-reported) job of a fio JSON output file; fio may print warnings before it."""
    text = open(path).read()
    j = json.loads(text[text.index("{"):])["jobs"][0]
    w, r = j["write"], j["read"]
    return {"error": j["error"], "write_ios": w["total_ios"], "write_iops": w["iops"],
            "verify_reads": r["total_ios"],
            "p99_ms": w["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6,
            "max_ms": w["clat_ns"]["max"] / 1e6}


def side_by_side(ours, nvmet, min_ratio, describe, checks):
    """Both targets' runs of one job (a list of rounds each): each run's line (describe(j)) and
    checks ((what, ok) of checks(j)), then nvmf-target's write IOPS, the median of its rounds
    (one round disturbed by the emulated machine weighs nothing), against at least min_ratio x
    nvmet-rdma's median."""
    need = float(min_ratio)
    bad = 0
    means = {}
    for name, runs in (("nvmf-target", ours), ("nvmet-rdma", nvmet)):
        for i, j in enumerate(runs):
            label = name if len(runs) == 1 else f"{name} round {i + 1}"
            print(describe(label, j))
            for what, ok in checks(j):
                bad += not ok
                print(f"{'ok ' if ok else 'BAD'} {label}: {what}")
        means[name] = statistics.median(j["write_iops"] for j in runs) if runs else 0.0
    base = means["nvmet-rdma"]
    ratio = means["nvmf-target"] / base if base > 0 else 0.0
    ok = base > 0 and ratio >= need
    bad += not ok
    rounds = "" if len(ours) == 1 and len(nvmet) == 1 else (
        f" (medians of {len(ours)} and {len(nvmet)} rounds: "
        f"{means['nvmf-target']:.1f} / {base:.1f})")
    print(f"{'ok ' if ok else 'BAD'} nvmf-target / nvmet-rdma write IOPS {ratio:.2f}"
          f"{rounds} (at least {need})")
    return 1 if bad else 0


def deep(ours_paths, nvmet_paths, min_ratio):
    return side_by_side(
        [fio_job(p) for p in ours_paths.split(",")],
        [fio_job(p) for p in nvmet_paths.split(",")], min_ratio,
        lambda name, j: (f"{name}: {j['write_iops']:.1f} write IOPS ({j['write_ios']} writes), "
                         f"{j['verify_reads']} blocks verified, p99 {j['p99_ms']:.0f} ms, "
                         f"max {j['max_ms']:.0f} ms, fio error {j['error']}"),
        lambda j: (("fio error 0", j["error"] == 0), ("writes > 0", j["write_ios"] > 0),
                   ("verified inside the run", j["verify_reads"] > 0)))


def bench_all(path):
    """nvmf-host bench --json: the all-jobs line of its one block size, and the checks."""
    r = load(path)
    a = r["results"][0]["all"]
    return {"write_iops": a["write"]["iops"], "write_ios": a["write"]["total_ios"],
            "p99_ms": a["write"]["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6,
            "verified": r["verify"]["checked"], "verify_errors": r["verify"]["errors"],
            "losses": r["recovery"]["losses"], "error": r["error"]}


def hostbench(ours_path, nvmet_path, min_ratio):
    return side_by_side(
        [bench_all(ours_path)], [bench_all(nvmet_path)], min_ratio,
        lambda name, j: (f"nvmf-host on {name}: {j['write_iops']:.1f} write IOPS "
                         f"({j['write_ios']} writes), {j['verified']} reads verified, p99 "
                         f"{j['p99_ms']:.0f} ms, {j['losses']} queues lost, error {j['error']!r}"),
        lambda j: (("no error", j["error"] == ""), ("reads verified", j["verified"] > 0),
                   ("no verify error", j["verify_errors"] == 0),
                   ("no queue lost", j["losses"] == 0)))


def fio_read(path):
    """The read side of the one job of a fio JSON output file (a QD1 randread victim)."""
    text = open(path).read()
    j = json.loads(text[text.index("{"):])["jobs"][0]
    r = j["read"]
    return {"error": j["error"], "reads": r["total_ios"], "iops": r["iops"],
            "p99_ms": r["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6}


def victim(alone_path, beside_path, max_factor):
    """A QD1 victim's fio run alone and beside another host: both without error and with reads;
    its p99 completion latency beside the other host at most max_factor x alone ("none": the
    factor is reported, not judged)."""
    limit = None if max_factor == "none" else float(max_factor)
    a, b = fio_read(alone_path), fio_read(beside_path)
    bad = 0
    for name, j in (("alone", a), ("beside", b)):
        print(f"victim {name}: {j['reads']} reads, {j['iops']:.1f} IOPS, p99 {j['p99_ms']:.3f} ms,"
              f" fio error {j['error']}")
        for what, ok in (("fio error 0", j["error"] == 0), ("reads > 0", j["reads"] > 0)):
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} victim {name}: {what}")
    factor = b["p99_ms"] / a["p99_ms"] if a["p99_ms"] > 0 else float("inf")
    if limit is None:
        print(f"victim p99 beside / alone {factor:.2f} (reported, not judged)")
        return 1 if bad else 0
    ok = a["p99_ms"] > 0 and factor <= limit
    bad += not ok
    print(f"{'ok ' if ok else 'BAD'} victim p99 beside / alone {factor:.2f} (at most {limit})")
    return 1 if bad else 0


def withheld(log_path, max_s):
    """withhold_receives' last JSON line: every I/O queue torn down, the last within max_s of
    its Flushes being sent."""
    done = None
    for line in open(log_path):
        if line.startswith("{"):
            j = json.loads(line)
            if j.get("phase") == "done":
                done = j
    if done is None:
        print("BAD no closing line from withhold_receives")
        return 1
    print(f"{done['queues']} queues, {done['flushes_sent']} Flushes sent in {done['sent_s']} s; "
          f"{done['torn_down']} torn down, the last {done['teardown_s_max']} s after")
    ok = done["queues"] > 0 and done["torn_down"] == done["queues"] and \
        done["teardown_s_max"] <= float(max_s)
    print(f"{'ok ' if ok else 'BAD'} every queue torn down within {max_s} s")
    return 0 if ok else 1


def main(argv):
    cmd, args = argv[0], argv[1:]
    fn = {"idctrl": idctrl, "list": nvme_list, "disc": disc, "negotiation": negotiation,
          "paths": paths, "deep": deep,
          "hostbench": hostbench, "victim": victim, "withheld": withheld}[cmd]
    return fn(*args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
