// SPDX-License-Identifier: BSD-3-Clause
// nvmf-host: a small nvme-cli-like front end of the host library (identify, write, read).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cli_alias.h"
#include "common/log.h"
#include "common/status.h"
#include "common/wire_text.h"
#include "host/bench_cli.h"
#include "host/cli_util.h"
#include "host/conform_cli.h"
#include "host/controller.h"
#include "host/discover.h"
#include "host/memlock_bound.h"
#include "host/multipath.h"
#include "host/segments.h"
#include "target/memlock.h"
#include "ublk/ublk_cli.h"

namespace nvmf::host {
namespace {

// Options of the write and read subcommands, as typed.
struct IoArgs {
  std::string file;
  std::string offset = "0";
  std::string length;
  std::string json;       // "" none, "-" stdout, else a path
  uint32_t segments = 1;  // write: separately registered pieces per chunk (host/segments.h)
  // offset and length parsed by check_io_args().
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
};

// Parses -o and (read, when -l was given) -l before anything missing is reported: kInvalidArgument
// naming the option ("--length is 0", "--offset + --length (...) overflows 64 bits").
Status check_io_args(IoArgs& a, bool length_given) {
  NVMF_ASSIGN_OR_RETURN(a.offset_bytes, parse_size(a.offset, "--offset"));
  if (!length_given) return ok_status();  // read without -l: named after every bad value
  NVMF_ASSIGN_OR_RETURN(a.length_bytes, parse_size(a.length, "--length"));
  if (a.length_bytes == 0) return Status::invalid_argument("--length is 0");
  return check_byte_range(a.offset_bytes, a.length_bytes, "--offset + --length");
}

int fail(std::string_view what, const Status& st) {
  std::fprintf(stderr, "nvmf-host: %.*s: %s\n", static_cast<int>(what.size()), what.data(),
               st.to_string().c_str());
  return kExitRuntime;
}

// A bad argument found after parsing (alignment, namespace size): the usage error of subcommand
// `sub` (host_usage_error), exit 2.
int fail_usage(std::string_view sub, const Status& st) {
  return host_usage_error(sub, st.message());
}

Status emit_json(const std::string& target, const nlohmann::json& j) {
  if (target == "-") {
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    return ok_status();
  }
  std::ofstream out(target);
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out.close();
  if (!out) return Status::from_errno("write " + target, errno);
  return ok_status();
}

// A --json report path other than stdout must be writable before any I/O is done.
Status check_report_path(const std::string& json) {
  if (json.empty() || json == "-") return ok_status();
  return check_writable(json, "--json");
}

// Disconnects (a Controller, or every path of a MultipathController), reporting a failed
// shutdown as the command's error.
template <typename Device>
int finish(Device& c, int rc) {
  Status st = c.disconnect();
  if (!st.ok() && rc == kExitOk) return fail("disconnect", st);
  return rc;
}

void print_identify(const Controller& c) {
  const proto::IdentifyController& id = c.identify_controller();
  const NamespaceInfo& ns = c.namespace_info();
  Negotiation n = c.negotiation();
  std::printf("vid     : %s\nsn      : %s\nmn      : %s\nfr      : %s\n",
              hex_string(id.vid).c_str(), trim_ascii(id.sn, sizeof(id.sn)).c_str(),
              trim_ascii(id.mn, sizeof(id.mn)).c_str(), trim_ascii(id.fr, sizeof(id.fr)).c_str());
  std::printf("cntlid  : %u\nmdts    : %u\nsgls    : %s\nioccsz  : %u\niorcsz  : %u\n", id.cntlid,
              id.mdts, hex_string(id.sgls).c_str(), id.ioccsz, id.iorcsz);
  std::printf("icdoff  : %u\nmsdbd   : %u\nkas     : %u\nnn      : %u\n", id.icdoff, id.msdbd,
              id.kas, id.nn);
  std::printf("nsid    : %u\nnsze    : %llu\nlba size: %u\n", ns.nsid,
              static_cast<unsigned long long>(ns.nsze), ns.lba_size);
  if (n.in_capsule_enabled) {
    std::printf("in-capsule data: on (target size %u bytes, up to %u segments)\n",
                n.in_capsule_data_size, n.max_in_capsule_segments);
  } else {
    std::printf("in-capsule data: off: %s\n", n.in_capsule_why_off.c_str());
  }
  std::printf("max command bytes: %u, max_inline_data granted (min over queues): %u\n",
              n.max_command_bytes, n.min_granted_max_inline_data);
  for (const QueueInlineSend& q : n.queues) {
    std::printf(
        "queue %u: max_inline_data requested %u, granted %u, inline send up to %u%s; local ACK "
        "timeout %u\n",
        q.qid, q.requested, q.granted, q.usable, q.fallback ? " (fallback)" : "", q.ack_timeout);
  }
}

// `json`: "" prints text, "-" JSON on stdout, else JSON into that file (checked before connecting).
int cmd_identify(const HostOptions& opts, const std::string& json) {
  if (Status st = check_report_path(json); !st.ok()) return fail("identify", st);
  auto c = Controller::connect(opts);
  if (!c.ok()) return fail("connect", c.status());
  if (!json.empty()) {
    nlohmann::json j =
        identify_json((*c)->identify_controller(), (*c)->namespace_info(), (*c)->negotiation());
    j["host"] = {{"hostnqn", escape_wire_text((*c)->hostnqn())},
                 {"hostid", uuid_string((*c)->hostid())}};
    j["stats"] = stats_json((*c)->stats());  // the capsules identify itself posted
    j["recovery"] = recovery_json((*c)->state(), (*c)->recovery_stats(), opts);
    if (Status st = emit_json(json, j); !st.ok()) return finish(**c, fail("identify", st));
  } else {
    print_identify(**c);
  }
  return finish(**c, kExitOk);
}

// identify over every path (-x multipath): the first path's Identify, then each path's cntlid
// and the namespace's ANA group and state there.
int cmd_identify_multipath(const HostOptions& opts, const std::string& json, IoPolicy policy) {
  if (Status st = check_report_path(json); !st.ok()) return fail("identify", st);
  auto m = MultipathController::connect(opts, policy);
  if (!m.ok()) return fail("connect", m.status());
  MultipathController& mp = **m;
  const std::vector<PathStats> paths = mp.path_stats();
  if (!json.empty()) {
    const Controller& c = mp.first();
    nlohmann::json j = identify_json(c.identify_controller(), c.namespace_info(), c.negotiation());
    j["host"] = {{"hostnqn", escape_wire_text(c.hostnqn())}, {"hostid", uuid_string(c.hostid())}};
    j["multipath"] = multipath_json(policy, paths);
    for (size_t i = 0; i < paths.size(); ++i) {
      j["multipath"]["paths"][i]["cntlid"] = mp.controllers()[i]->negotiation().cntlid;
      j["multipath"]["paths"][i]["anagrpid"] = mp.controllers()[i]->namespace_info().anagrpid;
    }
    if (Status st = emit_json(json, j); !st.ok()) return finish(mp, fail("identify", st));
  } else {
    print_identify(mp.first());
    for (size_t i = 0; i < paths.size(); ++i) {
      const Controller& c = *mp.controllers()[i];
      std::printf("path %s: cntlid %u, ANA group %u %s\n", paths[i].path.c_str(),
                  c.negotiation().cntlid, c.namespace_info().anagrpid, paths[i].ana_state.c_str());
    }
  }
  return finish(mp, kExitOk);
}

nlohmann::json io_report(Controller& c, const char* op, uint64_t offset, uint64_t bytes) {
  return {{"operation", op},
          {"offset", offset},
          {"bytes", bytes},
          {"lba_size", c.lba_size()},
          {"stats", stats_json(c.stats())},
          {"negotiation", negotiation_json(c.negotiation())},
          {"recovery", recovery_json(c.state(), c.recovery_stats(), c.options())}};
}

// Writes the file chunk by chunk. With `segments` 1 through one registered buffer; with more,
// each chunk is split unevenly (uneven_split) over that many separately allocated and registered
// buffers and handed to Controller::write() as a scattered write.
template <typename Device>
Status write_file(Device& c, std::FILE* in, uint64_t file_size, uint64_t slba, uint32_t segments) {
  uint32_t lba = c.lba_size();
  uint64_t chunk = cli_buffer_bytes(file_size, lba);
  NVMF_ASSIGN_OR_RETURN(std::vector<uint64_t> capacity, uneven_split(chunk, segments));
  std::vector<verbs::RegisteredBuffer> bufs;
  for (uint64_t& cap : capacity) {
    cap += 4096;  // a shorter last chunk's split can exceed its share by a few bytes
    NVMF_ASSIGN_OR_RETURN(verbs::RegisteredBuffer b, c.allocate_buffer(cap));
    bufs.push_back(std::move(b));
  }
  std::vector<DataSegment> segs(segments);
  for (uint64_t done = 0; done < file_size;) {
    uint64_t want = std::min(chunk, file_size - done);
    uint64_t padded = round_up_to_lba(want, lba);
    NVMF_ASSIGN_OR_RETURN(
        std::vector<uint64_t> sizes,
        uneven_split(padded, static_cast<uint32_t>(std::min<uint64_t>(segments, padded))));
    segs.resize(sizes.size());
    uint64_t filled = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      uint8_t* p = bufs[i].data();
      uint64_t from_file = std::min(sizes[i], want - std::min(want, filled));
      if (std::fread(p, 1, from_file, in) != from_file) {
        return Status::io("short read from the input file at byte " +
                          std::to_string(done + filled));
      }
      std::memset(p + from_file, 0, sizes[i] - from_file);
      segs[i] = segment_of(bufs[i], 0, sizes[i]);
      filled += sizes[i];
    }
    NVMF_RETURN_IF_ERROR(c.write(slba + done / lba, segs));
    done += want;
  }
  return ok_status();
}

// The multipath device's side of write and read: every path's view is the same namespace.
const Controller& view(const Controller& c) { return c; }
const Controller& view(const MultipathController& m) { return m.first(); }

nlohmann::json io_report(MultipathController& m, const char* op, uint64_t offset, uint64_t bytes) {
  return {{"operation", op},
          {"offset", offset},
          {"bytes", bytes},
          {"lba_size", m.lba_size()},
          {"multipath", multipath_json(m.policy(), m.path_stats())}};
}

// "A (3 calls, optimized), B (0 calls, non-optimized)".
std::string paths_text(const std::vector<PathStats>& paths, bool writes) {
  std::string out;
  for (const PathStats& p : paths) {
    if (!out.empty()) out += ", ";
    out += p.path + " (" + std::to_string(writes ? p.writes : p.reads) + " calls, " + p.ana_state +
           ")";
  }
  return out;
}

Result<std::unique_ptr<Controller>> open_device(const HostOptions& opts, IoPolicy, Controller*) {
  return Controller::connect(opts);
}
Result<std::unique_ptr<MultipathController>> open_device(const HostOptions& opts, IoPolicy policy,
                                                         MultipathController*) {
  return MultipathController::connect(opts, policy);
}

template <typename Device>
int cmd_write(const HostOptions& opts, const IoArgs& a, IoPolicy policy) {
  const uint64_t offset = a.offset_bytes;  // parsed by check_io_args()
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(a.file.c_str(), "rb"),
                                                     &std::fclose);
  if (!in) return fail("write", Status::from_errno("open " + a.file, errno));
  Result<uint64_t> size = regular_file_size(fileno(in.get()), a.file, "--input");
  if (!size.ok()) return fail("write", size.status());
  uint64_t file_size = *size;
  if (file_size == 0) return fail("write", Status::invalid_argument(a.file + " is empty"));
  Status range = check_byte_range(offset, file_size, "--offset + the --input size");
  if (!range.ok()) return fail_usage("write", range);
  if (Status st = check_report_path(a.json); !st.ok()) return fail("write", st);
  auto c = open_device(opts, policy, static_cast<Device*>(nullptr));
  if (!c.ok()) return fail("connect", c.status());
  Device& ctrl = **c;
  uint32_t lba = ctrl.lba_size();
  Status st = check_lba_aligned(offset, lba, "--offset");
  if (!st.ok()) return finish(ctrl, fail_usage("write", st));
  st = check_fits_namespace(offset, file_size, lba, view(ctrl).namespace_info().nsze,
                            "--offset + the --input size");
  if (!st.ok()) return finish(ctrl, fail_usage("write", st));
  if (uint64_t pad = padding_bytes(file_size, lba); pad != 0) {
    std::fprintf(stderr,
                 "nvmf-host: note: %s is %llu bytes, not a whole number of %u-byte LBAs: "
                 "padding with %llu zero bytes\n",
                 a.file.c_str(), static_cast<unsigned long long>(file_size), lba,
                 static_cast<unsigned long long>(pad));
  }
  st = write_file(ctrl, in.get(), file_size, offset / lba, a.segments);
  // Like Linux, flush only when the controller has a volatile write cache (VWC bit 0): the data
  // is then durable when the CLI reports success.
  if (st.ok() && (view(ctrl).identify_controller().vwc & 1) != 0) st = ctrl.flush();
  if (!st.ok()) return finish(ctrl, fail("write", st));
  uint64_t written = round_up_to_lba(file_size, lba);
  if (a.json != "-") {
    if constexpr (std::is_same_v<Device, MultipathController>) {
      std::printf("wrote %llu bytes at offset %llu over %s\n",
                  static_cast<unsigned long long>(written), static_cast<unsigned long long>(offset),
                  paths_text(ctrl.path_stats(), true).c_str());
    } else {
      HostStats s = ctrl.stats();
      std::printf("wrote %llu bytes at offset %llu: %llu in-capsule and %llu keyed commands\n",
                  static_cast<unsigned long long>(written), static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(s.writes_in_capsule),
                  static_cast<unsigned long long>(s.writes_keyed));
    }
  }
  if (!a.json.empty()) {
    nlohmann::json j = io_report(ctrl, "write", offset, written);
    j["segments"] = a.segments;
    st = emit_json(a.json, j);
    if (!st.ok()) return finish(ctrl, fail("write", st));
  }
  return finish(ctrl, kExitOk);
}

