// SPDX-License-Identifier: BSD-3-Clause
// Tests for the in-capsule data negotiation math, host policy and target size resolution.
#include "common/in_capsule.h"

#include <gtest/gtest.h>

#include <limits>

namespace nvmf {
namespace {

using proto::IdentifyController;

IdentifyController ctrl(uint32_t sgls, uint32_t ioccsz, uint16_t icdoff = 0) {
  IdentifyController id{};
  id.sgls = sgls;
  id.ioccsz = ioccsz;
  id.icdoff = icdoff;
  return id;
}

constexpr uint32_t kSglsOn =
    proto::kSglsSupported | proto::kSglsKeyedDataBlock | proto::kSglsOffset;

TEST(InCapsuleMathTest, IoccszFromBytes) {
  EXPECT_EQ(ioccsz_for_in_capsule_size(0), 4u);
  EXPECT_EQ(ioccsz_for_in_capsule_size(4096), 260u);
  EXPECT_EQ(ioccsz_for_in_capsule_size(8192), 516u);
  EXPECT_EQ(ioccsz_for_in_capsule_size(16384), 1028u);
  EXPECT_EQ(ioccsz_for_in_capsule_size(15), 4u);  // rounds down
  EXPECT_EQ(ioccsz_for_in_capsule_size(std::numeric_limits<uint32_t>::max()), 0x10000003u);
}

TEST(InCapsuleMathTest, BytesFromIoccsz) {
  EXPECT_EQ(in_capsule_size_from_ioccsz(0), 0u);
  EXPECT_EQ(in_capsule_size_from_ioccsz(3), 0u);
  EXPECT_EQ(in_capsule_size_from_ioccsz(4), 0u);
  EXPECT_EQ(in_capsule_size_from_ioccsz(5), 16u);
  EXPECT_EQ(in_capsule_size_from_ioccsz(260), 4096u);
  EXPECT_EQ(in_capsule_size_from_ioccsz(1028), 16384u);
  EXPECT_EQ(in_capsule_size_from_ioccsz(std::numeric_limits<uint32_t>::max()),
            std::numeric_limits<uint32_t>::max());  // saturates
}

TEST(InCapsuleMathTest, RoundTrip) {
  for (uint32_t b : {0u, 16u, 4096u, 8192u, 16384u}) {
    EXPECT_EQ(in_capsule_size_from_ioccsz(ioccsz_for_in_capsule_size(b)), b);
  }
}

TEST(HostPolicyTest, Enabled) {
  auto p = host_in_capsule_policy(ctrl(kSglsOn, 260), 16);
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.max_bytes, 4096u);
  EXPECT_EQ(p.max_segments, 4u);
  EXPECT_EQ(p.why_off, "");
}

TEST(HostPolicyTest, SegmentsFromDevice) {
  EXPECT_EQ(host_in_capsule_policy(ctrl(kSglsOn, 260), 2).max_segments, 1u);
  EXPECT_EQ(host_in_capsule_policy(ctrl(kSglsOn, 260), 4).max_segments, 3u);
  EXPECT_EQ(host_in_capsule_policy(ctrl(kSglsOn, 260), 5).max_segments, 4u);
  EXPECT_EQ(host_in_capsule_policy(ctrl(kSglsOn, 260), 32).max_segments, 4u);
}

TEST(HostPolicyTest, OffWhenBit20Clear) {
  auto p = host_in_capsule_policy(ctrl(kSglsOn & ~proto::kSglsOffset, 260), 16);
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.max_bytes, 0u);
  EXPECT_EQ(p.why_off, "target SGLS bit 20 clear");
}

TEST(HostPolicyTest, OffWhenIcdoffNonZero) {
  auto p = host_in_capsule_policy(ctrl(kSglsOn, 260, 2), 16);
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.why_off, "ICDOFF is 2, not 0");
}

TEST(HostPolicyTest, OffWhenIoccszLeavesNothing) {
  auto p = host_in_capsule_policy(ctrl(kSglsOn, 4), 16);
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.why_off, "IOCCSZ 4 leaves no in-capsule data");
}

