#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the hand-made seeds of fuzz/corpus/ (rerun after changing a fuzzer's input format).

Each fuzzer reads its input as fuzz/input.h does: little-endian integers and byte runs, in the
order its source reads them. The seeds here are the well-formed cases a host sends (so the
fuzzers start past the first checks); inputs libFuzzer found that reproduced a fixed bug are
kept beside them as regression-* files.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOWED = b"nqn.2014-08.org.nvmexpress:uuid:allowed"
FUZZ_NQN = b"nqn.2024-01.io.nvmf-rdma:fuzz"
DISCOVERY_NQN = b"nqn.2014-08.org.nvmexpress.discovery"


def write(corpus, name, data):
    d = os.path.join(HERE, "corpus", corpus)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def cm_pd(qid, hrqsize, hsqsize, recfmt=0):
    return u16(recfmt) + u16(qid) + u16(hrqsize) + u16(hsqsize) + bytes(24)


def keyed_sgl(addr, length, rkey, subtype=0):
    return u64(addr) + length.to_bytes(3, "little") + u32(rkey) + bytes([0x40 | subtype])


def in_capsule_sgl(offset, length):
    return u64(offset) + u32(length) + bytes(3) + bytes([0x01])


def sqe(opcode, cid=1, nsid=0, dptr=bytes(16), cdw=(0, 0, 0, 0, 0, 0), flags=0x40):
    s = bytes([opcode, flags]) + u16(cid) + u32(nsid) + bytes(16) + dptr
    for c in cdw:
        s += u32(c)
    assert len(s) == 64
    return s


def connect_sqe(qid, sqsize, kato, sgl):
    s = bytes([0x7F, 0x40]) + u16(1) + bytes([0x01]) + bytes(19) + sgl
    s += u16(0) + u16(qid) + u16(sqsize) + bytes([0, 0]) + u32(kato) + bytes(12)
    assert len(s) == 64
    return s


def connect_data(cntlid, subnqn, hostnqn):
    d = bytes(16) + u16(cntlid) + bytes(238)
    d += subnqn.ljust(256, b"\0") + hostnqn.ljust(256, b"\0") + bytes(256)
    assert len(d) == 1024
    return d


def cm_seeds():
    # byte 0 odd: default limits; then the private data.
    write("cm_private_data", "admin-32", b"\x01" + cm_pd(0, 32, 31))
    write("cm_private_data", "io-128", b"\x01" + cm_pd(1, 128, 127))
    write("cm_private_data", "io-qid-too-high", b"\x01" + cm_pd(5, 128, 127))
    write("cm_private_data", "hsqsize-0", b"\x01" + cm_pd(1, 128, 0))
    write("cm_private_data", "recfmt-1", b"\x01" + cm_pd(0, 32, 31, recfmt=1))
    write("cm_private_data", "short", b"\x01" + cm_pd(0, 32, 31)[:31])
    write("cm_private_data", "padded-56", b"\x01" + cm_pd(1, 16, 15) + bytes(24))
    # byte 0 even: limits given (max_io_queues, admin size, io size).
    write("cm_private_data", "limits-max", b"\x00" + u16(0xFFFF) + u16(0xFFFF) + u32(0xFFFFFFFF)
          + cm_pd(0xFFFF, 0xFFFF, 0xFFFF))