// Reads whole LBAs chunk by chunk and writes exactly `length` bytes to `out`.
template <typename Device>
Status read_to_file(Device& c, std::FILE* out, uint64_t length, uint64_t slba) {
  uint32_t lba = c.lba_size();
  uint64_t total = round_up_to_lba(length, lba);
  uint64_t chunk = cli_buffer_bytes(total, lba);
  NVMF_ASSIGN_OR_RETURN(verbs::RegisteredBuffer buf, c.allocate_buffer(chunk));
  for (uint64_t done = 0; done < total;) {
    uint64_t n = std::min(chunk, total - done);
    NVMF_RETURN_IF_ERROR(c.read(slba + done / lba, segment_of(buf, 0, n)));
    uint64_t keep = std::min(n, length - std::min(length, done));
    if (std::fwrite(buf.data(), 1, keep, out) != keep) {
      return Status::from_errno("write to the output file", errno);
    }
    done += n;
  }
  return ok_status();
}

template <typename Device>
int cmd_read(const HostOptions& opts, const IoArgs& a, IoPolicy policy) {
  const uint64_t offset = a.offset_bytes;  // parsed by check_io_args()
  const uint64_t length = a.length_bytes;
  if (Status st = check_report_path(a.json); !st.ok()) return fail("read", st);
  auto c = open_device(opts, policy, static_cast<Device*>(nullptr));
  if (!c.ok()) return fail("connect", c.status());
  Device& ctrl = **c;
  Status st = check_lba_aligned(offset, ctrl.lba_size(), "--offset");
  if (!st.ok()) return finish(ctrl, fail_usage("read", st));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(a.file.c_str(), "wb"),
                                                      &std::fclose);
  if (!out) return finish(ctrl, fail("read", Status::from_errno("open " + a.file, errno)));
  st = read_to_file(ctrl, out.get(), length, offset / ctrl.lba_size());
  if (st.ok() && std::fflush(out.get()) != 0) st = Status::from_errno("flush " + a.file, errno);
  if (!st.ok()) return finish(ctrl, fail("read", st));
  if (a.json != "-") {
    if constexpr (std::is_same_v<Device, MultipathController>) {
      std::printf("read %llu bytes at offset %llu over %s\n",
                  static_cast<unsigned long long>(length), static_cast<unsigned long long>(offset),
                  paths_text(ctrl.path_stats(), false).c_str());
    } else {
      std::printf("read %llu bytes at offset %llu in %llu commands\n",
                  static_cast<unsigned long long>(length), static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(ctrl.stats().reads));
    }
  }
  if (!a.json.empty()) {
    st = emit_json(a.json, io_report(ctrl, "read", offset, length));
    if (!st.ok()) return finish(ctrl, fail("read", st));
  }
  return finish(ctrl, kExitOk);
}

