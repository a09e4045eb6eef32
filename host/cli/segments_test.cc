// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of host/segments: uneven splits for `nvmf-host write --segments N`.
#include "host/cli/segments.h"

#include <gtest/gtest.h>

#include <numeric>

namespace nvmf::host {
namespace {

TEST(UnevenSplit, RatiosOneTwoThreeFour) {
  auto s = uneven_split(4096, 4);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(*s, (std::vector<uint64_t>{409, 819, 1228, 1640}));
  auto three = uneven_split(8192, 3);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(*three, (std::vector<uint64_t>{1365, 2730, 4097}));
  auto one = uneven_split(512, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (std::vector<uint64_t>{512}));
}

TEST(UnevenSplit, TinyTotalsKeepEveryPieceNonEmpty) {
  for (uint64_t total = 4; total < 40; ++total) {
    auto s = uneven_split(total, 4);
    ASSERT_TRUE(s.ok()) << total;
    EXPECT_EQ(std::accumulate(s->begin(), s->end(), uint64_t{0}), total);
    for (uint64_t piece : *s) EXPECT_GE(piece, 1u) << total;
  }
  auto huge = uneven_split(UINT64_MAX, 4);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(std::accumulate(huge->begin(), huge->end(), uint64_t{0}), UINT64_MAX);
}

TEST(UnevenSplit, RefusesWithTheReason) {
  EXPECT_EQ(uneven_split(4096, 0).status().code(), StatusCode::kInvalidArgument);
  auto five = uneven_split(4096, 5);
  EXPECT_EQ(five.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(five.status().message().find("--segments 5: must be 1 to 4"), std::string::npos);
  EXPECT_EQ(uneven_split(3, 4).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nvmf::host
