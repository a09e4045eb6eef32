// SPDX-License-Identifier: BSD-3-Clause
// Range checks of NVM Read/Write/Flush commands against the namespace and the transfer limit.
#ifndef NVMF_TARGET_LBA_RANGE_H_
#define NVMF_TARGET_LBA_RANGE_H_

#include <cstdint>

namespace nvmf::target {

// 0 when LBAs [slba, slba + nlb) lie inside a namespace of `nsze` LBAs; else LBA Out of Range
// (80h) with DNR. `nlb` is the 1-based block count (CDW12 NLB + 1). Written so nothing
// overflows, even for slba near 2^64 (checks slba >= nsze first, then nlb > nsze - slba).
// wire-facts: nvmet on null_blk answered Internal Error past the end; we answer 80h before
// touching the backend. NVM CS 1.0 §3.2.4 (Read), §3.2.6 (Write).
uint16_t check_lba_range(uint64_t slba, uint32_t nlb, uint64_t nsze);

// Bytes an I/O of `nlb` blocks moves: nlb << lba_shift (nlb <= 65536, so no overflow).
constexpr uint64_t io_bytes(uint32_t nlb, uint8_t lba_shift) {
  return static_cast<uint64_t>(nlb) << lba_shift;
}

}  // namespace nvmf::target

#endif  // NVMF_TARGET_LBA_RANGE_H_
