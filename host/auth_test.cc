// SPDX-License-Identifier: BSD-3-Clause
// DH-HMAC-CHAP end to end without a transport: the host's AuthInitiator against the target's
// AuthResponder, and the responder against hostile message sequences.
#include "host/auth.h"

#include <gtest/gtest.h>

#include <cstring>

#include "common/dhchap.h"
#include "proto/auth.h"
#include "target/auth.h"

namespace nvmf::host {
namespace {

using dhchap::Bytes;
using dhchap::DhGroup;
using dhchap::Hash;
using dhchap::Secret;
using target::AuthResponder;
using target::HostKey;

constexpr char kHostNqn[] = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
constexpr char kSubNqn[] = "nqn.2024-01.io.nvmf-rdma:auth";

Secret secret(uint8_t hh = 1, size_t len = 32) { return *Secret::generate(len, hh); }

Bytes receive(AuthResponder& r, uint32_t al = 4096) {
  Bytes out(al);
  out.resize(r.receive(al, out));
  return out;
}

struct Outcome {
  Status host;         // the initiator's verdict
  bool authenticated;  // the responder's
  uint8_t failure;     // the responder's failure explanation
};

// Runs one transaction; `host_secrets` is what the host was given, `key` what the target has.
Outcome run(const DhchapSecrets& host_secrets, const HostKey& key, DhchapOffer offer = {}) {
  AuthResponder responder(key, kHostNqn, kSubNqn);
  AuthInitiator initiator(host_secrets, kHostNqn, kSubNqn, 7, offer);
  responder.send(initiator.negotiate());
  Result<Bytes> reply = initiator.on_challenge(receive(responder));
  if (!reply.ok()) return {reply.status(), responder.authenticated(), responder.failure()};
  responder.send(*reply);
  Bytes s1 = receive(responder);
  Result<Bytes> s2 = initiator.on_success1(s1);
  if (!s2.ok()) {
    if (s1.size() > 1 && s1[1] != proto::kAuthIdFailure1) {
      responder.send(initiator.failure2(proto::kAuthFailureFailed));
    }
    return {s2.status(), responder.authenticated(), responder.failure()};
  }
  if (!s2->empty()) responder.send(*s2);
  return {ok_status(), responder.authenticated(), responder.failure()};
}

TEST(DhchapTransaction, SucceedsForEveryHashWithNullAndFfdhe2048AndSha512WithFfdhe8192) {
  struct Case {
    Hash hash;
    DhGroup group;
  };
  for (Case c : {Case{Hash::kSha256, DhGroup::kNull}, Case{Hash::kSha384, DhGroup::kNull},
                 Case{Hash::kSha512, DhGroup::kNull}, Case{Hash::kSha256, DhGroup::kFfdhe2048},
                 Case{Hash::kSha384, DhGroup::kFfdhe2048}, Case{Hash::kSha512, DhGroup::kFfdhe2048},
                 Case{Hash::kSha512, DhGroup::kFfdhe8192}}) {
    HostKey key{secret(), std::nullopt, c.hash, c.group};
    Outcome o = run({key.key, std::nullopt}, key);
    EXPECT_TRUE(o.host.ok()) << dhchap::hash_name(c.hash) << " " << dhchap::dhgroup_name(c.group)
                             << ": " << o.host.to_string();
    EXPECT_TRUE(o.authenticated) << dhchap::hash_name(c.hash);
  }
}

TEST(DhchapTransaction, BidirectionalChecksTheControllerToo) {
  HostKey key{secret(2, 48), secret(3, 64), Hash::kSha384, DhGroup::kFfdhe3072};
  Outcome o = run({key.key, key.ctrl_key}, key);
  EXPECT_TRUE(o.host.ok()) << o.host.to_string();
  EXPECT_TRUE(o.authenticated);
}

TEST(DhchapTransaction, AWrongHostKeyIsRefusedWithFailure1) {
  HostKey key{secret(), std::nullopt, Hash::kSha256, DhGroup::kFfdhe2048};
  Outcome o = run({secret(), std::nullopt}, key);
  EXPECT_EQ(o.host.code(), StatusCode::kRejected);
  EXPECT_NE(o.host.message().find("Reply refused (AUTH_Failure1: authentication failed)"),
            std::string::npos)
      << o.host.message();
  EXPECT_FALSE(o.authenticated);
  EXPECT_EQ(o.failure, proto::kAuthFailureFailed);
}

TEST(DhchapTransaction, AWrongControllerKeyIsFoundByTheHostWhichSendsFailure2) {
  HostKey key{secret(), secret(), Hash::kSha256, DhGroup::kNull};
  Outcome o = run({key.key, secret()}, key);
  EXPECT_EQ(o.host.code(), StatusCode::kRejected);
  EXPECT_NE(o.host.message().find("does not match --dhchap-ctrl-secret"), std::string::npos);
  EXPECT_FALSE(o.authenticated);  // Success2 never came: the queue is not authenticated
}

TEST(DhchapTransaction, BidirectionalAskedWithoutAControllerKeyIsRefused) {
  HostKey key{secret(), std::nullopt, Hash::kSha256, DhGroup::kNull};
  Outcome o = run({key.key, secret()}, key);
  EXPECT_EQ(o.host.code(), StatusCode::kRejected);
  EXPECT_FALSE(o.authenticated);
}

TEST(DhchapTransaction, AHostOfferingNeitherTheConfiguredHashNorGroupIsRefused) {
  HostKey key{secret(), std::nullopt, Hash::kSha512, DhGroup::kFfdhe2048};
  Outcome h = run({key.key, std::nullopt}, key, DhchapOffer{{1, 2}, {0, 1}});
  EXPECT_NE(h.host.message().find("hash function unusable"), std::string::npos) << h.host.message();
  Outcome g = run({key.key, std::nullopt}, key, DhchapOffer{{3}, {0, 2}});
  EXPECT_NE(g.host.message().find("DH group unusable"), std::string::npos) << g.host.message();
  EXPECT_FALSE(g.authenticated);
}

TEST(DhchapTransaction, SecretsNeverAppearInMessages) {
  HostKey key{secret(), std::nullopt, Hash::kSha256, DhGroup::kNull};
  Secret wrong = secret();
  Outcome o = run({wrong, std::nullopt}, key);
  const std::string text = wrong.format();
  EXPECT_EQ(o.host.message().find(text.substr(10, 16)), std::string::npos);
  EXPECT_EQ(o.host.message().find(key.key.format().substr(10, 16)), std::string::npos);
}

// ---- the responder against hostile sequences: each fails the transaction, with Failure1 ----

class DhchapResponderHostile : public ::testing::Test {
 protected:
  HostKey key{secret(), std::nullopt, Hash::kSha256, DhGroup::kFfdhe2048};
  AuthResponder responder{key, kHostNqn, kSubNqn};
  AuthInitiator initiator{{key.key, std::nullopt}, kHostNqn, kSubNqn, 9};

