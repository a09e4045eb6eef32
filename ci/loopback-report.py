#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prints the short human report of scripts/loopback.sh from its report.json, then checks every
figure it printed against the others (exit 1 when a check fails)."""
import json
import sys

SGLS_IN_CAPSULE = 1 << 20  # SGLS bit 20: SGL Data Block with the Offset subtype (in-capsule data)


def checks(r):
    """(name, ok, detail) for each printed figure that can be checked. A missing figure fails."""
    n, w = r.get("negotiated") or {}, r.get("writes") or {}
    host = r.get("host") or {}
    ics, ioccsz, sgls = n.get("in_capsule_data_size"), n.get("ioccsz"), n.get("sgls")
    out = []

    def add(name, ok, detail):
        out.append((name, bool(ok), detail))

    add("data verified (sha256 and length of the read-back)", r.get("data_verified") is True,
        f"{r.get('bytes_read')} bytes read of {r.get('input_bytes')}")
    # The host writes whole LBAs: an input with a partial last LBA is padded with zeros, so the
    # bytes written are the input size rounded up to the LBA size (the default generated input,
    # 3 MiB + 1000 bytes, is such a file on purpose).
    size, lba = r.get("input_bytes"), r.get("lba_size")
    if isinstance(size, int) and isinstance(lba, int) and lba > 0:
        padded = -(-size // lba) * lba
        add("bytes written = input size rounded up to the LBA size",
            r.get("bytes_written") == padded,
            f"{r.get('bytes_written')} written; input {size} bytes, {padded} in {lba}-byte LBAs")
    else:
        add("bytes written = input size rounded up to the LBA size", False,
            f"input_bytes {size}, lba_size {lba}, bytes_written {r.get('bytes_written')}")
    add("ICDOFF 0", n.get("icdoff") == 0, f"ICDOFF {n.get('icdoff')}")
    if isinstance(ics, int) and isinstance(ioccsz, int) and isinstance(sgls, int):
        # IOCCSZ is (64 + size) / 16, rounded down (Fabrics 1.1 §4.6 / Identify IOCCSZ).
        add("IOCCSZ = (64 + in-capsule size) / 16", ioccsz == (64 + ics) // 16,
            f"IOCCSZ {ioccsz}, in-capsule {ics} bytes")
        add("SGLS bit 20 set exactly when in-capsule data is on",
            bool(sgls & SGLS_IN_CAPSULE) == (ics > 0), f"SGLS 0x{sgls:x}, in-capsule {ics}")
        add("the host chose in-capsule data exactly when the target offers it",
            n.get("in_capsule_enabled") is (ics > 0),
            f"host in_capsule_enabled {n.get('in_capsule_enabled')}, in-capsule {ics}")
    else:
        add("negotiated IOCCSZ, SGLS and in-capsule size present", False,
            f"IOCCSZ {ioccsz}, SGLS {sgls}, in-capsule {ics}")
    runs = [host.get("write") or {}, r.get("host_write_small") or {}]
    host_ic = [j.get("stats", {}).get("writes_in_capsule") for j in runs]
    host_keyed = [j.get("stats", {}).get("writes_keyed") for j in runs]
    tic, trr = w.get("in_capsule"), w.get("rdma_read")
    if None in host_ic or None in host_keyed or tic is None or trr is None:
        add("target's write counters = the host's", False,
            f"target {tic} in-capsule, {trr} RDMA READ; host {host_ic}, {host_keyed}")
    else:
        add("target's write counters = the host's", tic == sum(host_ic) and trr == sum(host_keyed),
            f"target {tic} in-capsule, {trr} RDMA READ; host {sum(host_ic)}, {sum(host_keyed)}")
        if isinstance(ics, int):
            # The second write is 4 KiB: in-capsule whenever the target takes 4096 bytes.
            add("the 4 KiB write went in-capsule exactly when in-capsule size >= 4096",
                (host_ic[1] == 1) == (ics >= 4096), f"{host_ic[1]} in-capsule, in-capsule {ics}")
            if ics == 0:
                add("no in-capsule write with in-capsule data off", tic == 0, f"{tic}")
    c = r.get("capsules") or {}
    if c.get("with_in_capsule_data") is not None and isinstance(ics, int) and ics == 0:
        add("no capsule with in-capsule data when it is off", c["with_in_capsule_data"] == 0,
            f"{c['with_in_capsule_data']}")
    return out


def main(path):
    with open(path) as f:
        r = json.load(f)
    n, w = r.get("negotiated", {}), r.get("writes", {})
    sgls = n.get("sgls")
    sgls_text = f"0x{sgls:08x}" if isinstance(sgls, int) else str(sgls)
    if isinstance(sgls, int):
        bits = [b for b in (0, 1, 2, 20) if sgls & (1 << b)]
        sgls_text += " (bits " + ", ".join(str(b) for b in bits) + " set)"
    print("nvmf-rdma loopback over soft-RoCE")
    size, lba = r.get("input_bytes"), r.get("lba_size")
    tail = ""
    if isinstance(size, int) and isinstance(lba, int) and lba > 0:
        tail = (f"; last LBA {size % lba} of {lba} bytes, padded by the host" if size % lba
                else f"; a whole number of {lba}-byte LBAs")
    if r.get("input_generated"):
        print(f"  input            generated: {size} random bytes{tail}"
              " (--data FILE to write your own)")
    else:
        print(f"  input            {r.get('input')} ({size} bytes{tail})")
    print(f"  IOCCSZ           {n.get('ioccsz')} (16-byte units)")
    print(f"  ICDOFF           {n.get('icdoff')}")
    print(f"  SGLS             {sgls_text}")
    print(f"  in-capsule data  {n.get('in_capsule_data_size')} bytes")
    if n.get("max_inline_data") is not None:
        print(f"  max_inline_data  {n.get('max_inline_data')} bytes (granted to the host's QPs)")
    c, resp = r.get("capsules") or {}, r.get("responses") or {}
    if c.get("inline") is not None:
        print(f"  capsules         {c.get('inline')} posted inline, {c.get('by_reference')} by"
              f" reference ({c.get('with_in_capsule_data')} of them with in-capsule data)"
              "\n                   (host's counters, every invocation: identify, writes, read; each up to its JSON"
              " report, so without its disconnect's shutdown commands)")
    if resp.get("inline") is not None:
        print(f"  responses        {resp.get('inline')} posted inline,"
              f" {resp.get('by_reference')} by reference (target's counters)")
    print(f"  writes           {w.get('in_capsule')} in-capsule, {w.get('rdma_read')} by RDMA READ"
          " (target's counters)")
    print(f"  bytes            {r.get('bytes_written')} written, {r.get('bytes_read')} read")
    print(f"  data verified    {'yes' if r.get('data_verified') else 'NO'}"
          f" (sha256 {r.get('sha256_written', '')[:16]}...)")
    results = checks(r)
    failed = [c for c in results if not c[1]]
    print(f"  checks           {len(results) - len(failed)} of {len(results)} pass")
    for name, _, detail in failed:
        print(f"    FAILED {name}: {detail}")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
