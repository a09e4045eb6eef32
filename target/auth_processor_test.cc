// SPDX-License-Identifier: BSD-3-Clause
// DH-HMAC-CHAP through the command processor: Connect asks for it (AUTHREQ.ATR), nothing but
// Authentication Send/Receive is served until it succeeds, and the host's side of the exchange
// (host/auth.h) gets the queue through, on the admin queue and on an I/O queue.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "common/dhchap.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/auth.h"
#include "proto/auth.h"
#include "target/command_processor.h"
#include "target/testing/processor_harness.h"

namespace nvmf::target {
namespace {

using namespace nvmf::target::testing;  // NOLINT: the harness vocabulary

constexpr uint16_t kAuthRequiredDnr =
    make_status(proto::kSctCommandSpecific, proto::kScAuthRequired, true);

proto::Sqe auth_sqe(uint8_t fctype, uint32_t length, bool in_capsule) {
  proto::AuthCommand c{};
  c.opcode = proto::kOpcodeFabrics;
  c.flags = proto::kFlagsPsdtSgl;
  c.fctype = fctype;
  c.secp = proto::kAuthSecp;
  c.spsp0 = proto::kAuthSpsp0;
  c.spsp1 = proto::kAuthSpsp1;
  c.length = length;
  if (in_capsule) {
    encode_in_capsule_sgl(c.sgl1, 0, length);
  } else {
    EXPECT_TRUE(encode_keyed_sgl(c.sgl1, 0x4000, length, 0x42));
  }
  proto::Sqe s;
  std::memcpy(&s, &c, sizeof(s));
  return s;
}

class AuthProcessorTest : public ::testing::Test {
 protected:
  AuthProcessorTest() {
    ns_ = std::move(Namespace::create_ram(1 << 20, 512)).value();
    key_ = *dhchap::Secret::generate(32, 1);
    ctrl_key_ = *dhchap::Secret::generate(48, 2);
    auto keys = std::make_shared<HostKeys>();
    (*keys)[kHostNqn] =
        HostKey{key_, ctrl_key_, dhchap::Hash::kSha384, dhchap::DhGroup::kFfdhe2048};
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    cfg.host_keys = keys;
    subsys_ = std::make_unique<Subsystem>(cfg, *ns_, registry_);
    subsys_->set_in_capsule_data_size(kInCapsule);
  }
  ~AuthProcessorTest() override {
    queues_.clear();
    subsys_.reset();
  }
  TestQueue& queue(uint16_t qid, uint32_t size) {
    queues_.push_back(std::make_unique<TestQueue>(*subsys_, statuses_, qid, size));
    return *queues_.back();
  }
  // Sends `m` by Authentication Send with in-capsule data; expects success.
  void send(TestQueue& q, const std::vector<uint8_t>& m) {
    EXPECT_EQ(q.submit(auth_sqe(proto::kFctypeAuthSend, static_cast<uint32_t>(m.size()), true), m),
              NextStep::kRespond);
    EXPECT_EQ(q.status(), kStatusSuccess);
  }
  // Authentication Receive with AL 4096 (as Linux); returns the message written to the host.
  std::vector<uint8_t> receive(TestQueue& q) {
    EXPECT_EQ(q.submit(auth_sqe(proto::kFctypeAuthReceive, 4096, false)),
              NextStep::kWriteToHostThenRespond);
    EXPECT_EQ(q.status(), kStatusSuccess);
    return {q.req.buffer.begin(), q.req.buffer.begin() + q.req.transfer_bytes};
  }
  // The host's whole transaction on `q`; returns the host's verdict.
  Status authenticate(TestQueue& q, host::DhchapSecrets secrets) {
    host::AuthInitiator init(secrets, kHostNqn, kNqn, 3);
    send(q, init.negotiate());
    Result<dhchap::Bytes> reply = init.on_challenge(receive(q));
    if (!reply.ok()) return reply.status();
    send(q, *reply);
    Result<dhchap::Bytes> s2 = init.on_success1(receive(q));
    if (!s2.ok()) return s2.status();
    if (!s2->empty()) send(q, *s2);
    return ok_status();
  }