nlohmann::json discovery_json(const DiscoveryLog& log) {
  nlohmann::json records = nlohmann::json::array();
  for (const DiscoveryEntry& e : log.entries) {
    records.push_back({{"trtype", trtype_name(e.trtype)},
                       {"adrfam", adrfam_name(e.adrfam)},
                       {"subtype", subtype_name(e.subtype)},
                       {"treq", treq_name(e.treq)},
                       {"portid", e.portid},
                       {"cntlid", e.cntlid},
                       {"asqsz", e.asqsz},
                       {"eflags", e.eflags},
                       {"trsvcid", escape_wire_text(e.trsvcid)},
                       {"subnqn", escape_wire_text(e.subnqn)},
                       {"traddr", escape_wire_text(e.traddr)},
                       {"rdma_qptype", rdma_qptype_name(e.rdma_qptype)},
                       {"rdma_prtype", rdma_prtype_name(e.rdma_prtype)},
                       {"rdma_cms", rdma_cms_name(e.rdma_cms)},
                       {"rdma_pkey", e.rdma_pkey},
                       {"raw",
                        {{"trtype", e.trtype},
                         {"adrfam", e.adrfam},
                         {"subtype", e.subtype},
                         {"treq", e.treq},
                         {"rdma_qptype", e.rdma_qptype},
                         {"rdma_prtype", e.rdma_prtype},
                         {"rdma_cms", e.rdma_cms}}}});
  }
  const proto::IdentifyController& id = log.identify;
  return {
      {"genctr", log.genctr},
      {"numrec", log.numrec},
      {"recfmt", log.recfmt},
      {"controller",
       {{"cntrltype", id.cntrltype},
        {"cntlid", id.cntlid},
        {"subnqn", escape_wire_text(std::string(id.subnqn, strnlen(id.subnqn, sizeof(id.subnqn))))},
        {"sn", escape_wire_text(trim_ascii(id.sn, sizeof(id.sn)))},
        {"mn", escape_wire_text(trim_ascii(id.mn, sizeof(id.mn)))},
        {"fr", escape_wire_text(trim_ascii(id.fr, sizeof(id.fr)))}}},
      {"records", records}};
}

