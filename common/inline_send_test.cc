// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for choose_send_mode: every granted size x in-capsule data x SQE/CQE capsule.
#include "common/inline_send.h"

#include <gtest/gtest.h>

namespace nvmf {
namespace {

constexpr uint32_t kSqeBytes = 64;
constexpr uint32_t kCqeBytes = 16;

struct Case {
  uint32_t granted;
  bool has_in_capsule_data;
  uint32_t capsule_bytes;
  SendMode expected;
};

class ChooseSendModeTest : public ::testing::TestWithParam<Case> {};

TEST_P(ChooseSendModeTest, Decides) {
  const Case& c = GetParam();
  EXPECT_EQ(choose_send_mode(c.capsule_bytes, c.has_in_capsule_data, c.granted), c.expected)
      << "granted " << c.granted << ", in-capsule data " << c.has_in_capsule_data << ", capsule "
      << c.capsule_bytes;
}

constexpr SendMode kIn = SendMode::kInline;
constexpr SendMode kRef = SendMode::kByReference;

INSTANTIATE_TEST_SUITE_P(
    Matrix, ChooseSendModeTest,
    ::testing::Values(
        // granted 0: the inline-send fallback happened; never inline.
        Case{0, false, kSqeBytes, kRef}, Case{0, false, kCqeBytes, kRef},
        Case{0, true, kSqeBytes, kRef}, Case{0, true, kCqeBytes, kRef},
        // granted 16 (rxe's answer to a request of 0): a CQE fits, an SQE does not.
        Case{16, false, kSqeBytes, kRef}, Case{16, false, kCqeBytes, kIn},
        Case{16, true, kSqeBytes, kRef}, Case{16, true, kCqeBytes, kRef},
        // granted 63: one byte short of an SQE.
        Case{63, false, kSqeBytes, kRef}, Case{63, false, kCqeBytes, kIn},
        Case{63, true, kSqeBytes, kRef}, Case{63, true, kCqeBytes, kRef},
        // granted 64: exactly one SQE.
        Case{64, false, kSqeBytes, kIn}, Case{64, false, kCqeBytes, kIn},
        Case{64, true, kSqeBytes, kRef}, Case{64, true, kCqeBytes, kRef},
        // granted 512 (rxe's maximum): in-capsule data still goes by reference.
        Case{512, false, kSqeBytes, kIn}, Case{512, false, kCqeBytes, kIn},
        Case{512, true, kSqeBytes, kRef}, Case{512, true, kCqeBytes, kRef},
        // A capsule with in-capsule data that would fit: still by reference.
        Case{512, true, kSqeBytes + 256, kRef},
        // Boundary around the granted size.
        Case{512, false, 512, kIn}, Case{512, false, 513, kRef}));

// The ceiling the decision is fed: min(request, grant), 0 when 0 was asked or after the fallback.
TEST(UsableMaxInlineDataTest, RequestZeroMeansNeverEvenWhenTheProviderGrantsSixteen) {
  // rxe answers a request of 0 with 16: a 16-byte CQE must still go by reference.
  EXPECT_EQ(usable_max_inline_data(0, 16, false), 0u);
  EXPECT_EQ(choose_send_mode(kCqeBytes, false, usable_max_inline_data(0, 16, false)), kRef);
  EXPECT_EQ(choose_send_mode(kSqeBytes, false, usable_max_inline_data(0, 16, false)), kRef);
  EXPECT_EQ(usable_max_inline_data(0, 0, false), 0u);
}

TEST(UsableMaxInlineDataTest, FallbackMeansNeverWhateverTheRetryGranted) {
  // The retry asked 0; rxe would write back 16 for it.
  EXPECT_EQ(usable_max_inline_data(4096, 16, true), 0u);
  EXPECT_EQ(usable_max_inline_data(64, 512, true), 0u);
  EXPECT_EQ(choose_send_mode(kCqeBytes, false, usable_max_inline_data(16, 16, true)), kRef);
}

TEST(UsableMaxInlineDataTest, GrantAboveRequestIsCappedByTheRequest) {
  EXPECT_EQ(usable_max_inline_data(64, 80, false), 64u);  // rxe: 64 asked, 80 granted
  EXPECT_EQ(usable_max_inline_data(16, 512, false), 16u);
  // Asked for 16 only (the target's default): an SQE-sized inline send is not wanted.
  EXPECT_EQ(choose_send_mode(kSqeBytes, false, usable_max_inline_data(16, 80, false)), kRef);
  EXPECT_EQ(choose_send_mode(kCqeBytes, false, usable_max_inline_data(16, 80, false)), kIn);
}

TEST(UsableMaxInlineDataTest, GrantBelowRequestIsWhatCounts) {
  EXPECT_EQ(usable_max_inline_data(64, 63, false), 63u);
  EXPECT_EQ(usable_max_inline_data(512, 128, false), 128u);  // qedr-like limit
  EXPECT_EQ(usable_max_inline_data(64, 0, false), 0u);       // granted none without refusing
  EXPECT_EQ(choose_send_mode(kSqeBytes, false, usable_max_inline_data(64, 63, false)), kRef);
  EXPECT_EQ(choose_send_mode(kCqeBytes, false, usable_max_inline_data(64, 63, false)), kIn);
  EXPECT_EQ(choose_send_mode(kSqeBytes, false, usable_max_inline_data(64, 16, false)), kRef);
  EXPECT_EQ(choose_send_mode(kCqeBytes, false, usable_max_inline_data(64, 16, false)), kIn);
  EXPECT_EQ(choose_send_mode(kSqeBytes, false, usable_max_inline_data(512, 128, false)), kIn);
}

TEST(InlineSendTest, IsConstexpr) {
  static_assert(choose_send_mode(64, false, 64) == SendMode::kInline);
  static_assert(choose_send_mode(64, true, 64) == SendMode::kByReference);
  static_assert(send_flags_for(SendMode::kInline) == IBV_SEND_INLINE);
  static_assert(send_flags_for(SendMode::kByReference) == 0);
  static_assert(usable_max_inline_data(0, 16, false) == 0);
}

TEST(InlineSendTest, Names) {
  EXPECT_EQ(send_mode_name(SendMode::kInline), "inline");
  EXPECT_EQ(send_mode_name(SendMode::kByReference), "by-reference");
}

}  // namespace
}  // namespace nvmf
