// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for InCapsuleArea::copy_out across page boundaries at odd offsets.
#include "target/in_capsule_area.h"

#include <gtest/gtest.h>

#include <vector>

namespace nvmf::target {
namespace {

struct Pages {
  explicit Pages(size_t count, uint32_t page_size) : storage(count * page_size) {
    for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<uint8_t>(i * 7 + 3);
    // Scatter: page i lives at a non-contiguous place (reverse order) to catch linear copies.
    for (size_t i = 0; i < count; ++i) {
      ptrs.push_back(storage.data() + (count - 1 - i) * page_size);
    }
    area.pages = ptrs;
    area.page_size = page_size;
  }
  uint8_t logical(size_t offset) const {
    size_t page = offset / area.page_size;
    return ptrs[page][offset % area.page_size];
  }
  std::vector<uint8_t> storage;
  std::vector<uint8_t*> ptrs;
  InCapsuleArea area;
};

TEST(InCapsuleArea, CopiesAcrossPagesAtOddOffsets) {
  Pages p(4, 4096);
  EXPECT_EQ(p.area.size(), 16384u);
  for (uint64_t offset : {0ull, 1ull, 4095ull, 4097ull, 8191ull, 12287ull}) {
    for (size_t len : {size_t{1}, size_t{2}, size_t{4096}, size_t{5000}}) {
      if (offset + len > p.area.size()) continue;
      std::vector<uint8_t> out(len);
      p.area.copy_out(offset, out);
      for (size_t i = 0; i < len; ++i) {
        ASSERT_EQ(out[i], p.logical(offset + i)) << "offset " << offset << " len " << len;
      }
    }
  }
}

TEST(InCapsuleArea, WholeAreaAndEmpty) {
  Pages p(2, 512);
  std::vector<uint8_t> out(1024);
  p.area.copy_out(0, out);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], p.logical(i));
  std::vector<uint8_t> none;
  p.area.copy_out(1024, none);
}

}  // namespace
}  // namespace nvmf::target