// Like `nvme discover`: one block per Discovery Log entry.
// nvme-cli's gen-dhchap-key: prints a new DH-HMAC-CHAP secret (host/cli_util.h).
struct GenKeyArgs {
  std::string secret;
  uint32_t key_length = 0;
  uint32_t hmac = 0;
  std::string nqn;
};

CLI::App* add_gen_dhchap_key_subcommand(CLI::App& app, GenKeyArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "gen-dhchap-key", "print a new DH-HMAC-CHAP secret, DHHC-1:hh:...: (nvme gen-dhchap-key)");
  sub->add_option("-s,--secret", a.secret, "the key in hexadecimal (default: random)");
  sub->add_option("-l,--key-length", a.key_length,
                  "key bytes: 32, 48 or 64 (default 32, or the --hmac hash's length)");
  sub->add_option("-m,--hmac", a.hmac,
                  "0: none; 1, 2, 3: transform with HMAC-SHA-256/384/512 over --nqn")
      ->check(CLI::Range(0u, 3u));
  sub->add_option("-n,--nqn", a.nqn, "the host NQN the key is for (default /etc/nvme/hostnqn)");
  return sub;
}

int cmd_gen_dhchap_key(GenKeyArgs& a) {
  if (a.nqn.empty() && a.hmac > 0) {
    std::ifstream f("/etc/nvme/hostnqn");
    std::getline(f, a.nqn);
  }
  Result<std::string> key = gen_dhchap_key(a.secret, a.key_length, a.hmac, a.nqn);
  dhchap::cleanse(a.secret.data(), a.secret.size());
  if (!key.ok()) return host_usage_error("gen-dhchap-key", key.status().message());
  std::printf("%s\n", key->c_str());
  dhchap::cleanse(key->data(), key->size());
  return 0;
}

