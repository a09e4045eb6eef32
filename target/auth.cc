// SPDX-License-Identifier: BSD-3-Clause
#include "target/auth.h"

#include <algorithm>
#include <cstring>

#include "proto/auth.h"

namespace nvmf::target {
namespace {

using dhchap::Bytes;

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

template <typename T>
T header_of(std::span<const uint8_t> m) {
  T h;
  std::memcpy(&h, m.data(), sizeof(T));
  return h;
}

}  // namespace

AuthResponder::AuthResponder(const HostKey& key, std::string hostnqn, std::string subnqn)
    : key_(key), hostnqn_(std::move(hostnqn)), subnqn_(std::move(subnqn)) {}

void AuthResponder::set_key(std::optional<HostKey> key) { key_ = std::move(key); }

void AuthResponder::fail(uint8_t explanation, std::string_view why) {
  ++failures_;
  failure_ = explanation;
  failure_reason_ = why;
  authenticated_ = false;
  step_ = Step::kSendFailure1;
  dh_.reset();
  shared_.clear();
}

void AuthResponder::send(std::span<const uint8_t> m) {
  if (m.size() < 2) {
    return fail(proto::kAuthFailureIncorrectPayload, "a message shorter than its header");
  }
  const uint8_t type = m[0];
  const uint8_t id = m[1];
  if (type == proto::kAuthTypeCommon && id == proto::kAuthIdFailure2) {
    // The host gave up (it could not verify the controller, or met an error of its own).
    ++failures_;
    failure_ = m.size() >= sizeof(proto::AuthFailure) ? m[7] : proto::kAuthFailureFailed;
    failure_reason_ = "the host sent AUTH_Failure2";
    authenticated_ = false;
    step_ = Step::kIdle;
    dh_.reset();
    shared_.clear();
    return;
  }
  if (type == proto::kAuthTypeCommon && id == proto::kAuthIdNegotiate) {
    if (step_ != Step::kIdle) {
      return fail(proto::kAuthFailureIncorrectProtocolMessage,
                  "AUTH_Negotiate in the middle of a transaction");
    }
    return negotiate(m);
  }
  if (type == proto::kAuthTypeDhchap && id == proto::kAuthIdReply && step_ == Step::kAwaitReply) {
    return reply(m);
  }
  if (type == proto::kAuthTypeDhchap && id == proto::kAuthIdSuccess2 &&
      step_ == Step::kAwaitSuccess2) {
    return success2(m);
  }
  fail(proto::kAuthFailureIncorrectProtocolMessage, "a message out of sequence");
}

void AuthResponder::negotiate(std::span<const uint8_t> m) {
  // Each transaction costs the target a DH key and its derivation: a host looping on
  // AUTH_Negotiate without succeeding gets a Failure1 instead of more of the poll group's time.
  if (++attempts_ > kMaxTransactionsWithoutSuccess) {
    return fail(proto::kAuthFailureFailed, "too many authentication transactions on one queue");
  }
  if (!key_) return fail(proto::kAuthFailureFailed, "the host has no DH-HMAC-CHAP key any more");
  if (m.size() < sizeof(proto::AuthNegotiateHeader)) {
    return fail(proto::kAuthFailureIncorrectPayload, "AUTH_Negotiate truncated");
  }
  const auto h = header_of<proto::AuthNegotiateHeader>(m);
  t_id_ = le16(m.data() + 4);
  if (h.sc_c != proto::kAuthScNone) {
    return fail(proto::kAuthFailureConcatMismatch, "secure channel concatenation asked over RDMA");
  }
  const size_t want = sizeof(h) + size_t{h.napd} * sizeof(proto::AuthProtocolDescriptor);
  if (h.napd == 0 || m.size() != want) {
    return fail(proto::kAuthFailureIncorrectPayload,
                "AUTH_Negotiate length does not match its descriptor count");
  }
  bool found = false;
  proto::AuthProtocolDescriptor d;
  for (size_t i = 0; i < h.napd && !found; ++i) {
    std::memcpy(&d, m.data() + sizeof(h) + i * sizeof(d), sizeof(d));
    found = d.auth_id == proto::kAuthProtocolDhchap;
  }
  if (!found) {
    return fail(proto::kAuthFailureProtocolUnusable, "no DH-HMAC-CHAP descriptor");
  }
  if (d.halen > proto::kAuthIdListHalf || d.dhlen > proto::kAuthIdListHalf) {
    return fail(proto::kAuthFailureIncorrectPayload, "HALEN or DHLEN above 30");
  }
  const uint8_t want_hash = static_cast<uint8_t>(key_->hash);
  const uint8_t want_dh = static_cast<uint8_t>(key_->dhgroup);
  if (std::find(d.idlist, d.idlist + d.halen, want_hash) == d.idlist + d.halen) {
    return fail(proto::kAuthFailureHashUnusable, "the host does not offer the configured hash");
  }
  const uint8_t* dh_ids = d.idlist + proto::kAuthIdListHalf;
  if (std::find(dh_ids, dh_ids + d.dhlen, want_dh) == dh_ids + d.dhlen) {
    return fail(proto::kAuthFailureDhgroupUnusable,
                "the host does not offer the configured DH group");
  }
  hash_ = key_->hash;
  dhgroup_ = key_->dhgroup;
  c1_.assign(dhchap::hash_length(hash_), 0);
  auto seq = dhchap::random_seqnum();
  if (!dhchap::random_bytes(c1_).ok() || !seq.ok()) {
    return fail(proto::kAuthFailureFailed, "no random bytes");
  }
  s1_ = *seq;
  dh_.reset();
  shared_.clear();
  if (dhgroup_ != dhchap::DhGroup::kNull) {
    auto k = dhchap::DhKey::generate(dhgroup_);
    if (!k.ok()) return fail(proto::kAuthFailureFailed, "DH key generation failed");
    dh_ = std::move(*k);
  }
  failure_ = 0;
  failure_reason_.clear();
  step_ = Step::kSendChallenge;
}

void AuthResponder::reply(std::span<const uint8_t> m) {
  const size_t hl = dhchap::hash_length(hash_);
  const size_t dhvlen = dhchap::dhgroup_bytes(dhgroup_);
  if (m.size() < sizeof(proto::DhchapReplyHeader)) {
    return fail(proto::kAuthFailureIncorrectPayload, "DH-HMAC-CHAP_Reply truncated");
  }
  const auto h = header_of<proto::DhchapReplyHeader>(m);
  if (le16(m.data() + 4) != t_id_) {
    return fail(proto::kAuthFailureIncorrectPayload, "DH-HMAC-CHAP_Reply of another transaction");
  }
  if (h.hl != hl || le16(m.data() + 10) != dhvlen || m.size() != sizeof(h) + 2 * hl + dhvlen) {
    return fail(proto::kAuthFailureIncorrectPayload,
                "DH-HMAC-CHAP_Reply lengths do not match the transaction's hash and DH group");
  }
  const uint8_t* r1 = m.data() + sizeof(h);
  const uint8_t* c2 = r1 + hl;
  const uint8_t* dhv = c2 + hl;
  const uint32_t s2 =
      uint32_t{m[12]} | uint32_t{m[13]} << 8 | uint32_t{m[14]} << 16 | uint32_t{m[15]} << 24;
  if (h.cvalid != 0 && (s2 == 0 || !key_->ctrl_key.has_value())) {
    return fail(proto::kAuthFailureFailed,
                s2 == 0 ? "bidirectional authentication asked with sequence number 0"
                        : "bidirectional authentication asked, no controller key configured");
  }
  if (dh_) {
    auto shared = dh_->derive({dhv, dhvlen});
    if (!shared.ok()) {
      return fail(proto::kAuthFailureIncorrectPayload, "the host's DH public value is not valid");
    }
    shared_ = std::move(*shared);
  }
  auto key = key_->key.transformed(hostnqn_);
  auto aug = dhchap::augmented_challenge(hash_, shared_, c1_);
  if (!key.ok() || !aug.ok()) return fail(proto::kAuthFailureFailed, "response computation failed");
  auto expect = dhchap::response(hash_, *key, *aug, s1_, t_id_, proto::kAuthScNone,
                                 dhchap::Role::kHost, hostnqn_, subnqn_);
  if (!expect.ok()) return fail(proto::kAuthFailureFailed, "response computation failed");
  if (!dhchap::equal_constant_time(*expect, {r1, hl})) {
    return fail(proto::kAuthFailureFailed, "the host's response does not match its key");
  }
  if (h.cvalid != 0) {
    c2_.assign(c2, c2 + hl);
    s2_ = s2;
  } else {
    c2_.clear();
    s2_ = 0;
  }
  step_ = Step::kSendSuccess1;
}

void AuthResponder::success2(std::span<const uint8_t> m) {
  if (m.size() != sizeof(proto::DhchapSuccess2) || le16(m.data() + 4) != t_id_) {
    return fail(proto::kAuthFailureIncorrectPayload, "DH-HMAC-CHAP_Success2 malformed");
  }
  authenticated_ = true;
  attempts_ = 0;
  step_ = Step::kIdle;
  dh_.reset();
  shared_.clear();
}

uint32_t AuthResponder::receive(uint32_t al, std::span<uint8_t> out) {
  Bytes msg;
  switch (step_) {
    case Step::kSendChallenge: {
      const size_t hl = dhchap::hash_length(hash_);
      const Bytes* pub = dh_ ? &dh_->public_value() : nullptr;
      msg.assign(sizeof(proto::DhchapChallengeHeader) + hl + (pub ? pub->size() : 0), 0);
      proto::DhchapChallengeHeader h{};
      h.auth_type = proto::kAuthTypeDhchap;
      h.auth_id = proto::kAuthIdChallenge;
      h.t_id = t_id_;
      h.hl = static_cast<uint8_t>(hl);
      h.hashid = static_cast<uint8_t>(hash_);
      h.dhgid = static_cast<uint8_t>(dhgroup_);
      h.dhvlen = static_cast<uint16_t>(pub ? pub->size() : 0);
      h.seqnum = s1_;
      std::memcpy(msg.data(), &h, sizeof(h));
      std::memcpy(msg.data() + sizeof(h), c1_.data(), hl);
      if (pub) std::memcpy(msg.data() + sizeof(h) + hl, pub->data(), pub->size());
      step_ = Step::kAwaitReply;
      break;
    }
    case Step::kSendSuccess1: {
      const size_t hl = dhchap::hash_length(hash_);
      const bool bidirectional = !c2_.empty();
      msg.assign(sizeof(proto::DhchapSuccess1Header) + hl, 0);
      proto::DhchapSuccess1Header h{};
      h.auth_type = proto::kAuthTypeDhchap;
      h.auth_id = proto::kAuthIdSuccess1;
      h.t_id = t_id_;
      h.hl = static_cast<uint8_t>(hl);
      if (bidirectional) {
        auto key = key_->ctrl_key->transformed(subnqn_);
        auto aug = dhchap::augmented_challenge(hash_, shared_, c2_);
        Result<Bytes> r2 = Status::internal("no key");
        if (key.ok() && aug.ok()) {
          r2 = dhchap::response(hash_, *key, *aug, s2_, t_id_, proto::kAuthScNone,
                                dhchap::Role::kController, hostnqn_, subnqn_);
        }
        if (!r2.ok()) {
          fail(proto::kAuthFailureFailed, "response computation failed");
          return receive(al, out);
        }
        h.rvalid = 1;
        std::memcpy(msg.data() + sizeof(h), r2->data(), hl);
        step_ = Step::kAwaitSuccess2;
      } else {
        authenticated_ = true;
        attempts_ = 0;
        step_ = Step::kIdle;
        dh_.reset();
        shared_.clear();
      }
      std::memcpy(msg.data(), &h, sizeof(h));
      break;
    }
    case Step::kSendFailure1:
      break;
    case Step::kIdle:
    case Step::kAwaitReply:
    case Step::kAwaitSuccess2:
      fail(proto::kAuthFailureIncorrectProtocolMessage, "Authentication Receive out of sequence");
      break;
  }
  if (step_ == Step::kSendFailure1) {
    proto::AuthFailure f{};
    f.auth_type = proto::kAuthTypeCommon;
    f.auth_id = proto::kAuthIdFailure1;
    f.t_id = t_id_;
    f.reason = proto::kAuthFailureReasonFailed;
    f.explanation = failure_;
    msg.assign(sizeof(f), 0);
    std::memcpy(msg.data(), &f, sizeof(f));
    step_ = Step::kIdle;
  }
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>({msg.size(), al, out.size()}));
  std::memcpy(out.data(), msg.data(), n);
  return n;
}

}  // namespace nvmf::target
