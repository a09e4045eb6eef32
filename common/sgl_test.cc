// SPDX-License-Identifier: BSD-3-Clause
// Drives every SGL encode/decode edge case one by one and checks the exact status values.
#include "common/sgl.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "common/nvme_status.h"
#include "proto/fabrics.h"

namespace nvmf {
namespace {

using namespace proto;  // NOLINT

constexpr uint16_t kInvalidFieldDnr = 0x8004;      // SCT 0 SC 02h DNR
constexpr uint16_t kDataSglLengthDnr = 0x801E;     // SCT 0 SC 0Fh DNR
constexpr uint16_t kSglTypeInvalidDnr = 0x8022;    // SCT 0 SC 11h DNR
constexpr uint16_t kSglOffsetInvalidDnr = 0x802C;  // SCT 0 SC 16h DNR
constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

static_assert(generic_status(kScInvalidField) == kInvalidFieldDnr);
static_assert(generic_status(kScDataSglLengthInvalid) == kDataSglLengthDnr);
static_assert(generic_status(kScSglDescriptorTypeInvalid) == kSglTypeInvalidDnr);
static_assert(generic_status(kScSglOffsetInvalid) == kSglOffsetInvalidDnr);

Sqe write_sqe() {
  Sqe s{};
  s.opcode = kNvmWrite;
  s.flags = kFlagsPsdtSgl;
  return s;
}

Sqe in_capsule_sqe(uint64_t offset, uint32_t length, uint8_t opcode = kNvmWrite) {
  Sqe s = write_sqe();
  s.opcode = opcode;
  s.dptr.addr = offset;
  s.dptr.unkeyed.length = length;
  s.dptr.id = kSglIdDataBlockOffset;
  return s;
}

SglDecodeContext ctx(uint32_t area, uint32_t received) { return SglDecodeContext{area, received}; }

// ---- encode ----

TEST(SglEncodeTest, KeyedBytes) {
  SglDescriptor d{};
  ASSERT_TRUE(encode_keyed_sgl(d, 0x1000, 0x123456, 0xAABBCCDD));
  uint8_t b[16];
  std::memcpy(b, &d, 16);
  EXPECT_EQ(b[8], 0x56);
  EXPECT_EQ(b[9], 0x34);
  EXPECT_EQ(b[10], 0x12);
  EXPECT_EQ(b[11], 0xDD);
  EXPECT_EQ(b[14], 0xAA);
  EXPECT_EQ(b[15], 0x40);
}

TEST(SglEncodeTest, KeyedInvalidateIs4F) {
  SglDescriptor d{};
  ASSERT_TRUE(encode_keyed_sgl(d, 0, 1, 1, /*invalidate=*/true));
  EXPECT_EQ(d.id, 0x4F);
}

TEST(SglEncodeTest, KeyedMaxLengthFits) {
  SglDescriptor d{};
  ASSERT_TRUE(encode_keyed_sgl(d, 0, 0xFFFFFF, 1));
  EXPECT_EQ(d.keyed_length(), 0xFFFFFFu);
}

TEST(SglEncodeTest, KeyedLengthOver24BitsRejectedAndUntouched) {
  SglDescriptor d{};
  d.id = 0x77;
  EXPECT_FALSE(encode_keyed_sgl(d, 0x1000, 0x1000000, 1));
  EXPECT_EQ(d.id, 0x77);
  EXPECT_EQ(d.addr, 0u);
}

TEST(SglEncodeTest, NullSgl) {
  SglDescriptor d;
  std::memset(&d, 0xAB, sizeof(d));
  encode_null_sgl(d);
  uint8_t b[16];
  std::memcpy(b, &d, 16);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(b[i], 0) << i;
  EXPECT_EQ(b[15], 0x40);
}

TEST(SglEncodeTest, InCapsuleBytes) {
  SglDescriptor d;
  std::memset(&d, 0xAB, sizeof(d));
  encode_in_capsule_sgl(d, 0, 0x00012345);
  uint8_t b[16];
  std::memcpy(b, &d, 16);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], 0) << i;
  EXPECT_EQ(b[8], 0x45);
  EXPECT_EQ(b[9], 0x23);
  EXPECT_EQ(b[10], 0x01);
  EXPECT_EQ(b[11], 0x00);
  EXPECT_EQ(b[12], 0);
  EXPECT_EQ(b[14], 0);
  EXPECT_EQ(b[15], 0x01);
}

