// SPDX-License-Identifier: BSD-3-Clause
#include "host/auth.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "host/io_plan.h"
#include "proto/auth.h"

namespace nvmf::host {
namespace {

using dhchap::Bytes;

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

bool is_failure1(std::span<const uint8_t> m) {
  return m.size() >= 2 && m[0] == proto::kAuthTypeCommon && m[1] == proto::kAuthIdFailure1;
}

Status refused(std::string_view step, std::span<const uint8_t> m) {
  const uint8_t exp = m.size() >= sizeof(proto::AuthFailure) ? m[7] : 0;
  return Status::rejected("DH-HMAC-CHAP " + std::string(step) +
                          " refused (AUTH_Failure1: " + auth_failure_text(exp) + ")");
}

// Largest message the controller sends: a Challenge with SHA-512 and an ffdhe8192 value.
constexpr uint32_t kMaxReceive = sizeof(proto::DhchapChallengeHeader) + 64 + 1024;

}  // namespace

std::string auth_failure_text(uint8_t explanation) {
  switch (explanation) {
    case proto::kAuthFailureFailed:
      return "authentication failed";
    case proto::kAuthFailureProtocolUnusable:
      return "authentication protocol unusable";
    case proto::kAuthFailureConcatMismatch:
      return "secure channel concatenation mismatch";
    case proto::kAuthFailureHashUnusable:
      return "hash function unusable";
    case proto::kAuthFailureDhgroupUnusable:
      return "DH group unusable";
    case proto::kAuthFailureIncorrectPayload:
      return "incorrect payload";
    case proto::kAuthFailureIncorrectProtocolMessage:
      return "incorrect protocol message";
    default:
      return "explanation " + std::to_string(explanation);
  }
}

proto::Sqe auth_send_sqe(uint32_t length) {
  proto::AuthCommand c{};
  c.opcode = proto::kOpcodeFabrics;
  c.flags = proto::kFlagsPsdtSgl;
  c.fctype = proto::kFctypeAuthSend;
  c.secp = proto::kAuthSecp;
  c.spsp0 = proto::kAuthSpsp0;
  c.spsp1 = proto::kAuthSpsp1;
  c.length = length;
  return std::bit_cast<proto::Sqe>(c);
}

proto::Sqe auth_receive_sqe(uint32_t allocation_length) {
  proto::Sqe s = auth_send_sqe(allocation_length);
  reinterpret_cast<uint8_t*>(&s)[4] = proto::kFctypeAuthReceive;
  return s;
}

AuthInitiator::AuthInitiator(const DhchapSecrets& secrets, std::string hostnqn, std::string subnqn,
                             uint16_t t_id, DhchapOffer offer)
    : secrets_(secrets),
      hostnqn_(std::move(hostnqn)),
      subnqn_(std::move(subnqn)),
      t_id_(t_id),
      offer_(std::move(offer)) {}

Bytes AuthInitiator::negotiate() const {
  Bytes m(sizeof(proto::AuthNegotiateHeader) + sizeof(proto::AuthProtocolDescriptor), 0);
  proto::AuthNegotiateHeader h{};
  h.auth_type = proto::kAuthTypeCommon;
  h.auth_id = proto::kAuthIdNegotiate;
  h.t_id = t_id_;
  h.sc_c = proto::kAuthScNone;
  h.napd = 1;
  proto::AuthProtocolDescriptor d{};
  d.auth_id = proto::kAuthProtocolDhchap;
  d.halen = static_cast<uint8_t>(std::min(offer_.hashes.size(), proto::kAuthIdListHalf));
  d.dhlen = static_cast<uint8_t>(std::min(offer_.dhgroups.size(), proto::kAuthIdListHalf));
  std::memcpy(d.idlist, offer_.hashes.data(), d.halen);
  std::memcpy(d.idlist + proto::kAuthIdListHalf, offer_.dhgroups.data(), d.dhlen);
  std::memcpy(m.data(), &h, sizeof(h));
  std::memcpy(m.data() + sizeof(h), &d, sizeof(d));
  return m;
}

Result<Bytes> AuthInitiator::on_challenge(std::span<const uint8_t> m) {
  if (is_failure1(m)) return refused("Negotiate", m);
  if (m.size() < sizeof(proto::DhchapChallengeHeader) || m[0] != proto::kAuthTypeDhchap ||
      m[1] != proto::kAuthIdChallenge) {
    return Status::rejected("DH-HMAC-CHAP: the controller sent no Challenge");
  }
  proto::DhchapChallengeHeader h;
  std::memcpy(&h, m.data(), sizeof(h));
  auto hash = dhchap::hash_from_id(h.hashid);
  auto group = dhchap::dhgroup_from_id(h.dhgid);
  if (!hash || !group || le16(m.data() + 4) != t_id_ || h.hl != dhchap::hash_length(*hash) ||
      le16(m.data() + 10) != dhchap::dhgroup_bytes(*group) ||
      m.size() < sizeof(h) + h.hl + dhchap::dhgroup_bytes(*group)) {
    return Status::rejected("DH-HMAC-CHAP: the controller's Challenge is malformed");
  }
  hash_ = *hash;
  dhgroup_ = *group;
  const size_t hl = h.hl;
  const uint8_t* c1 = m.data() + sizeof(h);
  const uint8_t* ctrl_pub = c1 + hl;
  const uint32_t s1 = le32(m.data() + 12);
  Bytes my_pub;
  shared_.clear();
  if (dhgroup_ != dhchap::DhGroup::kNull) {
    NVMF_ASSIGN_OR_RETURN(auto key, dhchap::DhKey::generate(dhgroup_));
    auto shared = key->derive({ctrl_pub, dhchap::dhgroup_bytes(dhgroup_)});
    if (!shared.ok()) {
      return Status::rejected("DH-HMAC-CHAP: the controller's DH public value is not valid");
    }
    shared_ = std::move(*shared);
    my_pub = key->public_value();
  }
  if (!secrets_.host) {
    return Status::invalid_argument("the controller requires authentication: give --dhchap-secret");
  }
  NVMF_ASSIGN_OR_RETURN(dhchap::SecretBytes key, secrets_.host->transformed(hostnqn_));
  NVMF_ASSIGN_OR_RETURN(Bytes aug, dhchap::augmented_challenge(hash_, shared_, {c1, hl}));
  NVMF_ASSIGN_OR_RETURN(Bytes r1, dhchap::response(hash_, key, aug, s1, t_id_, proto::kAuthScNone,
                                                   dhchap::Role::kHost, hostnqn_, subnqn_));
  c2_.clear();
  s2_ = 0;
  if (secrets_.ctrl) {
    c2_.assign(hl, 0);
    NVMF_RETURN_IF_ERROR(dhchap::random_bytes(c2_));
    NVMF_ASSIGN_OR_RETURN(s2_, dhchap::random_seqnum());
  }
  Bytes out(sizeof(proto::DhchapReplyHeader) + 2 * hl + my_pub.size(), 0);
  proto::DhchapReplyHeader r{};
  r.auth_type = proto::kAuthTypeDhchap;
  r.auth_id = proto::kAuthIdReply;
  r.t_id = t_id_;
  r.hl = static_cast<uint8_t>(hl);
  r.cvalid = secrets_.ctrl ? 1 : 0;
  r.dhvlen = static_cast<uint16_t>(my_pub.size());
  r.seqnum = s2_;
  std::memcpy(out.data(), &r, sizeof(r));
  std::memcpy(out.data() + sizeof(r), r1.data(), hl);
  if (!c2_.empty()) std::memcpy(out.data() + sizeof(r) + hl, c2_.data(), hl);
  if (!my_pub.empty()) std::memcpy(out.data() + sizeof(r) + 2 * hl, my_pub.data(), my_pub.size());
  return out;
}

Result<Bytes> AuthInitiator::on_success1(std::span<const uint8_t> m) {
  if (is_failure1(m)) return refused("Reply", m);
  const size_t hl = dhchap::hash_length(hash_);
  if (m.size() < sizeof(proto::DhchapSuccess1Header) || m[0] != proto::kAuthTypeDhchap ||
      m[1] != proto::kAuthIdSuccess1 || le16(m.data() + 4) != t_id_) {
    return Status::rejected("DH-HMAC-CHAP: the controller sent no Success1");
  }
  if (!secrets_.ctrl) return Bytes{};
  if (m[8] == 0 || m.size() < sizeof(proto::DhchapSuccess1Header) + hl) {
    return Status::rejected(
        "DH-HMAC-CHAP: the controller did not prove itself (Success1 without its response)");
  }
  NVMF_ASSIGN_OR_RETURN(dhchap::SecretBytes key, secrets_.ctrl->transformed(subnqn_));
  NVMF_ASSIGN_OR_RETURN(Bytes aug, dhchap::augmented_challenge(hash_, shared_, c2_));
  NVMF_ASSIGN_OR_RETURN(Bytes r2, dhchap::response(hash_, key, aug, s2_, t_id_, proto::kAuthScNone,
                                                   dhchap::Role::kController, hostnqn_, subnqn_));
  if (!dhchap::equal_constant_time(r2, m.subspan(sizeof(proto::DhchapSuccess1Header), hl))) {
    return Status::rejected(
        "DH-HMAC-CHAP: the controller's response does not match --dhchap-ctrl-secret");
  }
  Bytes out(sizeof(proto::DhchapSuccess2), 0);
  proto::DhchapSuccess2 s{};
  s.auth_type = proto::kAuthTypeDhchap;
  s.auth_id = proto::kAuthIdSuccess2;
  s.t_id = t_id_;
  std::memcpy(out.data(), &s, sizeof(s));
  return out;
}

Bytes AuthInitiator::failure2(uint8_t explanation) const {
  proto::AuthFailure f{};
  f.auth_type = proto::kAuthTypeCommon;
  f.auth_id = proto::kAuthIdFailure2;
  f.t_id = t_id_;
  f.reason = proto::kAuthFailureReasonFailed;
  f.explanation = explanation;
  Bytes out(sizeof(f));
  std::memcpy(out.data(), &f, sizeof(f));
  return out;
}

Status authenticate(CommandChannel& ch, uint16_t qid, const DhchapSecrets& secrets,
                    const std::string& hostnqn, const std::string& subnqn,
                    const DhchapOffer& offer) {
  const std::string where = "qid " + std::to_string(qid) + ": ";
  if (!secrets.host) {
    return Status::invalid_argument(
        where + "the controller requires authentication (AUTHREQ.ATR): give --dhchap-secret");
  }
  // The transaction identifier: any value the host picks; the queue's makes logs readable.
  AuthInitiator auth(secrets, hostnqn, subnqn, qid, offer);
  auto send = [&](std::span<const uint8_t> m, const char* step) -> Status {
    Result<proto::Cqe> cqe = ch.run(auth_send_sqe(static_cast<uint32_t>(m.size())), m, {}, true);
    if (!cqe.ok()) return std::move(cqe).status().annotate(where + "Authentication Send");
    return cqe_status(*cqe, where + "Authentication Send (" + step + ")");
  };
  Bytes in(kMaxReceive);
  auto receive = [&](const char* step) -> Result<std::span<const uint8_t>> {
    std::fill(in.begin(), in.end(), 0);
    Result<proto::Cqe> cqe = ch.run(auth_receive_sqe(kMaxReceive), {}, in, false);
    if (!cqe.ok()) return std::move(cqe).status().annotate(where + "Authentication Receive");
    NVMF_RETURN_IF_ERROR(cqe_status(*cqe, where + "Authentication Receive (" + step + ")"));
    return std::span<const uint8_t>(in);
  };
  NVMF_RETURN_IF_ERROR(send(auth.negotiate(), "Negotiate"));
  NVMF_ASSIGN_OR_RETURN(auto challenge, receive("Challenge"));
  Result<Bytes> reply = auth.on_challenge(challenge);
  if (!reply.ok()) {
    // A Challenge the host cannot use: it says so (AUTH_Failure2) rather than leave the
    // controller waiting for a Reply (Linux does the same).
    if (reply.status().code() == StatusCode::kRejected && !is_failure1(challenge)) {
      (void)send(auth.failure2(proto::kAuthFailureIncorrectPayload), "Failure2");
    }
    return std::move(reply).status().annotate(where.substr(0, where.size() - 2));
  }
  NVMF_RETURN_IF_ERROR(send(*reply, "Reply"));
  Result<std::span<const uint8_t>> answer = receive("Success1");
  if (!answer.ok() && answer.status().code() == StatusCode::kUnavailable) {
    // A controller may end the association on a failed Reply without its AUTH_Failure1
    // reaching the host (nvmet disconnects as it sends it): the Reply was not accepted.
    return Status::rejected(where +
                            "DH-HMAC-CHAP Reply refused (the controller disconnected "
                            "instead of answering: " +
                            answer.status().message() + ")");
  }
  NVMF_ASSIGN_OR_RETURN(auto success1, std::move(answer));
  Result<Bytes> success2 = auth.on_success1(success1);
  if (!success2.ok()) {
    if (success2.status().code() == StatusCode::kRejected && !is_failure1(success1)) {
      (void)send(auth.failure2(proto::kAuthFailureFailed), "Failure2");
    }
    return std::move(success2).status().annotate(where.substr(0, where.size() - 2));
  }
  if (!success2->empty()) NVMF_RETURN_IF_ERROR(send(*success2, "Success2"));
  return ok_status();
}

}  // namespace nvmf::host
