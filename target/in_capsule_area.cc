// SPDX-License-Identifier: BSD-3-Clause
// InCapsuleArea::copy_out: page-spanning copy out of a receive buffer's in-capsule pages.
#include "target/in_capsule_area.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace nvmf::target {

void InCapsuleArea::copy_out(uint64_t offset, std::span<uint8_t> dst) const {
  assert(offset <= size() && dst.size() <= size() - offset);
  size_t done = 0;
  while (done < dst.size()) {
    uint64_t page = offset / page_size;
    uint32_t in_page = static_cast<uint32_t>(offset % page_size);
    size_t n = std::min<size_t>(page_size - in_page, dst.size() - done);
    std::memcpy(dst.data() + done, pages[page] + in_page, n);
    done += n;
    offset += n;
  }
}

}  // namespace nvmf::target