TEST(HostPolicyTest, OffWhenDeviceHasOneSendSge) {
  auto p = host_in_capsule_policy(ctrl(kSglsOn, 260), 1);
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.why_off, "device max_send_sge 1 leaves no SGE for data");
  EXPECT_EQ(host_in_capsule_policy(ctrl(kSglsOn, 260), 0).why_off,
            "device max_send_sge 0 leaves no SGE for data");
}

TEST(HostPolicyTest, FitsInCapsule) {
  auto p = host_in_capsule_policy(ctrl(kSglsOn, 260), 3);  // 4096 bytes, 2 segments
  EXPECT_TRUE(fits_in_capsule(p, 4096, 1));
  EXPECT_TRUE(fits_in_capsule(p, 4096, 2));
  EXPECT_TRUE(fits_in_capsule(p, 1, 1));
  EXPECT_FALSE(fits_in_capsule(p, 4097, 1));
  EXPECT_FALSE(fits_in_capsule(p, 4096, 3));
  EXPECT_FALSE(fits_in_capsule(p, 0, 1));
  EXPECT_FALSE(fits_in_capsule(p, 512, 0));
  EXPECT_FALSE(fits_in_capsule(HostInCapsulePolicy{}, 512, 1));
}

TEST(TargetSizeTest, DefaultIsPageSize) {
  auto r = resolve_inline_data_size(-1, 4096, 32);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 4096u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(TargetSizeTest, ZeroIsOff) {
  auto r = resolve_inline_data_size(0, 4096, 32);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 0u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(TargetSizeTest, BelowMinusOneIsError) {
  auto r = resolve_inline_data_size(-2, 4096, 32);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(resolve_inline_data_size(std::numeric_limits<int32_t>::min(), 4096, 32).ok());
}

TEST(TargetSizeTest, PageSizeZeroIsError) {
  EXPECT_FALSE(resolve_inline_data_size(-1, 0, 32).ok());
}

TEST(TargetSizeTest, MaximumAccepted) {
  auto r = resolve_inline_data_size(16384, 4096, 32);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 16384u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(TargetSizeTest, LargerClampedWithWarningNamingBoth) {
  auto r = resolve_inline_data_size(16385, 4096, 32);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 16384u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("16385"), std::string::npos);
  EXPECT_NE(r->warnings[0].find("16384"), std::string::npos);
}

TEST(TargetSizeTest, MaximumIsPageSizeWhenPagesAreLarger) {
  auto r = resolve_inline_data_size(65536, 65536, 32);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 65536u);
  EXPECT_TRUE(r->warnings.empty());
  auto big = resolve_inline_data_size(1 << 20, 65536, 32);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->bytes, 65536u);
}

TEST(TargetSizeTest, ReducedToDeviceRecvSges) {
  // 16 KiB = 4 pages needs 5 receive SGEs; a device with 3 allows 2 data pages.
  auto r = resolve_inline_data_size(16384, 4096, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 8192u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("max_recv_sge 3"), std::string::npos);
}

TEST(TargetSizeTest, ExactlyEnoughRecvSges) {
  auto r = resolve_inline_data_size(16384, 4096, 5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 16384u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(TargetSizeTest, PartialPageCountsAsAPage) {
  auto r = resolve_inline_data_size(4097, 4096, 2);  // needs 2 data SGEs, has 1
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 4096u);
  EXPECT_EQ(r->warnings.size(), 1u);
}

TEST(TargetSizeTest, ClampThenReduceGivesTwoWarnings) {
  auto r = resolve_inline_data_size(1 << 20, 4096, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 4096u);
  EXPECT_EQ(r->warnings.size(), 2u);
}

TEST(TargetSizeTest, DeviceWithOneRecvSgeTurnsItOff) {
  auto r = resolve_inline_data_size(-1, 4096, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 0u);
  EXPECT_EQ(r->warnings.size(), 1u);
}

TEST(TargetSizeTest, RecvSges) {
  EXPECT_EQ(in_capsule_recv_sges(0, 4096), 1u);
  EXPECT_EQ(in_capsule_recv_sges(1, 4096), 2u);
  EXPECT_EQ(in_capsule_recv_sges(4096, 4096), 2u);
  EXPECT_EQ(in_capsule_recv_sges(4097, 4096), 3u);
  EXPECT_EQ(in_capsule_recv_sges(16384, 4096), 5u);
}

}  // namespace
}  // namespace nvmf
