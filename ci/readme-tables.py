#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the documentation's generated tables from one scripts/test.sh run's results.

Usage: readme-tables.py RESULTS_DIR [--docs DOCS_DIR]

RESULTS_DIR is the directory scripts/test.sh printed ("results in ..."): unit/ and rxe/ hold
the GoogleTest XML, rxe/interop/ the interop suite's files, rxe/conform/ the conformance JSON.
Every cell of the interop matrix is the status of checks in rxe/interop.xml (ci/interop/judge.py
wrote them): "pass" only when every check the row names is there and passed, "FAIL (check,
...)" otherwise; a row's figures (target counters, what nvmf-host negotiated) come from the same
run's JSON reports. Without --docs the Markdown goes to stdout; with it, the blocks between
markers are replaced: <!-- test-counts:begin/end --> in DOCS_DIR/testing.md,
<!-- interop-matrix:begin/end --> in DOCS_DIR/interop.md (and <!-- interop-auth:begin/end --> from
the second guest kernel's run, rxe/linux-6.12/interop-auth.xml), and, when the run has conformance
reports, <!-- conformance:begin/end --> in DOCS_DIR/conformance.md (ci/conform/readme-table.py).
"""
import argparse
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

SIZES_DEFAULT = ["0", "4096", "16384"]
ONCE_COLUMN = "4096"  # the once-only checks run with one page of in-capsule data


def cases(xml_path):
    """{(suite, name): passed?} of one GoogleTest-style XML file."""
    out = {}
    try:
        tree = ET.parse(xml_path)
    except (ET.ParseError, OSError):
        return out
    for c in tree.iter("testcase"):
        failed = c.find("failure") is not None or c.find("error") is not None
        skipped = c.get("status") == "notrun" or c.find("skipped") is not None
        out[(c.get("classname"), c.get("name"))] = not failed and not skipped
    return out


def counts(results):
    rows = []
    total = [0, 0]
    for group, title in (("unit", "unit tests (bazel test, no RDMA device)"),
                         ("rxe", "soft-RoCE end-to-end and interop (ci/rxe-run)"),
                         ("asan", "in-process soft-RoCE tests under ASan + UBSan, fuzzers")):
        p = f = 0
        for path in sorted(glob.glob(os.path.join(results, group, "**", "*.xml"), recursive=True)):
            for ok in cases(path).values():
                p, f = p + ok, f + (not ok)
        if p or f:
            rows.append(f"| {title} | {p} | {f} |")
            total = [total[0] + p, total[1] + f]
    lines = ["| tests | passed | not passed |", "|---|---|---|"] + rows
    lines.append(f"| all | {total[0]} | {total[1]} |")
    return lines


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def hexnum(v):
    return int(v, 0) if isinstance(v, str) else v


def writes_detail(results, size):
    r = load(os.path.join(results, "rxe", "interop", f"target-{size}.json")) or {}
    w = r.get("writes") or {}
    ic, rr = w.get("in_capsule"), w.get("rdma_read")
    if ic is None or rr is None:
        return "no counters"
    return f"{ic} in-capsule, {rr} RDMA READ"


def negotiation_detail(results, size):
    j = load(os.path.join(results, "rxe", "interop", f"oid-kernel-{size}.json")) or {}
    c, n = j.get("controller") or {}, j.get("negotiation") or {}
    if not c or not n:
        return "no report"
    ic = (f"in-capsule {n.get('in_capsule_data_size')}" if n.get("in_capsule_enabled")
          else "in-capsule off")
    sgls = hexnum(c.get("sgls"))
    sgls = f"0x{sgls:x}" if isinstance(sgls, int) else str(sgls)
    return f"IOCCSZ {hexnum(c.get('ioccsz'))}, SGLS {sgls}, {ic}"


# The ANA checks (ci/interop/ana.sh): (host -> target, what is checked, suite, checks that must
# all pass).
ANA_ROWS = [
    ("", "ANA, native multipath: two ports, A optimized and B non-optimized: `nvme list-subsys` shows"
     " both paths with their states, fio's I/O goes through A",
     "KernelHostAna", ["start_target", "two_paths_with_their_states", "io_on_the_optimized_path"]),
    ("", "ANA: fio verify (QD16, 60 s) while A is set inaccessible (I/O leaves A within ANATT), then"
     " optimized again (it returns), then A's listener removed (I/O leaves A): no fio error, no"
     " kernel I/O timeout", "KernelHostAna",
     ["port_a_inaccessible_io_moves_to_b_within_anatt",
      "port_a_optimized_again_io_returns_within_anatt",
      "port_a_listener_removed_io_moves_to_b_within_anatt",
      "fio_verify_no_error_no_kernel_timeout", "stop_target"]),
]

# (host -> target, what is checked, suite (with {size}, or fixed), checks that must all pass,
#  detail function or None)
ROWS = [
    ("Linux nvme-rdma → nvmf-target", "nvmf-target starts from the nvmetcli config; `nvme "
     "discover` = `nvmf-host discover` (every entry field)",
     "KernelHostOnNvmfTarget_inline{size}", ["start_target", "nvme_discover", "nvmf_host_discover",
                                             "discovery_entries_agree"], None),
    ("", "`nvme connect`, `nvme id-ctrl` IOCCSZ/SGLS/MDTS/ICDOFF/IORCSZ/MSDBD/KAS/CNTRLTYPE/MN/SN/FR"
     " = what nvmf-host reads", "KernelHostOnNvmfTarget_inline{size}",
     ["nvmf_host_identify", "nvme_connect", "nvme_id_ctrl", "id_ctrl_fields"], None),
    ("", "`nvme list` model, serial, firmware", "KernelHostOnNvmfTarget_inline{size}",
     ["nvme_list", "list_model_serial_firmware"], None),
    ("", "fio crc32c verify, libaio, direct: 4k and 64k writes, read-back, random mixed 8k–32k",
     "KernelHostOnNvmfTarget_inline{size}", ["fio_verify"], None),
    ("", "writes arrived in-capsule (when the size > 0) and by RDMA READ (target counters)",
     "KernelHostOnNvmfTarget_inline{size}", ["stop_target", "io_paths"], writes_detail),
    ("", "`nvme disconnect` clean (1 controller, device gone)",
     "KernelHostOnNvmfTarget_inline{size}", ["nvme_disconnect"], None),
    ("", "10 connect + 4 KiB read + disconnect rounds in a row (after the target started from the"
     " config)", "KernelHostOnNvmfTarget", ["start_target", "connect_10_times"], None),
    ("", "keep-alive: KATO 2 s, 5 s later still `live`", "KernelHostOnNvmfTarget",
     ["keep_alive_two_kato"], None),
    ("", "deep writes beside nvmet-rdma (64 KiB random at QD127 and QD32 x 2 jobs, 12 s; 128 KiB"
     " and 1 MiB sequential at QD8, 10 s; fio verifying inside the run; three rounds per job,"
     " the host reconnected between them): 0 kernel I/O timeouts and resets on both targets,"
     " nvmf-target's median IOPS at least 0.8x nvmet-rdma's (0.5x for 1 MiB, 60-140 writes per"
     " round)",
     "KernelHostDeepWrites",
     ["setup"] + [f"{j}_{t}" for j, ratio in (("qd127", "0_8x"), ("qd32x2", "0_8x"),
                                              ("seq128k", "0_8x"), ("seq1m", "0_5x"))
                  for t in ("nvmet_rdma_round1", "nvmf_target_round1", "reconnect_round2",
                            "nvmf_target_round2", "nvmet_rdma_round2", "reconnect_round3",
                            "nvmet_rdma_round3", "nvmf_target_round3",
                            f"nvmf_target_iops_at_least_{ratio}_nvmet_rdma")],
     None),
    ("", "nvmf-host bench --verify, 64 KiB random writes at QD127 for 10 s over 128 MiB, against"
     " both targets: no error, no queue lost, nvmf-target's IOPS at least 0.8x nvmet-rdma's",
     "KernelHostDeepWrites",
     ["nvmf_host_bench_qd127_nvmet_rdma", "nvmf_host_bench_qd127_nvmf_target",
      "nvmf_host_bench_qd127_nvmf_target_iops_at_least_0_8x_nvmet_rdma", "teardown"], None),
    ("", "beside a raw host taking no responses on 8 controllers x 4 I/O queues (64 Flushes each,"
     " 2 x SQSIZE), `--poll-groups 2`: the Linux host's QD1 4 KiB randread p99 within 3x of"
     " alone, every raw queue torn down within the send-stall bound (30 s) + 10 s",
     "KernelHostBesideHostileHosts",
     ["start_target_pg2", "victim_connect_pg2", "victim_alone_pg2", "victim_beside_withholder",
      "victim_p99_beside_withholder_within_3x_alone",
      "withholder_queues_torn_down_within_the_stall_bound"], None),
    ("", "beside nvmf-host bench keeping 4 queues x 127 reads of 128 KiB outstanding, with"
     " `--poll-groups 2`, and on nvmet-rdma: every victim read completes (p99 reported)",
     "KernelHostBesideHostileHosts",
     ["victim_beside_reader_hog_pg2", "victim_completes_beside_reader_hog_pg2",
      "victim_disconnect_pg2", "stop_target_pg2", "nvmet_configfs_apply", "victim_connect_nvmet",
      "victim_alone_nvmet", "victim_beside_reader_hog_nvmet",
      "victim_completes_beside_reader_hog_nvmet_rdma", "victim_disconnect_nvmet",
      "nvmet_configfs_clear"], None),
    ("", "host NQN not in allowed_hosts refused (kernel host and nvmf-host); the target then stops"
     " on SIGTERM with exit 0", "KernelHostOnNvmfTarget",
     ["host_not_allowed_kernel_host", "host_not_allowed_nvmf_host", "stop_target"], None),
    ("", "two ports (4420: in-capsule 4096, 4421: none): `nvme discover` on either lists the"
     " subsystem on both", "KernelHostOnNvmfTarget_TwoPorts",
     ["start_target", "nvme_discover_on_4420_lists_both", "nvme_discover_on_4421_lists_both"],
     None),
    ("", "two ports: the Linux host connects through each (two live controllers, trsvcid 4420 and"
     " 4421) and reads; the target stops cleanly", "KernelHostOnNvmfTarget_TwoPorts",
     ["nvme_connect_each_port", "stop_target"], None),
    ("", "`--max-pending-connections 6`: the Linux host connects with 6 I/O queues (queue_count 7)",
     "KernelHostOnNvmfTarget_PendingLimit",
     ["start_target_limit_6", "six_io_queues_connect_at_limit_6", "stop_target_limit_6"], None),
    ("", "`--max-pending-connections 5`: the sixth I/O queue's CM connection is rejected and `nvme"
     " connect` fails", "KernelHostOnNvmfTarget_PendingLimit",
     ["start_target_limit_5", "six_io_queues_refused_at_limit_5", "stop_target_limit_5"], None),
    ("", "control socket: a persistent discovery controller (`nvme discover --persistent`) gets"
     " the Discovery Log Page Change notice when `nvmf_subsystem_add_host` allows a host",
     "KernelHostControlSocket",
     ["start_target", "persistent_discovery", "add_second_host",
      "discovery_log_change_notice_sent"], None),
    ("", "control socket: `nvmf_get_stats` shows the counters moving under the kernel host's fio",
     "KernelHostControlSocket", ["connect", "stats_move_during_fio"], None),
    ("", "control socket: the kernel host removed by `nvmf_subsystem_remove_host` is disconnected"
     " and refused when it reconnects; another host's nvmf-host bench keeps its I/O, no error",
     "KernelHostControlSocket",
     ["remove_kernel_host", "kernel_host_controller_freed", "kernel_host_disconnected",
      "kernel_host_reconnect_refused", "other_host_keeps_its_io", "stop_target"], None),
    ("", "control socket: 50 clients asking one request every 2 s each during the kernel host's"
     " QD32 fio: no I/O error, p99 within 2x of the fio alone", "KernelHostControlSocketNamespaces",
     ["qd32_fio_alone", "qd32_fio_beside_50_rpc_clients",
      "qd32_p99_beside_50_rpc_clients_within_2x_alone"], None),
    ("", "control socket: a namespace added by `nvmf_subsystem_add_ns` is in the kernel host's"
     " `nvme list` within 5 s without a reconnect, fio verify passes on it; resized, the host's"
     " `blockdev --getsize64` follows; removed, it goes; fio on namespace 1 throughout, no error",
     "KernelHostControlSocketNamespaces",
     ["start_target", "connect", "added_namespace_listed_within_5s",
      "namespace_changed_notice_sent", "fio_verify_on_added_namespace",
      "resized_namespace_size_seen", "removed_namespace_gone",
      "other_namespace_io_without_error", "disconnect", "stop_target"], None),
    ("", "control socket: `save_config` then a restart from the saved file: the kernel host's"
     " `nvme discover` and `nvme list` are the same", "KernelHostControlSocketNamespaces",
     ["save_config", "start_from_saved_config", "same_discover_and_list_after_restart",
      "disconnect_restored"], None),
    ("", "control socket: a subsystem made by `nvmf_create_subsystem`, `nvmf_subsystem_add_ns` and"
     " `nvmf_subsystem_add_listener`: a persistent discovery controller gets the Discovery Log"
     " Change notice, `nvme discover` lists it, the kernel host connects through it and lists its"
     " namespace; `nvmf_delete_subsystem`", "KernelHostControlSocketNamespaces",
     ["persistent_discovery_restored", "created_subsystem_discovered",
      "host_connects_through_added_listener", "delete_created_subsystem", "stop_restored"], None),
    ("", "file namespace: discard and write zeroes enabled, `blkdiscard` and `fstrim` on"
     " ext4 free file space, `nvme write-zeroes`, `nvme dsm --ad`, fio verify",
     "KernelHostOnNvmfTarget_FileNamespace",
     ["start_target", "nvme_connect", "discard_and_write_zeroes_enabled",
      "blkdiscard_frees_file_space", "fstrim_on_ext4_frees_file_space",
      "nvme_write_zeroes_and_dsm_deallocate", "fio_verify", "nvme_disconnect", "stop_target"], None),
    ("", "two namespaces in one subsystem: both in `nvme list`, distinct NGUIDs, fio verify on each",
     "KernelHostOnNvmfTarget_FileNamespace",
     ["start_target_two_namespaces", "nvme_connect_two_namespaces", "two_namespaces_in_nvme_list",
      "fio_verify_both_namespaces", "nvme_disconnect_two_namespaces",
      "stop_target_two_namespaces"], None),
    ("", "null_blk bad blocks: Unrecovered Read Error on those LBAs, the others read back",
     "KernelHostOnNvmfTarget_Faults", ["badblocks_unrecovered_read_error"], None),
    ("", "backing file truncated under fio: I/O errors, Unrecovered Read Error past the end, the"
     " target keeps serving", "KernelHostOnNvmfTarget_Faults", ["file_truncated_under_fio"], None),
    ("", "Flush on a failing device (dm-flakey): Internal Error, still after the device recovered",
     "KernelHostOnNvmfTarget_Faults", ["flush_while_device_fails"], None),
    ("", "FUA and flushed writes survive SIGKILL of the target and a null_blk power loss, unflushed"
     " ones do not (O_DIRECT and buffered)", "KernelHostOnNvmfTarget_Durability",
     ["fua_and_flush_survive_kill_and_power_loss_direct",
      "fua_and_flush_survive_kill_and_power_loss_buffered"], None),
] + [(who, what, suite, names, None) for who, what, suite, names in ANA_ROWS] + [
    ("", "nvmf-host conform's ANA cases against nvmf-target's port A (namespace 2's group"
     " inaccessible there): every one passes; group 2 set to change: the log's change count moves,"
     " Read gets Asymmetric Access Transition; nvmet-rdma's answers recorded", "AnaConform",
     ["nvmf_target_every_case_passes", "change_count_moves_and_transition_status",
      "nvmet_configfs", "nvmet_answers_recorded"], None),
    ("nvmf-host → nvmf-target", "multipath (`-x multipath`) over port A optimized and B"
     " non-optimized: identify shows both states, writes go through A; A set inaccessible in the"
     " middle of a 64 MiB write: no error, both paths used, read back equal through B;"
     " `--iopolicy round-robin` spreads writes, and bench's jobs (I/O counted per path), over"
     " two optimized paths", "NvmfHostAna",
     ["listener_a_back", "identify_shows_both_paths_and_states", "writes_go_to_the_optimized_path",
      "port_a_inaccessible_mid_write_no_error_data_equal",
      "round_robin_spreads_over_two_optimized_paths",
      "bench_round_robin_reports_io_on_both_paths"], None),
    ("nvmf-host → Linux nvmet-rdma", "the same multipath checks against nvmet's two ports, the"
     " ANA states set through configfs", "NvmfHostAnaOnKernelTarget",
     ["identify_shows_both_paths_and_states", "writes_go_to_the_optimized_path",
      "port_a_inaccessible_mid_write_no_error_data_equal",
      "round_robin_spreads_over_two_optimized_paths",
      "bench_round_robin_reports_io_on_both_paths"], None),
    ("", "identify; IOCCSZ = (64 + size) / 16; nvmf-host chose"
     " in-capsule on with that size exactly when size > 0", "NvmfHostOnKernelTarget_inline{size}",
     ["configfs_apply", "identify", "negotiation_report"], negotiation_detail),
    ("", "256 KiB and 12 KiB writes, read back, compare", "NvmfHostOnKernelTarget_inline{size}",
     ["write_read_compare"], None),
    ("", "`nvmf-host discover` of nvmet = of nvmf-target", "NvmfHostOnKernelTarget_inline{size}",
     ["nvmf_host_discover", "discovery_same_as_nvmf_target"], None),
    ("", "host not allowed: the same Connect status from both targets",
     "NvmfHostOnKernelTarget_inline{size}", ["host_not_allowed_same_status"], None),
]


# The second guest kernel's checks, what 6.1 cannot run: DH-HMAC-CHAP (ci/interop/auth.sh) and
# nvmf-host ublk (ci/interop/ublk.sh): (host -> target, what is checked, suite, checks that must
# all pass).
AUTH_ROWS = [
    ("Linux nvme-rdma → nvmf-target", "`nvme connect --dhchap-secret`, fio verify: SHA-256, "
     "SHA-384, SHA-512 with the null group", "KernelHostAuthOnNvmfTarget",
     ["start_target"] + [f"{h}_null_connects_and_verifies" for h in ("sha256", "sha384", "sha512")]),
    ("", "the same with ffdhe2048, and SHA-512 with ffdhe8192 (dmesg names the hash and group)",
     "KernelHostAuthOnNvmfTarget",
     [f"{h}_ffdhe2048_connects_and_verifies" for h in ("sha256", "sha384", "sha512")]
     + ["sha512_ffdhe8192_connects_and_verifies"]),
    ("", "bidirectional (`--dhchap-ctrl-secret`): the host authenticates the controller",
     "KernelHostAuthOnNvmfTarget", ["bidirectional_connects_and_verifies"]),
    ("", "refused: a wrong secret, a wrong controller secret, no secret; the failure logged",
     "KernelHostAuthOnNvmfTarget", ["wrong_secret_refused", "wrong_controller_secret_refused",
                                    "no_secret_refused", "failure_logged"]),
    ("", "no secret in the target's log or JSON report", "KernelHostAuthOnNvmfTarget",
     ["stop_target", "no_secret_in_log_or_report"]),
    ("nvmf-host → nvmf-target", "`-S`, every hash with null and ffdhe2048, SHA-512 with ffdhe8192, "
     "and `-S -C`: write, read back, equal; wrong secret, no secret, wrong controller secret "
     "refused naming the step", "NvmfHostAuthOnNvmfTarget",
     [f"{h}_{g}_write_read_compare" for g in ("null", "ffdhe2048") for h in ("sha256", "sha384",
                                                                              "sha512")]
     + ["sha512_ffdhe8192_write_read_compare", "bidirectional_write_read_compare",
        "wrong_secret_refused", "no_secret_refused", "wrong_controller_secret_refused"]),
    ("nvmf-host → Linux nvmet-rdma", "keys through configfs; ffdhe2048, SHA-512 with ffdhe8192, "
     "bidirectional: write, read back, equal; wrong secret and wrong controller secret refused",
     "NvmfHostAuthOnKernelTarget", ["configfs_keys", "ffdhe2048_write_read_compare",
                                    "sha512_ffdhe8192_write_read_compare",
                                    "bidirectional_write_read_compare", "wrong_secret_refused",
                                    "wrong_controller_secret_refused"]),
    ("nvmf-host conform", "the authentication cases: every one passes against nvmf-target; "
     "nvmet's answers recorded", "ConformAuth", ["nvmf_target_every_case_passes",
                                                  "nvmet_answers_recorded"]),
    ("nvmf-host → nvmf-target", "connect time without a key and per DH group (figures in "
     "performance.md)", "AuthConnectTime", ["nvmf_target"]),
    ("nvmf-host ublk → nvmf-target", "`/dev/ublkbN` with the namespace's size and LBA size; a "
     "second `--dev-id` of the same number refused; fio verify (libaio, direct, QD32, random "
     "writes of 4k–128k, read back and checked)",
     "NvmfHostUblkOnNvmfTarget", ["start_target", "ublk_device_appears",
                                  "geometry_is_the_namespace", "taken_dev_id_refused",
                                  "fio_verify_qd32_4k_to_128k"]),
    ("", "mkfs.ext4, mount, files checked after a remount, fsck clean; `blkdiscard` (Deallocate) "
     "and `blkdiscard -z` (Write Zeroes), the range reads back as zeroes",
     "NvmfHostUblkOnNvmfTarget", ["mkfs_mount_files_fsck_clean", "blkdiscard_and_write_zeroes"]),
    ("", "the target killed and started again during a fio verify: the host reconnects, fio ends"
     " without an error",
     "NvmfHostUblkOnNvmfTarget", ["fio_verify_through_a_target_restart"]),
    ("", "SIGTERM: the block and character devices gone, exit 0, no request failed, every queue"
     " thread ended on its own", "NvmfHostUblkOnNvmfTarget", ["sigterm_removes_the_device"]),
    ("", "the target gone past `--ctrl-loss-tmo 3` under a reader: the reader fails, the device "
     "removed, exit 1 naming ctrl-loss-tmo; gone again, SIGTERM while reconnecting fails the "
     "held reads at once and removes the device", "NvmfHostUblkTargetGone",
     ["ctrl_loss_tmo_removes_the_device", "sigterm_while_reconnecting_removes_the_device"]),
    ("nvmf-host ublk → Linux nvmet-rdma", "the same with 4 I/O queues on the guest's 2 vCPUs (one"
     " hardware queue per CPU): fio verify, file system, discard and write zeroes, SIGTERM "
     "removal", "NvmfHostUblkOnKernelTarget",
     ["nvmet_configfs", "ublk_device_appears", "geometry_is_the_namespace", "taken_dev_id_refused",
      "fio_verify_qd32_4k_to_128k", "mkfs_mount_files_fsck_clean", "blkdiscard_and_write_zeroes",
      "sigterm_removes_the_device"]),
]


def auth_matrix(results):
    """The DH-HMAC-CHAP table from RESULTS/rxe/linux-6.12/interop-auth.xml, or None when the run
    has none."""
    d = os.path.join(results, "rxe", "linux-6.12")
    if not os.path.exists(os.path.join(d, "interop-auth.xml")):
        return None
    got = cases(os.path.join(d, "interop-auth.xml"))
    kernel = "?"
    try:
        with open(os.path.join(d, "interop", "environment.txt"), errors="replace") as f:
            kernel = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line).get(
                "kernel", "?")
    except OSError:
        pass
    lines = [f"Generated by `ci/readme-tables.py` from the second guest kernel's run: {kernel}.", "",
             "| host → target | what is checked | result |", "|---|---|---|"]
    for who, what, suite, names in AUTH_ROWS:
        lines.append(f"| {who} | {what} | {cell(results, got, suite, names, None, '') or 'not run'} |")
    named = {(suite, n) for _, _, suite, names in AUTH_ROWS for n in names} | {
        ("Interop", "completed")}
    extra = sorted(f"{s}.{n}" + ("" if ok else " (FAIL)") for (s, n), ok in got.items()
                   if (s, n) not in named)
    if extra:
        lines += ["", "Checks of this run with no row above: " + ", ".join(extra) + "."]
    return lines


def cell(results, got, suite, names, detail, size):
    present = [n for n in names if (suite, n) in got]
    if not present:
        return ""
    bad = [n for n in names if not got.get((suite, n), False)]
    if bad:
        return "FAIL (" + ", ".join(bad) + ")"
    return "pass" + (f": {detail(results, size)}" if detail else "")


def matrix(results):
    got = cases(os.path.join(results, "rxe", "interop.xml"))
    sizes = sorted({m.group(1) for s, _ in got for m in [re.search(r"_inline(\d+)$", s or "")]
                    if m}, key=int) or SIZES_DEFAULT
    env = {}
    try:
        with open(os.path.join(results, "rxe", "interop", "environment.txt"),
                  errors="replace") as f:
            env = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    except OSError:
        pass
    lines = [f"Generated by `ci/readme-tables.py` from the results of a `scripts/test.sh` run: guest kernel "
             f"{env.get('kernel', '?')}, {env.get('nvme_cli', 'nvme-cli ?')}, "
             f"{env.get('fio', 'fio ?')}. Column: the port's in-capsule data size "
             "(`param.inline_data_size`); an empty cell is a check that runs in one column only.",
             "",
             "| host → target | what is checked | " + " | ".join(f"inline {s}" for s in sizes) + " |",
             "|---|---|" + "---|" * len(sizes)]
    total = 0
    for who, what, suite_t, names, detail in ROWS:
        cells = []
        for s in sizes:
            suite = suite_t.format(size=s)
            if "{size}" not in suite_t and s != ONCE_COLUMN:
                cells.append("")
                continue
            c = cell(results, got, suite, names, detail, s)
            total += bool(c)
            cells.append(c)
        lines.append(f"| {who} | {what} | " + " | ".join(cells) + " |")
    if total == 0:
        lines.append("")
        lines.append("**No interop results were found in this run.**")
    # A result no row names would be invisible: list it under the table (not the suite's closing
    # record, Interop.completed, which ci/interop/run.sh's finish writes).
    named = {(suite_t.format(size=s), n) for _, _, suite_t, names, _ in ROWS for s in sizes
             for n in names} | {("Interop", "completed")}
    extra = sorted(f"{s}.{n}" + ("" if ok else " (FAIL)") for (s, n), ok in got.items()
                   if (s, n) not in named)
    if extra:
        lines.append("")
        lines.append("Checks of this run with no row above: " + ", ".join(extra) + ".")
    return lines


def replace_block(text, name, lines, path):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"readme-tables.py: no {begin} ... {end} block in {path}")
    return pattern.sub(lambda _: begin + "\n" + "\n".join(lines) + "\n" + end, text)


def conformance(results):
    """The conformance table of ci/conform/readme-table.py from RESULTS/rxe/conform, or None
    when the run has no conformance reports."""
    d = os.path.join(results, "rxe", "conform")
    if not glob.glob(os.path.join(d, "ours-*.json")) and not glob.glob(
            os.path.join(d, "linux-*.json")):
        return None
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "conform_table", os.path.join(os.path.dirname(os.path.abspath(__file__)), "conform",
                                      "readme-table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.table(d)


def update(path, name, lines):
    with open(path) as f:
        text = f.read()
    text = replace_block(text, name, lines, path)
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--docs", help="the docs directory whose testing.md, interop.md and "
                    "conformance.md get this run's tables")
    args = ap.parse_args(argv)
    c, m = counts(args.results), matrix(args.results)
    conf = conformance(args.results)
    if args.docs:
        update(os.path.join(args.docs, "testing.md"), "test-counts", c)
        update(os.path.join(args.docs, "interop.md"), "interop-matrix", m)
        if (auth := auth_matrix(args.results)) is not None:
            update(os.path.join(args.docs, "interop.md"), "interop-auth", auth)
        if conf is not None:
            update(os.path.join(args.docs, "conformance.md"), "conformance", conf)
    else:
        auth = auth_matrix(args.results)
        print("\n".join(c + [""] + m + ([""] + auth if auth is not None else [])
                        + ([""] + conf if conf is not None else [])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
