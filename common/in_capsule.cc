// SPDX-License-Identifier: BSD-3-Clause
// In-capsule data negotiation math; see in_capsule.h for the rules and their sources.
#include "common/in_capsule.h"

#include <algorithm>
#include <limits>

namespace nvmf {
namespace {

constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kMaxInlineFloor = 16 * 1024;  // nvmet: max(SZ_16K, PAGE_SIZE)

uint32_t saturate(uint64_t v) { return v > kU32Max ? kU32Max : static_cast<uint32_t>(v); }

uint64_t pages_for(uint64_t bytes, uint64_t page) { return (bytes + page - 1) / page; }

HostInCapsulePolicy off(std::string why) {
  HostInCapsulePolicy p;
  p.why_off = std::move(why);
  return p;
}

}  // namespace

uint32_t ioccsz_for_in_capsule_size(uint32_t bytes) {
  return saturate((uint64_t{kSqeBytes} + bytes) / 16);
}

uint32_t in_capsule_size_from_ioccsz(uint32_t ioccsz) {
  if (ioccsz < kSqeBytes / 16) return 0;
  return saturate(uint64_t{ioccsz} * 16 - kSqeBytes);
}

HostInCapsulePolicy host_in_capsule_policy(const proto::IdentifyController& id,
                                           uint32_t device_max_send_sge) {
  if ((id.sgls & proto::kSglsOffset) == 0) return off("target SGLS bit 20 clear");
  if (id.icdoff != 0) return off("ICDOFF is " + std::to_string(id.icdoff) + ", not 0");
  const uint32_t bytes = in_capsule_size_from_ioccsz(id.ioccsz);
  if (bytes == 0) {
    return off("IOCCSZ " + std::to_string(id.ioccsz) + " leaves no in-capsule data");
  }
  if (device_max_send_sge < 2) {
    return off("device max_send_sge " + std::to_string(device_max_send_sge) +
               " leaves no SGE for data");
  }
  HostInCapsulePolicy p;
  p.enabled = true;
  p.max_bytes = bytes;
  p.max_segments = std::min(kMaxInCapsuleSegments, device_max_send_sge - 1);
  return p;
}

bool fits_in_capsule(const HostInCapsulePolicy& policy, uint32_t payload_bytes, uint32_t segments) {
  return policy.enabled && segments >= 1 && segments <= policy.max_segments && payload_bytes > 0 &&
         payload_bytes <= policy.max_bytes;
}

Result<InlineDataSize> resolve_inline_data_size(int32_t configured, uint32_t page_size,
                                                uint32_t device_max_recv_sge) {
  if (configured < -1) {
    return Status::invalid_argument("inline_data_size " + std::to_string(configured) +
                                    ": must be -1 (page size), 0 (off) or a size in bytes");
  }
  if (page_size == 0) return Status::invalid_argument("inline_data_size: page size is 0");
  InlineDataSize out;
  uint64_t bytes = configured == -1 ? page_size : static_cast<uint32_t>(configured);
  const uint64_t max = std::max(kMaxInlineFloor, page_size);
  if (bytes > max) {
    out.warnings.push_back("inline_data_size " + std::to_string(bytes) +
                           " is too large, reducing to " + std::to_string(max));
    bytes = max;
  }
  const uint64_t data_sges = device_max_recv_sge > 0 ? device_max_recv_sge - 1 : 0;
  if (pages_for(bytes, page_size) > data_sges) {
    const uint64_t reduced = data_sges * page_size;
    out.warnings.push_back("inline_data_size " + std::to_string(bytes) +
                           " needs more receive SGEs than the device's max_recv_sge " +
                           std::to_string(device_max_recv_sge) + ", reducing to " +
                           std::to_string(reduced));
    bytes = reduced;
  }
  out.bytes = static_cast<uint32_t>(bytes);
  return out;
}

uint32_t in_capsule_recv_sges(uint32_t effective, uint32_t page_size) {
  return saturate(1 + pages_for(effective, page_size));
}

}  // namespace nvmf
