// SPDX-License-Identifier: BSD-3-Clause
// Checks and summaries of Identify data the host depends on (controller and namespace). Pure.
#ifndef NVMF_HOST_IDENTIFY_H_
#define NVMF_HOST_IDENTIFY_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/nvme.h"

namespace nvmf::host {

// Refuses a controller the host cannot use over RDMA, naming the field, like the Linux host
// (nvme_rdma setup / nvme_init_ctrl_finish): IOCCSZ < 4 (a capsule must hold the 64-byte SQE),
// IORCSZ < 1 (the 16-byte CQE), KAS = 0 (no keep-alive granularity). kInvalidArgument, e.g.
// "Identify Controller: IOCCSZ 3 is below 4 (64-byte SQE)". Base 2.0 §5.17.2.1 bytes 1792..1803.
Status validate_identify_controller(const proto::IdentifyController& id);

// What the host keeps from Identify Namespace.
struct NamespaceInfo {
  uint32_t nsid = 0;
  uint64_t nsze = 0;           // size in logical blocks
  uint64_t ncap = 0;           // capacity in logical blocks
  uint32_t lba_size = 0;       // bytes, 2^LBADS of the format FLBAS selects
  uint16_t metadata_size = 0;  // bytes per LBA (MS of the LBA format); 0: none
  uint8_t nmic = 0;       // NMIC: bit 0 = shared (other controllers of the subsystem reach it too)
  uint32_t anagrpid = 0;  // ANA group (0: the controller reports no ANA)
};

// Decodes the formatted LBA size (FLBAS bits 3:0, and 6:5 as the upper index bits when NLBAF >
// 16; NVM CS 1.0 §4.1.5.1). kInvalidArgument when the index exceeds NLBAF or LBADS < 9 (smaller
// than 512 bytes, not allowed) or > 20, or when metadata is interleaved (unsupported here).
Result<NamespaceInfo> decode_namespace(uint32_t nsid, const proto::IdentifyNamespace& ns);

// The NSIDs of a Namespace List (Identify CNS 02h, the Changed Namespace List log page 04h):
// little-endian dwords up to the first zero or the end (1024 in 4096 bytes). Base 2.0 §4.3.
std::vector<uint32_t> decode_nsid_list(std::span<const uint8_t> list);

// First non-zero nsid of an Active Namespace ID list (CNS 02h; 1024 little-endian dwords,
// zero terminated). kNotFound when the list is empty.
Result<uint32_t> first_active_nsid(std::span<const uint8_t> list);

// An Identify ASCII field (SN, MN, FR) with trailing spaces and NULs removed.
std::string trim_ascii(const char* field, size_t len);

// MDTS in bytes: 2^MDTS pages of CAP.MPSMIN size (`page_bytes`); 0 when MDTS = 0 (no limit).
constexpr uint64_t mdts_bytes(uint8_t mdts, uint32_t page_bytes) {
  return mdts == 0 || mdts > 40 ? 0 : (uint64_t{page_bytes} << mdts);
}

// The Identify results the controller keeps.
struct IdentifyResult {
  proto::IdentifyController ctrl{};
  NamespaceInfo ns;
};

// Sizes the host knows per active NSID (NamespaceSizes: NSID -> NSZE in LBAs; kSizeUnknown
// for an active namespace not identified yet).
using NamespaceSizes = std::map<uint32_t, uint64_t>;
inline constexpr uint64_t kSizeUnknown = UINT64_MAX;

}  // namespace nvmf::host

#endif  // NVMF_HOST_IDENTIFY_H_