  std::unique_ptr<Namespace> ns_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::unique_ptr<Subsystem> subsys_;
  std::vector<std::unique_ptr<TestQueue>> queues_;
  dhchap::Secret key_;
  dhchap::Secret ctrl_key_;
};

TEST_F(AuthProcessorTest, EveryQueueAuthenticatesBeforeAnyOtherCommand) {
  TestQueue& a = queue(0, 32);
  EXPECT_EQ(a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid)),
            NextStep::kRespond);
  ASSERT_EQ(a.status(), kStatusSuccess);
  EXPECT_NE(a.req.cqe.dw0 & proto::kConnectRespAuthreqAtr, 0u);
  const uint16_t cntlid = static_cast<uint16_t>(a.req.cqe.dw0 & 0xFFFF);
  // Property Set and Identify: Authentication Required, DNR.
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc));
  EXPECT_EQ(a.status(), kAuthRequiredDnr);
  a.submit(identify_sqe(1));
  EXPECT_EQ(a.status(), kAuthRequiredDnr);
  ASSERT_TRUE(authenticate(a, {key_, ctrl_key_}).ok());
  EXPECT_FALSE(a.proc.awaiting_authentication());
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc));
  EXPECT_EQ(a.status(), kStatusSuccess);

  TestQueue& q = queue(1, 128);
  EXPECT_EQ(q.submit(connect_sqe(1, 127, true), connect_data(cntlid)), NextStep::kRespond);
  ASSERT_EQ(q.status(), kStatusSuccess);
  EXPECT_NE(q.req.cqe.dw0 & proto::kConnectRespAuthreqAtr, 0u);
  // NVM I/O on the unauthenticated I/O queue is refused, not executed.
  q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
  EXPECT_EQ(q.status(), kAuthRequiredDnr);
  ASSERT_TRUE(authenticate(q, {key_, std::nullopt}).ok());  // unidirectional on this queue
  EXPECT_EQ(q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512)), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
}

TEST_F(AuthProcessorTest, AWrongKeyLeavesTheQueueRefusingCommands) {
  TestQueue& a = queue(0, 32);
  a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
  ASSERT_EQ(a.status(), kStatusSuccess);
  Status st = authenticate(a, {*dhchap::Secret::generate(32, 1), std::nullopt});
  EXPECT_EQ(st.code(), StatusCode::kRejected);
  EXPECT_TRUE(a.proc.awaiting_authentication());
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc));
  EXPECT_EQ(a.status(), kAuthRequiredDnr);
}

TEST_F(AuthProcessorTest, MalformedAuthenticationCommandsAreInvalidField) {
  TestQueue& a = queue(0, 32);
  a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
  ASSERT_EQ(a.status(), kStatusSuccess);
  const uint16_t invalid_field = generic_status(proto::kScInvalidField);
  for (int field = 0; field < 4; ++field) {
    proto::Sqe s = auth_sqe(proto::kFctypeAuthSend, 72, true);
    auto& c = reinterpret_cast<proto::AuthCommand&>(s);
    if (field == 0) c.secp = 0xEA;
    if (field == 1) c.spsp0 = 0;
    if (field == 2) c.spsp1 = 2;
    if (field == 3) c.length = 0;
    a.submit(s, std::vector<uint8_t>(72));
    EXPECT_EQ(a.status(), invalid_field) << field;
  }
  a.submit(auth_sqe(proto::kFctypeAuthSend, kAuthMaxSendBytes + 1, false));
  EXPECT_EQ(a.status(), invalid_field);
}

TEST(AuthProcessorNoKey, AHostWithoutAKeyIsNotAskedAndCannotStartAuthentication) {
  auto ns = std::move(Namespace::create_ram(1 << 20, 512)).value();
  StatsRegistry registry;
  StatusCounters statuses;
  SubsystemConfig cfg;
  cfg.nqn = kNqn;
  Subsystem subsys(cfg, *ns, registry);
  subsys.set_in_capsule_data_size(kInCapsule);
  {
    TestQueue a(subsys, statuses, 0, 32);
    a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
    ASSERT_EQ(a.status(), kStatusSuccess);
    EXPECT_EQ(a.req.cqe.dw0 & proto::kConnectRespAuthreqAtr, 0u);
    a.submit(auth_sqe(proto::kFctypeAuthSend, 72, true), std::vector<uint8_t>(72));
    EXPECT_EQ(a.status(), generic_status(proto::kScCommandSequenceError));
  }
}

}  // namespace
}  // namespace nvmf::target
