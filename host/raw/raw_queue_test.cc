// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for the raw-capsule layer's builders (no device needed): CM REQUEST private data
// and Connect SQE/data exactly as specified, wrong fields included.
#include "host/raw/raw_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "common/verbs/work_request_id.h"

namespace nvmf::host {
namespace {

TEST(RawQueueBuilders, CmRequestIsTakenAsGiven) {
  proto::CmRequestPrivateData p = cm_request(3, 0, 0xFFFF);  // sizes the target must refuse
  EXPECT_EQ(p.recfmt, proto::kCmRecfmt0);
  EXPECT_EQ(p.qid, 3);
  EXPECT_EQ(p.hrqsize, 0);
  EXPECT_EQ(p.hsqsize, 0xFFFF);
  auto b = cm_bytes(p);
  EXPECT_EQ(b.size(), 32u);  // RDMA 1.0 §3.3: 32 bytes
  EXPECT_EQ(b[2] | (b[3] << 8), 3);
}

TEST(RawQueueBuilders, ConnectFieldsAndData) {
  ConnectSpec spec;
  spec.qid = 2;
  spec.sqsize = 127;
  spec.cntlid = 0x1234;
  spec.kato_ms = 5000;
  spec.hostid[0] = 0xAB;
  spec.subnqn = "nqn.2024-01.io.nvmf-rdma:t";
  spec.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:h";
  proto::Sqe sqe = connect_sqe_for(spec);
  const auto& c = reinterpret_cast<const proto::ConnectCommand&>(sqe);
  EXPECT_EQ(c.opcode, proto::kOpcodeFabrics);
  EXPECT_EQ(c.fctype, proto::kFctypeConnect);
  EXPECT_EQ(c.qid, 2);
  EXPECT_EQ(c.sqsize, 127);
  EXPECT_EQ(c.kato, 5000u);
  proto::ConnectData d = connect_data_for(spec);
  EXPECT_EQ(d.cntlid, 0x1234);
  EXPECT_EQ(d.hostid[0], 0xAB);
  EXPECT_EQ(std::string(d.subnqn), spec.subnqn);
  EXPECT_EQ(std::string(d.hostnqn), spec.hostnqn);
}

TEST(RawQueueBuilders, UnterminatedNqnsFillEveryByte) {
  ConnectSpec spec;
  spec.subnqn = "nqn.s";
  spec.hostnqn = std::string(300, 'h');  // longer than the field: cut at 256 bytes
  spec.subnqn_unterminated = true;
  proto::ConnectData d = connect_data_for(spec);
  EXPECT_EQ(std::memchr(d.subnqn, 0, sizeof(d.subnqn)), nullptr);
  EXPECT_EQ(d.subnqn[0], 'n');
  EXPECT_EQ(d.subnqn[255], 'x');
  EXPECT_EQ(std::memchr(d.hostnqn, 0, sizeof(d.hostnqn)), nullptr);
  EXPECT_EQ(d.hostnqn[255], 'h');
}

// The wr_ids a RawQueue posts are the shared encoding (common/verbs/work_request_id.h); a
// completion is classified by kind and index, anything else is foreign.
TEST(RawQueueCompletions, SharedWrIdEncodingIsClassified) {
  using verbs::encode_wr_id;
  using verbs::WrKind;
  constexpr uint32_t kSlots = 64;
  EXPECT_EQ(classify_raw_completion(encode_wr_id(WrKind::kSend, 0), kSlots), RawCompletion::kSend);
  EXPECT_EQ(classify_raw_completion(encode_wr_id(WrKind::kSend, 63), kSlots), RawCompletion::kSend);
  EXPECT_EQ(classify_raw_completion(encode_wr_id(WrKind::kRecv, 0), kSlots), RawCompletion::kRecv);
  EXPECT_EQ(classify_raw_completion(encode_wr_id(WrKind::kRecv, 63), kSlots), RawCompletion::kRecv);
  // An index past the slots, a kind the raw queue never posts, the old encodings, garbage.
  for (uint64_t wr_id : {encode_wr_id(WrKind::kSend, 64), encode_wr_id(WrKind::kRecv, 64),
                         encode_wr_id(WrKind::kRead, 1), encode_wr_id(WrKind::kWrite, 1),
                         uint64_t{5},              // the old send slot 5
                         (uint64_t{1} << 20) + 5,  // the old receive 5
                         uint64_t{0}, ~uint64_t{0}}) {
    EXPECT_EQ(classify_raw_completion(wr_id, kSlots), RawCompletion::kForeign) << wr_id;
  }
  EXPECT_EQ(classify_raw_completion(encode_wr_id(WrKind::kRecv, 3), 3), RawCompletion::kForeign);
}

}  // namespace
}  // namespace nvmf::host