// ---- direction and PSDT ----

TEST(SglDirectionTest, FromOpcodeBits) {
  Sqe s{};
  s.opcode = kNvmFlush;
  EXPECT_EQ(data_direction(s), DataDirection::kNone);
  s.opcode = kNvmWrite;
  EXPECT_EQ(data_direction(s), DataDirection::kHostToController);
  s.opcode = kNvmRead;
  EXPECT_EQ(data_direction(s), DataDirection::kControllerToHost);
  s.opcode = kAdminIdentify;
  EXPECT_EQ(data_direction(s), DataDirection::kControllerToHost);
  s.opcode = kAdminKeepAlive;
  EXPECT_EQ(data_direction(s), DataDirection::kNone);
  s.opcode = 0x03;
  EXPECT_EQ(data_direction(s), DataDirection::kBidirectional);
}

TEST(SglDirectionTest, FabricsUsesFctype) {
  ConnectCommand c{};
  c.opcode = kOpcodeFabrics;  // 7Fh: bits 1:0 = 11b, must not be used
  c.fctype = kFctypeConnect;
  Sqe s;
  std::memcpy(&s, &c, sizeof(s));
  EXPECT_EQ(data_direction(s), DataDirection::kHostToController);
  c.fctype = kFctypePropertyGet;
  std::memcpy(&s, &c, sizeof(s));
  EXPECT_EQ(data_direction(s), DataDirection::kNone);
  c.fctype = kFctypePropertySet;
  std::memcpy(&s, &c, sizeof(s));
  EXPECT_EQ(data_direction(s), DataDirection::kNone);
  c.fctype = kFctypeAuthReceive;
  std::memcpy(&s, &c, sizeof(s));
  EXPECT_EQ(data_direction(s), DataDirection::kControllerToHost);
}

TEST(SglPsdtTest, OnlySglWithContiguousMetadataAccepted) {
  Sqe s{};
  s.flags = 0x40;
  EXPECT_EQ(check_psdt(s), 0);
  s.flags = 0x41;  // FUSE bits do not affect PSDT
  EXPECT_EQ(check_psdt(s), 0);
  s.flags = 0x00;  // PRP
  EXPECT_EQ(check_psdt(s), kInvalidFieldDnr);
  s.flags = 0x80;
  EXPECT_EQ(check_psdt(s), kInvalidFieldDnr);
  s.flags = 0xC0;
  EXPECT_EQ(check_psdt(s), kInvalidFieldDnr);
}

// ---- decode: keyed ----

TEST(SglDecodeTest, Keyed) {
  Sqe s = write_sqe();
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 0xDEAD0000, 4096, 0x1234));
  auto r = decode_command_sgl(s, ctx(0, 0));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sgl.kind, SglKind::kKeyed);
  EXPECT_EQ(r.sgl.addr, 0xDEAD0000u);
  EXPECT_EQ(r.sgl.length, 4096u);
  EXPECT_EQ(r.sgl.rkey, 0x1234u);
  EXPECT_FALSE(r.sgl.invalidate);
}

TEST(SglDecodeTest, KeyedInvalidate) {
  Sqe s = write_sqe();
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 1, 2, 3, true));
  auto r = decode_command_sgl(s, ctx(0, 0));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.sgl.invalidate);
}

TEST(SglDecodeTest, KeyedMaxLength) {
  Sqe s = write_sqe();
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 1, 0xFFFFFF, 3));
  auto r = decode_command_sgl(s, ctx(0, 0));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sgl.length, 0xFFFFFFu);
}

