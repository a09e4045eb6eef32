// SPDX-License-Identifier: BSD-3-Clause
// The discovery controller's data: the Discovery Log Page (LID 70h) and its Identify
// Controller. Pure builders, no RDMA; the Port decides which subsystems a host may see.
#ifndef NVMF_TARGET_DISCOVERY_H_
#define NVMF_TARGET_DISCOVERY_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "proto/discovery.h"
#include "proto/nvme.h"

namespace nvmf::target {

// The transport address a port listens on, as its Discovery Log entries report it
// (nvmet: the port's configfs addr_* attributes).
struct DiscoveryAddress {
  uint16_t portid = 1;
  uint8_t trtype = proto::kTrtypeRdma;
  uint8_t adrfam = proto::kAdrfamIpv4;  // kAdrfamIpv4 or kAdrfamIpv6
  uint8_t treq = proto::kTreqNotSpecified;
  std::string traddr;   // at most 255 bytes
  std::string trsvcid;  // at most 31 bytes
};

// ADRFAM for a textual address: kAdrfamIpv6 when it contains ':', else kAdrfamIpv4.
uint8_t adrfam_for(std::string_view traddr);

// The Discovery Log Page: a 1024-byte header (GENCTR = `genctr`, NUMREC, RECFMT 0), then, as
// Linux 6.1's nvmet, one entry for this discovery subsystem itself (SUBTYPE 3 "current
// discovery subsystem", SUBNQN the discovery NQN; TP 8013), then one entry per NQN in
// `subnqns` (SUBTYPE 2, NVM subsystem), in order. Every entry: TRTYPE/ADRFAM/TREQ/PORTID/
// TRSVCID/TRADDR from `address`, CNTLID FFFFh (dynamic), ASQSZ `asqsz`, EFLAGS 0, and the
// RDMA TSAS: QPTYPE connected, PRTYPE not specified, CMS rdma_cm (nvmet's configfs defaults
// for an rdma port). Text fields are NUL padded, like nvmet. Fabrics 1.1 §5.3; RDMA 1.0
// §3.1.2. Setup path: allocates.
std::vector<uint8_t> build_discovery_log(const DiscoveryAddress& address,
                                         std::span<const std::string> subnqns, uint64_t genctr,
                                         uint16_t asqsz);

// One NVM subsystem entry of the log: `subnqn` reached through a port at `address`.
struct DiscoveryRecord {
  DiscoveryAddress address;
  std::string subnqn;
};

// As build_discovery_log, with each NVM subsystem entry (SUBTYPE 2) on its own port's address
// and PORTID: the first entry (SUBTYPE 3) is the port queried, `current`. A target with several
// ports lists every port of every subsystem the host may see, as SPDK's discovery log lists
// every listener (nvmet lists the queried port's subsystems only, and other ports through
// referrals). Setup path: allocates.
std::vector<uint8_t> build_discovery_log_records(const DiscoveryAddress& current,
                                                 std::span<const DiscoveryRecord> records,
                                                 uint64_t genctr, uint16_t asqsz);

// Get Log Page data window: copies bytes [offset, offset + out.size()) of `log` into `out`,
// zero-filling what of the window lies beyond the log's end. Returns the CQE status: Invalid
// Field with DNR when `offset` is not dword aligned or lies beyond the log's end (Base 2.0
// §5.16 LPOL; the same rule as the NVM subsystem's log pages; nvmet 6.1 instead reads past its
// buffer), else success.
uint16_t copy_log_window(std::span<const uint8_t> log, uint64_t offset, std::span<uint8_t> out);

// Identify Controller of a discovery controller, as nvmet answers it: CNTRLTYPE 2 (discovery),
// NN 0, MDTS 0 (no limit), LPA bit 2 (extended Get Log Page data: LPO honoured), SGLS keyed
// (plus bit 20 when the port has in-capsule data), IOCCSZ/IORCSZ/MSDBD 0 (no I/O queues),
// KAS, MAXCMD, SN/MN/FR and SUBNQN = the discovery NQN. Base 2.0 §5.17.2.1; nvmet
// nvmet_execute_disc_identify.
struct DiscoveryIdentifyParams {
  uint16_t cntlid = 0;
  uint32_t version = 0;
  uint16_t kas = 1;
  uint16_t maxcmd = 0;
  uint8_t aerl = 3;
  bool in_capsule = false;
  std::string_view serial;
  std::string_view model;
  std::string_view firmware;
};
void build_discovery_identify_controller(const DiscoveryIdentifyParams& params,
                                         proto::IdentifyController* out);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_DISCOVERY_H_