int cmd_discover(const HostOptions& opts, const std::string& json) {
  if (Status st = check_report_path(json); !st.ok()) return fail("discover", st);
  auto log = discover(opts);
  if (!log.ok()) return fail("discover", log.status());
  if (!json.empty()) {
    if (Status st = emit_json(json, discovery_json(*log)); !st.ok()) return fail("discover", st);
    return kExitOk;
  }
  std::printf("Discovery Log Number of Records %llu, Generation counter %llu\n",
              static_cast<unsigned long long>(log->numrec),
              static_cast<unsigned long long>(log->genctr));
  for (size_t i = 0; i < log->entries.size(); ++i) {
    const DiscoveryEntry& e = log->entries[i];
    std::printf("=====Discovery Log Entry %zu======\n", i);
    std::printf("trtype:  %s\nadrfam:  %s\nsubtype: %s\ntreq:    %s\nportid:  %u\n",
                trtype_name(e.trtype).c_str(), adrfam_name(e.adrfam).c_str(),
                subtype_name(e.subtype).c_str(), treq_name(e.treq).c_str(), e.portid);
    std::printf("trsvcid: %s\nsubnqn:  %s\ntraddr:  %s\ncntlid:  0x%04x\nasqsz:   %u\n",
                e.trsvcid.c_str(), e.subnqn.c_str(), e.traddr.c_str(), e.cntlid, e.asqsz);
    std::printf("rdma_prtype: %s\nrdma_qptype: %s\nrdma_cms:    %s\nrdma_pkey: 0x%04x\n",
                rdma_prtype_name(e.rdma_prtype).c_str(), rdma_qptype_name(e.rdma_qptype).c_str(),
                rdma_cms_name(e.rdma_cms).c_str(), e.rdma_pkey);
  }
  return kExitOk;
}

