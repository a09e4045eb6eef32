// SPDX-License-Identifier: BSD-3-Clause
// InCapsuleArea: the in-capsule data area of one receive buffer, split over page-sized buffers
// (one receive SGE per page, as nvmet-rdma), and copies out of it.
#ifndef NVMF_TARGET_IN_CAPSULE_AREA_H_
#define NVMF_TARGET_IN_CAPSULE_AREA_H_

#include <cstdint>
#include <span>

namespace nvmf::target {

// A view of the pages that follow the SQE in a receive. Does not own them.
struct InCapsuleArea {
  std::span<uint8_t* const> pages;  // each `page_size` bytes, in receive SGE order
  uint32_t page_size = 4096;
  uint32_t received_bytes = 0;  // bytes the host really sent after the SQE (byte_len - 64)

  // Area size in bytes: pages.size() * page_size.
  uint64_t size() const { return pages.size() * static_cast<uint64_t>(page_size); }

  // Copies dst.size() bytes starting `offset` bytes into the area, crossing page boundaries at
  // any offset. The caller has checked offset + dst.size() <= size() (decode_command_sgl does);
  // it is asserted in debug builds.
  void copy_out(uint64_t offset, std::span<uint8_t> dst) const;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_IN_CAPSULE_AREA_H_