def sgl_seeds():
    def ctx(area, received):  # shape 0: area = (u8 % 5) * 4096, received = u16 % (area + 1)
        return bytes([0, area // 4096]) + u16(received)

    tail = u64(0x1000) + u32(4096) + u32(0x1234) + b"\x00"
    write("sgl", "keyed-read", sqe(0x02, nsid=1, dptr=keyed_sgl(0x1000, 4096, 0x55)) + ctx(0, 0)
          + u64(4096) + tail)
    write("sgl", "keyed-invalidate", sqe(0x02, nsid=1, dptr=keyed_sgl(0x1000, 512, 7, 0xF))
          + ctx(0, 0) + u64(512) + tail)
    write("sgl", "in-capsule-write", sqe(0x01, nsid=1, dptr=in_capsule_sgl(0, 4096))
          + ctx(8192, 4096) + u64(4096) + tail)
    write("sgl", "in-capsule-offset-wrap",
          sqe(0x01, nsid=1, dptr=u64(0xFFFFFFFFFFFFF000) + u32(8192) + bytes(3) + b"\x01")
          + ctx(8192, 8192) + u64(8192) + tail)
    write("sgl", "in-capsule-short", sqe(0x01, nsid=1, dptr=in_capsule_sgl(4000, 200))
          + ctx(8192, 4100) + u64(200) + tail)
    write("sgl", "last-segment", sqe(0x01, nsid=1, dptr=bytes(15) + b"\x30") + ctx(8192, 0)
          + u64(0) + tail)


def connect_seeds():
    # shape bits: qid (0..3), 0x04 admin first, 0x08 force Connect, 0x10 in-capsule,
    # 0x20 encode the SGL, 0x40 good data with fuzzed NQN bytes, 0x80 allowed host.
    ic = in_capsule_sgl(0, 1024)
    write("connect", "admin-in-capsule", bytes([0x10]) + b"\x1e"
          + connect_sqe(0, 7, 5000, ic) + connect_data(0xFFFF, FUZZ_NQN, ALLOWED))
    write("connect", "admin-keyed", bytes([0x00]) + b"\x1e"
          + connect_sqe(0, 7, 5000, keyed_sgl(0x1000, 1024, 9))
          + connect_data(0xFFFF, FUZZ_NQN, ALLOWED))
    write("connect", "io-after-admin", bytes([0x15]) + b"\x1e"
          + connect_sqe(1, 15, 0, ic) + connect_data(1, FUZZ_NQN, ALLOWED))
    write("connect", "discovery", bytes([0x10]) + b"\x1e"
          + connect_sqe(0, 7, 0, ic) + connect_data(0xFFFF, DISCOVERY_NQN, b"nqn.other"))
    write("connect", "hostile-hostnqn", bytes([0x10 | 0x08 | 0x40 | 0x80]) + b"\x1e"
          + connect_sqe(0, 7, 5000, ic) + b"\x01" + b"\x01"
          + (b"nqn.\xff\xfe\x1b[31m\n\xc2\x85\xe2\x80\xa8" * 20)[:256])


def sequence_seeds():
    def open_q(slot, qid, hsqsize, hrqsize):
        return bytes([0, slot, 0, qid, hsqsize, hrqsize])

    def connect(slot, who=0x00, kato_step=2, sqsize=7, cntlid=None, keyed=False):
        b = bytes([1, slot]) + u16(1) + bytes([0, sqsize, 0, kato_step]) + bytes(16)
        b += bytes([who])
        if who % 4 == 2:
            b += bytes([cntlid - 1])
        if keyed:  # SGL case 1 (keyed), exact length, address, rkey, no invalidate
            b += b"\x01" + b"\x01" + b"\x00" + u64(0x1000) + u32(9) + b"\x01"
        else:
            b += b"\x00"
        return b

    def command(slot, kind, body):
        return bytes([2, slot]) + u16(7) + bytes([kind]) + body

    null_no_data = b"\x00" + b"\x00" + b"\x01"  # null SGL; no payload bytes; in-capsule = 0
    keyed_exact = b"\x01\x00" + u64(0x2000) + u32(0x55) + b"\x01"  # keyed, the length needed
    no_payload = b"\x00\x00" + u16(0)
    enable = command(0, 0, b"\x01\x01\x00" + null_no_data)
    shutdown = command(0, 0, b"\x01\x01\x02" + null_no_data)
    identify = command(0, 2, b"\x01\x01\x01" + keyed_exact + no_payload)
    log_page = command(0, 3, b"\x01\x01\x01\x01" + keyed_exact + no_payload)  # error log
    aer = command(0, 6, null_no_data)
    keep_alive = command(0, 7, null_no_data)
    set_kato = command(0, 4, b"\x01\x01\x01\x05" + null_no_data)  # Set Features KATO 5 ms

    def rw(op, slba, nlb0, sgl_and_payload):  # op 0 Read, 1 Write, 2 Flush; nsid 1
        return command(1, 8, bytes([op, 1, 1, slba, 1, nlb0]) + sgl_and_payload)

    # in-capsule at offset 0, 64 bytes of data, the whole payload sent in the capsule
    write_ic = rw(1, 1, 3, b"\x03\x01" + b"\x01" + bytes(range(64)) + b"\x01")
    write_keyed = rw(1, 2, 7, keyed_exact + no_payload)
    read = rw(0, 1, 3, keyed_exact + no_payload)
    read_done = bytes([4, 1, 1])
    admin = open_q(0, 0, 7, 8) + connect(0) + enable
    io = open_q(1, 1, 15, 16) + connect(1, who=0x02, cntlid=1)
    write("command_sequence", "admin-enable-identify", admin + identify + log_page + keep_alive)
    write("command_sequence", "io-write-read", admin + io + write_ic + write_keyed + read_done
          + read + bytes([5, 1]))
    write("command_sequence", "aer-on-small-admin-queue", admin + aer * 5 + keep_alive)
    write("command_sequence", "double-connect-admin", admin + connect(0))
    write("command_sequence", "connect-live-qid", admin + io + open_q(2, 1, 15, 16)
          + connect(2, who=0x02, cntlid=1) + write_ic)
    write("command_sequence", "connect-keyed-twice", open_q(0, 0, 7, 8) + connect(0, keyed=True)
          + connect(0, keyed=True) + bytes([4, 0, 1, 4, 0, 1]) + enable)
    write("command_sequence", "commands-before-connect", open_q(0, 0, 7, 8) + identify + enable
          + keep_alive + open_q(1, 1, 15, 16) + write_ic)
    write("command_sequence", "kato-expiry", admin + set_kato + io + bytes([6]) + u16(1000)
          + write_ic + bytes([6]) + u16(1000) + keep_alive)
    write("command_sequence", "shutdown-then-io", admin + io + aer + shutdown + write_ic + enable)
    write("command_sequence", "discovery", open_q(3, 0, 7, 8) + connect(3, who=0x10)
          + command(3, 0, b"\x01\x01\x00" + null_no_data)
          + command(3, 3, b"\x01\x00\x01\x01" + keyed_exact + no_payload))
    write("command_sequence", "admin-gone-under-io", admin + io + bytes([5, 0]) + write_ic
          + open_q(0, 0, 7, 8) + connect(0) + open_q(2, 1, 15, 16) + connect(2, who=0x02, cntlid=1))


def pipeline_seeds():
    # fuzz/request_pipeline_fuzzer.cc: a header (flags: 0x01 shared receive queue, 0x02 shared
    # chunks, bits 3:2 the queues: admin / admin + I/O / admin + 2 I/O / discovery + admin +
    # I/O; chunks - 1; SRQ depth - 2; per queue: queue size, send-queue and READ depth), then
    # operations (first byte).
    def header(flags, layout, chunks=8, srq_depth=16, shapes=None):
        sizes = {0: [(8, 8, 4)], 1: [(8, 8, 4), (16, 8, 4)], 2: [(8, 8, 4), (16, 8, 4), (16, 8, 4)],
                 3: [(8, 8, 4), (8, 8, 4), (16, 8, 4)]}[layout]
        b = bytes([flags | layout << 2, chunks - 1, srq_depth - 2])
        for i, (qs, sq, rd) in enumerate(shapes or sizes):
            most = 16 if (layout, i) in ((1, 1), (2, 1), (2, 2), (3, 2)) else 8
            b += bytes([(qs - 2) % (most - 1), sq - 2, rd - 1])
        return b

    # A command: queue, kind, variant, value, count, SGL shape (0: in-capsule when it fits,
    # 1: keyed), capsule length (3: the SQE and its data).
    def cmd(q, kind, v=0, x=0, n=0, s=0, t=3):
        return bytes([0, q, kind, v]) + u16(x) + bytes([n, s, t])

    def read_done(q, i=0, mode=0):
        return bytes([4, q, i, mode])

    def send_done(q, i=0):
        return bytes([5, q, i])

    def io_done(i=0, r=0):
        return bytes([6, i, r])

    def inject(q, k):
        return bytes([7, q, k])

    rnd = bytes([11])
    sweep = bytes([9, 0])

    def stop(q):
        return bytes([9, q << 1 | 1])

    def connect(q, keyed=False, v=0):
        return cmd(q, 0, v=v, s=1 if keyed else 0)

    enable = cmd(0, 1, v=0)
    admin = connect(0) + rnd + enable + rnd
    io = connect(1) + rnd

    def wr(q, nsid_v=0, slba=0, nlb0=7, keyed=False):
        return cmd(q, 9, v=nsid_v, x=slba, n=nlb0, s=1 if keyed else 0)

    def read(q, nsid_v=0, slba=0, nlb0=7):
        return cmd(q, 8, v=nsid_v, x=slba, n=nlb0, s=1)

    write("request_pipeline", "admin-identify-log-aer",
          header(0, 0) + admin + cmd(0, 3, v=1, s=1) + cmd(0, 4, v=1, n=1, s=1) + cmd(0, 7)
          + cmd(0, 6) + cmd(0, 6) + rnd * 4 + cmd(0, 2, v=2) + cmd(0, 1, v=1) + rnd * 4)
    write("request_pipeline", "file-io-backend",
          header(0, 1) + admin + io + wr(1) + io_done() + wr(1, keyed=True) + read_done(1)
          + io_done() + read(1) + io_done() + cmd(1, 10, v=4) + io_done() + io_done()
          + cmd(1, 11, v=0x10, x=0x0300, n=3, s=1) + read_done(1) + io_done() + io_done(0, 12)
          + io_done() + cmd(1, 12, v=0x10, x=9, n=3) + io_done(0, 11) + rnd * 8
          + cmd(1, 10) + io_done(0, 11) + cmd(1, 10) + rnd * 2  # a Flush error stays
          + cmd(1, 11, v=0x10, n=1, s=1) + read_done(1, 0, 5) + bytes([16])  # the host's ranges
          + bytes(4) + u32(4) + u64(60) + rnd * 4)
    write("request_pipeline", "shared-chunks-out-of-order",
          header(0x02, 2, chunks=1, shapes=[(8, 8, 4), (16, 3, 1), (16, 2, 2)]) + admin
          + connect(1) + rnd + connect(2) + rnd * 2
          + read(1, 2, 0, 15) + read(2, 2, 8, 3) + wr(1, 2, 4, 15, keyed=True)
          + wr(2, 1, 0, 3, keyed=True) + read(1, 1) + read(2, 3)
          + send_done(2, 1) + send_done(1, 0) + rnd + io_done(1) + read_done(2, 0) + rnd * 6
          + io_done(1, 13) + rnd * 6)
    flush_ram = cmd(1, 10, v=2)
    write("request_pipeline", "srq-parked-capsules",
          header(0x03, 1, chunks=2, srq_depth=6, shapes=[(8, 8, 4), (4, 2, 1)]) + admin + io
          + flush_ram * 4 + wr(1, 2, 0, 1) * 3 + send_done(1, 1) + rnd * 8 + flush_ram * 4
          + wr(1, 2, 0, 1) * 2 + stop(1) + stop(0))
    write("request_pipeline", "srq-parked-evicted",
          header(0x03, 1, chunks=2, srq_depth=6, shapes=[(8, 8, 4), (4, 2, 1)]) + admin + io
          + flush_ram * 4 + wr(1, 2, 0, 1) * 4 + rnd * 4 + sweep)
    write("request_pipeline", "shutdown-flush-aer",
          header(0x02, 1, chunks=2) + admin + io + cmd(0, 6) * 3 + wr(1, 0, 0, 3, keyed=True)
          + read_done(1) + cmd(0, 1, v=2) + io_done(1) + io_done() + rnd * 4 + cmd(0, 1, v=1)
          + rnd * 4)
    write("request_pipeline", "discovery-log",
          header(0, 3) + connect(0) + rnd + enable + rnd + cmd(0, 4, v=0, n=1, s=1)
          + cmd(0, 3, v=1, s=1) + rnd * 2 + connect(1) + rnd + cmd(1, 1) + rnd + connect(2) + rnd
          + wr(2, 1, 0, 3) + rnd * 3)
    write("request_pipeline", "teardown-mid-io",
          header(0x02, 1, chunks=3) + admin + io + wr(1, 0, 0, 7, keyed=True) + read_done(1)
          + read(1) + cmd(1, 11, v=0x11, x=0x0210, n=2) + inject(1, 0) + sweep + io_done(1)
          + io_done() + io_done() + sweep + bytes([10, 1, 14, 6, 3]) + io + wr(1, 2) + rnd * 4)
    write("request_pipeline", "read-without-data",
          header(0x02, 1, chunks=2) + admin + io + wr(1, 0, 0, 15, keyed=True)
          + read_done(1, 0, 7) + rnd * 2 + wr(1, 2, 0, 3, keyed=True)
          + read_done(1, 0, 6 + 8 * 4) + rnd * 4 + sweep)
    write("request_pipeline", "repost-and-setup-failures",
          header(0x01, 2) + inject(0, 2) + admin + connect(0) + rnd + enable + rnd
          + connect(1) + rnd + inject(1, 1) + cmd(1, 7) + rnd + sweep + connect(2) + rnd
          + wr(2) + inject(2, 3) + io_done() + rnd * 2 + sweep)
    write("request_pipeline", "wrong-lengths-and-raw",
          header(0x01, 1) + admin + io + cmd(0, 7, s=4, x=0x1234)
          + cmd(0, 3, v=1, s=5, x=0x1000) + cmd(0, 2, t=1, x=9000) + rnd * 3
          + bytes([3, 1]) + sqe(0x02, nsid=2, dptr=keyed_sgl(0x1000, 512, 7)) + bytes([3]) + u16(0)
          + rnd * 3 + cmd(1, 7, t=0x10) + rnd * 3)
    write("request_pipeline", "keep-alive-expiry",
          header(0, 1) + cmd(0, 0, v=0x08, x=200) + rnd + enable + rnd + io + wr(1)
          + bytes([8]) + u16(100) + io_done() + rnd * 2 + sweep)


def config_seeds():
    # The same nvmetcli-saved file target/config_test.cc starts from (one copy in the tree).
    with open(os.path.join(HERE, "..", "target", "testdata", "nvmetcli-save.json"), "rb") as f:
        good = f.read()
    write("config", "nvmetcli-save", good)
    write("config", "huge-number", good.replace(b'"16384"', b"18446744073709551617"))
    write("config", "wrapping-number", good.replace(b'"16384"', b"18446744073709551615"))
    write("config", "inf-number", good.replace(b'"portid": 1', b'"portid": 1e999'))
    write("config", "deep-nesting", good.replace(b'"ana_groups": [',
                                                  b'"ana_groups": ' + b"[" * 5000 + b"]" * 5000
                                                  + b', "x": ['))
    write("config", "wrong-types", good.replace(b'"subsystems": ["nqn', b'"subsystems": [{"a": "nqn')
          .replace(b'interop"]\n  }]', b'interop"}]\n  }]'))


def host_response_seeds():
    # Byte 0 picks what the target sent (fuzz/host_response_fuzzer.cc).
    ctrl = bytearray(4096)
    ctrl[77] = 5  # MDTS
    ctrl[320:322] = u16(1)  # KAS
    ctrl[1792:1796] = u32(4)  # IOCCSZ: the 64-byte SQE alone
    ctrl[1796:1800] = u32(1)  # IORCSZ
    ctrl[4:24] = b"serial".ljust(20)
    write("host_response", "identify-controller", bytes([0]) + ctrl)
    ns = bytearray(4096)
    ns[0:8] = u64(2048)  # NSZE
    ns[8:16] = u64(2048)  # NCAP
    ns[130] = 9  # LBAF 0: 512-byte blocks
    write("host_response", "identify-namespace", bytes([1]) + u32(1) + ns)
    big = bytearray(ns)
    big[25] = 17  # NLBAF: 18 formats, FLBAS bits 6:5 in use
    big[26] = 0x21  # format 17: bits 3:0 = 1, bits 6:5 = 1
    big[128 + 4 * 17 + 2] = 12  # 4 KiB
    write("host_response", "identify-namespace-upper-flbas", bytes([1]) + u32(7) + big)
    write("host_response", "active-list", bytes([2]) + u16(12) + u32(1) + u32(2) + u32(0))

    def entry(subtype, nqn, traddr, trsvcid):
        e = bytearray(1024)
        e[0], e[1], e[2], e[3] = 1, 1, subtype, 0  # RDMA, IPv4
        e[4:6] = u16(1)
        e[6:8] = u16(0xFFFF)
        e[8:10] = u16(32)
        e[32:32 + len(trsvcid)] = trsvcid
        e[256:256 + len(nqn)] = nqn
        e[512:512 + len(traddr)] = traddr
        return bytes(e)
    header = u64(3) + u64(2) + u16(0) + bytes(1006)
    write("host_response", "discovery-log", bytes([3, 2]) + header
          + entry(3, DISCOVERY_NQN, b"10.0.0.1", b"4420") + entry(2, FUZZ_NQN, b"10.0.0.1", b"4420"))
    write("host_response", "discovery-log-numrec-beyond", bytes([3, 1]) + u64(3) + u64(5)
          + u16(0) + bytes(1006) + entry(2, FUZZ_NQN, b"10.0.0.1", b"4420"))
    cqe = u32(0) + u32(0) + u16(1) + u16(1) + u16(0) + u16(1)  # dw0, dw1, sqhd, sqid, cid, status
    slots = bytes([4, 7])
    slots += bytes([0]) + u16(0) + bytes([0]) + u16(0)  # acquire 0, acquire 1
    slots += bytes([2]) + u16(0) + cqe  # the response of CID 0 before its send completion
    slots += bytes([1]) + u16(0) + bytes([3]) + u16(0)  # sent, released
    slots += bytes([2]) + u16(0) + cqe  # CID 0 again: no longer in flight
    slots += bytes([2]) + u16(300) + cqe  # a CID out of range
    slots += bytes([4]) + u16(1)  # slot 1 abandoned
    write("host_response", "slots", slots)


def rpc_seeds():
    # Byte 0 (fuzz/rpc_fuzzer.cc): bits 0-2 the number of chunk sizes that follow, bit 3 small
    # limits (u16 max_message_bytes, u8 max_depth) before them; then the byte stream.
    def req(method, params=None, rid=1, extra=b""):
        r = b'{"jsonrpc":"2.0","method":"' + method + b'"'
        if params is not None:
            r += b',"params":' + params
        if rid is not None:
            r += b',"id":' + rid if isinstance(rid, bytes) else b',"id":' + str(rid).encode()
        return r + extra + b"}"

    create = req(b"bdev_create", b'{"name":"Malloc0","size":1048576,"block_size":512,'
                 b'"options":{"read_only":1,"label":"a","tags":{"t":7}}}', b'"c1"')
    valid = (req(b"echo", b'{"a":[1,"two",{"b":null}]}') + b"\n"
             + create + b" "
             + req(b"fail", b'{"code":3,"message":"bad"}', 3) + b"\r\n"
             + req(b"library_error", b'{"a":[5]}', 4)
             + req(b"runtime_error", b"{}", 5)
             + req(b"get_methods", None, b"null")
             + req(b"echo", b'{"n":1}', None)  # a notification
             + req(b"nope", None, 1.5))
    write("rpc", "requests", b"\x00" + valid)
    write("rpc", "byte-by-byte", b"\x01\x00" + valid)
    write("rpc", "uneven-chunks", b"\x03" + bytes([6, 0, 40]) + valid)
    write("rpc", "small-limits", b"\x0a" + u16(200) + bytes([3]) + bytes([16, 1]) + valid)
    write("rpc", "wrong-params", b"\x00"
          + req(b"bdev_create", b'{"name":5,"size":1,"block_size":512}')
          + req(b"bdev_create", b'{"name":"a","size":0,"block_size":512}')
          + req(b"bdev_create", b'{"name":"a","size":1,"block_size":512,"sise":1}')
          + req(b"bdev_create", b'{"name":"a","size":1,"block_size":512,"options":[1]}')
          + req(b"bdev_create", b'{"name":"a","size":1,"block_size":512,"options":{"tags":'
                                b'{"x":-1}}}')
          + req(b"echo", b"[1,2]") + req(b"echo", None, b'{"id":1}') + req(b"echo", None, b"true")
          + b'{"jsonrpc":"1.0","method":"echo","id":1}{"jsonrpc":"2.0","id":2}{}')
    nest = 40
    write("rpc", "deep-nesting", b"\x00" + req(b"echo", b'{"a":' * nest + b"1" + b"}" * nest)
          + req(b"echo", b"[" * 3000 + b"]" * 3000))
    write("rpc", "nesting-at-limit", b"\x00" + req(b"echo", b'{"a":' * 31 + b"[]" + b"}" * 31))
    write("rpc", "huge-numbers", b"\x00"
          + req(b"bdev_create", b'{"name":"a","size":18446744073709551616,"block_size":512}')
          + req(b"bdev_create", b'{"name":"a","size":1e400,"block_size":512}')
          + req(b"bdev_create", b'{"name":"a","size":1099511627777,"block_size":4096.0}')
          + req(b"echo", b'{"n":-9223372036854775809,"m":1e-400,"z":-0}', 18446744073709551615)
          + req(b"echo", None, b"-9223372036854775808") + req(b"echo", None, b"1e308")
          + req(b"echo", None, b"123456789012345678901234567890"))
    long_request = req(b"echo", b'{"s":"' + b"x" * 6000 + b'\\\"}{"}')
    write("rpc", "long-string", b"\x00" + long_request)
    write("rpc", "long-string-over-limit", b"\x09" + u16(4095) + bytes([32, 255]) + long_request)
    write("rpc", "invalid-utf8-method", b"\x00" + req(b"bdev_\xff\xfe\xc0\x80create", b"{}")
          + req(b"\xed\xa0\x80", None) + req(b"echo", b'{"s":"\\ud800"}'))
    write("rpc", "strings-with-braces", b"\x02\x02\x00"
          + req(b"echo", b'{"s":"}{][","q":"a\\"}b","b":"c\\\\","k}":"]"}'))
    write("rpc", "batch", b"\x00" + b"[" + req(b"echo", b"{}") + b"]")
    write("rpc", "garbage", b"\x00" + req(b"echo", b"{}") + b" }{" + req(b"echo", b"{}"))
    write("rpc", "unbalanced", b"\x00" + b'{"a":[}]}' + b'{"a":1]' + req(b"echo", b"{}"))


if __name__ == "__main__":
    cm_seeds()
    sgl_seeds()
    connect_seeds()
    sequence_seeds()
    pipeline_seeds()
    config_seeds()
    host_response_seeds()
    rpc_seeds()
