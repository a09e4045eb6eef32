// SPDX-License-Identifier: BSD-3-Clause
// Discovery Log Page reading and decoding.
#include "host/discover.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "common/nvme_status.h"
#include "host/auth.h"
#include "host/bringup.h"
#include "host/commands.h"
#include "host/log_reads.h"
#include "host/queue.h"
#include "proto/fabrics.h"

namespace nvmf::host {
namespace {

constexpr uint32_t kChunk = 4096;  // CommandChannel::run moves at most 4096 bytes
constexpr int kGenctrRetries = 3;

std::string field_text(const char* p, size_t n) {
  std::string s(p, strnlen(p, n));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string named(uint8_t v, std::initializer_list<std::pair<uint8_t, const char*>> names) {
  for (const auto& [value, name] : names) {
    if (value == v) return name;
  }
  return "unrecognized (" + std::to_string(v) + ")";
}

Status read_chunk(CommandChannel& ch, uint64_t offset, std::span<uint8_t> out) {
  proto::Sqe sqe =
      get_log_page_sqe(proto::kLogDiscovery, static_cast<uint32_t>(out.size()), offset);
  std::string what = "Get Log Page 70h at offset " + std::to_string(offset);
  Result<proto::Cqe> cqe = ch.run(sqe, {}, out, false);
  if (!cqe.ok()) return std::move(cqe).status().annotate(what);
  return cqe_status(*cqe, what);
}

}  // namespace

Result<DiscoveryLog> parse_discovery_log(std::span<const uint8_t> bytes) {
  if (bytes.size() < proto::kDiscoveryLogHeaderSize) {
    return Status::invalid_argument("discovery log: " + std::to_string(bytes.size()) +
                                    " bytes hold no 1024-byte header");
  }
  proto::DiscoveryLogHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  DiscoveryLog log;
  log.genctr = h.genctr;
  log.numrec = h.numrec;
  log.recfmt = h.recfmt;
  if (h.recfmt != 0) {
    return Status::invalid_argument("discovery log: RECFMT " + std::to_string(h.recfmt) +
                                    " is not 0");
  }
  uint64_t held = (bytes.size() - proto::kDiscoveryLogHeaderSize) / proto::kDiscoveryLogEntrySize;
  if (held < h.numrec) {
    return Status::invalid_argument("discovery log: " + std::to_string(bytes.size()) +
                                    " bytes hold " + std::to_string(held) + " of NUMREC " +
                                    std::to_string(h.numrec) + " entries");
  }
  for (uint64_t i = 0; i < h.numrec; ++i) {
    proto::DiscoveryLogEntry e;
    std::memcpy(&e, bytes.data() + proto::kDiscoveryLogHeaderSize + i * sizeof(e), sizeof(e));
    DiscoveryEntry d;
    d.trtype = e.trtype;
    d.adrfam = e.adrfam;
    d.subtype = e.subtype;
    d.treq = e.treq;
    d.portid = e.portid;
    d.cntlid = e.cntlid;
    d.asqsz = e.asqsz;
    d.eflags = e.eflags;
    d.trsvcid = field_text(e.trsvcid, sizeof(e.trsvcid));
    d.traddr = field_text(e.traddr, sizeof(e.traddr));
    d.subnqn = field_text(e.subnqn, sizeof(e.subnqn));
    d.rdma_qptype = e.tsas.qptype;
    d.rdma_prtype = e.tsas.prtype;
    d.rdma_cms = e.tsas.cms;
    d.rdma_pkey = e.tsas.pkey;
    log.entries.push_back(std::move(d));
  }
  return log;
}

proto::Sqe get_log_page_sqe(uint8_t lid, uint32_t bytes, uint64_t offset) {
  proto::Sqe s{};
  s.opcode = proto::kAdminGetLogPage;
  s.flags = proto::kFlagsPsdtSgl;
  uint32_t numd = bytes / 4 - 1;
  s.cdw10 = lid | ((numd & 0xFFFF) << 16);
  s.cdw11 = numd >> 16;
  s.cdw12 = static_cast<uint32_t>(offset);
  s.cdw13 = static_cast<uint32_t>(offset >> 32);
  return s;
}

Result<DiscoveryLog> read_discovery_log(CommandChannel& ch) {
  proto::IdentifyController id{};
  auto id_bytes = std::span<uint8_t>(reinterpret_cast<uint8_t*>(&id), sizeof(id));
  Result<proto::Cqe> cqe = ch.run(identify_sqe(proto::kCnsController, 0), {}, id_bytes, false);
  if (!cqe.ok()) return std::move(cqe).status().annotate("Identify Controller");
  NVMF_RETURN_IF_ERROR(cqe_status(*cqe, "Identify Controller"));
  for (int attempt = 0;; ++attempt) {
    std::vector<uint8_t> bytes(proto::kDiscoveryLogHeaderSize);
    NVMF_RETURN_IF_ERROR(read_chunk(ch, 0, bytes));
    proto::DiscoveryLogHeader h;
    std::memcpy(&h, bytes.data(), sizeof(h));
    if (h.numrec > 1024) {
      return Status::invalid_argument("discovery log: NUMREC " + std::to_string(h.numrec) +
                                      " is implausible");
    }
    bytes.resize(proto::kDiscoveryLogHeaderSize + h.numrec * proto::kDiscoveryLogEntrySize);
    for (size_t at = proto::kDiscoveryLogHeaderSize; at < bytes.size(); at += kChunk) {
      size_t n = std::min<size_t>(kChunk, bytes.size() - at);
      NVMF_RETURN_IF_ERROR(read_chunk(ch, at, std::span<uint8_t>(bytes.data() + at, n)));
    }
    std::vector<uint8_t> again(proto::kDiscoveryLogHeaderSize);
    NVMF_RETURN_IF_ERROR(read_chunk(ch, 0, again));
    proto::DiscoveryLogHeader h2;
    std::memcpy(&h2, again.data(), sizeof(h2));
    if (h2.genctr != h.genctr && attempt + 1 < kGenctrRetries) continue;
    NVMF_ASSIGN_OR_RETURN(DiscoveryLog log, parse_discovery_log(bytes));
    log.identify = id;
    return log;
  }
}

Result<DiscoveryLog> discover(const HostOptions& options) {
  if (options.traddr.empty()) return Status::invalid_argument("no target address (traddr)");
  std::optional<verbs::ProtectionDomain> pd;
  NVMF_ASSIGN_OR_RETURN(std::unique_ptr<Queue> admin,
                        Queue::connect(queue_params(options, 0, kAdminQueueSize), pd));
  HostId hostid = random_host_id();
  std::string hostnqn = options.hostnqn.empty() ? default_hostnqn(hostid) : options.hostnqn;
  NVMF_ASSIGN_OR_RETURN(proto::ConnectData data, connect_data(hostid, proto::kAdminQueueCntlid,
                                                              proto::kDiscoveryNqn, hostnqn));
  bool atr = false;
  NVMF_RETURN_IF_ERROR(fabrics_connect(*admin, 0, kAdminQueueSize, 0, data, false, &atr).status());
  if (atr) {
    NVMF_RETURN_IF_ERROR(
        authenticate(*admin, 0, options.dhchap, hostnqn, std::string(proto::kDiscoveryNqn)));
  }
  NVMF_ASSIGN_OR_RETURN(uint64_t cap, property_get(*admin, proto::kPropCap, true));
  NVMF_RETURN_IF_ERROR(enable_controller(*admin, cap));
  Result<DiscoveryLog> log = read_discovery_log(*admin);
  Status st = shutdown_controller(*admin, kCcEnable, options.shutdown_timeout_ms);
  admin->disconnect();
  if (!log.ok()) return log;
  if (!st.ok()) return std::move(st).annotate("discovery controller shutdown");
  return log;
}

std::string trtype_name(uint8_t v) {
  return named(v, {{proto::kTrtypeRdma, "rdma"},
                   {proto::kTrtypeFc, "fc"},
                   {proto::kTrtypeTcp, "tcp"},
                   {proto::kTrtypeLoop, "loop"}});
}
std::string adrfam_name(uint8_t v) {
  return named(v, {{proto::kAdrfamIpv4, "ipv4"},
                   {proto::kAdrfamIpv6, "ipv6"},
                   {proto::kAdrfamIb, "infiniband"},
                   {proto::kAdrfamFc, "fibre-channel"}});
}
std::string subtype_name(uint8_t v) {
  return named(v, {{proto::kSubtypeReferral, "discovery subsystem referral"},
                   {proto::kSubtypeNvme, "nvme subsystem"},
                   {proto::kSubtypeCurrentDiscovery, "current discovery subsystem"}});
}
std::string treq_name(uint8_t v) {
  std::string s =
      named(v & proto::kTreqSecureChannelMask, {{proto::kTreqNotSpecified, "not specified"},
                                                {proto::kTreqRequired, "required"},
                                                {proto::kTreqNotRequired, "not required"}});
  if (v & proto::kTreqDisableSqFlowControl) s += ", sq flow control disable supported";
  return s;
}
std::string rdma_qptype_name(uint8_t v) {
  return named(
      v, {{proto::kRdmaQptypeConnected, "connected"}, {proto::kRdmaQptypeDatagram, "datagram"}});
}
std::string rdma_prtype_name(uint8_t v) {
  return named(v, {{proto::kRdmaPrtypeNotSpecified, "not specified"},
                   {proto::kRdmaPrtypeIb, "infiniband"},
                   {proto::kRdmaPrtypeRoce, "roce"},
                   {proto::kRdmaPrtypeRocev2, "roce-v2"},
                   {proto::kRdmaPrtypeIwarp, "iwarp"}});
}
std::string rdma_cms_name(uint8_t v) { return named(v, {{proto::kRdmaCmsRdmaCm, "rdma-cm"}}); }

}  // namespace nvmf::host
