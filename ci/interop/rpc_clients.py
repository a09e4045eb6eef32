#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""CLIENTS clients on nvmf-target's control socket at once for SECONDS: each connects, then asks
in turn nvmf_get_stats, nvmf_get_subsystems and nvmf_subsystem_get_qpairs (of NQN), waits for
each answer and paces itself to one request per INTERVAL_MS. Prints one JSON line (clients,
requests, answers, errors, the slowest answer in ms) and exits 1 when a client could not connect
or any request got no result; 2 on bad usage.

Usage: rpc_clients.py SOCKET CLIENTS SECONDS NQN [INTERVAL_MS]   (INTERVAL_MS default 1000)
"""
import json
import socket
import sys
import threading
import time

METHODS = ("nvmf_get_stats", "nvmf_get_subsystems", "nvmf_subsystem_get_qpairs")


def usage(why):
    print(f"rpc_clients.py: {why}\nusage: rpc_clients.py SOCKET CLIENTS SECONDS NQN "
          "[INTERVAL_MS]", file=sys.stderr)
    sys.exit(2)


def count(text, name, lo, hi):
    try:
        n = int(text)
    except ValueError:
        usage(f"{name} '{text}' is not a number")
    if not lo <= n <= hi:
        usage(f"{name} {n} is not in {lo}..{hi}")
    return n


def client(path, nqn, until, interval, stats, lock):
    mine = {"requests": 0, "answers": 0, "errors": 0, "slowest_ms": 0.0, "connected": False}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(path)
            mine["connected"] = True
            buf = b""
            i = 0
            while time.monotonic() < until:
                start = time.monotonic()
                method = METHODS[i % len(METHODS)]
                req = {"jsonrpc": "2.0", "id": i, "method": method}
                if method == "nvmf_subsystem_get_qpairs":
                    req["params"] = {"nqn": nqn}
                s.sendall(json.dumps(req).encode())
                mine["requests"] += 1
                while b"\n" not in buf:
                    chunk = s.recv(1 << 16)
                    if not chunk:
                        raise ConnectionError("closed by the target")
                    buf += chunk
                line, buf = buf.split(b"\n", 1)
                answer = json.loads(line)
                ok = answer.get("id") == i and "result" in answer
                mine["answers" if ok else "errors"] += 1
                took = (time.monotonic() - start) * 1000
                mine["slowest_ms"] = max(mine["slowest_ms"], took)
                i += 1
                time.sleep(max(0.0, interval - (time.monotonic() - start)))
    except (OSError, ValueError) as e:
        mine["errors"] += 1
        mine["error"] = str(e)
    with lock:
        stats.append(mine)


def main(argv):
    if len(argv) not in (5, 6):
        usage("give SOCKET CLIENTS SECONDS NQN [INTERVAL_MS]")
    path, nqn = argv[1], argv[4]
    clients = count(argv[2], "CLIENTS", 1, 1000)
    seconds = count(argv[3], "SECONDS", 1, 3600)
    interval = count(argv[5], "INTERVAL_MS", 1, 60000) / 1000 if len(argv) == 6 else 1.0
    stats, lock = [], threading.Lock()
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=client, args=(path, nqn, until, interval, stats, lock))
               for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = {"clients": clients,
             "connected": sum(m["connected"] for m in stats),
             "requests": sum(m["requests"] for m in stats),
             "answers": sum(m["answers"] for m in stats),
             "errors": sum(m["errors"] for m in stats),
             "slowest_ms": round(max((m["slowest_ms"] for m in stats), default=0.0), 1)}
    firsts = [m["error"] for m in stats if "error" in m][:3]
    if firsts:
        total["first_errors"] = firsts
    print(json.dumps(total))
    return 0 if total["connected"] == clients and total["errors"] == 0 and \
        total["answers"] == total["requests"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
