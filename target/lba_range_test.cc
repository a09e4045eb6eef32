// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for check_lba_range, including overflow near 2^64.
#include "target/lba_range.h"

#include <gtest/gtest.h>

#include "common/nvme_status.h"

namespace nvmf::target {
namespace {

const uint16_t kOutOfRange = generic_status(proto::kScLbaOutOfRange);

TEST(LbaRange, InsideAndEdges) {
  EXPECT_EQ(check_lba_range(0, 1, 100), kStatusSuccess);
  EXPECT_EQ(check_lba_range(99, 1, 100), kStatusSuccess);
  EXPECT_EQ(check_lba_range(0, 100, 100), kStatusSuccess);
  EXPECT_EQ(check_lba_range(36, 64, 100), kStatusSuccess);
}

TEST(LbaRange, PastTheEnd) {
  EXPECT_EQ(check_lba_range(100, 1, 100), kOutOfRange);
  EXPECT_EQ(check_lba_range(99, 2, 100), kOutOfRange);
  EXPECT_EQ(check_lba_range(0, 101, 100), kOutOfRange);
  EXPECT_TRUE(status_dnr(kOutOfRange));
  EXPECT_EQ(status_sc(kOutOfRange), 0x80);
}

TEST(LbaRange, NoOverflowNearTwoToThe64) {
  EXPECT_EQ(check_lba_range(UINT64_MAX, 1, 100), kOutOfRange);
  EXPECT_EQ(check_lba_range(UINT64_MAX - 10, 65536, 100), kOutOfRange);
  EXPECT_EQ(check_lba_range(UINT64_MAX - 1, 2, UINT64_MAX), kOutOfRange);
  EXPECT_EQ(check_lba_range(UINT64_MAX - 2, 2, UINT64_MAX), kStatusSuccess);
}

TEST(LbaRange, IoBytes) {
  EXPECT_EQ(io_bytes(8, 9), 4096u);
  EXPECT_EQ(io_bytes(65536, 12), 268435456u);
}

}  // namespace
}  // namespace nvmf::target
