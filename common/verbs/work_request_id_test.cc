// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for the wr_id encoding (no device needed).
#include "common/verbs/work_request_id.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace nvmf::verbs {
namespace {

TEST(WorkRequestIdTest, LayoutIsKindAboveIndex) {
  EXPECT_EQ(encode_wr_id(WrKind::kRecv, 0), 0x1'0000'0000ull);
  EXPECT_EQ(encode_wr_id(WrKind::kRead, 7), 0x2'0000'0007ull);
  EXPECT_EQ(encode_wr_id(WrKind::kSend, 0xFFFF'FFFFu), 0x3'FFFF'FFFFull);
  EXPECT_EQ(encode_wr_id(WrKind::kWrite, 0x1234), 0x4'0000'1234ull);
}

TEST(WorkRequestIdTest, DecodeInvertsEncodeForEveryKindAndEdgeIndex) {
  int checked = 0;
  for (WrKind kind : {WrKind::kRecv, WrKind::kRead, WrKind::kSend, WrKind::kWrite}) {
    for (uint32_t index : {0u, 1u, 127u, 0x8000'0000u, 0xFFFF'FFFFu}) {
      WrId id = decode_wr_id(encode_wr_id(kind, index));
      EXPECT_EQ(id.kind, kind) << wr_kind_name(kind) << " " << index;
      EXPECT_EQ(id.index, index) << wr_kind_name(kind);
      EXPECT_TRUE(valid_wr_kind(id.kind));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
}

TEST(WorkRequestIdTest, CorruptIdsDecodeToAnInvalidKind) {
  EXPECT_FALSE(valid_wr_kind(decode_wr_id(0).kind));                         // kind 0
  EXPECT_FALSE(valid_wr_kind(decode_wr_id(0x5'0000'0001ull).kind));          // kind 5
  EXPECT_FALSE(valid_wr_kind(decode_wr_id(0xFF'0000'0000ull).kind));         // kind 255
  EXPECT_FALSE(valid_wr_kind(decode_wr_id(0x101'0000'0000ull).kind));        // bits above the kind
  EXPECT_FALSE(valid_wr_kind(decode_wr_id(0x8000'0001'0000'0002ull).kind));  // old host recv tag
  EXPECT_EQ(decode_wr_id(0x5'0000'0009ull).index, 9u);
}

TEST(WorkRequestIdTest, KindNames) {
  EXPECT_EQ(std::string(wr_kind_name(WrKind::kRecv)), "recv");
  EXPECT_EQ(std::string(wr_kind_name(WrKind::kRead)), "read");
  EXPECT_EQ(std::string(wr_kind_name(WrKind::kSend)), "send");
  EXPECT_EQ(std::string(wr_kind_name(WrKind::kWrite)), "write");
  EXPECT_EQ(std::string(wr_kind_name(WrKind{9})), "unknown");
}

}  // namespace
}  // namespace nvmf::verbs
