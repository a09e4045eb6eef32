// Tests for host command capsule building (no RDMA device needed: only ibv_sge values).
#include "common/capsule.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "common/sgl.h"

namespace nvmf {
namespace {

using namespace proto;  // NOLINT

constexpr uint32_t kSqeLkey = 0x51;

TEST(CapsuleTest, KeyedSetsPsdtSglAndOneSge) {
  Sqe sqe{};
  sqe.opcode = kNvmRead;
  sqe.flags = 0x01;  // a FUSE bit the builder must keep
  std::array<ibv_sge, 1> sges{};
  auto r = build_capsule_keyed(sqe, kSqeLkey, KeyedBuffer{0xA000, 8192, 0x77}, sges);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, 1u);
  EXPECT_EQ(sqe.flags, 0x41);
  EXPECT_EQ(sqe.dptr.id, kSglIdKeyed);
  EXPECT_EQ(sqe.dptr.addr, 0xA000u);
  EXPECT_EQ(sqe.dptr.keyed_length(), 8192u);
  EXPECT_EQ(sqe.dptr.keyed.key, 0x77u);
  EXPECT_EQ(sges[0].addr, reinterpret_cast<uintptr_t>(&sqe));
  EXPECT_EQ(sges[0].length, 64u);
  EXPECT_EQ(sges[0].lkey, kSqeLkey);
}

TEST(CapsuleTest, KeyedInvalidateUses4F) {
  Sqe sqe{};
  std::array<ibv_sge, 1> sges{};
  KeyedBuffer b{0xA000, 512, 0x77, /*invalidate=*/true};
  ASSERT_TRUE(build_capsule_keyed(sqe, kSqeLkey, b, sges).ok());
  EXPECT_EQ(sqe.dptr.id, kSglIdKeyedInvalidate);
}

TEST(CapsuleTest, KeyedTooLongIsErrorAndWritesNothing) {
  Sqe sqe{};
  std::array<ibv_sge, 1> sges{};
  auto r = build_capsule_keyed(sqe, kSqeLkey, KeyedBuffer{0xA000, 0x1000000, 0x77}, sges);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sqe.flags, 0);
  EXPECT_EQ(sqe.dptr.id, 0);
  EXPECT_EQ(sges[0].length, 0u);
}

TEST(CapsuleTest, NoOutputSgesIsError) {
  Sqe sqe{};
  EXPECT_FALSE(build_capsule_keyed(sqe, kSqeLkey, KeyedBuffer{1, 1, 1}, {}).ok());
  EXPECT_FALSE(build_capsule_no_data(sqe, kSqeLkey, {}).ok());
}

TEST(CapsuleTest, NoDataUsesNullKeyedSgl) {
  Sqe sqe{};
  sqe.opcode = kAdminKeepAlive;
  std::memset(&sqe.dptr, 0xEE, sizeof(sqe.dptr));
  std::array<ibv_sge, 2> sges{};
  auto r = build_capsule_no_data(sqe, kSqeLkey, sges);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 1u);
  EXPECT_EQ(sqe.flags, kFlagsPsdtSgl);
  EXPECT_EQ(sqe.dptr.addr, 0u);
  EXPECT_EQ(sqe.dptr.keyed_length(), 0u);
  EXPECT_EQ(sqe.dptr.keyed.key, 0u);
  EXPECT_EQ(sqe.dptr.id, 0x40);
  // What the target's decoder makes of it.
  auto d = decode_command_sgl(sqe, SglDecodeContext{});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(check_data_length(d.sgl, 0), 0);
}

TEST(CapsuleTest, InCapsuleSegmentsFollowTheSqe) {
  Sqe sqe{};
  sqe.opcode = kNvmWrite;
  std::array<DataSegment, 3> segs{{{0x1000, 512, 1}, {0x2000, 1024, 2}, {0x3000, 2560, 3}}};
  std::array<ibv_sge, 5> sges{};
  auto r = build_capsule_in_capsule(sqe, kSqeLkey, segs, 4, sges);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, 4u);
  EXPECT_EQ(sqe.flags, kFlagsPsdtSgl);
  EXPECT_EQ(sqe.dptr.id, kSglIdDataBlockOffset);
  EXPECT_EQ(sqe.dptr.addr, 0u);
  EXPECT_EQ(sqe.dptr.unkeyed.length, 4096u);
  EXPECT_EQ(sges[0].addr, reinterpret_cast<uintptr_t>(&sqe));
  EXPECT_EQ(sges[0].length, 64u);
  for (size_t i = 0; i < segs.size(); ++i) {
    EXPECT_EQ(sges[1 + i].addr, segs[i].addr);
    EXPECT_EQ(sges[1 + i].length, segs[i].length);
    EXPECT_EQ(sges[1 + i].lkey, segs[i].lkey);
  }
  EXPECT_EQ(sges[4].length, 0u);  // untouched
  // The target accepts it when it received all 4096 bytes.
  auto d = decode_command_sgl(sqe, SglDecodeContext{4096, 4096});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.sgl.kind, SglKind::kInCapsule);
}

TEST(CapsuleTest, InCapsuleFourSegmentsIsTheMaximum) {
  Sqe sqe{};
  std::array<DataSegment, 5> segs{};
  for (auto& s : segs) s = {0x1000, 16, 1};
  std::array<ibv_sge, 6> sges{};
  auto ok = build_capsule_in_capsule(sqe, kSqeLkey, std::span(segs).first(4), 4, sges);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5u);
  Sqe other{};
  EXPECT_FALSE(build_capsule_in_capsule(other, kSqeLkey, segs, 8, sges).ok());
  EXPECT_EQ(other.flags, 0);
}

TEST(CapsuleTest, InCapsuleMoreThanMaxSegmentsIsError) {
  Sqe sqe{};
  std::array<DataSegment, 3> segs{};
  std::array<ibv_sge, 4> sges{};
  auto r = build_capsule_in_capsule(sqe, kSqeLkey, segs, 2, sges);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sges[0].length, 0u);
}

TEST(CapsuleTest, InCapsuleNoSegmentsIsError) {
  Sqe sqe{};
  std::array<ibv_sge, 4> sges{};
  EXPECT_FALSE(build_capsule_in_capsule(sqe, kSqeLkey, {}, 4, sges).ok());
}

TEST(CapsuleTest, InCapsuleTooFewOutputSges) {
  Sqe sqe{};
  std::array<DataSegment, 2> segs{{{1, 1, 1}, {2, 2, 2}}};
  std::array<ibv_sge, 2> sges{};
  EXPECT_FALSE(build_capsule_in_capsule(sqe, kSqeLkey, segs, 4, sges).ok());
  EXPECT_EQ(sqe.flags, 0);
}

TEST(CapsuleTest, InCapsuleTotalOver32BitsIsError) {
  Sqe sqe{};
  std::array<DataSegment, 2> segs{{{1, 0xFFFFFFFF, 1}, {2, 1, 2}}};
  std::array<ibv_sge, 3> sges{};
  EXPECT_FALSE(build_capsule_in_capsule(sqe, kSqeLkey, segs, 4, sges).ok());
  EXPECT_EQ(sqe.dptr.id, 0);
}

}  // namespace
}  // namespace nvmf
