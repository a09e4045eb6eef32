// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of host/identify: the controller checks a host must make, namespace decoding.
#include "host/identify.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace nvmf::host {
namespace {

proto::IdentifyController good_controller() {
  proto::IdentifyController id{};
  id.ioccsz = 260;  // 4 KiB in-capsule
  id.iorcsz = 1;
  id.kas = 1;
  return id;
}

TEST(ValidateIdentify, AcceptsSaneController) {
  EXPECT_TRUE(validate_identify_controller(good_controller()).ok());
}

TEST(ValidateIdentify, RejectsIoccszBelow4) {
  auto id = good_controller();
  id.ioccsz = 3;
  Status st = validate_identify_controller(id);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("IOCCSZ 3"), std::string::npos) << st.message();
  id.ioccsz = 4;
  EXPECT_TRUE(validate_identify_controller(id).ok());
}

TEST(ValidateIdentify, RejectsIorcszZero) {
  auto id = good_controller();
  id.iorcsz = 0;
  Status st = validate_identify_controller(id);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("IORCSZ 0"), std::string::npos) << st.message();
}

TEST(ValidateIdentify, RejectsKasZero) {
  auto id = good_controller();
  id.kas = 0;
  Status st = validate_identify_controller(id);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("KAS"), std::string::npos) << st.message();
}

TEST(DecodeNamespace, LbaSizeFromFlbas) {
  proto::IdentifyNamespace ns{};
  ns.nsze = 1000;
  ns.ncap = 1000;
  ns.nlbaf = 1;
  ns.lbaf[0].lbads = 9;
  ns.lbaf[1].lbads = 12;
  ns.flbas = 1;
  auto info = decode_namespace(1, ns);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->lba_size, 4096u);
  EXPECT_EQ(info->nsze, 1000u);
  ns.flbas = 0;
  EXPECT_EQ(decode_namespace(1, ns)->lba_size, 512u);
}

TEST(DecodeNamespace, KeepsNmic) {
  proto::IdentifyNamespace ns{};
  ns.nsze = 8;
  ns.lbaf[0].lbads = 9;
  EXPECT_EQ(decode_namespace(1, ns)->nmic, 0);
  ns.nmic = proto::kNmicShared;
  EXPECT_EQ(decode_namespace(1, ns)->nmic, 1);
}

TEST(DecodeNamespace, RejectsBadFormat) {
  proto::IdentifyNamespace ns{};
  ns.nlbaf = 0;
  ns.flbas = 1;  // beyond NLBAF
  ns.lbaf[1].lbads = 9;
  EXPECT_EQ(decode_namespace(1, ns).status().code(), StatusCode::kInvalidArgument);
  ns.flbas = 0;
  ns.lbaf[0].lbads = 0;  // unformatted
  EXPECT_EQ(decode_namespace(1, ns).status().code(), StatusCode::kInvalidArgument);
}

TEST(ActiveNamespaces, FirstNsid) {
  std::vector<uint8_t> list(4096, 0);
  EXPECT_EQ(first_active_nsid(list).status().code(), StatusCode::kNotFound);
  uint32_t ids[2] = {5, 9};
  std::memcpy(list.data(), ids, sizeof(ids));
  EXPECT_EQ(*first_active_nsid(list), 5u);
}

// A namespace list ends at its first zero or at the end of the bytes (a full page of 1024).
TEST(ActiveNamespaces, ListUpToTheFirstZero) {
  std::vector<uint8_t> list(4096, 0);
  EXPECT_TRUE(decode_nsid_list(list).empty());
  uint32_t ids[3] = {5, 9, 0};
  std::memcpy(list.data(), ids, sizeof(ids));
  list[12] = 7;  // after the zero: not listed
  EXPECT_EQ(decode_nsid_list(list), (std::vector<uint32_t>{5, 9}));
  std::vector<uint8_t> full(4096, 1);
  EXPECT_EQ(decode_nsid_list(full).size(), 1024u);
  EXPECT_EQ(decode_nsid_list(std::span<const uint8_t>(full.data(), 6)).size(), 1u);
}

TEST(IdentifyStrings, TrimsPadding) {
  char sn[20];
  std::memset(sn, ' ', sizeof(sn));
  std::memcpy(sn, "ABC 1", 5);
  EXPECT_EQ(trim_ascii(sn, sizeof(sn)), "ABC 1");
}

TEST(Mdts, Bytes) {
  EXPECT_EQ(mdts_bytes(0, 4096), 0u);
  EXPECT_EQ(mdts_bytes(5, 4096), 128u * 1024);
  EXPECT_EQ(mdts_bytes(8, 4096), 1024u * 1024);
}

}  // namespace
}  // namespace nvmf::host
