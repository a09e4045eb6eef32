// SPDX-License-Identifier: BSD-3-Clause
// Discovery Log Page and discovery Identify Controller builders.
#include "target/discovery.h"

#include <algorithm>
#include <cstring>

#include "common/nvme_status.h"
#include "proto/fabrics.h"
#include "target/identify.h"

namespace nvmf::target {
namespace {

// Copies `text` into a fixed field, NUL padded, truncated to leave one NUL (nvmet's layout).
template <size_t N>
void set_nul_padded(char (&field)[N], std::string_view text) {
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), std::min(N - 1, text.size()));
}

}  // namespace

uint8_t adrfam_for(std::string_view traddr) {
  return traddr.find(':') != std::string_view::npos ? proto::kAdrfamIpv6 : proto::kAdrfamIpv4;
}

std::vector<uint8_t> build_discovery_log(const DiscoveryAddress& address,
                                         std::span<const std::string> subnqns, uint64_t genctr,
                                         uint16_t asqsz) {
  std::vector<DiscoveryRecord> records;
  records.reserve(subnqns.size());
  for (const std::string& nqn : subnqns) records.push_back({address, nqn});
  return build_discovery_log_records(address, records, genctr, asqsz);
}

std::vector<uint8_t> build_discovery_log_records(const DiscoveryAddress& current,
                                                 std::span<const DiscoveryRecord> records,
                                                 uint64_t genctr, uint16_t asqsz) {
  size_t numrec = records.size() + 1;
  std::vector<uint8_t> log(proto::kDiscoveryLogHeaderSize + numrec * proto::kDiscoveryLogEntrySize);
  proto::DiscoveryLogHeader header{};
  header.genctr = genctr;
  header.numrec = numrec;
  header.recfmt = 0;
  std::memcpy(log.data(), &header, sizeof(header));
  for (size_t i = 0; i < numrec; ++i) {
    bool is_current = i == 0;
    const DiscoveryAddress& address = is_current ? current : records[i - 1].address;
    std::string_view nqn =
        is_current ? std::string_view(proto::kDiscoveryNqn) : records[i - 1].subnqn;
    proto::DiscoveryLogEntry e{};
    e.trtype = address.trtype;
    e.adrfam = address.adrfam;
    e.subtype = is_current ? proto::kSubtypeCurrentDiscovery : proto::kSubtypeNvme;
    e.treq = address.treq;
    e.portid = address.portid;
    e.cntlid = proto::kDiscoveryCntlidDynamic;
    e.asqsz = asqsz;
    e.eflags = 0;
    set_nul_padded(e.trsvcid, address.trsvcid);
    set_nul_padded(e.subnqn, nqn);
    set_nul_padded(e.traddr, address.traddr);
    e.tsas.qptype = proto::kRdmaQptypeConnected;
    e.tsas.prtype = proto::kRdmaPrtypeNotSpecified;
    e.tsas.cms = proto::kRdmaCmsRdmaCm;
    std::memcpy(log.data() + proto::kDiscoveryLogHeaderSize + i * proto::kDiscoveryLogEntrySize, &e,
                sizeof(e));
  }
  return log;
}

uint16_t copy_log_window(std::span<const uint8_t> log, uint64_t offset, std::span<uint8_t> out) {
  if ((offset & 3) != 0 || offset > log.size()) return generic_status(proto::kScInvalidField);
  std::fill(out.begin(), out.end(), 0);
  if (offset == log.size()) return kStatusSuccess;
  size_t n = std::min<uint64_t>(out.size(), log.size() - offset);
  std::memcpy(out.data(), log.data() + offset, n);
  return kStatusSuccess;
}

void build_discovery_identify_controller(const DiscoveryIdentifyParams& p,
                                         proto::IdentifyController* out) {
  IdentifyControllerParams base;
  base.cntlid = p.cntlid;
  base.version = p.version;
  base.mdts = 0;
  base.in_capsule_data_size = p.in_capsule ? 1 : 0;  // only selects SGLS bit 20
  base.maxcmd = p.maxcmd;
  base.aerl = p.aerl;
  base.kas = p.kas;
  base.subnqn = proto::kDiscoveryNqn;
  base.serial = p.serial;
  base.model = p.model;
  base.firmware = p.firmware;
  build_identify_controller(base, out);
  out->cntrltype = proto::kCntrltypeDiscovery;
  out->cmic = 0;  // nvmet's discovery controller leaves CMIC at 0
  out->nn = 0;
  out->vwc = 0;
  out->lpa = 1u << 2;  // LPA bit 2: extended data for Get Log Page (NUMDU, LPOL/LPOU)
  // OAES bit 31: Discovery Log Page Change notices (sent when the host enables them with Set
  // Features Asynchronous Event Configuration and what it may see changes).
  out->oaes = proto::kAecDiscoveryLogChange;
  out->ioccsz = 0;
  out->iorcsz = 0;
  out->msdbd = 0;
}

}  // namespace nvmf::target