// The connection and logging options, shared by every subcommand and spelled as in nvme-cli
// (-a/--traddr, -s/--trsvcid, -n/--nqn, -w/--host-traddr, --hostnqn, --nr-io-queues,
// --queue-size, -k/--keep-alive-tmo, --reconnect-delay, --ctrl-loss-tmo, --fast-io-fail-tmo)
// and as in nvmf-target (--poll, --log-level, -v/--verbose, --max-inline-data).
void add_common_options(CLI::App& app, HostOptions& o, std::string& poll_mode,
                        std::string& log_level, bool& verbose, uint32_t& keep_alive_tmo_s,
                        std::string& dhchap_secret, std::string& dhchap_ctrl_secret) {
  app.add_option("-a,--traddr", o.traddr,
                 "target address (required); a comma-separated list gives failover paths");
  app.add_option("-s,--trsvcid", o.trsvcid,
                 "target port; a comma-separated list pairs with -a's addresses")
      ->capture_default_str();
  app.add_option("-n,--nqn", o.subnqn, "subsystem NQN (not for discover)");
  app.add_option("-w,--host-traddr", o.host_traddr, "local source address");
  app.add_option("--hostnqn", o.hostnqn, "host NQN (default: from a random host id)");
  app.add_option("-S,--dhchap-secret", dhchap_secret,
                 "DH-HMAC-CHAP host key, DHHC-1:hh:...: (nvme gen-dhchap-key): every queue "
                 "authenticates when the controller asks");
  app.add_option("-C,--dhchap-ctrl-secret", dhchap_ctrl_secret,
                 "DH-HMAC-CHAP controller key: the controller must prove it too (bidirectional)");
  app.add_option("--nr-io-queues", o.num_io_queues, "I/O queues to connect (I/O uses the first)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--queue-size", o.queue_size, "I/O queue entries")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  app.add_option("-k,--keep-alive-tmo", keep_alive_tmo_s,
                 "keep alive timeout (KATO) in seconds, sent in Connect; the host sends Keep "
                 "Alive every KATO/2; 0 = off (nvme-cli's name and default)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 65535u));
  app.add_option("--reconnect-delay", o.reconnect_delay_s,
                 "seconds from a lost connection to the reconnect attempt, and between attempts "
                 "(nvme-cli's name and default)")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.add_option("--ctrl-loss-tmo", o.ctrl_loss_tmo_s,
                 "seconds of reconnecting before the controller is given up (Host Pathing "
                 "Error); -1 = forever, 0 = no reconnect")
      ->capture_default_str()
      ->check(CLI::Range(-1, 86400 * 365));
  CLI::Option* fast_io_fail =
      app.add_option("--fast-io-fail-tmo", o.fast_io_fail_tmo_s,
                     "seconds after a loss after which I/O fails with Host Pathing Error while "
                     "reconnecting goes on; -1 = off")
          ->capture_default_str()
          ->check(CLI::Range(-1, 86400 * 365));
  add_hidden_alias(app, "--fast_io_fail_tmo", o.fast_io_fail_tmo_s, fast_io_fail,
                   CLI::Range(-1, 86400 * 365));
  app.add_option("--ack-timeout", o.ack_timeout,
                 "local ACK timeout of each queue's QP, 4.096 us x 2^N before a lost command "
                 "capsule is sent again (0..31; 0 = rdma_cm's, 19 on rxe; SPDK's "
                 "transport_ack_timeout)")
      ->capture_default_str()
      ->check(CLI::Range(0, 31));
  app.add_option("--timeout-ms", o.timeout_ms, "per command and CM step timeout")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  app.add_option("--max-inline-data", o.requested_max_inline_data,
                 "max_inline_data asked of each QP for inline send (IBV_SEND_INLINE) of command "
                 "capsules; 0 = never; a refused size falls back to 0")
      ->capture_default_str();
  CLI::Option* poll =
      app.add_option("--poll", poll_mode,
                     "event: sleep until a completion event; busy: poll the CQ without sleeping")
          ->capture_default_str()
          ->check(CLI::IsMember({"busy", "event"}));
  add_hidden_alias(app, "--poll-mode", poll_mode, poll, CLI::IsMember({"busy", "event"}));
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "debug logging (--log-level debug)");
}

// --json [FILE] and --output-format normal|json, with one meaning in every subcommand (and in
// nvmf-target): the JSON report goes to FILE, or to stdout when no FILE (or -) is given.
struct JsonOptions {
  std::string file;
  std::string format = "normal";
  CLI::Option* json = nullptr;

  void add(CLI::App* sub) {
    json = sub->add_option("--json", file, "JSON report into FILE; no FILE or - : on stdout")
               ->expected(0, 1)
               ->type_name("[FILE]");
    sub->add_option("--output-format", format, "normal|json (json: --json on stdout)")
        ->check(CLI::IsMember({"normal", "json"}));
  }
  // "" for text, "-" for JSON on stdout, else the file.
  std::string target() const {
    if (json != nullptr && json->count() > 0) return file.empty() ? "-" : file;
    return format == "json" ? "-" : "";
  }
};

// CLI11 keeps arguments it does not know (allow_extras) so the error can name the first one,
// whether it looks like an option or like a subcommand. `sub`: the subcommand given, or "".
int unknown_argument(std::string_view sub, const std::vector<std::string>& extras) {
  const std::string& first = extras.front();
  if (!first.empty() && first[0] == '-') {
    return host_usage_error(sub, "unknown option '" + first + "'");
  }
  return host_usage_error(sub, "unknown subcommand or unexpected argument '" + first + "'");
}