  // Expects the next Receive to be Failure1 with `explanation`, and the queue unauthenticated.
  void expect_failure1(uint8_t explanation) {
    Bytes m = receive(responder);
    ASSERT_EQ(m.size(), sizeof(proto::AuthFailure));
    EXPECT_EQ(m[0], proto::kAuthTypeCommon);
    EXPECT_EQ(m[1], proto::kAuthIdFailure1);
    EXPECT_EQ(m[6], proto::kAuthFailureReasonFailed);
    EXPECT_EQ(m[7], explanation);
    EXPECT_FALSE(responder.authenticated());
  }
  Bytes good_reply() {
    responder.send(initiator.negotiate());
    return *initiator.on_challenge(receive(responder));
  }
};

TEST_F(DhchapResponderHostile, AReplayedReplyAfterSuccessFailsAndDeauthenticates) {
  Bytes reply = good_reply();
  responder.send(reply);
  receive(responder);
  ASSERT_TRUE(responder.authenticated());
  responder.send(reply);
  expect_failure1(proto::kAuthFailureIncorrectProtocolMessage);
}

TEST_F(DhchapResponderHostile, AReplyWithAnotherTransactionIdFails) {
  Bytes reply = good_reply();
  reply[4] ^= 1;
  responder.send(reply);
  expect_failure1(proto::kAuthFailureIncorrectPayload);
}

TEST_F(DhchapResponderHostile, TruncatedMessagesFail) {
  Bytes neg = initiator.negotiate();
  neg.resize(20);
  responder.send(neg);
  expect_failure1(proto::kAuthFailureIncorrectPayload);
  Bytes reply = good_reply();
  reply.resize(reply.size() - 1);
  responder.send(reply);
  expect_failure1(proto::kAuthFailureIncorrectPayload);
  responder.send(Bytes{0});
  expect_failure1(proto::kAuthFailureIncorrectPayload);
}

TEST_F(DhchapResponderHostile, ASecondNegotiateMidTransactionFails) {
  responder.send(initiator.negotiate());
  responder.send(initiator.negotiate());
  expect_failure1(proto::kAuthFailureIncorrectProtocolMessage);
  // A new transaction may start after the failure and succeed.
  responder.send(initiator.negotiate());
  Result<Bytes> reply = initiator.on_challenge(receive(responder));
  ASSERT_TRUE(reply.ok());
  responder.send(*reply);
  ASSERT_TRUE(initiator.on_success1(receive(responder)).ok());
  EXPECT_TRUE(responder.authenticated());
}

TEST_F(DhchapResponderHostile, AReceiveOutOfSequenceGetsFailure1) {
  Bytes m = receive(responder);
  ASSERT_EQ(m.size(), sizeof(proto::AuthFailure));
  EXPECT_EQ(m[7], proto::kAuthFailureIncorrectProtocolMessage);
}

TEST_F(DhchapResponderHostile, ADhPublicValueOutsideTheGroupFails) {
  Bytes reply = good_reply();
  std::memset(reply.data() + reply.size() - 256, 0, 255);
  reply.back() = 1;  // y = 1
  responder.send(reply);
  expect_failure1(proto::kAuthFailureIncorrectPayload);
}

TEST_F(DhchapResponderHostile, OversizedAndUnknownMessagesFail) {
  responder.send(Bytes(4096, 0x01));
  expect_failure1(proto::kAuthFailureIncorrectProtocolMessage);
  Bytes neg = initiator.negotiate();
  neg.resize(neg.size() + 64);
  responder.send(neg);
  expect_failure1(proto::kAuthFailureIncorrectPayload);
}

TEST_F(DhchapResponderHostile, ALoopOfNegotiatesIsCutOff) {
  for (int i = 0; i < 8; ++i) {
    responder.send(initiator.negotiate());
    Bytes c = receive(responder);
    ASSERT_EQ(c[1], proto::kAuthIdChallenge) << i;
    responder.send(initiator.failure2(proto::kAuthFailureFailed));
  }
  responder.send(initiator.negotiate());
  expect_failure1(proto::kAuthFailureFailed);
}

TEST(DhchapTransaction, ReauthenticationKeepsWorkingAndFollowsTheConfiguredKey) {
  HostKey key{secret(), std::nullopt, Hash::kSha256, DhGroup::kNull};
  AuthResponder responder(key, kHostNqn, kSubNqn);
  auto transaction = [&](const Secret& s) {
    AuthInitiator init({s, std::nullopt}, kHostNqn, kSubNqn, 1);
    responder.send(init.negotiate());
    Result<Bytes> reply = init.on_challenge(receive(responder));
    if (!reply.ok()) return false;
    responder.send(*reply);
    return init.on_success1(receive(responder)).ok() && responder.authenticated();
  };
  // Successful transactions do not use up the limit on transactions without success.
  for (uint32_t i = 0; i < 2 * target::kMaxTransactionsWithoutSuccess; ++i) {
    ASSERT_TRUE(transaction(key.key)) << i;
  }
  // A new key configured: the next transaction needs it, the old one fails.
  HostKey rotated{secret(), std::nullopt, Hash::kSha256, DhGroup::kNull};
  responder.set_key(rotated);
  EXPECT_FALSE(transaction(key.key));
  EXPECT_FALSE(responder.authenticated());
  responder.set_key(rotated);
  EXPECT_TRUE(transaction(rotated.key));
  // The key removed: no transaction succeeds.
  responder.set_key(std::nullopt);
  EXPECT_FALSE(transaction(rotated.key));
  EXPECT_EQ(responder.failure(), proto::kAuthFailureFailed);
}

// A CommandChannel in front of an AuthResponder; with `disconnect_on_failure1`, a Receive whose
// answer would be AUTH_Failure1 fails as a lost connection does (nvmet tears the association
// down as it sends it, and the message may never reach the host).
class ResponderChannel : public CommandChannel {
 public:
  ResponderChannel(AuthResponder& r, bool disconnect_on_failure1)
      : responder_(r), disconnect_on_failure1_(disconnect_on_failure1) {}
  Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t> data_out,
                         std::span<uint8_t> data_in, bool) override {
    proto::AuthCommand c;
    std::memcpy(&c, &sqe, sizeof(c));
    if (c.fctype == proto::kFctypeAuthSend) {
      responder_.send(data_out);
    } else {
      Bytes out(c.length);
      out.resize(responder_.receive(c.length, out));
      if (disconnect_on_failure1_ && out.size() > 1 && out[1] == proto::kAuthIdFailure1) {
        return Status::unavailable("queue 0 to 10.0.0.1:4420: the target disconnected");
      }
      std::copy(out.begin(), out.end(), data_in.begin());
    }
    return proto::Cqe{};
  }

