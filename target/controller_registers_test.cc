// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for ControllerRegisters: CAP/VS contents and the CC state machine.
#include "target/controller_registers.h"

#include <gtest/gtest.h>

#include "common/nvme_status.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"

namespace nvmf::target {
namespace {

constexpr uint32_t kGoodCc = 0x00460001;  // IOCQES 4, IOSQES 6, EN
const uint16_t kInvalidField = generic_status(proto::kScInvalidField);

uint32_t get32(const ControllerRegisters& r, uint32_t offset) {
  uint64_t v = 0;
  EXPECT_EQ(r.property_get(proto::kPropertySize4, offset, &v), kStatusSuccess);
  return static_cast<uint32_t>(v);
}

TEST(ControllerRegisters, CapAndVs) {
  ControllerRegisters r(128, proto::make_version(1, 3));
  uint64_t cap = 0;
  ASSERT_EQ(r.property_get(proto::kPropertySize8, proto::kPropCap, &cap), kStatusSuccess);
  EXPECT_EQ(cap & proto::kCapMqesMask, 127u);
  EXPECT_TRUE(cap & proto::kCapCqr);
  EXPECT_TRUE(cap & proto::kCapCssNvm);
  EXPECT_NE((cap & proto::kCapToMask), 0u);
  EXPECT_EQ((cap >> proto::kCapMpsminShift) & 0xF, 0u);
  EXPECT_EQ(get32(r, proto::kPropVs), 0x00010300u);
  EXPECT_EQ(get32(r, proto::kPropCsts), 0u);
}

TEST(ControllerRegisters, WrongSizesAndOffsetsAreInvalidField) {
  ControllerRegisters r(128, proto::make_version(1, 3));
  uint64_t v = 0;
  EXPECT_EQ(r.property_get(proto::kPropertySize4, proto::kPropCap, &v), kInvalidField);
  EXPECT_EQ(r.property_get(proto::kPropertySize8, proto::kPropCc, &v), kInvalidField);
  EXPECT_EQ(r.property_get(proto::kPropertySize4, 0x24, &v), kInvalidField);
  EXPECT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCsts, 1), kInvalidField);
  EXPECT_EQ(r.property_set(proto::kPropertySize8, proto::kPropCc, kGoodCc), kInvalidField);
  EXPECT_TRUE(status_dnr(kInvalidField));
}

// ATTRIB.SIZE values 2..7 are reserved: Invalid Field, not a 4-byte read of CC or CSTS.
TEST(ControllerRegisters, ReservedPropertySizesAreInvalidField) {
  ControllerRegisters r(128, proto::make_version(1, 3));
  for (uint8_t size = 2; size < 8; ++size) {
    uint64_t v = 1;
    EXPECT_EQ(r.property_get(size, proto::kPropCc, &v), kInvalidField) << "size " << int{size};
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(r.property_get(size, proto::kPropVs, &v), kInvalidField) << "size " << int{size};
  }
  uint64_t v = 0;
  EXPECT_EQ(r.property_get(proto::kPropertySize4, proto::kPropVs, &v), kStatusSuccess);
  EXPECT_EQ(v, proto::make_version(1, 3));
}

TEST(ControllerRegisters, EnableSetsReady) {
  ControllerRegisters r(128, proto::make_version(1, 3));
  CcTransition t;
  EXPECT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, kGoodCc, &t), kStatusSuccess);
  EXPECT_EQ(t, CcTransition::kEnabled);
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(get32(r, proto::kPropCc), kGoodCc);
  EXPECT_EQ(get32(r, proto::kPropCsts), proto::kCstsRdy);
}

TEST(ControllerRegisters, BadIosqesSetsCfs) {
  ControllerRegisters r(128, proto::make_version(1, 3));
  CcTransition t;
  EXPECT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, 0x00450001, &t), kStatusSuccess);
  EXPECT_EQ(t, CcTransition::kEnableFailed);
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(get32(r, proto::kPropCsts), proto::kCstsCfs);
}

TEST(ControllerRegisters, BadIocqesMpsAmsCssSetCfs) {
  for (uint32_t cc : {0x00560001u, 0x00460081u, 0x00460801u, 0x00460011u}) {
    ControllerRegisters r(128, proto::make_version(1, 3));
    EXPECT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, cc), kStatusSuccess);
    EXPECT_EQ(get32(r, proto::kPropCsts), proto::kCstsCfs) << std::hex << cc;
  }
}

TEST(ControllerRegisters, DisableClearsReady) {
  ControllerRegisters r(128, proto::make_version(1, 3));
  ASSERT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, kGoodCc), kStatusSuccess);
  CcTransition t;
  ASSERT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, kGoodCc & ~proto::kCcEn, &t),
            kStatusSuccess);
  EXPECT_EQ(t, CcTransition::kDisabled);
  EXPECT_EQ(get32(r, proto::kPropCsts), 0u);
}

TEST(ControllerRegisters, ShutdownCompletesAndClears) {
  ControllerRegisters r(128, proto::make_version(1, 3));
  ASSERT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, kGoodCc), kStatusSuccess);
  uint32_t shn = kGoodCc | (proto::kCcShnNormal << proto::kCcShnShift);
  CcTransition t;
  ASSERT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, shn, &t), kStatusSuccess);
  EXPECT_EQ(t, CcTransition::kShutdown);
  uint32_t csts = get32(r, proto::kPropCsts);
  EXPECT_EQ((csts & proto::kCstsShstMask) >> proto::kCstsShstShift, proto::kShstOccurring);
  EXPECT_FALSE(csts & proto::kCstsRdy);
  r.shutdown_complete();  // the owner flushed the namespaces
  csts = get32(r, proto::kPropCsts);
  EXPECT_EQ((csts & proto::kCstsShstMask) >> proto::kCstsShstShift, proto::kShstComplete);
  ASSERT_EQ(r.property_set(proto::kPropertySize4, proto::kPropCc, 0), kStatusSuccess);
  EXPECT_EQ(get32(r, proto::kPropCsts) & proto::kCstsShstMask, 0u);
}

}  // namespace
}  // namespace nvmf::target
