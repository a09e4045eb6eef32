// SPDX-License-Identifier: BSD-3-Clause
// Round-trips fields of the wire structs through raw bytes, so a broken layout fails a test.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"

namespace nvmf::proto {
namespace {

template <typename T>
std::array<uint8_t, sizeof(T)> bytes_of(const T& v) {
  std::array<uint8_t, sizeof(T)> out;
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

template <typename T, size_t N>
T from_bytes(const std::array<uint8_t, N>& b) {
  static_assert(N == sizeof(T));
  T v;
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

uint64_t le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

TEST(ProtoTest, SqeKeyedSglBytesAtSpecOffsets) {
  Sqe sqe{};
  sqe.opcode = kNvmRead;
  sqe.flags = kFlagsPsdtSgl;
  sqe.cid = 0xBEEF;
  sqe.nsid = 1;
  sqe.dptr.addr = 0x1122334455667788ull;
  sqe.dptr.set_keyed_length(0xABCDEF);
  sqe.dptr.keyed.key = 0xCAFEF00D;
  sqe.dptr.id = kSglIdKeyed;
  sqe.cdw10 = 0x01020304;
  sqe.cdw12 = 7;
  auto b = bytes_of(sqe);
  EXPECT_EQ(b[0], 0x02);
  EXPECT_EQ(b[1], 0x40);
  EXPECT_EQ(le(&b[2], 2), 0xBEEFu);
  EXPECT_EQ(le(&b[4], 4), 1u);
  EXPECT_EQ(le(&b[24], 8), 0x1122334455667788ull);
  EXPECT_EQ(le(&b[32], 3), 0xABCDEFu);
  EXPECT_EQ(le(&b[35], 4), 0xCAFEF00Du);
  EXPECT_EQ(b[39], 0x40);
  EXPECT_EQ(le(&b[40], 4), 0x01020304u);
  EXPECT_EQ(le(&b[48], 4), 7u);
  auto back = from_bytes<Sqe>(b);
  EXPECT_EQ(back.dptr.keyed_length(), 0xABCDEFu);
  EXPECT_EQ(uint32_t{back.dptr.keyed.key}, 0xCAFEF00Du);  // a copy: the field is unaligned
}

TEST(ProtoTest, UnkeyedSglLengthIs32BitsAtByte8) {
  SglDescriptor d{};
  d.addr = 0;
  d.unkeyed.length = 0x12345678;
  d.id = kSglIdDataBlockOffset;
  auto b = bytes_of(d);
  EXPECT_EQ(le(&b[8], 4), 0x12345678u);
  EXPECT_EQ(b[15], 0x01);
  EXPECT_EQ(sgl_type(b[15]), kSglTypeDataBlock);
  EXPECT_EQ(sgl_subtype(b[15]), kSglSubtypeOffset);
  EXPECT_EQ(sgl_id(kSglTypeKeyedDataBlock, kSglSubtypeInvalidateKey), kSglIdKeyedInvalidate);
  EXPECT_EQ(sgl_id(kSglTypeLastSegment, kSglSubtypeOffset), kSglIdLastSegmentOffset);
}

TEST(ProtoTest, CqeFields) {
  std::array<uint8_t, 16> b{};
  b[0] = 0x34;
  b[1] = 0x12;  // dw0 = 0x1234
  b[8] = 5;     // sqhd
  b[10] = 2;    // sqid
  b[12] = 0xEF;
  b[13] = 0xBE;  // cid
  b[14] = 0x01;
  b[15] = 0x81;  // status: P=1, DNR
  auto c = from_bytes<Cqe>(b);
  EXPECT_EQ(c.dw0, 0x1234u);
  EXPECT_EQ(c.sqhd, 5);
  EXPECT_EQ(c.sqid, 2);
  EXPECT_EQ(c.cid, 0xBEEF);
  EXPECT_EQ(c.status & kStatusPhase, kStatusPhase);
  EXPECT_EQ(c.status & kStatusDnr, kStatusDnr);
}

TEST(ProtoTest, StatusFieldLayout) {
  // LBA Out of Range (SCT 0, SC 80h) with DNR: SC in 8:1 -> 0x100, DNR bit 15.
  uint16_t s = static_cast<uint16_t>((kScLbaOutOfRange << kStatusScShift) | kStatusDnr);
  EXPECT_EQ(s, 0x8100);
  uint16_t fabrics = static_cast<uint16_t>((kSctCommandSpecific << kStatusSctShift) |
                                           (kScConnectInvalidParameters << kStatusScShift));
  EXPECT_EQ(fabrics >> 1, 0x182);  // Linux NVME_SC_CONNECT_INVALID_PARAM
}

TEST(ProtoTest, ControllerRegisterBits) {
  uint32_t cc = kCcEn | (kSqesLog2 << kCcIosqesShift) | (kCqesLog2 << kCcIocqesShift);
  EXPECT_EQ(cc, 0x00460001u);
  EXPECT_EQ(kCapCssNvm, 1ull << 37);
  EXPECT_EQ(kShstComplete << kCstsShstShift, 0x8u);
  EXPECT_EQ(make_version(1, 4), 0x00010400u);
}

TEST(ProtoTest, IdentifyControllerOffsets) {
  IdentifyController id{};
  id.mdts = 5;
  id.cntlid = 0x0102;
  id.kas = 10;
  id.sgls = kSglsSupported | kSglsKeyedDataBlock | kSglsOffset;
  id.ioccsz = 260;
  id.iorcsz = 1;
  id.icdoff = 0;
  id.msdbd = 1;
  std::memcpy(id.subnqn, "nqn.x", 6);
  std::array<uint8_t, 4096> b;
  std::memcpy(b.data(), &id, sizeof(id));
  EXPECT_EQ(b[77], 5);
  EXPECT_EQ(le(&b[78], 2), 0x0102u);
  EXPECT_EQ(le(&b[320], 2), 10u);
  EXPECT_EQ(le(&b[536], 4), 0x00100005u);
  EXPECT_EQ(b[768], 'n');
  EXPECT_EQ(le(&b[1792], 4), 260u);
  EXPECT_EQ(le(&b[1796], 4), 1u);
  EXPECT_EQ(b[1803], 1);
}

TEST(ProtoTest, IdentifyNamespaceOffsets) {
  IdentifyNamespace ns{};
  ns.nsze = 0x100000;
  ns.flbas = 0;
  ns.lbaf[0].lbads = 9;
  ns.lbaf[1].ms = 8;
  std::array<uint8_t, 4096> b;
  std::memcpy(b.data(), &ns, sizeof(ns));
  EXPECT_EQ(le(&b[0], 8), 0x100000u);
  EXPECT_EQ(b[128 + 2], 9);
  EXPECT_EQ(le(&b[132], 2), 8u);
}

TEST(ProtoTest, ConnectCommandAndData) {
  ConnectCommand c{};
  c.opcode = kOpcodeFabrics;
  c.flags = kFlagsPsdtSgl;
  c.fctype = kFctypeConnect;
  c.qid = 3;
  c.sqsize = 127;
  c.kato = 120000;
  auto b = bytes_of(c);
  EXPECT_EQ(b[0], 0x7F);
  EXPECT_EQ(b[4], 0x01);
  EXPECT_EQ(le(&b[42], 2), 3u);
  EXPECT_EQ(le(&b[44], 2), 127u);
  EXPECT_EQ(le(&b[48], 4), 120000u);
  // The overlay and the generic SQE agree on where FCTYPE and SGL1 live.
  auto sqe = from_bytes<Sqe>(b);
  EXPECT_EQ(sqe.nsid & 0xFF, kFctypeConnect);

  ConnectData d{};
  d.cntlid = kAdminQueueCntlid;
  std::memcpy(d.subnqn, kDiscoveryNqn, sizeof(kDiscoveryNqn));
  d.hostnqn[0] = 'h';
  std::array<uint8_t, 1024> db;
  std::memcpy(db.data(), &d, sizeof(d));
  EXPECT_EQ(le(&db[16], 2), 0xFFFFu);
  EXPECT_EQ(db[256], 'n');
  EXPECT_EQ(db[512], 'h');
  EXPECT_EQ(sizeof(kDiscoveryNqn) - 1, 36u);
  EXPECT_EQ(connect_invalid_param_in_data(offsetof(ConnectData, cntlid)), 0x10010u);
  EXPECT_EQ(connect_invalid_param_in_sqe(offsetof(ConnectCommand, qid)), 42u);
}

TEST(ProtoTest, PropertyCommands) {
  PropertySetCommand s{};
  s.fctype = kFctypePropertySet;
  s.attrib = kPropertySize4;
  s.ofst = kPropCc;
  s.value = 0x00460001;
  auto b = bytes_of(s);
  EXPECT_EQ(b[40], 0);
  EXPECT_EQ(le(&b[44], 4), 0x14u);
  EXPECT_EQ(le(&b[48], 8), 0x00460001u);
  PropertyGetCommand g{};
  g.attrib = kPropertySize8;
  g.ofst = kPropCap;
  auto gb = bytes_of(g);
  EXPECT_EQ(gb[40], 1);
  EXPECT_EQ(le(&gb[44], 4), 0u);
}

TEST(ProtoTest, CmPrivateData) {
  CmRequestPrivateData r{};
  r.recfmt = kCmRecfmt0;
  r.qid = 1;
  r.hrqsize = 32;
  r.hsqsize = 31;
  r.cntlid = 7;
  auto b = bytes_of(r);
  EXPECT_EQ(le(&b[2], 2), 1u);
  EXPECT_EQ(le(&b[4], 2), 32u);
  EXPECT_EQ(le(&b[6], 2), 31u);
  EXPECT_EQ(le(&b[8], 2), 7u);
  CmAcceptPrivateData a{};
  a.crqsize = 128;
  EXPECT_EQ(le(&bytes_of(a)[2], 2), 128u);
  CmRejectPrivateData j{kCmRecfmt0, kCmRejectInvalidHrqsize};
  auto jb = bytes_of(j);
  EXPECT_EQ(le(&jb[2], 2), 5u);
  EXPECT_EQ(kCmRejectInvalidCntlid, 9);
}

}  // namespace
}  // namespace nvmf::proto
