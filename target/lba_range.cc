// SPDX-License-Identifier: BSD-3-Clause
// check_lba_range.
#include "target/lba_range.h"

#include "common/nvme_status.h"

namespace nvmf::target {

uint16_t check_lba_range(uint64_t slba, uint32_t nlb, uint64_t nsze) {
  if (slba >= nsze || nlb > nsze - slba) return generic_status(proto::kScLbaOutOfRange);
  return kStatusSuccess;
}

}  // namespace nvmf::target