TEST(SglDecodeTest, KeyedZeroLengthOnNoDataCommandIsOk) {
  Sqe s{};
  s.opcode = kAdminKeepAlive;
  s.flags = kFlagsPsdtSgl;
  encode_null_sgl(s.dptr);
  auto r = decode_command_sgl(s, ctx(0, 0));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sgl.length, 0u);
  EXPECT_EQ(check_data_length(r.sgl, 0), 0);
}

TEST(SglDecodeTest, KeyedUnknownSubtypeIsInvalidField) {
  Sqe s = write_sqe();
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 1, 2, 3));
  s.dptr.id = 0x41;
  EXPECT_EQ(decode_command_sgl(s, ctx(0, 0)).status, kInvalidFieldDnr);
  s.dptr.id = 0x4A;
  EXPECT_EQ(decode_command_sgl(s, ctx(0, 0)).status, kInvalidFieldDnr);
}

// ---- decode: descriptor types ----

TEST(SglDecodeTest, UnknownTypesAreTypeInvalid) {
  for (uint8_t id : {0x10, 0x20, 0x30, 0x31, 0x50, 0x5A, 0x60, 0xE0, 0xF0, 0xFF}) {
    Sqe s = write_sqe();
    s.dptr.id = id;
    EXPECT_EQ(decode_command_sgl(s, ctx(8192, 8192)).status, kSglTypeInvalidDnr)
        << "id 0x" << std::hex << int(id);
  }
}

TEST(SglDecodeTest, DataBlockAddressSubtypeIsInvalidField) {
  Sqe s = in_capsule_sqe(0, 16);
  s.dptr.id = kSglIdDataBlockAddress;
  EXPECT_EQ(decode_command_sgl(s, ctx(8192, 8192)).status, kInvalidFieldDnr);
  s.dptr.id = 0x0A;
  EXPECT_EQ(decode_command_sgl(s, ctx(8192, 8192)).status, kInvalidFieldDnr);
}

// ---- decode: in-capsule ----

TEST(SglDecodeTest, InCapsuleExactlyFits) {
  auto r = decode_command_sgl(in_capsule_sqe(0, 8192), ctx(8192, 8192));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sgl.kind, SglKind::kInCapsule);
  EXPECT_EQ(r.sgl.addr, 0u);
  EXPECT_EQ(r.sgl.length, 8192u);
}

TEST(SglDecodeTest, InCapsuleWithOffsetExactlyFits) {
  auto r = decode_command_sgl(in_capsule_sqe(4096, 4096), ctx(8192, 8192));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sgl.addr, 4096u);
  EXPECT_EQ(r.sgl.length, 4096u);
}

TEST(SglDecodeTest, InCapsuleOneByteOverArea) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 8193), ctx(8192, 8192)).status,
            kSglOffsetInvalidDnr);
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(1, 8192), ctx(8192, 8192)).status,
            kSglOffsetInvalidDnr);
}

TEST(SglDecodeTest, InCapsuleOffsetEqualsAreaWithZeroLength) {
  // offset == area and length 0 stays inside the area; the length check decides later.
  auto r = decode_command_sgl(in_capsule_sqe(8192, 0), ctx(8192, 8192));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(check_data_length(r.sgl, 512), kDataSglLengthDnr);
}

TEST(SglDecodeTest, InCapsuleOffsetBeyondArea) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(8193, 0), ctx(8192, 8192)).status,
            kSglOffsetInvalidDnr);
}

TEST(SglDecodeTest, InCapsuleOffsetMax64) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(kMax64, 1), ctx(8192, 8192)).status,
            kSglOffsetInvalidDnr);
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(kMax64, 0), ctx(8192, 8192)).status,
            kSglOffsetInvalidDnr);
}

TEST(SglDecodeTest, InCapsuleOffsetPlusLengthWraps) {
  // 2^64 - 16 + 32 wraps to 16, which a naive "offset + length > area" check would accept.
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(kMax64 - 15, 32), ctx(8192, 8192)).status,
            kSglOffsetInvalidDnr);
}

