// SPDX-License-Identifier: BSD-3-Clause
// nvmf-host's identify, write, read, discover and gen-dhchap-key subcommands; see subcommands.h.
#include "host/cli/subcommands.h"

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

#include "common/dhchap.h"
#include "common/wire_text.h"
#include "host/cli/cli_util.h"
#include "host/cli/segments.h"
#include "host/controller.h"
#include "host/discover.h"
#include "host/multipath.h"

namespace nvmf::host {
namespace {

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
int identify_one(const HostOptions& opts, const std::string& json) {
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
int identify_multipath(const HostOptions& opts, const std::string& json, IoPolicy policy) {
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
int write_with(const HostOptions& opts, const IoArgs& a, IoPolicy policy) {
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
int read_with(const HostOptions& opts, const IoArgs& a, IoPolicy policy) {
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

}  // namespace

// Parses -o and (read, when -l was given) -l before anything missing is reported: kInvalidArgument
// naming the option ("--length is 0", "--offset + --length (...) overflows 64 bits").
Status check_io_args(IoArgs& a, bool length_given) {
  NVMF_ASSIGN_OR_RETURN(a.offset_bytes, parse_size(a.offset, "--offset"));
  if (!length_given) return ok_status();  // read without -l: named after every bad value
  NVMF_ASSIGN_OR_RETURN(a.length_bytes, parse_size(a.length, "--length"));
  if (a.length_bytes == 0) return Status::invalid_argument("--length is 0");
  return check_byte_range(a.offset_bytes, a.length_bytes, "--offset + --length");
}

int cmd_identify(const HostOptions& opts, const std::string& json, IoPolicy policy,
                 bool multipath) {
  return multipath ? identify_multipath(opts, json, policy) : identify_one(opts, json);
}

int cmd_write(const HostOptions& opts, const IoArgs& a, IoPolicy policy, bool multipath) {
  return multipath ? write_with<MultipathController>(opts, a, policy)
                   : write_with<Controller>(opts, a, policy);
}

int cmd_read(const HostOptions& opts, const IoArgs& a, IoPolicy policy, bool multipath) {
  return multipath ? read_with<MultipathController>(opts, a, policy)
                   : read_with<Controller>(opts, a, policy);
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

}  // namespace nvmf::host