 private:
  AuthResponder& responder_;
  bool disconnect_on_failure1_;
};

TEST(DhchapAuthenticate, AWrongKeyIsRefusedWhetherFailure1ArrivesOrTheControllerDisconnects) {
  HostKey key{secret(), std::nullopt, Hash::kSha256, DhGroup::kFfdhe2048};
  for (bool disconnect : {false, true}) {
    AuthResponder responder(key, kHostNqn, kSubNqn);
    ResponderChannel ch(responder, disconnect);
    Status st = authenticate(ch, 0, {secret(), std::nullopt}, kHostNqn, kSubNqn, {});
    EXPECT_EQ(st.code(), StatusCode::kRejected) << disconnect;
    EXPECT_NE(st.message().find("DH-HMAC-CHAP Reply refused ("), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(disconnect ? "the controller disconnected instead of answering"
                                           : "AUTH_Failure1: authentication failed"),
              std::string::npos)
        << st.message();
    // The right key goes through the same channel.
    AuthResponder good(key, kHostNqn, kSubNqn);
    ResponderChannel ok_ch(good, disconnect);
    EXPECT_TRUE(authenticate(ok_ch, 0, {key.key, std::nullopt}, kHostNqn, kSubNqn, {}).ok());
    EXPECT_TRUE(good.authenticated());
  }
}

TEST(DhchapSqe, AuthenticationSendAndReceiveCarrySecpSpspAndLength) {
  proto::Sqe s = auth_send_sqe(1168);
  proto::AuthCommand c;
  std::memcpy(&c, &s, sizeof(c));
  EXPECT_EQ(c.fctype, proto::kFctypeAuthSend);
  EXPECT_EQ(c.secp, 0xE9);
  EXPECT_EQ(c.spsp0, 1);
  EXPECT_EQ(c.spsp1, 1);
  EXPECT_EQ(c.length, 1168u);
  s = auth_receive_sqe(1104);
  std::memcpy(&c, &s, sizeof(c));
  EXPECT_EQ(c.fctype, proto::kFctypeAuthReceive);
  EXPECT_EQ(c.length, 1104u);
}

}  // namespace
}  // namespace nvmf::host
