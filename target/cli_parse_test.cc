// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for parse_size.
#include "target/cli_parse.h"

#include <gtest/gtest.h>

namespace nvmf::target {
namespace {

TEST(ParseSize, PlainAndSuffixes) {
  EXPECT_EQ(*parse_size("512", "--size"), 512u);
  EXPECT_EQ(*parse_size("4k", "--size"), 4096u);
  EXPECT_EQ(*parse_size("64m", "--size"), 64u << 20);
  EXPECT_EQ(*parse_size("1G", "--size"), 1u << 30);
  EXPECT_EQ(*parse_size("2t", "--size"), 2ull << 40);
  EXPECT_EQ(*parse_size("4KiB", "--size"), 4096u);
  EXPECT_EQ(*parse_size("8MB", "--size"), 8u << 20);
}

TEST(ParseSize, ErrorsNameTheOption) {
  for (const char* bad : {"", "m", "12x", "1.5g", "-4", "4kk"}) {
    auto r = parse_size(bad, "--ram-size");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--ram-size"), std::string::npos);
  }
  EXPECT_FALSE(parse_size("99999999999999999999", "--size").ok());
  EXPECT_FALSE(parse_size("17179869184g", "--size").ok());
}

}  // namespace
}  // namespace nvmf::target