TEST(SglDecodeTest, InCapsuleLengthMax32) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 0xFFFFFFFF), ctx(8192, 8192)).status,
            kSglOffsetInvalidDnr);
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(1, 0xFFFFFFFF), ctx(0xFFFFFFFF, 0xFFFFFFFF)).status,
            kSglOffsetInvalidDnr);
}

TEST(SglDecodeTest, InCapsuleWhenAreaIsZero) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 0), ctx(0, 0)).status, kSglOffsetInvalidDnr);
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 16), ctx(0, 16)).status, kSglOffsetInvalidDnr);
}

TEST(SglDecodeTest, InCapsuleReceivedShorterThanClaimed) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 4096), ctx(8192, 4095)).status, kDataSglLengthDnr);
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 4096), ctx(8192, 0)).status, kDataSglLengthDnr);
  // The offset counts too: bytes [512, 4608) need 4608 received bytes.
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(512, 4096), ctx(8192, 4096)).status,
            kDataSglLengthDnr);
  EXPECT_TRUE(decode_command_sgl(in_capsule_sqe(512, 4096), ctx(8192, 4608)).ok());
}

TEST(SglDecodeTest, InCapsuleAreaCheckComesBeforeReceivedCheck) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 9000), ctx(8192, 100)).status,
            kSglOffsetInvalidDnr);
}

TEST(SglDecodeTest, InCapsuleOnReadIsInvalidField) {
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 512, kNvmRead), ctx(8192, 8192)).status,
            kInvalidFieldDnr);
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(0, 0, kAdminKeepAlive), ctx(8192, 8192)).status,
            kInvalidFieldDnr);
}

TEST(SglDecodeTest, InCapsuleDirectionCheckComesFirst) {
  // A read with a bad offset still gets Invalid Field, as nvmet checks direction first.
  EXPECT_EQ(decode_command_sgl(in_capsule_sqe(kMax64, 1, kNvmRead), ctx(8192, 8192)).status,
            kInvalidFieldDnr);
}

TEST(SglDecodeTest, InCapsuleConnectIsAccepted) {
  ConnectCommand c{};
  c.opcode = kOpcodeFabrics;
  c.flags = kFlagsPsdtSgl;
  c.fctype = kFctypeConnect;
  encode_in_capsule_sgl(c.sgl1, 0, kConnectDataSize);
  Sqe s;
  std::memcpy(&s, &c, sizeof(s));
  auto r = decode_command_sgl(s, ctx(4096, 1024));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sgl.kind, SglKind::kInCapsule);
  EXPECT_EQ(check_data_length(r.sgl, kConnectDataSize), 0);
}

TEST(SglDecodeTest, InCapsuleOnPropertyGetIsInvalidField) {
  PropertyGetCommand g{};
  g.opcode = kOpcodeFabrics;
  g.fctype = kFctypePropertyGet;
  Sqe s;
  std::memcpy(&s, &g, sizeof(s));
  encode_in_capsule_sgl(s.dptr, 0, 8);
  EXPECT_EQ(decode_command_sgl(s, ctx(4096, 4096)).status, kInvalidFieldDnr);
}

// ---- length vs. command ----

TEST(SglLengthTest, ZeroLengthWhereDataNeeded) {
  DecodedSgl s;
  s.length = 0;
  EXPECT_EQ(check_data_length(s, 4096), kDataSglLengthDnr);
}

TEST(SglLengthTest, NonZeroLengthWhereNoDataMoves) {
  DecodedSgl s;
  s.length = 512;
  EXPECT_EQ(check_data_length(s, 0), kDataSglLengthDnr);
}

TEST(SglLengthTest, ShorterAndLongerThanNeeded) {
  DecodedSgl s;
  s.length = 4095;
  EXPECT_EQ(check_data_length(s, 4096), kDataSglLengthDnr);
  s.length = 4097;
  EXPECT_EQ(check_data_length(s, 4096), kDataSglLengthDnr);
  s.length = 4096;
  EXPECT_EQ(check_data_length(s, 4096), 0);
  EXPECT_EQ(check_data_length(s, 4096ull + (1ull << 32)), kDataSglLengthDnr);
}

}  // namespace
}  // namespace nvmf
