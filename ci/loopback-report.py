#!/usr/bin/env python3
"""Prints the short human report of scripts/loopback.sh from its report.json."""
import json
import sys


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
              " (--input FILE to write your own)")
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


if __name__ == "__main__":
    main(sys.argv[1])
