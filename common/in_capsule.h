// SPDX-License-Identifier: BSD-3-Clause
// In-capsule data negotiation math: IOCCSZ <-> bytes, the host's use policy, the target's size.
//
// "In-capsule data" is write data carried in the command capsule after the 64-byte SQE (NVMe
// Base 2.0 Fabrics capsules; Identify Controller IOCCSZ, ICDOFF, SGLS bit 20, §5.17.2.1). It is not
// "inline send" (IBV_SEND_INLINE, see common/inline_send.h). All sizes are in bytes unless a
// name says "16-byte units" (IOCCSZ, the spec's unit).
#ifndef NVMF_COMMON_IN_CAPSULE_H_
#define NVMF_COMMON_IN_CAPSULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/nvme.h"

namespace nvmf {

inline constexpr uint32_t kSqeBytes = 64;
// Most data segments a host places after the SQE (Linux NVME_RDMA_MAX_INLINE_SEGMENTS).
inline constexpr uint32_t kMaxInCapsuleSegments = 4;

// IOCCSZ (16-byte units) a target advertises for `bytes` of in-capsule data: (64 + bytes) / 16,
// rounded down (Base 2.0 Identify Controller IOCCSZ). Saturates at UINT32_MAX.
uint32_t ioccsz_for_in_capsule_size(uint32_t bytes);

// In-capsule data bytes an IOCCSZ allows: IOCCSZ * 16 - 64; 0 when IOCCSZ < 4 (a capsule
// smaller than an SQE is invalid; the Linux host refuses such a controller). Saturates at
// UINT32_MAX.
uint32_t in_capsule_size_from_ioccsz(uint32_t ioccsz);

// Whether and how far the host uses in-capsule data on I/O queues.
struct HostInCapsulePolicy {
  bool enabled = false;
  uint32_t max_bytes = 0;     // payload bytes per command (IOCCSZ * 16 - 64)
  uint32_t max_segments = 0;  // data SGEs after the SQE: min(4, device max_send_sge - 1)
  std::string why_off;        // when !enabled, why (for logs); empty when enabled
};

// Decides the host policy from the controller's Identify data and the device's max_send_sge,
// like the Linux nvme-rdma host (drivers/nvme/host/rdma.c: use_inline_data from SGLS bit 20,
// inline size IOCCSZ * 16 - 64, num_inline_segments = min(4, max_send_sge - 1)). Off when, in
// this order: SGLS bit 20 clear ("target SGLS bit 20 clear"); ICDOFF != 0 ("ICDOFF is N, not
// 0"; Linux refuses to connect, we only turn in-capsule data off); IOCCSZ leaves no bytes
// ("IOCCSZ N leaves no in-capsule data"); max_send_sge < 2 ("device max_send_sge N leaves no SGE
// for data").
HostInCapsulePolicy host_in_capsule_policy(const proto::IdentifyController& id,
                                           uint32_t device_max_send_sge);

// True when a write of `payload_bytes` bytes in `segments` data segments can go in-capsule:
// enabled, 1 <= segments <= max_segments, 0 < payload_bytes <= max_bytes. The caller asks only
// for host-to-controller commands on I/O queues (writes, and Connect on I/O queues), as Linux.
bool fits_in_capsule(const HostInCapsulePolicy& policy, uint32_t payload_bytes, uint32_t segments);

// The target's effective in-capsule data size and what was adjusted to get there.
struct InlineDataSize {
  uint32_t bytes = 0;                 // effective in-capsule data size; 0 = off (SGLS bit 20 clear)
  std::vector<std::string> warnings;  // one line per adjustment, for the log
};

// Resolves the nvmet-compatible `inline_data_size` setting (bytes) like Linux nvmet-rdma
// (drivers/nvme/target/rdma.c: nvmet_rdma_add_port, nvmet_rdma_find_get_device):
//  - -1: the page size (nvmet's default, PAGE_SIZE); 0: in-capsule data off;
//  - a value above max(16 KiB, page size) is clamped to it, with a warning naming both values;
//  - a size needing more receive SGEs than the device has (one for the SQE + one per page) is
//    reduced to (device_max_recv_sge - 1) pages, with a warning (nvmet uses max(max_sge_rd,
//    max_recv_sge) there; we use max_recv_sge, the limit that applies to receive WRs).
// Errors (kInvalidArgument): configured < -1 (nvmet treats any negative as default; we refuse
// a typo), page_size 0.
Result<InlineDataSize> resolve_inline_data_size(int32_t configured, uint32_t page_size,
                                                uint32_t device_max_recv_sge);

// Receive SGEs per command buffer: 1 (the 64-byte SQE) + ceil(effective / page_size) data
// pages (one SGE per page, as nvmet-rdma). page_size must be > 0.
uint32_t in_capsule_recv_sges(uint32_t effective, uint32_t page_size);

}  // namespace nvmf

#endif  // NVMF_COMMON_IN_CAPSULE_H_