int run(int argc, char** argv) {
  CLI::App app{
      "nvmf-host: NVMe over Fabrics RDMA host (identify, write, read, bench, discover, conform, "
      "ublk)",
      "nvmf-host"};
  app.require_subcommand(0, 1);
  app.fallthrough();
  app.allow_extras();  // before the subcommands, which inherit it: unknown_argument() names them
  HostOptions opts;
  std::string poll_mode = "event";
  std::string log_level = "warn";
  bool verbose = false;
  uint32_t keep_alive_tmo_s = 5;  // nvme-cli / Linux NVME_DEFAULT_KATO
  std::string dhchap_secret, dhchap_ctrl_secret;
  add_common_options(app, opts, poll_mode, log_level, verbose, keep_alive_tmo_s, dhchap_secret,
                     dhchap_ctrl_secret);
  // SPDK bdev_nvme_attach_controller's -x (multipath mode) and Linux's iopolicy.
  std::string multipath = "failover", iopolicy = "numa";
  app.add_option("-x,--multipath", multipath,
                 "failover: one path at a time, the next on a loss; multipath: every -a/-s path "
                 "connected at once, I/O by ANA state (identify, write, read, bench)")
      ->capture_default_str()
      ->check(CLI::IsMember({"failover", "multipath"}));
  app.add_option("--iopolicy", iopolicy,
                 "with -x multipath: numa (the first optimized path) or round-robin (optimized "
                 "paths in turn)")
      ->capture_default_str()
      ->check(CLI::IsMember({"numa", "round-robin"}));
  GenKeyArgs gen_args;
  CLI::App* gen_key = add_gen_dhchap_key_subcommand(app, gen_args);
  JsonOptions id_json, disc_json, w_json, r_json;
  CLI::App* identify = app.add_subcommand("identify", "Identify controller and namespace");
  id_json.add(identify);
  IoArgs w, r;
  CLI::App* write = app.add_subcommand("write", "write a file at a byte offset");
  // -d/--data as in nvme-cli's write and read (the data file); -i/--input kept, hidden.
  CLI::Option* w_data = write->add_option(
      "-d,--data", w.file, "the file to write (required); a partial last LBA is padded with zeros");
  add_hidden_alias(*write, "-i,--input", w.file, w_data);
  write->add_option("-o,--offset", w.offset, "byte offset (multiple of the LBA size)");
  w_json.add(write);
  write
      ->add_option("--segments", w.segments,
                   "split the data into N separately registered uneven pieces (scattered write)")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxCliSegments));
  CLI::App* read = app.add_subcommand("read", "read bytes at an offset into a file");
  CLI::Option* r_data =
      read->add_option("-d,--data", r.file, "the file the bytes are written to (required)");
  add_hidden_alias(*read, "-f,--output", r.file, r_data);
  read->add_option("-o,--offset", r.offset, "byte offset (multiple of the LBA size)");
  // Required, checked after every bad value (not CLI11's required(), which comes first).
  read->add_option("-l,--length", r.length, "bytes to read (required)");
  r_json.add(read);
  BenchArgs bench_args;
  CLI::App* bench = add_bench_subcommand(app, bench_args);
  CLI::App* disc = app.add_subcommand("discover", "read the Discovery Log Page (nvme discover)");
  disc_json.add(disc);
  ConformArgs conform_args;
  CLI::App* conform = add_conform_subcommand(app, conform_args);
  // conform's --json FILE takes the same optional FILE as every other subcommand's.
  CLI::Option* conform_json = conform->get_option("--json");
  conform_json->expected(0, 1)->type_name("[FILE]");
  ublk::UblkArgs ublk_args;
  CLI::App* ublk = ublk::add_ublk_subcommand(app, ublk_args);
  CLI::Option* ublk_json = ublk->get_option("--json");
  // The connection options belong to the top level but may come after the subcommand too;
  // CLI11 lists them only in the top-level help, so each subcommand's help points there.
  const std::vector<CLI::App*> subs = {identify, write, read, bench, disc, conform, ublk, gen_key};
  for (CLI::App* sub : subs) {
    if (sub == gen_key) continue;
    sub->footer(
        "Connection options (also accepted here): -a,--traddr ADDR (required), -s,--trsvcid "
        "PORT, -n,--nqn NQN (required but for discover), -w,--host-traddr ADDR, --hostnqn, "
        "-S,--dhchap-secret, -C,--dhchap-ctrl-secret, "
        "-k,--keep-alive-tmo, --reconnect-delay, --ctrl-loss-tmo, --fast-io-fail-tmo, "
        "--nr-io-queues, --queue-size, --timeout-ms, --max-inline-data, --poll, --log-level, "
        "-v, -x,--multipath, --iopolicy. See nvmf-host --help.");
  }
  // The subcommand given ("" for none): its synopsis is the usage line of an error.
  auto given = [&subs]() -> std::string {
    for (CLI::App* s : subs) {
      if (s->parsed()) return s->get_name();
    }
    return "";
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return host_usage_error(given(), e.what());
  }
  const std::string sub = given();
  if (!app.remaining().empty()) return unknown_argument(sub, app.remaining());
  // Every bad value is named before anything missing is (-a, -n, the subcommand, -d, -l): the
  // first mistake reported is the first one the user made. CLI11 checked the ranges and sets.
  Result<LogLevel> level = parse_log_level(log_level);  // checked with -v too
  if (!level.ok()) return host_usage_error(sub, "--log-level: " + level.status().message());
  if (bench->parsed()) {
    if (Status st = check_bench_args(*bench, bench_args); !st.ok()) {
      return host_usage_error(sub, st.message());
    }
    // bench polls busy unless told: a --poll given before the subcommand counts too.
    if (bench->get_option("--poll")->count() == 0 &&
        (app.get_option("--poll")->count() > 0 || app.get_option("--poll-mode")->count() > 0)) {
      bench_args.poll = poll_mode;
    }
  }
  CLI::Option* r_length = read->get_option("--length");
  for (auto [cmd, args] : {std::pair{write, &w}, std::pair{read, &r}}) {
    if (!cmd->parsed()) continue;
    if (Status st = check_io_args(*args, cmd == read && r_length->count() > 0); !st.ok()) {
      return host_usage_error(sub, st.message());
    }
  }
  if (conform->parsed()) {
    if (auto ids = conform_case_ids(conform_args.cases); !ids.ok()) {
      return host_usage_error(sub, ids.status().message());
    }
  }
  if (Status st = parse_dhchap_secrets(dhchap_secret, dhchap_ctrl_secret, opts.dhchap); !st.ok()) {
    return host_usage_error(sub, st.message());
  }
  if (gen_key->parsed()) return cmd_gen_dhchap_key(gen_args);
  if (Status st = split_path_lists(opts); !st.ok()) return host_usage_error(sub, st.message());
  if (Status st = check_connection_options(opts); !st.ok()) {
    return host_usage_error(sub, st.message());
  }
  if (opts.subnqn == proto::kDiscoveryNqn && !disc->parsed()) {
    // No namespace, no I/O queues: Identify fails.
    return host_usage_error(sub, "-n " + std::string(proto::kDiscoveryNqn) +
                                     " is the discovery controller: use 'nvmf-host discover' "
                                     "(no -n needed)");
  }
  // Then what is missing.
  if (sub.empty()) {
    return host_usage_error(sub,
                            "a subcommand is required: identify, write, read, bench, discover, "
                            "conform, ublk or gen-dhchap-key");
  }
  // The data file of write and read: -d/--data (or its hidden older spelling); read's -l.
  for (auto [cmd, file] : {std::pair{write, &w.file}, std::pair{read, &r.file}}) {
    if (cmd->parsed() && file->empty()) return host_usage_error(sub, "-d,--data FILE is required");
  }
  if (read->parsed() && r_length->count() == 0) {
    return host_usage_error(sub, "-l,--length is required");
  }
  const IoPolicy policy = *parse_iopolicy(iopolicy);  // CLI11 checked the set
  const bool multi = multipath == "multipath";
  if (multi && (conform->parsed() || disc->parsed() || ublk->parsed())) {
    return host_usage_error(sub, "-x multipath is for identify, write, read and bench; " + sub +
                                     " uses one path at a time");
  }
  bench_args.multipath = multi;
  bench_args.iopolicy = policy;
  if (conform_json->count() > 0 && conform_args.json.empty()) conform_args.json = "-";
  if (ublk_json->count() > 0 && ublk_args.json.empty()) ublk_args.json = "-";
  if (conform->parsed() && conform_args.list) return cmd_conform(opts, 0, conform_args);
  if (opts.traddr.empty()) return host_usage_error(sub, "-a,--traddr is required");
  opts.poll_mode = poll_mode == "busy" ? PollMode::kBusy : PollMode::kEvent;
  opts.kato_ms = keep_alive_tmo_s * 1000;
  set_log_level(verbose ? LogLevel::kDebug : *level);
  if (disc->parsed()) return cmd_discover(opts, disc_json.target());
  if (opts.subnqn.empty()) return host_usage_error(sub, "-n,--nqn is required");
  // Before any device is opened: what the connection and bench's buffers register must fit
  // RLIMIT_MEMLOCK (bench sizes its queues for --iodepth, as cmd_bench does).
  const uint32_t queue_size = bench->parsed()
                                  ? std::max<uint32_t>(opts.queue_size, bench_args.iodepth + 1)
                                  : opts.queue_size;
  uint64_t memlock = host_memlock_bytes(queue_size, bench->parsed() ? bench_args.numjobs : 0,
                                        bench_args.iodepth, bench_args.bs_list);
  if (ublk->parsed()) {
    memlock += ublk::ublk_buffer_bytes(opts.num_io_queues, opts.queue_size, ublk_args.max_io_size);
  }
  const std::string refusal = memlock_refusal("nvmf-host", memlock, current_memlock_limit());
  if (!refusal.empty()) {
    std::cerr << refusal << "\n";
    return kExitRuntime;
  }
  if (conform->parsed()) {
    // conform's own default: short per-command timeouts keep a whole run to minutes.
    int timeout = app.get_option("--timeout-ms")->count() > 0 ? opts.timeout_ms : 1500;
    return cmd_conform(opts, timeout, conform_args);
  }
  if (identify->parsed()) {
    return multi ? cmd_identify_multipath(opts, id_json.target(), policy)
                 : cmd_identify(opts, id_json.target());
  }
  w.json = w_json.target();
  r.json = r_json.target();
  if (write->parsed()) {
    return multi ? cmd_write<MultipathController>(opts, w, policy)
                 : cmd_write<Controller>(opts, w, policy);
  }
  if (bench->parsed()) return cmd_bench(opts, bench_args);
  if (ublk->parsed()) return ublk::cmd_ublk(opts, ublk_args);
  return multi ? cmd_read<MultipathController>(opts, r, policy)
               : cmd_read<Controller>(opts, r, policy);
}

}  // namespace
}  // namespace nvmf::host

int main(int argc, char** argv) { return nvmf::host::run(argc, argv); }
