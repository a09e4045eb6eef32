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

TEST(InlineSendTest, IsConstexpr) {
  static_assert(choose_send_mode(64, false, 64) == SendMode::kInline);
  static_assert(choose_send_mode(64, true, 64) == SendMode::kByReference);
  static_assert(send_flags_for(SendMode::kInline) == IBV_SEND_INLINE);
  static_assert(send_flags_for(SendMode::kByReference) == 0);
}

TEST(InlineSendTest, Names) {
  EXPECT_EQ(send_mode_name(SendMode::kInline), "inline");
  EXPECT_EQ(send_mode_name(SendMode::kByReference), "by-reference");
}

}  // namespace
}  // namespace nvmf
