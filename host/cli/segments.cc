// SPDX-License-Identifier: BSD-3-Clause
// uneven_split; see segments.h.
#include "host/cli/segments.h"

#include <string>

namespace nvmf::host {

Result<std::vector<uint64_t>> uneven_split(uint64_t total, uint32_t n) {
  if (n == 0 || n > kMaxCliSegments) {
    return Status::invalid_argument("--segments " + std::to_string(n) + ": must be 1 to " +
                                    std::to_string(kMaxCliSegments));
  }
  if (total < n) {
    return Status::invalid_argument("cannot split " + std::to_string(total) + " bytes into " +
                                    std::to_string(n) + " segments");
  }
  const uint64_t weights = uint64_t{n} * (n + 1) / 2;
  std::vector<uint64_t> sizes(n);
  uint64_t used = 0;
  for (uint32_t i = 0; i + 1 < n; ++i) {
    // total * (i + 1) / weights without overflow: total < 2^64 / 4 is not assumed.
    uint64_t size = total / weights * (i + 1) + total % weights * (i + 1) / weights;
    sizes[i] = size == 0 ? 1 : size;
    used += sizes[i];
  }
  sizes[n - 1] = total - used;  // >= 1: each earlier piece is <= its share or 1 byte
  return sizes;
}

}  // namespace nvmf::host
